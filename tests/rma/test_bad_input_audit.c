/* The misuse matrix of the public API (docs/errors.md is generated from
 * these assertions and the other error tests): every one-sided call with a
 * NULL endpoint, a rank outside the context, a NULL, freed or foreign
 * segment, an offset past the end, a NULL buffer, and after
 * weft_finalize; the UCX interoperability calls; WEFT_Team_comm; a
 * malformed topology description at a split; and every call that takes a
 * context, endpoint, segment, team or pool after weft_finalize.  Each
 * returns its documented error and the context stays usable. */
#include "../common.h"
#include <weft_mpi.h>
#include <weft_ucx.h>

#include <string.h>

#define SEG 4096

static void nop(weft_ctx_t c, int s, const void *h, size_t hl, const void *p, size_t l, void *a)
{
    (void)c; (void)s; (void)h; (void)hl; (void)p; (void)l; (void)a;
}

int main(int argc, char **argv)
{
    weft_ctx_t ctx, other;
    weft_ep_t ep;
    weft_seg_t seg, freed, foreign;
    weft_event_t ev = WEFT_EVENT_NULL;
    weft_team_t team, child, gone;
    weft_ep_pool_t pool;
    weft_ep_pool_params_t pp;
    weft_ep_t pep;
    MPI_Comm comm;
    ucp_context_h ucp;
    ucp_worker_h worker;
    ucp_ep_h uep;
    ucp_rkey_h rkey;
    uint64_t raddr, old, buf[8] = {1};
    void *ptr;
    int rank, n, provided;
    size_t bytes;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    OK(weft_init(NULL, &ctx));
    OK(weft_init(NULL, &other));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, SEG, &seg, NULL));
    OK(weft_seg_alloc(ctx, SEG, &freed, NULL));
    OK(weft_seg_free(ctx, freed));
    OK(weft_seg_alloc(other, SEG, &foreign, NULL));
    OK(weft_am_register(ctx, 2, nop, NULL));

    /* NULL endpoint */
    FAILS(weft_put(NULL, 0, seg, 0, buf, 8), WEFT_ERR_INVALID_ARG);
    FAILS(weft_get(NULL, buf, 0, seg, 0, 8), WEFT_ERR_INVALID_ARG);
    FAILS(weft_put_nb(NULL, 0, seg, 0, buf, 8, &ev), WEFT_ERR_INVALID_ARG);
    FAILS(weft_get_nb(NULL, buf, 0, seg, 0, 8, &ev), WEFT_ERR_INVALID_ARG);
    FAILS(weft_put_nbi(NULL, 0, seg, 0, buf, 8), WEFT_ERR_INVALID_ARG);
    FAILS(weft_get_nbi(NULL, buf, 0, seg, 0, 8), WEFT_ERR_INVALID_ARG);
    FAILS(weft_atomic_fetch_add(NULL, 0, seg, 0, 1, &old), WEFT_ERR_INVALID_ARG);
    FAILS(weft_atomic_add_nbi(NULL, 0, seg, 0, 1), WEFT_ERR_INVALID_ARG);
    FAILS(weft_atomic_cswap(NULL, 0, seg, 0, 0, 1, &old), WEFT_ERR_INVALID_ARG);
    FAILS(weft_put_signal_nb(NULL, 0, seg, 8, buf, 8, seg, 0, 1, &ev), WEFT_ERR_INVALID_ARG);
    FAILS(weft_signal_wait_until(NULL, seg, 0, 0, NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_am_send_nb(NULL, 0, 2, NULL, 0, NULL, 0, &ev), WEFT_ERR_INVALID_ARG);
    FAILS(weft_ep_unlock(NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_ucx_worker(NULL, &worker), WEFT_ERR_INVALID_ARG);
    FAILS(weft_ucx_target(NULL, 0, seg, 0, &uep, &rkey, &raddr), WEFT_ERR_INVALID_ARG);

    /* rank outside [0, n) */
    FAILS(weft_put(ep, n, seg, 0, buf, 8), WEFT_ERR_RANK);
    FAILS(weft_get(ep, buf, -1, seg, 0, 8), WEFT_ERR_RANK);
    FAILS(weft_put_nb(ep, -1, seg, 0, buf, 8, &ev), WEFT_ERR_RANK);
    FAILS(weft_get_nb(ep, buf, n, seg, 0, 8, &ev), WEFT_ERR_RANK);
    FAILS(weft_put_nbi(ep, -7, seg, 0, buf, 8), WEFT_ERR_RANK);
    FAILS(weft_get_nbi(ep, buf, n + 1000, seg, 0, 8), WEFT_ERR_RANK);
    FAILS(weft_atomic_fetch_add(ep, n, seg, 0, 1, &old), WEFT_ERR_RANK);
    FAILS(weft_atomic_add_nbi(ep, -1, seg, 0, 1), WEFT_ERR_RANK);
    FAILS(weft_atomic_cswap(ep, n, seg, 0, 0, 1, &old), WEFT_ERR_RANK);
    FAILS(weft_put_signal_nb(ep, n, seg, 8, buf, 8, seg, 0, 1, &ev), WEFT_ERR_RANK);
    FAILS(weft_am_send_nb(ep, n, 2, NULL, 0, NULL, 0, &ev), WEFT_ERR_RANK);
    FAILS(weft_ptr(ctx, n, seg, 0, &ptr), WEFT_ERR_RANK);
    FAILS(weft_ucx_target(ep, -1, seg, 0, &uep, &rkey, &raddr), WEFT_ERR_RANK);

    /* NULL segment */
    FAILS(weft_put(ep, 0, NULL, 0, buf, 8), WEFT_ERR_SEG);
    FAILS(weft_get(ep, buf, 0, NULL, 0, 8), WEFT_ERR_SEG);
    FAILS(weft_put_nb(ep, 0, NULL, 0, buf, 8, &ev), WEFT_ERR_SEG);
    FAILS(weft_get_nb(ep, buf, 0, NULL, 0, 8, &ev), WEFT_ERR_SEG);
    FAILS(weft_put_nbi(ep, 0, NULL, 0, buf, 8), WEFT_ERR_SEG);
    FAILS(weft_get_nbi(ep, buf, 0, NULL, 0, 8), WEFT_ERR_SEG);
    FAILS(weft_atomic_fetch_add(ep, 0, NULL, 0, 1, &old), WEFT_ERR_SEG);
    FAILS(weft_atomic_add_nbi(ep, 0, NULL, 0, 1), WEFT_ERR_SEG);
    FAILS(weft_atomic_cswap(ep, 0, NULL, 0, 0, 1, &old), WEFT_ERR_SEG);
    FAILS(weft_put_signal_nb(ep, 0, seg, 8, buf, 8, NULL, 0, 1, &ev), WEFT_ERR_SEG);
    FAILS(weft_signal_wait_until(ep, NULL, 0, 0, NULL), WEFT_ERR_SEG);
    FAILS(weft_seg_query(NULL, &bytes, &ptr), WEFT_ERR_SEG);
    FAILS(weft_seg_free(ctx, NULL), WEFT_ERR_SEG);
    FAILS(weft_ucx_target(ep, 0, NULL, 0, &uep, &rkey, &raddr), WEFT_ERR_SEG);

    /* freed segment (and its double free) */
    FAILS(weft_put(ep, 0, freed, 0, buf, 8), WEFT_ERR_SEG);
    FAILS(weft_get(ep, buf, 0, freed, 0, 8), WEFT_ERR_SEG);
    FAILS(weft_put_nb(ep, 0, freed, 0, buf, 8, &ev), WEFT_ERR_SEG);
    FAILS(weft_get_nb(ep, buf, 0, freed, 0, 8, &ev), WEFT_ERR_SEG);
    FAILS(weft_put_nbi(ep, 0, freed, 0, buf, 8), WEFT_ERR_SEG);
    FAILS(weft_get_nbi(ep, buf, 0, freed, 0, 8), WEFT_ERR_SEG);
    FAILS(weft_atomic_fetch_add(ep, 0, freed, 0, 1, &old), WEFT_ERR_SEG);
    FAILS(weft_atomic_add_nbi(ep, 0, freed, 0, 1), WEFT_ERR_SEG);
    FAILS(weft_atomic_cswap(ep, 0, freed, 0, 0, 1, &old), WEFT_ERR_SEG);
    FAILS(weft_put_signal_nb(ep, 0, freed, 8, buf, 8, seg, 0, 1, &ev), WEFT_ERR_SEG);
    FAILS(weft_signal_wait_until(ep, freed, 0, 0, NULL), WEFT_ERR_SEG);
    FAILS(weft_seg_query(freed, &bytes, &ptr), WEFT_ERR_SEG);
    FAILS(weft_ptr(ctx, 0, freed, 0, &ptr), WEFT_ERR_SEG);
    FAILS(weft_seg_free(ctx, freed), WEFT_ERR_SEG);
    FAILS(weft_ucx_target(ep, 0, freed, 0, &uep, &rkey, &raddr), WEFT_ERR_SEG);

    /* another context's segment */
    FAILS(weft_put(ep, 0, foreign, 0, buf, 8), WEFT_ERR_SEG);
    FAILS(weft_get(ep, buf, 0, foreign, 0, 8), WEFT_ERR_SEG);
    FAILS(weft_put_nbi(ep, 0, foreign, 0, buf, 8), WEFT_ERR_SEG);
    FAILS(weft_atomic_add_nbi(ep, 0, foreign, 0, 1), WEFT_ERR_SEG);
    FAILS(weft_signal_wait_until(ep, foreign, 0, 0, NULL), WEFT_ERR_SEG);
    FAILS(weft_ptr(ctx, 0, foreign, 0, &ptr), WEFT_ERR_SEG);
    FAILS(weft_seg_free(ctx, foreign), WEFT_ERR_SEG);

    /* offset or size past the end, including offsets that overflow */
    FAILS(weft_put(ep, 0, seg, SEG - 4, buf, 8), WEFT_ERR_BOUNDS);
    FAILS(weft_get(ep, buf, 0, seg, SEG + 1, 0), WEFT_ERR_BOUNDS);
    FAILS(weft_put_nb(ep, 0, seg, SIZE_MAX, buf, 8, &ev), WEFT_ERR_BOUNDS);
    FAILS(weft_get_nb(ep, buf, 0, seg, 8, SIZE_MAX - 4, &ev), WEFT_ERR_BOUNDS);
    FAILS(weft_put_nbi(ep, 0, seg, SEG, buf, 1), WEFT_ERR_BOUNDS);
    FAILS(weft_get_nbi(ep, buf, 0, seg, SEG - 1, 2), WEFT_ERR_BOUNDS);
    FAILS(weft_atomic_fetch_add(ep, 0, seg, SEG - 4, 1, &old), WEFT_ERR_BOUNDS);
    FAILS(weft_atomic_add_nbi(ep, 0, seg, SEG, 1), WEFT_ERR_BOUNDS);
    FAILS(weft_atomic_cswap(ep, 0, seg, SIZE_MAX - 7, 0, 1, &old), WEFT_ERR_BOUNDS);
    FAILS(weft_put_signal_nb(ep, 0, seg, 8, buf, 8, seg, SEG, 1, &ev), WEFT_ERR_BOUNDS);
    FAILS(weft_signal_wait_until(ep, seg, SEG - 4, 0, NULL), WEFT_ERR_BOUNDS);
    FAILS(weft_ptr(ctx, 0, seg, SEG, &ptr), WEFT_ERR_BOUNDS);
    FAILS(weft_ucx_target(ep, 0, seg, SEG + 1, &uep, &rkey, &raddr), WEFT_ERR_BOUNDS);

    /* misaligned words */
    FAILS(weft_atomic_fetch_add(ep, 0, seg, 4, 1, &old), WEFT_ERR_ALIGN);
    FAILS(weft_atomic_add_nbi(ep, 0, seg, 1, 1), WEFT_ERR_ALIGN);
    FAILS(weft_atomic_cswap(ep, 0, seg, 2, 0, 1, &old), WEFT_ERR_ALIGN);
    FAILS(weft_put_signal_nb(ep, 0, seg, 8, buf, 8, seg, 12, 1, &ev), WEFT_ERR_ALIGN);
    FAILS(weft_signal_wait_until(ep, seg, 3, 0, NULL), WEFT_ERR_ALIGN);

    /* NULL buffers and outputs */
    FAILS(weft_put(ep, 0, seg, 0, NULL, 8), WEFT_ERR_INVALID_ARG);
    FAILS(weft_get(ep, NULL, 0, seg, 0, 8), WEFT_ERR_INVALID_ARG);
    FAILS(weft_put_nb(ep, 0, seg, 0, buf, 8, NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_get_nb(ep, NULL, 0, seg, 0, 8, &ev), WEFT_ERR_INVALID_ARG);
    FAILS(weft_put_nbi(ep, 0, seg, 0, NULL, 8), WEFT_ERR_INVALID_ARG);
    FAILS(weft_get_nbi(ep, NULL, 0, seg, 0, 8), WEFT_ERR_INVALID_ARG);
    FAILS(weft_atomic_fetch_add(ep, 0, seg, 0, 1, NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_atomic_cswap(ep, 0, seg, 0, 0, 1, NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_put_signal_nb(ep, 0, seg, 8, NULL, 8, seg, 0, 1, &ev), WEFT_ERR_INVALID_ARG);
    FAILS(weft_am_send_nb(ep, 0, 2, NULL, 4, NULL, 0, &ev), WEFT_ERR_INVALID_ARG);
    FAILS(weft_am_send_nb(ep, 0, 2, NULL, 0, NULL, 0, NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_am_send_nb(ep, 0, 9, NULL, 0, NULL, 0, &ev), WEFT_ERR_AM_ID);
    FAILS(weft_am_send_nb(ep, 0, 2, buf, WEFT_AM_MAX_HDR + 1, NULL, 0, &ev), WEFT_ERR_TOO_LARGE);
    FAILS(weft_ucx_context(ctx, NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_ucx_worker(ep, NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_ucx_target(ep, 0, seg, 0, NULL, &rkey, &raddr), WEFT_ERR_INVALID_ARG);
    FAILS(weft_ucx_context(NULL, &ucp), WEFT_ERR_NOT_INIT);

    /* teams: WEFT_Team_comm, a freed team, a malformed topology description */
    OK(weft_team_world(ctx, &team));
    CHECK(WEFT_Team_comm(team, NULL) == MPI_ERR_ARG);
    CHECK(WEFT_Team_comm(WEFT_TEAM_NULL, &comm) == MPI_ERR_ARG);
    CHECK(WEFT_Team_comm(team, &comm) == MPI_SUCCESS);
    setenv("WEFT_TOPO_SYNTHETIC", "pack:2 bogus:3", 1);
    FAILS(weft_team_split_topology(team, &child, NULL), WEFT_ERR_CONFIG);
    unsetenv("WEFT_TOPO_SYNTHETIC");
    setenv("WEFT_TOPO_BIND", "block:zz", 1);
    FAILS(weft_team_split_topology(team, &child, NULL), WEFT_ERR_CONFIG);
    unsetenv("WEFT_TOPO_BIND");
    OK(weft_team_world(ctx, &gone));
    weft_team_t stale = gone;
    OK(weft_team_free(&gone));
    CHECK(gone == WEFT_TEAM_NULL);
    FAILS(weft_team_rank(stale, &rank), WEFT_ERR_INVALID_ARG);
    FAILS(weft_team_barrier(stale), WEFT_ERR_INVALID_ARG);
    CHECK(WEFT_Team_comm(stale, &comm) == MPI_ERR_ARG);

    /* a pool, kept to use after weft_finalize */
    memset(&pp, 0, sizeof(pp));
    pp.nthreads = 1;
    OK(weft_ep_pool_create(ctx, &pp, &pool));
    OK(weft_ep_get(pool, 0, &pep));

    /* the context still works */
    OK(weft_rank(ctx, &rank));
    OK(weft_put(ep, (rank + 1) % n, seg, 0, buf, 8));
    OK(weft_barrier(ctx));

    /* after weft_finalize: every handle of the context is dead */
    OK(weft_seg_free(other, foreign));
    OK(weft_finalize(other));
    OK(weft_finalize(ctx));
    FAILS(weft_finalize(ctx), WEFT_ERR_NOT_INIT);
    FAILS(weft_rank(ctx, &rank), WEFT_ERR_NOT_INIT);
    FAILS(weft_nranks(ctx, &n), WEFT_ERR_NOT_INIT);
    FAILS(weft_barrier(ctx), WEFT_ERR_NOT_INIT);
    FAILS(weft_ep_default(ctx, &ep), WEFT_ERR_NOT_INIT);
    FAILS(weft_seg_alloc(ctx, SEG, &seg, NULL), WEFT_ERR_NOT_INIT);
    FAILS(weft_seg_free(ctx, seg), WEFT_ERR_NOT_INIT);
    FAILS(weft_ptr(ctx, 0, seg, 0, &ptr), WEFT_ERR_NOT_INIT);
    FAILS(weft_am_register(ctx, 3, nop, NULL), WEFT_ERR_NOT_INIT);
    FAILS(weft_am_dropped(ctx, &old), WEFT_ERR_NOT_INIT);
    FAILS(weft_team_world(ctx, &team), WEFT_ERR_NOT_INIT);
    FAILS(weft_ep_pool_create(ctx, &pp, &pool), WEFT_ERR_NOT_INIT);
    FAILS(weft_ucx_context(ctx, &ucp), WEFT_ERR_NOT_INIT);
    FAILS(weft_put(ep, 0, seg, 0, buf, 8), WEFT_ERR_NOT_INIT);
    FAILS(weft_get(ep, buf, 0, seg, 0, 8), WEFT_ERR_NOT_INIT);
    FAILS(weft_put_nb(ep, 0, seg, 0, buf, 8, &ev), WEFT_ERR_NOT_INIT);
    FAILS(weft_get_nb(ep, buf, 0, seg, 0, 8, &ev), WEFT_ERR_NOT_INIT);
    FAILS(weft_put_nbi(ep, 0, seg, 0, buf, 8), WEFT_ERR_NOT_INIT);
    FAILS(weft_get_nbi(ep, buf, 0, seg, 0, 8), WEFT_ERR_NOT_INIT);
    FAILS(weft_atomic_fetch_add(ep, 0, seg, 0, 1, &old), WEFT_ERR_NOT_INIT);
    FAILS(weft_atomic_add_nbi(ep, 0, seg, 0, 1), WEFT_ERR_NOT_INIT);
    FAILS(weft_atomic_cswap(ep, 0, seg, 0, 0, 1, &old), WEFT_ERR_NOT_INIT);
    FAILS(weft_put_signal_nb(ep, 0, seg, 8, buf, 8, seg, 0, 1, &ev), WEFT_ERR_NOT_INIT);
    FAILS(weft_signal_wait_until(ep, seg, 0, 0, NULL), WEFT_ERR_NOT_INIT);
    FAILS(weft_am_send_nb(ep, 0, 2, NULL, 0, NULL, 0, &ev), WEFT_ERR_NOT_INIT);
    FAILS(weft_flush(ep), WEFT_ERR_NOT_INIT);
    FAILS(weft_progress(ep, NULL), WEFT_ERR_NOT_INIT);
    FAILS(weft_ucx_worker(ep, &worker), WEFT_ERR_NOT_INIT);
    FAILS(weft_ucx_target(ep, 0, seg, 0, &uep, &rkey, &raddr), WEFT_ERR_NOT_INIT);
    FAILS(weft_ep_get(pool, 0, &pep), WEFT_ERR_NOT_INIT);
    FAILS(weft_ep_pool_destroy(pool), WEFT_ERR_NOT_INIT);
    FAILS(weft_ep_lock(pep), WEFT_ERR_NOT_INIT);
    FAILS(weft_ep_unlock(pep), WEFT_ERR_NOT_INIT);
    FAILS(weft_put(pep, 0, seg, 0, buf, 8), WEFT_ERR_NOT_INIT);
    FAILS(weft_team_rank(team, &rank), WEFT_ERR_NOT_INIT);
    /* the collectives say "not a team" for a team of a finalised context */
    FAILS(weft_team_barrier(team), WEFT_ERR_INVALID_ARG);
    /* a team may still be freed (cleanup), once */
    stale = team;
    OK(weft_team_free(&team));
    FAILS(weft_team_free(&stale), WEFT_ERR_INVALID_ARG);
    if (rank == 0)
        printf("misuse matrix: every call returned its documented error\n");
    MPI_Finalize();
    return 0;
}
