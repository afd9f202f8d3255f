/* Signal SET and comparison waits: each rank sends its right neighbour
 * ROUNDS blocks with weft_put_signal_op_nb(WEFT_SIGNAL_SET, r); the
 * neighbour waits for the word to EQual r, checks the block, and answers
 * with an atomic add that the sender waits for (GE, then GT).  NE, LT and
 * LE wait on words that the left neighbour sets or counts down.  The old
 * weft_signal_wait_until (>=) works beside them.  Then bad input. */
#include "../common.h"

#include <string.h>

#define ROUNDS 50
#define BLOCK 512
enum { SIG = 0, ACK = 8, HELLO = 16, DOWN = 24, ADDSIG = 32, DATA = 64 };
#define SEG_BYTES (DATA + BLOCK)

int main(void)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg;
    uint64_t *words, seen;
    unsigned char *local, block[BLOCK];
    weft_event_t ev;
    int rank, n, right, left;

    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, SEG_BYTES, &seg, (void **)&local));
    words = (uint64_t *)(void *)local;
    right = (rank + 1) % n;
    left = (rank + n - 1) % n;
    __atomic_store_n(&words[DOWN / 8], 100, __ATOMIC_RELAXED);
    OK(weft_barrier(ctx));

    for (int r = 1; r <= ROUNDS; r++) {
        for (size_t i = 0; i < BLOCK; i++)
            block[i] = test_pattern((unsigned)(rank * 100 + r), i);
        OK(weft_put_signal_op_nb(ep, right, seg, DATA, block, BLOCK, seg, SIG, (uint64_t)r,
                                 WEFT_SIGNAL_SET, &ev));
        OK(weft_wait(&ev));
        OK(weft_signal_wait_until_cmp(ep, seg, SIG, WEFT_CMP_EQ, (uint64_t)r, &seen));
        CHECK(seen == (uint64_t)r);
        for (size_t i = 0; i < BLOCK; i++)
            CHECK(local[DATA + i] == test_pattern((unsigned)(left * 100 + r), i));
        /* the block may be overwritten now */
        OK(weft_atomic(ep, left, seg, ACK, WEFT_AOP_ADD, WEFT_ATYPE_UINT64, 1, 0, NULL));
        OK(weft_signal_wait_until_cmp(ep, seg, ACK, WEFT_CMP_GE, (uint64_t)r, &seen));
        CHECK(seen >= (uint64_t)r);
    }
    OK(weft_signal_wait_until_cmp(ep, seg, ACK, WEFT_CMP_GT, ROUNDS - 1, &seen));
    CHECK(seen == ROUNDS);

    /* NE: the word leaves 0 when the left neighbour sets it (no data) */
    OK(weft_put_signal_op_nb(ep, right, seg, DATA, NULL, 0, seg, HELLO, 42, WEFT_SIGNAL_SET, &ev));
    OK(weft_wait(&ev));
    OK(weft_signal_wait_until_cmp(ep, seg, HELLO, WEFT_CMP_NE, 0, &seen));
    CHECK(seen == 42);
    /* LT / LE: the left neighbour counts 100 down three times */
    for (int i = 0; i < 3; i++)
        OK(weft_atomic_nbi(ep, right, seg, DOWN, WEFT_AOP_ADD, WEFT_ATYPE_UINT64,
                           (uint64_t)(int64_t)-1, 0, NULL));
    OK(weft_flush(ep));
    OK(weft_signal_wait_until_cmp(ep, seg, DOWN, WEFT_CMP_LT, 98, &seen));
    CHECK(seen == 97);
    OK(weft_signal_wait_until_cmp(ep, seg, DOWN, WEFT_CMP_LE, 97, &seen));
    CHECK(seen == 97);
    /* ADD through the new call, waited for with the old one */
    OK(weft_put_signal_op_nb(ep, right, seg, DATA, block, 8, seg, ADDSIG, 5, WEFT_SIGNAL_ADD, &ev));
    OK(weft_wait(&ev));
    OK(weft_put_signal_op_nb(ep, right, seg, DATA, block, 8, seg, ADDSIG, 6, WEFT_SIGNAL_ADD, &ev));
    OK(weft_wait(&ev));
    OK(weft_signal_wait_until(ep, seg, ADDSIG, 11, &seen));
    CHECK(seen == 11);
    OK(weft_barrier(ctx));
    if (rank == 0)
        printf("signal set and comparisons: %d rounds on %d ranks\n", ROUNDS, n);

    FAILS(weft_signal_wait_until_cmp(ep, seg, SIG, (weft_cmp_t)6, 0, NULL), WEFT_ERR_INVALID_ARG);
    CHECK(strstr(weft_last_error(), "not a weft_cmp_t") != NULL);
    FAILS(weft_signal_wait_until_cmp(ep, seg, 4, WEFT_CMP_EQ, 0, NULL), WEFT_ERR_ALIGN);
    CHECK(strstr(weft_last_error(), "8-byte aligned") != NULL);
    FAILS(weft_signal_wait_until_cmp(ep, seg, SEG_BYTES - 4, WEFT_CMP_EQ, 0, NULL), WEFT_ERR_BOUNDS);
    FAILS(weft_signal_wait_until_cmp(ep, NULL, 0, WEFT_CMP_EQ, 0, NULL), WEFT_ERR_SEG);
    FAILS(weft_signal_wait_until_cmp(NULL, seg, 0, WEFT_CMP_EQ, 0, NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_put_signal_op_nb(ep, right, seg, DATA, block, 8, seg, SIG, 1, (weft_signal_op_t)2,
                                &ev), WEFT_ERR_INVALID_ARG);
    CHECK(strstr(weft_last_error(), "not a weft_signal_op_t") != NULL);
    FAILS(weft_put_signal_op_nb(ep, right, seg, DATA, block, 8, seg, 12, 1, WEFT_SIGNAL_SET, &ev),
          WEFT_ERR_ALIGN);
    FAILS(weft_put_signal_op_nb(ep, right, seg, DATA, block, 8, seg, SIG, 1, WEFT_SIGNAL_SET, NULL),
          WEFT_ERR_INVALID_ARG);
    FAILS(weft_put_signal_op_nb(ep, n, seg, DATA, block, 8, seg, SIG, 1, WEFT_SIGNAL_SET, &ev),
          WEFT_ERR_RANK);
    FAILS(weft_put_signal_op_nb(ep, right, seg, SEG_BYTES - 4, block, 8, seg, SIG, 1,
                                WEFT_SIGNAL_SET, &ev), WEFT_ERR_BOUNDS);
    FAILS(weft_put_signal_op_nb(ep, right, seg, DATA, NULL, 8, seg, SIG, 1, WEFT_SIGNAL_SET, &ev),
          WEFT_ERR_INVALID_ARG);
    OK(weft_barrier(ctx));
    OK(weft_seg_free(ctx, seg));
    OK(weft_finalize(ctx));
    return 0;
}
