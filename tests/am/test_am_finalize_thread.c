/* weft_finalize while the progress thread still handles active messages:
 * every rank sends COUNT messages (0 B to 256 KiB: eager and rendezvous)
 * to the other ranks and calls weft_finalize as soon as its sends are
 * complete, when many have not been handled at their targets yet.  The
 * handlers run on the progress thread while weft_finalize tears the am
 * layer down (the instrumented builds look for its memory used after it
 * was freed).  Every message is handled exactly once, intact, and before
 * weft_finalize returns on its target: a sender's completion does not mean
 * its target has handled it (the last word of a rendezvous may still wait
 * in the target's queues), and the target handles what waits there before
 * it frees the layer.
 *
 * Usage: test_am_finalize_thread COUNT  (with WEFT_PROGRESS_THREAD=1) */
#include "../common.h"

#include <string.h>

#define ID     12
#define MAXLEN (256u << 10)

static uint64_t       received;   /* atomic */
static int            finalized;  /* atomic */
static unsigned char *seen;       /* [src * count + seq] */
static uint32_t       count;

static size_t len_of(uint32_t seq)
{
    static const size_t lens[] = {0, 100, 8192, 65536, MAXLEN};
    return lens[seq % (sizeof(lens) / sizeof(lens[0]))];
}

static void on_message(weft_ctx_t ctx, int src, const void *hdr, size_t hdr_len,
                       const void *payload, size_t len, void *arg)
{
    const unsigned char *p = payload;
    uint32_t seq;

    (void)ctx, (void)arg;
    CHECK(!__atomic_load_n(&finalized, __ATOMIC_ACQUIRE));
    CHECK(hdr_len == sizeof(seq));
    memcpy(&seq, hdr, sizeof(seq));
    CHECK(seq < count && len == len_of(seq));
    for (size_t i = 0; i < len; i += 97)
        CHECK(p[i] == test_pattern((unsigned)src * 7919u + seq, i));
    CHECK(__atomic_exchange_n(&seen[(size_t)src * count + seq], 1, __ATOMIC_RELAXED) == 0);
    __atomic_fetch_add(&received, 1, __ATOMIC_RELAXED);
}

int main(int argc, char **argv)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_event_t *ev;
    unsigned char **bufs;
    uint32_t *seqs;
    int rank, n;

    if (argc != 2) {
        fprintf(stderr, "usage: %s COUNT\n", argv[0]);
        return 2;
    }
    count = (uint32_t)atoi(argv[1]);
    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    CHECK((seen = calloc((size_t)n * count, 1)) != NULL);
    OK(weft_am_register(ctx, ID, on_message, NULL));
    OK(weft_barrier(ctx));

    ev = calloc((size_t)count * (size_t)n, sizeof(*ev));
    bufs = calloc((size_t)count * (size_t)n, sizeof(*bufs));
    seqs = calloc(count, sizeof(*seqs));
    CHECK(ev != NULL && bufs != NULL && seqs != NULL);
    for (uint32_t seq = 0; seq < count; seq++)
        seqs[seq] = seq;
    for (int dst = 0; dst < n; dst++) {
        if (dst == rank)
            continue;
        for (uint32_t seq = 0; seq < count; seq++) {
            size_t k = (size_t)dst * count + seq, len = len_of(seq);

            CHECK((bufs[k] = malloc(len ? len : 1)) != NULL);
            for (size_t i = 0; i < len; i++)
                bufs[k][i] = test_pattern((unsigned)rank * 7919u + seq, i);
            OK(weft_am_send_nb(ep, dst, ID, &seqs[seq], sizeof(seqs[seq]), bufs[k], len, &ev[k]));
        }
    }
    for (size_t k = 0; k < (size_t)count * (size_t)n; k++)
        if (bufs[k] != NULL)
            OK(weft_wait(&ev[k]));
    OK(weft_finalize(ctx));
    __atomic_store_n(&finalized, 1, __ATOMIC_RELEASE);
    for (int src = 0; src < n; src++)
        for (uint32_t seq = 0; src != rank && seq < count; seq++)
            if (!seen[(size_t)src * count + seq])
                fprintf(stderr, "rank %d: message %u of rank %d (%zu bytes) not handled before "
                        "weft_finalize returned\n", rank, seq, src, len_of(seq));
    CHECK(received == (uint64_t)count * (uint64_t)(n - 1));
    for (size_t k = 0; k < (size_t)count * (size_t)n; k++)
        free(bufs[k]);
    free(bufs);
    free(ev);
    free(seqs);
    free(seen);
    if (rank == 0)
        printf("%u active messages per rank pair in flight at weft_finalize, all handled "
               "before it returned, on %d ranks\n", count, n);
    return 0;
}
