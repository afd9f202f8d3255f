/*
 * weft_bench_latbw -- round-trip latency and flood bandwidth of weft's
 * one-sided put/get against MPI two-sided messages, across message sizes
 * (the study of Figs. 2-4 of the one-sided/overlap paper).
 *
 *   mpirun -np 2 weft_bench_latbw --json FILE [--max-lat BYTES] [--max-bw BYTES]
 *                                 [--sizes LIST | -m MIN:MAX]
 *                                 [--iters N] [--warmup N] [--window W]
 *
 * Rank 0 initiates, rank 1 is the target.  Sizes run from 8 B, doubling,
 * up to --max-lat (latency) and --max-bw (bandwidth); --sizes 8,4K,1M (K,
 * M, G: 2^10, 2^20, 2^30) or -m MIN:MAX (MIN, 2 MIN, 4 MIN, ... up to MAX,
 * as OSU's benchmarks take it) choose the sizes of both instead.
 *
 * Latency rows are round trips in microseconds:
 *   weft-put     weft_put, which returns when the data is visible at rank 1
 *   weft-get     weft_get
 *   mpi-block    MPI_Send of the size, MPI_Recv of a 0-byte reply
 *   mpi-nonblock the same with MPI_Isend/MPI_Irecv + MPI_Waitall
 * Bandwidth rows are MB/s (10^6 bytes per second):
 *   weft-put-nbi windows of W weft_put_nbi, each window ended by weft_flush
 *   mpi-isend    windows of W MPI_Isend matched by MPI_Irecv that rank 1
 *                posted before the window, ended by a 0-byte ack
 *
 * The peak the bandwidths are normalised to is measured in the same run:
 * over TCP (UCX_TLS names tcp) a plain TCP stream between the ranks on
 * loopback, otherwise the best single-core memcpy rate of a 32 KiB,
 * 256 KiB and 4 MiB buffer.
 *
 * Each point runs for about a fixed time (a short calibration sets its
 * count), never more than N round trips or N messages, so that the whole
 * run stays within seconds on a small machine however slow the transport.
 * The calibration (5 round trips, or one window) is untimed; --warmup N
 * adds N round trips, or N messages in whole windows, before it (default
 * 0).
 */
#include "common.h"
#include <weft.h>
#include <weft_ucx.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <mpi.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MIN_SIZE 8
#define MAX_SIZES 32                 /* sizes of a sweep */
#define MAX_POINTS (4 * MAX_SIZES)   /* a point per implementation and size */
#define MAX_WINDOW 1024
#define MAX_SPAN (1L << 31)          /* bytes of a window of the largest size */
#define LAT_BUDGET_S 0.08       /* seconds per latency point */
#define BW_BUDGET_S 0.15        /* seconds per bandwidth point */
#define MEMCPY_BYTES (4u << 20)
#define MEMCPY_BUDGET_S 0.2
#define TCP_MAX_BYTES (256ull << 20)
#define TCP_MAX_S 2.0
#define TCP_CHUNK (1u << 20)
#define TCP_GUARD_S 20          /* a stalled stream fails instead of hanging */

struct opts {
    const char *json;
    long max_lat, max_bw, iters, window, warmup;
    size_t lat[MAX_SIZES], bw[MAX_SIZES];     /* sizes of each sweep */
    int nlat, nbw;
};

struct point {
    const char *impl;
    size_t size;
    double value;
};

static struct point lat[MAX_POINTS], bw[MAX_POINTS];
static int nlat, nbw;
static int rank, nranks;

#define NAME "weft_bench_latbw"
#define OK(call) BENCH_OK(NAME, call)

static void fail(const char *what)
{
    fprintf(stderr, NAME ": rank %d: %s: %s\n", rank, what, strerror(errno));
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static void add(struct point *set, int *n, const char *impl, size_t size, double value)
{
    if (rank == 0 && *n < MAX_POINTS)
        set[(*n)++] = (struct point){impl, size, value};
}

/* How many repetitions of something that took `sample` seconds for `done`
 * repetitions fit in budget seconds, within [1, cap]. */
static long count_for(double sample, long done, double budget, long cap)
{
    double each = sample / (double)done;
    long n = each > 0 ? (long)(budget / each) : cap;
    return n < 1 ? 1 : n > cap ? cap : n;
}

/* Rank 0 decides a count; MPI loops need rank 1 to agree on it. */
static long agree(long n)
{
    MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    return n;
}

/* ---- latency --------------------------------------------------------- */

/* Rank 1 waits in weft_barrier, which serves the transport: over TCP a
 * put or get needs the target's progress to complete. */
static void weft_latency(weft_ctx_t ctx, weft_ep_t ep, weft_seg_t seg, char *buf, size_t size,
                         const struct opts *o)
{
    const int calib = 5;

    if (rank == 0) {
        for (long i = 0; i < o->warmup; i++)
            OK(weft_put(ep, 1, seg, 0, buf, size));
        double t0 = bench_now();
        for (int i = 0; i < calib; i++)
            OK(weft_put(ep, 1, seg, 0, buf, size));
        long n = count_for(bench_now() - t0, calib, LAT_BUDGET_S, o->iters);
        t0 = bench_now();
        for (long i = 0; i < n; i++)
            OK(weft_put(ep, 1, seg, 0, buf, size));
        add(lat, &nlat, "weft-put", size, 1e6 * (bench_now() - t0) / (double)n);

        for (long i = 0; i < o->warmup; i++)
            OK(weft_get(ep, buf, 1, seg, 0, size));
        t0 = bench_now();
        for (int i = 0; i < calib; i++)
            OK(weft_get(ep, buf, 1, seg, 0, size));
        n = count_for(bench_now() - t0, calib, LAT_BUDGET_S, o->iters);
        t0 = bench_now();
        for (long i = 0; i < n; i++)
            OK(weft_get(ep, buf, 1, seg, 0, size));
        add(lat, &nlat, "weft-get", size, 1e6 * (bench_now() - t0) / (double)n);
    }
    OK(weft_barrier(ctx));
}

static void pingpong(char *buf, size_t size, long n, int nonblocking)
{
    MPI_Request req[2];

    for (long i = 0; i < n; i++) {
        if (rank == 0 && nonblocking) {
            MPI_Irecv(NULL, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &req[0]);
            MPI_Isend(buf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &req[1]);
            MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        } else if (rank == 0) {
            MPI_Send(buf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (nonblocking) {
            MPI_Irecv(buf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &req[0]);
            MPI_Wait(&req[0], MPI_STATUS_IGNORE);
            MPI_Isend(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &req[1]);
            MPI_Wait(&req[1], MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        }
    }
}

static void mpi_latency(char *buf, size_t size, const struct opts *o)
{
    const int calib = 5;

    for (int nonblocking = 0; nonblocking < 2; nonblocking++) {
        pingpong(buf, size, o->warmup, nonblocking);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = bench_now();
        pingpong(buf, size, calib, nonblocking);
        long n = agree(count_for(bench_now() - t0, calib, LAT_BUDGET_S, o->iters));
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = bench_now();
        pingpong(buf, size, n, nonblocking);
        add(lat, &nlat, nonblocking ? "mpi-nonblock" : "mpi-block", size, 1e6 * (bench_now() - t0) / (double)n);
    }
}

/* ---- flood bandwidth -------------------------------------------------- */

/* Every message of a window has its own slot at the target, as the MPI
 * receives need disjoint buffers; weft's puts use the same layout. */
static void weft_windows(weft_ep_t ep, weft_seg_t seg, const char *src, size_t size, long windows,
                         long w)
{
    for (long k = 0; k < windows; k++) {
        for (long i = 0; i < w; i++)
            OK(weft_put_nbi(ep, 1, seg, (size_t)i * size, src, size));
        OK(weft_flush(ep));
    }
}

/* The windows of the warm-up: --warmup messages, rounded up. */
static long warmup_windows(const struct opts *o)
{
    return (o->warmup + o->window - 1) / o->window;
}

static void weft_flood(weft_ctx_t ctx, weft_ep_t ep, weft_seg_t seg, const char *src, size_t size,
                       const struct opts *o)
{
    long w = o->window;

    if (rank == 0) {
        weft_windows(ep, seg, src, size, warmup_windows(o), w);
        double t0 = bench_now();
        weft_windows(ep, seg, src, size, 1, w);
        long n = count_for(bench_now() - t0, 1, BW_BUDGET_S, o->iters / w > 0 ? o->iters / w : 1);
        t0 = bench_now();
        weft_windows(ep, seg, src, size, n, w);
        add(bw, &nbw, "weft-put-nbi", size, 1e-6 * (double)(n * w) * (double)size / (bench_now() - t0));
    }
    OK(weft_barrier(ctx));
}

static void post_window(char *sink, size_t size, long w, MPI_Request *reqs)
{
    for (long i = 0; i < w; i++)
        MPI_Irecv(sink + (size_t)i * size, (int)size, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &reqs[i]);
}

/* Rank 1 posts the receives of the next window before it acknowledges the
 * current one, so that every message finds its receive already posted. */
static void mpi_windows(const char *src, char *sink, size_t size, long windows, long w, MPI_Request *reqs)
{
    if (rank == 1)
        post_window(sink, size, w, reqs);
    MPI_Barrier(MPI_COMM_WORLD);
    for (long k = 0; k < windows; k++) {
        if (rank == 0) {
            for (long i = 0; i < w; i++)
                MPI_Isend(src, (int)size, MPI_BYTE, 1, 3, MPI_COMM_WORLD, &reqs[i]);
            MPI_Waitall((int)w, reqs, MPI_STATUSES_IGNORE);
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Waitall((int)w, reqs, MPI_STATUSES_IGNORE);
            if (k + 1 < windows)
                post_window(sink, size, w, reqs);
            MPI_Send(NULL, 0, MPI_BYTE, 0, 4, MPI_COMM_WORLD);
        }
    }
}

static void mpi_flood(const char *src, char *sink, size_t size, const struct opts *o, MPI_Request *reqs)
{
    long w = o->window;
    double t0;

    if (o->warmup > 0)
        mpi_windows(src, sink, size, warmup_windows(o), w, reqs);
    t0 = bench_now();
    mpi_windows(src, sink, size, 1, w, reqs);
    long n = agree(count_for(bench_now() - t0, 1, BW_BUDGET_S, o->iters / w > 0 ? o->iters / w : 1));
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = bench_now();
    mpi_windows(src, sink, size, n, w, reqs);
    add(bw, &nbw, "mpi-isend", size, 1e-6 * (double)(n * w) * (double)size / (bench_now() - t0));
}

/* ---- peaks ------------------------------------------------------------ */

/* What one core copies per second: the ceiling of a shared-memory path,
 * where every byte is copied at least once.  The best of a cache-resident
 * and a memory-resident copy, since a flood of small messages stays in
 * cache and a peak measured from memory alone would be exceeded. */
static double memcpy_rate(size_t bytes, double budget)
{
    char *a = malloc(bytes), *b = malloc(bytes);
    double t0, t;
    long reps = 0;

    if (a == NULL || b == NULL)
        fail("memcpy buffers");
    memset(a, 1, bytes);
    memcpy(b, a, bytes);     /* fault the pages in before timing */
    t0 = bench_now();
    do {
        memcpy(reps % 2 ? a : b, reps % 2 ? b : a, bytes);
        reps++;
    } while ((t = bench_now() - t0) < budget);
    free(a);
    free(b);
    return 1e-6 * (double)reps * (double)bytes / t;
}

static double memcpy_peak(void)
{
    static const size_t sizes[] = {32u << 10, 256u << 10, MEMCPY_BYTES};
    double best = 0;

    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        double r = memcpy_rate(sizes[i], MEMCPY_BUDGET_S / 3);
        if (r > best)
            best = r;
    }
    return best;
}

static void guard(int fd)
{
    struct timeval tv = {.tv_sec = TCP_GUARD_S};

    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0)
        fail("setsockopt");
}

/* The rate of a plain TCP stream from rank 0 to rank 1 over loopback, the
 * ceiling of UCX's TCP transport between emulated nodes.  Rank 0 streams
 * for at most TCP_MAX_BYTES or TCP_MAX_S, closes its side, and stops the
 * clock when rank 1 reports the byte count it received. */
static double tcp_peak(void)
{
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(addr);
    int port = 0, fd;
    uint64_t total = 0;
    char *chunk = calloc(1, TCP_CHUNK);
    double t0, mbps = 0;

    if (chunk == NULL)
        fail("TCP buffer");
    if (rank == 1) {
        int lfd = socket(AF_INET, SOCK_STREAM, 0);
        if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(lfd, 1) != 0 ||
            getsockname(lfd, (struct sockaddr *)&addr, &alen) != 0)
            fail("TCP listen on 127.0.0.1");
        port = ntohs(addr.sin_port);
        MPI_Send(&port, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
        if ((fd = accept(lfd, NULL, NULL)) < 0)
            fail("TCP accept");
        close(lfd);
        guard(fd);
        for (ssize_t got; (got = read(fd, chunk, TCP_CHUNK)) != 0; total += (uint64_t)got)
            if (got < 0)
                fail("TCP read");
        if (write(fd, &total, sizeof(total)) != (ssize_t)sizeof(total))
            fail("TCP write of the count");
    } else {
        MPI_Recv(&port, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        addr.sin_port = htons((uint16_t)port);
        if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0)
            fail("TCP connect to rank 1");
        guard(fd);
        t0 = bench_now();
        for (uint64_t sent = 0; sent < TCP_MAX_BYTES && bench_now() - t0 < TCP_MAX_S;) {
            ssize_t put = write(fd, chunk, TCP_CHUNK);
            if (put < 0)
                fail("TCP write");
            sent += (uint64_t)put;
        }
        shutdown(fd, SHUT_WR);
        if (read(fd, &total, sizeof(total)) != (ssize_t)sizeof(total))
            fail("TCP read of the count");
        mbps = 1e-6 * (double)total / (bench_now() - t0);
    }
    close(fd);
    free(chunk);
    return mbps;
}

/* ---- output ----------------------------------------------------------- */

/* "name": [{"impl": ..., "size": ..., "unit": value}, ...], the points of set. */
static void write_points(FILE *f, const char *name, const char *unit, const struct point *set, int n)
{
    fprintf(f, "  \"%s\": [\n", name);
    for (int i = 0; i < n; i++) {
        fprintf(f, "    {\"impl\": \"%s\", \"size\": %zu, \"%s\": ", set[i].impl, set[i].size, unit);
        bench_json_number(f, "%.6g", set[i].value);
        fprintf(f, "}%s\n", i + 1 < n ? "," : "");
    }
    fprintf(f, "  ]");
}

/* "name": [s0, s1, ...],\n */
static void put_sizes(FILE *f, const char *name, const size_t *sizes, int n)
{
    fprintf(f, "  \"%s\": [", name);
    for (int k = 0; k < n; k++)
        fprintf(f, "%s%zu", k ? ", " : "", sizes[k]);
    fputs("],\n", f);
}

static void write_json(const struct opts *o, const char *transport, double peak,
                       const char *peak_kind)
{
    FILE *f = bench_json_open(NAME, o->json);

    bench_json_head(f, "latbw", nranks, transport);
    fprintf(f, "  \"window\": %ld,\n  \"iters\": %ld,\n  \"warmup\": %ld,\n", o->window, o->iters,
            o->warmup);
    put_sizes(f, "latency_sizes", o->lat, o->nlat);
    put_sizes(f, "bandwidth_sizes", o->bw, o->nbw);
    fputs("  \"peak_MBps\": ", f);
    bench_json_number(f, "%.6g", peak);
    fprintf(f, ",\n  \"peak_kind\": \"%s\",\n", peak_kind);
    write_points(f, "latency", "us", lat, nlat);
    fprintf(f, ",\n");
    write_points(f, "bandwidth", "MBps", bw, nbw);
    fprintf(f, "\n}\n");
    bench_json_close(f);
}

static void usage(void)
{
    fprintf(stderr,
            "usage: mpirun -np 2 weft_bench_latbw --json FILE [--max-lat BYTES] [--max-bw BYTES]\n"
            "                                     [--sizes LIST | -m MIN:MAX] [--iters N] [--warmup N]\n"
            "                                     [--window W]\n"
            "  sizes double from %d B up to --max-lat (latency, default 65536) and --max-bw\n"
            "  (bandwidth, default 4194304); --sizes LIST (e.g. 8,64,4K,1M; K, M, G: 2^10, 2^20,\n"
            "  2^30; at most %d) or -m MIN:MAX (MIN, 2 MIN, 4 MIN, ... up to MAX) choose both;\n"
            "  a size is at most 2^30 bytes, and W of the largest at most 2 GiB (the segment)\n"
            "  --iters N   most round trips or messages per point (default 20000)\n"
            "  --warmup N  untimed round trips or messages before each point (default 0)\n"
            "  --window W  messages per window, 1 to %d (default 64)\n",
            MIN_SIZE, MAX_SIZES, MAX_WINDOW);
}

/* ---- arguments -------------------------------------------------------- */

/* Both ranks parse the arguments; rank 0 alone says what is wrong. */
#define bad(...) bench_bad(NAME, rank == 0, __VA_ARGS__)

/* Sizes from MIN_SIZE, doubling, up to max, into out[]: how many. */
static int doubling(long max, size_t *out)
{
    int n = 0;

    for (size_t size = MIN_SIZE; size <= (size_t)max; size *= 2)
        out[n++] = size;       /* max <= 2^30: at most 28 */
    return n;
}

static int parse(int argc, char **argv, struct opts *o)
{
    const char *sizes = NULL, *range = NULL, *warmup = NULL;
    const struct bench_opt opts[] = {
        {"--json", .text = &o->json},        {"--max-lat", .value = &o->max_lat},
        {"--max-bw", .value = &o->max_bw},   {"--iters", .value = &o->iters},
        {"--window", .value = &o->window},   {"--sizes", .text = &sizes},
        {"-m", .text = &range},              {"--warmup", .text = &warmup},
        {NULL},
    };
    size_t most;

    /* max_lat and max_bw stay 0 unless given */
    *o = (struct opts){.iters = 20000, .window = 64};
    if (bench_parse_opts(argc, argv, opts) != 0)
        return bad("an unknown option, a missing value or a count that is not a positive integer");
    if (o->json == NULL)
        return bad("--json FILE is required");
    if (o->window > MAX_WINDOW)
        return bad("--window %ld: at most %d", o->window, MAX_WINDOW);
    if (warmup != NULL && bench_parse_count(NAME, rank == 0, "--warmup", warmup, &o->warmup) != 0)
        return -1;
    /* MPI counts are ints, and a window of the largest size must fit the segment */
    most = (size_t)(MAX_SPAN / o->window < (1L << 30) ? MAX_SPAN / o->window : (1L << 30));
    if (sizes != NULL && range != NULL)
        return bad("--sizes and -m both choose the sizes: give one of them");
    if (sizes != NULL || range != NULL) {
        if (o->max_lat != 0 || o->max_bw != 0)
            return bad("--sizes and -m replace --max-lat and --max-bw: give one or the other");
        o->nlat = sizes ? bench_parse_size_list(NAME, rank == 0, sizes, most, o->lat, MAX_SIZES)
                        : bench_parse_size_range(NAME, rank == 0, range, most, o->lat, MAX_SIZES);
        if (o->nlat < 0)
            return -1;
        memcpy(o->bw, o->lat, sizeof(o->lat));
        o->nbw = o->nlat;
        return 0;
    }
    o->max_lat = o->max_lat ? o->max_lat : 65536;
    o->max_bw = o->max_bw ? o->max_bw : 4194304;
    if (o->max_lat < MIN_SIZE || o->max_lat > (1L << 30))
        return bad("--max-lat %ld: from %d to 2^30", o->max_lat, MIN_SIZE);
    if (o->max_bw < MIN_SIZE || (size_t)o->max_bw > most)
        return bad("--max-bw %ld: from %d to %zu (2^30, and --window %ld of it at most 2 GiB)",
                   o->max_bw, MIN_SIZE, most, o->window);
    o->nlat = doubling(o->max_lat, o->lat);
    o->nbw = doubling(o->max_bw, o->bw);
    return 0;
}

/* The largest of sizes[0..n). */
static size_t largest(const size_t *sizes, int n)
{
    size_t max = 0;

    for (int k = 0; k < n; k++)
        max = sizes[k] > max ? sizes[k] : max;
    return max;
}

int main(int argc, char **argv)
{
    struct opts o;
    weft_config_t cfg;
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg;
    char transport[256], *buf, *sink = NULL;
    MPI_Request *reqs;
    int over_tcp = strstr(bench_ucx_tls(), "tcp") != NULL;
    size_t maxsize, span;
    double peak;

    bench_mpi_start(&argc, &argv, &rank, &nranks);
    if (bench_need_two(NAME, parse(argc, argv, &o) == 0, rank, nranks, usage) != 0)
        return 2;
    maxsize = largest(o.lat, o.nlat) > largest(o.bw, o.nbw) ? largest(o.lat, o.nlat) : largest(o.bw, o.nbw);
    span = (size_t)o.window * largest(o.bw, o.nbw);
    if (span < maxsize)
        span = maxsize;
    buf = malloc(maxsize);
    reqs = malloc(sizeof(*reqs) * (size_t)o.window);
    if (rank == 1)
        sink = malloc(span);
    if (buf == NULL || reqs == NULL || (rank == 1 && sink == NULL))
        fail("buffers");
    memset(buf, 7, maxsize);
    if (sink)
        memset(sink, 0, span);      /* fault the receive pages in before timing */

    OK(weft_config_init(&cfg));
    OK(weft_init(&cfg, &ctx));
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, span, &seg, NULL));
    bench_transport_of(ep, 1, seg, transport, sizeof(transport));

    /* The peak first, while nothing else runs. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (over_tcp)
        peak = tcp_peak();
    else
        peak = rank == 0 ? memcpy_peak() : 0;
    MPI_Barrier(MPI_COMM_WORLD);

    for (int k = 0; k < o.nlat; k++) {
        weft_latency(ctx, ep, seg, buf, o.lat[k], &o);
        mpi_latency(buf, o.lat[k], &o);
    }
    for (int k = 0; k < o.nbw; k++) {
        weft_flood(ctx, ep, seg, buf, o.bw[k], &o);
        mpi_flood(buf, sink, o.bw[k], &o, reqs);
    }

    if (rank == 0)
        write_json(&o, transport, peak, over_tcp ? "tcp-stream" : "memcpy");
    free(buf);
    free(reqs);
    free(sink);
    bench_finish(NAME, ctx, seg);
    return 0;
}
