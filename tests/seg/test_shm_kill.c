/* A rank killed (SIGKILL) after its segments are cross-mapped: run by
 * check_shm_kill.sh, which then checks that no weft file stays in
 * /dev/shm.  The killed rank cannot clean anything up, so this holds only
 * because every name was unlinked before weft_seg_alloc returned. */
#include "../common.h"

#include <signal.h>
#include <unistd.h>

int main(void)
{
    weft_ctx_t ctx;
    weft_seg_t a, b;
    void *p;
    int rank, n;

    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_seg_alloc(ctx, 1 << 20, &a, NULL));
    OK(weft_seg_alloc(ctx, 4096, &b, NULL));
    /* the segments are mapped across ranks */
    OK(weft_ptr(ctx, (rank + 1) % n, a, 0, &p));
    OK(weft_barrier(ctx));
    if (rank == n - 1) {
        printf("rank %d: segments mapped, killing myself\n", rank);
        fflush(stdout);
        raise(SIGKILL);
    }
    /* the others wait to be taken down by the launcher */
    sleep(30);
    return 3;
}
