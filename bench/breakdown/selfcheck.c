/* The self-check on a workload of known cost (selfcheck.h). */
#include "selfcheck.h"
#include "ablate.h"
#include "chain.h"
#include "prof/prof.h"

#include <math.h>
#include <stdlib.h>

#define MAX_CYCLES 1024  /* cycles of one chunk of every kind */
#define LONG_STEPS 64
#define SHORT_STEPS 8
#define WORK_STEPS 24

enum { K_LONG, K_SHORT, K_WORK, K_EMPTY, K_TIMED, K_CAL, K_N };

static volatile uint64_t sink;

/* ns per call of one chunk of `kind` (K_TIMED: what the timer read per
 * call, its overhead not taken off; K_CAL: one empty region's reading). */
static double chunk(int kind, long calls, double ghz)
{
    static const int steps[K_N] = {LONG_STEPS, SHORT_STEPS, WORK_STEPS, 0, WORK_STEPS, 0};
    uint64_t x = sink, t0, read = 0;

    if (kind == K_CAL)
        return weft__prof_empty_ticks() / ghz;
    t0 = weft__prof_start();
    for (long i = 0; i < calls; i++) {
        if (kind == K_TIMED) {
            uint64_t s = weft__prof_start();

            x = bench_chain_steps(x, steps[kind]);
            read += weft__prof_stop() - s;
        } else {
            /* each call's input is the previous one's result: a call costs
             * the loop its latency */
            x = bench_chain_steps(x, steps[kind]);
        }
    }
    t0 = weft__prof_stop() - t0;
    sink = x;
    return (double)(kind == K_TIMED ? read : t0) / ghz / (double)calls;
}

static void run_once(long cycles, long calls, struct selfcheck *out)
{
    static double v[K_N][MAX_CYCLES], known[MAX_CYCLES], ediff[MAX_CYCLES], etimer[MAX_CYCLES];
    static double speed[MAX_CYCLES];
    static char keep[MAX_CYCLES];
    double ghz, ovh, mid;
    long n = 0;

    if (cycles > MAX_CYCLES)
        cycles = MAX_CYCLES;
    weft__prof_timer(&ghz, &ovh);
    for (long c = 0; c < cycles; c++)
        for (int j = 0; j < K_N; j++) {
            /* rotate the order, so that no kind always follows another */
            int kind = (int)((j + c) % K_N);

            v[kind][c] = chunk(kind, calls, ghz);
        }
    /* Per cycle: the known cost, the chain's slope between long chains
     * (where the call and the loop around it cancel) times its steps, and
     * each method's error on it.  Only the cycles at the median speed
     * count (the long chain's chunk within 15 % of its median): the
     * machine's speed may change between cycles, and a cycle's figures
     * are all of one speed. */
    for (long c = 0; c < cycles; c++)
        speed[c] = v[K_LONG][c];
    mid = ablate_median(speed, cycles);
    for (long c = 0; c < cycles; c++) {
        keep[c] = v[K_LONG][c] > 0.85 * mid && v[K_LONG][c] < 1.15 * mid;
        if (!keep[c])
            continue;
        known[n] = (v[K_LONG][c] - v[K_SHORT][c]) * WORK_STEPS / (LONG_STEPS - SHORT_STEPS);
        ediff[n] = v[K_WORK][c] - v[K_EMPTY][c] - known[n];
        etimer[n] = v[K_TIMED][c] - v[K_CAL][c] - known[n];
        n++;
    }
    {
        struct ablate_est e;
        static double w[MAX_CYCLES];

        out->known_ns = ablate_median(known, n);
        ablate_paired(v[K_WORK], v[K_EMPTY], keep, cycles, &e);
        out->diff_ns = e.ns;
        ablate_paired(v[K_TIMED], v[K_CAL], keep, cycles, &e);
        out->timer_ns = e.ns;
        for (long i = 0; i < n; i++)
            w[i] = ediff[i];
        out->diff_halfwidth = ablate_median_halfwidth((ablate_median(w, n), w), n);
        out->diff_resolution = ablate_resolution(ablate_median(ediff, n), out->diff_halfwidth, 0,
                                                 0.05);
        for (long i = 0; i < n; i++)
            w[i] = etimer[i];
        out->timer_halfwidth = ablate_median_halfwidth((ablate_median(w, n), w), n);
        out->timer_resolution = ablate_resolution(ablate_median(etimer, n), out->timer_halfwidth, 0,
                                                  1.0 / ghz);
    }
    out->tick_ns = 1.0 / ghz;
    out->cycles = n;
    out->calls = calls;
}

void selfcheck_run(long cycles, long calls, struct selfcheck *out)
{
    struct selfcheck s;

    /* A check during which other work took the core reads wide: up to 3
     * tries, the narrowest stands (as the library's timer calibration
     * keeps its quietest loop), and a quiet one ends the tries. */
    run_once(cycles, calls, out);
    for (int i = 1; i < 3 && !(out->diff_halfwidth + out->timer_halfwidth < 0.1 * out->known_ns); i++) {
        run_once(cycles, calls, &s);
        if (s.diff_halfwidth + s.timer_halfwidth < out->diff_halfwidth + out->timer_halfwidth)
            *out = s;
    }
}

static void num(FILE *f, const char *name, double v, const char *sep)
{
    if (isfinite(v))
        fprintf(f, "\"%s\": %.3f%s", name, v, sep);
    else
        fprintf(f, "\"%s\": null%s", name, sep);
}

void selfcheck_json(FILE *f, const struct selfcheck *s, const char *sep)
{
    fprintf(f, "\"selfcheck\": {\"workload\": \"%d dependent multiply-adds\", \"cycles\": %ld, "
               "\"calls\": %ld, ", WORK_STEPS, s->cycles, s->calls);
    num(f, "known_ns", s->known_ns, ", ");
    num(f, "differential_ns", s->diff_ns, ", ");
    num(f, "differential_halfwidth_ns", s->diff_halfwidth, ", ");
    num(f, "timer_ns", s->timer_ns, ", ");
    num(f, "timer_halfwidth_ns", s->timer_halfwidth, ", ");
    num(f, "tick_ns", s->tick_ns, ", ");
    fprintf(f, "\"resolution_ns\": {");
    num(f, "differential", s->diff_resolution, ", ");
    num(f, "timer", s->timer_resolution, "}}");
    fputs(sep, f);
}
