/* Helpers of the endpoint-pool benchmarks (pools.h). */
#include "pools.h"
#include "common.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int bench_policy_split(const char *spec, char *name, size_t len, int *caller)
{
    weft_ep_policy_t p;
    const char *plus = strchr(spec, '+');
    size_t n = plus ? (size_t)(plus - spec) : strlen(spec);

    if (n >= len || (plus && strcmp(plus, "+caller") != 0))
        return -1;
    memcpy(name, spec, n);
    name[n] = '\0';
    *caller = plus != NULL;
    if (strcmp(name, "procs") == 0)
        return *caller ? -1 : 0;
    return weft_ep_policy_parse(name, &p) == WEFT_OK ? 0 : -1;
}

int bench_is_procs(const char *spec)
{
    return strcmp(spec, "procs") == 0;
}

void bench_block_until_done(weft_ctx_t ctx)
{
    MPI_Request req;
    int done = 0;
    weft_ep_t ep;

    if (weft_ep_default(ctx, &ep) != WEFT_OK)
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    while (!done) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        weft_progress(ep, NULL);
        if (!done)
            usleep(1000);
    }
}

void bench_done(void)
{
    MPI_Request req;

    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
}

int bench_pool_need_ranks(const char *name, int args_ok, int threads, int rank, int nranks,
                          void (*usage)(void))
{
    if (args_ok && nranks == threads + 1)
        return 0;
    if (rank == 0) {
        usage();
        if (args_ok)
            fprintf(stderr, "%s: --threads %d needs %d ranks, got %d\n", name, threads, threads + 1,
                    nranks);
    }
    MPI_Finalize();
    return 2;
}

weft_ctx_t bench_pool_init(const char *name, size_t *init_rss)
{
    weft_config_t cfg;
    weft_ctx_t ctx = NULL;
    size_t rss0;

    BENCH_OK(name, weft_config_init(&cfg));
    cfg.shm = 0;
    rss0 = bench_rss();
    BENCH_OK(name, weft_init(&cfg, &ctx));
    *init_rss = bench_rss() - rss0;
    return ctx;
}

size_t bench_rss(void)
{
    unsigned long size, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");

    if (f) {
        if (fscanf(f, "%lu %lu", &size, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

void bench_resources_of_pool(weft_ep_pool_t pool, const char *policy, int caller,
                             size_t init_rss, unsigned long long calls,
                             struct bench_resources *r)
{
    weft_resources_t res;
    weft_ep_policy_t p;

    memset(r, 0, sizeof(*r));
    if (weft_ep_pool_resources(pool, &res) != WEFT_OK || weft_ep_policy_parse(policy, &p) != WEFT_OK)
        MPI_Abort(MPI_COMM_WORLD, 2);
    /* the weft context's own UCX context and home worker exist too */
    r->contexts = (p.kind == WEFT_EP_PROCESS ? res.ucx_contexts : 0) + 1;
    r->workers = res.workers + 1;
    r->endpoints = res.endpoints;
    r->max_threads_per_worker = res.max_threads_per_worker;
    r->locked_workers = res.locked_workers;
    r->locks_per_call = res.locks_per_call;
    /* UCX's locks are invisible to weft: derived from the calls made;
     * weft_ep_lock's are counted */
    r->locks_counted = caller;
    r->locks = caller ? res.caller_locks : res.locks_per_call * calls;
    r->rss_bytes = (double)(init_rss + res.rss_bytes);
}

void bench_resources_of_procs(int nprocs, double rss_sum, struct bench_resources *r)
{
    memset(r, 0, sizeof(*r));
    r->contexts = nprocs;
    r->workers = nprocs;
    r->endpoints = nprocs;    /* each its connection to the target */
    r->max_threads_per_worker = 1;
    r->rss_bytes = rss_sum;
}

void bench_resources_json(FILE *f, const struct bench_resources *r)
{
    fprintf(f, "{\"ucx_contexts\": %lld, \"workers\": %lld, \"endpoints\": %lld, "
               "\"max_threads_per_worker\": %u, \"locked_workers\": %u, \"locks_per_put\": %u, "
               "\"locks_taken\": %llu, \"locks_counted\": %s, \"rss_bytes\": %.0f}",
            r->contexts, r->workers, r->endpoints, r->max_threads_per_worker, r->locked_workers,
            r->locks_per_call, r->locks, r->locks_counted ? "true" : "false", r->rss_bytes);
}

int bench_split_list(char *list, char **out, int max)
{
    int n = 0;

    for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok && n < max;
         tok = strtok_r(NULL, ",", &save))
        out[n++] = tok;
    return n;
}

int bench_policy_list(const char *name, char *list, char **out, int max)
{
    int n = bench_split_list(list, out, max);

    for (int i = 0; i < n; i++) {
        char policy[64];
        int caller;

        if (bench_policy_split(out[i], policy, sizeof(policy), &caller) != 0) {
            fprintf(stderr, "%s: bad policy '%s'\n", name, out[i]);
            return 0;
        }
    }
    return n;
}

void bench_pool_finish(const char *name, weft_ctx_t ctx, weft_seg_t seg, const char *json,
                       void (*write_json)(FILE *f))
{
    int rank;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        FILE *f = bench_json_open(name, json);

        write_json(f);
        bench_json_close(f);
    }
    bench_finish(name, ctx, seg);
}
