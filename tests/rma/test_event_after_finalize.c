/* An event still outstanding at weft_finalize: weft_wait and weft_test of
 * it afterwards return WEFT_ERR_NOT_INIT with a message, and read no freed
 * memory (run under AddressSanitizer too).  Each rank leaves non-blocking
 * gets and an active message of its own unwaited, finalises, then waits. */
#include "../common.h"

#include <string.h>

#define BYTES (1 << 20)
#define AM_ID 2

static void on_message(weft_ctx_t ctx, int src, const void *hdr, size_t hdr_len,
                       const void *payload, size_t len, void *arg)
{
    (void)ctx; (void)src; (void)hdr; (void)hdr_len; (void)payload; (void)len; (void)arg;
}

int main(void)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg;
    weft_event_t ev[8];
    int rank, n, peer, outstanding = 0, done;
    static char buf[8][BYTES];

    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    OK(weft_am_register(ctx, AM_ID, on_message, NULL));
    OK(weft_seg_alloc(ctx, BYTES, &seg, NULL));
    OK(weft_barrier(ctx));
    peer = (rank + 1) % n;
    for (int i = 0; i < 7; i++)
        OK(weft_get_nb(ep, buf[i], peer, seg, 0, BYTES, &ev[i]));
    OK(weft_am_send_nb(ep, peer, AM_ID, NULL, 0, buf[7], BYTES, &ev[7]));
    for (int i = 0; i < 8; i++)
        outstanding += ev[i] != WEFT_EVENT_NULL;
    /* the direct path completes at once and makes no event: nothing to test */
    OK(weft_finalize(ctx));
    for (int i = 0; i < 8; i++) {
        if (ev[i] == WEFT_EVENT_NULL)
            continue;
        if (i % 2 == 0) {
            FAILS(weft_wait(&ev[i]), WEFT_ERR_NOT_INIT);
        } else {
            FAILS(weft_test(&ev[i], &done), WEFT_ERR_NOT_INIT);
        }
        CHECK(strstr(weft_last_error(), "finalised") != NULL);
        /* the event is consumed: a second wait is a no-op */
        CHECK(ev[i] == WEFT_EVENT_NULL);
        OK(weft_wait(&ev[i]));
    }
    printf("rank %d: %d events outstanding at weft_finalize refused\n", rank, outstanding);
    CHECK(outstanding > 0);
    return 0;
}
