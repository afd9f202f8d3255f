/* Backpressure: COUNT implicit puts without a flush (argument; 2 000 000 in
 * make check, 10^8 for the figure of the README: see reliability/README)
 * keep weft's memory bounded, and every payload lands where it was sent.
 * Put i carries the word src[i % K] (src never changes before the flush)
 * to slot i of the right neighbour's segment, so the target checks each
 * slot's value and nothing lost or misplaced goes unseen.
 *
 * Prints this rank's peak RSS (getrusage) and its growth during the flood,
 * beyond the segment and buffers allocated before it; fails when the
 * growth exceeds LIMIT_MIB: without backpressure a TCP flood keeps one
 * UCX request per outstanding put, gigabytes for 10^8. */
#include "../common.h"

#include <string.h>
#include <sys/resource.h>

#define K         4096
#define LIMIT_MIB 256

static long peak_rss_kib(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

int main(int argc, char **argv)
{
    weft_ctx_t ctx;
    weft_ep_t  ep;
    weft_seg_t seg;
    uint64_t  *local, src[K];
    uint64_t   count = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;
    int        rank, n;

    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    CHECK(count > 0);
    OK(weft_seg_alloc(ctx, count * sizeof(uint64_t), &seg, (void **)&local));

    int right = (rank + 1) % n, left = (rank + n - 1) % n;
    for (uint64_t k = 0; k < K; k++)
        src[k] = ((uint64_t)rank << 48) | (k + 1);
    /* connection and key set up, then the baseline */
    OK(weft_put(ep, right, seg, 0, &src[0], sizeof(uint64_t)));
    OK(weft_barrier(ctx));
    long before = peak_rss_kib();

    for (uint64_t i = 0; i < count; i++)
        OK(weft_put_nbi(ep, right, seg, i * sizeof(uint64_t), &src[i % K], sizeof(uint64_t)));
    long after_issue = peak_rss_kib();
    OK(weft_flush(ep));
    OK(weft_barrier(ctx));
    long after = peak_rss_kib();

    uint64_t wrong = 0;
    for (uint64_t i = 0; i < count; i++)
        wrong += local[i] != (((uint64_t)left << 48) | (i % K + 1));
    CHECK(wrong == 0);

    long growth = after - before;
    printf("rank %d: %llu implicit puts, one flush, all verified; peak RSS %.1f MiB, "
           "growth during the flood %.1f MiB (%.1f MiB while issuing)\n",
           rank, (unsigned long long)count, after / 1024.0, growth / 1024.0,
           (after_issue - before) / 1024.0);
    CHECK(growth < LIMIT_MIB * 1024L);
    OK(weft_seg_free(ctx, seg));
    OK(weft_finalize(ctx));
    return 0;
}
