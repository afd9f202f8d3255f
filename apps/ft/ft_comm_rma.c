/*
 * ft_comm_rma.c -- the transposition over MPI one-sided puts (MPI-3 RMA).
 *
 * The same pattern as the weft backend (ft_comm_weft.c) in MPI's words: the
 * two transposition targets are windows, each locked for every rank once
 * for the whole run (passive target, MPI_MODE_NOCHECK), a message is an
 * MPI_Put to its final place at the receiver, and a phase ends with
 * MPI_Win_flush_all, a barrier and MPI_Win_sync (which orders the target's
 * later loads after the puts under the separate memory model as well).
 * It is the one-sided algorithm that SimGrid SMPI can run, for `weft
 * project ft`, where weft's UCX path cannot; the ordering argument for
 * reusing a target is the weft backend's.
 */
#include <stdlib.h>

#include "ft.h"

static int rma_init(ft_t *ft)
{
    ft->backend_state = NULL;
    return 0;
}

static void rma_finalize(ft_t *ft)
{
    (void)ft;
}

/* Under SMPI the window is made over memory of FT_ALLOC, so that a
 * simulated run shares it between ranks; elsewhere MPI allocates it, which
 * lets an MPI library on one node give a window of shared memory. */
static ft_cplx *rma_alloc_target(ft_t *ft, size_t n, void **handle)
{
    MPI_Win *win = malloc(sizeof *win);
    ft_cplx *buf = NULL;
    const MPI_Aint bytes = (MPI_Aint)(n * sizeof(ft_cplx));

    if (!win)
        return NULL;
#ifdef FT_SMPI
    buf = FT_ALLOC(ft, n);
    if (!buf || MPI_Win_create(buf, bytes, sizeof(ft_cplx), MPI_INFO_NULL, ft->comm, win) !=
                    MPI_SUCCESS) {
        free(win);
        return NULL;
    }
#else
    if (MPI_Win_allocate(bytes, sizeof(ft_cplx), MPI_INFO_NULL, ft->comm, &buf, win) !=
        MPI_SUCCESS) {
        free(win);
        return NULL;
    }
#endif
    MPI_Win_lock_all(MPI_MODE_NOCHECK, *win);
    *handle = win;
    return buf;
}

static void rma_free_target(ft_t *ft, ft_cplx *buf, void *handle)
{
    MPI_Win *win = handle;

    MPI_Win_unlock_all(*win);
    MPI_Win_free(win);
    free(win);
#ifdef FT_SMPI
    FT_FREE(ft, buf);
#else
    (void)ft;
    (void)buf;
#endif
}

static void rma_phase_begin(ft_t *ft, ft_phase_t *ph)
{
    (void)ft;
    (void)ph;
}

static void rma_send_unit(ft_t *ft, ft_phase_t *ph, int dest, const ft_cplx *src,
                          size_t dst_off, size_t n)
{
    MPI_Win *win = ph->target_handle;

    MPI_Put(src, (int)n, MPI_C_DOUBLE_COMPLEX, dest, (MPI_Aint)dst_off, (int)n,
            MPI_C_DOUBLE_COMPLEX, *win);
#ifdef FT_SMPI
    /* SMPI charges a put no CPU time of its own: the platform's cost of
     * initiating and completing one (--put-overhead). */
    if (ft->opt.put_overhead > 0.0)
        smpi_execute(ft->opt.put_overhead);
#else
    (void)ft;
#endif
}

static void rma_phase_end(ft_t *ft, ft_phase_t *ph)
{
    MPI_Win *win = ph->target_handle;

    MPI_Win_flush_all(*win);
    MPI_Barrier(ft->comm);
    MPI_Win_sync(*win);
}

/* One put per peer of this rank's whole block, as the weft backend does. */
static void rma_exchange(ft_t *ft, ft_phase_t *ph)
{
    const size_t block = ph->msg_bytes / sizeof(ft_cplx);

    for (int d = 1; d <= ft->nranks; d++) {
        const int r = (ft->rank + d) % ft->nranks;
        if (r == ft->rank && ph->local_direct)
            continue;   /* already in place */
        rma_send_unit(ft, ph, r, ft->sendbuf + r * block,
                      (size_t)(ph->src.plane0 * ph->dst.row_stride), block);
    }
    rma_phase_end(ft, ph);
}

const ft_backend_t ft_backend_rma = {
    .name = "rma",
    .init = rma_init,
    .finalize = rma_finalize,
    .alloc_target = rma_alloc_target,
    .free_target = rma_free_target,
    .phase_begin = rma_phase_begin,
    .send_unit = rma_send_unit,
    .phase_end = rma_phase_end,
    .exchange = rma_exchange,
};
