/* Bad input to the hierarchical collectives: each call fails with the MPI
 * error class (or weft status) of its first bad argument and a message
 * naming the value, creates nothing, and the next good call works.  Also
 * the pure parser of weft_coll_groups. */
#include <weft.h>
#include <weft_mpi.h>
#include "coll/coll.h"
#include "../team/check.h"

static int me, np;

#define EXPECT_MPI(call, cls, fragment)                                                     \
    do {                                                                                   \
        int rc_ = (call);                                                                  \
        CHECK(rc_ == (cls), "%s returned %d, want %d (%s)", #call, rc_, (cls), #cls);      \
        CHECK_MSG(weft_last_error(), fragment);                                            \
    } while (0)

#define EXPECT_WEFT(call, st, fragment)                                                    \
    do {                                                                                   \
        weft_status_t st_ = (call);                                                        \
        CHECK(st_ == (st), "%s returned %s, want %s", #call, weft_strerror(st_), #st);     \
        CHECK_MSG(weft_last_error(), fragment);                                            \
    } while (0)

static void test_parse_groups(void)
{
    int              f[4], n = -1;
    weft__msg_t err;

    CHECK(weft__hier_parse_groups("3,4,2", 24, f, 4, &n, &err) == WEFT_OK && n == 3 && f[0] == 3 &&
              f[1] == 4 && f[2] == 2, "3,4,2 on 24 ranks");
    CHECK(weft__hier_parse_groups("24", 24, f, 4, &n, &err) == WEFT_OK && n == 1, "24");
    static const struct { const char *text; int nranks; const char *fragment; } bad[] = {
        {"", 4, "empty"},
        {"2,2", 8, "multiply to 4, the communicator has 8"},
        {"2,0,4", 8, "positive group size at '0,4'"},
        {"2,-2", 4, "at '-2'"},
        {"2;2", 4, "unexpected ';'"},
        {"2,", 2, "at ''"},
        {"x", 1, "at 'x'"},
        {"1,1,1,1,1", 1, "more than 4 levels"},
        {"65536,65536", 1, "overflows"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        n = -1;
        CHECK(weft__hier_parse_groups(bad[i].text, bad[i].nranks, f, 4, &n, &err) ==
                  WEFT_ERR_CONFIG && n == -1, "'%s' accepted", bad[i].text);
        CHECK_MSG(err.msg, bad[i].fragment);
    }
}

static void test_mpi_api(void)
{
    int      x = me, y = 0, g[64];
    MPI_Info info;
    MPI_Comm inter, half;

    EXPECT_MPI(WEFT_Hbcast(&x, 1, MPI_INT, np, MPI_COMM_WORLD), MPI_ERR_ROOT, "root");
    char want[64];
    snprintf(want, sizeof(want), "root %d outside [0, %d)", np, np);
    CHECK_MSG(weft_last_error(), want);
    EXPECT_MPI(WEFT_Hbcast(&x, 1, MPI_INT, -1, MPI_COMM_WORLD), MPI_ERR_ROOT, "root -1 outside");
    EXPECT_MPI(WEFT_Hbcast(&x, -3, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "count -3 is negative");
    EXPECT_MPI(WEFT_Hbcast(&x, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE,
               "MPI_DATATYPE_NULL");
    EXPECT_MPI(WEFT_Hbcast(&x, 1, MPI_INT, 0, MPI_COMM_NULL), MPI_ERR_COMM, "MPI_COMM_NULL");
    EXPECT_MPI(WEFT_Hbcast(MPI_IN_PLACE, 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER,
               "MPI_IN_PLACE");
    EXPECT_MPI(WEFT_Hreduce(&x, &y, 1, MPI_INT, MPI_OP_NULL, 0, MPI_COMM_WORLD), MPI_ERR_OP,
               "MPI_OP_NULL");
    EXPECT_MPI(WEFT_Hallreduce(&x, &y, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP,
               "MPI_OP_NULL");
    EXPECT_MPI(WEFT_Hreduce(&x, &y, 1, MPI_INT, MPI_SUM, np + 2, MPI_COMM_WORLD), MPI_ERR_ROOT,
               "outside");
    EXPECT_MPI(WEFT_Hgather(&x, 1, MPI_INT, g, 1, MPI_INT, -5, MPI_COMM_WORLD), MPI_ERR_ROOT,
               "root -5");
    EXPECT_MPI(WEFT_Hbarrier(MPI_COMM_NULL), MPI_ERR_COMM, "MPI_COMM_NULL");
    EXPECT_MPI(WEFT_Comm_hier_init(MPI_COMM_NULL, MPI_INFO_NULL), MPI_ERR_COMM, "MPI_COMM_NULL");
    /* MPI_IN_PLACE is for the root only (rank 0 here); other ranks fail
     * before any communication, so rank 0 is not called. */
    if (me != 0) {
        EXPECT_MPI(WEFT_Hreduce(MPI_IN_PLACE, &y, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD),
                   MPI_ERR_BUFFER, "which is not the root 0");
        EXPECT_MPI(WEFT_Hgather(MPI_IN_PLACE, 1, MPI_INT, g, 1, MPI_INT, 0, MPI_COMM_WORLD),
                   MPI_ERR_BUFFER, "which is not the root 0");
    }
    /* Intercommunicators have no hierarchy. */
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
    if (np >= 2) {
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, me % 2 ? 0 : 1, 7, &inter);
        EXPECT_MPI(WEFT_Hbarrier(inter), MPI_ERR_COMM, "intercommunicator");
        MPI_Comm_free(&inter);
    }
    MPI_Comm_free(&half);
    /* Malformed descriptions fail on every rank alike and leave no
     * hierarchy: the next call builds the default one. */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Info_create(&info);
    MPI_Info_set(info, "weft_coll_groups", "7,7");
    snprintf(want, sizeof(want), "multiply to 49, the communicator has %d", np);
    EXPECT_MPI(WEFT_Comm_hier_init(dup, info), MPI_ERR_INFO_VALUE, want);
    MPI_Info_free(&info);
    MPI_Info_create(&info);
    MPI_Info_set(info, "weft_topo_synthetic", "pack:2 [numa] core:2 pu:1");
    MPI_Info_set(info, "weft_topo_bind", "core:9*64");
    EXPECT_MPI(WEFT_Comm_hier_init(dup, info), MPI_ERR_INFO_VALUE, "lists 64 bindings");
    MPI_Info_free(&info);
    x = me == 0 ? 42 : -1;
    CHECK(WEFT_Hbcast(&x, 1, MPI_INT, 0, dup) == MPI_SUCCESS && x == 42, "bcast after errors: %s",
          weft_last_error());
    MPI_Comm_free(&dup);
}

/* weft teams: the same collectives with weft types, results against MPI,
 * then bad input. */
static void test_team(void)
{
    weft_ctx_t  ctx;
    weft_team_t team;
    double      d[3], dref[3];
    int64_t     v[2], vref[2], all[2 * 64];

    CHECK(weft_init(NULL, &ctx) == WEFT_OK, "weft_init: %s", weft_last_error());
    CHECK(weft_team_world(ctx, &team) == WEFT_OK, "%s", weft_last_error());
    for (int root = 0; root < np; root++) {
        for (int i = 0; i < 3; i++)
            d[i] = dref[i] = me == root ? root * 10 + i + 0.5 : 0;
        CHECK(weft_team_bcast(team, d, 3, WEFT_TYPE_DOUBLE, root) == WEFT_OK, "%s",
              weft_last_error());
        MPI_Bcast(dref, 3, MPI_DOUBLE, root, MPI_COMM_WORLD);
        CHECK(memcmp(d, dref, sizeof(d)) == 0, "team bcast root %d", root);
        v[0] = me * 3 + root;
        v[1] = -(int64_t)me << 33;
        int64_t r[2] = {0, 0};
        CHECK(weft_team_reduce(team, v, r, 2, WEFT_TYPE_INT64, WEFT_OP_MIN, root) == WEFT_OK, "%s",
              weft_last_error());
        MPI_Reduce(v, vref, 2, MPI_INT64_T, MPI_MIN, root, MPI_COMM_WORLD);
        CHECK(me != root || memcmp(r, vref, sizeof(r)) == 0, "team reduce root %d", root);
        int64_t got[2 * 64];
        CHECK(weft_team_gather(team, v, got, 2, WEFT_TYPE_INT64, root) == WEFT_OK, "%s",
              weft_last_error());
        MPI_Gather(v, 2, MPI_INT64_T, all, 2, MPI_INT64_T, root, MPI_COMM_WORLD);
        CHECK(me != root || memcmp(got, all, sizeof(int64_t) * 2 * (size_t)np) == 0,
              "team gather root %d", root);
    }
    uint32_t u = 1u << (me % 32), ur = 0, uref;
    CHECK(weft_team_allreduce(team, &u, &ur, 1, WEFT_TYPE_UINT32, WEFT_OP_BOR) == WEFT_OK, "%s",
          weft_last_error());
    MPI_Allreduce(&u, &uref, 1, MPI_UINT32_T, MPI_BOR, MPI_COMM_WORLD);
    CHECK(ur == uref, "team allreduce bor: %u vs %u", ur, uref);
    CHECK(weft_team_barrier(team) == WEFT_OK, "%s", weft_last_error());

    EXPECT_WEFT(weft_team_bcast(team, d, 3, WEFT_TYPE_DOUBLE, np), WEFT_ERR_RANK, "outside");
    EXPECT_WEFT(weft_team_bcast(team, d, 3, WEFT_TYPE_DOUBLE, -1), WEFT_ERR_RANK, "root -1");
    EXPECT_WEFT(weft_team_bcast(team, d, 3, (weft_type_t)99, 0), WEFT_ERR_INVALID_ARG,
                "unknown datatype 99");
    EXPECT_WEFT(weft_team_allreduce(team, d, dref, 3, WEFT_TYPE_DOUBLE, (weft_op_t)42),
                WEFT_ERR_INVALID_ARG, "unknown operation 42");
    EXPECT_WEFT(weft_team_allreduce(team, d, dref, 3, WEFT_TYPE_DOUBLE, WEFT_OP_BXOR),
                WEFT_ERR_INVALID_ARG, "floating type");
    EXPECT_WEFT(weft_team_reduce(team, d, dref, 3, WEFT_TYPE_BYTE, WEFT_OP_SUM, 0),
                WEFT_ERR_INVALID_ARG, "cannot be reduced");
    EXPECT_WEFT(weft_team_gather(team, d, dref, (size_t)1 << 40, WEFT_TYPE_BYTE, 0),
                WEFT_ERR_TOO_LARGE, "count 1099511627776");
    EXPECT_WEFT(weft_team_barrier(WEFT_TEAM_NULL), WEFT_ERR_INVALID_ARG, "not a team");
    CHECK(weft_team_free(&team) == WEFT_OK, "%s", weft_last_error());
    CHECK(weft_finalize(ctx) == WEFT_OK, "%s", weft_last_error());
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    check_rank = me;
    test_parse_groups();
    test_mpi_api();
    test_team();
    MPI_Allreduce(MPI_IN_PLACE, &check_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("test_coll_errors: %d ranks, %s\n", np, check_failures ? "FAILED" : "ok");
    MPI_Finalize();
    return check_failures != 0;
}
