/* The one-sided team collectives (weft_team_bcast, _reduce, _allreduce,
 * _barrier) give the flat MPI collective's result on every hierarchy shape
 * of the topology tests: for each machine (WEFT_TOPO_* set before
 * weft_init, so emulated nodes also decide which ranks share the direct
 * path), on the world team and on every child and roots team of the walk
 * down the levels, with every root, every type and op, in place, empty,
 * messages of many chunks, at the edges of the chunks and of the kinds of
 * buffer, and streams that wrap around the rings of buffers.
 * Floating-point allreduce results are the same bits on every rank.
 * Works for any number of ranks up to 8. */
#include <weft.h>
#include <weft_mpi.h>
#include "../team/check.h"
#include "coll/coll.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define FIG1 "pack:2 [numa] l3:1 l2:2 core:2 pu:1"
#define MAXNP 8
/* Doubles in a large message: several chunks at any context size. */
#define BIG 70001

static int         me, np;
static const char *shape;
static const char *what;
static int         expect_onesided;   /* every team of the shape runs one-sided */

static const MPI_Datatype mpi_types[] = {
    [WEFT_TYPE_BYTE] = MPI_BYTE,       [WEFT_TYPE_INT32] = MPI_INT32_T,
    [WEFT_TYPE_INT64] = MPI_INT64_T,   [WEFT_TYPE_UINT32] = MPI_UINT32_T,
    [WEFT_TYPE_UINT64] = MPI_UINT64_T, [WEFT_TYPE_FLOAT] = MPI_FLOAT,
    [WEFT_TYPE_DOUBLE] = MPI_DOUBLE,
};
static const size_t type_size[] = {1, 4, 8, 4, 8, 4, 8};
static const MPI_Op mpi_ops[] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX, MPI_BAND, MPI_BOR, MPI_BXOR};

/* Element i of rank r: small integers (exact in every type and under every
 * op: products stay below 2^24 for at most 8 ranks), signed ones negative
 * for half the ranks. */
static void fill(void *buf, weft_type_t t, size_t n, int r, int salt)
{
    for (size_t i = 0; i < n; i++) {
        long v = (long)((r * 7 + (long)i * 3 + salt) % 5) + 1;
        if (t == WEFT_TYPE_INT32 || t == WEFT_TYPE_INT64)
            v = r % 2 ? -v : v;
        switch (t) {
        case WEFT_TYPE_BYTE: ((unsigned char *)buf)[i] = (unsigned char)(v + r * 16); break;
        case WEFT_TYPE_INT32: ((int32_t *)buf)[i] = (int32_t)v; break;
        case WEFT_TYPE_INT64: ((int64_t *)buf)[i] = v; break;
        case WEFT_TYPE_UINT32: ((uint32_t *)buf)[i] = (uint32_t)v; break;
        case WEFT_TYPE_UINT64: ((uint64_t *)buf)[i] = (uint64_t)v; break;
        case WEFT_TYPE_FLOAT: ((float *)buf)[i] = (float)v; break;
        case WEFT_TYPE_DOUBLE: ((double *)buf)[i] = (double)v; break;
        }
    }
}

static int is_float(weft_type_t t) { return t == WEFT_TYPE_FLOAT || t == WEFT_TYPE_DOUBLE; }

static void check_bcast(weft_team_t team, MPI_Comm comm, int tr, int tn)
{
    for (int root = 0; root < tn; root++)
        for (weft_type_t t = WEFT_TYPE_BYTE; t <= WEFT_TYPE_DOUBLE; t++) {
            size_t counts[] = {0, 1, 13, t == WEFT_TYPE_DOUBLE ? BIG : 1000};
            for (int c = 0; c < 4; c++) {
                size_t n = counts[c], bytes = n * type_size[t] + 1;
                char  *a = malloc(bytes), *ref = malloc(bytes);
                fill(a, t, n, tr == root ? root : 99, c);
                memcpy(ref, a, bytes);
                CHECK(weft_team_bcast(team, a, n, t, root) == WEFT_OK, "%s %s: bcast: %s", shape,
                      what, weft_last_error());
                MPI_Bcast(ref, (int)n, mpi_types[t], root, comm);
                CHECK(memcmp(a, ref, bytes) == 0, "%s %s: bcast type %d count %zu root %d", shape,
                      what, (int)t, n, root);
                free(a);
                free(ref);
            }
        }
}

static void check_reduce(weft_team_t team, MPI_Comm comm, int tr, int tn)
{
    for (int root = 0; root < tn; root++)
        for (weft_type_t t = WEFT_TYPE_INT32; t <= WEFT_TYPE_DOUBLE; t++)
            for (weft_op_t op = WEFT_OP_SUM; op <= WEFT_OP_BXOR; op++) {
                if (is_float(t) && op >= WEFT_OP_BAND)
                    continue;
                /* the large message once per type, with the sum */
                size_t n = op == WEFT_OP_SUM && root == tn - 1 ? BIG : 7;
                size_t bytes = n * type_size[t];
                char  *src = malloc(bytes), *dst = malloc(bytes), *ref = malloc(bytes);
                fill(src, t, n, tr, (int)op);
                memset(dst, 0x5a, bytes);
                memset(ref, 0x5a, bytes);
                /* in place on the root, every other time */
                int inplace = tr == root && (op % 2) == 1;
                if (inplace)
                    memcpy(dst, src, bytes);
                CHECK(weft_team_reduce(team, inplace ? dst : src, dst, n, t, op, root) == WEFT_OK,
                      "%s %s: reduce: %s", shape, what, weft_last_error());
                MPI_Reduce(src, ref, (int)n, mpi_types[t], mpi_ops[op], root, comm);
                if (tr == root)
                    CHECK(memcmp(dst, ref, bytes) == 0, "%s %s: reduce type %d op %d root %d",
                          shape, what, (int)t, (int)op, root);
                free(src);
                free(dst);
                free(ref);
            }
}

static void check_allreduce(weft_team_t team, MPI_Comm comm, int tr)
{
    for (weft_type_t t = WEFT_TYPE_INT32; t <= WEFT_TYPE_DOUBLE; t++)
        for (weft_op_t op = WEFT_OP_SUM; op <= WEFT_OP_BXOR; op++) {
            if (is_float(t) && op >= WEFT_OP_BAND)
                continue;
            for (int big = 0; big < 2; big++) {
                size_t n = big ? (op == WEFT_OP_MAX ? BIG : 0) : 9, bytes = n * type_size[t] + 1;
                char  *src = malloc(bytes), *dst = malloc(bytes), *ref = malloc(bytes);
                int    inplace = (op + big) % 2;
                fill(src, t, n, tr, (int)op + 1);
                memcpy(dst, src, bytes);
                memset(ref, 0, bytes);
                CHECK(weft_team_allreduce(team, inplace ? dst : src, dst, n, t, op) == WEFT_OK,
                      "%s %s: allreduce: %s", shape, what, weft_last_error());
                MPI_Allreduce(src, ref, (int)n, mpi_types[t], mpi_ops[op], comm);
                CHECK(memcmp(dst, ref, n * type_size[t]) == 0,
                      "%s %s: allreduce type %d op %d count %zu", shape, what, (int)t, (int)op, n);
                free(src);
                free(dst);
                free(ref);
            }
        }
    /* Inexact sums: whatever the order, every rank gets the same bits. */
    double v[3] = {0.1 * (tr + 1), 1e16 / (tr + 3), 1.0 / 3.0 + tr}, r[3], r0[3];
    CHECK(weft_team_allreduce(team, v, r, 3, WEFT_TYPE_DOUBLE, WEFT_OP_SUM) == WEFT_OK, "%s",
          weft_last_error());
    memcpy(r0, r, sizeof(r));
    MPI_Bcast(r0, 3, MPI_DOUBLE, 0, comm);
    CHECK(memcmp(r, r0, sizeof(r)) == 0, "%s %s: allreduce bits differ from team rank 0's", shape,
          what);
}

/* Streams of small collectives, longer than any ring of buffers: a
 * writer runs ahead of its readers until it would overwrite a buffer not
 * yet read, and wraps around.  Tiny, small and large chunks alternate, so
 * that each ring's count stays right while the others are used. */
static void check_streams(weft_team_t team, int tr, int tn)
{
    enum { N = 80 };   /* more than the deepest ring (64) */
    char big[3000], bigref[3000];

    /* The readers come late: the root writes until the rings are full.
     * Root 0, since another root waits for team rank 0 to hand its chunk
     * back down. */
    size_t sizes[] = {1, 100, sizeof(big)};
    for (int k = 0; k < 3; k++) {
        int root = 0;
        if (tr != root)
            usleep(5000);
        for (int i = 0; i < N; i++) {
            memset(big, tr == root ? i + 1 : 0, sizes[k]);
            CHECK(weft_team_bcast(team, big, sizes[k], WEFT_TYPE_BYTE, root) == WEFT_OK, "%s",
                  weft_last_error());
            CHECK(big[0] == (char)(i + 1) && big[sizes[k] - 1] == (char)(i + 1),
                  "%s %s: bcast %d of a stream of %zu bytes got %d", shape, what, i, sizes[k],
                  big[0]);
        }
    }
    for (int i = 0; i < N; i++) {
        int      root = (i / 3) % tn;
        uint64_t v = tr == root ? (uint64_t)i * 1000003u + (uint64_t)root : 0;
        CHECK(weft_team_bcast(team, &v, 1, WEFT_TYPE_UINT64, root) == WEFT_OK, "%s",
              weft_last_error());
        CHECK(v == (uint64_t)i * 1000003u + (uint64_t)root, "%s %s: bcast %d of a stream got %llu",
              shape, what, i, (unsigned long long)v);
        int64_t x = (int64_t)(i + 1) * (tr + 1), sum = 0;
        CHECK(weft_team_allreduce(team, &x, &sum, 1, WEFT_TYPE_INT64, WEFT_OP_SUM) == WEFT_OK, "%s",
              weft_last_error());
        CHECK(sum == (int64_t)(i + 1) * tn * (tn + 1) / 2, "%s %s: allreduce %d of a stream: %lld",
              shape, what, i, (long long)sum);
        if (i % 3 == 0) {
            size_t n = 9 + (size_t)i % 112;   /* beside its signal word, or not */
            fill(big, WEFT_TYPE_BYTE, n, tr == root ? i : 99, i);
            fill(bigref, WEFT_TYPE_BYTE, n, i, i);
            CHECK(weft_team_bcast(team, big, n, WEFT_TYPE_BYTE, root) == WEFT_OK, "%s",
                  weft_last_error());
            CHECK(memcmp(big, bigref, n) == 0, "%s %s: bcast of %zu bytes in a stream", shape, what,
                  n);
        }
        if (i % 25 == 0) {
            fill(big, WEFT_TYPE_BYTE, sizeof(big), tr == root ? i : 99, i);
            fill(bigref, WEFT_TYPE_BYTE, sizeof(big), i, i);
            CHECK(weft_team_bcast(team, big, sizeof(big), WEFT_TYPE_BYTE, root) == WEFT_OK, "%s",
                  weft_last_error());
            CHECK(memcmp(big, bigref, sizeof(big)) == 0, "%s %s: large bcast in a stream", shape,
                  what);
        }
        if (i % 11 == 0)
            CHECK(weft_team_barrier(team) == WEFT_OK, "%s", weft_last_error());
    }
}

/* The sum or maximum of every rank's fill (int32). */
static void expected(int32_t *ref, size_t n, int tn, int salt, weft_op_t op)
{
    int32_t *v = malloc(n * sizeof(int32_t) + 1);

    for (int r = 0; r < tn; r++) {
        fill(v, WEFT_TYPE_INT32, n, r, salt);
        for (size_t j = 0; j < n; j++)
            ref[j] = r == 0                ? v[j]
                   : op == WEFT_OP_SUM     ? ref[j] + v[j]
                   : v[j] > ref[j]         ? v[j]
                                           : ref[j];
    }
    free(v);
}

/* Messages at the edges of the kinds of buffer and of the chunks: the
 * most bytes beside a signal word and one more, a chunk and one element
 * less or more, and chunks with a short last one.  The results are
 * computed here, not by MPI, to keep the test quick where MPI is slow
 * with more ranks than cores. */
static void check_boundaries(weft_team_t team, int tr, int tn)
{
    size_t chunk = weft__os_chunk_bytes(team);

    if (chunk == 0)   /* the MPI path: no chunks */
        return;
    CHECK(chunk % 8 == 0, "%s %s: chunk of %zu bytes", shape, what, chunk);
    size_t edges[] = {8,         9,     12,        120,            121,      124,
                      chunk - 4, chunk, chunk + 4, 2 * chunk + 12, 3 * chunk};
    for (size_t e = 0; e < sizeof(edges) / sizeof(edges[0]); e++) {
        size_t bytes = edges[e], n = bytes / 4;
        int    root = (int)e % tn;
        char  *a = malloc(bytes), *ref = malloc(bytes), *dst = malloc(bytes);
        fill(a, WEFT_TYPE_BYTE, bytes, tr == root ? root : 99, (int)e);
        fill(ref, WEFT_TYPE_BYTE, bytes, root, (int)e);
        CHECK(weft_team_bcast(team, a, bytes, WEFT_TYPE_BYTE, root) == WEFT_OK, "%s",
              weft_last_error());
        CHECK(memcmp(a, ref, bytes) == 0, "%s %s: bcast of %zu bytes (chunk %zu)", shape, what,
              bytes, chunk);
        for (weft_op_t op = WEFT_OP_SUM; op <= WEFT_OP_MAX; op += 3) {
            fill(a, WEFT_TYPE_INT32, n, tr, (int)e);
            memset(dst, 0x5a, bytes);
            CHECK(weft_team_allreduce(team, a, dst, n, WEFT_TYPE_INT32, op) == WEFT_OK, "%s",
                  weft_last_error());
            expected((int32_t *)(void *)ref, n, tn, (int)e, op);
            CHECK(memcmp(dst, ref, n * 4) == 0, "%s %s: allreduce of %zu int32 (chunk %zu)", shape,
                  what, n, chunk);
            memset(dst, 0x5a, bytes);
            CHECK(weft_team_reduce(team, a, dst, n, WEFT_TYPE_INT32, op, tn - 1 - root) == WEFT_OK,
                  "%s", weft_last_error());
            if (tr == tn - 1 - root)
                CHECK(memcmp(dst, ref, n * 4) == 0, "%s %s: reduce of %zu int32 (chunk %zu)",
                      shape, what, n, chunk);
        }
        free(a);
        free(ref);
        free(dst);
    }
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);   /* one clock for every rank of a node */
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Nobody leaves before the last one arrives. */
static void check_barrier(weft_team_t team, MPI_Comm comm, int tr, int tn)
{
    double t[2], all[2 * MAXNP];

    for (int round = 0; round < 2; round++) {
        usleep((useconds_t)(((tr * 5 + round) % tn) * 2000));
        t[0] = now();
        CHECK(weft_team_barrier(team) == WEFT_OK, "%s", weft_last_error());
        t[1] = now();
        MPI_Allgather(t, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, comm);
        double last_in = 0, first_out = 1e300;
        for (int i = 0; i < tn; i++) {
            last_in = all[2 * i] > last_in ? all[2 * i] : last_in;
            first_out = all[2 * i + 1] < first_out ? all[2 * i + 1] : first_out;
        }
        CHECK(last_in <= first_out, "%s %s: barrier released a rank %.6f s early", shape, what,
              last_in - first_out);
    }
}

static void check_team(weft_team_t team, const char *name)
{
    MPI_Comm             comm;
    int                  tr, tn;
    weft__team_scratch_t sc;

    if (team == WEFT_TEAM_NULL)
        return;
    what = name;
    weft_team_rank(team, &tr);
    weft_team_nranks(team, &tn);
    WEFT_Team_comm(team, &comm);
    /* The walk uses few slots: every team here runs the one-sided path. */
    CHECK(weft__team_scratch(team, &sc) == WEFT_OK, "%s %s has no scratch slot", shape, what);
    check_bcast(team, comm, tr, tn);
    check_reduce(team, comm, tr, tn);
    check_allreduce(team, comm, tr);
    check_barrier(team, comm, tr, tn);
    /* The rings and chunks work the same on every team of a shape: the
     * world team (every pair of ranks, every path) only, to stay quick
     * with more ranks than cores. */
    if (!strcmp(name, "world")) {
        check_streams(team, tr, tn);
        check_boundaries(team, tr, tn);
    }
    /* One-sided when its ranks share the direct path, or through UCX with
     * the progress thread; the MPI path otherwise. */
    if (expect_onesided >= 0)
        CHECK(weft__os_active(team) == expect_onesided, "%s %s: one-sided %d, expected %d", shape,
              what, weft__os_active(team), expect_onesided);
}

static void run(const char *name, const char *synthetic, const char *node, const char *bind,
                const char *conf)
{
    weft_ctx_t  ctx;
    weft_team_t team, child, roots;
    char        label[32];

    shape = name;
    unsetenv("WEFT_TOPO_SYNTHETIC");
    unsetenv("WEFT_TOPO_NODE");
    unsetenv("WEFT_TOPO_BIND");
    unsetenv("WEFT_TOPO_SLURM_CONF");
    if (synthetic)
        setenv("WEFT_TOPO_SYNTHETIC", synthetic, 1);
    if (node)
        setenv("WEFT_TOPO_NODE", node, 1);
    if (bind)
        setenv("WEFT_TOPO_BIND", bind, 1);
    if (conf)
        setenv("WEFT_TOPO_SLURM_CONF", conf, 1);
    const char *shm = getenv("WEFT_SHM"), *pt = getenv("WEFT_PROGRESS_THREAD");
    int         direct = !(shm && !strcmp(shm, "0")), thread = pt && !strcmp(pt, "1");
    /* With emulated nodes, a team may or may not span them: not checked. */
    expect_onesided = thread || (direct && !node) ? 1 : !direct ? 0 : -1;
    CHECK(weft_init(NULL, &ctx) == WEFT_OK, "%s: weft_init: %s", name, weft_last_error());
    CHECK(weft_team_world(ctx, &team) == WEFT_OK, "%s: %s", name, weft_last_error());
    check_team(team, "world");
    for (int step = 1; team != WEFT_TEAM_NULL && step < 8; step++) {
        CHECK(weft_team_split_topology(team, &child, &roots) == WEFT_OK, "%s: split %d: %s", name,
              step, weft_last_error());
        snprintf(label, sizeof(label), "child %d", step);
        check_team(child, label);
        snprintf(label, sizeof(label), "roots %d", step);
        check_team(roots, label);
        weft_team_free(&roots);
        weft_team_free(&team);
        team = child;
    }
    weft_team_free(&team);
    CHECK(weft_finalize(ctx) == WEFT_OK, "%s: weft_finalize: %s", name, weft_last_error());
}

static void first_entries(const char *const *entries, char *out, size_t len)
{
    out[0] = '\0';
    for (int r = 0; r < np; r++) {
        size_t n = strlen(out);
        snprintf(out + n, len - n, "%s%s", r ? "," : "", entries[r]);
    }
}

int main(int argc, char **argv)
{
    static const char *const paper52[] = {"core:0", "core:1", "l2:1", "l2:1",
                                          "numa:1", "numa:1", "numa:1", "numa:1"};
    static const char *const mixed[] = {"unbound", "core:1", "core:2", "core:3",
                                        "l3:1", "core:6", "pu:7", "unbound"};
    char list[256], node[64], conf[128];
    int  provided;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    check_rank = me;
    if (np > MAXNP) {
        if (me == 0)
            fprintf(stderr, "test_onesided runs on at most %d ranks\n", MAXNP);
        MPI_Finalize();
        return 1;
    }
    run("this machine (no description)", NULL, NULL, NULL, NULL);
    run("Fig. 1 node, by-core", FIG1, NULL, "by-core", NULL);
    first_entries(paper52, list, sizeof(list));
    run("Fig. 1 node, §5.2 bindings", FIG1, NULL, list, NULL);
    first_entries(mixed, list, sizeof(list));
    run("Fig. 1 node, unbound and nested bindings", FIG1, NULL, list, NULL);
    run("Fig. 1 node, all unbound", FIG1, NULL, "unbound", NULL);
    snprintf(node, sizeof(node), "block:node%%d:%d", (np + 1) / 2);
    run("two nodes by slot", FIG1, node, "by-core", NULL);
    run("nodes by node (cyclic)", "pack:2 core:2 pu:1", "cyclic:n%d:3", "by-core", NULL);

    snprintf(conf, sizeof(conf), "/tmp/weft-test-onesided-%d.conf", (int)getpid());
    MPI_Bcast(conf, sizeof(conf), MPI_CHAR, 0, MPI_COMM_WORLD);
    if (me == 0) {
        FILE *f = fopen(conf, "w");
        fputs("SwitchName=spine Switches=leaf[0-1]\nSwitchName=leaf0 Nodes=n[0-1]\n"
              "SwitchName=leaf1 Nodes=n[2-3]\n", f);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    run("spine and leaf switches", "core:2 pu:1", "block:n%d:2", "by-core", conf);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        unlink(conf);

    MPI_Allreduce(MPI_IN_PLACE, &check_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("test_onesided: %d ranks, %s\n", np, check_failures ? "FAILED" : "ok");
    MPI_Finalize();
    return check_failures != 0;
}
