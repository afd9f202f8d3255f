/* weft_ep_pool_destroy waits for every rank; when WEFT_TIMEOUT_MS ends that
 * wait, its error names weft_ep_pool_destroy, the call the user made (not
 * a call it makes inside).  Rank 1 comes late: it sleeps past rank 0's
 * timeout (2 s) and then leaves without destroying, as a program does
 * after a failure.  The timed-out collective stays pending, so neither
 * rank finalises: run with 2 ranks under mpirun --enable-recovery; the
 * output says whether it passed. */
#include "../common.h"

#include <string.h>
#include <unistd.h>

#define FN "weft_ep_pool_destroy: "

int main(void)
{
    weft_ep_pool_params_t pp;
    weft_ep_pool_t pool;
    weft_config_t cfg;
    weft_ctx_t ctx;
    weft_status_t st;
    int provided, rank;

    MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    OK(weft_config_init(&cfg));
    cfg.timeout_ms = rank == 0 ? 2000 : 20000;
    OK(weft_init(&cfg, &ctx));
    memset(&pp, 0, sizeof(pp));
    pp.nthreads = 1;
    OK(weft_ep_pool_create(ctx, &pp, &pool));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        sleep(4);
        printf("PASS rank 1\n");
        return 0;
    }
    st = weft_ep_pool_destroy(pool);
    if (st != WEFT_ERR_TIMEOUT || strncmp(weft_last_error(), FN, strlen(FN)) != 0) {
        printf("FAIL: weft_ep_pool_destroy -> %s (%s), expected WEFT_ERR_TIMEOUT from "
               "weft_ep_pool_destroy\n", weft_strerror(st), weft_last_error());
        return 1;
    }
    printf("PASS rank 0: %s\n", weft_last_error());
    return 0;
}
