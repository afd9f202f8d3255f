/* The pool policy "auto" applies the advice `weft advise endpoints` saved
 * (WEFT_EP_ADVICE): the line whose thread count is closest to the pool's;
 * no file, a file without a line, or an advised name that is no policy
 * are refused with WEFT_ERR_CONFIG or the parser's error. */
#include "../common.h"

#include <string.h>
#include <unistd.h>

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs(text, f);
    fclose(f);
}

/* The pool "auto" makes for nthreads, by what it created. */
static void check_auto(weft_ctx_t ctx, int nthreads, unsigned workers, unsigned contexts)
{
    weft_ep_pool_params_t p = {.nthreads = nthreads, .policy = "auto"};
    weft_ep_pool_t        pool;
    weft_resources_t      res;

    OK(weft_ep_pool_create(ctx, &p, &pool));
    OK(weft_ep_pool_resources(pool, &res));
    CHECK(res.workers == workers && res.ucx_contexts == contexts);
    OK(weft_ep_pool_destroy(pool));
}

int main(int argc, char **argv)
{
    weft_ctx_t            ctx;
    weft_ep_pool_t        pool;
    weft_ep_pool_params_t p = {.nthreads = 2, .policy = "auto"};
    char                  path[128];
    int                   rank;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    snprintf(path, sizeof(path), "/tmp/weft-test-advice-%d-%d", (int)getpid(), rank);
    setenv("WEFT_EP_ADVICE", path, 1);
    OK(weft_init(NULL, &ctx));

    unlink(path);
    FAILS(weft_ep_pool_create(ctx, &p, &pool), WEFT_ERR_CONFIG);
    CHECK(strstr(weft_last_error(), "no saved advice") != NULL);
    write_file(path, "# nothing\n");
    FAILS(weft_ep_pool_create(ctx, &p, &pool), WEFT_ERR_CONFIG);
    write_file(path, "2 nonsense\n");
    FAILS(weft_ep_pool_create(ctx, &p, &pool), WEFT_ERR_INVALID_ARG);

    /* 1 and 2 threads: dedicated-2x (two workers a thread); 8: single. */
    write_file(path, "1 dedicated-2x\n8 single\n");
    check_auto(ctx, 2, 4, 1);
    check_auto(ctx, 7, 1, 1);
    /* 4 is nearer 1 (3 away) than 8 (4 away); 5 nearer 8 */
    check_auto(ctx, 4, 8, 1);
    check_auto(ctx, 5, 1, 1);

    OK(weft_finalize(ctx));
    unlink(path);
    MPI_Finalize();
    return 0;
}
