/* A flush that covers operations to a rank that died after they were
 * issued reports the loss: weft_flush returns WEFT_ERR_PEER_FAILED, once,
 * naming the rank.  An endpoint whose operations to that rank were all
 * flushed before it died, and flushes that cover only live ranks, still
 * return WEFT_OK.  Puts made after a flush to the target of the puts before
 * it (weft_put_nbi's last target, a kept target of weft_ucx.h, a kept
 * target weft_target_t) are reported like any, and so is a direct put of a
 * pool's endpoint made before a segment was freed (the free gives the
 * endpoint a new epoch without flushing it; the stamp goes with it).
 *
 * The survivors issue implicit puts and adds to the last rank and to each
 * other and leave them unflushed; the last rank SIGKILLs itself after a
 * barrier (the operations went out while it was alive); the survivors
 * learn of the death from a second barrier, then flush.  Run with 3 ranks
 * under mpirun --enable-recovery. */
#include "../common.h"
#include "kill_ops.h"

#include <signal.h>
#include <string.h>
#include <weft_ucx.h>

#define SEG_BYTES 65536
#define OFF_WORD  0
#define OFF_DONE  64
#define OFF_DATA  4096

/* weft_flush(e) must return want; the test fails otherwise, naming what
 * the flush covered. */
static void expect_flush(weft_ep_t e, weft_status_t want, int me, const char *what)
{
    weft_status_t st = weft_flush(e);

    if (st != want) {
        fprintf(stderr, "FAIL: rank %d: flush of %s -> %s\n", me, what, weft_strerror(st));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(void)
{
    weft_ctx_t ctx;
    weft_ep_t ep, early, small, kept, held, carry;
    weft_ucx_put_target_t target;
    weft_target_t ht;
    weft_seg_t spare;
    void *mapped;
    int direct;
    weft_ep_pool_t pool;
    weft_ep_pool_params_t pp;
    weft_seg_t seg;
    char buf[1024], want[32];
    int me, n, victim;
    weft_status_t st;

    memset(buf, 7, sizeof(buf));
    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &me));
    OK(weft_nranks(ctx, &n));
    CHECK(n >= 3);
    victim = n - 1;
    OK(weft_ep_default(ctx, &ep));
    /* a second endpoint, whose operations to the victim are flushed while
     * it lives */
    memset(&pp, 0, sizeof(pp));
    pp.nthreads = 5;
    pp.policy = "single";
    OK(weft_ep_pool_create(ctx, &pp, &pool));
    OK(weft_ep_get(pool, 0, &early));
    /* a third, whose operations to the victim are 8-byte puts (on the
     * direct path the inline form of weft.h, weft_inline.h, does them):
     * two, a flush, and one more, the only one the last flush covers --
     * after a flush the stamp must be made again */
    OK(weft_ep_get(pool, 1, &small));
    /* a fourth, whose puts to the victim go through a kept target
     * (weft_ucx.h) */
    OK(weft_ep_get(pool, 2, &kept));
    /* a fifth, whose puts go through a weft_target_t: a put, a flush, then
     * puts whose target takes the new epoch (inline on the direct path) */
    OK(weft_ep_get(pool, 3, &held));
    /* a sixth, with a direct put before a segment is freed */
    OK(weft_ep_get(pool, 4, &carry));
    OK(weft_seg_alloc(ctx, SEG_BYTES, &seg, NULL));
    OK(weft_seg_alloc(ctx, SEG_BYTES, &spare, NULL));
    direct = weft_ptr(ctx, victim, seg, 0, &mapped) == WEFT_OK;
    OK(weft_barrier(ctx));
    /* Only on the direct path: a pool's endpoint with operations through
     * UCX that no flush completed makes weft_seg_free refuse (BUSY). */
    if (me != victim && direct)
        OK(weft_put_nbi(carry, victim, seg, OFF_DATA + 32, buf, 8));
    OK(weft_seg_free(ctx, spare));
    if (me != victim) {
        OK(weft_target_init(held, victim, seg, &ht));
        OK(weft_target_put_nbi(&ht, OFF_DATA + 40, buf, 8));
        OK(weft_flush(held));
        OK(weft_target_put_nbi(&ht, OFF_DATA + 40, buf, 8));
        OK(weft_target_put_nbi(&ht, OFF_DATA + 48, buf, 8));
        OK(weft_put_nbi(early, victim, seg, OFF_DATA, buf, 8));
        OK(weft_flush(early));
        /* a flush between puts to the same target: over UCX the one after
         * it reaches it as weft_put_nbi's last target (which the puts
         * before it filled), in a new epoch */
        OK(weft_put_nbi(small, victim, seg, OFF_DATA + 8, buf, 8));
        OK(weft_put_nbi(small, victim, seg, OFF_DATA + 8, buf, 8));
        OK(weft_flush(small));
        OK(weft_put_nbi(small, victim, seg, OFF_DATA + 8, buf, 8));
        OK(weft_ucx_put_target(kept, victim, seg, &target));
        OK(weft_ucx_put_nbi(&target, OFF_DATA + 16, buf, 8));
        OK(weft_flush(kept));
        OK(weft_ucx_put_nbi(&target, OFF_DATA + 16, buf, 8));
        OK(weft_ucx_put_nbi(&target, OFF_DATA + 24, buf, 8));
        OK(weft_put_nbi(ep, victim, seg, OFF_DATA, buf, 8));
        OK(weft_put_nbi(ep, victim, seg, OFF_DATA, buf, sizeof(buf)));
        OK(weft_atomic_add_nbi(ep, victim, seg, OFF_WORD, 1));
        for (int r = 0; r < victim; r++)
            if (r != me)
                OK(weft_put_nbi(ep, r, seg, OFF_DATA + 8 * (size_t)me, buf, 8));
    }
    st = weft_barrier(ctx);
    /* over TCP a survivor may learn of the death inside this barrier
     * already, if the victim left it first */
    CHECK(st == WEFT_OK || (me != victim && st == WEFT_ERR_PEER_FAILED));
    if (me == victim)
        raise(SIGKILL);
    kill_learn_death(ctx, victim, me);

    /* the loss is reported by the flush that covers it, and names the rank */
    expect_flush(ep, WEFT_ERR_PEER_FAILED, me, "puts to a rank that died");
    snprintf(want, sizeof(want), "rank %d failed", victim);
    CHECK(strstr(weft_last_error(), want) != NULL);
    /* once: the next flush covers nothing of the dead rank */
    OK(weft_flush(ep));
    expect_flush(small, WEFT_ERR_PEER_FAILED, me, "an 8-byte put to a rank that died");
    OK(weft_flush(small));
    expect_flush(kept, WEFT_ERR_PEER_FAILED, me,
                 "puts through a kept UCX target to a rank that died");
    OK(weft_flush(kept));
    expect_flush(held, WEFT_ERR_PEER_FAILED, me,
                 "puts through a weft_target_t to a rank that died");
    OK(weft_flush(held));
    /* and the target, which the failure's gate sends to the library,
     * refuses the dead rank from now on */
    FAILS(weft_target_put_nbi(&ht, OFF_DATA + 40, buf, 8), WEFT_ERR_PEER_FAILED);
    FAILS(weft_target_get(&ht, want, OFF_DATA + 40, 8), WEFT_ERR_PEER_FAILED);
    expect_flush(carry, direct ? WEFT_ERR_PEER_FAILED : WEFT_OK, me,
                 "a put made before a segment was freed to a rank that died");
    OK(weft_flush(carry));
    /* everything the other endpoint sent the victim was flushed in time */
    OK(weft_flush(early));
    /* operations to live ranks only: nothing lost */
    for (int r = 0; r < victim; r++)
        if (r != me) {
            OK(weft_put_nbi(ep, r, seg, OFF_DATA + 8 * (size_t)me, buf, 8));
            OK(weft_put_nbi(early, r, seg, OFF_DATA + 8 * (size_t)me, buf, 8));
        }
    OK(weft_flush(ep));
    OK(weft_flush(early));
    kill_survivors_leave(ep, seg, OFF_DONE, victim, me);
    printf("PASS rank %d\n", me);
    fflush(stdout);
    st = weft_finalize(ctx);
    CHECK(st == WEFT_ERR_PEER_FAILED);
    return 0;
}
