/* Symmetric segments: collective allocation, UCX registration, key
 * exchange, and the cross-mapping of the parts of ranks that share a node.
 *
 * Cross-mapping: each rank of a node with other ranks creates its part as a
 * POSIX shared-memory object with a random name (getrandom), O_EXCL and
 * mode 0600, and unlinks the name at once; the object then travels to the
 * node's other ranks as a descriptor over a Unix socket (SCM_RIGHTS), each
 * end checking the other's uid and pid.  No name exists while a rank waits
 * for another, so a rank killed at any point leaves nothing in /dev/shm.
 * (pidfd_getfd would need ptrace rights on the sender, which Yama's
 * ptrace_scope=1 denies between sibling ranks; SCM_RIGHTS needs none.)
 *
 * Each object's pages are reserved when it is created (a /dev/shm too small
 * is an error of weft_seg_alloc, not a SIGBUS at the first put) and every
 * mapping is populated: no put or get of the direct path pays a first-touch
 * page fault (about 5 us per 4 KiB page here, docs/direct-path.md). */
#define _GNU_SOURCE  /* struct ucred, accept4 */
#include "seg/seg.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <sys/un.h>
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

/* The segment begins with what weft_inline.h reads (layout 4). */
#define SAME_FIELD(a) \
    (offsetof(struct weft__seg, a) == offsetof(struct weft_inline_seg, a) && \
     sizeof(((struct weft__seg *)0)->a) == sizeof(((struct weft_inline_seg *)0)->a))
_Static_assert(WEFT_INLINE_LAYOUT == 4 && SAME_FIELD(live_ctx) && SAME_FIELD(mapped) &&
                   SAME_FIELD(size),
               "struct weft__seg does not begin with struct weft_inline_seg");

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
    free(seg->sizes);
    seg->bases = NULL;
    seg->keys = NULL;
    seg->key_off = NULL;
    seg->sizes = NULL;
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
static const char *part_holding(const struct weft__seg *seg, int rank, int nranks, uintptr_t p,
                                size_t *size)
{
    for (int r = -1; r < nranks; r++) {
        const char *base = r < 0 ? seg->base : seg->mapped[r];

        *size = weft__seg_size(seg, r < 0 ? rank : r);
        if (base != NULL && p >= (uintptr_t)base && p - (uintptr_t)base < *size)
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
        size_t size;

        if (seg->state != WEFT__ALIVE ||
            (base = part_holding(seg, ctx->rank, ctx->nranks, p, &size)) == NULL)
            continue;
        if (n > size - (size_t)(p - (uintptr_t)base))
            st = weft__error(WEFT_ERR_BOUNDS, fn,
                             "local buffer at offset %zu of a segment + %zu bytes exceeds its size "
                             "%zu (WEFT_CHECK)", (size_t)(p - (uintptr_t)base), n, size);
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

/* Create this rank's part as a shared-memory object that has no name, or
 * one only between two consecutive system calls of this rank: *fd gets the
 * object, which only descriptors (passed to the node's ranks by send_fd)
 * and mappings reach from then on.
 *
 * The object is an O_TMPFILE file of /dev/shm: it never has a name, and
 * O_EXCL forbids giving it one (linkat), yet its pages count against
 * /dev/shm's size as a named object's would.  Where /dev/shm does not take
 * O_TMPFILE, shm_open with a random name, O_EXCL and 0600, then unlinked at
 * once: a rank killed between those two calls leaves an empty file. */
static weft_status_t create_shm(struct weft__seg *seg, int *fd)
{
    unsigned char rnd[16];
    char name[SHM_NAME_MAX] = "an unnamed file of /dev/shm";
    int named;

    *fd = open("/dev/shm", O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
    named = *fd < 0;
    /* A collision of 128 random bits is not expected; O_EXCL would catch
     * one, and so would another try. */
    for (int attempt = 0; attempt < 4 && *fd < 0; attempt++) {
        if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
            return weft__error(WEFT_ERR_NO_MEMORY, "weft_seg_alloc", "getrandom: %s",
                               strerror(errno));
        int len = snprintf(name, SHM_NAME_MAX, SHM_PREFIX);
        for (size_t i = 0; i < sizeof(rnd); i++)
            len += snprintf(name + len, (size_t)(SHM_NAME_MAX - len), "%02x", rnd[i]);
        *fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (*fd < 0 && errno != EEXIST)
            break;
    }
    /* Every name drawn already existed: someone creates weft's names, and
     * their objects must not be used. */
    if (*fd < 0 && errno == EEXIST)
        return weft__error(WEFT_ERR_BUSY, "weft_seg_alloc",
                           "shm_open(%s): File exists, as did every other random name tried", name);
    if (*fd < 0)
        return weft__error(WEFT_ERR_NO_MEMORY, "weft_seg_alloc", "shm_open(%s): %s", name,
                           strerror(errno));
    if (named)
        shm_unlink(name);
    if (ftruncate(*fd, (off_t)seg->map_len) != 0) {
        weft__error(WEFT_ERR_NO_MEMORY, "weft_seg_alloc", "ftruncate(%s, %zu): %s", name,
                    seg->map_len, strerror(errno));
        goto err_close;
    }
    if (reserve_pages(*fd, seg->map_len) != WEFT_OK)
        goto err_close;
    seg->base = mmap(NULL, seg->map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, *fd, 0);
    if (seg->base == MAP_FAILED) {
        seg->base = NULL;
        weft__error(WEFT_ERR_NO_MEMORY, "weft_seg_alloc", "mmap of %zu bytes (%s): %s",
                    seg->map_len, name, strerror(errno));
        goto err_close;
    }
    seg->own_shm = 1;
    return WEFT_OK;

err_close:
    close(*fd);
    *fd = -1;
    return WEFT_ERR_NO_MEMORY;
}

/* Map and register this rank's part; local only.  A rank that shares its
 * node creates a shared-memory object (*fd), registered with UCX for the
 * other nodes; a rank alone on its node lets UCX allocate. */
static weft_status_t map_local(weft_ctx_t ctx, struct seg_layer *L, struct weft__seg *seg,
                               int *fd)
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
        if ((st = create_shm(seg, fd)) != WEFT_OK)
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
        /* The progress thread may serve the first put into these bytes
         * (over TCP, UCX writes them in its handler).  The key exchange
         * orders the zeroing before any such put, but through the other
         * ranks, where a thread sanitizer cannot follow; a pass through
         * the worker's lock, which the thread takes to serve anything,
         * orders it here too. */
        if (ctx->cfg.progress_thread)
            ucp_worker_progress(ctx->home);
    }
    seg->mapped[ctx->rank] = L->local[ctx->rank] ? seg->base : NULL;
    return WEFT_OK;

err_unmap:
    if (seg->own_shm) {
        munmap(seg->base, seg->map_len);
        close(*fd);
        *fd = -1;
    }
    seg->base = NULL;
    seg->own_shm = 0;
    return st;
}

/* Where a rank of the node takes descriptors: its pid and the abstract
 * Unix socket address it listens on (empty for a rank with no node
 * peers). */
struct fd_box {
    int32_t            pid;
    uint32_t           len;    /* of addr, 0: none */
    struct sockaddr_un addr;
};

/* Listen on an abstract Unix socket with a name the kernel picks
 * (autobind): it is unique, and it disappears with the socket, so no file
 * is ever left.  Abstract names are visible to every process of the
 * network namespace: whoever connects is checked (SO_PEERCRED) before
 * anything it sends is used. */
static weft_status_t open_box(int *lfd, struct fd_box *box)
{
    socklen_t len = sizeof(sa_family_t);

    memset(box, 0, sizeof(*box));
    box->pid = (int32_t)getpid();
    box->addr.sun_family = AF_UNIX;
    *lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (*lfd < 0 || bind(*lfd, (struct sockaddr *)&box->addr, len) != 0 ||
        listen(*lfd, SOMAXCONN) != 0) {
        weft_status_t st = weft__error(WEFT_ERR_NO_MEMORY, "weft_seg_alloc",
                                       "a Unix socket to receive the node's segments: %s",
                                       strerror(errno));
        if (*lfd >= 0)
            close(*lfd);
        *lfd = -1;
        return st;
    }
    len = sizeof(box->addr);
    if (getsockname(*lfd, (struct sockaddr *)&box->addr, &len) != 0) {
        close(*lfd);
        *lfd = -1;
        return weft__error(WEFT_ERR_NO_MEMORY, "weft_seg_alloc", "getsockname: %s",
                           strerror(errno));
    }
    box->len = (uint32_t)len;
    return WEFT_OK;
}

/* The pid of the process at the other end of the connected socket s if it
 * runs as this user, else -1. */
static pid_t peer_pid(int s)
{
    struct ucred cred;
    socklen_t len = sizeof(cred);

    if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != geteuid())
        return -1;
    return cred.pid;
}

/* Send this rank's object fd to every other rank of the node: connect to
 * its socket, check that the listener is that rank's process, and send our
 * rank with the descriptor (SCM_RIGHTS).  Neither side waits for the
 * other: a connection to a listening socket is queued until accepted, and
 * so is its message. */
static weft_status_t send_fd(weft_ctx_t ctx, struct seg_layer *L, const struct fd_box *boxes,
                             int fd)
{
    int32_t me = ctx->rank;

    for (int r = 0; r < ctx->nranks; r++) {
        union {
            struct cmsghdr h;
            char           buf[CMSG_SPACE(sizeof(int))];
        } ctl;
        struct iovec iov = {.iov_base = &me, .iov_len = sizeof(me)};
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                             .msg_controllen = sizeof(ctl.buf)};
        struct cmsghdr *c;
        int s;

        if (r == ctx->rank || !L->local[r])
            continue;
        memset(&ctl, 0, sizeof(ctl));
        c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
        /* Non-blocking: a queue that other processes filled (anyone may
         * connect to an abstract socket) is an error, not a wait. */
        s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (s < 0 || connect(s, (const struct sockaddr *)&boxes[r].addr, boxes[r].len) != 0) {
            weft_status_t st = weft__error(WEFT_ERR_NO_MEMORY, "weft_seg_alloc",
                                           "connecting to rank %d to pass the segment: %s", r,
                                           strerror(errno));
            if (s >= 0)
                close(s);
            return st;
        }
        /* the name could have been taken by another process if rank r
         * died: only rank r's own process gets the object */
        if (peer_pid(s) != boxes[r].pid) {
            close(s);
            return weft__error(WEFT_ERR_PEER_FAILED, "weft_seg_alloc",
                               "the socket of rank %d is not held by its process (pid %d)", r,
                               (int)boxes[r].pid);
        }
        if (sendmsg(s, &msg, MSG_NOSIGNAL) != (ssize_t)sizeof(me)) {
            weft_status_t st = weft__error(WEFT_ERR_PEER_FAILED, "weft_seg_alloc",
                                           "passing the segment to rank %d: %s", r,
                                           strerror(errno));
            close(s);
            return st;
        }
        close(s);
    }
    return WEFT_OK;
}

/* Take one connection from lfd: the rank it comes from and its
 * descriptor, or -1 if it is not a rank of this node (another process,
 * a rank already heard, a malformed message): such a connection is closed
 * and ignored, another process's before anything is read from it. */
static int take_fd(weft_ctx_t ctx, struct seg_layer *L, const struct fd_box *boxes,
                   const int *fds, int lfd, int *from)
{
    union {
        struct cmsghdr h;
        char           buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    int32_t r = -1;
    struct iovec iov = {.iov_base = &r, .iov_len = sizeof(r)};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                         .msg_controllen = sizeof(ctl.buf)};
    /* a rank sends as soon as it has connected; this bounds what a
     * process that connects and stays silent can hold us */
    struct timeval limit = {.tv_sec = 5};
    struct cmsghdr *c;
    int s, fd = -1, sender = -1;
    pid_t pid;
    ssize_t n;

    s = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (s < 0)
        return -1;
    pid = peer_pid(s);
    for (int q = 0; q < ctx->nranks && pid > 0; q++)
        if (q != ctx->rank && L->local[q] && fds[q] < 0 && boxes[q].pid == pid)
            sender = q;
    if (sender < 0 || setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit)) != 0) {
        close(s);
        return -1;
    }
    memset(&ctl, 0, sizeof(ctl));
    n = recvmsg(s, &msg, MSG_CMSG_CLOEXEC);
    c = n > 0 ? CMSG_FIRSTHDR(&msg) : NULL;
    if (c != NULL && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len == CMSG_LEN(sizeof(int)))
        memcpy(&fd, CMSG_DATA(c), sizeof(int));
    close(s);
    if (n != (ssize_t)sizeof(r) || (msg.msg_flags & MSG_CTRUNC) || fd < 0 || r != sender) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *from = r;
    return fd;
}

/* Receive the object of every other rank of the node, which every rank
 * has sent.  Should one not be there, a rank that died or a
 * WEFT_TIMEOUT_MS that passes ends the wait. */
static weft_status_t recv_fds(weft_ctx_t ctx, struct seg_layer *L, const struct fd_box *boxes,
                              int lfd, int *fds)
{
    weft__waiter_t w;
    weft_status_t st;
    int missing = L->nlocal - 1;

    weft__wait_init(&w, ctx);
    while (missing > 0) {
        struct pollfd p = {.fd = lfd, .events = POLLIN};
        int from, fd;

        if (poll(&p, 1, 10) > 0 && (fd = take_fd(ctx, L, boxes, fds, lfd, &from)) >= 0) {
            fds[from] = fd;
            missing--;
            continue;
        }
        weft__peer_poll(ctx);
        for (int r = 0; r < ctx->nranks; r++)
            if (L->local[r] && r != ctx->rank && fds[r] < 0 && weft__peer_failed(ctx, r))
                return weft__error(WEFT_ERR_PEER_FAILED, "weft_seg_alloc",
                                   "rank %d died before passing its segment", r);
        /* the waiter looks at its clock every 64th step: take 64 */
        for (unsigned i = 0; i < 64; i++)
            if ((st = weft__wait_step(&w, 0, "weft_seg_alloc")) != WEFT_OK)
                return st;
    }
    return WEFT_OK;
}

/* Map the parts of the node's other ranks, whose objects are fds[]. */
static weft_status_t map_peers(weft_ctx_t ctx, struct seg_layer *L, struct weft__seg *seg,
                               const int *fds)
{
    struct stat sb;

    for (int r = 0; r < ctx->nranks; r++) {
        if (r == ctx->rank || !L->local[r])
            continue;
        if (fstat(fds[r], &sb) != 0 || (size_t)sb.st_size != seg->map_len ||
            sb.st_uid != geteuid() || (sb.st_mode & 077) != 0)
            return weft__error(WEFT_ERR_NO_MEMORY, "weft_seg_alloc",
                               "rank %d's segment is not the %zu-byte private object of this job",
                               r, seg->map_len);
        void *p = mmap(NULL, seg->map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
                       fds[r], 0);
        if (p == MAP_FAILED)
            return weft__error(WEFT_ERR_NO_MEMORY, "weft_seg_alloc",
                               "mapping rank %d's segment (%zu bytes): %s", r, seg->map_len,
                               strerror(errno));
        seg->mapped[r] = p;
    }
    return WEFT_OK;
}

/* Cross-map the parts of the node's ranks.  The objects have no name any
 * more (create_shm): each goes to the node's other ranks as a descriptor
 * over a Unix socket (SCM_RIGHTS), so a rank killed at any step of this
 * leaves nothing in /dev/shm.  Consumes fd. */
static weft_status_t cross_map(weft_ctx_t ctx, struct seg_layer *L, struct weft__seg *seg,
                               int fd)
{
    struct fd_box mine, *boxes = NULL;
    int *fds = NULL, lfd = -1;
    weft_status_t st = WEFT_OK;

    memset(&mine, 0, sizeof(mine));
    if (ctx->cfg.shm) {
        boxes = calloc((size_t)ctx->nranks, sizeof(*boxes));
        fds = malloc(sizeof(int) * (size_t)ctx->nranks);
        if (boxes == NULL || fds == NULL)
            st = weft__error(WEFT_ERR_NO_MEMORY, "weft_seg_alloc", "descriptor tables");
        for (int r = 0; fds && r < ctx->nranks; r++)
            fds[r] = -1;
        if (st == WEFT_OK && L->nlocal > 1)
            st = open_box(&lfd, &mine);
    }
    /* every rank takes part, so ranks alone on their node too (WEFT_SHM is
     * the same on every rank, learn_nodes checked it) */
    if ((st = weft__agree(ctx, st, "weft_seg_alloc")) == WEFT_OK && ctx->cfg.shm &&
        MPI_Allgather(&mine, (int)sizeof(mine), MPI_BYTE, boxes, (int)sizeof(mine), MPI_BYTE,
                      ctx->comm) != MPI_SUCCESS)
        st = weft__error(WEFT_ERR_MPI, "weft_seg_alloc", "MPI_Allgather of socket addresses failed");
    if (st == WEFT_OK && L->nlocal > 1)
        st = send_fd(ctx, L, boxes, fd);
    /* Once every rank has sent, every descriptor waits in its receiver's
     * queue: no rank then waits for one that failed to send. */
    if ((st = weft__agree(ctx, st, "weft_seg_alloc")) == WEFT_OK && L->nlocal > 1)
        st = recv_fds(ctx, L, boxes, lfd, fds);
    if (st == WEFT_OK && L->nlocal > 1)
        st = map_peers(ctx, L, seg, fds);
    if (lfd >= 0)
        close(lfd);
    for (int r = 0; fds && r < ctx->nranks; r++)
        if (fds[r] >= 0)
            close(fds[r]);
    if (fd >= 0)
        close(fd);
    free(fds);
    free(boxes);
    return weft__agree(ctx, st, "weft_seg_alloc");
}

/* Exchange base addresses and packed keys with every rank. */
static weft_status_t exchange(weft_ctx_t ctx, struct weft__seg *seg, const char *fn)
{
    void *packed = NULL;
    size_t plen = 0;
    int mylen, *lens = NULL, *displs = NULL, total = 0, n = ctx->nranks;
    uint64_t mybase = (uint64_t)(uintptr_t)seg->base;
    weft_status_t st = WEFT_OK;
    ucs_status_t s;

    s = ucp_rkey_pack(ctx->ucp, seg->memh, &packed, &plen);
    if (s != UCS_OK)
        st = weft__ucs_error(s, fn, "ucp_rkey_pack");
    lens = malloc(sizeof(int) * (size_t)n);
    displs = malloc(sizeof(int) * (size_t)n);
    seg->bases = malloc(sizeof(uint64_t) * (size_t)n);
    seg->key_off = malloc(sizeof(size_t) * ((size_t)n + 1));
    if (st == WEFT_OK && (!lens || !displs || !seg->bases || !seg->key_off))
        st = weft__error(WEFT_ERR_NO_MEMORY, fn, "key tables");
    if ((st = weft__agree(ctx, st, fn)) != WEFT_OK)
        goto out;

    mylen = (int)plen;
    if (MPI_Allgather(&mybase, 1, MPI_UINT64_T, seg->bases, 1, MPI_UINT64_T, ctx->comm) != MPI_SUCCESS ||
        MPI_Allgather(&mylen, 1, MPI_INT, lens, 1, MPI_INT, ctx->comm) != MPI_SUCCESS) {
        st = weft__error(WEFT_ERR_MPI, fn, "MPI_Allgather failed");
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
                                         : weft__error(WEFT_ERR_NO_MEMORY, fn,
                                                       "key tables"),
                          fn)) != WEFT_OK)
        goto out;
    if (MPI_Allgatherv(packed, mylen, MPI_BYTE, seg->keys, lens, displs, MPI_BYTE,
                       ctx->comm) != MPI_SUCCESS)
        st = weft__error(WEFT_ERR_MPI, fn, "MPI_Allgatherv of keys failed");
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
    int fd = -1;
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
        st = map_local(ctx, L, seg, &fd);
    }
    if ((st = weft__agree(ctx, st, __func__)) != WEFT_OK)
        goto err_unmap;
    st = cross_map(ctx, L, seg, fd);
    fd = -1;
    if (st != WEFT_OK)
        goto err_unmap_peers;
    if ((st = exchange(ctx, seg, __func__)) != WEFT_OK)
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
    if (seg && seg->base)
        unmap_local(ctx, seg);
    if (fd >= 0)
        close(fd);
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
        *bytes = weft__seg_size(seg, seg->ctx->rank);
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
    if (off >= weft__seg_size(seg, rank))
        return weft__error(WEFT_ERR_BOUNDS, __func__, "offset %zu is past the segment's %zu bytes",
                           off, weft__seg_size(seg, rank));
    /* a registered part is the caller's own memory, whatever the path */
    if (seg->sizes != NULL && rank == ctx->rank) {
        *ptr = (char *)seg->base + off;
        return WEFT_OK;
    }
    if (seg->mapped[rank] == NULL) {
        L = ctx->layer[WEFT__LAYER_SEG];
        if (seg->sizes != NULL)
            return weft__error(WEFT_ERR_UNSUPPORTED, __func__,
                               "rank %d's part of a registered segment is its own private "
                               "memory, which this rank cannot map (weft_seg_register)", rank);
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

/* Registered memory: the program's own, one part per rank of the size that
 * rank gives.  No rank can map another's (it is private to its process),
 * so only the part of the rank itself is on the direct path; every other
 * rank, on the node or not, is reached through UCX. */
weft_status_t weft_seg_register(weft_ctx_t ctx, void *base, size_t bytes, weft_seg_t *out)
{
    struct seg_layer *L = NULL;
    struct weft__seg *seg = NULL;
    unsigned long long mine = bytes, *all = NULL;
    ucp_mem_map_params_t mp;
    MPI_Request req;
    weft_status_t st;
    ucs_status_t s;
    int n, registered = 0;

    if ((st = weft__ctx_check(ctx, __func__)) != WEFT_OK)
        return st;
    n = ctx->nranks;
    if ((all = malloc(sizeof(*all) * (size_t)n)) == NULL)
        st = weft__error(WEFT_ERR_NO_MEMORY, __func__, "size table");
    /* As weft_seg_alloc: the first exchange serves peers while it waits,
     * then every rank reaches the same verdict. */
    if ((st = weft__agree(ctx, st, __func__)) != WEFT_OK)
        goto err_free;
    if (MPI_Iallgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG,
                       ctx->comm, &req) != MPI_SUCCESS) {
        st = weft__error(WEFT_ERR_MPI, __func__, "MPI_Iallgather failed");
        goto err_free;
    }
    if ((st = weft__mpi_wait(ctx, &req, __func__)) != WEFT_OK)
        goto err_free;
    if (out == NULL)
        st = weft__error(WEFT_ERR_INVALID_ARG, __func__, "seg is NULL");
    else if (base == NULL)
        st = weft__error(WEFT_ERR_INVALID_ARG, __func__, "base is NULL");
    for (int r = 0; r < n && st == WEFT_OK; r++)
        if (all[r] == 0)
            st = weft__error(WEFT_ERR_INVALID_ARG, __func__, "rank %d registers 0 bytes", r);
    if ((st = weft__agree(ctx, st, __func__)) != WEFT_OK)
        goto err_free;

    pthread_mutex_lock(&ctx->lock);
    L = weft__ctx_layer(ctx, WEFT__LAYER_SEG, sizeof(*L), NULL, teardown, __func__);
    pthread_mutex_unlock(&ctx->lock);
    if ((st = weft__agree(ctx, L ? WEFT_OK : WEFT_ERR_NO_MEMORY, __func__)) != WEFT_OK)
        goto err_free;
    if (L->local == NULL && (st = learn_nodes(ctx, L)) != WEFT_OK)
        goto err_free;
    seg = calloc(1, sizeof(*seg));
    if (seg == NULL || (seg->mapped = calloc((size_t)n, sizeof(char *))) == NULL ||
        (seg->sizes = malloc(sizeof(size_t) * (size_t)n)) == NULL)
        st = weft__error(WEFT_ERR_NO_MEMORY, __func__, "segment");
    if (st == WEFT_OK) {
        seg->ctx = ctx;
        seg->base = base;
        seg->size = bytes;
        for (int r = 0; r < n; r++) {
            seg->sizes[r] = (size_t)all[r];
            if (seg->sizes[r] < seg->size)
                seg->size = seg->sizes[r];
        }
        memset(&mp, 0, sizeof(mp));
        mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
        mp.address = base;
        mp.length = bytes;
        if ((s = ucp_mem_map(ctx->ucp, &mp, &seg->memh)) != UCS_OK)
            st = weft__ucs_error(s, __func__, "ucp_mem_map of the registered memory");
        registered = st == WEFT_OK;
    }
    if ((st = weft__agree(ctx, st, __func__)) != WEFT_OK)
        goto err_deregister;
    seg->mapped[ctx->rank] = L->local[ctx->rank] ? base : NULL;
    if ((st = exchange(ctx, seg, __func__)) != WEFT_OK)
        goto err_free_tables;

    pthread_mutex_lock(&ctx->lock);
    seg->id = L->next_id++;
    seg->state = WEFT__ALIVE;
    seg->live_ctx = ctx;
    seg->next = L->segs;
    L->segs = seg;
    pthread_mutex_unlock(&ctx->lock);
    free(all);
    *out = seg;
    return WEFT_OK;

err_free_tables:
    free(seg->bases);
    free(seg->keys);
    free(seg->key_off);
err_deregister:
    if (registered)
        ucp_mem_unmap(ctx->ucp, seg->memh);
    if (seg) {
        free(seg->mapped);
        free(seg->sizes);
    }
    free(seg);
err_free:
    free(all);
    return st;
}
