/*
 * Helpers of the endpoint-pool benchmarks (endpoints, ga_dgemm, stencil):
 * policy arguments, the blocked target, memory and resource reports and
 * the end of a run.
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

/* A comma-separated list split in place into out[0..max) (items beyond
 * max are dropped): how many. */
int bench_split_list(char *list, char **out, int max);

/* The same for a list of policy arguments (bench_policy_split): how many,
 * or 0 after "name: bad policy 'x'" when one is not valid. */
int bench_policy_list(const char *name, char *list, char **out, int max);

/* The end of a pool benchmark: rank 0 writes its JSON with write_json (to
 * json, or stdout when NULL; bench_json_open), then seg is freed and weft
 * and MPI are finalised.  A failure is reported as "name: call: error"
 * and aborts. */
void bench_pool_finish(const char *name, weft_ctx_t ctx, weft_seg_t seg, const char *json,
                       void (*write_json)(FILE *f));

#endif
