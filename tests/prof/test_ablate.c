/* The breakdown's differential arithmetic (bench/breakdown/ablate.c) on
 * chunk times made up here, not measured: medians, paired differences
 * that do not feel a speed change between cycles, combinations of loops
 * that add up to the observed loop, half-widths, the resolution.  No
 * timer, so it holds on any CPU. */
#include "ablate.h"
#include "../check.h"

#include <math.h>
#include <stdio.h>

#define N 101

static int near(double a, double b, double tol) { return fabs(a - b) <= tol; }

static void test_median(void)
{
    double odd[] = {5, 1, 3}, even[] = {4, 1, 3, 2};

    CHECK(ablate_median(odd, 3) == 3);
    CHECK(ablate_median(even, 4) == 2.5);
    CHECK(ablate_median(odd, 0) == 0);
    CHECK(isinf(ablate_median_halfwidth(odd, ABLATE_MIN_PAIRS - 1)));
}

/* Some cycles run at half the speed (a core at 1x and 2x): the loops'
 * times double, and so do their differences, but a cycle's difference is
 * taken at one speed.  The median cycle runs at 1x. */
static void test_paired_speed_change(void)
{
    double a[N], b[N];
    struct ablate_est e;

    for (int c = 0; c < N; c++) {
        double slow = c % 5 == 0 ? 2.0 : 1.0;

        a[c] = 30.0 * slow;   /* the loop with the component */
        b[c] = 20.0 * slow;   /* without it */
    }
    ablate_paired(a, b, NULL, N, &e);
    CHECK(e.n == N && e.ns == 10.0);
    /* a fifth of the cycles at the other speed: outside the quartiles */
    CHECK(e.res == 0);
    /* the same with the disturbed cycles left out by `use` */
    {
        char use[N];

        for (int c = 0; c < N; c++)
            use[c] = c % 5 != 0;
        ablate_paired(a, b, use, N, &e);
        CHECK(e.n == 80 && e.ns == 10.0 && e.res == 0);
    }
}

/* Noise of known spread: the half-width shrinks as 1/sqrt(n) and covers
 * the true difference. */
static void test_halfwidth(void)
{
    double a[N], b[N];
    struct ablate_est e, e4;
    unsigned x = 12345;

    for (int c = 0; c < N; c++) {
        x = x * 1103515245u + 12345u;
        a[c] = 12.0 + ((double)(x >> 16 & 0xff) / 255.0 - 0.5);  /* uniform, width 1 */
        b[c] = 10.0;
    }
    ablate_paired(a, b, NULL, N, &e);
    ablate_paired(a, b, NULL, 25, &e4);
    CHECK(e.res > 0 && e.res < 0.3);
    CHECK(e4.res > e.res);
    CHECK(near(e.ns, 2.0, e.res));
}

/* The injection's combination of five loops: each component from one
 * cycle's loops; together they give the observed loop back in every cycle,
 * whatever the cycle's speed. */
static void test_combo_telescopes(void)
{
    static double obs[N], ucx[N], uprog[N], wprog[N], misc[N];
    const double *hlp[] = {obs, ucx, wprog, uprog}, *post[] = {ucx, uprog};
    const double *tx[] = {wprog, uprog}, *prog[] = {uprog, misc}, *m[] = {misc};
    const double w4[] = {1, -1, -1, 1}, w2[] = {1, -1}, w1[] = {1};
    struct ablate_est e[5];
    double sum = 0;

    for (int c = 0; c < N; c++) {
        double s = 1.0 + 0.5 * (c % 7 == 0);

        misc[c] = 4 * s;
        uprog[c] = 5 * s;     /* LLP_prog 1 */
        wprog[c] = 5.5 * s;   /* HLP_tx_prog 0.5 */
        ucx[c] = 14 * s;      /* LLP_post 9 */
        obs[c] = 20 * s;      /* HLP_post 20 - 14 - 0.5 = 5.5 */
    }
    ablate_combo(hlp, w4, 4, NULL, N, &e[0]);
    ablate_combo(post, w2, 2, NULL, N, &e[1]);
    ablate_combo(tx, w2, 2, NULL, N, &e[2]);
    ablate_combo(prog, w2, 2, NULL, N, &e[3]);
    ablate_combo(m, w1, 1, NULL, N, &e[4]);
    CHECK(e[0].ns == 5.5 && e[1].ns == 9 && e[2].ns == 0.5 && e[3].ns == 1 && e[4].ns == 4);
    for (int i = 0; i < 5; i++)
        sum += e[i].ns;
    CHECK(sum == 20);
}

static void test_unpaired_sum_resolution(void)
{
    double a[] = {10, 11, 12, 13, 14}, b[] = {1, 2, 3, 4, 5};
    struct ablate_est e, x = {3, 0.3, 10}, y = {1, 0.4, 20};

    ablate_unpaired(a, 5, b, 5, &e);
    CHECK(e.ns == 9 && e.res > 0 && e.n == 5);
    /* the inputs are left as they were */
    CHECK(a[0] == 10 && b[4] == 5);
    e = ablate_sum(x, y);
    CHECK(e.ns == 4 && near(e.res, 0.5, 1e-12) && e.n == 10);
    e = ablate_sub(x, y);
    CHECK(e.ns == 2 && near(e.res, 0.5, 1e-12));
    /* resolution: the error on the known workload plus the half-width,
     * never below the floor, infinite when the half-width is */
    CHECK(near(ablate_resolution(28, 0.5, 31, 0.05), 3.5, 1e-12));
    CHECK(near(ablate_resolution(31, 0.01, 31, 0.4), 0.4, 1e-12));
    CHECK(isinf(ablate_resolution(31, INFINITY, 31, 0.4)));
}

/* ablate_cycles: the cycles kept whose loops were calm, or all the cycles
 * kept when too few were; every component from the same cycles. */
static void test_cycles_calm_and_kept(void)
{
    /* cycle 3 ran at another speed (a difference of 40 where the others
     * have 6), cycle 1 had a chunk of kind 1 during which a rank waited
     * for a core (a difference of 1) */
    double k0[] = {10, 11, 10, 60, 10, 12}, k1[] = {4, 10, 4, 20, 4, 6}, k2[] = {1, 1, 1, 1, 1, 1};
    const double *val[] = {k0, k1, k2};
    char c0[] = {1, 1, 1, 1, 1, 1}, c1[] = {1, 0, 1, 1, 1, 1}, c2[] = {0, 0, 0, 0, 0, 0};
    const char *calm[] = {c0, c1, c2};
    char keep[] = {1, 1, 1, 0, 1, 1}, use[6];
    const int loops[] = {0, 1};
    const struct ablate_def def[] = {{{0, 1, 0, 0}, {1, -1, 0, 0}}, {{1, 2, 0, 0}, {1, -1, 0, 0}}};
    struct ablate_est e[2];

    ablate_cycles(val, calm, keep, 6, loops, 2, def, 2, use, e);
    /* cycles 0, 2, 4, 5: differences 6, 6, 6, 6 and 3, 3, 3, 5 */
    CHECK(e[0].n == 4 && e[0].ns == 6);
    CHECK(e[1].n == 4 && e[1].ns == 3);
    CHECK(use[0] && !use[1] && use[2] && !use[3] && use[4] && use[5]);
    /* kind 2 never calm: too few cycles, so every cycle kept counts
     * (1 included: 6, 1, 6, 6, 6) */
    const int all[] = {0, 1, 2};
    ablate_cycles(val, calm, keep, 6, all, 3, def, 1, use, e);
    CHECK(e[0].n == 5 && e[0].ns == 6);
}

int main(void)
{
    test_median();
    test_paired_speed_change();
    test_halfwidth();
    test_combo_telescopes();
    test_unpaired_sum_resolution();
    test_cycles_calm_and_kept();
    printf("ablate: ok\n");
    return 0;
}
