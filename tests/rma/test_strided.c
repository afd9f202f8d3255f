/* Strided put and get (weft_iput/iget, blocking and _nbi): elements of
 * 1, 4, 8 and 24 bytes, every third at the target from every second at the
 * source; the bytes between the elements stay untouched; then back with
 * the strides swapped.  Then bad input: zero sizes and strides, NULL
 * buffers, ranges past the segment or overflowing. */
#include "../common.h"

#include <string.h>

#define COUNT 50
#define DST 3
#define SST 2
#define SEG_BYTES 65536

static const size_t elems[] = {1, 4, 8, 24};

int main(void)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg;
    unsigned char *local, src[COUNT * SST * 24], back[COUNT * SST * 24];
    int rank, n, right, left;

    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, SEG_BYTES, &seg, (void **)&local));
    right = (rank + 1) % n;
    left = (rank + n - 1) % n;

    for (int k = 0; k < 4; k++) {
        size_t e = elems[k], off = (size_t)k * 8192;
        int blocking = k % 2;

        for (size_t i = 0; i < sizeof(src); i++)
            src[i] = test_pattern((unsigned)(rank * 10 + k), i);
        if (blocking)
            OK(weft_iput(ep, right, seg, off, DST, src, SST, e, COUNT));
        else
            OK(weft_iput_nbi(ep, right, seg, off, DST, src, SST, e, COUNT));
        OK(weft_flush(ep));
        OK(weft_barrier(ctx));
        /* element i of the left neighbour's source, at i * DST; zeros between */
        for (size_t i = 0; i < COUNT * DST; i++)
            for (size_t b = 0; b < e; b++) {
                unsigned char want = i % DST == 0
                                         ? test_pattern((unsigned)(left * 10 + k), i / DST * SST * e + b)
                                         : 0;
                CHECK(local[off + i * e + b] == want);
            }
        /* and back from the right neighbour: its elements every DST, here every SST */
        memset(back, 0, sizeof(back));
        if (blocking) {
            OK(weft_iget(ep, back, SST, right, seg, off, DST, e, COUNT));
        } else {
            OK(weft_iget_nbi(ep, back, SST, right, seg, off, DST, e, COUNT));
            OK(weft_flush(ep));
        }
        for (size_t i = 0; i < COUNT * SST; i++)
            for (size_t b = 0; b < e; b++)
                CHECK(back[i * e + b] == (i % SST == 0 ? src[i * e + b] : 0));
        OK(weft_barrier(ctx));
    }
    if (rank == 0)
        printf("strided put/get of %d elements on %d ranks: exact\n", COUNT, n);

    /* count 0 does nothing, whatever the rest */
    OK(weft_iput(ep, right, seg, 0, 0, NULL, 0, 0, 0));
    OK(weft_iget_nbi(ep, NULL, 0, right, seg, 0, 0, 0, 0));
    FAILS(weft_iput(ep, right, seg, 0, DST, src, SST, 0, COUNT), WEFT_ERR_INVALID_ARG);
    CHECK(strstr(weft_last_error(), "element size is 0") != NULL);
    FAILS(weft_iput_nbi(ep, right, seg, 0, 0, src, SST, 8, COUNT), WEFT_ERR_INVALID_ARG);
    CHECK(strstr(weft_last_error(), "stride is 0") != NULL);
    FAILS(weft_iget(ep, back, 0, right, seg, 0, DST, 8, COUNT), WEFT_ERR_INVALID_ARG);
    FAILS(weft_iget_nbi(ep, NULL, 1, right, seg, 0, 1, 8, COUNT), WEFT_ERR_INVALID_ARG);
    CHECK(strstr(weft_last_error(), "buffer is NULL") != NULL);
    /* the last element ends one byte past the segment */
    FAILS(weft_iput(ep, right, seg, SEG_BYTES - (8 * DST * 9 + 8) + 1, DST, src, SST, 8, 10),
          WEFT_ERR_BOUNDS);
    OK(weft_iput(ep, right, seg, SEG_BYTES - (8 * DST * 9 + 8), DST, src, SST, 8, 10));
    FAILS(weft_iget(ep, back, 1, right, seg, SEG_BYTES - 7, 1, 8, 1), WEFT_ERR_BOUNDS);
    CHECK(strstr(weft_last_error(), "exceed segment size") != NULL);
    FAILS(weft_iput_nbi(ep, right, seg, 0, (size_t)1 << 62, src, 1, 8, 3), WEFT_ERR_BOUNDS);
    FAILS(weft_iget_nbi(ep, back, (size_t)1 << 62, right, seg, 0, 1, 8, 3), WEFT_ERR_INVALID_ARG);
    CHECK(strstr(weft_last_error(), "address space") != NULL);
    FAILS(weft_iput(ep, n, seg, 0, 1, src, 1, 8, 1), WEFT_ERR_RANK);
    FAILS(weft_iget(ep, back, 1, -1, seg, 0, 1, 8, 1), WEFT_ERR_RANK);
    FAILS(weft_iput_nbi(ep, right, NULL, 0, 1, src, 1, 8, 1), WEFT_ERR_SEG);
    FAILS(weft_iget_nbi(NULL, back, 1, right, seg, 0, 1, 8, 1), WEFT_ERR_INVALID_ARG);
    /* exactly to the end is fine */
    OK(weft_iget(ep, back, 1, right, seg, SEG_BYTES - 8, 1, 8, 1));
    OK(weft_barrier(ctx));
    OK(weft_seg_free(ctx, seg));
    OK(weft_finalize(ctx));
    return 0;
}
