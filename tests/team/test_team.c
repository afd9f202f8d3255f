/* weft teams follow the same hierarchy as the MPI-level split: the §5.2
 * machine (8 ranks, non-uniform bindings) walked with
 * weft_team_split_topology() gives, level by level, the communicators of
 * WEFT_Comm_hsplit_with_roots() (same members, roots, level info), and
 * team misuse is reported. */
#include <weft.h>
#include <weft_mpi.h>
#include "check.h"

/* Same members (as context ranks), in the same order. */
static void check_same(weft_team_t team, MPI_Comm comm, const char *what, int step)
{
    int tn = 0, cn = 0;

    CHECK((team == WEFT_TEAM_NULL) == (comm == MPI_COMM_NULL), "step %d: %s: team %s, comm %s",
          step, what, team ? "set" : "null", comm != MPI_COMM_NULL ? "set" : "null");
    if (team == WEFT_TEAM_NULL || comm == MPI_COMM_NULL)
        return;
    weft_team_nranks(team, &tn);
    MPI_Comm_size(comm, &cn);
    CHECK(tn == cn, "step %d: %s has %d ranks, the communicator %d", step, what, tn, cn);
    MPI_Group g, w;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    for (int i = 0; i < tn && tn == cn; i++) {
        int ctx_rank = -1, world_rank;
        weft_team_ctx_rank(team, i, &ctx_rank);
        MPI_Group_translate_ranks(g, 1, &i, w, &world_rank);
        CHECK(ctx_rank == world_rank, "step %d: %s member %d: %d vs %d", step, what, i, ctx_rank,
              world_rank);
    }
    MPI_Group_free(&g);
    MPI_Group_free(&w);
}

int main(int argc, char **argv)
{
    weft_ctx_t  ctx;
    weft_team_t team, child, roots;
    MPI_Comm    comm = MPI_COMM_WORLD, next, rcomm;
    int         me, step = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    check_rank = me;
    CHECK(weft_init(NULL, &ctx) == WEFT_OK, "weft_init: %s", weft_last_error());
    CHECK(weft_team_world(ctx, &team) == WEFT_OK, "weft_team_world: %s", weft_last_error());

    int         num, index;
    const char *type = "untouched";
    CHECK(weft_team_level_info(team, &num, &index, &type) == WEFT_ERR_INVALID_ARG &&
              strcmp(type, "untouched") == 0, "the world team is no level");

    while (team != WEFT_TEAM_NULL && step < 8) {
        step++;
        CHECK(weft_team_split_topology(team, &child, &roots) == WEFT_OK, "step %d: %s", step,
              weft_last_error());
        CHECK(WEFT_Comm_hsplit_with_roots(comm, MPI_INFO_NULL, &next, &rcomm) == MPI_SUCCESS,
              "step %d: %s", step, weft_last_error());
        check_same(child, next, "child", step);
        check_same(roots, rcomm, "roots", step);
        if (child != WEFT_TEAM_NULL && next != MPI_COMM_NULL) {
            int         cnum, cindex;
            const char *ctype;
            CHECK(weft_team_level_info(child, &num, &index, &type) == WEFT_OK, "%s",
                  weft_last_error());
            WEFT_Comm_get_hlevel_info(next, &cnum, &cindex, &ctype);
            CHECK(num == cnum && index == cindex && strcmp(type, ctype) == 0,
                  "step %d: team level %s %d/%d, communicator %s %d/%d", step, type, index, num,
                  ctype, cindex, cnum);
        }
        weft_team_free(&roots);
        weft_team_free(&team);
        team = child;
        if (rcomm != MPI_COMM_NULL)
            MPI_Comm_free(&rcomm);
        if (comm != MPI_COMM_WORLD)
            MPI_Comm_free(&comm);
        comm = next;
    }
    CHECK(team == WEFT_TEAM_NULL && comm == MPI_COMM_NULL, "the loop did not end");
    /* p0 and p1 are bound to cores: 4 splits; p2, p3: 3; the others: 2. */
    CHECK(step == (me < 2 ? 4 : me < 4 ? 3 : 2), "%d splits", step);

    CHECK(weft_team_split_topology(NULL, &child, NULL) == WEFT_ERR_INVALID_ARG, "NULL parent");
    CHECK(weft_team_free(&team) == WEFT_OK, "freeing WEFT_TEAM_NULL");
    CHECK(weft_team_free(NULL) == WEFT_ERR_INVALID_ARG, "freeing NULL");
    CHECK(weft_finalize(ctx) == WEFT_OK, "weft_finalize: %s", weft_last_error());
    CHECK(weft_team_world(ctx, &team) == WEFT_ERR_NOT_INIT, "team of a finalised context");

    MPI_Allreduce(MPI_IN_PLACE, &check_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0 && check_failures)
        fprintf(stderr, "%d check(s) failed\n", check_failures);
    MPI_Finalize();
    return check_failures != 0;
}
