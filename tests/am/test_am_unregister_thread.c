/* A handler unregistered and registered again, over and over, while
 * messages to its id are being handled on another thread.  Rank 1 streams
 * COUNT messages to id X of rank 0 (then one to id DONE); rank 0's main
 * thread registers X with one of two arguments, unregisters it, marks that
 * argument dead (as a program that frees it would) and registers X with the
 * other.  The handler runs on the progress thread (mode "progress", with
 * WEFT_PROGRESS_THREAD=1) or on the pool threads that serve the home worker
 * (mode "pool").  weft.h: once unregistering returns the old handler is not
 * running on another thread and is not called again, and a message that
 * finds no handler is counted by weft_am_dropped: the handler must never
 * see a dead argument, and every message is either handled or dropped.
 * Then: registering an id that another thread is unregistering (waiting
 * for a handler that runs) returns WEFT_ERR_BUSY, and a handler that
 * unregisters its own id returns from it at once.
 *
 * Usage: test_am_unregister_thread progress|pool COUNT
 * (progress: with WEFT_PROGRESS_THREAD=1) */
#include "../common.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

#define X       3
#define DONE    4
#define SLOW    5       /* phase 2: a handler that runs until released */
#define SELF    6       /* phase 2: a handler that unregisters itself */
#define WINDOW  32
#define LIVE    0x11fe11feu
#define DEAD    0xdeadu
#define POOL_T  2

struct harg {
    uint32_t live;      /* LIVE while registered, DEAD after unregistering */
    uint64_t handled;
};

static struct harg args[2];
static int done, stop;     /* atomic */
static int slow_in, slow_release, self_done;  /* atomic, phase 2 */
static weft_ctx_t the_ctx;

static void spin_ns(long ns)
{
    struct timespec t0, t;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < ns);
}

static void on_x(weft_ctx_t ctx, int src, const void *hdr, size_t hdr_len,
                 const void *payload, size_t len, void *arg)
{
    struct harg *a = arg;
    uint64_t seq;

    (void)ctx;
    CHECK(a == &args[0] || a == &args[1]);
    CHECK(__atomic_load_n(&a->live, __ATOMIC_RELAXED) == LIVE);
    CHECK(src == 1 && hdr_len == sizeof(seq) && len == sizeof(seq));
    memcpy(&seq, hdr, sizeof(seq));
    CHECK(memcmp(payload, &seq, sizeof(seq)) == 0);
    /* long enough for the main thread to come by */
    spin_ns(2000);
    CHECK(__atomic_load_n(&a->live, __ATOMIC_RELAXED) == LIVE);
    __atomic_fetch_add(&a->handled, 1, __ATOMIC_RELAXED);
}

static void on_done(weft_ctx_t ctx, int src, const void *hdr, size_t hdr_len,
                    const void *payload, size_t len, void *arg)
{
    (void)ctx, (void)src, (void)hdr, (void)hdr_len, (void)payload, (void)len, (void)arg;
    __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
}

static void on_slow(weft_ctx_t ctx, int src, const void *hdr, size_t hdr_len,
                    const void *payload, size_t len, void *arg)
{
    (void)ctx, (void)src, (void)hdr, (void)hdr_len, (void)payload, (void)len, (void)arg;
    __atomic_store_n(&slow_in, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&slow_release, __ATOMIC_ACQUIRE))
        spin_ns(1000);
}

static void on_self(weft_ctx_t ctx, int src, const void *hdr, size_t hdr_len,
                    const void *payload, size_t len, void *arg)
{
    (void)src, (void)hdr, (void)hdr_len, (void)payload, (void)len, (void)arg;
    OK(weft_am_register(ctx, SELF, NULL, NULL));
    __atomic_store_n(&self_done, 1, __ATOMIC_RELEASE);
}

static void *unregister_slow(void *p)
{
    (void)p;
    OK(weft_am_register(the_ctx, SLOW, NULL, NULL));
    /* it returned: the handler it waited for has ended */
    CHECK(__atomic_load_n(&slow_release, __ATOMIC_ACQUIRE));
    return NULL;
}

/* rank 0, phase 2: the handlers run on the progress thread or the pool
 * threads (this thread must not progress: the slow handler holds the home
 * worker until this thread releases it) */
static void phase2(weft_ctx_t ctx)
{
    pthread_t th;
    weft_status_t st;

    while (!__atomic_load_n(&slow_in, __ATOMIC_ACQUIRE))
        spin_ns(1000);
    CHECK(pthread_create(&th, NULL, unregister_slow, NULL) == 0);
    /* BUSY while the handler runs, then while the other thread waits for it */
    while ((st = weft_am_register(ctx, SLOW, on_slow, NULL)) == WEFT_ERR_BUSY &&
           strstr(weft_last_error(), "being unregistered by another thread") == NULL)
        CHECK(strstr(weft_last_error(), "already has a handler") != NULL);
    CHECK(st == WEFT_ERR_BUSY);
    __atomic_store_n(&slow_release, 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    OK(weft_am_register(ctx, SLOW, on_slow, NULL));
    while (!__atomic_load_n(&self_done, __ATOMIC_ACQUIRE))
        spin_ns(1000);
    OK(weft_am_register(ctx, SELF, on_self, NULL));
}

/* mode "pool": threads that progress their pool endpoints, which serve the
 * home worker, where the handlers run */
static void *pool_thread(void *p)
{
    weft_ep_t ep = p;

    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
        OK(weft_progress(ep, NULL));
    OK(weft_flush(ep));
    return NULL;
}

static uint64_t handled(void)
{
    return __atomic_load_n(&args[0].handled, __ATOMIC_RELAXED) +
           __atomic_load_n(&args[1].handled, __ATOMIC_RELAXED);
}

int main(int argc, char **argv)
{
    weft_config_t cfg;
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_ep_pool_t pool = NULL;
    pthread_t th[POOL_T];
    int rank, n, pool_mode;
    uint64_t count, dropped = 0;
    unsigned long cycles = 0;

    if (argc != 3 || (strcmp(argv[1], "progress") && strcmp(argv[1], "pool"))) {
        fprintf(stderr, "usage: %s progress|pool COUNT\n", argv[0]);
        return 2;
    }
    pool_mode = strcmp(argv[1], "pool") == 0;
    count = strtoull(argv[2], NULL, 10);
    OK(weft_config_init(&cfg));
    if (!pool_mode && !cfg.progress_thread) {
        fprintf(stderr, "mode progress needs WEFT_PROGRESS_THREAD=1\n");
        return 2;
    }
    OK(weft_init(&cfg, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    CHECK(n == 2);
    OK(weft_ep_default(ctx, &ep));
    if (pool_mode) {
        weft_ep_pool_params_t pp;

        memset(&pp, 0, sizeof(pp));
        pp.nthreads = POOL_T;
        pp.policy = "dedicated";
        OK(weft_ep_pool_create(ctx, &pp, &pool));
    }
    args[0].live = LIVE;
    OK(weft_am_register(ctx, X, on_x, &args[0]));
    OK(weft_am_register(ctx, DONE, on_done, NULL));
    OK(weft_am_register(ctx, SLOW, on_slow, NULL));
    OK(weft_am_register(ctx, SELF, on_self, NULL));
    the_ctx = ctx;
    OK(weft_barrier(ctx));

    if (rank == 1) {
        weft_event_t ev[WINDOW];
        uint64_t seqs[WINDOW];

        for (int w = 0; w < WINDOW; w++)
            ev[w] = WEFT_EVENT_NULL;
        for (uint64_t seq = 0; seq < count; seq++) {
            int w = (int)(seq % WINDOW);

            if (ev[w] != WEFT_EVENT_NULL)
                OK(weft_wait(&ev[w]));
            seqs[w] = seq;
            OK(weft_am_send_nb(ep, 0, X, &seqs[w], sizeof(seqs[w]), &seqs[w], sizeof(seqs[w]),
                               &ev[w]));
        }
        for (int w = 0; w < WINDOW; w++)
            if (ev[w] != WEFT_EVENT_NULL)
                OK(weft_wait(&ev[w]));
        OK(weft_am_send(ep, 0, DONE, NULL, 0, NULL, 0));
        OK(weft_am_send(ep, 0, SLOW, NULL, 0, NULL, 0));
        OK(weft_am_send(ep, 0, SELF, NULL, 0, NULL, 0));
    } else {
        if (pool_mode)
            for (int t = 0; t < POOL_T; t++) {
                weft_ep_t pep;

                OK(weft_ep_get(pool, t, &pep));
                CHECK(pthread_create(&th[t], NULL, pool_thread, pep) == 0);
            }
        /* this thread never progresses: every handler runs on another */
        for (int cur = 0; !__atomic_load_n(&done, __ATOMIC_ACQUIRE); cycles++) {
            spin_ns(5000);
            OK(weft_am_register(ctx, X, NULL, NULL));
            __atomic_store_n(&args[cur].live, DEAD, __ATOMIC_RELAXED);
            cur ^= 1;
            __atomic_store_n(&args[cur].live, LIVE, __ATOMIC_RELAXED);
            OK(weft_am_register(ctx, X, on_x, &args[cur]));
        }
        /* X stays registered: the rest is handled.  Messages are not
         * ordered, so some may still come after DONE; one that neither
         * arrives nor is counted within a minute was lost. */
        for (time_t t0 = time(NULL);; ) {
            OK(weft_am_dropped(ctx, &dropped));
            if (handled() + dropped >= count || time(NULL) - t0 > 60)
                break;
        }
        if (handled() + dropped != count)
            fprintf(stderr, "rank 0: %llu messages handled + %llu dropped, of %llu sent\n",
                    (unsigned long long)handled(), (unsigned long long)dropped,
                    (unsigned long long)count);
        CHECK(handled() + dropped == count);
        phase2(ctx);
        if (pool_mode) {
            __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
            for (int t = 0; t < POOL_T; t++)
                pthread_join(th[t], NULL);
        }
    }
    OK(weft_barrier(ctx));
    if (pool)
        OK(weft_ep_pool_destroy(pool));
    OK(weft_finalize(ctx));
    if (rank == 0)
        printf("%llu messages: %llu handled, %llu dropped while unregistered, %lu cycles (%s)\n",
               (unsigned long long)count, (unsigned long long)handled(),
               (unsigned long long)dropped, cycles, argv[1]);
    return 0;
}
