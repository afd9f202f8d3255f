/* weft_put_nbi keeps the last target it reached through UCX (ep.h, struct
 * weft__last) and checks a call against it alone: puts that alternate
 * between ranks and segments of different sizes land where they should,
 * the bounds and the source are still checked on a hit, and a freed
 * segment is refused even when it was the last target (its replacement,
 * allocated after, is reached).  On the direct path the same calls are
 * the inline forms and must give the same results. */
#include "../common.h"

#include <stdint.h>
#include <string.h>

#define SIZE_A 65536
#define SIZE_B 4096
#define WORDS  64

static uint64_t value(int from, int seg, int k)
{
    return ((uint64_t)from << 32) | ((uint64_t)seg << 16) | (uint64_t)k;
}

/* Every rank puts WORDS words into words [rank * WORDS, ...) of seg s of
 * every rank, alternating the targets, then checks what it received. */
static void exchange(weft_ctx_t ctx, weft_ep_t ep, weft_seg_t *segs, uint64_t **local, int nsegs,
                     int rank, int n)
{
    /* an implicit put's source stays untouched until the flush */
    static uint64_t src[2][WORDS];

    for (int s = 0; s < nsegs; s++)
        for (int k = 0; k < WORDS; k++)
            src[s][k] = value(rank, s, k);
    for (int k = 0; k < WORDS; k++)
        for (int r = 0; r < n; r++)
            for (int s = 0; s < nsegs; s++)
                OK((weft_put_nbi)(ep, r, segs[s], ((size_t)rank * WORDS + (size_t)k) * 8,
                                  &src[s][k], 8));
    OK(weft_flush(ep));
    OK(weft_barrier(ctx));
    for (int s = 0; s < nsegs; s++)
        for (int from = 0; from < n; from++)
            for (int k = 0; k < WORDS; k++)
                CHECK(local[s][(size_t)from * WORDS + (size_t)k] == value(from, s, k));
    OK(weft_barrier(ctx));
}

int main(void)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t segs[2], freed;
    uint64_t *local[2], v = 7;
    int rank, n, peer;

    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    CHECK((size_t)n * WORDS * 8 <= SIZE_B);
    peer = (rank + 1) % n;
    OK(weft_seg_alloc(ctx, SIZE_A, &segs[0], (void **)&local[0]));
    OK(weft_seg_alloc(ctx, SIZE_B, &segs[1], (void **)&local[1]));

    exchange(ctx, ep, segs, local, 2, rank, n);

    /* the bounds are the last target's: B is smaller than A */
    OK((weft_put_nbi)(ep, peer, segs[0], SIZE_B + 8, &v, 8));
    FAILS((weft_put_nbi)(ep, peer, segs[1], SIZE_B + 8, &v, 8), WEFT_ERR_BOUNDS);
    OK((weft_put_nbi)(ep, peer, segs[1], SIZE_B - 8, &v, 8));
    FAILS((weft_put_nbi)(ep, peer, segs[1], SIZE_B - 4, &v, 8), WEFT_ERR_BOUNDS);
    FAILS((weft_put_nbi)(ep, peer, segs[1], (size_t)0 - 8, &v, 8), WEFT_ERR_BOUNDS);
    FAILS((weft_put_nbi)(ep, peer, segs[1], 0, NULL, 8), WEFT_ERR_INVALID_ARG);
    FAILS((weft_put_nbi)(ep, n, segs[1], 0, &v, 8), WEFT_ERR_RANK);
    FAILS((weft_put_nbi)(ep, -1, segs[1], 0, &v, 8), WEFT_ERR_RANK);
    FAILS((weft_put_nbi)(NULL, peer, segs[1], 0, &v, 8), WEFT_ERR_INVALID_ARG);
    /* still usable after the refusals */
    OK((weft_put_nbi)(ep, peer, segs[1], 0, &v, 8));
    OK(weft_flush(ep));
    OK(weft_barrier(ctx));

    /* B was the last target: freed, it is refused; a new segment is reached */
    freed = segs[1];
    OK(weft_seg_free(ctx, freed));
    FAILS((weft_put_nbi)(ep, peer, freed, 0, &v, 8), WEFT_ERR_SEG);
    OK(weft_seg_alloc(ctx, SIZE_B, &segs[1], (void **)&local[1]));
    memset(local[1], 0, SIZE_B);
    OK(weft_barrier(ctx));
    exchange(ctx, ep, segs, local, 2, rank, n);
    FAILS((weft_put_nbi)(ep, peer, freed, 0, &v, 8), WEFT_ERR_SEG);

    OK(weft_seg_free(ctx, segs[1]));
    OK(weft_seg_free(ctx, segs[0]));
    OK(weft_finalize(ctx));
    return 0;
}
