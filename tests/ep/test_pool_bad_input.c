/* Endpoint pools: every bad argument gets its status and a message naming
 * the value; the owner check; stale handles after destroy and finalize;
 * pools refused beside the progress thread, except "single"; memory
 * running out for the trace points' watch list while a pool's endpoints
 * are made (the pool is refused, nothing is lost, the next pool works). */
#define _GNU_SOURCE
#include "../common.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#if WEFT_TEST_INTERPOSE_REALLOC
/* realloc as libweft sees it (its calls go through the dynamic linker, so
 * this definition is the one it gets): with fail_weft_realloc set, a call
 * from libweft fails as when memory runs out; every other caller (MPI,
 * UCX) is served. */
extern void *__libc_realloc(void *p, size_t n);
static int fail_weft_realloc, weft_reallocs_failed;

void *realloc(void *p, size_t n)
{
    Dl_info info;

    if (fail_weft_realloc && dladdr(__builtin_return_address(0), &info) != 0 &&
        info.dli_fname != NULL && strstr(info.dli_fname, "libweft") != NULL) {
        weft_reallocs_failed++;
        return NULL;
    }
    return __libc_realloc(p, n);
}

/* aligned_alloc and free as libweft sees them too: the blocks libweft gets
 * from aligned_alloc (its endpoints, a pool's buffers) are counted while
 * they live, so a test can tell whether a failed call gave back what it
 * made.  free serves every caller (MPI's and UCX's threads too). */
extern void *__libc_memalign(size_t align, size_t n);
extern void __libc_free(void *p);
static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;
static void *weft_blocks[1024];
static int nweft_blocks;

void *aligned_alloc(size_t align, size_t n)
{
    void *p = __libc_memalign(align, n);
    Dl_info info;

    if (p != NULL && dladdr(__builtin_return_address(0), &info) != 0 &&
        info.dli_fname != NULL && strstr(info.dli_fname, "libweft") != NULL) {
        pthread_mutex_lock(&blocks_lock);
        if (nweft_blocks < (int)(sizeof(weft_blocks) / sizeof(weft_blocks[0])))
            weft_blocks[nweft_blocks++] = p;
        pthread_mutex_unlock(&blocks_lock);
    }
    return p;
}

void free(void *p)
{
    if (p != NULL) {
        pthread_mutex_lock(&blocks_lock);
        for (int i = 0; i < nweft_blocks; i++)
            if (weft_blocks[i] == p) {
                weft_blocks[i] = weft_blocks[--nweft_blocks];
                break;
            }
        pthread_mutex_unlock(&blocks_lock);
    }
    __libc_free(p);
}

static int live_weft_blocks(void)
{
    int n;

    pthread_mutex_lock(&blocks_lock);
    n = nweft_blocks;
    pthread_mutex_unlock(&blocks_lock);
    return n;
}
#endif

#define HAS(text) CHECK(strstr(weft_last_error(), text) != NULL)

static weft_ep_pool_params_t params(int T, const char *policy)
{
    weft_ep_pool_params_t p;

    memset(&p, 0, sizeof(p));
    p.nthreads = T;
    p.policy = policy;
    return p;
}

static void *other_thread(void *arg)
{
    weft_ep_t ep = arg;

    /* not the owner: progress and flush are refused */
    FAILS(weft_progress(ep, NULL), WEFT_ERR_BUSY);
    HAS("pool thread 0");
    FAILS(weft_flush(ep), WEFT_ERR_BUSY);
    return NULL;
}

static void test_bad_params(weft_ctx_t ctx)
{
    weft_ep_pool_params_t p;
    weft_ep_pool_t pool = NULL;

    FAILS(weft_ep_pool_create(ctx, NULL, &pool), WEFT_ERR_INVALID_ARG);
    HAS("params is NULL");
    p = params(2, "dedicated");
    FAILS(weft_ep_pool_create(ctx, &p, NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_ep_pool_create(NULL, &p, &pool), WEFT_ERR_NOT_INIT);
    p = params(0, "dedicated");
    FAILS(weft_ep_pool_create(ctx, &p, &pool), WEFT_ERR_INVALID_ARG);
    HAS("nthreads 0 is outside [1, 4096]");
    p = params(5000, "dedicated");
    FAILS(weft_ep_pool_create(ctx, &p, &pool), WEFT_ERR_INVALID_ARG);
    HAS("nthreads 5000");
    p = params(2, "dedicated");
    p.eps_per_thread = 65;
    FAILS(weft_ep_pool_create(ctx, &p, &pool), WEFT_ERR_INVALID_ARG);
    HAS("eps_per_thread 65");
    p = params(2, "dedicated");
    p.eps_per_thread = -1;
    FAILS(weft_ep_pool_create(ctx, &p, &pool), WEFT_ERR_INVALID_ARG);
    p = params(2, "dedicated");
    p.lock = (weft_ep_lock_t)7;
    FAILS(weft_ep_pool_create(ctx, &p, &pool), WEFT_ERR_INVALID_ARG);
    HAS("lock 7");
    p = params(2, "shared:x");
    FAILS(weft_ep_pool_create(ctx, &p, &pool), WEFT_ERR_INVALID_ARG);
    HAS("weft_ep_pool_create: policy 'shared:x'");
    CHECK(pool == NULL);  /* never written on failure */
}

static void test_bad_use(weft_ctx_t ctx)
{
    weft_ep_pool_params_t p = params(2, NULL);  /* NULL: dedicated */
    weft_ep_pool_t pool;
    weft_ep_t ep, ep2;
    weft_resources_t res;
    pthread_t th;
    void *buf;
    size_t bytes;

    p.check_owner = 1;
    OK(weft_ep_pool_create(ctx, &p, &pool));
    FAILS(weft_ep_get(pool, 2, &ep), WEFT_ERR_INVALID_ARG);
    HAS("weft_ep_get: thread 2 is outside [0, 2)");
    FAILS(weft_ep_get(pool, -1, &ep), WEFT_ERR_INVALID_ARG);
    FAILS(weft_ep_get(NULL, 0, &ep), WEFT_ERR_INVALID_ARG);
    FAILS(weft_ep_get(pool, 0, NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_ep_get_nth(pool, 0, 1, &ep), WEFT_ERR_INVALID_ARG);
    HAS("index 1 is outside [0, 1)");
    FAILS(weft_ep_pool_buffer(pool, 0, &buf, &bytes), WEFT_ERR_INVALID_ARG);
    HAS("buf_bytes was 0");
    FAILS(weft_ep_pool_resources(pool, NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_ep_pool_resources(NULL, &res), WEFT_ERR_INVALID_ARG);
    FAILS(weft_ep_lock(NULL), WEFT_ERR_INVALID_ARG);

    OK(weft_ep_get(pool, 0, &ep));
    OK(weft_progress(ep, NULL));           /* the owner may */
    CHECK(pthread_create(&th, NULL, other_thread, ep) == 0);
    pthread_join(th, NULL);
    OK(weft_ep_lock(ep));                  /* no-op: nobody shares its worker */
    OK(weft_ep_unlock(ep));
    OK(weft_ep_pool_resources(pool, &res));
    CHECK(res.workers == 2 && res.ucx_contexts == 1 && res.locks_per_call == 0);
    OK(weft_ep_get(pool, 1, &ep2));
    CHECK(ep2 != ep);

    OK(weft_ep_pool_destroy(pool));
    FAILS(weft_ep_pool_destroy(pool), WEFT_ERR_NOT_INIT);
    FAILS(weft_ep_get(pool, 0, &ep), WEFT_ERR_NOT_INIT);
    HAS("destroyed");
    FAILS(weft_progress(ep, NULL), WEFT_ERR_NOT_INIT);
    FAILS(weft_ep_pool_resources(pool, &res), WEFT_ERR_NOT_INIT);
}

static void test_buffers(weft_ctx_t ctx)
{
    weft_ep_pool_params_t p = params(3, "single");
    weft_ep_pool_t pool;
    char *b[3];
    size_t bytes;

    p.buf_bytes = 8;
    OK(weft_ep_pool_create(ctx, &p, &pool));
    for (int t = 0; t < 3; t++) {
        OK(weft_ep_pool_buffer(pool, t, (void **)&b[t], &bytes));
        CHECK(bytes == 8 && (uintptr_t)b[t] % 64 == 0);  /* a line of its own */
        if (t > 0)
            CHECK(b[t] - b[t - 1] >= 64);
    }
    FAILS(weft_ep_pool_buffer(pool, 3, (void **)&b[0], &bytes), WEFT_ERR_INVALID_ARG);
    FAILS(weft_ep_pool_buffer(pool, 0, NULL, &bytes), WEFT_ERR_INVALID_ARG);
    OK(weft_ep_pool_destroy(pool));

    /* Sizes whose padding to whole lines, or whose total over the threads,
     * does not fit in a size_t: refused, never a short allocation handed
     * out as buf_bytes per thread. */
    p.buf_bytes = SIZE_MAX;
    FAILS(weft_ep_pool_create(ctx, &p, &pool), WEFT_ERR_NO_MEMORY);
    HAS("3 private buffers of 18446744073709551615 bytes");
    p = params(4, "single");
    p.buf_bytes = (size_t)1 << 62;
    FAILS(weft_ep_pool_create(ctx, &p, &pool), WEFT_ERR_NO_MEMORY);
    HAS("4 private buffers of 4611686018427387904 bytes");
}

/* With the progress thread only "single" is allowed, on the home worker. */
static void test_progress_thread(void)
{
    weft_config_t cfg;
    weft_ctx_t ctx;
    weft_ep_pool_params_t p = params(2, "dedicated");
    weft_ep_pool_t pool;
    weft_resources_t res;

    OK(weft_config_init(&cfg));
    cfg.progress_thread = 1;
    OK(weft_init(&cfg, &ctx));
    FAILS(weft_ep_pool_create(ctx, &p, &pool), WEFT_ERR_UNSUPPORTED);
    HAS("progress thread");
    p.policy = "single";
    OK(weft_ep_pool_create(ctx, &p, &pool));
    OK(weft_ep_pool_resources(pool, &res));
    CHECK(res.workers == 0 && res.workers_used == 1 && res.locks_per_call == 1);
    /* left for weft_finalize to destroy */
    OK(weft_finalize(ctx));
    FAILS(weft_ep_pool_resources(pool, &res), WEFT_ERR_NOT_INIT);
}

/* Endpoints are watched by the trace points (their divert word, src/prof):
 * a pool of 40 endpoints grows the watch list at least once.  With that
 * growth refused the pool is refused with WEFT_ERR_NO_MEMORY, naming the
 * list, and the endpoints made so far are released; then a pool is made
 * and destroyed as usual. */
static void test_out_of_memory(weft_ctx_t ctx)
{
#if WEFT_TEST_INTERPOSE_REALLOC
    weft_ep_pool_params_t p = params(1, "process");
    weft_ep_pool_t pool = NULL;
    weft_ep_t ep;

    p.eps_per_thread = 40;
    int blocks = live_weft_blocks();
    fail_weft_realloc = 1;
    FAILS(weft_ep_pool_create(ctx, &p, &pool), WEFT_ERR_NO_MEMORY);
    fail_weft_realloc = 0;
    CHECK(weft_reallocs_failed > 0);
    HAS("weft_ep_pool_create: trace point watch list");
    CHECK(pool == NULL);
    /* the endpoints it had made were never handed out: none stays behind */
    if (live_weft_blocks() != blocks) {
        fprintf(stderr, "a refused pool left %d of libweft's endpoints allocated\n",
                live_weft_blocks() - blocks);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    OK(weft_ep_pool_create(ctx, &p, &pool));
    OK(weft_ep_get_nth(pool, 0, 39, &ep));
    OK(weft_flush(ep));
    OK(weft_ep_pool_destroy(pool));
#else
    (void)ctx;  /* trace points compiled out, or a sanitizer owns realloc */
#endif
}

int main(void)
{
    weft_ctx_t ctx;
    int provided, rank;

    MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    test_bad_params(ctx);
    test_bad_use(ctx);
    test_buffers(ctx);
    test_out_of_memory(ctx);
    OK(weft_finalize(ctx));
    test_progress_thread();
    if (rank == 0)
        printf("pool bad input: every error reported with its values\n");
    MPI_Finalize();
    return 0;
}
