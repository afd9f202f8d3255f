/*
 * weft_bench_latbw -- round-trip latency and flood bandwidth of weft's
 * one-sided put/get against MPI two-sided messages, across message sizes
 * (the study of Figs. 2-4 of the one-sided/overlap paper).
 *
 *   mpirun -np 2 weft_bench_latbw --json FILE [--max-lat BYTES] [--max-bw BYTES]
 *                                 [--iters N] [--window W]
 *
 * Rank 0 initiates, rank 1 is the target.  Sizes run from 8 B, doubling,
 * up to --max-lat (latency) and --max-bw (bandwidth).
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
 */
#include "common.h"
#include <weft.h>
#include <weft_ucx.h>

#include <arpa/inet.h>
#include <errno.h>
#include <mpi.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MIN_SIZE 8
#define MAX_POINTS 64
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
    long max_lat, max_bw, iters, window;
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
        double t0 = bench_now();
        for (int i = 0; i < calib; i++)
            OK(weft_put(ep, 1, seg, 0, buf, size));
        long n = count_for(bench_now() - t0, calib, LAT_BUDGET_S, o->iters);
        t0 = bench_now();
        for (long i = 0; i < n; i++)
            OK(weft_put(ep, 1, seg, 0, buf, size));
        add(lat, &nlat, "weft-put", size, 1e6 * (bench_now() - t0) / (double)n);

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

static void weft_flood(weft_ctx_t ctx, weft_ep_t ep, weft_seg_t seg, const char *src, size_t size,
                       const struct opts *o)
{
    long w = o->window;

    if (rank == 0) {
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
    double t0 = bench_now();

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

static void write_json(const struct opts *o, const char *transport, double peak,
                       const char *peak_kind)
{
    FILE *f = bench_json_open(NAME, o->json);

    bench_json_head(f, "latbw", nranks, transport);
    fprintf(f, "  \"window\": %ld,\n  \"iters\": %ld,\n  \"peak_MBps\": ", o->window, o->iters);
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
    fprintf(stderr, "usage: mpirun -np 2 weft_bench_latbw --json FILE [--max-lat BYTES] [--max-bw BYTES] "
                    "[--iters N] [--window W]\n"
                    "  sizes double from %d B; --max-lat default 65536, --max-bw default 4194304,\n"
                    "  --iters (most round trips or messages per point) default 20000, --window default 64\n",
            MIN_SIZE);
}

/* Both ranks parse the arguments; rank 0 alone says what is wrong. */
static int bad(const char *fmt, const char *a, const char *b)
{
    if (rank == 0) {
        fprintf(stderr, NAME ": ");
        fprintf(stderr, fmt, a, b);
        fputc('\n', stderr);
    }
    return -1;
}

static int parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){NULL, 65536, 4194304, 20000, 64};
    for (int i = 1; i < argc; i++) {
        long *dst;
        char *end;
        if (!strcmp(argv[i], "--json") && i + 1 < argc) {
            o->json = argv[++i];
            continue;
        }
        if (!strcmp(argv[i], "--max-lat")) dst = &o->max_lat;
        else if (!strcmp(argv[i], "--max-bw")) dst = &o->max_bw;
        else if (!strcmp(argv[i], "--iters")) dst = &o->iters;
        else if (!strcmp(argv[i], "--window")) dst = &o->window;
        else
            return bad("unknown or incomplete argument '%s'%s", argv[i], "");
        if (i + 1 >= argc)
            return bad("%s needs a value%s", argv[i], "");
        errno = 0;
        *dst = strtol(argv[++i], &end, 10);
        if (*end != '\0' || errno != 0 || *dst <= 0)
            return bad("%s: '%s' is not a positive integer", argv[i - 1], argv[i]);
    }
    if (o->json == NULL)
        return bad("--json FILE is required%s%s", "", "");
    /* MPI counts are ints, and the windows of the largest size must fit in memory */
    if (o->max_lat < MIN_SIZE || o->max_bw < MIN_SIZE || o->max_lat > (1L << 30) || o->max_bw > (1L << 30) ||
        o->window > 1024 || o->window * o->max_bw > (1L << 31))
        return bad("sizes must be within [8, 2^30] and --window at most 1024, with window x max-bw "
                   "at most 2 GiB%s%s", "", "");
    return 0;
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
    maxsize = (size_t)(o.max_lat > o.max_bw ? o.max_lat : o.max_bw);
    span = (size_t)o.window * (size_t)o.max_bw;
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

    for (size_t size = MIN_SIZE; size <= (size_t)o.max_lat; size *= 2) {
        weft_latency(ctx, ep, seg, buf, size, &o);
        mpi_latency(buf, size, &o);
    }
    for (size_t size = MIN_SIZE; size <= (size_t)o.max_bw; size *= 2) {
        weft_flood(ctx, ep, seg, buf, size, &o);
        mpi_flood(buf, sink, size, &o, reqs);
    }

    if (rank == 0)
        write_json(&o, transport, peak, over_tcp ? "tcp-stream" : "memcpy");
    free(buf);
    free(reqs);
    free(sink);
    bench_finish(NAME, ctx, seg);
    return 0;
}
