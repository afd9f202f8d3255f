/*
 * seg -- symmetric segments: memory every rank allocates collectively,
 * registered with UCX, whose remote keys and base addresses every rank
 * knows.  May call ep, runtime, prof.
 */
#ifndef WEFT_SEG_H
#define WEFT_SEG_H

#include "ep/ep.h"

struct weft__seg {
    uint32_t     state;        /* WEFT__ALIVE until weft_seg_free */
    weft_ctx_t   live_ctx;     /* the context while alive, NULL after: one
                                * compare on the fast path checks both */
    unsigned     id;           /* index into each endpoint's rkey table */
    weft_ctx_t   ctx;
    size_t       size;         /* bytes per rank */
    void        *base;         /* this rank's part */
    ucp_mem_h    memh;
    uint64_t    *bases;        /* [rank] remote base addresses */
    char        *keys;         /* every rank's packed rkey */
    size_t      *key_off;      /* [rank + 1] offsets into keys */
    struct weft__seg *next;    /* the context's list, live and freed */
};

/* Slow path of the target lookup: unpack rank's key of seg for ep and
 * fill ep's target entry (ep must be connected to rank). */
weft_status_t weft__seg_unpack_rkey(weft_ep_t ep, weft_seg_t seg, int rank, const char *fn);

/* Check that seg is a live segment of ep's context; fn names the caller. */
static inline weft_status_t weft__seg_check(weft_ep_t ep, weft_seg_t seg, const char *fn)
{
    if (WEFT__UNLIKELY(seg == NULL))
        return weft__error(WEFT_ERR_SEG, fn, "segment is NULL");
    if (WEFT__UNLIKELY(seg->ctx != ep->ctx || seg->state != WEFT__ALIVE))
        return weft__error(WEFT_ERR_SEG, fn, "segment %p is freed or belongs to another context",
                           (void *)seg);
    return WEFT_OK;
}

#endif
