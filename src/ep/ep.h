/*
 * ep -- endpoints: a UCX worker plus this endpoint's connections to every
 * peer and the remote keys it has unpacked.  An endpoint is used by one
 * thread at a time and takes no lock on the fast path.  May call runtime
 * and prof.
 */
#ifndef WEFT_EP_H
#define WEFT_EP_H

#include "runtime/runtime.h"

/* Everything a one-sided operation needs about (rank, segment), in one
 * place, so the fast path reads a single entry. */
struct weft__tgt {
    ucp_ep_h   ep;     /* this endpoint's connection to rank (UCX path) */
    ucp_rkey_h rkey;   /* rank's key (UCX path), NULL on the direct path */
    uint64_t   base;   /* the segment's base address at rank; 0 until the
                        * entry is filled, which marks it unused */
    char      *local;  /* rank's part mapped here (direct path), or NULL */
};

struct weft__ep {
    uint32_t            state;        /* WEFT__ALIVE while usable */
    int                 nranks;
    weft_ctx_t          ctx;
    ucp_worker_h        worker;
    int                 owns_worker;  /* 0 when it is the context's home worker */
    ucp_ep_h           *peers;        /* [nranks], connected on first use */
    struct weft__tgt  **tgts;         /* [segment id][rank], filled on first use */
    unsigned            ntgts;        /* length of tgts */
    size_t              inflight;     /* implicit operations not yet completed */
    size_t              max_inflight; /* above this, progress before issuing */
    weft_status_t       nbi_error;    /* first failure of an implicit operation */
    pthread_mutex_t     am_lock;      /* am_slots, when a progress thread completes sends */
    ucp_request_param_t prm_nbi;      /* implicit ops: completion callback */
    ucp_request_param_t prm_nb;       /* explicit ops: completion via event */
    struct weft__am_slot *am_slots;   /* free send-header buffers of the am layer */
    struct weft__ep    *next;         /* the context's list */
};

/* Per-context state of the ep layer. */
struct weft__ep_layer {
    struct weft__ep *eps;       /* every endpoint of the context */
    struct weft__ep *dflt;      /* weft_ep_default, created on first call */
};

static inline struct weft__ep_layer *weft__ep_layer(weft_ctx_t ctx)
{
    return (struct weft__ep_layer *)ctx->layer[WEFT__LAYER_EP];
}

/* WEFT_OK for a usable endpoint, else an error naming fn. */
weft_status_t weft__ep_check(weft_ep_t ep, const char *fn);

/* Slow path of the peer lookup: connect ep to rank. */
weft_status_t weft__ep_connect(weft_ep_t ep, int rank, const char *fn);

/* Progress ep's worker (and the home worker when nobody else serves it). */
unsigned weft__ep_progress(weft_ep_t ep);

/* Wait for a UCX request issued on ep and release it. */
weft_status_t weft__ep_wait_req(weft_ep_t ep, ucs_status_ptr_t req, const char *fn,
                                const char *what);

/* Wait until ep's implicit operations are below max_inflight - 1 */
void weft__ep_backpressure(weft_ep_t ep);

/* Account for an implicit operation's request: NULL (done) costs nothing,
 * a pending request is counted until its callback runs. */
static inline weft_status_t weft__ep_track(weft_ep_t ep, ucs_status_ptr_t sp, const char *fn,
                                           const char *what)
{
    if (WEFT__LIKELY(sp == NULL))
        return WEFT_OK;
    if (WEFT__UNLIKELY(UCS_PTR_IS_ERR(sp)))
        return weft__ucs_error(UCS_PTR_STATUS(sp), fn, what);
    if (WEFT__UNLIKELY(__atomic_add_fetch(&ep->inflight, 1, __ATOMIC_RELAXED) >= ep->max_inflight))
        weft__ep_backpressure(ep);
    return WEFT_OK;
}

#endif
