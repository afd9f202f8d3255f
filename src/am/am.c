/* Active messages: registration, sending (eager or rendezvous, chosen by
 * UCX), and delivery, which checks what arrives before a handler sees it.
 *
 * On the wire a message is UCX AM `id` with header [source rank | id |
 * user header] and the payload as data; UCX picks eager or rendezvous by
 * size.  What arrives is checked before use: a header too short or too
 * long, an id outside [0, WEFT_AM_MAX_ID) or without a handler, or a
 * source rank outside the context drops the message, counts it
 * (weft_am_dropped) and, the first time, says why on stderr.
 *
 * The UCX handler of every id is installed when the layer is made, in
 * weft_init, and stays until weft_finalize: registering only publishes (fn, arg), and
 * unregistering clears fn and waits until no other thread runs the
 * handler, so a message that finds no handler is dropped and counted. */
#include "am/am.h"

#include <limits.h>
#include <stddef.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* UCX may read the header after ucp_am_send_nbx returns, so it lives in a
 * per-endpoint buffer until the send completes. */
struct weft__am_slot {
    struct weft__am_slot *next;
    struct weft__ep      *ep;
    int32_t               src;
    char                  hdr[sizeof(int32_t) + WEFT_AM_MAX_HDR];  /* id, user header */
};

struct handler {
    weft_am_handler_t fn;       /* atomic: NULL when unregistered; set after arg;
                                 * a weft_am_replier_t when replier is set */
    void             *arg;
    int               replier;  /* fn takes a token (weft_am_register_replier); set
                                 * with arg */
    unsigned          running;  /* atomic: calls of this entry under way (handle) */
    unsigned          draining; /* unregistering calls waiting for them (ctx->lock) */
};

struct am_layer {
    weft_ctx_t     ctx;
    struct handler h[WEFT_AM_MAX_ID];
    uint64_t       dropped;     /* malformed messages (atomic: handlers may run on two threads) */
    int            installed;   /* UCX's handlers of every id are am_recv (ctx->lock) */
    int            installing;  /* a thread is installing them (ctx->lock) */
    unsigned       pending;     /* atomic: rendezvous payloads being fetched (they point here) */
    unsigned       sending;     /* atomic: this rank's sends whose completion has not run */
    /* replies (weft_am_reply): the home worker's connections to every rank,
     * made by the first weft_am_register_replier (under reply_lock, which
     * no handler takes) before any replier is published */
    pthread_mutex_t reply_lock;
    ucp_ep_h       *reply_eps;
    int             reply_ready; /* atomic: reply_eps complete */
};

/* The token of a message handled by a replier: valid during its call. */
struct weft__am_token {
    struct am_layer *L;
    int32_t          src;
    int              replied;
};

/* A reply in flight: the wire header [source rank | id | user header] and
 * a copy of the payload, freed when UCX is done with them. */
struct reply {
    struct am_layer *L;
    int32_t          src;
    int32_t          id;
    char             hdr[WEFT_AM_MAX_HDR];
    char             payload[];
};
_Static_assert(offsetof(struct reply, hdr) == offsetof(struct reply, src) + WEFT__AM_WIRE_HDR,
               "a reply's wire header is contiguous");

/* The layer whose handler this thread is running, if any.  Initial-exec:
 * read and written on every message, so without the call a shared
 * library's TLS otherwise costs (__tls_get_addr); one pointer fits the
 * static TLS that the C library keeps for libraries loaded later. */
static __thread const struct am_layer *in_handler __attribute__((tls_model("initial-exec")));

/* A rendezvous message whose payload is still arriving. */
struct pending {
    struct am_layer *L;
    int              id;
    int32_t          src;
    size_t           hdr_len;
    char             hdr[WEFT_AM_MAX_HDR];
    char             payload[];
};
_Static_assert(offsetof(struct reply, hdr) == offsetof(struct reply, src) + WEFT__AM_WIRE_HDR,
               "a reply's wire header is contiguous");

/* Count a malformed message and, for the first one, say why. */
static ucs_status_t drop(struct am_layer *L, const char *what, long long value)
{
    if (__atomic_fetch_add(&L->dropped, 1, __ATOMIC_RELAXED) == 0)
        fprintf(stderr, "weft: rank %d: dropped a malformed active message (%s %lld); "
                "weft_am_dropped counts them\n", L->ctx->rank, what, value);
    return UCS_OK;
}

/* Run id's handler on a message, or drop it when none is registered.  The
 * call is counted before fn is read, and weft_am_register clears fn before
 * it reads the count (both sequentially consistent): either it waits for
 * this call, or this call finds fn NULL.  arg was written before fn and
 * cannot change until the count falls back. */
static void handle(struct am_layer *L, int id, int32_t src, const void *hdr, size_t hdr_len,
                   const void *payload, size_t len)
{
    struct handler *h = &L->h[id];
    const struct am_layer *outer = in_handler;
    weft_am_handler_t fn;

    __atomic_fetch_add(&h->running, 1, __ATOMIC_SEQ_CST);
    fn = __atomic_load_n(&h->fn, __ATOMIC_SEQ_CST);
    if (fn != NULL && h->replier) {
        struct weft__am_token token = {.L = L, .src = src};

        in_handler = L;
        ((weft_am_replier_t)(void (*)(void))fn)(&token, hdr, hdr_len, payload, len, h->arg);
        in_handler = outer;
    } else if (fn != NULL) {
        in_handler = L;
        fn(L->ctx, src, hdr, hdr_len, payload, len, h->arg);
        in_handler = outer;
    } else {
        drop(L, "unregistered id", id);
    }
    __atomic_fetch_sub(&h->running, 1, __ATOMIC_RELEASE);
}

static void rndv_done(void *request, ucs_status_t status, size_t length, void *user_data)
{
    struct pending *p = user_data;
    struct am_layer *L = p->L;

    if (status == UCS_OK)
        handle(L, p->id, p->src, p->hdr, p->hdr_len, p->payload, length);
    if (request)
        ucp_request_free(request);
    free(p);
    __atomic_fetch_sub(&L->pending, 1, __ATOMIC_RELEASE);
}

const char *weft__am_parse(const void *header, size_t header_length, const void *data,
                           size_t length, int rndv, int nranks, struct weft__am_msg *msg,
                           long long *value)
{
    int32_t src, id;

    *value = (long long)(header_length > LLONG_MAX ? LLONG_MAX : header_length);
    if (header == NULL || header_length < WEFT__AM_WIRE_HDR ||
        header_length > WEFT__AM_WIRE_HDR + WEFT_AM_MAX_HDR)
        return "header length";
    memcpy(&src, header, sizeof(src));
    memcpy(&id, (const char *)header + sizeof(src), sizeof(id));
    *value = id;
    if (id < 0 || id >= WEFT_AM_MAX_ID)
        return "id";
    *value = src;
    if (src < 0 || src >= nranks)
        return "source rank";
    *value = (long long)(length > LLONG_MAX ? LLONG_MAX : length);
    if (data == NULL && length > 0 && !rndv)
        return "no data for a payload length";
    /* a rendezvous payload is fetched into memory of its size (am_recv) */
    if (rndv && length > WEFT_AM_MAX_PAYLOAD)
        return "payload length";
    msg->src = src;
    msg->id = id;
    msg->hdr = (const char *)header + WEFT__AM_WIRE_HDR;
    msg->hdr_len = header_length - WEFT__AM_WIRE_HDR;
    return NULL;
}

static ucs_status_t am_recv(void *arg, const void *header, size_t header_length, void *data,
                            size_t length, const ucp_am_recv_param_t *param)
{
    struct am_layer *L = arg;
    struct weft__am_msg m;
    const char *bad;
    long long value;
    int32_t src;
    int id;
    size_t hlen;
    WEFT_PROF_BEGIN(rx, WEFT__PROF_HLP_RX_PROG);

    if ((bad = weft__am_parse(header, header_length, data, length,
                              (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0,
                              L->ctx->nranks, &m, &value)) != NULL)
        return drop(L, bad, value);
    src = m.src;
    id = m.id;
    hlen = m.hdr_len;
    header = m.hdr;

    if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
        ucp_request_param_t rp;
        ucs_status_ptr_t sp;
        struct pending *p;

        /* no payload is fetched for an unregistered id (handle looks
         * again once it is here) */
        if (__atomic_load_n(&L->h[id].fn, __ATOMIC_RELAXED) == NULL)
            return drop(L, "unregistered id", id);
        p = length > SIZE_MAX - sizeof(*p) ? NULL : malloc(sizeof(*p) + length);
        if (p == NULL)
            return drop(L, "no memory for a payload length", (long long)length);
        p->L = L;
        p->id = id;
        p->src = src;
        p->hdr_len = hlen;
        memcpy(p->hdr, header, hlen);
        rp.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
        rp.cb.recv_am = rndv_done;
        rp.user_data = p;
        __atomic_fetch_add(&L->pending, 1, __ATOMIC_RELAXED);
        sp = ucp_am_recv_data_nbx(L->ctx->home, data, p->payload, length, &rp);
        if (sp == NULL) {
            rndv_done(NULL, UCS_OK, length, p);
        } else if (UCS_PTR_IS_ERR(sp)) {
            free(p);
            __atomic_fetch_sub(&L->pending, 1, __ATOMIC_RELAXED);
        }
        return UCS_OK;
    }
    handle(L, id, src, header, hlen, data, length);
    WEFT_PROF_END(rx, WEFT__PROF_HLP_RX_PROG);
    return UCS_OK;
}

/* The free list is touched by the sender and by whoever completes its sends:
 * the progress thread, or another thread of a worker that UCX locks for
 * several threads (cb_shared), and then it needs the lock. */
static void slots_lock(struct weft__ep *ep)
{
    if (WEFT__UNLIKELY(ep->cb_shared))
        pthread_mutex_lock(&ep->am_lock);
}

static void slots_unlock(struct weft__ep *ep)
{
    if (WEFT__UNLIKELY(ep->cb_shared))
        pthread_mutex_unlock(&ep->am_lock);
}

static void send_done(void *request, ucs_status_t status, void *user_data)
{
    struct weft__am_slot *slot = user_data;
    struct weft__ep *ep = slot->ep;
    WEFT_PROF_BEGIN(tx, WEFT__PROF_HLP_TX_PROG);

    (void)status;
    slots_lock(ep);
    slot->next = ep->am_slots;
    ep->am_slots = slot;
    slots_unlock(ep);
    /* UCX's call (a request): a send counted by am_send is over */
    if (request != NULL)
        __atomic_fetch_sub(&((struct am_layer *)ep->ctx->layer[WEFT__LAYER_AM])->sending, 1,
                           __ATOMIC_RELEASE);
    WEFT_PROF_END(tx, WEFT__PROF_HLP_TX_PROG);
}

/* Install (on) or remove am_recv as UCX's handler of id on the home worker. */
static weft_status_t set_ucx_handler(struct am_layer *L, int id, int on)
{
    ucp_am_handler_param_t hp;
    ucs_status_t s;

    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                    UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    hp.id = (unsigned)id;
    hp.cb = on ? am_recv : NULL;
    hp.arg = L;
    hp.flags = UCP_AM_FLAG_WHOLE_MSG;
    s = ucp_worker_set_am_recv_handler(L->ctx->home, &hp);
    return s == UCS_OK ? WEFT_OK : weft__ucs_error(s, "weft_am_register", "ucp_worker_set_am_recv_handler");
}

/* At weft_finalize, before the final barrier: this rank's sends complete,
 * even those whose events the caller never waited for.  A rendezvous
 * payload is fetched by its target, which runs its own teardown only after
 * the barrier and waits there for the payloads it is still fetching: were
 * the sender to reach the barrier first and leave, that target would wait
 * for good.  Sends to failed ranks end with an error once their
 * connections are dropped (weft__ep_progress), and WEFT_TIMEOUT_MS bounds
 * the rest. */
static weft_status_t quiesce(weft_ctx_t ctx)
{
    struct am_layer *L = ctx->layer[WEFT__LAYER_AM];
    struct weft__ep_layer *EL = weft__ep_layer(ctx);
    weft__waiter_t w;
    weft_status_t st = WEFT_OK;
    unsigned n;

    weft__wait_init(&w, ctx);
    while (st == WEFT_OK && __atomic_load_n(&L->sending, __ATOMIC_ACQUIRE) != 0) {
        n = 0;
        for (struct weft__ep *ep = EL ? EL->eps : NULL; ep; ep = ep->next)
            n += weft__ep_progress(ep);
        /* replies go out on the home worker, which may have no endpoint */
        weft__ctx_progress_home(ctx);
        st = weft__wait_step(&w, n, "weft_finalize");
    }
    return st;
}

/* Close the reply connections (every send on them is complete: quiesce).
 * A failed rank's is closed by force, as the endpoints' are. */
static void close_reply_eps(weft_ctx_t ctx, struct am_layer *L)
{
    for (int r = 0; L->reply_eps && r < ctx->nranks; r++) {
        ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                                 .flags = weft__peer_failed(ctx, r) ? UCP_EP_CLOSE_FLAG_FORCE : 0};
        ucs_status_ptr_t req;
        weft__waiter_t w;

        if (L->reply_eps[r] == NULL)
            continue;
        req = ucp_ep_close_nbx(L->reply_eps[r], &p);
        if (req == NULL || UCS_PTR_IS_ERR(req))
            continue;
        weft__wait_init(&w, ctx);
        while (ucp_request_check_status(req) == UCS_INPROGRESS &&
               weft__wait_step(&w, ucp_worker_progress(ctx->home), "weft_finalize") == WEFT_OK)
            ;
        ucp_request_free(req);
    }
    free(L->reply_eps);
    L->reply_eps = NULL;
}

/* At weft_finalize, after the final barrier (or without it, after a
 * failure). */
static void teardown(weft_ctx_t ctx)
{
    struct am_layer *L = ctx->layer[WEFT__LAYER_AM];
    struct weft__ep_layer *EL = weft__ep_layer(ctx);
    weft__waiter_t w;
    unsigned n;

    /* The peers completed their sends before the barrier, but what UCX
     * counts as complete may still wait in the home worker's queues here
     * (an eager message, the last word of a rendezvous): handle it all
     * first.  A fetch from a rank that failed may never end, and then L
     * is left to it (below). */
    weft__wait_init(&w, ctx);
    do
        n = ucp_worker_progress(ctx->home);
    while ((n != 0 || (__atomic_load_n(&L->pending, __ATOMIC_ACQUIRE) != 0 &&
                       weft__fail_gen(ctx) == 0)) &&
           weft__wait_step(&w, n, "weft_finalize") == WEFT_OK);
    for (int id = 0; id < WEFT_AM_MAX_ID; id++)
        set_ucx_handler(L, id, 0);
    close_reply_eps(ctx, L);
    for (struct weft__ep *ep = EL ? EL->eps : NULL; ep; ep = ep->next) {
        while (ep->am_slots) {
            struct weft__am_slot *s = ep->am_slots;
            ep->am_slots = s->next;
            free(s);
        }
    }
    ctx->layer[WEFT__LAYER_AM] = NULL;
    /* no message reaches am_recv any more, so pending only falls */
    if (__atomic_load_n(&L->pending, __ATOMIC_ACQUIRE) == 0)
        free(L);
}

/* The layer, made on first use, with UCX's handlers of every id (from the
 * highest, so that UCX sizes its table once; a failure is retried by the
 * next call).  Caller holds ctx->lock, which this releases while it calls
 * UCX: UCX holds the worker's lock while handlers run, and a handler may
 * take ctx->lock. */
static struct am_layer *layer(weft_ctx_t ctx, weft_status_t *st)
{
    struct am_layer *L = weft__ctx_layer(ctx, WEFT__LAYER_AM, sizeof(*L), quiesce, teardown,
                                         "weft_am_register");

    *st = L == NULL ? WEFT_ERR_NO_MEMORY : WEFT_OK;
    if (L != NULL && L->ctx == NULL)
        L->ctx = ctx;
    while (L != NULL && !L->installed) {
        int installing = L->installing;

        L->installing = 1;
        pthread_mutex_unlock(&ctx->lock);
        if (installing)
            sched_yield();  /* another thread installs them */
        for (int id = WEFT_AM_MAX_ID - 1; !installing && id >= 0 && *st == WEFT_OK; id--)
            *st = set_ucx_handler(L, id, 1);
        pthread_mutex_lock(&ctx->lock);
        if (installing)
            continue;
        L->installing = 0;
        L->installed = *st == WEFT_OK;
        if (*st != WEFT_OK)
            return NULL;
    }
    return L;
}

/* Every context gets its layer, and so UCX's receive handlers, in
 * weft_init: a peer may send to this rank before it registers anything,
 * and UCX 1.13 crashes on a rendezvous message to an id without a UCX
 * handler (in ucp_am_handler) where weft.h promises a count. */
static weft_status_t ctx_init(weft_ctx_t ctx)
{
    weft_status_t st;

    struct am_layer *L;

    pthread_mutex_lock(&ctx->lock);
    if ((L = layer(ctx, &st)) != NULL && L->reply_eps == NULL)
        pthread_mutex_init(&L->reply_lock, NULL);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

__attribute__((constructor)) static void register_ctx_init(void)
{
    weft__ctx_on_init(WEFT__LAYER_AM, ctx_init);
}

/* The body of weft_am_register and weft_am_register_replier (replier:
 * handler is a weft_am_replier_t); fn names the call. */
static weft_status_t register_handler(weft_ctx_t ctx, int id, weft_am_handler_t handler,
                                      void *arg, int replier, const char *fn)
{
    struct am_layer *L;
    struct handler *h;
    weft_status_t st;

    if ((st = weft__ctx_check(ctx, fn)) != WEFT_OK)
        return st;
    if (id < 0 || id >= WEFT_AM_MAX_ID)
        return weft__error(WEFT_ERR_AM_ID, fn, "id %d is outside [0, %d)", id, WEFT_AM_MAX_ID);
    pthread_mutex_lock(&ctx->lock);
    if ((L = layer(ctx, &st)) == NULL) {
        pthread_mutex_unlock(&ctx->lock);
        return st;
    }
    h = &L->h[id];
    if (handler != NULL) {
        if (h->fn != NULL || h->draining) {
            st = weft__error(WEFT_ERR_BUSY, fn, "id %d %s", id,
                             h->fn != NULL ? "already has a handler"
                                           : "is being unregistered by another thread");
        } else {
            h->arg = arg;
            h->replier = replier;
            __atomic_store_n(&h->fn, handler, __ATOMIC_SEQ_CST);
        }
        pthread_mutex_unlock(&ctx->lock);
        return st;
    }
    __atomic_store_n(&h->fn, NULL, __ATOMIC_SEQ_CST);
    h->draining++;
    pthread_mutex_unlock(&ctx->lock);
    /* Wait, without the lock (a handler may take it), for the calls that
     * found the handler.  Inside a handler of this context, this thread
     * holds the home worker, so no other thread runs one. */
    if (in_handler != L)
        while (__atomic_load_n(&h->running, __ATOMIC_SEQ_CST) != 0)
            sched_yield();
    pthread_mutex_lock(&ctx->lock);
    h->draining--;
    pthread_mutex_unlock(&ctx->lock);
    return WEFT_OK;
}

weft_status_t weft_am_register(weft_ctx_t ctx, int id, weft_am_handler_t handler, void *arg)
{
    return register_handler(ctx, id, handler, arg, 0, __func__);
}

/* Connect the home worker to every rank, once, for the replies.  Outside
 * ctx->lock: UCX holds the worker's lock while handlers run, and a
 * handler may take ctx->lock. */
static weft_status_t connect_replies(weft_ctx_t ctx, struct am_layer *L, const char *fn)
{
    weft_status_t st = WEFT_OK;
    ucp_ep_h *eps;

    if (__atomic_load_n(&L->reply_ready, __ATOMIC_ACQUIRE))
        return WEFT_OK;
    pthread_mutex_lock(&L->reply_lock);
    /* Without the progress thread, threads of endpoint pools may be
     * progressing the home worker (one at a time, weft__ctx_progress_home):
     * take it from them while connecting on it, unless this thread is
     * running a handler and so holds it already. */
    if (!ctx->pthread_running && in_handler != L)
        while (__atomic_exchange_n(&ctx->home_busy, 1, __ATOMIC_ACQUIRE))
            sched_yield();
    if (!L->reply_ready) {
        /* after a failed attempt, the connections it made are kept */
        eps = L->reply_eps ? L->reply_eps : calloc((size_t)ctx->nranks, sizeof(*eps));
        if (eps == NULL)
            st = weft__error(WEFT_ERR_NO_MEMORY, fn, "reply connections");
        for (int r = 0; eps && r < ctx->nranks && st == WEFT_OK; r++) {
            ucp_ep_params_t p;
            ucs_status_t s;

            /* a failed rank gets no connection: a reply to it is refused */
            if (eps[r] != NULL || weft__peer_failed(ctx, r))
                continue;
            memset(&p, 0, sizeof(p));
            p.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
            p.address = (const ucp_address_t *)(ctx->addrs + ctx->addr_off[r]);
            weft__peer_ep_params(ctx, r, &p);
            if ((s = ucp_ep_create(ctx->home, &p, &eps[r])) != UCS_OK)
                st = weft__ucs_error(s, fn, "connecting to a peer for replies (ucp_ep_create)");
        }
        /* connections made by a failed attempt are closed at finalize */
        L->reply_eps = eps;
        if (st == WEFT_OK)
            __atomic_store_n(&L->reply_ready, 1, __ATOMIC_RELEASE);
    }
    if (!ctx->pthread_running && in_handler != L)
        __atomic_store_n(&ctx->home_busy, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&L->reply_lock);
    return st;
}

weft_status_t weft_am_register_replier(weft_ctx_t ctx, int id, weft_am_replier_t handler,
                                       void *arg)
{
    struct am_layer *L;
    weft_status_t st;

    if ((st = weft__ctx_check(ctx, __func__)) != WEFT_OK)
        return st;
    if (handler == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "handler is NULL (unregister with "
                           "weft_am_register(ctx, id, NULL, NULL))");
    if (id < 0 || id >= WEFT_AM_MAX_ID)
        return weft__error(WEFT_ERR_AM_ID, __func__, "id %d is outside [0, %d)", id,
                           WEFT_AM_MAX_ID);
    pthread_mutex_lock(&ctx->lock);
    L = layer(ctx, &st);
    pthread_mutex_unlock(&ctx->lock);
    if (L == NULL)
        return st;
    if ((st = connect_replies(ctx, L, __func__)) != WEFT_OK)
        return st;
    return register_handler(ctx, id, (weft_am_handler_t)(void (*)(void))handler, arg, 1,
                            __func__);
}

weft_status_t weft_am_token_info(weft_am_token_t token, weft_ctx_t *ctx, int *src_rank)
{
    if (token == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "token is NULL");
    if (ctx)
        *ctx = token->L->ctx;
    if (src_rank)
        *src_rank = token->src;
    return WEFT_OK;
}

static void reply_done(void *request, ucs_status_t status, void *user_data)
{
    struct reply *r = user_data;
    struct am_layer *L = r->L;

    (void)status;
    free(r);
    ucp_request_free(request);
    __atomic_fetch_sub(&L->sending, 1, __ATOMIC_RELEASE);
}

weft_status_t weft_am_reply(weft_am_token_t token, int id, const void *hdr, size_t hdr_len,
                            const void *payload, size_t len)
{
    struct am_layer *L;
    struct reply *r;
    ucp_request_param_t p;
    ucs_status_ptr_t sp;
    weft_ctx_t ctx;

    if (token == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "token is NULL");
    L = token->L;
    ctx = L->ctx;
    if (token->replied)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "this message was already replied "
                           "to (one reply per token)");
    if (id < 0 || id >= WEFT_AM_MAX_ID || __atomic_load_n(&L->h[id].fn, __ATOMIC_RELAXED) == NULL)
        return weft__error(WEFT_ERR_AM_ID, __func__, "id %d has no handler registered", id);
    if (hdr_len > WEFT_AM_MAX_HDR)
        return weft__error(WEFT_ERR_TOO_LARGE, __func__, "header of %zu bytes exceeds %d",
                           hdr_len, WEFT_AM_MAX_HDR);
    if (len > WEFT_AM_MAX_REPLY)
        return weft__error(WEFT_ERR_TOO_LARGE, __func__, "reply payload of %zu bytes exceeds "
                           "WEFT_AM_MAX_REPLY (%d)", len, WEFT_AM_MAX_REPLY);
    if ((hdr == NULL && hdr_len > 0) || (payload == NULL && len > 0))
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "%s is NULL",
                           hdr == NULL && hdr_len > 0 ? "hdr" : "payload");
    if (weft__peer_failed(ctx, token->src) || L->reply_eps[token->src] == NULL)
        return weft__error(WEFT_ERR_PEER_FAILED, __func__, "rank %d has failed", token->src);
    if ((r = malloc(sizeof(*r) + len)) == NULL)
        return weft__error(WEFT_ERR_NO_MEMORY, __func__, "a copy of the reply (%zu bytes)", len);
    r->L = L;
    r->src = ctx->rank;
    r->id = id;
    if (hdr_len)
        memcpy(r->hdr, hdr, hdr_len);
    if (len)
        memcpy(r->payload, payload, len);
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.send = reply_done;
    p.user_data = r;
    /* the handler runs on the thread that progresses the home worker,
     * which the reply connections belong to */
    /* counted before it is sent: another thread may complete it at once */
    __atomic_fetch_add(&L->sending, 1, __ATOMIC_RELAXED);
    sp = ucp_am_send_nbx(L->reply_eps[token->src], (unsigned)id, &r->src,
                         WEFT__AM_WIRE_HDR + hdr_len, r->payload, len, &p);
    if (sp == NULL || UCS_PTR_IS_ERR(sp)) {
        free(r);
        __atomic_fetch_sub(&L->sending, 1, __ATOMIC_RELEASE);
    }
    if (UCS_PTR_IS_ERR(sp))
        return weft__ucs_error(UCS_PTR_STATUS(sp), __func__, "ucp_am_send_nbx");
    token->replied = 1;
    return WEFT_OK;
}

weft_status_t weft_am_dropped(weft_ctx_t ctx, uint64_t *dropped)
{
    struct am_layer *L;
    weft_status_t st;

    if ((st = weft__ctx_check(ctx, __func__)) != WEFT_OK)
        return st;
    if (dropped == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "dropped is NULL");
    L = ctx->layer[WEFT__LAYER_AM];
    *dropped = L ? __atomic_load_n(&L->dropped, __ATOMIC_RELAXED) : 0;
    return WEFT_OK;
}

/* The body of weft_am_send_nb and weft_am_send; fn names the call made. */
static weft_status_t am_send(weft_ep_t ep, int rank, int id, const void *hdr, size_t hdr_len,
                             const void *payload, size_t len, weft_event_t *ev, const char *fn)
{
    struct am_layer *L;
    struct weft__am_slot *slot;
    ucp_request_param_t p;
    ucs_status_ptr_t sp;
    weft_status_t st;
    WEFT_PROF_BEGIN(hlp, WEFT__PROF_HLP_POST);

    if ((st = weft__ep_check(ep, fn)) != WEFT_OK ||
        (ep->check && (st = weft__ep_check_caller(ep, fn)) != WEFT_OK))
        return st;
    if (ev == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "event pointer is NULL");
    if (rank < 0 || rank >= ep->nranks)
        return weft__error(WEFT_ERR_RANK, fn, "rank %d is outside [0, %d)", rank, ep->nranks);
    L = ep->ctx->layer[WEFT__LAYER_AM];
    if (id < 0 || id >= WEFT_AM_MAX_ID || L == NULL ||
        __atomic_load_n(&L->h[id].fn, __ATOMIC_RELAXED) == NULL)
        return weft__error(WEFT_ERR_AM_ID, fn, "id %d has no handler registered", id);
    if (hdr_len > WEFT_AM_MAX_HDR)
        return weft__error(WEFT_ERR_TOO_LARGE, fn, "header of %zu bytes exceeds %d", hdr_len,
                           WEFT_AM_MAX_HDR);
    if ((hdr == NULL && hdr_len > 0) || (payload == NULL && len > 0))
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "%s is NULL",
                           hdr == NULL && hdr_len > 0 ? "hdr" : "payload");
    /* UCX takes any length and reads past the buffer (the sender faults) or
     * announces a size the receiver cannot hold (UCX asserts there): no
     * object is larger than WEFT_AM_MAX_PAYLOAD, and none wraps around the
     * address space. */
    if (len > WEFT_AM_MAX_PAYLOAD)
        return weft__error(WEFT_ERR_TOO_LARGE, fn, "payload of %zu bytes exceeds "
                           "WEFT_AM_MAX_PAYLOAD (%zu)", len, (size_t)WEFT_AM_MAX_PAYLOAD);
    if (len > 0 && (uintptr_t)payload > UINTPTR_MAX - (len - 1))
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "payload of %zu bytes at %p runs past the "
                           "end of the address space", len, payload);
    if (WEFT__UNLIKELY(weft__peer_failed(ep->ctx, rank))) {
        weft__ep_sync_failed(ep);
        return weft__error(WEFT_ERR_PEER_FAILED, fn, "rank %d has failed", rank);
    }
    if (ep->peers[rank] == NULL && (st = weft__ep_connect(ep, rank, fn)) != WEFT_OK)
        return st;

    slots_lock(ep);
    slot = ep->am_slots;
    if (slot != NULL)
        ep->am_slots = slot->next;
    slots_unlock(ep);
    if (slot == NULL && (slot = malloc(sizeof(*slot))) == NULL) {
        return weft__error(WEFT_ERR_NO_MEMORY, fn, "header buffer");
    }
    slot->ep = ep;
    slot->src = ep->ctx->rank;
    /* the id travels in the header too, so one receive path serves all */
    memcpy(slot->hdr, &id, sizeof(id));
    if (hdr_len)
        memcpy(slot->hdr + sizeof(id), hdr, hdr_len);

    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.send = send_done;
    p.user_data = slot;
    WEFT_PROF_END(hlp, WEFT__PROF_HLP_POST);
    WEFT_PROF_BEGIN(llp, WEFT__PROF_LLP_POST);
    sp = ucp_am_send_nbx(ep->peers[rank], (unsigned)id, &slot->src,
                         sizeof(slot->src) + sizeof(id) + hdr_len, payload, len, &p);
    WEFT_PROF_END(llp, WEFT__PROF_LLP_POST);
    WEFT_PROF_BEGIN(tail, WEFT__PROF_HLP_POST_TAIL);
    if (sp == NULL || UCS_PTR_IS_ERR(sp))
        send_done(NULL, UCS_OK, slot);
    if (sp == NULL) {
        *ev = WEFT_EVENT_NULL;
        st = WEFT_OK;
    } else if (UCS_PTR_IS_ERR(sp)) {
        weft__ep_sync_failed(ep);
        st = weft__ucs_error(UCS_PTR_STATUS(sp), fn, "ucp_am_send_nbx");
    } else {
        ((weft__req_t *)sp)->ep = ep;
        __atomic_fetch_add(&L->sending, 1, __ATOMIC_RELAXED);
        *ev = sp;
        st = WEFT_OK;
    }
    WEFT_PROF_END(tail, WEFT__PROF_HLP_POST_TAIL);
    return st;
}

weft_status_t weft_am_send_nb(weft_ep_t ep, int rank, int id, const void *hdr, size_t hdr_len,
                              const void *payload, size_t len, weft_event_t *ev)
{
    weft_status_t st = am_send(ep, rank, id, hdr, hdr_len, payload, len, ev, __func__);

    if (st == WEFT_OK && *ev != WEFT_EVENT_NULL)
        weft__event_made(ep->ctx);
    return st;
}

weft_status_t weft_am_send(weft_ep_t ep, int rank, int id, const void *hdr, size_t hdr_len,
                           const void *payload, size_t len)
{
    weft_event_t ev;
    weft_status_t st = am_send(ep, rank, id, hdr, hdr_len, payload, len, &ev, __func__);

    /* a blocking operation: past WEFT_TIMEOUT_MS its target is declared
     * failed, which completes the send (weft.h), rather than the request
     * being left outstanding with no event to wait for it again */
    return st != WEFT_OK ? st : weft__ep_wait_req(ep, ev, rank, __func__, "ucp_am_send_nbx");
}
