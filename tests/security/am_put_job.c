/* The victim of check_cross_user.sh: two ranks that send each other active
 * messages (eager and rendezvous) and put into each other's segments over
 * UCX (run with WEFT_SHM=0, so UCX's shared memory carries it all) until
 * told to stop, checking every payload and every word that arrives.
 *
 *   am_put_job PIDFILE STOPFILE
 *
 * Each rank appends "rank pid" to PIDFILE once its segment exists and the
 * first messages have gone both ways, and stops when STOPFILE exists (or
 * after 120 s).  A payload or word that is not what was sent is reported
 * ("AM PAYLOAD ALTERED", "SEGMENT DATA ALTERED") and fails the job. */
#include "../common.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

#define SMALL  256           /* eager */
#define LARGE  (64 << 10)    /* rendezvous */
#define SEG    (1 << 20)

static unsigned long received, altered;

/* The byte i of message seq from rank src. */
static unsigned char pattern(int src, uint64_t seq, size_t i)
{
    return (unsigned char)(src * 131 + seq * 7 + i);
}

static void handler(weft_ctx_t ctx, int src, const void *hdr, size_t hdr_len,
                    const void *payload, size_t len, void *arg)
{
    const unsigned char *p = payload;
    uint64_t seq;

    (void)ctx;
    (void)arg;
    if (hdr_len != sizeof(seq) || (len != SMALL && len != LARGE)) {
        altered++;
        return;
    }
    memcpy(&seq, hdr, sizeof(seq));
    for (size_t i = 0; i < len; i++)
        if (p[i] != pattern(src, seq, i)) {
            altered++;
            return;
        }
    received++;
}

static double now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    static unsigned char buf[LARGE];
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg;
    volatile uint64_t *local;
    double end;
    int rank, n, peer;
    uint64_t seq = 0, bad_words = 0;

    if (argc != 3) {
        fprintf(stderr, "usage: %s PIDFILE STOPFILE\n", argv[0]);
        return 2;
    }
    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    CHECK(n == 2);
    peer = 1 - rank;
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, SEG, &seg, (void **)&local));
    OK(weft_am_register(ctx, 1, handler, NULL));
    OK(weft_barrier(ctx));

    end = now() + 120;
    for (int announced = 0; now() < end; seq++) {
        size_t len = (seq & 1) ? LARGE : SMALL;
        uint64_t word = ((uint64_t)rank << 56) | seq;

        for (size_t i = 0; i < len; i++)
            buf[i] = pattern(rank, seq, i);
        OK(weft_am_send(ep, peer, 1, &seq, sizeof(seq), buf, len));
        /* every word this rank's peer puts is its rank in the top byte */
        OK(weft_put(ep, peer, seg, (seq % 64) * 8, &word, sizeof(word)));
        OK(weft_progress(ep, NULL));
        for (int i = 0; i < 64; i++)
            if (local[i] != 0 && local[i] >> 56 != (uint64_t)peer)
                bad_words++;
        if (!announced && seq >= 16 && received > 0) {
            FILE *f = fopen(argv[1], "a");

            CHECK(f != NULL);
            fprintf(f, "%d %d\n", rank, (int)getpid());
            fclose(f);
            announced = 1;
        }
        if ((seq & 255) == 0 && access(argv[2], F_OK) == 0)
            break;
    }
    OK(weft_barrier(ctx));
    if (altered > 0)
        printf("rank %d: AM PAYLOAD ALTERED in %lu of %lu messages\n", rank, altered,
               altered + received);
    if (bad_words > 0)
        printf("rank %d: SEGMENT DATA ALTERED (%lu words)\n", rank, (unsigned long)bad_words);
    CHECK(altered == 0 && bad_words == 0 && received > 0);
    printf("rank %d: %lu messages and %lu puts, none altered\n", rank, received,
           (unsigned long)seq);
    OK(weft_finalize(ctx));
    return 0;
}
