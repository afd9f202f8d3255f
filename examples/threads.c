/* threads.c: several threads per rank, each with an endpoint of its own.
 *
 * Every rank keeps an inbox in its segment: a counter and an array of
 * records.  Each of THREADS threads of every rank appends ITEMS records to
 * the inbox of every other rank: it takes a free place with an atomic
 * fetch-and-add on the counter (the old value is its place, so no two
 * writers ever get the same one), then puts its record there.  At the end
 * every rank checks that its inbox holds each record it should get,
 * exactly once.
 *
 * An endpoint may be used by one thread at a time.  Threads that
 * communicate at the same time take theirs from an endpoint pool: with the
 * default policy ("dedicated") each thread has a UCX worker of its own, so
 * no thread waits for another's lock.
 *
 *   mpicc threads.c $(pkg-config --cflags --libs weft) -pthread -o threads
 *   mpirun -np 4 ./threads
 */
#include <weft.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 2  /* threads per rank */
#define ITEMS   64 /* records each thread sends to each other rank */

static void check(weft_status_t st, const char *call)
{
    if (st != WEFT_OK) {
        fprintf(stderr, "%s: %s (%s)\n", call, weft_strerror(st), weft_last_error());
        exit(EXIT_FAILURE);
    }
}
#define TRY(call) check((call), #call)

/* One record: who sent it.  8 bytes, so one put carries it. */
struct record {
    uint16_t rank, thread, item, nonzero; /* nonzero: an empty place is all zeros */
};

/* The segment of every rank: the inbox counter, then its places.  The
 * counter is the target of atomics, so it sits on an 8-byte boundary. */
#define COUNTER_OFF 0
#define RECORD_OFF(i) (8 + (size_t)(i) * sizeof(struct record))

static weft_ctx_t ctx;
static weft_ep_pool_t pool;
static weft_seg_t seg;
static int rank, n;

static void *sender(void *arg)
{
    int t = (int)(intptr_t)arg;
    weft_ep_t ep;
    /* One source record per destination: a put_nbi reads its source until
     * the next weft_flush, so a record is rewritten only after that. */
    struct record *out = malloc((size_t)n * sizeof(*out));

    if (out == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(EXIT_FAILURE);
    }
    /* The endpoint of thread t: from now on only this thread uses it. */
    TRY(weft_ep_get(pool, t, &ep));
    for (int item = 0; item < ITEMS; item++) {
        for (int d = 1; d < n; d++) {
            int dst = (rank + d) % n;
            uint64_t place;

            TRY(weft_atomic_fetch_add(ep, dst, seg, COUNTER_OFF, 1, &place));
            out[dst] = (struct record){(uint16_t)rank, (uint16_t)t, (uint16_t)item, 1};
            TRY(weft_put_nbi(ep, dst, seg, RECORD_OFF(place), &out[dst], sizeof(out[dst])));
        }
        /* This round's records are in place at their targets. */
        TRY(weft_flush(ep));
    }
    free(out);
    return NULL;
}

int main(void)
{
    pthread_t threads[THREADS];
    unsigned char *mine;

    TRY(weft_init(NULL, &ctx)); /* MPI_THREAD_MULTIPLE, as threads need */
    TRY(weft_rank(ctx, &rank));
    TRY(weft_nranks(ctx, &n));
    size_t expected = (size_t)(n - 1) * THREADS * ITEMS;
    TRY(weft_seg_alloc(ctx, RECORD_OFF(expected), &seg, (void **)&mine));
    /* One endpoint per thread; creating the pool is local to this rank. */
    weft_ep_pool_params_t params = {.nthreads = THREADS};
    TRY(weft_ep_pool_create(ctx, &params, &pool));

    for (int t = 0; t < THREADS; t++)
        if (pthread_create(&threads[t], NULL, sender, (void *)(intptr_t)t) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return EXIT_FAILURE;
        }
    for (int t = 0; t < THREADS; t++)
        pthread_join(threads[t], NULL);
    /* Every rank's threads have flushed: every inbox is complete.  (The
     * barrier also serves the peers' operations that need this rank's
     * help, over TCP, while it waits.) */
    TRY(weft_barrier(ctx));

    /* Tick off each record; a duplicate, a stranger or a gap is an error. */
    int wrong = 0;
    uint64_t count = *(uint64_t *)(mine + COUNTER_OFF);
    unsigned char *seen = calloc(expected ? expected : 1, 1);
    if (seen == NULL) {
        fprintf(stderr, "out of memory\n");
        return EXIT_FAILURE;
    }
    if (count != expected)
        wrong++;
    for (size_t i = 0; i < expected; i++) {
        const struct record *r = (const struct record *)(mine + RECORD_OFF(i));
        int d = (rank - r->rank + n) % n; /* the sender's distance to us */
        if (!r->nonzero || r->rank >= n || r->rank == rank || r->thread >= THREADS ||
            r->item >= ITEMS) {
            wrong++;
            continue;
        }
        size_t who = ((size_t)(d - 1) * THREADS + r->thread) * ITEMS + r->item;
        if (seen[who]++)
            wrong++;
    }
    free(seen);
    printf("rank %d of %d: %llu records from %d threads on each other rank, %s\n", rank, n,
           (unsigned long long)count, THREADS, wrong ? "WRONG" : "each exactly once");

    /* Destroying the pool is collective; then the segment can go. */
    TRY(weft_ep_pool_destroy(pool));
    TRY(weft_seg_free(ctx, seg));
    TRY(weft_finalize(ctx));
    return wrong ? EXIT_FAILURE : EXIT_SUCCESS;
}
