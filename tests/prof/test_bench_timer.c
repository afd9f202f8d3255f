/* The benchmarks' helpers for the timer and the cycles (bench/common.c):
 * bench_timer_corrected, a figure from which the library subtracted its
 * overhead once per timed region, given the overhead calibrated beside it
 * instead; bench_keep_speed and the medians over the cycles kept.  No MPI call. */
#include "common.h"
#include "../check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

    /* the cycles at one speed: a pass whose core ran at 22 ns a put, then
     * at 45 (the VM's two speeds) for its last three cycles */
    {
        double obs[7] = {22.0, 21.7, 22.4, 45.0, 21.9, 44.1, 46.3};
        double fig[7] = {4.0, 4.2, 4.1, 9.5, 4.3, 9.9, 9.0};
        char keep[7];

        /* the lower middle is 22.4: 21.7 to 22.4 and no 45 within 15 % */
        CHECK(bench_keep_speed(obs, 7, 0.15, keep) == 4);
        CHECK(keep[0] && keep[1] && keep[2] && !keep[3] && keep[4] && !keep[5] && !keep[6]);
        CHECK(near(bench_median_kept(fig, keep, 7), 4.15));
        /* NULL keeps all */
        CHECK(near(bench_median_kept(fig, NULL, 7), 4.3));
        /* a band of 0 keeps the lower middle cycle's speed alone */
        CHECK(bench_keep_speed(obs, 7, 0.0, keep) == 1 && keep[2]);
        /* an even count: the lower of the two middle ones (22.0 of 21.7,
         * 22.0, 22.4, 45.0) */
        CHECK(bench_keep_speed(obs, 4, 0.0, keep) == 1 && keep[0]);
        /* nothing kept, nothing to take a median of */
        CHECK(bench_keep_speed(obs, 0, 0.15, keep) == 0);
        memset(keep, 0, sizeof(keep));
        CHECK(bench_median_kept(fig, keep, 7) == 0);
    }
    printf("bench_keep_speed: ok\n");
    return 0;
}
