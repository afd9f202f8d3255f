/*
 * ep -- endpoints: a UCX worker plus this endpoint's connections to every
 * peer and its target cache (per segment and rank: the connection, the
 * remote key it has unpacked, the base address and the mapped part).  An
 * endpoint is used by one thread at a time and takes no lock of weft's on
 * the fast path.  Also endpoint pools (pool.c): per-thread endpoints on
 * workers and UCX contexts shared as a policy says, and what they cost.
 * May call runtime and prof.
 *
 * Layout:
 *   ep.c        endpoints: connection, target cache, progress, waits, teardown
 *   pool.c      weft_ep_pool_*: policies, workers, what a pool costs
 */
#ifndef WEFT_EP_H
#define WEFT_EP_H

#include "runtime/runtime.h"

#define WEFT__HOME_EVERY_MASK 15   /* pool endpoints serve home every 16th progress */
/* Implicit operations per window: UCX completes many at once (NULL) while
 * it still holds their data or their acknowledgement (TCP: about 300 bytes
 * each), so every WEFT__NBI_WINDOW of them an endpoint starts a
 * non-blocking flush, and waits for the previous window's one first: at
 * most two windows are ever outstanding. */
#define WEFT__NBI_WINDOW      8192

/* Everything a one-sided operation needs about (rank, segment), in one
 * place, so the fast path reads a single entry.  The entries form the
 * endpoint's target cache: a row per segment id, an entry per rank, filled
 * on first use through weft__ep_tgt_slot (by seg) and read through
 * weft__ep_tgt (by rma). */
struct weft__tgt {
    ucp_ep_h   ep;     /* this endpoint's connection to rank (UCX path) */
    ucp_rkey_h rkey;   /* rank's key (UCX path), NULL on the direct path */
    uint64_t   base;   /* the segment's base address at rank; 0 until the
                        * entry is filled, which marks it unused */
    char      *local;  /* rank's part mapped here (direct path), or NULL */
};

/* The last target weft_put_nbi reached through UCX, copied out of the
 * target cache so that a run of puts to one (rank, segment) finds it with
 * one compare of each and no table walk.  Empty (seg == WEFT__LAST_NONE)
 * until a put fills it, and again when any row of the target cache is
 * released (a segment freed, the endpoint destroyed: tgt_free_row), so
 * its key is never one that was destroyed.  Once the context learns of a
 * failure, the gate's WEFT__GATE_FAILED bit (ep->divert) sends every put
 * to the complete path, which refuses a failed rank.  It holds the flush
 * epoch it was filled in: the first put of an epoch takes the complete
 * path, which stamps the rank with the epoch (weft__ep_tgt), so that a
 * flush after the rank fails reports the puts of the epoch as possibly
 * lost; the puts after it in the epoch need no stamp of their own. */
struct weft__last {
    const void *seg;    /* the segment handle, or WEFT__LAST_NONE */
    int         rank;
    unsigned    epoch;  /* ep->flush_epoch when filled */
    size_t      size;   /* the segment's bytes per rank */
    ucp_ep_h    ep;
    ucp_rkey_h  rkey;
    uint64_t    base;   /* the segment's base address at rank */
};

/* No handle is this address: an empty last target matches no call. */
extern const char weft__last_none;
#define WEFT__LAST_NONE ((const void *)&weft__last_none)

static inline void weft__last_clear(struct weft__last *l)
{
    l->seg = WEFT__LAST_NONE;
}

/* The first ten fields are what the inline path of weft_inline.h reads
 * (struct weft_inline_ep, layout WEFT_INLINE_LAYOUT): moving or changing
 * one is a new layout; ep.c checks the offsets when it compiles. */
struct weft__ep {
    /* The gate: nonzero sends weft_put_nbi off its untraced fast path, and
     * every inline operation to the library.  Its bits: check (1, under
     * WEFT_CHECK=1), WEFT__PROF_DIVERT while a trace point is selected (the
     * prof layer watches the word), WEFT__GATE_FAILED once the context
     * knows a failed rank (the runtime sets it: weft__peer_gate), and
     * WEFT__GATE_DEAD once the endpoint is destroyed, WEFT__GATE_WORN once
     * its flush epoch has wrapped. */
    unsigned            divert;
    unsigned            flush_epoch;  /* weft_flush calls so far, from 1 (0 is "never");
                                       * with divert, the 8-byte word a kept target
                                       * compares with its key */
    weft_ctx_t          ctx;
    /* Operations lost to ranks that failed after they were issued: the
     * target lookup (weft__ep_tgt) and the inline path stamp the rank with
     * the current flush epoch; a rank found failed (weft__ep_drop_failed)
     * whose stamp is the current epoch had operations that no weft_flush
     * has completed, and the next weft_flush reports it.  Stamps are never
     * cleared: a flush moves the epoch on instead. */
    unsigned           *touched;      /* [nranks]: epoch of the last operation to the rank */
    int                 nranks;
    int                 stamped;      /* a rank whose stamp is flush_epoch, or -1: the
                                       * inline path stamps only another; set to -1
                                       * whenever that may no longer hold
                                       * (weft__ep_unstamp) */
    /* The inline path's near target (struct weft_inline_ep): its rank is
     * stamped in this epoch, so it is emptied with stamped; and when any
     * segment is freed.  Empty: near_seg is WEFT__LAST_NONE. */
    const void         *near_seg;
    int                 near_rank;
    size_t              near_lim;
    char               *near_base;
    struct weft__last   last;         /* weft_put_nbi's last UCX target (rma.c) */
    struct weft__gate   gate;         /* divert in the context's list of gate words */
    uint32_t            state;        /* WEFT__ALIVE while usable */
    ucp_worker_h        worker;
    ucp_ep_h           *peers;        /* [nranks], connected on first use */
    struct weft__tgt  **tgts;         /* the target cache: [segment id][rank] */
    unsigned            ntgts;        /* rows of tgts */
    unsigned            check;        /* WEFT_CHECK=1: every operation takes the slow path's
                                       * extra checks (rma.c) */
    size_t              inflight;     /* implicit operations not yet completed */
    size_t              max_inflight; /* above this, progress before issuing */
    weft_status_t       nbi_error;    /* first failure of an implicit operation */
    unsigned            window_ops;   /* implicit operations since the last window flush */
    ucs_status_ptr_t    window_req;   /* that flush, while outstanding, or NULL */
    int                 ucx_issued;   /* an operation went through UCX since the last weft_flush */
    unsigned            fail_seen;    /* ctx->fail_gen when its failed peers were dropped */
    unsigned            poll_tick;    /* weft_progress calls, to look for dead ranks every 64th */
    int                 serves_home;  /* its progress calls also progress the home worker */
    unsigned            home_tick;    /* progress calls, to serve home every 16th */
    int                 cb_shared;    /* callbacks of its operations may run on another
                                       * thread: the progress thread's, or a thread that
                                       * shares its worker under UCX's lock */
    int                 marks_home;   /* its worker is home and a progress thread runs:
                                       * its progress calls say so (weft__ctx_app_polled) */
    pthread_mutex_t     am_lock;      /* am_slots, when cb_shared */
    ucp_request_param_t prm_nbi;      /* implicit ops: completion callback */
    ucp_request_param_t prm_nb;       /* explicit ops: completion via event */
    ucp_request_param_t prm_nbi64;    /* prm_nbi with a datatype of 8 bytes: a 64-bit
                                       * implicit atomic without a reply (rma.c) */
    struct weft__am_slot *am_slots;   /* free send-header buffers of the am layer */
    struct weft__ep    *next;         /* the context's list */
    /* pool endpoints */
    struct weft__ep_pool *pool;       /* NULL for the default endpoint */
    struct weft__pool_worker *pw;     /* its worker's pool entry */
    int                 thread;       /* pool thread that owns it */
    int                 check_owner;  /* weft_progress/flush check the caller */
    int                 owner_set;
    pthread_t           owner;        /* the thread that got it (check_owner) */
    int                 lost_rank;    /* a failed rank with operations of this epoch, or -1 */
};

/* The endpoint's next flush epoch, its stamp and near target forgotten
 * (weft__ep_unstamp); after 2^32 - 1 epochs the gate's WEFT__GATE_WORN
 * bit. */
void weft__ep_next_epoch(struct weft__ep *ep);

/* No rank is stamped in the endpoint's epoch any more: the inline path
 * stamps the next it reaches, and its near target is empty. */
static inline void weft__ep_unstamp(struct weft__ep *ep)
{
    ep->stamped = -1;
    ep->near_seg = WEFT__LAST_NONE;
}

/* A worker of a pool, with the lock its threads take under LOCK_CALLER. */
struct weft__pool_worker {
    ucp_worker_h        worker;
    pthread_spinlock_t  lock;
    unsigned            users;        /* threads that use it */
    int                 caller_lock;  /* users > 1 and LOCK_CALLER */
    unsigned long long  acquired;     /* weft_ep_lock calls that took the lock */
};

/* The gate bit of a destroyed endpoint: its stale handle reaches the
 * library, which reports it, and never the freed stamps. */
#define WEFT__GATE_DEAD 0x20000000u

/* The gate bit of an endpoint whose flush epoch wrapped after 2^32 - 1
 * epochs: an epoch that a kept target holds (weft_target_t,
 * weft_ucx_put_target_t) could match again, so every access goes to the
 * library from then on (weft__ep_next_epoch). */
#define WEFT__GATE_WORN 0x10000000u

/* Per-context state of the ep layer. */
struct weft__ep_layer {
    struct weft__ep *eps;       /* every endpoint of the context */
    struct weft__ep *dflt;      /* weft_ep_default, created on first call */
    struct weft__ep_pool *pools;/* live pools */
    struct weft__ep_pool *dead_pools; /* destroyed ones, kept as shells with their
                                       * endpoints' so stale handles get an error */
};

static inline struct weft__ep_layer *weft__ep_layer(weft_ctx_t ctx)
{
    return (struct weft__ep_layer *)ctx->layer[WEFT__LAYER_EP];
}

/* WEFT_OK for a usable endpoint, else an error naming fn. */
weft_status_t weft__ep_check(weft_ep_t ep, const char *fn);

/* weft__ep_check, and with check_owner, that the caller owns ep
 * (WEFT_ERR_BUSY otherwise). */
weft_status_t weft__ep_check_caller(weft_ep_t ep, const char *fn);

/* Create an endpoint on worker (which the caller owns) and add it to the
 * context's list; fn names the public call in messages.  Caller holds
 * ctx->lock. */
weft_status_t weft__ep_create(weft_ctx_t ctx, ucp_worker_h worker, struct weft__ep **out,
                              const char *fn);

/* Flush, then close ep's connections and keys and unlink it from the
 * context's list (every rank has flushed and met at a barrier since); fn
 * names the public call in messages.  Caller holds ctx->lock. */
void weft__ep_destroy(struct weft__ep *ep, const char *fn);

/* Complete ep's operations (weft_flush without the checks). */
weft_status_t weft__ep_flush(weft_ep_t ep, const char *fn);

/* Before what the fast path reads without a lock goes (a segment's target
 * entries): complete the operations of every endpoint that is not a
 * pool's, and WEFT_ERR_BUSY, recorded for fn, when a pool endpoint still
 * has operations that no weft_flush completed (its own thread completes
 * them).  The caller then agrees with the other ranks. */
weft_status_t weft__ep_quiesce(weft_ctx_t ctx, const char *fn);

/* The pools' part of teardown: workers and UCX contexts (after every
 * endpoint is destroyed).  In pool.c. */
void weft__pools_teardown(weft_ctx_t ctx);

/* Slow path of the peer lookup: connect ep to rank. */
weft_status_t weft__ep_connect(weft_ep_t ep, int rank, const char *fn);

/* If ranks failed since ep last looked, close its connections to them, so
 * that their outstanding operations complete with an error, and empty its
 * target entries of them, so that new operations to them take the slow
 * path, which refuses them.  Owner only; in every wait, flush and progress
 * call, and where UCX reports an error. */
void weft__ep_drop_failed(weft_ep_t ep);
static inline void weft__ep_sync_failed(weft_ep_t ep)
{
    if (WEFT__UNLIKELY(ep->fail_seen != weft__fail_gen(ep->ctx)))
        weft__ep_drop_failed(ep);
}

/* Progress ep's worker (and the home worker when nobody else serves it),
 * after weft__ep_sync_failed. */
unsigned weft__ep_progress(weft_ep_t ep);

/* Wait for a UCX request issued on ep and release it.  rank is the target
 * of the operation, or WEFT__ANY_RANK.  When WEFT_TIMEOUT_MS passes, a
 * request to a rank ends by declaring the rank failed (its connections
 * close, which completes the request), and the call returns
 * WEFT_ERR_TIMEOUT; any other request is left to the caller, still
 * outstanding, with WEFT_ERR_TIMEOUT. */
#define WEFT__ANY_RANK (-1)
weft_status_t weft__ep_wait_req(weft_ep_t ep, ucs_status_ptr_t req, int rank, const char *fn,
                                const char *what);

/* Wait until ep's implicit operations are below max_inflight - 1 */
void weft__ep_backpressure(weft_ep_t ep);

/* Close a window of implicit operations: wait for the previous window's
 * flush, then start one for this window (WEFT__NBI_WINDOW). */
weft_status_t weft__ep_window(weft_ep_t ep, const char *fn);

/* ep's entry for (segment id, rank), or NULL while it is not filled: the
 * read of the fast path.  Every one-sided operation finds its target here,
 * so this is also where the rank is stamped with the flush epoch (a load
 * of a line the caller reads anyway and a store, no branch): a flush that
 * covers an operation to a rank that failed meanwhile reports the loss. */
static inline const struct weft__tgt *weft__ep_tgt(const struct weft__ep *ep, unsigned id,
                                                   int rank)
{
    const struct weft__tgt *row;

    if (WEFT__UNLIKELY(id >= ep->ntgts || (row = ep->tgts[id]) == NULL || row[rank].base == 0))
        return NULL;
    ep->touched[rank] = ep->flush_epoch;
    return &row[rank];
}

/* The entry for (segment id, rank) for the caller to fill, its row made on
 * first use; NULL, with the error recorded for fn, when memory runs out.
 * Owner of ep only. */
struct weft__tgt *weft__ep_tgt_slot(struct weft__ep *ep, unsigned id, int rank, const char *fn);

/* Release every endpoint's row of segment id (the keys it unpacked), when
 * the segment is freed: the fast path then finds no entry.  Caller holds
 * ctx->lock, and no operation on the segment is outstanding. */
void weft__ep_tgt_forget(weft_ctx_t ctx, unsigned id);

/* Account for an implicit operation's request: NULL (done) costs a count
 * of the window, a pending request is counted until its callback runs. */
static inline weft_status_t weft__ep_track(weft_ep_t ep, ucs_status_ptr_t sp, const char *fn,
                                           const char *what)
{
    if (WEFT__UNLIKELY(sp != NULL)) {
        if (WEFT__UNLIKELY(UCS_PTR_IS_ERR(sp))) {
            weft__ep_sync_failed(ep);
            return weft__ucs_error(UCS_PTR_STATUS(sp), fn, what);
        }
        if (__atomic_add_fetch(&ep->inflight, 1, __ATOMIC_RELAXED) >= ep->max_inflight)
            weft__ep_backpressure(ep);
    }
    if (WEFT__UNLIKELY(++ep->window_ops >= WEFT__NBI_WINDOW))
        return weft__ep_window(ep, fn);
    return WEFT_OK;
}

#endif
