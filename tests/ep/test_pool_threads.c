/* Every sharing policy under concurrent threads: each thread of each rank
 * puts (implicit and with events), gets, adds atomically and puts with a
 * signal to every rank through its own pool endpoint, and waits for the
 * signals meant for it; every byte and every count is checked.  The
 * resources a pool reports must match what its policy creates.
 *
 * Usage: test_pool_threads NTHREADS [policy ...] */
#include "../common.h"

#include <pthread.h>
#include <string.h>

#define MSG     256     /* bytes per (source rank, thread) slot */
#define ITERS   200

/* segment layout on every rank */
#define CTR_OFF     0                       /* [0] fetch-add, [1] nbi add */
#define SIG_OFF     64                      /* [src rank][thread] 8-byte signals */
#define DATA_OFF(n, T)  (SIG_OFF + 8 * (size_t)(n) * (T))
#define SLOT(n, T, src, t, which) \
    (DATA_OFF(n, T) + (((size_t)(which) * (n) + (src)) * (T) + (t)) * MSG)

struct run {
    weft_ctx_t     ctx;
    weft_ep_pool_t pool;
    weft_seg_t     seg;
    int            rank, n, T, epn, shared_cq, caller_lock;
    int            ucx_only;    /* WEFT_SHM=0: every access goes through UCX */
    unsigned       round;
};

struct arg { struct run *r; int t; };

static void lock(weft_ep_t ep, const struct run *r)
{
    if (r->caller_lock)
        OK(weft_ep_lock(ep));
}

static void unlock(weft_ep_t ep, const struct run *r)
{
    if (r->caller_lock)
        OK(weft_ep_unlock(ep));
}

static void *thread_main(void *p)
{
    struct arg *a = p;
    struct run *r = a->r;
    int t = a->t, n = r->n, T = r->T;
    unsigned char buf[MSG], back[MSG];
    uint64_t old;
    weft_ep_t ep;

    /* endpoint i of a thread talks to ranks i, i + epn, ... */
    for (int dst = 0; dst < n; dst++) {
        weft_event_t ev;

        OK(weft_ep_get_nth(r->pool, t, dst % r->epn, &ep));
        for (size_t i = 0; i < MSG; i++)
            buf[i] = test_pattern(r->round * 1000u + (unsigned)(r->rank * T + t), i);
        lock(ep, r);
        OK(weft_put_nbi(ep, dst, r->seg, SLOT(n, T, r->rank, t, 0), buf, MSG));
        OK(weft_put_nb(ep, dst, r->seg, SLOT(n, T, r->rank, t, 1), buf, MSG, &ev));
        OK(weft_wait(&ev));
        OK(weft_flush(ep));
        OK(weft_get(ep, back, dst, r->seg, SLOT(n, T, r->rank, t, 0), MSG));
        unlock(ep, r);
        CHECK(memcmp(back, buf, MSG) == 0);
        lock(ep, r);
        OK(weft_get_nb(ep, back, dst, r->seg, SLOT(n, T, r->rank, t, 1), MSG, &ev));
        OK(weft_wait(&ev));
        unlock(ep, r);
        CHECK(memcmp(back, buf, MSG) == 0);
    }
    OK(weft_ep_get(r->pool, t, &ep));
    for (int i = 0; i < ITERS; i++) {
        lock(ep, r);
        OK(weft_atomic_fetch_add(ep, 0, r->seg, CTR_OFF, 1, &old));
        OK(weft_atomic_add_nbi(ep, 0, r->seg, CTR_OFF + 8, 2));
        unlock(ep, r);
        CHECK(old < (uint64_t)ITERS * (uint64_t)n * (uint64_t)T);
    }
    lock(ep, r);
    OK(weft_flush(ep));
    unlock(ep, r);
    /* signal the same thread of the next rank; wait for the previous one's */
    {
        int next = (r->rank + 1) % n, prev = (r->rank + n - 1) % n;
        weft_event_t ev;
        uint64_t seen;
        unsigned spins = 0;

        OK(weft_ep_get_nth(r->pool, t, next % r->epn, &ep));
        for (size_t i = 0; i < MSG; i++)
            buf[i] = test_pattern(r->round * 7u + (unsigned)(r->rank * T + t), i);
        lock(ep, r);
        OK(weft_put_signal_nb(ep, next, r->seg, SLOT(n, T, r->rank, t, 2), buf, MSG, r->seg,
                              SIG_OFF + 8 * ((size_t)r->rank * T + t), 1, &ev));
        OK(weft_wait(&ev));
        unlock(ep, r);
        OK(weft_ep_get(r->pool, t, &ep));
        if (!r->caller_lock) {
            OK(weft_signal_wait_until(ep, r->seg, SIG_OFF + 8 * ((size_t)prev * T + t), 1, &seen));
        } else {
            /* the lock must not be held while waiting for a peer */
            do {
                lock(ep, r);
                OK(weft_progress(ep, NULL));
                unlock(ep, r);
                void *base;
                OK(weft_seg_query(r->seg, NULL, &base));
                seen = __atomic_load_n((uint64_t *)((char *)base + SIG_OFF +
                                                    8 * ((size_t)prev * T + t)),
                                       __ATOMIC_ACQUIRE);
                if (++spins % 64 == 0)
                    sched_yield();
            } while (seen < 1);
        }
        CHECK(seen == 1);
    }
    return NULL;
}

static void check_resources(const struct run *r, const char *policy, const weft_resources_t *res)
{
    weft_ep_policy_t p;
    /* workers per thread (group): one per endpoint unless completion is shared */
    unsigned T = (unsigned)r->T, W = r->shared_cq ? 1u : (unsigned)r->epn;

    OK(weft_ep_policy_parse(policy, &p));
    CHECK(res->weft_endpoints == T * (unsigned)r->epn);
    /* endpoint i of a thread: ranks i mod W, through UCX unless the direct
     * path reaches them */
    if (r->ucx_only)
        CHECK(res->endpoints == T * (unsigned)r->n);
    else
        CHECK(res->endpoints <= T * (unsigned)r->n);
    CHECK(res->ucx_contexts == (p.kind == WEFT_EP_PROCESS ? T : 1));
    switch (p.kind) {
    case WEFT_EP_PROCESS:
    case WEFT_EP_DEDICATED:    CHECK(res->workers == T * W && res->workers_used == T * W); break;
    case WEFT_EP_DEDICATED_2X: CHECK(res->workers == 2 * T * W && res->workers_used == T * W); break;
    case WEFT_EP_SHARED:       CHECK(res->workers == (T + p.k - 1) / p.k * W); break;
    case WEFT_EP_STATIC:       CHECK(res->workers == p.k * W); break;
    case WEFT_EP_SINGLE:       CHECK(res->workers == W && res->max_threads_per_worker == T); break;
    }
    if (res->max_threads_per_worker > 1 && !r->caller_lock)
        CHECK(res->locks_per_call == 1 && res->locked_workers > 0);
    else
        CHECK(res->locks_per_call == 0 && res->locked_workers == 0);
    if (r->caller_lock && res->max_threads_per_worker > 1)
        CHECK(res->caller_locks > 0);
}

static void run_policy(struct run *r, const char *policy, int epn, int shared_cq, int caller)
{
    weft_ep_pool_params_t pp;
    pthread_t th[64];
    struct arg args[64];
    weft_resources_t res;
    uint64_t *local;
    int n = r->n, T = r->T;

    memset(&pp, 0, sizeof(pp));
    pp.nthreads = T;
    pp.policy = policy;
    pp.eps_per_thread = epn;
    pp.shared_completion = shared_cq;
    pp.lock = caller ? WEFT_EP_LOCK_CALLER : WEFT_EP_LOCK_UCX;
    pp.check_owner = 1;
    r->epn = epn;
    r->shared_cq = shared_cq;
    r->caller_lock = caller;
    r->round++;
    OK(weft_ep_pool_create(r->ctx, &pp, &r->pool));
    for (int t = 0; t < T; t++) {
        args[t].r = r;
        args[t].t = t;
        CHECK(pthread_create(&th[t], NULL, thread_main, &args[t]) == 0);
    }
    for (int t = 0; t < T; t++)
        pthread_join(th[t], NULL);
    OK(weft_barrier(r->ctx));

    OK(weft_seg_query(r->seg, NULL, (void **)&local));
    for (int src = 0; src < n; src++)
        for (int t = 0; t < T; t++) {
            const unsigned char *d0 = (unsigned char *)local + SLOT(n, T, src, t, 0);
            const unsigned char *d1 = (unsigned char *)local + SLOT(n, T, src, t, 1);
            const unsigned char *d2 = (unsigned char *)local + SLOT(n, T, src, t, 2);
            int signalled = src == (r->rank + n - 1) % n;

            for (size_t i = 0; i < MSG; i++) {
                CHECK(d0[i] == test_pattern(r->round * 1000u + (unsigned)(src * T + t), i));
                CHECK(d1[i] == d0[i]);
                if (signalled)
                    CHECK(d2[i] == test_pattern(r->round * 7u + (unsigned)(src * T + t), i));
            }
            CHECK(local[(SIG_OFF + 8 * ((size_t)src * T + t)) / 8] == (uint64_t)signalled);
        }
    if (r->rank == 0) {
        CHECK(local[0] == (uint64_t)ITERS * (uint64_t)n * (uint64_t)T);
        CHECK(local[1] == 2u * (uint64_t)ITERS * (uint64_t)n * (uint64_t)T);
    }
    OK(weft_ep_pool_resources(r->pool, &res));
    check_resources(r, policy, &res);
    if (r->rank == 0)
        printf("%-13s T=%d eps/thread=%d completion=%s lock=%s: contexts %u workers %u "
               "endpoints %u locks/call %u caller locks %llu rss +%zu KiB: ok\n",
               policy, T, epn, shared_cq ? "shared" : "private", caller ? "caller" : "ucx",
               res.ucx_contexts, res.workers, res.endpoints, res.locks_per_call,
               res.caller_locks, res.rss_bytes / 1024);
    OK(weft_ep_pool_destroy(r->pool));
    /* clean slate for the next policy */
    memset(local, 0, DATA_OFF(n, T) + 3 * (size_t)n * (size_t)T * MSG);
    OK(weft_barrier(r->ctx));
}

int main(int argc, char **argv)
{
    static const char *all[] = {"process", "dedicated-2x", "dedicated", "shared:2", "paired",
                                "shared:8", "static:1", "static:3", "single"};
    struct run r;
    int np = argc > 2 ? argc - 2 : (int)(sizeof(all) / sizeof(*all));
    const char *const *pols = argc > 2 ? (const char *const *)argv + 2 : all;

    memset(&r, 0, sizeof(r));
    r.T = argc > 1 ? atoi(argv[1]) : 2;
    r.ucx_only = getenv("WEFT_SHM") && strcmp(getenv("WEFT_SHM"), "0") == 0;
    CHECK(r.T >= 1 && r.T <= 64);
    OK(weft_init(NULL, &r.ctx));
    OK(weft_rank(r.ctx, &r.rank));
    OK(weft_nranks(r.ctx, &r.n));
    OK(weft_seg_alloc(r.ctx, DATA_OFF(r.n, r.T) + 3 * (size_t)r.n * (size_t)r.T * MSG, &r.seg,
                      NULL));
    for (int i = 0; i < np; i++) {
        run_policy(&r, pols[i], 1, 0, 0);
    }
    /* two endpoints per thread, their completion private or shared */
    run_policy(&r, "dedicated", 2, 0, 0);
    run_policy(&r, "dedicated", 2, 1, 0);
    /* threads that share a worker serialise themselves */
    run_policy(&r, "single", 1, 0, 1);
    if (r.T >= 2)
        run_policy(&r, "shared:2", 2, 1, 1);
    OK(weft_seg_free(r.ctx, r.seg));
    OK(weft_finalize(r.ctx));
    return 0;
}
