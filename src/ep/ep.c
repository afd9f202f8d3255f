/* Endpoints: creation, lazy connection, progress, waiting, teardown. */
#include "ep/ep.h"
#include <weft_ucx.h>

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The endpoint begins with what weft_inline.h reads (layout 4). */
#define SAME_FIELD(a, b) \
    (offsetof(struct weft__ep, a) == offsetof(struct weft_inline_ep, b) && \
     sizeof(((struct weft__ep *)0)->a) == sizeof(((struct weft_inline_ep *)0)->b))
_Static_assert(WEFT_INLINE_LAYOUT == 4 && SAME_FIELD(divert, gate) && SAME_FIELD(nranks, nranks) &&
                   SAME_FIELD(ctx, ctx) && SAME_FIELD(touched, touched) &&
                   SAME_FIELD(flush_epoch, flush_epoch) && SAME_FIELD(stamped, stamped) &&
                   SAME_FIELD(near_seg, near_seg) && SAME_FIELD(near_rank, near_rank) &&
                   SAME_FIELD(near_lim, near_lim) && SAME_FIELD(near_base, near_base),
               "struct weft__ep does not begin with struct weft_inline_ep");
/* The gate and the flush epoch are one aligned 8-byte word, in the
 * endpoint and in the stand-ins of the inline structure (target.c, rma.c):
 * a kept target's test (weft__inline_word_of) loads it whole.  (weft, as
 * UCX, is built for 64-bit targets, where the pointers after the word
 * align it.) */
_Static_assert(offsetof(struct weft__ep, divert) == 0 && offsetof(struct weft__ep, flush_epoch) == 4 &&
                   _Alignof(struct weft__ep) >= 8 && offsetof(struct weft_inline_ep, gate) == 0 &&
                   offsetof(struct weft_inline_ep, flush_epoch) == 4 &&
                   _Alignof(struct weft_inline_ep) >= 8,
               "gate and flush epoch are not one 8-byte word");
/* The gate's bits are distinct. */
_Static_assert((WEFT__GATE_FAILED & WEFT__GATE_DEAD) == 0 &&
                   ((WEFT__GATE_FAILED | WEFT__GATE_DEAD) & WEFT__GATE_WORN) == 0 &&
                   ((WEFT__GATE_FAILED | WEFT__GATE_DEAD | WEFT__GATE_WORN) &
                    (WEFT__PROF_DIVERT | 1u)) == 0,
               "gate bits overlap");

/* Programs built with weft_inline.h refer to this symbol: a library of
 * another layout has none, and they fail to load. */
const unsigned weft_inline_layout_v4 = WEFT_INLINE_LAYOUT;

/* Implicit operations are not given back to the user: their requests are
 * counted here and released as they complete. */
static void nbi_done(void *request, ucs_status_t status, void *user_data)
{
    struct weft__ep *ep = user_data;
    WEFT_PROF_BEGIN(tx, WEFT__PROF_HLP_TX_PROG);

    /* may run on the progress thread while the owner issues more */
    __atomic_sub_fetch(&ep->inflight, 1, __ATOMIC_RELAXED);
    if (status != UCS_OK) {
        weft_status_t none = WEFT_OK, st = weft__ucs_error(status, "implicit operation", "completion");
        __atomic_compare_exchange_n(&ep->nbi_error, &none, st, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    }
    ucp_request_free(request);
    WEFT_PROF_END(tx, WEFT__PROF_HLP_TX_PROG);
}

weft_status_t weft__ep_check(weft_ep_t ep, const char *fn)
{
    if (ep == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "endpoint is NULL");
    if (ep->state != WEFT__ALIVE || ep->ctx->state != WEFT__ALIVE)
        return weft__error(WEFT_ERR_NOT_INIT, fn, "endpoint's context was finalised");
    return WEFT_OK;
}

weft_status_t weft__ep_connect(weft_ep_t ep, int rank, const char *fn)
{
    ucp_ep_params_t p;
    ucs_status_t s;

    if (weft__peer_failed(ep->ctx, rank))
        return weft__error(WEFT_ERR_PEER_FAILED, fn, "rank %d has failed", rank);
    memset(&p, 0, sizeof(p));
    p.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    p.address = (const ucp_address_t *)(ep->ctx->addrs + ep->ctx->addr_off[rank]);
    weft__peer_ep_params(ep->ctx, rank, &p);
    s = ucp_ep_create(ep->worker, &p, &ep->peers[rank]);
    if (s != UCS_OK)
        return weft__ucs_error(s, fn, "connecting to a peer (ucp_ep_create)");
    return WEFT_OK;
}

const char weft__last_none;

/* Release ep's row of segment id: the keys unpacked into it and the row. */
static void tgt_free_row(struct weft__ep *ep, unsigned id)
{
    struct weft__tgt *row;

    weft__last_clear(&ep->last);
    ep->near_seg = WEFT__LAST_NONE;   /* it may be this segment */
    if (id >= ep->ntgts || (row = ep->tgts[id]) == NULL)
        return;
    for (int r = 0; r < ep->nranks; r++)
        if (row[r].rkey)
            ucp_rkey_destroy(row[r].rkey);
    free(row);
    ep->tgts[id] = NULL;
}

struct weft__tgt *weft__ep_tgt_slot(struct weft__ep *ep, unsigned id, int rank, const char *fn)
{
    if (id >= ep->ntgts) {
        unsigned n = id + 8;
        struct weft__tgt **tab = realloc(ep->tgts, n * sizeof(*tab));

        if (tab == NULL) {
            weft__error(WEFT_ERR_NO_MEMORY, fn, "target table");
            return NULL;
        }
        memset(tab + ep->ntgts, 0, (n - ep->ntgts) * sizeof(*tab));
        ep->tgts = tab;
        ep->ntgts = n;
    }
    if (ep->tgts[id] == NULL &&
        (ep->tgts[id] = calloc((size_t)ep->nranks, sizeof(struct weft__tgt))) == NULL) {
        weft__error(WEFT_ERR_NO_MEMORY, fn, "target table");
        return NULL;
    }
    return &ep->tgts[id][rank];
}

/* A new flush epoch without a flush, for an endpoint with nothing
 * outstanding through UCX: its kept targets (weft_target_t,
 * weft_ucx_put_target_t), which hold the epoch they were filled in, go to
 * the library at their next access.  The ranks stamped in the old epoch
 * are stamped in the new one: what they were sent is reported lost by the
 * next weft_flush if they fail, as it would have been. */
static void next_epoch(struct weft__ep *ep)
{
    unsigned old = ep->flush_epoch;

    weft__ep_next_epoch(ep);
    for (int r = 0; ep->touched != NULL && r < ep->nranks; r++)
        if (ep->touched[r] == old)
            ep->touched[r] = ep->flush_epoch;
}

void weft__ep_next_epoch(struct weft__ep *ep)
{
    unsigned old = ep->flush_epoch;

    if (WEFT__UNLIKELY(++ep->flush_epoch == 0)) {  /* 0 is the stamp of "never" */
        ep->flush_epoch = 1;
        __atomic_fetch_or(&ep->divert, WEFT__GATE_WORN, __ATOMIC_RELAXED);
        /* Stamps of epochs long gone would match the new ones: forget
         * them, all but the last epoch's (next_epoch carries those). */
        for (int r = 0; ep->touched != NULL && r < ep->nranks; r++)
            if (ep->touched[r] != old)
                ep->touched[r] = 0;
    }
    weft__ep_unstamp(ep);
}

/* Every endpoint forgets segment id.  Those that are not a pool's were
 * flushed just before (weft__ep_quiesce), which moved their epochs on; a
 * pool's endpoints have nothing outstanding and their threads make no
 * weft call meanwhile (weft_seg_free's contract), and get a new epoch
 * here, so that no kept target of theirs reaches the freed memory. */
void weft__ep_tgt_forget(weft_ctx_t ctx, unsigned id)
{
    struct weft__ep_layer *L = weft__ep_layer(ctx);

    for (struct weft__ep *ep = L ? L->eps : NULL; ep; ep = ep->next) {
        tgt_free_row(ep, id);
        next_epoch(ep);
    }
}

/* Force-close a connection (no message to the peer): UCX completes its
 * outstanding operations with UCS_ERR_CANCELED. */
static void close_force(weft_ep_t ep, ucp_ep_h uep)
{
    ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                             .flags = UCP_EP_CLOSE_FLAG_FORCE};
    ucs_status_ptr_t req = ucp_ep_close_nbx(uep, &p);

    if (req == NULL || UCS_PTR_IS_ERR(req))
        return;
    while (ucp_request_check_status(req) == UCS_INPROGRESS)
        ucp_worker_progress(ep->worker);
    ucp_request_free(req);
}

/* The owner drops what ep holds of ranks that failed: their connections
 * (completing what was outstanding on them) and their target entries, so
 * that the next operation to such a rank takes the slow path, which
 * reports the failure. */
void weft__ep_drop_failed(weft_ep_t ep)
{
    weft_ctx_t ctx = ep->ctx;
    unsigned gen = weft__fail_gen(ctx);

    /* The fast paths (weft_put_nbi's last target, a kept UCX target, the
     * inline path) test only the gate: set its failure bit here, before
     * any key or connection goes, rather than rely on the thread that
     * learnt of the failure having set it already (it bumps the count
     * first), and forget the last target, which may hold them. */
    if (gen != 0) {
        __atomic_fetch_or(&ep->divert, WEFT__GATE_FAILED, __ATOMIC_RELAXED);
        weft__last_clear(&ep->last);
    }
    for (int r = 0; r < ep->nranks; r++) {
        if (!weft__peer_failed(ctx, r))
            continue;
        /* An operation to r since the last weft_flush: it went out while
         * r was thought alive, and nobody will ever complete it.  Recorded
         * before the connection is closed, so the flush names the failure
         * rather than the cancellation that the close causes. */
        if (ep->touched[r] == ep->flush_epoch) {
            weft_status_t none = WEFT_OK;

            __atomic_compare_exchange_n(&ep->nbi_error, &none, WEFT_ERR_PEER_FAILED, 0,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED);
            if (ep->lost_rank < 0)
                ep->lost_rank = r;
            ep->touched[r] = 0;
            weft__ep_unstamp(ep);
        }
        for (unsigned i = 0; i < ep->ntgts; i++) {
            struct weft__tgt *t = ep->tgts[i] ? &ep->tgts[i][r] : NULL;

            if (t == NULL)
                continue;
            if (t->rkey)
                ucp_rkey_destroy(t->rkey);
            memset(t, 0, sizeof(*t));
        }
        if (ep->peers[r] != NULL) {
            close_force(ep, ep->peers[r]);
            ep->peers[r] = NULL;
        }
    }
    ep->fail_seen = gen;
}

/* One progress of ep's worker, with the LLP_prog/LLP_poll point when
 * `traced` (a constant). */
static inline __attribute__((always_inline)) unsigned
ep_progress_body(weft_ep_t ep, const int traced)
{
    weft__ep_sync_failed(ep);
    WEFT_PROF_BEGIN_IF(traced, llp, WEFT__PROF_LLP_PROG);
    unsigned n = ucp_worker_progress(ep->worker);

    (void)traced;  /* unused when the points are compiled out */
    WEFT_PROF_END(llp, n ? WEFT__PROF_LLP_PROG : WEFT__PROF_LLP_POLL);
    if (ep->marks_home)
        weft__ctx_app_polled(ep->ctx);
    /* Pool endpoints serve the home worker every few calls only: its flag
     * is shared by all the threads, and a line written by every call of
     * every thread would cost them their independence. */
    if (ep->serves_home && (++ep->home_tick & WEFT__HOME_EVERY_MASK) == 0)
        weft__ctx_progress_home(ep->ctx);
    return n;
}

unsigned weft__ep_progress(weft_ep_t ep)
{
    return ep_progress_body(ep, 1);
}

weft_status_t weft__ep_wait_req(weft_ep_t ep, ucs_status_ptr_t req, int rank, const char *fn,
                                const char *what)
{
    ucs_status_t s;
    weft__waiter_t w;
    weft_status_t expired = WEFT_OK, st;

    if (req == NULL)
        return WEFT_OK;
    if (UCS_PTR_IS_ERR(req)) {
        weft__ep_sync_failed(ep);
        return weft__ucs_error(UCS_PTR_STATUS(req), fn, what);
    }
    weft__wait_init(&w, ep->ctx);
    while ((s = ucp_request_check_status(req)) == UCS_INPROGRESS) {
        if ((st = weft__wait_step(&w, weft__ep_progress(ep), fn)) == WEFT_OK)
            continue;
        /* A request that outlives a second timeout after its rank was
         * declared failed is left to UCX (released when it completes). */
        if (rank == WEFT__ANY_RANK || expired != WEFT_OK) {
            if (expired != WEFT_OK)
                ucp_request_free(req);
            return st;
        }
        expired = st;
        weft__peer_fail(ep->ctx, rank);
        weft__wait_init(&w, ep->ctx);
    }
    ucp_request_free(req);
    if (expired != WEFT_OK)
        return weft__error(WEFT_ERR_TIMEOUT, fn, "rank %d did not complete %s within "
                           "WEFT_TIMEOUT_MS=%lu ms and is now considered failed", rank, what,
                           ep->ctx->cfg.timeout_ms);
    if (s == UCS_OK)
        return WEFT_OK;
    weft__ep_sync_failed(ep);
    if (rank != WEFT__ANY_RANK && weft__peer_failed(ep->ctx, rank))
        return weft__error(WEFT_ERR_PEER_FAILED, fn, "%s: rank %d has failed (%s)", what, rank,
                           ucs_status_string(s));
    return weft__ucs_error(s, fn, what);
}

void weft__ep_backpressure(weft_ep_t ep)
{
    weft__waiter_t w;
    WEFT_PROF_BUSY_BEGIN(busy);

    /* Requests of failed ranks complete (with an error) once their
     * connections are dropped, so this ends; a wait for live but slow
     * ranks outlasts WEFT_TIMEOUT_MS, like the operations it admits. */
    weft__wait_init(&w, ep->ctx);
    while (__atomic_load_n(&ep->inflight, __ATOMIC_RELAXED) >= ep->max_inflight / 2)
        (void)weft__wait_step(&w, weft__ep_progress(ep), "weft_put_nbi");
    WEFT_PROF_BUSY_END(busy);
}

/* Wait for a flush of the worker; one still outstanding after
 * WEFT_TIMEOUT_MS is left to UCX, which releases it when it completes. */
static weft_status_t wait_flush(weft_ep_t ep, ucs_status_ptr_t req, const char *fn)
{
    weft_status_t st = weft__ep_wait_req(ep, req, WEFT__ANY_RANK, fn, "ucp_worker_flush_nbx");

    if (st == WEFT_ERR_TIMEOUT)
        ucp_request_free(req);
    return st;
}

/* Wait for the flush of the previous window, if one is outstanding. */
static weft_status_t wait_window(weft_ep_t ep, const char *fn)
{
    ucs_status_ptr_t w = ep->window_req;

    ep->window_req = NULL;
    return wait_flush(ep, w, fn);
}

weft_status_t weft__ep_window(weft_ep_t ep, const char *fn)
{
    ucp_request_param_t p = {.op_attr_mask = 0};
    ucs_status_ptr_t sp;
    weft_status_t st;

    ep->window_ops = 0;
    if ((st = wait_window(ep, fn)) != WEFT_OK)
        return st;
    sp = ucp_worker_flush_nbx(ep->worker, &p);
    if (UCS_PTR_IS_ERR(sp))
        return weft__ucs_error(UCS_PTR_STATUS(sp), fn, "ucp_worker_flush_nbx");
    ep->window_req = sp;
    return WEFT_OK;
}

/* The end of a flush epoch: failures learnt up to now are looked at (an
 * operation of this epoch to a failed rank is lost), the epoch moves on,
 * and the first loss of the epoch becomes the caller's error, recorded for
 * fn, unless st is one already. */
static weft_status_t end_epoch(weft_ep_t ep, weft_status_t st, const char *fn)
{
    weft_status_t err;
    int lost;

    weft__ep_sync_failed(ep);
    weft__ep_next_epoch(ep);
    if (WEFT__LIKELY(__atomic_load_n(&ep->nbi_error, __ATOMIC_RELAXED) == WEFT_OK))
        return st;
    err = __atomic_exchange_n(&ep->nbi_error, WEFT_OK, __ATOMIC_ACQ_REL);
    lost = ep->lost_rank;
    ep->lost_rank = -1;
    if (st != WEFT_OK || err == WEFT_OK)
        return st;
    if (lost >= 0)
        return weft__error(err, fn, "rank %d failed after operations of the endpoint to it "
                           "were issued and before they were flushed: they may be lost "
                           "(docs/failures.md)", lost);
    return weft__error(err, fn, "an implicit operation of the endpoint was lost (%s)",
                       weft_strerror(err));
}

weft_status_t weft__ep_flush(weft_ep_t ep, const char *fn)
{
    ucp_request_param_t p = {.op_attr_mask = 0};
    weft_status_t st, err;

    weft__ep_sync_failed(ep);
    /* On a worker shared by threads this also waits for the others'
     * operations: the price of sharing. */
    if ((st = wait_flush(ep, ucp_worker_flush_nbx(ep->worker, &p), fn)) == WEFT_ERR_TIMEOUT)
        return st;
    /* the window's flush is then complete too */
    err = wait_window(ep, fn);
    st = st != WEFT_OK ? st : err;
    ep->window_ops = 0;
    /* The flush completed every operation; their callbacks have run (on
     * a shared worker, perhaps in another thread, whose last error then
     * says it): the caller's message is recorded here. */
    return end_epoch(ep, st, fn);
}

/* A pool endpoint belongs to its thread, which completes its operations
 * (weft_flush) and stops using the context before a segment is freed
 * (weft.h).  What can be seen from another thread without touching the
 * endpoint's worker: operations its owner issued through UCX that no
 * weft_flush has completed since, implicit ones still counted in flight,
 * a window's flush still outstanding.  A thread that is inside a weft call
 * right now cannot be seen. */
static weft_status_t check_pool_eps(weft_ctx_t ctx, const char *fn)
{
    struct weft__ep_layer *L = weft__ep_layer(ctx);
    weft_status_t st = WEFT_OK;

    pthread_mutex_lock(&ctx->lock);
    for (struct weft__ep *ep = L ? L->eps : NULL; ep && st == WEFT_OK; ep = ep->next)
        if (ep->pool != NULL && (__atomic_load_n(&ep->ucx_issued, __ATOMIC_ACQUIRE) ||
                                 __atomic_load_n(&ep->inflight, __ATOMIC_ACQUIRE) ||
                                 __atomic_load_n(&ep->window_req, __ATOMIC_ACQUIRE)))
            st = weft__error(WEFT_ERR_BUSY, fn,
                             "endpoint of pool thread %d has operations that no weft_flush "
                             "completed: every pool thread flushes its endpoints and stops using "
                             "the context before a segment is freed", ep->thread);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

weft_status_t weft__ep_quiesce(weft_ctx_t ctx, const char *fn)
{
    struct weft__ep_layer *L = weft__ep_layer(ctx);
    weft_status_t st = check_pool_eps(ctx, fn);

    /* Pool endpoints have nothing outstanding, and their workers are their
     * threads': the others' operations are completed here. */
    for (struct weft__ep *ep = L ? L->eps : NULL; st == WEFT_OK && ep; ep = ep->next)
        if (ep->pool == NULL)
            st = weft__ep_flush(ep, fn);
    return st;
}

/* Checks of weft_flush and weft_progress (and of every call under
 * WEFT_CHECK=1): a usable endpoint, and with check_owner, called by the
 * thread that owns it. */
weft_status_t weft__ep_check_caller(weft_ep_t ep, const char *fn)
{
    weft_status_t st = weft__ep_check(ep, fn);

    if (st == WEFT_OK && WEFT__UNLIKELY(ep->check_owner) && ep->owner_set &&
        !pthread_equal(ep->owner, pthread_self()))
        return weft__error(WEFT_ERR_BUSY, fn,
                           "endpoint of pool thread %d used by a thread that does not own it",
                           ep->thread);
    return st;
}

weft_status_t weft_flush(weft_ep_t ep)
{
    weft_status_t st = weft__ep_check_caller(ep, __func__);

    /* The direct path's stores are complete when issued; the release fence
     * orders them before whatever the caller does next. */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    if (st != WEFT_OK)
        return st;
    /* Only direct operations since the last flush: UCX has nothing of
     * this endpoint to complete (a flush of the worker costs 0.15-0.4 us),
     * but a rank they went to may be known failed since. */
    if (!ep->ucx_issued)
        return end_epoch(ep, WEFT_OK, __func__);
    ep->ucx_issued = 0;
    return weft__ep_flush(ep, __func__);
}

/* weft_progress's body, with the HLP_prog and LLP_prog points when
 * `traced` (a constant): as weft_put_nbi, the call that an injection loop
 * makes between puts has a traced and an untraced instance, and pays one
 * test of the selection for both points. */
static inline __attribute__((always_inline)) weft_status_t
progress_body(weft_ep_t ep, unsigned *count, const int traced)
{
    WEFT_PROF_BEGIN_IF(traced, hlp, WEFT__PROF_HLP_PROG);
    weft_status_t st = weft__ep_check_caller(ep, "weft_progress");
    unsigned n;

    if (st != WEFT_OK)
        return st;
    /* Ranks of the node reached by the direct path have no connection to
     * fail: their deaths are looked for here too, now and then. */
    if (WEFT__UNLIKELY((++ep->poll_tick & 63u) == 0))
        weft__peer_poll(ep->ctx);
    WEFT_PROF_END(hlp, WEFT__PROF_HLP_PROG);
    n = ep_progress_body(ep, traced);
    if (count)
        *count = n;
    return WEFT_OK;
}

static __attribute__((noinline)) weft_status_t progress_traced(weft_ep_t ep, unsigned *count)
{
    return progress_body(ep, count, 1);
}

weft_status_t weft_progress(weft_ep_t ep, unsigned *count)
{
    if (WEFT_PROF_ANY())
        return progress_traced(ep, count);
    return progress_body(ep, count, 0);
}

static weft_status_t quiesce(weft_ctx_t ctx)
{
    weft_status_t st, first = WEFT_OK;

    for (struct weft__ep *ep = weft__ep_layer(ctx)->eps; ep; ep = ep->next)
        if ((st = weft__ep_flush(ep, "weft_finalize")) != WEFT_OK && first == WEFT_OK)
            first = st;
    return first;
}

/* force: close without telling the peers (at finalize, when their workers
 * go away too); else a graceful close, so that peers whose workers live on
 * drop their side of the connection (UCX 1.13's TCP transport crashed later
 * in peers that kept connections to a destroyed worker). */
static void destroy_ep(struct weft__ep *ep, int force, const char *fn)
{
    ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                             .flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0};

    if (ep->window_req != NULL) {
        ucp_request_free(ep->window_req);  /* released by UCX when it completes */
        ep->window_req = NULL;
    }
    for (int r = 0; r < ep->nranks; r++) {
        if (ep->peers[r] == NULL)
            continue;
        /* Every rank has flushed and met at a barrier, so no operation is
         * in flight. */
        if (weft__peer_failed(ep->ctx, r)) {
            close_force(ep, ep->peers[r]);
            continue;
        }
        ucs_status_ptr_t req = ucp_ep_close_nbx(ep->peers[r], &p);

        if (weft__ep_wait_req(ep, req, WEFT__ANY_RANK, fn, "ucp_ep_close_nbx") ==
            WEFT_ERR_TIMEOUT)
            ucp_request_free(req);
    }
    /* rows of segments still alive (freed ones were released then) */
    for (unsigned i = 0; i < ep->ntgts; i++)
        tgt_free_row(ep, i);
    weft__last_clear(&ep->last);
    /* no near target outlives the endpoint: it leaves the context's list,
     * so no weft_seg_free will empty it later */
    weft__ep_unstamp(ep);
    free(ep->tgts);
    free(ep->peers);
    free(ep->touched);
    ep->tgts = NULL;
    ep->ntgts = 0;
    ep->peers = NULL;
    ep->touched = NULL;
    pthread_mutex_destroy(&ep->am_lock);
    weft__prof_unwatch(&ep->divert);
    weft__peer_ungate(ep->ctx, &ep->gate);
    __atomic_fetch_or(&ep->divert, WEFT__GATE_DEAD, __ATOMIC_RELAXED);
    ep->state = WEFT__DEAD;
}

void weft__ep_destroy(struct weft__ep *ep, const char *fn)
{
    struct weft__ep **pp = &weft__ep_layer(ep->ctx)->eps;

    destroy_ep(ep, 0, fn);
    while (*pp != ep)
        pp = &(*pp)->next;
    *pp = ep->next;
}

static void teardown(weft_ctx_t ctx)
{
    struct weft__ep_layer *L = weft__ep_layer(ctx);
    struct weft__ep *ep;

    for (ep = L->eps; ep; ep = ep->next)
        destroy_ep(ep, 1, "weft_finalize");
    weft__pools_teardown(ctx);
    /* Every endpoint's shell is kept (dead) with the context's, so a stale
     * handle -- the default endpoint's or a pool's -- is reported rather
     * than undefined. */
}

weft_status_t weft__ep_create(weft_ctx_t ctx, ucp_worker_h worker, struct weft__ep **out,
                              const char *fn)
{
    struct weft__ep_layer *L = NULL;
    struct weft__ep *ep;
    weft_status_t st;

    L = weft__ctx_layer(ctx, WEFT__LAYER_EP, sizeof(*L), quiesce, teardown, fn);
    if (L == NULL)
        return WEFT_ERR_NO_MEMORY;
    /* Whole cache lines of its own: endpoints of different threads must
     * not share a line their owners write (inflight, the home tick). */
    ep = aligned_alloc(WEFT__CACHE_LINE, (sizeof(*ep) + WEFT__CACHE_LINE - 1) / WEFT__CACHE_LINE *
                                             WEFT__CACHE_LINE);
    if (ep != NULL)
        memset(ep, 0, sizeof(*ep));
    if (ep == NULL)
        return weft__error(WEFT_ERR_NO_MEMORY, fn, "endpoint");
    ep->peers = calloc((size_t)ctx->nranks, sizeof(*ep->peers));
    ep->touched = calloc((size_t)ctx->nranks, sizeof(*ep->touched));
    if (ep->peers == NULL || ep->touched == NULL) {
        free(ep->peers);
        free(ep->touched);
        free(ep);
        return weft__error(WEFT_ERR_NO_MEMORY, fn, "peer table");
    }
    ep->flush_epoch = 1;
    weft__ep_unstamp(ep);
    ep->lost_rank = -1;
    ep->ctx = ctx;
    ep->nranks = ctx->nranks;
    weft__last_clear(&ep->last);
    ep->worker = worker;
    ep->max_inflight = 4096;
    ep->check = ctx->cfg.check != 0;
    ep->divert = ep->check;
    if (weft__prof_watch(&ep->divert) != 0) {
        free(ep->peers);
        free(ep->touched);
        free(ep);
        return weft__error(WEFT_ERR_NO_MEMORY, fn, "trace point watch list");
    }
    weft__peer_gate(ctx, &ep->gate, &ep->divert);
    pthread_mutex_init(&ep->am_lock, NULL);
    ep->cb_shared = ctx->pthread_running;
    ep->marks_home = ctx->pthread_running && worker == ctx->home;
    ep->prm_nbi.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    ep->prm_nbi.cb.send = nbi_done;
    ep->prm_nbi.user_data = ep;
    ep->prm_nb.op_attr_mask = 0;
    ep->prm_nbi64 = ep->prm_nbi;
    ep->prm_nbi64.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
    ep->prm_nbi64.datatype = ucp_dt_make_contig(sizeof(uint64_t));

    if (ctx->cfg.connect == WEFT_CONNECT_EAGER)
        for (int r = 0; r < ctx->nranks; r++)
            if ((st = weft__ep_connect(ep, r, fn)) != WEFT_OK)
                goto err_destroy;
    ep->state = WEFT__ALIVE;
    ep->next = L->eps;
    L->eps = ep;
    *out = ep;
    return WEFT_OK;

err_destroy:
    destroy_ep(ep, 1, fn);
    free(ep);
    return st;
}

weft_status_t weft_ep_default(weft_ctx_t ctx, weft_ep_t *out)
{
    struct weft__ep_layer *L;
    struct weft__ep *ep = NULL;
    weft_status_t st;

    if ((st = weft__ctx_check(ctx, __func__)) != WEFT_OK)
        return st;
    if (out == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "ep is NULL");
    pthread_mutex_lock(&ctx->lock);
    L = weft__ep_layer(ctx);
    if (L != NULL && L->dflt != NULL) {
        ep = L->dflt;
    } else {
        /* With a progress thread, both threads drive the home worker, which
         * UCX then locks.  (A second worker for the application would avoid
         * the lock, but UCX 1.13's TCP transport crashes with one worker
         * per thread in this pattern.) */
        st = weft__ep_create(ctx, ctx->home, &ep, __func__);
        if (st == WEFT_OK)
            weft__ep_layer(ctx)->dflt = ep;
    }
    pthread_mutex_unlock(&ctx->lock);
    if (st == WEFT_OK)
        *out = ep;
    return st;
}

/* weft_ucx.h */

weft_status_t weft_ucx_worker(weft_ep_t ep, ucp_worker_h *worker)
{
    weft_status_t st = weft__ep_check(ep, __func__);

    if (st != WEFT_OK)
        return st;
    if (worker == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "worker is NULL");
    *worker = ep->worker;
    return WEFT_OK;
}
