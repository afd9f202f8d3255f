/* The direct path's memory model, across processes: every rank streams
 * messages to its right neighbour through a ring of slots and the consumer
 * checks that data written before a signal is always seen after it.  The
 * producer announces each message in one of three ways, in turn:
 *   - weft_put_signal_nb (the add is a release),
 *   - weft_put_nbi, weft_flush, weft_atomic_add_nbi, weft_flush,
 *   - stores through weft_ptr, then a 0-byte weft_put_signal_nb
 *     (only where the neighbour is mapped; else the first way);
 * the consumer waits with weft_signal_wait_until (an acquire) and reads the
 * slot with plain loads.  Run with the direct path and with WEFT_SHM=0, and
 * over emulated nodes where some neighbours are direct and some not.
 *
 *   test_memory_model [MESSAGES]   (default 20000) */
#include "../common.h"

#include <string.h>

#define SLOTS 4
#define SLOT  512

static size_t msg_len(uint64_t i)
{
    static const size_t lens[] = {8, 1, 24, 64, 200, SLOT};
    return lens[i % (sizeof(lens) / sizeof(lens[0]))];
}

int main(int argc, char **argv)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t data, sig;
    unsigned char *ring, buf[SLOT];
    uint64_t *words;          /* [0]: messages announced to me, [1]: slots returned to me */
    uint64_t msgs = argc > 1 ? strtoull(argv[1], NULL, 10) : 20000;
    int rank, n, mapped;
    void *peer;

    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, SLOTS * SLOT, &data, (void **)&ring));
    OK(weft_seg_alloc(ctx, 64, &sig, (void **)&words));
    int right = (rank + 1) % n, left = (rank + n - 1) % n;
    weft_status_t st = weft_ptr(ctx, right, data, 0, &peer);
    CHECK(st == WEFT_OK || st == WEFT_ERR_UNSUPPORTED);
    mapped = st == WEFT_OK;

    for (uint64_t i = 0; i < msgs; i++) {
        /* produce message i into slot i % SLOTS once the consumer returned it */
        OK(weft_signal_wait_until(ep, sig, 8, i < SLOTS ? 0 : i - SLOTS + 1, NULL));
        size_t len = msg_len(i), off = (i % SLOTS) * SLOT;
        unsigned tag = (unsigned)((uint64_t)rank * msgs + i);
        int how = (int)(i % 3);
        weft_event_t ev;

        if (how == 2 && mapped) {
            for (size_t k = 0; k < len; k++)
                ((unsigned char *)peer)[off + k] = test_pattern(tag, k);
            OK(weft_put_signal_nb(ep, right, data, off, buf, 0, sig, 0, 1, &ev));
            OK(weft_wait(&ev));
        } else {
            for (size_t k = 0; k < len; k++)
                buf[k] = test_pattern(tag, k);
            if (how == 1) {
                OK(weft_put_nbi(ep, right, data, off, buf, len));
                OK(weft_flush(ep));
                OK(weft_atomic_add_nbi(ep, right, sig, 0, 1));
                OK(weft_flush(ep));
            } else {
                OK(weft_put_signal_nb(ep, right, data, off, buf, len, sig, 0, 1, &ev));
                OK(weft_wait(&ev));
            }
        }
        /* consume message i from the left */
        uint64_t seen;
        OK(weft_signal_wait_until(ep, sig, 0, i + 1, &seen));
        CHECK(seen >= i + 1 && seen <= i + SLOTS);
        const unsigned char *m = ring + (i % SLOTS) * SLOT;
        unsigned ltag = (unsigned)((uint64_t)left * msgs + i);
        for (size_t k = 0; k < msg_len(i); k++)
            if (m[k] != test_pattern(ltag, k)) {
                fprintf(stderr, "rank %d: message %llu byte %zu is %u, expected %u\n", rank,
                        (unsigned long long)i, k, m[k], test_pattern(ltag, k));
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        OK(weft_atomic_add_nbi(ep, left, sig, 8, 1));
        OK(weft_flush(ep));
    }
    OK(weft_barrier(ctx));
    CHECK(words[0] == msgs);
    OK(weft_seg_free(ctx, sig));
    OK(weft_seg_free(ctx, data));
    OK(weft_finalize(ctx));
    if (rank == 0)
        printf("%llu messages per rank verified on %d ranks (right neighbour %s)\n",
               (unsigned long long)msgs, n, mapped ? "mapped" : "through UCX");
    return 0;
}
