/* weft_ptr: pointers to the parts of ranks of this node, their bad input,
 * and the statuses of ranks that are not mapped (another node, WEFT_SHM=0).
 *
 *   test_weft_ptr --expect direct|ucx|nodes
 *     direct: every rank is mapped;  ucx: only this rank (WEFT_SHM=0)
 *     is not, and says why;  nodes: 2 ranks per emulated node.
 *   test_weft_ptr --mismatch
 *     rank 0 turns the direct path off, the others not: every rank's
 *     weft_seg_alloc fails with WEFT_ERR_CONFIG. */
#include "../common.h"

#include <string.h>

#define SEG 4096

int main(int argc, char **argv)
{
    weft_ctx_t ctx, dead;
    weft_ep_t ep;
    weft_seg_t seg, other, freed;
    uint64_t *mine;
    void *p = (void *)&p;
    int rank, n;
    const char *expect = argc > 2 && !strcmp(argv[1], "--expect") ? argv[2] : "direct";

    if (argc > 1 && !strcmp(argv[1], "--mismatch")) {
        weft_config_t cfg;
        int world;
        MPI_Init(NULL, NULL);
        MPI_Comm_rank(MPI_COMM_WORLD, &world);
        OK(weft_config_init(&cfg));
        cfg.shm = world != 0;
        OK(weft_init(&cfg, &ctx));
        FAILS(weft_seg_alloc(ctx, SEG, &seg, NULL), WEFT_ERR_CONFIG);
        CHECK(strstr(weft_last_error(), "WEFT_SHM differs") != NULL);
        OK(weft_finalize(ctx));
        MPI_Finalize();
        if (world == 0)
            printf("ranks that disagree on WEFT_SHM are refused\n");
        return 0;
    }
    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, SEG, &seg, (void **)&mine));
    OK(weft_seg_alloc(ctx, SEG, &other, NULL));
    OK(weft_seg_alloc(ctx, SEG, &freed, NULL));
    OK(weft_seg_free(ctx, freed));

    /* bad input: nothing written */
    FAILS(weft_ptr(NULL, 0, seg, 0, &p), WEFT_ERR_NOT_INIT);
    FAILS(weft_ptr(ctx, 0, seg, 0, NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_ptr(ctx, -1, seg, 0, &p), WEFT_ERR_RANK);
    FAILS(weft_ptr(ctx, n, seg, 0, &p), WEFT_ERR_RANK);
    CHECK(strstr(weft_last_error(), "outside") != NULL);
    FAILS(weft_ptr(ctx, 0, NULL, 0, &p), WEFT_ERR_SEG);
    FAILS(weft_ptr(ctx, 0, freed, 0, &p), WEFT_ERR_SEG);
    FAILS(weft_ptr(ctx, 0, seg, SEG, &p), WEFT_ERR_BOUNDS);
    CHECK(strstr(weft_last_error(), "offset 4096") != NULL);
    FAILS(weft_ptr(ctx, 0, seg, (size_t)-1, &p), WEFT_ERR_BOUNDS);
    CHECK(p == (void *)&p);

    /* each rank writes its rank into word 1 of every part it can map */
    for (int r = 0; r < n; r++) {
        p = (void *)&p;
        weft_status_t st = weft_ptr(ctx, r, seg, 8, &p);
        int direct = !strcmp(expect, "direct") || (!strcmp(expect, "nodes") && r / 2 == rank / 2);
        if (!strcmp(expect, "ucx") || !direct) {
            FAILS(st, WEFT_ERR_UNSUPPORTED);
            CHECK(strstr(weft_last_error(), !strcmp(expect, "ucx") ? "WEFT_SHM=0" : "node") != NULL);
            CHECK(p == (void *)&p);
            continue;
        }
        OK(st);
        if (r == rank)
            CHECK(p == (void *)(mine + 1));
        __atomic_fetch_add((uint64_t *)p, (uint64_t)rank + 1, __ATOMIC_SEQ_CST);
    }
    OK(weft_barrier(ctx));
    /* what the mapped ranks added is what weft's own get sees */
    uint64_t expected = 0, got;
    for (int r = 0; r < n; r++)
        if (!strcmp(expect, "direct") || (!strcmp(expect, "nodes") && r / 2 == rank / 2))
            expected += (uint64_t)r + 1;
    CHECK(mine[1] == expected);
    OK(weft_get(ep, &got, rank, seg, 8, 8));
    CHECK(got == expected);
    OK(weft_barrier(ctx));

    OK(weft_seg_free(ctx, other));
    FAILS(weft_ptr(ctx, rank, other, 0, &p), WEFT_ERR_SEG);
    OK(weft_seg_free(ctx, seg));
    dead = ctx;
    OK(weft_finalize(ctx));
    FAILS(weft_ptr(dead, 0, seg, 0, &p), WEFT_ERR_NOT_INIT);
    if (rank == 0)
        printf("weft_ptr checks passed on %d ranks (%s)\n", n, expect);
    return 0;
}
