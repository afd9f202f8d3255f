/* Typed atomics (weft_atomic, _nb, _nbi) on 32- and 64-bit words, signed
 * and unsigned, under contention from every rank: sums, bit patterns of
 * and/or/xor, swaps that lose no value, a compare-and-swap lock, and the
 * word next to a 32-bit one left alone.  Then bad input: misaligned words,
 * bad ranks, enums and pointers, bounds. */
#include "../common.h"

#include <string.h>

#define ITERS 160
#define SEG_BYTES 4096

/* Per type, a block of words at BLOCK * type (each 8-byte aligned). */
#define BLOCK 128
enum { SUM = 0, NB_SUM = 8, NBI_SUM = 16, XOR = 24, OR = 32, AND = 40, SWAP = 48, LOCK = 56,
       COUNT = 64, SIGNED = 72, SENTINEL = 76 };

static const weft_atype_t types[] = {WEFT_ATYPE_INT32, WEFT_ATYPE_UINT32, WEFT_ATYPE_INT64,
                                     WEFT_ATYPE_UINT64};
static const char *names[] = {"int32", "uint32", "int64", "uint64"};

static weft_ctx_t ctx_of_test(void);
static weft_ep_t ep;
static weft_seg_t seg;
static int rank, n;

static size_t size_of(weft_atype_t t)
{
    return t == WEFT_ATYPE_INT32 || t == WEFT_ATYPE_UINT32 ? 4 : 8;
}

/* The word's value, widened (read with an atomic fetch, on any path). */
static uint64_t fetch(int target, weft_atype_t t, size_t off)
{
    uint32_t v32 = 0;
    uint64_t v64 = 0;

    OK(weft_atomic(ep, target, seg, off, WEFT_AOP_FETCH, t, 0, 0, size_of(t) == 4 ? (void *)&v32
                                                                                  : (void *)&v64));
    return size_of(t) == 4 ? v32 : v64;
}

static uint64_t old_of(const void *r, weft_atype_t t)
{
    uint32_t v32;
    uint64_t v64;

    if (size_of(t) == 4) {
        memcpy(&v32, r, 4);
        return v32;
    }
    memcpy(&v64, r, 8);
    return v64;
}

static uint64_t allsum(uint64_t v)
{
    uint64_t s;

    MPI_Allreduce(&v, &s, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return s;
}

static void one_type(int ti, int target)
{
    weft_atype_t t = types[ti];
    size_t b = BLOCK * (size_t)ti;
    uint64_t mask = size_of(t) == 4 ? 0xffffffffull : ~0ull;
    uint64_t r[2], sum_old = 0, expect_sum = (uint64_t)ITERS * (uint64_t)n * (uint64_t)(n + 1) / 2;
    weft_event_t evs[16];

    /* the target sets the starting values */
    if (rank == target) {
        OK(weft_atomic(ep, target, seg, b + AND, WEFT_AOP_SET, t, ~0ull, 0, NULL));
        OK(weft_atomic(ep, target, seg, b + SIGNED, WEFT_AOP_SET, t, 5, 0, NULL));
        if (size_of(t) == 4)
            OK(weft_atomic(ep, target, seg, b + SENTINEL, WEFT_AOP_SET, WEFT_ATYPE_UINT32,
                           0xa5a5a5a5u, 0, NULL));
    }
    OK(weft_barrier(ctx_of_test()));

    for (int i = 0; i < ITERS; i++) {
        OK(weft_atomic(ep, target, seg, b + SUM, WEFT_AOP_FETCH_ADD, t, (uint64_t)rank + 1, 0, r));
        CHECK(old_of(r, t) < expect_sum);
        OK(weft_atomic_nbi(ep, target, seg, b + NBI_SUM, WEFT_AOP_ADD, t, 3, 0, NULL));
        OK(weft_atomic_nb(ep, target, seg, b + NB_SUM, i % 2 ? WEFT_AOP_ADD : WEFT_AOP_FETCH_ADD, t,
                          2, 0, &r[1], &evs[i % 16]));
        if (i % 16 == 15)
            OK(weft_wait_all(evs, 16));
    }
    OK(weft_wait_all(evs, ITERS % 16));
    OK(weft_flush(ep));

    /* xor: each rank flips its bit twice in the low word (back to 0) and
     * once high up; or/and: each sets / clears its own bit */
    OK(weft_atomic(ep, target, seg, b + XOR, WEFT_AOP_XOR, t, 1ull << rank, 0, NULL));
    OK(weft_atomic(ep, target, seg, b + XOR, WEFT_AOP_FETCH_XOR, t, (1ull << rank) | (1ull << (rank + 8)), 0, r));
    CHECK((old_of(r, t) >> rank & 1) == 1);
    OK(weft_atomic_nbi(ep, target, seg, b + OR, WEFT_AOP_OR, t, 1ull << (2 * rank), 0, NULL));
    OK(weft_atomic_nbi(ep, target, seg, b + OR, WEFT_AOP_FETCH_OR, t, 1ull << (2 * rank + 1), 0, r));
    OK(weft_atomic(ep, target, seg, b + AND, WEFT_AOP_FETCH_AND, t, ~(1ull << rank), 0, &r[1]));
    CHECK((old_of(&r[1], t) >> rank & 1) == 1);
    OK(weft_flush(ep));
    /* the fetch of an nbi op is in r after the flush: this rank's bit 2r
     * may or may not be there yet (nbi ops are unordered), 2r+1 is not */
    CHECK((old_of(r, t) >> (2 * rank + 1) & 1) == 0);

    /* swap: the old values and the last one are each rank's value once,
     * and the initial 0 */
    OK(weft_atomic(ep, target, seg, b + SWAP, WEFT_AOP_SWAP, t, (uint64_t)rank + 1, 0, r));
    sum_old = old_of(r, t);

    /* signed arithmetic: -1 twice from every rank, the neighbour word intact */
    OK(weft_atomic(ep, target, seg, b + SIGNED, WEFT_AOP_ADD, t, (uint64_t)(int64_t)-1, 0, NULL));
    OK(weft_atomic(ep, target, seg, b + SIGNED, WEFT_AOP_FETCH_ADD, t, (uint64_t)(int64_t)-1, 0, r));

    /* a compare-and-swap lock guards a read-modify-write of two ops */
    for (int i = 0; i < ITERS / 10; i++) {
        uint64_t v;

        do
            OK(weft_atomic(ep, target, seg, b + LOCK, WEFT_AOP_CSWAP, t, (uint64_t)rank + 1, 0, r));
        while (old_of(r, t) != 0);
        v = fetch(target, t, b + COUNT);
        OK(weft_atomic(ep, target, seg, b + COUNT, WEFT_AOP_SET, t, v + 1, 0, NULL));
        OK(weft_atomic(ep, target, seg, b + LOCK, WEFT_AOP_CSWAP, t, 0, (uint64_t)rank + 1, r));
        CHECK(old_of(r, t) == (uint64_t)rank + 1);
    }
    OK(weft_barrier(ctx_of_test()));
    /* (an MPI collective serves no weft operation: every rank enters it
     * before any rank needs another's progress again) */
    sum_old = allsum(sum_old);
    /* a failed compare leaves the word and returns it */
    OK(weft_atomic(ep, target, seg, b + LOCK, WEFT_AOP_CSWAP, t, 7, 99, r));
    CHECK(old_of(r, t) == 0);

    CHECK(fetch(target, t, b + SUM) == (expect_sum & mask));
    CHECK(fetch(target, t, b + NBI_SUM) == (uint64_t)ITERS * 3u * (uint64_t)n);
    CHECK(fetch(target, t, b + NB_SUM) == (uint64_t)ITERS * 2u * (uint64_t)n);
    {
        uint64_t low = (1ull << n) - 1, all = 0;

        CHECK(fetch(target, t, b + XOR) == low << 8);
        for (int q = 0; q < n; q++)
            all |= 3ull << (2 * q);
        CHECK(fetch(target, t, b + OR) == all);
        CHECK(fetch(target, t, b + AND) == (~low & mask));
    }
    CHECK(sum_old + fetch(target, t, b + SWAP) == (uint64_t)n * (uint64_t)(n + 1) / 2);
    CHECK(fetch(target, t, b + SIGNED) == ((uint64_t)(5 - 2 * (int64_t)n) & mask));
    if (size_of(t) == 4)
        CHECK(fetch(target, WEFT_ATYPE_UINT32, b + SENTINEL) == 0xa5a5a5a5u);
    CHECK(fetch(target, t, b + LOCK) == 0);
    CHECK(fetch(target, t, b + COUNT) == (uint64_t)(ITERS / 10) * (uint64_t)n);
    OK(weft_barrier(ctx_of_test()));
    if (rank == 0)
        printf("%s atomics on %d ranks at rank %d: exact\n", names[ti], n, target);
}

static void bad_input(void)
{
    uint64_t r;
    weft_event_t ev;

    FAILS(weft_atomic(ep, 0, seg, 2, WEFT_AOP_ADD, WEFT_ATYPE_INT32, 1, 0, NULL), WEFT_ERR_ALIGN);
    CHECK(strstr(weft_last_error(), "4-byte aligned") != NULL);
    FAILS(weft_atomic(ep, 0, seg, 4, WEFT_AOP_FETCH_ADD, WEFT_ATYPE_UINT64, 1, 0, &r),
          WEFT_ERR_ALIGN);
    CHECK(strstr(weft_last_error(), "8-byte aligned") != NULL);
    FAILS(weft_atomic_nbi(ep, 0, seg, 12, WEFT_AOP_XOR, WEFT_ATYPE_INT64, 1, 0, NULL),
          WEFT_ERR_ALIGN);
    FAILS(weft_atomic(ep, n, seg, 0, WEFT_AOP_ADD, WEFT_ATYPE_INT64, 1, 0, NULL), WEFT_ERR_RANK);
    FAILS(weft_atomic_nb(ep, -1, seg, 0, WEFT_AOP_ADD, WEFT_ATYPE_INT64, 1, 0, NULL, &ev),
          WEFT_ERR_RANK);
    FAILS(weft_atomic(ep, 0, seg, 0, (weft_aop_t)12, WEFT_ATYPE_INT64, 1, 0, &r),
          WEFT_ERR_INVALID_ARG);
    CHECK(strstr(weft_last_error(), "not a weft_aop_t") != NULL);
    FAILS(weft_atomic(ep, 0, seg, 0, WEFT_AOP_ADD, (weft_atype_t)4, 1, 0, &r), WEFT_ERR_INVALID_ARG);
    CHECK(strstr(weft_last_error(), "not a weft_atype_t") != NULL);
    FAILS(weft_atomic(ep, 0, seg, 0, WEFT_AOP_SWAP, WEFT_ATYPE_INT32, 1, 0, NULL),
          WEFT_ERR_INVALID_ARG);
    CHECK(strstr(weft_last_error(), "result is NULL") != NULL);
    FAILS(weft_atomic_nbi(ep, 0, seg, 0, WEFT_AOP_FETCH, WEFT_ATYPE_INT32, 1, 0, NULL),
          WEFT_ERR_INVALID_ARG);
    FAILS(weft_atomic_nb(ep, 0, seg, 0, WEFT_AOP_ADD, WEFT_ATYPE_INT32, 1, 0, NULL, NULL),
          WEFT_ERR_INVALID_ARG);
    FAILS(weft_atomic(ep, 0, seg, SEG_BYTES - 4, WEFT_AOP_ADD, WEFT_ATYPE_INT64, 1, 0, NULL),
          WEFT_ERR_BOUNDS);
    CHECK(strstr(weft_last_error(), "exceeds segment size") != NULL);
    FAILS(weft_atomic(ep, 0, seg, SEG_BYTES, WEFT_AOP_ADD, WEFT_ATYPE_UINT32, 1, 0, NULL),
          WEFT_ERR_BOUNDS);
    FAILS(weft_atomic(ep, 0, NULL, 0, WEFT_AOP_ADD, WEFT_ATYPE_UINT32, 1, 0, NULL), WEFT_ERR_SEG);
    FAILS(weft_atomic(NULL, 0, seg, 0, WEFT_AOP_ADD, WEFT_ATYPE_UINT32, 1, 0, NULL),
          WEFT_ERR_INVALID_ARG);
    /* the 32-bit ops at a 4-aligned offset that is not 8-aligned are fine */
    OK(weft_atomic(ep, 0, seg, BLOCK * 4 + 4, WEFT_AOP_FETCH_ADD, WEFT_ATYPE_INT32, 0, 0, &r));
}

static weft_ctx_t the_ctx;
static weft_ctx_t ctx_of_test(void)
{
    return the_ctx;
}

int main(void)
{
    OK(weft_init(NULL, &the_ctx));
    OK(weft_rank(the_ctx, &rank));
    OK(weft_nranks(the_ctx, &n));
    OK(weft_ep_default(the_ctx, &ep));
    OK(weft_seg_alloc(the_ctx, SEG_BYTES, &seg, NULL));

    /* every rank to rank 0, then to the last rank (another node in the
     * .nodes variant, and the direct path for rank 0 in the others) */
    for (int ti = 0; ti < 4; ti++)
        one_type(ti, 0);
    OK(weft_barrier(the_ctx));
    OK(weft_seg_free(the_ctx, seg));
    OK(weft_seg_alloc(the_ctx, SEG_BYTES, &seg, NULL));
    for (int ti = 0; ti < 4; ti++)
        one_type(ti, n - 1);
    bad_input();
    OK(weft_barrier(the_ctx));
    OK(weft_seg_free(the_ctx, seg));
    OK(weft_finalize(the_ctx));
    return 0;
}
