/* Peer failure: which ranks are known dead, how weft learns it (UCX's peer
 * error callback; the pidfd of every rank of this host), and the wait
 * loops' deadline of WEFT_TIMEOUT_MS. */
#define _GNU_SOURCE
#include "runtime.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SCAN_INTERVAL_NS 1000000ull   /* pidfds are polled at most once a ms */
#define STEP_CHECK_MASK  63u          /* clocks are read every 64 steps */
#define STALL_NS         200000000ull /* a gap this long between two clock reads of a
                                       * wait: this rank itself was not running */
#define GRACE_NS         1000000000ull /* ... and the running time it then gets */

/* The calling thread's last clock read in a wait (weft__wait_step). */
static __thread uint64_t last_read_ns;

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void weft__peer_fail(weft_ctx_t ctx, int rank)
{
    int no = 0;

    if (!__atomic_compare_exchange_n(&ctx->peer[rank].failed, &no, 1, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return;
    __atomic_add_fetch(&ctx->fail_gen, 1, __ATOMIC_ACQ_REL);
    /* After the bump: a word added meanwhile either is in the list now or
     * saw fail_gen nonzero when it was added (both under gate_lock). */
    pthread_mutex_lock(&ctx->gate_lock);
    for (struct weft__gate *g = ctx->gates; g != NULL; g = g->next)
        __atomic_fetch_or(g->word, WEFT__GATE_FAILED, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&ctx->gate_lock);
}

void weft__peer_gate(weft_ctx_t ctx, struct weft__gate *g, unsigned *word)
{
    g->word = word;
    pthread_mutex_lock(&ctx->gate_lock);
    g->next = ctx->gates;
    ctx->gates = g;
    if (__atomic_load_n(&ctx->fail_gen, __ATOMIC_ACQUIRE) != 0)
        __atomic_fetch_or(word, WEFT__GATE_FAILED, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&ctx->gate_lock);
}

void weft__peer_ungate(weft_ctx_t ctx, struct weft__gate *g)
{
    pthread_mutex_lock(&ctx->gate_lock);
    for (struct weft__gate **pp = &ctx->gates; *pp != NULL; pp = &(*pp)->next)
        if (*pp == g) {
            *pp = g->next;
            break;
        }
    pthread_mutex_unlock(&ctx->gate_lock);
}

/* UCX calls it, inside a progress call, when a connection to the rank
 * fails; the connection is closed by its endpoint's owner (ep layer). */
static void ucx_peer_error(void *arg, ucp_ep_h uep, ucs_status_t status)
{
    struct weft__peer *p = arg;

    (void)uep;
    (void)status;
    weft__peer_fail(p->ctx, p->rank);
}

/* The names of UCX_TLS that concern UCX's mm component (posix, sysv,
 * xpmem): the component itself, aliases that include it, its transports. */
enum { TLS_ALL = 1, TLS_SM = 2, TLS_MM = 4, TLS_POSIX = 8, TLS_SYSV = 16, TLS_XPMEM = 32 };

/* Which of those names a UCX_TLS list (without its '^') has: each name is
 * what precedes a ',' or a ':' qualifier. */
static unsigned tls_mm_names(const char *list)
{
    static const struct { const char *name; unsigned bit; } names[] = {
        {"all", TLS_ALL},     {"sm", TLS_SM},     {"shm", TLS_SM},      {"mm", TLS_MM},
        {"posix", TLS_POSIX}, {"sysv", TLS_SYSV}, {"xpmem", TLS_XPMEM},
    };
    unsigned found = 0;

    for (const char *p = list; *p != '\0';) {
        size_t len = strcspn(p, ",:");

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
            if (len == strlen(names[i].name) && strncmp(p, names[i].name, len) == 0)
                found |= names[i].bit;
        p += len;
        p += strcspn(p, ",");  /* past a qualifier */
        if (*p == ',')
            p++;
    }
    return found;
}

int weft__ucx_tls_has_mm(const char *tls)
{
    unsigned names;

    if (tls == NULL || *tls == '\0')
        return 1;  /* UCX's default: every transport */
    if (*tls != '^')
        return tls_mm_names(tls) != 0;
    /* a list of exclusions: posix or sysv stays unless the list excludes
     * both (xpmem alone is not counted: Debian's UCX has none) */
    names = tls_mm_names(tls + 1);
    return !(names & (TLS_ALL | TLS_SM | TLS_MM)) &&
           (names & (TLS_POSIX | TLS_SYSV)) != (TLS_POSIX | TLS_SYSV);
}

const char *weft__ucx_env(const char *name)
{
    char        full[64];
    const char *v;

    snprintf(full, sizeof(full), "WEFT_UCX_%s", name);
    if ((v = getenv(full)) != NULL)
        return v;
    snprintf(full, sizeof(full), "UCX_%s", name);
    return getenv(full);
}

ucs_status_t weft__ucx_config_read(ucp_config_t **config)
{
    /* With the prefix "WEFT", UCX reads WEFT_UCX_X over UCX_X: weft's own
     * transports can differ from those of an MPI that runs over UCX too. */
    ucs_status_t s = ucp_config_read("WEFT", NULL, config);
    const char *tls = weft__ucx_env("TLS");

    if (s != UCS_OK)
        return s;
    /* UCX 1.13's System V segments (its sysv transport, and what UCX
     * allocates for a segment with md:sysv first in ALLOC_PRIO) are mode
     * 0660: a user of the owner's group, or another job of the same user,
     * can attach them by id.  Unless the user chose the transports, leave
     * sysv out ("^sysv" is every transport but it) and allocate from posix
     * (0600, unlinked at once, opened by peers through /proc/<pid>/fd),
     * then private memory.  A user who sets [WEFT_]UCX_TLS decides. */
    if (tls == NULL) {
        if ((s = ucp_config_modify(*config, "TLS", "^sysv")) == UCS_OK &&
            weft__ucx_env("ALLOC_PRIO") == NULL)
            s = ucp_config_modify(*config, "ALLOC_PRIO", "md:posix,thp,mmap,heap");
    }
    if (s == UCS_OK && weft__ucx_tls_has_mm(tls) &&
        weft__ucx_env("MM_ERROR_HANDLING") == NULL && weft__ucx_env("POSIX_ERROR_HANDLING") == NULL &&
        weft__ucx_env("SYSV_ERROR_HANDLING") == NULL)
        s = ucp_config_modify(*config, "MM_ERROR_HANDLING", "y");
    if (s != UCS_OK)
        ucp_config_release(*config);
    return s;
}

void weft__peer_ep_params(weft_ctx_t ctx, int rank, ucp_ep_params_t *p)
{
    p->field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
    p->err_mode = UCP_ERR_HANDLING_MODE_PEER;
    p->err_handler.cb = ucx_peer_error;
    p->err_handler.arg = &ctx->peer[rank];
}

/* Poll the pidfds of the live ranks of this host: a pidfd is readable once
 * its process has exited. */
static void scan_pidfds(weft_ctx_t ctx)
{
    struct pollfd fds[64];
    int rank[64], n = 0;

    if (ctx->peer == NULL)   /* weft_init has not made the table yet */
        return;

    for (int r = 0; r <= ctx->nranks; r++) {
        if (r < ctx->nranks && ctx->peer[r].pidfd >= 0 && !weft__peer_failed(ctx, r)) {
            fds[n].fd = ctx->peer[r].pidfd;
            fds[n].events = POLLIN;
            fds[n].revents = 0;
            rank[n++] = r;
        }
        if (n == 64 || (r == ctx->nranks && n > 0)) {
            if (poll(fds, (nfds_t)n, 0) > 0)
                for (int i = 0; i < n; i++)
                    if (fds[i].revents & (POLLIN | POLLHUP | POLLERR))
                        weft__peer_fail(ctx, rank[i]);
            n = 0;
        }
    }
}

static void poll_at(weft_ctx_t ctx, uint64_t now)
{
    uint64_t next = __atomic_load_n(&ctx->next_scan_ns, __ATOMIC_RELAXED);

    if (now >= next && __atomic_compare_exchange_n(&ctx->next_scan_ns, &next,
                                                   now + SCAN_INTERVAL_NS, 0, __ATOMIC_RELAXED,
                                                   __ATOMIC_RELAXED))
        scan_pidfds(ctx);
}

void weft__peer_poll(weft_ctx_t ctx)
{
    poll_at(ctx, now_ns());
}

void weft__wait_init(weft__waiter_t *w, weft_ctx_t ctx)
{
    uint64_t ms = ctx->cfg.timeout_ms, now;

    w->ctx = ctx;
    w->spins = 0;
    w->deadline_ns = 0;
    now = now_ns();
    last_read_ns = now;
    if (ms == 0)
        return;
    /* a deadline past what 64 bits of nanoseconds hold is no deadline (it
     * would wrap around into the past: every wait would end at once) */
    w->deadline_ns = ms > (UINT64_MAX - now) / 1000000ull ? UINT64_MAX : now + ms * 1000000ull;
}

weft_status_t weft__wait_step(weft__waiter_t *w, unsigned progressed, const char *fn)
{
    weft_ctx_t ctx = w->ctx;
    uint64_t now;

    if ((++w->spins & STEP_CHECK_MASK) != 0)
        return WEFT_OK;
    /* Ranks may outnumber cores (tests oversubscribe): after a short idle
     * spin, give the core to whoever we are waiting for. */
    if (progressed == 0)
        sched_yield();
    now = now_ns();
    poll_at(ctx, now);
    /* A deadline that passed while this rank was not running (stopped,
     * or descheduled for long) says nothing about the peer: its answer may
     * be waiting in a socket that this rank could not read, or the peer
     * may not have run either.  The wait gets the shorter of
     * WEFT_TIMEOUT_MS and GRACE_NS more, so a rank that resumes does not
     * declare its live peers failed (nested waits of the thread share the
     * last read, so an inner wait's time is not a gap of the outer one). */
    if (w->deadline_ns != 0 && now >= w->deadline_ns && now - last_read_ns > STALL_NS &&
        last_read_ns < w->deadline_ns) {
        uint64_t grace = ctx->cfg.timeout_ms * 1000000ull;

        w->deadline_ns = now + (grace < GRACE_NS ? grace : GRACE_NS);
    }
    last_read_ns = now;
    if (w->deadline_ns != 0 && now >= w->deadline_ns)
        return weft__error(WEFT_ERR_TIMEOUT, fn, "no completion within WEFT_TIMEOUT_MS=%lu ms",
                           ctx->cfg.timeout_ms);
    return WEFT_OK;
}

/* Which host and process-id namespace this process lives in: pids are
 * comparable only between processes with the same key. */
static uint64_t host_key(void)
{
    char boot[64] = "";
    struct stat ns;
    uint64_t h = 1469598103934665603ull;   /* FNV-1a */
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

    if (f != NULL) {
        if (fgets(boot, sizeof(boot), f) == NULL)
            boot[0] = '\0';
        fclose(f);
    }
    if (boot[0] == '\0' || stat("/proc/self/ns/pid", &ns) != 0)
        return 0;
    for (const char *c = boot; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    h = (h ^ (uint64_t)ns.st_ino) * 1099511628211ull;
    return h ? h : 1;
}

weft_status_t weft__peer_init(weft_ctx_t ctx)
{
    struct { uint64_t key; int64_t pid; } mine, *all;
    weft_status_t st = WEFT_OK;

    ctx->peer = calloc((size_t)ctx->nranks, sizeof(*ctx->peer));
    all = malloc(sizeof(*all) * (size_t)ctx->nranks);
    if (ctx->peer == NULL || all == NULL) {
        free(all);
        return weft__error(WEFT_ERR_NO_MEMORY, "weft_init", "peer table");
    }
    for (int r = 0; r < ctx->nranks; r++) {
        ctx->peer[r].ctx = ctx;
        ctx->peer[r].rank = r;
        ctx->peer[r].pidfd = -1;
    }
    mine.key = host_key();
    mine.pid = (int64_t)getpid();
    if (MPI_Allgather(&mine, (int)sizeof(mine), MPI_BYTE, all, (int)sizeof(mine), MPI_BYTE,
                      ctx->comm) != MPI_SUCCESS) {
        st = weft__error(WEFT_ERR_MPI, "weft_init", "MPI_Allgather of process ids failed");
        goto out;
    }
    /* Without pidfds (kernels before 5.3) ranks of this host are watched by
     * UCX alone. */
    for (int r = 0; r < ctx->nranks; r++)
        if (r != ctx->rank && mine.key != 0 && all[r].key == mine.key)
            ctx->peer[r].pidfd = (int)syscall(SYS_pidfd_open, (pid_t)all[r].pid, 0);
out:
    free(all);
    return st;
}

void weft__peer_release(weft_ctx_t ctx)
{
    for (int r = 0; ctx->peer && r < ctx->nranks; r++)
        if (ctx->peer[r].pidfd >= 0)
            close(ctx->peer[r].pidfd);
    free(ctx->peer);
    ctx->peer = NULL;
}

weft_status_t weft_rank_failed(weft_ctx_t ctx, int rank, int *failed)
{
    weft_status_t st = weft__ctx_check(ctx, __func__);

    if (st != WEFT_OK)
        return st;
    if (failed == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "failed is NULL");
    if (rank < 0 || rank >= ctx->nranks)
        return weft__error(WEFT_ERR_RANK, __func__, "rank %d is outside [0, %d)", rank,
                           ctx->nranks);
    if (!weft__peer_failed(ctx, rank) && ctx->peer[rank].pidfd >= 0)
        scan_pidfds(ctx);
    *failed = weft__peer_failed(ctx, rank);
    return WEFT_OK;
}
