/*
 * The differential (ablation) method of the breakdown (docs/breakdown.md,
 * "Differential measurement"): a component is the difference of the time
 * per operation of two long loops, one with the component and one
 * without, run in alternating chunks.  No region is timed, so the timer's
 * own cost cancels in the division by the chunk's operations.
 *
 * The arithmetic here is pure (no timer, no MPI), so that tests can feed it
 * chunk times of their own (tests/prof/test_ablate.c).
 */
#ifndef WEFT_BENCH_ABLATE_H
#define WEFT_BENCH_ABLATE_H

#include <stdint.h>

/* A difference and how well it is known: ns, the median of the paired
 * differences (or the difference of the medians), and res, the half-width
 * of its 95 % interval (INFINITY with fewer than ABLATE_MIN_PAIRS values). */
struct ablate_est {
    double ns, res;
    long n;
};

#define ABLATE_MIN_PAIRS 3

/* The median of v[0, n), which it sorts; 0 when n is 0. */
double ablate_median(double *v, long n);

/* The half-width of the 95 % interval of the median of v[0, n) (sorted):
 * 1.96 x 1.2533 sigma / sqrt(n), sigma estimated robustly as the
 * interquartile range / 1.349.  INFINITY when n < ABLATE_MIN_PAIRS. */
double ablate_median_halfwidth(const double *v, long n);

/* a - b per cycle over the cycles c < n with use[c] (every cycle when use
 * is NULL): chunks of the two variants ran side by side, so a cycle's
 * difference does not feel the machine's speed changing between cycles. */
void ablate_paired(const double *a, const double *b, const char *use, long n,
                   struct ablate_est *out);

/* sum over i < k of w[i] x v[i][c] per cycle, as ablate_paired: a
 * component that is a combination of several loops (a - b - c + d) is
 * estimated from each cycle's combination, not from separate medians. */
void ablate_combo(const double *const *v, const double *w, int k, const char *use, long n,
                  struct ablate_est *out);

/* A component as a combination of up to four kinds of chunk: the kinds
 * and their weights (a weight 0 leaves its kind out). */
struct ablate_def {
    int kind[4];
    double w[4];
};

/* Each of the ndef components def[] into out[], from the chunks' values
 * val[kind][c] of n cycles: over the cycles kept (keep[c]) whose chunks of
 * every kind in loops[0, nloops) were calm (calm[kind][c]), or, when fewer
 * than ABLATE_MIN_PAIRS were, over all the cycles kept.  use: room for n
 * flags. */
void ablate_cycles(const double *const *val, const char *const *calm, const char *keep, long n,
                   const int *loops, int nloops, const struct ablate_def *def, int ndef,
                   char *use, struct ablate_est *out);

/* median(a) - median(b) of two independent sets of samples; the
 * half-widths add in quadrature. */
void ablate_unpaired(const double *a, long na, const double *b, long nb, struct ablate_est *out);

/* The sum of two estimates (their half-widths in quadrature). */
struct ablate_est ablate_sum(struct ablate_est x, struct ablate_est y);
/* x - y, likewise. */
struct ablate_est ablate_sub(struct ablate_est x, struct ablate_est y);

/* The self-check's verdict on one method: its estimate of a workload of
 * known cost, and the method's resolution on this machine, the error on
 * that workload plus the estimate's half-width (never below floor_ns). */
double ablate_resolution(double estimate_ns, double halfwidth_ns, double known_ns, double floor_ns);

#endif
