/* WEFT_TIMEOUT_MS on a rank that is alive but silent: rank 2 stops itself
 * (SIGSTOP), so its process and sockets live on but it answers nothing.
 * Rank 0's blocking get from it over TCP must end after WEFT_TIMEOUT_MS
 * with WEFT_ERR_TIMEOUT and the rank declared failed; the next operation
 * to it is refused with WEFT_ERR_PEER_FAILED; rank 1 stays reachable.
 * Rank 0 then wakes rank 2 (SIGCONT), whose own weft_finalize must end
 * too (its peers no longer wait for it).  Also weft_rank_failed's bad
 * input.  Run with 3 ranks, UCX_TLS=tcp,self WEFT_SHM=0 WEFT_TIMEOUT_MS,
 * under mpirun --enable-recovery. */
#include "../common.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(void)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg;
    weft_config_t cfg;
    uint64_t *mine, v = 0;
    int me, n, failed;
    int pids[3], pid;
    weft_status_t st;

    OK(weft_config_init(&cfg));
    CHECK(cfg.timeout_ms >= 100);
    OK(weft_init(&cfg, &ctx));
    OK(weft_rank(ctx, &me));
    OK(weft_nranks(ctx, &n));
    CHECK(n == 3);
    FAILS(weft_rank_failed(NULL, 0, &failed), WEFT_ERR_NOT_INIT);
    FAILS(weft_rank_failed(ctx, 0, NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_rank_failed(ctx, -1, &failed), WEFT_ERR_RANK);
    FAILS(weft_rank_failed(ctx, n, &failed), WEFT_ERR_RANK);
    for (int r = 0; r < n; r++) {
        OK(weft_rank_failed(ctx, r, &failed));
        CHECK(failed == 0);
    }
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, 4096, &seg, (void **)&mine));
    mine[0] = 100 + (uint64_t)me;
    pid = (int)getpid();
    MPI_Allgather(&pid, 1, MPI_INT, pids, 1, MPI_INT, MPI_COMM_WORLD);
    OK(weft_barrier(ctx));

    if (me == 2) {
        raise(SIGSTOP);
        /* woken by rank 0, which now counts this rank as failed: the
         * final barrier is not joined by the others and ends with the
         * timeout */
        st = weft_finalize(ctx);
        CHECK(st == WEFT_ERR_TIMEOUT || st == WEFT_ERR_PEER_FAILED);
        printf("PASS rank 2 finalize %s\n", weft_strerror(st));
        return 0;
    }
    if (me == 0) {
        double t;

        usleep(100000);   /* rank 2 stops */
        t = now_ms();
        st = weft_get(ep, &v, 2, seg, 0, sizeof(v));
        t = now_ms() - t;
        if (st != WEFT_ERR_TIMEOUT) {
            fprintf(stderr, "FAIL: get from a stopped rank -> %s (%s) after %.0f ms\n",
                    weft_strerror(st), weft_last_error(), t);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        CHECK(t >= (double)cfg.timeout_ms * 0.99 && t < 2.0 * (double)cfg.timeout_ms + 1000.0);
        OK(weft_rank_failed(ctx, 2, &failed));
        CHECK(failed == 1);
        FAILS(weft_get(ep, &v, 2, seg, 0, sizeof(v)), WEFT_ERR_PEER_FAILED);
        FAILS(weft_barrier(ctx), WEFT_ERR_PEER_FAILED);
        OK(weft_get(ep, &v, 1, seg, 0, sizeof(v)));
        CHECK(v == 101);
        /* tell rank 1 it may go, then wake rank 2 */
        v = 1;
        OK(weft_put(ep, 1, seg, 8, &v, sizeof(v)));
        kill(pids[2], SIGCONT);
        printf("PASS rank 0 timeout after %.0f ms\n", t);
    } else {
        /* rank 0 takes a timeout or two to get here */
        int tries = 0;

        while ((st = weft_signal_wait_until(ep, seg, 8, 1, NULL)) == WEFT_ERR_TIMEOUT && ++tries < 5)
            ;
        OK(st);
        printf("PASS rank 1\n");
    }
    /* rank 0 knows rank 2 failed; rank 1 does not, and its final barrier
     * ends with the timeout */
    st = weft_finalize(ctx);
    CHECK(st == WEFT_ERR_PEER_FAILED || (me == 1 && st == WEFT_ERR_TIMEOUT));
    return 0;
}
