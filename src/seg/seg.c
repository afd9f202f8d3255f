/* Symmetric segments: collective allocation, UCX registration, key exchange. */
#include "seg/seg.h"

#include <stdlib.h>
#include <string.h>

struct seg_layer {
    struct weft__seg *segs;     /* live and freed (kept as shells) */
    unsigned          next_id;
};

static void release_keys(weft_ctx_t ctx, struct weft__seg *seg)
{
    struct weft__ep_layer *L = weft__ep_layer(ctx);

    for (struct weft__ep *ep = L ? L->eps : NULL; ep; ep = ep->next) {
        if (seg->id >= ep->ntgts || ep->tgts[seg->id] == NULL)
            continue;
        for (int r = 0; r < ep->nranks; r++)
            if (ep->tgts[seg->id][r].rkey)
                ucp_rkey_destroy(ep->tgts[seg->id][r].rkey);
        free(ep->tgts[seg->id]);
        ep->tgts[seg->id] = NULL;
    }
}

static void release_seg(weft_ctx_t ctx, struct weft__seg *seg)
{
    release_keys(ctx, seg);
    ucp_mem_unmap(ctx->ucp, seg->memh);
    free(seg->bases);
    free(seg->keys);
    free(seg->key_off);
    seg->bases = NULL;
    seg->keys = NULL;
    seg->key_off = NULL;
    seg->state = WEFT__DEAD;
    seg->live_ctx = NULL;
}

static void teardown(weft_ctx_t ctx)
{
    struct seg_layer *L = ctx->layer[WEFT__LAYER_SEG];

    for (struct weft__seg *seg = L->segs; seg; seg = seg->next)
        if (seg->state == WEFT__ALIVE)
            release_seg(ctx, seg);
}

weft_status_t weft__seg_unpack_rkey(weft_ep_t ep, weft_seg_t seg, int rank, const char *fn)
{
    ucs_status_t s;

    struct weft__tgt *t;

    if (seg->id >= ep->ntgts) {
        unsigned n = seg->id + 8;
        struct weft__tgt **tab = realloc(ep->tgts, n * sizeof(*tab));
        if (tab == NULL)
            return weft__error(WEFT_ERR_NO_MEMORY, fn, "target table");
        memset(tab + ep->ntgts, 0, (n - ep->ntgts) * sizeof(*tab));
        ep->tgts = tab;
        ep->ntgts = n;
    }
    if (ep->tgts[seg->id] == NULL) {
        ep->tgts[seg->id] = calloc((size_t)ep->nranks, sizeof(struct weft__tgt));
        if (ep->tgts[seg->id] == NULL)
            return weft__error(WEFT_ERR_NO_MEMORY, fn, "target table");
    }
    t = &ep->tgts[seg->id][rank];
    s = ucp_ep_rkey_unpack(ep->peers[rank], seg->keys + seg->key_off[rank], &t->rkey);
    if (s != UCS_OK)
        return weft__ucs_error(s, fn, "ucp_ep_rkey_unpack");
    t->ep = ep->peers[rank];
    t->base = seg->bases[rank];
    return WEFT_OK;
}

/* Map and register this rank's part; local only. */
static weft_status_t map_local(weft_ctx_t ctx, struct weft__seg *seg)
{
    ucp_mem_map_params_t mp;
    ucp_mem_attr_t attr;
    ucs_status_t s;

    /* Letting UCX allocate lets it use memory its shared-memory transports
     * can map in peers, so on-node puts and atomics need no target help. */
    memset(&mp, 0, sizeof(mp));
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                    UCP_MEM_MAP_PARAM_FIELD_FLAGS;
    mp.address = NULL;
    mp.length = seg->size;
    mp.flags = UCP_MEM_MAP_ALLOCATE;
    s = ucp_mem_map(ctx->ucp, &mp, &seg->memh);
    if (s != UCS_OK)
        return weft__ucs_error(s, "weft_seg_alloc", "ucp_mem_map");
    attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
    s = ucp_mem_query(seg->memh, &attr);
    if (s != UCS_OK) {
        ucp_mem_unmap(ctx->ucp, seg->memh);
        return weft__ucs_error(s, "weft_seg_alloc", "ucp_mem_query");
    }
    seg->base = attr.address;
    memset(seg->base, 0, seg->size);
    return WEFT_OK;
}

/* Exchange base addresses and packed keys with every rank. */
static weft_status_t exchange(weft_ctx_t ctx, struct weft__seg *seg)
{
    void *packed = NULL;
    size_t plen = 0;
    int mylen, *lens = NULL, *displs = NULL, total = 0, n = ctx->nranks;
    uint64_t mybase = (uint64_t)(uintptr_t)seg->base;
    weft_status_t st = WEFT_OK;
    ucs_status_t s;

    s = ucp_rkey_pack(ctx->ucp, seg->memh, &packed, &plen);
    if (s != UCS_OK)
        st = weft__ucs_error(s, "weft_seg_alloc", "ucp_rkey_pack");
    lens = malloc(sizeof(int) * (size_t)n);
    displs = malloc(sizeof(int) * (size_t)n);
    seg->bases = malloc(sizeof(uint64_t) * (size_t)n);
    seg->key_off = malloc(sizeof(size_t) * ((size_t)n + 1));
    if (st == WEFT_OK && (!lens || !displs || !seg->bases || !seg->key_off))
        st = weft__error(WEFT_ERR_NO_MEMORY, "weft_seg_alloc", "key tables");
    if ((st = weft__agree(ctx, st)) != WEFT_OK)
        goto out;

    mylen = (int)plen;
    if (MPI_Allgather(&mybase, 1, MPI_UINT64_T, seg->bases, 1, MPI_UINT64_T, ctx->comm) != MPI_SUCCESS ||
        MPI_Allgather(&mylen, 1, MPI_INT, lens, 1, MPI_INT, ctx->comm) != MPI_SUCCESS) {
        st = weft__error(WEFT_ERR_MPI, "weft_seg_alloc", "MPI_Allgather failed");
        goto out;
    }
    for (int r = 0; r < n; r++) {
        displs[r] = total;
        seg->key_off[r] = (size_t)total;
        total += lens[r];
    }
    seg->key_off[n] = (size_t)total;
    seg->keys = malloc((size_t)total);
    if ((st = weft__agree(ctx, seg->keys ? WEFT_OK
                                         : weft__error(WEFT_ERR_NO_MEMORY, "weft_seg_alloc",
                                                       "key tables"))) != WEFT_OK)
        goto out;
    if (MPI_Allgatherv(packed, mylen, MPI_BYTE, seg->keys, lens, displs, MPI_BYTE,
                       ctx->comm) != MPI_SUCCESS)
        st = weft__error(WEFT_ERR_MPI, "weft_seg_alloc", "MPI_Allgatherv of keys failed");
out:
    if (packed)
        ucp_rkey_buffer_release(packed);
    free(lens);
    free(displs);
    return st;
}

weft_status_t weft_seg_alloc(weft_ctx_t ctx, size_t bytes, weft_seg_t *out, void **local)
{
    struct seg_layer *L = NULL;
    struct weft__seg *seg;
    unsigned long long mine = bytes, lo, hi;
    MPI_Request req[2];
    weft_status_t st;

    if ((st = weft__ctx_check(ctx, __func__)) != WEFT_OK)
        return st;
    /* The first exchange of the call serves peers while it waits (some may
     * still be completing operations that need this rank); then every rank
     * reaches the same verdict on the arguments, so none is left waiting. */
    if (MPI_Iallreduce(&mine, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, ctx->comm, &req[0]) != MPI_SUCCESS ||
        MPI_Iallreduce(&mine, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, ctx->comm, &req[1]) != MPI_SUCCESS)
        return weft__error(WEFT_ERR_MPI, __func__, "MPI_Iallreduce failed");
    if ((st = weft__mpi_wait(ctx, &req[0], __func__)) != WEFT_OK ||
        (st = weft__mpi_wait(ctx, &req[1], __func__)) != WEFT_OK)
        return st;
    st = WEFT_OK;
    if (out == NULL)
        st = weft__error(WEFT_ERR_INVALID_ARG, __func__, "seg is NULL");
    else if (bytes == 0)
        st = weft__error(WEFT_ERR_INVALID_ARG, __func__, "size is 0");
    if (st == WEFT_OK && lo != hi)
        st = weft__error(WEFT_ERR_INVALID_ARG, __func__,
                         "ranks passed different sizes (%llu to %llu bytes); segments are symmetric",
                         lo, hi);
    if ((st = weft__agree(ctx, st)) != WEFT_OK)
        return st;

    pthread_mutex_lock(&ctx->lock);
    L = weft__ctx_layer(ctx, WEFT__LAYER_SEG, sizeof(*L), NULL, teardown, __func__);
    pthread_mutex_unlock(&ctx->lock);
    st = L ? WEFT_OK : WEFT_ERR_NO_MEMORY;
    seg = st == WEFT_OK ? calloc(1, sizeof(*seg)) : NULL;
    if (st == WEFT_OK && seg == NULL)
        st = weft__error(WEFT_ERR_NO_MEMORY, __func__, "segment");
    if (st == WEFT_OK) {
        seg->ctx = ctx;
        seg->size = bytes;
        st = map_local(ctx, seg);
    }
    if ((st = weft__agree(ctx, st)) != WEFT_OK)
        goto err_unmap;
    if ((st = exchange(ctx, seg)) != WEFT_OK)
        goto err_free_tables;

    pthread_mutex_lock(&ctx->lock);
    seg->id = L->next_id++;
    seg->state = WEFT__ALIVE;
    seg->live_ctx = ctx;
    seg->next = L->segs;
    L->segs = seg;
    pthread_mutex_unlock(&ctx->lock);
    *out = seg;
    if (local)
        *local = seg->base;
    return WEFT_OK;

err_free_tables:
    free(seg->bases);
    free(seg->keys);
    free(seg->key_off);
err_unmap:
    if (seg && seg->base)
        ucp_mem_unmap(ctx->ucp, seg->memh);
    free(seg);
    return st;
}

weft_status_t weft_seg_free(weft_ctx_t ctx, weft_seg_t seg)
{
    struct weft__ep_layer *EL;
    weft_status_t st, agreed;

    if ((st = weft__ctx_check(ctx, __func__)) != WEFT_OK)
        return st;
    if (seg == NULL)
        st = weft__error(WEFT_ERR_SEG, __func__, "segment is NULL");
    else if (seg->ctx != ctx || seg->state != WEFT__ALIVE)
        st = weft__error(WEFT_ERR_SEG, __func__, "segment %p is already freed or not of this context",
                         (void *)seg);
    /* Complete our operations (some may target this segment), then wait for
     * every rank to do the same before the memory goes away. */
    EL = weft__ep_layer(ctx);
    for (struct weft__ep *ep = EL ? EL->eps : NULL; st == WEFT_OK && ep; ep = ep->next)
        st = weft_flush(ep);
    if ((agreed = weft__agree(ctx, st)) != WEFT_OK)
        return st != WEFT_OK ? st : agreed;
    if ((st = weft_barrier(ctx)) != WEFT_OK)
        return st;
    pthread_mutex_lock(&ctx->lock);
    release_seg(ctx, seg);
    pthread_mutex_unlock(&ctx->lock);
    return WEFT_OK;
}

weft_status_t weft_seg_query(weft_seg_t seg, size_t *bytes, void **local)
{
    if (seg == NULL)
        return weft__error(WEFT_ERR_SEG, __func__, "segment is NULL");
    if (seg->state != WEFT__ALIVE)
        return weft__error(WEFT_ERR_SEG, __func__, "segment %p was freed", (void *)seg);
    if (bytes)
        *bytes = seg->size;
    if (local)
        *local = seg->base;
    return WEFT_OK;
}
