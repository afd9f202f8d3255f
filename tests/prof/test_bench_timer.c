/* The benchmarks' timer correction (bench/common.c, bench_timer_corrected):
 * a figure from which the library subtracted its overhead once per timed
 * region, given the overhead calibrated beside it instead.  No MPI call. */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                               \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                              \
        }                                                                         \
    } while (0)

static int near(double a, double b) { return fabs(a - b) < 1e-9; }

int main(void)
{
    /* a region of 2 ns timed with a timer that reads 15.2 ns empty, the
     * library's overhead 13.6 ns: it reads 3.6 ns, corrected 2 ns */
    double raw = 2.0 + 15.2, library = 13.6, now = 15.2;

    CHECK(near(bench_timer_corrected(raw - library, 1, library, now), 2.0));
    /* per put, a point of one region per put and one of one per batch of 16 */
    CHECK(near(bench_timer_corrected(1.0625 * raw - 1.0625 * library, 1.0625, library, now),
               1.0625 * 2.0));
    /* the machine slower at the library's calibration than now: the
     * correction adds */
    CHECK(near(bench_timer_corrected(5.0, 2, 16.0, 14.0), 9.0));
    /* no timed region (the observed loop): unchanged, whatever the readings */
    CHECK(near(bench_timer_corrected(14.1, 0, 13.6, 17.6), 14.1));
    /* the same overhead now as the library's: unchanged */
    CHECK(near(bench_timer_corrected(3.3, 1, 13.6, 13.6), 3.3));
    printf("bench_timer_corrected: ok\n");
    return 0;
}
