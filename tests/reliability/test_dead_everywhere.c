/* Dead means dead everywhere: once weft reports a rank failed (weft_barrier
 * returned WEFT_ERR_PEER_FAILED, weft_rank_failed says so), every
 * operation to it returns WEFT_ERR_PEER_FAILED at once, with no
 * weft_progress call in between, on every path; operations to the live
 * ranks still work.
 *
 * The last rank warms every kind of target entry (the fast path's cache
 * holds the dead rank's mapping or connection), then SIGKILLs itself; the
 * survivors learn it from a barrier and then try each operation on it.
 * Run with 3 ranks under mpirun --enable-recovery. */
#include "../common.h"
#include "kill_ops.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#define SEG_BYTES 65536
#define AM_ID     5
#define OFF_WORD  0
#define OFF_DONE  64
#define OFF_DATA  4096

/* One call that must be refused as WEFT_ERR_PEER_FAILED; name says which. */
static void refused(weft_status_t st, const char *name, int me)
{
    if (st != WEFT_ERR_PEER_FAILED) {
        fprintf(stderr, "FAIL: rank %d: %s to the dead rank -> %s (%s)\n", me, name,
                weft_strerror(st), st == WEFT_OK ? "" : weft_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Every operation once to rank, all expected to complete (warming) or to
 * be refused (after the death). */
static void every_op(weft_ep_t ep, int rank, weft_seg_t seg, char *buf, int dead, int me)
{
    weft_event_t ev = WEFT_EVENT_NULL;
    weft_status_t st;
    uint64_t old;

#define OP(call)                                                                  \
    do {                                                                          \
        if (dead)                                                                 \
            refused((call), #call, me);                                           \
        else                                                                      \
            OK(call);                                                             \
    } while (0)
    OP(weft_put(ep, rank, seg, OFF_DATA, buf, 8));
    OP(weft_put(ep, rank, seg, OFF_DATA, buf, 1024));
    OP(weft_get(ep, buf, rank, seg, OFF_DATA, 8));
    OP(weft_atomic_fetch_add(ep, rank, seg, OFF_WORD, 1, &old));
    OP(weft_atomic_cswap(ep, rank, seg, OFF_WORD, 0, 0, &old));
    OP(weft_atomic_add_nbi(ep, rank, seg, OFF_WORD, 1));
    OP(weft_put_nbi(ep, rank, seg, OFF_DATA, buf, 8));
    OP(weft_put_nbi(ep, rank, seg, OFF_DATA, buf, 1024));
    OP(weft_get_nbi(ep, buf, rank, seg, OFF_DATA, 8));
    st = weft_put_nb(ep, rank, seg, OFF_DATA, buf, 8, &ev);
    OP(st == WEFT_OK ? weft_wait(&ev) : st);
    st = weft_get_nb(ep, buf, rank, seg, OFF_DATA, 8, &ev);
    OP(st == WEFT_OK ? weft_wait(&ev) : st);
    st = weft_put_signal_nb(ep, rank, seg, OFF_DATA, buf, 8, seg, OFF_WORD + 8, 1, &ev);
    OP(st == WEFT_OK ? weft_wait(&ev) : st);
    OP(weft_am_send(ep, rank, AM_ID, "h", 1, buf, 8));
    st = weft_am_send_nb(ep, rank, AM_ID, NULL, 0, buf, 8, &ev);
    OP(st == WEFT_OK ? weft_wait(&ev) : st);
    if (!dead)
        OK(weft_flush(ep));
#undef OP
}

int main(void)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg;
    char buf[1024];
    int me, n, victim;
    weft_status_t st;

    memset(buf, 7, sizeof(buf));
    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &me));
    OK(weft_nranks(ctx, &n));
    CHECK(n >= 3);
    victim = n - 1;
    OK(weft_ep_default(ctx, &ep));
    OK(weft_am_register(ctx, AM_ID, kill_on_am, NULL));
    OK(weft_seg_alloc(ctx, SEG_BYTES, &seg, NULL));
    OK(weft_barrier(ctx));
    /* every survivor's entries of the victim are filled: the fast path */
    if (me != victim)
        every_op(ep, victim, seg, buf, 0, me);
    st = weft_barrier(ctx);
    /* over TCP a survivor may learn of the death inside this barrier
     * already, if the victim left it first */
    CHECK(st == WEFT_OK || (me != victim && st == WEFT_ERR_PEER_FAILED));
    if (me == victim) {
        /* flushed: nothing of the survivors waits on the victim's replies */
        OK(weft_flush(ep));
        raise(SIGKILL);
    }
    kill_learn_death(ctx, victim, me);
    /* no weft_progress, flush or wait on ep between learning and using */
    every_op(ep, victim, seg, buf, 1, me);
    /* a second round: the refusal does not depend on being the first call */
    every_op(ep, victim, seg, buf, 1, me);
    /* the live ranks are served as before */
    for (int r = 0; r < victim; r++)
        if (r != me) {
            char in[8] = {0};
            uint64_t old;

            OK(weft_put(ep, r, seg, OFF_DATA + 8 * (size_t)me, buf, 8));
            OK(weft_get(ep, in, r, seg, OFF_DATA + 8 * (size_t)me, 8));
            CHECK(memcmp(in, buf, 8) == 0);
            OK(weft_atomic_fetch_add(ep, r, seg, OFF_WORD, 0, &old));
        }
    OK(weft_flush(ep));
    kill_survivors_leave(ep, seg, OFF_DONE, victim, me);
    printf("PASS rank %d\n", me);
    fflush(stdout);
    st = weft_finalize(ctx);
    CHECK(st == WEFT_ERR_PEER_FAILED);
    return 0;
}
