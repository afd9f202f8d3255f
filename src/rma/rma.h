/*
 * rma -- one-sided operations: put, get, atomics (64-bit and typed),
 * put-with-signal, fence and local completion, and the events that
 * complete them (rma.c; include/weft.h; weft_ucx_target of
 * include/weft_ucx.h), and strided put/get over the public calls
 * (strided.c).  Owns no state of its own: what an operation needs
 * about its target is the endpoint's target cache (ep), which the segment
 * layer fills.  May call seg, ep, runtime, prof.
 *
 * Two paths, chosen per target: a rank of this node whose part of the
 * segment is mapped here (seg) is reached by the initiator's own loads and
 * stores -- the direct path, complete when the call returns -- and any
 * other rank through UCX.  rma.c chooses in one place (rma_issue), with one
 * test of the target's mapped pointer.
 */
#ifndef WEFT_RMA_H
#define WEFT_RMA_H

#include "seg/seg.h"

/* The endpoint, the rank and the segment of a transfer, as weft_put checks
 * them first (rma.c): WEFT_OK, or the error recorded for fn. */
weft_status_t weft__rma_check_target(weft_ep_t ep, int rank, weft_seg_t seg, const char *fn);

/* What a kept target (weft_target_t, weft_ucx_put_target_t) that never
 * runs inline reads instead of an endpoint (rma.c): a rank it does not
 * reach inline, a segment too small for the inline sizes, or arguments
 * the library refused.  Its gate is set, so its word is never a key. */
extern const struct weft_inline_ep weft__inline_none;

#endif
