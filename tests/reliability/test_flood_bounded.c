/* Backpressure: COUNT implicit puts without a flush (argument; 2 000 000 in
 * make check, 10^8 for the figure of docs/results/reliability.md: see docs/reliability.md)
 * keep weft's memory bounded, and every payload lands where it was sent.
 * Put i carries the word src[i % K] (src never changes before the flush)
 * to slot i of the right neighbour's segment, so the target checks each
 * slot's value and nothing lost or misplaced goes unseen.
 *
 * Prints this rank's peak RSS (getrusage) and how its private memory
 * (RssAnon of /proc/self/status) grew while the puts were issued, when
 * queued operations peak, just before the flush; fails when that growth
 * exceeds LIMIT_MIB.  Peak RSS also counts the shared pages of the
 * neighbour's segment that UCX maps here over shared memory and the puts
 * touch (8 bytes per put), which are not weft's to bound. */
#include "../common.h"

#include <string.h>
#include <sys/resource.h>

#define K         4096
#define LIMIT_MIB 64

static long peak_rss_kib(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* Resident private (anonymous) memory now, in KiB. */
static long anon_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char  line[256];
    long  kib = -1;

    CHECK(f != NULL);
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "RssAnon: %ld kB", &kib) == 1)
            break;
    fclose(f);
    CHECK(kib >= 0);
    return kib;
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
    long anon_before = anon_kib();

    for (uint64_t i = 0; i < count; i++)
        OK(weft_put_nbi(ep, right, seg, i * sizeof(uint64_t), &src[i % K], sizeof(uint64_t)));
    long growth = anon_kib() - anon_before;
    OK(weft_flush(ep));
    OK(weft_barrier(ctx));

    uint64_t wrong = 0;
    for (uint64_t i = 0; i < count; i++)
        wrong += local[i] != (((uint64_t)left << 48) | (i % K + 1));
    CHECK(wrong == 0);

    printf("rank %d: %llu implicit puts, one flush, all verified; peak RSS %.1f MiB "
           "(segments %.1f MiB); private memory grew %.1f MiB while issuing\n",
           rank, (unsigned long long)count, peak_rss_kib() / 1024.0,
           2.0 * (double)count * sizeof(uint64_t) / (1 << 20), growth / 1024.0);
    CHECK(WEFT_TEST_ASAN || growth < LIMIT_MIB * 1024L);
    OK(weft_seg_free(ctx, seg));
    OK(weft_finalize(ctx));
    return 0;
}
