/* The prof layer's timer: calibration against CLOCK_MONOTONIC, the timer
 * overhead subtracted from a short busy loop (checked against the same
 * loop's cost measured where the overhead is negligible, and against CPU
 * cycles when perf events exist), the selection parser, the watched words
 * of the fast paths, and the errors of the public calls.  No MPI. */
#define _GNU_SOURCE
#include "prof/prof.h"
#include <weft.h>
#include "../check.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SHORT_ITERS 40        /* a region of some 50-100 ns */
#define LONG_ITERS 200000     /* the same loop where the timer is negligible */

static volatile uint64_t sink;  /* keeps the loops' results alive */

/* A dependent chain the compiler cannot shorten. */
static __attribute__((noinline)) uint64_t spin(uint64_t x, long iters)
{
    for (long i = 0; i < iters; i++)
        x = x * 2862933555777941757u + 3037000493u;
    return x;
}

static double mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

static void test_public_errors_before_calibration(void)
{
    double g, o;
    weft_prof_stat_t s;

    CHECK(weft_prof_timer(&g, &o) == WEFT_ERR_NOT_INIT);
    CHECK(weft_prof_timer(NULL, &o) == WEFT_ERR_INVALID_ARG);
    CHECK(weft_prof_select(NULL) == WEFT_ERR_INVALID_ARG);
    CHECK(weft_prof_select("HLP_post,nonsense") == WEFT_ERR_CONFIG);
    CHECK(strstr(weft_last_error(), "'nonsense'") != NULL);
    /* the message lists every point */
    for (int i = 0; i < WEFT__PROF_NPOINTS; i++)
        CHECK(strstr(weft_last_error(), weft__prof_names[i]) != NULL);
    CHECK(strstr(weft_last_error(), "HLP_post_tail, ") != NULL);
    CHECK(weft_prof_stat("nonsense", &s) == WEFT_ERR_CONFIG);
    CHECK(weft_prof_stat(NULL, &s) == WEFT_ERR_INVALID_ARG);
    CHECK(weft_prof_stat("HLP_post", NULL) == WEFT_ERR_INVALID_ARG);
    CHECK(weft_prof_write(NULL, 0) == WEFT_ERR_INVALID_ARG);
    CHECK(weft_prof_write("/nonexistent-dir/profile.json", 0) == WEFT_ERR_INVALID_ARG);
    CHECK(strstr(weft_last_error(), "/nonexistent-dir/profile.json") != NULL);
}

static void test_parse(void)
{
    uint32_t m = 123;

    CHECK(weft__prof_parse("1", &m) == 0 && m == WEFT__PROF_ALL);
    CHECK(weft__prof_parse("ALL", &m) == 0 && m == WEFT__PROF_ALL);
    CHECK(weft__prof_parse("0", &m) == 0 && m == 0);
    CHECK(weft__prof_parse("", &m) == 0 && m == 0);
    CHECK(weft__prof_parse("hlp_post,LLP_prog", &m) == 0 &&
          m == ((1u << WEFT__PROF_HLP_POST) | (1u << WEFT__PROF_LLP_PROG)));
    m = 7;
    CHECK(weft__prof_parse("HLP_post,bogus", &m) == 1 + 9 && m == 7);
    CHECK(weft__prof_parse("HLP_post,", &m) == 1 + 9);
    CHECK(weft__prof_parse(",HLP_post", &m) == 1);
    CHECK(weft__prof_parse("HLP_postX", &m) == 1);
}

/* Watched words carry WEFT__PROF_DIVERT exactly while some point is
 * selected, keep their other bits, and are left alone once unwatched. */
static void test_watch(void)
{
    unsigned a = 1, b = 0;

    CHECK(weft_prof_select("0") == WEFT_OK);
    CHECK(weft__prof_watch(&a) == 0);
    CHECK(a == 1);
    CHECK(weft_prof_select("HLP_post") == WEFT_OK);
    CHECK(a == (1 | WEFT__PROF_DIVERT));
    CHECK(weft__prof_watch(&b) == 0);  /* watched while selected: set at once */
    CHECK(b == WEFT__PROF_DIVERT);
    CHECK(weft_prof_select("0") == WEFT_OK);
    CHECK(a == 1 && b == 0);
    weft__prof_unwatch(&a);
    CHECK(weft_prof_select("all") == WEFT_OK);
    CHECK(a == 1 && b == WEFT__PROF_DIVERT);
    weft__prof_unwatch(&b);
    CHECK(weft_prof_select("0") == WEFT_OK);
    CHECK(b == WEFT__PROF_DIVERT);
    weft__prof_unwatch(&b);  /* a word not watched: nothing happens */
}

/* TSC ticks of a timed region against CLOCK_MONOTONIC over 20 ms.  A
 * preemption between reading one clock and the other only adds error, so
 * the best of a few tries must agree (other jobs share this machine). */
static void test_calibration(double ghz)
{
    double best = INFINITY;

    CHECK(ghz > 0.1 && ghz < 10);
    for (int attempt = 0; attempt < 5 && best >= 0.02; attempt++) {
        double t0 = mono_ns(), t1;
        uint64_t c0 = weft__prof_start(), c1;

        while (mono_ns() - t0 < 2e7)
            ;
        c1 = weft__prof_stop();
        t1 = mono_ns();
        best = fmin(best, fabs((double)(c1 - c0) / ghz - (t1 - t0)) / (t1 - t0));
    }
    CHECK(best < 0.02);
}

static int perf_cycles_open(void)
{
    struct perf_event_attr a;

    memset(&a, 0, sizeof(a));
    a.type = PERF_TYPE_HARDWARE;
    a.size = sizeof(a);
    a.config = PERF_COUNT_HW_CPU_CYCLES;
    a.disabled = 1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

/* Cycles of spin(iters): the lowest of reps, minus the counter's own cost
 * (the same reading around nothing). */
static double perf_cycles(int fd, long iters, int reps)
{
    double best = INFINITY, empty = INFINITY;
    uint64_t v;

    for (int r = 0; r < reps; r++) {
        for (int pass = 0; pass < 2; pass++) {
            ioctl(fd, PERF_EVENT_IOC_RESET, 0);
            ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
            if (pass)
                sink = spin((uint64_t)r, iters);
            ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
            CHECK(read(fd, &v, sizeof(v)) == sizeof(v));
            if (pass && (double)v < best)
                best = (double)v;
            if (!pass && (double)v < empty)
                empty = (double)v;
        }
    }
    return best - empty;
}

int main(void)
{
    weft_prof_stat_t s;
    double ghz, ovh, long_ns, raw, corrected = 0, expected = 0;
    int fd;

    test_public_errors_before_calibration();
    test_parse();
    test_watch();
    CHECK(weft_prof_select("all") == WEFT_OK);
    CHECK(weft_prof_timer(&ghz, &ovh) == WEFT_OK);
    CHECK(ovh > 0 && ovh < 1000);
    test_calibration(ghz);

    /* Rounds of one long loop (where one timer pair is negligible: the
     * loop's true cost per iteration) and 100 short ones timed as a trace
     * point is, overhead removed.  A virtual machine's speed drifts, so
     * each round compares its own short loops with its own long one, and
     * the round closest to agreement stands for the timer (the others were
     * disturbed by other jobs). */
    double best_gap = INFINITY;
    /* up to 3 tries of 40 rounds: on a machine shared with other jobs a
     * whole try (0.2 s) can run disturbed */
    for (int round = 0; round < 120 && !(round >= 40 && best_gap < 0.5 * ovh); round++) {
        uint64_t c = weft__prof_start();
        sink = spin((uint64_t)round, LONG_ITERS);
        long_ns = (double)(weft__prof_stop() - c) / ghz;
        CHECK(weft_prof_reset() == WEFT_OK);
        for (int r = 0; r < 100; r++) {
            c = weft__prof_start();
            sink = spin((uint64_t)r, SHORT_ITERS);
            weft__prof_record(WEFT__PROF_DIRECT_COPY, weft__prof_stop() - c);
        }
        CHECK(weft_prof_stat("direct_copy", &s) == WEFT_OK);
        CHECK(s.count == 100);
        if (fabs(s.median_ns - long_ns * SHORT_ITERS / LONG_ITERS) < best_gap) {
            expected = long_ns * SHORT_ITERS / LONG_ITERS;
            corrected = s.median_ns;
            best_gap = fabs(corrected - expected);
        }
    }
    raw = corrected + ovh;
    printf("timer: %.4f GHz, overhead %.2f ns; short loop: expected %.2f ns, measured %.2f ns "
           "(%.2f ns before subtraction)\n", ghz, ovh, expected, corrected, raw);
    /* within half the overhead: without the subtraction this fails */
    CHECK(fabs(corrected - expected) < 0.5 * ovh);

    fd = perf_cycles_open();
    if (fd < 0) {
        printf("perf cycles: not available here (%s); checked against the calibrated loop only\n",
               strerror(errno));
    } else {
        double short_c = perf_cycles(fd, SHORT_ITERS, 2000), long_c = perf_cycles(fd, LONG_ITERS, 20);
        double per_iter = long_c / LONG_ITERS;
        printf("perf cycles: short loop %.1f, %.1f expected from the long loop\n", short_c,
               per_iter * SHORT_ITERS);
        /* cycles and TSC ticks scale alike: the short loop's share of the
         * long one agrees within 15 % */
        CHECK(fabs(short_c / (per_iter * SHORT_ITERS) - corrected / expected) < 0.15);
        close(fd);
    }
    printf("prof timer: ok\n");
    return 0;
}
