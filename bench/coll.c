/*
 * weft_bench_coll -- native MPI broadcast/reduce against the hierarchical
 * ones (WEFT_Hbcast, WEFT_Hreduce), over message sizes: the benchmark of
 * §7.2 of the hierarchical-communicators paper (Figs. 5-10).
 *
 *   mpirun -np N weft_bench_coll --json FILE --op bcast|reduce|pingpong|opcost
 *                                [--sizes 8,1024,...] [--iters N] [--groups G1,G2,..]
 *                                [--op-cost B1:S1,B2:S2,... (SMPI only)]
 *   mpirun -np N weft_bench_coll --json FILE --onesided 1 --op bcast|allreduce
 *                                [--sizes ...] [--iters N]
 *
 * --onesided 1 (the libweft build only) adds weft's one-sided team
 * collectives (weft_team_bcast/weft_team_allreduce on the world team) as a
 * third variant, "onesided_s", next to the native MPI call and the
 * hierarchical one (WEFT_Hbcast/WEFT_Hallreduce), run side by side: each
 * iteration runs every variant once, in turn, as a batch of back-to-back
 * operations after a barrier (the batch's mean is one sample), so that
 * sub-microsecond operations are not lost in the skew a barrier leaves.
 *
 * The MPI library's algorithm is chosen outside (Open MPI MCA parameters,
 * SimGrid --cfg=smpi/bcast:..., MPICH's defaults) and is the same for the
 * native call and for every level of the hierarchical one, as in the paper.
 * The machine is the one the topology layer sees (this machine, or the
 * WEFT_TOPO_* variables; under SimGrid SMPI the simulated hosts); --groups
 * replaces it by a tailor-made hierarchy.
 *
 * Every operation starts after a barrier and is timed on each rank; a
 * point's time is the median over the iterations of a rank (robust to a
 * rank being descheduled on a shared machine), maximum over the ranks (the
 * paper's "maximum time").  bcast moves bytes from rank 0;
 * reduce sums doubles into rank 0.  The results are checked after each
 * point.  --op pingpong times a one-way message between ranks 0 and 1
 * (half a round trip; "native_s" only): the calibration of the simulated
 * platforms, and its check.  --op opcost times the reduction op itself:
 * MPI_Reduce_local of MPI_SUM over doubles on each rank ("native_s": the
 * median time of one application, maximum over the ranks), the cost the
 * projection charges per application.  The same source builds with mpicc,
 * mpicc.mpich and smpicc.
 *
 * Under SimGrid SMPI an MPI_Op costs no simulated time.  --op-cost
 * B1:S1,B2:S2,... (SMPI build only; sizes in bytes, increasing, and the
 * seconds one application of the op takes at that size, as --op opcost
 * measures them) makes reduce use a commutative user-defined sum that,
 * besides summing, charges the time of its size (linear between the
 * given sizes, the first one's below them, the last slope above them) in
 * simulated seconds (smpi_execute) on the rank applying it, wherever the
 * MPI library's algorithm applies it (run with --cfg=smpi/cpu-threshold:0,
 * or costs under 1 us are dropped).
 *
 * Output: {"benchmark": "coll", "op": ..., "nranks": N, "mpi": "...",
 *          "op_cost": true if --op-cost charged the op,
 *          "points": [{"size": B, "native_s": t, "hier_s": t}, ...]}
 */
#include "common.h"
#include <weft_mpi.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 64
#define WARMUP 2

struct opts {
    const char *json, *op, *groups;
    long        sizes[MAX_SIZES];
    int         nsizes, iters, onesided;
    long        cost_size[MAX_SIZES];   /* --op-cost; ncost 0: MPI_SUM */
    double      cost_s[MAX_SIZES];
    int         ncost;
};

static int rank, nranks;

/* "B1:S1,B2:S2,...": sizes increasing from 1 byte, times positive. */
static int parse_op_cost(const char *text, struct opts *o)
{
    const char *p = text;

    for (o->ncost = 0; o->ncost < MAX_SIZES; p++) {
        char  *end;
        long   size = strtol(p, &end, 10);
        double t;
        if (end == p || *end != ':' || size < 1 ||
            (o->ncost && size <= o->cost_size[o->ncost - 1]))
            return 0;
        p = end + 1;
        t = strtod(p, &end);
        if (end == p || !(t > 0))
            return 0;
        o->cost_size[o->ncost] = size;
        o->cost_s[o->ncost++] = t;
        p = end;
        if (*p != ',')
            return !*p;
    }
    return 0;
}

#ifdef SMPI_H
static const struct opts *charged;

/* The time one application of the op takes on bytes (the measured curve). */
static double op_time(double bytes)
{
    const long   *b = charged->cost_size;
    const double *t = charged->cost_s;
    int           i = 1, n = charged->ncost;

    if (n == 1 || bytes <= (double)b[0])
        return t[0];
    while (i < n - 1 && bytes > (double)b[i])
        i++;
    return t[i - 1] + (t[i] - t[i - 1]) * (bytes - (double)b[i - 1]) / (double)(b[i] - b[i - 1]);
}

/* MPI_SUM of doubles that costs simulated time like a real op. */
static void charged_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    const double *a = in;
    double       *b = inout;

    (void)type;
    for (int i = 0; i < *len; i++)
        b[i] += a[i];
    smpi_execute(op_time(8.0 * (double)*len));
}
#endif

static int parse_sizes(const char *text, struct opts *o)
{
    const char *p = text;
    o->nsizes = 0;
    while (*p && o->nsizes < MAX_SIZES) {
        char *end;
        long  v = strtol(p, &end, 10);
        if (end == p || v < 8 || v > (1L << 30))
            return 0;
        o->sizes[o->nsizes++] = v;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return 0;
    }
    return o->nsizes > 0 && !*p;
}

static int parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){.op = "bcast", .iters = 20};
    parse_sizes("8,64,512,4096,32768,262144,1048576", o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            return 0;
        if (!strcmp(a, "--json"))
            o->json = v;
        else if (!strcmp(a, "--op"))
            o->op = v;
        else if (!strcmp(a, "--groups"))
            o->groups = v;
        else if (!strcmp(a, "--iters"))
            o->iters = atoi(v);
        else if (!strcmp(a, "--onesided")) {
#ifndef WEFT_BENCH_ONESIDED
            return 0;   /* needs libweft's endpoints */
#endif
            o->onesided = atoi(v);
        }
        else if (!strcmp(a, "--op-cost")) {
            if (!parse_op_cost(v, o))
                return 0;
#ifndef SMPI_H
            return 0;   /* a simulated cost: only under SMPI */
#endif
        }
        else if (!strcmp(a, "--sizes")) {
            if (!parse_sizes(v, o))
                return 0;
        } else
            return 0;
        i++;
    }
    if (o->onesided)
        return o->json && o->iters > 0 && (!strcmp(o->op, "bcast") || !strcmp(o->op, "allreduce"));
    return o->json && o->iters > 0 &&
           (!strcmp(o->op, "bcast") || !strcmp(o->op, "reduce") || !strcmp(o->op, "pingpong") ||
            !strcmp(o->op, "opcost"));
}

/* One-way time between ranks 0 and 1: half the mean round trip. */
static double pingpong(const struct opts *o, char *buf, long size)
{
    double t = 0;

    MPI_Barrier(MPI_COMM_WORLD);
    for (int it = -WARMUP; it < o->iters; it++) {
        double t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(buf, (int)size, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)size, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, (int)size, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)size, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
        if (it >= 0)
            t += MPI_Wtime() - t0;
    }
    t /= 2.0 * o->iters;
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return t;
}

/* bench_worst_median of this rank's times each[0..n), which it frees. */
static double worst_median(double *each, int n)
{
    double worst = bench_worst_median(each, n);

    free(each);
    return worst;
}

/* One application of MPI_SUM to size/8 doubles (MPI_Reduce_local): median
 * over the iterations, maximum over the ranks. */
static double opcost(const struct opts *o, char *buf, double *out, long size)
{
    int     count = (int)(size / 8);
    double  t;
    double *each = malloc(sizeof(double) * (size_t)o->iters);

    for (long i = 0; i < count; i++)
        out[i] = 0;
    for (int it = -WARMUP; it < o->iters; it++) {
        t = MPI_Wtime();
        MPI_Reduce_local(buf, out, count, MPI_DOUBLE, MPI_SUM);
        t = MPI_Wtime() - t;
        if (it >= 0)
            each[it] = t;
    }
    return worst_median(each, o->iters);
}

/* Median time of one operation on this rank, maximum over the ranks. */
static double timed(int hier, const struct opts *o, MPI_Op sum, char *buf, double *out, long size)
{
    int     count = (int)(size / 8);
    double  t;
    double *each = malloc(sizeof(double) * (size_t)o->iters);

    for (int it = -WARMUP; it < o->iters; it++) {
        MPI_Barrier(MPI_COMM_WORLD);
        t = MPI_Wtime();
        if (!strcmp(o->op, "bcast")) {
            if (hier)
                WEFT_Hbcast(buf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
            else
                MPI_Bcast(buf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
        } else {
            if (hier)
                WEFT_Hreduce(buf, out, count, MPI_DOUBLE, sum, 0, MPI_COMM_WORLD);
            else
                MPI_Reduce(buf, out, count, MPI_DOUBLE, sum, 0, MPI_COMM_WORLD);
        }
        t = MPI_Wtime() - t;
        if (it >= 0)
            each[it] = t;
    }
    return worst_median(each, o->iters);
}

/* The data of the last operation is what it should be (every rank
 * agrees on the verdict). */
static int verify(const struct opts *o, const char *buf, const double *out, long size)
{
    int ok = 1, all;

    if (!strcmp(o->op, "bcast") || (!strcmp(o->op, "pingpong") && rank < 2)) {
        for (long i = 0; i < size; i++)
            ok &= buf[i] == (char)(i * 7 + 3);
    } else if (!strcmp(o->op, "opcost")) {
        for (long i = 0; i < size / 8; i++)
            ok &= out[i] == (double)(rank + 1) * (1 + i % 3) * (WARMUP + o->iters);
    } else if (rank == 0) {
        double want = (double)nranks * (nranks + 1) / 2;
        for (long i = 0; i < size / 8; i++)
            ok &= fabs(out[i] - want * (1 + i % 3)) < 1e-9 * want;
    }
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

static void fill(const struct opts *o, char *buf, long size)
{
    if (strcmp(o->op, "reduce") && strcmp(o->op, "opcost")) {
        for (long i = 0; i < size; i++)
            buf[i] = rank == 0 ? (char)(i * 7 + 3) : 0;
    } else {
        double *d = (double *)buf;
        for (long i = 0; i < size / 8; i++)
            d[i] = (double)(rank + 1) * (1 + i % 3);
    }
}

#ifdef WEFT_BENCH_ONESIDED
#include <weft.h>

/* Operations per timed batch: enough to dwarf a barrier's skew when they
 * are short, a few when they move megabytes. */
static int batch(long size)
{
    long n = (4L << 20) / size;

    return n > 200 ? 200 : n < 2 ? 2 : (int)n;
}

/* One operation of variant v (0 native, 1 hierarchical, 2 one-sided). */
static int one_op(int v, const struct opts *o, weft_team_t team, char *buf, double *out,
                  long size)
{
    int count = (int)(size / 8);

    if (!strcmp(o->op, "bcast")) {
        if (v == 0)
            return MPI_Bcast(buf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS;
        if (v == 1)
            return WEFT_Hbcast(buf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS;
        return weft_team_bcast(team, buf, (size_t)size, WEFT_TYPE_BYTE, 0) != WEFT_OK;
    }
    if (v == 0)
        return MPI_Allreduce(buf, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS;
    if (v == 1)
        return WEFT_Hallreduce(buf, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) !=
               MPI_SUCCESS;
    return weft_team_allreduce(team, buf, out, (size_t)count, WEFT_TYPE_DOUBLE, WEFT_OP_SUM) !=
           WEFT_OK;
}

static int verify_os(const struct opts *o, const char *buf, const double *out, long size)
{
    int    ok = 1, all;
    double want = (double)nranks * (nranks + 1) / 2;

    if (!strcmp(o->op, "bcast"))
        for (long i = 0; i < size; i++)
            ok &= buf[i] == (char)(i * 7 + 3);
    else
        for (long i = 0; i < size / 8; i++)
            ok &= fabs(out[i] - want * (1 + i % 3)) < 1e-9 * want;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

/* Native, hierarchical and one-sided side by side: per iteration a batch
 * of each in turn; per variant the median batch mean of a rank, maximum
 * over the ranks. */
static int run_onesided(const struct opts *o, FILE *f)
{
    weft_ctx_t  ctx;
    weft_team_t team;
    int         ok = 1;
    long        max = 8;

    if (weft_init(NULL, &ctx) != WEFT_OK || weft_team_world(ctx, &team) != WEFT_OK) {
        fprintf(stderr, "weft_bench_coll: %s\n", weft_last_error());
        return 0;
    }
    for (int i = 0; i < o->nsizes; i++)
        max = o->sizes[i] > max ? o->sizes[i] : max;
    char   *buf = malloc((size_t)max);
    double *out = malloc((size_t)max);
    double *each[3];
    for (int v = 0; v < 3; v++)
        each[v] = malloc(sizeof(double) * (size_t)o->iters);
    for (int s = 0; s < o->nsizes; s++) {
        long size = o->sizes[s];
        int  reps = batch(size);
        struct opts fo = *o;
        fo.op = !strcmp(o->op, "bcast") ? "bcast" : "reduce";
        fill(&fo, buf, size);
        for (int it = -WARMUP; it < o->iters; it++)
            for (int v = 0; v < 3; v++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double t = MPI_Wtime();
                for (int r = 0; r < reps; r++)
                    ok &= !one_op(v, o, team, buf, out, size);
                t = (MPI_Wtime() - t) / reps;
                if (it >= 0)
                    each[v][it] = t;
                if (it == o->iters - 1)
                    ok &= verify_os(o, buf, out, size);
            }
        /* Also the fastest batch (worst over the ranks): on a machine shared
         * with other jobs, the closest to what an idle one gives. */
        double t[3], lo[3];
        for (int v = 0; v < 3; v++) {
            double mine = each[v][0];
            for (int i = 1; i < o->iters; i++)
                mine = each[v][i] < mine ? each[v][i] : mine;
            MPI_Allreduce(&mine, &lo[v], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            t[v] = bench_worst_median(each[v], o->iters);
        }
        if (f)
            fprintf(f, "%s\n  {\"size\": %ld, \"batch\": %d, \"native_s\": %.9e, "
                       "\"hier_s\": %.9e, \"onesided_s\": %.9e, \"native_min_s\": %.9e, "
                       "\"hier_min_s\": %.9e, \"onesided_min_s\": %.9e}",
                    s ? "," : "", size, reps, t[0], t[1], t[2], lo[0], lo[1], lo[2]);
    }
    for (int v = 0; v < 3; v++)
        free(each[v]);
    free(buf);
    free(out);
    weft_team_free(&team);
    ok &= weft_finalize(ctx) == WEFT_OK;
    return ok;
}
#endif

int main(int argc, char **argv)
{
    struct opts o;
    char        lib[256];
    int         ok = 1;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (!parse(argc, argv, &o) || (!strcmp(o.op, "pingpong") && nranks < 2)) {
        if (rank == 0)
            fprintf(stderr, "usage: weft_bench_coll --json FILE [--op bcast|reduce|pingpong (2+ ranks)"
                            "|opcost] [--sizes B1,B2,...] [--iters N] [--groups G1,G2,...] "
                            "[--op-cost B1:S1,B2:S2,... (SMPI only)]\n");
        MPI_Finalize();
        return 2;
    }
    MPI_Info info = MPI_INFO_NULL;
    if (o.groups) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "weft_coll_groups", o.groups);
    }
    if (WEFT_Comm_hier_init(MPI_COMM_WORLD, info) != MPI_SUCCESS) {
        if (rank == 0)
            fprintf(stderr, "weft_bench_coll: %s\n", weft_last_error());
        MPI_Finalize();
        return 1;
    }
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
#ifdef WEFT_BENCH_ONESIDED
    if (o.onesided) {
        FILE *f = rank == 0 ? bench_json_open("weft_bench_coll", o.json) : NULL;
        bench_mpi_library(lib, sizeof(lib));
        if (f)
            fprintf(f, "{\"benchmark\": \"coll\", \"op\": \"%s\", \"nranks\": %d, "
                       "\"mpi\": \"%.120s\", \"iters\": %d, \"onesided\": true, \"points\": [",
                    o.op, nranks, lib, o.iters);
        ok = run_onesided(&o, f);
        if (f) {
            fprintf(f, "\n], \"verified\": %s}\n", ok ? "true" : "false");
            bench_json_close(f);
        }
        MPI_Finalize();
        return ok ? 0 : 1;
    }
#endif
    MPI_Op sum = MPI_SUM;
#ifdef SMPI_H
    if (o.ncost) {
        charged = &o;
        MPI_Op_create(charged_sum, 1, &sum);
    }
#endif
    long max = 0;
    for (int i = 0; i < o.nsizes; i++)
        max = o.sizes[i] > max ? o.sizes[i] : max;
    char   *buf = malloc((size_t)max);
    double *out = malloc((size_t)max);
    FILE   *f = rank == 0 ? bench_json_open("weft_bench_coll", o.json) : NULL;
    bench_mpi_library(lib, sizeof(lib));
    if (f)
        fprintf(f, "{\"benchmark\": \"coll\", \"op\": \"%s\", \"nranks\": %d, \"mpi\": \"%.120s\", "
                   "\"groups\": \"%s\", \"iters\": %d, \"op_cost\": %s, \"points\": [",
                o.op, nranks, lib, o.groups ? o.groups : "", o.iters, o.ncost ? "true" : "false");
    for (int s = 0; s < o.nsizes; s++) {
        long   size = o.sizes[s];
        double t[2];
        if (!strcmp(o.op, "pingpong") || !strcmp(o.op, "opcost")) {
            fill(&o, buf, size);
            t[0] = strcmp(o.op, "opcost") ? pingpong(&o, buf, size) : opcost(&o, buf, out, size);
            ok &= verify(&o, buf, out, size);
            if (f)
                fprintf(f, "%s\n  {\"size\": %ld, \"native_s\": %.9e}", s ? "," : "", size, t[0]);
            continue;
        }
        for (int hier = 0; hier < 2; hier++) {
            fill(&o, buf, size);
            t[hier] = timed(hier, &o, sum, buf, out, size);
            ok &= verify(&o, buf, out, size);
        }
        if (f)
            fprintf(f, "%s\n  {\"size\": %ld, \"native_s\": %.9e, \"hier_s\": %.9e}", s ? "," : "",
                    size, t[0], t[1]);
    }
    if (f) {
        fprintf(f, "\n], \"verified\": %s}\n", ok ? "true" : "false");
        bench_json_close(f);
    }
    if (sum != MPI_SUM)
        MPI_Op_free(&sum);
    free(buf);
    free(out);
    MPI_Finalize();
    return ok ? 0 : 1;
}
