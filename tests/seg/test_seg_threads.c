/* Segments and endpoint-pool threads (weft.h, weft_seg_alloc and
 * weft_seg_free).  2 ranks, a pool of T threads per rank:
 *  - the legal pattern: the threads put to a segment (their target
 *    entries of it filled), flush, are joined; the main thread frees it;
 *    a segment allocated afterwards reuses their target tables, and a put
 *    to the freed one is WEFT_ERR_SEG;
 *  - the same with threads that stay alive, waiting at a barrier of the
 *    program's while the main thread frees a segment and allocates the
 *    next;
 *  - a segment allocated while the threads put to another one;
 *  - misuse: a pool thread leaves a put that no weft_flush completed and
 *    the segment is freed: over UCX, WEFT_ERR_BUSY on every rank, naming
 *    the thread, and nothing freed (the put still lands once the endpoint
 *    is flushed); on the direct path the put was complete when issued.
 * Run over UCX (WEFT_SHM=0) and the direct path; under TSan (check-tsan)
 * the legal patterns must be free of races. */
#include "../common.h"

#include <pthread.h>
#include <string.h>

#define T    2
#define SLOT 64                    /* bytes per (writer rank, thread) */
#define SIZE (2 * T * SLOT)

static int rank, peer;
static weft_ep_pool_t pool;

struct job {
    int           t;
    weft_seg_t    seg;             /* where the thread puts */
    unsigned      tag;
    int           flush;           /* weft_flush after the put */
    weft_seg_t    freed;           /* a freed segment, or NULL */
    volatile int *stop;            /* loop until set, or NULL: once */
};

static size_t slot(int writer, int t)
{
    return ((size_t)writer * T + (size_t)t) * SLOT;
}

static void *worker(void *arg)
{
    struct job *j = arg;
    unsigned char buf[SLOT];
    weft_ep_t ep;

    OK(weft_ep_get(pool, j->t, &ep));
    for (size_t i = 0; i < SLOT; i++)
        buf[i] = test_pattern(j->tag + (unsigned)j->t, i);
    do {
        OK(weft_put_nbi(ep, peer, j->seg, slot(rank, j->t), buf, SLOT));
        if (j->flush)
            OK(weft_flush(ep));
    } while (j->stop && !__atomic_load_n(j->stop, __ATOMIC_ACQUIRE));
    if (j->freed)
        FAILS(weft_put_nbi(ep, peer, j->freed, 0, buf, SLOT), WEFT_ERR_SEG);
    return NULL;
}

/* Start the T threads of the pool on jobs (one each), join them. */
static void start(pthread_t *th, struct job *jobs)
{
    for (int t = 0; t < T; t++)
        CHECK(pthread_create(&th[t], NULL, worker, &jobs[t]) == 0);
}

static void join(pthread_t *th)
{
    for (int t = 0; t < T; t++)
        CHECK(pthread_join(th[t], NULL) == 0);
}

static void run(struct job *jobs)
{
    pthread_t th[T];

    start(th, jobs);
    join(th);
}

static void set_jobs(struct job *jobs, weft_seg_t seg, unsigned tag, int flush, weft_seg_t freed)
{
    for (int t = 0; t < T; t++)
        jobs[t] = (struct job){.t = t, .seg = seg, .tag = tag, .flush = flush, .freed = freed};
}

/* After a barrier: the peer's threads' slots of our part hold their tag;
 * then a barrier again, before the peer writes them anew. */
static void verify(weft_ctx_t ctx, const unsigned char *part, unsigned tag)
{
    OK(weft_barrier(ctx));
    for (int t = 0; t < T; t++)
        for (size_t i = 0; i < SLOT; i++)
            if (part[slot(peer, t) + i] != test_pattern(tag + (unsigned)t, i)) {
                fprintf(stderr, "rank %d: byte %zu of thread %d's slot is %u, want %u (tag %u)\n",
                        rank, i, t, part[slot(peer, t) + i], test_pattern(tag + (unsigned)t, i),
                        tag);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
    OK(weft_barrier(ctx));
}

/* The threads that stay: put to *seg_d and flush, wait while the main
 * thread checks, frees it and allocates *seg_e, then put to that. */
static pthread_barrier_t quiet;
static weft_seg_t seg_d, seg_e;

static void *staying_worker(void *arg)
{
    int t = *(int *)arg;
    unsigned char buf[SLOT];
    weft_ep_t ep;

    OK(weft_ep_get(pool, t, &ep));
    for (size_t i = 0; i < SLOT; i++)
        buf[i] = test_pattern(6u + (unsigned)t, i);
    OK(weft_put_nbi(ep, peer, seg_d, slot(rank, t), buf, SLOT));
    OK(weft_flush(ep));
    pthread_barrier_wait(&quiet);  /* quiet: the main thread frees */
    pthread_barrier_wait(&quiet);
    for (size_t i = 0; i < SLOT; i++)
        buf[i] = test_pattern(7u + (unsigned)t, i);
    OK(weft_put_nbi(ep, peer, seg_e, slot(rank, t), buf, SLOT));
    OK(weft_flush(ep));
    FAILS(weft_put_nbi(ep, peer, seg_d, slot(rank, t), buf, SLOT), WEFT_ERR_SEG);
    return NULL;
}

/* Thread t of the pool flushes its endpoint (its owner under WEFT_CHECK). */
static void *flusher(void *arg)
{
    weft_ep_t ep;

    OK(weft_ep_get(pool, *(int *)arg, &ep));
    OK(weft_flush(ep));
    return NULL;
}

int main(void)
{
    weft_ep_pool_params_t pp;
    struct job jobs[T];
    weft_ctx_t ctx;
    weft_seg_t a, b, c;
    unsigned char *pa, *pb, *pc;
    volatile int stop = 0;
    pthread_t th[T];
    void *direct;
    int provided, nranks, one = 1;

    MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &nranks));
    CHECK(nranks == 2);
    peer = 1 - rank;
    memset(&pp, 0, sizeof(pp));
    pp.nthreads = T;
    pp.policy = "dedicated";
    OK(weft_ep_pool_create(ctx, &pp, &pool));

    /* The legal pattern: put, flush, join; then the main thread frees. */
    OK(weft_seg_alloc(ctx, SIZE, &a, (void **)&pa));
    set_jobs(jobs, a, 1, 1, NULL);
    run(jobs);
    verify(ctx, pa, 1);
    OK(weft_seg_free(ctx, a));

    /* A segment allocated after: the threads' tables of the freed one are
     * gone, theirs are reused; a put to the freed one is refused. */
    OK(weft_seg_alloc(ctx, SIZE, &b, (void **)&pb));
    set_jobs(jobs, b, 2, 1, a);
    run(jobs);
    verify(ctx, pb, 2);

    /* Allocating while the pool's threads put to another segment. */
    set_jobs(jobs, b, 3, 1, NULL);
    for (int t = 0; t < T; t++)
        jobs[t].stop = &stop;
    start(th, jobs);
    OK(weft_seg_alloc(ctx, SIZE, &c, (void **)&pc));
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    join(th);
    verify(ctx, pb, 3);
    set_jobs(jobs, c, 4, 1, a);
    run(jobs);
    verify(ctx, pc, 4);
    OK(weft_seg_free(ctx, b));

    /* Threads that stay alive, quiet at the program's barrier. */
    unsigned char *pd, *pe;
    int ids[T];
    CHECK(pthread_barrier_init(&quiet, NULL, T + 1) == 0);
    OK(weft_seg_alloc(ctx, SIZE, &seg_d, (void **)&pd));
    for (int t = 0; t < T; t++) {
        ids[t] = t;
        CHECK(pthread_create(&th[t], NULL, staying_worker, &ids[t]) == 0);
    }
    pthread_barrier_wait(&quiet);
    verify(ctx, pd, 6);
    OK(weft_seg_free(ctx, seg_d));
    OK(weft_seg_alloc(ctx, SIZE, &seg_e, (void **)&pe));
    pthread_barrier_wait(&quiet);
    join(th);
    verify(ctx, pe, 7);
    OK(weft_seg_free(ctx, seg_e));
    pthread_barrier_destroy(&quiet);

    /* Misuse: rank 1's thread 1 leaves a put unflushed. */
    if (rank == 1) {
        set_jobs(jobs, c, 5, 0, NULL);
        pthread_create(&th[0], NULL, worker, &jobs[1]);
        pthread_join(th[0], NULL);
    }
    if (weft_ptr(ctx, peer, c, 0, &direct) == WEFT_OK) {
        OK(weft_seg_free(ctx, c));  /* the direct path's put was complete when issued */
    } else {
        FAILS(weft_seg_free(ctx, c), WEFT_ERR_BUSY);
        if (strstr(weft_last_error(),
                   rank == 1 ? "weft_seg_free: endpoint of pool thread 1 has operations"
                             : "weft_seg_free: another rank failed") == NULL) {
            fprintf(stderr, "rank %d: weft_seg_free's message: %s\n", rank, weft_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        /* nothing was freed: once flushed by its thread, the put lands */
        if (rank == 1) {
            pthread_create(&th[0], NULL, flusher, &one);
            pthread_join(th[0], NULL);
        }
        OK(weft_barrier(ctx));
        if (rank == 0)
            CHECK(pc[slot(1, 1)] == test_pattern(5 + 1, 0) &&
                  pc[slot(1, 1) + SLOT - 1] == test_pattern(5 + 1, SLOT - 1));
        OK(weft_seg_free(ctx, c));
    }
    FAILS(weft_seg_free(ctx, c), WEFT_ERR_SEG);

    OK(weft_ep_pool_destroy(pool));
    OK(weft_finalize(ctx));
    if (rank == 0)
        printf("segments and pool threads: legal patterns work, an unflushed pool endpoint is "
               "refused\n");
    MPI_Finalize();
    return 0;
}
