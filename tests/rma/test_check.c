/* WEFT_CHECK=1 (set here through weft_config_t): every error the expensive
 * checks add, on the direct path and over UCX.
 *  - a local source or destination buffer that starts in a weft segment
 *    (this rank's part, or a peer's part mapped here) and runs past its
 *    end: WEFT_ERR_BOUNDS, nothing moved;
 *  - a pool endpoint, or an event of one, used by a thread other than the
 *    one that got it with weft_ep_get: WEFT_ERR_BUSY on puts, gets,
 *    atomics, signal waits, active messages, progress, flush, test, wait;
 *  - the owner itself keeps working, and so do legal buffers. */
#include "../common.h"

#include <pthread.h>
#include <string.h>

#define SEG 4096

static weft_ctx_t ctx;
static weft_seg_t seg;
static weft_ep_t owned;
static weft_event_t owned_ev;
static int rank, nranks, right, event_checked;

static void handler(weft_ctx_t c, int s, const void *h, size_t hl, const void *p, size_t l, void *a)
{
    (void)c; (void)s; (void)h; (void)hl; (void)p; (void)l; (void)a;
}

static void expect_check_message(void)
{
    if (strstr(weft_last_error(), "WEFT_CHECK") == NULL &&
        strstr(weft_last_error(), "does not own") == NULL) {
        fprintf(stderr, "last error '%s' does not say which check failed\n", weft_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Everything another thread may not do with `owned` and its event. */
static void *intruder(void *arg)
{
    uint64_t v = 1, old;
    unsigned count;
    int done;
    weft_event_t ev;

    (void)arg;
    FAILS(weft_put(owned, right, seg, 0, &v, 8), WEFT_ERR_BUSY);
    expect_check_message();
    FAILS(weft_put_nbi(owned, right, seg, 0, &v, 8), WEFT_ERR_BUSY);
    FAILS(weft_put_nb(owned, right, seg, 0, &v, 8, &ev), WEFT_ERR_BUSY);
    FAILS(weft_get(owned, &v, right, seg, 0, 8), WEFT_ERR_BUSY);
    FAILS(weft_get_nbi(owned, &v, right, seg, 0, 8), WEFT_ERR_BUSY);
    FAILS(weft_get_nb(owned, &v, right, seg, 0, 8, &ev), WEFT_ERR_BUSY);
    FAILS(weft_atomic_fetch_add(owned, right, seg, 0, 1, &old), WEFT_ERR_BUSY);
    FAILS(weft_atomic_add_nbi(owned, right, seg, 0, 1), WEFT_ERR_BUSY);
    FAILS(weft_atomic_cswap(owned, right, seg, 0, 0, 1, &old), WEFT_ERR_BUSY);
    FAILS(weft_put_signal_nb(owned, right, seg, 8, &v, 8, seg, 0, 1, &ev), WEFT_ERR_BUSY);
    FAILS(weft_signal_wait_until(owned, seg, 0, 0, NULL), WEFT_ERR_BUSY);
    FAILS(weft_am_send(owned, right, 1, NULL, 0, NULL, 0), WEFT_ERR_BUSY);
    FAILS(weft_progress(owned, &count), WEFT_ERR_BUSY);
    FAILS(weft_flush(owned), WEFT_ERR_BUSY);
    if (owned_ev != WEFT_EVENT_NULL) {
        FAILS(weft_test(&owned_ev, &done), WEFT_ERR_BUSY);
        FAILS(weft_wait(&owned_ev), WEFT_ERR_BUSY);
        CHECK(owned_ev != WEFT_EVENT_NULL);
        {
            /* the first failure, named by its place in the array */
            weft_event_t both[2] = {WEFT_EVENT_NULL, owned_ev};

            FAILS(weft_wait_all(both, 2), WEFT_ERR_BUSY);
            CHECK(strncmp(weft_last_error(), "weft_wait_all: event 1 of 2: weft_wait: ", 40) == 0);
            CHECK(both[1] == owned_ev);
        }
        event_checked = 1;
    }
    return NULL;
}

int main(void)
{
    weft_config_t cfg;
    weft_ep_t ep;
    weft_ep_pool_t pool;
    weft_ep_pool_params_t pp;
    unsigned char *local, *peer = NULL, big[2 * SEG];
    uint64_t v = 42;
    pthread_t t;

    OK(weft_config_init(&cfg));
    cfg.check = 1;
    OK(weft_init(&cfg, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &nranks));
    right = (rank + 1) % nranks;
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, SEG, &seg, (void **)&local));
    OK(weft_am_register(ctx, 1, handler, NULL));
    memset(big, 7, sizeof(big));
    OK(weft_barrier(ctx));

    /* local buffers that start in a segment and run past its end */
    FAILS(weft_put(ep, right, seg, 0, local + SEG - 4, 8), WEFT_ERR_BOUNDS);
    expect_check_message();
    FAILS(weft_put_nbi(ep, right, seg, 0, local + SEG - 1, 2), WEFT_ERR_BOUNDS);
    FAILS(weft_get(ep, local + SEG - 8, right, seg, 0, 16), WEFT_ERR_BOUNDS);
    FAILS(weft_get_nbi(ep, local + 1, right, seg, 0, SEG), WEFT_ERR_BOUNDS);
    weft_event_t ev;
    FAILS(weft_put_nb(ep, right, seg, 0, local + SEG / 2, SEG / 2 + 1, &ev), WEFT_ERR_BOUNDS);
    FAILS(weft_get_nb(ep, local + SEG - 4, right, seg, 0, 8, &ev), WEFT_ERR_BOUNDS);
    FAILS(weft_put_signal_nb(ep, right, seg, 0, local + SEG - 4, 8, seg, 8, 1, &ev),
          WEFT_ERR_BOUNDS);
    /* a peer's part mapped here (direct path only) */
    if (weft_ptr(ctx, right, seg, 0, (void **)&peer) == WEFT_OK && right != rank) {
        FAILS(weft_put(ep, right, seg, 0, peer + SEG - 4, 8), WEFT_ERR_BOUNDS);
        OK(weft_put(ep, rank, seg, 0, peer + SEG - 8, 8));
    }
    /* legal: inside a segment, and buffers outside every segment of any size */
    OK(weft_put(ep, right, seg, 0, local + SEG - 8, 8));
    OK(weft_put(ep, right, seg, 0, big, SEG));
    OK(weft_get(ep, local, right, seg, 0, SEG));
    OK(weft_put_nbi(ep, right, seg, 8, &v, 8));
    OK(weft_flush(ep));
    OK(weft_barrier(ctx));

    /* ownership of pool endpoints and their events */
    memset(&pp, 0, sizeof(pp));
    pp.nthreads = 1;
    pp.policy = "dedicated";
    OK(weft_ep_pool_create(ctx, &pp, &pool));
    OK(weft_ep_get(pool, 0, &owned));
    OK(weft_get_nb(owned, &v, right, seg, 0, 8, &owned_ev));
    CHECK(pthread_create(&t, NULL, intruder, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    /* the owner still may */
    OK(weft_wait(&owned_ev));
    OK(weft_put(owned, right, seg, 16, &v, 8));
    OK(weft_flush(owned));
    OK(weft_barrier(ctx));
    OK(weft_ep_pool_destroy(pool));

    OK(weft_seg_free(ctx, seg));
    OK(weft_finalize(ctx));
    if (rank == 0)
        printf("WEFT_CHECK: every bounds and ownership misuse refused%s\n",
               event_checked ? ", events too" : " (the get completed at once: no event to check)");
    return 0;
}
