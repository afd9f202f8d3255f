/*
 * prof -- timers and trace points: where each nanosecond of an operation
 * goes (docs/breakdown.md).  Used by every layer; calls none.
 *
 * A trace point is a region of code between WEFT_PROF_BEGIN and
 * WEFT_PROF_END.  When the point is selected (WEFT_PROFILE, or
 * weft_prof_select), the region is timed with the CPU's counter, read with
 * a serialising pattern picked for the CPU (the timer, below), and the sample
 * goes to the calling thread's table: count, total, minimum and a
 * reservoir from which the median is taken.  When it is not selected, a
 * region costs one load and one well-predicted branch at its start and a
 * compare of a local at its end.  weft_put_nbi, the injection path, pays
 * nothing: its untraced instance tests a word of the endpoint that it
 * tests anyway, and a selection sets a bit of that word (watched words,
 * below).  Built with WEFT__PROF_TRACE 0 (CMake option WEFT_PROFILE=OFF,
 * and libweft_noprof) the macros are empty.
 *
 * The timer's own cost (an empty region) is measured when profiling is
 * first selected and subtracted from every sample when statistics are
 * read.
 */
#ifndef WEFT_PROF_H
#define WEFT_PROF_H

#include <stdint.h>
#include <stdio.h>

#ifndef WEFT__PROF_TRACE
#define WEFT__PROF_TRACE 1
#endif

/* The points; names in weft__prof_names, meaning in docs/breakdown.md. */
enum {
    WEFT__PROF_HLP_POST,     /* weft's entry to the UCX post call */
    WEFT__PROF_LLP_POST,     /* the UCX post call */
    WEFT__PROF_LLP_PROG,     /* ucp_worker_progress that returned events */
    WEFT__PROF_LLP_POLL,     /* ucp_worker_progress that returned none */
    WEFT__PROF_HLP_TX_PROG,  /* weft's send-completion callbacks */
    WEFT__PROF_HLP_RX_PROG,  /* weft's AM delivery, handler included */
    WEFT__PROF_BUSY_POST,    /* progress forced by too many operations in flight */
    WEFT__PROF_DIRECT_COPY,  /* the intra-node direct path's copy */
    WEFT__PROF_HLP_POST_TAIL,/* weft's code after the UCX post call returns */
    WEFT__PROF_HLP_PROG,     /* weft_progress's code before the UCX progress */
    WEFT__PROF_SIGNAL_ADD,   /* the direct path's add of a put-with-signal */
    WEFT__PROF_SIGNAL_POLL,  /* the load of weft_signal_wait_until that saw the value */
    WEFT__PROF_NPOINTS
};

#define WEFT__PROF_ALL ((1u << WEFT__PROF_NPOINTS) - 1)

extern const char *const weft__prof_names[WEFT__PROF_NPOINTS];

/* Selected points, a bit per point; 0 when profiling is off.  Hidden, so
 * that the library reads it without going through the GOT. */
extern uint32_t weft__prof_mask __attribute__((visibility("hidden")));

/* The timer.  Which counter and which fences read it is chosen once, at
 * the first selection, from the CPU (weft__prof_clock, below): on x86-64
 * the TSC, started with "lfence; rdtsc" where LFENCE holds later
 * instructions back (Intel; AMD when CPUID says LFENCE is serialising) and
 * "mfence; lfence; rdtsc" elsewhere (AMD's documented order for RDTSC),
 * stopped with "rdtscp" and the same fence; on aarch64 the virtual counter
 * CNTVCT_EL0 between ISBs; without an invariant TSC, and on other CPUs,
 * clock_gettime(CLOCK_MONOTONIC_RAW) in ns (a "TSC" of 1 GHz). */
enum {
    WEFT__PROF_CLOCK_GETTIME,  /* clock_gettime, ns */
    WEFT__PROF_TSC_LFENCE,     /* lfence; rdtsc ... rdtscp; lfence */
    WEFT__PROF_TSC_MFENCE,     /* mfence; lfence; rdtsc ... rdtscp; mfence */
    WEFT__PROF_CNTVCT,         /* isb; mrs cntvct_el0 ... isb; mrs cntvct_el0; isb */
};
extern int weft__prof_clock;
extern const char *const weft__prof_clock_names[4];

#include <time.h>
static inline uint64_t weft__prof_clock_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
static inline uint64_t weft__prof_start(void)
{
    uint32_t lo, hi;

    if (__builtin_expect(weft__prof_clock == WEFT__PROF_TSC_LFENCE, 1))
        __asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi)::"memory");
    else if (weft__prof_clock == WEFT__PROF_TSC_MFENCE)
        __asm__ __volatile__("mfence\n\tlfence\n\trdtsc" : "=a"(lo), "=d"(hi)::"memory");
    else
        return weft__prof_clock_ns();
    return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t weft__prof_stop(void)
{
    uint32_t lo, hi, aux;

    if (__builtin_expect(weft__prof_clock == WEFT__PROF_TSC_LFENCE, 1))
        __asm__ __volatile__("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux)::"memory");
    else if (weft__prof_clock == WEFT__PROF_TSC_MFENCE)
        __asm__ __volatile__("rdtscp\n\tmfence" : "=a"(lo), "=d"(hi), "=c"(aux)::"memory");
    else
        return weft__prof_clock_ns();
    return ((uint64_t)hi << 32) | lo;
}
#elif defined(__aarch64__)
static inline uint64_t weft__prof_start(void)
{
    uint64_t v;

    if (__builtin_expect(weft__prof_clock != WEFT__PROF_CNTVCT, 0))
        return weft__prof_clock_ns();
    /* the ISB: the read waits for the instructions before it */
    __asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(v)::"memory");
    return v;
}

static inline uint64_t weft__prof_stop(void)
{
    uint64_t v;

    if (__builtin_expect(weft__prof_clock != WEFT__PROF_CNTVCT, 0))
        return weft__prof_clock_ns();
    __asm__ __volatile__("isb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(v)::"memory");
    return v;
}
#else
#define weft__prof_start weft__prof_clock_ns
#define weft__prof_stop weft__prof_clock_ns
#endif

/* The choice of the timer, apart from the instructions so that it can be
 * tested on any CPU with made-up CPUID results.  vendor: CPUID 0's 12
 * characters (NULL: not x86); invariant_tsc: CPUID 0x80000007 EDX bit 8;
 * lfence_serialising: CPUID 0x80000021 EAX bit 2 (AMD).  aarch64: the
 * counter's frequency CNTFRQ_EL0 in Hz (0: not aarch64, or unknown). */
int weft__prof_pick_clock(const char *vendor, int invariant_tsc, int lfence_serialising,
                          uint64_t cntfrq_hz);

/* Where the counter's frequency came from (weft__prof_freq_source). */
enum {
    WEFT__PROF_FREQ_NONE,      /* clock_gettime: 1 GHz by definition */
    WEFT__PROF_FREQ_SYSFS,     /* /sys/devices/system/cpu/cpu0/tsc_freq_khz */
    WEFT__PROF_FREQ_CPUID_15,  /* CPUID 0x15: crystal x numerator / denominator */
    WEFT__PROF_FREQ_HYPERVISOR,/* CPUID 0x40000010 EAX: the hypervisor's TSC kHz */
    WEFT__PROF_FREQ_CNTFRQ,    /* CNTFRQ_EL0 */
    WEFT__PROF_FREQ_MEASURED,  /* against CLOCK_MONOTONIC_RAW */
};
extern const char *const weft__prof_freq_names[6];

/* What the frequency could be read from, 0 where it could not. */
struct weft__prof_freq_in {
    double sysfs_khz;
    uint32_t cpuid15_eax, cpuid15_ebx, cpuid15_ecx;
    double hypervisor_khz;
    double cntfrq_hz;
    double measured_ghz;  /* against the clock: the check of the others */
};

/* The counter's frequency in GHz for `clock` from in, and in *source where
 * it came from: the first that is known of the kernel's, CPUID 0x15's,
 * the hypervisor's (the TSC) or CNTFRQ_EL0 (aarch64), unless it is more
 * than 10 % from the measured one (a wrong table, a migrated guest), then
 * the measured one.  Pure. */
double weft__prof_pick_freq(int clock, const struct weft__prof_freq_in *in, int *source);

/* The names of the timer picked and of its frequency's source (after the
 * first selection; before it, the default timer's and "none"). */
void weft__prof_clock_info(const char **clock, const char **freq_source);

/* Watched words: a layer whose fast path already tests a word of its own
 * (an endpoint's) has bit WEFT__PROF_DIVERT of that word kept equal to
 * "some point is selected", so that the path needs no test of the
 * selection of its own.  weft__prof_watch sets the bit to the current
 * selection and returns 0, or -1 when out of memory; weft__prof_unwatch
 * forgets the word (before it is freed).  The bit is written with relaxed
 * atomics, after the selection itself. */
#define WEFT__PROF_DIVERT 0x80000000u
#if WEFT__PROF_TRACE
int weft__prof_watch(unsigned *word);
void weft__prof_unwatch(unsigned *word);
#else
/* nothing can be selected: the bit is never set */
static inline int weft__prof_watch(unsigned *word) { (void)word; return 0; }
static inline void weft__prof_unwatch(unsigned *word) { (void)word; }
#endif

/* Add a sample of `ticks` (timer overhead included) to point's table of
 * the calling thread.  Inside a busy_post region only busy_post records:
 * the progress it forces is counted there, once. */
void weft__prof_record(int point, uint64_t ticks);

/* busy_post: begin returns the start time, end records it; both maintain
 * the thread's "inside busy_post" depth whatever points are selected. */
uint64_t weft__prof_busy_begin(void);
void weft__prof_busy_end(uint64_t start);

#if WEFT__PROF_TRACE
#define WEFT_PROF_BEGIN(v, point) \
    uint64_t v = __builtin_expect(weft__prof_mask & (1u << (point)), 0) ? weft__prof_start() : 0
#define WEFT_PROF_END(v, point) \
    do { if (__builtin_expect(v != 0, 0)) weft__prof_record((point), weft__prof_stop() - v); } while (0)
/* The same in a body instantiated with and without points: `traced` is a
 * constant, so the untraced instance has no trace code at all. */
#define WEFT_PROF_BEGIN_IF(traced, v, point) \
    uint64_t v = (traced) && __builtin_expect(weft__prof_mask & (1u << (point)), 0) ? weft__prof_start() : 0
/* Whether any point is selected: the one branch of a path that has a
 * traced and an untraced instance. */
#define WEFT_PROF_ANY() __builtin_expect(weft__prof_mask != 0, 0)
#define WEFT_PROF_BUSY_BEGIN(v) \
    uint64_t v = __builtin_expect(weft__prof_mask != 0, 0) ? weft__prof_busy_begin() : 0
#define WEFT_PROF_BUSY_END(v) \
    do { if (__builtin_expect(v != 0, 0)) weft__prof_busy_end(v); } while (0)
#else
#define WEFT_PROF_BEGIN(v, point) ((void)0)
#define WEFT_PROF_BEGIN_IF(traced, v, point) ((void)0)
#define WEFT_PROF_ANY() 0
#define WEFT_PROF_END(v, point) ((void)0)
#define WEFT_PROF_BUSY_BEGIN(v) ((void)0)
#define WEFT_PROF_BUSY_END(v) ((void)0)
#endif

/* Statistics of one point over every thread, timer overhead subtracted.
 * A time shorter than the timer's own cost reads 0 (below the timer's
 * resolution on this CPU), never a negative time. */
struct weft__prof_stat {
    uint64_t count;
    double   total_ns, min_ns, median_ns;
    double   trimmed_ns;  /* mean of the kept samples without their top 1 % */
};

/* Parse a selection: "1"/"all"/"on"/"yes"/"true", "0"/"off"/"no"/"false"/"",
 * or a comma-separated list of point names (any case).  Returns 0 and sets
 * *mask, or 1 + the offset in s of the first unknown name.  Pure. */
int weft__prof_parse(const char *s, uint32_t *mask);

/* Select points; the first non-empty selection picks and calibrates the timer.
 * 0 (a CPU without an invariant TSC times with clock_gettime). */
int weft__prof_select(uint32_t mask);

/* Forget every sample (no thread may be inside weft meanwhile). */
void weft__prof_reset(void);

void weft__prof_stat(int point, struct weft__prof_stat *out);

/* One empty region's reading in ticks, now: the interquartile mean (the
 * mean of the middle half) of 1024 empty regions timed back to back.  The
 * library's overhead is the minimum of 64 of these at the first
 * selection; a benchmark calls it again beside its measurements, at the
 * machine's speed of the moment. */
double weft__prof_empty_ticks(void);

/* TSC frequency in GHz and one empty region's cost in ns (0 before the
 * first selection calibrated them). */
void weft__prof_timer(double *tsc_ghz, double *overhead_ns);

/* {"rank": r, "timer": {...}, "points": {NAME: {...}, ...}}; 0 on success. */
int weft__prof_write(FILE *f, int rank);

#endif
