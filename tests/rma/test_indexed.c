/* Indexed put and get (weft_put_indexed/get_indexed, blocking and _nbi):
 * 6 local pieces of 12 bytes to 9 pieces of 8 bytes scattered over the
 * right neighbour's segment (two of them adjacent, so that their bytes
 * join into one operation), the bytes between them untouched; then back
 * into 4 local pieces of 18 bytes.  Then bad input: totals that differ,
 * NULL lists and buffers, pieces past the segment or the address space,
 * bad ranks, segments and endpoints; and no bytes at all. */
#include "../common.h"

#include <string.h>

#define SEG_BYTES 65536
#define NDST 9
#define DSTLEN 8
#define NSRC 6
#define SRCLEN 12
#define NBACK 4
#define BACKLEN 18
#define TOTAL (NDST * DSTLEN)

/* where the pieces land, relative to the round's base: unordered, and
 * pieces 3 and 4 adjacent */
static const size_t dst_at[NDST] = {640, 8, 200, 96, 104, 1000, 24, 520, 4000};

int main(void)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg;
    unsigned char *local, pool[NSRC * 32], back[NBACK * 32], want[TOTAL];
    const void *srcs[NSRC];
    void *backs[NBACK];
    size_t offs[NDST];
    int rank, n, right, left;

    _Static_assert(NDST * DSTLEN == NSRC * SRCLEN && NBACK * BACKLEN == TOTAL, "same bytes");
    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, SEG_BYTES, &seg, (void **)&local));
    right = (rank + 1) % n;
    left = (rank + n - 1) % n;

    for (int round = 0; round < 2; round++) {
        size_t base = (size_t)round * 8192;
        int blocking = round == 1;

        /* source pieces every 32 bytes of pool, their bytes in order */
        for (size_t i = 0; i < sizeof(pool); i++)
            pool[i] = test_pattern((unsigned)(rank * 10 + round), i);
        for (int j = 0; j < NSRC; j++)
            srcs[j] = pool + 32 * j;
        for (int i = 0; i < NDST; i++)
            offs[i] = base + dst_at[i];
        if (blocking)
            OK(weft_put_indexed(ep, right, seg, NDST, offs, DSTLEN, NSRC, srcs, SRCLEN));
        else
            OK(weft_put_indexed_nbi(ep, right, seg, NDST, offs, DSTLEN, NSRC, srcs, SRCLEN));
        OK(weft_flush(ep));
        OK(weft_barrier(ctx));
        /* the left neighbour's bytes, in order, in the pieces; zeros elsewhere */
        for (size_t k = 0; k < TOTAL; k++)
            want[k] = test_pattern((unsigned)(left * 10 + round), k / SRCLEN * 32 + k % SRCLEN);
        for (size_t b = 0; b < 4096 + DSTLEN; b++) {
            int in = -1;

            for (int i = 0; i < NDST; i++)
                if (b >= dst_at[i] && b < dst_at[i] + DSTLEN)
                    in = i;
            CHECK(local[base + b] == (in < 0 ? 0 : want[(size_t)in * DSTLEN + b - dst_at[in]]));
        }
        /* and back from the right neighbour into 4 pieces of 18 bytes,
         * every 32 bytes of back */
        memset(back, 0, sizeof(back));
        for (int j = 0; j < NBACK; j++)
            backs[j] = back + 32 * j;
        if (blocking) {
            OK(weft_get_indexed(ep, NBACK, backs, BACKLEN, right, seg, NDST, offs, DSTLEN));
        } else {
            OK(weft_get_indexed_nbi(ep, NBACK, backs, BACKLEN, right, seg, NDST, offs, DSTLEN));
            OK(weft_flush(ep));
        }
        for (size_t k = 0; k < TOTAL; k++) {
            size_t at = k / BACKLEN * 32 + k % BACKLEN;

            CHECK(back[at] == pool[k / SRCLEN * 32 + k % SRCLEN]);
        }
        for (int j = 0; j < NBACK; j++)
            for (size_t b = BACKLEN; b < 32; b++)
                CHECK(back[32 * j + b] == 0);
        OK(weft_barrier(ctx));
    }
    if (rank == 0)
        printf("indexed put/get of %d bytes on %d ranks: exact\n", TOTAL, n);

    /* no bytes at all does nothing, whatever the lists */
    OK(weft_put_indexed(ep, right, seg, 0, NULL, 8, 0, NULL, 8));
    OK(weft_get_indexed_nbi(ep, 3, NULL, 0, right, seg, 0, NULL, 5));
    /* the same number of bytes on both sides */
    FAILS(weft_put_indexed(ep, right, seg, NDST, offs, DSTLEN, NSRC, srcs, SRCLEN - 1),
          WEFT_ERR_INVALID_ARG);
    CHECK(strstr(weft_last_error(), "not the same number of bytes") != NULL);
    FAILS(weft_get_indexed_nbi(ep, (size_t)1 << 62, backs, 8, right, seg, NDST, offs, DSTLEN),
          WEFT_ERR_INVALID_ARG);
    FAILS(weft_put_indexed_nbi(ep, right, seg, NDST, NULL, DSTLEN, NSRC, srcs, SRCLEN),
          WEFT_ERR_INVALID_ARG);
    CHECK(strstr(weft_last_error(), "offset list is NULL") != NULL);
    FAILS(weft_get_indexed(ep, NBACK, NULL, BACKLEN, right, seg, NDST, offs, DSTLEN),
          WEFT_ERR_INVALID_ARG);
    CHECK(strstr(weft_last_error(), "buffer list is NULL") != NULL);
    /* a piece past the segment: named, and nothing issued (the pieces
     * before it are not written) */
    {
        size_t bad[3] = {16384, 16392, SEG_BYTES - 7};
        const void *three[3] = {pool, pool + 8, pool + 16};
        static const unsigned char zeros[16];

        FAILS(weft_put_indexed(ep, right, seg, 3, bad, 8, 3, three, 8), WEFT_ERR_BOUNDS);
        CHECK(strstr(weft_last_error(), "piece 2") != NULL);
        OK(weft_barrier(ctx));
        CHECK(memcmp(local + 16384, zeros, sizeof(zeros)) == 0);
        OK(weft_barrier(ctx));
        bad[2] = SEG_BYTES - 8;   /* exactly to the end is fine */
        OK(weft_put_indexed(ep, right, seg, 3, bad, 8, 3, three, 8));
        bad[0] = (size_t)-1;
        FAILS(weft_get_indexed_nbi(ep, 3, (void *const *)three, 8, right, seg, 3, bad, 8),
              WEFT_ERR_BOUNDS);
        /* a NULL buffer, one that wraps around the address space */
        const void *holes[3] = {pool, NULL, pool};
        FAILS(weft_put_indexed_nbi(ep, right, seg, 3, offs, 8, 3, holes, 8), WEFT_ERR_INVALID_ARG);
        CHECK(strstr(weft_last_error(), "buffer 1") != NULL);
        holes[1] = (const void *)(uintptr_t)(UINTPTR_MAX - 3);
        FAILS(weft_put_indexed_nbi(ep, right, seg, 3, offs, 8, 3, holes, 8), WEFT_ERR_INVALID_ARG);
        CHECK(strstr(weft_last_error(), "address space") != NULL);
    }
    FAILS(weft_put_indexed(ep, n, seg, NDST, offs, DSTLEN, NSRC, srcs, SRCLEN), WEFT_ERR_RANK);
    FAILS(weft_get_indexed(ep, NBACK, backs, BACKLEN, -1, seg, NDST, offs, DSTLEN), WEFT_ERR_RANK);
    FAILS(weft_put_indexed_nbi(ep, right, NULL, NDST, offs, DSTLEN, NSRC, srcs, SRCLEN),
          WEFT_ERR_SEG);
    FAILS(weft_get_indexed_nbi(NULL, NBACK, backs, BACKLEN, right, seg, NDST, offs, DSTLEN),
          WEFT_ERR_INVALID_ARG);
    OK(weft_flush(ep));
    OK(weft_barrier(ctx));
    OK(weft_seg_free(ctx, seg));
    OK(weft_finalize(ctx));
    return 0;
}
