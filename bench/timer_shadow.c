/*
 * weft_bench_timer_shadow -- how much of a short call the serialising
 * timer does not see, with no weft and no UCX in the call.
 *
 *   weft_bench_timer_shadow [--rounds R] [--calls N]
 *
 * The call is libweft_bench_chain's bench_chain_put (a put's shape: the
 * PLT, a check, an indirect call that stores 8 bytes, a count on the way
 * back).  Four kinds of chunks of N calls alternate in one loop: the loop
 * of one call per iteration, of two calls per iteration, of one call timed
 * by weft's trace-point timer (lfence; rdtsc ... rdtscp; lfence, its
 * overhead taken off), and the timer's calibration of the moment
 * (weft__prof_empty_ticks).  Per round, medians over 32 chunks of each:
 * "running" is what a call adds to the running loop (two calls less
 * one), "timed" what the timer reads of it, "unseen" the difference.
 * docs/breakdown.md, "What a serialising timer does not see".
 */
#include "chain.h"
#include "prof/prof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNKS 32

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void fail(int rc)
{
    fprintf(stderr, "weft_bench_timer_shadow: bench_chain_put returned %d\n", rc);
    exit(2);
}

/* Ticks per iteration of n iterations of `calls` calls each (1 or 2),
 * or, with `timed`, the ticks per call its timer read, overhead_ticks
 * taken off each. */
static double chunk(struct bench_chain *c, long n, int calls, int timed, double overhead_ticks)
{
    static const uint64_t src = 42;
    double read = 0;
    uint64_t t0 = weft__prof_start();
    int rc;

    for (long k = 0; k < n; k++) {
        if (timed) {
            uint64_t s = weft__prof_start();

            rc = bench_chain_put(c, &src, (uint64_t)(k & 63) * 8);
            read += (double)(weft__prof_stop() - s) - overhead_ticks;
        } else {
            rc = bench_chain_put(c, &src, (uint64_t)(k & 63) * 8);
            if (rc == 0 && calls == 2)
                rc = bench_chain_put(c, &src, (uint64_t)((k + 32) & 63) * 8);
        }
        if (rc != 0)
            fail(rc);
    }
    return timed ? read / (double)n : (double)(weft__prof_stop() - t0) / (double)n;
}

static int parse_long(const char *s, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);

    if (end == s || *end || v < 1 || v > 1000000)
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    static char base[1024];
    struct bench_chain c;
    long rounds = 5, calls = 4096;
    double ghz, ovh_ns, one[CHUNKS], two[CHUNKS], timed[CHUNKS], cal[CHUNKS];

    for (int i = 1; i < argc; i++) {
        long *dst = strcmp(argv[i], "--rounds") == 0 ? &rounds
                    : strcmp(argv[i], "--calls") == 0 ? &calls : NULL;

        if (dst == NULL || i + 1 == argc || parse_long(argv[++i], dst) != 0) {
            fprintf(stderr, "usage: weft_bench_timer_shadow [--rounds R] [--calls N] "
                            "(R, N: 1 to 1000000)\n");
            return 2;
        }
    }
    if (weft__prof_select(1) != 0) {
        fprintf(stderr, "weft_bench_timer_shadow: no invariant TSC on this CPU\n");
        return 2;
    }
    weft__prof_select(0);
    weft__prof_timer(&ghz, &ovh_ns);
    bench_chain_init(&c, base, sizeof(base));
    printf("round  running ns  timed ns  unseen ns  timer overhead ns\n");
    for (long r = 0; r < rounds; r++) {
        double run, read;

        for (int k = 0; k < CHUNKS; k++) {
            cal[k] = weft__prof_empty_ticks();
            one[k] = chunk(&c, calls, 1, 0, 0);
            two[k] = chunk(&c, calls, 2, 0, 0);
            timed[k] = chunk(&c, calls, 1, 1, cal[k]);
        }
        run = (median(two, CHUNKS) - median(one, CHUNKS)) / ghz;
        read = median(timed, CHUNKS) / ghz;
        printf("%5ld  %10.2f  %8.2f  %9.2f  %17.2f\n", r, run, read, run - read,
               median(cal, CHUNKS) / ghz);
    }
    return 0;
}
