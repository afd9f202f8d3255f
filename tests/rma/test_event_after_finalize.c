/* An event still outstanding at weft_finalize: weft_wait and weft_test of
 * it afterwards return WEFT_ERR_NOT_INIT with a message, and read no freed
 * memory (run under AddressSanitizer too).  Each rank leaves non-blocking
 * gets and an active message of its own unwaited, on the default endpoint
 * (the home worker) and on endpoints of pools that have workers of their
 * own, and finalises, then waits.  A pool destroyed with an event
 * outstanding gives the same answer, while the context lives on. */
#include "../common.h"

#include <string.h>

#define BYTES (1 << 20)
#define AM_ID 2
#define NEV   12

static void on_message(weft_ctx_t ctx, int src, const void *hdr, size_t hdr_len,
                       const void *payload, size_t len, void *arg)
{
    (void)ctx; (void)src; (void)hdr; (void)hdr_len; (void)payload; (void)len; (void)arg;
}

/* Wait (even i) or test (odd i) a stale event: refused, consumed. */
static void refused(weft_event_t *ev, int i, const char *why)
{
    int done;

    if (i % 2 == 0) {
        FAILS(weft_wait(ev), WEFT_ERR_NOT_INIT);
    } else {
        FAILS(weft_test(ev, &done), WEFT_ERR_NOT_INIT);
    }
    CHECK(strstr(weft_last_error(), why) != NULL);
    /* the event is consumed: a second wait is a no-op */
    CHECK(*ev == WEFT_EVENT_NULL);
    OK(weft_wait(ev));
}

/* A pool of one thread whose endpoint has a worker of its own. */
static weft_ep_t pool_ep(weft_ctx_t ctx, const char *policy, weft_ep_pool_t *pool)
{
    weft_ep_pool_params_t pp;
    weft_ep_t ep;

    memset(&pp, 0, sizeof(pp));
    pp.nthreads = 1;
    pp.policy = policy;
    OK(weft_ep_pool_create(ctx, &pp, pool));
    OK(weft_ep_get(*pool, 0, &ep));
    return ep;
}

int main(void)
{
    weft_ctx_t ctx;
    weft_ep_t ep, dedicated, process, gone;
    weft_ep_pool_t p1, p2, p3;
    weft_seg_t seg;
    weft_event_t ev[NEV], early;
    int rank, n, peer, outstanding = 0;
    static char buf[NEV + 1][BYTES];

    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    dedicated = pool_ep(ctx, "dedicated", &p1);
    process = pool_ep(ctx, "process", &p2);   /* a UCX context of its own too */
    gone = pool_ep(ctx, "dedicated", &p3);
    OK(weft_am_register(ctx, AM_ID, on_message, NULL));
    OK(weft_seg_alloc(ctx, BYTES, &seg, NULL));
    OK(weft_barrier(ctx));
    peer = (rank + 1) % n;

    /* a pool destroyed under an event of its endpoint */
    OK(weft_get_nb(gone, buf[NEV], peer, seg, 0, BYTES, &early));
    OK(weft_ep_pool_destroy(p3));
    if (early != WEFT_EVENT_NULL)
        refused(&early, 0, "pool destroyed");

    for (int i = 0; i < 7; i++)
        OK(weft_get_nb(ep, buf[i], peer, seg, 0, BYTES, &ev[i]));
    OK(weft_am_send_nb(ep, peer, AM_ID, NULL, 0, buf[7], BYTES, &ev[7]));
    for (int i = 8; i < 10; i++)
        OK(weft_get_nb(dedicated, buf[i], peer, seg, 0, BYTES, &ev[i]));
    for (int i = 10; i < NEV; i++)
        OK(weft_get_nb(process, buf[i], peer, seg, 0, BYTES, &ev[i]));
    for (int i = 0; i < NEV; i++)
        outstanding += ev[i] != WEFT_EVENT_NULL;
    /* the direct path completes at once and makes no event: nothing to test */
    OK(weft_finalize(ctx));
    for (int i = 0; i < NEV; i++)
        if (ev[i] != WEFT_EVENT_NULL)
            refused(&ev[i], i, "finalised");
    printf("rank %d: %d events outstanding at weft_finalize refused\n", rank, outstanding);
    CHECK(outstanding > 0);
    return 0;
}
