/* Bad input: every collective failure is the same error, with the same
 * message, on every rank, and creates nothing anywhere (the output handle
 * keeps its value).  4 ranks. */
#include <weft_mpi.h>
#include "check.h"
#include "same_everywhere.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define FIG1 "pack:2 [numa] l3:1 l2:2 core:2 pu:1"

static int me;

/* The message is the same on every rank. */
static void check_same_message(const char *what)
{
    CHECK(same_on_every_rank(weft_last_error()), "%s: messages differ across ranks (this one: '%s')",
          what, weft_last_error());
}

/* A split that must fail on every rank with code and a message naming
 * fragment; keys come in (key, value) pairs, NULL-terminated. */
static void expect_split_error(const char *what, int code, const char *fragment, ...)
{
    MPI_Info    info;
    va_list     ap;
    const char *key;

    MPI_Info_create(&info);
    va_start(ap, fragment);
    while ((key = va_arg(ap, const char *)) != NULL)
        MPI_Info_set(info, key, va_arg(ap, const char *));
    va_end(ap);
    MPI_Comm nc = MPI_COMM_SELF, rc = MPI_COMM_SELF;
    int got = WEFT_Comm_hsplit_with_roots(MPI_COMM_WORLD, info, &nc, &rc);
    CHECK(got == code, "%s: returned %d, want %d (%s)", what, got, code, weft_last_error());
    CHECK(nc == MPI_COMM_SELF && rc == MPI_COMM_SELF, "%s: output written on error", what);
    CHECK_MSG(weft_last_error(), fragment);
    check_same_message(what);
    got = WEFT_Comm_split_type(MPI_COMM_WORLD, WEFT_COMM_TYPE_PHYSICAL_TOPOLOGY, 0, info, &nc);
    CHECK(got == code && nc == MPI_COMM_SELF, "%s (split_type): returned %d", what, got);
    MPI_Info_free(&info);
}

static void write_file(const char *path, const char *text)
{
    if (me == 0) {
        FILE *f = fopen(path, "w");
        fputs(text, f);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    char conf[128], other[64];
    int  np;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    check_rank = me;
    if (np != 4) {
        if (me == 0)
            fprintf(stderr, "run with 4 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    expect_split_error("malformed synthetic", MPI_ERR_INFO_VALUE, "'pack:2 zz:3' is not a valid",
                       "weft_topo_synthetic", "pack:2 zz:3", NULL);
    expect_split_error("binding outside the machine on rank 2", MPI_ERR_INFO_VALUE,
                       "rank 2 (node n0): binding 'core:99' is outside the machine: it has 8",
                       "weft_topo_synthetic", FIG1, "weft_topo_node", "n0*4",
                       "weft_topo_bind", "core:0,core:1,core:99,core:3", NULL);
    expect_split_error("binding list too short", MPI_ERR_INFO_VALUE, "lists 3 bindings for 4 ranks",
                       "weft_topo_synthetic", FIG1, "weft_topo_bind", "core:0*3", NULL);
    expect_split_error("malformed binding", MPI_ERR_INFO_VALUE, "binding 'core:1-0': bad range",
                       "weft_topo_synthetic", FIG1, "weft_topo_bind", "core:0,core:1-0,core:2,core:3",
                       NULL);
    expect_split_error("too many ranks for a rule", MPI_ERR_INFO_VALUE,
                       "rank 2 (node a): rule 'by-l2' needs one object per rank",
                       "weft_topo_synthetic", "pack:1 l2:2 core:1 pu:1", "weft_topo_node", "a*4",
                       "weft_topo_bind", "by-l2", NULL);
    expect_split_error("malformed node names", MPI_ERR_INFO_VALUE, "the format needs exactly one %d",
                       "weft_topo_node", "block:node:2", NULL);
    expect_split_error("synthetic and XML", MPI_ERR_INFO_VALUE, "both set",
                       "weft_topo_synthetic", FIG1, "weft_topo_xml", "/x.xml", NULL);
    expect_split_error("unreadable XML", MPI_ERR_INFO_VALUE, "'/nonexistent/a.xml' cannot be read",
                       "weft_topo_xml", "/nonexistent/{node}.xml", "weft_topo_node", "a*4", NULL);
    expect_split_error("missing topology.conf", MPI_ERR_INFO_VALUE, "cannot open topology.conf",
                       "weft_topo_synthetic", FIG1, "weft_topo_slurm_conf", "/nonexistent.conf", NULL);

    snprintf(conf, sizeof(conf), "/tmp/weft-test-errors-%d.conf", (int)getpid());
    MPI_Bcast(conf, sizeof(conf), MPI_CHAR, 0, MPI_COMM_WORLD);
    write_file(conf, "SwitchName=s0 Nodes=a\n");
    expect_split_error("node missing from topology.conf", MPI_ERR_INFO_VALUE,
                       "node 'b' is not listed in topology.conf", "weft_topo_synthetic", FIG1,
                       "weft_topo_node", "a*2,b*2", "weft_topo_slurm_conf", conf, NULL);
    write_file(conf, "SwitchName=s0 Nodes=a,b\nSwitchName=s1 Nodes=b\n");
    expect_split_error("node twice in topology.conf", MPI_ERR_INFO_VALUE,
                       "node 'b' listed twice (switch 's0' and switch 's1')", "weft_topo_synthetic",
                       FIG1, "weft_topo_node", "a*2,b*2", "weft_topo_slurm_conf", conf, NULL);
    if (me == 0)
        unlink(conf);

    /* Arguments that differ across ranks. */
    snprintf(other, sizeof(other), "%s", me == 1 ? "pack:1 core:4 pu:1" : FIG1);
    expect_split_error("settings differ across ranks", MPI_ERR_ARG, "differ across ranks",
                       "weft_topo_synthetic", other, NULL);

    /* Queries. */
    int         num = -1, index = -1;
    const char *type = "untouched";
    CHECK(WEFT_Comm_get_hlevel_info(MPI_COMM_WORLD, &num, &index, &type) == MPI_ERR_ARG,
          "hlevel_info of MPI_COMM_WORLD");
    CHECK(num == -1 && index == -1 && strcmp(type, "untouched") == 0, "outputs written on error");
    CHECK_MSG(weft_last_error(), "not a hardware level");
    CHECK(WEFT_Comm_get_hlevel_info(MPI_COMM_WORLD, NULL, &index, &type) == MPI_ERR_ARG, "NULL num");
    MPI_Comm nc = MPI_COMM_SELF;
    CHECK(WEFT_Comm_split_type(MPI_COMM_NULL, WEFT_COMM_TYPE_PHYSICAL_TOPOLOGY, 0, MPI_INFO_NULL,
                               &nc) == MPI_ERR_ARG && nc == MPI_COMM_SELF, "split of MPI_COMM_NULL");
    CHECK(WEFT_Comm_hsplit_with_roots(MPI_COMM_WORLD, MPI_INFO_NULL, &nc, NULL) == MPI_ERR_ARG,
          "NULL rootscomm");

    /* A bad list on one rank fails there only, and nobody waits. */
    int list[2] = {me, me == 1 ? 7 : (me + 1) % 4};
    int got = WEFT_Comm_get_min_hlevel(MPI_COMM_WORLD, 2, list, &type);
    if (me == 1) {
        CHECK(got == MPI_ERR_ARG, "min_hlevel with rank 7 of 4");
        CHECK_MSG(weft_last_error(), "ranks[1] = 7 outside [0, 4)");
    } else {
        CHECK(got == MPI_SUCCESS, "min_hlevel: %s", weft_last_error());
    }
    /* Each bad list has its own message, and leaves type alone. */
    type = "untouched";
    CHECK(WEFT_Comm_get_min_hlevel(MPI_COMM_WORLD, 0, list, &type) == MPI_ERR_ARG, "nranks 0");
    CHECK_MSG(weft_last_error(), "need at least one rank (nranks=0)");
    CHECK(WEFT_Comm_get_min_hlevel(MPI_COMM_WORLD, -3, list, &type) == MPI_ERR_ARG, "nranks -3");
    CHECK_MSG(weft_last_error(), "need at least one rank (nranks=-3)");
    CHECK(WEFT_Comm_get_min_hlevel(MPI_COMM_WORLD, 2, NULL, &type) == MPI_ERR_ARG, "ranks NULL");
    CHECK_MSG(weft_last_error(), "WEFT_Comm_get_min_hlevel: ranks is NULL (nranks=2)");
    int negative[2] = {me, -1};
    CHECK(WEFT_Comm_get_min_hlevel(MPI_COMM_WORLD, 2, negative, &type) == MPI_ERR_ARG,
          "rank -1");
    CHECK_MSG(weft_last_error(), "ranks[1] = -1 outside [0, 4)");
    CHECK(strcmp(type, "untouched") == 0, "type written on error");
    int dup[2] = {me, me};
    CHECK(WEFT_Comm_get_min_hlevel(MPI_COMM_WORLD, 2, dup, &type) == MPI_ERR_ARG, "duplicate rank");
    CHECK_MSG(weft_last_error(), "listed twice");

    /* Other split types are MPI's. */
    MPI_Comm shared;
    int      size = 0;
    CHECK(WEFT_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared) ==
              MPI_SUCCESS, "MPI_COMM_TYPE_SHARED passes through");
    MPI_Comm_size(shared, &size);
    CHECK(size == 4, "shared communicator of %d ranks", size);
    MPI_Comm_free(&shared);

    MPI_Allreduce(MPI_IN_PLACE, &check_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0 && check_failures)
        fprintf(stderr, "%d check(s) failed\n", check_failures);
    MPI_Finalize();
    return check_failures != 0;
}
