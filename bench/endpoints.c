/*
 * weft_bench_endpoints -- message rate against the resources each endpoint
 * sharing policy creates (after perftest, as in the scalable-endpoints
 * paper's §IV).
 *
 *   mpirun -np T+1 weft_bench_endpoints --threads T [--policies LIST]
 *          [--variants LIST] [--batch P] [--every Q] [--secs S] [--rounds R]
 *          [--json FILE]
 *
 * Always through UCX (the direct path is switched off: the policies govern
 * UCX workers).  Rank T is the target: it blocks (sleeps between checks of an MPI
 * request) while the others measure.  Every thread drives its endpoint
 * with 8-byte puts to its own cache line at the target: P puts between two
 * progress calls (the Postlist analogue), one of every Q tracked with an
 * event, the others implicit (the Unsignaled analogue).
 *
 * Policies: every weft_ep_policy_parse name, run as T threads of rank 0
 * (ranks 1..T-1 idle, blocked), plus "procs": T single-threaded ranks
 * 0..T-1, each on its own weft context's default endpoint -- the "MPI
 * everywhere" baseline, measured in the same run.  Add "+caller" to a
 * policy to have threads that share a worker take weft_ep_lock once per
 * batch instead of UCX's lock on every call.
 *
 * Variants: "default" (P, Q as given), "nobatch" (P = 1), "nounsig"
 * (Q = 1), "sharedbuf" (the threads' source words share one cache line
 * instead of weft_ep_pool_buffer's private lines).
 *
 * Rounds interleave every (variant, policy), so drift hits all alike; the
 * JSON keeps each round's aggregate rate and the resources measured.
 */
#define _GNU_SOURCE
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
#define MAX_ITEMS   32
#define EV_RING     64
#define LINE        64

struct opts {
    int threads, batch, every, rounds;
    double secs;
    const char *json;
    char *policies[MAX_ITEMS], *variants[MAX_ITEMS];
    int npolicies, nvariants;
};

struct result {
    const char *policy, *variant;
    int batch, every, caller_lock;
    double rate[BENCH_POOL_MAX_ROUNDS];
    int n;
    struct bench_resources res; /* of the last round */
};

static struct opts o;
static int rank, nranks;
static weft_ctx_t ctx;
static weft_seg_t seg;
static size_t init_rss;
static struct result results[MAX_ITEMS * MAX_ITEMS];
static int nresults;
static uint64_t shared_words[MAX_THREADS] __attribute__((aligned(LINE)));
static char transport[256] = "unknown";  /* rank 0's to the target, for the JSON */

#define NAME "weft_bench_endpoints"
#define OK(call) BENCH_OK(NAME, call)

/* ---- one thread's put loop ------------------------------------------------ */

struct driver {
    weft_ep_t ep;
    uint64_t *src;
    size_t off;             /* its line at the target */
    int batch, every, caller_lock;
    pthread_barrier_t *start;
    double secs, rate;
    unsigned long long puts, progress_calls;
};

static void *drive(void *arg)
{
    struct driver *d = arg;
    weft_event_t ring[EV_RING];
    unsigned head = 0, tail = 0;
    unsigned long long n = 0, progress = 0;
    double t0, t1, deadline;
    int target = nranks - 1;

    if (d->start)
        pthread_barrier_wait(d->start);
    t0 = bench_now();
    deadline = t0 + d->secs;
    do {
        if (d->caller_lock)
            OK(weft_ep_lock(d->ep));
        for (int j = 0; j < d->batch; j++, n++) {
            *d->src = n;
            if (n % (unsigned)d->every == (unsigned)d->every - 1) {
                if (tail - head == EV_RING)
                    OK(weft_wait(&ring[head++ % EV_RING]));
                OK(weft_put_nb(d->ep, target, seg, d->off, d->src, 8, &ring[tail % EV_RING]));
                if (ring[tail % EV_RING] != WEFT_EVENT_NULL)
                    tail++;
            } else {
                OK(weft_put_nbi(d->ep, target, seg, d->off, d->src, 8));
            }
        }
        OK(weft_progress(d->ep, NULL));
        progress++;
        while (head != tail) {
            int done;

            OK(weft_test(&ring[head % EV_RING], &done));
            if (!done)
                break;
            head++;
        }
        if (d->caller_lock)
            OK(weft_ep_unlock(d->ep));
    } while (bench_now() < deadline);
    if (d->caller_lock)
        OK(weft_ep_lock(d->ep));
    while (head != tail)
        OK(weft_wait(&ring[head++ % EV_RING]));
    OK(weft_flush(d->ep));
    if (d->caller_lock)
        OK(weft_ep_unlock(d->ep));
    t1 = bench_now();
    d->puts = n;
    d->progress_calls = progress;
    d->rate = (double)n / (t1 - t0);
    return NULL;
}

/* ---- one measurement ----------------------------------------------------- */

static struct result *result_of(const char *policy, const char *variant)
{
    for (int i = 0; i < nresults; i++)
        if (!strcmp(results[i].policy, policy) && !strcmp(results[i].variant, variant))
            return &results[i];
    results[nresults].policy = policy;
    results[nresults].variant = variant;
    return &results[nresults++];
}

static void measure_procs(struct result *r)
{
    struct driver d;
    weft_ep_t ep;
    double rate = 0, sum = 0, rss = (double)init_rss, rss_sum = 0;
    static uint64_t own_word __attribute__((aligned(LINE)));

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank < o.threads) {
        OK(weft_ep_default(ctx, &ep));
        memset(&d, 0, sizeof(d));
        d.ep = ep;
        d.src = &own_word;
        d.off = (size_t)rank * LINE;
        d.batch = r->batch;
        d.every = r->every;
        d.secs = o.secs;
        drive(&d);
        rate = d.rate;
        bench_done();
    } else {
        bench_block_until_done(ctx);
        rss = 0;
    }
    MPI_Reduce(&rate, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&rss, &rss_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        r->rate[r->n++] = sum;
        bench_resources_of_procs(o.threads, rss_sum, &r->res);
    }
}

static void measure_pool(struct result *r, const char *policy, int sharedbuf)
{
    weft_ep_pool_params_t pp;
    weft_ep_pool_t pool;
    struct driver d[MAX_THREADS];
    pthread_t th[MAX_THREADS];
    pthread_barrier_t start;
    unsigned long long puts = 0, calls = 0;
    double sum = 0;

    memset(&pp, 0, sizeof(pp));
    pp.nthreads = o.threads;
    pp.policy = policy;
    pp.lock = r->caller_lock ? WEFT_EP_LOCK_CALLER : WEFT_EP_LOCK_UCX;
    pp.buf_bytes = 8;
    MPI_Barrier(MPI_COMM_WORLD);
    /* every rank makes the pool (its destruction is collective); only rank
     * 0 drives it */
    OK(weft_ep_pool_create(ctx, &pp, &pool));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        pthread_barrier_init(&start, NULL, (unsigned)o.threads);
        for (int t = 0; t < o.threads; t++) {
            memset(&d[t], 0, sizeof(d[t]));
            OK(weft_ep_get(pool, t, &d[t].ep));
            if (sharedbuf)
                d[t].src = &shared_words[t % (LINE / 8)];
            else
                OK(weft_ep_pool_buffer(pool, t, (void **)&d[t].src, NULL));
            d[t].off = (size_t)t * LINE;
            d[t].batch = r->batch;
            d[t].every = r->every;
            d[t].caller_lock = r->caller_lock;
            d[t].secs = o.secs;
            d[t].start = &start;
            if (pthread_create(&th[t], NULL, drive, &d[t]) != 0)
                bench_fail(NAME, "pthread_create", WEFT_ERR_NO_MEMORY);
        }
        for (int t = 0; t < o.threads; t++) {
            pthread_join(th[t], NULL);
            sum += d[t].rate;
            puts += d[t].puts;
            calls += d[t].progress_calls;
        }
        pthread_barrier_destroy(&start);
        bench_done();
        r->rate[r->n++] = sum;
        bench_resources_of_pool(pool, policy, r->caller_lock, init_rss, puts + calls, &r->res);
    } else {
        bench_block_until_done(ctx);
    }
    OK(weft_ep_pool_destroy(pool));
}

/* ---- output -------------------------------------------------------------- */

static void write_json(FILE *f)
{
    fprintf(f, "{\n  \"threads\": %d, \"batch\": %d, \"every\": %d, \"secs\": %g, "
               "\"rounds\": %d, \"transport\": \"%s\",\n  \"results\": [\n",
            o.threads, o.batch, o.every, o.secs, o.rounds, transport);
    for (int i = 0; i < nresults; i++) {
        const struct result *r = &results[i];

        fprintf(f, "    {\"policy\": \"%s\", \"variant\": \"%s\", \"batch\": %d, \"every\": %d, "
                   "\"caller_lock\": %d, \"rate_median\": %.1f, \"rates\": ",
                r->policy, r->variant, r->batch, r->every, r->caller_lock,
                bench_median_kept(r->rate, NULL, r->n));
        bench_put_list(f, "%.1f", r->rate, r->n);
        fprintf(f, ",\n     \"resources\": ");
        bench_resources_json(f, &r->res);
        fprintf(f, "}%s\n", i + 1 < nresults ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
}

/* ---- arguments ----------------------------------------------------------- */

static void usage(void)
{
    fprintf(stderr,
            "usage: mpirun -np T+1 weft_bench_endpoints --threads T [--policies LIST]\n"
            "       [--variants LIST] [--batch P] [--every Q] [--secs S] [--rounds R] [--json FILE]\n"
            "  LIST: comma-separated; policies: procs and weft_ep_policy_parse names, each\n"
            "  optionally with +caller; variants: default, nobatch, nounsig, sharedbuf\n");
}

static int parse(int argc, char **argv)
{
    static char pdef[] = "procs,process,dedicated-2x,dedicated,paired,single";
    static char vdef[] = "default";
    char *pl = pdef, *vl = vdef;
    const char *pgiven = NULL, *vgiven = NULL;
    long threads = 1, batch = 32, every = 64, rounds = 3;
    const struct bench_opt opts[] = {
        {"--threads", .value = &threads}, {"--policies", .text = &pgiven},
        {"--variants", .text = &vgiven},  {"--batch", .value = &batch},
        {"--every", .value = &every},     {"--secs", .real = &o.secs},
        {"--rounds", .value = &rounds},   {"--json", .text = &o.json},
        {NULL},
    };

    o.secs = 0.3;
    if (bench_parse_opts(argc, argv, opts) != 0 || threads > MAX_THREADS || batch > INT_MAX ||
        every > INT_MAX || rounds > BENCH_POOL_MAX_ROUNDS)
        return 0;
    o.threads = (int)threads;
    o.batch = (int)batch;
    o.every = (int)every;
    o.rounds = (int)rounds;
    /* the lists are cut up in place: argv's strings are the program's */
    if (pgiven != NULL)
        pl = (char *)pgiven;
    if (vgiven != NULL)
        vl = (char *)vgiven;
    o.npolicies = bench_policy_list(NAME, pl, o.policies, MAX_ITEMS);
    o.nvariants = bench_split_list(vl, o.variants, MAX_ITEMS);
    for (int i = 0; i < o.nvariants; i++)
        if (strcmp(o.variants[i], "default") && strcmp(o.variants[i], "nobatch") &&
            strcmp(o.variants[i], "nounsig") && strcmp(o.variants[i], "sharedbuf"))
            return 0;
    return o.threads >= 1 && o.threads <= MAX_THREADS && o.batch >= 1 && o.every >= 1 &&
           o.secs > 0 && o.rounds >= 1 && o.rounds <= BENCH_POOL_MAX_ROUNDS && o.npolicies > 0 &&
           o.nvariants > 0;
}

int main(int argc, char **argv)
{
    int ok;

    bench_mpi_start(&argc, &argv, &rank, &nranks);
    ok = parse(argc, argv);
    if (bench_pool_need_ranks(NAME, ok, o.threads, rank, nranks, usage) != 0)
        return 2;
    ctx = bench_pool_init(NAME, &init_rss);
    OK(weft_seg_alloc(ctx, (size_t)MAX_THREADS * LINE, &seg, NULL));
    if (rank == 0) {
        weft_ep_t ep;

        OK(weft_ep_default(ctx, &ep));
        bench_transport_of(ep, nranks - 1, seg, transport, sizeof(transport));
    }

    for (int round = 0; round < o.rounds; round++)
        for (int v = 0; v < o.nvariants; v++)
            for (int p = 0; p < o.npolicies; p++) {
                const char *var = o.variants[v];
                char name[64];
                struct result *r = result_of(o.policies[p], var);
                int caller;

                bench_policy_split(o.policies[p], name, sizeof(name), &caller);
                r->caller_lock = caller;
                r->batch = strcmp(var, "nobatch") ? o.batch : 1;
                r->every = strcmp(var, "nounsig") ? o.every : 1;
                /* processes cannot share a source line: for them "sharedbuf"
                 * measures the same as "default" */
                if (bench_is_procs(name))
                    measure_procs(r);
                else
                    measure_pool(r, name, !strcmp(var, "sharedbuf"));
                if (rank == 0)
                    fprintf(stderr, "round %d %-10s %-16s %8.2f M puts/s\n", round, var,
                            o.policies[p], r->rate[r->n - 1] / 1e6);
            }

    bench_pool_finish(NAME, ctx, seg, o.json, write_json);
    return 0;
}
