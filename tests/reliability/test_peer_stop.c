/* WEFT_TIMEOUT_MS on a rank that is alive but silent: ranks 2 and 3 stop
 * themselves (SIGSTOP), so their processes and sockets live on but they
 * answer nothing.  Rank 0's blocking get from rank 2 over TCP must end
 * after WEFT_TIMEOUT_MS with WEFT_ERR_TIMEOUT and the rank declared
 * failed; the next operation to it is refused with WEFT_ERR_PEER_FAILED;
 * rank 1 stays reachable.  The same for a blocking active message to rank
 * 3 (1 MiB: rendezvous, which needs the target), behind an implicit put
 * to it that the failure then cancels: the next weft_flush reports it,
 * once, under its own name.  Rank 0 then wakes ranks
 * 2 and 3 (SIGCONT), whose own weft_finalize must end too (their peers no
 * longer wait for them).  Also weft_rank_failed's bad input.  Run with 4
 * ranks, UCX_TLS=tcp,self WEFT_SHM=0 WEFT_TIMEOUT_MS, under mpirun
 * --enable-recovery. */
#include "../common.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void on_message(weft_ctx_t ctx, int src, const void *hdr, size_t hdr_len,
                       const void *payload, size_t len, void *arg)
{
    (void)ctx, (void)src, (void)hdr, (void)hdr_len, (void)payload, (void)len, (void)arg;
}

#define AM_BYTES (1u << 20)
#define PUT_BYTES (16u << 20)   /* more than the sockets hold: still in flight */

int main(void)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg, bigseg;
    weft_config_t cfg;
    uint64_t *mine, v = 0;
    int me, n, failed;
    int pids[4], pid;
    char *big;
    weft_status_t st;

    OK(weft_config_init(&cfg));
    CHECK(cfg.timeout_ms >= 100);
    OK(weft_init(&cfg, &ctx));
    OK(weft_rank(ctx, &me));
    OK(weft_nranks(ctx, &n));
    CHECK(n == 4);
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
    OK(weft_am_register(ctx, 1, on_message, NULL));
    OK(weft_seg_alloc(ctx, PUT_BYTES, &bigseg, NULL));
    big = calloc(1, PUT_BYTES);
    CHECK(big != NULL);
    pid = (int)getpid();
    MPI_Allgather(&pid, 1, MPI_INT, pids, 1, MPI_INT, MPI_COMM_WORLD);
    OK(weft_barrier(ctx));

    if (me >= 2) {
        raise(SIGSTOP);
        /* woken by rank 0, which now counts this rank as failed: the
         * final barrier is not joined by the others and ends with the
         * timeout */
        st = weft_finalize(ctx);
        CHECK(st == WEFT_ERR_TIMEOUT || st == WEFT_ERR_PEER_FAILED);
        printf("PASS rank %d finalize %s\n", me, weft_strerror(st));
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
        /* a blocking active message is a blocking operation too */
        OK(weft_put_nbi(ep, 3, bigseg, 0, big, PUT_BYTES));
        t = now_ms();
        st = weft_am_send(ep, 3, 1, NULL, 0, big, AM_BYTES);
        t = now_ms() - t;
        if (st != WEFT_ERR_TIMEOUT) {
            fprintf(stderr, "FAIL: active message to a stopped rank -> %s (%s) after %.0f ms\n",
                    weft_strerror(st), weft_last_error(), t);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        OK(weft_rank_failed(ctx, 3, &failed));
        if (failed != 1) {
            fprintf(stderr, "FAIL: rank 3 not declared failed after weft_am_send expired (%s)\n",
                    weft_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        FAILS(weft_am_send(ep, 3, 1, NULL, 0, big, 1), WEFT_ERR_PEER_FAILED);
        /* the put was lost with rank 3: weft_flush says so, once */
        st = weft_flush(ep);
        if (st != WEFT_ERR_PEER_FAILED || strncmp(weft_last_error(), "weft_flush: ", 12) != 0) {
            fprintf(stderr, "FAIL: flush after a lost put -> %s (%s)\n", weft_strerror(st),
                    weft_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        OK(weft_flush(ep));
        OK(weft_get(ep, &v, 1, seg, 0, sizeof(v)));
        CHECK(v == 101);
        /* tell rank 1 it may go, then wake rank 2 */
        v = 1;
        OK(weft_put(ep, 1, seg, 8, &v, sizeof(v)));
        kill(pids[2], SIGCONT);
        kill(pids[3], SIGCONT);
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
