/* weft_fence orders a rank's puts and atomics to each target without
 * completing them: every round puts a block, fences, then sets a flag
 * word with an implicit atomic; the consumer that sees flag >= r finds
 * blocks 1..r complete.  weft_flush_local frees a put's source before the
 * put is visible: the source is overwritten at once and the target still
 * gets the original.  Then bad input, and both calls after finalize. */
#include "../common.h"

#include <string.h>

#define ROUNDS 64
#define BLOCK 256
#define FLAG 0
#define DATA 64
#define BIG (1u << 20)                     /* over UCX a rendezvous put */
#define BIG_AT (DATA + ROUNDS * BLOCK)
#define SEG_BYTES (BIG_AT + BIG)

int main(void)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg;
    unsigned char *local, *src;
    int rank, n, right, left;

    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, SEG_BYTES, &seg, (void **)&local));
    right = (rank + 1) % n;
    left = (rank + n - 1) % n;
    src = malloc(BIG);
    CHECK(src != NULL);

    /* rounds: rank -> right, checked by right as the flag moves on */
    for (int r = 1; r <= ROUNDS; r++) {
        unsigned char block[BLOCK];

        for (size_t i = 0; i < BLOCK; i++)
            block[i] = test_pattern((unsigned)(rank * 1000 + r), i);
        OK(weft_put_nbi(ep, right, seg, DATA + (size_t)(r - 1) * BLOCK, block, BLOCK));
        OK(weft_fence(ep));
        OK(weft_atomic_nbi(ep, right, seg, FLAG, WEFT_AOP_SET, WEFT_ATYPE_UINT64, (uint64_t)r, 0,
                           NULL));
        /* the block lives on this stack frame: free it for the next round */
        OK(weft_flush_local(ep));
    }
    for (int r = 1; r <= ROUNDS; r++) {
        uint64_t seen;

        OK(weft_signal_wait_until_cmp(ep, seg, FLAG, WEFT_CMP_GE, (uint64_t)r, &seen));
        CHECK(seen >= (uint64_t)r);
        for (int q = 1; q <= r; q++)
            for (size_t i = 0; i < BLOCK; i++)
                CHECK(local[DATA + (size_t)(q - 1) * BLOCK + i] ==
                      test_pattern((unsigned)(left * 1000 + q), i));
    }
    OK(weft_flush(ep));
    OK(weft_barrier(ctx));
    if (rank == 0)
        printf("fence: %d rounds on %d ranks arrived in order\n", ROUNDS, n);

    /* local completion: the source may change once weft_flush_local returns */
    for (size_t i = 0; i < BIG; i++)
        src[i] = test_pattern(7u + (unsigned)rank, i);
    OK(weft_put_nbi(ep, right, seg, BIG_AT, src, BIG));
    OK(weft_flush_local(ep));
    memset(src, 0xee, BIG);
    OK(weft_flush(ep));
    OK(weft_barrier(ctx));
    for (size_t i = 0; i < BIG; i++)
        CHECK(local[BIG_AT + i] == test_pattern(7u + (unsigned)left, i));
    /* nothing outstanding: both return at once */
    OK(weft_fence(ep));
    OK(weft_flush_local(ep));
    if (rank == 0)
        printf("flush_local: the source was reusable, the target got the original\n");

    FAILS(weft_fence(NULL), WEFT_ERR_INVALID_ARG);
    CHECK(strstr(weft_last_error(), "endpoint is NULL") != NULL);
    FAILS(weft_flush_local(NULL), WEFT_ERR_INVALID_ARG);
    CHECK(strstr(weft_last_error(), "endpoint is NULL") != NULL);
    OK(weft_barrier(ctx));
    OK(weft_seg_free(ctx, seg));
    OK(weft_finalize(ctx));
    FAILS(weft_fence(ep), WEFT_ERR_NOT_INIT);
    FAILS(weft_flush_local(ep), WEFT_ERR_NOT_INIT);
    free(src);
    return 0;
}
