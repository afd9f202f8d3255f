/* 100 000 outstanding implicit puts, then a single flush: every one of
 * them lands, none is lost or reordered into a wrong slot. */
#include "../common.h"

#define NPUTS 100000

int main(void)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg;
    uint64_t *local, *src;
    int rank, n;

    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, NPUTS * sizeof(uint64_t), &seg, (void **)&local));
    src = malloc(NPUTS * sizeof(uint64_t));
    CHECK(src != NULL);

    int right = (rank + 1) % n, left = (rank + n - 1) % n;
    /* src must stay unchanged until the flush, so each put has its own word */
    for (uint64_t i = 0; i < NPUTS; i++)
        src[i] = ((uint64_t)rank << 32) | i;
    for (uint64_t i = 0; i < NPUTS; i++)
        OK(weft_put_nbi(ep, right, seg, i * sizeof(uint64_t), &src[i], sizeof(uint64_t)));
    OK(weft_flush(ep));
    OK(weft_barrier(ctx));
    for (uint64_t i = 0; i < NPUTS; i++)
        CHECK(local[i] == (((uint64_t)left << 32) | i));

    free(src);
    OK(weft_seg_free(ctx, seg));
    OK(weft_finalize(ctx));
    if (rank == 0)
        printf("%d implicit puts per rank, one flush: all verified on %d ranks\n", NPUTS, n);
    return 0;
}
