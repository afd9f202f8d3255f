/*
 * weft_bench_timer_shadow -- how much of a short call the serialising
 * timer does not see, with no weft and no UCX in the call.
 *
 *   weft_bench_timer_shadow [--rounds R] [--calls N]
 *
 * Two calls of libweft_bench_chain, each measured alike:
 *   put   bench_chain_put, a put's shape (the PLT, a check, an indirect
 *         call that stores 8 bytes, a count on the way back): short
 *         instructions, branches and calls, which the core's front end
 *         sets the pace of;
 *   spin  bench_chain_spin, the control: 24 dependent multiply-adds, each
 *         call's input the previous call's result, so that a call costs
 *         the running loop its latency, the very thing a timer reads.
 * Kinds of chunks of N calls alternate in one loop: the loop of one call
 * per iteration, of two calls per iteration, of one call timed by weft's
 * trace-point timer (lfence; rdtsc ... rdtscp; lfence, its overhead taken
 * off), of one call timed with a fenced start (lfence; rdtsc; lfence ...
 * rdtscp; lfence: nothing of the region runs before its timestamp), and
 * each timer's calibration of the moment (weft__prof_empty_ticks, and the
 * same for the fenced start).  Per round and call, medians over 32 chunks
 * of each: "running" is what a call adds to the running loop (two calls
 * less one), "timed" what weft's timer reads of it and "unseen" the
 * difference, "fenced" what the fenced start reads and "unseen" again.
 * docs/breakdown.md, "What a serialising timer does not see".
 */
#include "chain.h"
#include "common.h"
#include "prof/prof.h"

#include <stdio.h>
#include <stdlib.h>

#define CHUNKS 32

static void fail(int rc)
{
    fprintf(stderr, "weft_bench_timer_shadow: bench_chain_put returned %d\n", rc);
    exit(2);
}

/* The fenced start: weft__prof_start with an lfence after the rdtsc, so
 * that the region's instructions wait for the timestamp. */
static inline uint64_t fenced_start(void)
{
#if defined(__x86_64__) || defined(__i386__)
    uint32_t lo, hi;

    __asm__ __volatile__("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi)::"memory");
    return ((uint64_t)hi << 32) | lo;
#else
    return weft__prof_start();
#endif
}

/* An empty region's reading with the fenced start: the interquartile mean
 * of 1024, as weft__prof_empty_ticks does for weft's timer. */
static double fenced_empty_ticks(void)
{
    double t[1024];

    for (int i = 0; i < 1024; i++) {
        uint64_t s = fenced_start();

        t[i] = (double)(weft__prof_stop() - s);
    }
    return bench_iq_mean(t, 1024);
}

enum { PUT, SPIN, CALLS };
enum { UNTIMED, TIMED, FENCED };
static const char *const call_name[CALLS] = {"put", "spin"};

static volatile uint64_t sink;

/* Ticks per iteration of n iterations of `calls` calls each (1 or 2) of
 * `which`, or, when `timed` (TIMED: weft's timer, FENCED: the fenced
 * start), the ticks per call the timer read, overhead_ticks taken off
 * each. */
static double chunk(struct bench_chain *c, int which, long n, int calls, int timed,
                    double overhead_ticks)
{
    static const uint64_t src = 42;
    double read = 0;
    uint64_t x = sink, t0 = weft__prof_start();
    int rc = 0;

    for (long k = 0; k < n; k++) {
        uint64_t s = timed == TIMED ? weft__prof_start() : timed == FENCED ? fenced_start() : 0;

        if (which == SPIN)
            x = bench_chain_spin(x);
        else
            rc = bench_chain_put(c, &src, (uint64_t)(k & 63) * 8);
        if (timed) {
            read += (double)(weft__prof_stop() - s) - overhead_ticks;
        } else if (calls == 2) {
            if (which == SPIN)
                x = bench_chain_spin(x);
            else if (rc == 0)
                rc = bench_chain_put(c, &src, (uint64_t)((k + 32) & 63) * 8);
        }
        if (rc != 0)
            fail(rc);
    }
    sink = x;
    return timed ? read / (double)n : (double)(weft__prof_stop() - t0) / (double)n;
}

int main(int argc, char **argv)
{
    static char base[1024];
    struct bench_chain c;
    long rounds = 5, calls = 4096;
    double ghz, ovh_ns;
    const struct bench_opt opts[] = {
        {"--rounds", .value = &rounds}, {"--calls", .value = &calls}, {NULL},
    };

    if (bench_parse_opts(argc, argv, opts) != 0 || rounds > 1000000 || calls > 1000000) {
        fprintf(stderr, "usage: weft_bench_timer_shadow [--rounds R] [--calls N] "
                        "(R, N: 1 to 1000000)\n");
        return 2;
    }
    if (weft__prof_select(1) != 0) {
        fprintf(stderr, "weft_bench_timer_shadow: no invariant TSC on this CPU\n");
        return 2;
    }
    weft__prof_select(0);
    weft__prof_timer(&ghz, &ovh_ns);
    bench_chain_init(&c, base, sizeof(base));
    printf("round  call  running ns  timed ns  unseen ns  fenced ns  unseen ns  "
           "overhead ns  fenced overhead ns\n");
    for (long r = 0; r < rounds; r++) {
        double one[CALLS][CHUNKS], two[CALLS][CHUNKS], timed[CALLS][CHUNKS];
        double fenced[CALLS][CHUNKS], cal[CHUNKS], fcal[CHUNKS];

        for (int k = 0; k < CHUNKS; k++) {
            cal[k] = weft__prof_empty_ticks();
            fcal[k] = fenced_empty_ticks();
            for (int w = 0; w < CALLS; w++) {
                one[w][k] = chunk(&c, w, calls, 1, UNTIMED, 0);
                two[w][k] = chunk(&c, w, calls, 2, UNTIMED, 0);
                timed[w][k] = chunk(&c, w, calls, 1, TIMED, cal[k]);
                fenced[w][k] = chunk(&c, w, calls, 1, FENCED, fcal[k]);
            }
        }
        for (int w = 0; w < CALLS; w++) {
            double run = (bench_median(two[w], CHUNKS) - bench_median(one[w], CHUNKS)) / ghz;
            double read = bench_median(timed[w], CHUNKS) / ghz;
            double fread = bench_median(fenced[w], CHUNKS) / ghz;

            printf("%5ld  %4s  %10.2f  %8.2f  %9.2f  %9.2f  %9.2f  %11.2f  %18.2f\n", r,
                   call_name[w], run, read, run - read, fread, run - fread,
                   bench_median(cal, CHUNKS) / ghz, bench_median(fcal, CHUNKS) / ghz);
        }
    }
    return 0;
}
