/* One-sided hierarchical collectives of weft teams: bcast, reduce,
 * allreduce and barrier run over the levels of the team's hierarchy (the
 * same levels as ops.c's MPI path), each hop a chunk written into a buffer
 * of the team's scratch slot (team.h) and a signal word the reader waits
 * on.  Data moves in chunks, so a large message is pipelined down (or up)
 * the tree.
 *
 * Two paths, chosen per pair of ranks:
 *  - ranks of a node (both mapped, weft_ptr): the writer copies the chunk
 *    into the pair's buffer in its OWN part and release-stores the signal;
 *    the reader polls that word through the mapping and reads (or
 *    combines) the data where it is.  Every byte crosses between the cores
 *    once, and data of up to 120 bytes lies beside the signal word.
 *  - other ranks: weft_put_signal_nb into the buffer in the READER's part,
 *    weft_signal_wait_until there (UCX).
 *
 * Flow control: every pair has, per direction, three rings of buffers
 * used round robin, by the size of the chunk: TINY, entries of 16 bytes
 * (a signal word and up to 8 bytes of data, four to a cache line), SMALL,
 * entries of two lines (a signal word and up to 120 bytes), and BUFS,
 * nbuf buffers of a line (the signal word) and `chunk` bytes.  Small data
 * lies beside its signal word, so that a reader takes one or two lines
 * per chunk, and a stream of tiny ones moves four chunks per line.  The
 * reader raises the writer's acknowledgement word of a ring once it has
 * consumed half of it, and the writer waits for that only before it would
 * overwrite a buffer not yet consumed: a stream of small broadcasts runs
 * up to a ring ahead of its readers.  Both sides count the chunks of each
 * pair and ring in `sent` and `recvd`; since every rank makes the team's
 * collectives in the same order with the same sizes, the counts agree
 * without any exchange.  A buffer's signal word counts its uses, so the
 * k-th chunk of a pair and ring of depth d waits for k / d + 1 in buffer
 * k mod d on either path.
 *
 * Reductions combine in a fixed order (the leader's value, then its
 * members' in level order; at the top level the members' in level order),
 * so every rank of an allreduce gets the same bits, floating point
 * included. */
#include "coll.h"
#include "runtime/runtime.h"

#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Polls of a word a rank of the node writes before the wait falls back
 * on weft_signal_wait_until, which yields the core after a few dozen
 * polls (ranks may outnumber cores) and so costs a scheduler round trip
 * whenever the writer is a little late. */
#define SPINS 4096
#if defined(__x86_64__) || defined(__i386__)
#define CPU_RELAX() __builtin_ia32_pause()
#else
#define CPU_RELAX() ((void)0)
#endif

typedef struct {
    int  n;         /* members of this level; 0 when the rank is not in it */
    int  me;        /* the rank's position among them; 0 is the leader */
    int *member;    /* [n] team ranks, in the level's order */
} level_t;

struct weft__os {
    weft__team_scratch_t sc;
    weft_ep_t    ep;
    int          rank, size;
    int         *ctx_rank;   /* [size] */
    int          nlevels;
    level_t     *lv;         /* [nlevels] */
    uint64_t    *sent;       /* [NRINGS size] chunks written to each rank's rings */
    uint64_t    *recvd;      /* [NRINGS size] chunks of each rank's rings consumed here */
    uint64_t    *acked;      /* [NRINGS size] the last acknowledgement word read of each */
    size_t       chunk;      /* bytes of a buffer of the BUFS ring */
    uint64_t     nbufs;      /* buffers of the BUFS ring used: a power of two */
    char       **mapped;     /* [size] the rank's slot mapped here (weft_ptr), or NULL */
    int          usable;     /* 0: the team runs the MPI path (see os_build) */
    char        *tmp;        /* a chunk: partial results of a reduce */
};

/* ---- the slot --------------------------------------------------------------- */

/* The rings of a pair and direction, in this order in the pair's room:
 * TINY and SMALL, 3 KiB, then BUFS, nbuf buffers of a line and s->chunk
 * bytes (256 in the smallest slots that team.c makes, 64 KiB less 768
 * bytes in the largest).  An entry is its signal word, then the data. */
enum { BUFS, SMALL, TINY, NRINGS };
static const struct {
    size_t   entry, max;   /* bytes of an entry, and of the data it takes */
    uint64_t depth;        /* entries */
} rings[NRINGS] = {
    [TINY] = {16, 8, 64},
    [SMALL] = {2 * WEFT__TEAM_LINE, 2 * WEFT__TEAM_LINE - sizeof(uint64_t), 16},
};
#define SMALL_ROOM \
    (rings[TINY].entry * rings[TINY].depth + rings[SMALL].entry * rings[SMALL].depth)

static int ring_of(size_t len)
{
    return len <= rings[TINY].max ? TINY : len <= rings[SMALL].max ? SMALL : BUFS;
}

static uint64_t depth(const weft__os_t *s, int ring)
{
    return ring == BUFS ? s->nbufs : rings[ring].depth;
}

/* Every depth is a power of two, so that the position and the lap of a
 * chunk in its ring are a mask and a shift, not divisions (a few dozen
 * cycles each, as much as the rest of a small chunk's hop). */
static uint64_t lap(const weft__os_t *s, int ring, uint64_t seq)
{
    return seq >> __builtin_ctzll(depth(s, ring));
}

/* Copy the data of a chunk of a small ring (up to 120 bytes) in words,
 * inline: a call of memcpy costs as much as the rest of a tiny chunk's
 * hop.  The last word overlaps the one before it when len is not a
 * multiple of 8; d and s do not overlap. */
static void copy_small(char *d, const char *s, size_t len)
{
    if (len < sizeof(uint64_t)) {
        for (size_t i = 0; i < len; i++)
            d[i] = s[i];
        return;
    }
    for (size_t i = 0; i + sizeof(uint64_t) < len; i += sizeof(uint64_t))
        memcpy(d + i, s + i, sizeof(uint64_t));
    memcpy(d + len - sizeof(uint64_t), s + len - sizeof(uint64_t), sizeof(uint64_t));
}

/* The acknowledgement word of a ring that reader raises, in the writer's
 * part: the reader's line, one word per ring. */
static size_t ack_off(const weft__os_t *s, int reader, int ring)
{
    return s->sc.off + (size_t)reader * WEFT__TEAM_LINE + (size_t)ring * sizeof(uint64_t);
}

/* Buffer seq of a ring of the pair (this rank, peer), in whichever part
 * holds it: its signal word; the data follows at data_at(ring). */
static size_t buf_off(const weft__os_t *s, int peer, int ring, uint64_t seq)
{
    size_t pair = s->sc.off + (size_t)s->sc.nranks * WEFT__TEAM_LINE +
                  (size_t)peer * (size_t)s->sc.nbuf * (WEFT__TEAM_LINE + s->sc.chunk);

    if (ring == TINY)
        return pair + (size_t)(seq % rings[TINY].depth) * rings[TINY].entry;
    pair += rings[TINY].entry * rings[TINY].depth;
    if (ring == SMALL)
        return pair + (size_t)(seq % rings[SMALL].depth) * rings[SMALL].entry;
    return pair + rings[SMALL].entry * rings[SMALL].depth +
           (size_t)(seq & (s->nbufs - 1)) * (WEFT__TEAM_LINE + s->chunk);
}

static size_t data_at(int ring) { return ring == BUFS ? WEFT__TEAM_LINE : sizeof(uint64_t); }

/* ---- state ------------------------------------------------------------------- */

static void os_free(void *p)
{
    weft__os_t *s = p;

    if (!s)
        return;
    for (int l = 0; s->lv && l < s->nlevels; l++)
        free(s->lv[l].member);
    free(s->lv);
    free(s->ctx_rank);
    free(s->sent);
    free(s->recvd);
    free(s->acked);
    free(s->mapped);
    free(s->tmp);
    free(s);
}

/* Team ranks of the members of every level this rank is in, and context
 * ranks of every team rank.  Local, once the hierarchy exists. */
/* Local: the state's arrays, context ranks, mappings and levels; 0 when
 * memory ran out (s is then partly filled, for os_free). */
static int os_fill(weft__os_t *s, const weft__team_scratch_t *sc, MPI_Comm comm, weft__hier_t *h,
                   int *usable)
{
    MPI_Group tg, cg;
    int      *idx = malloc(sizeof(int) * (size_t)h->size), ok;

    s->sc = *sc;
    s->rank = h->rank;
    s->size = h->size;
    s->nlevels = h->nlevels;
    /* A pair's room, less the small rings, cut into nbuf buffers of a
     * line and a whole number of lines. */
    s->chunk = (((size_t)sc->nbuf * (WEFT__TEAM_LINE + sc->chunk) - SMALL_ROOM) /
                    (size_t)sc->nbuf -
                WEFT__TEAM_LINE) &
               ~(size_t)(WEFT__TEAM_LINE - 1);
    for (s->nbufs = 1; s->nbufs * 2 <= (uint64_t)sc->nbuf; s->nbufs *= 2)
        ;
    s->ctx_rank = malloc(sizeof(int) * (size_t)h->size);
    s->sent = calloc(NRINGS * (size_t)h->size, sizeof(uint64_t));
    s->recvd = calloc(NRINGS * (size_t)h->size, sizeof(uint64_t));
    s->mapped = calloc((size_t)h->size, sizeof(char *));
    s->acked = calloc(NRINGS * (size_t)h->size, sizeof(uint64_t));
    s->tmp = malloc(s->chunk);
    s->lv = calloc((size_t)(h->nlevels ? h->nlevels : 1), sizeof(level_t));
    ok = s->ctx_rank && s->sent && s->recvd && s->mapped && s->acked && s->tmp && s->lv && idx &&
         (s->ep = sc->ep) != NULL;
    if (!ok) {
        free(idx);
        return 0;
    }
    for (int i = 0; i < h->size; i++)
        idx[i] = i;
    MPI_Comm_group(comm, &tg);
    MPI_Comm_group(weft__ctx_comm(sc->ctx), &cg);
    MPI_Group_translate_ranks(tg, h->size, idx, cg, s->ctx_rank);
    /* Ranks of the node (and this one): loads and stores, no call. */
    *usable = 1;
    for (int i = 0; i < h->size; i++) {
        void *p;
        if (weft_ptr(sc->ctx, s->ctx_rank[i], sc->seg, sc->off, &p) == WEFT_OK)
            s->mapped[i] = p;
        else
            *usable = 0;
    }
    for (int l = 0; l < h->nlevels && ok; l++) {
        MPI_Group lg;
        level_t  *lv = &s->lv[l];

        if (h->up[l] == MPI_COMM_NULL)
            continue;
        MPI_Comm_size(h->up[l], &lv->n);
        lv->me = h->uprank[l];
        if (!(lv->member = malloc(sizeof(int) * (size_t)lv->n))) {
            ok = 0;
            break;
        }
        MPI_Comm_group(h->up[l], &lg);
        MPI_Group_translate_ranks(lg, lv->n, idx, tg, lv->member);
        MPI_Group_free(&lg);
    }
    MPI_Group_free(&tg);
    MPI_Group_free(&cg);
    free(idx);
    return ok;
}

/* Collective over the team (its first collective).  Every rank returns
 * the same: the state (usable or not), or WEFT_ERR_UNSUPPORTED with no
 * state anywhere when memory ran out on some rank (that call then takes
 * the MPI path, and the next one tries again). */
static weft_status_t os_build(weft_team_t team, const weft__team_scratch_t *sc, MPI_Comm comm,
                              weft__hier_t *h, weft__os_t **out)
{
    weft__os_t *s = calloc(1, sizeof(*s));
    int         agree[2] = {0, 0};   /* memory everywhere, one-sided usable */

    if (s)
        agree[0] = os_fill(s, sc, comm, h, &agree[1]);
    /* A hop through UCX completes only while its target progresses, also
     * after the target has seen the signal and left the collective (the
     * put's acknowledgement, a connection's wireup): without a progress
     * thread, a rank in MPI or computing would hold up the writer.  So a
     * team with a rank off the node runs the one-sided path only with the
     * progress thread (WEFT_PROGRESS_THREAD=1), and the MPI path otherwise.
     * Agreed over the team (mappings are per node, so ranks could differ). */
    agree[1] |= sc->ctx->cfg.progress_thread != 0;
    MPI_Allreduce(MPI_IN_PLACE, agree, 2, MPI_INT, MPI_MIN, comm);
    if (!agree[0]) {
        os_free(s);
        return WEFT_ERR_UNSUPPORTED;
    }
    s->usable = agree[1];
    *out = s;
    weft__team_state_set(team, s, os_free);
    return WEFT_OK;
}

weft_status_t weft__os_get(weft_team_t team, MPI_Comm comm, weft__hier_t *h, weft__os_t **os)
{
    weft__team_scratch_t sc;
    weft_status_t        st = WEFT_OK;

    if ((*os = weft__team_state(team)) == NULL) {
        if (weft__team_scratch(team, &sc) != WEFT_OK)
            return WEFT_ERR_UNSUPPORTED;
        st = os_build(team, &sc, comm, h, os);
    }
    return st == WEFT_OK && !(*os)->usable ? WEFT_ERR_UNSUPPORTED : st;
}

/* ---- hops ---------------------------------------------------------------------- */

/* Wait until the word at w (written by team rank `writer` only) is at
 * least value, polling first when the writer is on the node.  A word in
 * our part (off) is then waited for by weft_signal_wait_until; a word in
 * the writer's part (off is SIZE_MAX) by polling that progresses our
 * endpoint, yields the core, and gives up when the writer has failed. */
static weft_status_t wait_word(weft__os_t *s, int writer, const uint64_t *w, size_t off,
                               uint64_t value)
{
    for (;;) {
        if (s->mapped[writer])
            for (int i = 0; i < SPINS; i++) {
                if (__atomic_load_n(w, __ATOMIC_ACQUIRE) >= value)
                    return WEFT_OK;
                CPU_RELAX();
            }
        if (off != SIZE_MAX)
            return weft_signal_wait_until(s->ep, s->sc.seg, off, value, NULL);
        int           failed = 0;
        weft_status_t st = weft_rank_failed(s->sc.ctx, s->ctx_rank[writer], &failed);
        if (st == WEFT_OK && failed)
            st = weft__error(WEFT_ERR_PEER_FAILED, "weft_team collective",
                             "team rank %d (rank %d) failed", writer, s->ctx_rank[writer]);
        if (st == WEFT_OK)
            st = weft_progress(s->ep, NULL);
        if (st != WEFT_OK)
            return st;
        sched_yield();
    }
}

static uint64_t *local_word(const weft__os_t *s, size_t off)
{
    return (uint64_t *)(void *)(s->sc.local + (off - s->sc.off));
}

/* The writer may reuse buffer seq of a ring of depth d once the reader
 * has consumed chunk seq - d: the acknowledgement word is read only when
 * the last value read is not enough. */
static weft_status_t wait_room(weft__os_t *s, int x, int ring, uint64_t seq)
{
    uint64_t  d = depth(s, ring), need = seq + 1 - d;
    uint64_t *acked = &s->acked[NRINGS * x + ring];
    size_t    off = ack_off(s, x, ring);

    if (seq < d || *acked >= need)
        return WEFT_OK;
    weft_status_t st = wait_word(s, x, local_word(s, off), off, need);
    if (st == WEFT_OK)
        *acked = __atomic_load_n(local_word(s, off), __ATOMIC_ACQUIRE);
    return st;
}

/* Send len bytes of src to team rank x as our next chunk to it; returns
 * once src may be reused.  Through UCX, the put and its signal are waited
 * for: with the progress thread that os_build asks for, x's side of it
 * (and of the connection, made on first use) needs no weft call of x. */
static weft_status_t put_chunk(weft__os_t *s, int x, const void *src, size_t len)
{
    int           ring = ring_of(len);
    uint64_t      seq = s->sent[NRINGS * x + ring];
    weft_status_t st;

    if ((st = wait_room(s, x, ring, seq)) != WEFT_OK)
        return st;
    s->sent[NRINGS * x + ring]++;
    if (s->mapped[x]) {
        uint64_t *sig = local_word(s, buf_off(s, x, ring, seq));
        if (ring != BUFS)
            copy_small((char *)sig + data_at(ring), src, len);
        else
            memcpy((char *)sig + data_at(ring), src, len);
        __atomic_store_n(sig, lap(s, ring, seq) + 1, __ATOMIC_RELEASE);
        return WEFT_OK;
    }
    size_t       off = buf_off(s, s->rank, ring, seq);
    weft_event_t ev;
    if ((st = weft_put_signal_nb(s->ep, s->ctx_rank[x], s->sc.seg, off + data_at(ring), src, len,
                                 s->sc.seg, off, 1, &ev)) != WEFT_OK)
        return st;
    return ev == WEFT_EVENT_NULL ? WEFT_OK : weft_wait(&ev);
}

/* Wait for team rank m's next chunk of len bytes; *data points at it (in
 * m's part when m is on the node) until release(m). */
static weft_status_t get_chunk(weft__os_t *s, int m, size_t len, const char **data)
{
    int           ring = ring_of(len);
    uint64_t      seq = s->recvd[NRINGS * m + ring];
    size_t        off = buf_off(s, m, ring, seq);
    const char   *sig = s->mapped[m] ? s->mapped[m] + (buf_off(s, s->rank, ring, seq) - s->sc.off)
                                     : (const char *)local_word(s, off);
    weft_status_t st = wait_word(s, m, (const uint64_t *)(const void *)sig,
                                 s->mapped[m] ? SIZE_MAX : off, lap(s, ring, seq) + 1);

    if (st != WEFT_OK)
        return st;
    *data = sig + data_at(ring);
    /* A stream of tiny chunks: fetch the next line while this one is
     * used, so that a reader running behind takes its misses in parallel. */
    if (ring == TINY && s->mapped[m])
        __builtin_prefetch(s->mapped[m] + (buf_off(s, s->rank, ring,
                                                   seq + WEFT__TEAM_LINE / rings[TINY].entry) -
                                           s->sc.off));
    return st;
}

/* Hand m's buffer of a chunk of len bytes back: raise our acknowledgement
 * word of its ring at m, once every half ring (m, which may run a ring
 * ahead, then still finds a free buffer whenever we have consumed what it
 * sent; few stores cross between the cores).  A release store where m is
 * on the node; else an add through UCX that nothing waits for here, since
 * m may have left the collective already: m waits for it, progressing,
 * when it needs it. */
static weft_status_t release(weft__os_t *s, int m, size_t len)
{
    int       ring = ring_of(len);
    size_t    off = ack_off(s, s->rank, ring);
    uint64_t  every = depth(s, ring) / 2 > 0 ? depth(s, ring) / 2 : 1;
    uint64_t *recvd = &s->recvd[NRINGS * m + ring];

    if ((++*recvd & (every - 1)) != 0)
        return WEFT_OK;
    if (s->mapped[m]) {
        __atomic_store_n((uint64_t *)(void *)(s->mapped[m] + (off - s->sc.off)), *recvd,
                         __ATOMIC_RELEASE);
        return WEFT_OK;
    }
    return weft_atomic_add_nbi(s->ep, s->ctx_rank[m], s->sc.seg, off, every);
}

static weft_status_t recv_copy(weft__os_t *s, int m, void *dst, size_t len)
{
    const char   *data;
    weft_status_t st = get_chunk(s, m, len, &data);

    if (st != WEFT_OK)
        return st;
    if (dst != data && ring_of(len) != BUFS)
        copy_small(dst, data, len);
    else if (dst != data && len)
        memcpy(dst, data, len);
    return release(s, m, len);
}

/* ---- reduction kernels ------------------------------------------------------- */

/* Sums and products a block of VEC_BYTES at a time, in vectors of U (GCC's
 * and Clang's vector extension): the same operation on every element as
 * the scalar loop, so the same bits, but several elements per instruction
 * where the compiler, at -O2, would not vectorise the loop itself (d may
 * be a or b).  Loads and stores go through memcpy: the buffers need no
 * alignment. */
#define VEC_BYTES 32
#define KERNEL(T, U)                                                                   \
    typedef U vec_##T __attribute__((vector_size(VEC_BYTES)));                         \
    static void combine_##T(T *d, const T *a, const T *b, size_t n, weft_op_t op)      \
    {                                                                                  \
        size_t i = 0;                                                                  \
        vec_##T x, y;                                                                  \
        switch (op) {                                                                  \
        case WEFT_OP_SUM:                                                              \
            for (; i + VEC_BYTES / sizeof(T) <= n; i += VEC_BYTES / sizeof(T)) {       \
                memcpy(&x, a + i, VEC_BYTES);                                          \
                memcpy(&y, b + i, VEC_BYTES);                                          \
                x = x + y;                                                             \
                memcpy(d + i, &x, VEC_BYTES);                                          \
            }                                                                          \
            for (; i < n; i++)                                                         \
                d[i] = (T)((U)a[i] + (U)b[i]);                                         \
            break;                                                                     \
        case WEFT_OP_PROD:                                                             \
            for (; i + VEC_BYTES / sizeof(T) <= n; i += VEC_BYTES / sizeof(T)) {       \
                memcpy(&x, a + i, VEC_BYTES);                                          \
                memcpy(&y, b + i, VEC_BYTES);                                          \
                x = x * y;                                                             \
                memcpy(d + i, &x, VEC_BYTES);                                          \
            }                                                                          \
            for (; i < n; i++)                                                         \
                d[i] = (T)((U)a[i] * (U)b[i]);                                         \
            break;                                                                     \
        case WEFT_OP_MIN:                                                              \
            for (size_t i = 0; i < n; i++)                                             \
                d[i] = b[i] < a[i] ? b[i] : a[i];                                      \
            break;                                                                     \
        case WEFT_OP_MAX:                                                              \
            for (size_t i = 0; i < n; i++)                                             \
                d[i] = b[i] > a[i] ? b[i] : a[i];                                      \
            break;                                                                     \
        default:                                                                       \
            combine_bits_##T(d, a, b, n, op);                                          \
        }                                                                              \
    }

/* Bitwise operations, on integer types only (the caller checks). */
#define BITS(T)                                                                        \
    static void combine_bits_##T(T *d, const T *a, const T *b, size_t n, weft_op_t op) \
    {                                                                                  \
        for (size_t i = 0; i < n; i++)                                                 \
            d[i] = op == WEFT_OP_BAND ? (T)(a[i] & b[i])                               \
                 : op == WEFT_OP_BOR  ? (T)(a[i] | b[i])                               \
                                      : (T)(a[i] ^ b[i]);                              \
    }
#define NOBITS(T)                                                                      \
    static void combine_bits_##T(T *d, const T *a, const T *b, size_t n, weft_op_t op) \
    {                                                                                  \
        (void)d, (void)a, (void)b, (void)n, (void)op;                                  \
    }

BITS(int32_t)
BITS(int64_t)
BITS(uint32_t)
BITS(uint64_t)
NOBITS(float)
NOBITS(double)
/* Signed sums and products wrap as the unsigned ones do, as MPI's do in
 * practice, instead of overflowing into undefined behaviour. */
KERNEL(int32_t, uint32_t)
KERNEL(int64_t, uint64_t)
KERNEL(uint32_t, uint32_t)
KERNEL(uint64_t, uint64_t)
KERNEL(float, float)
KERNEL(double, double)

/* d = a op b, elementwise; d may be a or b. */
void weft__coll_combine(void *d, const void *a, const void *b, size_t n, weft_type_t t,
                        weft_op_t op)
{
    switch (t) {
    case WEFT_TYPE_INT32: combine_int32_t(d, a, b, n, op); break;
    case WEFT_TYPE_INT64: combine_int64_t(d, a, b, n, op); break;
    case WEFT_TYPE_UINT32: combine_uint32_t(d, a, b, n, op); break;
    case WEFT_TYPE_UINT64: combine_uint64_t(d, a, b, n, op); break;
    case WEFT_TYPE_FLOAT: combine_float(d, a, b, n, op); break;
    case WEFT_TYPE_DOUBLE: combine_double(d, a, b, n, op); break;
    default: break;
    }
}

const size_t weft__coll_type_size[WEFT_TYPE_DOUBLE + 1] = {
    [WEFT_TYPE_BYTE] = 1,   [WEFT_TYPE_INT32] = 4,  [WEFT_TYPE_INT64] = 8,
    [WEFT_TYPE_UINT32] = 4, [WEFT_TYPE_UINT64] = 8, [WEFT_TYPE_FLOAT] = 4,
    [WEFT_TYPE_DOUBLE] = 8,
};

/* ---- the collectives ------------------------------------------------------------- */

/* The chunks of count elements: a whole number of elements each (element
 * sizes are powers of two: a shift, not a division, on every call). */
static size_t chunk_elems(const weft__os_t *s, weft_type_t t)
{
    return s->chunk >> __builtin_ctzll(weft__coll_type_size[t]);
}

/* Top down: a member takes each chunk from its leader, a leader passes it
 * on to its members; a root other than 0 first hands it to rank 0. */
weft_status_t weft__os_bcast(weft__os_t *s, void *buf, size_t count, weft_type_t t, int root)
{
    size_t        es = weft__coll_type_size[t], per = chunk_elems(s, t);
    weft_status_t st = WEFT_OK;

    for (size_t first = 0; first < count && st == WEFT_OK; first += per) {
        size_t len = (count - first < per ? count - first : per) * es;
        char  *p = (char *)buf + first * es;

        if (root != 0 && s->rank == root)
            st = put_chunk(s, 0, p, len);
        else if (root != 0 && s->rank == 0)
            st = recv_copy(s, root, p, len);
        for (int l = 0; l < s->nlevels && st == WEFT_OK; l++) {
            const level_t *lv = &s->lv[l];
            if (lv->n == 0)
                continue;
            if (lv->me != 0) {
                st = recv_copy(s, lv->member[0], p, len);
                continue;
            }
            for (int i = 1; i < lv->n && st == WEFT_OK; i++)
                st = put_chunk(s, lv->member[i], p, len);
        }
    }
    return st;
}

/* Bottom up from level `top`: at each level it leads, the rank combines
 * its members' chunks into acc (starting from *have); at the level where
 * it is a member it sends *have to its leader and stops.  *have ends as
 * the rank's partial result; *sent_at is the level it sent at, or -1. */
static weft_status_t up(weft__os_t *s, int top, const char **have, char *acc, size_t n,
                        weft_type_t t, weft_op_t op, int *sent_at)
{
    size_t        len = n * weft__coll_type_size[t];
    weft_status_t st;

    *sent_at = -1;
    for (int l = s->nlevels - 1; l >= top; l--) {
        const level_t *lv = &s->lv[l];
        if (lv->n == 0)
            continue;
        if (lv->me != 0) {
            *sent_at = l;
            return put_chunk(s, lv->member[0], *have, len);
        }
        for (int i = 1; i < lv->n; i++) {
            const char *data;
            if ((st = get_chunk(s, lv->member[i], len, &data)) != WEFT_OK)
                return st;
            weft__coll_combine(acc, *have, data, n, t, op);
            *have = acc;
            if ((st = release(s, lv->member[i], len)) != WEFT_OK)
                return st;
        }
    }
    return WEFT_OK;
}

weft_status_t weft__os_reduce(weft__os_t *s, const void *src, void *dst, size_t count,
                              weft_type_t t, weft_op_t op, int root)
{
    size_t        es = weft__coll_type_size[t], per = chunk_elems(s, t);
    weft_status_t st = WEFT_OK;

    for (size_t first = 0; first < count && st == WEFT_OK; first += per) {
        size_t      n = count - first < per ? count - first : per, len = n * es;
        const char *have = (const char *)src + first * es;
        char       *out = s->rank == root ? (char *)dst + first * es : NULL;
        /* Rank 0 combines straight into the result when it is the root. */
        char       *acc = s->rank == 0 && root == 0 ? out : s->tmp;
        int         sent_at;

        if ((st = up(s, 0, &have, acc, n, t, op, &sent_at)) != WEFT_OK)
            break;
        if (root != 0 && s->rank == 0)
            st = put_chunk(s, root, have, len);
        else if (root != 0 && s->rank == root)
            st = recv_copy(s, 0, out, len);
        else if (s->rank == root && have != out)
            memcpy(out, have, len);
    }
    return st;
}

/* Up to the top level, where its members exchange their partial results
 * and each combines them all in level order; then down. */
weft_status_t weft__os_allreduce(weft__os_t *s, const void *src, void *dst, size_t count,
                                 weft_type_t t, weft_op_t op)
{
    size_t        es = weft__coll_type_size[t], per = chunk_elems(s, t);
    weft_status_t st = WEFT_OK;
    size_t        chunks = count <= per ? 1 : (count + per - 1) / per;   /* a barrier has one */

    for (size_t c = 0; c < chunks && st == WEFT_OK; c++) {
        size_t         first = c * per;
        size_t         n = count - first < per ? count - first : per, len = n * es;
        const char    *have = (const char *)src + first * es;
        char          *acc = (char *)dst + first * es;
        const level_t *top = &s->lv[0];
        int            sent_at;

        if ((st = up(s, 1, &have, acc, n, t, op, &sent_at)) != WEFT_OK)
            break;
        if (sent_at < 0 && top->n > 1) {
            for (int i = 0; i < top->n && st == WEFT_OK; i++)
                if (i != top->me)
                    st = put_chunk(s, top->member[i], have, len);
            /* The first combine (of members 0 and 1) writes acc, with no
             * copy before it: keep our own value apart when it lives
             * there and is needed later (member 2 on). */
            if (st == WEFT_OK && have == acc && top->me > 1 && len) {
                memcpy(s->tmp, have, len);
                have = s->tmp;
            }
            const char *first = NULL;
            for (int i = 0; i < top->n && st == WEFT_OK; i++) {
                const char *v = have;
                if (i != top->me && (st = get_chunk(s, top->member[i], len, &v)) != WEFT_OK)
                    break;
                if (i == 0)
                    first = v;
                else
                    weft__coll_combine(acc, i == 1 ? first : acc, v, n, t, op);
            }
            for (int i = 0; i < top->n && st == WEFT_OK; i++)
                if (i != top->me)
                    st = release(s, top->member[i], len);
        } else if (sent_at < 0 && have != acc && len) {
            memcpy(acc, have, len);
        }
        for (int l = sent_at < 0 ? 1 : sent_at; l < s->nlevels && st == WEFT_OK; l++) {
            const level_t *lv = &s->lv[l];
            if (lv->n == 0)
                continue;
            if (lv->me != 0) {
                st = recv_copy(s, lv->member[0], acc, len);
                continue;
            }
            for (int i = 1; i < lv->n && st == WEFT_OK; i++)
                st = put_chunk(s, lv->member[i], acc, len);
        }
    }
    return st;
}

/* An allreduce of nothing: signals up, across the top and down. */
weft_status_t weft__os_barrier(weft__os_t *s)
{
    int32_t none = 0;

    return weft__os_allreduce(s, &none, &none, 0, WEFT_TYPE_INT32, WEFT_OP_SUM);
}

int weft__os_usable_size(const weft__os_t *s)
{
    return s != NULL && s->usable ? s->size : 0;
}

int weft__os_ready_size(weft_team_t team)
{
    const weft__os_t *s = weft__team_state(team);

    return s != NULL && s->usable ? s->size : 0;
}

int weft__os_active(weft_team_t team)
{
    const weft__os_t *s = weft__team_state(team);

    return s != NULL && s->usable;
}

size_t weft__os_chunk_bytes(weft_team_t team)
{
    const weft__os_t *s = weft__team_state(team);

    return s != NULL ? s->chunk : 0;
}
