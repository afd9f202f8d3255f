/* Active-message lengths are checked before anything reaches UCX: a
 * payload longer than WEFT_AM_MAX_PAYLOAD ((size_t)-1 among them) is
 * WEFT_ERR_TOO_LARGE, one that runs past the end of the address space is
 * WEFT_ERR_INVALID_ARG, a header over WEFT_AM_MAX_HDR WEFT_ERR_TOO_LARGE,
 * each with a message; nothing is sent, so the peer sees no message and
 * both ranks go on (a good message still arrives). */
#include "../common.h"

#include <string.h>

#define AM_ID 4

static int got;

static void on_message(weft_ctx_t ctx, int src, const void *hdr, size_t hdr_len,
                       const void *payload, size_t len, void *arg)
{
    (void)ctx; (void)hdr; (void)hdr_len; (void)payload; (void)arg;
    CHECK(src == 0 && len == 8);
    got++;
}

int main(void)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_event_t ev = WEFT_EVENT_NULL;
    int rank, n;
    uint64_t dropped;
    char buf[WEFT_AM_MAX_HDR + 1] = {0};

    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    OK(weft_am_register(ctx, AM_ID, on_message, NULL));
    OK(weft_barrier(ctx));
    if (rank == 0) {
        FAILS(weft_am_send(ep, 1, AM_ID, NULL, 0, buf, (size_t)-1), WEFT_ERR_TOO_LARGE);
        CHECK(strstr(weft_last_error(), "WEFT_AM_MAX_PAYLOAD") != NULL);
        FAILS(weft_am_send_nb(ep, 1, AM_ID, NULL, 0, buf, (size_t)-1, &ev), WEFT_ERR_TOO_LARGE);
        FAILS(weft_am_send(ep, 1, AM_ID, NULL, 0, buf, WEFT_AM_MAX_PAYLOAD + 1),
              WEFT_ERR_TOO_LARGE);
        /* within the limit, but past the end of the address space */
        FAILS(weft_am_send(ep, 1, AM_ID, NULL, 0, (const void *)(UINTPTR_MAX - 7), 16),
              WEFT_ERR_INVALID_ARG);
        CHECK(strstr(weft_last_error(), "address space") != NULL);
        FAILS(weft_am_send(ep, 1, AM_ID, buf, WEFT_AM_MAX_HDR + 1, buf, 8), WEFT_ERR_TOO_LARGE);
        CHECK(ev == WEFT_EVENT_NULL);
        OK(weft_am_send(ep, 1, AM_ID, buf, WEFT_AM_MAX_HDR, buf, 8));
        OK(weft_flush(ep));
    } else if (rank == 1) {
        while (got < 1)
            OK(weft_progress(ep, NULL));
    }
    OK(weft_barrier(ctx));
    OK(weft_am_dropped(ctx, &dropped));
    CHECK(dropped == 0);
    CHECK(got == (rank == 1 ? 1 : 0));
    OK(weft_finalize(ctx));
    return 0;
}
