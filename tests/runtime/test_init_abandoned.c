/* weft_init that gives up on one of its collective steps (WEFT_TIMEOUT_MS
 * expired while another rank was late) leaves that MPI operation pending:
 * it must then leave MPI alone, as weft_finalize does after a failure --
 * neither free the communicator nor finalise MPI, which would progress
 * the pending operation on memory that is gone, or wait for every rank.
 * Rank 1 is made late inside weft_init (WEFT_PROFILE: the first selection
 * calibrates the timer for about 0.1 s); rank 0 waits at most 10 ms.
 * weft_init initialises MPI here, so the error path is the one that would
 * finalise it.  Run with 2 ranks under mpirun --enable-recovery: the
 * ranks exit without MPI_Finalize, as the header tells programs to after
 * a failure. */
#include "../common.h"

#include <string.h>

/* The launcher's rank, before MPI is initialised (Open MPI, MPICH). */
static int launcher_rank(void)
{
    const char *r = getenv("OMPI_COMM_WORLD_RANK");

    if (r == NULL)
        r = getenv("PMI_RANK");
    return r != NULL ? atoi(r) : -1;
}

int main(void)
{
    weft_config_t cfg;
    weft_ctx_t ctx;
    weft_status_t st;
    int rank = launcher_rank();

    if (rank == 1) {
        setenv("WEFT_PROFILE", "1", 1);
        setenv("WEFT_PROFILE_FILE", "/dev/null", 1);
    }
    OK(weft_config_init(&cfg));
    /* rank 1 waits long enough for rank 0 to have been and gone */
    cfg.timeout_ms = rank == 0 ? 10 : 2000;
    st = weft_init(&cfg, &ctx);
    if (rank == 0) {
        if (st != WEFT_ERR_TIMEOUT || strncmp(weft_last_error(), "weft_init: ", 11) != 0) {
            printf("FAIL: rank 0 weft_init -> %s (%s), expected WEFT_ERR_TIMEOUT from weft_init\n",
                   weft_strerror(st), weft_last_error());
            return 1;
        }
        printf("PASS rank 0: %s\n", weft_last_error());
        return 0;
    }
    /* rank 1 may have completed the step rank 0 left; nothing else of it
     * can complete */
    if (st == WEFT_OK)
        st = weft_finalize(ctx);
    printf("PASS rank 1: %s\n", weft_strerror(st));
    return 0;
}
