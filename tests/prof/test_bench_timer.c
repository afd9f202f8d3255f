/* The benchmarks' helpers for the timer and the cycles (bench/common.c):
 * bench_timer_corrected, a figure from which the library subtracted its
 * overhead once per timed region, given the overhead calibrated beside it
 * instead; bench_keep_speed and the medians over the cycles kept, with
 * and without the chunks in which a rank waited for a core (calm), and
 * the reader of /proc/PID/schedstat that tells them; the option parser (bench_parse_opts, the breakdowns' bench_breakdown_parse)
 * and the breakdowns' warm-up length.  No MPI call. */
#include "common.h"
#include "../check.h"

#include <limits.h>
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
        CHECK(bench_keep_speed(obs, NULL, 7, 0.15, keep) == 4);
        CHECK(keep[0] && keep[1] && keep[2] && !keep[3] && keep[4] && !keep[5] && !keep[6]);
        CHECK(near(bench_median_kept(fig, keep, 7), 4.15));
        /* NULL keeps all */
        CHECK(near(bench_median_kept(fig, NULL, 7), 4.3));
        /* a band of 0 keeps the lower middle cycle's speed alone */
        CHECK(bench_keep_speed(obs, NULL, 7, 0.0, keep) == 1 && keep[2]);
        /* an even count: the lower of the two middle ones (22.0 of 21.7,
         * 22.0, 22.4, 45.0) */
        CHECK(bench_keep_speed(obs, NULL, 4, 0.0, keep) == 1 && keep[0]);
        /* nothing kept, nothing to take a median of */
        CHECK(bench_keep_speed(obs, NULL, 0, 0.15, keep) == 0);
        memset(keep, 0, sizeof(keep));
        CHECK(bench_median_kept(fig, keep, 7) == 0);
    }
    printf("bench_keep_speed: ok\n");

    /* calm chunks: a TCP pass whose sender stalled, 5-100x, in the chunks
     * in which its peer waited for a core (calm 0) */
    {
        double obs[9] = {800, 9000, 790, 60000, 810, 4000, 805, 4300, 8000};
        double fig[9] = {700, 5000, 690, 700, 710, 3000, 9000, 20000, 6000};
        char ocalm[9] = {1, 0, 1, 0, 1, 0, 1, 0, 0}, fcalm[9] = {1, 1, 1, 0, 1, 0, 0, 0, 0};
        char none[9] = {0}, keep[9];

        /* without the calm mask the median observed chunk is a stalled one
         * (4000 of 790 ... 60000), and the fast cycles are left out */
        CHECK(bench_keep_speed(obs, NULL, 9, 0.15, keep) == 2 && keep[5] && keep[7]);
        /* with it, the speed of the calm ones (800) and only calm cycles */
        CHECK(bench_keep_speed(obs, ocalm, 9, 0.15, keep) == 4);
        CHECK(keep[0] && !keep[1] && keep[2] && !keep[3] && keep[4] && !keep[5] && keep[6] &&
              !keep[7] && !keep[8]);
        /* a kind's figure from its calm chunks of the cycles kept: 690,
         * 700, 710 (cycle 6 is kept, but its chunk of this kind was not
         * calm: 9000 is left out) */
        CHECK(near(bench_median_calm(fig, keep, fcalm, 9), 700));
        /* no calm chunk of the kind in the cycles kept: its calm chunks of
         * the other cycles (5000 and 700 of cycles 1 and 3) */
        {
            char elsewhere[9] = {0, 1, 0, 1, 0, 0, 0, 0, 0};

            CHECK(near(bench_median_calm(fig, keep, elsewhere, 9), 2850));
        }
        /* no calm chunk of the kind at all: the cycles kept */
        CHECK(near(bench_median_calm(fig, keep, none, 9), 705));
        /* neither mask: every chunk */
        CHECK(near(bench_median_calm(fig, NULL, NULL, 9), 3000));
        /* no calm observed chunk at all: the speed of all of them */
        CHECK(bench_keep_speed(obs, none, 9, 0.15, keep) == 2 && keep[5] && keep[7]);
    }
    /* enough calm chunks to end a pass: want of every kind of [first,
     * last), the kinds' rows stride apart */
    {
        char calm[3][6] = {{1, 1, 0, 1, 0, 0}, {0, 1, 1, 0, 0, 0}, {0, 0, 0, 0, 0, 0}};

        CHECK(bench_calm_enough(&calm[0][0], 6, 0, 2, 3, 2));
        CHECK(!bench_calm_enough(&calm[0][0], 6, 0, 2, 2, 2));   /* kind 1: one in 2 cycles */
        CHECK(!bench_calm_enough(&calm[0][0], 6, 0, 3, 6, 1));   /* kind 2: none */
        CHECK(bench_calm_enough(&calm[0][0], 6, 0, 3, 6, 0));
        CHECK(bench_calm_enough(&calm[0][0], 6, 1, 2, 6, 2));
        CHECK(!bench_calm_enough(&calm[0][0], 6, 0, 1, 6, 4));
    }
    printf("bench_median_calm: ok\n");

    /* /proc/PID/schedstat: the second of three numbers; anything else is
     * refused and leaves the value */
    {
        unsigned long long ns = 7;
        const char *good[] = {"165119339 118769139 359\n", "0 85712 1", "1 2 3\n"};
        const unsigned long long want[] = {118769139ULL, 85712ULL, 2ULL};
        const char *bad[] = {"", "\n", "1 2\n", "1 2 3 4\n", "1 x 3\n", "-1 2 3\n",
                             " 1 2 3\n", "1 2 3\n\n", "1\t2\t3\n", "1 2 3x",
                             "1 99999999999999999999 3\n", "1 18446744073709551616 3\n"};

        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
            CHECK(bench_schedstat_wait(good[i], strlen(good[i]), &ns) == 0);
            CHECK(ns == want[i]);
        }
        /* the largest value a field can hold */
        CHECK(bench_schedstat_wait("0 18446744073709551615 0", 24, &ns) == 0 && ns == ULLONG_MAX);
        ns = 7;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
            CHECK(bench_schedstat_wait(bad[i], strlen(bad[i]), &ns) == -1 && ns == 7);
        /* a length short of the text: only what is inside counts */
        CHECK(bench_schedstat_wait("1 2 3 4", 5, &ns) == 0 && ns == 2);
        CHECK(bench_schedstat_wait("1 2 3", 3, &ns) == -1);
    }
    printf("bench_schedstat_wait: ok\n");

    /* options: a value, a word, a flag; what is not given keeps its value */
    {
        long n = 7, m = 9;
        const char *file = NULL;
        int flag = 0;
        const struct bench_opt opts[] = {
            {"--n", .value = &n}, {"--m", .value = &m}, {"--json", .text = &file},
            {"--quiet", .flag = &flag}, {NULL},
        };
        char *good[] = {"prog", "--n", "12", "--json", "out.json", "--quiet"};

        CHECK(bench_parse_opts(6, good, opts) == 0);
        CHECK(n == 12 && m == 9 && file && strcmp(file, "out.json") == 0 && flag == 1);
        char *none[] = {"prog"};
        CHECK(bench_parse_opts(1, none, opts) == 0 && n == 12);
        /* unknown option, missing value, not a positive integer, trailing
         * characters, a word missing */
        char *bad[][3] = {{"prog", "--x", "1"}, {"prog", "--m", "0"}, {"prog", "--m", "-3"},
                          {"prog", "--m", "4k"}, {"prog", "--m", ""},
                          {"prog", "--m", "99999999999999999999"}};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
            CHECK(bench_parse_opts(3, bad[i], opts) == -1);
        char *lone_value[] = {"prog", "--m"}, *lone_word[] = {"prog", "--json"};
        CHECK(bench_parse_opts(2, lone_value, opts) == -1);
        CHECK(strstr(bench_opts_error(), "'--m' needs a value") != NULL);
        CHECK(bench_parse_opts(2, lone_word, opts) == -1);
        CHECK(m == 9);
        /* the reason names the option and the value */
        CHECK(bench_parse_opts(3, bad[0], opts) == -1);
        CHECK(strstr(bench_opts_error(), "unknown or ambiguous option '--x'") != NULL);
        CHECK(bench_parse_opts(3, bad[3], opts) == -1);
        CHECK(strstr(bench_opts_error(), "--m '4k': not a positive integer") != NULL);
        /* a refused line stores nothing, even the options before the bad one */
        char *half[] = {"prog", "--n", "5", "--quiet", "--m", "0"};
        flag = 0;
        CHECK(bench_parse_opts(6, half, opts) == -1 && n == 12 && flag == 0);
        /* --name=value, an unambiguous prefix, a word that is no option */
        char *eq[] = {"prog", "--n=21", "--qu", "--js=x.json"};
        CHECK(bench_parse_opts(4, eq, opts) == 0 && n == 21 && flag == 1 &&
              strcmp(file, "x.json") == 0);
        CHECK(strcmp(bench_opts_error(), "") == 0);
        char *stray[] = {"prog", "--n", "3", "extra"};
        CHECK(bench_parse_opts(4, stray, opts) == -1 && n == 21);
        CHECK(strstr(bench_opts_error(), "unexpected argument 'extra'") != NULL);
        /* a flag given a value */
        char *flag_value[] = {"prog", "--quiet=1"};
        CHECK(bench_parse_opts(2, flag_value, opts) == -1);
    }
    /* one-letter options beside long ones */
    {
        const char *range = NULL;
        long rounds = 1;
        int v = 0;
        const struct bench_opt opts[] = {
            {"-m", .text = &range}, {"--rounds", .value = &rounds}, {"-v", .flag = &v}, {NULL},
        };
        char *spaced[] = {"prog", "-m", "8:64", "--rounds", "3", "-v"};
        char *joined[] = {"prog", "-m16:32"};
        char *lone[] = {"prog", "-m"}, *other[] = {"prog", "-x"};

        CHECK(bench_parse_opts(6, spaced, opts) == 0 && strcmp(range, "8:64") == 0 &&
              rounds == 3 && v == 1);
        CHECK(bench_parse_opts(2, joined, opts) == 0 && strcmp(range, "16:32") == 0);
        CHECK(bench_parse_opts(2, lone, opts) == -1);
        CHECK(strstr(bench_opts_error(), "'-m' needs a value") != NULL);
        CHECK(bench_parse_opts(2, other, opts) == -1);
        CHECK(strstr(bench_opts_error(), "unknown option '-x'") != NULL);
        char *cluster[] = {"prog", "-vq"};
        CHECK(bench_parse_opts(2, cluster, opts) == -1);
        CHECK(strstr(bench_opts_error(), "unknown option '-q'") != NULL);
        /* a table entry that is neither --name nor -x */
        const struct bench_opt wrong[] = {{"rounds", .value = &rounds}, {NULL}};
        CHECK(bench_parse_opts(1, lone, wrong) == -1);
    }
    /* positive numbers */
    {
        double secs = 0.5;
        const struct bench_opt opts[] = {{"--secs", .real = &secs}, {NULL}};
        char *good[] = {"prog", "--secs", "1.5e-3"};
        char *bad[][3] = {{"prog", "--secs", "0"}, {"prog", "--secs", "-1"},
                          {"prog", "--secs", "nan"}, {"prog", "--secs", "inf"},
                          {"prog", "--secs", "2s"}, {"prog", "--secs", ""}};

        CHECK(bench_parse_opts(3, good, opts) == 0 && secs == 1.5e-3);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
            CHECK(bench_parse_opts(3, bad[i], opts) == -1 && secs == 1.5e-3);
        CHECK(strstr(bench_opts_error(), "not a positive number") != NULL);
    }
    /* the breakdowns' options: defaults, limits, and the warm-up of at
     * least one batch */
    {
        struct bench_breakdown_opts o;
        char *defaults[] = {"prog"};
        char *tiny[] = {"prog", "--iters", "16", "--batch", "16"};
        char *batch_over[] = {"prog", "--iters", "8", "--batch", "16"};
        char *rounds_over[] = {"prog", "--rounds", "1000000"};
        char *lat_over[] = {"prog", "--lat-iters", "101"};

        CHECK(bench_breakdown_parse(1, defaults, 100000, &o) == 0);
        CHECK(o.iters == 200000 && o.lat_iters == 20000 && o.batch == 16 && o.rounds == 5 &&
              o.json == NULL);
        CHECK(bench_breakdown_warmup(&o) == 50001);
        CHECK(bench_breakdown_parse(5, tiny, 100000, &o) == 0);
        CHECK(bench_breakdown_warmup(&o) == 16);
        CHECK(bench_breakdown_parse(5, batch_over, 100000, &o) == -1);
        CHECK(bench_breakdown_parse(3, rounds_over, 100000, &o) == -1);
        CHECK(bench_breakdown_parse(3, lat_over, 100, &o) == -1);
    }
    printf("bench_parse_opts: ok\n");
    return 0;
}
