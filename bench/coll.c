/*
 * weft_bench_coll -- native MPI broadcast/reduce against the hierarchical
 * ones (WEFT_Hbcast, WEFT_Hreduce), over message sizes: the benchmark of
 * §7.2 of the hierarchical-communicators paper (Figs. 5-10).
 *
 *   mpirun -np N weft_bench_coll --json FILE --op bcast|reduce|pingpong
 *                                [--sizes 8,1024,...] [--iters N] [--groups G1,G2,..]
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
 * platforms, and its check.  The same source builds with mpicc,
 * mpicc.mpich and smpicc.
 *
 * Output: {"benchmark": "coll", "op": ..., "nranks": N, "mpi": "...",
 *          "points": [{"size": B, "native_s": t, "hier_s": t}, ...]}
 */
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
    int         nsizes, iters;
};

static int rank, nranks;

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
        else if (!strcmp(a, "--sizes")) {
            if (!parse_sizes(v, o))
                return 0;
        } else
            return 0;
        i++;
    }
    return o->json && o->iters > 0 &&
           (!strcmp(o->op, "bcast") || !strcmp(o->op, "reduce") || !strcmp(o->op, "pingpong"));
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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median time of one operation on this rank, maximum over the ranks. */
static double timed(int hier, const struct opts *o, char *buf, double *out, long size)
{
    int     count = (int)(size / 8);
    double  t, worst, mid;
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
                WEFT_Hreduce(buf, out, count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            else
                MPI_Reduce(buf, out, count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        }
        t = MPI_Wtime() - t;
        if (it >= 0)
            each[it] = t;
    }
    qsort(each, (size_t)o->iters, sizeof(double), cmp_double);
    mid = o->iters % 2 ? each[o->iters / 2] : (each[o->iters / 2 - 1] + each[o->iters / 2]) / 2;
    free(each);
    MPI_Allreduce(&mid, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

/* The data of the last operation is what it should be (every rank
 * agrees on the verdict). */
static int verify(const struct opts *o, const char *buf, const double *out, long size)
{
    int ok = 1, all;

    if (!strcmp(o->op, "bcast") || (!strcmp(o->op, "pingpong") && rank < 2)) {
        for (long i = 0; i < size; i++)
            ok &= buf[i] == (char)(i * 7 + 3);
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
    if (strcmp(o->op, "reduce")) {
        for (long i = 0; i < size; i++)
            buf[i] = rank == 0 ? (char)(i * 7 + 3) : 0;
    } else {
        double *d = (double *)buf;
        for (long i = 0; i < size / 8; i++)
            d[i] = (double)(rank + 1) * (1 + i % 3);
    }
}

int main(int argc, char **argv)
{
    struct opts o;
    char        name[MPI_MAX_LIBRARY_VERSION_STRING];
    int         len, ok = 1;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (!parse(argc, argv, &o) || (!strcmp(o.op, "pingpong") && nranks < 2)) {
        if (rank == 0)
            fprintf(stderr, "usage: weft_bench_coll --json FILE [--op bcast|reduce|pingpong (2+ ranks)] "
                            "[--sizes B1,B2,...] [--iters N] [--groups G1,G2,...]\n");
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
    long max = 0;
    for (int i = 0; i < o.nsizes; i++)
        max = o.sizes[i] > max ? o.sizes[i] : max;
    char   *buf = malloc((size_t)max);
    double *out = malloc((size_t)max);
    FILE   *f = NULL;
    if (rank == 0 && !(f = fopen(o.json, "w"))) {
        fprintf(stderr, "weft_bench_coll: cannot write %s\n", o.json);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Get_library_version(name, &len);
    for (int i = 0; i < len; i++)
        if (name[i] == '\n' || name[i] == '"' || name[i] == '\\' || name[i] == '\t')
            name[i] = ' ';
    while (len > 0 && name[len - 1] == ' ')
        name[--len] = '\0';
    if (f)
        fprintf(f, "{\"benchmark\": \"coll\", \"op\": \"%s\", \"nranks\": %d, \"mpi\": \"%.120s\", "
                   "\"groups\": \"%s\", \"iters\": %d, \"points\": [",
                o.op, nranks, name, o.groups ? o.groups : "", o.iters);
    for (int s = 0; s < o.nsizes; s++) {
        long   size = o.sizes[s];
        double t[2];
        if (!strcmp(o.op, "pingpong")) {
            fill(&o, buf, size);
            t[0] = pingpong(&o, buf, size);
            ok &= verify(&o, buf, out, size);
            if (f)
                fprintf(f, "%s\n  {\"size\": %ld, \"native_s\": %.9e}", s ? "," : "", size, t[0]);
            continue;
        }
        for (int hier = 0; hier < 2; hier++) {
            fill(&o, buf, size);
            t[hier] = timed(hier, &o, buf, out, size);
            ok &= verify(&o, buf, out, size);
        }
        if (f)
            fprintf(f, "%s\n  {\"size\": %ld, \"native_s\": %.9e, \"hier_s\": %.9e}", s ? "," : "",
                    size, t[0], t[1]);
    }
    if (f) {
        fprintf(f, "\n], \"verified\": %s}\n", ok ? "true" : "false");
        fclose(f);
    }
    free(buf);
    free(out);
    MPI_Finalize();
    return ok ? 0 : 1;
}
