/*
 * weft_inline.h -- the inline direct path of weft's small one-sided
 * operations.  Included by weft.h; do not include it alone.
 *
 * A put, get or 64-bit atomic of a size known at compile time (at most
 * WEFT_INLINE_MAX bytes) to a rank whose part of the segment is mapped in
 * this process (the direct path, docs/direct-path.md) is done here, in the
 * caller's code: a few compares of fields of the endpoint and the segment,
 * then the load, store or atomic instruction itself.  Anything else -- a
 * size known only at run time, a larger one, a rank reached through UCX,
 * bad input, WEFT_CHECK=1, a selected trace point, any rank failure known
 * to the context, a destroyed endpoint -- calls the exported library function of the same name,
 * which does everything the call documents (weft.h).  So a program sees the
 * same results and errors with the inline path as without it; only time
 * differs.
 *
 * The calls keep their names: weft_put_nbi(...) and the others below are
 * function-like macros that expand to the inline forms.  The exported
 * symbols stay (for `(weft_put_nbi)(...)`, function pointers and programs
 * built without this header).  Define WEFT_NO_INLINE before including
 * weft.h to call the library every time.
 *
 * The fields read here are a prefix of weft's endpoint and segment,
 * described by struct weft_inline_ep and struct weft_inline_seg, layout
 * WEFT_INLINE_LAYOUT.  The library checks at compile time that its
 * structures begin with them, and every program built with this header
 * refers to the symbol weft_inline_layout_v<N>: a library of another
 * layout does not define it, so the program fails to load instead of
 * reading the wrong fields.  A change of these structures is a new layout
 * number; while weft's version is 0.x its soname stays libweft.so.0, and
 * that symbol alone keeps a program and a library of different layouts
 * apart (from 1.0 a new layout is a new major version and soname).
 */
#ifndef WEFT_INLINE_H
#define WEFT_INLINE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The version of the layout below. */
#define WEFT_INLINE_LAYOUT 4

/** The largest size, in bytes, that the inline path puts or gets. */
#define WEFT_INLINE_MAX 64

/* The two structures are used only here (read, and the endpoint's
 * touched[rank], stamped and near target written): a program has no other access to the
 * library's endpoint and segment.  So they need no may_alias (only the
 * one 8-byte load of gate and flush epoch together, weft__inline_word_of,
 * reads them through a may_alias type), and their
 * fields' types tell the compiler that a store of the program's data (a
 * double or a float, below) changes none of them: it need not reload them
 * after it (the library call of a miss, which may change them, still
 * makes a loop of operations reload them on every call).  This
 * holds while the library's own code, which writes these fields through
 * its struct weft__ep, is not inlined into the program: link libweft as a
 * library (shared or static), not by link-time optimisation together with
 * the program's objects. */

/** What the inline path reads of an endpoint (layout 4): its first fields.
 *  gate and flush_epoch are the two halves of one aligned 8-byte word, which
 *  a kept target reads with one load (weft__inline_word_of). */
struct weft_inline_ep {
    unsigned        gate;      /**< nonzero: every operation calls the library
                                *   (WEFT_CHECK=1, a trace point selected, a rank
                                *   failure known to the context, the endpoint
                                *   destroyed, its flush epoch wrapped) */
    unsigned        flush_epoch; /**< the endpoint's current flush epoch */
    const void     *ctx;       /**< the context */
    unsigned       *touched;   /**< [rank]: the flush epoch of the endpoint's last
                                *   operation to the rank, so that a flush reports
                                *   operations lost to a rank that fails later */
    int             nranks;    /**< ranks of the context */
    int             stamped;   /**< a rank whose stamp is flush_epoch already, or -1:
                                *   an operation to it stores no stamp */
    /* The near target: where the inline accesses of this flush epoch go,
     * so that the next one to it is one compare of each argument.  Written
     * by the inline path when it has checked in full a second access in a
     * row to a mapped rank, or any access to a rank reached through UCX
     * (near_base NULL: the library call at once);
     * emptied by the library whenever stamped is (a flush, a failed rank
     * dropped) and whenever a segment of the context is freed. */
    const void     *near_seg;  /**< its segment handle, or an address that no
                                *   handle (and not NULL) has: none */
    int             near_rank; /**< its rank, stamped in this epoch */
    size_t          near_lim;  /**< the segment's bytes per rank less WEFT_INLINE_MAX:
                                *   an access at an offset up to this fits */
    char           *near_base; /**< the rank's part of the segment, mapped here, or
                                *   NULL: a rank reached through UCX */
};

/** What the inline path reads of a segment (layout 4): its first fields. */
struct weft_inline_seg {
    const void  *live_ctx;     /**< its context while alive, NULL once freed */
    char *const *mapped;       /**< [rank] that rank's part mapped here, or NULL;
                                *   NULL once freed */
    size_t       size;         /**< bytes per rank */
};

/* ---- Kept targets (weft_target_t, declared in weft.h) ------------------ */

/* The library's part of the inline forms, not calls of the API: a target
 * passed and returned by value (so that a program's target never has its
 * address taken by a call and stays in registers), with the status of the
 * call.  weft__target_call does operation op (WEFT__TOP_*) through the
 * library call and, when it succeeded, makes the target current. */
struct weft__target_ret {
    weft_target_t t;
    weft_status_t st;
};
enum {
    WEFT__TOP_PUT_NBI, WEFT__TOP_PUT, WEFT__TOP_GET_NBI, WEFT__TOP_GET,
    WEFT__TOP_ADD_NBI, WEFT__TOP_FETCH_ADD
};
struct weft__target_ret weft__target_make(weft_ep_t ep, int rank, weft_seg_t seg);
struct weft__target_ret weft__target_call(weft_target_t t, int op, size_t off, void *buf, size_t n,
                                          uint64_t value);

/* A kept target's key (weft_target_t): the endpoint's word of gate and
 * flush epoch (struct weft_inline_ep's first two fields, as one 8-byte
 * word in memory order) while the gate is shut and the epoch is epoch.
 * No key is 0: no epoch is. */
static inline uint64_t weft__inline_key(unsigned epoch)
{
    struct {
        unsigned gate, epoch;
    } k = {0u, epoch};
    uint64_t w;

    memcpy(&w, &k, sizeof w);
    return w;
}

#if defined(__GNUC__)
/* The word of gate and flush epoch of the endpoint at ep, with one relaxed
 * atomic load.  Other threads set and clear gate bits with 4-byte atomic
 * operations: an 8-byte load that overlaps them is not defined by C11,
 * but an aligned 8-byte load is one single-copy-atomic read on the
 * 64-bit processors weft runs on (x86-64, aarch64, ppc64le), which sees
 * each half as some write left it -- all the test needs. */
typedef uint64_t weft__inline_u64 __attribute__((may_alias));
static inline __attribute__((always_inline)) uint64_t weft__inline_word_of(const void *ep)
{
    return __atomic_load_n((const weft__inline_u64 *)ep, __ATOMIC_RELAXED);
}
#endif

#if !defined(WEFT_BUILDING) && !defined(WEFT_NO_INLINE) && defined(__GNUC__)

/* A program that uses this layout needs a library that provides it. */
extern const unsigned weft_inline_layout_v4;
__attribute__((used)) static const unsigned *const weft__inline_layout = &weft_inline_layout_v4;
extern const unsigned weft_target_layout_v2;
__attribute__((used)) static const unsigned *const weft__target_layout = &weft_target_layout_v2;

/* Whether an access at (rank, seg, off) of at most WEFT_INLINE_MAX bytes
 * goes to the endpoint's near target -- the offset inside the segment,
 * then the segment and rank of the endpoint's inline accesses of this
 * flush epoch and the gate shut, one branch on the OR of their three
 * compares; earlier accesses made every other test -- and then in *p its
 * mapped address, or
 * NULL when the near target is a rank reached through UCX (the library
 * call, without the complete tests first). */
static inline __attribute__((always_inline)) int
weft__inline_near(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, char **p)
{
    const struct weft_inline_ep *e = (const struct weft_inline_ep *)(const void *)ep;

    if (__builtin_expect(e == NULL, 0))
        return 0;
    /* The offset on a branch of its own: ORing a compare's flag into the
     * others costs two instructions more than the branch, measured slower. */
    if (__builtin_expect(off > e->near_lim, 0))
        return 0;
    if (__builtin_expect((((uintptr_t)e->near_seg ^ (uintptr_t)(const void *)seg) |
                          (uintptr_t)(unsigned)(e->near_rank ^ rank) |
                          (uintptr_t)__atomic_load_n(&e->gate, __ATOMIC_RELAXED)) != 0,
                         0))
        return 0;
    *p = __builtin_expect(e->near_base != (char *)0, 1) ? e->near_base + off : (char *)0;
    return 1;
}

/* Make (s, rank) the endpoint's near target, at base (NULL: a rank
 * reached through UCX). */
static inline __attribute__((always_inline)) void
weft__inline_set_near(weft_ep_t ep, const struct weft_inline_seg *s, int rank, char *base)
{
    struct weft_inline_ep *w = (struct weft_inline_ep *)(void *)ep;

    w->near_seg = s;
    w->near_rank = rank;
    w->near_lim = s->size - WEFT_INLINE_MAX;
    w->near_base = base;
}

/* The mapped address of n bytes at (rank, seg, off), or NULL when the
 * library must do the operation, after the complete tests (a pass that is
 * the second in a row to its rank makes it the endpoint's near target).
 * The tests kept are those that keep the access inside memory this
 * process maps: the handles not NULL, a live
 * segment of ep's context (a segment of another context has a table of
 * another length; a freed one has no table), a rank of the context mapped
 * here, the access inside the segment.  Everything the library alone does
 * is behind the gate: WEFT_CHECK=1 (which validates everything else), a
 * trace point, a rank failure known to the context, a destroyed endpoint.
 * The handles stay readable after weft_seg_free and weft_finalize (weft
 * keeps their shells). */
static inline __attribute__((always_inline)) char *
weft__inline_at(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, size_t n)
{
    const struct weft_inline_ep *e = (const struct weft_inline_ep *)(const void *)ep;
    const struct weft_inline_seg *s = (const struct weft_inline_seg *)(const void *)seg;
    char *const *mapped;
    char *base;

    if (__builtin_expect(e == NULL || s == NULL, 0))
        return (char *)0;
    if (__builtin_expect(s->live_ctx != e->ctx || (unsigned)rank >= (unsigned)e->nranks, 0))
        return (char *)0;
    /* First whether rank is mapped here at all: a rank reached through UCX
     * becomes the near target at once (four stores, against the cost of
     * an operation through UCX), with no mapped address, so that the next
     * operation to it goes to the library after the near test alone; not
     * while the gate is open (a destroyed endpoint keeps none). */
    mapped = s->mapped;
    base = mapped != (char *const *)0 ? mapped[rank] : (char *)0;
    if (base == (char *)0) {
        if (s->size >= WEFT_INLINE_MAX && __atomic_load_n(&e->gate, __ATOMIC_RELAXED) == 0 &&
            (e->near_seg != (const void *)s || e->near_rank != rank))
            weft__inline_set_near(ep, s, rank, (char *)0);
        return (char *)0;
    }
    if (__builtin_expect(__atomic_load_n(&e->gate, __ATOMIC_RELAXED) != 0 || off > s->size ||
                             n > s->size - off,
                         0))
        return (char *)0;
    /* The stamp weft__ep_tgt makes too: a flush after rank fails reports
     * this operation as possibly lost.  Made when rank is not the one the
     * endpoint last stamped in this flush epoch (the library forgets that
     * rank when the epoch moves on), so that a run of operations to one
     * rank costs one load and compare for it and stores nothing. */
    {
        struct weft_inline_ep *w = (struct weft_inline_ep *)(void *)ep;

        /* The second access in a row to a rank makes it the near target:
         * accesses alternating between ranks pay no stores for it. */
        if (rank != w->stamped) {
            w->touched[rank] = w->flush_epoch;
            w->stamped = rank;
        } else if (s->size >= WEFT_INLINE_MAX) {
            weft__inline_set_near(ep, s, rank, base);
        }
    }
    return base + off;
}

/* An 8- or 4-byte access is a double or float load or store, bit for bit:
 * a type that no field above has, so a compiler knows that the store
 * leaves the fields as they were and may keep them in registers across a
 * loop of puts (a char-typed memcpy could be any of them).  The copy of an
 * implicit put or get is only defined at the next weft_flush, a call the
 * compiler cannot see into, so no read of it as another type can be
 * moved before it; a blocking get tells the compiler that its
 * destination's bytes changed (weft__inline_wrote).  Other sizes are
 * memcpy. */
typedef double weft__inline_f64 __attribute__((aligned(1)));
typedef float  weft__inline_f32 __attribute__((aligned(1)));

static inline __attribute__((always_inline)) void
weft__inline_copy(void *dst, const void *src, size_t n)
{
    if (n == 8) {
        double v;

        memcpy(&v, src, 8);
        *(weft__inline_f64 *)dst = v;
    } else if (n == 4) {
        float v;

        memcpy(&v, src, 4);
        *(weft__inline_f32 *)dst = v;
    } else {
        memcpy(dst, src, n);
    }
}

/* The n bytes at dst were written by weft__inline_copy: reads of them
 * after this see the bytes, whatever type they read them as (an empty
 * statement that the compiler must assume rewrote them as chars). */
static inline __attribute__((always_inline)) void weft__inline_wrote(void *dst, size_t n)
{
    if (n == 8)
        __asm__ volatile("" : "+m"(*(char(*)[8])dst));
    else if (n == 4)
        __asm__ volatile("" : "+m"(*(char(*)[4])dst));
}

/* True when the inline path takes an access of n bytes. */
#define WEFT__INLINE_SIZE(n) (__builtin_constant_p(n) && (n) <= WEFT_INLINE_MAX)

/* The mapped address of n bytes at (rank, seg, off), n a size the inline
 * path takes, or NULL: the near target, or else the complete tests. */
static inline __attribute__((always_inline)) char *
weft__inline_find(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, size_t n)
{
    char *p;

    if (__builtin_expect(weft__inline_near(ep, rank, seg, off, &p), 1))
        return p;
    return weft__inline_at(ep, rank, seg, off, n);
}

/* The word of an atomic at (rank, seg, off), or NULL: mapped and 8-aligned. */
static inline __attribute__((always_inline)) uint64_t *
weft__inline_word(weft_ep_t ep, int rank, weft_seg_t seg, size_t off)
{
    char *p;

    if ((p = weft__inline_find(ep, rank, seg, off, sizeof(uint64_t))) == (char *)0)
        return (uint64_t *)0;
    return ((uintptr_t)p & 7u) == 0 ? (uint64_t *)(void *)p : (uint64_t *)0;
}

static inline __attribute__((always_inline)) weft_status_t
weft_inline_put_nbi(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, const void *src,
                    size_t n)
{
    char *p;

    if (WEFT__INLINE_SIZE(n) && src != NULL && (p = weft__inline_find(ep, rank, seg, off, n)) != (char *)0) {
        weft__inline_copy(p, src, n);
        return WEFT_OK;
    }
    return (weft_put_nbi)(ep, rank, seg, off, src, n);
}

static inline __attribute__((always_inline)) weft_status_t
weft_inline_put(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, const void *src, size_t n)
{
    char *p;

    if (WEFT__INLINE_SIZE(n) && src != NULL && (p = weft__inline_find(ep, rank, seg, off, n)) != (char *)0) {
        weft__inline_copy(p, src, n);
        /* visible to a consumer that acquires after the call returns */
        __atomic_thread_fence(__ATOMIC_RELEASE);
        return WEFT_OK;
    }
    return (weft_put)(ep, rank, seg, off, src, n);
}

static inline __attribute__((always_inline)) weft_status_t
weft_inline_get_nbi(weft_ep_t ep, void *dst, int rank, weft_seg_t seg, size_t off, size_t n)
{
    char *p;

    if (WEFT__INLINE_SIZE(n) && dst != NULL && (p = weft__inline_find(ep, rank, seg, off, n)) != (char *)0) {
        weft__inline_copy(dst, p, n);
        return WEFT_OK;
    }
    return (weft_get_nbi)(ep, dst, rank, seg, off, n);
}

static inline __attribute__((always_inline)) weft_status_t
weft_inline_get(weft_ep_t ep, void *dst, int rank, weft_seg_t seg, size_t off, size_t n)
{
    char *p;

    if (WEFT__INLINE_SIZE(n) && dst != NULL && (p = weft__inline_find(ep, rank, seg, off, n)) != (char *)0) {
        weft__inline_copy(dst, p, n);
        weft__inline_wrote(dst, n);
        return WEFT_OK;
    }
    return (weft_get)(ep, dst, rank, seg, off, n);
}

static inline __attribute__((always_inline)) weft_status_t
weft_inline_atomic_add_nbi(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, uint64_t value)
{
    uint64_t *w = weft__inline_word(ep, rank, seg, off);

    if (w != NULL) {
        __atomic_fetch_add(w, value, __ATOMIC_SEQ_CST);
        return WEFT_OK;
    }
    return (weft_atomic_add_nbi)(ep, rank, seg, off, value);
}

static inline __attribute__((always_inline)) weft_status_t
weft_inline_atomic_fetch_add(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, uint64_t value,
                             uint64_t *old)
{
    uint64_t *w = old != NULL ? weft__inline_word(ep, rank, seg, off) : (uint64_t *)0;

    if (w != NULL) {
        *old = __atomic_fetch_add(w, value, __ATOMIC_SEQ_CST);
        return WEFT_OK;
    }
    return (weft_atomic_fetch_add)(ep, rank, seg, off, value, old);
}

/* ---- Kept targets, inline ---------------------------------------------- */

/* Whether t is current: the endpoint's word of gate and flush epoch is
 * t's key -- the gate shut and the epoch t took (no flush, segment free or
 * endpoint destruction since).  t's fields are in registers when t is a
 * local variable, so the test is one load of the endpoint and one compare
 * and branch. */
static inline __attribute__((always_inline)) int weft__target_current(const weft_target_t *t)
{
    return __builtin_expect(weft__inline_word_of(t->check) == t->key, 1);
}

/* When t is not current: whether it becomes current here, without the
 * library -- a target filled on a rank mapped here (its base set, which
 * the library does only together with its check, the endpoint; size 0
 * and no base otherwise), the gate shut, the segment still
 * alive: the endpoint's epoch moved on (a flush), so t takes the new one
 * and stamps its rank with it, as the library's lookup does.  A freed
 * segment, a destroyed endpoint (its gate) and everything behind the gate
 * go to the library. */
static inline __attribute__((always_inline)) int weft__target_renew(weft_target_t *t)
{
    struct weft_inline_ep *w = (struct weft_inline_ep *)(void *)t->ep;
    const struct weft_inline_seg *s = (const struct weft_inline_seg *)(const void *)t->seg;
    uint64_t key;

    if (t->base == (char *)0 || s->live_ctx != w->ctx)
        return 0;
    /* flush_epoch is the owner's (this thread's); the gate is anybody's */
    key = weft__inline_key(w->flush_epoch);
    if (weft__inline_word_of(w) != key)  /* the gate set */
        return 0;
    w->touched[t->rank] = w->flush_epoch;
    t->key = key;
    return 1;
}

/* Whether an access of n bytes at off through t runs inline, at t->base +
 * off: the access inside the part (a branch of its own, which measured
 * faster than ORing the compare's flag into the others), and t current or
 * made current here.  A target with no mapped part (size 0, key 0, no
 * base) passes no test but the first. */
#define WEFT__TARGET_HERE(t, off, n)                           \
    (__builtin_expect((off) <= (t)->size - (n), 1) &&          \
     (weft__target_current(t) || __builtin_expect(weft__target_renew(t), 1)))

/* The library call of op, which makes *t current again. */
static inline __attribute__((always_inline)) weft_status_t
weft__target_lib(weft_target_t *t, int op, size_t off, void *buf, size_t n, uint64_t value)
{
    struct weft__target_ret r = weft__target_call(*t, op, off, buf, n, value);

    *t = r.t;
    return r.st;
}

static inline __attribute__((always_inline)) weft_status_t
weft_inline_target_init(weft_ep_t ep, int rank, weft_seg_t seg, weft_target_t *t)
{
    struct weft__target_ret r;

    if (t == NULL)
        return (weft_target_init)(ep, rank, seg, t);
    r = weft__target_make(ep, rank, seg);
    *t = r.t;
    return r.st;
}

static inline __attribute__((always_inline)) weft_status_t
weft_inline_target_put_nbi(weft_target_t *t, size_t off, const void *src, size_t n)
{
    if (t == NULL)
        return (weft_target_put_nbi)(t, off, src, n);
    if (WEFT__INLINE_SIZE(n) && src != NULL && WEFT__TARGET_HERE(t, off, n)) {
        weft__inline_copy(t->base + off, src, n);
        return WEFT_OK;
    }
    return weft__target_lib(t, WEFT__TOP_PUT_NBI, off, (void *)(uintptr_t)src, n, 0);
}

static inline __attribute__((always_inline)) weft_status_t
weft_inline_target_put(weft_target_t *t, size_t off, const void *src, size_t n)
{
    if (t == NULL)
        return (weft_target_put)(t, off, src, n);
    if (WEFT__INLINE_SIZE(n) && src != NULL && WEFT__TARGET_HERE(t, off, n)) {
        weft__inline_copy(t->base + off, src, n);
        __atomic_thread_fence(__ATOMIC_RELEASE);
        return WEFT_OK;
    }
    return weft__target_lib(t, WEFT__TOP_PUT, off, (void *)(uintptr_t)src, n, 0);
}

static inline __attribute__((always_inline)) weft_status_t
weft_inline_target_get_nbi(weft_target_t *t, void *dst, size_t off, size_t n)
{
    if (t == NULL)
        return (weft_target_get_nbi)(t, dst, off, n);
    if (WEFT__INLINE_SIZE(n) && dst != NULL && WEFT__TARGET_HERE(t, off, n)) {
        weft__inline_copy(dst, t->base + off, n);
        return WEFT_OK;
    }
    return weft__target_lib(t, WEFT__TOP_GET_NBI, off, dst, n, 0);
}

static inline __attribute__((always_inline)) weft_status_t
weft_inline_target_get(weft_target_t *t, void *dst, size_t off, size_t n)
{
    if (t == NULL)
        return (weft_target_get)(t, dst, off, n);
    if (WEFT__INLINE_SIZE(n) && dst != NULL && WEFT__TARGET_HERE(t, off, n)) {
        weft__inline_copy(dst, t->base + off, n);
        weft__inline_wrote(dst, n);
        return WEFT_OK;
    }
    return weft__target_lib(t, WEFT__TOP_GET, off, dst, n, 0);
}

static inline __attribute__((always_inline)) weft_status_t
weft_inline_target_atomic_add_nbi(weft_target_t *t, size_t off, uint64_t value)
{
    if (t == NULL)
        return (weft_target_atomic_add_nbi)(t, off, value);
    if (WEFT__TARGET_HERE(t, off, sizeof(uint64_t)) && ((uintptr_t)(t->base + off) & 7u) == 0) {
        __atomic_fetch_add((uint64_t *)(void *)(t->base + off), value, __ATOMIC_SEQ_CST);
        return WEFT_OK;
    }
    return weft__target_lib(t, WEFT__TOP_ADD_NBI, off, (void *)0, sizeof(uint64_t), value);
}

static inline __attribute__((always_inline)) weft_status_t
weft_inline_target_atomic_fetch_add(weft_target_t *t, size_t off, uint64_t value, uint64_t *old)
{
    if (t == NULL)
        return (weft_target_atomic_fetch_add)(t, off, value, old);
    if (old != NULL && WEFT__TARGET_HERE(t, off, sizeof(uint64_t)) &&
        ((uintptr_t)(t->base + off) & 7u) == 0) {
        *old = __atomic_fetch_add((uint64_t *)(void *)(t->base + off), value, __ATOMIC_SEQ_CST);
        return WEFT_OK;
    }
    return weft__target_lib(t, WEFT__TOP_FETCH_ADD, off, old, sizeof(uint64_t), value);
}

#define weft_put_nbi(ep, rank, seg, off, src, n) weft_inline_put_nbi(ep, rank, seg, off, src, n)
#define weft_put(ep, rank, seg, off, src, n)     weft_inline_put(ep, rank, seg, off, src, n)
#define weft_get_nbi(ep, dst, rank, seg, off, n) weft_inline_get_nbi(ep, dst, rank, seg, off, n)
#define weft_get(ep, dst, rank, seg, off, n)     weft_inline_get(ep, dst, rank, seg, off, n)
#define weft_atomic_add_nbi(ep, rank, seg, off, value) \
    weft_inline_atomic_add_nbi(ep, rank, seg, off, value)
#define weft_atomic_fetch_add(ep, rank, seg, off, value, old) \
    weft_inline_atomic_fetch_add(ep, rank, seg, off, value, old)
#define weft_target_init(ep, rank, seg, t)  weft_inline_target_init(ep, rank, seg, t)
#define weft_target_put_nbi(t, off, src, n) weft_inline_target_put_nbi(t, off, src, n)
#define weft_target_put(t, off, src, n)     weft_inline_target_put(t, off, src, n)
#define weft_target_get_nbi(t, dst, off, n) weft_inline_target_get_nbi(t, dst, off, n)
#define weft_target_get(t, dst, off, n)     weft_inline_target_get(t, dst, off, n)
#define weft_target_atomic_add_nbi(t, off, value) weft_inline_target_atomic_add_nbi(t, off, value)
#define weft_target_atomic_fetch_add(t, off, value, old) \
    weft_inline_target_atomic_fetch_add(t, off, value, old)

#endif /* inline path */

#ifdef __cplusplus
}
#endif

#endif /* WEFT_INLINE_H */
