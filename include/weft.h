/*
 * weft.h -- the public C API of weft.
 *
 * weft is a communication library for multithreaded programs on hierarchical
 * machines: one-sided put/get with explicit events, atomics, put-with-signal,
 * active messages, endpoint pools, topology-aware teams and their
 * collectives, and trace points (all below; MPI-only topology communicators
 * in weft_mpi.h, UCX interop in weft_ucx.h).  It runs over
 * UCX for data movement and uses MPI only to start up (address and key
 * exchange) and for the collective calls it documents as such.
 *
 * Conventions used throughout this header:
 *
 *  - Every call returns a weft_status_t.  WEFT_OK is 0, errors are negative.
 *    weft_strerror() names a status; weft_last_error() gives the message of
 *    the last error raised by the calling thread, with the values involved
 *    ("offset 4096 + 8 bytes exceeds segment size 4096").
 *  - Output parameters are written only on success.
 *  - Bad input (NULL, rank or offset out of range, a size past the end of a
 *    segment, a freed segment, use after weft_finalize) returns an error and
 *    never writes anything; it does not crash.
 *  - Outstanding operations are NOT ordered among themselves, even to the
 *    same target.  Ordering is what weft_wait(), weft_flush(), weft_fence()
 *    and the signal of weft_put_signal_nb() provide.
 *  - "Collective" calls must be made by every rank of the context, in the
 *    same order, like MPI collectives.
 *
 * Completion semantics, per call:
 *
 *   call                     | when it returns / its event completes
 *   -------------------------+---------------------------------------------
 *   weft_put                 | data is visible at the target
 *   weft_put_nb (event)      | the source buffer may be reused (local
 *                            | completion); visibility needs weft_flush
 *   weft_put_nbi             | nothing; the source buffer must not change
 *                            | until weft_flush returns
 *   weft_get / weft_get_nb   | data is in the destination buffer
 *   weft_put_signal_nb       | data AND signal are visible at the target;
 *                            | a consumer that sees the signal sees the data
 *   weft_atomic_* (blocking) | the operation has been applied at the target
 *   weft_atomic_nb (event)   | applied at the target, *result written
 *   weft_atomic_nbi,         | applied / written by weft_flush
 *   weft_iput_nbi/iget_nbi,  |
 *   weft_*_indexed_nbi       |
 *   weft_fence(ep)           | nothing completes; ep's puts and atomics
 *                            | before it reach each target before those
 *                            | after it
 *   weft_flush_local(ep)     | source buffers of ep's implicit puts may
 *                            | be reused (not yet visible)
 *   weft_flush(ep)           | every put issued on ep before the call is
 *                            | visible at its target
 *   weft_am_send_nb (event)  | header and payload buffers may be reused
 *
 * The direct path: to a rank of the same node (WEFT_SHM=1, the default),
 * every operation above is done by the caller's own loads and stores on
 * the rank's mapped segment and is complete -- visible at the target --
 * when the call returns; events are then WEFT_EVENT_NULL.  Its ordering
 * for other ranks: a signal's add is a release, weft_signal_wait_until an
 * acquire, weft_flush a release fence (docs/direct-path.md).
 */
#ifndef WEFT_H
#define WEFT_H

#include <stddef.h>
#include <stdint.h>
#include <weft_build.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_VERSION_MAJOR 0
#define WEFT_VERSION_MINOR 1
#define WEFT_VERSION_PATCH 0

/** Status codes.  Every public call returns one. */
typedef enum {
    WEFT_OK               =   0,  /**< success */
    WEFT_ERR_INVALID_ARG  =  -1,  /**< NULL pointer or invalid value */
    WEFT_ERR_RANK         =  -2,  /**< rank outside [0, nranks) */
    WEFT_ERR_BOUNDS       =  -3,  /**< offset/size past the end of a segment */
    WEFT_ERR_ALIGN        =  -4,  /**< misaligned address for an atomic */
    WEFT_ERR_SEG          =  -5,  /**< not a live segment of this context */
    WEFT_ERR_NOT_INIT     =  -6,  /**< context not initialised or finalised */
    WEFT_ERR_AM_ID        =  -7,  /**< AM id out of range or not registered */
    WEFT_ERR_NO_MEMORY    =  -8,  /**< allocation or registration failed */
    WEFT_ERR_TRANSPORT    =  -9,  /**< UCX reported an error */
    WEFT_ERR_MPI          = -10,  /**< an MPI call failed */
    WEFT_ERR_CONFIG       = -11,  /**< malformed setting or WEFT_* variable */
    WEFT_ERR_BUSY         = -12,  /**< resource already in use */
    WEFT_ERR_TOO_LARGE    = -13,  /**< size over a documented limit */
    WEFT_ERR_PEER_FAILED  = -14,  /**< the target rank is gone */
    WEFT_ERR_TIMEOUT      = -15,  /**< a bounded wait expired */
    WEFT_ERR_UNSUPPORTED  = -16   /**< not available in this build/transport */
} weft_status_t;

/** Opaque handles. */
typedef struct weft__ctx   *weft_ctx_t;   /**< one per process (per weft_init) */
typedef struct weft__ep    *weft_ep_t;    /**< a communication path, one thread at a time */
typedef struct weft__seg   *weft_seg_t;   /**< a symmetric, remotely accessible segment */
typedef void               *weft_event_t; /**< an outstanding operation */

/** The event of an operation that is already complete. */
#define WEFT_EVENT_NULL ((weft_event_t)0)

/** How peers are connected. */
typedef enum {
    WEFT_CONNECT_LAZY  = 0,  /**< on first use of a peer (default) */
    WEFT_CONNECT_EAGER = 1   /**< all peers when an endpoint is created */
} weft_connect_t;

/**
 * Settings of weft_init().  Initialise with weft_config_init(), which fills
 * in defaults and then applies the WEFT_* environment variables; set fields
 * afterwards to override both.  docs/settings.md has the table of variables.
 */
typedef struct {
    /** MPI communicator of the ranks that form the context (an MPI_Comm
     *  cast to void *); NULL means MPI_COMM_WORLD.  weft duplicates it. */
    void           *mpi_comm;
    /** WEFT_CONNECT=lazy|eager */
    weft_connect_t  connect;
    /** WEFT_PROGRESS_THREAD=0|1: a thread that serves incoming operations
     *  (software-emulated RMA, active messages) while the application
     *  computes.  Active-message handlers then run on that thread or on
     *  the application's thread inside a weft call, whichever progresses
     *  first; the application and the thread share one UCX worker, which
     *  UCX then locks (with a sleeping lock: weft sets UCX_USE_MT_MUTEX=y
     *  unless it or WEFT_UCX_USE_MT_MUTEX is set already).  Where the
     *  thread runs and how it sleeps are environment settings only
     *  (WEFT_PROGRESS_BIND, _PRIORITY, _SPIN_US; docs/settings.md). */
    int             progress_thread;
    /** WEFT_PROGRESS_INTERVAL_US: how long the progress thread sleeps when
     *  the transport cannot wake it up (default 50).  When it can, the
     *  thread sleeps until woken, or this or 10 ms at most, whichever is
     *  longer (a guard against a lost wake-up). */
    unsigned        progress_interval_us;
    /** WEFT_VERBOSE=0|1: rank 0 prints the configuration and transports. */
    int             verbose;
    /** WEFT_SHM=0|1 (default 1): the intra-node direct path.  Segments of
     *  ranks that share a node (same node name: WEFT_TOPO_NODE, else
     *  MPI_Get_processor_name) are cross-mapped, and one-sided operations
     *  between them are loads and stores done by the initiator.  0 sends
     *  everything through UCX.  Every rank must give the same value. */
    int             shm;
    /** WEFT_CHECK=0|1 (default 0): expensive checks on every call, for
     *  debugging: a local source or destination buffer that starts in a
     *  weft segment must end in it (WEFT_ERR_BOUNDS); a pool endpoint and
     *  its events may be used only by the thread that got it with
     *  weft_ep_get (WEFT_ERR_BUSY; as check_owner, but on every call).
     *  Off, they cost one predicted branch on a slow path's condition. */
    int             check;

    /** WEFT_TIMEOUT_MS (default 0: no limit): the longest any weft wait
     *  lasts -- weft_wait, weft_flush, weft_signal_wait_until, the blocking
     *  operations, weft_barrier and the other collective calls of the
     *  context (segments, pools, weft_finalize).  A wait that expires
     *  returns WEFT_ERR_TIMEOUT; a blocking operation that expires also
     *  declares its target rank failed (see "Peer failure" below).  Every
     *  rank should give the same value.  Team calls (weft_team_*) run MPI's
     *  own blocking collectives: no limit applies to them. */
    unsigned long   timeout_ms;
} weft_config_t;

/** Fill cfg with defaults, then apply WEFT_* environment variables.
 *  Fields set afterwards are taken by weft_init as they are, unchecked:
 *  keep them within the variables' ranges (docs/settings.md).
 *  \return WEFT_ERR_CONFIG (cfg untouched) when a variable is malformed;
 *          WEFT_ERR_INVALID_ARG when cfg is NULL. */
weft_status_t weft_config_init(weft_config_t *cfg);

/* ------------------------------------------------------------------------ */
/* Runtime                                                                  */
/* ------------------------------------------------------------------------ */

/**
 * Start weft.  Collective over cfg->mpi_comm.  Calls MPI_Init_thread with
 * MPI_THREAD_MULTIPLE if MPI is not initialised yet (weft_finalize then
 * finalises MPI); otherwise uses the program's MPI as it is.  Creates the
 * UCX context and worker, exchanges worker addresses, and connects peers
 * (lazily by default).
 *
 * \param cfg  settings, or NULL for weft_config_init() defaults
 * \param ctx  [out] the new context
 */
weft_status_t weft_init(const weft_config_t *cfg, weft_ctx_t *ctx);

/**
 * Stop weft.  Collective.  Completes every outstanding operation, waits for
 * all ranks, frees every segment still allocated and releases UCX.  Active
 * messages that peers sent before they called it are handled before it
 * returns (over TCP, an eager one still in the network when this rank
 * leaves the final barrier may be dropped instead).  After
 * it, every call on ctx (and its endpoints and segments) returns
 * WEFT_ERR_NOT_INIT, except weft_seg_query, which takes no context and
 * returns WEFT_ERR_SEG for the freed segment, and the team collectives,
 * which return WEFT_ERR_INVALID_ARG (not a team); weft_team_free still
 * frees a team of ctx, once.  Under WEFT_PROFILE it also
 * writes the trace points' statistics (weft_prof_write): when
 * WEFT_PROFILE_FILE cannot be written it returns WEFT_ERR_INVALID_ARG,
 * having released everything all the same.
 *
 * With a failed rank (see weft_rank_failed) it still returns, on every
 * survivor: it completes what can be completed, skips the wait for all
 * ranks, releases this rank's segments, connections and UCX, and returns
 * WEFT_ERR_PEER_FAILED.  It then neither frees its MPI communicator nor
 * finalises MPI (Open MPI 4.1's MPI_Finalize waits for every rank and may
 * hang): the program should exit without MPI_Finalize.  Live ranks still
 * accessing this rank's segments after it returns see them gone.
 */
weft_status_t weft_finalize(weft_ctx_t ctx);

/** This rank and the number of ranks of the context. */
weft_status_t weft_rank(weft_ctx_t ctx, int *rank);
weft_status_t weft_nranks(weft_ctx_t ctx, int *nranks);

/** Collective barrier that keeps serving incoming operations while it
 *  waits (a plain MPI_Barrier would not, and could deadlock a peer whose
 *  get needs this rank's progress). */
weft_status_t weft_barrier(weft_ctx_t ctx);

/**
 * Peer failure.  Every connection weft makes asks UCX for peer error
 * handling, and weft watches the ranks of its own host (same kernel and
 * process-id namespace) through their pidfd while it waits, so the death
 * of a rank (SIGKILL, crash) is learnt by the survivors: at once over TCP
 * (the kernel resets the sockets), within about a millisecond of any weft
 * wait for ranks of this host, within UCX's keepalive interval otherwise.
 * From then on, on the survivors:
 *
 *   call                          | with a failed rank
 *   ------------------------------+---------------------------------------
 *   put/get/atomics/am_send to it | WEFT_ERR_PEER_FAILED (before or while
 *   (blocking or not)             | waiting); nothing is sent
 *   weft_wait/weft_test of an     | WEFT_ERR_PEER_FAILED, the event is
 *   operation to it               | consumed
 *   weft_flush(ep)                | WEFT_ERR_PEER_FAILED once if ep issued
 *                                 | operations to it since its previous
 *                                 | flush (they may be lost, even those
 *                                 | issued before the failure); the
 *                                 | others are complete
 *   weft_signal_wait_until        | WEFT_ERR_PEER_FAILED if a rank failure
 *                                 | is learnt during the wait (the signal
 *                                 | may never come); a failure known
 *                                 | before the call is not reported: check
 *                                 | weft_rank_failed() first
 *   weft_barrier, collective      | WEFT_ERR_PEER_FAILED: a collective
 *   calls (segments, pools)       | cannot complete without every rank
 *   weft_finalize                 | returns: completes what it can, skips
 *                                 | the final synchronisation, releases
 *                                 | everything of this rank, and returns
 *                                 | WEFT_ERR_PEER_FAILED (a death during
 *                                 | its own final barrier looks like a
 *                                 | rank that finished: only
 *                                 | WEFT_TIMEOUT_MS ends that barrier)
 *   operations to live ranks      | unaffected
 *
 * "Known failed" means weft_rank_failed() says 1 (or a weft call of this
 * context returned WEFT_ERR_PEER_FAILED for it): from then on every
 * operation to it is refused at once, on every path, without a progress
 * call in between.
 *
 * What an operation that returned WEFT_ERR_PEER_FAILED or WEFT_ERR_TIMEOUT
 * did at its target (as in MPI's ULFM and GASNet-EX, a failed operation's
 * effect is not reported):
 *
 *   situation                      | fate at the target
 *   -------------------------------+--------------------------------------
 *   the rank was known failed      | not applied: nothing was sent (the
 *   before the call                | message says "rank R has failed")
 *   anything else (the failure was | UNKNOWN: applied, partly applied
 *   learnt during the call, its    | (a put's bytes) or not applied.  A
 *   wait, a later flush, or the    | get's buffer, a fetched *old and a
 *   wait expired)                  | handler's run are undefined
 *
 * WEFT_ERR_TIMEOUT never means "not done, try again": the operation may
 * have been applied (an atomic add counted, a message handled) and, after
 * weft_wait's timeout, may still be.  Retrying is safe only for what is
 * idempotent (a put or get of the same bytes, a cswap whose outcome the
 * caller checks); never retry weft_atomic_add_nbi, weft_atomic_fetch_add,
 * weft_put_signal_nb or weft_am_send* whose fate is unknown: recover
 * from state the application can read instead.  After a timeout of a
 * blocking operation its rank is declared failed, so a retry is refused.
 * weft does not return a separate "fate unknown" status because every
 * WEFT_ERR_TIMEOUT and every WEFT_ERR_PEER_FAILED of an operation that
 * was sent is that case: a new status would say nothing more and would
 * break callers that test for these two.
 *
 * Operations issued to a rank of the node over the direct path after it
 * died but before its failure is learnt complete normally (they are
 * stores into memory this rank still maps) and are lost with the rank;
 * the next weft_flush of their endpoint that runs once the failure is
 * known reports them (WEFT_ERR_PEER_FAILED, naming the rank).  The launcher must let the survivors
 * live on: with Open MPI, mpirun --enable-recovery (docs/failures.md).
 *
 * \param rank    a rank of ctx
 * \param failed  [out] 1 if weft knows rank has failed (or was declared
 *                failed after WEFT_TIMEOUT_MS), else 0
 */
weft_status_t weft_rank_failed(weft_ctx_t ctx, int rank, int *failed);

/** Name of a status ("WEFT_ERR_BOUNDS: offset/size past the end of a segment"). */
const char *weft_strerror(weft_status_t st);

/** Message of the calling thread's last error, with the values involved;
 *  "" when none.  Valid until the thread's next failing weft call. */
const char *weft_last_error(void);

/* ------------------------------------------------------------------------ */
/* Endpoints                                                                */
/* ------------------------------------------------------------------------ */

/**
 * The context's default endpoint.  It may be used by several threads, but
 * only one at a time (serialised).  Threads that communicate concurrently
 * need endpoints of their own.
 */
weft_status_t weft_ep_default(weft_ctx_t ctx, weft_ep_t *ep);

/* ---- Endpoint pools (ep layer) ----------------------------------------- */

/**
 * Endpoint pools: one or more endpoints per thread, with a chosen level of
 * resource sharing between threads (docs/endpoints.md).  UCX objects stand
 * for the network resources: a UCX context for a device context, a UCX
 * worker for a set of queues with its completion queue and doorbell, the
 * worker's thread mode for the lock on them.
 *
 *   policy          UCX objects for T threads          lock on the fast path
 *   --------------- ---------------------------------- ---------------------
 *   "process"       T contexts, one worker each        none
 *   "dedicated-2x"  1 context, 2 workers per thread,   none
 *                   the thread uses the first
 *   "dedicated"     1 context, 1 worker per thread     none (thread mode SINGLE)
 *   "shared:k"      1 context, ceil(T/k) workers,      a lock per call
 *                   threads t/k share one (k >= T:     (when k > 1 and T > 1)
 *                   one worker for all)
 *   "paired"        shared:2
 *   "static:k"      1 context, k workers, thread t     a lock per call (when k < T)
 *                   uses worker t mod k
 *   "single"        1 context, 1 worker for all        a lock per call (T > 1)
 *
 * Every pool endpoint reaches every rank's segments: it connects to the
 * peers' home workers and unpacks their keys itself, also under "process"
 * (keys are unpacked through the endpoint's own UCX context).  Incoming
 * operations that need this rank's CPU (TCP) are served by the progress
 * thread or, without it, by whichever pool thread progresses (one at a
 * time).  Without the progress thread, the default endpoint (whose worker
 * is the home worker) must not be used while pool threads communicate.
 */
typedef struct weft__ep_pool *weft_ep_pool_t;

/** Kinds of sharing policy (weft_ep_policy_parse). */
typedef enum {
    WEFT_EP_PROCESS      = 0,
    WEFT_EP_DEDICATED_2X = 1,
    WEFT_EP_DEDICATED    = 2,
    WEFT_EP_SHARED       = 3,  /**< k threads per worker */
    WEFT_EP_STATIC       = 4,  /**< k workers, round robin */
    WEFT_EP_SINGLE       = 5
} weft_ep_policy_kind_t;

typedef struct {
    weft_ep_policy_kind_t kind;
    unsigned              k;   /**< shared/static: the k; 1 otherwise */
} weft_ep_policy_t;

/** Who serialises threads that share a worker. */
typedef enum {
    WEFT_EP_LOCK_UCX    = 0,  /**< UCX locks the worker on every call (thread mode MULTI) */
    WEFT_EP_LOCK_CALLER = 1   /**< the worker is SERIALIZED; threads bracket their calls with
                               *   weft_ep_lock()/weft_ep_unlock(), e.g. once per batch */
} weft_ep_lock_t;

/** Settings of weft_ep_pool_create().  Zero-initialise, then set nthreads
 *  and policy; zero fields take their defaults. */
typedef struct {
    int            nthreads;          /**< threads that use the pool, 1 ... 4096 */
    const char    *policy;            /**< as parsed by weft_ep_policy_parse; NULL = "dedicated";
                                       *   "auto" = the advice `weft advise endpoints` saved */
    int            eps_per_thread;    /**< endpoints per thread (e.g. one per neighbour),
                                       *   0 ... 64; 0 = 1 */
    /** Completion sharing (the paper's CQ sharing): 1 = a thread's endpoints
     *  share one worker, so one progress call completes them all; 0 = each
     *  endpoint of a thread has a worker (completion queue) of its own. */
    int            shared_completion;
    weft_ep_lock_t lock;              /**< for workers used by several threads */
    /** 1 = every endpoint remembers the thread that got it with weft_ep_get
     *  and weft_progress/weft_flush on it from another thread fail with
     *  WEFT_ERR_BUSY; puts and gets are not checked (no cost on them)
     *  unless WEFT_CHECK=1, which also turns this on for every pool. */
    int            check_owner;
    size_t         buf_bytes;         /**< private source buffer per thread (weft_ep_pool_buffer); 0 = none */
} weft_ep_pool_params_t;

/** What a pool created, as counted and measured by weft_ep_pool_resources. */
typedef struct {
    unsigned ucx_contexts;      /**< UCX contexts its endpoints use (created by the pool under
                                 *   "process"; else the weft context's one) */
    unsigned workers;           /**< UCX workers created, idle ones included (dedicated-2x) */
    unsigned workers_used;      /**< workers some thread uses */
    unsigned endpoints;         /**< UCX endpoints (connections) open now; lazy ones count
                                 *   once connected */
    unsigned weft_endpoints;    /**< weft endpoints (nthreads * eps_per_thread) */
    unsigned max_threads_per_worker;
    unsigned locked_workers;    /**< workers whose every call takes a UCX lock (MULTI) */
    unsigned locks_per_call;    /**< locks one put/progress call takes on the fast path: 0 or 1 */
    unsigned long long caller_locks; /**< weft_ep_lock acquisitions so far (LOCK_CALLER) */
    size_t   rss_bytes;         /**< resident-set growth across weft_ep_pool_create
                                 *   (/proc/self/statm; pages touched, incl. UCX's mappings) */
    size_t   heap_bytes;        /**< heap growth across weft_ep_pool_create (mallinfo2:
                                 *   in-use arena + mmapped blocks of malloc) */
} weft_resources_t;

/**
 * Parse a policy name: "process", "dedicated-2x", "dedicated", "shared:k",
 * "paired" (= shared:2), "static:k", "single"; k a decimal in 1 ... 4096,
 * no signs, spaces or trailing characters.  Pure (no context needed).
 * \return WEFT_ERR_INVALID_ARG with a message quoting s when malformed;
 *         *out is then untouched.
 */
weft_status_t weft_ep_policy_parse(const char *s, weft_ep_policy_t *out);

/**
 * Create a pool of endpoints for params->nthreads threads.  Local (no
 * communication); connections are made on first use, or at creation with
 * WEFT_CONNECT=eager.  Errors: WEFT_ERR_INVALID_ARG (NULL, nthreads or
 * eps_per_thread out of range, malformed policy, unknown lock),
 * WEFT_ERR_CONFIG for "auto" with no saved advice (docs/endpoints.md),
 * WEFT_ERR_UNSUPPORTED for any policy but
 * "single" while the progress thread runs (UCX 1.13's TCP transport crashed
 * with a worker per thread beside the progress thread; "single" then uses
 * the home worker, which the thread already locks), WEFT_ERR_TRANSPORT or
 * WEFT_ERR_NO_MEMORY when UCX fails.
 */
weft_status_t weft_ep_pool_create(weft_ctx_t ctx, const weft_ep_pool_params_t *params,
                                  weft_ep_pool_t *pool);

/** Endpoint 0 of thread `thread` (0 ... nthreads-1); call it from that
 *  thread (with check_owner, the caller becomes the endpoint's owner).
 *  WEFT_ERR_INVALID_ARG for a NULL pool or ep or a thread out of range,
 *  WEFT_ERR_NOT_INIT for a destroyed pool or a finalised context. */
weft_status_t weft_ep_get(weft_ep_pool_t pool, int thread, weft_ep_t *ep);

/** Endpoint `index` (0 ... eps_per_thread-1) of thread `thread`; errors as
 *  weft_ep_get's, an index out of range included. */
weft_status_t weft_ep_get_nth(weft_ep_pool_t pool, int thread, int index, weft_ep_t *ep);

/** LOCK_CALLER pools: take / release the lock of ep's worker.  Every call
 *  on a shared endpoint (puts, progress, waits, flush) must be made holding
 *  it.  No-ops for endpoints whose worker has a single user, and for
 *  LOCK_UCX pools. */
weft_status_t weft_ep_lock(weft_ep_t ep);
weft_status_t weft_ep_unlock(weft_ep_t ep);

/** Thread `thread`'s private source buffer: params->buf_bytes bytes,
 *  starting on a cache line of its own and padded to whole lines, so no two
 *  threads' buffers share a line.  bytes may be NULL.  WEFT_ERR_INVALID_ARG
 *  when the pool was created with buf_bytes 0. */
weft_status_t weft_ep_pool_buffer(weft_ep_pool_t pool, int thread, void **buf, size_t *bytes);

/** What the pool created (see weft_resources_t). */
weft_status_t weft_ep_pool_resources(weft_ep_pool_t pool, weft_resources_t *res);

/** Destroy a pool.  Collective over the context (every rank destroys its
 *  pools in the same order): completes the pool's operations, waits for
 *  every rank, then closes its connections and workers.  No thread may use
 *  its endpoints any more.  weft_finalize destroys pools still alive. */
weft_status_t weft_ep_pool_destroy(weft_ep_pool_t pool);
/* ---- end of Endpoint pools --------------------------------------------- */

/* ------------------------------------------------------------------------ */
/* Segments                                                                 */
/* ------------------------------------------------------------------------ */

/**
 * Allocate a symmetric segment.  Collective: every rank passes the same
 * size (checked; WEFT_ERR_INVALID_ARG if they differ).  The memory is
 * zeroed, page aligned, registered with UCX, and every rank can address
 * every other rank's copy as (rank, seg, offset).  With the direct path on
 * (WEFT_SHM=1), a rank that shares its node with others gets a POSIX
 * shared-memory segment that each of them maps; its name is removed before
 * the call returns, so nothing stays in /dev/shm even if a rank dies.
 * WEFT_ERR_CONFIG when ranks disagree on WEFT_SHM or WEFT_TOPO_NODE is
 * malformed.  Every rank returns the same status: WEFT_ERR_INVALID_ARG
 * (seg NULL, bytes 0, sizes that differ), WEFT_ERR_NO_MEMORY (allocation
 * or mapping failed, /dev/shm too small, a part larger than the node's
 * memory: a part is backed and zeroed at once), WEFT_ERR_TRANSPORT (another UCX
 * registration error), WEFT_ERR_BUSY (every random
 * shared-memory name tried already existed; SECURITY.md), WEFT_ERR_MPI.
 *
 * Threads: on each rank one thread makes the call, and every rank makes the
 * context's collective calls (segments, pools, weft_barrier) in the same
 * order.  Meanwhile the threads of endpoint pools may go on operating on
 * other segments; the new one is theirs once the call has returned (hand
 * the handle over with the usual synchronisation, e.g. a join or a
 * barrier of the application's).  The default endpoint shares the home
 * worker that the call progresses while it waits: only the calling thread
 * may use it meanwhile.
 *
 * \param bytes  size of this rank's part, > 0
 * \param seg    [out] the segment handle
 * \param local  [out] this rank's part (may be NULL if not wanted)
 */
weft_status_t weft_seg_alloc(weft_ctx_t ctx, size_t bytes, weft_seg_t *seg, void **local);

/** Free a segment.  Collective, made by one thread per rank (as
 *  weft_seg_alloc).  Completes the outstanding operations of the endpoints
 *  that are not a pool's, then waits for every rank before the memory goes.
 *  A second free returns WEFT_ERR_SEG, and so does any later operation on
 *  the segment.
 *
 *  Threads (as MPI_Win_free after every process has completed its RMA on
 *  the window): before any rank frees, every thread of an endpoint pool
 *  completes its operations (weft_flush on each of its endpoints) and stops
 *  making weft calls on the context's endpoints until weft_seg_free has
 *  returned -- joined, or waiting at a barrier of the application's --
 *  because freeing releases every endpoint's entries of the segment, which
 *  operations read without a lock.  Then the main thread frees; the pool's
 *  endpoints work on after it, on the other segments and on those
 *  allocated later.  WEFT_ERR_BUSY on every rank, nothing freed, when a
 *  pool endpoint has operations that no weft_flush completed (issued
 *  through UCX, i.e. to other nodes or with WEFT_SHM=0): its thread
 *  flushes it, then the call can be repeated.  A thread still inside a weft
 *  call cannot be detected: that is a data race (ThreadSanitizer reports
 *  it). */
weft_status_t weft_seg_free(weft_ctx_t ctx, weft_seg_t seg);

/**
 * Register memory the program already has as a segment (MPI windows on
 * user memory, GASNet-EX client segments).  Collective: every rank passes
 * its own base and size, which may differ between ranks (the segment is
 * then not symmetric: an access is checked against the size its target
 * rank gave, WEFT_ERR_BOUNDS past it).  The memory is registered with UCX
 * and every rank learns every other rank's base and key; it is not
 * copied, zeroed or moved, must stay allocated until weft_seg_free, which
 * deregisters it and leaves it to the program.  Ranks may pass pointers
 * into anything: static data, the heap, a mapping of their own.
 *
 * The direct path cannot map another process's private memory: operations
 * between two ranks of one node on a registered segment go through UCX
 * (its shared-memory transports when they can reach the memory -- CMA,
 * KNEM, XPMEM -- else its emulation over messages, which needs the target
 * to progress), and weft_ptr returns WEFT_ERR_UNSUPPORTED for every rank
 * but the caller.  A rank's operations on its own part are loads and
 * stores, as with weft_seg_alloc.  Memory that ranks of a node must reach
 * with loads and stores is allocated with weft_seg_alloc.
 *
 * Every rank returns the same status: WEFT_ERR_INVALID_ARG (seg or base
 * NULL, bytes 0, on any rank), WEFT_ERR_NO_MEMORY / WEFT_ERR_TRANSPORT
 * (UCX could not register the memory), WEFT_ERR_MPI, WEFT_ERR_NOT_INIT.
 * Threads: as weft_seg_alloc.
 *
 * \param base   this rank's memory
 * \param bytes  its size, > 0
 * \param seg    [out] the segment handle
 */
weft_status_t weft_seg_register(weft_ctx_t ctx, void *base, size_t bytes, weft_seg_t *seg);

/** Size and local base of a segment (this rank's part: for a registered
 *  segment, the size this rank gave); either output may be NULL.
 *  WEFT_ERR_SEG for a NULL or freed segment (also after weft_finalize). */
weft_status_t weft_seg_query(weft_seg_t seg, size_t *bytes, void **local);

/**
 * A local pointer to byte `off` of rank's part of seg, like shmem_ptr:
 * loads and stores through it reach rank's memory directly.  Available for
 * ranks on this rank's node (same node name) when the direct path is on
 * (WEFT_SHM=1, the default), and for this rank itself.  Not collective,
 * no communication.
 *
 * Ordering with weft's operations: the pointer sees what weft's one-sided
 * operations to rank have made visible; stores through it are ordered for
 * a consumer that waits for a later signal (weft_put_signal_nb, whose add
 * is a release) with weft_signal_wait_until (an acquire).  Concurrent
 * plain accesses to the same bytes are data races, as in C; use __atomic
 * builtins on 8-byte words shared with weft_atomic_* calls.
 *
 * \param ctx   a live context
 * \param rank  a rank of ctx
 * \param seg   a live segment of ctx
 * \param off   offset in rank's part, < the segment size
 * \param ptr   [out] the pointer
 * \return WEFT_ERR_UNSUPPORTED when rank's part is not mapped here (another
 *         node, or WEFT_SHM=0; weft_last_error says which); WEFT_ERR_RANK,
 *         WEFT_ERR_SEG, WEFT_ERR_BOUNDS, WEFT_ERR_INVALID_ARG (ptr NULL),
 *         WEFT_ERR_NOT_INIT for bad input.
 */
weft_status_t weft_ptr(weft_ctx_t ctx, int rank, weft_seg_t seg, size_t off, void **ptr);

/* ------------------------------------------------------------------------ */
/* One-sided operations                                                     */
/* ------------------------------------------------------------------------ */

/** Blocking put: returns when the data is visible at rank. */
weft_status_t weft_put(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                       const void *src, size_t n);

/** Blocking get: returns when dst holds the data. */
weft_status_t weft_get(weft_ep_t ep, void *dst, int rank, weft_seg_t seg,
                       size_t off, size_t n);

/**
 * Non-blocking put with an explicit event.  *ev becomes WEFT_EVENT_NULL if
 * the operation completed at once, else a handle that must be completed
 * with weft_test/weft_wait/weft_wait_all (exactly once).  The event means
 * local completion (src reusable); weft_flush makes the data visible.
 */
weft_status_t weft_put_nb(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                          const void *src, size_t n, weft_event_t *ev);

/** Non-blocking get; the event completes when dst holds the data. */
weft_status_t weft_get_nb(weft_ep_t ep, void *dst, int rank, weft_seg_t seg,
                          size_t off, size_t n, weft_event_t *ev);

/** Implicit non-blocking put: completed by the next weft_flush(ep).
 *  src must not change until then.  weft keeps the number of operations
 *  in flight bounded by progressing the transport when it runs short. */
weft_status_t weft_put_nbi(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                           const void *src, size_t n);

/** Implicit non-blocking get: dst is valid after the next weft_flush(ep). */
weft_status_t weft_get_nbi(weft_ep_t ep, void *dst, int rank, weft_seg_t seg,
                           size_t off, size_t n);

/**
 * Put with signal: puts n bytes, then atomically adds `add` to the 64-bit
 * word at (sigseg, sigoff) of the same target.  The add happens after the
 * data is visible, so a consumer that waits for the signal
 * (weft_signal_wait_until) and then reads the data sees all of it.  The
 * signal word is 8 bytes at an 8-byte-aligned offset of sigseg
 * (WEFT_ERR_ALIGN otherwise); weft_put_signal_op_nb also sets it.
 */
weft_status_t weft_put_signal_nb(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                                 const void *src, size_t n, weft_seg_t sigseg,
                                 size_t sigoff, uint64_t add, weft_event_t *ev);

/** Wait until the local 64-bit word at (seg, off) is >= value (off
 *  8-byte aligned, WEFT_ERR_ALIGN otherwise), progressing ep meanwhile; *seen gets the value read (may be NULL).  The data of every
 *  put_signal that contributed to it is visible when this returns.
 *  WEFT_ERR_PEER_FAILED if a rank failure is learnt during the wait,
 *  WEFT_ERR_TIMEOUT after WEFT_TIMEOUT_MS (see "Peer failure"). */
weft_status_t weft_signal_wait_until(weft_ep_t ep, weft_seg_t seg, size_t off,
                                     uint64_t value, uint64_t *seen);

/** Atomic 64-bit fetch-and-add at (rank, seg, off); off must be 8-aligned. */
weft_status_t weft_atomic_fetch_add(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                                    uint64_t value, uint64_t *old);

/** Atomic 64-bit add, non-fetching, completed by weft_flush(ep). */
weft_status_t weft_atomic_add_nbi(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                                  uint64_t value);

/** Atomic 64-bit compare-and-swap: if *target == compare then *target = value;
 *  *old gets the previous value either way. */
weft_status_t weft_atomic_cswap(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                                uint64_t compare, uint64_t value, uint64_t *old);

/* ---- Kept targets ------------------------------------------------------- */

/** The version of weft_target_t's layout. */
#define WEFT_TARGET_LAYOUT 2

/**
 * A kept target: what the inline path (weft_inline.h) needs of (ep, rank,
 * seg), held by the program -- in a local variable, where the compiler
 * keeps its fields in registers across a loop
 * (docs/direct-path.md#kept-targets).  Filled by weft_target_init; the
 * program reads and writes none of its fields, weft's calls update it.
 * An access through it is the same call on (t->ep, t->rank, t->seg):
 * weft_target_put_nbi(&t, off, src, n) is weft_put_nbi(ep, rank, seg, off,
 * src, n), with its semantics, errors and completion, and so on for the
 * others.
 *
 * On a rank whose part of seg is mapped here, the inline form compares the
 * offset with the part's size, then the endpoint's gate word and flush
 * epoch (one 8-byte load) with the target's key -- gate shut, the epoch
 * the target took -- then makes the load or store.  After a weft_flush (a
 * new epoch) the first access takes the new epoch inline when the target
 * was current before, the segment is still alive and the gate shut, and
 * stamps the rank with it as the library's lookup does.  Everything else
 * is the library call, which makes the target current again where it can:
 * WEFT_CHECK=1, a selected trace point, a rank failure known to the
 * context, a destroyed endpoint or freed segment, bad arguments, a size not
 * known at compile time or over WEFT_INLINE_MAX, a rank's part of under
 * WEFT_INLINE_MAX bytes, and every access to a rank reached through UCX
 * (weft_ucx.h's weft_ucx_put_target is the kept target for puts there).
 *
 * A target stays usable for the life of ep and seg, across flushes.
 * weft_seg_free moves every endpoint's flush epoch on, and the target's
 * next access finds the segment freed; the destruction of ep sets its
 * gate: a target kept past either reaches the library, which refuses it,
 * never the freed memory.  Used by the thread that uses ep, as ep is.
 */
typedef struct weft_target {
    const void *check;  /**< what the inline test reads (struct weft_inline_ep
                         *   of weft_inline.h): ep, or a stand-in that sends
                         *   every access to the library */
    uint64_t    key;    /**< what the inline test wants of check's word of gate
                         *   and flush epoch: the gate shut and the epoch
                         *   the target took; 0 (no epoch) while it may not
                         *   run inline */
    int         rank;
    char       *base;   /**< rank's part of seg mapped here, or NULL */
    size_t      size;   /**< rank's bytes of seg while base is set, else 0 */
    weft_ep_t   ep;
    weft_seg_t  seg;
} weft_target_t;

/** Fill *t for accesses to (rank, seg) through ep.  Not collective; makes
 *  no connection.  WEFT_ERR_INVALID_ARG for a NULL t or ep,
 *  WEFT_ERR_NOT_INIT for a destroyed endpoint, WEFT_ERR_RANK for a rank
 *  outside the context, WEFT_ERR_SEG for a NULL, freed or foreign segment;
 *  a failed rank is reported by the accesses, as by weft_put_nbi.  An
 *  exception to "output parameters are written only on success": on an
 *  error *t (t not NULL) is still filled, usable, and every access through
 *  it reports the error again. */
weft_status_t weft_target_init(weft_ep_t ep, int rank, weft_seg_t seg, weft_target_t *t);
/** weft_put_nbi(t->ep, t->rank, t->seg, off, src, n); WEFT_ERR_INVALID_ARG
 *  for a NULL t, as for every call below. */
weft_status_t weft_target_put_nbi(weft_target_t *t, size_t off, const void *src, size_t n);
/** weft_put(t->ep, t->rank, t->seg, off, src, n). */
weft_status_t weft_target_put(weft_target_t *t, size_t off, const void *src, size_t n);
/** weft_get_nbi(t->ep, dst, t->rank, t->seg, off, n). */
weft_status_t weft_target_get_nbi(weft_target_t *t, void *dst, size_t off, size_t n);
/** weft_get(t->ep, dst, t->rank, t->seg, off, n). */
weft_status_t weft_target_get(weft_target_t *t, void *dst, size_t off, size_t n);
/** weft_atomic_add_nbi(t->ep, t->rank, t->seg, off, value). */
weft_status_t weft_target_atomic_add_nbi(weft_target_t *t, size_t off, uint64_t value);
/** weft_atomic_fetch_add(t->ep, t->rank, t->seg, off, value, old). */
weft_status_t weft_target_atomic_fetch_add(weft_target_t *t, size_t off, uint64_t value,
                                           uint64_t *old);

/* ---- Typed atomics ------------------------------------------------------ */

/**
 * Atomic operations on 32- and 64-bit integers, the set of OpenSHMEM 1.5
 * and MPI_Fetch_and_op / MPI_Compare_and_swap.  The word at (rank, seg,
 * off) is of the size of `type` and must be aligned to it (4 or 8 bytes;
 * WEFT_ERR_ALIGN otherwise).  Atomicity holds against every other weft
 * atomic on the same word, from any rank and path; a plain put or store to
 * the word at the same time is a data race.
 *
 * Operands are passed as uint64_t: for a 32-bit type only the low 32 bits
 * count, so (uint64_t)(int32_t)-1 is the 32-bit -1.  Signed and unsigned
 * types of one size give the same bits (two's complement, wrapping); the
 * type says the size of the word and of *result.
 *
 *   op                  | at the target                    | *result
 *   --------------------+----------------------------------+------------
 *   WEFT_AOP_FETCH      | unchanged                        | the word
 *   WEFT_AOP_SET        | word = operand                   | unused
 *   WEFT_AOP_SWAP       | word = operand                   | old word
 *   WEFT_AOP_CSWAP      | if word == compare: word = operand | old word
 *   WEFT_AOP_ADD        | word += operand                  | unused
 *   WEFT_AOP_FETCH_ADD  | word += operand                  | old word
 *   WEFT_AOP_AND/OR/XOR | word = word & | ^ operand        | unused
 *   WEFT_AOP_FETCH_AND/ | word = word & | ^ operand        | old word
 *   FETCH_OR/FETCH_XOR  |                                  |
 *
 * *result is a value of the type (4 or 8 bytes), NULL allowed for the
 * non-fetching ops.  compare is read by WEFT_AOP_CSWAP only.  Over UCX the
 * ops are ucp_atomic_op_nbx (SET is a swap whose old value is discarded,
 * FETCH a fetching add of 0), except FETCH_AND/OR/XOR: a fetch, then
 * compare-and-swaps until one succeeds, which complete before even the
 * _nb and _nbi forms return (UCX 1.13's shared-memory transports compute
 * them wrong; docs/limits.md).  On the direct path they are __atomic
 * builtins, sequentially consistent.
 *
 * Errors (nothing is issued): WEFT_ERR_INVALID_ARG for an op or type
 * outside the enums or a NULL result of a fetching op (ev NULL for _nb),
 * WEFT_ERR_ALIGN, and those of weft_put (WEFT_ERR_RANK, WEFT_ERR_SEG,
 * WEFT_ERR_BOUNDS, WEFT_ERR_NOT_INIT, WEFT_ERR_PEER_FAILED).
 */
typedef enum {
    WEFT_AOP_FETCH     = 0,
    WEFT_AOP_SET       = 1,
    WEFT_AOP_SWAP      = 2,
    WEFT_AOP_CSWAP     = 3,
    WEFT_AOP_ADD       = 4,
    WEFT_AOP_FETCH_ADD = 5,
    WEFT_AOP_AND       = 6,
    WEFT_AOP_FETCH_AND = 7,
    WEFT_AOP_OR        = 8,
    WEFT_AOP_FETCH_OR  = 9,
    WEFT_AOP_XOR       = 10,
    WEFT_AOP_FETCH_XOR = 11
} weft_aop_t;

/** The word an atomic operates on. */
typedef enum {
    WEFT_ATYPE_INT32  = 0,
    WEFT_ATYPE_UINT32 = 1,
    WEFT_ATYPE_INT64  = 2,
    WEFT_ATYPE_UINT64 = 3
} weft_atype_t;

/** Blocking: returns when the operation has been applied at the target
 *  and, for a fetching op, *result holds the old value (written on
 *  success only). */
weft_status_t weft_atomic(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, weft_aop_t op,
                          weft_atype_t type, uint64_t operand, uint64_t compare, void *result);

/** Non-blocking with an event: the event (or WEFT_EVENT_NULL, complete at
 *  once) completes when the operation has been applied at the target and
 *  *result is written; *result must stay valid until then. */
weft_status_t weft_atomic_nb(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                             weft_aop_t op, weft_atype_t type, uint64_t operand,
                             uint64_t compare, void *result, weft_event_t *ev);

/** Implicit: applied, and *result written, by the next weft_flush(ep);
 *  *result must stay valid until then (weft_flush_local does not complete
 *  a fetching op's result).  Like every implicit operation, unordered with
 *  the others unless a weft_fence separates them. */
weft_status_t weft_atomic_nbi(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                              weft_aop_t op, weft_atype_t type, uint64_t operand,
                              uint64_t compare, void *result);

/* ---- Ordering and local completion ------------------------------------- */

/**
 * Fence, like shmem_fence: puts, nbi atomics and signals issued on ep
 * before the call are applied at each target before those issued after it
 * to the same target.  Nothing is completed and nothing waits: use
 * weft_flush for completion.  Gets are not ordered by it.  On the direct
 * path (already complete when issued) it is a release fence; over UCX it
 * is ucp_worker_fence on ep's worker, which orders ep's operations to
 * every target.  WEFT_ERR_NOT_INIT / WEFT_ERR_INVALID_ARG for a bad ep.
 */
weft_status_t weft_fence(weft_ep_t ep);

/**
 * Local completion, like MPI_Win_flush_local: returns when the source
 * buffers of every implicit put issued on ep before the call may be reused
 * (and the destinations of its implicit gets are written), without waiting
 * for the puts to be visible at their targets -- weft_flush still does
 * that.  The direct path's operations are complete when issued; over UCX
 * it waits for the requests that UCX had not yet completed locally.
 * WEFT_ERR_TIMEOUT after WEFT_TIMEOUT_MS.  Errors of the operations are
 * reported by the next weft_flush.
 */
weft_status_t weft_flush_local(weft_ep_t ep);

/* ---- Strided put and get ------------------------------------------------ */

/**
 * Strided transfers, as shmem_iput / shmem_iget: `count` elements of
 * `elem` bytes; element i goes from src + i * sst * elem to byte
 * off + i * dst * elem of rank's part (iput), or from byte
 * off + i * sst * elem of rank's part to dst_buf + i * dst * elem (iget).
 * Strides count elements and are >= 1.  The whole range (the last
 * element included) is checked before anything is issued: WEFT_ERR_BOUNDS
 * past the segment or on overflow, WEFT_ERR_INVALID_ARG for elem 0, a
 * stride 0 or a NULL buffer with count > 0, and the errors of weft_put.
 * count 0 does nothing.  Each element is one put or get: worth it for
 * small elements on the direct path, where they are stores and loads.
 *
 * _nbi: completed by the next weft_flush(ep) (weft_flush_local frees the
 * iput's source).  Blocking: returns when the data is visible at rank
 * (iput) or in the buffer (iget); it completes ep's other implicit
 * operations too (it is the _nbi form and weft_flush).
 */
weft_status_t weft_iput_nbi(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, size_t dst,
                            const void *src, size_t sst, size_t elem, size_t count);
weft_status_t weft_iget_nbi(weft_ep_t ep, void *dst_buf, size_t dst, int rank, weft_seg_t seg,
                            size_t off, size_t sst, size_t elem, size_t count);
weft_status_t weft_iput(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, size_t dst,
                        const void *src, size_t sst, size_t elem, size_t count);
weft_status_t weft_iget(weft_ep_t ep, void *dst_buf, size_t dst, int rank, weft_seg_t seg,
                        size_t off, size_t sst, size_t elem, size_t count);

/* ---- Indexed put and get ------------------------------------------------ */

/**
 * Indexed transfers, as GASNet-EX's VIS indexed put and get
 * (gex_VIS_IndexedPut/Get): a list of pieces on each side, all pieces of
 * one side of one length; the bytes go in order, piece after piece, from
 * one side's pieces to the other's, so the two lists may cut them
 * differently but hold the same number of bytes (ndst * dstlen ==
 * nsrc * srclen, else WEFT_ERR_INVALID_ARG).  put: nsrc local buffers
 * srcs[] of srclen bytes to ndst pieces of dstlen bytes at offsets
 * dstoffs[] of rank's part.  get: nsrc pieces of srclen bytes at offsets
 * srcoffs[] of rank's part to ndst local buffers dsts[] of dstlen bytes.
 * Every piece is checked before anything is issued: WEFT_ERR_BOUNDS for a
 * piece past the segment (the message names it), WEFT_ERR_INVALID_ARG for
 * a NULL list, a NULL buffer or one that runs past the end of the address
 * space, and the errors of weft_put.  No bytes at all (a count or a length
 * 0 on both sides) does nothing.  Pieces may overlap only where the
 * outcome of overlapping puts or gets would not matter (they are not
 * ordered).  Each run of bytes that is contiguous on both sides is one
 * put or get, so adjacent pieces cost one operation.
 *
 * _nbi: completed by the next weft_flush(ep) (the lists themselves may be
 * reused when the call returns; the buffers are the operations').
 * Blocking: returns when the data is visible at rank (put) or in the
 * buffers (get); it completes ep's other implicit operations too.
 */
weft_status_t weft_put_indexed_nbi(weft_ep_t ep, int rank, weft_seg_t seg, size_t ndst,
                                   const size_t *dstoffs, size_t dstlen, size_t nsrc,
                                   const void *const *srcs, size_t srclen);
weft_status_t weft_get_indexed_nbi(weft_ep_t ep, size_t ndst, void *const *dsts, size_t dstlen,
                                   int rank, weft_seg_t seg, size_t nsrc, const size_t *srcoffs,
                                   size_t srclen);
weft_status_t weft_put_indexed(weft_ep_t ep, int rank, weft_seg_t seg, size_t ndst,
                               const size_t *dstoffs, size_t dstlen, size_t nsrc,
                               const void *const *srcs, size_t srclen);
weft_status_t weft_get_indexed(weft_ep_t ep, size_t ndst, void *const *dsts, size_t dstlen,
                               int rank, weft_seg_t seg, size_t nsrc, const size_t *srcoffs,
                               size_t srclen);

/* ---- Signals ------------------------------------------------------------ */

/** What a put-with-signal does to the signal word (as shmem_put_signal's
 *  SHMEM_SIGNAL_SET / SHMEM_SIGNAL_ADD). */
typedef enum {
    WEFT_SIGNAL_SET = 0,  /**< word = value (atomically) */
    WEFT_SIGNAL_ADD = 1   /**< word += value (atomically) */
} weft_signal_op_t;

/**
 * Put with signal, either op: as weft_put_signal_nb (which is
 * WEFT_SIGNAL_ADD), the signal applied after the data is visible, so a
 * consumer that sees the signal sees the data.  The signal word is a
 * 64-bit word at an 8-byte-aligned offset (WEFT_ERR_ALIGN otherwise).
 * The event completes when data and signal are visible at the target.
 * WEFT_ERR_INVALID_ARG for an op outside weft_signal_op_t.
 */
weft_status_t weft_put_signal_op_nb(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                                    const void *src, size_t n, weft_seg_t sigseg,
                                    size_t sigoff, uint64_t value, weft_signal_op_t op,
                                    weft_event_t *ev);

/** Comparisons of a signal wait (SHMEM_CMP_*); unsigned 64-bit. */
typedef enum {
    WEFT_CMP_EQ = 0,
    WEFT_CMP_NE = 1,
    WEFT_CMP_GT = 2,
    WEFT_CMP_GE = 3,
    WEFT_CMP_LT = 4,
    WEFT_CMP_LE = 5
} weft_cmp_t;

/** Wait until the local 64-bit word at (seg, off) compares to value as cmp
 *  says (word cmp value), progressing ep meanwhile; *seen (may be NULL)
 *  gets the value that satisfied it.  The load that sees it is an
 *  acquire: the data of every put-with-signal whose signal it reads is
 *  visible.  off must be 8-byte aligned (WEFT_ERR_ALIGN);
 *  WEFT_ERR_INVALID_ARG for cmp outside weft_cmp_t; failures and timeouts
 *  as weft_signal_wait_until (which is WEFT_CMP_GE). */
weft_status_t weft_signal_wait_until_cmp(weft_ep_t ep, weft_seg_t seg, size_t off,
                                         weft_cmp_t cmp, uint64_t value, uint64_t *seen);

/** Test an event.  *done = 1 and *ev = WEFT_EVENT_NULL when complete (the
 *  event is then consumed); testing WEFT_EVENT_NULL gives *done = 1.
 *  An operation that failed returns its error once, as it is consumed. */
weft_status_t weft_test(weft_event_t *ev, int *done);

/** Wait for an event (progressing its endpoint); *ev becomes WEFT_EVENT_NULL.
 *  WEFT_ERR_PEER_FAILED when its target failed (fate unknown, see "Peer
 *  failure").  WEFT_ERR_TIMEOUT after WEFT_TIMEOUT_MS: the operation is
 *  still outstanding and *ev unchanged (wait or test it again).
 *  WEFT_ERR_NOT_INIT, the event consumed, for an event still outstanding
 *  when its context was finalised (its fate is unknown); weft_test alike. */
weft_status_t weft_wait(weft_event_t *ev);

/** Wait for n events, in any order; each becomes WEFT_EVENT_NULL.  Returns
 *  the first error met, after waiting for all of them; weft_last_error
 *  names that event's index ("event I of N") and its weft_wait error.  An
 *  event whose wait ended with WEFT_ERR_TIMEOUT or was refused
 *  (WEFT_ERR_BUSY under WEFT_CHECK) keeps its value, as with weft_wait. */
weft_status_t weft_wait_all(weft_event_t *evs, size_t n);

/** Complete every implicit operation issued on ep (puts visible at their
 *  targets, gets in their buffers, nbi atomics applied).
 *  WEFT_ERR_PEER_FAILED when some were lost with a failed target (the
 *  others are complete); WEFT_ERR_TIMEOUT after WEFT_TIMEOUT_MS, with
 *  operations still in flight (flush again). */
weft_status_t weft_flush(weft_ep_t ep);

/* ------------------------------------------------------------------------ */
/* Active messages and progress                                             */
/* ------------------------------------------------------------------------ */

/** Number of handler ids, and the largest user header, of active messages. */
#define WEFT_AM_MAX_ID   64
#define WEFT_AM_MAX_HDR  128
/** The largest active-message payload: the largest object C allows
 *  (PTRDIFF_MAX).  What one rank can send is bounded long before by the
 *  memory of both ranks: a receiver that cannot allocate a rendezvous
 *  payload drops the message and counts it (weft_am_dropped). */
#define WEFT_AM_MAX_PAYLOAD ((size_t)PTRDIFF_MAX)

/**
 * An active-message handler.  Runs on the target, once per message, when
 * its home worker is progressed: inside weft_progress or any weft call that
 * waits, or on the progress thread when there is one.  hdr and payload are
 * valid only during the call, and have no alignment (the transport may
 * deliver them at any byte address): copy them out with memcpy to read
 * them as wider types.  It may issue non-blocking weft operations
 * but must not wait (no blocking calls, weft_wait, weft_flush or
 * weft_progress inside it).  An endpoint is used by one thread at a time,
 * and a handler runs on whichever thread progresses the home worker: it
 * may use the endpoint of the weft call it runs in (the default one, or a
 * pool endpoint of the calling thread), but on the progress thread it owns
 * none: a handler that answers its message uses weft_am_reply (register it
 * with weft_am_register_replier), which needs no endpoint.
 */
typedef void (*weft_am_handler_t)(weft_ctx_t ctx, int src_rank,
                                  const void *hdr, size_t hdr_len,
                                  const void *payload, size_t len, void *arg);

/** Register handler for id in [0, WEFT_AM_MAX_ID).  Not collective, but
 *  every rank that may receive id must register it before a peer sends it
 *  (e.g. register, then weft_barrier).  Registering a used id returns
 *  WEFT_ERR_BUSY (also while another thread is unregistering it); handler
 *  NULL unregisters.  Thread-safe, also while handlers run: once
 *  unregistering returns, the old handler is running on no other thread
 *  and is not called again (messages to id are then dropped and counted by
 *  weft_am_dropped), so its arg may be freed.  Called from inside a
 *  handler it returns at once (no other thread runs handlers then), the
 *  calling handler still running. */
weft_status_t weft_am_register(weft_ctx_t ctx, int id, weft_am_handler_t handler, void *arg);

/**
 * Handlers that can reply (gex_AM_Reply*): a handler registered with
 * weft_am_register_replier receives a token instead of (ctx, src_rank),
 * and may answer the message it handles with weft_am_reply -- from any
 * thread it runs on, the progress thread included, where it owns no
 * endpoint.  The token is valid only during the handler's call.
 */
typedef struct weft__am_token *weft_am_token_t;

typedef void (*weft_am_replier_t)(weft_am_token_t token, const void *hdr, size_t hdr_len,
                                  const void *payload, size_t len, void *arg);

/** Register a replying handler for id; otherwise exactly as
 *  weft_am_register (the same ids, WEFT_ERR_BUSY for a used one; unregister
 *  with weft_am_register(ctx, id, NULL, NULL)).  The first call connects
 *  this rank's home worker to every rank, for the replies. */
weft_status_t weft_am_register_replier(weft_ctx_t ctx, int id, weft_am_replier_t handler,
                                       void *arg);

/** The context and the source rank of the message a token stands for;
 *  either output may be NULL.  WEFT_ERR_INVALID_ARG for a NULL token. */
weft_status_t weft_am_token_info(weft_am_token_t token, weft_ctx_t *ctx, int *src_rank);

/**
 * Reply to the message of token: an active message to its source rank,
 * handled there by id's handler (either kind), with the source rank of
 * this rank.  At most one reply per token; only inside the handler that
 * got the token.  It never waits: header and payload are copied (up to
 * WEFT_AM_MAX_HDR and WEFT_AM_MAX_REPLY bytes), so they may be reused at
 * once, and the reply is sent as the worker progresses.
 * Using a token after its handler returned is undefined (it lives on the
 * handler's caller's stack).
 * Errors (nothing sent): WEFT_ERR_INVALID_ARG (NULL token, a second reply,
 * hdr or payload NULL with a length), WEFT_ERR_AM_ID (id without a handler on this rank),
 * WEFT_ERR_TOO_LARGE, WEFT_ERR_NO_MEMORY, WEFT_ERR_PEER_FAILED.
 */
weft_status_t weft_am_reply(weft_am_token_t token, int id, const void *hdr, size_t hdr_len,
                            const void *payload, size_t len);

/** The largest payload of a reply, which weft_am_reply copies. */
#define WEFT_AM_MAX_REPLY 65536

/** Send an active message; any payload size up to WEFT_AM_MAX_PAYLOAD
 *  (large ones use rendezvous).  The event completes when hdr and payload
 *  may be reused.  WEFT_ERR_AM_ID if id is not registered on this rank;
 *  WEFT_ERR_TOO_LARGE if hdr_len > WEFT_AM_MAX_HDR or len >
 *  WEFT_AM_MAX_PAYLOAD; WEFT_ERR_RANK; WEFT_ERR_INVALID_ARG (ev NULL, hdr
 *  or payload NULL with a length > 0, payload + len past the end of the
 *  address space); WEFT_ERR_PEER_FAILED.  After WEFT_ERR_PEER_FAILED or
 *  WEFT_ERR_TIMEOUT the message may or may not have run at the target
 *  (fate unknown, see "Peer failure"); before anything was sent (the
 *  rank was known failed) the call says "rank R has failed". */
weft_status_t weft_am_send_nb(weft_ep_t ep, int rank, int id,
                              const void *hdr, size_t hdr_len,
                              const void *payload, size_t len, weft_event_t *ev);

/** Blocking form of weft_am_send_nb: returns when the buffers may be reused. */
weft_status_t weft_am_send(weft_ep_t ep, int rank, int id,
                           const void *hdr, size_t hdr_len,
                           const void *payload, size_t len);

/** Active messages this rank received and dropped because what arrived was
 *  malformed (a header shorter or longer than the format allows, an id
 *  outside [0, WEFT_AM_MAX_ID) or without a handler here, a source rank
 *  outside the context); the first one is also reported on stderr.
 *  Handlers never see such a message.  A rank that registered no handler
 *  at all drops and counts every message too (weft_init installs the
 *  receive path). */
weft_status_t weft_am_dropped(weft_ctx_t ctx, uint64_t *dropped);

/** Make progress on ep: complete operations and run active-message handlers
 *  that arrived.  *count (may be NULL) gets the number of events processed. */
weft_status_t weft_progress(weft_ep_t ep, unsigned *count);

/* ---- Teams (team layer) ---------------------------------------------- */

/**
 * Teams: groups of ranks of a context that follow the machine's hierarchy
 * (the hierarchical-communicators paper, at weft level; docs/topology.md).
 * A team wraps an MPI communicator (WEFT_Team_comm() in weft_mpi.h) and
 * shares its split with WEFT_Comm_hsplit_with_roots().  The machine is
 * described by the WEFT_TOPO_* variables, or is this machine.
 */
typedef struct weft__team *weft_team_t;

/** The "no team" value: what a split returns below the bottom level. */
#define WEFT_TEAM_NULL ((weft_team_t)0)

/**
 * The team of every rank of the context, in context rank order.  Collective
 * over the context: it also allocates the scratch segment of the one-sided
 * team collectives (a weft segment of up to 16 slots of about 512 KiB,
 * shared with every team split from this one and freed by weft_finalize;
 * without memory for it the team's collectives take the MPI path).
 * WEFT_ERR_NO_MEMORY on every rank, no team made, when memory ran out on
 * one (the others' messages say "on another rank").
 * \param ctx   a live context
 * \param team  [out] the new team; free it with weft_team_free()
 */
weft_status_t weft_team_world(weft_ctx_t ctx, weft_team_t *team);

/**
 * Split a team at the next hardware level.  Collective over parent.
 *
 * *child is the highest level of the machine's tree that is a strict subset
 * of parent (equal levels collapse; the level is named after the highest of
 * them), or WEFT_TEAM_NULL when the caller's binding goes no deeper.  When
 * roots is not NULL, *roots is the team of the rank 0s of every child made
 * from parent, on those ranks, and WEFT_TEAM_NULL elsewhere.  Ranks keep
 * parent's order.  On error (a malformed WEFT_TOPO_* setting, a binding
 * outside the machine, settings that differ across ranks, memory running
 * out on a rank) every rank returns the same status, and no team is made;
 * the weft_last_error() message is the same too, except that memory for
 * the team structures themselves is reported "on another rank" elsewhere.
 * \param parent  a team
 * \param child   [out] the level, or WEFT_TEAM_NULL
 * \param roots   [out] the roots team, or WEFT_TEAM_NULL; may be NULL
 */
weft_status_t weft_team_split_topology(weft_team_t parent, weft_team_t *child,
                                       weft_team_t *roots);

/**
 * What a level made by weft_team_split_topology() knows of itself.  Local.
 * \param team   a child team (WEFT_ERR_INVALID_ARG for any other team)
 * \param num    [out] number of teams its parent was split into
 * \param index  [out] its position among them, from 0, in hardware order
 * \param type   [out] level name ("Machine", "NUMANode", "L2Cache", "Core",
 *               "Switch1", ...), owned by weft
 */
weft_status_t weft_team_level_info(weft_team_t team, int *num, int *index, const char **type);

/** This rank's rank in the team, and the team's size. */
weft_status_t weft_team_rank(weft_team_t team, int *rank);
weft_status_t weft_team_nranks(weft_team_t team, int *nranks);

/** The context rank of a team member (for RMA to a team peer). */
weft_status_t weft_team_ctx_rank(weft_team_t team, int team_rank, int *ctx_rank);

/** Free a team and set *team to WEFT_TEAM_NULL.  Collective over the team;
 *  freeing WEFT_TEAM_NULL does nothing. */
weft_status_t weft_team_free(weft_team_t *team);

/**
 * Endpoint teams: teams whose members are threads, each bringing its own
 * endpoint (of a pool, weft_ep_get) and its binding, so that the threads
 * sharing a core, a cache, a NUMA node or a node form a level
 * (docs/topology.md, "Endpoint teams").
 *
 * weft_team_join makes one over a rank team: collective over nthreads
 * threads of every rank of ranks, each calling it once with its own thread
 * index in [0, nthreads) (nthreads may differ across ranks).  Members are
 * ordered by rank, then thread index; weft_team_rank() is a member's
 * position, weft_team_nranks() the number of members, and
 * weft_team_member() says who a member is.  Joining protocol: the threads
 * of a rank meet in the parent team (they sleep until the last has
 * arrived); the last runs the rank's part, MPI collectives over ranks
 * included (MPI_THREAD_MULTIPLE, which weft_init asks for), and every
 * thread returns the same status, on every rank.  The join is complete
 * once as many threads have arrived as the smallest nthreads any gave:
 * different counts, an index outside [0, nthreads) or given twice, a NULL
 * ep or team fail the join everywhere with WEFT_ERR_INVALID_ARG.  If every
 * thread overstates nthreads, or a thread never comes, the threads of the
 * rank wait for it up to WEFT_TIMEOUT_MS (no limit when 0), then return
 * WEFT_ERR_TIMEOUT; a rank whose threads all arrived waits for the other
 * ranks in MPI, unbounded.  A thread's binding is read with hwloc
 * (hwloc_get_thread_cpubind) on this machine; WEFT_TOPO_THREAD_BIND sets it
 * (a WEFT_TOPO_BIND list over a rank's threads, ranks separated by ';');
 * on a described machine (WEFT_TOPO_SYNTHETIC/XML) without it, and for a
 * thread given as "unbound", a thread has its rank's binding.
 *
 * weft_team_split_topology() splits an endpoint team as it splits a rank
 * team (same code, same levels, roots teams, weft_team_level_info), and is
 * collective over every member, each with its own handle.
 * Every team collective (bcast, reduce, allreduce, gather, barrier) works
 * on endpoint teams, with the rank teams' arguments: every member calls
 * it, in the same order; a root is a member (its weft_team_rank).  The
 * threads of a rank meet in memory; the rank's first member (its leader)
 * combines or collects theirs and runs the step between ranks, the rank
 * team's collective, on the endpoint it brought.  WEFT_Team_comm() fails.
 * Waits between the threads of a rank (in joins, splits and collectives)
 * end after WEFT_TIMEOUT_MS with WEFT_ERR_TIMEOUT, the message naming the
 * member that did not come; a team whose collective timed out is unusable
 * (free it).
 * Thread safety: a handle is its member's.  Endpoint teams of one rank may
 * run collectives at the same time (on a node and across nodes), provided
 * the threads that lead them at the same time brought different endpoints
 * (or pool endpoints whose worker UCX locks), which nothing else uses
 * meanwhile.  Each member frees its own handle (weft_team_free, not collective); the
 * rank team a join was made over must outlive the join call only.
 * \param ranks     a rank team (not an endpoint team)
 * \param thread    the caller's index among its rank's threads
 * \param nthreads  threads of this rank that join
 * \param ep        the caller's endpoint (alive as long as the caller's handles of
 *                  the team and of the teams split from it)
 * \param team      [out] the caller's handle of the new team
 */
weft_status_t weft_team_join(weft_team_t ranks, int thread, int nthreads, weft_ep_t ep,
                             weft_team_t *team);

/** Who member `member` of a team is: its context rank and its thread index
 *  (0 for a rank team); either pointer may be NULL.  Local. */
weft_status_t weft_team_member(weft_team_t team, int member, int *ctx_rank, int *thread);

/** The endpoint the caller brought to an endpoint team (the context's
 *  default endpoint for a rank team).  Local. */
weft_status_t weft_team_ep(weft_team_t team, weft_ep_t *ep);
/* ---- end of Teams ------------------------------------------------------ */

/* ---- Team collectives (coll layer) ------------------------------------ */

/**
 * Collectives over a team that follow the machine's hierarchy (the
 * hierarchical-communicators paper, Algorithm 4; docs/collectives.md): a
 * loop over the levels of the team, top down for a broadcast, bottom up for
 * a reduction or a gather.  The levels are built on first use (a
 * collective step) and kept with the team.  Every call is collective over
 * the team, blocking, and must be made by every rank with the same count,
 * type, op and root, by one thread per rank at a time (a rank team's use
 * the context's default endpoint; an endpoint team's use, on each rank,
 * the endpoint its leader thread brought, see "Endpoint teams").  A root
 * other than rank 0 costs one extra hop.
 *
 * bcast, reduce, allreduce and barrier are one-sided: each hop of a level
 * is a chunk written into a buffer of the team's scratch slot (part of a
 * segment that weft_team_world allocates for the world team and every team
 * split from it) and a signal its reader waits on -- loads and stores
 * through weft_ptr between ranks of a node, weft_put_signal_nb and
 * weft_signal_wait_until through UCX otherwise.  Through UCX a hop needs
 * its target's progress, so a team with ranks on several nodes runs them
 * one-sided only with the progress thread (WEFT_PROGRESS_THREAD=1).  The
 * MPI path -- each level running MPI's own collective on the level's
 * communicator -- is taken otherwise, by teams without a slot (more than
 * 15 teams of one world team alive) and by weft_team_gather always.
 * Reductions combine in the same order on every rank, so an allreduce
 * gives every rank the same bits.  Acknowledgements through UCX may stay
 * in flight after a call on the endpoint it used -- the default endpoint,
 * or for an endpoint team the leader thread's own -- and a weft_flush of
 * it completes them.
 *
 * Errors: WEFT_ERR_INVALID_ARG (not a team, unknown type or op, a bitwise
 * op on a floating type, a reduction of WEFT_TYPE_BYTE), WEFT_ERR_RANK
 * (root outside the team), WEFT_ERR_TOO_LARGE (count over INT_MAX; for
 * an endpoint team's gather, count times the most members any rank has
 * over INT32_MAX), WEFT_ERR_CONFIG (a malformed WEFT_TOPO_* setting when the levels are
 * built), WEFT_ERR_MPI, WEFT_ERR_NO_MEMORY; one-sided calls also
 * WEFT_ERR_PEER_FAILED (a member failed while this rank waited for it)
 * and WEFT_ERR_TIMEOUT (WEFT_TIMEOUT_MS, on waits for ranks of other
 * nodes); endpoint teams also WEFT_ERR_TIMEOUT when a wait between the
 * threads of a rank exceeds WEFT_TIMEOUT_MS (the team is then unusable).  The MPI path runs MPI's blocking collectives: they do not serve
 * incoming weft operations while they wait (only the progress thread
 * does), do not check for failed ranks and are not bounded by
 * WEFT_TIMEOUT_MS.
 */
typedef enum {
    WEFT_TYPE_BYTE, WEFT_TYPE_INT32, WEFT_TYPE_INT64, WEFT_TYPE_UINT32,
    WEFT_TYPE_UINT64, WEFT_TYPE_FLOAT, WEFT_TYPE_DOUBLE
} weft_type_t;

/** Reduction operations (bitwise ones on integer types only). */
typedef enum {
    WEFT_OP_SUM, WEFT_OP_PROD, WEFT_OP_MIN, WEFT_OP_MAX, WEFT_OP_BAND, WEFT_OP_BOR,
    WEFT_OP_BXOR
} weft_op_t;

/** buf of count elements on root is copied to buf on every rank. */
weft_status_t weft_team_bcast(weft_team_t team, void *buf, size_t count, weft_type_t type,
                              int root);
/** dst on root gets op over every rank's src (src == dst allowed on root). */
weft_status_t weft_team_reduce(weft_team_t team, const void *src, void *dst, size_t count,
                               weft_type_t type, weft_op_t op, int root);
/** dst on every rank gets op over every rank's src. */
weft_status_t weft_team_allreduce(weft_team_t team, const void *src, void *dst, size_t count,
                                  weft_type_t type, weft_op_t op);
/** dst on root (room for nranks * count elements) gets every rank's src in
 *  team rank order. */
weft_status_t weft_team_gather(weft_team_t team, const void *src, void *dst, size_t count,
                               weft_type_t type, int root);
/** Returns once every rank of the team has entered. */
weft_status_t weft_team_barrier(weft_team_t team);
/* ---- end of Team collectives ------------------------------------------- */

/* ---- Profiling (docs/breakdown.md) ------------------------------------ */

/**
 * Trace points time weft's own code and the UCX calls it makes, with the
 * CPU's invariant TSC, so that the time of a message can be broken down
 * (HLP: weft, LLP: UCX).  Points: "HLP_post", "LLP_post", "LLP_prog",
 * "LLP_poll", "HLP_tx_prog", "HLP_rx_prog", "busy_post", "direct_copy",
 * "HLP_post_tail", "HLP_prog", "signal_add", "signal_poll";
 * docs/breakdown.md says where each starts and stops.  WEFT_PROFILE=1 (or
 * a comma-separated list of points) selects them at weft_init, and
 * weft_finalize then writes their statistics as JSON to WEFT_PROFILE_FILE
 * ("%r" is replaced by the rank; default weft-profile-%r.json).  Off, a
 * point costs a predicted branch; a build with the CMake option
 * WEFT_PROFILE=OFF has none (the calls below then return
 * WEFT_ERR_UNSUPPORTED for any selection but "0").  Process-wide, not
 * per context.
 */

/** Statistics of one point; times in ns with the timer's own cost removed. */
typedef struct {
    uint64_t count;      /**< samples */
    double   total_ns;   /**< sum of the samples */
    double   min_ns;     /**< smallest sample */
    double   median_ns;  /**< median of a uniform sample of up to 1024 per thread */
    double   trimmed_mean_ns;  /**< mean of that sample without its top 1 %
                                    (samples stretched by interrupts or the scheduler) */
} weft_prof_stat_t;

/** Select the points to time: "1"/"all", "0" (none), or a comma-separated
 *  list of names.  The first selection calibrates the timer (about 0.1 s).
 *  WEFT_ERR_CONFIG naming an unknown point; WEFT_ERR_UNSUPPORTED without
 *  an invariant TSC or without trace points in this build. */
weft_status_t weft_prof_select(const char *points);

/** Forget every sample.  No thread may be inside weft meanwhile. */
weft_status_t weft_prof_reset(void);

/** Statistics of a point, summed over every thread (zeros if never hit).
 *  WEFT_ERR_CONFIG for an unknown name. */
weft_status_t weft_prof_stat(const char *point, weft_prof_stat_t *out);

/** The TSC frequency and the cost of an empty timed region, subtracted
 *  from every sample (WEFT_ERR_NOT_INIT before the first selection). */
weft_status_t weft_prof_timer(double *tsc_ghz, double *overhead_ns);

/** Write every point's statistics as JSON to path (what weft_finalize
 *  writes under WEFT_PROFILE).  WEFT_ERR_INVALID_ARG when path is NULL or
 *  cannot be written. */
weft_status_t weft_prof_write(const char *path, int rank);
/* ---- end of Profiling -------------------------------------------------- */

#ifdef __cplusplus
}
#endif

/* The inline direct path of small puts, gets and atomics (unless
 * WEFT_NO_INLINE is defined): the calls above keep their names. */
#include <weft_inline.h>

#endif /* WEFT_H */
