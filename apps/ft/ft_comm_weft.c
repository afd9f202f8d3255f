/*
 * ft_comm_weft.c -- the transposition over weft one-sided puts.
 *
 * Both transposition targets (u0 and u2) are symmetric segments, so a rank
 * puts each message straight to its final place at the receiver: nothing
 * is posted in advance and the receiver takes no part until the phase ends.
 * Messages are implicit puts (weft_put_nbi) from the send buffer, which is
 * not touched again before the flush; weft_flush then weft_barrier end the
 * phase: after them every rank's rows are in every target.
 *
 * Reuse of a target: a rank puts into a peer's u2 during iteration t+1
 * while that peer may still be computing on u2 of iteration t, unless
 * something orders the two.  The per-iteration checksum is an allreduce
 * that every rank enters after its last read of u2 (ft_checksum), and the
 * timed run starts after a barrier; u0 is the target of the forward phase
 * alone.  That is why no extra barrier opens a phase.
 */
#include <stdio.h>
#include <stdlib.h>

#include <weft.h>

#include "ft.h"

typedef struct {
    weft_ctx_t ctx;
    weft_ep_t  ep;
} weft_state_t;

static void check(const ft_t *ft, weft_status_t st, const char *what)
{
    if (st != WEFT_OK)
        ft_die(ft, "ft: rank %d: %s: %s (%s)\n", ft->rank, what, weft_strerror(st),
               weft_last_error());
}

/* The context spans MPI_COMM_WORLD, the communicator of the benchmark. */
static int weft_backend_init(ft_t *ft)
{
    weft_state_t *st = calloc(1, sizeof *st);

    if (!st)
        return -1;
    if (weft_init(NULL, &st->ctx) != WEFT_OK || weft_ep_default(st->ctx, &st->ep) != WEFT_OK) {
        fprintf(stderr, "ft: rank %d: weft: %s\n", ft->rank, weft_last_error());
        free(st);
        return -1;
    }
    ft->backend_state = st;
    return 0;
}

static void weft_backend_finalize(ft_t *ft)
{
    weft_state_t *st = ft->backend_state;

    check(ft, weft_finalize(st->ctx), "weft_finalize");
    free(st);
    ft->backend_state = NULL;
}

static ft_cplx *weft_alloc_target(ft_t *ft, size_t n, void **handle)
{
    const weft_state_t *ws = ft->backend_state;
    weft_seg_t seg;
    void *local;
    weft_status_t st = weft_seg_alloc(ws->ctx, n * sizeof(ft_cplx), &seg, &local);

    if (st != WEFT_OK) {
        fprintf(stderr, "ft: rank %d: weft_seg_alloc of %zu bytes: %s (%s)\n", ft->rank,
                n * sizeof(ft_cplx), weft_strerror(st), weft_last_error());
        return NULL;
    }
    *handle = seg;
    return local;
}

static void weft_free_target(ft_t *ft, ft_cplx *buf, void *handle)
{
    const weft_state_t *ws = ft->backend_state;

    (void)buf;
    check(ft, weft_seg_free(ws->ctx, handle), "weft_seg_free");
}

static void weft_phase_begin(ft_t *ft, ft_phase_t *ph)
{
    (void)ft;
    (void)ph;
}

static void weft_send_unit(ft_t *ft, ft_phase_t *ph, int dest, const ft_cplx *src,
                           size_t dst_off, size_t n)
{
    const weft_state_t *ws = ft->backend_state;

    check(ft, weft_put_nbi(ws->ep, dest, ph->target_handle, dst_off * sizeof(ft_cplx), src,
                           n * sizeof(ft_cplx)),
          "weft_put_nbi");
}

static void weft_phase_end(ft_t *ft, ft_phase_t *ph)
{
    const weft_state_t *ws = ft->backend_state;

    (void)ph;
    check(ft, weft_flush(ws->ep), "weft_flush");
    check(ft, weft_barrier(ws->ctx), "weft_barrier");
}

/* One put per peer of this rank's whole block, the one-sided counterpart
 * of MPI_Alltoall; a rank's block sits at src.plane0 rows of the target. */
static void weft_exchange(ft_t *ft, ft_phase_t *ph)
{
    const size_t block = ph->msg_bytes / sizeof(ft_cplx);

    for (int d = 1; d <= ft->nranks; d++) {
        const int r = (ft->rank + d) % ft->nranks;
        if (r == ft->rank && ph->local_direct)
            continue;   /* already in place */
        weft_send_unit(ft, ph, r, ft->sendbuf + r * block,
                       (size_t)(ph->src.plane0 * ph->dst.row_stride), block);
    }
    weft_phase_end(ft, ph);
}

const ft_backend_t ft_backend_weft = {
    .name = "weft",
    .init = weft_backend_init,
    .finalize = weft_backend_finalize,
    .alloc_target = weft_alloc_target,
    .free_target = weft_free_target,
    .phase_begin = weft_phase_begin,
    .send_unit = weft_send_unit,
    .phase_end = weft_phase_end,
    .exchange = weft_exchange,
};
