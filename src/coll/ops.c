/* The collectives of Algorithm 4: a loop over the levels of a hierarchy,
 * each step the MPI library's own collective on that level's roots/level
 * communicator.  Broadcasts go down from the top, reductions and gathers
 * up from the bottom; a root other than rank 0 costs one more message
 * between it and rank 0 (the hierarchy is rooted at rank 0). */
#include "coll.h"

#include <stdlib.h>
#include <string.h>

#define HOP_TAG 0x7763  /* the only point-to-point tag on the private comm */

/* Memory for count elements of type, and the pointer MPI calls want. */
static void *typed_alloc(int count, MPI_Datatype type, void **base)
{
    MPI_Aint lb, extent, tlb, textent;

    MPI_Type_get_extent(type, &lb, &extent);
    MPI_Type_get_true_extent(type, &tlb, &textent);
    size_t bytes = count > 0 ? (size_t)textent + (size_t)(count - 1) * (size_t)extent : 1;
    *base = malloc(bytes ? bytes : 1);
    return *base ? (char *)*base - tlb : NULL;
}

static int typed_copy(const void *src, void *dst, int count, MPI_Datatype type)
{
    /* In place (the caller's send and receive buffers are one): nothing to
     * copy, and MPI may not be given overlapping buffers (MPICH refuses). */
    if (src == dst)
        return MPI_SUCCESS;
    return MPI_Sendrecv(src, count, type, 0, 0, dst, count, type, 0, 0, MPI_COMM_SELF,
                        MPI_STATUS_IGNORE);
}

int weft__hbcast(weft__hier_t *h, void *buf, int count, MPI_Datatype type, int root)
{
    int rc = MPI_SUCCESS;

    if (root != 0 && h->rank == root)
        rc = MPI_Send(buf, count, type, 0, HOP_TAG, h->comm);
    else if (root != 0 && h->rank == 0)
        rc = MPI_Recv(buf, count, type, root, HOP_TAG, h->comm, MPI_STATUS_IGNORE);
    for (int l = 0; l < h->nlevels && rc == MPI_SUCCESS; l++)
        if (h->up[l] != MPI_COMM_NULL)
            rc = MPI_Bcast(buf, count, type, 0, h->up[l]);
    return rc;
}

/* Bottom-up: at each level it leads, a rank reduces its members' partial
 * results into acc -- the first time from mine, so that no copy of its
 * operand is made -- and at the level where it is not the leader it sends
 * its own (acc when it led below, else mine) and is done. */
static int reduce_levels(weft__hier_t *h, void *acc, const void *mine, int count,
                         MPI_Datatype type, MPI_Op op)
{
    int led = 0;

    for (int l = h->nlevels - 1; l >= 0; l--) {
        if (h->up[l] == MPI_COMM_NULL)
            continue;
        if (h->uprank[l] != 0)
            return MPI_Reduce(led ? acc : mine, NULL, count, type, op, 0, h->up[l]);
        int rc = MPI_Reduce(led || mine == acc ? MPI_IN_PLACE : mine, acc, count, type, op, 0,
                            h->up[l]);
        if (rc != MPI_SUCCESS)
            return rc;
        led = 1;
    }
    return MPI_SUCCESS;
}

/* A reduction may follow the hierarchy when it does not reorder operands. */
static int keeps_order(const weft__hier_t *h, MPI_Op op)
{
    int commute = 0;

    MPI_Op_commutative(op, &commute);
    return commute || h->contiguous;
}

int weft__hreduce(weft__hier_t *h, MPI_Comm comm, const void *sendbuf, void *recvbuf, int count,
                  MPI_Datatype type, MPI_Op op, int root)
{
    const void *mine = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    void       *acc = NULL, *base = NULL;
    int         rc;

    if (!keeps_order(h, op))
        return MPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
    if (h->size == 1)
        return mine == recvbuf ? MPI_SUCCESS : typed_copy(mine, recvbuf, count, type);
    if (h->leads) {
        if (h->rank == 0 && root == 0)
            acc = recvbuf;
        else if (!(acc = typed_alloc(count, type, &base)))
            return MPI_ERR_NO_MEM;
    }
    rc = reduce_levels(h, acc, mine, count, type, op);
    if (rc == MPI_SUCCESS && root != 0 && h->rank == 0)
        rc = MPI_Send(acc, count, type, root, HOP_TAG, h->comm);
    else if (rc == MPI_SUCCESS && root != 0 && h->rank == root)
        rc = MPI_Recv(recvbuf, count, type, 0, HOP_TAG, h->comm, MPI_STATUS_IGNORE);
    free(base);
    return rc;
}

int weft__hallreduce(weft__hier_t *h, MPI_Comm comm, const void *sendbuf, void *recvbuf,
                     int count, MPI_Datatype type, MPI_Op op)
{
    int rc = MPI_SUCCESS;

    if (!keeps_order(h, op))
        return MPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
    if (sendbuf != MPI_IN_PLACE)
        rc = typed_copy(sendbuf, recvbuf, count, type);
    if (rc == MPI_SUCCESS)
        rc = reduce_levels(h, recvbuf, recvbuf, count, type, op);
    if (rc == MPI_SUCCESS)
        rc = weft__hbcast(h, recvbuf, count, type, 0);
    return rc;
}

int weft__hgather_blocks(weft__hier_t *h, void *acc, MPI_Datatype block)
{
    int held = 1;

    for (int l = h->nlevels - 1; l >= 0; l--) {
        if (h->up[l] == MPI_COMM_NULL)
            continue;
        if (h->uprank[l] != 0)
            return MPI_Gatherv(acc, held, block, NULL, NULL, NULL, block, 0, h->up[l]);
        int n, *displs, rc;
        MPI_Comm_size(h->up[l], &n);
        if (!(displs = malloc(sizeof(int) * (size_t)n)))
            return MPI_ERR_NO_MEM;
        held = 0;
        for (int i = 0; i < n; i++) {
            displs[i] = held;
            held += h->gcount[l][i];
        }
        rc = MPI_Gatherv(MPI_IN_PLACE, 0, block, acc, h->gcount[l], displs, block, 0, h->up[l]);
        free(displs);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* Blocks travel packed (MPI_PACKED matches any type signature), so ranks
 * may gather any datatype and the root unpacks into recvtype. */
int weft__hgather(weft__hier_t *h, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int root)
{
    MPI_Aint     lb, rext;
    MPI_Datatype block;
    int          bs, pos = 0, rc;
    char        *acc, *sorted = NULL;

    if (sendbuf == MPI_IN_PLACE) {  /* the root's block is already in place */
        MPI_Type_get_extent(recvtype, &lb, &rext);
        sendbuf = (const char *)recvbuf + (MPI_Aint)root * recvcount * rext;
        sendcount = recvcount;
        sendtype = recvtype;
    }
    MPI_Pack_size(sendcount, sendtype, h->comm, &bs);
    if (!(acc = malloc((size_t)bs * (size_t)(h->leads ? h->nblocks : 1) + 1)))
        return MPI_ERR_NO_MEM;
    rc = MPI_Pack(sendbuf, sendcount, sendtype, acc, bs, &pos, h->comm);
    MPI_Type_contiguous(bs, MPI_PACKED, &block);
    MPI_Type_commit(&block);
    if (rc == MPI_SUCCESS)
        rc = weft__hgather_blocks(h, acc, block);
    if (rc == MPI_SUCCESS && (h->rank == 0 || h->rank == root)) {
        if (!(sorted = malloc((size_t)bs * (size_t)h->size + 1)))
            rc = MPI_ERR_NO_MEM;
    }
    if (rc == MPI_SUCCESS && h->rank == 0) {
        for (int i = 0; i < h->size; i++)
            memcpy(sorted + (size_t)h->order[i] * (size_t)bs, acc + (size_t)i * (size_t)bs,
                   (size_t)bs);
        if (root != 0)
            rc = MPI_Send(sorted, h->size, block, root, HOP_TAG, h->comm);
    } else if (rc == MPI_SUCCESS && h->rank == root) {
        rc = MPI_Recv(sorted, h->size, block, 0, HOP_TAG, h->comm, MPI_STATUS_IGNORE);
    }
    if (rc == MPI_SUCCESS && h->rank == root) {
        MPI_Type_get_extent(recvtype, &lb, &rext);
        for (int i = 0; i < h->size && rc == MPI_SUCCESS; i++) {
            pos = 0;
            rc = MPI_Unpack(sorted + (size_t)i * (size_t)bs, bs, &pos,
                            (char *)recvbuf + (MPI_Aint)i * recvcount * rext, recvcount, recvtype,
                            h->comm);
        }
    }
    MPI_Type_free(&block);
    free(sorted);
    free(acc);
    return rc;
}

/* Up: a leader passes a level's barrier only once its whole subtree has
 * arrived.  Down: the same barriers in reverse release each subtree only
 * after its leader has seen the top complete. */
int weft__hbarrier(weft__hier_t *h)
{
    int rc = MPI_SUCCESS, top = h->nlevels;

    for (int l = h->nlevels - 1; l >= 0 && rc == MPI_SUCCESS; l--) {
        if (h->up[l] == MPI_COMM_NULL)
            continue;
        rc = MPI_Barrier(h->up[l]);
        top = l;
        if (h->uprank[l] != 0)
            break;
    }
    for (int l = top; l < h->nlevels && rc == MPI_SUCCESS; l++)
        if (h->up[l] != MPI_COMM_NULL)
            rc = MPI_Barrier(h->up[l]);
    return rc;
}
