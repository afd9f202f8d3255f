/* Collectives of endpoint teams (team.h): bcast, reduce, allreduce,
 * gather and barrier.
 *
 * The members of one rank are threads of one process, so they meet in
 * memory: each publishes its arguments and a sequence number in a cache
 * line of its own of the rank's area; the rank's first member (its
 * leader) waits for them, combines (or collects) the members' data in
 * member order, runs the step between ranks -- the collective of the team
 * of the ranks that hold members (onesided.c: the direct path on a node,
 * UCX across nodes; the MPI path where that team takes it), on the
 * leader's own endpoint (weft__team_ep_set), so that endpoint teams of
 * one rank run their collectives at the same time -- and publishes the
 * status and the result, which every member takes before it raises its
 * acknowledgement; the leader returns once all have, so its buffers stay
 * valid while they read them.  A root's result the leader writes into the
 * root's buffer itself.  Each handle counts its calls, so the k-th
 * collective of every member of a rank meets the others' k-th: members
 * must make the team's collectives in the same order.  Reductions combine
 * in a fixed order (member order on a rank, then the ranks' team's
 * order), so every member gets the same bits.
 *
 * Every wait between the threads is bounded by WEFT_TIMEOUT_MS: a member
 * that does not arrive fails the call on its rank with WEFT_ERR_TIMEOUT
 * (the leader then runs no step between ranks), and the team is left
 * unusable, as a rank team is after a timeout.
 *
 * The rule that keeps a timeout safe: no thread touches another thread's
 * buffers (or reads the area's status for it) after that thread's call
 * returned.  Each side of a hand-over is a word changed by compare-and-
 * swap, so that of two threads that give up and go on, exactly one wins:
 *  - a slot's `state`: the member sets ARRIVED; the leader turns ARRIVED
 *    into CLAIMED before it reads the member's source or writes its dst,
 *    and a member that stops waiting for the leader turns ARRIVED into
 *    WITHDRAWN and returns.  A member that finds its slot CLAIMED keeps
 *    waiting (the leader is running, and its step between ranks is
 *    bounded itself); a leader that finds a slot WITHDRAWN reads no
 *    member's data and fails the call on every thread of the rank.
 *  - a slot's `ack`: the member sets READING before it reads the status
 *    and the result, and TOOK after; a leader that waited WEFT_TIMEOUT_MS
 *    for it turns any earlier value into REVOKED, and the member then
 *    reads nothing and fails.  A leader that finds READING waits on: the
 *    member is copying, which ends.  The leader waits so before it
 *    rewrites the area (at its next call, whether that succeeds or not)
 *    and before it returns while members copy from its own buffer. */
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

/* A member's source of up to this many bytes travels in its slot's cache
 * line, and a result of up to RES_MAX bytes in the area, starting in the
 * line of the leader's `done` word: one line crosses between the cores
 * each way for a small collective. */
#define SLOT_DATA 32
#define RES_MAX   4096

/* A slot's `state` and `ack` hold a call's number shifted by two and one
 * of these phases, so that a later call's value is always larger. */
#define PH(gen, p) ((uint64_t)(gen) << 2 | (p))
enum { S_ARRIVED = 1, S_WITHDRAWN = 2, S_CLAIMED = 3 };
enum { A_READING = 1, A_TOOK = 2, A_REVOKED = 3 };

typedef struct {
    alignas(64) _Atomic uint64_t state;   /* the member's latest call, S_ phase */
    _Atomic uint64_t             ack;     /* the latest result it took, A_ phase */
    const void                  *src;
    void                        *dst;
    char                         data[SLOT_DATA];   /* a small source */
} lslot_t;

typedef struct {
    alignas(64) _Atomic uint64_t done;  /* the leader's latest finished call */
    _Atomic uint64_t             started;   /* its latest call it arrived at */
    weft_status_t                st;
    int                          nranks;  /* of the ranks' team: 0 or 1 when none */
    char                         res[RES_MAX];   /* a small result, from offset 24 */
    const void                  *result;
    char                        *tmp;     /* the leader's scratch (reduce, gather) */
    size_t                       tmp_cap;
    char                         msg[256];  /* the leader's error message */
    lslot_t                      slot[];
} area_t;

/* What a call is and its arguments (every member gives the same). */
typedef enum { K_BARRIER, K_ALLREDUCE, K_BCAST, K_REDUCE, K_GATHER } kind_t;

typedef struct {
    const char *fn;
    kind_t      kind;
    const void *src;
    void       *dst;
    size_t      count;
    weft_type_t type;
    weft_op_t   op;
    int         root;   /* a member of the team (bcast, reduce, gather) */
} call_t;

/* Wait until *w is at least v: polls, then yields the core (threads may
 * outnumber cores, and a sleeping thread must get to run), and gives up
 * after WEFT_TIMEOUT_MS of ctx (0: never), as every weft wait does; with
 * ctx NULL, never. */
static weft_status_t wait_for(weft_ctx_t ctx, _Atomic uint64_t *w, uint64_t v, const char *fn)
{
    weft__waiter_t wt;

    for (int i = 0; i < SPINS; i++) {
        if (atomic_load_explicit(w, memory_order_acquire) >= v)
            return WEFT_OK;
        CPU_RELAX();
    }
    if (ctx)
        weft__wait_init(&wt, ctx);
    while (atomic_load_explicit(w, memory_order_acquire) < v) {
        sched_yield();
        weft_status_t st = ctx ? weft__wait_step(&wt, 1, fn) : WEFT_OK;
        if (st != WEFT_OK)
            return atomic_load_explicit(w, memory_order_acquire) >= v ? WEFT_OK : st;
    }
    return WEFT_OK;
}

/* Moves *w to `to` if it is below `below`; 0 when another thread's value
 * (at or above `below`) was there first. */
static int move_below(_Atomic uint64_t *w, uint64_t below, uint64_t to)
{
    uint64_t old = atomic_load_explicit(w, memory_order_acquire);

    while (old < below)
        if (atomic_compare_exchange_weak_explicit(w, &old, to, memory_order_acq_rel,
                                                  memory_order_acquire))
            return 1;
    return 0;
}

static void area_free(void *area)
{
    area_t *a = area;

    if (a)
        free(a->tmp);
    free(a);
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
            sh->coll_free = area_free;
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

/* The leader's scratch of at least bytes (only the leader uses it). */
static char *scratch(area_t *a, size_t bytes)
{
    if (bytes > a->tmp_cap) {
        char *p = realloc(a->tmp, bytes);
        if (!p)
            return NULL;
        a->tmp = p;
        a->tmp_cap = bytes;
    }
    return a->tmp;
}

/* The members of the rank with position r in the ranks' team: the first
 * and how many (members are in rank order). */
static void rank_members(const weft__eshared_t *sh, int r, int *first, int *n)
{
    *first = -1;
    *n = 0;
    for (int m = 0; m < sh->n; m++)
        if (sh->mrk[m] == r) {
            if (*first < 0)
                *first = m;
            ++*n;
        }
}

/* The gather's step between ranks: every rank's members' blocks, in
 * member order, to the root's rank.  The ranks' team gathers as many
 * blocks from every rank as the rank with the most members has, so the
 * root's leader unpacks them without the padding. */
static weft_status_t gather_ranks(weft__eshared_t *sh, area_t *a, const call_t *c, size_t block,
                                  int root_rank, void *out)
{
    int           most = 0, first, n, me_rank = sh->mrk[sh->first];
    weft_status_t st;

    for (int r = 0; r < a->nranks; r++) {
        rank_members(sh, r, &first, &n);
        most = n > most ? n : most;
    }
    size_t per = (size_t)most * block, nl = (size_t)sh->nlocal;   /* weft__et_gather
                                                                    checked most * count */
    char  *all = NULL, *mine;
    /* mine (the rank's blocks, at the start of the scratch) padded to
     * `most` blocks; on the root's rank the gathered blocks follow */
    if (!scratch(a, per + (me_rank == root_rank ? per * (size_t)a->nranks : 0) + 1))
        return weft__error(WEFT_ERR_NO_MEMORY, c->fn, "out of memory for the gather");
    mine = a->tmp;
    memset(mine + nl * block, 0, per - nl * block);
    if (me_rank == root_rank)
        all = a->tmp + per;
    if ((st = weft_team_gather(sh->ranks, mine, all, (size_t)most * c->count, c->type,
                               root_rank)) != WEFT_OK || me_rank != root_rank)
        return st;
    for (int r = 0; r < a->nranks; r++) {
        rank_members(sh, r, &first, &n);
        if (n)
            memcpy((char *)out + (size_t)first * block, all + (size_t)r * per,
                   (size_t)n * block);
    }
    return WEFT_OK;
}

/* The leader's part of a call, once every member of its rank has arrived:
 * the rank's members combined (or collected) in member order, the step
 * between ranks, and the result it publishes (*result). */
static weft_status_t lead(weft__eshared_t *sh, area_t *a, const call_t *c, const void **result)
{
    size_t        block = c->count * weft__coll_type_size[c->type];
    int           nl = sh->nlocal, root_local = -1, root_rank = 0;
    int           between = a->nranks > 1;
    weft_status_t st = WEFT_OK;
    char         *acc;

    if (c->kind == K_BCAST || c->kind == K_REDUCE || c->kind == K_GATHER) {
        root_rank = sh->mrk[c->root];
        if (c->root >= sh->first && c->root < sh->first + nl)
            root_local = c->root - sh->first;
    }
    switch (c->kind) {
    case K_BARRIER:
        return between ? weft_team_barrier(sh->ranks) : WEFT_OK;
    case K_ALLREDUCE:
        if (c->dst != c->src && block)
            memmove(c->dst, c->src, block);
        for (int i = 1; i < nl; i++)
            weft__coll_combine(c->dst, c->dst, a->slot[i].src, c->count, c->type, c->op);
        *result = c->dst;
        return between ? weft_team_allreduce(sh->ranks, c->dst, c->dst, c->count, c->type,
                                             c->op)
                       : WEFT_OK;
    case K_BCAST:
        /* buf is c->dst; a root elsewhere on the rank hands its buffer over */
        if (root_local > 0 && block)
            memcpy(c->dst, a->slot[root_local].src, block);
        *result = c->dst;
        return between ? weft_team_bcast(sh->ranks, c->dst, c->count, c->type, root_rank)
                       : WEFT_OK;
    case K_REDUCE: {
        /* Combined apart: the root's dst may be a source (in place). */
        void *out = root_local < 0 ? NULL : root_local == 0 ? c->dst : a->slot[root_local].dst;
        if (!(acc = scratch(a, block ? 2 * block : 1)))
            return weft__error(WEFT_ERR_NO_MEMORY, c->fn, "out of memory for the reduction");
        if (block)
            memcpy(acc, c->src, block);
        for (int i = 1; i < nl; i++)
            weft__coll_combine(acc, acc, a->slot[i].src, c->count, c->type, c->op);
        if (between)
            return weft_team_reduce(sh->ranks, acc, out ? out : acc + block, c->count,
                                    c->type, c->op, root_rank);
        if (out && block)
            memcpy(out, acc, block);
        return st;
    }
    case K_GATHER: {
        /* The rank's blocks in member order, then to the root's rank. */
        void *out = root_local < 0 ? NULL : root_local == 0 ? c->dst : a->slot[root_local].dst;
        if (!(acc = scratch(a, block * (size_t)nl + 1)))
            return weft__error(WEFT_ERR_NO_MEMORY, c->fn, "out of memory for the gather");
        for (int i = 0; i < nl && block; i++)
            memcpy(acc + (size_t)i * block, i ? a->slot[i].src : c->src, block);
        if (between)
            return gather_ranks(sh, a, c, block, root_rank, out);
        if (out && block)
            memcpy(out, acc, block * (size_t)nl);
        return st;
    }
    }
    return st;
}

/* The leader's wait for member i to take the status and result of call g
 * (see the rule at the top): WEFT_ERR_TIMEOUT when it did not start to
 * within WEFT_TIMEOUT_MS, after which it never will; a member that has
 * started is waited for without a bound, as it only copies. */
static weft_status_t wait_taken(weft__eshared_t *sh, area_t *a, int i, uint64_t g,
                                const char *fn)
{
    _Atomic uint64_t *w = &a->slot[i].ack;
    weft_status_t     st = wait_for(sh->ctx, w, PH(g, A_TOOK), fn);

    if (st == WEFT_OK)
        return st;
    if (move_below(w, PH(g, A_READING), PH(g, A_REVOKED)))
        return weft__error(st, fn, "member %d (thread %d of this rank) did not take the result "
                           "of call %llu within WEFT_TIMEOUT_MS=%lu ms; the team is unusable",
                           sh->first + i, sh->mthread[sh->first + i], (unsigned long long)g,
                           sh->ctx->cfg.timeout_ms);
    wait_for(NULL, w, PH(g, A_TOOK), fn);
    return WEFT_OK;
}

/* A member's part of call gen, its arguments in its slot: it waits for the
 * leader, then takes the status and its result. */
static weft_status_t member_call(weft__eteam_t *et, area_t *a, const call_t *c, uint64_t gen)
{
    weft__eshared_t *sh = et->sh;
    size_t           block = c->count * weft__coll_type_size[c->type];
    int              me = et->member - sh->first;
    lslot_t         *s = &a->slot[me];
    weft_status_t    st;

    if (block <= SLOT_DATA && block && c->src) {
        memcpy(s->data, c->src, block);
        s->src = s->data;
    } else {
        s->src = c->src;
    }
    s->dst = c->dst;
    atomic_store_explicit(&s->state, PH(gen, S_ARRIVED), memory_order_release);
    /* The leader's arrival is waited for within WEFT_TIMEOUT_MS; then its
     * step between ranks, which has the bounds of the rank team's
     * collectives, as the leader's own wait does.  A member that gives up
     * withdraws its slot, unless the leader has claimed it: then the
     * leader is running and may write into this thread's buffers, so the
     * member waits for it to finish. */
    if ((st = wait_for(sh->ctx, &a->started, gen, c->fn)) != WEFT_OK) {
        uint64_t arrived = PH(gen, S_ARRIVED);
        if (atomic_compare_exchange_strong_explicit(&s->state, &arrived, PH(gen, S_WITHDRAWN),
                                                    memory_order_acq_rel,
                                                    memory_order_acquire)) {
            /* It reads nothing of this call either. */
            move_below(&s->ack, PH(gen, A_READING), PH(gen, A_REVOKED));
            return weft__error(st, c->fn,
                               "member %d (thread %d of this rank, which leads its members) "
                               "did not arrive at call %llu within WEFT_TIMEOUT_MS=%lu ms; "
                               "the team is unusable", sh->first, sh->mthread[sh->first],
                               (unsigned long long)gen, sh->ctx->cfg.timeout_ms);
        }
    }
    wait_for(NULL, &a->done, gen, c->fn);
    if (!move_below(&s->ack, PH(gen, A_READING), PH(gen, A_READING)))
        return weft__error(WEFT_ERR_TIMEOUT, c->fn,
                           "member %d (thread %d of this rank, which leads its members) stopped "
                           "waiting for this thread to take the result of call %llu after "
                           "WEFT_TIMEOUT_MS=%lu ms; the team is unusable", sh->first,
                           sh->mthread[sh->first], (unsigned long long)gen,
                           sh->ctx->cfg.timeout_ms);
    char msg[sizeof(a->msg)];
    st = a->st;
    if (st != WEFT_OK)
        memcpy(msg, a->msg, sizeof(msg));
    /* Members that hold the result already (a bcast's root) take nothing. */
    int takes = c->kind == K_ALLREDUCE || (c->kind == K_BCAST && c->root != et->member);
    if (takes && st == WEFT_OK && c->dst != a->result && block)
        memcpy(c->dst, a->result, block);
    atomic_store_explicit(&s->ack, PH(gen, A_TOOK), memory_order_release);
    return st == WEFT_OK ? st : weft__error(st, c->fn, "(for this rank's members) %s", msg);
}

/* A collective of an endpoint team: every member publishes its arguments
 * in its slot; the leader (the rank's first member) waits for them,
 * claims their slots, leads (above) and publishes the status and the
 * result; a result the members copy from its own buffer it keeps valid
 * until every member has taken it (or can no longer). */
static weft_status_t et_call(weft__eteam_t *et, const call_t *c)
{
    weft__eshared_t *sh = et->sh;
    size_t           block = c->count * weft__coll_type_size[c->type];
    area_t          *a = area_of(sh);
    weft_status_t    st = WEFT_OK, s2;
    const void      *result = NULL;

    if (!a)
        return weft__error(WEFT_ERR_NO_MEMORY, c->fn, "out of memory for the team's area");
    uint64_t gen = ++et->calls;
    if (et->member != sh->first)
        return member_call(et, a, c, gen);
    atomic_store_explicit(&a->started, gen, memory_order_release);
    /* A bcast waits for its root only (when that is another member of the
     * rank): the others need not have arrived to find the result.  A slot
     * is claimed before its data is read (see the rule at the top). */
    for (int i = 1; i < sh->nlocal; i++) {
        if (c->kind == K_BCAST && sh->first + i != c->root)
            continue;
        if ((st = wait_for(sh->ctx, &a->slot[i].state, PH(gen, S_ARRIVED), c->fn)) != WEFT_OK) {
            st = weft__error(st, c->fn,
                             "member %d (thread %d of this rank) did not arrive at call %llu "
                             "within WEFT_TIMEOUT_MS=%lu ms; the team is unusable",
                             sh->first + i, sh->mthread[sh->first + i], (unsigned long long)gen,
                             sh->ctx->cfg.timeout_ms);
            break;
        }
        uint64_t arrived = PH(gen, S_ARRIVED);
        if (!atomic_compare_exchange_strong_explicit(&a->slot[i].state, &arrived,
                                                     PH(gen, S_CLAIMED), memory_order_acq_rel,
                                                     memory_order_acquire)) {
            st = weft__error(WEFT_ERR_TIMEOUT, c->fn,
                             "member %d (thread %d of this rank) stopped waiting for this "
                             "thread (its leader) at call %llu after WEFT_TIMEOUT_MS=%lu ms; "
                             "the team is unusable", sh->first + i, sh->mthread[sh->first + i],
                             (unsigned long long)gen, sh->ctx->cfg.timeout_ms);
            break;
        }
    }
    /* The area is rewritten once every member has taken the previous
     * call's status and result (those that arrived at this one have), on
     * the error path too. */
    for (int i = 1; i < sh->nlocal && gen > 1; i++)
        if ((s2 = wait_taken(sh, a, i, gen - 1, c->fn)) != WEFT_OK && st == WEFT_OK)
            st = s2;
    if (st == WEFT_OK)
        st = lead(sh, a, c, &result);
    /* A result the members take: in the area when small, so that the
     * leader need not wait for them (it does at its next call, above). */
    int takes = c->kind == K_ALLREDUCE || c->kind == K_BCAST;
    int wait_acks = st == WEFT_OK && takes && block > RES_MAX;
    if (st == WEFT_OK && takes && block <= RES_MAX && block) {
        memcpy(a->res, result, block);
        result = a->res;
    }
    a->result = result;
    a->st = st;
    if (st != WEFT_OK)
        snprintf(a->msg, sizeof(a->msg), "%s", weft_last_error());
    atomic_store_explicit(&a->done, gen, memory_order_release);
    /* Members that copy from the leader's buffer: it stays valid until
     * they have, or until they can no longer start to.  After a failure
     * the members read only the area, which the next call waits for. */
    for (int i = 1; i < sh->nlocal && wait_acks; i++)
        if ((s2 = wait_taken(sh, a, i, gen, c->fn)) != WEFT_OK && st == WEFT_OK)
            st = s2;
    return st;
}

int weft__et_is(weft_team_t team) { return weft__team_et(team) != NULL; }

static weft_status_t check_root(const char *fn, weft__eteam_t *et, int root)
{
    if (root < 0 || root >= et->sh->n)
        return weft__error(WEFT_ERR_RANK, fn, "root %d outside [0, %d)", root, et->sh->n);
    return WEFT_OK;
}

weft_status_t weft__et_allreduce(weft_team_t team, const void *src, void *dst, size_t count,
                                 weft_type_t type, weft_op_t op)
{
    call_t        c = {"weft_team_allreduce", K_ALLREDUCE, src, dst, count, type, op, 0};
    weft_status_t st = check_args(c.fn, count, type, (int)op);

    if (st == WEFT_OK && (int)op < 0)
        st = weft__error(WEFT_ERR_INVALID_ARG, c.fn, "unknown operation %d", (int)op);
    if (st == WEFT_OK && count && (!src || !dst))
        st = weft__error(WEFT_ERR_INVALID_ARG, c.fn, "src or dst is NULL");
    return st != WEFT_OK ? st : et_call(weft__team_et(team), &c);
}

weft_status_t weft__et_bcast(weft_team_t team, void *buf, size_t count, weft_type_t type,
                             int root)
{
    weft__eteam_t *et = weft__team_et(team);
    call_t         c = {"weft_team_bcast", K_BCAST, buf, buf, count, type, WEFT_OP_SUM, root};
    weft_status_t  st = check_root(c.fn, et, root);

    if (st == WEFT_OK)
        st = check_args(c.fn, count, type, -1);
    if (st == WEFT_OK && count && !buf)
        st = weft__error(WEFT_ERR_INVALID_ARG, c.fn, "buf is NULL");
    return st != WEFT_OK ? st : et_call(et, &c);
}

weft_status_t weft__et_reduce(weft_team_t team, const void *src, void *dst, size_t count,
                              weft_type_t type, weft_op_t op, int root)
{
    weft__eteam_t *et = weft__team_et(team);
    call_t         c = {"weft_team_reduce", K_REDUCE, src, dst, count, type, op, root};
    weft_status_t  st = check_root(c.fn, et, root);

    if (st == WEFT_OK)
        st = check_args(c.fn, count, type, (int)op);
    if (st == WEFT_OK && (int)op < 0)
        st = weft__error(WEFT_ERR_INVALID_ARG, c.fn, "unknown operation %d", (int)op);
    if (st == WEFT_OK && count && (!src || (!dst && root == et->member)))
        st = weft__error(WEFT_ERR_INVALID_ARG, c.fn, "src or the root's dst is NULL");
    return st != WEFT_OK ? st : et_call(et, &c);
}

weft_status_t weft__et_gather(weft_team_t team, const void *src, void *dst, size_t count,
                              weft_type_t type, int root)
{
    weft__eteam_t *et = weft__team_et(team);
    call_t         c = {"weft_team_gather", K_GATHER, src, dst, count, type, WEFT_OP_SUM, root};
    weft_status_t  st = check_root(c.fn, et, root);

    if (st == WEFT_OK)
        st = check_args(c.fn, count, type, -1);
    if (st == WEFT_OK && count && (!src || (!dst && root == et->member)))
        st = weft__error(WEFT_ERR_INVALID_ARG, c.fn, "src or the root's dst is NULL");
    /* Between ranks, every rank sends as many blocks as the rank with the
     * most members has: one count for the ranks' team. */
    const int *mrk = et->sh->mrk;   /* members are in rank order */
    int        most = 0;
    for (int m = 0, run = 0; m < et->sh->n; m++) {
        run = m && mrk[m] == mrk[m - 1] ? run + 1 : 1;
        most = run > most ? run : most;
    }
    if (st == WEFT_OK && (size_t)most * count > INT32_MAX)
        st = weft__error(WEFT_ERR_TOO_LARGE, c.fn, "count %zu times %d members of a rank is "
                         "over %d", count, most, INT32_MAX);
    return st != WEFT_OK ? st : et_call(et, &c);
}

weft_status_t weft__et_barrier(weft_team_t team)
{
    call_t c = {"weft_team_barrier", K_BARRIER, NULL, NULL, 0, WEFT_TYPE_BYTE, WEFT_OP_SUM, 0};

    return et_call(weft__team_et(team), &c);
}
