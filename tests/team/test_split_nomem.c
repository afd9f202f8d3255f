/* Memory running out on one rank inside the collective calls of the team
 * layer: the k-th allocation libweft makes on rank 2 (a root of the split) fails, for k = 1, 2,
 * ... until the call makes fewer.  Every time, every rank must come back
 * (no rank left waiting in a collective the failing one skipped) with the
 * same result: success everywhere, or MPI_ERR_NO_MEM everywhere with the
 * same message and the outputs untouched.  The split with the machine
 * described by info and by the environment, the level query, and weft
 * teams (whose structures are allocated too; the rank short of memory
 * says so, the others name "another rank").  4 ranks.
 *
 * malloc and calloc stand in for libweft's, as realloc does in
 * tests/ep/test_pool_bad_input.c: a call whose caller is libweft counts,
 * and the armed one fails; every other caller (MPI, hwloc) is served. */
#define _GNU_SOURCE
#include <weft.h>
#include <weft_mpi.h>
#include "check.h"
#include "same_everywhere.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

#define FIG1 "pack:2 [numa] l3:1 l2:2 core:2 pu:1"
#define VICTIM 2
#define MAX_ALLOCS 200

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
static int fail_at;       /* the allocation of libweft to fail (1-based), 0: none */
static int weft_allocs, failed;

static int fails_now(void *caller)
{
    Dl_info info;

    if (fail_at == 0 || dladdr(caller, &info) == 0 || info.dli_fname == NULL ||
        strstr(info.dli_fname, "libweft") == NULL)
        return 0;
    if (++weft_allocs != fail_at)
        return 0;
    failed = 1;
    return 1;
}

void *malloc(size_t n)
{
    return fails_now(__builtin_return_address(0)) ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
    return fails_now(__builtin_return_address(0)) ? NULL : __libc_calloc(n, size);
}

static int me;

/* After a call made with the k-th allocation failing on VICTIM: the same
 * outcome on every rank (got: an MPI error class, or a weft status for
 * weft calls, then nomem is WEFT_ERR_NO_MEMORY).  Returns 1 while the
 * failure was injected. */
static int agreed_as(const char *what, int k, int got, int nomem, int same_msg, int outputs_kept)
{
    int hit = failed, codes[2] = {got, -got};

    fail_at = 0;
    MPI_Allreduce(MPI_IN_PLACE, &hit, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, codes, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    CHECK(codes[0] == -codes[1], "%s, allocation %d failing: ranks returned different codes "
          "(this one %d: %s)", what, k, got, weft_last_error());
    if (got != MPI_SUCCESS) {
        int same = same_on_every_rank(weft_last_error());

        CHECK(got == nomem, "%s, allocation %d failing: returned %d (%s)", what, k, got,
              weft_last_error());
        CHECK(!same_msg || same, "%s, allocation %d failing: messages differ (this one: '%s')",
              what, k, weft_last_error());
        CHECK(outputs_kept, "%s, allocation %d failing: output written on error", what, k);
    }
    CHECK(hit || got == MPI_SUCCESS, "%s failed with nothing injected: %s", what,
          weft_last_error());
    return hit;
}

static int agreed(const char *what, int k, int got, int outputs_kept)
{
    return agreed_as(what, k, got, MPI_ERR_NO_MEM, 1, outputs_kept);
}

static void arm(int k)
{
    weft_allocs = 0;
    failed = 0;
    if (me == VICTIM)
        fail_at = k;
}

int main(int argc, char **argv)
{
    MPI_Info info;
    int np, k, hit = 1;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    check_rank = me;
    if (np != 4) {
        if (me == 0)
            fprintf(stderr, "run with 4 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* the description from info (allocated copies), a binding rule whose
     * index counts the ranks of each host (a gather) */
    MPI_Info_create(&info);
    MPI_Info_set(info, "weft_topo_synthetic", FIG1);
    MPI_Info_set(info, "weft_topo_bind", "by-core");

    for (k = 1; hit && k <= MAX_ALLOCS; k++) {
        MPI_Comm nc = MPI_COMM_SELF, rc = MPI_COMM_SELF;

        arm(k);
        int got = WEFT_Comm_hsplit_with_roots(MPI_COMM_WORLD, info, &nc, &rc);
        hit = agreed("WEFT_Comm_hsplit_with_roots", k, got,
                     nc == MPI_COMM_SELF && rc == MPI_COMM_SELF);
        if (got == MPI_SUCCESS) {
            if (nc != MPI_COMM_NULL)
                MPI_Comm_free(&nc);
            if (rc != MPI_COMM_NULL)
                MPI_Comm_free(&rc);
        }
    }
    CHECK(k > 3 && !hit, "WEFT_Comm_hsplit_with_roots: %d allocations tried", k - 1);
    if (me == 0)
        printf("WEFT_Comm_hsplit_with_roots: each of its %d allocations failed in turn\n", k - 2);

    for (hit = 1, k = 1; hit && k <= MAX_ALLOCS; k++) {
        int ranks[2] = {0, 3};
        const char *type = "untouched";

        arm(k);
        int got = WEFT_Comm_get_min_hlevel(MPI_COMM_WORLD, 2, ranks, &type);
        hit = agreed("WEFT_Comm_get_min_hlevel", k, got, strcmp(type, "untouched") == 0);
    }
    CHECK(k > 2 && !hit, "WEFT_Comm_get_min_hlevel: %d allocations tried", k - 1);
    if (me == 0)
        printf("WEFT_Comm_get_min_hlevel: each of its %d allocations failed in turn\n", k - 2);

    /* From here the description comes from the environment. */
    setenv("WEFT_TOPO_SYNTHETIC", FIG1, 1);
    setenv("WEFT_TOPO_BIND", "by-core", 1);
    for (hit = 1, k = 1; hit && k <= MAX_ALLOCS; k++) {
        int ranks[2] = {0, 3};
        const char *type = "untouched";

        arm(k);
        int got = WEFT_Comm_get_min_hlevel(MPI_COMM_WORLD, 2, ranks, &type);
        hit = agreed("WEFT_Comm_get_min_hlevel (settings from the environment)", k, got,
                     strcmp(type, "untouched") == 0);
    }
    CHECK(k > 3 && !hit, "WEFT_Comm_get_min_hlevel: %d allocations tried", k - 1);

    /* weft teams: the structures too (a message of "another rank" there) */
    weft_ctx_t ctx;
    weft_team_t world;
    CHECK(weft_init(NULL, &ctx) == WEFT_OK, "weft_init: %s", weft_last_error());
    for (hit = 1, k = 1; hit && k <= MAX_ALLOCS; k++) {
        weft_team_t team = (weft_team_t)&k;

        arm(k);
        int got = weft_team_world(ctx, &team);
        hit = agreed_as("weft_team_world", k, got, WEFT_ERR_NO_MEMORY, 0, team == (weft_team_t)&k);
        if (got == WEFT_OK)
            weft_team_free(&team);
    }
    CHECK(weft_team_world(ctx, &world) == WEFT_OK, "weft_team_world: %s", weft_last_error());
    for (hit = 1, k = 1; hit && k <= MAX_ALLOCS; k++) {
        weft_team_t child = (weft_team_t)&k, roots = (weft_team_t)&k;

        arm(k);
        int got = weft_team_split_topology(world, &child, &roots);
        hit = agreed_as("weft_team_split_topology", k, got, WEFT_ERR_NO_MEMORY, 0,
                        child == (weft_team_t)&k && roots == (weft_team_t)&k);
        if (got == WEFT_OK) {
            weft_team_free(&child);
            weft_team_free(&roots);
        }
    }
    CHECK(k > 4 && !hit, "weft_team_split_topology: %d allocations tried", k - 1);
    if (me == 0)
        printf("weft_team_split_topology: each of its %d allocations failed in turn\n", k - 2);
    weft_team_free(&world);
    CHECK(weft_finalize(ctx) == WEFT_OK, "weft_finalize: %s", weft_last_error());

    MPI_Info_free(&info);
    MPI_Allreduce(MPI_IN_PLACE, &check_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0 && check_failures)
        fprintf(stderr, "%d check(s) failed\n", check_failures);
    MPI_Finalize();
    return check_failures != 0;
}
