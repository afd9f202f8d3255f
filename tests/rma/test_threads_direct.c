/* Threads of one process on the direct path, concurrently, each with an
 * endpoint of its own (a "dedicated" pool).  Each of THREADS threads runs
 * its own producer/consumer stream to the same thread of the right
 * neighbour, alternating weft_ptr stores + a release flag with
 * weft_put_signal_nb on its endpoint, and adds to a counter of the
 * neighbour that every thread of every rank shares with
 * weft_atomic_fetch_add.  Needs every rank mapped (direct path on). */
#include "../common.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>

#define THREADS 3
#define ITERS   5000
#define BLOCK   64

/* layout of the segment, per thread: data block, flag, ack; then a counter */
struct lane {
    unsigned char data[BLOCK];
    uint64_t      flag, ack;
    char          pad[64 - 2 * sizeof(uint64_t)];
};
struct layout {
    struct lane lanes[THREADS];
    uint64_t    counter;
};

static weft_ctx_t ctx;
static weft_ep_pool_t pool;
static weft_seg_t seg;
static struct layout *mine, *right_part;
static int rank, n, right, left;

static void *lane_main(void *arg)
{
    int t = (int)(intptr_t)arg;
    struct lane *out = &right_part->lanes[t], *in = &mine->lanes[t];
    unsigned char buf[BLOCK];
    weft_ep_t ep;

    OK(weft_ep_get(pool, t, &ep));

    for (uint64_t i = 0; i < ITERS; i++) {
        unsigned tag = (unsigned)(((uint64_t)rank * THREADS + (uint64_t)t) * ITERS + i);
        unsigned ltag = (unsigned)(((uint64_t)left * THREADS + (uint64_t)t) * ITERS + i);
        uint64_t old;

        /* the right neighbour's thread t has read block i - 1 */
        while (__atomic_load_n(&mine->lanes[t].ack, __ATOMIC_ACQUIRE) < i)
            sched_yield();  /* threads outnumber cores */
        if (i % 2 == 0) {
            for (size_t k = 0; k < BLOCK; k++)
                out->data[k] = test_pattern(tag, k);
            __atomic_store_n(&out->flag, i + 1, __ATOMIC_RELEASE);
        } else {
            weft_event_t ev;
            for (size_t k = 0; k < BLOCK; k++)
                buf[k] = test_pattern(tag, k);
            OK(weft_put_signal_nb(ep, right, seg, offsetof(struct layout, lanes[t].data), buf, BLOCK,
                                  seg, offsetof(struct layout, lanes[t].flag), 1, &ev));
            CHECK(ev == WEFT_EVENT_NULL);  /* direct: born complete */
        }
        /* block i from the left neighbour's thread t */
        while (__atomic_load_n(&in->flag, __ATOMIC_ACQUIRE) < i + 1)
            sched_yield();
        for (size_t k = 0; k < BLOCK; k++)
            CHECK(in->data[k] == test_pattern(ltag, k));
        void *ack;
        OK(weft_ptr(ctx, left, seg, offsetof(struct layout, lanes[t].ack), &ack));
        __atomic_fetch_add((uint64_t *)ack, 1, __ATOMIC_RELEASE);
        if (i % 16 == 0)
            OK(weft_atomic_fetch_add(ep, right, seg, offsetof(struct layout, counter), 1, &old));
    }
    return NULL;
}

int main(void)
{
    pthread_t th[THREADS];

    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    weft_ep_pool_params_t params = {.nthreads = THREADS, .policy = "dedicated"};
    OK(weft_ep_pool_create(ctx, &params, &pool));
    OK(weft_seg_alloc(ctx, sizeof(struct layout), &seg, (void **)&mine));
    right = (rank + 1) % n;
    left = (rank + n - 1) % n;
    OK(weft_ptr(ctx, right, seg, 0, (void **)&right_part));
    for (int t = 0; t < THREADS; t++)
        CHECK(pthread_create(&th[t], NULL, lane_main, (void *)(intptr_t)t) == 0);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    OK(weft_barrier(ctx));
    CHECK(mine->counter == (uint64_t)THREADS * ((ITERS + 15) / 16));
    for (int t = 0; t < THREADS; t++)
        CHECK(mine->lanes[t].flag == ITERS && mine->lanes[t].ack == ITERS);
    OK(weft_ep_pool_destroy(pool));
    OK(weft_seg_free(ctx, seg));
    OK(weft_finalize(ctx));
    if (rank == 0)
        printf("%d threads x %d blocks per rank verified on %d ranks\n", THREADS, ITERS, n);
    return 0;
}
