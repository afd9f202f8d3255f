/* Network levels from a Slurm topology.conf, 8 ranks: 4 nodes (n0..n3) of
 * two cores, two ranks per node, one per core.  Each case lists, per step,
 * what every rank should get as "TYPE FIRST-LAST NUM/INDEX" (world ranks;
 * "-" for MPI_COMM_NULL). */
#include <weft_mpi.h>
#include "check.h"

#include <stdlib.h>
#include <unistd.h>

#define NP 8

static int me;

static void describe(MPI_Comm comm, char *out, size_t len)
{
    MPI_Group   g, w;
    int         n, ends[2], in[2], num, index;
    const char *type;

    if (comm == MPI_COMM_NULL) {
        snprintf(out, len, "-");
        return;
    }
    MPI_Comm_size(comm, &n);
    in[0] = 0;
    in[1] = n - 1;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    MPI_Group_translate_ranks(g, 2, in, w, ends);
    MPI_Group_free(&g);
    MPI_Group_free(&w);
    WEFT_Comm_get_hlevel_info(comm, &num, &index, &type);
    snprintf(out, len, "%s %d-%d %d/%d", type, ends[0], ends[1], num, index);
}

/* Run the loop with conf as topology.conf ("" for none) and compare. */
static void run_case(const char *name, const char *conf_text, const char *const steps[][NP],
                     int nsteps)
{
    char     path[128] = "";
    MPI_Info info;

    if (conf_text) {
        snprintf(path, sizeof(path), "/tmp/weft-test-net-%d.conf", (int)getpid());
        MPI_Bcast(path, sizeof(path), MPI_CHAR, 0, MPI_COMM_WORLD);
        if (me == 0) {
            FILE *f = fopen(path, "w");
            fputs(conf_text, f);
            fclose(f);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Info_create(&info);
    MPI_Info_set(info, "weft_topo_synthetic", "core:2 pu:1");
    MPI_Info_set(info, "weft_topo_node", "block:n%d:2");
    MPI_Info_set(info, "weft_topo_bind", "by-core");
    if (conf_text)
        MPI_Info_set(info, "weft_topo_slurm_conf", path);
    MPI_Comm comm = MPI_COMM_WORLD;
    for (int s = 0; s < nsteps && comm != MPI_COMM_NULL; s++) {
        MPI_Comm next;
        char     got[96];
        int code = WEFT_Comm_split_type(comm, WEFT_COMM_TYPE_PHYSICAL_TOPOLOGY, me,
                                        s == 0 ? info : MPI_INFO_NULL, &next);
        CHECK(code == MPI_SUCCESS, "%s: %s", name, weft_last_error());
        describe(next, got, sizeof(got));
        CHECK(strcmp(got, steps[s][me]) == 0, "%s step %d: got '%s', want '%s'", name, s + 1, got,
              steps[s][me]);
        if (comm != MPI_COMM_WORLD)
            MPI_Comm_free(&comm);
        comm = next;
    }
    CHECK(comm == MPI_COMM_NULL, "%s: the loop did not end", name);
    if (comm != MPI_COMM_NULL)
        MPI_Comm_free(&comm);
    MPI_Info_free(&info);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0 && conf_text)
        unlink(path);
}

#define CORES_AND_NULL                                                                     \
    {"Core 0-0 2/0", "Core 1-1 2/1", "Core 2-2 2/0", "Core 3-3 2/1", "Core 4-4 2/0",       \
     "Core 5-5 2/1", "Core 6-6 2/0", "Core 7-7 2/1"},                                      \
    {"-", "-", "-", "-", "-", "-", "-", "-"}
#define MACHINES(num, i0, i1, i2, i3)                                                      \
    {"Machine 0-1 " #num "/" #i0, "Machine 0-1 " #num "/" #i0, "Machine 2-3 " #num "/" #i1, \
     "Machine 2-3 " #num "/" #i1, "Machine 4-5 " #num "/" #i2, "Machine 4-5 " #num "/" #i2, \
     "Machine 6-7 " #num "/" #i3, "Machine 6-7 " #num "/" #i3}

static const char *const flat[][NP] = {MACHINES(4, 0, 1, 2, 3), CORES_AND_NULL};

/* A spine over two leaf switches: the leaves, then the nodes. */
static const char *const spine[][NP] = {
    {"Switch1 0-3 2/0", "Switch1 0-3 2/0", "Switch1 0-3 2/0", "Switch1 0-3 2/0",
     "Switch1 4-7 2/1", "Switch1 4-7 2/1", "Switch1 4-7 2/1", "Switch1 4-7 2/1"},
    MACHINES(2, 0, 1, 0, 1), CORES_AND_NULL};

/* Two fabrics without a common switch: they hang from the whole job.  The
 * file lists b first, so b is index 0. */
static const char *const forest[][NP] = {
    {"Switch1 0-3 2/1", "Switch1 0-3 2/1", "Switch1 0-3 2/1", "Switch1 0-3 2/1",
     "Switch1 4-7 2/0", "Switch1 4-7 2/0", "Switch1 4-7 2/0", "Switch1 4-7 2/0"},
    MACHINES(2, 0, 1, 0, 1), CORES_AND_NULL};

/* A switch with a leaf switch and two nodes of its own below it. */
static const char *const mixed[][NP] = {
    {"Switch1 0-3 3/0", "Switch1 0-3 3/0", "Switch1 0-3 3/0", "Switch1 0-3 3/0",
     "Machine 4-5 3/1", "Machine 4-5 3/1", "Machine 6-7 3/2", "Machine 6-7 3/2"},
    {"Machine 0-1 2/0", "Machine 0-1 2/0", "Machine 2-3 2/1", "Machine 2-3 2/1",
     "Core 4-4 2/0", "Core 5-5 2/1", "Core 6-6 2/0", "Core 7-7 2/1"},
    {"Core 0-0 2/0", "Core 1-1 2/1", "Core 2-2 2/0", "Core 3-3 2/1", "-", "-", "-", "-"},
    {"-", "-", "-", "-", "-", "-", "-", "-"}};

static void test_min_hlevel(void)
{
    char     path[128];
    MPI_Info info;
    MPI_Comm dup;

    snprintf(path, sizeof(path), "/tmp/weft-test-net-min-%d.conf", (int)getpid());
    MPI_Bcast(path, sizeof(path), MPI_CHAR, 0, MPI_COMM_WORLD);
    if (me == 0) {
        FILE *f = fopen(path, "w");
        fputs("SwitchName=spine Switches=leaf[0-1]\nSwitchName=leaf0 Nodes=n[0-1]\n"
              "SwitchName=leaf1 Nodes=n[2-3]\n", f);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* The description rides on the communicators made with it (and their
     * duplicates), so later queries need no settings. */
    MPI_Info_create(&info);
    MPI_Info_set(info, "weft_topo_synthetic", "core:2 pu:1");
    MPI_Info_set(info, "weft_topo_node", "block:n%d:2");
    MPI_Info_set(info, "weft_topo_bind", "by-core");
    MPI_Info_set(info, "weft_topo_slurm_conf", path);
    MPI_Comm level, roots;
    CHECK(WEFT_Comm_hsplit_with_roots(MPI_COMM_WORLD, info, &level, &roots) == MPI_SUCCESS, "%s",
          weft_last_error());
    MPI_Comm_dup(level, &dup);
    const char *type;
    int         dup_num, dup_index, rank;
    CHECK(WEFT_Comm_get_hlevel_info(dup, &dup_num, &dup_index, &type) == MPI_SUCCESS &&
              strcmp(type, "Switch1") == 0, "a duplicate keeps its level");
    /* Within a leaf switch: the node, or the leaf across its two nodes. */
    MPI_Comm_rank(dup, &rank);
    int same_node[2] = {rank, rank ^ 1}, across[2] = {rank, rank ^ 2};
    CHECK(WEFT_Comm_get_min_hlevel(dup, 2, same_node, &type) == MPI_SUCCESS, "%s", weft_last_error());
    CHECK_STR(type, "Machine");
    CHECK(WEFT_Comm_get_min_hlevel(dup, 2, across, &type) == MPI_SUCCESS, "%s", weft_last_error());
    CHECK_STR(type, "Switch1");
    MPI_Comm_free(&dup);
    MPI_Info_free(&info);
    if (roots != MPI_COMM_NULL) {
        /* The roots of the leaf switches, 0 and 4, share the spine. */
        int two[2] = {0, 1};
        CHECK(WEFT_Comm_get_min_hlevel(roots, 2, two, &type) == MPI_SUCCESS, "%s",
              weft_last_error());
        CHECK_STR(type, "Switch2");
        MPI_Comm_free(&roots);
    }
    MPI_Comm_free(&level);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        unlink(path);
}

int main(int argc, char **argv)
{
    int np;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    check_rank = me;
    if (np != NP)
        MPI_Abort(MPI_COMM_WORLD, 2);
    run_case("flat network", NULL, flat, 3);
    run_case("spine and leaves",
             "SwitchName=spine Switches=leaf[0-1]\nSwitchName=leaf0 Nodes=n[0-1]\n"
             "SwitchName=leaf1 Nodes=n[2-3]\n", spine, 4);
    run_case("two fabrics", "SwitchName=b Nodes=n[2-3]\nSwitchName=a Nodes=n[0-1]\n", forest, 4);
    run_case("mixed children", "SwitchName=top Switches=leaf Nodes=n[2-3]\nSwitchName=leaf "
             "Nodes=n[0-1]\n", mixed, 4);
    test_min_hlevel();
    MPI_Allreduce(MPI_IN_PLACE, &check_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0 && check_failures)
        fprintf(stderr, "%d check(s) failed\n", check_failures);
    MPI_Finalize();
    return check_failures != 0;
}
