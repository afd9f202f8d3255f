/* weft_init / weft_finalize: MPI bootstrap, UCX context, home worker,
 * address exchange, progress thread, and the ordered teardown of layers. */
#define _GNU_SOURCE  /* ppoll, pthread_setaffinity_np, pthread_setname_np */
#include "runtime.h"
#include <weft_ucx.h>

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Contexts are never freed: a finalised one stays as a shell marked dead so
 * that a later call through a stale handle is reported, not undefined. */
static pthread_mutex_t shells_lock = PTHREAD_MUTEX_INITIALIZER;
static struct weft__ctx *shells;

weft_status_t weft__ctx_check(weft_ctx_t ctx, const char *fn)
{
    if (ctx == NULL)
        return weft__error(WEFT_ERR_NOT_INIT, fn, "context is NULL (call weft_init first)");
    if (ctx->state != WEFT__ALIVE)
        return weft__error(WEFT_ERR_NOT_INIT, fn, "context was finalised");
    return WEFT_OK;
}

void *weft__ctx_layer(weft_ctx_t ctx, int layer, size_t size, weft__quiesce_fn quiesce,
                      weft__teardown_fn teardown, const char *fn)
{
    if (ctx->layer[layer] == NULL) {
        void *state = calloc(1, size);

        if (state == NULL) {
            weft__error(WEFT_ERR_NO_MEMORY, fn, "state of a layer");
            return NULL;
        }
        ctx->layer[layer] = state;
        ctx->quiesce[layer] = quiesce;
        ctx->teardown[layer] = teardown;
    }
    return ctx->layer[layer];
}

void weft__ctx_progress_home(weft_ctx_t ctx)
{
    /* Threads of an endpoint pool may all serve the home worker, one at a
     * time: whoever finds it busy leaves it to the thread that has it. */
    if (!ctx->pthread_running && !__atomic_exchange_n(&ctx->home_busy, 1, __ATOMIC_ACQUIRE)) {
        ucp_worker_progress(ctx->home);
        __atomic_store_n(&ctx->home_busy, 0, __ATOMIC_RELEASE);
    }
}

weft_status_t weft__collective_check(weft_ctx_t ctx, const char *fn)
{
    if (WEFT__UNLIKELY(weft__fail_gen(ctx) != 0))
        return weft__error(WEFT_ERR_PEER_FAILED, fn,
                           "a rank of the context has failed: no collective can complete");
    return WEFT_OK;
}

weft_status_t weft__mpi_wait(weft_ctx_t ctx, MPI_Request *req, const char *fn)
{
    int done = 0;
    weft__waiter_t w;
    weft_status_t st;

    weft__wait_init(&w, ctx);
    while (!done) {
        /* A collective cannot complete without every rank: once one is
         * known dead, give up (MPI cannot cancel the request; weft_finalize
         * then leaves MPI alone). */
        if (!ctx->last_barrier && (st = weft__collective_check(ctx, fn)) != WEFT_OK) {
            ctx->mpi_abandoned = 1;
            return st;
        }
        if (MPI_Test(req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return weft__error(WEFT_ERR_MPI, fn, "MPI_Test failed");
        weft__ctx_progress_home(ctx);
        if (!done && (st = weft__wait_step(&w, 0, fn)) != WEFT_OK) {
            ctx->mpi_abandoned = 1;
            return st;
        }
    }
    return WEFT_OK;
}

weft_status_t weft__agree(weft_ctx_t ctx, weft_status_t st, const char *fn)
{
    int local = (int)st, global;
    MPI_Request req;
    weft_status_t err;

    if ((err = weft__collective_check(ctx, fn)) != WEFT_OK)
        return err;
    if (MPI_Iallreduce(&local, &global, 1, MPI_INT, MPI_MIN, ctx->comm, &req) != MPI_SUCCESS)
        return weft__error(WEFT_ERR_MPI, fn, "MPI_Iallreduce failed");
    if ((err = weft__mpi_wait(ctx, &req, fn)) != WEFT_OK)
        return err;
    if (global != WEFT_OK && local == WEFT_OK)
        return weft__error((weft_status_t)global, fn,
                           "another rank failed: %s", weft_strerror((weft_status_t)global));
    return (weft_status_t)global;
}

/* What the progress thread is started with, and what it got.  The thread
 * owns it once it has started well, and frees it when it ends. */
struct progress_start {
    weft_ctx_t           ctx;
    weft__progress_cfg_t pc;
    sem_t                ready;    /* posted when the thread has set itself up */
    int                  bind_err; /* errno of a binding refused, else 0 */
    int                  got;      /* WEFT__PRIO_* obtained */
    int                  node_index; /* the rank's place among its node's */
    /* WEFT__BIND_SPARE: the CPUs of the node no rank is bound to, and the
     * one the thread took (-1: none, it runs on the rank's cores) */
    int                  nspare, spare_got;
    uint16_t             spare[WEFT__CPU_MAX];
};

static const char *const prio_label[] = {"normal", "short slice", "SCHED_FIFO"};

/* sched_setattr's argument (glibc 2.36 has no wrapper), its first version */
struct progress_sched_attr {
    uint32_t size, policy;
    uint64_t flags;
    int32_t  nice;
    uint32_t priority;
    uint64_t runtime, deadline, period;
};

/* Bind the calling thread as asked: 0, or the errno of the refusal.  A
 * spare CPU the kernel refuses (another job's, or offline) is passed
 * over for the next; with none left the thread stays on the rank's cores,
 * which is no error. */
static int progress_bind(struct progress_start *ps)
{
    const weft__progress_cfg_t *pc = &ps->pc;
    cpu_set_t set;

    ps->spare_got = -1;
    if (pc->bind == WEFT__BIND_RANK)
        return 0;
    if (pc->bind == WEFT__BIND_SPARE) {
        cpu_set_t before;
        int n = 0;

        /* keep the candidates this process may run on (every rank of the
         * node finds the same ones), then take the one of the rank's place */
        if (pthread_getaffinity_np(pthread_self(), sizeof(before), &before) != 0)
            return 0;
        for (int i = 0; i < ps->nspare; i++) {
            CPU_ZERO(&set);
            CPU_SET(ps->spare[i], &set);
            if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0)
                ps->spare[n++] = ps->spare[i];
        }
        if (n == 0)
            return pthread_setaffinity_np(pthread_self(), sizeof(before), &before);
        ps->spare_got = ps->spare[ps->node_index % n];
        CPU_ZERO(&set);
        CPU_SET(ps->spare_got, &set);
        return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    }
    CPU_ZERO(&set);
    if (pc->bind == WEFT__BIND_ALL) {
        /* every CPU: the kernel keeps those of the job's cpuset */
        for (int c = 0; c < CPU_SETSIZE; c++)
            CPU_SET(c, &set);
    } else {
        if (pc->cpu >= CPU_SETSIZE)
            return EINVAL;
        CPU_SET(pc->cpu, &set);
    }
    return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* Raise the calling thread's claim on its core as far as asked and
 * permitted; return what it got.  A woken thread of the normal policy may
 * wait for the computing thread it shares a core with to use up its time
 * slice (EEVDF runs the current task to its deadline; CFS preempts only
 * past a granularity), milliseconds in which a request waits.  SCHED_FIFO
 * preempts at once but needs CAP_SYS_NICE or an RLIMIT_RTPRIO; a short
 * slice of the normal policy (Linux 6.12 and later: sched_attr.sched_runtime)
 * gives a woken thread an earlier deadline than the computing one, so it
 * runs first, and needs no privilege.  Older kernels ignore it. */
static int progress_priority(int want)
{
    if (want >= WEFT__PRIO_FIFO) {
        struct sched_param sp = {.sched_priority = 1};

        if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0)
            return WEFT__PRIO_FIFO;
    }
    if (want >= WEFT__PRIO_SHORT) {
        struct progress_sched_attr a = {.size = sizeof(a), .policy = SCHED_OTHER,
                                        .runtime = 100000 /* ns: the shortest Linux takes */};

        errno = 0;
        a.nice = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
        if (errno == 0 && syscall(SYS_sched_setattr, 0, &a, 0) == 0)
            return WEFT__PRIO_SHORT;
    }
    return WEFT__PRIO_NORMAL;
}

/* The longest sleep of a thread armed on the worker's event descriptor,
 * unless the interval is longer: if a transport ever loses a wake-up, the
 * request waits this long rather than for ever. */
#define ARMED_GUARD_US 10000

/* A sleep of us microseconds for ppoll, which refuses tv_nsec >= 1e9
 * (EINVAL at once, and the thread would spin): whole seconds and a
 * fraction. */
static struct timespec us_timespec(unsigned long us)
{
    return (struct timespec){.tv_sec = (time_t)(us / 1000000), .tv_nsec = (long)(us % 1000000) * 1000};
}

static double progress_now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* What the progress thread saw of the application's polls at its last
 * look, and when. */
struct app_look {
    unsigned long polls;
    double        at_us;
};

/* Whether the application has progressed the home worker at least once
 * an interval, on average, since the last look (a blocking weft call
 * polls it thousands of times an interval; an application that calls
 * weft_progress now and then while it computes does not count, and its
 * thread stays on the descriptor to serve it between calls). */
static int app_polling(weft_ctx_t ctx, struct app_look *last)
{
    unsigned long polls = __atomic_load_n(&ctx->app_polls, __ATOMIC_RELAXED);
    double now = progress_now_us(), since = now - last->at_us;
    unsigned long made = polls - last->polls;

    last->polls = polls;
    last->at_us = now;
    return made > 0 && (double)made * (double)ctx->cfg.progress_interval_us >= since;
}

/* Sleep without the transport's descriptor, the wasted-th time in a row
 * (1 to 5): the interval, doubled each time (up to 16 intervals and a
 * millisecond, or the interval if longer); a write to pthread_wake ends
 * it early. */
static void progress_park(weft_ctx_t ctx, struct pollfd *fds, unsigned wasted)
{
    unsigned long us = (unsigned long)ctx->cfg.progress_interval_us << (wasted - 1);
    unsigned long most = ctx->cfg.progress_interval_us > 1000 ? ctx->cfg.progress_interval_us : 1000;
    struct timespec back = us_timespec(us < most ? us : most);
    uint64_t drain;

    if (ppoll(fds, 1, &back, NULL) > 0)
        (void)!read(ctx->pthread_wake, &drain, sizeof(drain));
}

static void *progress_main(void *arg)
{
    struct progress_start *ps = arg;
    weft_ctx_t ctx = ps->ctx;
    const double spin_us = ps->pc.spin_us;
    int efd = -1;
    struct pollfd fds[2];
    struct timespec tmo = us_timespec(ctx->cfg.progress_interval_us);
    /* armed, the interval is only a guard against a wake-up lost: 10 ms
     * at least (below) */
    struct timespec guard = us_timespec(ctx->cfg.progress_interval_us > ARMED_GUARD_US
                                            ? ctx->cfg.progress_interval_us : ARMED_GUARD_US);
    uint64_t drain;
    unsigned busy_arms = 0;  /* arms refused in a row with nothing to progress */
    double last_work = 0;
    int woken = 0;           /* by the transport's event descriptor */
    unsigned wasted = 0;     /* looks in a row that found the application polling, or
                              * that followed a wake-up for nothing (at most 5) */
    struct app_look look = {0, 0};

    /* its name in top -H, ps -L, gdb and /proc/<pid>/task/<tid>/comm */
    (void)pthread_setname_np(pthread_self(), "weft-progress");
    if ((ps->bind_err = progress_bind(ps)) != 0) {
        sem_post(&ps->ready);
        return NULL;
    }
    ps->got = progress_priority(ps->pc.priority);
    sem_post(&ps->ready);

    if (ucp_worker_get_efd(ctx->home, &efd) != UCS_OK)
        efd = -1;
    fds[0].fd = ctx->pthread_wake;
    fds[0].events = POLLIN;
    fds[1].fd = efd;
    fds[1].events = POLLIN;

    while (!__atomic_load_n(&ctx->pthread_stop, __ATOMIC_ACQUIRE)) {
        unsigned done = 0, n;
        ucs_status_t arm = UCS_ERR_UNSUPPORTED;

        /* Back from a sleep without the descriptor (below) to find the
         * application still polling: it serves the worker; the thread
         * leaves it alone (on the application's core, taking the
         * worker's lock would only make the application wait for it). */
        if (wasted > 0 && app_polling(ctx, &look)) {
            wasted += wasted < 5;
            progress_park(ctx, fds, wasted);
            continue;
        }
        while ((n = ucp_worker_progress(ctx->home)) != 0)
            done += n;
        /* Having served something, the thread goes on below: the call
         * that returned 0 has found nothing more, and arming finds what
         * came since (one call to the transport per request fewer). */
        if (done > 0) {
            busy_arms = 0;
            wasted = 0;
            woken = 0;
            if (spin_us > 0) {
                last_work = progress_now_us();
                continue;
            }
        }
        /* The application progresses the worker itself (it has at least
         * once an interval since the last look: weft__ctx_app_polled), or
         * the transport woke this thread for nothing (a message the
         * application read first, by a path that does not count).  A
         * thread asleep on the descriptor would be woken by each message
         * the application reads, from the core the message came in on: a
         * wake-up across cores for nothing (tens of us of the sender's
         * CPU in a virtual machine) and the worker's lock taken from the
         * application.  So the thread sleeps without the descriptor
         * instead, an interval at first, twice as long each time it finds
         * the application still polling (up to 16 intervals and a
         * millisecond, or the interval if longer), and goes back to the
         * descriptor after a sleep through which the application did not
         * poll that often.  A request that arrives when the application
         * stops calling weft waits at most to the end of the sleep after
         * the one it stopped in. */
        if (app_polling(ctx, &look) || woken)
            wasted += wasted < 5;
        else
            wasted = 0;
        woken = 0;
        if (wasted > 0) {
            progress_park(ctx, fds, wasted);
            continue;
        }
        /* A request often follows the last one by a round trip: polling
         * a little longer serves it without a sleep and a wake-up, at the
         * price of that time on the thread's core. */
        if (spin_us > 0 && progress_now_us() - last_work < spin_us)
            continue;
        /* Nothing to do: sleep in the kernel until the transport signals
         * an event.  Armed, the thread wakes for nothing else but a guard
         * (ARMED_GUARD_US): a timer at every interval (50 us) cost a core
         * shared with the computation a wake-up each time, which doubled
         * the CPU the thread took per request served; sleeping the
         * interval only once after serving something (for a send UCX
         * could not finish at once, which over TCP wakes the descriptor
         * anyway, as the socket becomes writable) still doubled the get
         * from a computing rank, since the thread of the requesting rank
         * then woke for nothing after each reply.  Not armed, it sleeps
         * for the interval (transports without wake-up still get
         * served).  Arming fails (UCS_ERR_BUSY) when events
         * arrived since the last progress call -- the next request of a
         * stream of them, typically -- and then they are served at once.
         * Only if arming fails again with nothing to progress, events are
         * pending that this thread does not get: the application is
         * progressing the worker itself, and the thread polls at the
         * interval rather than spin against it for the lock. */
        if (efd >= 0)
            arm = ucp_worker_arm(ctx->home);
        if (arm == UCS_ERR_BUSY && busy_arms++ == 0)
            continue;
        if (arm == UCS_OK)
            busy_arms = 0;
        if (ppoll(fds, arm == UCS_OK ? 2 : 1, arm == UCS_OK ? &guard : &tmo, NULL) > 0) {
            if (fds[0].revents & POLLIN)
                (void)!read(ctx->pthread_wake, &drain, sizeof(drain));
            woken = arm == UCS_OK && (fds[1].revents & POLLIN);
        }
    }
    free(ps);
    return NULL;
}

/* The bits of a CPU set. */
static void cpu_bits(const cpu_set_t *set, uint64_t bits[WEFT__CPU_WORDS])
{
    memset(bits, 0, WEFT__CPU_WORDS * sizeof(bits[0]));
    for (int c = 0; c < WEFT__CPU_MAX && c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, set))
            bits[c / 64] |= 1ull << (c % 64);
}

/* This rank's place among the context's ranks of its node (MPI's
 * shared-memory node), and the CPUs any of them may run on: the CPU sets
 * of the threads that call weft_init, as the launcher bound them, OR-ed
 * (one that cannot be read claims every CPU).  Collective. */
static weft_status_t node_cpus(weft_ctx_t ctx, int *index, uint64_t used[WEFT__CPU_WORDS])
{
    uint64_t mine[WEFT__CPU_WORDS];
    cpu_set_t set;
    MPI_Comm node;
    int ok;

    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        cpu_bits(&set, mine);
    else
        memset(mine, 0xff, sizeof(mine));
    if (MPI_Comm_split_type(ctx->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
        return weft__error(WEFT_ERR_MPI, "weft_init", "MPI_Comm_split_type of the node failed");
    ok = MPI_Comm_rank(node, index) == MPI_SUCCESS &&
         MPI_Allreduce(mine, used, WEFT__CPU_WORDS, MPI_UINT64_T, MPI_BOR, node) == MPI_SUCCESS;
    MPI_Comm_free(&node);
    return ok ? WEFT_OK
              : weft__error(WEFT_ERR_MPI, "weft_init", "gathering the node's CPU sets failed");
}

/* The CPUs a thread of this node may take that no rank is bound to: those
 * the system gives its first process (PID 1: the node's, or container's,
 * CPUs less those isolated from the scheduler), less `used`.  Whether the
 * kernel lets this process run there (a job's cpuset) the thread finds
 * out when it binds.  How many, into out. */
static int spare_candidates(const uint64_t used[WEFT__CPU_WORDS], uint16_t out[WEFT__CPU_MAX])
{
    uint64_t may[WEFT__CPU_WORDS];
    cpu_set_t set;

    if (sched_getaffinity(1, sizeof(set), &set) == 0)
        cpu_bits(&set, may);
    else
        memset(may, 0xff, sizeof(may));
    return weft__spare_cpus(may, used, out);
}

static weft_status_t start_progress_thread(weft_ctx_t ctx)
{
    struct progress_start *ps = calloc(1, sizeof(*ps));
    uint64_t used[WEFT__CPU_WORDS];
    weft_status_t st;

    if (ps == NULL)
        return weft__error(WEFT_ERR_NO_MEMORY, "weft_init", "progress thread");
    ps->ctx = ctx;
    /* first, on every rank alike: it is collective */
    if ((st = node_cpus(ctx, &ps->node_index, used)) != WEFT_OK) {
        free(ps);
        return st;
    }
    if ((st = weft__progress_cfg_read(&ps->pc)) != WEFT_OK) {
        free(ps);
        return st;
    }
    if (ps->pc.bind == WEFT__BIND_CPU)
        ps->pc.cpu = weft__progress_cpu(&ps->pc, ps->node_index);
    /* The CPU sets gathered are those of the context's ranks: a context
     * on part of the job would see the cores of the others as spare. */
    if (ps->pc.bind == WEFT__BIND_SPARE) {
        int same = MPI_UNEQUAL;

        MPI_Comm_compare(ctx->comm, MPI_COMM_WORLD, &same);
        if (same == MPI_UNEQUAL)
            ps->pc.bind = WEFT__BIND_RANK;
        else
            ps->nspare = spare_candidates(used, ps->spare);
    }
    ctx->pthread_wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (ctx->pthread_wake < 0) {
        free(ps);
        return weft__error(WEFT_ERR_NO_MEMORY, "weft_init", "eventfd: %s", strerror(errno));
    }
    sem_init(&ps->ready, 0, 0);
    if (pthread_create(&ctx->pthread, NULL, progress_main, ps) != 0) {
        close(ctx->pthread_wake);
        sem_destroy(&ps->ready);
        free(ps);
        return weft__error(WEFT_ERR_NO_MEMORY, "weft_init", "cannot start the progress thread");
    }
    while (sem_wait(&ps->ready) != 0 && errno == EINTR)
        ;
    if (ps->bind_err != 0) {
        /* the thread has ended without touching the worker */
        pthread_join(ctx->pthread, NULL);
        close(ctx->pthread_wake);
        if (ps->pc.bind == WEFT__BIND_CPU && ps->bind_err == EINVAL)
            st = weft__error(WEFT_ERR_CONFIG, "weft_init",
                             "WEFT_PROGRESS_BIND: CPU %d is not one this process may run on",
                             ps->pc.cpu);
        else
            st = weft__error(WEFT_ERR_CONFIG, "weft_init",
                             "WEFT_PROGRESS_BIND: cannot bind the progress thread: %s",
                             strerror(ps->bind_err));
        sem_destroy(&ps->ready);
        free(ps);
        return st;
    }
    /* ps lives until the thread is stopped (stop_progress_thread) */
    if (ctx->cfg.verbose && ctx->rank == 0) {
        char where[48];

        if (ps->pc.bind == WEFT__BIND_SPARE && ps->spare_got < 0)
            snprintf(where, sizeof(where), "the rank's cores (no spare CPU)");
        else if (ps->pc.bind == WEFT__BIND_SPARE)
            snprintf(where, sizeof(where), "spare CPU %d", ps->spare_got);
        else
            snprintf(where, sizeof(where), "CPU %d", ps->pc.cpu);
        fprintf(stderr, "weft: progress thread bound to %s, priority %s (asked %s), spin %u us\n",
                ps->pc.bind == WEFT__BIND_RANK ? "the rank's cores"
                : ps->pc.bind == WEFT__BIND_ALL ? "every core" : where,
                prio_label[ps->got], prio_label[ps->pc.priority], ps->pc.spin_us);
    }
    ctx->pthread_running = 1;
    return WEFT_OK;
}

static void stop_progress_thread(weft_ctx_t ctx)
{
    uint64_t one = 1;

    if (!ctx->pthread_running)
        return;
    __atomic_store_n(&ctx->pthread_stop, 1, __ATOMIC_RELEASE);
    (void)!write(ctx->pthread_wake, &one, sizeof(one));
    pthread_join(ctx->pthread, NULL);
    close(ctx->pthread_wake);
    ctx->pthread_running = 0;
}

static weft_status_t init_mpi(weft_ctx_t ctx)
{
    int inited, finalized, provided, inter;
    MPI_Comm parent = ctx->cfg.mpi_comm ? *(MPI_Comm *)ctx->cfg.mpi_comm : MPI_COMM_WORLD;

    /* MPI would hand MPI_COMM_NULL to its fatal error handler */
    if (parent == MPI_COMM_NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, "weft_init", "cfg->mpi_comm is MPI_COMM_NULL");
    MPI_Finalized(&finalized);
    if (finalized)
        return weft__error(WEFT_ERR_MPI, "weft_init", "MPI is already finalised");
    MPI_Initialized(&inited);
    if (!inited) {
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
            return weft__error(WEFT_ERR_MPI, "weft_init", "MPI_Init_thread failed");
        ctx->owns_mpi = 1;
    }
    /* The collectives below would gather the remote group's addresses */
    if (MPI_Comm_test_inter(parent, &inter) != MPI_SUCCESS || inter)
        return weft__error(WEFT_ERR_INVALID_ARG, "weft_init",
                           "cfg->mpi_comm is an intercommunicator; a context is one group of ranks");
    if (MPI_Comm_dup(parent, &ctx->comm) != MPI_SUCCESS)
        return weft__error(WEFT_ERR_MPI, "weft_init", "MPI_Comm_dup failed");
    /* A dead peer must give weft an error to handle, not abort the rank. */
    MPI_Comm_set_errhandler(ctx->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(ctx->comm, &ctx->rank);
    MPI_Comm_size(ctx->comm, &ctx->nranks);
    return WEFT_OK;
}

void weft__ucx_params(weft_ctx_t ctx, ucp_params_t *params)
{
    memset(params, 0, sizeof(*params));
    params->field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_REQUEST_SIZE |
                         UCP_PARAM_FIELD_MT_WORKERS_SHARED | UCP_PARAM_FIELD_ESTIMATED_NUM_EPS;
    /* AMO32: the 32-bit typed atomics (weft_atomic) */
    params->features = UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64 | UCP_FEATURE_AM;
    if (ctx->cfg.progress_thread)
        params->features |= UCP_FEATURE_WAKEUP;
    params->request_size = sizeof(weft__req_t);
    params->mt_workers_shared = 1;
    params->estimated_num_eps = (size_t)ctx->nranks;
}

static weft_status_t init_ucx(weft_ctx_t ctx)
{
    ucp_config_t *config;
    ucp_params_t params;
    ucp_worker_params_t wparams;
    ucs_status_t s;

    s = weft__ucx_config_read(&config);
    if (s != UCS_OK)
        return weft__ucs_error(s, "weft_init", "ucp_config_read");
    weft__ucx_params(ctx, &params);
    /* The progress thread and the application take the home worker's lock
     * in turn, often on one core.  UCX's default lock spins: a thread woken
     * while the other, preempted, holds it spins out its time slice (or, at
     * a real-time priority, until the kernel throttles it).  A mutex puts
     * the waiter to sleep instead.  The user's UCX_USE_MT_MUTEX decides. */
    if (ctx->cfg.progress_thread && weft__ucx_env("USE_MT_MUTEX") == NULL &&
        (s = ucp_config_modify(config, "USE_MT_MUTEX", "y")) != UCS_OK) {
        ucp_config_release(config);
        return weft__ucs_error(s, "weft_init", "ucp_config_modify(USE_MT_MUTEX)");
    }
    s = ucp_init(&params, config, &ctx->ucp);
    ucp_config_release(config);
    if (s != UCS_OK)
        return weft__ucs_error(s, "weft_init", "ucp_init");

    memset(&wparams, 0, sizeof(wparams));
    wparams.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    /* With a progress thread the home worker is driven by two threads. */
    wparams.thread_mode = ctx->cfg.progress_thread ? UCS_THREAD_MODE_MULTI
                                                   : UCS_THREAD_MODE_SERIALIZED;
    s = ucp_worker_create(ctx->ucp, &wparams, &ctx->home);
    if (s != UCS_OK) {
        ucp_cleanup(ctx->ucp);
        ctx->ucp = NULL;
        return weft__ucs_error(s, "weft_init", "ucp_worker_create");
    }
    return WEFT_OK;
}

static void release_ucx(weft_ctx_t ctx)
{
    if (ctx->home)
        ucp_worker_destroy(ctx->home);
    if (ctx->ucp)
        ucp_cleanup(ctx->ucp);
    ctx->home = NULL;
    ctx->ucp = NULL;
}

static weft_status_t exchange_addresses(weft_ctx_t ctx)
{
    ucp_address_t *addr;
    size_t len;
    int mylen, *lens = NULL, *displs = NULL, total = 0;
    weft_status_t st = WEFT_OK;
    ucs_status_t s;

    s = ucp_worker_get_address(ctx->home, &addr, &len);
    if (s != UCS_OK)
        return weft__ucs_error(s, "weft_init", "ucp_worker_get_address");
    mylen = (int)len;
    lens = malloc(sizeof(int) * (size_t)ctx->nranks);
    displs = malloc(sizeof(int) * (size_t)ctx->nranks);
    ctx->addr_off = malloc(sizeof(size_t) * (size_t)ctx->nranks);
    if (!lens || !displs || !ctx->addr_off) {
        st = weft__error(WEFT_ERR_NO_MEMORY, "weft_init", "address table");
        goto out;
    }
    if (MPI_Allgather(&mylen, 1, MPI_INT, lens, 1, MPI_INT, ctx->comm) != MPI_SUCCESS) {
        st = weft__error(WEFT_ERR_MPI, "weft_init", "MPI_Allgather of address sizes failed");
        goto out;
    }
    for (int r = 0; r < ctx->nranks; r++) {
        displs[r] = total;
        ctx->addr_off[r] = (size_t)total;
        total += lens[r];
    }
    ctx->addrs = malloc((size_t)total);
    if (ctx->addrs == NULL) {
        st = weft__error(WEFT_ERR_NO_MEMORY, "weft_init", "address table");
        goto out;
    }
    if (MPI_Allgatherv(addr, mylen, MPI_BYTE, ctx->addrs, lens, displs, MPI_BYTE,
                       ctx->comm) != MPI_SUCCESS)
        st = weft__error(WEFT_ERR_MPI, "weft_init", "MPI_Allgatherv of addresses failed");
out:
    free(lens);
    free(displs);
    ucp_worker_release_address(ctx->home, addr);
    return st;
}

static void print_summary(weft_ctx_t ctx)
{
    const char *tls = weft__ucx_env("TLS");

    fprintf(stderr, "weft %d.%d.%d: %d ranks, UCX %s (TLS=%s), connect=%s, progress thread %s\n",
            WEFT_VERSION_MAJOR, WEFT_VERSION_MINOR, WEFT_VERSION_PATCH, ctx->nranks,
            ucp_get_version_string(), tls ? tls : "default",
            ctx->cfg.connect == WEFT_CONNECT_EAGER ? "eager" : "lazy",
            ctx->cfg.progress_thread ? "on" : "off");
}

static weft__ctx_init_fn layer_init[WEFT__NUM_LAYERS];

void weft__ctx_on_init(int layer, weft__ctx_init_fn fn)
{
    layer_init[layer] = fn;
}

/* The upper layers' set-up of a new context (weft__ctx_on_init). */
static weft_status_t init_layers(weft_ctx_t ctx)
{
    weft_status_t st;

    for (int layer = 0; layer < WEFT__NUM_LAYERS; layer++)
        if (layer_init[layer] && (st = layer_init[layer](ctx)) != WEFT_OK)
            return st;
    return WEFT_OK;
}

weft_status_t weft_init(const weft_config_t *cfg, weft_ctx_t *out)
{
    struct weft__ctx *ctx;
    weft_status_t st;

    if (out == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "ctx is NULL");
    ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL)
        return weft__error(WEFT_ERR_NO_MEMORY, __func__, "context");
    ctx->comm = MPI_COMM_NULL;
    pthread_mutex_init(&ctx->lock, NULL);
    pthread_mutex_init(&ctx->gate_lock, NULL);
    if (cfg != NULL)
        ctx->cfg = *cfg;
    else if ((st = weft_config_init(&ctx->cfg)) != WEFT_OK)
        goto err_free_ctx;
    if (ctx->cfg.progress_interval_us == 0)
        ctx->cfg.progress_interval_us = 50;

    if ((st = init_mpi(ctx)) != WEFT_OK)
        goto err_free_ctx;
    st = weft__agree(ctx, init_ucx(ctx), "weft_init");
    if (st != WEFT_OK)
        goto err_release_ucx;
    st = weft__agree(ctx, exchange_addresses(ctx), "weft_init");
    if (st != WEFT_OK)
        goto err_release_ucx;
    if ((st = weft__agree(ctx, weft__peer_init(ctx), "weft_init")) != WEFT_OK)
        goto err_release_ucx;
    if ((st = weft__agree(ctx, weft__profile_start(), "weft_init")) != WEFT_OK)
        goto err_release_ucx;
    if ((st = weft__agree(ctx, init_layers(ctx), "weft_init")) != WEFT_OK)
        goto err_teardown_layers;
    if (ctx->cfg.progress_thread &&
        (st = weft__agree(ctx, start_progress_thread(ctx), "weft_init")) != WEFT_OK)
        goto err_stop_thread;

    ctx->state = WEFT__ALIVE;
    if (ctx->cfg.verbose && ctx->rank == 0)
        print_summary(ctx);
    *out = ctx;
    return WEFT_OK;

err_stop_thread:
    stop_progress_thread(ctx);
err_teardown_layers:
    for (int layer = WEFT__NUM_LAYERS - 1; layer >= 0; layer--)
        if (ctx->teardown[layer])
            ctx->teardown[layer](ctx);
err_release_ucx:
    weft__peer_release(ctx);
    free(ctx->addrs);
    free(ctx->addr_off);
    release_ucx(ctx);
    /* As weft_finalize: a collective step given up on (a timeout, a dead
     * rank) is still pending, and MPI_Comm_free or MPI_Finalize would
     * progress it on memory that is gone, or wait for every rank. */
    if (!ctx->mpi_abandoned) {
        MPI_Comm_free(&ctx->comm);
        if (ctx->owns_mpi)
            MPI_Finalize();
    }
err_free_ctx:
    pthread_mutex_destroy(&ctx->gate_lock);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
    return st;
}

weft_status_t weft_barrier(weft_ctx_t ctx)
{
    MPI_Request req;
    weft_status_t st;

    if ((st = weft__ctx_check(ctx, __func__)) != WEFT_OK ||
        (st = weft__collective_check(ctx, __func__)) != WEFT_OK)
        return st;
    if (MPI_Ibarrier(ctx->comm, &req) != MPI_SUCCESS)
        return weft__error(WEFT_ERR_MPI, __func__, "MPI_Ibarrier failed");
    return weft__mpi_wait(ctx, &req, __func__);
}

weft_status_t weft_finalize(weft_ctx_t ctx)
{
    weft_status_t st, first = WEFT_OK;
    int failed;

    if ((st = weft__ctx_check(ctx, __func__)) != WEFT_OK)
        return st;
    /* Complete our operations, then wait until every rank has done the
     * same: after that nobody touches our memory and it can go.  With a
     * rank dead the barrier cannot complete and is skipped (weft__mpi_wait
     * gives up): survivors release their memory while live peers may still
     * access it, as the header says. */
    for (int layer = WEFT__NUM_LAYERS - 1; layer >= 0; layer--)
        if (ctx->quiesce[layer] && (st = ctx->quiesce[layer](ctx)) != WEFT_OK && first == WEFT_OK)
            first = st;
    failed = weft__fail_gen(ctx) != 0;
    if (failed) {
        first = weft__error(WEFT_ERR_PEER_FAILED, __func__,
                            "a rank of the context has failed; finalised without it");
    } else {
        /* A rank that leaves this barrier first goes on to exit, and its
         * death then is no failure: only WEFT_TIMEOUT_MS ends this wait. */
        ctx->last_barrier = 1;
        if ((st = weft_barrier(ctx)) != WEFT_OK && first == WEFT_OK)
            first = st;
        failed = st == WEFT_ERR_PEER_FAILED;
    }
    for (int layer = WEFT__NUM_LAYERS - 1; layer >= 0; layer--)
        if (ctx->teardown[layer])
            ctx->teardown[layer](ctx);
    stop_progress_thread(ctx);
    if ((st = weft__profile_finish(ctx->rank)) != WEFT_OK && first == WEFT_OK)
        first = st;
    /* An event the caller still holds is a request in the home worker's
     * memory: the worker (and the UCX context) then stay, reachable from
     * the context's shell, until the process exits, and a weft_wait or
     * weft_test of the event is refused with a message instead of reading
     * freed memory. */
    if (__atomic_load_n(&ctx->events_out, __ATOMIC_ACQUIRE) == 0)
        release_ucx(ctx);
    else
        fprintf(stderr, "weft: rank %d: weft_finalize with %zu events not yet waited for; "
                "waiting for them now returns WEFT_ERR_NOT_INIT\n", ctx->rank,
                __atomic_load_n(&ctx->events_out, __ATOMIC_RELAXED));
    weft__peer_release(ctx);
    free(ctx->addrs);
    free(ctx->addr_off);
    /* A collective left pending would be progressed by MPI_Comm_free or
     * MPI_Finalize and never complete, and Open MPI's MPI_Finalize waits
     * for every rank: after a failure MPI is left as it is (the header
     * says so). */
    if (!ctx->mpi_abandoned && !failed) {
        MPI_Comm_free(&ctx->comm);
        if (ctx->owns_mpi)
            MPI_Finalize();
    }
    ctx->state = WEFT__DEAD;

    pthread_mutex_lock(&shells_lock);
    ctx->next_shell = shells;
    shells = ctx;
    pthread_mutex_unlock(&shells_lock);
    return first;
}

/* Checks shared by the accessors: a live context and an output pointer. */
static weft_status_t accessor(weft_ctx_t ctx, const void *out, const char *fn, const char *name)
{
    weft_status_t st = weft__ctx_check(ctx, fn);

    if (st == WEFT_OK && out == NULL)
        st = weft__error(WEFT_ERR_INVALID_ARG, fn, "%s is NULL", name);
    return st;
}

weft_status_t weft_rank(weft_ctx_t ctx, int *rank)
{
    weft_status_t st = accessor(ctx, rank, __func__, "rank");

    if (st == WEFT_OK)
        *rank = ctx->rank;
    return st;
}

weft_status_t weft_nranks(weft_ctx_t ctx, int *nranks)
{
    weft_status_t st = accessor(ctx, nranks, __func__, "nranks");

    if (st == WEFT_OK)
        *nranks = ctx->nranks;
    return st;
}

weft_status_t weft_ucx_context(weft_ctx_t ctx, ucp_context_h *ucp)
{
    weft_status_t st = accessor(ctx, ucp, __func__, "ucp");

    if (st == WEFT_OK)
        *ucp = ctx->ucp;
    return st;
}
