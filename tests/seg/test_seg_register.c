/* weft_seg_register: memory the program already has, of a different size
 * on each rank, not page aligned.  Every rank reads the last word of its
 * neighbour's part (past the smallest part), puts into it, and adds to a
 * word of rank 0 with 32- and 64-bit atomics; accesses are checked
 * against the target's own size.  weft_ptr reaches only the caller's own
 * part; weft_seg_query gives this rank's size.  After weft_seg_free the
 * memory is the program's again, as it was left.  Bad input fails on
 * every rank, whichever rank gave it. */
#include "../common.h"

#include <string.h>

static size_t part_size(int r)
{
    return 1000 + (size_t)r * 4096 + 8;   /* a multiple of 8, different per rank */
}

int main(void)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg, none = NULL;
    uint64_t *mem, v, old;
    size_t mine, got;
    void *p;
    int rank, n, right, left;

    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    right = (rank + 1) % n;
    left = (rank + n - 1) % n;
    mine = part_size(rank);
    /* 8 bytes into an allocation: not page aligned */
    mem = malloc(mine + 8);
    CHECK(mem != NULL);
    mem++;
    for (size_t i = 0; i < mine / 8; i++)
        mem[i] = (uint64_t)rank << 32 | i;

    OK(weft_seg_register(ctx, mem, mine, &seg));
    OK(weft_seg_query(seg, &got, &p));
    CHECK(got == mine && p == mem);
    /* registration keeps the contents */
    OK(weft_get(ep, &v, right, seg, part_size(right) - 8, 8));
    CHECK(v == ((uint64_t)right << 32 | (part_size(right) / 8 - 1)));
    OK(weft_barrier(ctx));
    v = 0xfeed0000u + (uint64_t)rank;
    OK(weft_put(ep, right, seg, part_size(right) - 8, &v, 8));
    OK(weft_atomic(ep, 0, seg, 0, WEFT_AOP_ADD, WEFT_ATYPE_UINT64, (uint64_t)rank + 1, 0, NULL));
    OK(weft_atomic(ep, 0, seg, 8, WEFT_AOP_ADD, WEFT_ATYPE_INT32, 1, 0, NULL));
    OK(weft_atomic_fetch_add(ep, right, seg, 16, 1, &old));
    CHECK(old == ((uint64_t)right << 32 | 2));
    OK(weft_flush(ep));
    OK(weft_barrier(ctx));
    CHECK(mem[mine / 8 - 1] == 0xfeed0000u + (uint64_t)left);
    CHECK(mem[2] == ((uint64_t)rank << 32 | 3));
    if (rank == 0) {
        uint32_t count;

        CHECK(mem[0] == (uint64_t)n * (uint64_t)(n + 1) / 2);
        memcpy(&count, &mem[1], 4);
        CHECK(count == (uint32_t)n + 1u);   /* 1 was there (word 1 of rank 0) */
        printf("registered parts of %zu to %zu bytes on %d ranks: exact\n", part_size(0),
               part_size(n - 1), n);
    }

    /* bounds are the target's own */
    FAILS(weft_get(ep, &v, right, seg, part_size(right) - 4, 8), WEFT_ERR_BOUNDS);
    CHECK(strstr(weft_last_error(), "exceeds segment size") != NULL);
    FAILS(weft_put(ep, rank, seg, mine, &v, 1), WEFT_ERR_BOUNDS);
    /* weft_ptr: this rank's part only */
    OK(weft_ptr(ctx, rank, seg, 8, &p));
    CHECK(p == (void *)&mem[1]);
    if (n > 1) {
        FAILS(weft_ptr(ctx, right, seg, 0, &p), WEFT_ERR_UNSUPPORTED);
        CHECK(strstr(weft_last_error(), "registered") != NULL);
    }
    FAILS(weft_ptr(ctx, rank, seg, mine, &p), WEFT_ERR_BOUNDS);
    OK(weft_barrier(ctx));
    OK(weft_seg_free(ctx, seg));
    FAILS(weft_seg_free(ctx, seg), WEFT_ERR_SEG);
    /* the memory is the program's again, with what the ranks left in it */
    CHECK(mem[mine / 8 - 1] == 0xfeed0000u + (uint64_t)left);
    mem[0] = 1;

    /* a static buffer, the same size everywhere, registered twice at once */
    {
        static uint64_t table[64];
        weft_seg_t a, b;

        OK(weft_seg_register(ctx, table, sizeof(table), &a));
        OK(weft_seg_register(ctx, table, sizeof(table), &b));
        OK(weft_atomic(ep, right, a, 0, WEFT_AOP_FETCH_ADD, WEFT_ATYPE_UINT64, 1, 0, &old));
        OK(weft_atomic(ep, right, b, 0, WEFT_AOP_FETCH_ADD, WEFT_ATYPE_UINT64, 1, 0, &old));
        OK(weft_barrier(ctx));
        CHECK(table[0] == 2);
        OK(weft_seg_free(ctx, b));
        OK(weft_seg_free(ctx, a));
    }

    /* bad input on one rank fails the call on every rank */
    FAILS(weft_seg_register(ctx, rank == n - 1 ? NULL : mem, mine, &none), WEFT_ERR_INVALID_ARG);
    CHECK(strstr(weft_last_error(), rank == n - 1 ? "base is NULL" : "another rank failed") != NULL);
    CHECK(none == NULL);
    FAILS(weft_seg_register(ctx, mem, rank == 0 ? 0 : mine, &none), WEFT_ERR_INVALID_ARG);
    CHECK(strstr(weft_last_error(), "rank 0 registers 0 bytes") != NULL);
    FAILS(weft_seg_register(ctx, mem, mine, NULL), WEFT_ERR_INVALID_ARG);
    CHECK(strstr(weft_last_error(), "seg is NULL") != NULL);
    OK(weft_barrier(ctx));
    OK(weft_finalize(ctx));
    FAILS(weft_seg_register(ctx, mem, mine, &none), WEFT_ERR_NOT_INIT);
    free(mem - 1);
    return 0;
}
