/*
 * weft_bench_ga_dgemm -- the global-array DGEMM kernel of the
 * scalable-endpoints paper (§VII) on endpoint pools.
 *
 *   mpirun -np T+1 weft_bench_ga_dgemm --threads T [--policies LIST]
 *          [--n N] [--tile B] [--rounds R] [--json FILE]
 *
 * Rank 0 is the server: A, B and C (N x N doubles, stored tile by tile so
 * a tile is one contiguous get) live in its segment, and it blocks while
 * the clients work.  A client thread takes the next task (a tile of C) with
 * an atomic fetch-and-add on a counter at the server, gets the row of A
 * tiles and the column of B tiles one pair at a time into its own buffers,
 * multiplies them with OpenBLAS (cblas_dgemm, one BLAS thread) and puts the
 * finished C tile back.  Each C tile has one owner, so the put replaces the
 * paper's accumulate (weft has no floating-point accumulate).
 *
 * Policies as in weft_bench_endpoints: pool policies run T threads on rank
 * 1 (ranks 2..T idle, blocked), "procs" runs ranks 1..T with one thread
 * each.  The server checks C against its own serial cblas_dgemm after
 * every run: the inputs are small multiples of 1/8, so every product and
 * sum is exact and the check is bitwise.  Through UCX only (the direct path
 * is switched off).
 */
#include "common.h"
#include "pools.h"
#include <weft.h>

#include <cblas.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 256
#define MAX_ITEMS   32
#define COUNTER     0     /* offset of the task counter in the segment */
#define MATRICES    64    /* offset of A, then B, then C */

struct opts {
    int threads, n, tile, rounds;
    const char *json;
    char *policies[MAX_ITEMS];
    int npolicies;
};

struct result {
    const char *policy;
    double gflops[BENCH_POOL_MAX_ROUNDS];
    int n, verified;
    struct bench_resources res;
};

static struct opts o;
static int rank, nranks;
static weft_ctx_t ctx;
static weft_seg_t seg;
static char *base;
static size_t init_rss;
static struct result results[MAX_ITEMS];

#define NAME "weft_bench_ga_dgemm"
#define OK(call) BENCH_OK(NAME, call)

static int nt(void) { return o.n / o.tile; }
static size_t tile_bytes(void) { return (size_t)o.tile * (size_t)o.tile * sizeof(double); }

/* Offset of tile (i, j) of matrix m (0 = A, 1 = B, 2 = C) in the segment. */
static size_t tile_off(int m, int i, int j)
{
    return MATRICES + ((size_t)m * (size_t)nt() * (size_t)nt() + (size_t)i * (size_t)nt() + (size_t)j) *
                      tile_bytes();
}

/* Element (r, c) of A or B: a small multiple of 1/8, so products and sums
 * of N of them are exact in double precision. */
static double element(int m, int r, int c)
{
    return (double)(((r * 7 + c * 3 + m * 5) % 17) - 8) / 8.0;
}

/* ---- the client threads --------------------------------------------------- */

struct client {
    weft_ep_t ep;
    double *a, *b, *c;        /* its own three buffers */
    int caller_lock;
    unsigned long long calls; /* fast-path calls made (for derived lock counts) */
};

static void *client_main(void *arg)
{
    struct client *cl = arg;
    int ntiles = nt(), b = o.tile;
    uint64_t task;

    for (;;) {
        weft_event_t ev[2];

        if (cl->caller_lock)
            OK(weft_ep_lock(cl->ep));
        OK(weft_atomic_fetch_add(cl->ep, 0, seg, COUNTER, 1, &task));
        if (cl->caller_lock)
            OK(weft_ep_unlock(cl->ep));
        cl->calls++;
        if (task >= (uint64_t)ntiles * (uint64_t)ntiles)
            break;
        int i = (int)(task / (uint64_t)ntiles), j = (int)(task % (uint64_t)ntiles);

        memset(cl->c, 0, tile_bytes());
        for (int k = 0; k < ntiles; k++) {
            if (cl->caller_lock)
                OK(weft_ep_lock(cl->ep));
            OK(weft_get_nb(cl->ep, cl->a, 0, seg, tile_off(0, i, k), tile_bytes(), &ev[0]));
            OK(weft_get_nb(cl->ep, cl->b, 0, seg, tile_off(1, k, j), tile_bytes(), &ev[1]));
            OK(weft_wait_all(ev, 2));
            if (cl->caller_lock)
                OK(weft_ep_unlock(cl->ep));
            cl->calls += 2;
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, b, b, b, 1.0, cl->a, b, cl->b,
                        b, 1.0, cl->c, b);
        }
        if (cl->caller_lock)
            OK(weft_ep_lock(cl->ep));
        OK(weft_put(cl->ep, 0, seg, tile_off(2, i, j), cl->c, tile_bytes()));
        if (cl->caller_lock)
            OK(weft_ep_unlock(cl->ep));
        cl->calls++;
    }
    return NULL;
}

static double *aligned_doubles(size_t bytes)
{
    void *p = NULL;

    if (posix_memalign(&p, 64, bytes) != 0)
        bench_fail(NAME, "posix_memalign", WEFT_ERR_NO_MEMORY);
    return p;
}

/* ---- the server -------------------------------------------------------------- */

static void server_reset(void)
{
    int N = o.n, b = o.tile;

    *(uint64_t *)(base + COUNTER) = 0;
    for (int m = 0; m < 2; m++)
        for (int r = 0; r < N; r++)
            for (int c = 0; c < N; c++)
                ((double *)(base + tile_off(m, r / b, c / b)))[(r % b) * b + c % b] = element(m, r, c);
    memset(base + tile_off(2, 0, 0), 0, (size_t)nt() * (size_t)nt() * tile_bytes());
}

/* C against a serial dgemm of the same matrices; 1 when equal bit for bit. */
static int server_verify(void)
{
    int N = o.n, b = o.tile, ok = 1;
    double *a = aligned_doubles(sizeof(double) * (size_t)N * (size_t)N);
    double *bb = aligned_doubles(sizeof(double) * (size_t)N * (size_t)N);
    double *c = aligned_doubles(sizeof(double) * (size_t)N * (size_t)N);

    for (int r = 0; r < N; r++)
        for (int col = 0; col < N; col++) {
            a[(size_t)r * N + col] = element(0, r, col);
            bb[(size_t)r * N + col] = element(1, r, col);
        }
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0, a, N, bb, N, 0.0, c, N);
    for (int r = 0; r < N && ok; r++)
        for (int col = 0; col < N && ok; col++)
            ok = ((double *)(base + tile_off(2, r / b, col / b)))[(r % b) * b + col % b] ==
                 c[(size_t)r * N + col];
    free(a);
    free(bb);
    free(c);
    return ok;
}

/* ---- one run ------------------------------------------------------------------ */

static void run(struct result *r, const char *spec)
{
    char name[64];
    int caller, procs, verified = 0;
    weft_ep_pool_t pool = NULL;
    struct client cl[MAX_THREADS];
    pthread_t th[MAX_THREADS];
    double t0, secs = 0, rss = 0, rss_sum = 0;
    unsigned long long calls = 0;

    bench_policy_split(spec, name, sizeof(name), &caller);
    procs = bench_is_procs(name);
    if (rank == 0)
        server_reset();
    if (!procs) {
        weft_ep_pool_params_t pp;

        memset(&pp, 0, sizeof(pp));
        pp.nthreads = o.threads;
        pp.policy = name;
        pp.lock = caller ? WEFT_EP_LOCK_CALLER : WEFT_EP_LOCK_UCX;
        pp.buf_bytes = 3 * tile_bytes();   /* A, B and C tiles, private lines */
        OK(weft_ep_pool_create(ctx, &pp, &pool));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = bench_now();
    if (procs && rank >= 1) {
        memset(&cl[0], 0, sizeof(cl[0]));
        OK(weft_ep_default(ctx, &cl[0].ep));
        cl[0].a = aligned_doubles(3 * tile_bytes());
        cl[0].b = cl[0].a + (size_t)o.tile * o.tile;
        cl[0].c = cl[0].b + (size_t)o.tile * o.tile;
        client_main(&cl[0]);
        OK(weft_flush(cl[0].ep));
        free(cl[0].a);
        secs = bench_now() - t0;
        rss = (double)init_rss;
        bench_done();
    } else if (!procs && rank == 1) {
        for (int t = 0; t < o.threads; t++) {
            memset(&cl[t], 0, sizeof(cl[t]));
            OK(weft_ep_get(pool, t, &cl[t].ep));
            OK(weft_ep_pool_buffer(pool, t, (void **)&cl[t].a, NULL));
            cl[t].b = cl[t].a + (size_t)o.tile * o.tile;
            cl[t].c = cl[t].b + (size_t)o.tile * o.tile;
            cl[t].caller_lock = caller;
            if (pthread_create(&th[t], NULL, client_main, &cl[t]) != 0)
                bench_fail(NAME, "pthread_create", WEFT_ERR_NO_MEMORY);
        }
        for (int t = 0; t < o.threads; t++) {
            pthread_join(th[t], NULL);
            calls += cl[t].calls;
        }
        secs = bench_now() - t0;
        bench_done();
        bench_resources_of_pool(pool, name, caller, init_rss, calls, &r->res);
    } else {
        bench_block_until_done(ctx);
    }
    /* the longest client time is the run's time */
    MPI_Allreduce(MPI_IN_PLACE, &secs, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Reduce(&rss, &rss_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (pool)
        OK(weft_ep_pool_destroy(pool));
    if (rank == 0) {
        verified = server_verify();
        r->gflops[r->n++] = 2.0 * (double)o.n * o.n * o.n / secs / 1e9;
        r->verified = (r->n == 1 || r->verified) && verified;
        if (procs)
            bench_resources_of_procs(o.threads, rss_sum, &r->res);
    }
    /* rank 1 measured the pool: its resources go to rank 0 for the report */
    if (!procs) {
        if (rank == 1)
            MPI_Send(&r->res, sizeof(r->res), MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        if (rank == 0)
            MPI_Recv(&r->res, sizeof(r->res), MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- output and arguments ---------------------------------------------------- */

static void write_json(FILE *f)
{
    fprintf(f, "{\n  \"threads\": %d, \"n\": %d, \"tile\": %d, \"rounds\": %d,\n  \"results\": [\n",
            o.threads, o.n, o.tile, o.rounds);
    for (int i = 0; i < o.npolicies; i++) {
        const struct result *r = &results[i];

        fprintf(f, "    {\"policy\": \"%s\", \"verified\": %s, \"gflops_median\": %.3f, \"gflops\": ",
                r->policy, r->verified ? "true" : "false", bench_median_kept(r->gflops, NULL, r->n));
        bench_put_list(f, "%.3f", r->gflops, r->n);
        fprintf(f, ",\n     \"resources\": ");
        bench_resources_json(f, &r->res);
        fprintf(f, "}%s\n", i + 1 < o.npolicies ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
}

static void usage(void)
{
    fprintf(stderr, "usage: mpirun -np T+1 weft_bench_ga_dgemm --threads T [--policies LIST] [--n N]\n"
                    "       [--tile B] [--rounds R] [--json FILE]   (B divides N)\n");
}

static int parse(int argc, char **argv)
{
    static char pdef[] = "procs,process,dedicated,paired,single";
    char *pl = pdef;
    const char *pgiven = NULL;
    long threads = 1, n = 512, tile = 64, rounds = 3;
    const struct bench_opt opts[] = {
        {"--threads", .value = &threads}, {"--policies", .text = &pgiven},
        {"--n", .value = &n},             {"--tile", .value = &tile},
        {"--rounds", .value = &rounds},   {"--json", .text = &o.json},
        {NULL},
    };

    if (bench_parse_opts(argc, argv, opts) != 0 || threads > MAX_THREADS || n > 8192 ||
        tile > n || n % tile != 0 || rounds > BENCH_POOL_MAX_ROUNDS)
        return 0;
    o.threads = (int)threads;
    o.n = (int)n;
    o.tile = (int)tile;
    o.rounds = (int)rounds;
    /* the list is cut up in place: argv's strings are the program's */
    if (pgiven != NULL)
        pl = (char *)pgiven;
    o.npolicies = bench_policy_list(NAME, pl, o.policies, MAX_ITEMS);
    return o.npolicies > 0;
}

int main(int argc, char **argv)
{
    int ok;

    bench_mpi_start(&argc, &argv, &rank, &nranks);
    ok = parse(argc, argv);
    if (bench_pool_need_ranks(NAME, ok, o.threads, rank, nranks, usage) != 0)
        return 2;
    /* one BLAS thread per client thread: the threads are the parallelism */
    openblas_set_num_threads(1);
    ctx = bench_pool_init(NAME, &init_rss);
    OK(weft_seg_alloc(ctx, tile_off(3, 0, 0), &seg, (void **)&base));
    for (int i = 0; i < o.npolicies; i++)
        results[i].policy = o.policies[i];
    for (int round = 0; round < o.rounds; round++)
        for (int p = 0; p < o.npolicies; p++) {
            run(&results[p], o.policies[p]);
            if (rank == 0)
                fprintf(stderr, "round %d %-16s %7.2f GFLOP/s %s\n", round, o.policies[p],
                        results[p].gflops[results[p].n - 1],
                        results[p].verified ? "verified" : "WRONG RESULT");
        }
    bench_pool_finish(NAME, ctx, seg, o.json, write_json);
    for (int i = 0; rank == 0 && i < o.npolicies; i++)
        if (!results[i].verified)
            return 1;
    return 0;
}
