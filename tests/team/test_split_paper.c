/* The paper's worked examples (§5), communicator by communicator.
 *
 *   test_split_paper 5.1 [info]   32 ranks, 4 nodes of Fig. 1, rank 8k+i on
 *                                 core i of node k ("by node" mapping, "by
 *                                 core" binding); WEFT_Comm_split_type with a
 *                                 reversed key, then WEFT_Comm_hsplit_with_roots.
 *                                 With "info", the machine is given by info
 *                                 keys to the first call only.
 *   test_split_paper 5.2          8 ranks on one node of Fig. 1, bound to
 *                                 core 0, core 1, L2 1, L2 1, NUMA 1 x 4.
 *
 * Expected communicators are written from the paper's text (members as
 * MPI_COMM_WORLD ranks, in communicator order). */
#include <weft_mpi.h>
#include "check.h"

#include <stdlib.h>

#define FIG1 "pack:2 [numa] l3:1 l2:2 core:2 pu:1"
#define MAXN 32

typedef struct {
    int         n;             /* 0: MPI_COMM_NULL */
    int         members[MAXN];
    const char *type;
    int         num, index;
} expect_t;

static expect_t range(int first, int n, int step, const char *type, int num, int index)
{
    expect_t e = {.n = n, .type = type, .num = num, .index = index};
    for (int i = 0; i < n; i++)
        e.members[i] = first + i * step;
    return e;
}

static const expect_t none;

static void check_comm(MPI_Comm comm, const expect_t *e, int step, const char *what)
{
    if (!e->n) {
        CHECK(comm == MPI_COMM_NULL, "step %d: %s should be MPI_COMM_NULL", step, what);
        return;
    }
    if (comm == MPI_COMM_NULL) {
        CHECK(0, "step %d: %s is MPI_COMM_NULL, want %d ranks", step, what, e->n);
        return;
    }
    int       n, in[MAXN], out[MAXN];
    MPI_Group g, w;
    MPI_Comm_size(comm, &n);
    CHECK(n == e->n, "step %d: %s has %d ranks, want %d", step, what, n, e->n);
    if (n != e->n)
        return;
    for (int i = 0; i < n; i++)
        in[i] = i;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    MPI_Group_translate_ranks(g, n, in, w, out);
    MPI_Group_free(&g);
    MPI_Group_free(&w);
    for (int i = 0; i < n; i++)
        CHECK(out[i] == e->members[i], "step %d: %s member %d is p%d, want p%d", step, what, i,
              out[i], e->members[i]);
    if (e->type) {
        int         num, index;
        const char *type;
        CHECK(WEFT_Comm_get_hlevel_info(comm, &num, &index, &type) == MPI_SUCCESS, "%s",
              weft_last_error());
        CHECK_STR(type, e->type);
        CHECK(num == e->num && index == e->index, "step %d: %s is %d of %d, want %d of %d", step,
              what, index, num, e->index, e->num);
    }
}

/* §5.1: newcomm[s] and rootscomm[s] of p_x, x = 8k + i. */
static void expect_5_1(int x, int step, expect_t *nc, expect_t *rc)
{
    int k = x / 8, i = x % 8;

    *nc = none;
    *rc = none;
    switch (step) {
    case 0:
        *nc = range(8 * k, 8, 1, "Machine", 4, k);
        if (i == 0)
            *rc = range(0, 4, 8, NULL, 0, 0);
        break;
    case 1:
        *nc = range(8 * k + 4 * (i / 4), 4, 1, "NUMANode", 2, i / 4);
        if (i % 4 == 0)
            *rc = range(8 * k, 2, 4, NULL, 0, 0);
        break;
    case 2:
        *nc = range(8 * k + 2 * (i / 2), 2, 1, "L2Cache", 2, (i / 2) % 2);
        if (i % 2 == 0)
            *rc = range(8 * k + 4 * (i / 4), 2, 2, NULL, 0, 0);
        break;
    case 3:
        *nc = range(x, 1, 1, "Core", 2, i % 2);
        *rc = range(8 * k + 2 * (i / 2), 2, 1, NULL, 0, 0);
        break;
    }
}

/* §5.2: p0, p1 on cores 0 and 1, p2, p3 on L2 1, p4..p7 on NUMA node 1. */
static void expect_5_2(int r, int step, expect_t *nc, expect_t *rc)
{
    *nc = none;
    *rc = none;
    switch (step) {
    case 0:
        *nc = range(4 * (r / 4), 4, 1, "NUMANode", 2, r / 4);
        if (r % 4 == 0)
            *rc = range(0, 2, 4, NULL, 0, 0);
        break;
    case 1:
        if (r < 4)
            *nc = range(2 * (r / 2), 2, 1, "L2Cache", 2, r / 2);
        if (r == 0 || r == 2)
            *rc = range(0, 2, 2, NULL, 0, 0);
        break;
    case 2:
        if (r < 2) {
            *nc = range(r, 1, 1, "Core", 2, r);
            *rc = range(0, 2, 1, NULL, 0, 0);
        }
        break;
    }
}

typedef void (*expect_fn)(int x, int step, expect_t *nc, expect_t *rc);

/* The paper's loop; with_roots selects hsplit_with_roots, otherwise
 * split_type with keys that reverse the world order. */
static void run(expect_fn expect, int with_roots, MPI_Info first_info)
{
    MPI_Comm comm = MPI_COMM_WORLD, next, roots;
    int      me, step, steps = 0;
    expect_t nc, rc;

    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    /* The rank's last split is the first one expected to give MPI_COMM_NULL. */
    for (expect(me, 0, &nc, &rc); nc.n; expect(me, ++steps, &nc, &rc))
        ;
    for (step = 0; comm != MPI_COMM_NULL; step++) {
        int      rc_code;
        MPI_Info info = step == 0 ? first_info : MPI_INFO_NULL;
        expect(me, step, &nc, &rc);
        if (with_roots) {
            rc_code = WEFT_Comm_hsplit_with_roots(comm, info, &next, &roots);
        } else {
            rc_code = WEFT_Comm_split_type(comm, WEFT_COMM_TYPE_PHYSICAL_TOPOLOGY, MAXN - me,
                                           info, &next);
            roots = MPI_COMM_NULL;
            for (int i = 0; i < nc.n / 2; i++) {
                int t = nc.members[i];
                nc.members[i] = nc.members[nc.n - 1 - i];
                nc.members[nc.n - 1 - i] = t;
            }
            rc = none;
        }
        CHECK(rc_code == MPI_SUCCESS, "step %d: %s", step + 1, weft_last_error());
        if (rc_code != MPI_SUCCESS)
            break;
        check_comm(next, &nc, step + 1, "newcomm");
        check_comm(roots, &rc, step + 1, "rootscomm");
        if (next != MPI_COMM_NULL) {
            int result;
            MPI_Comm_compare(comm, next, &result);
            CHECK(result == MPI_UNEQUAL, "step %d: not a strict subset", step + 1);
        }
        if (expect == expect_5_1 && step == 3) {
            int result;
            MPI_Comm_compare(next, MPI_COMM_SELF, &result);
            CHECK(result == MPI_CONGRUENT, "§5.1 step 4 should be congruent with MPI_COMM_SELF");
        }
        if (roots != MPI_COMM_NULL)
            MPI_Comm_free(&roots);
        if (comm != MPI_COMM_WORLD)
            MPI_Comm_free(&comm);
        comm = next;
        if (step > steps)
            break;
    }
    CHECK(step == steps + 1, "the loop ran %d steps, want %d", step, steps + 1);
    if (comm != MPI_COMM_NULL && comm != MPI_COMM_WORLD)
        MPI_Comm_free(&comm);
}

/* WEFT_Comm_get_min_hlevel on §5.1's world: the deepest level shared. */
static void test_min_hlevel_5_1(int me)
{
    static const struct { int mask; const char *type; } pairs[] = {
        {1, "L2Cache"}, {2, "L3Cache"}, {4, "Machine"}, {8, "Cluster"}, {16, "Cluster"}};
    const char *type;

    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        int ranks[2] = {me, me ^ pairs[i].mask};
        CHECK(WEFT_Comm_get_min_hlevel(MPI_COMM_WORLD, 2, ranks, &type) == MPI_SUCCESS, "%s",
              weft_last_error());
        CHECK_STR(type, pairs[i].type);
    }
    int self = me;
    CHECK(WEFT_Comm_get_min_hlevel(MPI_COMM_WORLD, 1, &self, &type) == MPI_SUCCESS, "self");
    CHECK_STR(type, "PU");
    int others[2] = {(me + 1) % 32, (me + 2) % 32};
    CHECK(WEFT_Comm_get_min_hlevel(MPI_COMM_WORLD, 2, others, &type) == MPI_SUCCESS, "others");
    CHECK_STR(type, "Unknown");
}

int main(int argc, char **argv)
{
    int np, me;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    check_rank = me;
    if (argc > 1 && strcmp(argv[1], "5.1") == 0 && np == 32) {
        if (argc > 2 && strcmp(argv[2], "info") == 0) {
            MPI_Info info;
            MPI_Info_create(&info);
            MPI_Info_set(info, "weft_topo_synthetic", FIG1);
            MPI_Info_set(info, "weft_topo_node", "block:node%d:8");
            MPI_Info_set(info, "weft_topo_bind", "by-core");
            run(expect_5_1, 1, info);
            MPI_Info_free(&info);
        } else {
            run(expect_5_1, 0, MPI_INFO_NULL);
            run(expect_5_1, 1, MPI_INFO_NULL);
            test_min_hlevel_5_1(me);
        }
    } else if (argc > 1 && strcmp(argv[1], "5.2") == 0 && np == 8) {
        run(expect_5_2, 0, MPI_INFO_NULL);
        run(expect_5_2, 1, MPI_INFO_NULL);
    } else {
        if (me == 0)
            fprintf(stderr, "usage: test_split_paper 5.1 [info] (32 ranks) | 5.2 (8 ranks)\n");
        check_failures++;
    }
    MPI_Allreduce(MPI_IN_PLACE, &check_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0 && check_failures)
        fprintf(stderr, "%d check(s) failed\n", check_failures);
    MPI_Finalize();
    return check_failures != 0;
}
