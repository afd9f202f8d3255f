/* Kept targets (weft_target_t, include/weft.h; inline forms in
 * include/weft_inline.h): the library's part of their inline forms --
 * filling a target, and every access the inline test leaves to the
 * library, which is the plain call on (ep, rank, seg) followed by making
 * the target current again -- and the exported forms, for programs built
 * without the inline path.
 *
 * A target may run inline while its key is the endpoint's word of gate
 * and flush epoch: the gate shut and the epoch the target took
 * (weft__inline_key).  Filling it stamps the rank with that
 * epoch, as the inline path of weft_put_nbi does for a run of accesses to
 * one rank, so that a flush after the rank fails reports the accesses of
 * the epoch as possibly lost (the inline forms take a new epoch the same
 * way, weft__target_renew).  Every event after which the target's fields
 * may be wrong moves the epoch on (weft_seg_free: weft__ep_tgt_forget) or
 * sets the gate (WEFT_CHECK=1, a trace point, a known failure, the
 * endpoint destroyed, its epoch wrapped: WEFT__GATE_WORN). */
#include "rma/rma.h"

/* Programs built with the inline forms refer to this symbol: a library
 * whose weft_target_t differs has none, and they fail to load. */
const unsigned weft_target_layout_v2 = WEFT_TARGET_LAYOUT;

/* After an access through t succeeded in the library: make t current when
 * its rank is mapped here and the gate is shut.  A rank that is not mapped
 * never will be (for this segment): such a target keeps weft__inline_none
 * and is not looked at again. */
static void target_refresh(weft_target_t *t)
{
    weft_ep_t ep = t->ep;
    weft_seg_t seg = t->seg;
    char *base;
    size_t size;

    if (t->check == (const void *)&weft__inline_none ||
        (t->check == (const void *)ep && t->key == weft__inline_key(ep->flush_epoch)) ||
        __atomic_load_n(&ep->divert, __ATOMIC_RELAXED) != 0 || seg->live_ctx != ep->ctx)
        return;
    base = seg->mapped != NULL ? seg->mapped[t->rank] : NULL;
    size = weft__seg_size(seg, t->rank);
    if (base == NULL || size < WEFT_INLINE_MAX) {
        t->check = &weft__inline_none;
        t->key = 0;
        return;
    }
    ep->touched[t->rank] = ep->flush_epoch;
    t->base = base;
    t->size = size;
    t->check = ep;
    t->key = weft__inline_key(ep->flush_epoch);
}

struct weft__target_ret weft__target_make(weft_ep_t ep, int rank, weft_seg_t seg)
{
    struct weft__target_ret r = {
        .t = {.check = ep, .key = 0, .rank = rank, .ep = ep, .seg = seg},
        .st = weft__rma_check_target(ep, rank, seg, "weft_target_init"),
    };

    if (r.st != WEFT_OK)
        r.t.check = &weft__inline_none;
    else
        target_refresh(&r.t);
    return r;
}

struct weft__target_ret weft__target_call(weft_target_t t, int op, size_t off, void *buf, size_t n,
                                          uint64_t value)
{
    struct weft__target_ret r;

    switch (op) {
    case WEFT__TOP_PUT_NBI: r.st = (weft_put_nbi)(t.ep, t.rank, t.seg, off, buf, n); break;
    case WEFT__TOP_PUT:     r.st = (weft_put)(t.ep, t.rank, t.seg, off, buf, n); break;
    case WEFT__TOP_GET_NBI: r.st = (weft_get_nbi)(t.ep, buf, t.rank, t.seg, off, n); break;
    case WEFT__TOP_GET:     r.st = (weft_get)(t.ep, buf, t.rank, t.seg, off, n); break;
    case WEFT__TOP_ADD_NBI: r.st = (weft_atomic_add_nbi)(t.ep, t.rank, t.seg, off, value); break;
    case WEFT__TOP_FETCH_ADD:
        r.st = (weft_atomic_fetch_add)(t.ep, t.rank, t.seg, off, value, buf);
        break;
    default:
        r.st = weft__error(WEFT_ERR_INVALID_ARG, "weft_target", "operation %d is not one of weft's",
                           op);
        break;
    }
    if (r.st == WEFT_OK)
        target_refresh(&t);
    r.t = t;
    return r;
}

/* The exported forms: the library call every time (the inline forms are
 * the fast path), keeping *t current as they do. */
static weft_status_t call(weft_target_t *t, const char *fn, int op, size_t off, void *buf, size_t n,
                          uint64_t value)
{
    struct weft__target_ret r;

    if (t == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "the target is NULL");
    r = weft__target_call(*t, op, off, buf, n, value);
    *t = r.t;
    return r.st;
}

weft_status_t(weft_target_init)(weft_ep_t ep, int rank, weft_seg_t seg, weft_target_t *t)
{
    struct weft__target_ret r;

    if (t == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, "weft_target_init", "the target is NULL");
    r = weft__target_make(ep, rank, seg);
    *t = r.t;
    return r.st;
}

weft_status_t(weft_target_put_nbi)(weft_target_t *t, size_t off, const void *src, size_t n)
{
    return call(t, "weft_target_put_nbi", WEFT__TOP_PUT_NBI, off, (void *)(uintptr_t)src, n, 0);
}

weft_status_t(weft_target_put)(weft_target_t *t, size_t off, const void *src, size_t n)
{
    return call(t, "weft_target_put", WEFT__TOP_PUT, off, (void *)(uintptr_t)src, n, 0);
}

weft_status_t(weft_target_get_nbi)(weft_target_t *t, void *dst, size_t off, size_t n)
{
    return call(t, "weft_target_get_nbi", WEFT__TOP_GET_NBI, off, dst, n, 0);
}

weft_status_t(weft_target_get)(weft_target_t *t, void *dst, size_t off, size_t n)
{
    return call(t, "weft_target_get", WEFT__TOP_GET, off, dst, n, 0);
}

weft_status_t(weft_target_atomic_add_nbi)(weft_target_t *t, size_t off, uint64_t value)
{
    return call(t, "weft_target_atomic_add_nbi", WEFT__TOP_ADD_NBI, off, NULL, sizeof(uint64_t),
                value);
}

weft_status_t(weft_target_atomic_fetch_add)(weft_target_t *t, size_t off, uint64_t value,
                                            uint64_t *old)
{
    return call(t, "weft_target_atomic_fetch_add", WEFT__TOP_FETCH_ADD, off, old, sizeof(uint64_t),
                value);
}
