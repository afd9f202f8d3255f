/*
 * Helpers shared by the benchmarks: start-up, arguments, statistics, the
 * JSON output, a clock and the name of the UCX transport weft uses to
 * reach a peer.
 */
#ifndef WEFT_BENCH_COMMON_H
#define WEFT_BENCH_COMMON_H

#include <weft.h>
#include <stddef.h>
#include <stdio.h>

/* A weft call of benchmark `name` that failed: "name: what: error (last
 * error)" on stderr, then MPI_Abort (status 2). */
void bench_fail(const char *name, const char *what, weft_status_t st);

/* Make a weft call; bench_fail when it does not return WEFT_OK.  The check
 * is inline, so that a timed loop pays a compare and nothing else. */
#define BENCH_OK(name, call)                                                                       \
    do {                                                                                           \
        weft_status_t s_ = (call);                                                                 \
        if (s_ != WEFT_OK)                                                                         \
            bench_fail(name, #call, s_);                                                           \
    } while (0)

/* Start MPI (thread-multiple) and learn this rank and the number of ranks. */
void bench_mpi_start(int *argc, char ***argv, int *rank, int *nranks);

/* Benchmarks run on exactly 2 ranks with valid arguments: when not,
 * rank 0 prints usage (and the rank count), MPI is finalised and the
 * exit status (2) is returned; 0 means go on. */
int bench_need_two(const char *name, int args_ok, int rank, int nranks, void (*usage)(void));

/* One option of a benchmark's command line, --name or -x: followed by a positive
 * integer (into *value), by a positive number (*real), by a word (*text:
 * a file name, a list), or alone (*flag set to 1); exactly one of the four
 * is set. */
struct bench_opt {
    const char *name;
    long *value;
    const char **text;
    int *flag;
    double *real;
};
#define BENCH_MAX_OPTS 32

/* argv[1..argc) against opts[], which ends with a NULL name (at most
 * BENCH_MAX_OPTS options), scanned by getopt_long: "--name value" or
 * "--name=value", an unambiguous prefix of a name too; "-x value" or
 * "-xvalue" for a one-letter option.  What is not given
 * keeps its value.  0, or -1 for an unknown option, a missing value, a
 * value that is not a positive integer (or number), or a word that is not
 * an option; then nothing is stored, and rank 0 says why on stderr
 * (bench_opts_error keeps it). */
int bench_parse_opts(int argc, char **argv, const struct bench_opt *opts);

/* Why the last bench_parse_opts call refused its line ("" after one that
 * did not). */
const char *bench_opts_error(void);

/* The options of the two breakdown benchmarks (weft_bench_breakdown,
 * weft_bench_breakdown_direct): --json FILE, --iters N, --lat-iters N,
 * --batch Q, --rounds R, with their defaults (200000, 20000, 16, 5). */
struct bench_breakdown_opts {
    const char *json;
    long iters, lat_iters, batch, rounds;
};

/* One figure of a breakdown benchmark per round, and how both write it
 * into their JSON. */
#define BENCH_BREAKDOWN_MAX_ROUNDS 32
struct bench_series {
    double v[BENCH_BREAKDOWN_MAX_ROUNDS];
    int n;
};

/* Append v (dropped once the series is full). */
void bench_series_push(struct bench_series *s, double v);

/* A breakdown's injection figures over rounds: per kind of chunk (at most
 * BENCH_MAX_KINDS), its figure, its chunks' time and its timed regions
 * per put, the share of the cycles kept at the median speed, and the
 * share of chunks in which no rank waited for a core (bench_calm), and the
 * cycles the pass ran (bench_calm_enough). */
#define BENCH_MAX_KINDS 16
struct bench_injection {
    struct bench_series fig[BENCH_MAX_KINDS], chunk[BENCH_MAX_KINDS], regions[BENCH_MAX_KINDS];
    struct bench_series kept, calm, cycles;
};

/* Append one round's figures of nkinds kinds. */
void bench_injection_push(struct bench_injection *in, int nkinds, const double *fig,
                          const double *chunk_ns, const double *regions, double kept, double calm,
                          double cycles);

/* "name": v with three decimals, then sep. */
void bench_put_value(FILE *f, const char *name, double v, const char *sep);

/* [v0, v1, ...]: v[0..n), each printed with fmt ("%.3f"). */
void bench_put_list(FILE *f, const char *fmt, const double *v, int n);

/* "name": [v0, v1, ...], every round's value. */
void bench_put_rounds(FILE *f, const char *name, const struct bench_series *s);

/* A figure timed by `regions` timed regions (per unit of the figure),
 * from each of which the library subtracted its overhead `library_ns`,
 * with `now_ns` subtracted from each instead: the overhead calibrated
 * beside the figure (weft__prof_empty_ticks), at the machine's speed of
 * the moment.  fig + regions × (library_ns − now_ns). */
double bench_timer_corrected(double fig, double regions, double library_ns, double now_ns);

/* The cycles at one speed: a cycle is one chunk of every kind of a
 * breakdown pass, and keep[c] is set for the cycles whose observed value
 * lies within `band` (a fraction) of the lower middle cycle's, a speed
 * some cycle ran at.  Returns how many (at least 1 when n > 0).  When the
 * core's speed changes during a pass, medians over all cycles taken kind
 * by kind can fall at different speeds; over the cycles kept they do
 * not. */
long bench_keep_speed(const double *observed, const char *calm, long n, double band, char *keep);

/* The band both breakdown benchmarks keep their cycles within: 15 %, well
 * inside the 2x between this VM's two core speeds. */
#define BENCH_SPEED_BAND 0.15

/* The median of v[c] over the cycles c kept (all when keep is NULL; 0 if
 * none). */
double bench_median_kept(const double *v, const char *keep, long n);

/* The median of v[c] over the cycles kept whose chunk was calm (calm[c]
 * set; bench_calm); if none of them was, over the calm chunks of every
 * cycle; if none was calm, over the cycles kept (0 if none is kept). */
double bench_median_calm(const double *v, const char *keep, const char *calm, long n);

/* Whether a breakdown pass has enough calm chunks to end: at least want
 * of every kind in [first, last) among its first n cycles, the calm
 * chunks of kind k being calm[k * stride + c].  The passes run past their
 * length until they have (at most 4x): on a loaded machine two chunks in
 * three may be a rank's wait for a core. */
int bench_calm_enough(const char *calm, long stride, int first, int last, long n, long want);

/* ---- runqueue waits --------------------------------------------------- */

/* Linux's /proc/PID/schedstat is "<ns on a core> <ns waiting for a core>
 * <timeslices>\n".  Its second field into *ns: 0, or -1 (*ns unchanged)
 * unless text[0, len) is three unsigned decimal numbers separated by
 * blanks.  A pure function, so it can be fed any input. */
int bench_schedstat_wait(const char *text, size_t len, unsigned long long *ns);

/* The time a benchmark's ranks waited for a core, as one rank sees it:
 * the kernel counts how long a task was ready to run with no core to run
 * on.  A chunk of a breakdown during which a rank waited measured the
 * scheduler, not weft: a sender whose peer is off its core soon stalls
 * (over TCP the socket's buffer fills, then each put waits for the peer's
 * next timeslice, milliseconds on a loaded machine), and the chunk's time
 * per put grows by up to 100x.  Such a chunk is not calm, and the
 * breakdowns take their figures from calm chunks (bench_median_calm). */
#define BENCH_CALM_MAX_RANKS 8
struct bench_calm {
    int fd[BENCH_CALM_MAX_RANKS];   /* /proc/PID/schedstat of each rank watched */
    int n;                          /* ranks watched */
};

/* Collective over MPI_COMM_WORLD (at most BENCH_CALM_MAX_RANKS ranks are
 * watched): every rank watches the ranks that run on its host in its PID
 * namespace, itself included.  Returns how many it watches: 0 where
 * /proc/PID/schedstat cannot be read (not Linux, or a kernel without
 * scheduler statistics), and then every chunk counts as calm. */
int bench_calm_open(struct bench_calm *s);

/* The sum of the watched ranks' waits for a core so far, in ns (0 when
 * none is watched, or when a rank's statistics can no longer be read). */
unsigned long long bench_calm_waited(const struct bench_calm *s);

void bench_calm_close(struct bench_calm *s);

/* Parse them into *o: 0, or -1 for an unknown option, a value that is not
 * a positive integer, more than BENCH_BREAKDOWN_MAX_ROUNDS rounds, a batch
 * larger than the iterations or more than max_lat_iters round trips (what
 * the benchmark keeps of a pass). */
int bench_breakdown_parse(int argc, char **argv, long max_lat_iters,
                          struct bench_breakdown_opts *o);

/* Puts of the warm-up pass before the rounds: a quarter of a pass, and at
 * least one batch (a pass is made of whole batches). */
long bench_breakdown_warmup(const struct bench_breakdown_opts *o);

/* A comma-separated list of positive integers ("2,4,8") into out[0..max):
 * how many, or -1 for anything else (empty item, 0, trailing text, more
 * than max). */
int bench_parse_positive_list(const char *text, long *out, int max);

/* Sort v[0..n) in increasing order. */
void bench_sort(double *v, long n);

/* The median of v[0..n), n >= 1; sorts v. */
double bench_median(double *v, int n);

/* The median of this rank's v[0..n) (sorted), the largest over the ranks
 * (a reduction every rank makes; every rank gets it). */
double bench_worst_median(double *v, int n);

/* The interquartile mean of v[0..n), n >= 4 (the mean of the middle
 * half, as weft__prof_empty_ticks takes of its regions); sorts v. */
double bench_iq_mean(double *v, int n);

/* Where a benchmark's JSON goes: path opened for writing, or stdout when
 * path is NULL.  When it cannot be opened: "name: cannot write path:
 * reason" and MPI_Abort (status 2). */
/* JSON the benchmarks write is always valid: strings are quoted and escaped
 * ('"', '\\' and control characters), and a number that is not finite
 * (NaN, infinity: a figure that could not be measured) is written null. */
void bench_json_string(FILE *f, const char *s);
/* v in printf format fmt (one double conversion, e.g. "%.3f"), or null. */
void bench_json_number(FILE *f, const char *fmt, double v);

FILE *bench_json_open(const char *name, const char *path);

/* Close what bench_json_open opened (not stdout). */
void bench_json_close(FILE *f);

/* UCX_TLS as this run has it, or "default". */
const char *bench_ucx_tls(void);

/* The head of a benchmark's JSON object: "{" and "benchmark", "nranks",
 * "transport" and "ucx_tls" (bench_ucx_tls), a line each. */
void bench_json_head(FILE *f, const char *benchmark, int nranks, const char *transport);

/* A breakdown's head: bench_json_head, its options, the statistic of its
 * figures and the timer (GHz, the library's overhead in ns). */
void bench_breakdown_head(FILE *f, int nranks, const char *transport,
                          const struct bench_breakdown_opts *o, const char *statistic,
                          double ghz, double overhead_ns);

/* Per-sample figures over all ranks, on rank 0 (a reduction every rank
 * makes): out[i] is the mean of the ranks' median[i], each weighted by its
 * count[i] of samples (0 where no rank has any). */
void bench_weighted_ranks(const double *median, const double *count, double *out, int n);

/* ,\n  "points": {...}: the trace points' statistics s[0..n) by name[i]. */
void bench_points_json(FILE *f, const char *const *name, const weft_prof_stat_t *s, int n);

/* MPI_Get_library_version on one line, fit for a JSON string. */
void bench_mpi_library(char *out, int len);

/* Seconds on the monotonic clock. */
double bench_now(void);

/* The end of a benchmark: seg freed, weft and MPI finalised (a failure
 * is reported as "name: call: error" and aborts).  In runtime.c. */
void bench_finish(const char *name, weft_ctx_t ctx, weft_seg_t seg);

/* "sysv/memory,posix/memory,cma/memory": the transports/devices of the
 * lanes of ep's connection to rank, as UCX reports them ("unknown" when it
 * cannot tell).  In runtime.c. */
void bench_transport_of(weft_ep_t ep, int rank, weft_seg_t seg, char *out, size_t len);

/* Empty functions with the arguments of weft_put_nbi and weft_progress,
 * so a benchmark can time its own loop around weft's calls.  They live in
 * a shared library of their own (libweft_bench_nop, nop.c), so that they
 * are called as weft's calls are: through the PLT. */
weft_status_t bench_nop_post(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, const void *src,
                             size_t n);
weft_status_t bench_nop_progress(weft_ep_t ep, unsigned *count);

/* "name: <message>" on stderr if `said` (the one rank of several that
 * speaks); returns -1, for `return bench_bad(...)` in an argument parser. */
int bench_bad(const char *name, int said, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Message sizes and counts of a command line, as OSU's benchmarks and
 * ucx_perftest take them.  Each returns -1 when text is not one, after
 * saying why on stderr as program `name` if `said` (one rank of several).
 * A size is decimal digits and an optional K, M or G (2^10, 2^20, 2^30),
 * from 1 to `most` bytes. */
/* --sizes LIST (e.g. 8,64,4K,1M) into out[0..max): how many. */
int bench_parse_size_list(const char *name, int said, const char *text, size_t most, size_t *out, int max);
/* -m MIN:MAX: MIN, 2 MIN, 4 MIN, ... up to MAX into out[0..max): how many. */
int bench_parse_size_range(const char *name, int said, const char *text, size_t most, size_t *out, int max);
/* A count from 0 up (--warmup) into *out: 0. */
int bench_parse_count(const char *name, int said, const char *opt, const char *text, long *out);

#endif
