/*
 * weft_bench_breakdown_direct -- where the time of an 8-byte message goes
 * over weft's intra-node direct path (two ranks of one node, WEFT_SHM on:
 * the initiator's own stores into the peer's mapped segment), observed
 * without instrumentation and broken down by the trace points, one point
 * at a time (docs/breakdown.md, "Direct path").
 *
 *   mpirun -np 2 weft_bench_breakdown_direct [--json FILE] [--iters N]
 *                                            [--lat-iters N] [--batch Q] [--rounds R]
 *
 * Injection (rank 0 puts to rank 1): weft_put_nbi of 8 bytes, a
 * weft_progress every Q puts.  Components: HLP_post (weft's code before the
 * copy), direct_copy, the progress call amortised over its batch (UCX's
 * part from LLP_prog/LLP_poll, weft's the rest of the call), and the
 * benchmark's own loop (misc).
 *
 * Latency: a ping-pong of weft_put_signal_nb (8-byte payload and a signal
 * in the same cache line of the peer's segment), the receiver in
 * weft_signal_wait_until, then reading the payload and replying; half the
 * round trip.  Components: HLP_post, direct_copy, signal_add, transfer,
 * the poll phase (half an iteration of the wait loop), signal_poll and the
 * payload's read.  The transfer comes from a probe with no weft in it: the
 * same ping-pong through a line of the same mappings, with weft's memory
 * operations (the payload's store, a locked add, a spin of acquire loads,
 * the payload's read); the probe's half round trip less its own timed
 * operations is the time the line spends between the cores that none of
 * them accounts for.
 *
 * As in weft_bench_breakdown, every figure of a round is measured in
 * chunks (injection) or blocks of round trips (latency) that alternate
 * kind by kind inside one loop, so that all see the same machine; the JSON
 * holds the median over rounds, and each round's model beside its
 * observation.  The timer's overhead is calibrated among them, in chunks
 * and blocks of its own, and each round's timed figures subtract that
 * round's calibration in place of the library's.
 */
#include "ablate.h"
#include "common.h"
#include "prof/prof.h"
#include "selfcheck.h"
#include "store.h"
#include <weft.h>
#include <weft_ucx.h>

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CHUNKS 65536
#define LAT_BLOCK 16            /* round trips per timed block */
#define SEG_BYTES (1 << 16)
#define DONE_OFF 1024           /* end of an injection pass, told to rank 1 */
#define SIG_OFF 2048            /* the ping-pong's signal ... */
#define PAYLOAD_OFF 2056        /* ... and its payload, in the same cache line */
#define PROBE_OFF 4096          /* the probe's signal and payload, laid out alike */

static int rank, nranks;
static weft_ctx_t ctx;
static weft_ep_t ep;
static weft_seg_t seg;
static char *mine;              /* this rank's segment */
static char *theirs;            /* the peer's segment, mapped here */
static uint64_t done_count;     /* injection passes, told to rank 1 */
static struct bench_calm sched; /* the ranks' waits for a core (rank 0 reads them) */
static uint64_t sig_seen;       /* round trips of the ping-pong so far */
static uint64_t probe_seen;     /* round trips of the probe so far */
static volatile uint64_t sink;  /* payloads read */

static void die(const char *what, weft_status_t st)
{
    fprintf(stderr, "weft_bench_breakdown_direct: %s: %s (%s)\n", what, weft_strerror(st),
            weft_last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
}
#define OK(call) do { weft_status_t s_ = (call); if (s_ != WEFT_OK) die(#call, s_); } while (0)

static void select_points(uint32_t mask)
{
    if (weft__prof_select(mask) != 0)
        die("weft__prof_select", WEFT_ERR_UNSUPPORTED);
}

static double timer_ghz, timer_ovh;

/* ns of `ticks` measured by `calls` caller-timed regions, the timer's own
 * cost taken off each. */
static double ticks_ns(uint64_t ticks, long calls)
{
    return (double)ticks / timer_ghz - (double)calls * timer_ovh;
}

/* Each figure once per round; the median over rounds goes to the JSON. */
static double mid(const struct bench_series *s)
{
    return bench_median_kept(s->v, NULL, s->n);
}

/* A point's total ns so far, and its samples added to *count. */
static double total_of(const char *point, double *count)
{
    weft_prof_stat_t st;

    OK(weft_prof_stat(point, &st));
    *count += (double)st.count;
    return st.total_ns;
}

/* ---- injection -------------------------------------------------------- */

/* I_TIMER calibrates the timer where the components are measured: an
 * empty region's reading (weft__prof_empty_ticks) at the speed of the
 * moment, in chunks of its own among the others.  Every timed figure of a
 * round is corrected by that round's reading in place of the overhead the
 * library measured once and subtracted from each region (inj_corrected).
 * I_TWICE is the observed loop with two puts per iteration: less the
 * observed loop, what a put adds to the running loop, beside the caller's
 * timing of one put (the timer check of docs/breakdown.md). */
enum {
    I_OBSERVED, I_MISC, I_HLP_POST, I_COPY, I_LLP_PROG, I_PROG_CALL, I_POST_CALL, I_TIMER,
    I_NOP_CALL, I_TWICE, I_STORE, I_UCX_PROG, I_WEFT_PROG, I_KINDS
};
_Static_assert(I_KINDS <= BENCH_MAX_KINDS, "struct bench_injection holds every kind");

static const char *const inj_name[I_KINDS] = {
    "observed", "misc", "HLP_post", "direct_copy", "LLP_prog", "weft_progress", "weft_put_nbi",
    "timer", "bench_nop_post", "weft_put_nbi_twice", "store", "ucx_progress", "weft_progress_only",
};

/* The differential method's loops (docs/breakdown.md, "Differential
 * measurement"), none timed inside: I_STORE is the Misc loop with the
 * empty post replaced by a function of the same arguments that stores the
 * 8 bytes through the peer's mapping (weft_ptr), I_UCX_PROG with
 * ucp_worker_progress in place of the empty progress call, I_WEFT_PROG
 * with weft_progress.  The components, each a combination of one cycle's
 * loops (ablate_combo), add up to I_OBSERVED:
 *   misc        = I_MISC
 *   direct_copy = I_STORE - I_MISC
 *   LLP_prog    = I_UCX_PROG - I_MISC
 *   HLP_prog    = I_WEFT_PROG - I_UCX_PROG
 *   HLP_post    = I_OBSERVED - I_WEFT_PROG - I_STORE + I_MISC */
enum { DI_HLP_POST, DI_COPY, DI_LLP_PROG, DI_HLP_PROG, DI_MISC, DI_N };
static const char *const di_name[DI_N] = {"HLP_post", "direct_copy", "LLP_prog", "HLP_prog", "misc"};
static const struct ablate_def di_combo[DI_N] = {
    [DI_HLP_POST] = {{I_OBSERVED, I_WEFT_PROG, I_STORE, I_MISC}, {1, -1, -1, 1}},
    [DI_COPY] = {{I_STORE, I_MISC, I_MISC, I_MISC}, {1, -1, 0, 0}},
    [DI_LLP_PROG] = {{I_UCX_PROG, I_MISC, I_MISC, I_MISC}, {1, -1, 0, 0}},
    [DI_HLP_PROG] = {{I_WEFT_PROG, I_UCX_PROG, I_UCX_PROG, I_UCX_PROG}, {1, -1, 0, 0}},
    [DI_MISC] = {{I_MISC, I_MISC, I_MISC, I_MISC}, {1, 0, 0, 0}},
};
static struct ablate_est inj_diff[DI_N];
static ucp_worker_h ucx_worker;
/* each differential component and its half-width, round by round */
struct diff_rounds {
    struct bench_series ns[DI_N], res[DI_N];
};
static struct diff_rounds inj_dr, lat_dr;

/* I_LLP_PROG's region also times the progress calls that found nothing
 * (LLP_poll): on the direct path every call finds nothing. */
static const uint32_t inj_mask[I_KINDS] = {
    [I_HLP_POST] = 1u << WEFT__PROF_HLP_POST,
    [I_COPY] = 1u << WEFT__PROF_DIRECT_COPY,
    [I_LLP_PROG] = 1u << WEFT__PROF_LLP_PROG,
};

/* Total ns so far of the points a kind selects (0 for the others), and
 * in *count their samples. */
static double inj_total(int kind, double *count)
{
    *count = 0;
    switch (kind) {
    case I_HLP_POST: return total_of("HLP_post", count);
    case I_COPY: return total_of("direct_copy", count);
    case I_LLP_PROG: return total_of("LLP_prog", count) + total_of("LLP_poll", count);
    default: return 0;
    }
}

/* One chunk of m puts (a multiple of q) of `kind`: its value per put in ns
 * (its time, its points' growth, or the caller-timed calls), and in
 * *regions the timed regions per put (each with the library's overhead
 * taken off).  An I_TIMER chunk puts nothing: its value is an empty
 * region's reading. */
static double inject_chunk(long m, long q, int kind, long *next, double *chunk_ns,
                           double *regions)
{
    uint64_t src = 42, c = 0, ticks = 0;
    long k = *next, calls = 0;
    double count0, before = inj_total(kind, &count0), count1, t0;

    *regions = 0;
    if (kind == I_TIMER) {
        double now;

        t0 = bench_now();
        now = weft__prof_empty_ticks() / timer_ghz;
        *chunk_ns = 1e9 * (bench_now() - t0) / (double)m;
        return now;
    }
    select_points(inj_mask[kind]);
    t0 = bench_now();
    for (long b = 0; b < m / q; b++) {
        for (long i = 0; i < q; i++, k++) {
            if (kind == I_STORE) {
                bench_store_post(NULL, 1, NULL, (size_t)(k & 63) * 8, &src, 8);
                continue;
            }
            if (kind == I_MISC || kind == I_NOP_CALL || kind == I_UCX_PROG || kind == I_WEFT_PROG) {
                if (kind == I_NOP_CALL)
                    c = weft__prof_start();
                bench_nop_post(NULL, 1, NULL, (size_t)(k & 63) * 8, &src, 8);
                if (kind == I_NOP_CALL)
                    ticks += weft__prof_stop() - c, calls++;
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
        if (kind == I_MISC || kind == I_NOP_CALL || kind == I_STORE) {
            bench_nop_progress(NULL, NULL);
            continue;
        }
        if (kind == I_UCX_PROG) {
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
    select_points(0);
    *next = k;
    *chunk_ns = t0;
    if (kind == I_OBSERVED || kind == I_MISC || kind == I_TWICE || kind >= I_STORE)
        return t0;
    if (kind == I_POST_CALL || kind == I_PROG_CALL || kind == I_NOP_CALL) {
        *regions = (double)calls / (double)m;
        return ticks_ns(ticks, calls) / (double)m;
    }
    before = inj_total(kind, &count1) - before;
    *regions = (count1 - count0) / (double)m;
    return before / (double)m;
}

/* Rank 0: about n puts per kind in chunks of 64 batches, the kinds
 * rotating; fig[kind], chunk_ns[kind] and regions[kind] are medians over
 * the kind's chunks, of the cycles (one chunk of every kind) whose
 * observed chunk ran within 15 % of the median (bench_keep_speed: the
 * core changes speed within a pass) and, as over UCX (breakdown.c), from
 * the chunks in which no rank waited for a core (bench_calm); *kept the
 * share of cycles kept, *calm_share that of the calm chunks, *cycles the
 * cycles run (past n puts per kind until half as many chunks of every
 * kind were calm, at most 4x: bench_calm_enough).  Rank 1 waits for the
 * end of the pass. */
static void inject(long n, long q, double *fig, double *chunk_ns, double *regions, double *kept,
                   double *calm_share, double *cycles)
{
    static double val[I_KINDS][MAX_CHUNKS], tim[I_KINDS][MAX_CHUNKS], reg[I_KINDS][MAX_CHUNKS];
    static char keep[MAX_CHUNKS], calm[I_KINDS][MAX_CHUNKS];
    long m = 64 * q, chunks, next = 0, ncalm = 0, c, limit;
    unsigned long long waited;

    if (m > n)
        m = n / q * q;
    chunks = n / m < MAX_CHUNKS ? n / m : MAX_CHUNKS;
    limit = 4 * chunks < MAX_CHUNKS ? 4 * chunks : MAX_CHUNKS;
    OK(weft_barrier(ctx));
    done_count++;
    if (rank == 0) {
        waited = bench_calm_waited(&sched);
        for (c = 0; c < chunks || (c < limit && !bench_calm_enough(&calm[0][0], MAX_CHUNKS, 0,
                                                                   I_KINDS, c, (chunks + 1) / 2));
             c++)
            for (int j = 0; j < I_KINDS; j++) {
                int kind = (int)((j + c) % I_KINDS);
                unsigned long long now;

                val[kind][c] = inject_chunk(m, q, kind, &next, &tim[kind][c], &reg[kind][c]);
                now = bench_calm_waited(&sched);   /* also the next chunk's start */
                calm[kind][c] = now == waited;
                waited = now;
                ncalm += calm[kind][c];
            }
        *cycles = (double)c;
        chunks = c;
        *kept = (double)bench_keep_speed(val[I_OBSERVED], calm[I_OBSERVED], chunks,
                                         BENCH_SPEED_BAND, keep) / (double)chunks;
        *calm_share = (double)ncalm / (double)(chunks * I_KINDS);
        {
            static char use[MAX_CHUNKS];
            static const int loops[] = {I_OBSERVED, I_MISC, I_STORE, I_UCX_PROG, I_WEFT_PROG};
            const double *rows[I_KINDS];
            const char *calm_rows[I_KINDS];

            /* the cycles kept whose loops were all calm (or, with too few
             * of those, the cycles kept) */
            for (int k = 0; k < I_KINDS; k++) {
                rows[k] = val[k];
                calm_rows[k] = calm[k];
            }
            ablate_cycles(rows, calm_rows, keep, chunks, loops,
                          (int)(sizeof(loops) / sizeof(loops[0])), di_combo, DI_N, use, inj_diff);
        }
        for (int kind = 0; kind < I_KINDS; kind++) {
            fig[kind] = bench_median_calm(val[kind], keep, calm[kind], chunks);
            chunk_ns[kind] = bench_median_calm(tim[kind], keep, calm[kind], chunks);
            regions[kind] = bench_median_calm(reg[kind], keep, calm[kind], chunks);
        }
        OK(weft_flush(ep));
        OK(weft_put(ep, 1, seg, DONE_OFF, &done_count, 8));
    } else {
        OK(weft_signal_wait_until(ep, seg, DONE_OFF, done_count, NULL));
    }
}

/* ---- latency ------------------------------------------------------------ */

/* What a block of round trips measures: weft's observed latency, the
 * probe's, one of weft's points, the payload's read timed by the caller,
 * or one of the probe's timed operations.  In an L_TIMER block each rank
 * calibrates the timer instead.  The kinds rotate in this order, so a
 * kind mostly follows the one before it: L_TIMER is followed by a point's
 * block, whose median per sample does not feel the slower first round
 * trip after the calibration (the observed blocks, one clock pair per
 * block, did: the model 5-9 % low in five runs out of five). */
enum {
    L_OBSERVED, L_PROBE, L_TIMER, L_HLP_POST, L_COPY, L_SIG_ADD, L_SIG_POLL, L_READ, L_POLL,
    L_PROBE_STORE, L_PROBE_ADD, L_PROBE_LOAD, L_PROBE_READ, L_KINDS
};

/* This rank's timer overhead of the last latency pass (the median of its
 * L_TIMER blocks), in ns: every latency figure subtracts it in place of
 * the library's. */
static double lat_timer_ns;

static const uint32_t lat_mask[L_KINDS] = {
    [L_HLP_POST] = 1u << WEFT__PROF_HLP_POST,
    [L_COPY] = 1u << WEFT__PROF_DIRECT_COPY,
    [L_SIG_ADD] = 1u << WEFT__PROF_SIGNAL_ADD,
    [L_SIG_POLL] = 1u << WEFT__PROF_SIGNAL_POLL,
    [L_POLL] = 1u << WEFT__PROF_LLP_PROG,   /* LLP_poll: the wait loop's empty progress */
};

/* Caller-timed samples of this rank in a round (the payload's read, the
 * probe's store, add, successful load and read): one per message. */
struct samples {
    double v[MAX_CHUNKS];
    long n;
};
static struct samples read_ticks, pstore_ticks, padd_ticks, pload_ticks, pread_ticks;

static void sample(struct samples *s, uint64_t ticks)
{
    if (s->n < MAX_CHUNKS)
        s->v[s->n++] = (double)ticks;
}

/* A load of the 8 bytes at p, timed into s when s is not NULL. */
static void read_word(const char *p, struct samples *s)
{
    uint64_t c = s ? weft__prof_start() : 0;

    sink = *(const volatile uint64_t *)(const void *)p;
    if (s)
        sample(s, weft__prof_stop() - c);
}

static void weft_send(void)
{
    uint64_t payload = sig_seen;
    weft_event_t ev;

    OK(weft_put_signal_nb(ep, 1 - rank, seg, PAYLOAD_OFF, &payload, 8, seg, SIG_OFF, 1, &ev));
}

static void weft_receive(int timed)
{
    OK(weft_signal_wait_until(ep, seg, SIG_OFF, ++sig_seen, NULL));
    read_word(mine + PAYLOAD_OFF, timed ? &read_ticks : NULL);
}

/* One round trip of weft's ping-pong (a direct put-with-signal is complete
 * when it returns: its event is WEFT_EVENT_NULL, checked at start). */
static void weft_round_trip(int timed_read)
{
    if (rank == 0) {
        weft_send();
        weft_receive(timed_read);
    } else {
        weft_receive(timed_read);
        weft_send();
    }
}

/* The probe: weft's ping-pong with weft taken out.  The same memory
 * operations on a line laid out alike in the same mappings -- the 8-byte store of
 * the payload, the signal's locked add (release), the consumer's spin of
 * acquire loads and its read of the payload -- and nothing else in the
 * loop.  `timed` selects one operation to time (PROBE_*). */
enum { PROBE_NONE, PROBE_STORE, PROBE_ADD, PROBE_LOAD, PROBE_READ };

static void probe_send(int timed)
{
    uint64_t *line = (uint64_t *)(void *)(theirs + PROBE_OFF), c;

    c = timed == PROBE_STORE ? weft__prof_start() : 0;
    __atomic_store_n(line + 1, probe_seen, __ATOMIC_RELAXED);
    if (timed == PROBE_STORE)
        sample(&pstore_ticks, weft__prof_stop() - c);
    c = timed == PROBE_ADD ? weft__prof_start() : 0;
    __atomic_fetch_add(line, 1, __ATOMIC_RELEASE);
    if (timed == PROBE_ADD)
        sample(&padd_ticks, weft__prof_stop() - c);
}

static void probe_receive(int timed)
{
    const uint64_t *line = (const uint64_t *)(const void *)(mine + PROBE_OFF);
    uint64_t want = ++probe_seen;

    if (timed != PROBE_LOAD) {
        while (__atomic_load_n(line, __ATOMIC_ACQUIRE) < want)
            ;
    } else {
        for (;;) {
            uint64_t c = weft__prof_start();

            if (__atomic_load_n(line, __ATOMIC_ACQUIRE) >= want) {
                sample(&pload_ticks, weft__prof_stop() - c);
                break;
            }
        }
    }
    read_word(mine + PROBE_OFF + 8, timed == PROBE_READ ? &pread_ticks : NULL);
}

static void probe_round_trip(int timed)
{
    if (rank == 0) {
        probe_send(timed);
        probe_receive(timed);
    } else {
        probe_receive(timed);
        probe_send(timed);
    }
}

/* n round trips of each kind in blocks of LAT_BLOCK, kinds rotating, both
 * ranks in step; obs and probe get rank 0's median one-way time per block
 * (one clock pair per block, so the clock's cost is spread over 32
 * messages), lat_timer_ns this rank's calibration (the median of its
 * L_TIMER blocks). */
/* The latency's components by the differential method (rank 0's blocks):
 *   HLP    = weft's ping-pong - the probe's: weft's code on both sides
 *            and its wait loop beyond the probe's bare spin
 *   memory = the probe: the stores, the add, the line between the cores,
 *            the loads (direct_copy, signal_add, transfer, signal_poll,
 *            payload_read of the trace points)
 * They add up to the observed latency. */
enum { DL_HLP, DL_MEMORY, DL_N };
static const char *const dl_name[DL_N] = {"HLP", "memory"};
static struct ablate_est lat_diff[DL_N];

static void latency_pass(long n, double *obs, double *probe)
{
    static double t[3][MAX_CHUNKS];
    long nt[3] = {0, 0, 0}, blocks = (n + LAT_BLOCK - 1) / LAT_BLOCK;

    OK(weft_barrier(ctx));
    for (long b = 0; b < blocks; b++)
        for (int j = 0; j < L_KINDS; j++) {
            int kind = (int)((j + b) % L_KINDS), raw = kind == L_PROBE || kind >= L_PROBE_STORE;
            double t0;

            if (kind == L_TIMER) {
                /* the calibration takes tens of µs, not the same on both
                 * ranks: an untimed round trip puts them back in step, or
                 * the next block times the wait */
                if (nt[2] < MAX_CHUNKS)
                    t[2][nt[2]++] = weft__prof_empty_ticks() / timer_ghz;
                probe_round_trip(PROBE_NONE);
                continue;
            }
            select_points(lat_mask[kind]);
            t0 = bench_now();
            for (long i = 0; i < LAT_BLOCK; i++) {
                if (raw)
                    probe_round_trip(kind == L_PROBE ? PROBE_NONE
                                                     : PROBE_STORE + (kind - L_PROBE_STORE));
                else
                    weft_round_trip(kind == L_READ);
            }
            t0 = 0.5e9 * (bench_now() - t0) / LAT_BLOCK;
            select_points(0);
            if (kind == L_OBSERVED && nt[0] < MAX_CHUNKS)
                t[0][nt[0]++] = t0;
            if (kind == L_PROBE && nt[1] < MAX_CHUNKS)
                t[1][nt[1]++] = t0;
        }
    /* the differential: block b of weft's ping-pong less block b of the
     * probe's, side by side (before the medians sort them) */
    {
        static const double zero[MAX_CHUNKS];
        long nb = nt[0] < nt[1] ? nt[0] : nt[1];

        ablate_paired(t[0], t[1], NULL, nb, &lat_diff[DL_HLP]);
        ablate_paired(t[1], zero, NULL, nb, &lat_diff[DL_MEMORY]);
    }
    *obs = rank == 0 && nt[0] ? bench_median(t[0], (int)nt[0]) : 0;
    *probe = rank == 0 && nt[1] ? bench_median(t[1], (int)nt[1]) : 0;
    lat_timer_ns = bench_median(t[2], (int)nt[2]);
}

/* Per-message figures of both ranks (rank 0 gets them, bench_weighted_ranks):
 * each rank's median weighted by its count of samples. */
enum {
    F_HLP_POST, F_COPY, F_SIG_ADD, F_SIG_POLL, F_LLP_POLL, F_READ, F_PROBE_STORE, F_PROBE_ADD,
    F_PROBE_LOAD, F_PROBE_READ, F_N
};

struct latency {
    struct bench_series observed, probe, fig[F_N], timer;
};

/* A caller-timed operation's median in ns, the pass's overhead taken off. */
static void median_ticks(struct samples *s, double *median, double *count)
{
    *count = (double)s->n;
    *median = s->n ? bench_median(s->v, (int)s->n) / timer_ghz - lat_timer_ns : 0;
}

static void latency_round(const struct bench_breakdown_opts *o, struct latency *r)
{
    static const char *const point[F_N] = {"HLP_post", "direct_copy", "signal_add", "signal_poll",
                                           "LLP_poll"};
    double obs, probe, median[F_N], count[F_N], fig[F_N];

    OK(weft_prof_reset());
    read_ticks.n = pstore_ticks.n = padd_ticks.n = pload_ticks.n = pread_ticks.n = 0;
    latency_pass(o->lat_iters, &obs, &probe);
    for (int i = 0; i < F_READ; i++) {
        weft_prof_stat_t st;

        OK(weft_prof_stat(point[i], &st));
        median[i] = bench_timer_corrected(st.median_ns, 1, timer_ovh, lat_timer_ns);
        count[i] = (double)st.count;
    }
    median_ticks(&read_ticks, &median[F_READ], &count[F_READ]);
    median_ticks(&pstore_ticks, &median[F_PROBE_STORE], &count[F_PROBE_STORE]);
    median_ticks(&padd_ticks, &median[F_PROBE_ADD], &count[F_PROBE_ADD]);
    median_ticks(&pload_ticks, &median[F_PROBE_LOAD], &count[F_PROBE_LOAD]);
    median_ticks(&pread_ticks, &median[F_PROBE_READ], &count[F_PROBE_READ]);
    bench_weighted_ranks(median, count, fig, F_N);
    bench_series_push(&r->observed, obs);
    bench_series_push(&r->probe, probe);
    bench_series_push(&r->timer, lat_timer_ns);
    for (int d = 0; d < DL_N; d++) {
        bench_series_push(&lat_dr.ns[d], lat_diff[d].ns);
        bench_series_push(&lat_dr.res[d], lat_diff[d].res);
    }
    for (int i = 0; i < F_N; i++)
        bench_series_push(&r->fig[i], fig[i]);
}

/* Per kind, per round: its figure as measured (the library's overhead
 * taken off each region), its chunks' time and its timed regions per put. */
static void injection_round(const struct bench_breakdown_opts *o, struct bench_injection *r)
{
    double fig[I_KINDS] = {0}, chunk_ns[I_KINDS] = {0}, regions[I_KINDS] = {0}, kept = 1, calm = 1, cycles = 0;

    OK(weft_prof_reset());
    inject(o->iters, o->batch, fig, chunk_ns, regions, &kept, &calm, &cycles);
    bench_injection_push(r, I_KINDS, fig, chunk_ns, regions, kept, calm, cycles);
    for (int d = 0; d < DI_N; d++) {
        bench_series_push(&inj_dr.ns[d], inj_diff[d].ns);
        bench_series_push(&inj_dr.res[d], inj_diff[d].res);
    }
}

/* Every kind's figures, round by round, with the round's calibration
 * (I_TIMER) subtracted from each timed region in place of the library's
 * overhead: an empty region's reading changes with the core's speed
 * (13.6 to 17.6 ns on this VM), and the components of a few ns are timed
 * with it. */
static void inj_corrected(const struct bench_injection *in, struct bench_series *out)
{
    for (int kind = 0; kind < I_KINDS; kind++) {
        out[kind].n = 0;
        for (int r = 0; r < in->fig[kind].n; r++)
            bench_series_push(&out[kind],
                              bench_timer_corrected(in->fig[kind].v[r], in->regions[kind].v[r],
                                                    timer_ovh, in->fig[I_TIMER].v[r]));
    }
}

/* ---- output ------------------------------------------------------------ */

/* The points of the table: the injection's, then the latency's signal
 * points, each from one more pass (see collect_points). */
#define NPOINTS 6
#define INJ_POINTS 4
static const char *const point_names[NPOINTS] = {"HLP_post", "direct_copy", "LLP_prog", "LLP_poll",
                                                 "signal_add", "signal_poll"};

/* Each round's model, from that round's (corrected) figures alone: the
 * kinds of a round were interleaved, so they saw the same machine, while
 * the medians over rounds may come from different rounds when the
 * machine's speed changes between them. */
static void model_rounds(const struct bench_breakdown_opts *o, const struct bench_series *i,
                         const struct latency *la, struct bench_series *inj, struct bench_series *lat)
{
    const struct bench_series *l = la->fig;

    for (int r = 0; r < i[I_OBSERVED].n && r < la->observed.n; r++) {
        double raw_ops = l[F_PROBE_STORE].v[r] + l[F_PROBE_ADD].v[r] + l[F_PROBE_LOAD].v[r] +
                         l[F_PROBE_READ].v[r];

        bench_series_push(inj, i[I_HLP_POST].v[r] + i[I_COPY].v[r] + i[I_PROG_CALL].v[r] +
                                   i[I_MISC].v[r]);
        bench_series_push(lat, l[F_HLP_POST].v[r] + l[F_COPY].v[r] + l[F_SIG_ADD].v[r] +
                                   l[F_SIG_POLL].v[r] + l[F_READ].v[r] +
                                   0.5 * (double)o->batch * i[I_PROG_CALL].v[r] + la->probe.v[r] -
                                   raw_ops);
    }
}

/* One method's section of "differential": each component's and
 * half-width's median over rounds, as every figure of this program, and
 * each round's sum. */
static void differential_json(FILE *f, const char *kind, const struct diff_rounds *dr,
                              const char *const *names, int n, const char *sep)
{
    struct bench_series sum = {.n = 0};

    fprintf(f, "    \"%s\": {\"components_ns\": {", kind);
    for (int d = 0; d < n; d++)
        bench_put_value(f, names[d], mid(&dr->ns[d]), d + 1 < n ? ", " : "}, \"halfwidth_ns\": {");
    for (int d = 0; d < n; d++)
        bench_put_value(f, names[d], mid(&dr->res[d]), d + 1 < n ? ", " : "}, ");
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

static void write_json(FILE *f, const struct bench_breakdown_opts *o, const struct bench_injection *in,
                       const struct latency *la, const weft_prof_stat_t *points)
{
    static struct bench_series ifig[I_KINDS];
    struct bench_series inj_model = {.n = 0}, lat_model = {.n = 0};
    const struct bench_series *lfig = la->fig;
    double llp_prog;
    /* The probe's one-way time that its own operations (the same as
     * weft's: store, add, successful load, read) do not account for.  When
     * they account for more -- the consumer's load waits for the line while
     * the producer's add still owns it, so the two overlap -- the overlap
     * is counted once: taken off signal_add, and the transfer is 0 (the
     * sum is the same). */
    double raw_ops = mid(&lfig[F_PROBE_STORE]) + mid(&lfig[F_PROBE_ADD]) +
                     mid(&lfig[F_PROBE_LOAD]) + mid(&lfig[F_PROBE_READ]);
    double residual = mid(&la->probe) - raw_ops;
    double overlap = residual < 0 ? -residual : 0, transfer = residual < 0 ? 0 : residual;

    inj_corrected(in, ifig);
    llp_prog = mid(&ifig[I_LLP_PROG]);
    model_rounds(o, ifig, la, &inj_model, &lat_model);
    bench_breakdown_head(f, nranks, "direct (mapped segment)", o, "median over rounds", timer_ghz,
                         timer_ovh);
    fprintf(f, "  \"injection\": {");
    bench_put_value(f, "observed_ns", mid(&ifig[I_OBSERVED]), ", ");
    fprintf(f, "\"batch\": %ld, ", o->batch);
    bench_put_value(f, "timer_overhead_ns", mid(&ifig[I_TIMER]), ", ");
    bench_put_rounds(f, "timer_overhead_rounds_ns", &ifig[I_TIMER]);
    fprintf(f, ", ");
    bench_put_rounds(f, "observed_rounds_ns", &ifig[I_OBSERVED]);
    fprintf(f, ", ");
    bench_put_rounds(f, "model_rounds_ns", &inj_model);
    fprintf(f, ", ");
    bench_put_rounds(f, "cycles_kept_rounds", &in->kept);
    fprintf(f, ", ");
    bench_put_rounds(f, "chunks_calm_rounds", &in->calm);
    fprintf(f, ", \"ranks_watched\": %d, ", sched.n);
    bench_put_rounds(f, "cycles_rounds", &in->cycles);
    fprintf(f, ",\n    \"components_ns\": {");
    bench_put_value(f, "HLP_post", mid(&ifig[I_HLP_POST]), ", ");
    bench_put_value(f, "direct_copy", mid(&ifig[I_COPY]), ", ");
    bench_put_value(f, "LLP_prog", llp_prog, ", ");
    /* weft_progress less the UCX progress inside it: weft's share */
    bench_put_value(f, "HLP_prog", mid(&ifig[I_PROG_CALL]) - llp_prog, ", ");
    bench_put_value(f, "misc", mid(&ifig[I_MISC]), "}");
    fprintf(f, ",\n    \"calls_ns\": {");
    bench_put_value(f, "weft_put_nbi", mid(&ifig[I_POST_CALL]), ", ");
    bench_put_value(f, "weft_progress", mid(&ifig[I_PROG_CALL]), ", ");
    /* weft's share of the put as the paper finds MPICH's (§5): the call
     * less what it calls (the copy) and less the call itself, which Misc
     * counts (an empty function's call timed alike) */
    bench_put_value(f, "bench_nop_post", mid(&ifig[I_NOP_CALL]), ", ");
    bench_put_value(f, "HLP_post_by_subtraction",
                    mid(&ifig[I_POST_CALL]) - mid(&ifig[I_COPY]) - mid(&ifig[I_NOP_CALL]), ", ");
    bench_put_value(f, "weft_put_nbi_incremental", mid(&ifig[I_TWICE]) - mid(&ifig[I_OBSERVED]),
                    "}");
    fprintf(f, ",\n    \"chunk_ns\": {");
    for (int kind = 0; kind < I_KINDS; kind++)
        bench_put_value(f, inj_name[kind], mid(&in->chunk[kind]), kind + 1 < I_KINDS ? ", " : "}");
    fprintf(f, "}");
    fprintf(f, ",\n  \"latency\": {");
    bench_put_value(f, "observed_ns", mid(&la->observed), ", ");
    bench_put_value(f, "timer_overhead_ns", mid(&la->timer), ", ");
    bench_put_rounds(f, "timer_overhead_rounds_ns", &la->timer);
    fprintf(f, ", ");
    bench_put_rounds(f, "observed_rounds_ns", &la->observed);
    fprintf(f, ", ");
    bench_put_rounds(f, "model_rounds_ns", &lat_model);
    fprintf(f, ",\n    \"components_ns\": {");
    bench_put_value(f, "HLP_post", mid(&lfig[F_HLP_POST]), ", ");
    bench_put_value(f, "direct_copy", mid(&lfig[F_COPY]), ", ");
    bench_put_value(f, "signal_add", mid(&lfig[F_SIG_ADD]) - overlap, ", ");
    bench_put_value(f, "transfer", transfer, ", ");
    /* the signal becomes visible at a random point of the waiter's loop:
     * half an iteration on average before its next load (the probe's
     * loop is that load alone) */
    bench_put_value(f, "poll_phase", 0.5 * (double)o->batch * mid(&ifig[I_PROG_CALL]), ", ");
    bench_put_value(f, "signal_poll", mid(&lfig[F_SIG_POLL]), ", ");
    bench_put_value(f, "payload_read", mid(&lfig[F_READ]), "}");
    fprintf(f, ",\n    \"wait_poll_ns\": %.3f", mid(&lfig[F_LLP_POLL]));
    fprintf(f, ",\n    \"probe\": {");
    bench_put_value(f, "raw_observed_ns", mid(&la->probe), ", ");
    bench_put_value(f, "raw_store_ns", mid(&lfig[F_PROBE_STORE]), ", ");
    bench_put_value(f, "raw_add_ns", mid(&lfig[F_PROBE_ADD]), ", ");
    bench_put_value(f, "raw_load_ns", mid(&lfig[F_PROBE_LOAD]), ", ");
    bench_put_value(f, "raw_read_ns", mid(&lfig[F_PROBE_READ]), ", ");
    bench_put_value(f, "residual_ns", residual, ", ");
    bench_put_value(f, "overlap_ns", overlap, ", ");
    bench_put_value(f, "signal_add_ns", mid(&lfig[F_SIG_ADD]), ", ");
    bench_put_value(f, "transfer_ns", transfer, ", ");
    bench_put_rounds(f, "raw_observed_rounds_ns", &la->probe);
    fprintf(f, "}},\n  \"differential\": {\n");
    differential_json(f, "injection", &inj_dr, di_name, DI_N, ",\n");
    differential_json(f, "latency", &lat_dr, dl_name, DL_N, "\n  },\n  ");
    selfcheck_json(f, &check, ",\n  ");
    {
        const char *clock, *source;

        weft__prof_clock_info(&clock, &source);
        fprintf(f, "\"clock\": {\"timer\": \"%s\", \"freq_source\": \"%s\"}", clock, source);
    }
    bench_points_json(f, point_names, points, NPOINTS);
    fprintf(f, "\n}\n");
}

static void usage(void)
{
    fprintf(stderr, "usage: mpirun -np 2 weft_bench_breakdown_direct [--json FILE] [--iters N] "
                    "[--lat-iters N] [--batch Q] [--rounds R]\n"
                    "  (two ranks of one node, WEFT_SHM on: the direct path)\n");
}

/* The trace points' statistics for the table, as in the rounds (each
 * chunk or block selects its own point alone): the injection's points
 * from one more injection pass, the signal points from one more latency
 * pass; rank 0's. */
static void collect_points(const struct bench_breakdown_opts *o, weft_prof_stat_t *s)
{
    double fig[I_KINDS], chunk_ns[I_KINDS], regions[I_KINDS], kept, calm, cycles, obs, probe;

    OK(weft_prof_reset());
    inject(o->iters, o->batch, fig, chunk_ns, regions, &kept, &calm, &cycles);
    for (int i = 0; i < INJ_POINTS; i++)
        OK(weft_prof_stat(point_names[i], &s[i]));
    OK(weft_prof_reset());
    latency_pass(o->lat_iters, &obs, &probe);
    for (int i = INJ_POINTS; i < NPOINTS; i++)
        OK(weft_prof_stat(point_names[i], &s[i]));
}

int main(int argc, char **argv)
{
    struct bench_breakdown_opts o;
    void *peer, *local;
    weft_event_t ev;
    uint64_t zero = 0;
    static struct bench_injection in;
    static struct latency la;
    weft_prof_stat_t points[NPOINTS];
    weft_status_t st;

    bench_mpi_start(&argc, &argv, &rank, &nranks);
    if (bench_need_two("weft_bench_breakdown_direct",
                       bench_breakdown_parse(argc, argv, (long)MAX_CHUNKS * LAT_BLOCK, &o) == 0,
                       rank, nranks, usage) != 0)
        return 2;
    OK(weft_init(NULL, &ctx));
    bench_calm_open(&sched);
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, SEG_BYTES, &seg, &local));
    mine = local;
    if ((st = weft_ptr(ctx, 1 - rank, seg, 0, &peer)) != WEFT_OK) {
        if (rank == 0)
            fprintf(stderr, "weft_bench_breakdown_direct: rank %d's segment is not mapped here "
                            "(%s): the direct path needs two ranks of one node and WEFT_SHM on\n",
                    1 - rank, weft_last_error());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    theirs = peer;
    /* the direct path's put-with-signal is complete when it returns */
    OK(weft_put_signal_nb(ep, 1 - rank, seg, PAYLOAD_OFF, &zero, 8, seg, SIG_OFF, 0, &ev));
    if (ev != WEFT_EVENT_NULL)
        die("weft_put_signal_nb on the direct path returned an event", WEFT_ERR_INVALID_ARG);
    OK(weft_barrier(ctx));

    /* calibrate the timer before the passes that time calls themselves */
    OK(weft_prof_select("all"));
    OK(weft_prof_select("0"));
    OK(weft_prof_timer(&timer_ghz, &timer_ovh));
    OK(weft_ucx_worker(ep, &ucx_worker));
    bench_store_target(peer);
    /* the self-check on a workload of known cost, rank 1 waiting */
    if (rank == 0)
        selfcheck_run(128, 1024, &check);
    OK(weft_barrier(ctx));
    {
        double fig[I_KINDS], chunk_ns[I_KINDS], regions[I_KINDS], kept, calm, cycles, obs, probe;

        /* warm-up: code, caches, the lines' first owners */
        inject(bench_breakdown_warmup(&o), o.batch, fig, chunk_ns, regions, &kept, &calm,
               &cycles);
        latency_pass(o.lat_iters / 8 + 1, &obs, &probe);
    }
    for (long r = 0; r < o.rounds; r++) {
        injection_round(&o, &in);
        latency_round(&o, &la);
    }
    collect_points(&o, points);
    if (rank == 0) {
        FILE *f = bench_json_open("weft_bench_breakdown_direct", o.json);

        write_json(f, &o, &in, &la, points);
        bench_json_close(f);
    }
    OK(weft_barrier(ctx));
    bench_calm_close(&sched);
    bench_finish("weft_bench_breakdown_direct", ctx, seg);
    return 0;
}
