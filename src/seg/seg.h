/*
 * seg -- symmetric segments: memory every rank allocates collectively,
 * registered with UCX, whose remote keys and base addresses every rank
 * knows.  Between ranks of one node (same node name) segments are
 * cross-mapped POSIX shared memory, so the direct path of rma can reach a
 * peer's part with loads and stores; which ranks share a node is the
 * runtime's answer (weft__ctx_node).  May call ep (its target cache
 * through weft__ep_tgt_slot and weft__ep_tgt_forget, weft__ep_quiesce
 * before a segment goes), runtime, prof.
 */
#ifndef WEFT_SEG_H
#define WEFT_SEG_H

#include "ep/ep.h"

/* The first three fields are what the inline path of weft_inline.h reads
 * (struct weft_inline_seg, layout WEFT_INLINE_LAYOUT): moving or changing
 * one is a new layout; seg.c checks the offsets when it compiles. */
struct weft__seg {
    weft_ctx_t   live_ctx;     /* the context while alive, NULL after: one
                                * compare on the fast path checks both */
    char       **mapped;       /* [rank] rank's part mapped here, or NULL
                                * (another node, or WEFT_SHM=0); NULL once freed */
    size_t       size;         /* bytes per rank */
    uint32_t     state;        /* WEFT__ALIVE until weft_seg_free */
    unsigned     id;           /* its row in each endpoint's target cache */
    weft_ctx_t   ctx;
    void        *base;         /* this rank's part */
    ucp_mem_h    memh;
    uint64_t    *bases;        /* [rank] remote base addresses */
    size_t       map_len;      /* bytes of each mapping (whole pages) */
    int          own_shm;      /* base is a shared-memory mapping of ours */
    char        *keys;         /* every rank's packed rkey */
    size_t      *key_off;      /* [rank + 1] offsets into keys */
    struct weft__seg *next;    /* the context's list, live and freed */
    size_t      *sizes;        /* [rank] bytes of each rank's part of a segment
                                * of registered memory (weft_seg_register),
                                * else NULL; size is then the smallest, so a
                                * check against size alone never lets an
                                * access past a part */
};

/* Bytes of rank's part of seg. */
static inline size_t weft__seg_size(const struct weft__seg *seg, int rank)
{
    return seg->sizes ? seg->sizes[rank] : seg->size;
}

/* Slow path of the target lookup: fill ep's entry for (seg, rank).  A
 * rank mapped here gets the direct path (its mapped base, no connection)
 * unless ucx is set; otherwise ep is connected to rank and the key
 * unpacked.  ucx = 1 fills the UCX fields of a direct entry too, for
 * programs that use UCX on weft's memory (weft_ucx.h). */
weft_status_t weft__seg_fill_target(weft_ep_t ep, weft_seg_t seg, int rank, int ucx,
                                    const char *fn);

/* WEFT_CHECK=1: a local buffer of n bytes that starts inside a live
 * segment of ctx (this rank's part or a peer's part mapped here) must end
 * inside it too; WEFT_ERR_BOUNDS naming fn otherwise.  Walks the
 * segments under ctx->lock. */
weft_status_t weft__seg_check_local(weft_ctx_t ctx, const void *buf, size_t n, const char *fn);

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
