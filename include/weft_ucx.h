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

#ifdef __cplusplus
}
#endif

#endif /* WEFT_UCX_H */
