/* WEFT_Comm_* of weft_mpi.h: argument checks, then the shared split; weft
 * statuses become MPI error classes and the message goes to
 * weft_last_error(). */
#include "team.h"
#include "runtime/runtime.h"

#include <weft_mpi.h>

/* Record the message and return the MPI error class of a status (team.h). */
int weft__topo_mpi_error(const char *fn, weft_status_t st, const weft__msg_t *err)
{
    weft__error(st, fn, "%s", err->msg);
    switch (st) {
    case WEFT_OK:              return MPI_SUCCESS;
    case WEFT_ERR_INVALID_ARG: return MPI_ERR_ARG;
    case WEFT_ERR_CONFIG:      return MPI_ERR_INFO_VALUE;
    case WEFT_ERR_NO_MEMORY:   return MPI_ERR_NO_MEM;
    default:                   return MPI_ERR_OTHER;
    }
}

/* MPI must be running, and out parameters present. */
static weft_status_t check_call(const void *out1, const void *out2, weft__msg_t *err)
{
    int up = 0, down = 0;

    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (!up || down)
        return weft__fail(err, WEFT_ERR_INVALID_ARG, "MPI is not initialised");
    if (!out1 || !out2)
        return weft__fail(err, WEFT_ERR_INVALID_ARG, "NULL output argument");
    return WEFT_OK;
}

int WEFT_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                         MPI_Comm *newcomm)
{
    weft__msg_t      err;
    MPI_Comm         nc;
    weft_status_t    st;

    if (split_type != WEFT_COMM_TYPE_PHYSICAL_TOPOLOGY)
        return MPI_Comm_split_type(comm, split_type, key, info, newcomm);
    if ((st = check_call(newcomm, newcomm, &err)) != WEFT_OK)
        return weft__topo_mpi_error(__func__, st, &err);
    if ((st = weft__topo_split(comm, info, key, &nc, NULL, &err)) != WEFT_OK)
        return weft__topo_mpi_error(__func__, st, &err);
    *newcomm = nc;
    return MPI_SUCCESS;
}

int WEFT_Comm_hsplit_with_roots(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
                                MPI_Comm *rootscomm)
{
    weft__msg_t err;
    MPI_Comm         nc, rc;
    int              rank = 0;
    weft_status_t    st;

    if ((st = check_call(newcomm, rootscomm, &err)) != WEFT_OK)
        return weft__topo_mpi_error(__func__, st, &err);
    if (comm != MPI_COMM_NULL)
        MPI_Comm_rank(comm, &rank);
    if ((st = weft__topo_split(comm, info, rank, &nc, &rc, &err)) != WEFT_OK)
        return weft__topo_mpi_error(__func__, st, &err);
    *newcomm = nc;
    *rootscomm = rc;
    return MPI_SUCCESS;
}

int WEFT_Comm_get_hlevel_info(MPI_Comm comm, int *num_comms, int *index, const char **type)
{
    weft__msg_t        err;
    weft__topo_level_t level;
    weft_status_t      st = check_call(num_comms, index, &err);

    if (st == WEFT_OK && !type)
        st = weft__fail(&err, WEFT_ERR_INVALID_ARG, "NULL output argument");
    if (st == WEFT_OK)
        st = weft__topo_level(comm, &level, &err);
    if (st != WEFT_OK)
        return weft__topo_mpi_error(__func__, st, &err);
    *num_comms = level.num_comms;
    *index = level.index;
    *type = level.type;
    return MPI_SUCCESS;
}

int WEFT_Comm_get_min_hlevel(MPI_Comm comm, int nranks, const int *ranks, const char **type)
{
    weft__msg_t      err;
    const char      *name;
    weft_status_t    st = check_call(type, type, &err);

    if (st == WEFT_OK)
        st = weft__topo_min_level(comm, MPI_INFO_NULL, nranks, ranks, &name, &err);
    if (st != WEFT_OK)
        return weft__topo_mpi_error(__func__, st, &err);
    *type = name;
    return MPI_SUCCESS;
}
