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
 * Each of R rounds measures the observed figures (profiling off), then
 * each component in a pass of its own with only its point selected, so
 * that no timer disturbs another component; the JSON holds the median
 * value of each over the rounds.
 */
#include "common.h"
#include "prof/prof.h"
#include <weft.h>
#include <weft_ucx.h>

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROUNDS 32
#define MAX_SAMPLES 65536                /* timed chunks or round trips per pass */
#define AM_ID 1
#define RAW_AM_ID (WEFT_AM_MAX_ID + 1)   /* beyond weft's ids: the probe's own */

struct opts {
    const char *json;
    long iters, lat_iters, batch, rounds;
};

static int rank, nranks;
static weft_ctx_t ctx;
static volatile int got;           /* set by the AM handlers */
static uint64_t done_count;        /* injection passes finished, told to rank 1 */

static void die(const char *what, weft_status_t st)
{
    fprintf(stderr, "weft_bench_breakdown: %s: %s (%s)\n", what, weft_strerror(st), weft_last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
}
#define OK(call) do { weft_status_t s_ = (call); if (s_ != WEFT_OK) die(#call, s_); } while (0)

/* ---- figures over rounds ---------------------------------------------- */

/* Each figure is measured once per round; the JSON gives the median over
 * rounds, and keeps the observed figures of every round.  Within a pass, observed
 * figures are medians of timed chunks or round trips and components are
 * trimmed means of their samples (times count), so that the moments the
 * scheduler takes a rank away count in neither. */
struct series {
    double v[MAX_ROUNDS];
    int n;
};

static double samples[MAX_SAMPLES];

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median over rounds. */
static double mid(const struct series *s)
{
    double t[MAX_ROUNDS];

    if (s->n == 0)
        return 0;
    memcpy(t, s->v, sizeof(double) * (size_t)s->n);
    qsort(t, (size_t)s->n, sizeof(double), cmp_double);
    return s->n % 2 ? t[s->n / 2] : 0.5 * (t[s->n / 2 - 1] + t[s->n / 2]);
}

/* Median of samples[0, n), which it sorts. */
static double median_of(long n)
{
    if (n == 0)
        return 0;
    qsort(samples, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
}

static void push(struct series *s, double v)
{
    if (s->n < MAX_ROUNDS)
        s->v[s->n++] = v;
}

/* A point's time per message of n on rank 0: its trimmed mean times its
 * count, over n. */
static double per_message(const char *point, long n)
{
    weft_prof_stat_t s;

    OK(weft_prof_stat(point, &s));
    return s.count ? s.trimmed_mean_ns * (double)s.count / (double)n : 0;
}

/* A point's time per sample over both ranks (rank 0 gets it): the
 * count-weighted median, as robust as the observed latency's. */
static double per_sample(const char *point)
{
    weft_prof_stat_t s;
    double mine[2], sum[2];

    OK(weft_prof_stat(point, &s));
    mine[0] = s.count ? s.median_ns * (double)s.count : 0;
    mine[1] = (double)s.count;
    OK(weft_barrier(ctx));
    MPI_Reduce(mine, sum, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    return sum[1] > 0 ? sum[0] / sum[1] : 0;
}

/* Select one point (or none: "0") on both ranks and forget old samples.
 * Barriers are weft's: over TCP a peer's last flush needs this rank's
 * progress while it waits. */
static void select_only(const char *points)
{
    OK(weft_prof_select(points));
    OK(weft_prof_reset());
    OK(weft_barrier(ctx));
}

/* ---- injection -------------------------------------------------------- */

/* Puts per timed chunk: 64 batches. */
static long chunk_of(long n, long q)
{
    long c = 64 * q;

    while (n / c > MAX_SAMPLES)
        c *= 2;
    return c < n ? c : n;
}

/* What inject() times around weft's calls, besides the chunks. */
enum { CALLS_NONE, CALLS_POST, CALLS_PROGRESS };

/* Rank 0: n puts with a progress every q, timed by chunks; rank 1 serves
 * them until rank 0 signals the end.  Returns rank 0's median ns per put
 * over the chunks; the final flush is outside them, and outside the
 * components too.  With `calls`, each weft_put_nbi (recorded as HLP_post)
 * or each weft_progress (as HLP_tx_prog) is timed from the caller, with no
 * library point selected: the paper's way of finding a layer's own time,
 * the call minus what it calls. */
static double inject(weft_ep_t ep, weft_seg_t seg, long n, long q, int calls)
{
    uint64_t src = 42, c = 0;
    long chunk = chunk_of(n, q), k = 0, to_progress = q, to_chunk = chunk;
    double last, now, ns = 0;

    OK(weft_barrier(ctx));
    done_count++;
    if (rank == 0) {
        last = bench_now();
        for (long i = 0; i < n; i++) {
            if (calls == CALLS_POST)
                c = weft__prof_start();
            OK(weft_put_nbi(ep, 1, seg, (size_t)(i & 63) * 8, &src, 8));
            if (calls == CALLS_POST)
                weft__prof_record(WEFT__PROF_HLP_POST, weft__prof_stop() - c);
            if (--to_progress == 0) {
                to_progress = q;
                if (calls == CALLS_PROGRESS)
                    c = weft__prof_start();
                OK(weft_progress(ep, NULL));
                if (calls == CALLS_PROGRESS)
                    weft__prof_record(WEFT__PROF_HLP_TX_PROG, weft__prof_stop() - c);
            }
            if (--to_chunk == 0) {
                to_chunk = chunk;
                now = bench_now();
                samples[k++] = 1e9 * (now - last) / (double)chunk;
                last = now;
            }
        }
        /* the components, like the chunks, cover the steady state: not
         * the final flush (the next pass selects its point again) */
        OK(weft_prof_select("0"));
        OK(weft_flush(ep));
        ns = median_of(k);
        OK(weft_put(ep, 1, seg, 1024, &done_count, 8));
    } else {
        OK(weft_signal_wait_until(ep, seg, 1024, done_count, NULL));
    }
    return ns;
}

/* The loop of inject() with empty functions in place of weft's: what the
 * benchmark itself costs per message (Misc). */
static double inject_loop_only(long n, long q)
{
    uint64_t src = 42;
    long chunk = chunk_of(n, q), k = 0, to_progress = q, to_chunk = chunk;
    double last = bench_now(), now;

    for (long i = 0; i < n; i++) {
        bench_nop_post(NULL, 1, NULL, (size_t)(i & 63) * 8, &src, 8);
        if (--to_progress == 0) {
            to_progress = q;
            bench_nop_progress(NULL, NULL);
        }
        if (--to_chunk == 0) {
            to_chunk = chunk;
            now = bench_now();
            samples[k++] = 1e9 * (now - last) / (double)chunk;
            last = now;
        }
    }
    return median_of(k);
}

struct injection {
    struct series observed, post_call, prog_call, hlp_post, llp_post, llp_prog, tx_prog, busy, misc;
};

static void injection_round(weft_ep_t ep, weft_seg_t seg, const struct opts *o, struct injection *r)
{
    long n = o->iters, q = o->batch;

    select_only("0");
    push(&r->observed, inject(ep, seg, n, q, CALLS_NONE));
    push(&r->misc, inject_loop_only(n, q));

    /* whole calls, timed by the caller (no library point selected) */
    select_only("0");
    inject(ep, seg, n, q, CALLS_POST);
    push(&r->post_call, per_message("HLP_post", n));
    select_only("0");
    inject(ep, seg, n, q, CALLS_PROGRESS);
    push(&r->prog_call, per_message("HLP_tx_prog", n));

    select_only("HLP_post");
    inject(ep, seg, n, q, CALLS_NONE);
    push(&r->hlp_post, per_message("HLP_post", n));

    select_only("LLP_post");
    inject(ep, seg, n, q, CALLS_NONE);
    push(&r->llp_post, per_message("LLP_post", n));

    /* LLP_prog's region also times the calls that found nothing (LLP_poll);
     * the completion callbacks inside it are HLP_tx_prog */
    select_only("LLP_prog");
    inject(ep, seg, n, q, CALLS_NONE);
    push(&r->llp_prog, per_message("LLP_prog", n) + per_message("LLP_poll", n));

    select_only("HLP_tx_prog");
    inject(ep, seg, n, q, CALLS_NONE);
    push(&r->tx_prog, per_message("HLP_tx_prog", n));

    select_only("busy_post");
    inject(ep, seg, n, q, CALLS_NONE);
    push(&r->busy, per_message("busy_post", n));
    select_only("0");
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

/* n round trips of 8 bytes, each timed by rank 0: the median one-way
 * time in ns (half the round trip). */
static double pingpong(weft_ep_t ep, long n)
{
    uint64_t payload = 42;
    weft_event_t ev;
    double t0;

    OK(weft_barrier(ctx));
    for (long i = 0; i < n; i++) {
        if (rank == 0) {
            t0 = bench_now();
            OK(weft_am_send_nb(ep, 1, AM_ID, NULL, 0, &payload, 8, &ev));
            await(ep);
            samples[i] = 0.5e9 * (bench_now() - t0);
        } else {
            await(ep);
            OK(weft_am_send_nb(ep, 0, AM_ID, NULL, 0, &payload, 8, &ev));
        }
        OK(weft_wait(&ev));
    }
    return rank == 0 ? median_of(n) : 0;
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

static ucs_status_ptr_t raw_post(ucp_ep_h peer, int timed)
{
    static uint64_t hdr = 0, payload = 42;
    ucp_request_param_t p = {.op_attr_mask = 0};
    uint64_t c = timed ? weft__prof_start() : 0;
    ucs_status_ptr_t r = ucp_am_send_nbx(peer, RAW_AM_ID, &hdr, sizeof(hdr), &payload,
                                         sizeof(payload), &p);

    if (c)
        weft__prof_record(WEFT__PROF_LLP_POST, weft__prof_stop() - c);
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
            weft__prof_record(WEFT__PROF_LLP_PROG, weft__prof_stop() - c);
    }
    got = 0;
}

/* pingpong() written against UCX, with weft's header and payload sizes;
 * with `what` the post calls or the successful progress calls are timed
 * (recorded as LLP_post / LLP_prog in the prof tables). */
static double raw_pingpong(ucp_worker_h w, ucp_ep_h peer, long n, int what)
{
    ucs_status_ptr_t r;
    double t0;

    OK(weft_barrier(ctx));
    for (long i = 0; i < n; i++) {
        if (rank == 0) {
            t0 = bench_now();
            r = raw_post(peer, what == TIME_POST);
            raw_await(w, what == TIME_PROG);
            samples[i] = 0.5e9 * (bench_now() - t0);
        } else {
            raw_await(w, what == TIME_PROG);
            r = raw_post(peer, what == TIME_POST);
        }
        raw_complete(w, r);
    }
    return rank == 0 ? median_of(n) : 0;
}

struct latency {
    struct series observed, hlp_post, llp_post, llp_prog, rx_prog;
    struct series raw, raw_post, raw_prog;
};

static void latency_round(weft_ep_t ep, ucp_worker_h w, ucp_ep_h peer, const struct opts *o,
                          struct latency *r)
{
    long n = o->lat_iters;

    select_only("0");
    push(&r->observed, pingpong(ep, n));
    push(&r->raw, raw_pingpong(w, peer, n, TIME_NONE));

    select_only("HLP_post");
    pingpong(ep, n);
    push(&r->hlp_post, per_sample("HLP_post"));
    select_only("LLP_post");
    pingpong(ep, n);
    push(&r->llp_post, per_sample("LLP_post"));
    select_only("HLP_rx_prog");
    pingpong(ep, n);
    push(&r->rx_prog, per_sample("HLP_rx_prog"));
    /* only the progress calls that returned events: those that found
     * nothing overlap the transfer; the AM delivery inside is HLP_rx_prog */
    select_only("LLP_prog");
    pingpong(ep, n);
    push(&r->llp_prog, per_sample("LLP_prog"));

    /* the probe times its own calls; no weft point is selected */
    select_only("0");
    raw_pingpong(w, peer, n, TIME_POST);
    push(&r->raw_post, per_sample("LLP_post"));
    select_only("0");
    raw_pingpong(w, peer, n, TIME_PROG);
    push(&r->raw_prog, per_sample("LLP_prog"));
}

/* The points of the injection benchmark, each from a pass with only it
 * selected (LLP_poll comes with LLP_prog's region); rank 0's. */
#define NPOINTS 6
static const char *const point_names[NPOINTS] = {"HLP_post", "LLP_post", "LLP_prog", "LLP_poll",
                                                 "HLP_tx_prog", "busy_post"};

static void collect_points(weft_ep_t ep, weft_seg_t seg, const struct opts *o,
                           weft_prof_stat_t *s)
{
    for (int i = 0; i < NPOINTS; i++) {
        if (i == 3)
            continue;
        select_only(point_names[i]);
        inject(ep, seg, o->iters, o->batch, CALLS_NONE);
        OK(weft_prof_stat(point_names[i], &s[i]));
        if (i == 2)
            OK(weft_prof_stat("LLP_poll", &s[3]));
    }
    select_only("0");
}

static void points_json(FILE *f, const weft_prof_stat_t *s)
{
    fprintf(f, ",\n  \"points\": {");
    for (int i = 0; i < NPOINTS; i++)
        fprintf(f, "%s\n    \"%s\": {\"count\": %llu, \"total_ns\": %.3f, \"min_ns\": %.3f, "
                   "\"median_ns\": %.3f, \"trimmed_mean_ns\": %.3f}",
                i ? "," : "", point_names[i], (unsigned long long)s[i].count, s[i].total_ns,
                s[i].min_ns, s[i].median_ns, s[i].trimmed_mean_ns);
    fprintf(f, "\n  }");
}

/* ---- output ------------------------------------------------------------ */

static void put_series(FILE *f, const char *name, const struct series *s, const char *sep)
{
    fprintf(f, "\"%s\": %.3f%s", name, mid(s), sep);
}

/* A figure derived from others, from their values in the JSON. */
static void put_value(FILE *f, const char *name, double v, const char *sep)
{
    fprintf(f, "\"%s\": %.3f%s", name, v, sep);
}

static void put_rounds(FILE *f, const char *name, const struct series *s)
{
    fprintf(f, "\"%s\": [", name);
    for (int i = 0; i < s->n; i++)
        fprintf(f, "%s%.3f", i ? ", " : "", s->v[i]);
    fprintf(f, "]");
}

static void write_json(FILE *f, const struct opts *o, const char *transport,
                       const struct injection *in, const struct latency *la,
                       const weft_prof_stat_t *points)
{
    double ghz = 0, ovh = 0;
    /* The probe's latency not explained by its own calls.  When its calls
     * are longer than its latency, part of the post overlaps the transfer
     * (TCP loopback delivers inside the sender's send, shared memory shows
     * the message before the post returns): that overlap is counted once,
     * taken off LLP_post, and the transfer is 0. */
    double residual = mid(&la->raw) - mid(&la->raw_post) - mid(&la->raw_prog);
    double overlap = residual < 0 ? -residual : 0, transfer = residual < 0 ? 0 : residual;

    OK(weft_prof_timer(&ghz, &ovh));
    fprintf(f, "{\n  \"benchmark\": \"breakdown\",\n  \"nranks\": %d,\n  \"transport\": \"%s\",\n"
               "  \"ucx_tls\": \"%s\",\n  \"iters\": %ld,\n  \"lat_iters\": %ld,\n  \"rounds\": %ld,\n"
               "  \"statistic\": \"median over rounds\",\n"
               "  \"timer\": {\"tsc_ghz\": %.6f, \"overhead_ns\": %.3f},\n",
            nranks, transport, getenv("UCX_TLS") ? getenv("UCX_TLS") : "default", o->iters,
            o->lat_iters, o->rounds, ghz, ovh);
    fprintf(f, "  \"injection\": {");
    put_series(f, "observed_ns", &in->observed, ", ");
    fprintf(f, "\"batch\": %ld, ", o->batch);
    put_rounds(f, "observed_rounds_ns", &in->observed);
    fprintf(f, ",\n    \"components_ns\": {");
    /* the callbacks inside the progress calls are HLP_tx_prog */
    put_series(f, "HLP_post", &in->hlp_post, ", ");
    put_series(f, "LLP_post", &in->llp_post, ", ");
    put_value(f, "LLP_prog", mid(&in->llp_prog) - mid(&in->tx_prog), ", ");
    put_series(f, "HLP_tx_prog", &in->tx_prog, ", ");
    put_series(f, "busy_post", &in->busy, ", ");
    put_series(f, "misc", &in->misc, "}");
    fprintf(f, ",\n    \"calls_ns\": {");
    put_series(f, "weft_put_nbi", &in->post_call, ", ");
    put_series(f, "weft_progress", &in->prog_call, ", ");
    put_value(f, "HLP_post_by_subtraction", mid(&in->post_call) - mid(&in->llp_post) - mid(&in->busy), ", ");
    put_value(f, "HLP_tx_prog_by_subtraction",
              mid(&in->prog_call) - mid(&in->llp_prog) + mid(&in->tx_prog), "}");
    fprintf(f, "}");
    fprintf(f, ",\n  \"latency\": {");
    put_series(f, "observed_ns", &la->observed, ", ");
    put_rounds(f, "observed_rounds_ns", &la->observed);
    fprintf(f, ",\n    \"components_ns\": {");
    put_series(f, "HLP_post", &la->hlp_post, ", ");
    put_value(f, "LLP_post", mid(&la->llp_post) - overlap, ", ");
    put_value(f, "transfer", transfer, ", ");
    /* the AM delivery inside the progress call is HLP_rx_prog */
    put_value(f, "LLP_prog", mid(&la->llp_prog) - mid(&la->rx_prog), ", ");
    put_series(f, "HLP_rx_prog", &la->rx_prog, "}");
    fprintf(f, ",\n    \"probe\": {");
    put_series(f, "raw_observed_ns", &la->raw, ", ");
    put_series(f, "raw_LLP_post_ns", &la->raw_post, ", ");
    put_series(f, "raw_LLP_prog_ns", &la->raw_prog, ", ");
    put_value(f, "residual_ns", residual, ", ");
    put_value(f, "overlap_ns", overlap, ", ");
    put_series(f, "LLP_post_ns", &la->llp_post, ", ");
    put_value(f, "transfer_ns", transfer, "}");
    fprintf(f, "}");
    points_json(f, points);
    fprintf(f, "\n}\n");
}

static void usage(void)
{
    fprintf(stderr, "usage: mpirun -np 2 weft_bench_breakdown [--json FILE] [--iters N] "
                    "[--lat-iters N] [--batch Q] [--rounds R]\n");
}

static int parse(int argc, char **argv, struct opts *o)
{
    o->json = NULL;
    o->iters = 200000;
    o->lat_iters = 20000;
    o->batch = 16;
    o->rounds = 5;
    for (int i = 1; i < argc; i++) {
        long *dst = NULL;
        if (!strcmp(argv[i], "--json") && i + 1 < argc) o->json = argv[++i];
        else if (!strcmp(argv[i], "--iters")) dst = &o->iters;
        else if (!strcmp(argv[i], "--lat-iters")) dst = &o->lat_iters;
        else if (!strcmp(argv[i], "--batch")) dst = &o->batch;
        else if (!strcmp(argv[i], "--rounds")) dst = &o->rounds;
        else return -1;
        if (dst && bench_arg_positive(argc, argv, &i, dst) != 0)
            return -1;
    }
    return o->rounds <= MAX_ROUNDS && o->batch <= o->iters && o->lat_iters <= MAX_SAMPLES ? 0 : -1;
}

int main(int argc, char **argv)
{
    struct opts o;
    weft_ep_t ep;
    weft_seg_t seg;
    void *local;
    ucp_worker_h w;
    ucp_ep_h peer;
    ucp_rkey_h rkey;
    uint64_t raddr;
    ucp_am_handler_param_t hp;
    char transport[256];
    static struct injection in;
    static struct latency la;
    weft_prof_stat_t points[NPOINTS];
    FILE *f = stdout;

    bench_mpi_start(&argc, &argv, &rank, &nranks);
    if (bench_need_two("weft_bench_breakdown", parse(argc, argv, &o) == 0, rank, nranks, usage) != 0)
        return 2;
    OK(weft_init(NULL, &ctx));
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
    OK(weft_barrier(ctx));
    bench_transport_of(ep, 1 - rank, seg, transport, sizeof(transport));

    /* calibrate the timer before the passes that time calls themselves */
    OK(weft_prof_select("all"));
    OK(weft_prof_select("0"));
    /* warm-up: connections, keys, caches */
    inject(ep, seg, o.iters / 4 + 1, o.batch, CALLS_NONE);
    pingpong(ep, o.lat_iters / 4 + 1);
    raw_pingpong(w, peer, o.lat_iters / 4 + 1, TIME_NONE);
    for (long r = 0; r < o.rounds; r++) {
        injection_round(ep, seg, &o, &in);
        latency_round(ep, w, peer, &o, &la);
    }
    collect_points(ep, seg, &o, points);
    if (rank == 0) {
        if (o.json && (f = fopen(o.json, "w")) == NULL) {
            fprintf(stderr, "weft_bench_breakdown: cannot write %s\n", o.json);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        write_json(f, &o, transport, &in, &la, points);
        if (f != stdout)
            fclose(f);
    }
    OK(weft_barrier(ctx));
    OK(weft_seg_free(ctx, seg));
    OK(weft_finalize(ctx));
    MPI_Finalize();
    return 0;
}
