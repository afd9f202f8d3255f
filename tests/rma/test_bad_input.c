/* Every kind of misuse the runtime, segment, RMA and AM calls can receive
 * returns its documented error with a message, writes nothing, and leaves
 * the context usable.  The program initialises MPI itself, so it also
 * checks that weft works inside an MPI program that already did. */
#include "../common.h"

#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define SEG 4096

static void expect_message(const char *needle)
{
    if (strstr(weft_last_error(), needle) == NULL) {
        fprintf(stderr, "last error '%s' does not mention '%s'\n", weft_last_error(), needle);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void nop_handler(weft_ctx_t c, int s, const void *h, size_t hl, const void *p, size_t l, void *a)
{
    (void)c; (void)s; (void)h; (void)hl; (void)p; (void)l; (void)a;
}

int main(int argc, char **argv)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg, seg2;
    weft_event_t ev;
    weft_config_t cfg;
    unsigned char *local, buf[64] = {1, 2, 3};
    uint64_t old;
    int rank, n, provided, done;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);

    /* before weft_init */
    FAILS(weft_ep_default(NULL, &ep), WEFT_ERR_NOT_INIT);
    FAILS(weft_rank(NULL, &rank), WEFT_ERR_NOT_INIT);
    FAILS(weft_barrier(NULL), WEFT_ERR_NOT_INIT);
    FAILS(weft_seg_alloc(NULL, SEG, &seg, NULL), WEFT_ERR_NOT_INIT);
    FAILS(weft_am_register(NULL, 0, nop_handler, NULL), WEFT_ERR_NOT_INIT);
    FAILS(weft_finalize(NULL), WEFT_ERR_NOT_INIT);
    FAILS(weft_put(NULL, 0, NULL, 0, buf, 1), WEFT_ERR_INVALID_ARG);
    FAILS(weft_progress(NULL, NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_init(NULL, NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_config_init(NULL), WEFT_ERR_INVALID_ARG);

    /* malformed settings: a clear error, and cfg untouched */
    memset(&cfg, 0xab, sizeof(cfg));
    setenv("WEFT_PROGRESS_THREAD", "maybe", 1);
    FAILS(weft_config_init(&cfg), WEFT_ERR_CONFIG);
    expect_message("WEFT_PROGRESS_THREAD");
    CHECK(((unsigned char *)&cfg)[0] == 0xab);
    FAILS(weft_init(NULL, &ctx), WEFT_ERR_CONFIG);
    unsetenv("WEFT_PROGRESS_THREAD");
    setenv("WEFT_CONNECT", "sometimes", 1);
    FAILS(weft_config_init(&cfg), WEFT_ERR_CONFIG);
    expect_message("lazy, eager");
    unsetenv("WEFT_CONNECT");
    setenv("WEFT_PROGRESS_INTERVAL_US", "-5", 1);
    FAILS(weft_config_init(&cfg), WEFT_ERR_CONFIG);
    unsetenv("WEFT_PROGRESS_INTERVAL_US");
    setenv("WEFT_SHM", "maybe", 1);
    FAILS(weft_init(NULL, &ctx), WEFT_ERR_CONFIG);
    expect_message("WEFT_SHM");
    unsetenv("WEFT_SHM");

    /* every variable, each kind of malformed value */
    static const struct { const char *var, *value, *says; } bad_settings[] = {
        {"WEFT_CONNECT", "", "lazy, eager"},
        {"WEFT_CONNECT", "lazy ", "lazy, eager"},
        {"WEFT_PROGRESS_THREAD", "2", "not a boolean"},
        {"WEFT_PROGRESS_INTERVAL_US", "0", "outside [1, 1000000]"},
        {"WEFT_PROGRESS_INTERVAL_US", "1000001", "outside [1, 1000000]"},
        {"WEFT_PROGRESS_INTERVAL_US", "12abc", "not a non-negative integer"},
        {"WEFT_PROGRESS_INTERVAL_US", "99999999999999999999999", "not a non-negative integer"},
        {"WEFT_VERBOSE", "yess", "not a boolean"},
        {"WEFT_SHM", "2", "not a boolean"},
    };
    for (size_t i = 0; i < sizeof(bad_settings) / sizeof(bad_settings[0]); i++) {
        setenv(bad_settings[i].var, bad_settings[i].value, 1);
        FAILS(weft_config_init(&cfg), WEFT_ERR_CONFIG);
        expect_message(bad_settings[i].var);
        expect_message(bad_settings[i].says);
        FAILS(weft_init(NULL, &ctx), WEFT_ERR_CONFIG);
        unsetenv(bad_settings[i].var);
    }
    CHECK(((unsigned char *)&cfg)[0] == 0xab);

    /* cfg->mpi_comm that is no group of ranks: an error, not MPI's fatal
     * handler (MPI_COMM_NULL) nor a context over the other group of an
     * intercommunicator */
    {
        MPI_Comm null_comm = MPI_COMM_NULL, local, inter;
        int wrank, wsize;

        OK(weft_config_init(&cfg));
        cfg.mpi_comm = &null_comm;
        FAILS(weft_init(&cfg, &ctx), WEFT_ERR_INVALID_ARG);
        expect_message("weft_init: cfg->mpi_comm is MPI_COMM_NULL");
        MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
        MPI_Comm_size(MPI_COMM_WORLD, &wsize);
        if (wsize >= 2) {
            MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &local);
            MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, wrank % 2 ? 0 : 1, 7, &inter);
            cfg.mpi_comm = &inter;
            FAILS(weft_init(&cfg, &ctx), WEFT_ERR_INVALID_ARG);
            expect_message("intercommunicator");
            MPI_Comm_free(&inter);
            MPI_Comm_free(&local);
        }
    }

    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    FAILS(weft_rank(ctx, NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_ep_default(ctx, NULL), WEFT_ERR_INVALID_ARG);

    /* collective arguments: every rank gets the error, none hangs */
    FAILS(weft_seg_alloc(ctx, 0, &seg, NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_seg_alloc(ctx, SEG + (size_t)rank, &seg, NULL),
          n > 1 ? WEFT_ERR_INVALID_ARG : WEFT_OK);
    if (n == 1)
        OK(weft_seg_free(ctx, seg));
    else
        expect_message("different sizes");
    FAILS(weft_seg_alloc(ctx, SEG, rank == 0 ? NULL : &seg, NULL), WEFT_ERR_INVALID_ARG);
    /* the other ranks' message names the call they made, not weft's
     * internal agreement step */
    expect_message(rank == 0 ? "weft_seg_alloc: seg is NULL" : "weft_seg_alloc: another rank failed");
    /* a size whose rounding to whole pages wraps around: refused, naming
     * it (not a 0-byte mapping, which a rank alone on its node zeroed as
     * SIZE_MAX bytes) */
    FAILS(weft_seg_alloc(ctx, SIZE_MAX, &seg, NULL), WEFT_ERR_NO_MEMORY);
    expect_message("18446744073709551615 bytes");

    OK(weft_seg_alloc(ctx, SEG, &seg, (void **)&local));
    int peer = (rank + 1) % n;

    /* a part larger than the node's memory: refused before anything is
     * allocated (a rank alone on its node let UCX allocate and zeroed it,
     * filling memory until the OOM killer left UCX's file in /dev/shm).
     * The check comes before the paths part.  It is tried only when every
     * rank maps a neighbour's part (the direct path), where /dev/shm's free
     * space is checked before any page is reserved, so that a regression
     * fails here instead of filling the machine. */
    {
        void *p;
        int   direct = n > 1 && weft_ptr(ctx, peer, seg, 0, &p) == WEFT_OK, all;
        weft_seg_t huge;

        MPI_Allreduce(&direct, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (all) {
            size_t page = (size_t)sysconf(_SC_PAGESIZE);

            FAILS(weft_seg_alloc(ctx, (size_t)sysconf(_SC_PHYS_PAGES) * page + page, &huge,
                                 NULL), WEFT_ERR_NO_MEMORY);
            expect_message("larger than this node's memory");
        }
    }

    /* ranks */
    FAILS(weft_put(ep, -1, seg, 0, buf, 1), WEFT_ERR_RANK);
    FAILS(weft_put(ep, n, seg, 0, buf, 1), WEFT_ERR_RANK);
    expect_message("outside");
    FAILS(weft_get(ep, buf, n + 7, seg, 0, 1), WEFT_ERR_RANK);
    FAILS(weft_put_nbi(ep, -3, seg, 0, buf, 1), WEFT_ERR_RANK);
    FAILS(weft_am_send(ep, n, 0, NULL, 0, NULL, 0), WEFT_ERR_RANK);

    /* bounds: nothing partially written */
    FAILS(weft_put(ep, peer, seg, SEG - 4, buf, 8), WEFT_ERR_BOUNDS);
    expect_message("exceeds segment size 4096");
    FAILS(weft_put_nbi(ep, peer, seg, SEG + 1, buf, 0), WEFT_ERR_BOUNDS);
    FAILS(weft_put_nb(ep, peer, seg, 8, buf, SIZE_MAX, &ev), WEFT_ERR_BOUNDS);
    FAILS(weft_get_nb(ep, buf, peer, seg, SIZE_MAX, 2, &ev), WEFT_ERR_BOUNDS);
    FAILS(weft_get_nbi(ep, buf, peer, seg, SEG, 1), WEFT_ERR_BOUNDS);
    FAILS(weft_atomic_fetch_add(ep, peer, seg, SEG, 1, &old), WEFT_ERR_BOUNDS);
    FAILS(weft_signal_wait_until(ep, seg, SEG - 4, 1, NULL), WEFT_ERR_BOUNDS);
    OK(weft_put(ep, peer, seg, SEG - 8, buf, 0));  /* zero bytes at the end is fine */
    OK(weft_flush(ep));
    OK(weft_barrier(ctx));
    for (int i = 0; i < SEG; i++)
        CHECK(local[i] == 0);

    /* NULL buffers and outputs */
    FAILS(weft_put(ep, peer, seg, 0, NULL, 8), WEFT_ERR_INVALID_ARG);
    FAILS(weft_get(ep, NULL, peer, seg, 0, 8), WEFT_ERR_INVALID_ARG);
    FAILS(weft_put_nb(ep, peer, seg, 0, buf, 8, NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_get_nb(ep, buf, peer, seg, 0, 8, NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_put_signal_nb(ep, peer, seg, 0, buf, 8, seg, 64, 1, NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_test(NULL, &done), WEFT_ERR_INVALID_ARG);
    FAILS(weft_test(&ev, NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_wait(NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_wait_all(NULL, 3), WEFT_ERR_INVALID_ARG);
    FAILS(weft_atomic_fetch_add(ep, peer, seg, 0, 1, NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_atomic_cswap(ep, peer, seg, 0, 0, 1, NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_flush(NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_seg_query(NULL, NULL, NULL), WEFT_ERR_SEG);

    /* atomics need 8-byte alignment */
    FAILS(weft_atomic_fetch_add(ep, peer, seg, 4, 1, &old), WEFT_ERR_ALIGN);
    FAILS(weft_atomic_cswap(ep, peer, seg, 1, 0, 1, &old), WEFT_ERR_ALIGN);
    FAILS(weft_atomic_add_nbi(ep, peer, seg, 12, 1), WEFT_ERR_ALIGN);
    FAILS(weft_put_signal_nb(ep, peer, seg, 0, buf, 8, seg, 9, 1, &ev), WEFT_ERR_ALIGN);
    FAILS(weft_signal_wait_until(ep, seg, 3, 1, NULL), WEFT_ERR_ALIGN);

    /* active messages */
    FAILS(weft_am_register(ctx, -1, nop_handler, NULL), WEFT_ERR_AM_ID);
    FAILS(weft_am_register(ctx, WEFT_AM_MAX_ID, nop_handler, NULL), WEFT_ERR_AM_ID);
    FAILS(weft_am_send(ep, peer, 3, NULL, 0, NULL, 0), WEFT_ERR_AM_ID);
    expect_message("no handler");
    FAILS(weft_am_send(ep, peer, WEFT_AM_MAX_ID + 1, NULL, 0, NULL, 0), WEFT_ERR_AM_ID);
    OK(weft_am_register(ctx, 3, nop_handler, NULL));
    FAILS(weft_am_send(ep, peer, 3, buf, WEFT_AM_MAX_HDR + 1, NULL, 0), WEFT_ERR_TOO_LARGE);
    FAILS(weft_am_send(ep, peer, 3, NULL, 4, NULL, 0), WEFT_ERR_INVALID_ARG);
    expect_message("weft_am_send: hdr is NULL");
    /* no header (hdr NULL, hdr_len 0 is fine): the payload is what is
     * wrong; both named under the call made */
    FAILS(weft_am_send(ep, peer, 3, NULL, 0, NULL, 4), WEFT_ERR_INVALID_ARG);
    expect_message("weft_am_send: payload is NULL");
    FAILS(weft_am_send_nb(ep, peer, 3, NULL, 0, NULL, 0, NULL), WEFT_ERR_INVALID_ARG);

    /* freed segments and double free */
    OK(weft_seg_alloc(ctx, SEG, &seg2, NULL));
    OK(weft_seg_free(ctx, seg2));
    FAILS(weft_put(ep, peer, seg2, 0, buf, 1), WEFT_ERR_SEG);
    expect_message("freed");
    FAILS(weft_get_nbi(ep, buf, peer, seg2, 0, 1), WEFT_ERR_SEG);
    FAILS(weft_seg_query(seg2, NULL, NULL), WEFT_ERR_SEG);
    FAILS(weft_seg_free(ctx, seg2), WEFT_ERR_SEG);
    FAILS(weft_put(ep, peer, NULL, 0, buf, 1), WEFT_ERR_SEG);
    FAILS(weft_seg_free(ctx, NULL), WEFT_ERR_SEG);

    /* a freed segment as the signal word, NULL segments and endpoints */
    FAILS(weft_put_signal_nb(ep, peer, seg, 0, buf, 8, seg2, 0, 1, &ev), WEFT_ERR_SEG);
    FAILS(weft_atomic_add_nbi(ep, peer, seg2, 0, 1), WEFT_ERR_SEG);
    FAILS(weft_atomic_cswap(ep, peer, seg2, 0, 0, 1, &old), WEFT_ERR_SEG);
    FAILS(weft_signal_wait_until(ep, NULL, 0, 1, NULL), WEFT_ERR_SEG);
    FAILS(weft_signal_wait_until(ep, seg2, 0, 1, NULL), WEFT_ERR_SEG);
    FAILS(weft_signal_wait_until(NULL, seg, 0, 1, NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_get(NULL, buf, peer, seg, 0, 1), WEFT_ERR_INVALID_ARG);
    FAILS(weft_am_send(NULL, peer, 3, NULL, 0, NULL, 0), WEFT_ERR_INVALID_ARG);
    FAILS(weft_atomic_add_nbi(ep, n, seg, 0, 1), WEFT_ERR_RANK);
    FAILS(weft_atomic_cswap(ep, -1, seg, 0, 0, 1, &old), WEFT_ERR_RANK);
    FAILS(weft_put_signal_nb(ep, n, seg, 0, buf, 8, seg, 64, 1, &ev), WEFT_ERR_RANK);
    FAILS(weft_put_signal_nb(ep, peer, seg, 0, buf, 8, seg, SEG, 1, &ev), WEFT_ERR_BOUNDS);
    FAILS(weft_nranks(ctx, NULL), WEFT_ERR_INVALID_ARG);
    OK(weft_wait_all(NULL, 0));
    OK(weft_am_register(ctx, 3, NULL, NULL));
    FAILS(weft_am_send(ep, peer, 3, NULL, 0, NULL, 0), WEFT_ERR_AM_ID);

    /* a segment of another context is the wrong segment */
    weft_ctx_t other;
    weft_seg_t foreign;
    OK(weft_init(NULL, &other));
    OK(weft_seg_alloc(other, SEG, &foreign, NULL));
    FAILS(weft_put(ep, peer, foreign, 0, buf, 1), WEFT_ERR_SEG);
    expect_message("another context");
    FAILS(weft_get_nb(ep, buf, peer, foreign, 0, 1, &ev), WEFT_ERR_SEG);
    FAILS(weft_seg_free(ctx, foreign), WEFT_ERR_SEG);
    OK(weft_seg_free(other, foreign));
    OK(weft_finalize(other));

    /* teams: NULL, freed, out of range, and a second free through a copy */
    weft_team_t team, copy;
    int tr;
    FAILS(weft_team_world(ctx, NULL), WEFT_ERR_INVALID_ARG);
    OK(weft_team_world(ctx, &team));
    FAILS(weft_team_ctx_rank(team, n, &tr), WEFT_ERR_RANK);
    FAILS(weft_team_ctx_rank(team, -1, &tr), WEFT_ERR_RANK);
    FAILS(weft_team_rank(team, NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_team_rank(NULL, &tr), WEFT_ERR_INVALID_ARG);
    copy = team;
    OK(weft_team_free(&team));
    CHECK(team == WEFT_TEAM_NULL);
    FAILS(weft_team_free(&copy), WEFT_ERR_INVALID_ARG);
    FAILS(weft_team_nranks(copy, &tr), WEFT_ERR_INVALID_ARG);
    FAILS(weft_team_split_topology(copy, &team, NULL), WEFT_ERR_INVALID_ARG);

    /* the context still works after all of that */
    OK(weft_put(ep, peer, seg, 0, buf, 3));
    OK(weft_barrier(ctx));
    CHECK(local[0] == 1 && local[1] == 2 && local[2] == 3);

    OK(weft_finalize(ctx));

    /* after weft_finalize: stale handles are reported, not followed */
    FAILS(weft_finalize(ctx), WEFT_ERR_NOT_INIT);
    expect_message("finalised");
    FAILS(weft_rank(ctx, &rank), WEFT_ERR_NOT_INIT);
    FAILS(weft_barrier(ctx), WEFT_ERR_NOT_INIT);
    FAILS(weft_ep_default(ctx, &ep), WEFT_ERR_NOT_INIT);
    FAILS(weft_seg_alloc(ctx, SEG, &seg2, NULL), WEFT_ERR_NOT_INIT);
    FAILS(weft_put(ep, peer, seg, 0, buf, 1), WEFT_ERR_NOT_INIT);
    FAILS(weft_get_nb(ep, buf, peer, seg, 0, 1, &ev), WEFT_ERR_NOT_INIT);
    FAILS(weft_flush(ep), WEFT_ERR_NOT_INIT);
    FAILS(weft_progress(ep, NULL), WEFT_ERR_NOT_INIT);
    FAILS(weft_am_send(ep, peer, 3, NULL, 0, NULL, 0), WEFT_ERR_NOT_INIT);
    FAILS(weft_seg_query(seg, NULL, NULL), WEFT_ERR_SEG);
    FAILS(weft_seg_free(ctx, seg), WEFT_ERR_NOT_INIT);
    FAILS(weft_nranks(ctx, &n), WEFT_ERR_NOT_INIT);
    FAILS(weft_am_register(ctx, 4, nop_handler, NULL), WEFT_ERR_NOT_INIT);
    FAILS(weft_atomic_fetch_add(ep, peer, seg, 0, 1, &old), WEFT_ERR_NOT_INIT);
    FAILS(weft_atomic_add_nbi(ep, peer, seg, 0, 1), WEFT_ERR_NOT_INIT);
    FAILS(weft_put_signal_nb(ep, peer, seg, 0, buf, 8, seg, 64, 1, &ev), WEFT_ERR_NOT_INIT);
    FAILS(weft_signal_wait_until(ep, seg, 0, 1, NULL), WEFT_ERR_NOT_INIT);
    FAILS(weft_team_world(ctx, &team), WEFT_ERR_NOT_INIT);

    /* every status has a name */
    for (int s = WEFT_OK; s >= WEFT_ERR_UNSUPPORTED; s--)
        CHECK(strncmp(weft_strerror((weft_status_t)s), "WEFT_", 5) == 0);
    CHECK(strcmp(weft_strerror((weft_status_t)-999), "unknown weft status") == 0);

    MPI_Finalize();
    if (rank == 0)
        printf("bad input: every misuse returned its documented error on %d ranks\n", n);
    return 0;
}
