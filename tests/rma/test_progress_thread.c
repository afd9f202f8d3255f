/* One-sided operations complete while the target computes.  Rank 0 gets,
 * puts and adds into every other rank while those ranks spin in plain C
 * code, never calling weft, until a flag put by rank 0 arrives.  With
 * --expect-served (run with WEFT_PROGRESS_THREAD=1) all of it must complete
 * before the targets return to weft: a target stops computing only when the
 * flag arrives, and gives up (test fails) after 60 s.  Without the option
 * the same program checks the data only (the transport may need the target
 * to progress). */
#include "../common.h"

#include <stdatomic.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg;
    uint64_t *local, v, one = 1;
    int rank, n, served = argc > 1 && strcmp(argv[1], "--expect-served") == 0;

    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, 4096, &seg, (void **)&local));
    local[0] = 1000 + (uint64_t)rank;
    OK(weft_barrier(ctx));

    if (rank == 0) {
        for (int t = 1; t < n; t++) {
            for (int i = 0; i < 100; i++) {
                OK(weft_get(ep, &v, t, seg, 0, sizeof(v)));
                CHECK(v == 1000 + (uint64_t)t + (uint64_t)i);
                OK(weft_atomic_add_nbi(ep, t, seg, 0, 1));
                OK(weft_flush(ep));
            }
            OK(weft_put(ep, t, seg, 64, &one, sizeof(one)));
        }
    } else {
        _Atomic uint64_t *flag = (_Atomic uint64_t *)&local[8];
        volatile double sink = 0;
        double t0 = now();
        int arrived = 1;
        if (served) {
            while (atomic_load_explicit(flag, memory_order_acquire) == 0) {
                for (int k = 0; k < 10000; k++)
                    sink += k;
                if (now() - t0 > 60.0) {
                    arrived = 0;
                    break;
                }
            }
        }
        CHECK(arrived);
    }
    OK(weft_barrier(ctx));
    if (rank > 0) {
        CHECK(local[0] == 1000 + (uint64_t)rank + 100);
        CHECK(local[8] == 1);
    }
    OK(weft_seg_free(ctx, seg));
    OK(weft_finalize(ctx));
    if (rank == 0)
        printf("operations into computing targets completed on %d ranks%s\n", n,
               served ? " (served by the progress thread)" : "");
    return 0;
}
