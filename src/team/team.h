/*
 * team -- hardware-topology communicators and teams (the hierarchical
 * communicators paper: Goglin, Jeannot, Mansouri, Mercier, ParCo 2018).
 *
 * Owns the tree a rank sees the job through -- the whole job ("Cluster"),
 * the network switches of a Slurm topology.conf, the node ("Machine") and
 * the node's hwloc tree down to the object the rank is bound to -- and the
 * split that turns a communicator into the highest strict sub-level of that
 * tree (Algorithms 1 and 2 of the paper).  The MPI-level API
 * (include/weft_mpi.h) and weft teams (include/weft.h) share this code.
 *
 * Layout:
 *   parse.c     the WEFT_TOPO_BIND parser and small shared helpers (pure)
 *   hostlist.c  Slurm hostlist expansion (pure)
 *   slurm.c     Slurm topology.conf -> switch tree (pure)
 *   path.c      hwloc node tree + network -> a rank's path (no MPI)
 *   split.c     settings, agreement across ranks, the split itself (MPI)
 *   mpi_api.c   WEFT_Comm_* of weft_mpi.h
 *   team.c      weft_team_* of weft.h
 * May call runtime (errors, the context's communicator, settings.h's
 * per-rank lists and node names) and MPI, hwloc; nothing above it.
 */
#ifndef WEFT_TEAM_H
#define WEFT_TEAM_H

#include <weft.h>
#include "runtime/settings.h"
#include <mpi.h>
#include <hwloc.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* Deepest tree a rank may see: job + switches + node + hwloc levels.  hwloc
 * trees are about 10 deep and switch trees rarely more than 4. */
#define WEFT__TOPO_MAX_DEPTH 48
/* Node, switch and type names: a node name is the runtime's (settings.h). */
#define WEFT__TOPO_NAME_MAX  WEFT__NODE_NAME_MAX

/* 64-bit FNV-1a continued from seed; never 0 nor UINT64_MAX, which the
 * agreement step reserves for "absent". */
uint64_t weft__topo_hash(uint64_t seed, const void *data, size_t len);
uint64_t weft__topo_hash_str(uint64_t seed, const char *s);

/* A level name that lives as long as the process (returned to users). */
const char *weft__topo_intern(const char *name);

/* Record err's message for fn (weft_last_error) and return the MPI error
 * class of st: how the WEFT_* MPI-level calls report (mpi_api.c). */
int weft__topo_mpi_error(const char *fn, weft_status_t st, const weft__msg_t *err);

/* ---- Settings ---------------------------------------------------------- */

/* The five settings, from MPI_Info keys or WEFT_TOPO_* variables; NULL when
 * unset.  Strings are owned by the struct (weft__topo_settings_free). */
typedef struct {
    char *synthetic;    /* WEFT_TOPO_SYNTHETIC / weft_topo_synthetic */
    char *xml;          /* WEFT_TOPO_XML / weft_topo_xml ("{node}" -> node name) */
    char *bind;         /* WEFT_TOPO_BIND / weft_topo_bind */
    char *node;         /* WEFT_TOPO_NODE / weft_topo_node */
    char *slurm_conf;   /* WEFT_TOPO_SLURM_CONF / weft_topo_slurm_conf */
} weft__topo_settings_t;

void weft__topo_settings_free(weft__topo_settings_t *s);

/* ---- Bindings (parse.c) ------------------------------------------------ */

typedef enum {
    WEFT__BIND_OS,        /* no setting: ask the OS (unbound on a described node) */
    WEFT__BIND_UNBOUND,   /* the whole node */
    WEFT__BIND_OBJECTS,   /* objects type:first[-last], logical indexes */
    WEFT__BIND_MASK,      /* a cpuset in hexadecimal, OS indexes of PUs */
    WEFT__BIND_RULE       /* by-TYPE: the i-th rank of a node on the i-th TYPE */
} weft__bind_kind_t;

typedef struct {
    weft__bind_kind_t kind;
    hwloc_obj_type_t  type;        /* OBJECTS, RULE */
    unsigned          first, last; /* OBJECTS */
    unsigned long long mask;       /* MASK */
    char              text[WEFT__TOPO_NAME_MAX]; /* the entry, for messages */
} weft__topo_bind_t;

/* The binding of `rank` of `nranks` from a WEFT_TOPO_BIND spec (NULL: OS).
 * Validates the whole spec, so every rank rejects a bad one. */
weft_status_t weft__topo_parse_bind(const char *spec, int rank, int nranks,
                                    weft__topo_bind_t *out, weft__msg_t *err);

/* ---- Slurm hostlists and topology.conf (hostlist.c, slurm.c) ----------- */

/* Expand a Slurm hostlist ("n[0-3,7],gpu[01-02]x") into names; *names is a
 * malloc'ed array of malloc'ed strings. */
weft_status_t weft__topo_hostlist(const char *list, char ***names, int *count,
                                  weft__msg_t *err);
void weft__topo_names_free(char **names, int count);

typedef struct {
    char name[WEFT__TOPO_NAME_MAX];
    int  parent;        /* switch index, -1 for a top-level switch */
    int  position;      /* among the parent's children (or the top switches) */
    int  height;        /* 1 for a switch of nodes only, 1 + highest child switch */
} weft__topo_switch_t;

typedef struct {
    weft__topo_switch_t *switches;
    int                  nswitches;
    char               **nodes;      /* every node, once */
    int                 *node_switch;/* its leaf switch */
    int                 *node_position; /* among that switch's children */
    int                  nnodes;
} weft__topo_net_t;

/* Parse the text of a topology.conf. */
weft_status_t weft__topo_slurm_parse(const char *text, weft__topo_net_t *net,
                                     weft__msg_t *err);
weft_status_t weft__topo_slurm_load(const char *path, weft__topo_net_t *net,
                                    weft__msg_t *err);
void weft__topo_net_free(weft__topo_net_t *net);

/* ---- A rank's path (path.c) -------------------------------------------- */

/* One object of the tree above a rank: who it is (job-wide), where it sits
 * among its siblings, and its level name. */
typedef struct {
    uint64_t    id;
    int64_t     order;      /* -1: siblings are ordered by their lowest rank */
    const char *type;       /* interned */
} weft__topo_elem_t;

typedef struct {
    int               depth;
    weft__topo_elem_t elem[WEFT__TOPO_MAX_DEPTH];
} weft__topo_path_t;

/* Load the node's hwloc topology from the settings (synthetic, XML, or this
 * machine) without MPI. */
weft_status_t weft__topo_load(const weft__topo_settings_t *s, const char *node,
                              hwloc_topology_t *topo, weft__msg_t *err);

/* The cpuset a binding stands for on a node; local_index is the rank's
 * position among the ranks of its node (used by rules). */
weft_status_t weft__topo_bind_cpuset(hwloc_topology_t topo, const weft__topo_bind_t *bind,
                                     int local_index, int described, hwloc_bitmap_t set,
                                     weft__msg_t *err);

/* Root-to-leaf path of a rank: Cluster, switches (net may be NULL: flat),
 * the node, then the hwloc objects that contain the binding; a NUMA node is
 * a level of its own just above the object it is attached to. */
weft_status_t weft__topo_path(const weft__topo_net_t *net, const char *node,
                              hwloc_topology_t topo, hwloc_const_bitmap_t binding,
                              weft__topo_path_t *path, weft__msg_t *err);

/* ---- Splits (split.c) -------------------------------------------------- */

/* The split's core over members' paths, shared by rank teams (after their
 * gather over MPI) and endpoint teams (over the paths gathered when the
 * team was joined).  A child of the common ancestor, and the lowest member
 * under it. */
typedef struct {
    uint64_t id;      /* the child object, 0 for none */
    int64_t  order;
    int      first;   /* lowest member of the parent under it */
} weft__topo_kid_t;

/* Number the distinct non-zero ids[0..n) in sibling order (order, then
 * lowest member): kids[0..*num) in that order, so a member's color is the
 * index of its id.  kids has room for n. */
weft_status_t weft__topo_number_children(int n, const uint64_t *id, const int64_t *order,
                                         weft__topo_kid_t *kids, int *num);

/* Number of leading objects every one of the n paths shares (the common
 * ancestor is elem[k-1]). */
int weft__topo_common_depth(int n, const weft__topo_path_t *const *paths);

/* Paths of the nthreads threads of this rank (tid[t] is thread t's id, for
 * their OS binding), collective over comm, which every rank enters also
 * when st is an error: the statuses are agreed on and the first failing
 * rank's returned everywhere.  A thread's binding comes from
 * WEFT_TOPO_THREAD_BIND (the rank's ';'-separated part, a WEFT_TOPO_BIND
 * list over its threads), else from the OS on this machine (hwloc), else
 * (a described machine) is the rank's; an unbound thread has the rank's. */
weft_status_t weft__topo_thread_paths(MPI_Comm comm, weft_status_t st, int nthreads,
                                      const pthread_t *tid, weft__topo_path_t *paths,
                                      weft__msg_t *err);

/* What a hierarchical communicator knows about its level. */
typedef struct {
    int         num_comms, index;
    const char *type;
} weft__topo_level_t;

/* The split of Algorithms 1 and 2, collective over parent.  key orders the
 * new communicator (the paper: the rank in parent); roots may be NULL.
 * info may be MPI_INFO_NULL.  On success *newcomm (and *roots) may be
 * MPI_COMM_NULL; on error nothing is created on any rank and every rank
 * returns the same status and message. */
weft_status_t weft__topo_split(MPI_Comm parent, MPI_Info info, int key, MPI_Comm *newcomm,
                               MPI_Comm *roots, weft__msg_t *err);

/* Level of a communicator made by weft__topo_split (WEFT_ERR_INVALID_ARG
 * for any other). */
weft_status_t weft__topo_level(MPI_Comm comm, weft__topo_level_t *level, weft__msg_t *err);

/* Name of the deepest level shared by the listed ranks of comm ("Unknown"
 * when the caller is not listed).  Collective over comm. */
weft_status_t weft__topo_min_level(MPI_Comm comm, MPI_Info info, int nranks, const int *ranks,
                                   const char **type, weft__msg_t *err);

/* ---- Scratch of one-sided collectives (team.c) ------------------------- */

/* weft_team_world allocates one segment for the team and every team split
 * from it (the only call of the family that is collective over the whole
 * context, as weft_seg_alloc must be).  It is cut into slots of equal
 * size; a split gives its child and roots teams a slot each, agreed over
 * the parent (the highest next free slot of its ranks), so the members of
 * a team use the same slot and no rank uses a slot twice.  A slot holds,
 * for every team rank p (p < nranks, the context's size), the
 * acknowledgement word p raises here, on a cache line of its own, then
 * nbuf buffers for the traffic between p and this rank, each a cache line
 * (the buffer's signal word, then small data) and chunk bytes
 * (coll/onesided.c). Teams without a slot (slots used up, or the segment
 * could not be allocated) run the MPI path. */
#define WEFT__TEAM_SLOTS 16
#define WEFT__TEAM_NBUF  4
#define WEFT__TEAM_LINE  64

typedef struct {
    weft_ctx_t ctx;
    weft_seg_t seg;
    size_t     off;     /* the slot's offset in every rank's part */
    char      *local;   /* the slot in this rank's part */
    size_t     chunk;   /* bytes of one buffer */
    int        nbuf;    /* buffers per writer */
    int        nranks;  /* writers the slot has room for (the context's size) */
    weft_ep_t  ep;      /* the endpoint the collectives use (weft__team_ep_set) */
} weft__team_scratch_t;

/* The slot of team; WEFT_ERR_UNSUPPORTED when it has none (no error is
 * recorded: the caller falls back to the MPI path). */
weft_status_t weft__team_scratch(weft_team_t team, weft__team_scratch_t *out);

/* The endpoint a team's one-sided collectives use, instead of the
 * context's default one: an endpoint team's ranks' team runs on the
 * endpoint its rank's leader thread brought, so that endpoint teams of a
 * rank can run collectives at the same time.  Set before the team's first
 * collective. */
void weft__team_ep_set(weft_team_t team, weft_ep_t ep);

/* The upper layer's per-team state: NULL until set; free_fn is called with
 * it when the team is freed. */
void *weft__team_state(weft_team_t team);
/* The coll layer's state of a live rank team of a live context, in one
 * call and without recording an error: NULL for anything else (a NULL,
 * freed or endpoint team, a finalised context, no state yet). */
void *weft__team_live_state(weft_team_t team);
void  weft__team_state_set(weft_team_t team, void *state, void (*free_fn)(void *));

/* ---- Endpoint teams (eteam.c) ------------------------------------------ */

/* A team whose members are threads: (rank, thread index, endpoint).  Every
 * thread holds a handle of its own (struct weft__team with `et` set); the
 * members of one rank share the rank's part of the team, below, which the
 * coll layer's collectives synchronise on.  Members are ordered by rank,
 * then thread index, and splits keep that order, so the members of a rank
 * are consecutive. */
typedef struct weft__eshared {
    pthread_mutex_t    lock;
    int                refs;      /* handles of this rank still alive */
    weft_ctx_t         ctx;
    int                n;         /* members */
    int               *mctx;      /* [n] context rank of each member */
    int               *mrk;       /* [n] its rank's position in `ranks` */
    int               *mthread;   /* [n] its thread index */
    weft__topo_path_t *path;      /* [n] */
    int                has_level; /* 0 for a joined team and a roots team */
    weft__topo_level_t level;
    int                first, nlocal; /* this rank's members: [first, first + nlocal) */
    weft_team_t        ranks;     /* the ranks holding members (one-sided collectives
                                     between them); WEFT_TEAM_NULL for one rank */
    void              *join;      /* a split being joined (eteam.c) */
    void              *coll;      /* the coll layer's area, freed with coll_free */
    void             (*coll_free)(void *);
} weft__eshared_t;

/* An endpoint team handle's own part. */
typedef struct {
    weft__eshared_t *sh;
    int              member;      /* position in the team */
    weft_ep_t        ep;
    uint64_t         calls;       /* collectives made through this handle */
} weft__eteam_t;

/* The endpoint part of team, NULL for a rank team. */
weft__eteam_t *weft__team_et(weft_team_t team);

/* For eteam.c: a handle of ctx for an endpoint member (NULL when memory ran
 * out), and the rank-level operations its creation needs. */
weft_team_t   weft__team_new_endpoint(weft_ctx_t ctx, weft__eteam_t *et);
MPI_Comm      weft__team_comm(weft_team_t team);
weft_ctx_t    weft__team_ctx(weft_team_t team);
void        **weft__team_join_slot(weft_team_t team);
/* A team of parent's ranks ranks[0..n) (ascending) made by those ranks only
 * (MPI_Comm_create_group with tag), with a scratch slot of parent's family
 * agreed over them. */
weft_status_t weft__team_subset(weft_team_t parent, const int *ranks, int n, int tag,
                                weft_team_t *out, weft__msg_t *err);
/* A duplicate of parent (collective over it), scratch slot included. */
weft_status_t weft__team_dup(weft_team_t parent, weft_team_t *out, weft__msg_t *err);

/* Endpoint-team forms of the team calls (team.c dispatches to them). */
weft_status_t weft__et_split(weft_team_t parent, weft_team_t *child, weft_team_t *roots);
void          weft__et_release(weft__eteam_t *et);

#endif
