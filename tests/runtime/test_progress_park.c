/* While the application progresses the home worker itself, the progress
 * thread leaves the transport's descriptor and the worker alone: asleep on
 * the descriptor, it would be woken by every message the application has
 * already read.  Rank 0 gets from rank 1 while rank 1 waits without
 * calling weft (rank 1's thread serves from the descriptor; rank 0 polls
 * in its blocking gets), then while rank 1 polls in weft_progress.  The
 * test's ppoll and ucp_worker_progress stand in for the libraries' and
 * count, on the thread named "weft-progress", its sleeps on two
 * descriptors (armed on the transport's) and on one (parked), and its
 * progress calls.  Over TCP, where every message wakes a thread asleep on
 * the descriptor.  No bound on time: counts of sleeps against each other,
 * with a margin for an application thread that a loaded machine keeps
 * off its core through a whole sleep now and then. */
#define _GNU_SOURCE
#include "../common.h"

#include <ucp/api/ucp.h>

#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

static long long armed, parked, progressed;

/* 1 on weft's progress thread */
static int on_thread(void)
{
    static __thread int is = -1;
    char name[16] = "";

    if (is < 0)
        is = pthread_getname_np(pthread_self(), name, sizeof(name)) == 0 &&
             strcmp(name, "weft-progress") == 0;
    return is;
}

int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo, const sigset_t *mask)
{
    static int (*real)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);

    if (real == NULL)
        real = (int (*)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *))
            dlsym(RTLD_NEXT, "ppoll");
    if (on_thread())
        __atomic_add_fetch(n == 2 ? &armed : &parked, 1, __ATOMIC_RELAXED);
    return real(fds, n, tmo, mask);
}

/* UCX's, counted on the thread */
unsigned ucp_worker_progress(ucp_worker_h worker)
{
    static unsigned (*real)(ucp_worker_h);

    if (real == NULL)
        real = (unsigned (*)(ucp_worker_h))dlsym(RTLD_NEXT, "ucp_worker_progress");
    if (on_thread())
        __atomic_add_fetch(&progressed, 1, __ATOMIC_RELAXED);
    return real(worker);
}

#define GETS 2000

/* Rank 0 gets a word from rank 1 GETS times, then sets the flag at byte
 * `flag` of rank 1's segment; rank 1 waits for the flag without calling
 * weft (its thread must serve), for at most a minute. */
static void gets(weft_ep_t ep, weft_seg_t seg, int rank, volatile uint64_t *word, size_t flag)
{
    uint64_t got = 0, one = 1;

    if (rank == 0) {
        for (int i = 0; i < GETS; i++) {
            OK(weft_get(ep, &got, 1, seg, 0, sizeof(got)));
            CHECK(got == 0x5eed0001u);
        }
        OK(weft_put(ep, 1, seg, flag, &one, sizeof(one)));
        OK(weft_flush(ep));
    } else if (rank == 1) {
        /* sleeping between looks, so that the test's spinning threads
         * (rank 0's) do not outnumber the cores on a small machine */
        struct timespec pause = {.tv_sec = 0, .tv_nsec = 100000}, t0, t;

        clock_gettime(CLOCK_MONOTONIC, &t0);
        while (__atomic_load_n(&word[flag / 8], __ATOMIC_ACQUIRE) != 1) {
            nanosleep(&pause, NULL);
            clock_gettime(CLOCK_MONOTONIC, &t);
            CHECK(t.tv_sec - t0.tv_sec < 60);
        }
    }
}

int main(int argc, char **argv)
{
    weft_config_t cfg;
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg;
    void *base;
    volatile uint64_t *word;
    long long a0, p0, g0, a1, p1, g1, a2, p2, g2;
    int provided, rank;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    setenv("WEFT_PROGRESS_THREAD", "1", 1);
    OK(weft_config_init(&cfg));
    OK(weft_init(&cfg, &ctx));
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, 4096, &seg, &base));
    OK(weft_rank(ctx, &rank));
    word = (volatile uint64_t *)base;
    word[0] = 0x5eed0000u + (uint64_t)rank;
    word[1] = word[2] = 0;
    OK(weft_barrier(ctx));

    /* Rank 1 waits without calling weft: its thread serves rank 0's gets
     * from the descriptor, while rank 0 polls in its blocking gets. */
    a0 = __atomic_load_n(&armed, __ATOMIC_RELAXED);
    p0 = __atomic_load_n(&parked, __ATOMIC_RELAXED);
    g0 = __atomic_load_n(&progressed, __ATOMIC_RELAXED);
    gets(ep, seg, rank, word, 8);
    a1 = __atomic_load_n(&armed, __ATOMIC_RELAXED);
    p1 = __atomic_load_n(&parked, __ATOMIC_RELAXED);
    OK(weft_barrier(ctx));
    g1 = __atomic_load_n(&progressed, __ATOMIC_RELAXED);
    /* Rank 1 polls in weft_progress while rank 0 gets. */
    if (rank == 1) {
        while (__atomic_load_n(&word[2], __ATOMIC_ACQUIRE) != 1)
            OK(weft_progress(ep, NULL));
    } else {
        gets(ep, seg, rank, word, 16);
    }
    a2 = __atomic_load_n(&armed, __ATOMIC_RELAXED);
    p2 = __atomic_load_n(&parked, __ATOMIC_RELAXED);
    g2 = __atomic_load_n(&progressed, __ATOMIC_RELAXED);
    OK(weft_barrier(ctx));

    /* Asleep on the descriptor while the application polls, a thread is
     * woken by the messages the application reads, and each time it
     * takes the worker's lock for nothing.  Parked, it sleeps longer each
     * time it finds the application still polling and does not touch the
     * worker; it sleeps on the descriptor again only when a whole sleep
     * (an interval or more) passes without the application polling, as
     * on a loaded machine now and then, but not at every other get. */
    printf("rank %d, %d gets while rank 1 waits: %lld sleeps on the descriptor, %lld without "
           "it, %lld progress calls; while rank 1 polls: %lld, %lld, %lld\n",
           rank, GETS, a1 - a0, p1 - p0, g1 - g0, a2 - a1, p2 - p1, g2 - g1);
    if (rank == 0) {
        CHECK(4 * (a1 - a0) < p1 - p0);
        /* parked, it does not progress the worker: a few calls after each
         * sleep on the descriptor, and after a sleep without it that the
         * application did not poll through */
        CHECK(g1 - g0 <= 4 * (a1 - a0 + 1) + (p1 - p0) / 4);
    } else if (rank == 1) {
        /* it served from the descriptor, sleeping there between gets */
        CHECK(a1 - a0 > 0);
        CHECK(4 * (a2 - a1) < p2 - p1);
        CHECK(g2 - g1 <= 4 * (a2 - a1 + 1) + (p2 - p1) / 4);
    }
    OK(weft_seg_free(ctx, seg));
    OK(weft_finalize(ctx));
    MPI_Finalize();
    return 0;
}
