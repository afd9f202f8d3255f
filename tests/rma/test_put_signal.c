/* Producer/consumer with put-with-signal: every rank streams messages to
 * its right neighbour through a ring of slots; the consumer waits on the
 * signal, then must see every byte of the message it announces. */
#include "../common.h"

#define SLOTS 8
#define SLOT  4096
#define MSGS  2000

int main(void)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t data, sig, credit;
    unsigned char *ring, buf[SLOT];
    uint64_t *signal, *credits;
    int rank, n;

    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, SLOTS * SLOT, &data, (void **)&ring));
    OK(weft_seg_alloc(ctx, 64, &sig, (void **)&signal));
    OK(weft_seg_alloc(ctx, 64, &credit, (void **)&credits));
    int right = (rank + 1) % n, left = (rank + n - 1) % n;
    uint64_t sent = 0, received = 0;

    while (sent < MSGS || received < MSGS) {
        /* produce while the consumer has returned slots (credits) */
        if (sent < MSGS && sent < credits[0] + SLOTS) {
            weft_event_t ev;
            size_t len = 1 + (size_t)(sent * 37) % SLOT;
            for (size_t i = 0; i < len; i++)
                buf[i] = test_pattern((unsigned)(rank * MSGS + sent), i);
            OK(weft_put_signal_nb(ep, right, data, (sent % SLOTS) * SLOT, buf, len, sig, 0, 1, &ev));
            OK(weft_wait(&ev));  /* buf is reused for the next message */
            sent++;
        }
        /* consume what has been announced */
        if (received < MSGS && __atomic_load_n(&signal[0], __ATOMIC_ACQUIRE) > received) {
            uint64_t seen;
            OK(weft_signal_wait_until(ep, sig, 0, received + 1, &seen));
            size_t len = 1 + (size_t)(received * 37) % SLOT;
            const unsigned char *m = ring + (received % SLOTS) * SLOT;
            for (size_t i = 0; i < len; i++)
                CHECK(m[i] == test_pattern((unsigned)(left * MSGS + received), i));
            received++;
            OK(weft_atomic_add_nbi(ep, left, credit, 0, 1));
            OK(weft_flush(ep));
        } else {
            OK(weft_progress(ep, NULL));
        }
    }
    OK(weft_barrier(ctx));
    CHECK(signal[0] == MSGS);
    OK(weft_seg_free(ctx, credit));
    OK(weft_seg_free(ctx, sig));
    OK(weft_seg_free(ctx, data));
    OK(weft_finalize(ctx));
    if (rank == 0)
        printf("%d signalled messages per rank verified on %d ranks\n", MSGS, n);
    return 0;
}
