/*
 * coll -- hierarchical collectives (the hierarchical-communicators paper,
 * §6-§7: Algorithm 4 and its broadcast/reduce benchmarks).
 *
 * Owns the hierarchy cached on a communicator: for every level a rank takes
 * part in, the roots/level communicator of that level, and the calls that
 * run a collective as a loop over those levels, each step being the MPI
 * library's own collective (so whatever algorithm MPI picks or is told to
 * use runs per level).  The hierarchy comes from the team layer's split
 * (the machine) or from fan-outs the user gives (a tailor-made hierarchy).
 *
 * Layout:
 *   hier.c      building, caching (an MPI attribute) and freeing hierarchies
 *   ops.c       bcast, reduce, allreduce, gather, barrier over a hierarchy
 *   mpi_api.c   WEFT_H* and WEFT_Comm_hier_* of weft_mpi.h
 *   team_api.c  weft_team_bcast etc. of weft.h: one-sided when the team has
 *               a scratch slot, else over the team's communicator
 *   onesided.c  the one-sided collectives: the same levels, each hop a
 *               put with signal into the receiver's slot of the team's
 *               scratch segment (team.h)
 * May call team, runtime (errors) and MPI; onesided.c also calls the
 * public one-sided API of weft.h (weft_put_signal_nb,
 * weft_signal_wait_until, weft_wait*).  team_api.c and onesided.c are left
 * out of the SimGrid build (tools/smpi), which has no endpoints.
 */
#ifndef WEFT_COLL_H
#define WEFT_COLL_H

#include "team/team.h"

#include <mpi.h>

/*
 * A hierarchy as one rank sees it.  Level 0 is the whole communicator.  At
 * level l the communicator of that level (comm itself for l = 0) is split
 * into groups; up[l] joins the rank 0 of every group plus the ranks that
 * belong to no group (ranks whose binding goes no deeper), in the order of
 * the level.  A rank takes part in up[l] for every level down to the one
 * where it is not a group's rank 0; elsewhere up[l] is MPI_COMM_NULL.  At
 * the bottom, where nobody has a group, up[] is the whole level.
 */
typedef struct {
    MPI_Comm  comm;         /* private duplicate: point-to-point hops to a root */
    int       rank, size;
    int       nlevels;
    MPI_Comm *up;           /* [nlevels] */
    int      *uprank;       /* [nlevels]: rank in up[l], -1 when not in it */
    int       leads;        /* rank 0 of some up[l]: gathers or reduces for others */
    int       contiguous;   /* every group is a contiguous range of ranks, so
                               non-commutative reductions keep their order */
    /* Gather bookkeeping (block = one rank's contribution). */
    int     **gcount;       /* [l][i]: blocks member i of up[l] brings, on up[l]'s rank 0 */
    int       nblocks;      /* blocks this rank holds after the levels it leads */
    int      *order;        /* rank 0: comm rank of each gathered block */
} weft__hier_t;

/* The hierarchy cached on comm, built (collectively) on first use from the
 * machine the team layer sees with MPI_INFO_NULL. */
weft_status_t weft__hier_get(MPI_Comm comm, weft__hier_t **hier, weft__msg_t *err);

/* Build a hierarchy for comm and cache it, replacing any cached one.
 * info: weft_topo_* keys (the machine), or weft_coll_groups ("3,4,2" --
 * group sizes from the top level down) for a tailor-made hierarchy, or
 * MPI_INFO_NULL.  Collective; every rank returns the same status. */
weft_status_t weft__hier_init(MPI_Comm comm, MPI_Info info, weft__msg_t *err);

/* Parse weft_coll_groups: positive integers separated by commas whose
 * product is nranks.  Pure. */
weft_status_t weft__hier_parse_groups(const char *text, int nranks, int *fanout, int max,
                                      int *nlevels, weft__msg_t *err);
#define WEFT__HIER_MAX_LEVELS 32

/* The collectives over a hierarchy; arguments are checked by the callers.
 * Return an MPI error class (MPI_SUCCESS). */
int weft__hbcast(weft__hier_t *h, void *buf, int count, MPI_Datatype type, int root);
int weft__hreduce(weft__hier_t *h, MPI_Comm comm, const void *sendbuf, void *recvbuf, int count,
                  MPI_Datatype type, MPI_Op op, int root);
int weft__hallreduce(weft__hier_t *h, MPI_Comm comm, const void *sendbuf, void *recvbuf,
                     int count, MPI_Datatype type, MPI_Op op);
int weft__hgather(weft__hier_t *h, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int root);
int weft__hbarrier(weft__hier_t *h);

/* The gather's data movement: acc holds this rank's block (of type block)
 * and, on ranks that lead, room for h->nblocks; on rank 0 it ends with
 * every block, rank h->order[i]'s at position i. */
int weft__hgather_blocks(weft__hier_t *h, void *acc, MPI_Datatype block);

/* ---- One-sided collectives (onesided.c) ----------------------------------- */

/* The reduction kernel of the one-sided collectives (onesided.c), for
 * every collective that combines in memory: d = a op b elementwise, d may
 * be a or b; integers wrap as unsigned.  Bitwise ops on integer types
 * only. */
void weft__coll_combine(void *d, const void *a, const void *b, size_t n, weft_type_t t,
                        weft_op_t op);
/* Bytes of an element of each weft_type_t. */
extern const size_t weft__coll_type_size[WEFT_TYPE_DOUBLE + 1];

typedef struct weft__os weft__os_t;

/* The one-sided state of team, built on first use from its hierarchy h
 * over comm (the team's communicator; collective over it then).
 * WEFT_ERR_UNSUPPORTED, no error recorded, when the team takes the MPI
 * path: no scratch slot, ranks on other nodes without the progress
 * thread, or memory short on some rank for the state (the same on every
 * rank). */
weft_status_t weft__os_get(weft_team_t team, MPI_Comm comm, weft__hier_t *h, weft__os_t **os);

/* Arguments are checked by the callers (team_api.c).  Errors are those of
 * weft_put_signal_nb and weft_signal_wait_until (WEFT_ERR_PEER_FAILED,
 * WEFT_ERR_TIMEOUT), recorded by them. */
weft_status_t weft__os_bcast(weft__os_t *s, void *buf, size_t count, weft_type_t t, int root);
weft_status_t weft__os_reduce(weft__os_t *s, const void *src, void *dst, size_t count,
                              weft_type_t t, weft_op_t op, int root);
weft_status_t weft__os_allreduce(weft__os_t *s, const void *src, void *dst, size_t count,
                                 weft_type_t t, weft_op_t op);
weft_status_t weft__os_barrier(weft__os_t *s);

/* 1 when the team's collectives run one-sided (known after its first). */
int weft__os_active(weft_team_t team);
/* The team's size when its state is built and one-sided, else 0. */
int weft__os_ready_size(weft_team_t team);
/* The size of the team of one-sided state s when it is usable, else 0
 * (s may be NULL). */
int weft__os_usable_size(const weft__os_t *s);
/* Bytes a chunk of a large message carries (a hop moves a message in
 * chunks of this size) once the team's state is built, else 0. */
size_t weft__os_chunk_bytes(weft_team_t team);

/* Endpoint teams (eteam.c): every team collective; weft__et_is tells
 * whether a live team is one.  Arguments are checked here (root is a
 * member). */
int           weft__et_is(weft_team_t team);
weft_status_t weft__et_bcast(weft_team_t team, void *buf, size_t count, weft_type_t type,
                             int root);
weft_status_t weft__et_reduce(weft_team_t team, const void *src, void *dst, size_t count,
                              weft_type_t type, weft_op_t op, int root);
weft_status_t weft__et_allreduce(weft_team_t team, const void *src, void *dst, size_t count,
                                 weft_type_t type, weft_op_t op);
weft_status_t weft__et_gather(weft_team_t team, const void *src, void *dst, size_t count,
                              weft_type_t type, int root);
weft_status_t weft__et_barrier(weft_team_t team);

#endif
