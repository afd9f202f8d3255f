/*
 * ft_comm_mpi.c -- the transposition over MPI two-sided communication.
 *
 * exchange-mpi is NPB's way: one MPI_Alltoall after all the planes.
 * slabs-mpi and pencils-mpi pre-post every receive before the phase (so no
 * message arrives unexpected), MPI_Isend each message as soon as its rows
 * are computed, and MPI_Waitall at the end, as in the paper's MPI versions.
 */
#include <stdlib.h>

#include "ft.h"

typedef struct {
    MPI_Request *reqs;     /* receives first, then sends */
    int          nreqs, nrecvs;
    int          nsends;
    int         *counts, *displs;   /* exchange: per peer, in elements */
} mpi_state_t;

/* One tag is enough: messages between two ranks are matched in the order
 * they were sent, and both sides walk (plane, row) in increasing order. */
#define FT_TAG 7

static int mpi_init(ft_t *ft)
{
    mpi_state_t *st = calloc(1, sizeof *st);

    if (!st)
        return -1;
    st->counts = malloc(2 * (size_t)ft->nranks * sizeof *st->counts);
    if (!st->counts) {
        free(st);
        return -1;
    }
    st->displs = st->counts + ft->nranks;
    ft->backend_state = st;
    return 0;
}

static void mpi_finalize(ft_t *ft)
{
    mpi_state_t *st = ft->backend_state;

    if (st) {
        free(st->reqs);
        free(st->counts);
    }
    free(st);
    ft->backend_state = NULL;
}

static ft_cplx *mpi_alloc_target(ft_t *ft, size_t n, void **handle)
{
#ifndef FT_SMPI
    (void)ft;
#endif
    *handle = NULL;
    return FT_ALLOC(ft, n);
}

static void mpi_free_target(ft_t *ft, ft_cplx *buf, void *handle)
{
#ifndef FT_SMPI
    (void)ft;
#endif
    (void)handle;
    FT_FREE(ft, buf);
}

static void mpi_phase_begin(ft_t *ft, ft_phase_t *ph)
{
    mpi_state_t *st = ft->backend_state;
    const int k = ph->unit_rows, npl = ph->src.nplanes;
    const int count = k * ft->nx_pad;

    /* Grown on first use (the untimed warm-up), never on the timed run. */
    if (st->nreqs < 2 * ph->msgs) {
        free(st->reqs);
        st->reqs = malloc(2 * (size_t)ph->msgs * sizeof *st->reqs);
        if (!st->reqs)
            ft_die(ft, "ft: cannot allocate %lld MPI requests\n", 2 * ph->msgs);
        st->nreqs = (int)(2 * ph->msgs);
    }
    st->nrecvs = 0;
    st->nsends = 0;
    for (int s = 0; s < ft->nranks; s++) {
        if (s == ft->rank && ph->local_direct)
            continue;   /* this rank's rows are already in place */
        for (int p = s * npl; p < (s + 1) * npl; p++)
            for (int al = 0; al < ph->dst.nplanes; al += k)
                MPI_Irecv(ph->target + al * ph->dst.plane_stride + p * ph->dst.row_stride,
                          count, MPI_C_DOUBLE_COMPLEX, s, FT_TAG, ft->comm,
                          &st->reqs[st->nrecvs++]);
    }
}

static void mpi_send_unit(ft_t *ft, ft_phase_t *ph, int dest, const ft_cplx *src,
                          size_t dst_off, size_t n)
{
    mpi_state_t *st = ft->backend_state;

    (void)dst_off;   /* the receiver chose the place when it posted */
    MPI_Isend(src, (int)n, MPI_C_DOUBLE_COMPLEX, dest, FT_TAG, ft->comm,
              &st->reqs[ph->msgs + st->nsends++]);
}

/* MPICH defines MPI_STATUSES_IGNORE as (MPI_Status *)1, which GCC 12 takes
 * for a zero-sized array and warns about (-Wstringop-overflow). */
static void wait_all(int n, MPI_Request *reqs)
{
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
    MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
}

static void mpi_phase_end(ft_t *ft, ft_phase_t *ph)
{
    mpi_state_t *st = ft->backend_state;

    wait_all(st->nrecvs, st->reqs);
    wait_all(st->nsends, st->reqs + ph->msgs);
}

/* NPB's all-to-all; when this rank's own block is already in place, an
 * all-to-all-v that leaves it out, so that MPI does not copy it again. */
static void mpi_exchange(ft_t *ft, ft_phase_t *ph)
{
    mpi_state_t *st = ft->backend_state;
    const int count = (int)(ph->msg_bytes / sizeof(ft_cplx));

    if (!ph->local_direct) {
        MPI_Alltoall(ft->sendbuf, count, MPI_C_DOUBLE_COMPLEX, ph->target, count,
                     MPI_C_DOUBLE_COMPLEX, ft->comm);
        return;
    }
    for (int r = 0; r < ft->nranks; r++) {
        st->counts[r] = r == ft->rank ? 0 : count;
        st->displs[r] = r * count;
    }
    MPI_Alltoallv(ft->sendbuf, st->counts, st->displs, MPI_C_DOUBLE_COMPLEX, ph->target,
                  st->counts, st->displs, MPI_C_DOUBLE_COMPLEX, ft->comm);
}

const ft_backend_t ft_backend_mpi = {
    .name = "mpi",
    .init = mpi_init,
    .finalize = mpi_finalize,
    .alloc_target = mpi_alloc_target,
    .free_target = mpi_free_target,
    .phase_begin = mpi_phase_begin,
    .send_unit = mpi_send_unit,
    .phase_end = mpi_phase_end,
    .exchange = mpi_exchange,
};
