/* Atomics under contention: every rank adds to one word on rank 0 (fetching
 * and not), and increments a counter guarded by a compare-and-swap lock;
 * the sums must be exact. */
#include "../common.h"

#define ITERS 2000

enum { SUM = 0, NBI_SUM = 8, LOCK = 16, GUARDED = 24 };

int main(void)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg;
    uint64_t *local, old, seen_max = 0;
    int rank, n;

    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, 4096, &seg, (void **)&local));

    for (int i = 0; i < ITERS; i++) {
        OK(weft_atomic_fetch_add(ep, 0, seg, SUM, (uint64_t)rank + 1, &old));
        CHECK(old < (uint64_t)ITERS * (uint64_t)n * (uint64_t)(n + 1) / 2);
        if (old > seen_max)
            seen_max = old;
        OK(weft_atomic_add_nbi(ep, 0, seg, NBI_SUM, 3));
    }
    OK(weft_flush(ep));

    /* a spin lock made of compare-and-swap protects a plain get/put update */
    for (int i = 0; i < ITERS / 10; i++) {
        uint64_t v;
        do {
            OK(weft_atomic_cswap(ep, 0, seg, LOCK, 0, (uint64_t)rank + 1, &old));
        } while (old != 0);
        OK(weft_get(ep, &v, 0, seg, GUARDED, sizeof(v)));
        v++;
        OK(weft_put(ep, 0, seg, GUARDED, &v, sizeof(v)));
        OK(weft_atomic_cswap(ep, 0, seg, LOCK, (uint64_t)rank + 1, 0, &old));
        CHECK(old == (uint64_t)rank + 1);
    }
    OK(weft_barrier(ctx));

    if (rank == 0) {
        uint64_t expect = (uint64_t)ITERS * (uint64_t)n * (uint64_t)(n + 1) / 2;
        CHECK(local[SUM / 8] == expect);
        CHECK(local[NBI_SUM / 8] == (uint64_t)ITERS * 3u * (uint64_t)n);
        CHECK(local[LOCK / 8] == 0);
        CHECK(local[GUARDED / 8] == (uint64_t)(ITERS / 10) * (uint64_t)n);
        printf("atomics on %d ranks: sum %llu, nbi sum %llu, guarded %llu: exact\n", n,
               (unsigned long long)local[SUM / 8], (unsigned long long)local[NBI_SUM / 8],
               (unsigned long long)local[GUARDED / 8]);
    }
    OK(weft_seg_free(ctx, seg));
    OK(weft_finalize(ctx));
    return 0;
}
