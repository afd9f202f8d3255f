/*
 * rma -- one-sided operations: put, get, atomics, put-with-signal, events.
 * May call seg, ep, runtime, prof.
 *
 * Fast path: argument checks are a handful of compares; the target comes
 * from a per-endpoint table entry of (segment, rank), filled on first use
 * by the out-of-line slow paths.  Nothing allocates or locks.
 *
 * Two paths, chosen per target by that entry: a rank of this node whose
 * part is mapped here (seg) is reached by the initiator's own loads and
 * stores -- the direct path, complete when the call returns -- and any
 * other rank through UCX.  Each operation tests the entry's mapped pointer
 * once.  The direct path is ordered for a consumer by release/acquire:
 * the add of a signal is a release, weft_signal_wait_until an acquire, and
 * weft_flush a release fence.
 */
#include "seg/seg.h"
#include <weft_ucx.h>

#include <inttypes.h>
#include <stdatomic.h>
#include <string.h>

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

/* A direct-path transfer of rma_nb and rma_blocking: into the target's
 * bytes for a put (`put` a constant), out of them for a get. */
static inline void direct_rma(char *local, void *buf, size_t n, const int put)
{
    if (put)
        direct_copy(local, buf, n);
    else
        direct_copy(buf, local, n);
}

static __attribute__((noinline)) weft_status_t
resolve_slow(weft_ep_t ep, int rank, weft_seg_t seg, const char *fn)
{
    if (weft__ep_tgt(ep, seg->id, rank) == NULL)
        return weft__seg_fill_target(ep, seg, rank, 0, fn);
    return WEFT_OK;
}

static __attribute__((noinline)) weft_status_t
check_slow(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, size_t n, const void *buf,
           const char *fn)
{
    weft_status_t st;

    if ((st = weft__ep_check(ep, fn)) != WEFT_OK)
        return st;
    if (rank < 0 || rank >= ep->nranks)
        return weft__error(WEFT_ERR_RANK, fn, "rank %d is outside [0, %d)", rank, ep->nranks);
    if ((st = weft__seg_check(ep, seg, fn)) != WEFT_OK)
        return st;
    if (off > seg->size || n > seg->size - off)
        return weft__error(WEFT_ERR_BOUNDS, fn, "offset %zu + %zu bytes exceeds segment size %zu",
                           off, n, seg->size);
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
    /* the entries of a failed rank are emptied (ep layer), so every
     * operation to it comes here */
    if (WEFT__UNLIKELY(weft__peer_failed(ep->ctx, rank)))
        return weft__error(WEFT_ERR_PEER_FAILED, fn, "rank %d has failed", rank);
    if ((st = resolve_slow(ep, rank, seg, fn)) != WEFT_OK)
        return st;
    target_of(weft__ep_tgt(ep, seg->id, rank), off, t);
    if (t->local == NULL)
        ep->ucx_issued = 1;  /* weft_flush has UCX work */
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
     * selected trace point (ep->divert, ep.h). */
    if (WEFT__UNLIKELY(ep == NULL ||
                       (divert ? __atomic_load_n(&ep->divert, __ATOMIC_RELAXED) : ep->check) ||
                       seg == NULL || seg->live_ctx != ep->ctx ||
                       (unsigned)rank >= (unsigned)ep->nranks || off > seg->size ||
                       n > seg->size - off || (buf == NULL && n > 0) ||
                       (tg = weft__ep_tgt(ep, seg->id, rank)) == NULL))
        return 0;
    target_of(tg, off, t);
    if (t->local == NULL)
        ep->ucx_issued = 1;  /* weft_flush has UCX work */
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
    *ev = sp;
    return WEFT_OK;
}

#define CHECK_EV(ev, fn) \
    if (WEFT__UNLIKELY((ev) == NULL)) \
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "event pointer is NULL")

static __attribute__((noinline)) weft_status_t
put_nbi_slow(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, const void *src, size_t n)
{
    struct target t;
    ucs_status_ptr_t sp;
    WEFT_PROF_BEGIN(hlp, WEFT__PROF_HLP_POST);
    weft_status_t st = get_target(ep, rank, seg, off, n, src, "weft_put_nbi", &t);

    if (st != WEFT_OK)
        return st;
    WEFT_PROF_END(hlp, WEFT__PROF_HLP_POST);
    if (t.local) {
        WEFT_PROF_BEGIN(copy, WEFT__PROF_DIRECT_COPY);
        direct_copy(t.local, src, n);
        WEFT_PROF_END(copy, WEFT__PROF_DIRECT_COPY);
        return WEFT_OK;
    }
    WEFT_PROF_BEGIN(llp, WEFT__PROF_LLP_POST);
    sp = ucp_put_nbx(t.ep, src, n, t.addr, t.rkey, &ep->prm_nbi);
    WEFT_PROF_END(llp, WEFT__PROF_LLP_POST);
    WEFT_PROF_BEGIN(tail, WEFT__PROF_HLP_POST_TAIL);
    st = weft__ep_track(ep, sp, "weft_put_nbi", "ucp_put_nbx");
    WEFT_PROF_END(tail, WEFT__PROF_HLP_POST_TAIL);
    return st;
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
    ucs_status_ptr_t sp;
    weft_status_t st;
    WEFT_PROF_BEGIN_IF(traced, hlp, WEFT__PROF_HLP_POST);

    (void)traced;  /* unused when the points are compiled out */

    if (WEFT__UNLIKELY(!fast_target_of(ep, rank, seg, off, n, src, &t, !traced)))
        return traced ? put_nbi_slow(ep, rank, seg, off, src, n)
                      : put_nbi_diverted(ep, rank, seg, off, src, n);
    WEFT_PROF_END(hlp, WEFT__PROF_HLP_POST);
    if (t.local) {
        WEFT_PROF_BEGIN_IF(traced, copy, WEFT__PROF_DIRECT_COPY);
        direct_copy(t.local, src, n);
        WEFT_PROF_END(copy, WEFT__PROF_DIRECT_COPY);
        return WEFT_OK;
    }
    WEFT_PROF_BEGIN_IF(traced, llp, WEFT__PROF_LLP_POST);
    sp = ucp_put_nbx(t.ep, src, n, t.addr, t.rkey, &ep->prm_nbi);
    WEFT_PROF_END(llp, WEFT__PROF_LLP_POST);
    WEFT_PROF_BEGIN_IF(traced, tail, WEFT__PROF_HLP_POST_TAIL);
    st = weft__ep_track(ep, sp, "weft_put_nbi", "ucp_put_nbx");
    WEFT_PROF_END(tail, WEFT__PROF_HLP_POST_TAIL);
    return st;
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

__attribute__((aligned(64))) weft_status_t
weft_put_nbi(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, const void *src, size_t n)
{
    return put_nbi_body(ep, rank, seg, off, src, n, 0);
}

weft_status_t weft_get_nbi(weft_ep_t ep, void *dst, int rank, weft_seg_t seg, size_t off,
                           size_t n)
{
    struct target t;
    weft_status_t st = get_target(ep, rank, seg, off, n, dst, __func__, &t);

    if (WEFT__UNLIKELY(st != WEFT_OK))
        return st;
    if (t.local) {
        WEFT_PROF_BEGIN(copy, WEFT__PROF_DIRECT_COPY);
        direct_copy(dst, t.local, n);
        WEFT_PROF_END(copy, WEFT__PROF_DIRECT_COPY);
        return WEFT_OK;
    }
    return weft__ep_track(ep, ucp_get_nbx(t.ep, dst, n, t.addr, t.rkey, &ep->prm_nbi),
                          __func__, "ucp_get_nbx");
}

/* The body of weft_put_nb and weft_get_nb.  `put` (a constant) gives the
 * direction: buf is a put's source, which is only read, or a get's
 * destination. */
static inline __attribute__((always_inline)) weft_status_t
rma_nb(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, void *buf, size_t n,
       weft_event_t *ev, const int put, const char *fn)
{
    struct target t;
    weft_status_t st;
    ucs_status_ptr_t sp;
    WEFT_PROF_BEGIN(hlp, WEFT__PROF_HLP_POST);

    CHECK_EV(ev, fn);
    if (WEFT__UNLIKELY((st = get_target(ep, rank, seg, off, n, buf, fn, &t)) != WEFT_OK))
        return st;
    WEFT_PROF_END(hlp, WEFT__PROF_HLP_POST);
    if (t.local) {
        WEFT_PROF_BEGIN(copy, WEFT__PROF_DIRECT_COPY);
        direct_rma(t.local, buf, n, put);
        WEFT_PROF_END(copy, WEFT__PROF_DIRECT_COPY);
        *ev = WEFT_EVENT_NULL;
        return WEFT_OK;
    }
    WEFT_PROF_BEGIN(llp, WEFT__PROF_LLP_POST);
    sp = put ? ucp_put_nbx(t.ep, buf, n, t.addr, t.rkey, &ep->prm_nb)
             : ucp_get_nbx(t.ep, buf, n, t.addr, t.rkey, &ep->prm_nb);
    WEFT_PROF_END(llp, WEFT__PROF_LLP_POST);
    WEFT_PROF_BEGIN(tail, WEFT__PROF_HLP_POST_TAIL);
    st = to_event(ep, sp, ev, fn, put ? "ucp_put_nbx" : "ucp_get_nbx");
    WEFT_PROF_END(tail, WEFT__PROF_HLP_POST_TAIL);
    return st;
}

weft_status_t weft_put_nb(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                          const void *src, size_t n, weft_event_t *ev)
{
    return rma_nb(ep, rank, seg, off, (void *)src, n, ev, 1, __func__);
}

weft_status_t weft_get_nb(weft_ep_t ep, void *dst, int rank, weft_seg_t seg, size_t off,
                          size_t n, weft_event_t *ev)
{
    return rma_nb(ep, rank, seg, off, dst, n, ev, 0, __func__);
}

/* The body of weft_put and weft_get, `put` and buf as for rma_nb. */
static inline __attribute__((always_inline)) weft_status_t
rma_blocking(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, void *buf, size_t n,
             const int put, const char *fn)
{
    struct target t;
    weft_status_t st;

    if ((st = get_target(ep, rank, seg, off, n, buf, fn, &t)) != WEFT_OK)
        return st;
    if (t.local) {
        WEFT_PROF_BEGIN(copy, WEFT__PROF_DIRECT_COPY);
        direct_rma(t.local, buf, n, put);
        WEFT_PROF_END(copy, WEFT__PROF_DIRECT_COPY);
        if (put)
            atomic_thread_fence(memory_order_release);
        return WEFT_OK;
    }
    if (!put)
        return weft__ep_wait_req(ep, ucp_get_nbx(t.ep, buf, n, t.addr, t.rkey, &ep->prm_nb),
                                 rank, fn, "ucp_get_nbx");
    st = weft__ep_wait_req(ep, ucp_put_nbx(t.ep, buf, n, t.addr, t.rkey, &ep->prm_nb), rank, fn,
                           "ucp_put_nbx");
    if (st != WEFT_OK)
        return st;
    /* Local completion only frees buf; visibility needs a flush to rank. */
    return weft__ep_wait_req(ep, ucp_ep_flush_nbx(t.ep, &ep->prm_nb), rank, fn,
                             "ucp_ep_flush_nbx");
}

weft_status_t weft_put(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, const void *src,
                       size_t n)
{
    return rma_blocking(ep, rank, seg, off, (void *)src, n, 1, __func__);
}

weft_status_t weft_get(weft_ep_t ep, void *dst, int rank, weft_seg_t seg, size_t off, size_t n)
{
    return rma_blocking(ep, rank, seg, off, dst, n, 0, __func__);
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

static weft_status_t atomic_blocking(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                                     ucp_atomic_op_t op, uint64_t operand, uint64_t *reply,
                                     const char *fn)
{
    struct target t;
    weft_status_t st;
    ucp_request_param_t p;

    if (reply == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "old is NULL");
    if ((st = atomic_target(ep, rank, seg, off, fn, &t)) != WEFT_OK)
        return st;
    if (t.local) {
        uint64_t *word = (uint64_t *)(void *)t.local;

        if (op == UCP_ATOMIC_OP_ADD) {
            *reply = __atomic_fetch_add(word, operand, __ATOMIC_SEQ_CST);
        } else {
            /* CSWAP, with UCX's convention: compare in operand, the new
             * value in *reply, which receives the old one */
            uint64_t expected = operand;

            __atomic_compare_exchange_n(word, &expected, *reply, 0, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST);
            *reply = expected;
        }
        return WEFT_OK;
    }
    p.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER;
    p.datatype = ucp_dt_make_contig(sizeof(uint64_t));
    p.reply_buffer = reply;
    return weft__ep_wait_req(ep, ucp_atomic_op_nbx(t.ep, op, &operand, 1, t.addr, t.rkey, &p),
                             rank, fn, "ucp_atomic_op_nbx");
}

weft_status_t weft_atomic_fetch_add(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                                    uint64_t value, uint64_t *old)
{
    uint64_t r;
    weft_status_t st = atomic_blocking(ep, rank, seg, off, UCP_ATOMIC_OP_ADD, value,
                                       old ? &r : NULL, __func__);

    if (st == WEFT_OK)
        *old = r;
    return st;
}

weft_status_t weft_atomic_cswap(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                                uint64_t compare, uint64_t value, uint64_t *old)
{
    /* UCX's CSWAP takes the compare value as operand and the new value in
     * the reply buffer, which then receives the old value. */
    uint64_t r = value;
    weft_status_t st = atomic_blocking(ep, rank, seg, off, UCP_ATOMIC_OP_CSWAP, compare,
                                       old ? &r : NULL, __func__);

    if (st == WEFT_OK)
        *old = r;
    return st;
}

static weft_status_t add_nbi(weft_ep_t ep, const struct target *t, uint64_t value, const char *fn)
{
    ucp_request_param_t p = ep->prm_nbi;

    if (t->local) {
        __atomic_fetch_add((uint64_t *)(void *)t->local, value, __ATOMIC_SEQ_CST);
        return WEFT_OK;
    }

    p.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
    p.datatype = ucp_dt_make_contig(sizeof(uint64_t));
    return weft__ep_track(ep, ucp_atomic_op_nbx(t->ep, UCP_ATOMIC_OP_ADD, &value, 1, t->addr,
                                                t->rkey, &p),
                          fn, "ucp_atomic_op_nbx");
}

weft_status_t weft_atomic_add_nbi(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                                  uint64_t value)
{
    struct target t;
    weft_status_t st = atomic_target(ep, rank, seg, off, __func__, &t);

    return st != WEFT_OK ? st : add_nbi(ep, &t, value, __func__);
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
    if (d.local) {
        WEFT_PROF_BEGIN(copy, WEFT__PROF_DIRECT_COPY);
        direct_copy(d.local, src, n);
        WEFT_PROF_END(copy, WEFT__PROF_DIRECT_COPY);
        {
            WEFT_PROF_BEGIN(sig, WEFT__PROF_SIGNAL_ADD);
            /* release: a consumer that acquires the signal sees the data */
            __atomic_fetch_add((uint64_t *)(void *)s.local, add, __ATOMIC_RELEASE);
            WEFT_PROF_END(sig, WEFT__PROF_SIGNAL_ADD);
        }
        *ev = WEFT_EVENT_NULL;
        return WEFT_OK;
    }
    if ((st = weft__ep_track(ep, ucp_put_nbx(d.ep, src, n, d.addr, d.rkey, &ep->prm_nbi), __func__,
                             "ucp_put_nbx")) != WEFT_OK)
        return st;
    /* The fence orders the add after the data: a consumer that sees the
     * signal sees the data. */
    ucp_worker_fence(ep->worker);
    if ((st = add_nbi(ep, &s, add, __func__)) != WEFT_OK)
        return st;
    /* The event completes when both have reached the target. */
    return to_event(ep, ucp_ep_flush_nbx(d.ep, &ep->prm_nb), ev, __func__, "ucp_ep_flush_nbx");
}

weft_status_t weft_signal_wait_until(weft_ep_t ep, weft_seg_t seg, size_t off, uint64_t value,
                                     uint64_t *seen)
{
    weft_status_t st;
    _Atomic uint64_t *word;
    uint64_t v;
    weft__waiter_t w;
    unsigned gen;

    if ((st = weft__ep_check(ep, __func__)) != WEFT_OK ||
        (st = weft__seg_check(ep, seg, __func__)) != WEFT_OK)
        return st;
    if (WEFT__UNLIKELY(ep->check) && (st = weft__ep_check_caller(ep, __func__)) != WEFT_OK)
        return st;
    if (off > seg->size || sizeof(uint64_t) > seg->size - off)
        return weft__error(WEFT_ERR_BOUNDS, __func__, "offset %zu + 8 bytes exceeds segment size %zu",
                           off, seg->size);
    if ((off & 7u) != 0)
        return weft__error(WEFT_ERR_ALIGN, __func__, "offset %zu is not 8-byte aligned", off);
    word = (_Atomic uint64_t *)((char *)seg->base + off);
    /* Acquire pairs with the writer's fence: data read after this is the
     * data written before the signal. */
    weft__wait_init(&w, ep->ctx);
    gen = weft__fail_gen(ep->ctx);
    for (;;) {
        /* signal_poll times the load that sees the value: on the direct
         * path, the cache line coming from the writer's core */
        WEFT_PROF_BEGIN(at, WEFT__PROF_SIGNAL_POLL);

        if ((v = atomic_load_explicit(word, memory_order_acquire)) >= value) {
            WEFT_PROF_END(at, WEFT__PROF_SIGNAL_POLL);
            break;
        }
        if ((st = weft__wait_step(&w, weft__ep_progress(ep), __func__)) != WEFT_OK)
            return st;
        /* the signal may be owed by a rank that has just died */
        if (WEFT__UNLIKELY(weft__fail_gen(ep->ctx) != gen))
            return weft__error(WEFT_ERR_PEER_FAILED, __func__,
                               "a rank failed while waiting for %" PRIu64 " (word is %" PRIu64 ")",
                               value, v);
    }
    if (seen)
        *seen = v;
    return WEFT_OK;
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
    ucp_request_free(r);
    *ev = WEFT_EVENT_NULL;
    *done = 1;
    return s == UCS_OK ? WEFT_OK : weft__ucs_error(s, __func__, "operation failed");
}

weft_status_t weft_wait(weft_event_t *ev)
{
    weft__req_t *r;
    weft_status_t st;

    if (ev == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "ev is NULL");
    if (*ev == WEFT_EVENT_NULL)
        return WEFT_OK;
    r = *ev;
    if (WEFT__UNLIKELY(r->ep->check) && (st = weft__ep_check_caller(r->ep, __func__)) != WEFT_OK)
        return st;
    st = weft__ep_wait_req(r->ep, r, WEFT__ANY_RANK, __func__, "operation failed");
    /* after WEFT_TIMEOUT_MS the operation is still outstanding */
    if (st != WEFT_ERR_TIMEOUT)
        *ev = WEFT_EVENT_NULL;
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
