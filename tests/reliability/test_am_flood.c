/* Active messages sent faster than the target handles them: every rank
 * sends COUNT messages (argument, default 20 000) with payloads of 0 to
 * 2 KiB to its right neighbour, keeping up to WINDOW sends outstanding,
 * while its handler is slow (it spins about 2 us per message).  Nothing
 * is lost or duplicated, every payload is verified, and memory stays
 * bounded (peak RSS growth under LIMIT_MIB).  The payloads average 1 KiB,
 * so with COUNT over LIMIT_MIB * 1024 (make check: 100 000, about 98 MiB)
 * a queue that kept every message would fail the check. */
#include "../common.h"

#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define WINDOW    256
#define MAXLEN    2048
#define LIMIT_MIB 32

static unsigned char *seen;     /* [count]: messages received per sequence number */
static uint64_t       received;
static int            sender;

static void slow_down(void)
{
    struct timespec t0, t;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 2000);
}

static size_t len_of(uint64_t seq)
{
    return (size_t)(seq * 37 % (MAXLEN + 1));
}

static void on_message(weft_ctx_t ctx, int src, const void *hdr, size_t hdr_len,
                       const void *payload, size_t len, void *arg)
{
    uint64_t             seq, count = *(uint64_t *)arg;
    const unsigned char *p = payload;

    (void)ctx;
    CHECK(src == sender && hdr_len == sizeof(seq));
    memcpy(&seq, hdr, sizeof(seq));
    CHECK(seq < count && len == len_of(seq));
    for (size_t i = 0; i < len; i++)
        CHECK(p[i] == test_pattern((unsigned)seq, i));
    CHECK(seen[seq] == 0);
    seen[seq] = 1;
    received++;
    slow_down();
}

int main(int argc, char **argv)
{
    weft_ctx_t     ctx;
    weft_ep_t      ep;
    weft_event_t   ev[WINDOW];
    unsigned char *buf[WINDOW];
    uint64_t       hdr[WINDOW];
    uint64_t       count = argc > 1 ? strtoull(argv[1], NULL, 10) : 20000;
    struct rusage  ru;
    int            rank, n;

    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    seen = calloc(count, 1);
    CHECK(seen != NULL);
    for (int w = 0; w < WINDOW; w++) {
        buf[w] = malloc(MAXLEN);
        CHECK(buf[w] != NULL);
        ev[w] = WEFT_EVENT_NULL;
    }
    sender = (rank + n - 1) % n;
    OK(weft_am_register(ctx, 9, on_message, &count));
    OK(weft_barrier(ctx));
    getrusage(RUSAGE_SELF, &ru);
    long before = ru.ru_maxrss;

    int right = (rank + 1) % n;
    for (uint64_t seq = 0; seq < count; seq++) {
        int w = (int)(seq % WINDOW);
        OK(weft_wait(&ev[w]));  /* the slot's previous send: its buffers are free */
        hdr[w] = seq;
        for (size_t i = 0; i < len_of(seq); i++)
            buf[w][i] = test_pattern((unsigned)seq, i);
        OK(weft_am_send_nb(ep, right, 9, &hdr[w], sizeof(hdr[w]), buf[w], len_of(seq), &ev[w]));
    }
    OK(weft_wait_all(ev, WINDOW));
    while (received < count)
        OK(weft_progress(ep, NULL));
    OK(weft_barrier(ctx));
    for (uint64_t seq = 0; seq < count; seq++)
        CHECK(seen[seq] == 1);
    getrusage(RUSAGE_SELF, &ru);
    printf("rank %d: %llu active messages to a slow handler, all received once and verified; "
           "peak RSS %.1f MiB, growth %.1f MiB\n", rank, (unsigned long long)count,
           ru.ru_maxrss / 1024.0, (ru.ru_maxrss - before) / 1024.0);
    CHECK(WEFT_TEST_ASAN || ru.ru_maxrss - before < LIMIT_MIB * 1024L);

    OK(weft_am_register(ctx, 9, NULL, NULL));
    for (int w = 0; w < WINDOW; w++)
        free(buf[w]);
    free(seen);
    OK(weft_finalize(ctx));
    return 0;
}
