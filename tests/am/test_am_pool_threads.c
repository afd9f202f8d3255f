/* Active messages from the threads of an endpoint pool whose workers are
 * shared: T threads per rank, two per worker ("shared:2"), each sends
 * COUNT messages to the other rank with up to WINDOW of them outstanding
 * and progresses its own endpoint.  On a shared worker UCX completes one
 * thread's sends inside another thread's progress, so the header buffers
 * of an endpoint are handed back by a thread that does not own it.  Every
 * message must arrive once, with its header and payload: a header buffer
 * given to two sends at once shows as a wrong or repeated header.
 *
 * Usage: test_am_pool_threads T COUNT POLICY ucx|caller */
#include "../common.h"

#include <pthread.h>
#include <string.h>

#define ID      9
#define WINDOW  16
#define MAGIC   0x5eedf00du

struct hdr {
    uint32_t magic, thread, seq, pad[5];   /* 32 bytes: copied by weft */
};

struct run {
    weft_ctx_t      ctx;
    weft_ep_pool_t  pool;
    int             rank, T, count, caller_lock;
    unsigned char  *seen;       /* [thread * count + seq] of the peer */
    uint64_t        received;   /* atomic */
};

struct arg { struct run *r; int t; };

/* 0 B to 64 KiB: short and copied messages, and rendezvous ones whose
 * sends complete only when the target has fetched them */
static size_t len_of(uint32_t seq)
{
    static const size_t lens[] = {0, 24, 1000, 8192, 65536};
    return lens[seq % (sizeof(lens) / sizeof(lens[0]))];
}

static void on_message(weft_ctx_t ctx, int src, const void *hdr, size_t hdr_len,
                       const void *payload, size_t len, void *arg)
{
    struct run *r = arg;
    const unsigned char *p = payload;
    struct hdr h;

    (void)ctx;
    CHECK(src == (r->rank ^ 1) && hdr_len == sizeof(h));
    memcpy(&h, hdr, sizeof(h));
    CHECK(h.magic == MAGIC && h.thread < (uint32_t)r->T && h.seq < (uint32_t)r->count);
    CHECK(len == len_of(h.seq));
    for (size_t i = 0; i < len; i++)
        CHECK(p[i] == test_pattern(h.thread * 100000u + h.seq, i));
    CHECK(__atomic_exchange_n(&r->seen[h.thread * (uint32_t)r->count + h.seq], 1,
                              __ATOMIC_RELAXED) == 0);
    __atomic_fetch_add(&r->received, 1, __ATOMIC_RELEASE);
}

static void progress(weft_ep_t ep, const struct run *r)
{
    if (r->caller_lock)
        OK(weft_ep_lock(ep));
    OK(weft_progress(ep, NULL));
    if (r->caller_lock)
        OK(weft_ep_unlock(ep));
}

static void *thread_main(void *p)
{
    struct arg *a = p;
    struct run *r = a->r;
    uint64_t expected = (uint64_t)r->T * (uint64_t)r->count;
    weft_event_t ev[WINDOW];
    unsigned char *buf[WINDOW];
    weft_ep_t ep;

    OK(weft_ep_get(r->pool, a->t, &ep));
    for (int w = 0; w < WINDOW; w++) {
        ev[w] = WEFT_EVENT_NULL;
        CHECK((buf[w] = malloc(65536)) != NULL);
    }
    for (uint32_t seq = 0; seq < (uint32_t)r->count; seq++) {
        int w = (int)(seq % WINDOW), done = 0;
        struct hdr h = {MAGIC, (uint32_t)a->t, seq, {0}};
        size_t len = len_of(seq);

        /* the slot's previous send must be complete before its buffer is reused */
        while (ev[w] != WEFT_EVENT_NULL && !done) {
            if (r->caller_lock)
                OK(weft_ep_lock(ep));
            OK(weft_test(&ev[w], &done));
            if (r->caller_lock)
                OK(weft_ep_unlock(ep));
            if (!done)
                progress(ep, r);
        }
        for (size_t i = 0; i < len; i++)
            buf[w][i] = test_pattern((uint32_t)a->t * 100000u + seq, i);
        if (r->caller_lock)
            OK(weft_ep_lock(ep));
        OK(weft_am_send_nb(ep, r->rank ^ 1, ID, &h, sizeof(h), buf[w], len, &ev[w]));
        if (r->caller_lock)
            OK(weft_ep_unlock(ep));
        progress(ep, r);
    }
    for (int w = 0; w < WINDOW; w++) {
        if (r->caller_lock)
            OK(weft_ep_lock(ep));
        if (ev[w] != WEFT_EVENT_NULL)
            OK(weft_wait(&ev[w]));
        if (r->caller_lock)
            OK(weft_ep_unlock(ep));
        free(buf[w]);
    }
    /* keep serving until the peer's messages are all here */
    while (__atomic_load_n(&r->received, __ATOMIC_ACQUIRE) < expected)
        progress(ep, r);
    if (r->caller_lock)
        OK(weft_ep_lock(ep));
    OK(weft_flush(ep));
    if (r->caller_lock)
        OK(weft_ep_unlock(ep));
    return NULL;
}

int main(int argc, char **argv)
{
    weft_ep_pool_params_t pp;
    struct run r;
    pthread_t *th;
    struct arg *args;
    int n;

    if (argc != 5) {
        fprintf(stderr, "usage: %s T COUNT POLICY ucx|caller\n", argv[0]);
        return 2;
    }
    memset(&r, 0, sizeof(r));
    r.T = atoi(argv[1]);
    r.count = atoi(argv[2]);
    r.caller_lock = strcmp(argv[4], "caller") == 0;
    CHECK(r.T > 0 && r.count > 0);
    OK(weft_init(NULL, &r.ctx));
    OK(weft_rank(r.ctx, &r.rank));
    OK(weft_nranks(r.ctx, &n));
    CHECK(n == 2);
    CHECK((r.seen = calloc((size_t)r.T * (size_t)r.count, 1)) != NULL);
    memset(&pp, 0, sizeof(pp));
    pp.nthreads = r.T;
    pp.policy = argv[3];
    pp.lock = r.caller_lock ? WEFT_EP_LOCK_CALLER : WEFT_EP_LOCK_UCX;
    OK(weft_ep_pool_create(r.ctx, &pp, &r.pool));
    OK(weft_am_register(r.ctx, ID, on_message, &r));
    OK(weft_barrier(r.ctx));

    th = malloc(sizeof(*th) * (size_t)r.T);
    args = malloc(sizeof(*args) * (size_t)r.T);
    CHECK(th != NULL && args != NULL);
    for (int t = 0; t < r.T; t++) {
        args[t] = (struct arg){&r, t};
        CHECK(pthread_create(&th[t], NULL, thread_main, &args[t]) == 0);
    }
    for (int t = 0; t < r.T; t++)
        pthread_join(th[t], NULL);
    CHECK(r.received == (uint64_t)r.T * (uint64_t)r.count);
    for (size_t i = 0; i < (size_t)r.T * (size_t)r.count; i++)
        CHECK(r.seen[i] == 1);

    OK(weft_barrier(r.ctx));
    OK(weft_ep_pool_destroy(r.pool));
    OK(weft_finalize(r.ctx));
    if (r.rank == 0)
        printf("%d threads x %d active messages on pool '%s' (%s lock) verified\n", r.T, r.count,
               argv[3], argv[4]);
    free(th);
    free(args);
    free(r.seen);
    return 0;
}
