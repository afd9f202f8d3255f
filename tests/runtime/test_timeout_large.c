/* WEFT_TIMEOUT_MS set in weft_config_t to a value past what nanoseconds
 * since boot can add (ULONG_MAX: "never", for a program that means it)
 * must bound no wait at all, not end every wait at once.  Rank 1 joins a
 * barrier late; rank 0 waits for it. */
#include "../common.h"

#include <limits.h>
#include <unistd.h>

int main(void)
{
    weft_config_t cfg;
    weft_ctx_t ctx;
    int rank;

    OK(weft_config_init(&cfg));
    cfg.timeout_ms = ULONG_MAX;
    OK(weft_init(&cfg, &ctx));
    OK(weft_rank(ctx, &rank));
    if (rank == 1)
        usleep(300000);
    OK(weft_barrier(ctx));
    OK(weft_finalize(ctx));
    if (rank == 0)
        printf("timeout ULONG_MAX: waits are not bounded\n");
    return 0;
}
