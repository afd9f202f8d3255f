/*
 * weft_bench_rma -- one-sided latency and injection rate, weft beside raw
 * UCX on the same memory, MPI RMA and MPI two-sided, in one run.
 *
 *   mpirun -np 2 weft_bench_rma [--json FILE] [--iters N] [--window W]
 *                               [--rounds R] [--warmup N] [--blocks N] [--busy-target]
 *                               [--sweep] [--sizes LIST | -m MIN:MAX]
 *
 * Rank 0 initiates, rank 1 is the target.  Every measurement is repeated
 * in R rounds that interleave the implementations, so drift on a shared
 * machine hits all of them alike; the JSON keeps every round and the
 * median.  Latencies are round trips: a put followed by a flush to the
 * target, a get.  MPI two-sided is recorded in the put rows, as the paper
 * compares them: its "put latency" is a ping-pong of 8 bytes with a 0-byte
 * reply, its "put rate" a window of MPI_Isend matched by pre-posted
 * MPI_Irecv.
 *
 * Raw UCX runs on weft's connection when rank 1 is reached through UCX;
 * when it is reached by the direct path (same node, WEFT_SHM=1) weft's
 * memory is not UCX's own and UCX's figures would say little, so UCX is
 * measured by ucx_perftest instead (weft bench rma --peers).
 *
 * --sweep adds the bandwidth of puts from 8 B to 4 MiB (a window of puts,
 * then a flush or its equivalent) for weft, MPI RMA and MPI two-sided, and
 * of a plain single-core memcpy between two buffers of rank 0: the limit of
 * any copy a CPU makes.  weft and memcpy are timed in short blocks (8 MiB
 * or --iters / 8 calls) that alternate in rotating order, 8 triples per
 * size and round: weft's puts, memcpy between two private buffers, and
 * memcpy into the same mapped memory weft's puts write ("memcpy-seg", on
 * the direct path).  Each block is one value of op "put_bw_block", so a
 * reader can pair the blocks of a triple; "put_bw" is the round's total.
 * All buffers are page-aligned and written before the timing, as the
 * segment is (populated when allocated), so no copy pays a first-touch
 * fault or a mutual misalignment the other does not.  Meanwhile the target
 * sleeps (on the direct path it has nothing to do) instead of spinning on
 * the other core.
 *
 * --sizes 8,4K,1M (K, M, G: 2^10, 2^20, 2^30) or -m MIN:MAX (MIN, 2 MIN,
 * 4 MIN, ... up to MAX, as OSU's benchmarks take it) choose the sizes of the
 * sweep instead, up to 4 MiB (the segment), and imply --sweep.
 *
 * --warmup N runs N untimed iterations of a loop (N calls, or N puts in
 * its windows) before each timed run of it: each operation of each round,
 * each block and size of the sweep, the gets from a busy target.  The
 * default, 0, adds nothing to the one pass of 4 windows of weft's and
 * UCX's loops that always runs before the rounds (connections, keys,
 * caches).
 *
 * On the direct path the rounds also time the library calls behind weft's
 * inline forms ("weft-lib"), the same gets and puts through a kept target
 * ("weft-target", weft_target_t) and plain loads and stores through
 * weft_ptr ("load", "store"), and each round also keeps the fastest of 64
 * alternating short blocks of weft's 8-byte gets and puts (plain calls and
 * kept target), of the plain loads and stores and of a plain load
 * behind one compare and branch, the floor of any checked load
 * ("load+test") ("get_lat_best", "put_rate_best"), which a burst of
 * load on a shared machine disturbs less than one long run of each.  Over
 * UCX: raw UCX, and then --blocks short blocks of each put loop (raw UCX,
 * weft's call, the library function, the kept-target put of weft_ucx.h)
 * in rotating order, whose best and whose median of side-by-side ratios
 * are steadier on a loaded machine than the rounds' long loops
 * (ucx_blocks).
 *
 * --busy-target measures the other case of the one-sided model: the
 * target computes without calling weft while rank 0 gets from it (run it
 * with WEFT_PROGRESS_THREAD=0 and =1 to see what the progress thread buys),
 * beside gets from the same target while it calls weft_progress, and how
 * much slower the target computes while it is got from: by the wall clock
 * (compute_slowdown), by its own CPU time (compute_slowdown_per_cpu), and
 * the CPU time the target's other threads took, as a share of the gets'
 * duration (weft_cpu_share) and per get (weft_cpu_per_get).  Each round
 * also times how long a sleeping thread of rank 1 takes to wake when
 * another thread on its core, or on a core of rank 0, writes to it, and
 * when a thread on rank 0's core does while rank 1 computes on the
 * sleeper's core (impl "threads": wake_same_core, wake_other_core,
 * wake_busy_core), the floor of any
 * answer from a sleeping progress thread; and the JSON says which CPUs
 * rank 1 runs on (target_cpus), which its progress thread runs on
 * (target_thread_cpus, "" without one) and one of rank 0's that rank 1
 * does not (rank0_cpu, -1 if none), where WEFT_PROGRESS_BIND can put rank
 * 1's thread off the computing core.
 */
#define _GNU_SOURCE  /* CPU sets and thread affinity, for --busy-target */
#include "affinity.h"
#include "common.h"
#include <weft.h>
#include <weft_ucx.h>

#include <ctype.h>
#include <errno.h>
#include <mpi.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MAX_ROUNDS 64
#define BW_TRIPLES 8                    /* blocks of each copy per size and round */
#define MAX_VALUES (MAX_ROUNDS * BW_TRIPLES)
#define MAX_BLOCKS 4096                 /* --blocks */
#define MAX_SIZE   (4u << 20)
#define MAX_SIZES  32                   /* sizes of a sweep */
#define NAME       "weft_bench_rma"

/* Sizes of the sweep unless --sizes or -m say, and how many bytes each
 * measurement moves. */
static const size_t default_sizes[] = {8, 64, 512, 4096, 32768, 65536, 262144, 1u << 20, MAX_SIZE};
#define NDEFAULT (sizeof(default_sizes) / sizeof(default_sizes[0]))
#define SWEEP_BYTES (64u << 20)

struct opts {
    const char *json;
    long iters, window, rounds, warmup;
    long get_gap_us;    /* --busy-target: pause between gets, 0: back to back */
    long blocks;                        /* alternating blocks a round over UCX */
    int busy_target, sweep;
    size_t sizes[MAX_SIZES];            /* of the sweep */
    int nsizes;
};

struct sample {
    const char *impl, *op, *unit;
    size_t size;
    double v[MAX_VALUES];
    int n;
};

/* 11 per size of the sweep, 16 at 8 bytes */
#define MAX_SAMPLES (16 + 12 * MAX_SIZES)
static struct sample samples[MAX_SAMPLES];
static int nsamples;
static int rank, nranks;

static void die(const char *what, weft_status_t st)
{
    fprintf(stderr, "weft_bench_rma: %s: %s (%s)\n", what, weft_strerror(st), weft_last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
}
#define OK(call) do { weft_status_t s_ = (call); if (s_ != WEFT_OK) die(#call, s_); } while (0)

static void record(const char *impl, const char *op, size_t size, const char *unit, double v)
{
    struct sample *s = NULL;

    if (rank != 0)
        return;
    for (int i = 0; i < nsamples; i++)
        if (!strcmp(samples[i].impl, impl) && !strcmp(samples[i].op, op) && samples[i].size == size)
            s = &samples[i];
    if (s == NULL) {
        if (nsamples == MAX_SAMPLES)
            return;
        s = &samples[nsamples++];
        s->impl = impl;
        s->op = op;
        s->size = size;
        s->unit = unit;
    }
    if (s->n < MAX_VALUES)
        s->v[s->n++] = v;
}

/* ---- weft ---------------------------------------------------------- */

/* The 8-byte loops compared with one another are functions of their own,
 * each beginning on a cache line, so that where the linker happens to
 * place one (a loop across a fetch boundary runs slower) does not change
 * from one build to the next and move the ratios with it. */
#define BENCH_LOOP __attribute__((noinline, aligned(64)))

/* The loops of a round, each run n times: untimed (--warmup), then timed.
 * A loop of windows runs whole windows, so a warm-up of n puts is rounded
 * up to them; the timed count is a multiple of the window (parse). */
static void weft_puts(weft_ep_t ep, weft_seg_t seg, long n)
{
    uint64_t src = 42;

    for (long i = 0; i < n; i++)
        OK(weft_put(ep, 1, seg, 0, &src, 8));
}

static BENCH_LOOP void weft_gets(weft_ep_t ep, weft_seg_t seg, long n)
{
    uint64_t dst;

    for (long i = 0; i < n; i++)
        OK(weft_get(ep, &dst, 1, seg, 0, 8));
}

static BENCH_LOOP void weft_put_windows(weft_ep_t ep, weft_seg_t seg, long n, long window)
{
    uint64_t src = 42;

    for (long i = 0; i < n; i += window) {
        for (long w = 0; w < window; w++)
            OK(weft_put_nbi(ep, 1, seg, (size_t)(w & 63) * 8, &src, 8));
        OK(weft_flush(ep));
    }
}

static void weft_round(weft_ctx_t ctx, weft_ep_t ep, weft_seg_t seg, const struct opts *o)
{
    double t0;

    if (rank == 0) {
        weft_puts(ep, seg, o->warmup);
        t0 = bench_now();
        weft_puts(ep, seg, o->iters);
        record("weft", "put_lat", 8, "us", 1e6 * (bench_now() - t0) / (double)o->iters);
        weft_gets(ep, seg, o->warmup);
        t0 = bench_now();
        weft_gets(ep, seg, o->iters);
        record("weft", "get_lat", 8, "us", 1e6 * (bench_now() - t0) / (double)o->iters);
        weft_put_windows(ep, seg, o->warmup, o->window);
        t0 = bench_now();
        weft_put_windows(ep, seg, o->iters, o->window);
        record("weft", "put_rate", 8, "Mmsg/s", 1e-6 * (double)o->iters / (bench_now() - t0));
    }
    OK(weft_barrier(ctx));
}

/* ---- the direct path against plain loads and stores ---------------- */

/* On the direct path weft's calls above are the inline forms of
 * weft_inline.h.  Beside them: the same loops calling the exported library
 * functions ("weft-lib"), and plain 8-byte stores and loads through the
 * pointer weft_ptr gives ("store", "load"), what a program would write
 * with an MPI shared-memory window or shmem_ptr.  The accesses are
 * volatile so that the compiler makes every one of them, in order, as it
 * must for weft's; a window of stores ends with a release fence, which is
 * what weft_flush costs on the direct path. */
static BENCH_LOOP void lib_gets(weft_ep_t ep, weft_seg_t seg, long n)
{
    uint64_t dst;

    for (long i = 0; i < n; i++)
        OK((weft_get)(ep, &dst, 1, seg, 0, 8));
}

static BENCH_LOOP void lib_put_windows(weft_ep_t ep, weft_seg_t seg, long n, long window)
{
    uint64_t src = 42;

    for (long i = 0; i < n; i += window) {
        for (long w = 0; w < window; w++)
            OK((weft_put_nbi)(ep, 1, seg, (size_t)(w & 63) * 8, &src, 8));
        OK(weft_flush(ep));
    }
}

/* The same loops through a kept target (weft_target_t) in a local
 * variable, whose fields the compiler keeps in registers ("weft-target"). */
static BENCH_LOOP void target_gets(weft_ep_t ep, weft_seg_t seg, long n)
{
    weft_target_t t;
    uint64_t dst;

    OK(weft_target_init(ep, 1, seg, &t));
    for (long i = 0; i < n; i++)
        OK(weft_target_get(&t, &dst, 0, 8));
}

static BENCH_LOOP void target_put_windows(weft_ep_t ep, weft_seg_t seg, long n, long window)
{
    weft_target_t t;
    uint64_t src = 42;

    OK(weft_target_init(ep, 1, seg, &t));
    for (long i = 0; i < n; i += window) {
        for (long w = 0; w < window; w++)
            OK(weft_target_put_nbi(&t, (size_t)(w & 63) * 8, &src, 8));
        OK(weft_flush(ep));
    }
}

static BENCH_LOOP void plain_loads(volatile uint64_t *p, long n)
{
    uint64_t dst;

    for (long i = 0; i < n; i++) {
        dst = p[0];
        __asm__ volatile("" : : "r"(dst));
    }
}

/* The floor of any checked load: the plain load after one compare of a
 * word in memory with a value in a register and a branch never taken --
 * what a kept target's test is ("load+test"). */
static BENCH_LOOP void tested_loads(volatile uint64_t *p, const uint64_t *word, long n)
{
    uint64_t dst, key = __atomic_load_n(word, __ATOMIC_RELAXED);

    for (long i = 0; i < n; i++) {
        if (__builtin_expect(__atomic_load_n(word, __ATOMIC_RELAXED) != key, 0))
            abort();
        dst = p[0];
        __asm__ volatile("" : : "r"(dst));
    }
}

static BENCH_LOOP void plain_store_windows(volatile uint64_t *p, long n, long window)
{
    uint64_t src = 42;

    for (long i = 0; i < n; i += window) {
        for (long w = 0; w < window; w++)
            p[w & 63] = src;
        atomic_thread_fence(memory_order_release);
    }
}

/* The medians above time one long run of each loop per round, which a
 * burst of load on a shared machine can hit on one side only.  Beside
 * them each round also times short blocks of each loop (BEST_CALLS calls,
 * or puts in windows), alternating in rotating order, BEST_BLOCKS of each,
 * and keeps each loop's fastest block ("get_lat_best", "put_rate_best"):
 * the cost of the code itself, with the fewest interruptions. */
#define BEST_BLOCKS 64
#define BEST_CALLS  8192L

static void direct_best(weft_ep_t ep, weft_seg_t seg, volatile uint64_t *p, const struct opts *o)
{
    double best[7] = {1e30, 1e30, 1e30, 1e30, 1e30, 1e30, 1e30};
    uint64_t word = 1;
    long window = o->window < BEST_CALLS ? o->window : BEST_CALLS;
    long puts = BEST_CALLS / window * window;

    for (int b = 0; b < BEST_BLOCKS; b++) {
        for (int k = 0; k < 7; k++) {
            int v = (k + b) % 7;
            double t0 = bench_now(), t;

            switch (v) {
            case 0: weft_gets(ep, seg, BEST_CALLS); break;
            case 1: plain_loads(p, BEST_CALLS); break;
            case 2: weft_put_windows(ep, seg, puts, window); break;
            case 3: plain_store_windows(p, puts, window); break;
            case 4: target_gets(ep, seg, BEST_CALLS); break;
            case 6: tested_loads(p, &word, BEST_CALLS); break;
            default: target_put_windows(ep, seg, puts, window); break;
            }
            t = bench_now() - t0;
            if (t < best[v])
                best[v] = t;
        }
    }
    record("weft", "get_lat_best", 8, "us", 1e6 * best[0] / (double)BEST_CALLS);
    record("load", "get_lat_best", 8, "us", 1e6 * best[1] / (double)BEST_CALLS);
    record("weft", "put_rate_best", 8, "Mmsg/s", 1e-6 * (double)puts / best[2]);
    record("store", "put_rate_best", 8, "Mmsg/s", 1e-6 * (double)puts / best[3]);
    record("weft-target", "get_lat_best", 8, "us", 1e6 * best[4] / (double)BEST_CALLS);
    record("weft-target", "put_rate_best", 8, "Mmsg/s", 1e-6 * (double)puts / best[5]);
    record("load+test", "get_lat_best", 8, "us", 1e6 * best[6] / (double)BEST_CALLS);
}

static void direct_round(weft_ctx_t ctx, weft_ep_t ep, weft_seg_t seg, volatile uint64_t *p,
                         const struct opts *o)
{
    double t0;

    if (rank == 0) {
        direct_best(ep, seg, p, o);
        lib_gets(ep, seg, o->warmup);
        t0 = bench_now();
        lib_gets(ep, seg, o->iters);
        record("weft-lib", "get_lat", 8, "us", 1e6 * (bench_now() - t0) / (double)o->iters);
        plain_loads(p, o->warmup);
        t0 = bench_now();
        plain_loads(p, o->iters);
        record("load", "get_lat", 8, "us", 1e6 * (bench_now() - t0) / (double)o->iters);
        lib_put_windows(ep, seg, o->warmup, o->window);
        t0 = bench_now();
        lib_put_windows(ep, seg, o->iters, o->window);
        record("weft-lib", "put_rate", 8, "Mmsg/s", 1e-6 * (double)o->iters / (bench_now() - t0));
        plain_store_windows(p, o->warmup, o->window);
        t0 = bench_now();
        plain_store_windows(p, o->iters, o->window);
        record("store", "put_rate", 8, "Mmsg/s", 1e-6 * (double)o->iters / (bench_now() - t0));
        target_gets(ep, seg, o->warmup);
        t0 = bench_now();
        target_gets(ep, seg, o->iters);
        record("weft-target", "get_lat", 8, "us", 1e6 * (bench_now() - t0) / (double)o->iters);
        target_put_windows(ep, seg, o->warmup, o->window);
        t0 = bench_now();
        target_put_windows(ep, seg, o->iters, o->window);
        record("weft-target", "put_rate", 8, "Mmsg/s", 1e-6 * (double)o->iters / (bench_now() - t0));
    }
    OK(weft_barrier(ctx));
}

/* The same loops written directly against UCX, on weft's own connection
 * and key: the difference is weft's layer. */
static void ucx_wait(ucp_worker_h w, ucs_status_ptr_t r)
{
    if (r == NULL)
        return;
    if (UCS_PTR_IS_ERR(r)) {
        fprintf(stderr, "weft_bench_rma: UCX: %s\n", ucs_status_string(UCS_PTR_STATUS(r)));
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    while (ucp_request_check_status(r) == UCS_INPROGRESS)
        ucp_worker_progress(w);
    ucp_request_free(r);
}

/* Rank 1's segment as UCX reaches it over weft's connection. */
struct ucx_target {
    ucp_worker_h w;
    ucp_ep_h ep;
    ucp_rkey_h rkey;
    uint64_t raddr;
};

static void ucx_puts(const struct ucx_target *t, long n)
{
    uint64_t src = 42;
    ucp_request_param_t p = {.op_attr_mask = 0};

    for (long i = 0; i < n; i++) {
        ucx_wait(t->w, ucp_put_nbx(t->ep, &src, 8, t->raddr, t->rkey, &p));
        ucx_wait(t->w, ucp_ep_flush_nbx(t->ep, &p));
    }
}

static void ucx_gets(const struct ucx_target *t, long n)
{
    uint64_t dst;
    ucp_request_param_t p = {.op_attr_mask = 0};

    for (long i = 0; i < n; i++)
        ucx_wait(t->w, ucp_get_nbx(t->ep, &dst, 8, t->raddr, t->rkey, &p));
}

static void ucx_put_windows(const struct ucx_target *t, long n, long window)
{
    uint64_t src = 42;
    ucp_request_param_t p = {.op_attr_mask = 0};

    for (long i = 0; i < n; i += window) {
        for (long k = 0; k < window; k++) {
            ucs_status_ptr_t r = ucp_put_nbx(t->ep, &src, 8, t->raddr + (uint64_t)(k & 63) * 8, t->rkey, &p);
            if (UCS_PTR_IS_PTR(r))
                ucp_request_free(r);
        }
        ucx_wait(t->w, ucp_worker_flush_nbx(t->w, &p));
    }
}

/* Best of many short alternating blocks.  A round's rate above is one long
 * loop per implementation, and on a shared machine a burst of load in one
 * of them moves the ratio by more than weft's whole overhead.  Here each
 * implementation runs BLOCK_WINDOWS windows of puts (then its flush) in
 * turn, in rotating order, --blocks times a round: the fastest block of each
 * is its cost with the least interference ("put_rate_best"), and the median
 * of the ratios of blocks run one after the other is what a reader can
 * compare without trusting the best ("put_rate_block_ratio", weft ÷ UCX).
 * "weft" is the call as a program writes it (weft_inline.h's form, which
 * calls the library for a rank reached through UCX), "weft-lib" the
 * exported function itself, "weft-ucx" weft_ucx.h's inline put. */
#define BLOCK_WINDOWS 16
enum { BLK_UCX, BLK_WEFT, BLK_LIB, BLK_UCXI, BLK_N };
static const char *const blk_impl[BLK_N] = {"ucx", "weft", "weft-lib", "weft-ucx"};

/* The put of weft_ucx.h: weft's put to a target it keeps for the program,
 * inline. */
static void weft_ucx_put_windows(weft_ep_t ep, weft_ucx_put_target_t *t, long n, long window)
{
    uint64_t src = 42;

    for (long i = 0; i < n; i += window) {
        for (long w = 0; w < window; w++)
            OK(weft_ucx_put_nbi(t, (size_t)(w & 63) * 8, &src, 8));
        OK(weft_flush(ep));
    }
}
static double blk_ratio[BLK_N][MAX_BLOCKS];

static double block_ns(int v, weft_ep_t ep, weft_seg_t seg, const struct ucx_target *t,
                       weft_ucx_put_target_t *wt, long window)
{
    long n = BLOCK_WINDOWS * window;
    double t0 = bench_now();

    switch (v) {
    case BLK_UCX:
        ucx_put_windows(t, n, window);
        break;
    case BLK_WEFT:
        weft_put_windows(ep, seg, n, window);
        break;
    case BLK_UCXI:
        weft_ucx_put_windows(ep, wt, n, window);
        break;
    default:
        lib_put_windows(ep, seg, n, window);
        break;
    }
    return 1e9 * (bench_now() - t0) / (double)n;
}

static void ucx_blocks(weft_ep_t ep, weft_seg_t seg, const struct ucx_target *t,
                       const struct opts *o)
{
    double best[BLK_N], ns[BLK_N];
    weft_ucx_put_target_t wt;

    OK(weft_ucx_put_target(ep, 1, seg, &wt));
    for (int v = 0; v < BLK_N; v++)
        best[v] = 1e300;
    for (long b = 0; b < o->blocks; b++) {
        for (int k = 0; k < BLK_N; k++) {
            int v = (int)((b + k) % BLK_N);

            ns[v] = block_ns(v, ep, seg, t, &wt, o->window);
            if (ns[v] < best[v])
                best[v] = ns[v];
        }
        for (int v = 1; v < BLK_N; v++)
            blk_ratio[v][b] = ns[BLK_UCX] / ns[v];
    }
    for (int v = 0; v < BLK_N; v++)
        record(blk_impl[v], "put_rate_best", 8, "Mmsg/s", 1e3 / best[v]);
    for (int v = 1; v < BLK_N; v++)
        record(blk_impl[v], "put_rate_block_ratio", 8, "x",
               bench_median(blk_ratio[v], (int)o->blocks));
}

static void ucx_round(weft_ctx_t ctx, weft_ep_t ep, weft_seg_t seg, const struct opts *o)
{
    struct ucx_target t;
    double t0;

    if (rank == 0) {
        OK(weft_ucx_worker(ep, &t.w));
        OK(weft_ucx_target(ep, 1, seg, 0, &t.ep, &t.rkey, &t.raddr));
        ucx_puts(&t, o->warmup);
        t0 = bench_now();
        ucx_puts(&t, o->iters);
        record("ucx", "put_lat", 8, "us", 1e6 * (bench_now() - t0) / (double)o->iters);
        ucx_gets(&t, o->warmup);
        t0 = bench_now();
        ucx_gets(&t, o->iters);
        record("ucx", "get_lat", 8, "us", 1e6 * (bench_now() - t0) / (double)o->iters);
        ucx_put_windows(&t, o->warmup, o->window);
        t0 = bench_now();
        ucx_put_windows(&t, o->iters, o->window);
        record("ucx", "put_rate", 8, "Mmsg/s", 1e-6 * (double)o->iters / (bench_now() - t0));
        if (o->blocks > 0)
            ucx_blocks(ep, seg, &t, o);
    }
    OK(weft_barrier(ctx));
}

/* ---- MPI ----------------------------------------------------------- */

static void mpi_puts(MPI_Win win, long n)
{
    uint64_t src = 42;

    for (long i = 0; i < n; i++) {
        MPI_Put(&src, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
        MPI_Win_flush(1, win);
    }
}

static void mpi_gets(MPI_Win win, long n)
{
    uint64_t dst;

    for (long i = 0; i < n; i++) {
        MPI_Get(&dst, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
        MPI_Win_flush(1, win);
    }
}

static void mpi_put_windows(MPI_Win win, long n, long window)
{
    uint64_t src = 42;

    for (long i = 0; i < n; i += window) {
        for (long w = 0; w < window; w++)
            MPI_Put(&src, 8, MPI_BYTE, 1, (MPI_Aint)(w & 63) * 8, 8, MPI_BYTE, win);
        MPI_Win_flush(1, win);
    }
}

static void mpi_rma_round(MPI_Win win, const struct opts *o)
{
    double t0;

    if (rank == 0) {
        mpi_puts(win, o->warmup);
        t0 = bench_now();
        mpi_puts(win, o->iters);
        record("mpi-rma", "put_lat", 8, "us", 1e6 * (bench_now() - t0) / (double)o->iters);
        mpi_gets(win, o->warmup);
        t0 = bench_now();
        mpi_gets(win, o->iters);
        record("mpi-rma", "get_lat", 8, "us", 1e6 * (bench_now() - t0) / (double)o->iters);
        mpi_put_windows(win, o->warmup, o->window);
        t0 = bench_now();
        mpi_put_windows(win, o->iters, o->window);
        record("mpi-rma", "put_rate", 8, "Mmsg/s", 1e-6 * (double)o->iters / (bench_now() - t0));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* n ping-pongs: 8 bytes there, 0 bytes back (both ranks). */
static void pingpongs(long n)
{
    uint64_t buf = 42;

    for (long i = 0; i < n; i++) {
        if (rank == 0) {
            MPI_Send(&buf, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(&buf, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        }
    }
}

/* n messages of size bytes from src, in windows of Isend matched by Irecv
 * into sink that rank 1 posts before each window, then an ack (both
 * ranks; whole windows). */
#define MAX_MSG_WINDOW 1024
static void isend_windows(const void *src, void *sink, size_t size, size_t stride, long n, long win)
{
    MPI_Request reqs[MAX_MSG_WINDOW];

    for (long i = 0; i < n; i += win) {
        if (rank == 0) {
            for (long w = 0; w < win; w++)
                MPI_Isend(src, (int)size, MPI_BYTE, 1, 3, MPI_COMM_WORLD, &reqs[w]);
            MPI_Waitall((int)win, reqs, MPI_STATUSES_IGNORE);
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            for (long w = 0; w < win; w++)
                MPI_Irecv((char *)sink + (size_t)w * stride, (int)size, MPI_BYTE, 0, 3, MPI_COMM_WORLD,
                          &reqs[w]);
            MPI_Waitall((int)win, reqs, MPI_STATUSES_IGNORE);
            MPI_Send(NULL, 0, MPI_BYTE, 0, 4, MPI_COMM_WORLD);
        }
    }
}

static void mpi_2sided_round(const struct opts *o)
{
    static uint64_t sink[MAX_MSG_WINDOW];
    uint64_t buf = 42;
    long win = o->window > MAX_MSG_WINDOW ? MAX_MSG_WINDOW : o->window;
    double t0;

    pingpongs(o->warmup);
    t0 = bench_now();
    pingpongs(o->iters);
    record("mpi-2sided", "put_lat", 8, "us", 1e6 * (bench_now() - t0) / (double)o->iters);

    /* message rate: each message into its own slot of sink */
    isend_windows(&buf, sink, 8, 8, o->warmup, win);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = bench_now();
    isend_windows(&buf, sink, 8, 8, o->iters, win);
    record("mpi-2sided", "put_rate", 8, "Mmsg/s", 1e-6 * (double)o->iters / (bench_now() - t0));
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- bandwidth sweep ------------------------------------------------- */

/* Puts of one size per measurement: enough to move SWEEP_BYTES, bounded
 * by --iters, in windows of at most --window. */
static long sweep_count(size_t size, const struct opts *o)
{
    long n = (long)(SWEEP_BYTES / size);

    return n < 16 ? 16 : n > o->iters ? o->iters : n;
}

static long sweep_window(long count, const struct opts *o)
{
    return count < o->window ? count : o->window;
}

static void record_bw(const char *impl, size_t size, long count, double t0)
{
    record(impl, "put_bw", size, "MB/s", 1e-6 * (double)size * (double)count / (bench_now() - t0));
}

/* ---- weft against memcpy, block by block ------------------------------ */

enum { BW_WEFT, BW_MEMCPY, BW_MEMCPY_SEG, BW_NIMPL };
static const char *const bw_impls[BW_NIMPL] = {"weft", "memcpy", "memcpy-seg"};
#define BW_BLOCK_BYTES (8u << 20)

/* Calls per block: BW_BLOCK_BYTES, at least 2, at most --iters / BW_TRIPLES. */
static long block_count(size_t size, const struct opts *o)
{
    long n = (long)(BW_BLOCK_BYTES / size), most = o->iters / BW_TRIPLES;

    if (most < 2)
        most = 2;
    return n < 2 ? 2 : n > most ? most : n;
}

static long minor_faults(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

/* One block: count puts (windows of --window, each then a flush) or count
 * memcpy calls of size bytes; its duration in seconds. */
static double copy_block(int impl, weft_ep_t ep, weft_seg_t seg, const char *src, char *dst,
                         size_t size, long count, long window)
{
    double t0 = bench_now();

    if (impl == BW_WEFT) {
        for (long i = 0; i < count; i += window) {
            for (long w = 0; w < window && i + w < count; w++)
                OK(weft_put_nbi(ep, 1, seg, 0, src, size));
            OK(weft_flush(ep));
        }
    } else {
        for (long i = 0; i < count; i++) {
            memcpy(dst, src, size);
            /* the copy must happen: dst is read by nobody the compiler sees */
            __asm__ volatile("" : : "r"(dst) : "memory");
        }
    }
    return bench_now() - t0;
}

/* BW_TRIPLES triples of blocks at one size, the order rotating so that each
 * copy goes first as often as the others; memcpy-seg only when dst[] has
 * the mapped segment.  Rank 0 only. */
static void bw_blocks(weft_ep_t ep, weft_seg_t seg, const char *src, char *const dst[BW_NIMPL],
                      size_t size, long round, const struct opts *o)
{
    long count = block_count(size, o), faults[BW_NIMPL] = {0};
    double secs[BW_NIMPL] = {0};
    int nimpl = dst[BW_MEMCPY_SEG] ? BW_NIMPL : BW_MEMCPY_SEG;

    for (int t = 0; t < BW_TRIPLES; t++)
        for (int j = 0; j < nimpl; j++) {
            int impl = (int)((t + round + j) % nimpl);
            long f0;
            double dt;

            if (o->warmup > 0)
                copy_block(impl, ep, seg, src, dst[impl], size, o->warmup, o->window);
            f0 = minor_faults();
            dt = copy_block(impl, ep, seg, src, dst[impl], size, count, o->window);

            faults[impl] += minor_faults() - f0;
            secs[impl] += dt;
            record(bw_impls[impl], "put_bw_block", size, "MB/s", 1e-6 * (double)size * (double)count / dt);
        }
    for (int impl = 0; impl < nimpl; impl++) {
        record(bw_impls[impl], "put_bw", size, "MB/s",
               1e-6 * (double)size * (double)count * BW_TRIPLES / secs[impl]);
        record(bw_impls[impl], "page_faults", size, "faults", (double)faults[impl]);
    }
}

/* Rank 1 waits for rank 0: asleep on the direct path, where nothing needs
 * it, so that it does not spin on the core other jobs need; in weft's
 * barrier (serving UCX) otherwise. */
static void wait_for_rank0(weft_ctx_t ctx, int direct)
{
    MPI_Request req;
    int done = 0;
    struct timespec nap = {0, 200000};

    if (!direct) {
        OK(weft_barrier(ctx));
        return;
    }
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    while (!done) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (!done && rank != 0)
            nanosleep(&nap, NULL);
    }
}

/* n puts of size bytes from src by MPI RMA, in windows of `window`, each
 * then a flush (whole windows). */
static void mpi_put_bw_windows(MPI_Win win, const char *src, size_t size, long n, long window)
{
    for (long i = 0; i < n; i += window) {
        for (long w = 0; w < window; w++)
            MPI_Put(src, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, win);
        MPI_Win_flush(1, win);
    }
}

static void sweep_round(weft_ctx_t ctx, weft_ep_t ep, weft_seg_t seg, MPI_Win win, const char *src,
                        char *const dst[BW_NIMPL], long round, const struct opts *o)
{
    if (rank == 0)
        for (int k = 0; k < o->nsizes; k++)
            bw_blocks(ep, seg, src, dst, o->sizes[k], round, o);
    wait_for_rank0(ctx, dst[BW_MEMCPY_SEG] != NULL);

    for (int k = 0; k < o->nsizes; k++) {
        size_t size = o->sizes[k];
        long count = sweep_count(size, o), win_n = sweep_window(count, o);
        /* two-sided: windows of Isend matched by pre-posted Irecv, all into
         * one buffer, then an ack */
        long w2 = win_n > 256 ? 256 : win_n;
        double t0;

        if (rank == 0) {
            mpi_put_bw_windows(win, src, size, o->warmup, win_n);
            t0 = bench_now();
            mpi_put_bw_windows(win, src, size, count, win_n);
            record_bw("mpi-rma", size, count, t0);
        }
        OK(weft_barrier(ctx));

        if (o->warmup > 0) {
            isend_windows(src, dst[BW_MEMCPY], size, 0, o->warmup, w2);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        t0 = bench_now();
        isend_windows(src, dst[BW_MEMCPY], size, 0, count, w2);
        record_bw("mpi-2sided", size, count - count % w2 + (count % w2 ? w2 : 0), t0);
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

/* ---- busy target ---------------------------------------------------- */

/* Where the ranks run, for --busy-target: the CPUs rank 1 (the target)
 * may run on, as a list ("1", "0-3,8"), and a CPU of rank 0 that rank 1
 * may not run on (-1 if none, or if the ranks are on different hosts):
 * one where a progress thread of rank 1 takes nothing from the
 * computation, and where, over TCP loopback, the requests arrive.  Rank 0
 * writes both. */
static char target_cpus[256], target_thread_cpus[256];
static int rank0_cpu = -1;

/* Rank 1 sends its CPU set, its progress thread's and its host to rank 0,
 * which finds a CPU of its own that rank 1 does not use. */
static void busy_cpus(void)
{
    cpu_set_t mine, theirs;
    char host[MPI_MAX_PROCESSOR_NAME] = "", their_host[MPI_MAX_PROCESSOR_NAME] = "";
    int len;

    MPI_Get_processor_name(host, &len);
    if (sched_getaffinity(0, sizeof(mine), &mine) != 0)
        CPU_ZERO(&mine);
    if (rank == 1) {
        char thread[sizeof(target_thread_cpus)] = "";
        cpu_set_t set;

        if (bench_progress_thread_set(&set) > 0)
            bench_cpu_list(&set, thread, sizeof(thread));
        MPI_Send(&mine, (int)sizeof(mine), MPI_BYTE, 0, 8, MPI_COMM_WORLD);
        MPI_Send(thread, (int)sizeof(thread), MPI_CHAR, 0, 8, MPI_COMM_WORLD);
        MPI_Send(host, (int)sizeof(host), MPI_CHAR, 0, 8, MPI_COMM_WORLD);
    } else if (rank == 0) {
        MPI_Recv(&theirs, (int)sizeof(theirs), MPI_BYTE, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(target_thread_cpus, (int)sizeof(target_thread_cpus), MPI_CHAR, 1, 8, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        target_thread_cpus[sizeof(target_thread_cpus) - 1] = '\0';
        MPI_Recv(their_host, (int)sizeof(their_host), MPI_CHAR, 1, 8, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        their_host[sizeof(their_host) - 1] = '\0';
        bench_cpu_list(&theirs, target_cpus, sizeof(target_cpus));
        /* CPU numbers compare only on one host */
        if (strcmp(host, their_host) == 0)
            for (int c = 0; c < CPU_SETSIZE && rank0_cpu < 0; c++)
                if (CPU_ISSET(c, &mine) && !CPU_ISSET(c, &theirs))
                    rank0_cpu = c;
    }
}

static double compute_chunks(long *chunks, const _Atomic uint64_t *flag, double most);

/* ---- how long a sleeping thread takes to wake ---------------------------
 * Two threads of rank 1 wake each other in turn through eventfds, each
 * sleeping in poll() between, as the progress thread sleeps: on rank 1's
 * core both, then the partner on a core of rank 0 (which spins in MPI
 * meanwhile, so that core is busy, as it is when it sends a request).
 * Half the round trip is the time from one thread's write to the other
 * running: the least a request that must wake a sleeping thread of the
 * target can wait. */

struct wake_pair {
    int ping, pong, cpu;
    int refused;  /* the partner could not be put on cpu */
    long n;
};

/* 0, or the errno of a refusal */
static int pin_self(int cpu)
{
    cpu_set_t set;

    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void wait_fd(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    uint64_t v;

    while (poll(&p, 1, -1) < 0 && errno == EINTR)
        ;
    (void)!read(fd, &v, sizeof(v));
}

static void *wake_partner(void *arg)
{
    struct wake_pair *w = arg;
    uint64_t one = 1;

    w->refused = pin_self(w->cpu) != 0;
    for (long i = 0; i < w->n; i++) {
        wait_fd(w->ping);
        (void)!write(w->pong, &one, sizeof(one));
    }
    return NULL;
}

/* One-way wake-up time in us between this thread, on CPU here, and a
 * partner on CPU there; -1 if the threads cannot be set up there. */
static double wake_us(int here, int there, long n)
{
    struct wake_pair w = {.ping = eventfd(0, EFD_NONBLOCK), .pong = eventfd(0, EFD_NONBLOCK),
                          .cpu = there, .n = n};
    cpu_set_t before;
    pthread_t t;
    uint64_t one = 1;
    double t0, us = -1;

    if (w.ping >= 0 && w.pong >= 0 && sched_getaffinity(0, sizeof(before), &before) == 0 &&
        pthread_create(&t, NULL, wake_partner, &w) == 0) {
        int refused = pin_self(here) != 0;

        t0 = bench_now();
        for (long i = 0; i < n; i++) {
            (void)!write(w.ping, &one, sizeof(one));
            wait_fd(w.pong);
        }
        us = 1e6 * (bench_now() - t0) / (double)n / 2;
        pthread_join(t, NULL);
        if (refused || w.refused)
            us = -1;
        (void)pthread_setaffinity_np(pthread_self(), sizeof(before), &before);
    }
    if (w.ping >= 0)
        close(w.ping);
    if (w.pong >= 0)
        close(w.pong);
    return us;
}

/* The wake-up a progress thread beside the computation waits for: a
 * thread sleeps on the core where this thread computes, and another, on a
 * core of rank 0, wakes it every 100 us or so; the sleeper reads the
 * clock when it runs, the waker just before its write.  Their mean
 * difference is the time from a request's arrival on the core it comes in
 * on to a thread of the computing core serving it: the interrupt that
 * takes the core from the computation, and the switch. */
struct wake_probe {
    int fd;              /* the sleeper's eventfd */
    int cpu, waker_cpu;  /* where the sleeper and the waker run */
    long n;
    _Atomic double sent; /* bench_now() of the waker's last write */
    _Atomic long seen;   /* wake-ups the sleeper has timed */
    _Atomic int stop;    /* no waker came: the sleeper ends */
    _Atomic int done;    /* the waker has made its n writes */
    double sum;          /* the sleeper's: their latencies */
    _Atomic int refused; /* the sleeper or the waker could not be put on its CPU */
};

static void *wake_sleeper(void *arg)
{
    struct wake_probe *p = arg;

    if (pin_self(p->cpu) != 0)
        atomic_store(&p->refused, 1);
    for (long i = 0; i < p->n; i++) {
        wait_fd(p->fd);
        if (atomic_load(&p->stop))
            break;
        p->sum += bench_now() - atomic_load(&p->sent);
        atomic_store(&p->seen, i + 1);
    }
    return NULL;
}

static void *wake_waker(void *arg)
{
    struct wake_probe *p = arg;
    struct timespec gap = {.tv_sec = 0, .tv_nsec = 100000};
    uint64_t one = 1;

    if (pin_self(p->waker_cpu) != 0)
        atomic_store(&p->refused, 1);
    for (long i = 0; i < p->n; i++) {
        nanosleep(&gap, NULL);
        atomic_store(&p->sent, bench_now());
        (void)!write(p->fd, &one, sizeof(one));
        while (atomic_load(&p->seen) <= i)
            nanosleep(&gap, NULL);
    }
    atomic_store(&p->done, 1);
    return NULL;
}

/* One-way wake-up time in us of a thread on CPU here, where this thread
 * computes meanwhile, from a thread on CPU there; -1 if the threads
 * cannot be set up there. */
static double wake_busy_us(int here, int there, long n)
{
    struct wake_probe p = {.fd = eventfd(0, EFD_NONBLOCK), .cpu = here, .waker_cpu = there, .n = n};
    cpu_set_t before;
    pthread_t ts, tw;
    double us = -1;
    long chunks;

    if (p.fd >= 0 && sched_getaffinity(0, sizeof(before), &before) == 0 &&
        pthread_create(&ts, NULL, wake_sleeper, &p) == 0) {
        int refused = pin_self(here) != 0;

        if (pthread_create(&tw, NULL, wake_waker, &p) == 0) {
            while (!atomic_load(&p.done))
                (void)compute_chunks(&chunks, NULL, 1e-3);
            pthread_join(tw, NULL);
            pthread_join(ts, NULL);
            if (!refused && !atomic_load(&p.refused))
                us = 1e6 * p.sum / (double)n;
        } else {
            /* the sleeper would wait for wake-ups that will not come */
            uint64_t one = 1;

            atomic_store(&p.stop, 1);
            (void)!write(p.fd, &one, sizeof(one));
            pthread_join(ts, NULL);
        }
        (void)pthread_setaffinity_np(pthread_self(), sizeof(before), &before);
    }
    if (p.fd >= 0)
        close(p.fd);
    return us;
}

/* Rank 1 times the wake-ups on its core, across to rank 0's core
 * (rank0_cpu, known to rank 0 only, is sent over), and from rank 0's core
 * to its own while it computes; rank 0 records them. */
static void busy_wakeups(void)
{
    static const char *const op[3] = {"wake_same_core", "wake_other_core", "wake_busy_core"};
    double r[3] = {-1, -1, -1};
    int there = rank0_cpu;

    MPI_Bcast(&there, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 1) {
        int here = sched_getcpu();

        r[0] = here >= 0 ? wake_us(here, here, 2000) : -1;
        r[1] = here >= 0 && there >= 0 ? wake_us(here, there, 2000) : -1;
        r[2] = here >= 0 && there >= 0 ? wake_busy_us(here, there, 1000) : -1;
        MPI_Send(r, 3, MPI_DOUBLE, 0, 9, MPI_COMM_WORLD);
    } else if (rank == 0) {
        MPI_Recv(r, 3, MPI_DOUBLE, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < 3; i++)
            if (r[i] >= 0)
                record("threads", op[i], 8, "us", r[i]);
    }
}

/* Chunks of computation: about a microsecond each of dependent
 * floating-point adds, no memory traffic, no weft call. */
static double compute_chunks(long *chunks, const _Atomic uint64_t *flag, double most)
{
    volatile double sink = 0;
    double t0 = bench_now(), t;
    long n = 0;

    do {
        for (int k = 0; k < 1000; k++)
            sink += k * 0.5;
        n++;
        t = bench_now();
    } while ((flag == NULL || atomic_load_explicit(flag, memory_order_acquire) == 0) && t - t0 < most);
    *chunks = n;
    return t - t0;
}

static double cpu_secs(clockid_t clock)
{
    struct timespec ts;

    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Gets of 8 bytes from rank 1, three ways: while rank 1 calls
 * weft_progress (it serves them: the idle target), while it computes
 * without calling weft (served by the progress thread, or by nobody until
 * the computation ends), and how much slower rank 1 computes while it is
 * being got from than in quiet stretches of 0.1 s just before and just
 * after (rank 0 spins in a barrier meanwhile, as it spins in its gets).
 * On a loaded machine other processes take the core at random and that
 * rate scatters, so rank 1 also reports the CPU time its threads other
 * than the computing one (the progress thread, UCX's and MPI's) took
 * during the gets, as a share of the time the gets lasted: the time that
 * weft's threads can have taken from the computation, measured apart from
 * the other processes, and that time per get served; and the rate of the
 * computation per second of its own CPU time, busy against quiet: what
 * the gets cost it beyond the time taken (caches, switches), which other
 * processes do not change either.  Rank 0 gets back to
 * back, as fast as the target answers, or with --get-gap-us G a get every
 * G us at most (at most 0.5 s of them): the share grows with that rate,
 * and the time per get says what a slower stream of gets would cost.  A
 * get's latency is its own time, the gaps left out. */
static void busy_target(weft_ctx_t ctx, weft_ep_t ep, weft_seg_t seg, void *local,
                        const struct opts *o, int progress_thread)
{
    _Atomic uint64_t *flag = (_Atomic uint64_t *)((char *)local + 64);
    const char *impl = progress_thread ? "weft+progress-thread" : "weft";
    uint64_t dst, one = 1;
    long n = o->iters < 2000 ? o->iters : 2000, quiet_chunks = 0, busy_chunks = 0, c;
    /* the paced gets: at most 0.5 s of them, and at least one */
    long most = o->get_gap_us > 0 ? 500000 / o->get_gap_us : n;
    long nb = n < most ? n : most > 0 ? most : 1;
    double t0, t, worst = 0, quiet_secs = 0, busy_secs = 0, proc0 = 0, self0 = 0, others = 0;
    double c0, quiet_cpu = 0, busy_cpu = 0;

    /* the idle target: it calls weft_progress until rank 0 is done */
    if (rank == 0) {
        weft_gets(ep, seg, o->warmup);
        t0 = bench_now();
        weft_gets(ep, seg, n);
        record(impl, "get_lat_idle", 8, "us", 1e6 * (bench_now() - t0) / (double)n);
        OK(weft_put_nbi(ep, 1, seg, 64, &one, 8));
        OK(weft_flush(ep));
    } else if (rank == 1) {
        while (atomic_load_explicit(flag, memory_order_acquire) == 0)
            OK(weft_progress(ep, NULL));
    }
    OK(weft_barrier(ctx));
    atomic_store(flag, 0);
    OK(weft_barrier(ctx));
    /* a quiet stretch: rank 1 computes for 0.1 s, nobody gets from it */
    if (rank == 1) {
        c0 = cpu_secs(CLOCK_THREAD_CPUTIME_ID);
        quiet_secs = compute_chunks(&quiet_chunks, NULL, 0.1);
        quiet_cpu = cpu_secs(CLOCK_THREAD_CPUTIME_ID) - c0;
    }
    OK(weft_barrier(ctx));
    if (rank == 0) {
        double sum = 0, gap = 1e-6 * (double)o->get_gap_us;

        for (long i = 0; i < nb; i++) {
            double d;

            t = bench_now();
            OK(weft_get(ep, &dst, 1, seg, 0, 8));
            d = bench_now() - t;
            sum += d;
            if (d > worst)
                worst = d;
            while (bench_now() - t < gap)
                ;
        }
        record(impl, "get_lat_busy", 8, "us", 1e6 * sum / (double)nb);
        record(impl, "get_max_busy", 8, "us", 1e6 * worst);
        if (o->get_gap_us > 0)
            record(impl, "get_gap", 8, "us", (double)o->get_gap_us);
        OK(weft_put_nbi(ep, 1, seg, 64, &one, 8));
        OK(weft_flush(ep));
    } else if (rank == 1) {
        /* compute without calling weft until rank 0 is done, or for at
         * most a second: without a progress thread, rank 0's gets wait
         * for that second to end */
        proc0 = cpu_secs(CLOCK_PROCESS_CPUTIME_ID);
        self0 = cpu_secs(CLOCK_THREAD_CPUTIME_ID);
        busy_secs = compute_chunks(&busy_chunks, flag, 1.0 + 1e-6 * (double)nb * (double)o->get_gap_us);
        busy_cpu = cpu_secs(CLOCK_THREAD_CPUTIME_ID) - self0;
        others = (cpu_secs(CLOCK_PROCESS_CPUTIME_ID) - proc0) - busy_cpu;
    }
    OK(weft_barrier(ctx));
    /* the second quiet stretch */
    if (rank == 1) {
        c0 = cpu_secs(CLOCK_THREAD_CPUTIME_ID);
        quiet_secs += compute_chunks(&c, NULL, 0.1);
        quiet_cpu += cpu_secs(CLOCK_THREAD_CPUTIME_ID) - c0;
        quiet_chunks += c;
    }
    OK(weft_barrier(ctx));
    if (rank == 1) {
        /* the computation's rate while got from against the quiet one */
        double r[4] = {100.0 * (1.0 - ((double)busy_chunks / busy_secs) /
                                          ((double)quiet_chunks / quiet_secs)),
                       100.0 * others / busy_secs, 1e6 * others / (double)nb,
                       100.0 * (1.0 - ((double)busy_chunks / busy_cpu) /
                                          ((double)quiet_chunks / quiet_cpu))};

        MPI_Send(r, 4, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD);
    } else if (rank == 0) {
        double r[4];

        MPI_Recv(r, 4, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        record(impl, "compute_slowdown", 8, "%", r[0]);
        record(impl, "weft_cpu_share", 8, "%", r[1]);
        record(impl, "weft_cpu_per_get", 8, "us", r[2]);
        record(impl, "compute_slowdown_per_cpu", 8, "%", r[3]);
    }
    atomic_store(flag, 0);
    OK(weft_barrier(ctx));
}

/* ---- output --------------------------------------------------------- */

static void write_json(const struct opts *o, const char *transport, int progress_thread)
{
    FILE *f = bench_json_open("weft_bench_rma", o->json);

    bench_json_head(f, "rma", nranks, transport);
    fprintf(f, "  \"progress_thread\": %d,\n", progress_thread);
    /* where the thread ran: weft_init accepted the value, so it holds
     * only letters, digits, commas and dashes */
    if (progress_thread) {
        const char *bind = getenv("WEFT_PROGRESS_BIND");

        fprintf(f, "  \"progress_bind\": \"%s\",\n", bind ? bind : "rank");
    }
    if (o->busy_target)
        fprintf(f, "  \"target_cpus\": \"%s\",\n  \"target_thread_cpus\": \"%s\",\n"
                   "  \"rank0_cpu\": %d,\n", target_cpus, target_thread_cpus, rank0_cpu);
    fprintf(f, "  \"iters\": %ld,\n  \"warmup\": %ld,\n"
               "  \"window\": %ld,\n  \"rounds\": %ld,\n  \"sweep_sizes\": [",
            o->iters, o->warmup, o->window, o->rounds);
    for (int k = 0; o->sweep && k < o->nsizes; k++)
        fprintf(f, "%s%zu", k ? ", " : "", o->sizes[k]);
    fputs("],\n  \"results\": [\n", f);
    for (int i = 0; i < nsamples; i++) {
        const struct sample *s = &samples[i];
        fprintf(f, "    {\"impl\": \"%s\", \"op\": \"%s\", \"size\": %zu, \"unit\": \"%s\", \"value\": ",
                s->impl, s->op, s->size, s->unit);
        bench_json_number(f, "%.6g", bench_median_kept(s->v, NULL, s->n));
        fputs(", \"rounds\": ", f);
        bench_put_list(f, "%.6g", s->v, s->n);
        fprintf(f, "}%s\n", i + 1 < nsamples ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    bench_json_close(f);
}

static void usage(void)
{
    fprintf(stderr,
            "usage: mpirun -np 2 weft_bench_rma [--json FILE] [--iters N] [--window W] [--rounds R]\n"
            "                                   [--warmup N] [--blocks N] [--busy-target] [--sweep]\n"
            "                                   [--sizes LIST | -m MIN:MAX] [--get-gap-us G]\n"
            "  --iters N   iterations of each timed loop (default 100000; a multiple of W, at least W)\n"
            "  --window W  puts between flushes (default 256); --rounds R: 1 to %d (default 5)\n"
            "  --warmup N  untimed iterations before each timed loop (default 0)\n"
            "  --blocks N  over UCX, alternating blocks of %d windows a round (default 200, 0 to %d)\n"
            "  --sizes LIST  sizes of the bandwidth sweep, e.g. 8,64,4K,1M (K, M, G: 2^10, 2^20,\n"
            "              2^30), each from 1 B to 4 MiB (the segment), at most %d of them\n"
            "  -m MIN:MAX  sizes MIN, 2 MIN, 4 MIN, ... up to MAX, the same bounds\n"
            "  --sizes and -m imply --sweep, whose default sizes are 8 B to 4 MiB\n"
            "  --get-gap-us G  with --busy-target: G us between the gets from the computing\n"
            "              target (default: back to back)\n",
            MAX_ROUNDS, BLOCK_WINDOWS, MAX_BLOCKS, MAX_SIZES);
}

/* ---- arguments --------------------------------------------------------- */

/* Both ranks parse the arguments; rank 0 alone says what is wrong. */
#define bad(...) bench_bad(NAME, rank == 0, __VA_ARGS__)

static int parse(int argc, char **argv, struct opts *o)
{
    const char *sizes = NULL, *range = NULL, *warmup = NULL, *blocks = NULL;
    const struct bench_opt opts[] = {
        {"--json", .text = &o->json},      {"--busy-target", .flag = &o->busy_target},
        {"--sweep", .flag = &o->sweep},    {"--iters", .value = &o->iters},
        {"--window", .value = &o->window}, {"--rounds", .value = &o->rounds},
        {"--sizes", .text = &sizes},       {"-m", .text = &range},
        {"--warmup", .text = &warmup},     {"--blocks", .text = &blocks},
        {"--get-gap-us", .value = &o->get_gap_us},
        {NULL},
    };

    *o = (struct opts){.iters = 100000, .window = 256, .rounds = 5, .blocks = 200};
    if (bench_parse_opts(argc, argv, opts) != 0)
        return bad("an unknown option, a missing value or a count that is not a positive integer");
    if (o->rounds > MAX_ROUNDS)
        return bad("--rounds %ld: at most %d", o->rounds, MAX_ROUNDS);
    if (o->window > o->iters)
        return bad("--window %ld is more than --iters %ld", o->window, o->iters);
    if (warmup != NULL && bench_parse_count(NAME, rank == 0, "--warmup", warmup, &o->warmup) != 0)
        return -1;
    if (blocks != NULL && bench_parse_count(NAME, rank == 0, "--blocks", blocks, &o->blocks) != 0)
        return -1;
    if (o->blocks > MAX_BLOCKS)
        return bad("--blocks %ld: at most %d", o->blocks, MAX_BLOCKS);
    if (o->get_gap_us != 0 && !o->busy_target)
        return bad("--get-gap-us paces the gets of --busy-target: give both");
    if (o->get_gap_us > 1000000)
        return bad("--get-gap-us %ld: at most 1000000 (a second)", o->get_gap_us);
    if (sizes != NULL && range != NULL)
        return bad("--sizes and -m both choose the sizes: give one of them");
    if (sizes != NULL || range != NULL) {
        if (o->busy_target)
            return bad("--busy-target runs no sweep: --sizes and -m do not apply");
        o->nsizes = sizes ? bench_parse_size_list(NAME, rank == 0, sizes, MAX_SIZE, o->sizes, MAX_SIZES)
                          : bench_parse_size_range(NAME, rank == 0, range, MAX_SIZE, o->sizes, MAX_SIZES);
        if (o->nsizes < 0)
            return -1;
        o->sweep = 1;
    } else {
        memcpy(o->sizes, default_sizes, sizeof(default_sizes));
        o->nsizes = (int)NDEFAULT;
    }
    o->iters -= o->iters % o->window;
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o;
    weft_config_t cfg;
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg;
    void *local;
    MPI_Win win;
    void *winbuf, *mapped;
    char transport[256], *src = NULL, *dst = NULL;
    int direct;

    bench_mpi_start(&argc, &argv, &rank, &nranks);
    if (bench_need_two("weft_bench_rma", parse(argc, argv, &o) == 0, rank, nranks, usage) != 0)
        return 2;
    OK(weft_config_init(&cfg));
    OK(weft_init(&cfg, &ctx));
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, MAX_SIZE, &seg, &local));
    direct = weft_ptr(ctx, 1, seg, 0, &mapped) == WEFT_OK;
    if (direct)
        snprintf(transport, sizeof(transport), "direct");
    else
        bench_transport_of(ep, 1, seg, transport, sizeof(transport));

    if (o.busy_target) {
        busy_cpus();
        for (long r = 0; r < o.rounds; r++) {
            busy_wakeups();
            busy_target(ctx, ep, seg, local, &o, cfg.progress_thread);
        }
    } else {
        MPI_Win_allocate(MAX_SIZE, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &winbuf, &win);
        MPI_Win_lock_all(0, win);
        if (o.sweep) {
            /* page-aligned and written, like the segment */
            if (posix_memalign((void **)&src, 4096, MAX_SIZE) != 0 ||
                posix_memalign((void **)&dst, 4096, MAX_SIZE) != 0)
                die("buffers of the sweep", WEFT_ERR_NO_MEMORY);
            memset(src, 1, MAX_SIZE);
            memset(dst, 2, MAX_SIZE);
        }
        char *const dsts[BW_NIMPL] = {NULL, dst, direct ? mapped : NULL};
        /* warm-up: connections, keys, caches */
        struct opts warm = o;
        warm.iters = o.window * 4;
        warm.warmup = 0;
        warm.blocks = 0;
        weft_round(ctx, ep, seg, &warm);
        if (!direct)
            ucx_round(ctx, ep, seg, &warm);
        memset(samples, 0, sizeof(samples));
        nsamples = 0;
        for (long r = 0; r < o.rounds; r++) {
            /* alternate the order so neither side always runs first */
            if (r % 2 == 0) {
                weft_round(ctx, ep, seg, &o);
                if (direct)
                    direct_round(ctx, ep, seg, mapped, &o);
                else
                    ucx_round(ctx, ep, seg, &o);
            } else {
                if (direct)
                    direct_round(ctx, ep, seg, mapped, &o);
                else
                    ucx_round(ctx, ep, seg, &o);
                weft_round(ctx, ep, seg, &o);
            }
            mpi_rma_round(win, &o);
            mpi_2sided_round(&o);
            if (o.sweep)
                sweep_round(ctx, ep, seg, win, src, dsts, r, &o);
        }
        free(src);
        free(dst);
        MPI_Win_unlock_all(win);
        MPI_Win_free(&win);
    }
    if (rank == 0)
        write_json(&o, transport, cfg.progress_thread);
    bench_finish("weft_bench_rma", ctx, seg);
    return 0;
}
