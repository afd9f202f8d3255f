/*
 * weft_bench_profcost -- the cost of compiled-in trace points with
 * profiling off: the 8-byte put injection rate of libweft (points in, none
 * selected) beside libweft_noprof (no points), both loaded into this one
 * process (dlopen, each with its own context), in interleaved rounds.
 *
 *   mpirun -np 2 weft_bench_profcost LIBWEFT LIBWEFT_NOPROF [--json FILE]
 *                                    [--iters N] [--rounds R] [--batch Q]
 *                                    [--check] [--base LIBWEFT_BASE]
 *
 * --check adds a third context of LIBWEFT with WEFT_CHECK=1 (its expensive
 * checks on); --base a libweft built from other sources (an earlier
 * commit, to see what a change costs), with its own context.
 *
 * Rank 0 puts to rank 1 as weft_bench_breakdown's injection benchmark
 * does: a weft_progress every Q puts, timed by chunks of 64 batches; a
 * round's figure is the median ns per put over its chunks.  Both libraries
 * are called through function pointers, so the calls cost the same.
 */
#include "common.h"
#include <weft.h>

#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROUNDS 64
#define MAX_CHUNKS 65536

struct lib {
    const char *name;
    const char *label;    /* its key in the JSON */
    int         check;    /* initialised with WEFT_CHECK=1 */
    void *handle;
    weft_status_t (*config_init)(weft_config_t *);
    weft_status_t (*init)(const weft_config_t *, weft_ctx_t *);
    weft_status_t (*ep_default)(weft_ctx_t, weft_ep_t *);
    weft_status_t (*seg_alloc)(weft_ctx_t, size_t, weft_seg_t *, void **);
    weft_status_t (*seg_free)(weft_ctx_t, weft_seg_t);
    weft_status_t (*put_nbi)(weft_ep_t, int, weft_seg_t, size_t, const void *, size_t);
    weft_status_t (*put)(weft_ep_t, int, weft_seg_t, size_t, const void *, size_t);
    weft_status_t (*progress)(weft_ep_t, unsigned *);
    weft_status_t (*flush)(weft_ep_t);
    weft_status_t (*signal_wait_until)(weft_ep_t, weft_seg_t, size_t, uint64_t, uint64_t *);
    weft_status_t (*barrier)(weft_ctx_t);
    weft_status_t (*finalize)(weft_ctx_t);
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg;
    uint64_t done;
    double ns[MAX_ROUNDS];
};

static int rank, nranks;
static double chunks[MAX_CHUNKS];

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

static void load(struct lib *l, const char *path, const char *label, int check)
{
    weft_config_t cfg;

    l->name = path;
    l->label = label;
    l->check = check;
    if ((l->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL)
        fail(path, dlerror());
    *(void **)&l->config_init = sym(l, "weft_config_init");
    *(void **)&l->init = sym(l, "weft_init");
    *(void **)&l->ep_default = sym(l, "weft_ep_default");
    *(void **)&l->seg_alloc = sym(l, "weft_seg_alloc");
    *(void **)&l->seg_free = sym(l, "weft_seg_free");
    *(void **)&l->put_nbi = sym(l, "weft_put_nbi");
    *(void **)&l->put = sym(l, "weft_put");
    *(void **)&l->progress = sym(l, "weft_progress");
    *(void **)&l->flush = sym(l, "weft_flush");
    *(void **)&l->signal_wait_until = sym(l, "weft_signal_wait_until");
    *(void **)&l->barrier = sym(l, "weft_barrier");
    *(void **)&l->finalize = sym(l, "weft_finalize");
    void *local;
    CALL(l, l->config_init(&cfg));
    cfg.check = check;
    CALL(l, l->init(&cfg, &l->ctx));
    CALL(l, l->ep_default(l->ctx, &l->ep));
    CALL(l, l->seg_alloc(l->ctx, 4096, &l->seg, &local));
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* n puts, a progress every q; rank 0's median ns per put over chunks. */
static double inject(struct lib *l, long n, long q)
{
    uint64_t src = 42;
    long chunk = 64 * q, k = 0, to_progress = q, to_chunk = chunk;
    double last, now, ns = 0;

    CALL(l, l->barrier(l->ctx));
    l->done++;
    if (rank == 0) {
        last = bench_now();
        for (long i = 0; i < n; i++) {
            CALL(l, l->put_nbi(l->ep, 1, l->seg, (size_t)(i & 63) * 8, &src, 8));
            if (--to_progress == 0) {
                to_progress = q;
                CALL(l, l->progress(l->ep, NULL));
            }
            if (--to_chunk == 0 && k < MAX_CHUNKS) {
                to_chunk = chunk;
                now = bench_now();
                chunks[k++] = 1e9 * (now - last) / (double)chunk;
                last = now;
            }
        }
        CALL(l, l->flush(l->ep));
        qsort(chunks, (size_t)k, sizeof(double), cmp_double);
        ns = k ? chunks[k / 2] : 0;
        CALL(l, l->put(l->ep, 1, l->seg, 1024, &l->done, 8));
    } else {
        CALL(l, l->signal_wait_until(l->ep, l->seg, 1024, l->done, NULL));
    }
    return ns;
}

static void usage(void)
{
    fprintf(stderr, "usage: mpirun -np 2 weft_bench_profcost LIBWEFT LIBWEFT_NOPROF [--json FILE] "
                    "[--iters N] [--rounds R] [--batch Q] [--check] [--base LIBWEFT_BASE]\n");
}

int main(int argc, char **argv)
{
    struct lib libs[4];
    const char *json = NULL, *base = NULL;
    int check = 0, nlibs = 2;
    long iters = 1000000, rounds = 10, batch = 16;
    int ok = argc >= 3;
    FILE *f = stdout;

    bench_mpi_start(&argc, &argv, &rank, &nranks);
    for (int i = 3; ok && i < argc; i++) {
        long *dst = NULL;
        if (!strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
        else if (!strcmp(argv[i], "--base") && i + 1 < argc) base = argv[++i];
        else if (!strcmp(argv[i], "--check")) check = 1;
        else if (!strcmp(argv[i], "--iters")) dst = &iters;
        else if (!strcmp(argv[i], "--rounds")) dst = &rounds;
        else if (!strcmp(argv[i], "--batch")) dst = &batch;
        else ok = 0;
        if (dst) {
            char *end;
            ok = i + 1 < argc && (*dst = strtol(argv[++i], &end, 10)) > 0 && *end == '\0';
        }
    }
    if (bench_need_two("weft_bench_profcost", ok && rounds <= MAX_ROUNDS, rank, nranks, usage) != 0)
        return 2;
    memset(libs, 0, sizeof(libs));
    load(&libs[0], argv[1], "prof", 0);
    load(&libs[1], argv[2], "noprof", 0);
    if (check)
        load(&libs[nlibs++], argv[1], "check", 1);
    if (base)
        load(&libs[nlibs++], base, "base", 0);
    for (int i = 0; i < nlibs; i++)
        inject(&libs[i], iters / 4 + 1, batch);  /* warm-up */
    for (long r = 0; r < rounds; r++)
        for (int k = 0; k < nlibs; k++) {
            /* rotate the order so that none always runs first */
            struct lib *l = &libs[(k + r) % nlibs];
            l->ns[r] = inject(l, iters, batch);
        }
    if (rank == 0) {
        if (json && (f = fopen(json, "w")) == NULL)
            fail(json, "cannot write");
        fprintf(f, "{\"benchmark\": \"profcost\", \"iters\": %ld, \"batch\": %ld, \"ns_per_put\": {", iters,
                batch);
        for (int i = 0; i < nlibs; i++) {
            fprintf(f, "%s\"%s\": [", i ? ", " : "", libs[i].label);
            for (long r = 0; r < rounds; r++)
                fprintf(f, "%s%.4f", r ? ", " : "", libs[i].ns[r]);
            fprintf(f, "]");
        }
        fprintf(f, "}}\n");
        if (f != stdout)
            fclose(f);
    }
    for (int i = nlibs - 1; i >= 0; i--) {
        CALL(&libs[i], libs[i].seg_free(libs[i].ctx, libs[i].seg));
        CALL(&libs[i], libs[i].finalize(libs[i].ctx));
    }
    MPI_Finalize();
    return 0;
}
