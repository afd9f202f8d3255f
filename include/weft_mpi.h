/*
 * weft_mpi.h -- hardware-topology communicators for any MPI program.
 *
 * The interface of "Hardware topology management in MPI applications
 * through hierarchical communicators" (Goglin, Jeannot, Mansouri, Mercier,
 * Parallel Computing 76, 2018), implemented over hwloc and, for the levels
 * above a node, a Slurm topology.conf.  It needs MPI only: no weft context,
 * no RMA.  The manual page is docs/topology.md.
 *
 * Repeatedly splitting a communicator walks the machine from the whole job
 * down to what each rank is bound to:
 *
 *     MPI_Comm comm = MPI_COMM_WORLD, next;
 *     while (comm != MPI_COMM_NULL) {
 *         int rank;
 *         MPI_Comm_rank(comm, &rank);
 *         WEFT_Comm_split_type(comm, WEFT_COMM_TYPE_PHYSICAL_TOPOLOGY, rank,
 *                              MPI_INFO_NULL, &next);
 *         comm = next;      (keep or free the previous one)
 *     }
 *
 * Every call returns MPI_SUCCESS or an MPI error class: MPI_ERR_ARG for a
 * bad argument (including arguments that differ across ranks),
 * MPI_ERR_INFO_VALUE for a malformed setting (an info key or its
 * WEFT_TOPO_* variable, a topology.conf, a binding outside the machine),
 * MPI_ERR_NO_MEM, MPI_ERR_OTHER.  weft_last_error() (weft.h) then gives the
 * message.  Collective calls fail on every rank alike, with the same
 * message, and create no communicator on any rank.  The communicator's
 * error handler is not invoked.
 */
#ifndef WEFT_MPI_H
#define WEFT_MPI_H

#include <mpi.h>
#include <weft.h>
#include <weft_build.h> /* refuses an <mpi.h> of another MPI than libweft's */

#ifdef __cplusplus
extern "C" {
#endif

/** split_type of WEFT_Comm_split_type for the next hardware level (the
 *  paper's MPI_COMM_TYPE_PHYSICAL_TOPOLOGY).  Chosen far from the values
 *  MPI implementations use, so that every other split_type passes through. */
#define WEFT_COMM_TYPE_PHYSICAL_TOPOLOGY 0x77656674

/**
 * MPI_Comm_split_type with one more split type.  Collective over comm.
 *
 * With WEFT_COMM_TYPE_PHYSICAL_TOPOLOGY, *newcomm is the highest level of
 * the hardware tree that is a strict subset of comm and holds the caller:
 * levels holding the same ranks as comm are skipped, and the level is named
 * after the highest of several equal levels (a Package with its NUMA node
 * and L3 is "NUMANode").  It is MPI_COMM_NULL when the caller's binding goes
 * no deeper than comm (a rank bound to an L3 gets nothing below the L3, an
 * unbound rank nothing below its node).  Ranks are ordered by key.  Any
 * other split_type calls MPI_Comm_split_type unchanged.
 *
 * \param comm        intracommunicator to split
 * \param split_type  WEFT_COMM_TYPE_PHYSICAL_TOPOLOGY or an MPI split type
 * \param key         orders the ranks of the new communicator
 * \param info        MPI_INFO_NULL, or weft_topo_* keys (docs/topology.md)
 *                    describing the machine; without them a communicator
 *                    made here keeps the description it was made from,
 *                    and MPI_COMM_WORLD uses the WEFT_TOPO_* variables or
 *                    this machine
 * \param newcomm     [out] the level, or MPI_COMM_NULL
 * \return the same on every rank, *newcomm untouched on error:
 *         MPI_ERR_ARG, MPI_ERR_INFO_VALUE (a malformed description),
 *         MPI_ERR_NO_MEM (memory ran out on some rank; every rank still
 *         returns), MPI_ERR_OTHER; weft_last_error() has the first failing
 *         rank's message.
 */
int WEFT_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                         MPI_Comm *newcomm);

/**
 * The same split, plus the roots communicator (the paper's
 * MPI_Comm_hsplit_with_roots).  Collective over comm.  Ranks keep the order
 * of comm in both.  *rootscomm holds the rank 0 of every new communicator
 * made from comm; it is MPI_COMM_NULL on the other ranks (and everywhere
 * when comm was not split).
 */
int WEFT_Comm_hsplit_with_roots(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
                                MPI_Comm *rootscomm);

/**
 * What a level knows of itself.  Local.
 *
 * \param comm       a communicator returned as newcomm above (or a
 *                   duplicate of one)
 * \param num_comms  [out] number of communicators its parent was split into
 * \param index      [out] its position among them, from 0, in the order of
 *                   the hardware objects (hwloc logical order, topology.conf
 *                   order; nodes of a flat network by their lowest rank)
 * \param type       [out] level name, e.g. "Machine", "NUMANode",
 *                   "L2Cache", "Core", "Switch1"; owned by weft, valid until
 *                   the process exits
 * \return MPI_ERR_ARG if comm is not such a level.
 */
int WEFT_Comm_get_hlevel_info(MPI_Comm comm, int *num_comms, int *index, const char **type);

/**
 * Name of the deepest level shared by the listed ranks of comm: an hwloc
 * level name when they share a node, "Switch<h>" or "Cluster" across nodes,
 * and "Unknown" when the caller is not listed.  Collective over comm (each
 * rank may pass its own list).  A bad list fails on its rank only, after
 * the collective part, with MPI_ERR_ARG: nranks < 1, ranks NULL, a rank
 * outside comm, a rank listed twice.  MPI_ERR_NO_MEM on every rank when
 * memory ran out on one.
 */
int WEFT_Comm_get_min_hlevel(MPI_Comm comm, int nranks, const int *ranks, const char **type);

/** The MPI communicator of a weft team (weft.h), to use MPI on it.  The
 *  communicator belongs to the team: do not free it. */
int WEFT_Team_comm(weft_team_t team, MPI_Comm *comm);

/* ---- Hierarchical collectives (coll layer; docs/collectives.md) -------- */

/*
 * The paper's Algorithm 4 as MPI collectives: a loop over the levels of the
 * machine, each level running the MPI library's own collective (whatever
 * algorithm it selects or is told to use) on that level's roots
 * communicator -- the rank 0s of the groups WEFT_Comm_hsplit_with_roots
 * makes, plus ranks bound no deeper than the level.  Broadcasts go down
 * from the top, reductions and gathers up from the bottom.  The levels are
 * built on the first call on comm (collective) and cached on it as an
 * attribute, freed with comm; MPI_Comm_dup(comm) builds its own.  Same
 * arguments and semantics as the MPI call of the same name (any datatype,
 * any op, MPI_IN_PLACE where MPI allows it, any root); a root other than 0
 * costs one extra message.  A non-commutative op is applied in rank order,
 * through the levels when every group is a contiguous range of ranks and
 * by the flat MPI call otherwise.  Errors: MPI_ERR_COMM, MPI_ERR_COUNT,
 * MPI_ERR_TYPE, MPI_ERR_OP, MPI_ERR_ROOT, MPI_ERR_BUFFER (MPI_IN_PLACE
 * where it is not allowed), MPI_ERR_INFO_VALUE (a malformed machine
 * description), or the class an MPI call on a level returned; the checks
 * are local, weft_last_error() names the values.
 */
int WEFT_Hbcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm);
int WEFT_Hreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                 int root, MPI_Comm comm);
int WEFT_Hallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                    MPI_Comm comm);
int WEFT_Hgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int WEFT_Hbarrier(MPI_Comm comm);

/**
 * Build (again) the levels the WEFT_H* calls use on comm.  Collective.
 * Without it they are built on first use from the machine as
 * WEFT_Comm_hsplit_with_roots sees it with MPI_INFO_NULL.
 *
 * \param info  MPI_INFO_NULL; weft_topo_* keys describing the machine
 *              (docs/topology.md); or weft_coll_groups = "G1,G2,...,Gk",
 *              a tailor-made hierarchy that ignores the machine: G1 groups
 *              at the top, each of G2 groups, ..., bottom groups of Gk
 *              consecutive ranks (the product must be the size of comm).
 * \return MPI_ERR_INFO_VALUE for a malformed description, on every rank;
 *         MPI_ERR_COMM for MPI_COMM_NULL or an intercommunicator.
 */
int WEFT_Comm_hier_init(MPI_Comm comm, MPI_Info info);

#ifdef __cplusplus
}
#endif

#endif
