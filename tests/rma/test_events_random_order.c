/* Many explicit-event puts and gets in flight at once, completed in a
 * random order, some by polling weft_test and some by weft_wait. */
#include "../common.h"

#include <string.h>

#define NOPS  512
#define CHUNK 1024

int main(void)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg;
    unsigned char *local, *src, *dst;
    weft_event_t ev[NOPS];
    int order[NOPS];
    int rank, n;

    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, 2 * NOPS * CHUNK, &seg, (void **)&local));
    src = malloc(NOPS * CHUNK);
    dst = malloc(NOPS * CHUNK);
    CHECK(src && dst);
    srand(1000 + (unsigned)rank);
    int right = (rank + 1) % n, left = (rank + n - 1) % n;

    /* the upper half of every segment holds data to be read by gets */
    for (size_t i = 0; i < NOPS * CHUNK; i++)
        local[NOPS * CHUNK + i] = test_pattern(7 + (unsigned)rank, i);
    OK(weft_barrier(ctx));

    for (int i = 0; i < NOPS; i++) {
        for (size_t b = 0; b < CHUNK; b++)
            src[(size_t)i * CHUNK + b] = test_pattern((unsigned)(rank * NOPS + i), b);
        if (i % 2 == 0)
            OK(weft_put_nb(ep, right, seg, (size_t)i * CHUNK, src + (size_t)i * CHUNK, CHUNK, &ev[i]));
        else
            OK(weft_get_nb(ep, dst + (size_t)i * CHUNK, right, seg, NOPS * CHUNK + (size_t)i * CHUNK,
                           CHUNK, &ev[i]));
        order[i] = i;
    }
    for (int i = NOPS - 1; i > 0; i--) {
        int j = rand() % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int k = 0; k < NOPS; k++) {
        weft_event_t *e = &ev[order[k]];
        if (k % 3 == 0) {
            int done = 0;
            while (!done)
                OK(weft_test(e, &done));
            CHECK(*e == WEFT_EVENT_NULL);
        } else {
            OK(weft_wait(e));
        }
        /* a completed event is consumed: testing and waiting again is a no-op */
        int done = 0;
        OK(weft_test(e, &done));
        CHECK(done == 1);
        OK(weft_wait(e));
    }
    for (int i = 1; i < NOPS; i += 2)
        for (size_t b = 0; b < CHUNK; b++)
            CHECK(dst[(size_t)i * CHUNK + b] == test_pattern(7 + (unsigned)right, (size_t)i * CHUNK + b));
    OK(weft_flush(ep));
    OK(weft_barrier(ctx));
    for (int i = 0; i < NOPS; i += 2)
        for (size_t b = 0; b < CHUNK; b++)
            CHECK(local[(size_t)i * CHUNK + b] == test_pattern((unsigned)(left * NOPS + i), b));

    /* weft_wait_all over a fresh batch */
    for (int i = 0; i < NOPS; i++)
        OK(weft_get_nb(ep, dst + (size_t)i * CHUNK, right, seg, NOPS * CHUNK + (size_t)i * CHUNK,
                       CHUNK, &ev[i]));
    OK(weft_wait_all(ev, NOPS));
    for (int i = 0; i < NOPS; i++)
        CHECK(ev[i] == WEFT_EVENT_NULL);
    for (size_t b = 0; b < NOPS * CHUNK; b++)
        CHECK(dst[b] == test_pattern(7 + (unsigned)right, b));

    free(src);
    free(dst);
    OK(weft_seg_free(ctx, seg));
    OK(weft_finalize(ctx));
    if (rank == 0)
        printf("%d events completed in random order on %d ranks\n", NOPS, n);
    return 0;
}
