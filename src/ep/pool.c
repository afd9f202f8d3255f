/* Endpoint pools: per-thread endpoints on UCX workers (and, for "process",
 * UCX contexts) shared as a policy says; the policy parser; what a pool
 * costs.  Pool endpoints are ordinary endpoints of the context's list, so
 * the rma, am and seg layers treat them like the default one. */
#define _GNU_SOURCE /* mallinfo2 */
#include "ep/ep.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define POOL_MAX_THREADS  4096
#define POOL_MAX_EPS      64    /* endpoints per thread */
#define POLICY_MAX_K      4096

struct weft__ep_pool {
    uint32_t                  state;       /* WEFT__ALIVE until destroyed */
    weft_ctx_t                ctx;
    weft_ep_policy_t          policy;
    int                       nthreads, eps_per_thread;
    int                       shared_completion;
    int                       check_owner;
    int                       on_home;     /* "single" beside the progress thread */
    weft_ep_lock_t            lock;
    unsigned                  nucps;       /* "process": a UCX context per thread */
    ucp_context_h            *ucps;
    unsigned                  nworkers;
    struct weft__pool_worker *workers;
    struct weft__ep         **eps;         /* [thread * eps_per_thread + index] */
    char                     *bufs;        /* private source buffers */
    size_t                    buf_bytes, buf_stride;
    size_t                    rss_bytes, heap_bytes;
    struct weft__ep_pool     *next;        /* the context's live pools */
    int                       kept;        /* destroyed, its workers and contexts kept for
                                            * events still outstanding (release) */
};

/* ---- policy names -------------------------------------------------------- */

static weft_status_t bad_policy(const char *s)
{
    return weft__error(WEFT_ERR_INVALID_ARG, "weft_ep_policy_parse",
                       "policy '%.64s' is not one of: process, dedicated-2x, dedicated, "
                       "shared:K, paired, static:K, single (K in 1..%d)", s, POLICY_MAX_K);
}

weft_status_t weft_ep_policy_parse(const char *s, weft_ep_policy_t *out)
{
    static const struct { const char *name; weft_ep_policy_kind_t kind; unsigned k; } fixed[] = {
        {"process", WEFT_EP_PROCESS, 1},     {"dedicated-2x", WEFT_EP_DEDICATED_2X, 1},
        {"dedicated", WEFT_EP_DEDICATED, 1}, {"paired", WEFT_EP_SHARED, 2},
        {"single", WEFT_EP_SINGLE, 1},
    };
    static const struct { const char *prefix; weft_ep_policy_kind_t kind; } with_k[] = {
        {"shared:", WEFT_EP_SHARED}, {"static:", WEFT_EP_STATIC},
    };

    if (s == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, "weft_ep_policy_parse", "policy is NULL");
    if (out == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, "weft_ep_policy_parse", "out is NULL");
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        if (strcmp(s, fixed[i].name) == 0) {
            out->kind = fixed[i].kind;
            out->k = fixed[i].k;
            return WEFT_OK;
        }
    for (size_t i = 0; i < sizeof(with_k) / sizeof(with_k[0]); i++) {
        size_t len = strlen(with_k[i].prefix);
        unsigned long k = 0;
        const char *d;

        if (strncmp(s, with_k[i].prefix, len) != 0)
            continue;
        for (d = s + len; *d >= '0' && *d <= '9' && k <= POLICY_MAX_K; d++)
            k = k * 10 + (unsigned long)(*d - '0');
        if (d == s + len || (*d != '\0' && (*d < '0' || *d > '9')))
            return bad_policy(s);
        if (*d != '\0' || k < 1 || k > POLICY_MAX_K)
            return weft__error(WEFT_ERR_INVALID_ARG, "weft_ep_policy_parse",
                               "policy '%.64s': K must be in 1..%d", s, POLICY_MAX_K);
        out->kind = with_k[i].kind;
        out->k = (unsigned)k;
        return WEFT_OK;
    }
    return bad_policy(s);
}

/* ---- layout: which worker serves endpoint i of thread t ----------------- */

/* Workers per thread group: one when a thread's endpoints share their
 * completion, else one per endpoint. */
static unsigned slots(const struct weft__ep_pool *p)
{
    return p->shared_completion ? 1u : (unsigned)p->eps_per_thread;
}

static unsigned count_workers(const struct weft__ep_pool *p)
{
    unsigned T = (unsigned)p->nthreads, k = p->policy.k, W = slots(p);

    switch (p->policy.kind) {
    case WEFT_EP_PROCESS:
    case WEFT_EP_DEDICATED:    return T * W;
    case WEFT_EP_DEDICATED_2X: return 2 * T * W;
    case WEFT_EP_SHARED:       return (T + k - 1) / k * W;
    case WEFT_EP_STATIC:       return k * W;
    case WEFT_EP_SINGLE:       return p->on_home ? 0 : W;
    }
    return 0;
}

static unsigned worker_of(const struct weft__ep_pool *p, int t, int i)
{
    unsigned W = slots(p), slot = p->shared_completion ? 0u : (unsigned)i, k = p->policy.k;

    switch (p->policy.kind) {
    case WEFT_EP_PROCESS:
    case WEFT_EP_DEDICATED:    return (unsigned)t * W + slot;
    case WEFT_EP_DEDICATED_2X: return 2 * ((unsigned)t * W + slot);  /* the odd ones idle */
    case WEFT_EP_SHARED:       return (unsigned)t / k * W + slot;
    case WEFT_EP_STATIC:       return (unsigned)t % k * W + slot;
    case WEFT_EP_SINGLE:       return slot;
    }
    return 0;
}

/* ---- memory measurement -------------------------------------------------- */

static size_t rss_now(void)
{
    unsigned long size, resident;
    FILE *f = fopen("/proc/self/statm", "r");
    int n;

    if (f == NULL)
        return 0;
    n = fscanf(f, "%lu %lu", &size, &resident);
    fclose(f);
    return n == 2 ? (size_t)resident * (size_t)sysconf(_SC_PAGESIZE) : 0;
}

static size_t heap_now(void)
{
    struct mallinfo2 m = mallinfo2();

    return m.uordblks + m.hblkhd;
}

static size_t growth(size_t before, size_t after)
{
    return after > before ? after - before : 0;
}

/* ---- creation and destruction ------------------------------------------- */

/* Policy "auto": the advice `weft advise endpoints` saved, lines
 * "<threads> <policy>" in $WEFT_EP_ADVICE, else
 * ${XDG_CONFIG_HOME:-~/.config}/weft/endpoints-advice; the line whose
 * thread count is closest to the pool's (the lower one on a tie). */
static weft_status_t auto_policy(int nthreads, char *out, size_t len, const char *fn)
{
    char        path[4096], name[64];
    const char *env = getenv("WEFT_EP_ADVICE"), *xdg = getenv("XDG_CONFIG_HOME");
    const char *home = getenv("HOME");
    long        t, best = -1;
    FILE       *f;

    if (env && *env)
        snprintf(path, sizeof(path), "%s", env);
    else if (xdg && *xdg)
        snprintf(path, sizeof(path), "%s/weft/endpoints-advice", xdg);
    else
        snprintf(path, sizeof(path), "%s/.config/weft/endpoints-advice", home ? home : "");
    if (!(f = fopen(path, "r")))
        return weft__error(WEFT_ERR_CONFIG, fn, "policy 'auto': no saved advice at %s (run `weft "
                           "advise endpoints --threads %d`)", path, nthreads);
    while (fscanf(f, "%ld %63s", &t, name) == 2)
        if (t > 0 && (best < 0 || labs(t - nthreads) < labs(best - nthreads))) {
            best = t;
            snprintf(out, len, "%s", name);
        }
    fclose(f);
    if (best < 0)
        return weft__error(WEFT_ERR_CONFIG, fn, "policy 'auto': %s holds no \"<threads> <policy>\" "
                           "line", path);
    return WEFT_OK;
}

static weft_status_t check_params(weft_ctx_t ctx, const weft_ep_pool_params_t *pp,
                                  weft_ep_policy_t *pol)
{
    const char *fn = "weft_ep_pool_create";
    weft_status_t st;

    if (pp == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "params is NULL");
    if (pp->nthreads < 1 || pp->nthreads > POOL_MAX_THREADS)
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "nthreads %d is outside [1, %d]",
                           pp->nthreads, POOL_MAX_THREADS);
    if (pp->eps_per_thread < 0 || pp->eps_per_thread > POOL_MAX_EPS)
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "eps_per_thread %d is outside [0, %d]",
                           pp->eps_per_thread, POOL_MAX_EPS);
    if (pp->lock != WEFT_EP_LOCK_UCX && pp->lock != WEFT_EP_LOCK_CALLER)
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "lock %d is not WEFT_EP_LOCK_UCX or _CALLER",
                           (int)pp->lock);
    char advised[64];
    const char *name = pp->policy ? pp->policy : "dedicated";
    if (strcmp(name, "auto") == 0) {
        if ((st = auto_policy(pp->nthreads, advised, sizeof(advised), fn)) != WEFT_OK)
            return st;
        name = advised;
    }
    if ((st = weft_ep_policy_parse(name, pol)) != WEFT_OK) {
        char msg[512];
        const char *m = weft_last_error(), *colon = strstr(m, ": ");

        /* the parser's message, under the name of the call the user made */
        snprintf(msg, sizeof(msg), "%s", colon ? colon + 2 : m);
        return weft__error(st, fn, "%s", msg);
    }
    if (ctx->pthread_running && pol->kind != WEFT_EP_SINGLE)
        return weft__error(WEFT_ERR_UNSUPPORTED, fn,
                           "policy '%s' creates workers, which UCX 1.13's TCP transport does not "
                           "survive beside the progress thread; use 'single' or "
                           "WEFT_PROGRESS_THREAD=0", pp->policy ? pp->policy : "dedicated");
    return WEFT_OK;
}

static weft_status_t create_workers(struct weft__ep_pool *p)
{
    const char *fn = "weft_ep_pool_create";
    unsigned per_ctx;
    ucp_params_t up;
    ucp_config_t *config;
    ucs_status_t s;

    if (p->policy.kind == WEFT_EP_PROCESS) {
        p->ucps = calloc((size_t)p->nthreads, sizeof(*p->ucps));
        if (p->ucps == NULL)
            return weft__error(WEFT_ERR_NO_MEMORY, fn, "context table");
        if ((s = weft__ucx_config_read(&config)) != UCS_OK)
            return weft__ucs_error(s, fn, "ucp_config_read");
        weft__ucx_params(p->ctx, &up);
        for (; p->nucps < (unsigned)p->nthreads; p->nucps++)
            if ((s = ucp_init(&up, config, &p->ucps[p->nucps])) != UCS_OK)
                break;
        ucp_config_release(config);
        if (s != UCS_OK)
            return weft__ucs_error(s, fn, "ucp_init");
    }
    p->nworkers = count_workers(p);
    p->workers = calloc(p->nworkers ? p->nworkers : 1, sizeof(*p->workers));
    if (p->workers == NULL)
        return weft__error(WEFT_ERR_NO_MEMORY, fn, "worker table");
    for (int t = 0; t < p->nthreads; t++) {
        unsigned last = (unsigned)-1;

        for (int i = 0; i < p->eps_per_thread && !p->on_home; i++) {
            unsigned w = worker_of(p, t, i);

            /* a thread counts once per worker */
            if (w != last)
                p->workers[w].users++;
            last = w;
        }
    }
    per_ctx = p->nucps ? p->nworkers / p->nucps : 0;
    for (unsigned w = 0; w < p->nworkers; w++) {
        struct weft__pool_worker *pw = &p->workers[w];
        ucp_worker_params_t wp;

        memset(&wp, 0, sizeof(wp));
        wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
        if (pw->users <= 1)
            wp.thread_mode = UCS_THREAD_MODE_SINGLE;
        else if (p->lock == WEFT_EP_LOCK_UCX)
            wp.thread_mode = UCS_THREAD_MODE_MULTI;
        else
            wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;
        pw->caller_lock = pw->users > 1 && p->lock == WEFT_EP_LOCK_CALLER;
        pthread_spin_init(&pw->lock, PTHREAD_PROCESS_PRIVATE);
        s = ucp_worker_create(p->nucps ? p->ucps[w / per_ctx] : p->ctx->ucp, &wp, &pw->worker);
        if (s != UCS_OK)
            return weft__ucs_error(s, fn, "ucp_worker_create");
    }
    return WEFT_OK;
}

/* The workers and UCX contexts of a pool. */
static void release_workers(struct weft__ep_pool *p)
{
    for (unsigned w = 0; p->workers && w < p->nworkers; w++)
        if (p->workers[w].worker) {
            ucp_worker_destroy(p->workers[w].worker);
            pthread_spin_destroy(&p->workers[w].lock);
        }
    for (unsigned c = 0; c < p->nucps; c++)
        ucp_cleanup(p->ucps[c]);
    free(p->ucps);
    free(p->workers);
    p->ucps = NULL;
    p->workers = NULL;
    p->nucps = p->nworkers = 0;
    p->kept = 0;
}

/* Release what create_workers and the endpoints made; endpoints first.  fn
 * names the public call in messages.  An event the caller still holds is
 * a request in its worker's memory, which weft_wait and weft_test read to
 * see that the event is stale: while any event of the context is
 * outstanding, the workers and contexts stay (the pool's shell keeps
 * them), to be released by weft_finalize if every event was waited for by
 * then, else when the process exits, as the home worker is. */
static void release(struct weft__ep_pool *p, const char *fn)
{
    int neps = p->nthreads * p->eps_per_thread;

    for (int e = 0; p->eps && e < neps; e++)
        if (p->eps[e] && p->eps[e]->state == WEFT__ALIVE)
            weft__ep_destroy(p->eps[e], fn);
    if (__atomic_load_n(&p->ctx->events_out, __ATOMIC_ACQUIRE) == 0)
        release_workers(p);
    else
        p->kept = 1;
    free(p->bufs);
    p->bufs = NULL;
    p->state = WEFT__DEAD;
}

static weft_status_t create_eps(struct weft__ep_pool *p)
{
    weft_ctx_t ctx = p->ctx;
    weft_status_t st = WEFT_OK;

    pthread_mutex_lock(&ctx->lock);
    for (int t = 0; t < p->nthreads && st == WEFT_OK; t++)
        for (int i = 0; i < p->eps_per_thread && st == WEFT_OK; i++) {
            struct weft__pool_worker *pw = p->on_home ? NULL : &p->workers[worker_of(p, t, i)];
            struct weft__ep *ep;

            st = weft__ep_create(ctx, pw ? pw->worker : ctx->home, &ep, "weft_ep_pool_create");
            if (st != WEFT_OK)
                break;
            ep->pool = p;
            ep->pw = pw;
            ep->thread = t;
            ep->check_owner = p->check_owner;
            /* UCX runs a thread's completions in whichever thread of the
             * worker progresses; under LOCK_CALLER that thread holds the
             * worker's lock, which every call on the worker takes */
            ep->cb_shared |= pw != NULL && pw->users > 1 && !pw->caller_lock;
            /* Without a progress thread, incoming operations that need
             * this rank (TCP) are served by whichever thread progresses. */
            ep->serves_home = !p->on_home;
            p->eps[t * p->eps_per_thread + i] = ep;
        }
    if (st == WEFT_OK) {
        struct weft__ep_layer *L = weft__ep_layer(ctx);

        p->next = L->pools;
        L->pools = p;
    }
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

weft_status_t weft_ep_pool_create(weft_ctx_t ctx, const weft_ep_pool_params_t *params,
                                  weft_ep_pool_t *out)
{
    struct weft__ep_pool *p;
    weft_ep_policy_t pol;
    size_t rss0, heap0, line;
    weft_status_t st;

    if ((st = weft__ctx_check(ctx, __func__)) != WEFT_OK ||
        (st = check_params(ctx, params, &pol)) != WEFT_OK)
        return st;
    if (out == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "pool is NULL");
    rss0 = rss_now();
    heap0 = heap_now();
    if ((p = calloc(1, sizeof(*p))) == NULL)
        return weft__error(WEFT_ERR_NO_MEMORY, __func__, "pool");
    p->ctx = ctx;
    p->policy = pol;
    p->nthreads = params->nthreads;
    p->eps_per_thread = params->eps_per_thread ? params->eps_per_thread : 1;
    p->shared_completion = params->shared_completion != 0;
    p->check_owner = params->check_owner != 0 || ctx->cfg.check;
    p->lock = params->lock;
    p->on_home = pol.kind == WEFT_EP_SINGLE && ctx->pthread_running;
    p->eps = calloc((size_t)p->nthreads * (size_t)p->eps_per_thread, sizeof(*p->eps));
    if (p->eps == NULL) {
        free(p);
        return weft__error(WEFT_ERR_NO_MEMORY, __func__, "endpoint table");
    }
    if (params->buf_bytes > 0) {
        long l = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);

        line = l > 0 ? (size_t)l : 64;
        p->buf_bytes = params->buf_bytes;
        /* sizes whose padding or total would wrap around size_t cannot
         * be allocated either */
        if (params->buf_bytes <= SIZE_MAX - (line - 1))
            p->buf_stride = (params->buf_bytes + line - 1) / line * line;
        if (p->buf_stride != 0 && p->buf_stride <= SIZE_MAX / (size_t)p->nthreads)
            p->bufs = aligned_alloc(line, p->buf_stride * (size_t)p->nthreads);
        if (p->bufs == NULL) {
            st = weft__error(WEFT_ERR_NO_MEMORY, __func__, "%d private buffers of %zu bytes",
                             p->nthreads, params->buf_bytes);
            goto err_release;
        }
        memset(p->bufs, 0, p->buf_stride * (size_t)p->nthreads);
    }
    if ((st = create_workers(p)) != WEFT_OK || (st = create_eps(p)) != WEFT_OK)
        goto err_release;
    p->rss_bytes = growth(rss0, rss_now());
    p->heap_bytes = growth(heap0, heap_now());
    p->state = WEFT__ALIVE;
    *out = p;
    return WEFT_OK;

err_release:
    pthread_mutex_lock(&ctx->lock);
    release(p, __func__);
    pthread_mutex_unlock(&ctx->lock);
    /* its endpoints were never handed out: no shell of theirs is kept */
    for (size_t e = 0; e < (size_t)p->nthreads * (size_t)p->eps_per_thread; e++)
        free(p->eps[e]);
    free(p->eps);
    free(p);
    return st;
}

static weft_status_t pool_check(weft_ep_pool_t pool, const char *fn)
{
    if (pool == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "pool is NULL");
    if (pool->state != WEFT__ALIVE || pool->ctx->state != WEFT__ALIVE)
        return weft__error(WEFT_ERR_NOT_INIT, fn, "pool was destroyed or its context finalised");
    return WEFT_OK;
}

weft_status_t weft_ep_pool_destroy(weft_ep_pool_t pool)
{
    weft_status_t st = pool_check(pool, __func__), first;
    struct weft__ep_pool **pp;
    int neps;

    if (st != WEFT_OK)
        return st;
    neps = pool->nthreads * pool->eps_per_thread;
    for (int e = 0; e < neps; e++)
        if ((st = weft__ep_flush(pool->eps[e], __func__)) != WEFT_OK)
            break;
    first = st;
    /* After this no peer has an operation that needs our workers.  The
     * waits are agreements rather than weft_barrier, so that an error
     * (WEFT_TIMEOUT_MS, a failed rank) names the call the user made. */
    if ((st = weft__agree(pool->ctx, WEFT_OK, __func__)) != WEFT_OK)
        return st;
    pthread_mutex_lock(&pool->ctx->lock);
    for (pp = &weft__ep_layer(pool->ctx)->pools; *pp != pool; pp = &(*pp)->next)
        ;
    *pp = pool->next;
    release(pool, __func__);
    pool->next = weft__ep_layer(pool->ctx)->dead_pools;
    weft__ep_layer(pool->ctx)->dead_pools = pool;
    pthread_mutex_unlock(&pool->ctx->lock);
    /* With peer error handling a connection closes only when its peer's
     * home worker answers: stay here, serving ours, until every rank's
     * closes are done. */
    if ((st = weft__agree(pool->ctx, WEFT_OK, __func__)) != WEFT_OK && first == WEFT_OK)
        first = st;
    /* The endpoints and the pool stay as dead shells, so stale handles are
     * reported rather than undefined. */
    return first;
}

void weft__pools_teardown(weft_ctx_t ctx)
{
    struct weft__ep_layer *L = weft__ep_layer(ctx);

    /* Endpoints are already destroyed (their shells stay, for stale
     * handles): only workers and contexts remain.  The pools stay as
     * shells too. */
    struct weft__ep_pool *p, *next;

    for (p = L->pools; p; p = next) {
        next = p->next;
        release(p, "weft_finalize");
        p->next = L->dead_pools;
        L->dead_pools = p;
    }
    L->pools = NULL;
    /* pools destroyed earlier whose events have all been waited for since */
    if (__atomic_load_n(&ctx->events_out, __ATOMIC_ACQUIRE) == 0)
        for (p = L->dead_pools; p; p = p->next)
            if (p->kept)
                release_workers(p);
}

/* ---- access --------------------------------------------------------------- */

static weft_status_t get_ep(weft_ep_pool_t pool, int thread, int index, weft_ep_t *out,
                            const char *fn)
{
    weft_status_t st = pool_check(pool, fn);
    struct weft__ep *ep;

    if (st != WEFT_OK)
        return st;
    if (thread < 0 || thread >= pool->nthreads)
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "thread %d is outside [0, %d)", thread,
                           pool->nthreads);
    if (index < 0 || index >= pool->eps_per_thread)
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "index %d is outside [0, %d)", index,
                           pool->eps_per_thread);
    if (out == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "ep is NULL");
    ep = pool->eps[thread * pool->eps_per_thread + index];
    if (ep->check_owner) {
        ep->owner = pthread_self();
        ep->owner_set = 1;
    }
    *out = ep;
    return WEFT_OK;
}

weft_status_t weft_ep_get_nth(weft_ep_pool_t pool, int thread, int index, weft_ep_t *ep)
{
    return get_ep(pool, thread, index, ep, __func__);
}

weft_status_t weft_ep_get(weft_ep_pool_t pool, int thread, weft_ep_t *ep)
{
    return get_ep(pool, thread, 0, ep, __func__);
}

weft_status_t weft_ep_lock(weft_ep_t ep)
{
    weft_status_t st = weft__ep_check(ep, __func__);

    if (st == WEFT_OK && ep->pw && ep->pw->caller_lock) {
        pthread_spin_lock(&ep->pw->lock);
        ep->pw->acquired++;
    }
    return st;
}

weft_status_t weft_ep_unlock(weft_ep_t ep)
{
    weft_status_t st = weft__ep_check(ep, __func__);

    if (st == WEFT_OK && ep->pw && ep->pw->caller_lock)
        pthread_spin_unlock(&ep->pw->lock);
    return st;
}

weft_status_t weft_ep_pool_buffer(weft_ep_pool_t pool, int thread, void **buf, size_t *bytes)
{
    weft_status_t st = pool_check(pool, __func__);

    if (st != WEFT_OK)
        return st;
    if (thread < 0 || thread >= pool->nthreads)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "thread %d is outside [0, %d)", thread,
                           pool->nthreads);
    if (buf == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "buf is NULL");
    if (pool->bufs == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__,
                           "the pool has no private buffers (params.buf_bytes was 0)");
    *buf = pool->bufs + (size_t)thread * pool->buf_stride;
    if (bytes)
        *bytes = pool->buf_bytes;
    return WEFT_OK;
}

weft_status_t weft_ep_pool_resources(weft_ep_pool_t pool, weft_resources_t *res)
{
    weft_status_t st = pool_check(pool, __func__);
    weft_resources_t r;
    int neps;

    if (st != WEFT_OK)
        return st;
    if (res == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "res is NULL");
    memset(&r, 0, sizeof(r));
    neps = pool->nthreads * pool->eps_per_thread;
    r.ucx_contexts = pool->nucps ? pool->nucps : 1;
    r.workers = pool->nworkers;
    r.weft_endpoints = (unsigned)neps;
    pthread_mutex_lock(&pool->ctx->lock);
    for (int e = 0; e < neps; e++)
        for (int rk = 0; rk < pool->eps[e]->nranks; rk++)
            r.endpoints += pool->eps[e]->peers[rk] != NULL;
    pthread_mutex_unlock(&pool->ctx->lock);
    if (pool->on_home) {
        /* every thread on the home worker, which the progress thread locks */
        r.workers_used = 1;
        r.max_threads_per_worker = (unsigned)pool->nthreads;
        r.locked_workers = 1;
        r.locks_per_call = 1;
    }
    for (unsigned w = 0; w < pool->nworkers; w++) {
        const struct weft__pool_worker *pw = &pool->workers[w];

        r.workers_used += pw->users > 0;
        if (pw->users > r.max_threads_per_worker)
            r.max_threads_per_worker = pw->users;
        if (pw->users > 1 && !pw->caller_lock) {
            r.locked_workers++;
            r.locks_per_call = 1;
        }
        r.caller_locks += __atomic_load_n(&pw->acquired, __ATOMIC_RELAXED);
    }
    r.rss_bytes = pool->rss_bytes;
    r.heap_bytes = pool->heap_bytes;
    *res = r;
    return WEFT_OK;
}
