/* Symmetric segments: collective allocation, UCX registration, key
 * exchange, and the cross-mapping of the parts of ranks that share a node.
 *
 * Cross-mapping: each rank of a node with other ranks creates its part as a
 * POSIX shared-memory object with a random name (getrandom), O_EXCL and
 * mode 0600, and registers the mapping with UCX for the other nodes.  The
 * names go round with the keys; every rank maps the parts of its node's
 * ranks, all agree that they did, and each creator unlinks its name at
 * once, so a rank that dies later leaves nothing in /dev/shm.
 *
 * Each object's pages are reserved when it is created (a /dev/shm too small
 * is an error of weft_seg_alloc, not a SIGBUS at the first put) and every
 * mapping is populated: no put or get of the direct path pays a first-touch
 * page fault (about 5 us per 4 KiB page here, docs/direct-path.md). */
#include "seg/seg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* "/weft-" and 32 hex digits of randomness: unique per job, unguessable. */
#define SHM_PREFIX   "/weft-"
#define SHM_NAME_MAX 48

struct seg_layer {
    struct weft__seg *segs;     /* live and freed (kept as shells) */
    unsigned          next_id;
    /* which ranks share this rank's node, learnt by the first allocation */
    unsigned char    *local;    /* [rank] 1: on this node and WEFT_SHM=1 */
    int               nlocal;   /* such ranks, this one included */
    char            (*nodes)[WEFT__NODE_NAME_MAX];  /* [rank] node name */
};

/* Unmap the parts of the node's other ranks. */
static void unmap_peers(weft_ctx_t ctx, struct weft__seg *seg)
{
    for (int r = 0; seg->mapped && r < ctx->nranks; r++)
        if (r != ctx->rank && seg->mapped[r] != NULL)
            munmap(seg->mapped[r], seg->map_len);
    free(seg->mapped);
    seg->mapped = NULL;
}

/* Deregister and free this rank's part. */
static void unmap_local(weft_ctx_t ctx, struct weft__seg *seg)
{
    ucp_mem_unmap(ctx->ucp, seg->memh);
    if (seg->own_shm)
        munmap(seg->base, seg->map_len);
}

static void release_seg(weft_ctx_t ctx, struct weft__seg *seg)
{
    weft__ep_tgt_forget(ctx, seg->id);
    unmap_peers(ctx, seg);
    unmap_local(ctx, seg);
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
    free(L->local);
    free(L->nodes);
    L->local = NULL;
    L->nodes = NULL;
}

/* The part of seg (this rank's or a mapped peer's) that holds p, or NULL. */
static const char *part_holding(const struct weft__seg *seg, int nranks, uintptr_t p)
{
    for (int r = -1; r < nranks; r++) {
        const char *base = r < 0 ? seg->base : seg->mapped[r];

        if (base != NULL && p >= (uintptr_t)base && p - (uintptr_t)base < seg->size)
            return base;
    }
    return NULL;
}

weft_status_t weft__seg_check_local(weft_ctx_t ctx, const void *buf, size_t n, const char *fn)
{
    struct seg_layer *L;
    weft_status_t st = WEFT_OK;
    uintptr_t p = (uintptr_t)buf;

    if (buf == NULL || n == 0)
        return WEFT_OK;
    pthread_mutex_lock(&ctx->lock);
    L = ctx->layer[WEFT__LAYER_SEG];
    for (struct weft__seg *seg = L ? L->segs : NULL; seg && st == WEFT_OK; seg = seg->next) {
        const char *base;

        if (seg->state != WEFT__ALIVE || (base = part_holding(seg, ctx->nranks, p)) == NULL)
            continue;
        if (n > seg->size - (size_t)(p - (uintptr_t)base))
            st = weft__error(WEFT_ERR_BOUNDS, fn,
                             "local buffer at offset %zu of a segment + %zu bytes exceeds its size "
                             "%zu (WEFT_CHECK)", (size_t)(p - (uintptr_t)base), n, seg->size);
    }
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

weft_status_t weft__seg_fill_target(weft_ep_t ep, weft_seg_t seg, int rank, int ucx,
                                    const char *fn)
{
    struct weft__tgt *t = weft__ep_tgt_slot(ep, seg->id, rank, fn);
    weft_status_t st;
    ucs_status_t s;

    if (t == NULL)
        return WEFT_ERR_NO_MEMORY;
    if (seg->mapped[rank] == NULL || ucx) {
        if (ep->peers[rank] == NULL && (st = weft__ep_connect(ep, rank, fn)) != WEFT_OK)
            return st;
        if (t->rkey == NULL) {
            s = ucp_ep_rkey_unpack(ep->peers[rank], seg->keys + seg->key_off[rank], &t->rkey);
            if (s != UCS_OK)
                return weft__ucs_error(s, fn, "ucp_ep_rkey_unpack");
        }
        t->ep = ep->peers[rank];
    }
    t->local = seg->mapped[rank];
    t->base = seg->bases[rank];
    return WEFT_OK;
}

/* Which ranks share this rank's node: the node names (WEFT_TOPO_NODE, else
 * the host) and WEFT_SHM of every rank.  Collective; every rank reaches the
 * same verdict. */
static weft_status_t learn_nodes(weft_ctx_t ctx, struct seg_layer *L)
{
    struct {
        char    node[WEFT__NODE_NAME_MAX];
        int32_t shm;
    } mine, *all = NULL;
    int n = ctx->nranks;
    weft_status_t st;

    memset(&mine, 0, sizeof(mine));
    mine.shm = ctx->cfg.shm != 0;
    st = weft__ctx_node(ctx, mine.node, "weft_seg_alloc");
    all = malloc(sizeof(*all) * (size_t)n);
    L->local = calloc((size_t)n, 1);
    L->nodes = malloc(sizeof(*L->nodes) * (size_t)n);
    if (st == WEFT_OK && (!all || !L->local || !L->nodes))
        st = weft__error(WEFT_ERR_NO_MEMORY, "weft_seg_alloc", "node tables");
    if ((st = weft__agree(ctx, st, "weft_seg_alloc")) != WEFT_OK)
        goto err_free;
    if (MPI_Allgather(&mine, (int)sizeof(mine), MPI_BYTE, all, (int)sizeof(mine), MPI_BYTE,
                      ctx->comm) != MPI_SUCCESS) {
        st = weft__error(WEFT_ERR_MPI, "weft_seg_alloc", "MPI_Allgather of node names failed");
        goto err_free;
    }
    for (int r = 0; r < n; r++) {
        if (all[r].shm != mine.shm) {
            st = weft__error(WEFT_ERR_CONFIG, "weft_seg_alloc",
                             "WEFT_SHM differs across ranks (rank %d: %d, rank %d: %d); "
                             "give every rank the same", ctx->rank, mine.shm, r, all[r].shm);
            goto err_free;
        }
        memcpy(L->nodes[r], all[r].node, WEFT__NODE_NAME_MAX);
        L->local[r] = mine.shm && strcmp(all[r].node, mine.node) == 0;
        L->nlocal += L->local[r];
    }
    free(all);
    return WEFT_OK;

err_free:
    free(all);
    free(L->local);
    free(L->nodes);
    L->local = NULL;
    L->nodes = NULL;
    return st;
}

/* Allocate the len bytes of the object fd now.  The free space of its file
 * system is checked first: posix_fallocate would otherwise fill /dev/shm
 * before it failed. */
static weft_status_t reserve_pages(int fd, size_t len)
{
    struct statvfs fs;
    int err;

    if (fstatvfs(fd, &fs) == 0 && len / fs.f_frsize >= fs.f_bavail)
        return weft__error(WEFT_ERR_NO_MEMORY, "weft_seg_alloc",
                           "a part of %zu bytes does not fit in /dev/shm (%llu bytes free)", len,
                           (unsigned long long)fs.f_bavail * fs.f_frsize);
    if ((err = posix_fallocate(fd, 0, (off_t)len)) != 0)
        return weft__error(WEFT_ERR_NO_MEMORY, "weft_seg_alloc",
                           "reserving %zu bytes in /dev/shm: %s", len, strerror(err));
    return WEFT_OK;
}

/* Create this rank's part as a shared-memory object: *name gets its name. */
static weft_status_t create_shm(struct weft__seg *seg, char name[SHM_NAME_MAX])
{
    unsigned char rnd[16];
    int fd = -1;

    /* A collision of 128 random bits is not expected; O_EXCL would catch
     * one, and so would another try. */
    for (int attempt = 0; attempt < 4 && fd < 0; attempt++) {
        if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
            return weft__error(WEFT_ERR_NO_MEMORY, "weft_seg_alloc", "getrandom: %s",
                               strerror(errno));
        int len = snprintf(name, SHM_NAME_MAX, SHM_PREFIX);
        for (size_t i = 0; i < sizeof(rnd); i++)
            len += snprintf(name + len, (size_t)(SHM_NAME_MAX - len), "%02x", rnd[i]);
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    /* Every name drawn already existed: someone creates weft's names, and
     * their objects must not be used. */
    if (fd < 0 && errno == EEXIST)
        return weft__error(WEFT_ERR_BUSY, "weft_seg_alloc",
                           "shm_open(%s): File exists, as did every other random name tried", name);
    if (fd < 0)
        return weft__error(WEFT_ERR_NO_MEMORY, "weft_seg_alloc", "shm_open(%s): %s", name,
                           strerror(errno));
    if (ftruncate(fd, (off_t)seg->map_len) != 0) {
        weft__error(WEFT_ERR_NO_MEMORY, "weft_seg_alloc", "ftruncate(%s, %zu): %s", name,
                    seg->map_len, strerror(errno));
        goto err_unlink;
    }
    if (reserve_pages(fd, seg->map_len) != WEFT_OK)
        goto err_unlink;
    seg->base = mmap(NULL, seg->map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (seg->base == MAP_FAILED) {
        seg->base = NULL;
        weft__error(WEFT_ERR_NO_MEMORY, "weft_seg_alloc", "mmap of %zu bytes (%s): %s",
                    seg->map_len, name, strerror(errno));
        goto err_unlink;
    }
    close(fd);
    seg->own_shm = 1;
    return WEFT_OK;

err_unlink:
    close(fd);
    shm_unlink(name);
    name[0] = '\0';
    return WEFT_ERR_NO_MEMORY;
}

/* Map and register this rank's part; local only.  A rank that shares its
 * node creates a shared-memory object (*name), registered with UCX for the
 * other nodes; a rank alone on its node lets UCX allocate. */
static weft_status_t map_local(weft_ctx_t ctx, struct seg_layer *L, struct weft__seg *seg,
                               char name[SHM_NAME_MAX])
{
    ucp_mem_map_params_t mp;
    ucp_mem_attr_t attr;
    weft_status_t st;
    ucs_status_t s;
    long page = sysconf(_SC_PAGESIZE), phys_pages = sysconf(_SC_PHYS_PAGES);

    /* whole pages of a size near SIZE_MAX would wrap around to 0 */
    if (seg->size > SIZE_MAX - ((size_t)page - 1))
        return weft__error(WEFT_ERR_NO_MEMORY, "weft_seg_alloc",
                           "a part of %zu bytes is larger than the address space", seg->size);
    seg->map_len = (seg->size + (size_t)page - 1) / (size_t)page * (size_t)page;
    /* A part is backed and zeroed here, so one larger than the node's
     * memory cannot be had.  Without this a rank alone on its node let UCX
     * allocate it (lazily backed), and zeroing it ended in an OOM kill that
     * left UCX's file in /dev/shm. */
    if (phys_pages > 0 && seg->map_len / (size_t)page > (size_t)phys_pages)
        return weft__error(WEFT_ERR_NO_MEMORY, "weft_seg_alloc",
                           "a part of %zu bytes is larger than this node's memory (%zu bytes)",
                           seg->size, (size_t)phys_pages * (size_t)page);
    memset(&mp, 0, sizeof(mp));
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                    UCP_MEM_MAP_PARAM_FIELD_FLAGS;
    mp.length = seg->map_len;
    if (L->nlocal > 1) {
        if ((st = create_shm(seg, name)) != WEFT_OK)
            return st;
        mp.address = seg->base;
    } else {
        /* Letting UCX allocate lets it use memory its shared-memory
         * transports can map in peers (WEFT_SHM=0), so on-node puts and
         * atomics need no target help. */
        mp.address = NULL;
        mp.flags = UCP_MEM_MAP_ALLOCATE;
    }
    s = ucp_mem_map(ctx->ucp, &mp, &seg->memh);
    if (s != UCS_OK) {
        st = weft__ucs_error(s, "weft_seg_alloc", "ucp_mem_map");
        goto err_unmap;
    }
    if (!seg->own_shm) {
        attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
        s = ucp_mem_query(seg->memh, &attr);
        if (s != UCS_OK) {
            ucp_mem_unmap(ctx->ucp, seg->memh);
            st = weft__ucs_error(s, "weft_seg_alloc", "ucp_mem_query");
            goto err_unmap;
        }
        seg->base = attr.address;
        memset(seg->base, 0, seg->size);
    }
    seg->mapped[ctx->rank] = L->local[ctx->rank] ? seg->base : NULL;
    return WEFT_OK;

err_unmap:
    if (seg->own_shm) {
        munmap(seg->base, seg->map_len);
        shm_unlink(name);
        name[0] = '\0';
    }
    seg->base = NULL;
    seg->own_shm = 0;
    return st;
}

/* Map the parts of the node's other ranks, whose names are in names[]. */
static weft_status_t map_peers(weft_ctx_t ctx, struct seg_layer *L, struct weft__seg *seg,
                               const char (*names)[SHM_NAME_MAX])
{
    struct stat sb;

    for (int r = 0; r < ctx->nranks; r++) {
        if (r == ctx->rank || !L->local[r])
            continue;
        int fd = shm_open(names[r], O_RDWR | O_CLOEXEC, 0);
        if (fd < 0)
            return weft__error(WEFT_ERR_NO_MEMORY, "weft_seg_alloc",
                               "rank %d's segment: shm_open(%s): %s", r, names[r], strerror(errno));
        if (fstat(fd, &sb) != 0 || (size_t)sb.st_size != seg->map_len || sb.st_uid != geteuid()) {
            close(fd);
            return weft__error(WEFT_ERR_NO_MEMORY, "weft_seg_alloc",
                               "rank %d's segment %s is not the %zu-byte object of this job", r,
                               names[r], seg->map_len);
        }
        void *p = mmap(NULL, seg->map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
                       fd, 0);
        close(fd);
        if (p == MAP_FAILED)
            return weft__error(WEFT_ERR_NO_MEMORY, "weft_seg_alloc",
                               "mapping rank %d's segment (%zu bytes): %s", r, seg->map_len,
                               strerror(errno));
        seg->mapped[r] = p;
    }
    return WEFT_OK;
}

/* Cross-map the parts of the node's ranks, then remove the names: after
 * the agreement every rank that needs an object has it mapped. */
static weft_status_t cross_map(weft_ctx_t ctx, struct seg_layer *L, struct weft__seg *seg,
                               char name[SHM_NAME_MAX])
{
    char (*names)[SHM_NAME_MAX] = NULL;
    weft_status_t st = WEFT_OK;

    if (L->nlocal > 1) {
        names = calloc((size_t)ctx->nranks, SHM_NAME_MAX);
        if (names == NULL)
            st = weft__error(WEFT_ERR_NO_MEMORY, "weft_seg_alloc", "name table");
    }
    /* every rank takes part, so ranks alone on their node too */
    if ((st = weft__agree(ctx, st, "weft_seg_alloc")) == WEFT_OK && L->nlocal > 1 &&
        MPI_Allgather(name, SHM_NAME_MAX, MPI_CHAR, names, SHM_NAME_MAX, MPI_CHAR,
                      ctx->comm) != MPI_SUCCESS)
        st = weft__error(WEFT_ERR_MPI, "weft_seg_alloc", "MPI_Allgather of segment names failed");
    if (st == WEFT_OK && L->nlocal > 1)
        st = map_peers(ctx, L, seg, (const char (*)[SHM_NAME_MAX])names);
    st = weft__agree(ctx, st, "weft_seg_alloc");
    if (name[0] != '\0')
        shm_unlink(name);
    name[0] = '\0';
    free(names);
    return st;
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
    if ((st = weft__agree(ctx, st, "weft_seg_alloc")) != WEFT_OK)
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
                                                       "key tables"),
                          "weft_seg_alloc")) != WEFT_OK)
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
    char name[SHM_NAME_MAX] = "";
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
    if ((st = weft__agree(ctx, st, __func__)) != WEFT_OK)
        return st;

    pthread_mutex_lock(&ctx->lock);
    L = weft__ctx_layer(ctx, WEFT__LAYER_SEG, sizeof(*L), NULL, teardown, __func__);
    pthread_mutex_unlock(&ctx->lock);
    if ((st = weft__agree(ctx, L ? WEFT_OK : WEFT_ERR_NO_MEMORY, __func__)) != WEFT_OK)
        return st;
    if (L->local == NULL && (st = learn_nodes(ctx, L)) != WEFT_OK)
        return st;
    seg = calloc(1, sizeof(*seg));
    if (seg == NULL || (seg->mapped = calloc((size_t)ctx->nranks, sizeof(char *))) == NULL)
        st = weft__error(WEFT_ERR_NO_MEMORY, __func__, "segment");
    if (st == WEFT_OK) {
        seg->ctx = ctx;
        seg->size = bytes;
        st = map_local(ctx, L, seg, name);
    }
    if ((st = weft__agree(ctx, st, __func__)) != WEFT_OK)
        goto err_unmap;
    if ((st = cross_map(ctx, L, seg, name)) != WEFT_OK)
        goto err_unmap_peers;
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
err_unmap_peers:
    unmap_peers(ctx, seg);
err_unmap:
    if (seg && seg->base) {
        unmap_local(ctx, seg);
        if (name[0] != '\0')
            shm_unlink(name);
    }
    if (seg)
        free(seg->mapped);
    free(seg);
    return st;
}

weft_status_t weft_seg_free(weft_ctx_t ctx, weft_seg_t seg)
{
    weft_status_t st, agreed;

    if ((st = weft__ctx_check(ctx, __func__)) != WEFT_OK)
        return st;
    if (seg == NULL)
        st = weft__error(WEFT_ERR_SEG, __func__, "segment is NULL");
    else if (seg->ctx != ctx || seg->state != WEFT__ALIVE)
        st = weft__error(WEFT_ERR_SEG, __func__, "segment %p is already freed or not of this context",
                         (void *)seg);
    /* freeing releases every endpoint's target entries of the segment */
    if (st == WEFT_OK)
        st = weft__ep_quiesce(ctx, __func__);
    /* No rank leaves this agreement before every rank has entered it, its
     * operations complete: then the memory can go. */
    if ((agreed = weft__agree(ctx, st, __func__)) != WEFT_OK)
        return st != WEFT_OK ? st : agreed;
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

weft_status_t weft_ptr(weft_ctx_t ctx, int rank, weft_seg_t seg, size_t off, void **ptr)
{
    struct seg_layer *L;
    weft_status_t st;

    if ((st = weft__ctx_check(ctx, __func__)) != WEFT_OK)
        return st;
    if (ptr == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "ptr is NULL");
    if (rank < 0 || rank >= ctx->nranks)
        return weft__error(WEFT_ERR_RANK, __func__, "rank %d is outside [0, %d)", rank,
                           ctx->nranks);
    if (seg == NULL)
        return weft__error(WEFT_ERR_SEG, __func__, "segment is NULL");
    if (seg->ctx != ctx || seg->state != WEFT__ALIVE)
        return weft__error(WEFT_ERR_SEG, __func__,
                           "segment %p is freed or belongs to another context", (void *)seg);
    if (off >= seg->size)
        return weft__error(WEFT_ERR_BOUNDS, __func__, "offset %zu is past the segment's %zu bytes",
                           off, seg->size);
    if (seg->mapped[rank] == NULL) {
        L = ctx->layer[WEFT__LAYER_SEG];
        if (!ctx->cfg.shm)
            return weft__error(WEFT_ERR_UNSUPPORTED, __func__,
                               "rank %d is not mapped: the direct path is off (WEFT_SHM=0)", rank);
        return weft__error(WEFT_ERR_UNSUPPORTED, __func__,
                           "rank %d is on node '%s', not on this rank's node '%s'", rank,
                           L->nodes[rank], L->nodes[ctx->rank]);
    }
    *ptr = seg->mapped[rank] + off;
    return WEFT_OK;
}
