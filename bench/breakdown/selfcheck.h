/*
 * The breakdown's self-check (docs/breakdown.md, "Self-check"): before it
 * measures weft, a breakdown program measures a workload whose cost is
 * known, a chain of 24 dependent multiply-adds, with both of its methods,
 * and states each method's resolution on this machine.
 */
#ifndef WEFT_BENCH_SELFCHECK_H
#define WEFT_BENCH_SELFCHECK_H

#include <stdio.h>

struct selfcheck {
    double known_ns;       /* the chain's cost: 24 x the slope of long chains (64 and 8 steps) */
    double diff_ns, diff_halfwidth, diff_resolution;    /* loop with the call less loop with an empty call; the half-width is that of its error per cycle */
    double timer_ns, timer_halfwidth, timer_resolution; /* the call timed as a trace point is */
    double tick_ns;        /* one step of the timer */
    long cycles, calls;    /* cycles kept (at the median speed), calls per chunk */
};

/* Run the check: `cycles` cycles of one chunk of `calls` calls per kind. */
void selfcheck_run(long cycles, long calls, struct selfcheck *out);

/* "selfcheck": {...} as a JSON member, with sep after it. */
void selfcheck_json(FILE *f, const struct selfcheck *s, const char *sep);

#endif
