/* Atomics from several threads of every rank on one word: THREADS threads
 * per rank each add 1 to a word of rank 0 ITERS times (fetch-and-add) and
 * ITERS times more without fetching; the final value is exact.  Until
 * per-thread endpoints exist, the threads share the context's default
 * endpoint, which allows one thread at a time, so each call is made under
 * a per-rank lock: what is exercised is weft and UCX under
 * MPI_THREAD_MULTIPLE with threads that interleave calls, including the
 * progress thread when WEFT_PROGRESS_THREAD=1. */
#include "../common.h"

#include <pthread.h>

#define THREADS 2
#define ITERS   3000

static weft_ep_t       ep;
static weft_seg_t      seg;
static int             nranks;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *hammer(void *arg)
{
    uint64_t old, last = 0;

    (void)arg;
    for (int i = 0; i < ITERS; i++) {
        pthread_mutex_lock(&lock);
        OK(weft_atomic_fetch_add(ep, 0, seg, 0, 1, &old));
        OK(weft_atomic_add_nbi(ep, 0, seg, 0, 1));
        pthread_mutex_unlock(&lock);
        /* the word only grows, and no add is counted twice */
        CHECK(old >= last && old < 2ull * ITERS * THREADS * (uint64_t)nranks);
        last = old;
    }
    pthread_mutex_lock(&lock);
    OK(weft_flush(ep));
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(int argc, char **argv)
{
    weft_ctx_t ctx;
    uint64_t  *local;
    pthread_t  t[THREADS];
    int        rank, provided;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK(provided == MPI_THREAD_MULTIPLE);
    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &nranks));
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, 4096, &seg, (void **)&local));

    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&t[i], NULL, hammer, NULL) == 0);
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
    OK(weft_barrier(ctx));
    uint64_t expected = 2ull * ITERS * THREADS * (uint64_t)nranks;
    if (rank == 0) {
        CHECK(local[0] == expected);
        printf("%d threads x %d ranks: word = %llu, exact\n", THREADS, nranks,
               (unsigned long long)local[0]);
    }
    OK(weft_seg_free(ctx, seg));
    OK(weft_finalize(ctx));
    MPI_Finalize();
    return 0;
}
