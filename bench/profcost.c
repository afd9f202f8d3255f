/*
 * weft_bench_profcost -- the cost of compiled-in trace points with
 * profiling off: the 8-byte put injection rate of libweft (points in, none
 * selected) beside libweft_noprof (no points), both loaded into this one
 * process (dlopen, each with its own context).
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
 * does, a weft_progress every Q puts, in chunks of 64 batches that
 * alternate between the libraries (the order rotating) inside one loop, so
 * that both see the same machine: on a shared or virtual machine the
 * speed of a core changes by up to 2x from one millisecond to the next,
 * which rounds of one library after the other turn into a false ratio.
 * For each library but libweft, a round's ratio is the median over its
 * chunk groups of (time of its chunk / time of libweft's chunk), its
 * figure per library the median ns per put over its chunks.  Rank 1
 * progresses every library
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
    const char *label;    /* its key in the JSON */
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
    weft_status_t (*barrier)(weft_ctx_t);
    weft_status_t (*finalize)(weft_ctx_t);
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg;
    uint64_t done;       /* rounds begun; rank 0 puts it at offset 1024 when done */
    uint64_t *flag;      /* this rank's word at offset 1024 */
    double ns[MAX_ROUNDS];
    double time_ratio[MAX_ROUNDS];  /* its chunk's time / libweft's */
};

static int rank, nranks;
#define MAX_LIBS 4
static double chunks[MAX_LIBS][MAX_CHUNKS], group_ratio[MAX_CHUNKS];

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
    *(void **)&l->barrier = sym(l, "weft_barrier");
    *(void **)&l->finalize = sym(l, "weft_finalize");
    void *local;
    CALL(l, l->config_init(&cfg));
    cfg.check = check;
    CALL(l, l->init(&cfg, &l->ctx));
    CALL(l, l->ep_default(l->ctx, &l->ep));
    CALL(l, l->seg_alloc(l->ctx, 4096, &l->seg, &local));
    l->flag = (uint64_t *)((char *)local + 1024);
}

/* The upper median of v[0..n), which it sorts. */
static double median(double *v, long n)
{
    bench_sort(v, n);
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
 * ns per put of each library and, for each but libs[0], the median over
 * chunk groups of its chunk's time over libs[0]'s. */
static void round_group(struct lib *libs, int nlibs, long n, long q, int r)
{
    long m = 64 * q, groups = n / m < 1 ? 1 : n / m, sent[MAX_LIBS] = {0};

    if (groups > MAX_CHUNKS)
        groups = MAX_CHUNKS;
    for (int i = 0; i < nlibs; i++) {
        CALL(&libs[i], libs[i].barrier(libs[i].ctx));
        libs[i].done++;
    }
    if (rank == 0) {
        for (long k = 0; k < groups; k++)
            for (int j = 0; j < nlibs; j++) {
                /* rotate the order: no library always runs first */
                int i = (int)((j + k) % nlibs);

                chunks[i][k] = 1e9 * chunk(&libs[i], m, q, &sent[i]) / (double)m;
            }
        for (int i = 1; i < nlibs; i++) {
            for (long k = 0; k < groups; k++)
                group_ratio[k] = chunks[i][k] / chunks[0][k];
            libs[i].time_ratio[r] = median(group_ratio, groups);
        }
        for (int i = 0; i < nlibs; i++) {
            CALL(&libs[i], libs[i].flush(libs[i].ep));
            CALL(&libs[i], libs[i].put(libs[i].ep, 1, libs[i].seg, 1024, &libs[i].done, 8));
            libs[i].ns[r] = median(chunks[i], groups);
        }
    } else {
        /* over UCX a put may need the target's progress: serve them all */
        for (;;) {
            unsigned events = 0, n1;
            int waiting = 0;

            for (int i = 0; i < nlibs; i++) {
                waiting |= __atomic_load_n(libs[i].flag, __ATOMIC_ACQUIRE) < libs[i].done;
                CALL(&libs[i], libs[i].progress(libs[i].ep, &n1));
                events += n1;
            }
            if (!waiting)
                break;
            if (events == 0)
                sched_yield();  /* leave the core to rank 0 when idle */
        }
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: mpirun -np 2 weft_bench_profcost LIBWEFT LIBWEFT_NOPROF [--json FILE] "
                    "[--iters N] [--rounds R] [--batch Q] [--check] [--base LIBWEFT_BASE]\n");
}

int main(int argc, char **argv)
{
    struct lib libs[MAX_LIBS];
    const char *json = NULL, *base = NULL;
    int check = 0, nlibs = 2;
    long iters = 1000000, rounds = 10, batch = 16;
    int ok = argc >= 3;
    FILE *f;
    const struct bench_opt opts[] = {
        {"--json", .text = &json},      {"--base", .text = &base},      {"--check", .flag = &check},
        {"--iters", .value = &iters},   {"--rounds", .value = &rounds}, {"--batch", .value = &batch},
        {NULL},
    };

    bench_mpi_start(&argc, &argv, &rank, &nranks);
    /* the options follow the two libraries */
    ok = ok && bench_parse_opts(argc - 2, argv + 2, opts) == 0;
    if (bench_need_two("weft_bench_profcost", ok && rounds <= MAX_ROUNDS, rank, nranks, usage) != 0)
        return 2;
    memset(libs, 0, sizeof(libs));
    load(&libs[0], argv[1], "prof", 0);
    load(&libs[1], argv[2], "noprof", 0);
    if (check)
        load(&libs[nlibs++], argv[1], "check", 1);
    if (base)
        load(&libs[nlibs++], base, "base", 0);
    round_group(libs, nlibs, iters / 4 + 1, batch, 0);  /* warm-up */
    for (long r = 0; r < rounds; r++)
        round_group(libs, nlibs, iters, batch, (int)r);
    if (rank == 0) {
        f = bench_json_open("weft_bench_profcost", json);
        fprintf(f, "{\"benchmark\": \"profcost\", \"iters\": %ld, \"batch\": %ld, \"ns_per_put\": {",
                iters, batch);
        for (int i = 0; i < nlibs; i++) {
            fprintf(f, "%s\"%s\": ", i ? ", " : "", libs[i].label);
            bench_put_list(f, "%.4f", libs[i].ns, (int)rounds);
        }
        fprintf(f, "}, \"time_over_prof\": {");
        for (int i = 1; i < nlibs; i++) {
            fprintf(f, "%s\"%s\": ", i > 1 ? ", " : "", libs[i].label);
            bench_put_list(f, "%.5f", libs[i].time_ratio, (int)rounds);
        }
        fprintf(f, "}}\n");
        bench_json_close(f);
    }
    for (int i = nlibs - 1; i >= 0; i--) {
        CALL(&libs[i], libs[i].seg_free(libs[i].ctx, libs[i].seg));
        CALL(&libs[i], libs[i].finalize(libs[i].ctx));
    }
    MPI_Finalize();
    return 0;
}
