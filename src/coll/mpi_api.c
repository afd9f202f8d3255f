/* WEFT_H* and WEFT_Comm_hier_init of weft_mpi.h: local argument checks,
 * the cached hierarchy, then ops.c.  Errors are MPI error classes with the
 * message in weft_last_error(). */
#include "coll.h"
#include "runtime/runtime.h"

#include <stdarg.h>
#include <stdio.h>
#include <limits.h>
#include <weft_mpi.h>

#define NO_ROOT INT_MIN

static int fail(const char *fn, int cls, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(const char *fn, int cls, const char *fmt, ...)
{
    char    msg[WEFT__MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    weft__error(WEFT_ERR_INVALID_ARG, fn, "%s", msg);
    return cls;
}

/* An MPI call on a level failed: name it (the handler of comm was not
 * invoked on our private communicators, whose handler is comm's). */
static int report(const char *fn, int rc)
{
    char text[MPI_MAX_ERROR_STRING];
    int  len = 0;

    if (rc == MPI_SUCCESS)
        return rc;
    MPI_Error_string(rc, text, &len);
    weft__error(WEFT_ERR_MPI, fn, "an MPI collective on a level failed: %s", text);
    return rc;
}

/* What every call checks before touching the hierarchy: MPI up, an
 * intracommunicator, a count, a datatype and a root (NO_ROOT: none); then the
 * cached hierarchy when h is not NULL. */
static int check(const char *fn, MPI_Comm comm, int count, MPI_Datatype type, int root,
                 weft__hier_t **h)
{
    weft__msg_t      err;
    weft_status_t    st;
    int              up = 0, down = 0, inter = 0, size = 0;

    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (!up || down)
        return fail(fn, MPI_ERR_OTHER, "MPI is not initialised");
    if (comm == MPI_COMM_NULL)
        return fail(fn, MPI_ERR_COMM, "comm is MPI_COMM_NULL");
    MPI_Comm_test_inter(comm, &inter);
    if (inter)
        return fail(fn, MPI_ERR_COMM,
                    "comm is an intercommunicator");
    if (count < 0)
        return fail(fn, MPI_ERR_COUNT,
                    "count %d is negative", count);
    if (type == MPI_DATATYPE_NULL)
        return fail(fn, MPI_ERR_TYPE,
                    "datatype is MPI_DATATYPE_NULL");
    MPI_Comm_size(comm, &size);
    if (root != NO_ROOT && (root < 0 || root >= size))
        return fail(fn, MPI_ERR_ROOT,
                    "root %d outside [0, %d)", root, size);
    if (h && (st = weft__hier_get(comm, h, &err)) != WEFT_OK)
        return weft__topo_mpi_error(fn, st, &err);
    return MPI_SUCCESS;
}

static int check_op(const char *fn, MPI_Op op)
{

    if (op == MPI_OP_NULL)
        return fail(fn, MPI_ERR_OP, "op is MPI_OP_NULL");
    return MPI_SUCCESS;
}

int WEFT_Comm_hier_init(MPI_Comm comm, MPI_Info info)
{
    weft__msg_t      err;
    weft_status_t    st;
    int              rc = check(__func__, comm, 0, MPI_BYTE, NO_ROOT, NULL);

    if (rc != MPI_SUCCESS)
        return rc;
    if ((st = weft__hier_init(comm, info, &err)) != WEFT_OK)
        return weft__topo_mpi_error(__func__, st, &err);
    return MPI_SUCCESS;
}

int WEFT_Hbcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    weft__hier_t    *h;
    int              rc = check(__func__, comm, count, type, root, &h);

    if (rc == MPI_SUCCESS && buf == MPI_IN_PLACE)
        return fail(__func__, MPI_ERR_BUFFER,
                    "buf is MPI_IN_PLACE");
    return rc != MPI_SUCCESS ? rc : report(__func__, weft__hbcast(h, buf, count, type, root));
}

int WEFT_Hreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                 int root, MPI_Comm comm)
{
    weft__hier_t    *h;
    int              rc = check_op(__func__, op);

    if (rc == MPI_SUCCESS)
        rc = check(__func__, comm, count, type, root, &h);
    if (rc != MPI_SUCCESS)
        return rc;
    if (sendbuf == MPI_IN_PLACE && h->rank != root)
        return fail(__func__, MPI_ERR_BUFFER,
                    "MPI_IN_PLACE on rank %d, which is not the root %d",
                                     h->rank, root);
    return report(__func__, weft__hreduce(h, comm, sendbuf, recvbuf, count, type, op, root));
}

int WEFT_Hallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                    MPI_Comm comm)
{
    weft__hier_t *h;
    int           rc = check_op(__func__, op);

    if (rc == MPI_SUCCESS)
        rc = check(__func__, comm, count, type, NO_ROOT, &h);
    return rc != MPI_SUCCESS
               ? rc : report(__func__, weft__hallreduce(h, comm, sendbuf, recvbuf, count, type, op));
}

int WEFT_Hgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    weft__hier_t    *h;
    int              rc = check(__func__, comm, sendcount, sendtype, root, &h);

    if (rc != MPI_SUCCESS)
        return rc;
    if (h->rank == root && recvcount < 0)
        return fail(__func__, MPI_ERR_COUNT,
                    "recvcount %d is negative", recvcount);
    if (h->rank == root && recvtype == MPI_DATATYPE_NULL)
        return fail(__func__, MPI_ERR_TYPE,
                    "recvtype is MPI_DATATYPE_NULL");
    if (sendbuf == MPI_IN_PLACE && h->rank != root)
        return fail(__func__, MPI_ERR_BUFFER,
                    "MPI_IN_PLACE on rank %d, which is not the root %d",
                                     h->rank, root);
    return report(__func__, weft__hgather(h, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                          recvtype, root));
}

int WEFT_Hbarrier(MPI_Comm comm)
{
    weft__hier_t *h;
    int           rc = check(__func__, comm, 0, MPI_BYTE, NO_ROOT, &h);

    return rc != MPI_SUCCESS ? rc : report(__func__, weft__hbarrier(h));
}
