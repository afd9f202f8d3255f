/* Kept targets (weft_target_t): every constant size the inline forms take
 * (and 65 bytes, which they leave to the library) put and got through a
 * target, each inline form called with the target current (so that on the
 * direct path it runs inline) and each exported form, must move the same
 * bytes as the plain calls, on whatever path the target is (direct, UCX);
 * the target is current after an access on the direct path (its key the
 * endpoint's word of gate and epoch, its rank stamped) and never on a rank reached through UCX;
 * after a flush the next access makes it current again; atomics through
 * targets sum exactly under contention; what a target leaves to the
 * library fails as the plain call does, the inline tests refusing first
 * where the target is current: bad arguments, a target filled with bad
 * arguments, a NULL target, a destroyed endpoint, a freed segment (also on
 * a pool's endpoint, which weft_seg_free does not flush); and an endpoint
 * whose flush epoch wraps sends every access to the library. */
#include "../common.h"

#include <string.h>

#ifndef weft_target_put_nbi
#error "weft.h did not provide the inline forms"
#endif

#define SEG   8192
#define ITERS 1000

enum { ADDS = 0, FADDS = 8, SCRATCH = 16, DATA = 64 };

static weft_ctx_t ctx;
static weft_ep_t ep;
static weft_seg_t seg;
static char *local;
static int rank, n, right, left;

/* Whether t is current: on the direct path with the gate shut, after a
 * successful access, its key is the endpoint's word of gate and epoch and
 * its rank is stamped with the epoch; otherwise it never runs inline. */
static void expect_current_at(const weft_target_t *t, int direct, int line)
{
    const struct weft_inline_ep *e = (const struct weft_inline_ep *)(const void *)t->ep;

    if (direct && e->gate == 0) {
        if (t->key != weft__inline_key(e->flush_epoch))
            fprintf(stderr, "expect_current at line %d: key %#llx, endpoint's epoch %u\n", line,
                    (unsigned long long)t->key, e->flush_epoch);
        CHECK(t->check == (const void *)t->ep && t->key == weft__inline_key(e->flush_epoch));
        CHECK(weft__inline_word_of(e) == t->key);
        CHECK(e->touched[t->rank] == e->flush_epoch);
        CHECK(t->base != NULL && t->size == SEG);
    } else if (direct) {
        /* WEFT_CHECK=1: the gate is set, nothing runs inline */
        CHECK(e->gate != 0);
    } else {
        /* a rank reached through UCX: never inline, whatever the gate */
        CHECK(t->check != (const void *)t->ep && t->base == NULL && t->key == 0);
    }
}

/* An access that leaves t current (a get of a scratch word), checked: the
 * next inline form then runs inline on the direct path (with the gate
 * shut), its size a constant of at most WEFT_INLINE_MAX. */
#define CURRENT(T_)                                                  \
    do {                                                             \
        uint64_t scratch_;                                           \
        OK(weft_target_get(&(T_), &scratch_, SCRATCH, 8));           \
        expect_current(&(T_), direct);                               \
    } while (0)

#define expect_current(t, direct) expect_current_at(t, direct, __LINE__)

/* One size: through the target, an inline put_nbi, an inline blocking put
 * and the exported put_nbi, each to its own slot of the right neighbour;
 * then gets of the same slots, inline and exported. */
#define ROUND(T_, SIZE, TAG)                                                                \
    do {                                                                                    \
        unsigned char src[3][128], got[128];                                                \
        for (int k = 0; k < 3; k++)                                                         \
            test_fill_from(src[k], SIZE, rank, (TAG) + (unsigned)k);                        \
        CURRENT(T_);                                                                        \
        OK(weft_target_put_nbi(&(T_), DATA, src[0], SIZE));                                 \
        CURRENT(T_);                                                                        \
        OK(weft_target_put(&(T_), DATA + 128, src[1], SIZE));                               \
        OK((weft_target_put_nbi)(&(T_), DATA + 256, src[2], SIZE));                         \
        OK(weft_flush(ep));                                                                 \
        OK(weft_barrier(ctx));                                                              \
        for (int k = 0; k < 3; k++)                                                         \
            CHECK(test_is_from(local + DATA + 128 * (size_t)k, SIZE, left,                  \
                               (TAG) + (unsigned)k));                                   \
        for (int k = 0; k < 3; k++) {                                                       \
            unsigned char want[128];                                                        \
            test_fill_from(want, SIZE, rank, (TAG) + (unsigned)k);                          \
            memset(got, 0, sizeof(got));                                                    \
            CURRENT(T_);                                                                    \
            OK(weft_target_get(&(T_), got, DATA + 128 * (size_t)k, SIZE));                  \
            CHECK(memcmp(got, want, SIZE) == 0);                                            \
            memset(got, 0, sizeof(got));                                                    \
            CURRENT(T_);                                                                    \
            OK(weft_target_get_nbi(&(T_), got, DATA + 128 * (size_t)k, SIZE));              \
            OK(weft_flush(ep));                                                             \
            CHECK(memcmp(got, want, SIZE) == 0);                                            \
            memset(got, 0, sizeof(got));                                                    \
            OK((weft_target_get)(&(T_), got, DATA + 128 * (size_t)k, SIZE));                \
            CHECK(memcmp(got, want, SIZE) == 0);                                            \
            memset(got, 0, sizeof(got));                                                    \
            OK((weft_target_get_nbi)(&(T_), got, DATA + 128 * (size_t)k, SIZE));            \
            OK(weft_flush(ep));                                                             \
            CHECK(memcmp(got, want, SIZE) == 0);                                            \
        }                                                                                   \
        OK(weft_barrier(ctx));                                                              \
    } while (0)

/* A pool endpoint (of one thread, used by this one) and a target of it
 * made current on the direct path after its last flush. */
static void pool_target(weft_ep_pool_t *pool, weft_ep_t *pep, weft_target_t *t, int direct)
{
    weft_ep_pool_params_t p;
    uint64_t v;

    memset(&p, 0, sizeof(p));
    p.nthreads = 1;
    p.policy = "single";
    OK(weft_ep_pool_create(ctx, &p, pool));
    OK(weft_ep_get(*pool, 0, pep));
    OK(weft_target_init(*pep, right, seg, t));
    OK(weft_target_get(t, &v, DATA, 8));
    OK(weft_flush(*pep));
    if (direct) {
        OK(weft_target_get(t, &v, DATA, 8));  /* a flush since: takes the new epoch */
        OK(weft_target_get(t, &v, DATA, 8));  /* current */
    }
    expect_current(t, direct);
}

int main(void)
{
    weft_config_t cfg;
    weft_target_t t, t0;
    uint64_t old, seen = 0;
    void *mapped;
    int direct;

    CHECK(weft_target_layout_v2 == WEFT_TARGET_LAYOUT);
    OK(weft_config_init(&cfg));
    OK(weft_init(&cfg, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, SEG, &seg, (void **)&local));
    right = (rank + 1) % n;
    left = (rank + n - 1) % n;
    direct = weft_ptr(ctx, right, seg, 0, &mapped) == WEFT_OK;

    OK(weft_target_init(ep, right, seg, &t));
    CHECK(t.ep == ep && t.rank == right && t.seg == seg);
    expect_current(&t, direct);
    ROUND(t, 1, 1);
    ROUND(t, 2, 2);
    ROUND(t, 4, 3);
    ROUND(t, 8, 4);
    {
        uint64_t v;

        /* the round ended with a flush: the first access makes t current */
        OK(weft_target_get(&t, &v, DATA, 8));
        expect_current(&t, direct);
    }
    ROUND(t, 16, 5);
    ROUND(t, 24, 6);
    ROUND(t, 64, 7);
    ROUND(t, 65, 8);  /* over WEFT_INLINE_MAX: the library */

    /* a flush moves the endpoint's epoch on: the next access makes the
     * target current again (inline on the direct path) */
    {
        const struct weft_inline_ep *e = (const struct weft_inline_ep *)(const void *)ep;
        unsigned before = e->flush_epoch;
        uint64_t v = 7, g = 0;

        OK(weft_flush(ep));
        CHECK(e->flush_epoch != before);
        CHECK(t.key != weft__inline_key(e->flush_epoch) && t.key != weft__inline_word_of(e));
        OK(weft_target_put(&t, DATA + 512, &v, 8));
        expect_current(&t, direct);
        OK(weft_target_get(&t, &g, DATA + 512, 8));
        CHECK(g == 7);
        /* the last word of the segment, right after a flush and again */
        OK(weft_flush(ep));
        OK(weft_target_put(&t, SEG - 8, &v, 8));
        expect_current(&t, direct);
        OK(weft_target_get(&t, &g, SEG - 8, 8));
        CHECK(g == 7);
    }
    OK(weft_barrier(ctx));

    /* atomics on rank 0's words from every rank through one target each,
     * inline and exported */
    OK(weft_target_init(ep, 0, seg, &t0));
    for (int i = 0; i < ITERS; i++) {
        OK(weft_target_atomic_add_nbi(&t0, ADDS, 1));
        OK(weft_target_atomic_fetch_add(&t0, FADDS, 2, &old));
        CHECK(old % 2 == 0 && old < 2u * ITERS * (uint64_t)n);
        if (old > seen)
            seen = old;
        OK((weft_target_atomic_add_nbi)(&t0, ADDS, 1));
        if (i % 100 == 99)
            OK(weft_flush(ep));
    }
    OK((weft_target_atomic_fetch_add)(&t0, FADDS, 0, &old));
    OK(weft_flush(ep));
    OK(weft_barrier(ctx));
    if (rank == 0) {
        CHECK(((uint64_t *)(void *)local)[ADDS / 8] == 2u * ITERS * (uint64_t)n);
        CHECK(((uint64_t *)(void *)local)[FADDS / 8] == 2u * ITERS * (uint64_t)n);
    }
    CHECK(seen >= 2u * (ITERS - 1));

    /* what a target leaves to the library fails as the plain call does */
    {
        uint64_t v = 1;
        char big[64] = {0};
        weft_target_t bad;

        /* each with the target current, so that on the direct path the
         * inline tests see it first; then right after a flush, where the
         * target takes the new epoch in the caller first (or refuses the
         * access past the end itself) */
        for (int after_flush = 0; after_flush < 2; after_flush++) {
#define FAILS_CURRENT(call, err)                  \
    do {                                \
        CURRENT(t);                     \
        if (after_flush)                \
            OK(weft_flush(ep));         \
        FAILS(call, err);               \
    } while (0)
            FAILS_CURRENT(weft_target_atomic_add_nbi(&t, DATA + 4, 1), WEFT_ERR_ALIGN);
            FAILS_CURRENT(weft_target_atomic_fetch_add(&t, DATA + 4, 1, &old), WEFT_ERR_ALIGN);
            FAILS_CURRENT(weft_target_atomic_fetch_add(&t, DATA, 1, NULL), WEFT_ERR_INVALID_ARG);
            FAILS_CURRENT(weft_target_atomic_add_nbi(&t, SEG, 1), WEFT_ERR_BOUNDS);
            FAILS_CURRENT(weft_target_atomic_fetch_add(&t, SEG - 4, 1, &old), WEFT_ERR_BOUNDS);
            FAILS_CURRENT(weft_target_put_nbi(&t, SEG - 4, &v, 8), WEFT_ERR_BOUNDS);
            FAILS_CURRENT(weft_target_put(&t, SIZE_MAX, &v, 8), WEFT_ERR_BOUNDS);
            FAILS_CURRENT(weft_target_put(&t, SEG - 63, big, sizeof(big)), WEFT_ERR_BOUNDS);
            FAILS_CURRENT(weft_target_get(&t, &v, SEG - 4, 8), WEFT_ERR_BOUNDS);
            FAILS_CURRENT(weft_target_get_nbi(&t, &v, SEG, 1), WEFT_ERR_BOUNDS);
            FAILS_CURRENT(weft_target_put_nbi(&t, 0, NULL, 8), WEFT_ERR_INVALID_ARG);
            FAILS_CURRENT(weft_target_put(&t, 0, NULL, 8), WEFT_ERR_INVALID_ARG);
            FAILS_CURRENT(weft_target_get(&t, NULL, 0, 8), WEFT_ERR_INVALID_ARG);
            FAILS_CURRENT(weft_target_get_nbi(&t, NULL, 0, 8), WEFT_ERR_INVALID_ARG);
#undef FAILS_CURRENT
        }
        /* the target is still usable after its errors */
        OK(weft_target_put(&t, DATA, &v, 8));
        /* a NULL target, inline and exported */
        FAILS(weft_target_init(ep, right, seg, NULL), WEFT_ERR_INVALID_ARG);
        FAILS((weft_target_init)(ep, right, seg, NULL), WEFT_ERR_INVALID_ARG);
        FAILS(weft_target_put_nbi(NULL, 0, &v, 8), WEFT_ERR_INVALID_ARG);
        FAILS(weft_target_put(NULL, 0, &v, 8), WEFT_ERR_INVALID_ARG);
        FAILS((weft_target_put)(NULL, 0, &v, 8), WEFT_ERR_INVALID_ARG);
        FAILS(weft_target_get(NULL, &v, 0, 8), WEFT_ERR_INVALID_ARG);
        FAILS((weft_target_get_nbi)(NULL, &v, 0, 8), WEFT_ERR_INVALID_ARG);
        FAILS(weft_target_atomic_add_nbi(NULL, 0, 1), WEFT_ERR_INVALID_ARG);
        FAILS((weft_target_atomic_fetch_add)(NULL, 0, 1, &old), WEFT_ERR_INVALID_ARG);
        /* a target filled with bad arguments reports them at every access */
        FAILS(weft_target_init(ep, n, seg, &bad), WEFT_ERR_RANK);
        FAILS(weft_target_put_nbi(&bad, 0, &v, 8), WEFT_ERR_RANK);
        FAILS(weft_target_put(&bad, 0, &v, 8), WEFT_ERR_RANK);
        FAILS(weft_target_get(&bad, &v, 0, 8), WEFT_ERR_RANK);
        FAILS(weft_target_get_nbi(&bad, &v, 0, 8), WEFT_ERR_RANK);
        FAILS((weft_target_init)(ep, -1, seg, &bad), WEFT_ERR_RANK);
        FAILS(weft_target_atomic_add_nbi(&bad, 0, 1), WEFT_ERR_RANK);
        FAILS(weft_target_atomic_fetch_add(&bad, 0, 1, &old), WEFT_ERR_RANK);
        FAILS(weft_target_init(ep, right, NULL, &bad), WEFT_ERR_SEG);
        FAILS(weft_target_put(&bad, 0, &v, 8), WEFT_ERR_SEG);
        FAILS(weft_target_init(NULL, right, seg, &bad), WEFT_ERR_INVALID_ARG);
        FAILS(weft_target_get_nbi(&bad, &v, 0, 8), WEFT_ERR_INVALID_ARG);
    }
    OK(weft_barrier(ctx));

    /* a destroyed endpoint's target goes to the library, which refuses it */
    {
        weft_ep_pool_t pool;
        weft_ep_t pep;
        weft_target_t pt;
        uint64_t v = 1;

        weft_target_t again;

        pool_target(&pool, &pep, &pt, direct);
        OK(weft_ep_pool_destroy(pool));
        FAILS(weft_target_put_nbi(&pt, DATA, &v, 8), WEFT_ERR_NOT_INIT);
        FAILS(weft_target_put(&pt, DATA, &v, 8), WEFT_ERR_NOT_INIT);
        FAILS(weft_target_get(&pt, &v, DATA, 8), WEFT_ERR_NOT_INIT);
        FAILS(weft_target_get_nbi(&pt, &v, DATA, 8), WEFT_ERR_NOT_INIT);
        FAILS(weft_target_atomic_add_nbi(&pt, ADDS, 1), WEFT_ERR_NOT_INIT);
        FAILS(weft_target_atomic_fetch_add(&pt, FADDS, 1, &old), WEFT_ERR_NOT_INIT);
        FAILS(weft_target_init(pep, right, seg, &again), WEFT_ERR_NOT_INIT);
    }
    /* An endpoint whose flush epoch wraps: a target kept past the free of
     * its segment holds an epoch that the endpoint reaches again, so the
     * gate must send it to the library, not to the unmapped memory (the
     * epoch is set near its end here, as 2^32 flushes would). */
    {
        weft_ep_pool_t pool;
        weft_ep_t pep;
        weft_seg_t other;
        weft_target_t pt, ot;
        uint64_t v = 5, g = 0;
        struct weft_inline_ep *e;
        int flushes = 0;

        pool_target(&pool, &pep, &pt, direct);
        e = (struct weft_inline_ep *)(void *)pep;
        OK(weft_seg_alloc(ctx, SEG, &other, NULL));
        OK(weft_target_init(pep, right, other, &ot));
        OK(weft_target_get(&ot, &g, DATA, 8));
        /* completed, so that the free finds nothing outstanding; then (on
         * the direct path, where an access leaves nothing outstanding)
         * current again */
        OK(weft_flush(pep));
        if (direct)
            OK(weft_target_get(&ot, &g, DATA, 8));
        expect_current(&ot, direct);
        OK(weft_barrier(ctx));
        OK(weft_seg_free(ctx, other));
        e->flush_epoch = ~0u;
        OK(weft_flush(pep));
        CHECK(e->flush_epoch == 1 && e->gate != 0);
        while (weft__inline_key(e->flush_epoch) != ot.key && ot.key != 0 && flushes++ < 1000)
            OK(weft_flush(pep));
        CHECK(ot.key == 0 || weft__inline_key(e->flush_epoch) == ot.key);
        FAILS(weft_target_put_nbi(&ot, DATA, &v, 8), WEFT_ERR_SEG);
        FAILS(weft_target_get(&ot, &g, DATA, 8), WEFT_ERR_SEG);
        /* a live segment's target works on, through the library */
        OK(weft_target_put(&pt, DATA + 576, &v, 8));
        OK(weft_target_get(&pt, &g, DATA + 576, 8));
        CHECK(g == 5);
        /* ... and never inline again: no key holds a gate bit */
        CHECK(weft__inline_word_of(e) != pt.key);
        OK(weft_flush(pep));
        OK(weft_ep_pool_destroy(pool));
    }
    /* A pool endpoint's target made current after its last flush: freeing
     * the segment does not flush the pool's endpoints, but moves their
     * epochs on, so the target reaches the library, not the unmapped
     * memory. */
    {
        weft_ep_pool_t pool;
        weft_ep_t pep;
        weft_target_t pt;
        uint64_t v = 1;
        const struct weft_inline_ep *e;
        unsigned before;

        pool_target(&pool, &pep, &pt, direct);
        e = (const struct weft_inline_ep *)(const void *)pep;
        before = e->flush_epoch;
        OK(weft_barrier(ctx));
        OK(weft_target_get(&t, &v, DATA, 8));  /* t current again before the free */
        OK(weft_seg_free(ctx, seg));
        CHECK(e->flush_epoch != before);
        FAILS(weft_target_put_nbi(&pt, DATA, &v, 8), WEFT_ERR_SEG);
        FAILS(weft_target_get(&pt, &v, DATA, 8), WEFT_ERR_SEG);
        FAILS(weft_target_atomic_add_nbi(&pt, ADDS, 1), WEFT_ERR_SEG);
        FAILS(weft_target_put(&t, DATA, &v, 8), WEFT_ERR_SEG);
        FAILS(weft_target_get_nbi(&t, &v, DATA, 8), WEFT_ERR_SEG);
        FAILS(weft_target_atomic_fetch_add(&t0, FADDS, 1, &old), WEFT_ERR_SEG);
        FAILS(weft_target_init(ep, right, seg, &pt), WEFT_ERR_SEG);
        FAILS(weft_target_put_nbi(&pt, DATA, &v, 8), WEFT_ERR_SEG);
        OK(weft_ep_pool_destroy(pool));
    }
    OK(weft_finalize(ctx));
    return 0;
}
