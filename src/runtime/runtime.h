/*
 * runtime -- init/finalize, configuration, MPI bootstrap, errors, peer
 * failure, and which node each rank is on.
 *
 * Owns the process-wide state of a context: the MPI communicator, the UCX
 * context, the "home" worker whose address peers connect to (incoming
 * operations and active messages are served there), the address table,
 * the peer table (who has failed) and the optional progress thread; and
 * the settings: WEFT_* variables, their parsers and the per-rank list
 * grammar (settings.h), WEFT_TOPO_NODE and the host name that say which
 * ranks share a node (node.c).  May call prof.  Upper layers attach
 * their state and cleanup to the context with weft__ctx_layer().
 *
 * Layout:
 *   runtime.c   weft_init, weft_finalize, layers, progress thread, agreement
 *   config.c    weft_config_t and the parsers of WEFT_* settings
 *   node.c      per-rank lists, WEFT_TOPO_NODE, a rank's node
 *   peer.c      peer failure, wait loops, WEFT_TIMEOUT_MS, UCX's configuration
 *   errors.c    status names, the last error, messages of pure functions
 *   profile.c   WEFT_PROFILE and WEFT_PROFILE_FILE
 */
#ifndef WEFT_RUNTIME_H
#define WEFT_RUNTIME_H

#include <weft.h>
#include "prof/prof.h"
#include "runtime/settings.h"
#include <mpi.h>
#include <pthread.h>
#include <ucp/api/ucp.h>

#define WEFT__LIKELY(x)   __builtin_expect(!!(x), 1)
#define WEFT__UNLIKELY(x) __builtin_expect(!!(x), 0)

enum { WEFT__ALIVE = 0x77656674 /* "weft" */, WEFT__DEAD = 0x64656164 /* "dead" */ };

/* Layers that keep per-context state, torn down top first. */
enum { WEFT__LAYER_EP, WEFT__LAYER_SEG, WEFT__LAYER_AM, WEFT__NUM_LAYERS };

/* quiesce: complete outstanding operations (before the final barrier);
 * teardown: release the layer's resources (after it). */
typedef weft_status_t (*weft__quiesce_fn)(weft_ctx_t ctx);
typedef void (*weft__teardown_fn)(weft_ctx_t ctx);

/* Request space UCX reserves in each of its requests, so an outstanding
 * operation (a weft_event_t) needs no allocation of ours. */
typedef struct weft__req {
    struct weft__ep *ep;        /* whose worker completes it */
} weft__req_t;

/* What the context knows of one rank's liveness.  The address of an entry
 * is the argument of UCX's error callback on every connection to it. */
struct weft__peer {
    weft_ctx_t ctx;
    int        rank;
    int        pidfd;   /* a rank of this host: readable once it exits; else -1 */
    int        failed;  /* atomic: 1 once the rank is known dead */
};

#define WEFT__CACHE_LINE 64  /* what the padding of shared words assumes */

struct weft__ctx {
    uint32_t        state;          /* WEFT__ALIVE until weft_finalize */
    weft_config_t   cfg;
    MPI_Comm        comm;           /* private duplicate */
    int             rank, nranks;
    int             owns_mpi;       /* weft called MPI_Init_thread */
    ucp_context_h   ucp;
    ucp_worker_h    home;           /* peers connect here */
    int             home_busy;      /* a thread is progressing home (weft__ctx_progress_home) */
    char           *addrs;          /* all ranks' home worker addresses */
    size_t         *addr_off;       /* rank -> offset in addrs */
    pthread_mutex_t lock;           /* slow-path state (lists, registration) */
    /* progress thread */
    pthread_t       pthread;
    int             pthread_running;
    int             pthread_stop;   /* atomic: set by weft_finalize */
    int             pthread_wake;   /* eventfd that interrupts its sleep */
    /* atomic: how often application threads have progressed home while
     * the thread runs (weft__ctx_app_polled), on a line of its own: the
     * application writes it at every poll, the thread reads it */
    char            app_pad0[WEFT__CACHE_LINE];
    unsigned long   app_polls;
    char            app_pad1[WEFT__CACHE_LINE];
    /* per-layer state and teardown */
    void             *layer[WEFT__NUM_LAYERS];
    weft__quiesce_fn  quiesce[WEFT__NUM_LAYERS];
    weft__teardown_fn teardown[WEFT__NUM_LAYERS];
    struct weft__ctx *next_shell;   /* list of finalised contexts */
    /* peer failure */
    struct weft__peer *peer;        /* [nranks] */
    unsigned        fail_gen;       /* atomic: ranks known failed, bumped by each */
    /* Gate words (weft__peer_gate): once fail_gen is nonzero, each has bit
     * WEFT__GATE_FAILED, so that a fast path that tests its word already
     * needs no load of fail_gen.  A lock of their own, not ctx->lock: a
     * failure is learnt inside waits that run under ctx->lock. */
    pthread_mutex_t gate_lock;
    struct weft__gate *gates;       /* under gate_lock */
    uint64_t        next_scan_ns;   /* atomic: when waits next look at the pidfds */
    int             mpi_abandoned;  /* an MPI collective was left unfinished */
    int             last_barrier;   /* weft_finalize's barrier: ranks that finish
                                     * it first exit, which is not a failure */
    size_t          events_out;     /* atomic: events given to the caller (UCX
                                     * requests) that no weft_wait or weft_test
                                     * has consumed yet */
};

/* An event (a UCX request of the context) handed to the caller, and its
 * consumption.  weft_finalize keeps the home worker, where the requests
 * live, while any is outstanding, so that a later weft_wait or weft_test
 * of one can still read it and refuse it (WEFT_ERR_NOT_INIT) rather than
 * read freed memory.  A relaxed add beside a UCX request costs nothing
 * measurable; the direct path makes no event and counts nothing. */
static inline void weft__event_made(weft_ctx_t ctx)
{
    __atomic_add_fetch(&ctx->events_out, 1, __ATOMIC_RELAXED);
}
static inline void weft__event_done(weft_ctx_t ctx)
{
    __atomic_sub_fetch(&ctx->events_out, 1, __ATOMIC_RELAXED);
}

/* State of one wait loop: the deadline of WEFT_TIMEOUT_MS and the pause
 * between polls. */
typedef struct {
    weft_ctx_t ctx;
    unsigned   spins;
    uint64_t   deadline_ns;   /* 0: none */
} weft__waiter_t;

/* Record the calling thread's last error ("fn: message") and return st. */
weft_status_t weft__error(weft_status_t st, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* WEFT_OK for a live context, else WEFT_ERR_NOT_INIT with a message. */
weft_status_t weft__ctx_check(weft_ctx_t ctx, const char *fn);

static inline MPI_Comm weft__ctx_comm(weft_ctx_t ctx) { return ctx->comm; }

/* The state of a layer in ctx: created zeroed on first use, with the
 * cleanup weft_finalize runs (top layer first; either function may be
 * NULL).  Caller holds ctx->lock.  NULL, with the error recorded for fn,
 * when memory runs out. */
void *weft__ctx_layer(weft_ctx_t ctx, int layer, size_t size, weft__quiesce_fn quiesce,
                      weft__teardown_fn teardown, const char *fn);

/* What an upper layer must set up in every context before weft_init
 * returns (e.g. the am layer's receive handlers: a peer may send to this
 * rank as soon as weft_init returns there, before this rank uses the
 * layer).  The layer registers fn once, from a constructor, since the
 * runtime does not call up; weft_init runs the registered functions in
 * layer order, without ctx->lock held, and agrees on their status. */
typedef weft_status_t (*weft__ctx_init_fn)(weft_ctx_t ctx);
void weft__ctx_on_init(int layer, weft__ctx_init_fn fn);

/* Every wait loop: weft__wait_init before it, weft__wait_step after each
 * progress call (progressed: what the call did).  The step yields the core
 * after a short idle spin, since ranks may outnumber cores, and every 64
 * steps looks for dead ranks of this host (at most once a millisecond per
 * context) and returns WEFT_ERR_TIMEOUT, recorded for fn, once
 * WEFT_TIMEOUT_MS has passed. */
void weft__wait_init(weft__waiter_t *w, weft_ctx_t ctx);
weft_status_t weft__wait_step(weft__waiter_t *w, unsigned progressed, const char *fn);

/* Liveness: whether rank is known failed; mark it failed (idempotent; fn
 * and why go into the message of the caller's error); how many failures
 * the context has learnt (changes when another is learnt). */
static inline int weft__peer_failed(weft_ctx_t ctx, int rank)
{
    return __atomic_load_n(&ctx->peer[rank].failed, __ATOMIC_ACQUIRE);
}
void weft__peer_fail(weft_ctx_t ctx, int rank);
/* Look at the pidfds of the ranks of this host, at most once a ms. */
void weft__peer_poll(weft_ctx_t ctx);
static inline unsigned weft__fail_gen(weft_ctx_t ctx)
{
    return __atomic_load_n(&ctx->fail_gen, __ATOMIC_ACQUIRE);
}

/* Gate words: a word of an upper layer (an endpoint's) that its fast path
 * tests, nonzero sending the operation to a slow path.  weft__peer_gate
 * adds word to the context's list through g, a node the caller keeps
 * beside the word (so adding needs no memory and cannot fail), and sets
 * WEFT__GATE_FAILED in it if the context already knows a failed rank;
 * every failure learnt later sets that bit in every added word (relaxed
 * atomics, after fail_gen is bumped).  weft__peer_ungate takes g out of
 * the list (before the word is freed or reused).  The bit is never
 * cleared. */
#define WEFT__GATE_FAILED 0x40000000u
struct weft__gate {
    unsigned          *word;
    struct weft__gate *next;
};
void weft__peer_gate(weft_ctx_t ctx, struct weft__gate *g, unsigned *word);
void weft__peer_ungate(weft_ctx_t ctx, struct weft__gate *g);

/* Fill the error-handling fields of the parameters of a connection to
 * rank: UCX's peer error mode, with a callback that marks rank failed. */
void weft__peer_ep_params(weft_ctx_t ctx, int rank, ucp_ep_params_t *p);

/* The peer table at weft_init (collective: exchanges process ids) and
 * its release at weft_finalize. */
weft_status_t weft__peer_init(weft_ctx_t ctx);
void weft__peer_release(weft_ctx_t ctx);


/* The parameters of the context's UCX context (features, request size),
 * for other UCX contexts that must behave alike (endpoint pools). */
void weft__ucx_params(weft_ctx_t ctx, ucp_params_t *params);

/* The value of UCX setting name (e.g. "TLS") as weft's UCX contexts see
 * it: WEFT_UCX_<name>, else UCX_<name>, else NULL. */
const char *weft__ucx_env(const char *name);

/* UCX's configuration as every weft context reads it: the environment
 * (WEFT_UCX_* over UCX_*, so that weft's transports can be chosen apart
 * from an MPI that also runs over UCX),
 * plus error-handling support on UCX's shared-memory transports (posix,
 * sysv) unless [WEFT_]UCX_MM/POSIX/SYSV_ERROR_HANDLING is set.  Without it UCX
 * 1.13 refuses those transports to connections in peer error mode, and
 * ranks of one node talk over TCP loopback (about 150x slower puts).  When
 * UCX_TLS leaves those transports out, the setting is not made (UCX would
 * warn of an unused setting in every process).  Unless [WEFT_]UCX_TLS is
 * set, UCX's sysv transport is left out (TLS "^sysv") and, unless
 * [WEFT_]UCX_ALLOC_PRIO is set, segments UCX allocates come from posix
 * (0600) rather than System V (0660, SECURITY.md). */
ucs_status_t weft__ucx_config_read(ucp_config_t **config);

/* Whether UCX_TLS's value tls (NULL: unset) lets UCX use a transport of
 * its mm component (posix, sysv, xpmem). */
int weft__ucx_tls_has_mm(const char *tls);

/* Progress the home worker if no progress thread serves it and no other
 * thread is progressing it now. */
void weft__ctx_progress_home(weft_ctx_t ctx);

/* An application thread progressed the home worker while the progress
 * thread runs.  Polled at least once an interval (a blocking weft call,
 * or weft_progress in a loop), the worker is served by the application,
 * and the thread leaves it alone rather than sleep on the transport's
 * descriptor, where each message the application reads first would wake
 * it for nothing, from the core the message came in on.  A count, not a
 * flag, so that the thread can tell a polling application from one that
 * called weft once; a plain load and store (a count lost between two
 * threads only misjudges one look of the progress thread). */
static inline void weft__ctx_app_polled(weft_ctx_t ctx)
{
    __atomic_store_n(&ctx->app_polls, __atomic_load_n(&ctx->app_polls, __ATOMIC_RELAXED) + 1,
                     __ATOMIC_RELAXED);
}

/* WEFT_ERR_PEER_FAILED, recorded for fn, once a rank of the context is
 * known failed: a collective cannot complete then, so none is started. */
weft_status_t weft__collective_check(weft_ctx_t ctx, const char *fn);

/* Wait for a non-blocking MPI operation while serving incoming operations.
 * Every MPI wait inside a weft call that peers may reach while they still
 * wait for their operations to this rank must use it, or both would wait
 * on each other (e.g. gets over TCP need this rank's progress). */
weft_status_t weft__mpi_wait(weft_ctx_t ctx, MPI_Request *req, const char *fn);

/* MPI_Allreduce(MIN) of a local status, so that every rank returns the same
 * error from a collective call and none is left waiting; fn names that
 * call in the messages. */
weft_status_t weft__agree(weft_ctx_t ctx, weft_status_t st, const char *fn);

/* Map a UCX status to a weft status, recording a message. */
weft_status_t weft__ucs_error(ucs_status_t s, const char *fn, const char *what);

/* WEFT_PROFILE and WEFT_PROFILE_FILE: select trace points at weft_init,
 * write their statistics at weft_finalize (profile.c). */
weft_status_t weft__profile_start(void);
weft_status_t weft__profile_finish(int rank);

/* This rank's node in ctx: WEFT_TOPO_NODE read at ctx's rank, else the
 * host (weft__node_name); the error is recorded for fn. */
weft_status_t weft__ctx_node(weft_ctx_t ctx, char name[WEFT__NODE_NAME_MAX], const char *fn);

#endif
