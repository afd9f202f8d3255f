/* The inline forms of weft_inline.h against the library calls: every
 * constant size the inline path takes (and 65 bytes, which it leaves to
 * the library) is put and got with both and must move the same bytes, on
 * whatever path the target is (direct, UCX); a blocking get read back as
 * a double and a float sees the bytes; inline atomics sum exactly under
 * contention; and what the inline path hands to the library still fails as
 * documented (a misaligned atomic, an access past the end, a NULL buffer,
 * a destroyed endpoint, a freed segment, WEFT_CHECK=1's checks of local
 * buffers). */
#include "../common.h"

#include <string.h>

#ifndef weft_put_nbi
#error "weft.h did not provide the inline forms"
#endif

#define SEG   8192
#define ITERS 1000

enum { ADDS = 0, FADDS = 8, DATA = 64 };

static weft_ctx_t ctx;
static weft_ep_t ep;
static weft_seg_t seg;
static char *local;
static int rank, n, right, left;

/* One size: an inline put_nbi, an inline blocking put, the library's put,
 * each to its own slot of the right neighbour; then gets of the same slots
 * from the left neighbour's puts, inline and not. */
#define ROUND(SIZE, T)                                                                      \
    do {                                                                                    \
        unsigned char src[3][128], got[128];                                                \
        for (int k = 0; k < 3; k++)                                                         \
            test_fill_from(src[k], SIZE, rank, (T) + (unsigned)k);                          \
        OK(weft_put_nbi(ep, right, seg, DATA, src[0], SIZE));                               \
        OK(weft_put(ep, right, seg, DATA + 128, src[1], SIZE));                             \
        OK((weft_put_nbi)(ep, right, seg, DATA + 256, src[2], SIZE));                       \
        OK(weft_flush(ep));                                                                 \
        OK(weft_barrier(ctx));                                                              \
        for (int k = 0; k < 3; k++)                                                         \
            CHECK(test_is_from(local + DATA + 128 * (size_t)k, SIZE, left,                  \
                               (T) + (unsigned)k));                                     \
        for (int k = 0; k < 3; k++) {                                                       \
            unsigned char want[128];                                                        \
            test_fill_from(want, SIZE, rank, (T) + (unsigned)k);                            \
            memset(got, 0, sizeof(got));                                                    \
            OK(weft_get(ep, got, right, seg, DATA + 128 * (size_t)k, SIZE));                \
            CHECK(memcmp(got, want, SIZE) == 0);                                            \
            memset(got, 0, sizeof(got));                                                    \
            OK(weft_get_nbi(ep, got, right, seg, DATA + 128 * (size_t)k, SIZE));            \
            OK(weft_flush(ep));                                                             \
            CHECK(memcmp(got, want, SIZE) == 0);                                            \
            memset(got, 0, sizeof(got));                                                    \
            OK((weft_get)(ep, got, right, seg, DATA + 128 * (size_t)k, SIZE));              \
            CHECK(memcmp(got, want, SIZE) == 0);                                            \
        }                                                                                   \
        OK(weft_barrier(ctx));                                                              \
    } while (0)

int main(void)
{
    weft_config_t cfg;
    uint64_t old, seen = 0;
    weft_ep_pool_t near_pool;
    weft_ep_t near_ep;

    CHECK(weft_inline_layout_v4 == WEFT_INLINE_LAYOUT);
    OK(weft_config_init(&cfg));
    OK(weft_init(&cfg, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, SEG, &seg, (void **)&local));
    right = (rank + 1) % n;
    left = (rank + n - 1) % n;

    ROUND(1, 1);
    ROUND(2, 2);
    ROUND(4, 3);
    ROUND(8, 4);
    ROUND(16, 5);
    ROUND(24, 6);
    ROUND(64, 7);
    ROUND(65, 8);  /* over WEFT_INLINE_MAX: the library */

    /* A blocking get read as the type it was put as: the inline copy is
     * another type, and the compiler must still see the bytes. */
    {
        double d = 3.25, dg = 0;
        float f = -1.5f, fg = 0;

        OK(weft_put(ep, right, seg, DATA + 512, &d, sizeof(d)));
        OK(weft_put(ep, right, seg, DATA + 520, &f, sizeof(f)));
        OK(weft_get(ep, &dg, right, seg, DATA + 512, sizeof(dg)));
        OK(weft_get(ep, &fg, right, seg, DATA + 520, sizeof(fg)));
        CHECK(dg == 3.25 && fg == -1.5f);
    }
    OK(weft_barrier(ctx));

    /* atomics on rank 0's words from every rank, inline and not */
    for (int i = 0; i < ITERS; i++) {
        OK(weft_atomic_add_nbi(ep, 0, seg, ADDS, 1));
        OK(weft_atomic_fetch_add(ep, 0, seg, FADDS, 2, &old));
        CHECK(old % 2 == 0 && old < 2u * ITERS * (uint64_t)n);
        if (old > seen)
            seen = old;
        OK((weft_atomic_add_nbi)(ep, 0, seg, ADDS, 1));
    }
    OK(weft_flush(ep));
    OK(weft_barrier(ctx));
    if (rank == 0) {
        CHECK(((uint64_t *)(void *)local)[ADDS / 8] == 2u * ITERS * (uint64_t)n);
        CHECK(((uint64_t *)(void *)local)[FADDS / 8] == 2u * ITERS * (uint64_t)n);
    }
    CHECK(seen >= 2u * (ITERS - 1));

    /* what the inline path leaves to the library fails as documented */
    {
        uint64_t v = 1;

        FAILS(weft_atomic_add_nbi(ep, right, seg, DATA + 4, 1), WEFT_ERR_ALIGN);
        FAILS(weft_atomic_fetch_add(ep, right, seg, DATA + 4, 1, &old), WEFT_ERR_ALIGN);
        FAILS(weft_atomic_fetch_add(ep, right, seg, DATA, 1, NULL), WEFT_ERR_INVALID_ARG);
        FAILS(weft_put_nbi(ep, right, seg, SEG - 4, &v, 8), WEFT_ERR_BOUNDS);
        FAILS(weft_get(ep, &v, right, seg, SEG - 4, 8), WEFT_ERR_BOUNDS);
        FAILS(weft_put_nbi(ep, right, seg, 0, NULL, 8), WEFT_ERR_INVALID_ARG);
        FAILS(weft_get(ep, NULL, right, seg, 0, 8), WEFT_ERR_INVALID_ARG);
        FAILS(weft_put(ep, n, seg, 0, &v, 8), WEFT_ERR_RANK);
        FAILS(weft_get(ep, &v, -1, seg, 0, 8), WEFT_ERR_RANK);
        FAILS(weft_put(NULL, right, seg, 0, &v, 8), WEFT_ERR_INVALID_ARG);
        FAILS(weft_put(ep, right, NULL, 0, &v, 8), WEFT_ERR_SEG);
    }
    OK(weft_barrier(ctx));
    /* A destroyed endpoint's gate sends its stale handle to the library,
     * which refuses it, instead of stamping its freed table. */
    {
        weft_ep_pool_params_t p;
        weft_ep_pool_t pool;
        weft_ep_t pep;
        uint64_t v = 1;

        memset(&p, 0, sizeof(p));
        p.nthreads = 1;
        p.policy = "single";
        OK(weft_ep_pool_create(ctx, &p, &pool));
        OK(weft_ep_get(pool, 0, &pep));
        OK(weft_put_nbi(pep, right, seg, DATA, &v, 8));
        OK(weft_flush(pep));
        OK(weft_ep_pool_destroy(pool));
        FAILS(weft_put_nbi(pep, right, seg, DATA, &v, 8), WEFT_ERR_NOT_INIT);
        FAILS(weft_get(pep, &v, right, seg, DATA, 8), WEFT_ERR_NOT_INIT);
        FAILS(weft_atomic_add_nbi(pep, 0, seg, ADDS, 1), WEFT_ERR_NOT_INIT);
    }
    /* A pool endpoint's near target is this segment when it is freed (an
     * inline get after its flush: nothing outstanding, so weft_seg_free
     * does not flush it again): the stale handle must still reach the
     * library, not the unmapped memory.  (A get through UCX counts as
     * outstanding until a flush, so there the flush comes last.) */
    {
        weft_ep_pool_params_t p;
        uint64_t v;
        void *mapped;

        memset(&p, 0, sizeof(p));
        p.nthreads = 1;
        p.policy = "single";
        OK(weft_ep_pool_create(ctx, &p, &near_pool));
        OK(weft_ep_get(near_pool, 0, &near_ep));
        OK(weft_get(near_ep, &v, right, seg, DATA, 8));
        OK(weft_flush(near_ep));
        if (weft_ptr(ctx, right, seg, DATA, &mapped) == WEFT_OK) {
            const struct weft_inline_ep *e = (const struct weft_inline_ep *)(const void *)near_ep;

            OK(weft_get(near_ep, &v, right, seg, DATA, 8));
            OK(weft_get(near_ep, &v, right, seg, DATA, 8));
            /* the second get in a row made (seg, right) the near target,
             * unless a bit of the gate is set (WEFT_CHECK=1) */
            if (e->gate == 0)
                CHECK(e->near_seg == (const void *)seg && e->near_rank == right &&
                      e->near_base == (char *)mapped - DATA);
            else
                CHECK(e->near_seg != (const void *)seg);
        }
    }
    OK(weft_barrier(ctx));
    OK(weft_seg_free(ctx, seg));
    {
        uint64_t v = 1;

        FAILS(weft_put_nbi(near_ep, right, seg, DATA, &v, 8), WEFT_ERR_SEG);
        FAILS(weft_get(near_ep, &v, right, seg, DATA, 8), WEFT_ERR_SEG);
        FAILS(weft_atomic_add_nbi(near_ep, right, seg, ADDS, 1), WEFT_ERR_SEG);
        OK(weft_ep_pool_destroy(near_pool));
    }
    {
        uint64_t v = 1;

        FAILS(weft_put_nbi(ep, right, seg, 0, &v, 8), WEFT_ERR_SEG);
        FAILS(weft_get(ep, &v, right, seg, 0, 8), WEFT_ERR_SEG);
        FAILS(weft_atomic_add_nbi(ep, right, seg, 0, 1), WEFT_ERR_SEG);
    }
    OK(weft_finalize(ctx));
    return 0;
}
