/* Payload integrity of put and get, blocking and non-blocking, for sizes
 * from 1 byte to 4 MiB at random offsets, every rank to its right-hand
 * neighbour. */
#include "../common.h"

#include <string.h>

#define SEG_BYTES (8u << 20)

static size_t sizes[] = {1, 2, 3, 7, 8, 9, 63, 64, 100, 1000, 4096, 4097, 65536, 100000,
                         1u << 20, 3000001, 4u << 20};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

enum { BLOCKING, NB, NBI, NMODES };

int main(void)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg;
    unsigned char *local, *buf;
    int rank, n;

    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, SEG_BYTES, &seg, (void **)&local));
    buf = malloc(SEG_BYTES);
    CHECK(buf != NULL);
    srand(12345);  /* same offsets on every rank */

    int right = (rank + 1) % n, left = (rank + n - 1) % n;
    for (int mode = 0; mode < NMODES; mode++) {
        for (size_t k = 0; k < NSIZES; k++) {
            size_t sz = sizes[k];
            size_t off = (size_t)rand() % (SEG_BYTES - sz + 1);
            unsigned tag = (unsigned)(mode * 100 + k);

            /* put my pattern into my right neighbour */
            for (size_t i = 0; i < sz; i++)
                buf[i] = test_pattern(tag + (unsigned)rank, i);
            if (mode == BLOCKING) {
                OK(weft_put(ep, right, seg, off, buf, sz));
            } else if (mode == NB) {
                weft_event_t ev;
                OK(weft_put_nb(ep, right, seg, off, buf, sz, &ev));
                OK(weft_wait(&ev));
                CHECK(ev == WEFT_EVENT_NULL);
                OK(weft_flush(ep));
            } else {
                OK(weft_put_nbi(ep, right, seg, off, buf, sz));
                OK(weft_flush(ep));
            }
            OK(weft_barrier(ctx));
            for (size_t i = 0; i < sz; i++)
                CHECK(local[off + i] == test_pattern(tag + (unsigned)left, i));

            /* get it back from the right neighbour: its pattern came from me */
            memset(buf, 0, sz);
            if (mode == BLOCKING) {
                OK(weft_get(ep, buf, right, seg, off, sz));
            } else if (mode == NB) {
                weft_event_t ev;
                OK(weft_get_nb(ep, buf, right, seg, off, sz, &ev));
                OK(weft_wait(&ev));
            } else {
                OK(weft_get_nbi(ep, buf, right, seg, off, sz));
                OK(weft_flush(ep));
            }
            for (size_t i = 0; i < sz; i++)
                CHECK(buf[i] == test_pattern(tag + (unsigned)rank, i));
            OK(weft_barrier(ctx));
            memset(local + off, 0, sz);
            OK(weft_barrier(ctx));
        }
    }
    free(buf);
    OK(weft_seg_free(ctx, seg));
    OK(weft_finalize(ctx));
    if (rank == 0)
        printf("put/get sizes 1 B .. 4 MiB: %zu sizes x 3 modes verified on %d ranks\n", NSIZES, n);
    return 0;
}
