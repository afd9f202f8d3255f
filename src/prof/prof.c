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

/* Until the first selection picks the CPU's timer, the likeliest one. */
#if defined(__x86_64__)
int weft__prof_clock = WEFT__PROF_TSC_LFENCE;
#elif defined(__aarch64__)
int weft__prof_clock = WEFT__PROF_CNTVCT;
#else
int weft__prof_clock = WEFT__PROF_CLOCK_GETTIME;
#endif
static int freq_source;

const char *const weft__prof_clock_names[4] = {"clock_gettime", "tsc-lfence", "tsc-mfence",
                                               "cntvct"};
const char *const weft__prof_freq_names[6] = {"none", "sysfs", "cpuid-0x15", "hypervisor",
                                              "cntfrq", "measured"};

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

int weft__prof_pick_clock(const char *vendor, int invariant_tsc, int lfence_serialising,
                          uint64_t cntfrq_hz)
{
    if (vendor != NULL) {
        if (!invariant_tsc)
            return WEFT__PROF_CLOCK_GETTIME;  /* a TSC that changes rate is no clock */
        /* Intel's LFENCE waits for every earlier instruction to complete
         * and holds later ones back; AMD's does where CPUID 0x80000021
         * says so (the kernel may also make it so, but a guest cannot
         * tell): elsewhere MFENCE orders RDTSC, as AMD documents */
        if (strncmp(vendor, "GenuineIntel", 12) == 0)
            return WEFT__PROF_TSC_LFENCE;
        if ((strncmp(vendor, "AuthenticAMD", 12) == 0 || strncmp(vendor, "HygonGenuine", 12) == 0) &&
            lfence_serialising)
            return WEFT__PROF_TSC_LFENCE;
        return WEFT__PROF_TSC_MFENCE;
    }
    return cntfrq_hz > 0 ? WEFT__PROF_CNTVCT : WEFT__PROF_CLOCK_GETTIME;
}

double weft__prof_pick_freq(int clock, const struct weft__prof_freq_in *in, int *source)
{
    double known = 0;
    int from = WEFT__PROF_FREQ_NONE;

    if (clock == WEFT__PROF_CLOCK_GETTIME) {
        *source = WEFT__PROF_FREQ_NONE;
        return 1.0;
    }
    if (clock == WEFT__PROF_CNTVCT) {
        if (in->cntfrq_hz > 0)
            known = in->cntfrq_hz / 1e9, from = WEFT__PROF_FREQ_CNTFRQ;
    } else if (in->sysfs_khz > 0) {
        known = in->sysfs_khz / 1e6, from = WEFT__PROF_FREQ_SYSFS;
    } else if (in->cpuid15_eax > 0 && in->cpuid15_ebx > 0 && in->cpuid15_ecx > 0) {
        /* the TSC is the crystal's frequency (ECX, Hz) times EBX / EAX */
        known = (double)in->cpuid15_ecx * in->cpuid15_ebx / in->cpuid15_eax / 1e9;
        from = WEFT__PROF_FREQ_CPUID_15;
    } else if (in->hypervisor_khz > 0) {
        known = in->hypervisor_khz / 1e6, from = WEFT__PROF_FREQ_HYPERVISOR;
    }
    if (known > 0 && (!(in->measured_ghz > 0) || fabs(known - in->measured_ghz) <= 0.1 * in->measured_ghz)) {
        *source = from;
        return known;
    }
    *source = in->measured_ghz > 0 ? WEFT__PROF_FREQ_MEASURED : WEFT__PROF_FREQ_NONE;
    return in->measured_ghz > 0 ? in->measured_ghz : 0;
}

void weft__prof_clock_info(const char **clock, const char **source)
{
    *clock = weft__prof_clock_names[weft__prof_clock];
    *source = weft__prof_freq_names[freq_source];
}

/* This CPU's facts for weft__prof_pick_clock and weft__prof_pick_freq. */
static int read_clock_facts(struct weft__prof_freq_in *in)
{
    memset(in, 0, sizeof(*in));
#if defined(__x86_64__)
    {
        unsigned a, b, c, d, max = __get_cpuid_max(0, NULL), ext = __get_cpuid_max(0x80000000, NULL);
        char vendor[13] = {0};
        int inv = 0, lfence = 0;
        FILE *f = fopen("/sys/devices/system/cpu/cpu0/tsc_freq_khz", "r");

        __cpuid(0, a, b, c, d);
        memcpy(vendor, &b, 4);
        memcpy(vendor + 4, &d, 4);
        memcpy(vendor + 8, &c, 4);
        if (ext >= 0x80000007) {
            __cpuid(0x80000007, a, b, c, d);
            inv = (d >> 8) & 1;
        }
        if (ext >= 0x80000021) {
            __cpuid(0x80000021, a, b, c, d);
            lfence = (a >> 2) & 1;
        }
        if (max >= 0x15) {
            __cpuid(0x15, a, b, c, d);
            in->cpuid15_eax = a, in->cpuid15_ebx = b, in->cpuid15_ecx = c;
        }
        /* hypervisors (KVM, VMware) give the guest's TSC kHz in leaf 0x40000010 */
        __cpuid(0x40000000, a, b, c, d);
        if (a >= 0x40000010 && a < 0x40010000) {
            __cpuid(0x40000010, a, b, c, d);
            in->hypervisor_khz = a;
        }
        if (f != NULL) {
            if (fscanf(f, "%lf", &in->sysfs_khz) != 1)
                in->sysfs_khz = 0;
            fclose(f);
        }
        return weft__prof_pick_clock(vendor, inv, lfence, 0);
    }
#elif defined(__aarch64__)
    {
        uint64_t frq;

        __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(frq));
        in->cntfrq_hz = (double)frq;
        return weft__prof_pick_clock(NULL, 0, 0, frq);
    }
#else
    return weft__prof_pick_clock(NULL, 0, 0, 0);
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

    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
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
    struct weft__prof_freq_in in;
    double t0, t1, best = INFINITY;
    uint64_t c0, c1;

    weft__prof_clock = read_clock_facts(&in);
    /* the counter against the clock, each read bracketed by the other's:
     * the check of the frequency the kernel or the CPU states, and the
     * frequency where neither does */
    c0 = weft__prof_start();
    t0 = mono_ns();
    nanosleep(&pause, NULL);
    t1 = mono_ns();
    c1 = weft__prof_stop();
    in.measured_ghz = (double)(c1 - c0) / (t1 - t0);
    tsc_ghz = weft__prof_pick_freq(weft__prof_clock, &in, &freq_source);

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
    if (mask != 0 && tsc_ghz == 0)
        calibrate();
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
    put_number(f, "overhead_ns", "%.3f", ovh, ", ");
    fprintf(f, "\"clock\": \"%s\", \"freq_source\": \"%s\"},\n  \"points\": {",
            weft__prof_clock_names[weft__prof_clock], weft__prof_freq_names[freq_source]);
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
