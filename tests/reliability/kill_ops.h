/* What the tests in which a rank dies share.  kill_one_op is the workload
 * of the kill tests (test_peer_kill.c, test_outside_kill.c): one operation
 * of every kind weft has, to a rank, chosen by a number; each test says
 * where in the segment its data and its atomic word lie and how it waits,
 * since a test whose ranks may be stopped retries a wait that
 * WEFT_ERR_TIMEOUT ended.  kill_learn_death and kill_survivors_leave are
 * the two ends of the tests whose last rank kills itself at a chosen
 * point (test_dead_everywhere.c, test_flush_lost.c). */
#ifndef WEFT_TEST_KILL_OPS_H
#define WEFT_TEST_KILL_OPS_H

#include "../common.h"

#include <stdint.h>

#define KILL_BIG   16384     /* a transfer large enough for rendezvous/zcopy paths */
#define KILL_AM_ID 3
#define KILL_NKINDS 11       /* the kinds of kill_one_op */

struct kill_ops {
    weft_seg_t seg;
    size_t     off_data;     /* KILL_BIG bytes of data */
    size_t     off_atomic;   /* an 8-byte word for atomics and signals */
    weft_status_t (*wait)(weft_event_t *ev);
    weft_status_t (*flush)(weft_ep_t ep);
};

/* A pseudo-random 24-bit number from the seed *s, which it advances. */
static inline unsigned kill_next_rand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 8) & 0xffffffu;
}

/* The handler of the active messages kill_one_op sends; counts them in
 * the unsigned long that arg points at, when it is not NULL. */
static inline void kill_on_am(weft_ctx_t ctx, int src, const void *hdr, size_t hlen,
                              const void *payload, size_t len, void *arg)
{
    (void)ctx; (void)src; (void)hdr; (void)hlen; (void)payload; (void)len;
    if (arg != NULL)
        (*(unsigned long *)arg)++;
}

/* One operation of kind k (0 <= k < KILL_NKINDS) to rank, from buf (at
 * least KILL_BIG bytes): WEFT_OK or the status that ended it. */
static inline weft_status_t kill_one_op(const struct kill_ops *o, weft_ep_t ep, int k, int rank,
                                        char *buf)
{
    weft_event_t ev;
    weft_status_t st;
    uint64_t old;
    unsigned done = 0;

    switch (k) {
    case 0:  return weft_put(ep, rank, o->seg, o->off_data, buf, 64);
    case 1:  return weft_get(ep, buf, rank, o->seg, o->off_data, 64);
    case 2:
        if ((st = weft_put_nb(ep, rank, o->seg, o->off_data, buf, KILL_BIG, &ev)) != WEFT_OK)
            return st;
        return o->wait(&ev);
    case 3:
        if ((st = weft_get_nb(ep, buf, rank, o->seg, o->off_data, KILL_BIG, &ev)) != WEFT_OK)
            return st;
        return o->wait(&ev);
    case 4:
        for (int i = 0; i < 16; i++)
            if ((st = weft_put_nbi(ep, rank, o->seg, o->off_data + 8 * (size_t)i, buf, 8)) !=
                WEFT_OK)
                return st;
        return o->flush(ep);
    case 5:  return weft_atomic_fetch_add(ep, rank, o->seg, o->off_atomic, 1, &old);
    case 6:  return weft_atomic_cswap(ep, rank, o->seg, o->off_atomic, 0, 0, &old);
    case 7:
        if ((st = weft_atomic_add_nbi(ep, rank, o->seg, o->off_atomic, 1)) != WEFT_OK)
            return st;
        return o->flush(ep);
    case 8:  return weft_am_send(ep, rank, KILL_AM_ID, "h", 1, buf, 256);
    case 9:
        if ((st = weft_am_send_nb(ep, rank, KILL_AM_ID, NULL, 0, buf, KILL_BIG, &ev)) != WEFT_OK)
            return st;
        return o->wait(&ev);
    default:
        if ((st = weft_put_signal_nb(ep, rank, o->seg, o->off_data, buf, 64, o->seg,
                                     o->off_atomic, 1, &ev)) != WEFT_OK)
            return st;
        if ((st = o->wait(&ev)) != WEFT_OK)
            return st;
        /* the direct path learns of deaths in waits and progress calls */
        return weft_progress(ep, &done);
    }
}

/* After the last rank (victim) killed itself: the survivor me learns it
 * from a barrier of the context, which must say WEFT_ERR_PEER_FAILED, and
 * weft_rank_failed must agree.  Aborts the job otherwise. */
static inline void kill_learn_death(weft_ctx_t ctx, int victim, int me)
{
    weft_status_t st = weft_barrier(ctx);
    int failed = 0;

    if (st != WEFT_ERR_PEER_FAILED) {
        fprintf(stderr, "FAIL: rank %d: barrier with a dead rank -> %s\n", me, weft_strerror(st));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    OK(weft_rank_failed(ctx, victim, &failed));
    CHECK(failed == 1);
}

/* The survivors (ranks below victim) leave together: one that exits while
 * another still operates on it would be a second failure, so each tells
 * the others it is done with them (an add to the word at off_done of seg)
 * and waits until they all told it. */
static inline void kill_survivors_leave(weft_ep_t ep, weft_seg_t seg, size_t off_done,
                                        int victim, int me)
{
    for (int r = 0; r < victim; r++)
        if (r != me) {
            uint64_t old;

            OK(weft_atomic_fetch_add(ep, r, seg, off_done, 1, &old));
        }
    OK(weft_signal_wait_until(ep, seg, off_done, (uint64_t)victim - 1, NULL));
}

#endif
