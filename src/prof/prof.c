/* Trace points: per-thread tables, the timer's calibration, statistics
 * and their JSON form (prof.h). */
#define _GNU_SOURCE
#include "prof/prof.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#define RESERVOIR 1024           /* samples kept per point and thread */
#define CAL_LOOPS 64             /* overhead: minimum over this many loops */
#define CAL_REGIONS 1024         /* ... of this many empty regions each */
#define CAL_CLOCK_NS 50000000L   /* TSC against CLOCK_MONOTONIC over 50 ms */

const char *const weft__prof_names[WEFT__PROF_NPOINTS] = {
    "HLP_post", "LLP_post", "LLP_prog", "LLP_poll",
    "HLP_tx_prog", "HLP_rx_prog", "busy_post", "direct_copy", "HLP_post_tail",
    "HLP_prog", "signal_add", "signal_poll",
};

uint32_t weft__prof_mask;

#if WEFT__PROF_TRACE
/* The watched words (weft__prof_watch), under watch_lock. */
static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned **watched;
static size_t nwatched, watch_cap;
#endif

struct pstat {
    uint64_t count, total, min;
    uint64_t res[RESERVOIR];
};

/* One per thread that recorded, kept (with its samples) after it exits. */
struct table {
    struct table *next;
    unsigned      busy;     /* depth of busy_post regions */
    uint64_t      rng;      /* xorshift state of the reservoir */
    struct pstat  p[WEFT__PROF_NPOINTS];
};

static pthread_mutex_t tables_lock = PTHREAD_MUTEX_INITIALIZER;
static struct table *tables;
static __thread struct table *mine;

static double tsc_ghz, overhead_ticks;

static struct table *my_table(void)
{
    if (mine == NULL) {
        struct table *t = calloc(1, sizeof(*t));

        if (t == NULL)
            return NULL;
        t->rng = 0x9e3779b97f4a7c15u ^ (uint64_t)(uintptr_t)t;
        pthread_mutex_lock(&tables_lock);
        t->next = tables;
        tables = t;
        pthread_mutex_unlock(&tables_lock);
        mine = t;
    }
    return mine;
}

static void add(struct table *t, int point, uint64_t ticks)
{
    struct pstat *s = &t->p[point];
    uint64_t n = ++s->count;

    s->total += ticks;
    if (n == 1 || ticks < s->min)
        s->min = ticks;
    if (n <= RESERVOIR) {
        s->res[n - 1] = ticks;
    } else {
        /* reservoir sampling: the n-th sample replaces a kept one with
         * probability RESERVOIR / n */
        t->rng ^= t->rng << 13;
        t->rng ^= t->rng >> 7;
        t->rng ^= t->rng << 17;
        uint64_t j = t->rng % n;
        if (j < RESERVOIR)
            s->res[j] = ticks;
    }
}

void weft__prof_record(int point, uint64_t ticks)
{
    struct table *t = my_table();

    if (t != NULL && t->busy == 0)
        add(t, point, ticks);
}

uint64_t weft__prof_busy_begin(void)
{
    struct table *t = my_table();

    if (t != NULL)
        t->busy++;
    return weft__prof_start();
}

void weft__prof_busy_end(uint64_t start)
{
    uint64_t ticks = weft__prof_stop() - start;
    struct table *t = my_table();

    if (t == NULL)
        return;
    t->busy--;
    if (t->busy == 0 && (weft__prof_mask & (1u << WEFT__PROF_BUSY_POST)))
        add(t, WEFT__PROF_BUSY_POST, ticks);
}

int weft__prof_parse(const char *s, uint32_t *mask)
{
    static const char *const all[] = {"1", "all", "on", "yes", "true"};
    static const char *const none[] = {"0", "off", "no", "false", ""};
    uint32_t m = 0;
    const char *p = s;

    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        if (strcasecmp(s, all[i]) == 0) {
            *mask = WEFT__PROF_ALL;
            return 0;
        }
        if (strcasecmp(s, none[i]) == 0) {
            *mask = 0;
            return 0;
        }
    }
    for (;;) {
        size_t len = strcspn(p, ",");
        int found = -1;

        for (int i = 0; i < WEFT__PROF_NPOINTS; i++)
            if (strlen(weft__prof_names[i]) == len && strncasecmp(p, weft__prof_names[i], len) == 0)
                found = i;
        if (found < 0)
            return 1 + (int)(p - s);
        m |= 1u << found;
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
    *mask = m;
    return 0;
}

static int invariant_tsc(void)
{
#if defined(__x86_64__)
    unsigned a, b, c, d;

    /* CPUID 0x80000007, EDX bit 8: the TSC runs at a constant rate in
     * every power state */
    return __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8));
#else
    return 1;
#endif
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static double mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

double weft__prof_empty_ticks(void)
{
    uint64_t ticks[CAL_REGIONS];  /* 8 KiB of stack, not of every thread's TLS */
    double sum = 0;

    for (int i = 0; i < CAL_REGIONS; i++) {
        uint64_t s = weft__prof_start();
        ticks[i] = weft__prof_stop() - s;
    }
    qsort(ticks, CAL_REGIONS, sizeof(ticks[0]), cmp_u64);
    /* the middle half: the median's robustness, with a resolution finer
     * than the counter's step (2 ticks on some machines), since samples
     * are added up as totals */
    for (int i = CAL_REGIONS / 4; i < CAL_REGIONS - CAL_REGIONS / 4; i++)
        sum += (double)ticks[i];
    return sum / (double)(CAL_REGIONS - 2 * (CAL_REGIONS / 4));
}

static void calibrate(void)
{
    struct timespec pause = {.tv_sec = 0, .tv_nsec = CAL_CLOCK_NS};
    double t0, t1, best = INFINITY;
    uint64_t c0, c1;

    /* the TSC against the clock, each read bracketed by the other's */
    c0 = weft__prof_start();
    t0 = mono_ns();
    nanosleep(&pause, NULL);
    t1 = mono_ns();
    c1 = weft__prof_stop();
    tsc_ghz = (double)(c1 - c0) / (t1 - t0);

    /* an empty region's cost: minimum over loops (a loop that ran while
     * the machine was busy is discarded) */
    for (int r = 0; r < CAL_LOOPS; r++) {
        double t = weft__prof_empty_ticks();

        if (t < best)
            best = t;
    }
    overhead_ticks = best;
}

int weft__prof_select(uint32_t mask)
{
    if (mask != 0 && tsc_ghz == 0) {
        if (!invariant_tsc())
            return -1;
        calibrate();
    }
    __atomic_store_n(&weft__prof_mask, mask, __ATOMIC_RELAXED);
#if WEFT__PROF_TRACE
    pthread_mutex_lock(&watch_lock);
    for (size_t i = 0; i < nwatched; i++)
        if (mask != 0)
            __atomic_fetch_or(watched[i], WEFT__PROF_DIVERT, __ATOMIC_RELAXED);
        else
            __atomic_fetch_and(watched[i], ~WEFT__PROF_DIVERT, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&watch_lock);
#endif
    return 0;
}

#if WEFT__PROF_TRACE
int weft__prof_watch(unsigned *word)
{
    int ok = 1;

    pthread_mutex_lock(&watch_lock);
    if (nwatched == watch_cap) {
        size_t cap = watch_cap ? 2 * watch_cap : 16;
        unsigned **w = realloc(watched, cap * sizeof(*w));

        if (w != NULL) {
            watched = w;
            watch_cap = cap;
        } else {
            ok = 0;
        }
    }
    if (ok) {
        watched[nwatched++] = word;
        if (__atomic_load_n(&weft__prof_mask, __ATOMIC_RELAXED) != 0)
            __atomic_fetch_or(word, WEFT__PROF_DIVERT, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&watch_lock);
    return ok ? 0 : -1;
}

void weft__prof_unwatch(unsigned *word)
{
    pthread_mutex_lock(&watch_lock);
    for (size_t i = 0; i < nwatched; i++)
        if (watched[i] == word) {
            watched[i] = watched[--nwatched];
            break;
        }
    pthread_mutex_unlock(&watch_lock);
}
#endif

void weft__prof_reset(void)
{
    pthread_mutex_lock(&tables_lock);
    for (struct table *t = tables; t; t = t->next)
        memset(t->p, 0, sizeof(t->p));
    pthread_mutex_unlock(&tables_lock);
}

/* Corrected ticks as nanoseconds; what the timer's own cost hides reads 0. */
static double ticks_to_ns(double ticks)
{
    return ticks > 0 ? ticks / tsc_ghz : 0.0;
}

void weft__prof_stat(int point, struct weft__prof_stat *out)
{
    uint64_t count = 0, total = 0, min = UINT64_MAX, *all = NULL;
    size_t nall = 0, cap = 0;

    memset(out, 0, sizeof(*out));
    pthread_mutex_lock(&tables_lock);
    for (struct table *t = tables; t; t = t->next)
        cap += t->p[point].count < RESERVOIR ? t->p[point].count : RESERVOIR;
    all = cap ? malloc(cap * sizeof(*all)) : NULL;
    for (struct table *t = tables; t; t = t->next) {
        const struct pstat *s = &t->p[point];
        size_t kept = s->count < RESERVOIR ? s->count : RESERVOIR;

        if (s->count == 0)
            continue;
        count += s->count;
        total += s->total;
        if (s->min < min)
            min = s->min;
        if (all != NULL) {
            memcpy(all + nall, s->res, kept * sizeof(*all));
            nall += kept;
        }
    }
    pthread_mutex_unlock(&tables_lock);
    out->count = count;
    if (count > 0 && tsc_ghz > 0) {
        out->total_ns = ticks_to_ns((double)total - (double)count * overhead_ticks);
        out->min_ns = ticks_to_ns((double)min - overhead_ticks);
        if (nall > 0) {
            /* the top 1 % holds the samples that an interrupt or the
             * scheduler stretched: the trimmed mean leaves them out */
            size_t keep = nall - nall / 100;
            double sum = 0;

            qsort(all, nall, sizeof(*all), cmp_u64);
            double med = nall % 2 ? (double)all[nall / 2]
                                  : 0.5 * ((double)all[nall / 2 - 1] + (double)all[nall / 2]);
            out->median_ns = ticks_to_ns(med - overhead_ticks);
            for (size_t i = 0; i < keep; i++)
                sum += (double)all[i];
            out->trimmed_ns = ticks_to_ns(sum / (double)keep - overhead_ticks);
        }
    }
    free(all);
}

void weft__prof_timer(double *ghz, double *overhead_ns)
{
    *ghz = tsc_ghz;
    *overhead_ns = tsc_ghz > 0 ? overhead_ticks / tsc_ghz : 0;
}

/* "name": v with sep after it; JSON has no NaN or infinity: a figure
 * that is not finite is written null. */
static void put_number(FILE *f, const char *name, const char *fmt, double v, const char *sep)
{
    fprintf(f, "\"%s\": ", name);
    if (isfinite(v))
        fprintf(f, fmt, v);
    else
        fputs("null", f);
    fputs(sep, f);
}

int weft__prof_write(FILE *f, int rank)
{
    double ghz, ovh;

    weft__prof_timer(&ghz, &ovh);
    fprintf(f, "{\n  \"rank\": %d,\n  \"timer\": {", rank);
    put_number(f, "tsc_ghz", "%.6f", ghz, ", ");
    put_number(f, "overhead_ns", "%.3f", ovh, "},\n  \"points\": {");
    for (int i = 0; i < WEFT__PROF_NPOINTS; i++) {
        struct weft__prof_stat s;

        weft__prof_stat(i, &s);
        /* The names are identifiers fixed at compile time: nothing to escape. */
        fprintf(f, "%s\n    \"%s\": {\"count\": %llu, ", i ? "," : "", weft__prof_names[i],
                (unsigned long long)s.count);
        put_number(f, "total_ns", "%.3f", s.total_ns, ", ");
        put_number(f, "min_ns", "%.3f", s.min_ns, ", ");
        put_number(f, "median_ns", "%.3f", s.median_ns, ", ");
        put_number(f, "trimmed_mean_ns", "%.3f", s.trimmed_ns, "}");
    }
    fprintf(f, "\n  }\n}\n");
    return ferror(f) ? -1 : 0;
}
