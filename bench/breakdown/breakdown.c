/*
 * weft_bench_breakdown -- where the time of an 8-byte message goes: weft's
 * injection overhead and latency, each observed without instrumentation
 * and broken down into components measured by the trace points, one point
 * at a time (docs/breakdown.md has the method and every field).
 *
 *   mpirun -np 2 weft_bench_breakdown [--json FILE] [--iters N] [--lat-iters N]
 *                                     [--batch Q] [--rounds R]
 *
 * Injection (rank 0 puts to rank 1): N weft_put_nbi of 8 bytes, a
 * weft_progress every Q puts (the completion batch of Eq. 1/2), one
 * weft_flush at the end.  Latency: a ping-pong of 8-byte active messages,
 * half the round trip.  Transfer: the same ping-pong written directly
 * against UCX (ucp_am_send_nbx, a handler that sets a flag) on weft's
 * connection, minus that probe's own post and successful progress calls.
 *
 * Each of R rounds measures the observed figures (profiling off) and each
 * component with only its point selected, so that no timer disturbs
 * another component, alternating chunk by chunk (injection) or block of
 * round trips by block (latency) inside one loop: on a shared or virtual
 * machine a core's speed changes by up to 2x from one millisecond to the
 * next, and components measured in separate passes would be added at
 * different speeds.  The timer's own overhead is calibrated in the same
 * loop, in every round, and replaces the library's in that round's
 * figures (an empty region's reading changes with the core's speed too).
 * The JSON holds every figure of the median round (the round whose
 * observed figure is the median), for the same reason, and each round's
 * model.
 */
#include "ablate.h"
#include "common.h"
#include "prof/prof.h"
#include "selfcheck.h"
#include <weft.h>
#include <weft_ucx.h>

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SAMPLES 65536                /* timed chunks or round trips per pass */
#define AM_ID 1
#define RAW_AM_ID (WEFT_AM_MAX_ID + 1)   /* beyond weft's ids: the probe's own */

static int rank, nranks;
static weft_ctx_t ctx;
static volatile int got;           /* set by the AM handlers */
static uint64_t done_count;        /* injection passes finished, told to rank 1 */
static struct bench_calm sched;    /* the ranks' waits for a core (rank 0 reads them) */
/* weft's UCX connection to the peer, for the loops without weft */
static ucp_worker_h ucx_worker;
static ucp_ep_h ucx_peer, ucx_self;
static ucp_rkey_h ucx_rkey;
static uint64_t ucx_raddr;

static void die(const char *what, weft_status_t st)
{
    fprintf(stderr, "weft_bench_breakdown: %s: %s (%s)\n", what, weft_strerror(st), weft_last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
}
#define OK(call) do { weft_status_t s_ = (call); if (s_ != WEFT_OK) die(#call, s_); } while (0)

/* ---- figures over rounds ---------------------------------------------- */

/* Each figure is measured once per round.  The JSON gives every figure of
 * one round, the median round (the one whose observed figure is the median
 * over rounds; one for the injection, one for the latency), so that the
 * figures it adds up were all measured side by side, on the same machine:
 * medians over rounds taken figure by figure could come from different
 * rounds, at different core speeds.  It keeps the observed figures of
 * every round.  Within a round,
 * injection figures are medians over chunks of a value per put, latency
 * figures medians of round trips or of samples, so that the moments the
 * scheduler takes a rank away count in none. */
static double samples[MAX_SAMPLES];

/* The median round of s: the round whose value is the median (the lower
 * middle one of an even count). */
static int median_round(const struct bench_series *s)
{
    int below, equal;

    for (int r = 0; r < s->n; r++) {
        below = equal = 0;
        for (int i = 0; i < s->n; i++) {
            below += s->v[i] < s->v[r];
            equal += s->v[i] == s->v[r];
        }
        if (below <= (s->n - 1) / 2 && (s->n - 1) / 2 < below + equal)
            return r;
    }
    return 0;
}

/* The figure of round r (0 if it was not measured). */
static double at(const struct bench_series *s, int r)
{
    return r < s->n ? s->v[r] : 0;
}

/* Median of samples[0, n), which it sorts (0 if n is 0). */
static double median_of(long n)
{
    return n > 0 ? bench_median(samples, (int)n) : 0;
}

/* A time per sample over both ranks (rank 0 gets it) from each rank's
 * median and count: the count-weighted median, as robust as the observed
 * latency's. */
static double both_ranks(double median_ns, uint64_t count)
{
    double n = (double)count, out;

    OK(weft_barrier(ctx));
    bench_weighted_ranks(&median_ns, &n, &out, 1);
    return out;
}

/* This rank's timer overhead of the latency pass (its L_TIMER blocks),
 * in ns: the latency's figures are corrected by it as the injection's. */
static double lat_timer_ns;

/* A point's time per sample over both ranks, each rank's sample with its
 * own overhead of the pass taken off instead of the library's. */
static double per_sample(const char *point)
{
    weft_prof_stat_t s;
    double ghz, ovh;

    OK(weft_prof_stat(point, &s));
    OK(weft_prof_timer(&ghz, &ovh));
    return both_ranks(bench_timer_corrected(s.median_ns, 1, ovh, lat_timer_ns), s.count);
}

/* ---- injection -------------------------------------------------------- */

/* Puts per timed chunk: 64 batches, or the whole batches of n when fewer
 * (q <= n).  A pass of n puts per kind makes n / chunk chunks of each. */
static long chunk_of(long n, long q)
{
    long c = 64 * q;

    while (n / c > MAX_SAMPLES)
        c *= 2;
    return c < n ? c : n / q * q;
}

/* What a chunk of the injection benchmark measures: the observed time
 * (nothing selected), the benchmark's own loop (Misc), one point, or
 * whole calls timed by the caller (no library point selected).  Kinds
 * alternate chunk by chunk in one loop, so that every figure sees the same
 * machine: on a shared or virtual machine a core's speed changes by up to
 * 2x from one millisecond to the next, and a sum of components measured
 * in separate passes would add figures taken at different speeds.  Each
 * chunk gives one value per put of its figure (its time, or its point's
 * total), and a figure is the median of its chunks' values: the same
 * statistic for the observed time and every component. */
enum {
    I_OBSERVED, I_MISC, I_HLP_POST, I_LLP_POST, I_LLP_PROG, I_TX_PROG, I_BUSY, I_HLP_TAIL,
    I_HLP_PROG, I_POST_CALL, I_PROG_CALL, I_TIMER, I_TWICE, I_UCX, I_UCX_PROG, I_WEFT_PROG,
    I_KINDS
};
_Static_assert(I_KINDS <= BENCH_MAX_KINDS, "struct bench_injection holds every kind");

/* I_TIMER calibrates the timer where the components are measured: an
 * empty region's reading (weft__prof_empty_ticks) at the speed of the
 * moment, in chunks of its own among the others; the components are
 * corrected by it (inj_fig).  I_TWICE is the observed loop with two puts
 * per iteration: less the observed loop, what a put adds to the running
 * loop, against which the caller's timing of one put shows what the
 * serialising timer reads of a call (a check, not a component). */
static const char *const kind_name[I_KINDS] = {
    "observed", "misc", "HLP_post", "LLP_post", "LLP_prog", "HLP_tx_prog", "busy_post",
    "HLP_post_tail", "HLP_prog", "weft_put_nbi", "weft_progress", "timer", "weft_put_nbi_twice",
    "ucx", "ucx_progress", "weft_progress_only",
};

/* The differential method's loops (docs/breakdown.md, "Differential
 * measurement"), none timed inside: I_UCX is the loop with weft's layer
 * replaced by the UCX calls weft makes (ucp_put_nbx with a completion
 * callback, ucp_worker_progress every q, weft's back-pressure at 4096 in
 * flight); I_UCX_PROG the Misc loop with ucp_worker_progress in place of
 * the empty progress call, I_WEFT_PROG with weft_progress.  With I_MISC
 * and I_OBSERVED they telescope: misc, + LLP_prog, + LLP_post, + weft. */

/* Points a kind selects in the library; LLP_prog's region also times the
 * calls that found nothing (LLP_poll). */
static const uint32_t kind_mask[I_KINDS] = {
    [I_HLP_POST] = 1u << WEFT__PROF_HLP_POST,
    [I_LLP_POST] = 1u << WEFT__PROF_LLP_POST,
    [I_LLP_PROG] = 1u << WEFT__PROF_LLP_PROG,
    [I_TX_PROG] = 1u << WEFT__PROF_HLP_TX_PROG,
    [I_BUSY] = 1u << WEFT__PROF_BUSY_POST,
    [I_HLP_TAIL] = 1u << WEFT__PROF_HLP_POST_TAIL,
    [I_HLP_PROG] = 1u << WEFT__PROF_HLP_PROG,
};
static const char *const kind_point[I_KINDS][2] = {
    [I_HLP_POST] = {"HLP_post"},
    [I_LLP_POST] = {"LLP_post"},
    [I_LLP_PROG] = {"LLP_prog", "LLP_poll"},
    [I_TX_PROG] = {"HLP_tx_prog"},
    [I_BUSY] = {"busy_post"},
    [I_HLP_TAIL] = {"HLP_post_tail"},
    [I_HLP_PROG] = {"HLP_prog"},
};

/* Total ns so far of the points a kind selects (0 for the others), and
 * in *count their samples. */
static double kind_total(int kind, double *count)
{
    double sum = 0;
    weft_prof_stat_t st;

    *count = 0;
    for (int i = 0; i < 2; i++)
        if (kind_point[kind][i] != NULL) {
            OK(weft_prof_stat(kind_point[kind][i], &st));
            sum += st.total_ns;
            *count += (double)st.count;
        }
    return sum;
}

static long raw_inflight;

static void raw_put_done(void *request, ucs_status_t status, void *user_data)
{
    (void)status, (void)user_data;
    raw_inflight--;
    ucp_request_free(request);
}

/* The put weft_put_nbi makes, called directly. */
static void raw_put(const uint64_t *src, long k)
{
    static const ucp_request_param_t prm = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK, .cb.send = raw_put_done};
    ucs_status_ptr_t r;

    while (raw_inflight >= 4096)
        ucp_worker_progress(ucx_worker);
    r = ucp_put_nbx(ucx_peer, src, 8, ucx_raddr + (uint64_t)(k & 63) * 8, ucx_rkey, &prm);
    if (UCS_PTR_IS_ERR(r)) {
        fprintf(stderr, "weft_bench_breakdown: ucp_put_nbx: %s\n", ucs_status_string(UCS_PTR_STATUS(r)));
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (r != NULL)
        raw_inflight++;
}

/* One chunk of m puts (a multiple of q) of `kind`, a progress every q:
 * the chunk's value per put, in ns, *ns its time per put, and *regions
 * the timed regions per put (each with the library's overhead taken
 * off).  *next counts the puts, for their offsets.  An I_TIMER chunk
 * puts nothing: its value is an empty region's reading. */
static double inject_chunk(weft_ep_t ep, weft_seg_t seg, long m, long q, int kind, long *next,
                           double *ns, double *regions)
{
    uint64_t src = 42, c = 0, ticks = 0;
    long k = *next, calls = 0;
    double count0, before = kind_total(kind, &count0), count1, t0, ghz, ovh;

    OK(weft_prof_timer(&ghz, &ovh));
    *regions = 0;
    if (kind == I_TIMER) {
        t0 = bench_now();
        ovh = weft__prof_empty_ticks() / ghz;
        *ns = 1e9 * (bench_now() - t0) / (double)m;
        return ovh;
    }
    if (weft__prof_select(kind_mask[kind]) != 0)
        die("weft__prof_select", WEFT_ERR_UNSUPPORTED);
    t0 = bench_now();
    for (long b = 0; b < m / q; b++) {
        for (long i = 0; i < q; i++, k++) {
            if (kind == I_MISC || kind == I_UCX_PROG || kind == I_WEFT_PROG) {
                OK(bench_nop_post(ep, 1, seg, (size_t)(k & 63) * 8, &src, 8));
                continue;
            }
            if (kind == I_UCX) {
                raw_put(&src, k);
                continue;
            }
            if (kind == I_POST_CALL)
                c = weft__prof_start();
            OK(weft_put_nbi(ep, 1, seg, (size_t)(k & 63) * 8, &src, 8));
            if (kind == I_TWICE)
                OK(weft_put_nbi(ep, 1, seg, (size_t)((k + 32) & 63) * 8, &src, 8));
            if (kind == I_POST_CALL)
                ticks += weft__prof_stop() - c, calls++;
        }
        if (kind == I_MISC) {
            OK(bench_nop_progress(ep, NULL));
            continue;
        }
        if (kind == I_UCX || kind == I_UCX_PROG) {
            ucp_worker_progress(ucx_worker);
            continue;
        }
        if (kind == I_PROG_CALL)
            c = weft__prof_start();
        OK(weft_progress(ep, NULL));
        if (kind == I_PROG_CALL)
            ticks += weft__prof_stop() - c, calls++;
    }
    t0 = 1e9 * (bench_now() - t0) / (double)m;
    /* the selection ends with the chunk: the next chunk's kind, or the
     * final flush, is not timed as this one */
    if (weft__prof_select(0) != 0)
        die("weft__prof_select", WEFT_ERR_UNSUPPORTED);
    *next = k;
    *ns = t0;
    if (kind == I_OBSERVED || kind == I_MISC || kind == I_TWICE || kind >= I_UCX)
        return t0;
    if (kind == I_POST_CALL || kind == I_PROG_CALL) {
        *regions = (double)calls / (double)m;
        return ((double)ticks / ghz - (double)calls * ovh) / (double)m;
    }
    before = kind_total(kind, &count1) - before;
    *regions = (count1 - count0) / (double)m;
    return before / (double)m;
}

/* The injection's components by the differential method, each a
 * combination of the loops' times per put in one cycle (ablate_combo):
 *   misc        = I_MISC                        the loop with empty calls
 *   LLP_prog    = I_UCX_PROG - I_MISC           UCX's progress, per put
 *   HLP_tx_prog = I_WEFT_PROG - I_UCX_PROG      weft_progress's own code
 *   LLP_post    = I_UCX - I_UCX_PROG            the UCX put
 *   HLP_post    = I_OBSERVED - I_UCX - (I_WEFT_PROG - I_UCX_PROG)
 *                 weft's put around the UCX call, its back-pressure and
 *                 window flushes (busy_post) and its completion callbacks
 * They add up to I_OBSERVED in every cycle. */
enum { DI_HLP_POST, DI_LLP_POST, DI_HLP_TX_PROG, DI_LLP_PROG, DI_MISC, DI_N };
static const char *const di_name[DI_N] = {"HLP_post", "LLP_post", "HLP_tx_prog", "LLP_prog", "misc"};
static const struct ablate_def di_combo[DI_N] = {
    [DI_HLP_POST] = {{I_OBSERVED, I_UCX, I_WEFT_PROG, I_UCX_PROG}, {1, -1, -1, 1}},
    [DI_LLP_POST] = {{I_UCX, I_UCX_PROG, I_UCX_PROG, I_UCX_PROG}, {1, -1, 0, 0}},
    [DI_HLP_TX_PROG] = {{I_WEFT_PROG, I_UCX_PROG, I_UCX_PROG, I_UCX_PROG}, {1, -1, 0, 0}},
    [DI_LLP_PROG] = {{I_UCX_PROG, I_MISC, I_MISC, I_MISC}, {1, -1, 0, 0}},
    [DI_MISC] = {{I_MISC, I_MISC, I_MISC, I_MISC}, {1, 0, 0, 0}},
};
/* The differential components of the last full injection pass. */
static struct ablate_est inj_diff[DI_N];
/* ... and over rounds: each component and its half-width (of the
 * injection, DI_N of them, or of the latency, DL_N) */
#define DIFF_MAX 5
_Static_assert(DI_N <= DIFF_MAX, "struct diff_rounds holds the injection's components");
struct diff_rounds {
    struct bench_series ns[DIFF_MAX], res[DIFF_MAX];
};
static struct diff_rounds inj_dr, lat_dr;

/* inj_diff from the chunks' values per put val[kind][c]: the cycles kept
 * whose chunks of every loop involved were calm, or the cycles kept when
 * fewer than ABLATE_MIN_PAIRS were. */
static void inj_differential(double (*val)[MAX_SAMPLES], const char *keep,
                             char (*calm)[MAX_SAMPLES], long chunks)
{
    static char use[MAX_SAMPLES];
    static const int loops[] = {I_OBSERVED, I_MISC, I_UCX, I_UCX_PROG, I_WEFT_PROG};
    const double *rows[I_KINDS];
    const char *calm_rows[I_KINDS];

    for (int k = 0; k < I_KINDS; k++) {
        rows[k] = val[k];
        calm_rows[k] = calm[k];
    }
    ablate_cycles(rows, calm_rows, keep, chunks, loops, (int)(sizeof(loops) / sizeof(loops[0])),
                  di_combo, DI_N, use, inj_diff);
}

/* A cycle is one chunk of every kind, about a millisecond of the loop.
 * The figures of a pass come from the cycles whose observed chunk ran
 * within BENCH_SPEED_BAND of the pass's median (bench_keep_speed): when the
 * core's speed changes during a pass (2x on this VM), the medians of the
 * kinds taken over all cycles can fall at different speeds, and their sum
 * is then no model of the observed median (one run of 2026-11-23: +45 %,
 * a tail of 14 ns in place of 2-5).  The cycles at another speed are left
 * out of every figure alike.
 *
 * Chunks during which a rank waited for a core (bench_calm) are left out
 * the same way: a cycle is kept only if its observed chunk was calm (the
 * median speed is that of the calm observed chunks), and a kind's figure
 * comes from its calm chunks of the cycles kept (bench_median_calm says
 * what stands in when there are none).  On a loaded machine a sender whose
 * peer is descheduled stalls for milliseconds: over TCP, on 2026-11-23
 * with other jobs running, half the chunks of every kind ran 5-100x
 * slower than the rest, and nearly all of those (2464 of 2623) were
 * chunks in which a rank had waited for a core, against 190 of 2195 of
 * the fast ones; the medians of the kinds then fell on either side, and
 * rounds came out -82 % to +45 %.
 *
 * Rank 0: about n puts per kind in [first, last), kinds alternating chunk
 * by chunk (64 batches of q); fig[kind] is the median over the kind's
 * chunks (of the cycles kept, above) of its value per put, chunk_ns[kind]
 * of their time per put (what the kind's own timing costs shows beside
 * the observed time) and regions[kind] of their timed regions per put;
 * *kept the share of the cycles kept (all when the pass has no observed
 * kind; at least the one whose observed chunk is the lower middle) and
 * *calm_share the share of the pass's chunks that were calm; *cycles the
 * cycles it ran: past n puts per kind until half as many chunks of every
 * kind were calm (bench_calm_enough), at most 4x.
 * Rank 1 serves the puts until rank 0 signals the end.  The final flush
 * is outside every chunk. */
static void inject(weft_ep_t ep, weft_seg_t seg, long n, long q, int first, int last, double *fig,
                   double *chunk_ns, double *regions, double *kept, double *calm_share,
                   double *cycles)
{
    static double val[I_KINDS][MAX_SAMPLES], tim[I_KINDS][MAX_SAMPLES], reg[I_KINDS][MAX_SAMPLES];
    static char keep[MAX_SAMPLES], calm[I_KINDS][MAX_SAMPLES];
    long m = chunk_of(n, q), chunks = n / m, next = 0, nkept, ncalm = 0, c, limit;
    unsigned long long waited;

    OK(weft_barrier(ctx));
    done_count++;
    if (rank == 0) {
        if (chunks > MAX_SAMPLES)
            chunks = MAX_SAMPLES;
        limit = 4 * chunks < MAX_SAMPLES ? 4 * chunks : MAX_SAMPLES;
        waited = bench_calm_waited(&sched);
        for (c = 0; c < chunks || (c < limit && !bench_calm_enough(&calm[0][0], MAX_SAMPLES, first,
                                                                   last, c, (chunks + 1) / 2));
             c++)
            for (int j = 0; j < last - first; j++) {
                /* rotate the order, so that no kind always follows another */
                int kind = first + (int)((j + c) % (last - first));
                unsigned long long now;

                val[kind][c] = inject_chunk(ep, seg, m, q, kind, &next, &tim[kind][c],
                                            &reg[kind][c]);
                now = bench_calm_waited(&sched);   /* also the next chunk's start */
                calm[kind][c] = now == waited;
                waited = now;
                ncalm += calm[kind][c];
            }
        OK(weft_flush(ep));
        while (raw_inflight > 0)
            ucp_worker_progress(ucx_worker);
        *cycles = (double)c;
        chunks = c;
        nkept = chunks;
        memset(keep, 1, (size_t)chunks);
        if (first == I_OBSERVED)
            nkept = bench_keep_speed(val[I_OBSERVED], calm[I_OBSERVED], chunks, BENCH_SPEED_BAND,
                                     keep);
        *kept = (double)nkept / (double)chunks;
        *calm_share = (double)ncalm / (double)(chunks * (last - first));
        if (first == I_OBSERVED && last == I_KINDS)
            inj_differential(val, keep, calm, chunks);
        for (int kind = first; kind < last; kind++) {
            fig[kind] = bench_median_calm(val[kind], keep, calm[kind], chunks);
            chunk_ns[kind] = bench_median_calm(tim[kind], keep, calm[kind], chunks);
            regions[kind] = bench_median_calm(reg[kind], keep, calm[kind], chunks);
        }
        OK(weft_put(ep, 1, seg, 1024, &done_count, 8));
    } else {
        OK(weft_signal_wait_until(ep, seg, 1024, done_count, NULL));
    }
}

static void injection_round(weft_ep_t ep, weft_seg_t seg, const struct bench_breakdown_opts *o,
                            struct bench_injection *r)
{
    double fig[I_KINDS] = {0}, chunk_ns[I_KINDS] = {0}, regions[I_KINDS] = {0}, kept, calm, cycles;

    /* the observed figure, Misc, every point's component, the whole calls
     * and the timer's calibration, interleaved */
    OK(weft_prof_reset());
    inject(ep, seg, o->iters, o->batch, I_OBSERVED, I_KINDS, fig, chunk_ns, regions, &kept, &calm,
           &cycles);
    bench_injection_push(r, I_KINDS, fig, chunk_ns, regions, kept, calm, cycles);
    for (int d = 0; d < DI_N; d++) {
        bench_series_push(&inj_dr.ns[d], inj_diff[d].ns);
        bench_series_push(&inj_dr.res[d], inj_diff[d].res);
    }
}

/* The library's timer overhead in ns (what it took off every sample). */
static double library_overhead(void)
{
    double ghz, ovh;

    OK(weft_prof_timer(&ghz, &ovh));
    return ovh;
}

/* A kind's figure of round r with the timer's overhead of that round in
 * place of the library's: the library subtracts the overhead it measured
 * at the first selection, but an empty region's reading changes with the
 * core's speed (13.6 to 18 ns on this VM), and a region of a few ns is
 * timed with it. */
static double inj_fig(const struct bench_injection *in, int kind, int r)
{
    return bench_timer_corrected(at(&in->fig[kind], r), at(&in->regions[kind], r),
                                 library_overhead(), at(&in->fig[I_TIMER], r));
}

/* Eq. 2's sum in round r: the components of write_json (the callbacks,
 * HLP_tx_prog, are inside LLP_prog's region and cancel). */
static double inj_model(const struct bench_injection *in, int r)
{
    static const int parts[] = {I_HLP_POST, I_HLP_TAIL, I_LLP_POST, I_LLP_PROG, I_HLP_PROG,
                                I_BUSY, I_MISC};
    double sum = 0;

    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
        sum += inj_fig(in, parts[i], r);
    return sum;
}

/* ---- latency: weft AM ping-pong --------------------------------------- */

static void on_ping(weft_ctx_t ctx, int src, const void *hdr, size_t hlen, const void *payload,
                    size_t len, void *arg)
{
    (void)ctx, (void)src, (void)hdr, (void)hlen, (void)payload, (void)len, (void)arg;
    got = 1;
}

static void await(weft_ep_t ep)
{
    while (!got)
        OK(weft_progress(ep, NULL));
    got = 0;
}

/* One round trip of 8 bytes; rank 0 returns its one-way time in ns (half
 * the round trip). */
static double pingpong_once(weft_ep_t ep)
{
    uint64_t payload = 42;
    weft_event_t ev;
    double t0 = bench_now(), ns = 0;

    if (rank == 0) {
        OK(weft_am_send_nb(ep, 1, AM_ID, NULL, 0, &payload, 8, &ev));
        await(ep);
        ns = 0.5e9 * (bench_now() - t0);
    } else {
        await(ep);
        OK(weft_am_send_nb(ep, 0, AM_ID, NULL, 0, &payload, 8, &ev));
    }
    OK(weft_wait(&ev));
    return ns;
}

/* ---- transfer probe: the same ping-pong on raw UCX --------------------- */

static ucs_status_t on_raw(void *arg, const void *header, size_t header_length, void *data,
                           size_t length, const ucp_am_recv_param_t *param)
{
    (void)arg, (void)header, (void)header_length, (void)data, (void)length, (void)param;
    got = 1;
    return UCS_OK;
}

enum { TIME_NONE, TIME_POST, TIME_PROG };

/* The probe's own timed calls on this rank, in ticks with the timer's
 * overhead (the library's tables hold weft's points, interleaved with
 * them); the first MAX_SAMPLES of a round. */
struct ticks {
    double v[MAX_SAMPLES];
    long n;
    uint64_t count;
};
static struct ticks probe_post, probe_prog;

static void tick_sample(struct ticks *t, uint64_t ticks)
{
    if (t->n < MAX_SAMPLES)
        t->v[t->n++] = (double)ticks;
    t->count++;
}

/* The probe's call time per sample over both ranks, the overhead of the
 * pass subtracted. */
static double probe_per_sample(struct ticks *t)
{
    double ghz, ovh, med = 0;

    OK(weft_prof_timer(&ghz, &ovh));
    if (t->n > 0) {
        memcpy(samples, t->v, sizeof(double) * (size_t)t->n);
        med = median_of(t->n) / ghz - lat_timer_ns;
    }
    return both_ranks(med, t->count);
}

static ucs_status_ptr_t raw_post(ucp_ep_h peer, int timed)
{
    static uint64_t hdr = 0, payload = 42;
    ucp_request_param_t p = {.op_attr_mask = 0};
    uint64_t c = timed ? weft__prof_start() : 0;
    ucs_status_ptr_t r = ucp_am_send_nbx(peer, RAW_AM_ID, &hdr, sizeof(hdr), &payload,
                                         sizeof(payload), &p);

    if (c)
        tick_sample(&probe_post, weft__prof_stop() - c);
    if (UCS_PTR_IS_ERR(r)) {
        fprintf(stderr, "weft_bench_breakdown: ucp_am_send_nbx: %s\n",
                ucs_status_string(UCS_PTR_STATUS(r)));
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return r;
}

static void raw_complete(ucp_worker_h w, ucs_status_ptr_t r)
{
    if (r == NULL)
        return;
    while (ucp_request_check_status(r) == UCS_INPROGRESS)
        ucp_worker_progress(w);
    ucp_request_free(r);
}

static void raw_await(ucp_worker_h w, int timed)
{
    while (!got) {
        uint64_t c = timed ? weft__prof_start() : 0;
        unsigned k = ucp_worker_progress(w);

        if (c && k)
            tick_sample(&probe_prog, weft__prof_stop() - c);
    }
    got = 0;
}

/* pingpong_once() written against UCX, with weft's header and payload
 * sizes; with `what` the post calls or the successful progress calls are
 * timed (into probe_post / probe_prog). */
static double raw_pingpong_once(ucp_worker_h w, ucp_ep_h peer, int what)
{
    ucs_status_ptr_t r;
    double t0 = bench_now(), ns = 0;

    if (rank == 0) {
        r = raw_post(peer, what == TIME_POST);
        raw_await(w, what == TIME_PROG);
        ns = 0.5e9 * (bench_now() - t0);
    } else {
        raw_await(w, what == TIME_PROG);
        r = raw_post(peer, what == TIME_POST);
    }
    raw_complete(w, r);
    return ns;
}

/* What a block of round trips measures: weft's observed latency, the
 * probe's, one of weft's points, or one of the probe's calls.  As for the
 * injection, kinds alternate block by block, on both ranks in step; in an
 * L_TIMER block each rank calibrates the timer instead.  The kinds rotate
 * in this order, so a kind mostly follows the one before it: L_TIMER is
 * followed by a point's block, whose median per sample does not feel a
 * slower first round trip after the calibration. */
enum {
    L_OBSERVED, L_RAW, L_TIMER, L_HLP_POST, L_HLP_TAIL, L_LLP_POST, L_RX_PROG, L_LLP_PROG,
    L_RAW_POST, L_RAW_PROG, L_SELF, L_KINDS
};
#define LAT_BLOCK 16

/* Only the progress calls that returned events count as LLP_prog: those
 * that found nothing overlap the transfer; the AM delivery inside is
 * HLP_rx_prog. */
static const uint32_t lat_mask[L_KINDS] = {
    [L_HLP_POST] = 1u << WEFT__PROF_HLP_POST,
    [L_HLP_TAIL] = 1u << WEFT__PROF_HLP_POST_TAIL,
    [L_LLP_POST] = 1u << WEFT__PROF_LLP_POST,
    [L_RX_PROG] = 1u << WEFT__PROF_HLP_RX_PROG,
    [L_LLP_PROG] = 1u << WEFT__PROF_LLP_PROG,
};

/* The latency's components by the differential method, from the medians
 * of blocks of round trips side by side (block b of every kind; rank 0's):
 *   HLP      = weft's ping-pong - the probe's    weft's code on both sides
 *   transfer = the probe - the self loop         the path between the ranks
 *   LLP      = the self loop                     UCX's post and delivery
 * where the self loop is the probe's message sent to this rank's own
 * worker (UCX's self transport: a post and a progress call that delivers
 * it, no path between processes).  They add up to the observed latency. */
enum { DL_HLP, DL_LLP, DL_TRANSFER, DL_N };
_Static_assert(DL_N <= DIFF_MAX, "struct diff_rounds holds the latency's components");
static const char *const dl_name[DL_N] = {"HLP", "LLP", "transfer"};
static struct ablate_est lat_diff[DL_N];
static double blk[3][MAX_SAMPLES / LAT_BLOCK + 1];  /* observed, probe, self: block medians */

/* One message from this rank to itself through UCX (the self loop), in
 * ns; 0 when the self endpoint could not be made. */
static double self_once(ucp_worker_h w)
{
    ucs_status_ptr_t r;
    double t0 = bench_now();

    if (ucx_self == NULL)
        return 0;
    r = raw_post(ucx_self, 0);
    raw_await(w, 0);
    raw_complete(w, r);
    return 1e9 * (bench_now() - t0);
}

/* n round trips of each kind, interleaved by blocks; obs and raw get rank
 * 0's median one-way times of weft and of the probe, lat_timer_ns this
 * rank's timer overhead (the median of its L_TIMER blocks), lat_diff the
 * differential components. */
static void latency_pass(weft_ep_t ep, ucp_worker_h w, ucp_ep_h peer, long n, double *obs,
                         double *raw)
{
    static double t[3][MAX_SAMPLES];
    double bs[LAT_BLOCK];
    long nt[3] = {0, 0, 0}, blocks = (n + LAT_BLOCK - 1) / LAT_BLOCK, nb = 0;
    double ghz, ovh;

    OK(weft_prof_timer(&ghz, &ovh));
    OK(weft_barrier(ctx));
    for (long b = 0; b < blocks; b++)
        for (int j = 0; j < L_KINDS; j++) {
            int kind = (int)((j + b) % L_KINDS);

            if (kind == L_TIMER) {
                /* the calibration takes about 15 µs, not the same on both
                 * ranks: an untimed round trip puts them back in step, or
                 * the next block times the wait */
                t[2][nt[2]++] = weft__prof_empty_ticks() / ghz;
                pingpong_once(ep);
                continue;
            }
            if (kind == L_SELF) {
                /* each rank its own messages; then back in step */
                for (long i = 0; i < LAT_BLOCK; i++)
                    bs[i] = self_once(w);
                if (b < (long)(sizeof(blk[2]) / sizeof(blk[2][0])))
                    blk[2][b] = ablate_median(bs, LAT_BLOCK);
                pingpong_once(ep);
                continue;
            }
            if (weft__prof_select(lat_mask[kind]) != 0)
                die("weft__prof_select", WEFT_ERR_UNSUPPORTED);
            for (long i = 0; i < LAT_BLOCK; i++) {
                double v;

                if (kind == L_RAW || kind == L_RAW_POST || kind == L_RAW_PROG) {
                    v = raw_pingpong_once(w, peer, kind == L_RAW_POST ? TIME_POST
                                                   : kind == L_RAW_PROG ? TIME_PROG : TIME_NONE);
                    if (kind == L_RAW && nt[1] < MAX_SAMPLES)
                        t[1][nt[1]++] = v;
                } else {
                    v = pingpong_once(ep);
                    if (kind == L_OBSERVED && nt[0] < MAX_SAMPLES)
                        t[0][nt[0]++] = v;
                }
                bs[i] = v;
            }
            if ((kind == L_OBSERVED || kind == L_RAW) &&
                b < (long)(sizeof(blk[0]) / sizeof(blk[0][0])))
                blk[kind == L_RAW][b] = ablate_median(bs, LAT_BLOCK);
            if (weft__prof_select(0) != 0)
                die("weft__prof_select", WEFT_ERR_UNSUPPORTED);
        }
    nb = blocks < (long)(sizeof(blk[0]) / sizeof(blk[0][0])) ? blocks
                                                           : (long)(sizeof(blk[0]) / sizeof(blk[0][0]));
    ablate_paired(blk[0], blk[1], NULL, nb, &lat_diff[DL_HLP]);
    ablate_paired(blk[1], blk[2], NULL, nb, &lat_diff[DL_TRANSFER]);
    {
        static const double zero[sizeof(blk[0]) / sizeof(blk[0][0])];

        ablate_paired(blk[2], zero, NULL, nb, &lat_diff[DL_LLP]);
    }
    if (ucx_self == NULL)
        lat_diff[DL_LLP].res = INFINITY;  /* no self loop: the probe is all transfer */
    memcpy(samples, t[0], sizeof(double) * (size_t)nt[0]);
    *obs = rank == 0 ? median_of(nt[0]) : 0;
    memcpy(samples, t[1], sizeof(double) * (size_t)nt[1]);
    *raw = rank == 0 ? median_of(nt[1]) : 0;
    /* the median of the calibrations, the components' own statistic */
    memcpy(samples, t[2], sizeof(double) * (size_t)nt[2]);
    lat_timer_ns = median_of(nt[2]);
}

struct latency {
    struct bench_series observed, hlp_post, hlp_tail, llp_post, llp_prog, rx_prog;
    struct bench_series raw, raw_post, raw_prog, timer;
};

static void latency_round(weft_ep_t ep, ucp_worker_h w, ucp_ep_h peer,
                          const struct bench_breakdown_opts *o,
                          struct latency *r)
{
    double obs, raw;

    OK(weft_prof_reset());
    probe_post.n = probe_prog.n = 0;
    probe_post.count = probe_prog.count = 0;
    latency_pass(ep, w, peer, o->lat_iters, &obs, &raw);
    bench_series_push(&r->observed, obs);
    bench_series_push(&r->raw, raw);
    bench_series_push(&r->hlp_post, per_sample("HLP_post"));
    bench_series_push(&r->hlp_tail, per_sample("HLP_post_tail"));
    bench_series_push(&r->llp_post, per_sample("LLP_post"));
    bench_series_push(&r->rx_prog, per_sample("HLP_rx_prog"));
    bench_series_push(&r->llp_prog, per_sample("LLP_prog"));
    bench_series_push(&r->raw_post, probe_per_sample(&probe_post));
    bench_series_push(&r->raw_prog, probe_per_sample(&probe_prog));
    bench_series_push(&r->timer, lat_timer_ns);
    for (int d = 0; d < DL_N; d++) {
        bench_series_push(&lat_dr.ns[d], lat_diff[d].ns);
        bench_series_push(&lat_dr.res[d], lat_diff[d].res);
    }
}

/* The probe's latency in round r not explained by its own calls. */
static double lat_residual(const struct latency *la, int r)
{
    return at(&la->raw, r) - at(&la->raw_post, r) - at(&la->raw_prog, r);
}

/* The latency equation's sum in round r (the AM delivery, HLP_rx_prog,
 * is inside LLP_prog's region and cancels; transfer and the overlap
 * taken off LLP_post add up to the probe's residual). */
static double lat_model(const struct latency *la, int r)
{
    return at(&la->hlp_post, r) + at(&la->hlp_tail, r) + at(&la->llp_post, r) +
           at(&la->llp_prog, r) + lat_residual(la, r);
}

/* The points of the injection benchmark, each from a pass with only it
 * selected (LLP_poll comes with LLP_prog's region); rank 0's. */
#define NPOINTS 8
static const char *const point_names[NPOINTS] = {"HLP_post", "LLP_post", "LLP_prog", "LLP_poll",
                                                 "HLP_tx_prog", "busy_post", "HLP_post_tail",
                                                 "HLP_prog"};

static void collect_points(weft_ep_t ep, weft_seg_t seg, const struct bench_breakdown_opts *o,
                           weft_prof_stat_t *s)
{
    double fig[I_KINDS], chunk_ns[I_KINDS], regions[I_KINDS], kept, calm, cycles;

    OK(weft_prof_reset());
    inject(ep, seg, o->iters, o->batch, I_HLP_POST, I_POST_CALL, fig, chunk_ns, regions, &kept,
           &calm, &cycles);
    for (int i = 0; i < NPOINTS; i++)
        OK(weft_prof_stat(point_names[i], &s[i]));
}

/* ---- output ------------------------------------------------------------ */

static void put_series(FILE *f, const char *name, const struct bench_series *s, int r,
                       const char *sep)
{
    bench_put_value(f, name, at(s, r), sep);
}

/* HLP_post's two regions: to the UCX call, and after it returns. */
static void parts_json(FILE *f, double entry, double tail)
{
    fprintf(f, ",\n    \"HLP_post_parts_ns\": {");
    bench_put_value(f, "entry", entry, ", ");
    bench_put_value(f, "tail", tail, "}");
}

/* Each round's model (from its own figures) as "model_rounds_ns". */
static void model_rounds(FILE *f, const void *section, double (*model)(const void *, int), int n)
{
    struct bench_series s = {.n = 0};

    for (int r = 0; r < n; r++)
        bench_series_push(&s, model(section, r));
    fprintf(f, ", ");
    bench_put_rounds(f, "model_rounds_ns", &s);
}

static double inj_model_of(const void *in, int r) { return inj_model(in, r); }
static double lat_model_of(const void *la, int r) { return lat_model(la, r); }

static void injection_json(FILE *f, const struct bench_breakdown_opts *o,
                           const struct bench_injection *in)
{
    const int ri = median_round(&in->fig[I_OBSERVED]);
#define FIG(kind) inj_fig(in, kind, ri)

    fprintf(f, "  \"injection\": {");
    put_series(f, "observed_ns", &in->fig[I_OBSERVED], ri, ", ");
    fprintf(f, "\"batch\": %ld, \"round\": %d, ", o->batch, ri);
    put_series(f, "timer_overhead_ns", &in->fig[I_TIMER], ri, ", ");
    bench_put_rounds(f, "observed_rounds_ns", &in->fig[I_OBSERVED]);
    model_rounds(f, in, inj_model_of, in->fig[I_OBSERVED].n);
    fprintf(f, ", ");
    bench_put_rounds(f, "cycles_kept_rounds", &in->kept);
    fprintf(f, ", ");
    bench_put_rounds(f, "chunks_calm_rounds", &in->calm);
    fprintf(f, ", \"ranks_watched\": %d, ", sched.n);
    bench_put_rounds(f, "cycles_rounds", &in->cycles);
    fprintf(f, ",\n    \"components_ns\": {");
    /* HLP_post: weft's code before the UCX call and after it; the
     * callbacks inside the progress calls are HLP_tx_prog, with
     * weft_progress's own code */
    bench_put_value(f, "HLP_post", FIG(I_HLP_POST) + FIG(I_HLP_TAIL), ", ");
    bench_put_value(f, "LLP_post", FIG(I_LLP_POST), ", ");
    bench_put_value(f, "LLP_prog", FIG(I_LLP_PROG) - FIG(I_TX_PROG), ", ");
    bench_put_value(f, "HLP_tx_prog", FIG(I_TX_PROG) + FIG(I_HLP_PROG), ", ");
    bench_put_value(f, "busy_post", FIG(I_BUSY), ", ");
    bench_put_value(f, "misc", FIG(I_MISC), "}");
    parts_json(f, FIG(I_HLP_POST), FIG(I_HLP_TAIL));
    fprintf(f, ",\n    \"HLP_tx_prog_parts_ns\": {");
    bench_put_value(f, "callbacks", FIG(I_TX_PROG), ", ");
    bench_put_value(f, "call", FIG(I_HLP_PROG), "}");
    fprintf(f, ",\n    \"calls_ns\": {");
    bench_put_value(f, "weft_put_nbi", FIG(I_POST_CALL), ", ");
    bench_put_value(f, "weft_progress", FIG(I_PROG_CALL), ", ");
    bench_put_value(f, "HLP_post_by_subtraction",
                    FIG(I_POST_CALL) - FIG(I_LLP_POST) - FIG(I_BUSY), ", ");
    bench_put_value(f, "HLP_tx_prog_by_subtraction",
                    FIG(I_PROG_CALL) - FIG(I_LLP_PROG) + FIG(I_TX_PROG), ", ");
    bench_put_value(f, "weft_put_nbi_incremental", FIG(I_TWICE) - FIG(I_OBSERVED), "}");

    fprintf(f, ",\n    \"chunk_ns\": {");
    for (int kind = 0; kind < I_KINDS; kind++)
        put_series(f, kind_name[kind], &in->chunk[kind], ri, kind + 1 < I_KINDS ? ", " : "}");
    fprintf(f, "}");
#undef FIG
}

static void latency_json(FILE *f, const struct latency *la)
{
    const int rl = median_round(&la->observed);
    /* The probe's latency not explained by its own calls.  When its calls
     * are longer than its latency, part of the post overlaps the transfer
     * (TCP loopback delivers inside the sender's send, shared memory shows
     * the message before the post returns): that overlap is counted once,
     * taken off LLP_post, and the transfer is 0. */
    double residual = lat_residual(la, rl);
    double overlap = residual < 0 ? -residual : 0, transfer = residual < 0 ? 0 : residual;

    fprintf(f, ",\n  \"latency\": {");
    put_series(f, "observed_ns", &la->observed, rl, ", ");
    fprintf(f, "\"round\": %d, ", rl);
    put_series(f, "timer_overhead_ns", &la->timer, rl, ", ");
    bench_put_rounds(f, "observed_rounds_ns", &la->observed);
    model_rounds(f, la, lat_model_of, la->observed.n);
    fprintf(f, ",\n    \"components_ns\": {");
    bench_put_value(f, "HLP_post", at(&la->hlp_post, rl) + at(&la->hlp_tail, rl), ", ");
    bench_put_value(f, "LLP_post", at(&la->llp_post, rl) - overlap, ", ");
    bench_put_value(f, "transfer", transfer, ", ");
    /* the AM delivery inside the progress call is HLP_rx_prog */
    bench_put_value(f, "LLP_prog", at(&la->llp_prog, rl) - at(&la->rx_prog, rl), ", ");
    put_series(f, "HLP_rx_prog", &la->rx_prog, rl, "}");
    parts_json(f, at(&la->hlp_post, rl), at(&la->hlp_tail, rl));
    fprintf(f, ",\n    \"probe\": {");
    put_series(f, "raw_observed_ns", &la->raw, rl, ", ");
    put_series(f, "raw_LLP_post_ns", &la->raw_post, rl, ", ");
    put_series(f, "raw_LLP_prog_ns", &la->raw_prog, rl, ", ");
    bench_put_value(f, "residual_ns", residual, ", ");
    bench_put_value(f, "overlap_ns", overlap, ", ");
    put_series(f, "LLP_post_ns", &la->llp_post, rl, ", ");
    bench_put_value(f, "transfer_ns", transfer, "}");
    fprintf(f, "}");
}

/* One method's section of "differential": round r's components and
 * half-widths, and each round's sum. */
static void differential_json(FILE *f, const char *kind, const struct diff_rounds *dr,
                              const char *const *names, int n, int r, const char *sep)
{
    struct bench_series sum = {.n = 0};

    fprintf(f, "    \"%s\": {\"round\": %d, \"components_ns\": {", kind, r);
    for (int d = 0; d < n; d++)
        put_series(f, names[d], &dr->ns[d], r, d + 1 < n ? ", " : "}, \"halfwidth_ns\": {");
    for (int d = 0; d < n; d++)
        put_series(f, names[d], &dr->res[d], r, d + 1 < n ? ", " : "}, ");
    for (int k = 0; k < dr->ns[0].n; k++) {
        double x = 0;

        for (int d = 0; d < n; d++)
            x += dr->ns[d].v[k];
        bench_series_push(&sum, x);
    }
    bench_put_rounds(f, "model_rounds_ns", &sum);
    fprintf(f, "}%s", sep);
}

static struct selfcheck check;

static void write_json(FILE *f, const struct bench_breakdown_opts *o, const char *transport,
                       const struct bench_injection *in, const struct latency *la,
                       const weft_prof_stat_t *points)
{
    double ghz = 0, ovh = 0;

    OK(weft_prof_timer(&ghz, &ovh));
    bench_breakdown_head(f, nranks, transport, o, "median round", ghz, ovh);
    injection_json(f, o, in);
    latency_json(f, la);
    fprintf(f, ",\n  \"differential\": {\n");
    differential_json(f, "injection", &inj_dr, di_name, DI_N, median_round(&in->fig[I_OBSERVED]),
                      ",\n");
    differential_json(f, "latency", &lat_dr, dl_name, DL_N, median_round(&la->observed), "\n  },\n  ");
    selfcheck_json(f, &check, ",\n  ");
    {
        const char *clock, *source;

        weft__prof_clock_info(&clock, &source);
        fprintf(f, "\"clock\": {\"timer\": \"%s\", \"freq_source\": \"%s\"}", clock, source);
    }
    bench_points_json(f, point_names, points, NPOINTS);
    fprintf(f, "\n}\n");
}

/* The self loop's endpoint: to this rank's own worker (ucx_self stays
 * NULL, and the latency's LLP and transfer unsplit, if UCX refuses). */
static void open_self(ucp_worker_h w)
{
    ucp_address_t *addr;
    size_t len;
    ucp_ep_params_t p = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS};

    if (ucp_worker_get_address(w, &addr, &len) != UCS_OK)
        return;
    p.address = addr;
    if (ucp_ep_create(w, &p, &ucx_self) != UCS_OK)
        ucx_self = NULL;
    ucp_worker_release_address(w, addr);
}

static void close_self(ucp_worker_h w)
{
    ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS, .flags = UCP_EP_CLOSE_FLAG_FORCE};
    ucs_status_ptr_t r;

    if (ucx_self == NULL)
        return;
    r = ucp_ep_close_nbx(ucx_self, &p);
    if (r != NULL && !UCS_PTR_IS_ERR(r)) {
        while (ucp_request_check_status(r) == UCS_INPROGRESS)
            ucp_worker_progress(w);
        ucp_request_free(r);
    }
    ucx_self = NULL;
}

static void usage(void)
{
    fprintf(stderr, "usage: mpirun -np 2 weft_bench_breakdown [--json FILE] [--iters N] "
                    "[--lat-iters N] [--batch Q] [--rounds R]\n");
}

int main(int argc, char **argv)
{
    struct bench_breakdown_opts o;
    weft_ep_t ep;
    weft_seg_t seg;
    void *local;
    ucp_worker_h w;
    ucp_ep_h peer;
    ucp_rkey_h rkey;
    uint64_t raddr;
    ucp_am_handler_param_t hp;
    char transport[256];
    static struct bench_injection in;
    static struct latency la;
    weft_prof_stat_t points[NPOINTS];

    bench_mpi_start(&argc, &argv, &rank, &nranks);
    if (bench_need_two("weft_bench_breakdown", bench_breakdown_parse(argc, argv, MAX_SAMPLES, &o) == 0,
                       rank, nranks, usage) != 0)
        return 2;
    OK(weft_init(NULL, &ctx));
    bench_calm_open(&sched);
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, 1 << 16, &seg, &local));
    OK(weft_am_register(ctx, AM_ID, on_ping, NULL));
    OK(weft_ucx_worker(ep, &w));
    OK(weft_ucx_target(ep, 1 - rank, seg, 0, &peer, &rkey, &raddr));
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                    UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    hp.id = RAW_AM_ID;
    hp.cb = on_raw;
    hp.flags = UCP_AM_FLAG_WHOLE_MSG;
    if (ucp_worker_set_am_recv_handler(w, &hp) != UCS_OK)
        die("ucp_worker_set_am_recv_handler", WEFT_ERR_TRANSPORT);
    ucx_worker = w;
    ucx_peer = peer;
    ucx_rkey = rkey;
    ucx_raddr = raddr;
    open_self(w);
    OK(weft_barrier(ctx));
    bench_transport_of(ep, 1 - rank, seg, transport, sizeof(transport));

    /* calibrate the timer before the passes that time calls themselves */
    OK(weft_prof_select("all"));
    OK(weft_prof_select("0"));
    /* the self-check on a workload of known cost, rank 1 waiting */
    if (rank == 0)
        selfcheck_run(128, 1024, &check);
    OK(weft_barrier(ctx));
    /* warm-up: connections, keys, caches */
    {
        double fig[I_KINDS], chunk_ns[I_KINDS], regions[I_KINDS], kept, calm, cycles;

        inject(ep, seg, bench_breakdown_warmup(&o), o.batch, I_OBSERVED, I_KINDS, fig, chunk_ns, regions,
               &kept, &calm, &cycles);
    }
    {
        double obs, raw;

        latency_pass(ep, w, peer, o.lat_iters / 8 + 1, &obs, &raw);
    }
    for (long r = 0; r < o.rounds; r++) {
        injection_round(ep, seg, &o, &in);
        latency_round(ep, w, peer, &o, &la);
    }
    collect_points(ep, seg, &o, points);
    if (rank == 0) {
        FILE *f = bench_json_open("weft_bench_breakdown", o.json);

        write_json(f, &o, transport, &in, &la, points);
        bench_json_close(f);
    }
    OK(weft_barrier(ctx));
    close_self(w);
    bench_calm_close(&sched);
    bench_finish("weft_bench_breakdown", ctx, seg);
    return 0;
}
