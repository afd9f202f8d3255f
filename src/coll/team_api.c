/* weft_team_bcast etc. of weft.h: one-sided over the team's hierarchy
 * (onesided.c) when the team has a scratch slot, else the MPI path of
 * ops.c over the team's MPI communicator, with weft's datatypes and
 * operations.  The gather is always the MPI path. */
#include "coll.h"
#include "runtime/runtime.h"

#include <limits.h>
#include <weft_mpi.h>

static const MPI_Datatype mpi_types[] = {
    [WEFT_TYPE_BYTE] = MPI_BYTE,       [WEFT_TYPE_INT32] = MPI_INT32_T,
    [WEFT_TYPE_INT64] = MPI_INT64_T,   [WEFT_TYPE_UINT32] = MPI_UINT32_T,
    [WEFT_TYPE_UINT64] = MPI_UINT64_T, [WEFT_TYPE_FLOAT] = MPI_FLOAT,
    [WEFT_TYPE_DOUBLE] = MPI_DOUBLE,
};

static const MPI_Op mpi_ops[] = {
    [WEFT_OP_SUM] = MPI_SUM,   [WEFT_OP_PROD] = MPI_PROD, [WEFT_OP_MIN] = MPI_MIN,
    [WEFT_OP_MAX] = MPI_MAX,   [WEFT_OP_BAND] = MPI_BAND, [WEFT_OP_BOR] = MPI_BOR,
    [WEFT_OP_BXOR] = MPI_BXOR,
};

/* The one-sided state of a live rank team whose state is built, when the
 * arguments are ones prepare_for accepts (op < 0: none; root < 0: none):
 * a call can go straight to it, as a stream of small collectives wants
 * (the checks below are what is left of prepare_for's for such a team).
 * NULL for anything else, which takes the complete path and its errors. */
static weft__os_t *ready_for(weft_team_t team, size_t count, weft_type_t type, int op, int root)
{
    weft__os_t *s = weft__team_live_state(team);
    int size = weft__os_usable_size(s);

    if (size == 0 || (unsigned)type >= sizeof(mpi_types) / sizeof(mpi_types[0]) ||
        count > INT_MAX || root >= size)
        return NULL;
    if (op >= 0 && ((unsigned)op >= sizeof(mpi_ops) / sizeof(mpi_ops[0]) ||
                    type == WEFT_TYPE_BYTE ||
                    ((op == WEFT_OP_BAND || op == WEFT_OP_BOR || op == WEFT_OP_BXOR) &&
                     (type == WEFT_TYPE_FLOAT || type == WEFT_TYPE_DOUBLE))))
        return NULL;
    return s;
}

/* The team's hierarchy and the MPI forms of the arguments.  op < 0: none;
 * root < 0: none.  A call that runs one-sided (onesided_call) on a team
 * whose one-sided state is ready gets *h NULL. */
static weft_status_t prepare_for(const char *fn, weft_team_t team, size_t count,
                                 weft_type_t type, int op, int root, weft__hier_t **h,
                                 MPI_Comm *comm, MPI_Datatype *mtype, int onesided_call)
{
    weft__msg_t      err;
    weft_status_t    st;

    if (WEFT_Team_comm(team, comm) != MPI_SUCCESS)
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "not a team (NULL or freed)");
    if ((unsigned)type >= sizeof(mpi_types) / sizeof(mpi_types[0]))
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "unknown datatype %d", (int)type);
    if (op >= 0 && (unsigned)op >= sizeof(mpi_ops) / sizeof(mpi_ops[0]))
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "unknown operation %d", op);
    if (op >= 0 && type == WEFT_TYPE_BYTE)
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "WEFT_TYPE_BYTE cannot be reduced");
    if (op >= 0 && (op == WEFT_OP_BAND || op == WEFT_OP_BOR || op == WEFT_OP_BXOR)
        && (type == WEFT_TYPE_FLOAT || type == WEFT_TYPE_DOUBLE))
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "bitwise operation %d on a floating type",
                           op);
    if (count > INT_MAX)
        return weft__error(WEFT_ERR_TOO_LARGE, fn, "count %zu is over %d", count, INT_MAX);
    *mtype = mpi_types[type];
    /* A team that runs one-sided needs no hierarchy lookup (an MPI
     * attribute): a tenth of a small collective's time. */
    int size = onesided_call ? weft__os_ready_size(team) : 0;
    if (size > 0) {
        *h = NULL;
        if (root >= size)
            return weft__error(WEFT_ERR_RANK, fn, "root %d outside [0, %d)", root, size);
        return WEFT_OK;
    }
    if ((st = weft__hier_get(*comm, h, &err)) != WEFT_OK)
        return weft__error(st, fn, "%s", err.msg);
    if (root >= 0 && root >= (*h)->size)
        return weft__error(WEFT_ERR_RANK, fn, "root %d outside [0, %d)", root, (*h)->size);
    *mtype = mpi_types[type];
    return WEFT_OK;
}

/* The team's one-sided state, or NULL for the MPI path (*st stays
 * WEFT_OK then). */
static weft_status_t prepare(const char *fn, weft_team_t team, size_t count, weft_type_t type,
                             int op, int root, weft__hier_t **h, MPI_Comm *comm,
                             MPI_Datatype *mtype)
{
    return prepare_for(fn, team, count, type, op, root, h, comm, mtype, 1);
}

static weft__os_t *onesided(weft_team_t team, MPI_Comm comm, weft__hier_t *h, weft_status_t *st)
{
    weft__os_t *os = NULL;

    *st = weft__os_get(team, comm, h, &os);
    if (*st == WEFT_ERR_UNSUPPORTED) {
        *st = WEFT_OK;
        return NULL;
    }
    return *st == WEFT_OK ? os : NULL;
}

/* Endpoint teams run collectives of their own (eteam.c). */
static int endpoint_team(weft_team_t team)
{
    int n;
    return weft_team_nranks(team, &n) == WEFT_OK && weft__et_is(team);
}

static weft_status_t done(const char *fn, int rc)
{
    if (rc == MPI_SUCCESS)
        return WEFT_OK;
    return weft__error(rc == MPI_ERR_NO_MEM ? WEFT_ERR_NO_MEMORY : WEFT_ERR_MPI, fn,
                       "an MPI collective on a level failed (error class %d)", rc);
}

static weft_status_t check_root(const char *fn, int root)
{
    if (root < 0)
        return weft__error(WEFT_ERR_RANK, fn, "root %d is negative", root);
    return WEFT_OK;
}

weft_status_t weft_team_bcast(weft_team_t team, void *buf, size_t count, weft_type_t type,
                              int root)
{
    weft__hier_t *h;
    MPI_Comm      comm;
    MPI_Datatype  t;
    weft_status_t st;
    weft__os_t   *ready = root >= 0 ? ready_for(team, count, type, -1, root) : NULL;

    if (ready != NULL)
        return weft__os_bcast(ready, buf, count, type, root);
    if (endpoint_team(team))
        return weft__et_bcast(team, buf, count, type, root);
    if ((st = check_root(__func__, root)) == WEFT_OK)
        st = prepare(__func__, team, count, type, -1, root, &h, &comm, &t);
    weft__os_t *os = st == WEFT_OK ? onesided(team, comm, h, &st) : NULL;
    if (st != WEFT_OK || os)
        return st != WEFT_OK ? st : weft__os_bcast(os, buf, count, type, root);
    return done(__func__, weft__hbcast(h, buf, (int)count, t, root));
}

weft_status_t weft_team_reduce(weft_team_t team, const void *src, void *dst, size_t count,
                               weft_type_t type, weft_op_t op, int root)
{
    weft__hier_t *h;
    MPI_Comm      comm;
    MPI_Datatype  t;
    weft_status_t st;
    weft__os_t   *ready = root >= 0 ? ready_for(team, count, type, (int)op, root) : NULL;

    if (ready != NULL)
        return weft__os_reduce(ready, src, dst, count, type, op, root);
    if (endpoint_team(team))
        return weft__et_reduce(team, src, dst, count, type, op, root);
    if ((st = check_root(__func__, root)) == WEFT_OK)
        st = prepare(__func__, team, count, type, (int)op, root, &h, &comm, &t);
    weft__os_t *os = st == WEFT_OK ? onesided(team, comm, h, &st) : NULL;
    if (st != WEFT_OK || os)
        return st != WEFT_OK ? st : weft__os_reduce(os, src, dst, count, type, op, root);
    return st != WEFT_OK ? st
                         : done(__func__, weft__hreduce(h, comm, src, dst, (int)count, t,
                                                        mpi_ops[op], root));
}

weft_status_t weft_team_allreduce(weft_team_t team, const void *src, void *dst, size_t count,
                                  weft_type_t type, weft_op_t op)
{
    weft__hier_t *h;
    MPI_Comm      comm;
    MPI_Datatype  t;
    weft__os_t   *ready = ready_for(team, count, type, (int)op, -1);

    if (ready != NULL)
        return weft__os_allreduce(ready, src, dst, count, type, op);
    if (endpoint_team(team))
        return weft__et_allreduce(team, src, dst, count, type, op);
    weft_status_t st = prepare(__func__, team, count, type, (int)op, -1, &h, &comm, &t);
    weft__os_t   *os = st == WEFT_OK ? onesided(team, comm, h, &st) : NULL;

    if (st != WEFT_OK || os)
        return st != WEFT_OK ? st : weft__os_allreduce(os, src, dst, count, type, op);
    return st != WEFT_OK ? st
                         : done(__func__, weft__hallreduce(h, comm, src, dst, (int)count, t,
                                                           mpi_ops[op]));
}

weft_status_t weft_team_gather(weft_team_t team, const void *src, void *dst, size_t count,
                               weft_type_t type, int root)
{
    weft__hier_t *h;
    MPI_Comm      comm;
    MPI_Datatype  t;
    weft_status_t st;

    if (endpoint_team(team))
        return weft__et_gather(team, src, dst, count, type, root);
    if ((st = check_root(__func__, root)) == WEFT_OK)
        st = prepare_for(__func__, team, count, type, -1, root, &h, &comm, &t, 0);
    return st != WEFT_OK ? st
                         : done(__func__, weft__hgather(h, src, (int)count, t, dst, (int)count, t,
                                                        root));
}

weft_status_t weft_team_barrier(weft_team_t team)
{
    weft__hier_t *h;
    MPI_Comm      comm;
    MPI_Datatype  t;
    weft__os_t   *ready = ready_for(team, 0, WEFT_TYPE_BYTE, -1, -1);

    if (ready != NULL)
        return weft__os_barrier(ready);
    if (endpoint_team(team))
        return weft__et_barrier(team);
    weft_status_t st = prepare(__func__, team, 0, WEFT_TYPE_BYTE, -1, -1, &h, &comm, &t);
    weft__os_t   *os = st == WEFT_OK ? onesided(team, comm, h, &st) : NULL;

    if (st != WEFT_OK || os)
        return st != WEFT_OK ? st : weft__os_barrier(os);
    return done(__func__, weft__hbarrier(h));
}
