/* Collectives of endpoint teams (team.h): allreduce and barrier.
 *
 * The members of one rank are threads of one process, so they meet in
 * memory: each publishes its source and a sequence number in a cache line
 * of its own of the rank's area, the rank's first member (its leader)
 * combines them in member order, runs the step between ranks -- the
 * one-sided collective of the team of the ranks that hold members
 * (onesided.c: the direct path on a node, UCX across nodes) -- and
 * publishes the result, which every member copies before it raises its
 * acknowledgement; the leader returns once all have, so its buffer stays
 * valid while they read it.  Each handle counts its calls, so the k-th
 * collective of every member of a rank meets the others' k-th: members
 * must make the team's collectives in the same order.  Reductions combine
 * in a fixed order (member order on a rank, then the ranks' team's order),
 * so every member gets the same bits. */
#include "coll.h"
#include "runtime/runtime.h"

#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#define CPU_RELAX() __builtin_ia32_pause()
#else
#define CPU_RELAX() ((void)0)
#endif
/* Polls before a waiting thread yields its core: threads may outnumber
 * cores, and a sleeping leader must get to run. */
#define SPINS 1024

typedef struct {
    alignas(64) _Atomic uint64_t seq;   /* the member's latest call */
    _Atomic uint64_t             ack;   /* the latest result it has copied */
    const void                  *src;
} lslot_t;

typedef struct {
    alignas(64) _Atomic uint64_t done;  /* the leader's latest finished call */
    const void                  *result;
    weft_status_t                st;
    int                          nranks;  /* of the ranks' team: 0 or 1 when none */
    lslot_t                      slot[];
} area_t;

static void wait_for(_Atomic uint64_t *w, uint64_t v)
{
    for (unsigned i = 0; atomic_load_explicit(w, memory_order_acquire) < v; i++) {
        if (i < SPINS)
            CPU_RELAX();
        else
            sched_yield();
    }
}

/* The rank's area, made by the first member that needs it. */
static area_t *area_of(weft__eshared_t *sh)
{
    void *made = __atomic_load_n(&sh->coll, __ATOMIC_ACQUIRE);
    if (made)
        return made;
    pthread_mutex_lock(&sh->lock);
    if (!sh->coll) {
        size_t bytes = sizeof(area_t) + (size_t)sh->nlocal * sizeof(lslot_t);
        void  *p = NULL;
        if (posix_memalign(&p, 64, bytes) == 0) {
            memset(p, 0, bytes);
            if (sh->ranks)
                weft_team_nranks(sh->ranks, &((area_t *)p)->nranks);
            __atomic_store_n(&sh->coll, p, __ATOMIC_RELEASE);
        }
    }
    pthread_mutex_unlock(&sh->lock);
    return sh->coll;
}

static weft_status_t check_args(const char *fn, size_t count, weft_type_t type, int op)
{
    if ((unsigned)type >= sizeof(weft__coll_type_size) / sizeof(weft__coll_type_size[0]))
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "unknown datatype %d", (int)type);
    if (op >= 0 && op > WEFT_OP_BXOR)
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "unknown operation %d", op);
    if (op >= 0 && type == WEFT_TYPE_BYTE)
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "WEFT_TYPE_BYTE cannot be reduced");
    if (op >= WEFT_OP_BAND && (type == WEFT_TYPE_FLOAT || type == WEFT_TYPE_DOUBLE))
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "bitwise operation %d on a floating type",
                           op);
    if (count > INT32_MAX)
        return weft__error(WEFT_ERR_TOO_LARGE, fn, "count %zu is over %d", count, INT32_MAX);
    return WEFT_OK;
}

/* An allreduce (op >= 0) or a barrier (op < 0) of an endpoint team. */
static weft_status_t et_call(const char *fn, weft__eteam_t *et, const void *src, void *dst,
                             size_t count, weft_type_t type, int op)
{
    weft__eshared_t *sh = et->sh;
    size_t           bytes = count * weft__coll_type_size[type];
    int              me = et->member - sh->first;
    area_t          *a = area_of(sh);
    weft_status_t    st = WEFT_OK;

    if (op >= 0 && count && (!src || !dst))
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "src or dst is NULL");
    if (!a)
        return weft__error(WEFT_ERR_NO_MEMORY, fn, "out of memory for the team's area");
    uint64_t gen = ++et->calls;
    if (me != 0) {
        a->slot[me].src = src;
        atomic_store_explicit(&a->slot[me].seq, gen, memory_order_release);
        wait_for(&a->done, gen);
        st = a->st;
        if (op >= 0 && st == WEFT_OK && dst != a->result)
            memcpy(dst, a->result, bytes);
        atomic_store_explicit(&a->slot[me].ack, gen, memory_order_release);
        return st == WEFT_OK ? st : weft__error(st, fn, "the step between ranks failed");
    }
    if (op >= 0 && dst != src && bytes)
        memmove(dst, src, bytes);
    for (int i = 1; i < sh->nlocal; i++) {
        wait_for(&a->slot[i].seq, gen);
        if (op >= 0)
            weft__coll_combine(dst, dst, a->slot[i].src, count, type, (weft_op_t)op);
    }
    if (a->nranks > 1)
        st = op >= 0 ? weft_team_allreduce(sh->ranks, dst, dst, count, type, (weft_op_t)op)
                     : weft_team_barrier(sh->ranks);
    a->result = dst;
    a->st = st;
    atomic_store_explicit(&a->done, gen, memory_order_release);
    for (int i = 1; i < sh->nlocal; i++)
        wait_for(&a->slot[i].ack, gen);
    return st;
}

int weft__et_is(weft_team_t team) { return weft__team_et(team) != NULL; }

weft_status_t weft__et_allreduce(weft_team_t team, const void *src, void *dst, size_t count,
                                 weft_type_t type, weft_op_t op)
{
    weft_status_t st = check_args("weft_team_allreduce", count, type, (int)op);

    if (st == WEFT_OK && (int)op < 0)
        st = weft__error(WEFT_ERR_INVALID_ARG, "weft_team_allreduce", "unknown operation %d",
                         (int)op);
    return st != WEFT_OK ? st
                         : et_call("weft_team_allreduce", weft__team_et(team), src, dst, count,
                                   type, (int)op);
}

weft_status_t weft__et_barrier(weft_team_t team)
{
    return et_call("weft_team_barrier", weft__team_et(team), NULL, NULL, 0, WEFT_TYPE_BYTE, -1);
}
