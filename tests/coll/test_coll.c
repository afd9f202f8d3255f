/* Hierarchical collectives give the flat MPI collective's result: every
 * collective, several datatypes (predefined, pair, derived with holes) and
 * ops (commutative, MAXLOC, a non-commutative user op), MPI_IN_PLACE, every
 * root, on every hierarchy shape of the topology tests -- uniform and
 * non-uniform bindings, unbound ranks, emulated nodes (block and cyclic),
 * network switches, random machines -- and on tailor-made hierarchies.
 * Works for any number of ranks up to 8. */
#include <weft_mpi.h>
#include "../team/check.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define FIG1 "pack:2 [numa] l3:1 l2:2 core:2 pu:1"
#define MAXNP 8

static int me, np;
static const char *shape;

/* ---- data ---------------------------------------------------------------- */

static int ival(int rank, int i, int salt) { return (rank + 1) * 1009 + i * 31 + salt * 7; }

/* 2x2 integer matrices modulo a prime: associative, not commutative. */
#define MOD 1000003
static void matmul(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    int *a = in, *b = inout;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        long long c[4] = {
            ((long long)a[0] * b[0] + (long long)a[1] * b[2]) % MOD,
            ((long long)a[0] * b[1] + (long long)a[1] * b[3]) % MOD,
            ((long long)a[2] * b[0] + (long long)a[3] * b[2]) % MOD,
            ((long long)a[2] * b[1] + (long long)a[3] * b[3]) % MOD};
        for (int j = 0; j < 4; j++)
            b[j] = (int)c[j];
    }
}

static MPI_Op       noncommute;
static MPI_Datatype mat2;    /* 4 contiguous ints */
static MPI_Datatype strided; /* 3 ints with a hole after each (extent 5 ints) */

/* ---- checks -------------------------------------------------------------- */

static void test_bcast(MPI_Comm c, int root)
{
    int    a[5], ref[5];
    double d[1000], dref[1000];
    int    s[2 * 6], sref[2 * 6];

    for (int i = 0; i < 5; i++)
        a[i] = ref[i] = me == root ? ival(root, i, 1) : -1;
    for (int i = 0; i < 1000; i++)
        d[i] = dref[i] = me == root ? ival(root, i, 2) * 0.5 : -1.0;
    for (int i = 0; i < 12; i++)
        s[i] = sref[i] = me == root ? ival(root, i, 3) : -1;
    CHECK(WEFT_Hbcast(a, 5, MPI_INT, root, c) == MPI_SUCCESS, "%s", weft_last_error());
    MPI_Bcast(ref, 5, MPI_INT, root, MPI_COMM_WORLD);
    CHECK(memcmp(a, ref, sizeof(a)) == 0, "%s: bcast int root %d", shape, root);
    CHECK(WEFT_Hbcast(d, 1000, MPI_DOUBLE, root, c) == MPI_SUCCESS, "%s", weft_last_error());
    MPI_Bcast(dref, 1000, MPI_DOUBLE, root, MPI_COMM_WORLD);
    CHECK(memcmp(d, dref, sizeof(d)) == 0, "%s: bcast double root %d", shape, root);
    /* Holes stay untouched: only the 6 typed ints travel. */
    CHECK(WEFT_Hbcast(s, 2, strided, root, c) == MPI_SUCCESS, "%s", weft_last_error());
    MPI_Bcast(sref, 2, strided, root, MPI_COMM_WORLD);
    CHECK(memcmp(s, sref, sizeof(s)) == 0, "%s: bcast derived root %d", shape, root);
    CHECK(WEFT_Hbcast(NULL, 0, MPI_INT, root, c) == MPI_SUCCESS, "%s", weft_last_error());
}

static void test_reduce(MPI_Comm c, int root)
{
    int    a[7], r[7], ref[7], pair[2 * 3], pr[2 * 3], pref[2 * 3], m[8], mr[8], mref[8];
    double d[3], dr[3], dref[3];

    for (int i = 0; i < 7; i++)
        a[i] = ival(me, i, root);
    for (int i = 0; i < 3; i++) {
        d[i] = (me * 7919 + i * 104729) % 1013 * 0.25;
        pair[2 * i] = (me * 37 + i * 11) % 5;   /* ties: MAXLOC keeps the lowest rank */
        pair[2 * i + 1] = me;
    }
    for (int i = 0; i < 8; i++)
        m[i] = ival(me, i, 5) % MOD;
    memset(r, 0, sizeof(r));
    memset(ref, 0, sizeof(ref));
    CHECK(WEFT_Hreduce(a, r, 7, MPI_INT, MPI_SUM, root, c) == MPI_SUCCESS, "%s",
          weft_last_error());
    MPI_Reduce(a, ref, 7, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
    CHECK(me != root || memcmp(r, ref, sizeof(r)) == 0, "%s: reduce sum root %d", shape, root);
    CHECK(WEFT_Hreduce(d, dr, 3, MPI_DOUBLE, MPI_MAX, root, c) == MPI_SUCCESS, "%s",
          weft_last_error());
    MPI_Reduce(d, dref, 3, MPI_DOUBLE, MPI_MAX, root, MPI_COMM_WORLD);
    CHECK(me != root || memcmp(dr, dref, sizeof(dr)) == 0, "%s: reduce max root %d", shape, root);
    CHECK(WEFT_Hreduce(pair, pr, 3, MPI_2INT, MPI_MAXLOC, root, c) == MPI_SUCCESS, "%s",
          weft_last_error());
    MPI_Reduce(pair, pref, 3, MPI_2INT, MPI_MAXLOC, root, MPI_COMM_WORLD);
    CHECK(me != root || memcmp(pr, pref, sizeof(pr)) == 0, "%s: reduce maxloc root %d", shape,
          root);
    CHECK(WEFT_Hreduce(m, mr, 2, mat2, noncommute, root, c) == MPI_SUCCESS, "%s",
          weft_last_error());
    MPI_Reduce(m, mref, 2, mat2, noncommute, root, MPI_COMM_WORLD);
    CHECK(me != root || memcmp(mr, mref, sizeof(mr)) == 0, "%s: reduce non-commutative root %d",
          shape, root);
    /* In place at the root. */
    memcpy(r, a, sizeof(a));
    CHECK(WEFT_Hreduce(me == root ? MPI_IN_PLACE : a, r, 7, MPI_INT, MPI_SUM, root, c) ==
              MPI_SUCCESS, "%s", weft_last_error());
    CHECK(me != root || memcmp(r, ref, sizeof(r)) == 0, "%s: reduce in place root %d", shape,
          root);
}

static void test_allreduce(MPI_Comm c)
{
    int       a[7], r[7], ref[7], m[8], mr[8], mref[8];
    long long x[4], xref[4];

    for (int i = 0; i < 7; i++)
        a[i] = ival(me, i, 9);
    for (int i = 0; i < 8; i++)
        m[i] = ival(me, i, 4) % MOD;
    for (int i = 0; i < 4; i++)
        x[i] = xref[i] = (long long)ival(me, i, 3) << 20;
    CHECK(WEFT_Hallreduce(a, r, 7, MPI_INT, MPI_SUM, c) == MPI_SUCCESS, "%s", weft_last_error());
    MPI_Allreduce(a, ref, 7, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(memcmp(r, ref, sizeof(r)) == 0, "%s: allreduce sum", shape);
    CHECK(WEFT_Hallreduce(m, mr, 2, mat2, noncommute, c) == MPI_SUCCESS, "%s", weft_last_error());
    MPI_Allreduce(m, mref, 2, mat2, noncommute, MPI_COMM_WORLD);
    CHECK(memcmp(mr, mref, sizeof(mr)) == 0, "%s: allreduce non-commutative", shape);
    CHECK(WEFT_Hallreduce(MPI_IN_PLACE, x, 4, MPI_LONG_LONG, MPI_BXOR, c) == MPI_SUCCESS, "%s",
          weft_last_error());
    MPI_Allreduce(MPI_IN_PLACE, xref, 4, MPI_LONG_LONG, MPI_BXOR, MPI_COMM_WORLD);
    CHECK(memcmp(x, xref, sizeof(x)) == 0, "%s: allreduce in place bxor", shape);
}

static void test_gather(MPI_Comm c, int root)
{
    int a[3], g[3 * MAXNP], ref[3 * MAXNP], s[6 + 4];

    for (int i = 0; i < 3; i++)
        a[i] = ival(me, i, root);
    for (int i = 0; i < 10; i++)
        s[i] = ival(me, i, 6);
    memset(g, 0xff, sizeof(g));
    memset(ref, 0xff, sizeof(ref));
    CHECK(WEFT_Hgather(a, 3, MPI_INT, g, 3, MPI_INT, root, c) == MPI_SUCCESS, "%s",
          weft_last_error());
    MPI_Gather(a, 3, MPI_INT, ref, 3, MPI_INT, root, MPI_COMM_WORLD);
    CHECK(me != root || memcmp(g, ref, sizeof(g)) == 0, "%s: gather int root %d", shape, root);
    /* A strided send type received as contiguous ints (same signature). */
    memset(g, 0xff, sizeof(g));
    memset(ref, 0xff, sizeof(ref));
    CHECK(WEFT_Hgather(s, 1, strided, g, 3, MPI_INT, root, c) == MPI_SUCCESS, "%s",
          weft_last_error());
    MPI_Gather(s, 1, strided, ref, 3, MPI_INT, root, MPI_COMM_WORLD);
    CHECK(me != root || memcmp(g, ref, sizeof(g)) == 0, "%s: gather derived root %d", shape,
          root);
    /* In place at the root. */
    memset(g, 0xff, sizeof(g));
    if (me == root)
        memcpy(g + 3 * root, a, sizeof(a));
    CHECK(WEFT_Hgather(me == root ? MPI_IN_PLACE : a, 3, MPI_INT, g, 3, MPI_INT, root, c) ==
              MPI_SUCCESS, "%s", weft_last_error());
    MPI_Gather(a, 3, MPI_INT, ref, 3, MPI_INT, root, MPI_COMM_WORLD);
    CHECK(me != root || memcmp(g, ref, sizeof(g)) == 0, "%s: gather in place root %d", shape,
          root);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);   /* one clock for every rank of a node */
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Nobody leaves before the last one arrives: ranks arrive staggered and
 * compare entry and exit times afterwards. */
static void test_barrier(MPI_Comm c)
{
    double t[2], all[2 * MAXNP];

    usleep((useconds_t)(((me * 5) % np) * 3000));
    t[0] = now();
    CHECK(WEFT_Hbarrier(c) == MPI_SUCCESS, "%s", weft_last_error());
    t[1] = now();
    MPI_Allgather(t, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, MPI_COMM_WORLD);
    double last_in = 0, first_out = 1e300;
    for (int i = 0; i < np; i++) {
        last_in = all[2 * i] > last_in ? all[2 * i] : last_in;
        first_out = all[2 * i + 1] < first_out ? all[2 * i + 1] : first_out;
    }
    CHECK(last_in <= first_out, "%s: barrier released a rank %.6f s before the last arrived",
          shape, last_in - first_out);
}

/* ---- shapes --------------------------------------------------------------- */

static void run_shape(const char *name, MPI_Info info)
{
    MPI_Comm c;

    shape = name;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    CHECK(WEFT_Comm_hier_init(c, info) == MPI_SUCCESS, "%s: %s", name, weft_last_error());
    for (int root = 0; root < np; root++) {
        test_bcast(c, root);
        test_reduce(c, root);
        test_gather(c, root);
    }
    test_allreduce(c);
    test_barrier(c);
    MPI_Comm_free(&c);     /* frees the cached levels */
}

static MPI_Info machine(const char *synthetic, const char *node, const char *bind,
                        const char *conf)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "weft_topo_synthetic", synthetic);
    if (node)
        MPI_Info_set(info, "weft_topo_node", node);
    if (bind)
        MPI_Info_set(info, "weft_topo_bind", bind);
    if (conf)
        MPI_Info_set(info, "weft_topo_slurm_conf", conf);
    return info;
}

static void run_machine(const char *name, const char *synthetic, const char *node,
                        const char *bind, const char *conf)
{
    MPI_Info info = machine(synthetic, node, bind, conf);
    run_shape(name, info);
    MPI_Info_free(&info);
}

/* The first np entries of a per-rank list. */
static void first_entries(const char *const *entries, char *out, size_t len)
{
    out[0] = '\0';
    for (int r = 0; r < np; r++) {
        size_t n = strlen(out);
        snprintf(out + n, len - n, "%s%s", r ? "," : "", entries[r]);
    }
}

static void random_machines(int count)
{
    static const char *const kinds[] = {"pu", "core", "l2", "numa", "package", "unbound"};
    static const int         counts[] = {8, 8, 4, 2, 2, 1};
    unsigned                 seed = 12345;

    for (int k = 0; k < count; k++) {
        char nodes[256] = "", binds[256] = "", name[64];
        int  nnodes = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 3;
        for (int r = 0; r < np; r++) {
            seed = seed * 1103515245u + 12345u;
            int kind = (int)(seed >> 16) % 6, node = (int)(seed >> 20) % nnodes;
            int idx = (int)(seed >> 24) % counts[kind];
            size_t n = strlen(nodes), b = strlen(binds);
            snprintf(nodes + n, sizeof(nodes) - n, "%sn%d", r ? "," : "", node);
            if (kind == 5)
                snprintf(binds + b, sizeof(binds) - b, "%sunbound", r ? "," : "");
            else
                snprintf(binds + b, sizeof(binds) - b, "%s%s:%d", r ? "," : "", kinds[kind], idx);
        }
        snprintf(name, sizeof(name), "random machine %d (%s | %s)", k, nodes, binds);
        run_machine(name, FIG1, nodes, binds, NULL);
    }
}

static void tailor_made(void)
{
    char groups[64];
    MPI_Info info;

    /* Split np into its prime factors, smallest first: np=8 gives 2,2,2. */
    groups[0] = '\0';
    for (int n = np, p = 2; n > 1;) {
        if (n % p) {
            p++;
            continue;
        }
        size_t len = strlen(groups);
        snprintf(groups + len, sizeof(groups) - len, "%s%d", len ? "," : "", p);
        n /= p;
    }
    if (!groups[0])
        strcpy(groups, "1");
    MPI_Info_create(&info);
    MPI_Info_set(info, "weft_coll_groups", groups);
    run_shape("groups by prime factors", info);
    /* A level of one group, then everyone. */
    snprintf(groups, sizeof(groups), "1,%d", np);
    MPI_Info_set(info, "weft_coll_groups", groups);
    run_shape("groups 1,np", info);
    MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    static const char *const paper52[] = {"core:0", "core:1", "l2:1", "l2:1",
                                          "numa:1", "numa:1", "numa:1", "numa:1"};
    static const char *const mixed[] = {"unbound", "core:1", "core:2", "core:3",
                                        "l3:1", "core:6", "pu:7", "unbound"};
    char list[256], node[64], conf[128];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    check_rank = me;
    if (np > MAXNP) {
        if (me == 0)
            fprintf(stderr, "test_coll runs on at most %d ranks\n", MAXNP);
        MPI_Finalize();
        return 1;
    }
    MPI_Op_create(matmul, 0, &noncommute);
    MPI_Type_contiguous(4, MPI_INT, &mat2);
    MPI_Type_commit(&mat2);
    MPI_Type_vector(3, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);

    run_shape("this machine (no description)", MPI_INFO_NULL);
    run_machine("Fig. 1 node, by-core", FIG1, NULL, "by-core", NULL);
    first_entries(paper52, list, sizeof(list));
    run_machine("Fig. 1 node, §5.2 bindings", FIG1, NULL, list, NULL);
    first_entries(mixed, list, sizeof(list));
    run_machine("Fig. 1 node, unbound and nested bindings", FIG1, NULL, list, NULL);
    run_machine("Fig. 1 node, all unbound", FIG1, NULL, "unbound", NULL);
    snprintf(node, sizeof(node), "block:node%%d:%d", (np + 1) / 2);
    run_machine("two nodes by slot", FIG1, node, "by-core", NULL);
    run_machine("nodes by node (cyclic)", "pack:2 core:2 pu:1", "cyclic:n%d:3", "by-core", NULL);

    snprintf(conf, sizeof(conf), "/tmp/weft-test-coll-%d.conf", (int)getpid());
    MPI_Bcast(conf, sizeof(conf), MPI_CHAR, 0, MPI_COMM_WORLD);
    if (me == 0) {
        FILE *f = fopen(conf, "w");
        fputs("SwitchName=spine Switches=leaf[0-1]\nSwitchName=leaf0 Nodes=n[0-1]\n"
              "SwitchName=leaf1 Nodes=n[2-3]\n", f);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    run_machine("spine and leaf switches", "core:2 pu:1", "block:n%d:2", "by-core", conf);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        unlink(conf);

    random_machines(6);
    tailor_made();

    MPI_Type_free(&strided);
    MPI_Type_free(&mat2);
    MPI_Op_free(&noncommute);
    MPI_Allreduce(MPI_IN_PLACE, &check_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("test_coll: %d ranks, %s\n", np, check_failures ? "FAILED" : "ok");
    MPI_Finalize();
    return check_failures != 0;
}
