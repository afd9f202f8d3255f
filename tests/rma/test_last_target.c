/* weft_put_nbi keeps the last target it reached through UCX (ep.h, struct
 * weft__last) and checks a call against it alone: puts that alternate
 * between ranks and segments of different sizes land where they should,
 * the bounds and the source are still checked on a hit, and a freed
 * segment is refused even when it was the last target (its replacement,
 * allocated after, is reached).  Also weft_atomic_nbi's short path for a
 * non-fetching 64-bit add, and, or, xor (atomic_post64): every rank
 * applies each to words of every rank, and the results are checked. */
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

/* Words 0-3 of seg at every rank: xor, or, and, add from every rank. */
static void post_ops(weft_ctx_t ctx, weft_ep_t ep, weft_seg_t seg, uint64_t *local, int rank,
                     int n)
{
    uint64_t xor_all = 0, or_all = 0, and_all = ~(uint64_t)0, sum = 0;

    local[0] = 0;
    local[1] = 0;
    local[2] = ~(uint64_t)0;
    local[3] = 0;
    OK(weft_barrier(ctx));
    for (int r = 0; r < n; r++) {
        weft_atype_t t = r % 2 ? WEFT_ATYPE_INT64 : WEFT_ATYPE_UINT64;

        OK(weft_atomic_nbi(ep, r, seg, 0, WEFT_AOP_XOR, t, 0x9e3779b97f4a7c15ull * (uint64_t)(rank + 1), 0,
                           NULL));
        OK(weft_atomic_nbi(ep, r, seg, 8, WEFT_AOP_OR, t, 1ull << rank, 0, NULL));
        OK(weft_atomic_nbi(ep, r, seg, 16, WEFT_AOP_AND, t, ~(1ull << (rank + 32)), 0, NULL));
        OK(weft_atomic_nbi(ep, r, seg, 24, WEFT_AOP_ADD, t, (uint64_t)rank + 1, 0, NULL));
    }
    /* a misaligned word is still refused on the short path's target */
    FAILS(weft_atomic_nbi(ep, (rank + 1) % n, seg, 4, WEFT_AOP_XOR, WEFT_ATYPE_UINT64, 1, 0, NULL),
          WEFT_ERR_ALIGN);
    OK(weft_flush(ep));
    OK(weft_barrier(ctx));
    for (int r = 0; r < n; r++) {
        xor_all ^= 0x9e3779b97f4a7c15ull * (uint64_t)(r + 1);
        or_all |= 1ull << r;
        and_all &= ~(1ull << (r + 32));
        sum += (uint64_t)r + 1;
    }
    CHECK(__atomic_load_n(&local[0], __ATOMIC_ACQUIRE) == xor_all);
    CHECK(__atomic_load_n(&local[1], __ATOMIC_ACQUIRE) == or_all);
    CHECK(__atomic_load_n(&local[2], __ATOMIC_ACQUIRE) == and_all);
    CHECK(__atomic_load_n(&local[3], __ATOMIC_ACQUIRE) == sum);
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
    post_ops(ctx, ep, segs[1], local[1], rank, n);
    FAILS(weft_atomic_nbi(ep, peer, freed, 0, WEFT_AOP_XOR, WEFT_ATYPE_UINT64, 1, 0, NULL),
          WEFT_ERR_SEG);

    OK(weft_seg_free(ctx, segs[1]));
    OK(weft_seg_free(ctx, segs[0]));
    OK(weft_finalize(ctx));
    return 0;
}
