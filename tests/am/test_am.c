/* Active messages: every rank sends to every other rank messages with
 * headers and payloads from 0 bytes to 1 MiB (past the eager limit, so
 * rendezvous too); each handler checks what it got and counts it. */
#include "../common.h"

#include <string.h>

static const size_t sizes[] = {0, 1, 8, 100, 4096, 8192, 65536, 1u << 20};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

struct hdr {
    uint32_t size_index;
    uint32_t seq;
};

/* counted by the handlers, which run on the progress thread when there is
 * one, and read by the main thread */
static int received;

static void on_message(weft_ctx_t ctx, int src, const void *hdr, size_t hdr_len,
                       const void *payload, size_t len, void *arg)
{
    struct hdr h;
    const unsigned char *p = payload;

    (void)ctx;
    CHECK(arg == &received);
    CHECK(hdr_len == sizeof(h));
    memcpy(&h, hdr, sizeof(h));
    CHECK(h.size_index < NSIZES);
    CHECK(len == sizes[h.size_index]);
    for (size_t i = 0; i < len; i++)
        CHECK(p[i] == test_pattern((unsigned)(src * 100 + (int)h.seq), i));
    __atomic_fetch_add(&received, 1, __ATOMIC_RELEASE);
}

int main(void)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    unsigned char *buf;
    int rank, n;

    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    OK(weft_am_register(ctx, 5, on_message, (void *)&received));
    FAILS(weft_am_register(ctx, 5, on_message, NULL), WEFT_ERR_BUSY);
    OK(weft_barrier(ctx));  /* every handler is registered before anyone sends */

    buf = malloc(1u << 20);
    CHECK(buf != NULL);
    for (int dst = 0; dst < n; dst++) {
        if (dst == rank)
            continue;
        for (uint32_t k = 0; k < NSIZES; k++) {
            struct hdr h = {k, k};
            for (size_t i = 0; i < sizes[k]; i++)
                buf[i] = test_pattern((unsigned)(rank * 100 + (int)k), i);
            if (k % 2) {
                OK(weft_am_send(ep, dst, 5, &h, sizeof(h), buf, sizes[k]));
            } else {
                weft_event_t ev;
                OK(weft_am_send_nb(ep, dst, 5, &h, sizeof(h), buf, sizes[k], &ev));
                OK(weft_wait(&ev));
            }
        }
    }
    int expected = (n - 1) * (int)NSIZES;
    while (__atomic_load_n(&received, __ATOMIC_ACQUIRE) < expected)
        OK(weft_progress(ep, NULL));
    OK(weft_barrier(ctx));
    CHECK(__atomic_load_n(&received, __ATOMIC_ACQUIRE) == expected);

    OK(weft_am_register(ctx, 5, NULL, NULL));
    FAILS(weft_am_send(ep, (rank + 1) % n, 5, NULL, 0, NULL, 0), WEFT_ERR_AM_ID);
    free(buf);
    OK(weft_finalize(ctx));
    if (rank == 0)
        printf("active messages of %zu sizes (0 B .. 1 MiB) verified on %d ranks\n", NSIZES, n);
    return 0;
}
