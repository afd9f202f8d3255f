/* One-sided operations: the target lookup (a fast form and a complete,
 * out-of-line one), the dispatch to the direct path or UCX (rma_issue),
 * the operations themselves, signals and events.
 *
 * Fast path: argument checks are a handful of compares; the target comes
 * from the endpoint's target cache (weft__ep_tgt), filled on first use by
 * the out-of-line slow paths.  Nothing allocates or locks.  The direct
 * path is ordered for a consumer by release/acquire: the add of a signal
 * is a release, weft_signal_wait_until an acquire, and weft_flush a
 * release fence. */
#include "rma/rma.h"
#include <weft_ucx.h>

#include <inttypes.h>
#include <stdatomic.h>
#include <string.h>

/* The put of weft_put_nbi's fast path calls UCX through its GOT entry, not
 * a PLT stub: one jump less on the hottest call weft makes. */
#if defined(__has_attribute)
#if __has_attribute(noplt)
ucs_status_ptr_t ucp_put_nbx(ucp_ep_h ep, const void *buffer, size_t count, uint64_t remote_addr,
                             ucp_rkey_h rkey, const ucp_request_param_t *param)
    __attribute__((noplt));
#endif
#endif

struct target {
    ucp_ep_h   ep;
    ucp_rkey_h rkey;
    uint64_t   addr;    /* at the target (UCX path) */
    char      *local;   /* the same byte mapped here (direct path), or NULL */
};

/* The direct path's copy.  An 8-byte access (the common small case) is a
 * single load and store; anything else is glibc's memcpy, which measured
 * as fast as the alternatives tried (bench/README: non-temporal stores). */
static inline void direct_copy(void *dst, const void *src, size_t n)
{
    if (WEFT__LIKELY(n == sizeof(uint64_t))) {
        uint64_t v;

        memcpy(&v, src, sizeof(v));
        memcpy(dst, &v, sizeof(v));
        return;
    }
    memcpy(dst, src, n);
}

static __attribute__((noinline)) weft_status_t
resolve_slow(weft_ep_t ep, int rank, weft_seg_t seg, const char *fn)
{
    if (weft__ep_tgt(ep, seg->id, rank) == NULL)
        return weft__seg_fill_target(ep, seg, rank, 0, fn);
    return WEFT_OK;
}

weft_status_t weft__rma_check_target(weft_ep_t ep, int rank, weft_seg_t seg, const char *fn)
{
    weft_status_t st;

    if ((st = weft__ep_check(ep, fn)) != WEFT_OK)
        return st;
    if (rank < 0 || rank >= ep->nranks)
        return weft__error(WEFT_ERR_RANK, fn, "rank %d is outside [0, %d)", rank, ep->nranks);
    return weft__seg_check(ep, seg, fn);
}

static __attribute__((noinline)) weft_status_t
check_slow(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, size_t n, const void *buf,
           const char *fn)
{
    weft_status_t st;

    if ((st = weft__rma_check_target(ep, rank, seg, fn)) != WEFT_OK)
        return st;
    if (off > weft__seg_size(seg, rank) || n > weft__seg_size(seg, rank) - off)
        return weft__error(WEFT_ERR_BOUNDS, fn, "offset %zu + %zu bytes exceeds segment size %zu",
                           off, n, weft__seg_size(seg, rank));
    if (buf == NULL && n > 0)
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "buffer is NULL");
    if (WEFT__UNLIKELY(ep->check) &&
        ((st = weft__ep_check_caller(ep, fn)) != WEFT_OK ||
         (st = weft__seg_check_local(ep->ctx, buf, n, fn)) != WEFT_OK))
        return st;
    return WEFT_OK;
}

static inline void target_of(const struct weft__tgt *tg, size_t off, struct target *t)
{
    t->ep = tg->ep;
    t->rkey = tg->rkey;
    t->addr = tg->base + off;
    t->local = tg->local ? tg->local + off : NULL;
}

/* Validate an access of n bytes at (rank, seg, off) and find its target:
 * the slow, complete form, which reports what is wrong and fills the
 * connection and key tables on first use. */
static __attribute__((noinline)) weft_status_t
resolve(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, size_t n, const void *buf,
        const char *fn, struct target *t)
{
    weft_status_t st;

    if ((st = check_slow(ep, rank, seg, off, n, buf, fn)) != WEFT_OK)
        return st;
    /* A failure learnt since ep last looked sends every call here (the
     * fast form compares the generations) until ep's next wait, flush or
     * progress call drops the failed ranks' entries (weft__ep_sync_failed);
     * then only operations to them come here.  Not dropped here: that
     * closes connections, which progresses the worker, and this may run
     * inside an active-message handler, inside UCX's progress. */
    if (WEFT__UNLIKELY(weft__peer_failed(ep->ctx, rank)))
        return weft__error(WEFT_ERR_PEER_FAILED, fn, "rank %d has failed", rank);
    if ((st = resolve_slow(ep, rank, seg, fn)) != WEFT_OK)
        return st;
    target_of(weft__ep_tgt(ep, seg->id, rank), off, t);
    return WEFT_OK;
}

/* The fast form: straight-line compares and table loads, true when the
 * access is valid and its peer and key are already known.  Callers fall
 * back to resolve() otherwise, so the fast path never saves registers for
 * error handling. */
static inline int fast_target_of(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, size_t n,
                                 const void *buf, struct target *t, const int divert)
{
    const struct weft__tgt *tg;

    /* A finalised context has no live segment, so seg->live_ctx == ep->ctx
     * also says that ep is usable.  WEFT_CHECK=1 sends every call to the
     * slow path, which checks more; with `divert` (a constant), so does a
     * selected trace point (ep->divert, ep.h).  So does a rank failure
     * that the context knows and ep has not yet seen (its generation
     * differs from ep's): the entries of a failed rank stay filled until
     * ep's owner drops them, and without this test an operation to a rank
     * weft already reports dead would reach its memory or its connection
     * and succeed.  The context is loaded for the segment test anyway, so
     * this costs one load and a compare in the same unlikely branch. */
    if (WEFT__UNLIKELY(ep == NULL ||
                       (divert ? __atomic_load_n(&ep->divert, __ATOMIC_RELAXED) : ep->check) ||
                       seg == NULL || seg->live_ctx != ep->ctx ||
                       ep->fail_seen != __atomic_load_n(&ep->ctx->fail_gen, __ATOMIC_RELAXED) ||
                       (unsigned)rank >= (unsigned)ep->nranks || off > seg->size ||
                       n > seg->size - off || (buf == NULL && n > 0) ||
                       (tg = weft__ep_tgt(ep, seg->id, rank)) == NULL))
        return 0;
    target_of(tg, off, t);
    return 1;
}

static inline int fast_target(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, size_t n,
                              const void *buf, struct target *t)
{
    return fast_target_of(ep, rank, seg, off, n, buf, t, 0);
}

/* Fast form if possible, else the complete one. */
static inline weft_status_t get_target(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                                       size_t n, const void *buf, const char *fn, struct target *t)
{
    if (WEFT__LIKELY(fast_target(ep, rank, seg, off, n, buf, t)))
        return WEFT_OK;
    return resolve(ep, rank, seg, off, n, buf, fn, t);
}

/* Turn a UCX request into a weft event. */
static inline weft_status_t to_event(weft_ep_t ep, ucs_status_ptr_t sp, weft_event_t *ev,
                                     const char *fn, const char *what)
{
    if (WEFT__LIKELY(sp == NULL)) {
        *ev = WEFT_EVENT_NULL;
        return WEFT_OK;
    }
    if (WEFT__UNLIKELY(UCS_PTR_IS_ERR(sp)))
        return weft__ucs_error(UCS_PTR_STATUS(sp), fn, what);
    ((weft__req_t *)sp)->ep = ep;
    weft__event_made(ep->ctx);
    *ev = sp;
    return WEFT_OK;
}

#define CHECK_EV(ev, fn) \
    if (WEFT__UNLIKELY((ev) == NULL)) \
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "event pointer is NULL")

/* ---- The dispatch --------------------------------------------------------
 * Every operation ends here once it has its target: the direct path when
 * the target's bytes are mapped here (one test of t->local), else UCX.
 * kind, done and trace are constants at every call, so each operation's
 * inlined instance keeps its own case only, with no test of them left. */

/* What an operation does at its target. */
enum rma_kind {
    RMA_PUT,         /* the n bytes at buf to the target */
    RMA_GET,         /* the target's n bytes to buf */
    RMA_ADD,         /* add value to the target's word */
    RMA_FETCH_ADD,   /* the same, the old word to *reply */
    RMA_CSWAP,       /* store *reply if the word equals value; the old word to *reply */
    RMA_PUT_SIGNAL,  /* RMA_PUT, then add value to the word at sig, ordered after the data */
};

/* When an operation through UCX is complete (the direct path's is when the
 * call returns). */
enum rma_done {
    DONE_IMPLICIT,   /* counted on the endpoint, completed by weft_flush */
    DONE_EVENT,      /* when the event *ev completes */
    DONE_BLOCKING,   /* before the call returns; a put visible at the target */
};

/* An instance's trace points: TRACE_COPY the direct path's copy
 * (direct_copy) and signal (signal_add), TRACE_POST the UCX post call
 * (llp_post) and weft's code after it (hlp_post_tail). */
#define TRACE_COPY 1u
#define TRACE_POST 2u

/* The operands; each kind reads its own. */
struct rma_args {
    void                *buf;    /* PUT, PUT_SIGNAL: the source; GET: the destination */
    size_t               n;      /* bytes at buf */
    uint64_t             value;  /* the addend, or CSWAP's compare value */
    uint64_t            *reply;  /* FETCH_ADD, CSWAP (which reads the new value there) */
    const struct target *sig;    /* PUT_SIGNAL: the signal word, on the same path */
    weft_event_t        *ev;     /* DONE_EVENT */
    int                  rank;   /* DONE_BLOCKING: the target, for WEFT_TIMEOUT_MS */
};

/* The direct path: the initiator's own loads, stores and atomics. */
static inline __attribute__((always_inline)) void
direct_op(const struct target *t, const int kind, const struct rma_args *a, const unsigned trace)
{
    uint64_t *word = (uint64_t *)(void *)t->local;

    (void)trace;  /* unused when the points are compiled out */
    if (kind == RMA_PUT || kind == RMA_GET || kind == RMA_PUT_SIGNAL) {
        WEFT_PROF_BEGIN_IF(trace & TRACE_COPY, copy, WEFT__PROF_DIRECT_COPY);
        if (kind == RMA_GET)
            direct_copy(a->buf, t->local, a->n);
        else
            direct_copy(t->local, a->buf, a->n);
        WEFT_PROF_END(copy, WEFT__PROF_DIRECT_COPY);
    }
    if (kind == RMA_PUT_SIGNAL) {
        WEFT_PROF_BEGIN_IF(trace & TRACE_COPY, sig, WEFT__PROF_SIGNAL_ADD);
        /* release: a consumer that acquires the signal sees the data */
        __atomic_fetch_add((uint64_t *)(void *)a->sig->local, a->value, __ATOMIC_RELEASE);
        WEFT_PROF_END(sig, WEFT__PROF_SIGNAL_ADD);
    } else if (kind == RMA_ADD) {
        __atomic_fetch_add(word, a->value, __ATOMIC_SEQ_CST);
    } else if (kind == RMA_FETCH_ADD) {
        *a->reply = __atomic_fetch_add(word, a->value, __ATOMIC_SEQ_CST);
    } else if (kind == RMA_CSWAP) {
        /* UCX's convention: compare in value, the new word in *reply,
         * which receives the old one */
        uint64_t expected = a->value;

        __atomic_compare_exchange_n(word, &expected, *a->reply, 0, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST);
        *a->reply = expected;
    }
}

/* One UCX operation (any kind but PUT_SIGNAL): post it, then complete it
 * as `done` says. */
static inline __attribute__((always_inline)) weft_status_t
ucx_op(weft_ep_t ep, const struct target *t, const int kind, const int done,
       const struct rma_args *a, const unsigned trace, const char *fn)
{
    ucp_request_param_t p;
    ucs_status_ptr_t sp;
    uint64_t operand = a->value;
    const char *what;
    weft_status_t st;
    WEFT_PROF_BEGIN_IF(trace & TRACE_POST, llp, WEFT__PROF_LLP_POST);

    (void)trace;
    if (kind == RMA_PUT || kind == RMA_GET) {
        const ucp_request_param_t *prm = done == DONE_IMPLICIT ? &ep->prm_nbi : &ep->prm_nb;

        what = kind == RMA_PUT ? "ucp_put_nbx" : "ucp_get_nbx";
        sp = kind == RMA_PUT ? ucp_put_nbx(t->ep, a->buf, a->n, t->addr, t->rkey, prm)
                             : ucp_get_nbx(t->ep, a->buf, a->n, t->addr, t->rkey, prm);
    } else {
        if (done == DONE_IMPLICIT) {
            p = ep->prm_nbi;
            p.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
        } else {
            p.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER;
            p.reply_buffer = a->reply;
        }
        p.datatype = ucp_dt_make_contig(sizeof(uint64_t));
        what = "ucp_atomic_op_nbx";
        sp = ucp_atomic_op_nbx(t->ep, kind == RMA_CSWAP ? UCP_ATOMIC_OP_CSWAP : UCP_ATOMIC_OP_ADD,
                               &operand, 1, t->addr, t->rkey, &p);
    }
    WEFT_PROF_END(llp, WEFT__PROF_LLP_POST);
    if (done == DONE_BLOCKING) {
        st = weft__ep_wait_req(ep, sp, a->rank, fn, what);
        /* Local completion only frees buf; visibility needs a flush to rank. */
        if (st == WEFT_OK && kind == RMA_PUT)
            st = weft__ep_wait_req(ep, ucp_ep_flush_nbx(t->ep, &ep->prm_nb), a->rank, fn,
                                   "ucp_ep_flush_nbx");
        return st;
    }
    WEFT_PROF_BEGIN_IF(trace & TRACE_POST, tail, WEFT__PROF_HLP_POST_TAIL);
    st = done == DONE_IMPLICIT ? weft__ep_track(ep, sp, fn, what)
                               : to_event(ep, sp, a->ev, fn, what);
    WEFT_PROF_END(tail, WEFT__PROF_HLP_POST_TAIL);
    return st;
}

/* A put-with-signal through UCX: the data, a fence, the add, and a flush
 * that the event waits for. */
static inline __attribute__((always_inline)) weft_status_t
ucx_put_signal(weft_ep_t ep, const struct target *t, const struct rma_args *a, const char *fn)
{
    weft_status_t st;

    if ((st = ucx_op(ep, t, RMA_PUT, DONE_IMPLICIT, a, 0, fn)) != WEFT_OK)
        return st;
    /* The fence orders the add after the data: a consumer that sees the
     * signal sees the data. */
    ucp_worker_fence(ep->worker);
    if ((st = ucx_op(ep, a->sig, RMA_ADD, DONE_IMPLICIT, a, 0, fn)) != WEFT_OK)
        return st;
    /* The event completes when both have reached the target. */
    return to_event(ep, ucp_ep_flush_nbx(t->ep, &ep->prm_nb), a->ev, fn, "ucp_ep_flush_nbx");
}

/* Issue an operation at its target t, on the path t says. */
static inline __attribute__((always_inline)) weft_status_t
rma_issue(weft_ep_t ep, const struct target *t, const int kind, const int done,
          const unsigned trace, const struct rma_args *a, const char *fn)
{
    if (t->local) {
        direct_op(t, kind, a, trace);
        /* a blocking put is visible to a consumer that acquires after it */
        if (kind == RMA_PUT && done == DONE_BLOCKING)
            atomic_thread_fence(memory_order_release);
        if (done == DONE_EVENT)
            *a->ev = WEFT_EVENT_NULL;
        return WEFT_OK;
    }
    ep->ucx_issued = 1;  /* weft_flush has UCX work */
    if (kind == RMA_PUT_SIGNAL)
        return ucx_put_signal(ep, t, a, fn);
    return ucx_op(ep, t, kind, done, a, trace, fn);
}

/* ---- The operations ----------------------------------------------------- */

static __attribute__((noinline)) weft_status_t
put_nbi_slow(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, const void *src, size_t n)
{
    struct target t;
    WEFT_PROF_BEGIN(hlp, WEFT__PROF_HLP_POST);
    weft_status_t st = get_target(ep, rank, seg, off, n, src, "weft_put_nbi", &t);

    if (st != WEFT_OK)
        return st;
    WEFT_PROF_END(hlp, WEFT__PROF_HLP_POST);
    return rma_issue(ep, &t, RMA_PUT, DONE_IMPLICIT, TRACE_COPY | TRACE_POST,
                     &(struct rma_args){.buf = (void *)src, .n = n}, "weft_put_nbi");
}

static weft_status_t put_nbi_diverted(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                                      const void *src, size_t n);

/* weft_put_nbi's body, with trace points when `traced` (a constant).  The
 * untraced instance has none and no test of the selection either: it tests
 * ep->divert where other operations test ep->check, and a selection sets a
 * bit of that word (the prof layer watches it), which sends the call to
 * put_nbi_diverted and from there to the traced instance.  So with
 * profiling off the injection path costs what it costs without trace
 * points (weft bench profcost). */
static inline __attribute__((always_inline)) weft_status_t
put_nbi_body(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, const void *src, size_t n,
             const int traced)
{
    struct target t;
    WEFT_PROF_BEGIN_IF(traced, hlp, WEFT__PROF_HLP_POST);

    if (WEFT__UNLIKELY(!fast_target_of(ep, rank, seg, off, n, src, &t, !traced)))
        return traced ? put_nbi_slow(ep, rank, seg, off, src, n)
                      : put_nbi_diverted(ep, rank, seg, off, src, n);
    WEFT_PROF_END(hlp, WEFT__PROF_HLP_POST);
    return rma_issue(ep, &t, RMA_PUT, DONE_IMPLICIT, traced ? TRACE_COPY | TRACE_POST : 0,
                     &(struct rma_args){.buf = (void *)src, .n = n}, "weft_put_nbi");
}

/* A call off the untraced fast path: traced if a point is selected, else
 * the slow path (WEFT_CHECK, first use of a target, an error). */
static __attribute__((noinline)) weft_status_t
put_nbi_diverted(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, const void *src, size_t n)
{
    if (WEFT_PROF_ANY())
        return put_nbi_body(ep, rank, seg, off, src, n, 1);
    return put_nbi_slow(ep, rank, seg, off, src, n);
}

/* A put that missed ep's last target (struct weft__last): the fast path
 * above, which makes the target it reaches through UCX the last one. */
static __attribute__((noinline)) weft_status_t
put_nbi_miss(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, const void *src, size_t n)
{
    struct target t;

    if (WEFT__UNLIKELY(!fast_target_of(ep, rank, seg, off, n, src, &t, 1)))
        return put_nbi_diverted(ep, rank, seg, off, src, n);
    if (t.local == NULL)
        ep->last = (struct weft__last){.seg = seg, .rank = rank, .epoch = ep->flush_epoch,
                                       .size = weft__seg_size(seg, rank), .ep = t.ep,
                                       .rkey = t.rkey, .base = t.addr - off};
    return rma_issue(ep, &t, RMA_PUT, DONE_IMPLICIT, 0,
                     &(struct rma_args){.buf = (void *)src, .n = n}, "weft_put_nbi");
}

/* The rest of a put to the last target, when UCX returned a request or the
 * put closes a window: weft__ep_track's work, which the fast path does not
 * carry inline. */
static __attribute__((noinline)) weft_status_t put_nbi_track(weft_ep_t ep, ucs_status_ptr_t sp)
{
    if (sp == NULL)  /* the put was counted, and fills the window */
        return weft__ep_window(ep, "weft_put_nbi");
    return weft__ep_track(ep, sp, "weft_put_nbi", "ucp_put_nbx");
}

/* A put to the last target is ucp_put_nbx after one compare per argument:
 * the handles (which also say that both are alive: freeing the segment or
 * the endpoint empties it), the flush epoch, the bounds, the source, and
 * the endpoint's gate (WEFT_CHECK=1, a selected trace point, a rank failure
 * known to the context: weft__peer_gate sets it in every endpoint); then,
 * when UCX completed the put at once, a count of the window.  Everything else takes put_nbi_miss or put_nbi_track. */
__attribute__((aligned(64))) weft_status_t
weft_put_nbi(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, const void *src, size_t n)
{
    const struct weft__last *l;
    ucs_status_ptr_t sp;

    if (WEFT__LIKELY(ep != NULL)) {
        l = &ep->last;
        if (WEFT__LIKELY(l->seg == (const void *)seg && l->rank == rank &&
                         l->epoch == ep->flush_epoch && n <= l->size && off <= l->size - n &&
                         src != NULL && __atomic_load_n(&ep->divert, __ATOMIC_RELAXED) == 0)) {
            ep->ucx_issued = 1;
            sp = ucp_put_nbx(l->ep, src, n, l->base + off, l->rkey, &ep->prm_nbi);
            if (WEFT__LIKELY(sp == NULL) && WEFT__LIKELY(++ep->window_ops < WEFT__NBI_WINDOW))
                return WEFT_OK;
            return put_nbi_track(ep, sp);
        }
    }
    return put_nbi_miss(ep, rank, seg, off, src, n);
}

weft_status_t weft_get_nbi(weft_ep_t ep, void *dst, int rank, weft_seg_t seg, size_t off,
                           size_t n)
{
    struct target t;
    weft_status_t st = get_target(ep, rank, seg, off, n, dst, __func__, &t);

    if (WEFT__UNLIKELY(st != WEFT_OK))
        return st;
    return rma_issue(ep, &t, RMA_GET, DONE_IMPLICIT, TRACE_COPY,
                     &(struct rma_args){.buf = dst, .n = n}, __func__);
}

/* The body of weft_put_nb and weft_get_nb (kind RMA_PUT or RMA_GET): buf
 * is a put's source, which is only read, or a get's destination. */
static inline __attribute__((always_inline)) weft_status_t
rma_nb(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, void *buf, size_t n,
       weft_event_t *ev, const int kind, const char *fn)
{
    struct target t;
    weft_status_t st;
    WEFT_PROF_BEGIN(hlp, WEFT__PROF_HLP_POST);

    CHECK_EV(ev, fn);
    if (WEFT__UNLIKELY((st = get_target(ep, rank, seg, off, n, buf, fn, &t)) != WEFT_OK))
        return st;
    WEFT_PROF_END(hlp, WEFT__PROF_HLP_POST);
    return rma_issue(ep, &t, kind, DONE_EVENT, TRACE_COPY | TRACE_POST,
                     &(struct rma_args){.buf = buf, .n = n, .ev = ev}, fn);
}

weft_status_t weft_put_nb(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                          const void *src, size_t n, weft_event_t *ev)
{
    return rma_nb(ep, rank, seg, off, (void *)src, n, ev, RMA_PUT, __func__);
}

weft_status_t weft_get_nb(weft_ep_t ep, void *dst, int rank, weft_seg_t seg, size_t off,
                          size_t n, weft_event_t *ev)
{
    return rma_nb(ep, rank, seg, off, dst, n, ev, RMA_GET, __func__);
}

weft_status_t weft_put(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, const void *src,
                       size_t n)
{
    struct target t;
    weft_status_t st = get_target(ep, rank, seg, off, n, src, __func__, &t);

    if (st != WEFT_OK)
        return st;
    return rma_issue(ep, &t, RMA_PUT, DONE_BLOCKING, TRACE_COPY,
                     &(struct rma_args){.buf = (void *)src, .n = n, .rank = rank}, __func__);
}

weft_status_t weft_get(weft_ep_t ep, void *dst, int rank, weft_seg_t seg, size_t off, size_t n)
{
    struct target t;
    weft_status_t st = get_target(ep, rank, seg, off, n, dst, __func__, &t);

    if (st != WEFT_OK)
        return st;
    return rma_issue(ep, &t, RMA_GET, DONE_BLOCKING, TRACE_COPY,
                     &(struct rma_args){.buf = dst, .n = n, .rank = rank}, __func__);
}

/* Atomics: 8-byte words at 8-aligned offsets. */
static weft_status_t atomic_target(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                                   const char *fn, struct target *t)
{
    static const uint64_t nonnull = 0;
    weft_status_t st = get_target(ep, rank, seg, off, sizeof(uint64_t), &nonnull, fn, t);

    if (st == WEFT_OK && (t->addr & 7u) != 0)
        return weft__error(WEFT_ERR_ALIGN, fn, "offset %zu is not 8-byte aligned", off);
    return st;
}

/* A fetching atomic (kind RMA_FETCH_ADD or RMA_CSWAP), blocking: *old is
 * written on success only.  in is what CSWAP stores. */
static inline __attribute__((always_inline)) weft_status_t
atomic_fetch(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, const int kind,
             uint64_t value, uint64_t in, uint64_t *old, const char *fn)
{
    struct target t;
    uint64_t r = in;
    weft_status_t st;

    if (old == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "old is NULL");
    if ((st = atomic_target(ep, rank, seg, off, fn, &t)) != WEFT_OK)
        return st;
    st = rma_issue(ep, &t, kind, DONE_BLOCKING, 0,
                   &(struct rma_args){.value = value, .reply = &r, .rank = rank}, fn);
    if (st == WEFT_OK)
        *old = r;
    return st;
}

weft_status_t weft_atomic_fetch_add(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                                    uint64_t value, uint64_t *old)
{
    return atomic_fetch(ep, rank, seg, off, RMA_FETCH_ADD, value, 0, old, __func__);
}

weft_status_t weft_atomic_cswap(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                                uint64_t compare, uint64_t value, uint64_t *old)
{
    return atomic_fetch(ep, rank, seg, off, RMA_CSWAP, compare, value, old, __func__);
}

weft_status_t weft_atomic_add_nbi(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                                  uint64_t value)
{
    struct target t;
    weft_status_t st = atomic_target(ep, rank, seg, off, __func__, &t);

    if (st != WEFT_OK)
        return st;
    return rma_issue(ep, &t, RMA_ADD, DONE_IMPLICIT, 0, &(struct rma_args){.value = value},
                     __func__);
}

weft_status_t weft_put_signal_nb(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                                 const void *src, size_t n, weft_seg_t sigseg, size_t sigoff,
                                 uint64_t add, weft_event_t *ev)
{
    struct target d, s;
    weft_status_t st;
    WEFT_PROF_BEGIN(hlp, WEFT__PROF_HLP_POST);

    CHECK_EV(ev, __func__);
    if ((st = get_target(ep, rank, seg, off, n, src, __func__, &d)) != WEFT_OK ||
        (st = atomic_target(ep, rank, sigseg, sigoff, __func__, &s)) != WEFT_OK)
        return st;
    WEFT_PROF_END(hlp, WEFT__PROF_HLP_POST);
    /* Whether a rank is mapped is decided per rank, for every segment of
     * the context alike, so data and signal take the same path. */
    return rma_issue(ep, &d, RMA_PUT_SIGNAL, DONE_EVENT, TRACE_COPY,
                     &(struct rma_args){.buf = (void *)src, .n = n, .value = add, .sig = &s,
                                        .ev = ev},
                     __func__);
}

/* Whether the signal word v satisfies "v cmp value". */
static inline int cmp_holds(const weft_cmp_t cmp, uint64_t v, uint64_t value)
{
    switch (cmp) {
    case WEFT_CMP_EQ: return v == value;
    case WEFT_CMP_NE: return v != value;
    case WEFT_CMP_GT: return v > value;
    case WEFT_CMP_GE: return v >= value;
    case WEFT_CMP_LT: return v < value;
    case WEFT_CMP_LE: return v <= value;
    }
    return 0;
}

/* The body of the signal waits: cmp is a constant in weft_signal_wait_until
 * (whose loop then has its one compare) and a variable in _cmp. */
static inline __attribute__((always_inline)) weft_status_t
signal_wait(weft_ep_t ep, weft_seg_t seg, size_t off, const weft_cmp_t cmp, uint64_t value,
            uint64_t *seen, const char *fn)
{
    weft_status_t st;
    _Atomic uint64_t *word;
    uint64_t v;
    weft__waiter_t w;
    unsigned gen;
    size_t size;

    if ((st = weft__ep_check(ep, fn)) != WEFT_OK || (st = weft__seg_check(ep, seg, fn)) != WEFT_OK)
        return st;
    if (WEFT__UNLIKELY(ep->check) && (st = weft__ep_check_caller(ep, fn)) != WEFT_OK)
        return st;
    if ((unsigned)cmp > WEFT_CMP_LE)
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "comparison %d is not a weft_cmp_t", (int)cmp);
    size = weft__seg_size(seg, ep->ctx->rank);
    if (off > size || sizeof(uint64_t) > size - off)
        return weft__error(WEFT_ERR_BOUNDS, fn, "offset %zu + 8 bytes exceeds segment size %zu",
                           off, size);
    word = (_Atomic uint64_t *)((char *)seg->base + off);
    if (((uintptr_t)word & 7u) != 0)
        return weft__error(WEFT_ERR_ALIGN, fn, "offset %zu is not 8-byte aligned", off);
    /* Acquire pairs with the writer's fence: data read after this is the
     * data written before the signal. */
    weft__wait_init(&w, ep->ctx);
    gen = weft__fail_gen(ep->ctx);
    for (;;) {
        /* signal_poll times the load that sees the value: on the direct
         * path, the cache line coming from the writer's core */
        WEFT_PROF_BEGIN(at, WEFT__PROF_SIGNAL_POLL);

        if (cmp_holds(cmp, v = atomic_load_explicit(word, memory_order_acquire), value)) {
            WEFT_PROF_END(at, WEFT__PROF_SIGNAL_POLL);
            break;
        }
        if ((st = weft__wait_step(&w, weft__ep_progress(ep), fn)) != WEFT_OK)
            return st;
        /* the signal may be owed by a rank that has just died */
        if (WEFT__UNLIKELY(weft__fail_gen(ep->ctx) != gen))
            return weft__error(WEFT_ERR_PEER_FAILED, fn,
                               "a rank failed while waiting for %" PRIu64 " (word is %" PRIu64 ")",
                               value, v);
    }
    /* With a progress thread, the signal and the data before it may have
     * been written by UCX's handlers on that thread, under the home
     * worker's lock, with atomics weft does not see.  Progressing the home
     * worker takes that lock: everything the handlers wrote before they
     * released it happens before the caller's reads, on any memory model
     * (and for ThreadSanitizer, which cannot see inside UCX). */
    if (ep->ctx->pthread_running)
        (void)ucp_worker_progress(ep->ctx->home);
    if (seen)
        *seen = v;
    return WEFT_OK;
}

weft_status_t weft_signal_wait_until(weft_ep_t ep, weft_seg_t seg, size_t off, uint64_t value,
                                     uint64_t *seen)
{
    return signal_wait(ep, seg, off, WEFT_CMP_GE, value, seen, __func__);
}

weft_status_t weft_signal_wait_until_cmp(weft_ep_t ep, weft_seg_t seg, size_t off,
                                         weft_cmp_t cmp, uint64_t value, uint64_t *seen)
{
    return signal_wait(ep, seg, off, cmp, value, seen, __func__);
}

/* An event outstanding when its endpoint was destroyed or its context
 * finalised: its request lives on in the worker that weft_finalize kept
 * for it (runtime.c), and is released here, once. */
static __attribute__((noinline)) weft_status_t event_stale(weft_event_t *ev, const char *fn)
{
    weft__req_t *r = *ev;

    weft__event_done(r->ep->ctx);
    ucp_request_free(r);
    *ev = WEFT_EVENT_NULL;
    return weft__error(WEFT_ERR_NOT_INIT, fn, "the event was still outstanding when its "
                       "endpoint's context was finalised (or its pool destroyed); its fate "
                       "is unknown");
}

/* Events.  WEFT_CHECK=1: an event is completed by the thread that owns
 * its endpoint (pool endpoints), while the endpoint is usable. */

weft_status_t weft_test(weft_event_t *ev, int *done)
{
    weft__req_t *r;
    ucs_status_t s;
    weft_status_t st;

    if (ev == NULL || done == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "%s is NULL", ev ? "done" : "ev");
    if (*ev == WEFT_EVENT_NULL) {
        *done = 1;
        return WEFT_OK;
    }
    r = *ev;
    if (WEFT__UNLIKELY(r->ep->state != WEFT__ALIVE || r->ep->ctx->state != WEFT__ALIVE))
        return event_stale(ev, __func__);
    if (WEFT__UNLIKELY(r->ep->check) && (st = weft__ep_check_caller(r->ep, __func__)) != WEFT_OK)
        return st;
    s = ucp_request_check_status(r);
    if (s == UCS_INPROGRESS) {
        weft__ep_progress(r->ep);
        s = ucp_request_check_status(r);
        if (s == UCS_INPROGRESS) {
            *done = 0;
            return WEFT_OK;
        }
    }
    weft__event_done(r->ep->ctx);
    ucp_request_free(r);
    *ev = WEFT_EVENT_NULL;
    *done = 1;
    return s == UCS_OK ? WEFT_OK : weft__ucs_error(s, __func__, "operation failed");
}

weft_status_t weft_wait(weft_event_t *ev)
{
    weft__req_t *r;
    weft_ctx_t ctx;
    weft_status_t st;

    if (ev == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "ev is NULL");
    if (*ev == WEFT_EVENT_NULL)
        return WEFT_OK;
    r = *ev;
    if (WEFT__UNLIKELY(r->ep->state != WEFT__ALIVE || r->ep->ctx->state != WEFT__ALIVE))
        return event_stale(ev, __func__);
    if (WEFT__UNLIKELY(r->ep->check) && (st = weft__ep_check_caller(r->ep, __func__)) != WEFT_OK)
        return st;
    ctx = r->ep->ctx;
    st = weft__ep_wait_req(r->ep, r, WEFT__ANY_RANK, __func__, "operation failed");
    /* after WEFT_TIMEOUT_MS the operation is still outstanding */
    if (st != WEFT_ERR_TIMEOUT) {
        weft__event_done(ctx);
        *ev = WEFT_EVENT_NULL;
    }
    return st;
}

weft_status_t weft_wait_all(weft_event_t *evs, size_t n)
{
    weft_status_t st, first = WEFT_OK;
    size_t at = 0;
    char why[256];

    if (evs == NULL && n > 0)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "evs is NULL");
    for (size_t i = 0; i < n; i++)
        if ((st = weft_wait(&evs[i])) != WEFT_OK && first == WEFT_OK) {
            first = st;
            at = i;
            snprintf(why, sizeof(why), "%s", weft_last_error());
        }
    if (first != WEFT_OK)
        return weft__error(first, __func__, "event %zu of %zu: %s", at, n, why);
    return WEFT_OK;
}

/* weft_ucx.h */

/* Programs built with weft_ucx.h's inline put refer to this symbol: a
 * library whose weft_ucx_put_target_t differs has none, and they fail to
 * load. */
const unsigned weft_ucx_put_layout_v2 = WEFT_UCX_PUT_LAYOUT;

/* Inline puts a target makes before weft adds them to the endpoint's window
 * of implicit operations: so at most this many more than a window are
 * outstanding per target, and a program pays a library call per this many
 * puts. */
#define UCX_PUT_BUDGET 1024u
_Static_assert(UCX_PUT_BUDGET < WEFT__NBI_WINDOW, "a budget is part of a window");

/* The stand-in of kept targets that never run inline (rma.h). */
const struct weft_inline_ep weft__inline_none = {.gate = 1, .flush_epoch = 1,
                                                 .near_seg = WEFT__LAST_NONE, .stamped = -1};

/* Make t current after a put through it succeeded in the library: when
 * (rank, seg) is reached through UCX, the inline put may run until ep's
 * next flush, which moves its epoch on.  The puts of the budget before it
 * were completed by that flush, so the budget starts again. */
static void ucx_put_refresh(weft_ucx_put_target_t *t)
{
    static const char nonnull;
    weft_ep_t ep = t->ep;
    struct target tt;

    if (t->key == weft__inline_key(ep->flush_epoch) ||
        !fast_target_of(ep, t->rank, t->seg, 0, 0, &nonnull, &tt, 1) || tt.local != NULL)
        return;
    t->uep = tt.ep;
    t->rkey = tt.rkey;
    t->base = tt.addr;
    t->size = weft__seg_size(t->seg, t->rank);
    t->param = &ep->prm_nbi;
    t->check = ep;
    t->key = weft__inline_key(ep->flush_epoch);
    t->budget = UCX_PUT_BUDGET;
    ep->ucx_issued = 1;  /* the inline puts of this epoch are weft_flush's work */
}

weft_status_t weft_ucx_put_target(weft_ep_t ep, int rank, weft_seg_t seg, weft_ucx_put_target_t *t)
{
    static const char nonnull;
    struct target tt;
    weft_status_t st;

    if (t == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "the target is NULL");
    *t = (weft_ucx_put_target_t){.check = &weft__inline_none, .ep = ep, .seg = seg, .rank = rank};
    /* The arguments checked as a put checks them, and the connection and
     * key made as a first put makes them. */
    if ((st = get_target(ep, rank, seg, 0, 0, &nonnull, __func__, &tt)) != WEFT_OK)
        return st;
    ucx_put_refresh(t);
    return WEFT_OK;
}

weft_status_t weft__ucx_put_call(weft_ucx_put_target_t *t, size_t off, const void *src, size_t n)
{
    weft_status_t st;

    if (t == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, "weft_ucx_put_nbi", "the target is NULL");
    if ((st = (weft_put_nbi)(t->ep, t->rank, t->seg, off, src, n)) == WEFT_OK)
        ucx_put_refresh(t);
    return st;
}

weft_status_t weft__ucx_put_more(weft_ucx_put_target_t *t, ucs_status_ptr_t sp)
{
    weft_ep_t ep = t->ep;

    if (sp != NULL)  /* not counted in the budget: counted here */
        return weft__ep_track(ep, sp, "weft_ucx_put_nbi", "ucp_put_nbx");
    t->budget = UCX_PUT_BUDGET;
    if ((ep->window_ops += UCX_PUT_BUDGET) >= WEFT__NBI_WINDOW)
        return weft__ep_window(ep, "weft_ucx_put_nbi");
    return WEFT_OK;
}

/* The exported form of weft_ucx.h's inline put, for programs built without
 * it: the same body. */
weft_status_t(weft_ucx_put_nbi)(weft_ucx_put_target_t *t, size_t off, const void *src, size_t n)
{
    return weft__ucx_put_nbi(t, off, src, n);
}

weft_status_t weft_ucx_target(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                              ucp_ep_h *uep, ucp_rkey_h *rkey, uint64_t *raddr)
{
    static const char nonnull;
    struct target t;
    weft_status_t st;

    if (uep == NULL || rkey == NULL || raddr == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "an output pointer is NULL");
    if ((st = get_target(ep, rank, seg, off, 0, &nonnull, __func__, &t)) != WEFT_OK)
        return st;
    /* a direct target has no UCX connection or key until asked for one */
    if (t.rkey == NULL) {
        if ((st = weft__seg_fill_target(ep, seg, rank, 1, __func__)) != WEFT_OK)
            return st;
        target_of(weft__ep_tgt(ep, seg->id, rank), off, &t);
    }
    ep->ucx_issued = 1;  /* what the caller issues on it, weft_flush completes */
    *uep = t.ep;
    *rkey = t.rkey;
    *raddr = t.addr;
    return WEFT_OK;
}

/* ---- Typed atomics, fence, local completion, signal set -------------------
 * The 32/64-bit atomics of weft_atomic*, issued here directly: on the
 * direct path as __atomic builtins of the word's size, over UCX as one
 * ucp_atomic_op_nbx of a 4- or 8-byte datatype. */

/* Where UCX writes the old value of a swap nobody asked for (WEFT_AOP_SET,
 * a signal set): a swap needs a reply buffer, and this one is never read. */
static uint64_t discarded;

static inline int aop_fetches(weft_aop_t op)
{
    return op == WEFT_AOP_FETCH || op == WEFT_AOP_SWAP || op == WEFT_AOP_CSWAP ||
           op == WEFT_AOP_FETCH_ADD || op == WEFT_AOP_FETCH_AND || op == WEFT_AOP_FETCH_OR ||
           op == WEFT_AOP_FETCH_XOR;
}

/* The checks of every typed atomic, then its target; *size gets the
 * word's size.  Nothing is issued unless this returns WEFT_OK. */
static weft_status_t typed_target(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                                  weft_aop_t op, weft_atype_t type, const void *result,
                                  const char *fn, struct target *t, size_t *size)
{
    static const uint64_t nonnull = 0;
    weft_status_t st;

    if ((unsigned)op > WEFT_AOP_FETCH_XOR)
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "op %d is not a weft_aop_t", (int)op);
    if ((unsigned)type > WEFT_ATYPE_UINT64)
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "type %d is not a weft_atype_t", (int)type);
    if (result == NULL && aop_fetches(op))
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "result is NULL for a fetching op (%d)",
                           (int)op);
    *size = type == WEFT_ATYPE_INT32 || type == WEFT_ATYPE_UINT32 ? 4 : 8;
    if ((st = get_target(ep, rank, seg, off, *size, &nonnull, fn, t)) != WEFT_OK)
        return st;
    if ((t->addr & (*size - 1)) != 0)
        return weft__error(WEFT_ERR_ALIGN, fn, "offset %zu is not %zu-byte aligned", off, *size);
    return WEFT_OK;
}

/* One op on a word of type T at w; the old word to *old. */
#define DIRECT_AOP(T, w, op, operand, compare, old)                                     \
    do {                                                                                \
        T v_ = (T)(operand), c_ = (T)(compare);                                         \
        switch (op) {                                                                   \
        case WEFT_AOP_FETCH: *(old) = __atomic_load_n(w, __ATOMIC_SEQ_CST); break;      \
        case WEFT_AOP_SET: __atomic_store_n(w, v_, __ATOMIC_SEQ_CST); break;            \
        case WEFT_AOP_SWAP: *(old) = __atomic_exchange_n(w, v_, __ATOMIC_SEQ_CST); break; \
        case WEFT_AOP_CSWAP:                                                            \
            __atomic_compare_exchange_n(w, &c_, v_, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
            *(old) = c_;                                                                \
            break;                                                                      \
        case WEFT_AOP_ADD:                                                              \
        case WEFT_AOP_FETCH_ADD: *(old) = __atomic_fetch_add(w, v_, __ATOMIC_SEQ_CST); break; \
        case WEFT_AOP_AND:                                                              \
        case WEFT_AOP_FETCH_AND: *(old) = __atomic_fetch_and(w, v_, __ATOMIC_SEQ_CST); break; \
        case WEFT_AOP_OR:                                                               \
        case WEFT_AOP_FETCH_OR: *(old) = __atomic_fetch_or(w, v_, __ATOMIC_SEQ_CST); break; \
        case WEFT_AOP_XOR:                                                              \
        case WEFT_AOP_FETCH_XOR: *(old) = __atomic_fetch_xor(w, v_, __ATOMIC_SEQ_CST); break; \
        }                                                                               \
    } while (0)

/* The direct path: the op on the mapped word, the old value (size bytes)
 * to result when the op fetches. */
static void direct_aop(char *word, size_t size, weft_aop_t op, uint64_t operand,
                       uint64_t compare, void *result)
{
    if (size == 4) {
        uint32_t old = 0;

        DIRECT_AOP(uint32_t, (uint32_t *)(void *)word, op, operand, compare, &old);
        if (aop_fetches(op))
            memcpy(result, &old, sizeof(old));
    } else {
        uint64_t old = 0;

        DIRECT_AOP(uint64_t, (uint64_t *)(void *)word, op, operand, compare, &old);
        if (aop_fetches(op))
            memcpy(result, &old, sizeof(old));
    }
}

/* Post the op through UCX.  prm: ep's implicit or explicit parameters;
 * reply: where the old value goes for a fetching op (for CSWAP it holds
 * the new value on entry, UCX's convention), else NULL. */
static ucs_status_ptr_t ucx_aop(const struct target *t, const ucp_request_param_t *prm,
                                size_t size, weft_aop_t op, uint64_t operand, uint64_t compare,
                                void *reply)
{
    static const ucp_atomic_op_t uop[] = {
        [WEFT_AOP_FETCH] = UCP_ATOMIC_OP_ADD,    [WEFT_AOP_SET] = UCP_ATOMIC_OP_SWAP,
        [WEFT_AOP_SWAP] = UCP_ATOMIC_OP_SWAP,    [WEFT_AOP_CSWAP] = UCP_ATOMIC_OP_CSWAP,
        [WEFT_AOP_ADD] = UCP_ATOMIC_OP_ADD,      [WEFT_AOP_FETCH_ADD] = UCP_ATOMIC_OP_ADD,
        [WEFT_AOP_AND] = UCP_ATOMIC_OP_AND,      [WEFT_AOP_FETCH_AND] = UCP_ATOMIC_OP_AND,
        [WEFT_AOP_OR] = UCP_ATOMIC_OP_OR,        [WEFT_AOP_FETCH_OR] = UCP_ATOMIC_OP_OR,
        [WEFT_AOP_XOR] = UCP_ATOMIC_OP_XOR,      [WEFT_AOP_FETCH_XOR] = UCP_ATOMIC_OP_XOR,
    };
    ucp_request_param_t p = *prm;
    uint32_t v32;
    uint64_t v64;
    const void *buf;

    /* FETCH is an add of 0; CSWAP's buffer is the compare value */
    if (op == WEFT_AOP_FETCH)
        operand = 0;
    if (op == WEFT_AOP_CSWAP)
        operand = compare;
    v32 = (uint32_t)operand;
    v64 = operand;
    buf = size == 4 ? (const void *)&v32 : (const void *)&v64;
    p.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
    p.datatype = ucp_dt_make_contig(size);
    if (op == WEFT_AOP_SET)
        reply = &discarded;
    if (reply != NULL) {
        p.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
        p.reply_buffer = reply;
    }
    return ucp_atomic_op_nbx(t->ep, uop[op], buf, 1, t->addr, t->rkey, &p);
}

/* A CSWAP's reply buffer holds the new value when it is posted. */
static void cswap_prefill(void *reply, size_t size, weft_aop_t op, uint64_t operand)
{
    uint32_t v32 = (uint32_t)operand;

    if (op != WEFT_AOP_CSWAP)
        return;
    if (size == 4)
        memcpy(reply, &v32, sizeof(v32));
    else
        memcpy(reply, &operand, sizeof(operand));
}

/* UCX 1.13's shared-memory transports apply a fetching and/or/xor with the
 * old word as the operand (word | word, ...); over TCP they are right.  So
 * through UCX these three are a fetch, then compare-and-swaps until one
 * finds the word it computed from: correct on every transport, blocking. */
static inline int aop_fetches_logical(weft_aop_t op)
{
    return op == WEFT_AOP_FETCH_AND || op == WEFT_AOP_FETCH_OR || op == WEFT_AOP_FETCH_XOR;
}

static weft_status_t ucx_fetch_logical(weft_ep_t ep, int rank, const struct target *t,
                                       size_t size, weft_aop_t op, uint64_t operand,
                                       void *result, const char *fn)
{
    uint64_t mask = size == 4 ? 0xffffffffu : ~(uint64_t)0, old = 0, want, r;
    weft_status_t st;

    st = weft__ep_wait_req(ep, ucx_aop(t, &ep->prm_nb, size, WEFT_AOP_FETCH, 0, 0, &r), rank, fn,
                           "ucp_atomic_op_nbx");
    memcpy(&old, &r, size);
    while (st == WEFT_OK) {
        want = (op == WEFT_AOP_FETCH_AND ? old & operand
                : op == WEFT_AOP_FETCH_OR ? old | operand : old ^ operand) & mask;
        r = 0;
        cswap_prefill(&r, size, WEFT_AOP_CSWAP, want);
        st = weft__ep_wait_req(ep, ucx_aop(t, &ep->prm_nb, size, WEFT_AOP_CSWAP, want, old, &r),
                               rank, fn, "ucp_atomic_op_nbx");
        if (st != WEFT_OK)
            break;
        memcpy(&want, &r, size);
        want &= mask;
        if (want == old) {
            memcpy(result, &old, size);
            break;
        }
        old = want;
    }
    return st;
}

weft_status_t weft_atomic(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, weft_aop_t op,
                          weft_atype_t type, uint64_t operand, uint64_t compare, void *result)
{
    struct target t;
    size_t size;
    uint64_t r = 0;
    weft_status_t st;
    int fetches = aop_fetches(op);

    if ((st = typed_target(ep, rank, seg, off, op, type, result, __func__, &t, &size)) != WEFT_OK)
        return st;
    if (t.local) {
        direct_aop(t.local, size, op, operand, compare, result);
        return WEFT_OK;
    }
    ep->ucx_issued = 1;
    if (aop_fetches_logical(op))
        return ucx_fetch_logical(ep, rank, &t, size, op, operand, result, __func__);
    cswap_prefill(&r, size, op, operand);
    st = weft__ep_wait_req(ep, ucx_aop(&t, &ep->prm_nb, size, op, operand, compare,
                                       fetches ? &r : NULL),
                           rank, __func__, "ucp_atomic_op_nbx");
    /* a non-fetching op is complete locally only: applied once the
     * connection is flushed */
    if (st == WEFT_OK && !fetches)
        st = weft__ep_wait_req(ep, ucp_ep_flush_nbx(t.ep, &ep->prm_nb), rank, __func__,
                               "ucp_ep_flush_nbx");
    if (st == WEFT_OK && fetches)
        memcpy(result, &r, size);
    return st;
}

weft_status_t weft_atomic_nb(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                             weft_aop_t op, weft_atype_t type, uint64_t operand,
                             uint64_t compare, void *result, weft_event_t *ev)
{
    struct target t;
    size_t size;
    weft_status_t st;

    CHECK_EV(ev, __func__);
    if ((st = typed_target(ep, rank, seg, off, op, type, result, __func__, &t, &size)) != WEFT_OK)
        return st;
    if (t.local) {
        direct_aop(t.local, size, op, operand, compare, result);
        *ev = WEFT_EVENT_NULL;
        return WEFT_OK;
    }
    ep->ucx_issued = 1;
    if (aop_fetches_logical(op)) {
        *ev = WEFT_EVENT_NULL;
        return ucx_fetch_logical(ep, rank, &t, size, op, operand, result, __func__);
    }
    if (aop_fetches(op)) {
        cswap_prefill(result, size, op, operand);
        return to_event(ep, ucx_aop(&t, &ep->prm_nb, size, op, operand, compare, result), ev,
                        __func__, "ucp_atomic_op_nbx");
    }
    /* applied when the connection's flush completes, which the event is */
    if ((st = weft__ep_track(ep, ucx_aop(&t, &ep->prm_nbi, size, op, operand, compare, NULL),
                             __func__, "ucp_atomic_op_nbx")) != WEFT_OK)
        return st;
    return to_event(ep, ucp_ep_flush_nbx(t.ep, &ep->prm_nb), ev, __func__, "ucp_ep_flush_nbx");
}

/* The non-fetching ops whose UCX operation takes the operand as it is. */
#define POST_OPS ((1u << WEFT_AOP_ADD) | (1u << WEFT_AOP_AND) | (1u << WEFT_AOP_OR) | \
                  (1u << WEFT_AOP_XOR))

/* weft_atomic_nbi of a non-fetching add, and, or or xor of a 64-bit word
 * (GUPS's update) when its target is in the cache: the checks of the fast
 * target lookup, then one atomic instruction or one ucp_atomic_op_nbx
 * with a parameter built when ep was (prm_nbi64), and no copy of it.
 * 0 when the call must take the complete path. */
static inline int atomic_post64(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                                weft_aop_t op, weft_atype_t type, uint64_t operand,
                                weft_status_t *st)
{
    static const uint64_t nonnull = 0;
    static const ucp_atomic_op_t uop[] = {
        [WEFT_AOP_ADD] = UCP_ATOMIC_OP_ADD, [WEFT_AOP_AND] = UCP_ATOMIC_OP_AND,
        [WEFT_AOP_OR] = UCP_ATOMIC_OP_OR,   [WEFT_AOP_XOR] = UCP_ATOMIC_OP_XOR,
    };
    struct target t;

    if (!((unsigned)op <= WEFT_AOP_XOR && (POST_OPS >> op & 1u) &&
          (type == WEFT_ATYPE_UINT64 || type == WEFT_ATYPE_INT64) &&
          fast_target(ep, rank, seg, off, sizeof(uint64_t), &nonnull, &t) && (t.addr & 7u) == 0))
        return 0;
    if (t.local) {
        uint64_t *w = (uint64_t *)(void *)t.local;

        if (op == WEFT_AOP_XOR)
            __atomic_fetch_xor(w, operand, __ATOMIC_SEQ_CST);
        else if (op == WEFT_AOP_ADD)
            __atomic_fetch_add(w, operand, __ATOMIC_SEQ_CST);
        else if (op == WEFT_AOP_AND)
            __atomic_fetch_and(w, operand, __ATOMIC_SEQ_CST);
        else
            __atomic_fetch_or(w, operand, __ATOMIC_SEQ_CST);
        *st = WEFT_OK;
        return 1;
    }
    ep->ucx_issued = 1;
    *st = weft__ep_track(ep, ucp_atomic_op_nbx(t.ep, uop[op], &operand, 1, t.addr, t.rkey,
                                               &ep->prm_nbi64),
                         "weft_atomic_nbi", "ucp_atomic_op_nbx");
    return 1;
}

weft_status_t weft_atomic_nbi(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                              weft_aop_t op, weft_atype_t type, uint64_t operand,
                              uint64_t compare, void *result)
{
    struct target t;
    size_t size;
    weft_status_t st;

    if (WEFT__LIKELY(atomic_post64(ep, rank, seg, off, op, type, operand, &st)))
        return st;
    if ((st = typed_target(ep, rank, seg, off, op, type, result, __func__, &t, &size)) != WEFT_OK)
        return st;
    if (t.local) {
        direct_aop(t.local, size, op, operand, compare, result);
        return WEFT_OK;
    }
    ep->ucx_issued = 1;
    if (aop_fetches_logical(op))
        return ucx_fetch_logical(ep, rank, &t, size, op, operand, result, __func__);
    if (aop_fetches(op))
        cswap_prefill(result, size, op, operand);
    return weft__ep_track(ep, ucx_aop(&t, &ep->prm_nbi, size, op, operand, compare,
                                      aop_fetches(op) ? result : NULL),
                          __func__, "ucp_atomic_op_nbx");
}

weft_status_t weft_fence(weft_ep_t ep)
{
    weft_status_t st = weft__ep_check_caller(ep, __func__);
    ucs_status_t s;

    if (st != WEFT_OK)
        return st;
    /* The direct path's operations are complete when issued: a release
     * fence keeps the later ones behind them for every observer. */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    /* What went through UCX since the last weft_flush is not complete: the
     * worker's fence orders it before what ep issues next. */
    if (ep->ucx_issued && (s = ucp_worker_fence(ep->worker)) != UCS_OK)
        return weft__ucs_error(s, __func__, "ucp_worker_fence");
    return WEFT_OK;
}

weft_status_t weft_flush_local(weft_ep_t ep)
{
    weft_status_t st = weft__ep_check_caller(ep, __func__);
    weft__waiter_t w;

    if (st != WEFT_OK)
        return st;
    __atomic_thread_fence(__ATOMIC_RELEASE);
    if (!ep->ucx_issued)
        return WEFT_OK;
    /* UCX returned a request for each implicit operation it had not
     * completed locally; ep counts them until their callbacks run (a
     * put's source is then free, a get's destination written). */
    weft__wait_init(&w, ep->ctx);
    while (__atomic_load_n(&ep->inflight, __ATOMIC_ACQUIRE) != 0)
        if ((st = weft__wait_step(&w, weft__ep_progress(ep), __func__)) != WEFT_OK)
            return st;
    return WEFT_OK;
}

weft_status_t weft_put_signal_op_nb(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                                    const void *src, size_t n, weft_seg_t sigseg,
                                    size_t sigoff, uint64_t value, weft_signal_op_t op,
                                    weft_event_t *ev)
{
    struct target d, s;
    ucp_request_param_t p;
    weft_status_t st;

    CHECK_EV(ev, __func__);
    if ((unsigned)op > WEFT_SIGNAL_ADD)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "signal op %d is not a "
                           "weft_signal_op_t", (int)op);
    if ((st = get_target(ep, rank, seg, off, n, src, __func__, &d)) != WEFT_OK ||
        (st = atomic_target(ep, rank, sigseg, sigoff, __func__, &s)) != WEFT_OK)
        return st;
    if (op == WEFT_SIGNAL_ADD)
        return rma_issue(ep, &d, RMA_PUT_SIGNAL, DONE_EVENT, TRACE_COPY,
                         &(struct rma_args){.buf = (void *)src, .n = n, .value = value, .sig = &s,
                                            .ev = ev},
                         __func__);
    if (d.local) {
        if (n > 0)
            memcpy(d.local, src, n);
        /* release: a consumer that acquires the signal sees the data */
        __atomic_store_n((uint64_t *)(void *)s.local, value, __ATOMIC_RELEASE);
        *ev = WEFT_EVENT_NULL;
        return WEFT_OK;
    }
    ep->ucx_issued = 1;
    if ((st = weft__ep_track(ep, ucp_put_nbx(d.ep, src, n, d.addr, d.rkey, &ep->prm_nbi),
                             __func__, "ucp_put_nbx")) != WEFT_OK)
        return st;
    /* the fence orders the set after the data, as the add of
     * ucx_put_signal */
    ucp_worker_fence(ep->worker);
    p = ep->prm_nbi;
    p.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER;
    p.datatype = ucp_dt_make_contig(sizeof(uint64_t));
    p.reply_buffer = &discarded;
    if ((st = weft__ep_track(ep, ucp_atomic_op_nbx(s.ep, UCP_ATOMIC_OP_SWAP, &value, 1, s.addr,
                                                   s.rkey, &p),
                             __func__, "ucp_atomic_op_nbx")) != WEFT_OK)
        return st;
    return to_event(ep, ucp_ep_flush_nbx(d.ep, &ep->prm_nb), ev, __func__, "ucp_ep_flush_nbx");
}
