/*
 * weft_bench_profcost -- the cost of compiled-in trace points with
 * profiling off: the 8-byte put injection rate of libweft (points in, none
 * selected) beside libweft_noprof (no points), both loaded into this one
 * process (dlopen, each with its own context).
 *
 *   mpirun -np 2 weft_bench_profcost LIBWEFT LIBWEFT_NOPROF [--json FILE]
 *                                    [--iters N] [--rounds R] [--batch Q]
 *
 * Rank 0 puts to rank 1 as weft_bench_breakdown's injection benchmark
 * does, a weft_progress every Q puts, in chunks of 64 batches that
 * alternate between the two libraries (ABBA order) inside one loop, so
 * that both see the same machine: on a shared or virtual machine the
 * speed of a core changes by up to 2x from one millisecond to the next,
 * which rounds of one library after the other turn into a false ratio.
 * A round's ratio is the median over its chunk pairs of (time of the
 * noprof chunk / time of the libweft chunk), its figure per library the
 * median ns per put over its chunks.  Rank 1 progresses both libraries
 * until rank 0 says it is done.  Both libraries are called through
 * function pointers, so the calls cost the same.
 */
#include "common.h"
#include <weft.h>

#include <dlfcn.h>
#include <sched.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROUNDS 64
#define MAX_CHUNKS 65536

struct lib {
    const char *name;
    void *handle;
    weft_status_t (*init)(const weft_config_t *, weft_ctx_t *);
    weft_status_t (*ep_default)(weft_ctx_t, weft_ep_t *);
    weft_status_t (*seg_alloc)(weft_ctx_t, size_t, weft_seg_t *, void **);
    weft_status_t (*seg_free)(weft_ctx_t, weft_seg_t);
    weft_status_t (*put_nbi)(weft_ep_t, int, weft_seg_t, size_t, const void *, size_t);
    weft_status_t (*put)(weft_ep_t, int, weft_seg_t, size_t, const void *, size_t);
    weft_status_t (*progress)(weft_ep_t, unsigned *);
    weft_status_t (*flush)(weft_ep_t);
    weft_status_t (*barrier)(weft_ctx_t);
    weft_status_t (*finalize)(weft_ctx_t);
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg;
    uint64_t done;       /* rounds begun; rank 0 puts it at offset 1024 when done */
    uint64_t *flag;      /* this rank's word at offset 1024 */
    double ns[MAX_ROUNDS];
};

static int rank, nranks;
static double chunks[2][MAX_CHUNKS], pair_ratio[MAX_CHUNKS];

static void fail(const char *what, const char *why)
{
    fprintf(stderr, "weft_bench_profcost: %s: %s\n", what, why);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

#define CALL(lib, call) do { if ((call) != WEFT_OK) fail((lib)->name, #call); } while (0)

static void *sym(struct lib *l, const char *name)
{
    void *p = dlsym(l->handle, name);

    if (p == NULL)
        fail(l->name, dlerror());
    return p;
}

static void load(struct lib *l, const char *path)
{
    l->name = path;
    if ((l->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL)
        fail(path, dlerror());
    *(void **)&l->init = sym(l, "weft_init");
    *(void **)&l->ep_default = sym(l, "weft_ep_default");
    *(void **)&l->seg_alloc = sym(l, "weft_seg_alloc");
    *(void **)&l->seg_free = sym(l, "weft_seg_free");
    *(void **)&l->put_nbi = sym(l, "weft_put_nbi");
    *(void **)&l->put = sym(l, "weft_put");
    *(void **)&l->progress = sym(l, "weft_progress");
    *(void **)&l->flush = sym(l, "weft_flush");
    *(void **)&l->barrier = sym(l, "weft_barrier");
    *(void **)&l->finalize = sym(l, "weft_finalize");
    void *local;
    CALL(l, l->init(NULL, &l->ctx));
    CALL(l, l->ep_default(l->ctx, &l->ep));
    CALL(l, l->seg_alloc(l->ctx, 4096, &l->seg, &local));
    l->flag = (uint64_t *)((char *)local + 1024);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n), which it sorts. */
static double median(double *v, long n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return v[n / 2];
}

/* One chunk of m puts to rank 1 (m a multiple of q), a progress every q;
 * seconds taken.  *next is the offset counter of the library's puts. */
static double chunk(struct lib *l, long m, long q, long *next)
{
    uint64_t src = 42;
    long k = *next;
    double t0 = bench_now();

    for (long b = 0; b < m / q; b++) {
        for (long i = 0; i < q; i++, k++)
            CALL(l, l->put_nbi(l->ep, 1, l->seg, (size_t)(k & 63) * 8, &src, 8));
        CALL(l, l->progress(l->ep, NULL));
    }
    *next = k;
    return bench_now() - t0;
}

/* One round of about n puts per library; rank 0 fills the round's median
 * ns per put of each library and returns the median pair ratio. */
static double round_pair(struct lib *libs, long n, long q, int r)
{
    long m = 64 * q, pairs = n / m < 1 ? 1 : n / m, sent[2] = {0, 0};
    double ratio = 0;

    if (pairs > MAX_CHUNKS)
        pairs = MAX_CHUNKS;
    for (int i = 0; i < 2; i++) {
        CALL(&libs[i], libs[i].barrier(libs[i].ctx));
        libs[i].done++;
    }
    if (rank == 0) {
        for (long k = 0; k < pairs; k++) {
            /* ABBA: neither library always runs first */
            int first = (int)(k & 1);
            double t[2];

            t[first] = chunk(&libs[first], m, q, &sent[first]);
            t[1 - first] = chunk(&libs[1 - first], m, q, &sent[1 - first]);
            chunks[0][k] = 1e9 * t[0] / (double)m;
            chunks[1][k] = 1e9 * t[1] / (double)m;
            pair_ratio[k] = t[1] / t[0];
        }
        for (int i = 0; i < 2; i++) {
            CALL(&libs[i], libs[i].flush(libs[i].ep));
            CALL(&libs[i], libs[i].put(libs[i].ep, 1, libs[i].seg, 1024, &libs[i].done, 8));
            libs[i].ns[r] = median(chunks[i], pairs);
        }
        ratio = median(pair_ratio, pairs);
    } else {
        /* over UCX a put may need the target's progress: serve both */
        while (__atomic_load_n(libs[0].flag, __ATOMIC_ACQUIRE) < libs[0].done ||
               __atomic_load_n(libs[1].flag, __ATOMIC_ACQUIRE) < libs[1].done) {
            unsigned n0, n1;

            CALL(&libs[0], libs[0].progress(libs[0].ep, &n0));
            CALL(&libs[1], libs[1].progress(libs[1].ep, &n1));
            if (n0 + n1 == 0)
                sched_yield();  /* leave the core to rank 0 when idle */
        }
    }
    return ratio;
}

static void usage(void)
{
    fprintf(stderr, "usage: mpirun -np 2 weft_bench_profcost LIBWEFT LIBWEFT_NOPROF [--json FILE] "
                    "[--iters N] [--rounds R] [--batch Q]\n");
}

int main(int argc, char **argv)
{
    struct lib libs[2];
    const char *json = NULL;
    long iters = 1000000, rounds = 10, batch = 16;
    double ratios[MAX_ROUNDS];
    int ok = argc >= 3;
    FILE *f = stdout;

    bench_mpi_start(&argc, &argv, &rank, &nranks);
    for (int i = 3; ok && i < argc; i++) {
        if (!strcmp(argv[i], "--json") && i + 1 < argc)
            json = argv[++i];
        else if (!strcmp(argv[i], "--iters"))
            ok = bench_arg_positive(argc, argv, &i, &iters) == 0;
        else if (!strcmp(argv[i], "--rounds"))
            ok = bench_arg_positive(argc, argv, &i, &rounds) == 0;
        else if (!strcmp(argv[i], "--batch"))
            ok = bench_arg_positive(argc, argv, &i, &batch) == 0;
        else
            ok = 0;
    }
    if (bench_need_two("weft_bench_profcost", ok && rounds <= MAX_ROUNDS, rank, nranks, usage) != 0)
        return 2;
    memset(libs, 0, sizeof(libs));
    load(&libs[0], argv[1]);
    load(&libs[1], argv[2]);
    round_pair(libs, iters / 4 + 1, batch, 0);  /* warm-up */
    for (long r = 0; r < rounds; r++)
        ratios[r] = round_pair(libs, iters, batch, (int)r);
    if (rank == 0) {
        if (json && (f = fopen(json, "w")) == NULL)
            fail(json, "cannot write");
        fprintf(f, "{\"benchmark\": \"profcost\", \"iters\": %ld, \"batch\": %ld, \"ns_per_put\": {",
                iters, batch);
        for (int i = 0; i < 2; i++) {
            fprintf(f, "%s\"%s\": [", i ? ", " : "", i ? "noprof" : "prof");
            for (long r = 0; r < rounds; r++)
                fprintf(f, "%s%.4f", r ? ", " : "", libs[i].ns[r]);
            fprintf(f, "]");
        }
        fprintf(f, "}, \"pair_ratio\": [");
        for (long r = 0; r < rounds; r++)
            fprintf(f, "%s%.5f", r ? ", " : "", ratios[r]);
        fprintf(f, "]}\n");
        if (f != stdout)
            fclose(f);
    }
    for (int i = 1; i >= 0; i--) {
        CALL(&libs[i], libs[i].seg_free(libs[i].ctx, libs[i].seg));
        CALL(&libs[i], libs[i].finalize(libs[i].ctx));
    }
    MPI_Finalize();
    return 0;
}
