/*
 * weft_ucx.h -- interoperability with UCX.
 *
 * For programs that mix weft with their own UCX calls (and for the
 * benchmarks that compare weft with raw UCX on the same memory): the UCX
 * objects behind weft's handles.  weft keeps ownership of everything
 * returned here; do not destroy or close it.
 */
#ifndef WEFT_UCX_H
#define WEFT_UCX_H

#include <weft.h>
#include <ucp/api/ucp.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The UCX context of a weft context. */
weft_status_t weft_ucx_context(weft_ctx_t ctx, ucp_context_h *ucp);

/** The UCX worker an endpoint initiates on. */
weft_status_t weft_ucx_worker(weft_ep_t ep, ucp_worker_h *worker);

/**
 * The UCX endpoint, remote key and remote address weft uses for
 * (rank, seg, off) on ep, connecting and unpacking if needed.
 */
weft_status_t weft_ucx_target(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                              ucp_ep_h *uep, ucp_rkey_h *rkey, uint64_t *raddr);

/**
 * A put target over UCX: what weft_ucx_put_nbi needs of (ep, rank, seg),
 * filled by weft_ucx_put_target.  The program keeps one per target it puts
 * to in a loop (in its own memory, used by the thread that uses ep) and
 * reads or writes none of its fields; weft updates it.  It stays usable for
 * the life of ep and seg: whatever a put cannot do inline (the first put
 * after each weft_flush, a rank failure known to the context, WEFT_CHECK=1,
 * a selected trace point, bad arguments, a segment freed meanwhile, a rank
 * reached by the direct path) goes to the library call, which does what
 * weft_put_nbi documents and makes the target current again.  A freed
 * segment or a destroyed endpoint is noticed by the key the target holds,
 * the endpoint's gate shut and its flush epoch (weft_seg_free moves every
 * endpoint's epoch on; a destroyed endpoint's gate is set); an endpoint
 * whose epoch wraps, after 2^32 - 1 flushes, sets its gate for good.  The layout is WEFT_UCX_PUT_LAYOUT,
 * checked as weft_inline.h checks its own.
 */
#define WEFT_UCX_PUT_LAYOUT 2
typedef struct weft_ucx_put_target {
    ucp_ep_h                   uep;     /**< the connection to rank */
    ucp_rkey_h                 rkey;    /**< rank's key of seg */
    uint64_t                   base;    /**< seg's address at rank */
    size_t                     size;    /**< seg's bytes at rank */
    const ucp_request_param_t *param;   /**< weft's parameters of an implicit operation */
    const void                *check;   /**< what the inline test reads (struct
                                         *   weft_inline_ep): ep, or a stand-in that
                                         *   sends every put to the library */
    weft_ep_t                  ep;
    weft_seg_t                 seg;
    int                        rank;
    unsigned                   budget;  /**< inline puts until weft counts them */
    uint64_t                   key;     /**< what the inline test wants of check's word
                                         *   of gate and flush epoch (as weft_target_t's):
                                         *   the gate shut and the epoch the target took;
                                         *   0 while the inline put may not run */
} weft_ucx_put_target_t;

/**
 * Fill *t for puts to (rank, seg) through ep.  Errors as weft_put_nbi's
 * (WEFT_ERR_INVALID_ARG for a NULL t); *t is then still usable, and every
 * put through it reports the error again.
 */
weft_status_t weft_ucx_put_target(weft_ep_t ep, int rank, weft_seg_t seg,
                                  weft_ucx_put_target_t *t);

/**
 * weft_put_nbi(t->ep, t->rank, t->seg, off, src, n): the same semantics,
 * errors and completion (weft_flush).  With weft_ucx.h the call is inline
 * (define WEFT_NO_INLINE to call the library): a few compares, then
 * ucp_put_nbx itself.
 */
weft_status_t weft_ucx_put_nbi(weft_ucx_put_target_t *t, size_t off, const void *src, size_t n);

/* The library's part of the inline put, not calls of the API: the put
 * itself when the inline test fails (weft__ucx_put_call), and what follows
 * a put UCX did not complete at once or the last of a budget
 * (weft__ucx_put_more). */
weft_status_t
weft__ucx_put_call(weft_ucx_put_target_t *t, size_t off, const void *src, size_t n);
weft_status_t
weft__ucx_put_more(weft_ucx_put_target_t *t, ucs_status_ptr_t sp);

/* The test sends to the library what it alone does: a target that is not
 * current (the endpoint's word of gate and flush epoch is not its key: a
 * weft_flush since, which is also how a freed segment or a destroyed
 * endpoint shows, a gate bit set -- a failure known to the context, a
 * trace point -- or a target never filled), an access outside the
 * segment, a NULL source.  The tests are combined without short-circuits
 * into one branch (every field read is there to read).  A put UCX
 * completes at once then costs a count of the budget; when it runs out
 * weft adds it to the endpoint's window of implicit operations
 * (weft__ucx_put_more), as weft_put_nbi counts each put.  The library's
 * weft_ucx_put_nbi is this body too. */
#if defined(WEFT_BUILDING) || (!defined(WEFT_NO_INLINE) && defined(__GNUC__))
static inline __attribute__((always_inline)) weft_status_t
weft__ucx_put_nbi(weft_ucx_put_target_t *t, size_t off, const void *src, size_t n)
{
    const struct weft_inline_ep *e;
    ucs_status_ptr_t sp;
    size_t end;

    if (__builtin_expect(t == NULL, 0))
        return weft__ucx_put_call(t, off, src, n);
    e = (const struct weft_inline_ep *)t->check;
    if (__builtin_expect((!__builtin_add_overflow(off, n, &end) & (end <= t->size) &
                          (src != NULL) & (weft__inline_word_of(e) == t->key)) != 0,
                         1)) {
        sp = ucp_put_nbx(t->uep, src, n, t->base + off, t->rkey, t->param);
        if (__builtin_expect(sp == NULL, 1) && __builtin_expect(--t->budget != 0, 1))
            return WEFT_OK;
        return weft__ucx_put_more(t, sp);
    }
    return weft__ucx_put_call(t, off, src, n);
}
#endif

#if !defined(WEFT_BUILDING) && !defined(WEFT_NO_INLINE) && defined(__GNUC__)

/* A program that uses this layout needs a library that provides it. */
extern const unsigned weft_ucx_put_layout_v2;
__attribute__((used)) static const unsigned *const weft__ucx_put_layout = &weft_ucx_put_layout_v2;

#define weft_ucx_put_nbi(t, off, src, n) weft__ucx_put_nbi(t, off, src, n)

#endif /* inline path */

#ifdef __cplusplus
}
#endif

#endif /* WEFT_UCX_H */
