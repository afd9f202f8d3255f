/* A rank that registered no handler at all receives active messages: each
 * is dropped and counted (weft_am_dropped), as weft.h says, and the rank
 * goes on; it must not crash in UCX for want of a receive handler.  Rank
 * 0 registers an id and sends every other rank an eager and a rendezvous
 * message; the others never call weft_am_register. */
#include "../common.h"

#include <string.h>

#define AM_ID 9
#define BIG   (256 * 1024)

static void on_message(weft_ctx_t ctx, int src, const void *hdr, size_t hdr_len,
                       const void *payload, size_t len, void *arg)
{
    (void)ctx; (void)src; (void)hdr; (void)hdr_len; (void)payload; (void)len; (void)arg;
    /* no rank but 0 has a handler, and rank 0 is sent nothing */
    CHECK(0);
}

int main(void)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    int rank, n;
    uint64_t dropped;
    static unsigned char payload[BIG];

    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    memset(payload, 0x5a, sizeof(payload));
    OK(weft_am_dropped(ctx, &dropped));
    CHECK(dropped == 0);
    if (rank == 0)
        OK(weft_am_register(ctx, AM_ID, on_message, NULL));
    OK(weft_barrier(ctx));
    if (rank == 0) {
        for (int r = 1; r < n; r++) {
            OK(weft_am_send(ep, r, AM_ID, "h", 1, payload, 8));
            OK(weft_am_send(ep, r, AM_ID, NULL, 0, payload, BIG));
        }
        OK(weft_flush(ep));
    } else {
        do {
            OK(weft_progress(ep, NULL));
            OK(weft_am_dropped(ctx, &dropped));
        } while (dropped < 2);
    }
    OK(weft_barrier(ctx));
    OK(weft_am_dropped(ctx, &dropped));
    CHECK(dropped == (rank == 0 ? 0u : 2u));
    if (rank == 1)
        printf("rank 1: %llu active messages without a handler dropped\n",
               (unsigned long long)dropped);
    OK(weft_finalize(ctx));
    return 0;
}
