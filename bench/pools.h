/*
 * Helpers of the endpoint-pool benchmarks (endpoints, ga_dgemm, stencil):
 * policy arguments, the blocked target, memory and resource reports, the
 * median of the rounds and the JSON output.
 */
#ifndef WEFT_BENCH_POOLS_H
#define WEFT_BENCH_POOLS_H

#include <weft.h>
#include <stdio.h>

/* A policy argument: a weft_ep_policy_parse name or "procs" (one
 * single-threaded process per thread), optionally with "+caller" (threads
 * that share a worker take weft_ep_lock instead of UCX's lock).  0 when
 * valid; name gets the policy without the suffix. */
int bench_policy_split(const char *spec, char *name, size_t len, int *caller);

/* Whether spec is the "procs" baseline. */
int bench_is_procs(const char *spec);

/* Ranks that do not initiate: wait, sleeping between checks (they must not
 * take the cores from the initiators), until every initiator called
 * bench_done(); progresses ctx's default endpoint now and then. */
void bench_block_until_done(weft_ctx_t ctx);
void bench_done(void);

/* For the programs on T+1 ranks (T initiating threads in one rank, one
 * blocked target): 0 when args_ok and there are threads + 1 ranks; else
 * usage() and the reason on rank 0, MPI_Finalize, and 2 (the exit status). */
int bench_pool_need_ranks(const char *name, int args_ok, int threads, int rank, int nranks,
                          void (*usage)(void));

/* weft initialised on the UCX path (the direct path off: the policies
 * govern the UCX path); *init_rss gets the RSS weft_init added.  A failure
 * is reported as "name: call: error" and aborts. */
weft_ctx_t bench_pool_init(const char *name, size_t *init_rss);

/* Resident set size of this process, in bytes (/proc/self/statm). */
size_t bench_rss(void);

/* What a measurement used, as one JSON object. */
struct bench_resources {
    long long          contexts, workers, endpoints;
    unsigned           max_threads_per_worker, locked_workers, locks_per_call;
    unsigned long long locks;         /* taken in the last round */
    int                locks_counted; /* 1: counted (caller locks), 0: derived */
    double             rss_bytes;     /* initiators' growth: weft_init (+ the pool) */
};

/* Fill r from a pool of rank's (initiators' init RSS given), counting the
 * weft context's own UCX context and home worker; calls is the number of
 * fast-path calls made, to derive UCX's lock count. */
void bench_resources_of_pool(weft_ep_pool_t pool, const char *policy, int caller,
                             size_t init_rss, unsigned long long calls,
                             struct bench_resources *r);

/* The same for nprocs single-threaded processes (the baseline). */
void bench_resources_of_procs(int nprocs, double rss_sum, struct bench_resources *r);

void bench_resources_json(FILE *f, const struct bench_resources *r);

/* Rounds a pool benchmark measures at most. */
#define BENCH_POOL_MAX_ROUNDS 32

/* The median of v[0..n), 1 <= n <= BENCH_POOL_MAX_ROUNDS (v is not changed). */
double bench_pool_median(const double *v, int n);

/* Where the JSON goes: path opened for writing (MPI_Abort, with the reason,
 * when it cannot be), or stdout when path is NULL; closed (not stdout) by
 * bench_pool_json_close. */
FILE *bench_pool_json_open(const char *path);
void bench_pool_json_close(FILE *f);

#endif
