/*
 * weft_bench_stencil -- the 5-point stencil of the scalable-endpoints paper
 * (§VII, Fig. 13) on endpoint pools.
 *
 *   mpirun -np R weft_bench_stencil --threads T [--policies LIST] [--rows N]
 *          [--cols M] [--iters I] [--rounds K] [--private-completion] [--json FILE]
 *
 * The N x M grid is split by rows over the R x T workers (rank r, thread
 * t is worker r*T + t).  Every thread has one endpoint per neighbour
 * (eps_per_thread = 2: 0 towards the worker above, 1 below) and, unless
 * --private-completion, one completion shared by the two (both on one
 * worker).  Each iteration a worker sends its first and last rows into its
 * neighbours' halos with put-with-signal, waits for its own two halos'
 * signals, and applies the 5-point average into its other buffer.  Rank 0
 * then compares the whole grid with a serial run of the same iterations
 * (same operations in the same order: equal bit for bit).
 *
 * Run it for every split of the cores into ranks x threads.  Through UCX
 * only (the direct path is switched off), also between threads of a rank.
 */
#include "common.h"
#include "pools.h"
#include <weft.h>

#include <mpi.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 256
#define MAX_ITEMS   16
#define LINE        64
enum { FROM_ABOVE = 0, FROM_BELOW = 1 };

struct opts {
    int threads, rows, cols, iters, rounds, private_cq;
    const char *json;
    char *policies[MAX_ITEMS];
    int npolicies;
};

struct result {
    const char *policy;
    double msgs[BENCH_POOL_MAX_ROUNDS], secs[BENCH_POOL_MAX_ROUNDS];
    int n, verified;
    double res[5];   /* summed over ranks: contexts, workers, endpoints, rss, locked workers */
};

static struct opts o;
static int rank, nranks, nworkers, h;
static weft_ctx_t ctx;
static weft_seg_t seg;
static char *base;
static size_t init_rss;
static struct result results[MAX_ITEMS];

#define NAME "weft_bench_stencil"
#define OK(call) BENCH_OK(NAME, call)

/* segment layout: the threads' signal lines, then each thread's two buffers
 * of (h + 2) rows (halo, h own rows, halo) */
static size_t sig_off(int t, int dir) { return (size_t)t * LINE + (size_t)dir * 8; }
static size_t buf_bytes(void) { return (size_t)(h + 2) * (size_t)o.cols * sizeof(double); }
static size_t buf_off(int t, int b)
{
    return (size_t)o.threads * LINE + ((size_t)t * 2 + (size_t)b) * buf_bytes();
}
static size_t row_off(int t, int b, int row) { return buf_off(t, b) + (size_t)row * o.cols * sizeof(double); }
static double *row_of(int t, int b, int row) { return (double *)(base + row_off(t, b, row)); }

/* Initial value of global row i (0 = the fixed top boundary, rows + 1 the
 * fixed bottom one), column j; columns 0 and cols - 1 stay fixed too. */
static double initial(int i, int j)
{
    if (i == 0)
        return 1.0;
    if (i == o.rows + 1)
        return 0.0;
    return (double)((i * 31 + j * 17) % 13) / 13.0;
}

static void relax(double *out, const double *up, const double *mid, const double *down)
{
    out[0] = mid[0];
    for (int j = 1; j < o.cols - 1; j++)
        out[j] = 0.25 * (up[j] + down[j] + mid[j - 1] + mid[j + 1]);
    out[o.cols - 1] = mid[o.cols - 1];
}

/* ---- a worker ------------------------------------------------------------------ */

struct worker {
    int t;
    weft_ep_t ep[2];         /* towards the worker above, below */
    pthread_barrier_t *start;
    double secs;
};

static void *worker_main(void *arg)
{
    struct worker *wk = arg;
    int t = wk->t, w = rank * o.threads + t;
    int up = w - 1, down = w + 1;
    double t0;

    if (wk->start)
        pthread_barrier_wait(wk->start);
    t0 = bench_now();
    for (int it = 0; it < o.iters; it++) {
        int cur = it % 2, nxt = 1 - cur;
        weft_event_t ev[2] = {WEFT_EVENT_NULL, WEFT_EVENT_NULL};

        /* my first row into the bottom halo of the worker above, my last
         * into the top halo of the one below, each with its signal */
        if (up >= 0)
            OK(weft_put_signal_nb(wk->ep[0], up / o.threads, seg, row_off(up % o.threads, cur, h + 1),
                                  row_of(t, cur, 1), (size_t)o.cols * sizeof(double), seg,
                                  sig_off(up % o.threads, FROM_BELOW), 1, &ev[0]));
        if (down < nworkers)
            OK(weft_put_signal_nb(wk->ep[1], down / o.threads, seg, row_off(down % o.threads, cur, 0),
                                  row_of(t, cur, h), (size_t)o.cols * sizeof(double), seg,
                                  sig_off(down % o.threads, FROM_ABOVE), 1, &ev[1]));
        if (up >= 0)
            OK(weft_signal_wait_until(wk->ep[0], seg, sig_off(t, FROM_ABOVE), (uint64_t)it + 1, NULL));
        if (down < nworkers)
            OK(weft_signal_wait_until(wk->ep[1], seg, sig_off(t, FROM_BELOW), (uint64_t)it + 1, NULL));
        OK(weft_wait_all(ev, 2));
        for (int i = 1; i <= h; i++)
            relax(row_of(t, nxt, i), row_of(t, cur, i - 1), row_of(t, cur, i), row_of(t, cur, i + 1));
    }
    wk->secs = bench_now() - t0;
    return NULL;
}

static void init_blocks(void)
{
    for (int t = 0; t < o.threads; t++) {
        int first = (rank * o.threads + t) * h;   /* global row of my row 1, minus 1 */

        for (int b = 0; b < 2; b++)
            for (int i = 0; i <= h + 1; i++)
                for (int j = 0; j < o.cols; j++)
                    row_of(t, b, i)[j] = initial(first + i, j);
        *(uint64_t *)(base + sig_off(t, FROM_ABOVE)) = 0;
        *(uint64_t *)(base + sig_off(t, FROM_BELOW)) = 0;
    }
}

/* Gather the grid on rank 0 and compare it with a serial run. */
static int verify(void)
{
    size_t rowlen = (size_t)o.cols, mine = (size_t)o.threads * (size_t)h * rowlen;
    double *part = malloc(mine * sizeof(double)), *all = NULL, *a = NULL, *b = NULL;
    int ok = 1, fin = o.iters % 2;

    for (int t = 0; t < o.threads; t++)
        memcpy(part + (size_t)t * h * rowlen, row_of(t, fin, 1), (size_t)h * rowlen * sizeof(double));
    if (rank == 0)
        all = malloc(mine * (size_t)nranks * sizeof(double));
    MPI_Gather(part, (int)mine, MPI_DOUBLE, all, (int)mine, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        a = malloc((size_t)(o.rows + 2) * rowlen * sizeof(double));
        b = malloc((size_t)(o.rows + 2) * rowlen * sizeof(double));
        for (int i = 0; i < o.rows + 2; i++)
            for (int j = 0; j < o.cols; j++)
                a[(size_t)i * rowlen + j] = b[(size_t)i * rowlen + j] = initial(i, j);
        for (int it = 0; it < o.iters; it++) {
            double *cur = it % 2 ? b : a, *nxt = it % 2 ? a : b;

            for (int i = 1; i <= o.rows; i++)
                relax(nxt + (size_t)i * rowlen, cur + (size_t)(i - 1) * rowlen, cur + (size_t)i * rowlen,
                      cur + (size_t)(i + 1) * rowlen);
        }
        ok = memcmp(all, (o.iters % 2 ? b : a) + rowlen, (size_t)o.rows * rowlen * sizeof(double)) == 0;
        free(a);
        free(b);
        free(all);
    }
    free(part);
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return ok;
}

static void run(struct result *r, const char *policy)
{
    weft_ep_pool_params_t pp;
    weft_ep_pool_t pool;
    weft_resources_t res;
    struct worker wk[MAX_THREADS];
    pthread_t th[MAX_THREADS];
    pthread_barrier_t start;
    double secs = 0, mine[5], sum[5];
    int ok;

    memset(&pp, 0, sizeof(pp));
    pp.nthreads = o.threads;
    pp.policy = policy;
    pp.eps_per_thread = 2;
    pp.shared_completion = !o.private_cq;
    OK(weft_ep_pool_create(ctx, &pp, &pool));
    init_blocks();
    pthread_barrier_init(&start, NULL, (unsigned)o.threads);
    for (int t = 0; t < o.threads; t++) {
        wk[t].t = t;
        wk[t].start = &start;
    }
    /* each thread gets its endpoints itself (they are its own) */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int t = 0; t < o.threads; t++) {
        OK(weft_ep_get_nth(pool, t, 0, &wk[t].ep[0]));
        OK(weft_ep_get_nth(pool, t, 1, &wk[t].ep[1]));
        if (pthread_create(&th[t], NULL, worker_main, &wk[t]) != 0)
            bench_fail(NAME, "pthread_create", WEFT_ERR_NO_MEMORY);
    }
    for (int t = 0; t < o.threads; t++) {
        pthread_join(th[t], NULL);
        if (wk[t].secs > secs)
            secs = wk[t].secs;
    }
    pthread_barrier_destroy(&start);
    OK(weft_barrier(ctx));
    OK(weft_ep_pool_resources(pool, &res));
    mine[0] = res.ucx_contexts;
    mine[1] = res.workers;
    mine[2] = res.endpoints;
    mine[3] = (double)(init_rss + res.rss_bytes);
    mine[4] = res.locked_workers;
    MPI_Reduce(mine, sum, 5, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &secs, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    ok = verify();
    OK(weft_ep_pool_destroy(pool));
    if (rank == 0) {
        r->secs[r->n] = secs;
        /* halo messages: two per pair of neighbouring workers per iteration */
        r->msgs[r->n++] = 2.0 * (nworkers - 1) * o.iters / secs;
        r->verified = (r->n == 1 || r->verified) && ok;
        memcpy(r->res, sum, sizeof(sum));
    }
}

/* ---- output and arguments ----------------------------------------------------- */

static void write_json(FILE *f)
{
    fprintf(f, "{\n  \"ranks\": %d, \"threads\": %d, \"rows\": %d, \"cols\": %d, \"iters\": %d, "
               "\"rounds\": %d, \"shared_completion\": %s,\n  \"results\": [\n",
            nranks, o.threads, o.rows, o.cols, o.iters, o.rounds, o.private_cq ? "false" : "true");
    for (int i = 0; i < o.npolicies; i++) {
        const struct result *r = &results[i];

        fprintf(f, "    {\"policy\": \"%s\", \"verified\": %s, \"msgs_per_s_median\": %.1f, "
                   "\"secs_median\": %.6f, \"msgs_per_s\": ",
                r->policy, r->verified ? "true" : "false", bench_median_kept(r->msgs, NULL, r->n),
                bench_median_kept(r->secs, NULL, r->n));
        bench_put_list(f, "%.1f", r->msgs, r->n);
        fprintf(f, ",\n     \"resources\": {\"ucx_contexts\": %.0f, \"workers\": %.0f, "
                   "\"endpoints\": %.0f, \"rss_bytes\": %.0f, \"locked_workers\": %.0f}}%s\n",
                r->res[0] + (strcmp(r->policy, "process") == 0 ? nranks : 0), r->res[1] + nranks,
                r->res[2], r->res[3], r->res[4], i + 1 < o.npolicies ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
}

static void usage(void)
{
    fprintf(stderr, "usage: mpirun -np R weft_bench_stencil --threads T [--policies LIST] [--rows N]\n"
                    "       [--cols M] [--iters I] [--rounds K] [--private-completion] [--json FILE]\n"
                    "  N divisible by R*T; policies: weft_ep_policy_parse names\n");
}

static int parse(int argc, char **argv)
{
    static char pdef[] = "process,dedicated-2x,dedicated,paired,single";
    char *pl = pdef;
    const char *pgiven = NULL;
    long threads = 1, rows = 512, cols = 512, iters = 200, rounds = 3;
    const struct bench_opt opts[] = {
        {"--threads", .value = &threads}, {"--policies", .text = &pgiven},
        {"--rows", .value = &rows},       {"--cols", .value = &cols},
        {"--iters", .value = &iters},     {"--rounds", .value = &rounds},
        {"--json", .text = &o.json},      {"--private-completion", .flag = &o.private_cq},
        {NULL},
    };

    if (bench_parse_opts(argc, argv, opts) != 0 || threads > MAX_THREADS || rows > INT_MAX ||
        cols > INT_MAX || iters > INT_MAX || rounds > BENCH_POOL_MAX_ROUNDS)
        return 0;
    o.threads = (int)threads;
    o.rows = (int)rows;
    o.cols = (int)cols;
    o.iters = (int)iters;
    o.rounds = (int)rounds;
    /* the list is cut up in place: argv's strings are the program's */
    if (pgiven != NULL)
        pl = (char *)pgiven;
    o.npolicies = bench_split_list(pl, o.policies, MAX_ITEMS);
    for (int i = 0; i < o.npolicies; i++) {
        weft_ep_policy_t p;

        if (weft_ep_policy_parse(o.policies[i], &p) != WEFT_OK) {
            fprintf(stderr, NAME ": %s\n", weft_last_error());
            return 0;
        }
    }
    return o.cols >= 3 && o.npolicies > 0;
}

int main(int argc, char **argv)
{
    int ok;

    bench_mpi_start(&argc, &argv, &rank, &nranks);
    ok = parse(argc, argv);
    nworkers = nranks * o.threads;
    if (!ok || o.rows % nworkers != 0) {
        if (rank == 0) {
            usage();
            if (ok)
                fprintf(stderr, NAME ": %d rows do not split over %d x %d workers\n",
                        o.rows, nranks, o.threads);
        }
        MPI_Finalize();
        return 2;
    }
    h = o.rows / nworkers;
    ctx = bench_pool_init(NAME, &init_rss);
    OK(weft_seg_alloc(ctx, buf_off(o.threads, 0), &seg, (void **)&base));
    for (int i = 0; i < o.npolicies; i++)
        results[i].policy = o.policies[i];
    for (int round = 0; round < o.rounds; round++)
        for (int p = 0; p < o.npolicies; p++) {
            run(&results[p], o.policies[p]);
            if (rank == 0)
                fprintf(stderr, "round %d %dx%d %-14s %9.0f halo msgs/s %s\n", round, nranks, o.threads,
                        o.policies[p], results[p].msgs[results[p].n - 1],
                        results[p].verified ? "verified" : "WRONG RESULT");
        }
    bench_pool_finish(NAME, ctx, seg, o.json, write_json);
    for (int i = 0; rank == 0 && i < o.npolicies; i++)
        if (!results[i].verified)
            return 1;
    return 0;
}
