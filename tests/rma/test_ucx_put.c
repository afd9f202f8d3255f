/* weft_ucx.h's put through a kept target (weft_ucx_put_target,
 * weft_ucx_put_nbi), inline and through the library: every rank puts words
 * into two segments of every rank, itself included, over many flushes and
 * more puts than a window of implicit operations, and checks what it
 * received; the arguments are still checked (a NULL target or source, a
 * bad rank, the bounds of each segment, offsets that wrap); a freed
 * segment is refused through the target that reached it; a target whose
 * filling failed reports the error on every put. */
#include "../common.h"

#include <stdint.h>
#include <string.h>
#include <weft_ucx.h>

#define SIZE_A 65536
#define SIZE_B 4096
#define WORDS  64
/* Passes of WORDS puts to each rank and segment: a flush after each of the
 * first few, then after every 24th, so that a target makes more puts in an
 * epoch than its budget and the endpoint more than a window. */
#define PASSES 48

static uint64_t value(int from, int seg, int k, int pass)
{
    return ((uint64_t)from << 40) | ((uint64_t)seg << 32) | ((uint64_t)pass << 16) | (uint64_t)k;
}

/* Every rank puts WORDS words into words [rank * WORDS, ...) of both
 * segments of every rank, PASSES times (the last pass's values stay),
 * half through the inline form and half through the library's. */
static void exchange(weft_ctx_t ctx, weft_ep_t ep, weft_ucx_put_target_t (*t)[2],
                     uint64_t **local, int rank, int n)
{
    /* an implicit put's source stays untouched until the flush */
    static uint64_t src[PASSES][2][WORDS];

    for (int p = 0; p < PASSES; p++) {
        for (int s = 0; s < 2; s++)
            for (int k = 0; k < WORDS; k++)
                src[p][s][k] = value(rank, s, k, p);
        for (int k = 0; k < WORDS; k++)
            for (int r = 0; r < n; r++)
                for (int s = 0; s < 2; s++) {
                    size_t off = ((size_t)rank * WORDS + (size_t)k) * 8;

                    if ((k + p) % 2)
                        OK(weft_ucx_put_nbi(&t[r][s], off, &src[p][s][k], 8));
                    else
                        OK((weft_ucx_put_nbi)(&t[r][s], off, &src[p][s][k], 8));
                }
        if (p < 4 || p % 24 == 23)
            OK(weft_flush(ep));
    }
    OK(weft_barrier(ctx));
    for (int s = 0; s < 2; s++)
        for (int from = 0; from < n; from++)
            for (int k = 0; k < WORDS; k++)
                CHECK(local[s][(size_t)from * WORDS + (size_t)k] == value(from, s, k, PASSES - 1));
    OK(weft_barrier(ctx));
}

int main(void)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t segs[2], freed;
    weft_ucx_put_target_t (*t)[2], bad;
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
    CHECK((t = calloc((size_t)n, sizeof(*t))) != NULL);
    for (int r = 0; r < n; r++)
        for (int s = 0; s < 2; s++)
            OK(weft_ucx_put_target(ep, r, segs[s], &t[r][s]));

    exchange(ctx, ep, t, local, rank, n);

    /* the arguments, through both forms; the targets stay usable */
    OK(weft_ucx_put_nbi(&t[peer][0], SIZE_B + 8, &v, 8));
    FAILS(weft_ucx_put_nbi(&t[peer][1], SIZE_B + 8, &v, 8), WEFT_ERR_BOUNDS);
    FAILS((weft_ucx_put_nbi)(&t[peer][1], SIZE_B + 8, &v, 8), WEFT_ERR_BOUNDS);
    OK(weft_ucx_put_nbi(&t[peer][1], SIZE_B - 8, &v, 8));
    FAILS(weft_ucx_put_nbi(&t[peer][1], SIZE_B - 4, &v, 8), WEFT_ERR_BOUNDS);
    FAILS(weft_ucx_put_nbi(&t[peer][1], (size_t)0 - 8, &v, 16), WEFT_ERR_BOUNDS);
    FAILS((weft_ucx_put_nbi)(&t[peer][1], (size_t)0 - 8, &v, 16), WEFT_ERR_BOUNDS);
    FAILS(weft_ucx_put_nbi(&t[peer][1], 0, NULL, 8), WEFT_ERR_INVALID_ARG);
    FAILS((weft_ucx_put_nbi)(&t[peer][1], 0, NULL, 8), WEFT_ERR_INVALID_ARG);
    FAILS(weft_ucx_put_nbi(NULL, 0, &v, 8), WEFT_ERR_INVALID_ARG);
    FAILS((weft_ucx_put_nbi)(NULL, 0, &v, 8), WEFT_ERR_INVALID_ARG);
    FAILS(weft_ucx_put_target(ep, peer, segs[0], NULL), WEFT_ERR_INVALID_ARG);
    OK(weft_ucx_put_nbi(&t[peer][1], 0, &v, 8));
    OK(weft_flush(ep));

    /* a target whose filling failed reports the error on every put */
    FAILS(weft_ucx_put_target(ep, n, segs[0], &bad), WEFT_ERR_RANK);
    FAILS(weft_ucx_put_nbi(&bad, 0, &v, 8), WEFT_ERR_RANK);
    FAILS((weft_ucx_put_nbi)(&bad, 0, &v, 8), WEFT_ERR_RANK);
    FAILS(weft_ucx_put_target(ep, -1, segs[0], &bad), WEFT_ERR_RANK);
    FAILS(weft_ucx_put_nbi(&bad, 0, &v, 8), WEFT_ERR_RANK);
    FAILS(weft_ucx_put_target(NULL, peer, segs[0], &bad), WEFT_ERR_INVALID_ARG);
    FAILS(weft_ucx_put_nbi(&bad, 0, &v, 8), WEFT_ERR_INVALID_ARG);
    FAILS(weft_ucx_put_target(ep, peer, NULL, &bad), WEFT_ERR_SEG);
    FAILS(weft_ucx_put_nbi(&bad, 0, &v, 8), WEFT_ERR_SEG);
    OK(weft_barrier(ctx));

    /* B freed: its targets refuse puts, in the same epoch as the free's own
     * flush and after later flushes; A's targets still reach A */
    freed = segs[1];
    OK(weft_seg_free(ctx, freed));
    FAILS(weft_ucx_put_nbi(&t[peer][1], 0, &v, 8), WEFT_ERR_SEG);
    FAILS((weft_ucx_put_nbi)(&t[peer][1], 0, &v, 8), WEFT_ERR_SEG);
    OK(weft_seg_alloc(ctx, SIZE_B, &segs[1], (void **)&local[1]));
    memset(local[1], 0, SIZE_B);
    OK(weft_flush(ep));
    FAILS(weft_ucx_put_nbi(&t[peer][1], 0, &v, 8), WEFT_ERR_SEG);
    for (int r = 0; r < n; r++)
        OK(weft_ucx_put_target(ep, r, segs[1], &t[r][1]));
    OK(weft_barrier(ctx));
    exchange(ctx, ep, t, local, rank, n);

    free(t);
    OK(weft_seg_free(ctx, segs[1]));
    OK(weft_seg_free(ctx, segs[0]));
    OK(weft_finalize(ctx));
    return 0;
}
