/* The progress thread sleeps WEFT_PROGRESS_INTERVAL_US between polls when
 * the transport cannot wake it, and, armed on the transport's descriptor
 * (ppoll on two descriptors), the longer of that and a 10 ms guard: every
 * interval the settings accept (up to a second from the variable, any
 * unsigned from weft_config_t) must reach ppoll as a valid timeout, or
 * ppoll fails at once with EINVAL and the thread spins on a core instead
 * of sleeping.  The test's ppoll stands in
 * for the C library's (libweft's calls reach it through the dynamic
 * linker) and records the timeouts it is given. */
#define _GNU_SOURCE
#include "../common.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <time.h>

static long long calls, invalid, last_sec, last_nsec, last_n;

int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo, const sigset_t *mask)
{
    static int (*real)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
    int rc;

    if (real == NULL)
        real = (int (*)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *))
            dlsym(RTLD_NEXT, "ppoll");
    if (tmo != NULL) {
        __atomic_store_n(&last_sec, (long long)tmo->tv_sec, __ATOMIC_RELAXED);
        __atomic_store_n(&last_nsec, (long long)tmo->tv_nsec, __ATOMIC_RELAXED);
        __atomic_store_n(&last_n, (long long)n, __ATOMIC_RELAXED);
    }
    /* counted before the sleep, so that the test need not wait it out */
    __atomic_add_fetch(&calls, 1, __ATOMIC_RELEASE);
    rc = real(fds, n, tmo, mask);
    if (rc < 0 && errno == EINVAL)
        __atomic_add_fetch(&invalid, 1, __ATOMIC_RELAXED);
    return rc;
}

/* Start a context whose progress thread sleeps `us`, wait for its first
 * sleep, and check the timeout it asked for. */
static void check_interval(const weft_config_t *cfg, unsigned us)
{
    struct timespec pause = {.tv_sec = 0, .tv_nsec = 1000000};
    weft_ctx_t ctx;
    unsigned want;

    __atomic_store_n(&calls, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&invalid, 0, __ATOMIC_RELAXED);
    OK(weft_init(cfg, &ctx));
    /* an idle thread sleeps at once; no bound needed: the test's timeout */
    while (__atomic_load_n(&calls, __ATOMIC_ACQUIRE) == 0)
        nanosleep(&pause, NULL);
    OK(weft_finalize(ctx));
    /* armed: the guard, unless the interval is longer */
    want = last_n == 2 && us < 10000 ? 10000 : us;
    if (invalid != 0 || last_sec != want / 1000000 ||
        last_nsec != (long long)(want % 1000000) * 1000) {
        fprintf(stderr,
                "interval %u us: ppoll on %lld descriptors got {%lld s, %lld ns}, expected %u us; "
                "%lld of %lld calls EINVAL\n",
                us, last_n, last_sec, last_nsec, want, invalid, calls);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv)
{
    weft_config_t cfg;
    int provided;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    setenv("WEFT_PROGRESS_THREAD", "1", 1);
    setenv("WEFT_PROGRESS_INTERVAL_US", "250", 1);
    OK(weft_config_init(&cfg));
    check_interval(&cfg, 250);
    /* the largest value the variable accepts */
    setenv("WEFT_PROGRESS_INTERVAL_US", "1000000", 1);
    OK(weft_config_init(&cfg));
    check_interval(&cfg, 1000000);
    /* set in the structure: seconds and a fraction */
    cfg.progress_interval_us = 2500000;
    check_interval(&cfg, 2500000);
    printf("progress interval: every accepted interval is a valid sleep\n");
    MPI_Finalize();
    return 0;
}
