/* The hierarchical split (the paper's Algorithms 1 and 2) over paths.
 *
 * A rank's path (path.c) lists the objects above it, root first.  Over a
 * parent communicator, the deepest object common to all paths is the
 * paper's get_ancestor(comm); a rank joins the communicator of the next
 * object of its own path (a child of that ancestor), or gets MPI_COMM_NULL
 * when its path ends at the ancestor (its binding goes no deeper).  Levels
 * that hold the same ranks collapse by construction: they are common to
 * every path of the parent and the split happens below them.
 *
 * Collective calls agree before creating anything: one MPI_Allreduce(MIN)
 * carries every rank's status together with the path identifiers, so a
 * failure anywhere becomes the same error (and message, broadcast from the
 * first failing rank) everywhere, and no rank is left in a half-made
 * communicator.  A rank whose step fails (memory running out included)
 * still enters every collective the others enter, and agrees: what a
 * collective step needs is allocated before the agreement that precedes
 * it, and what can fail after the communicators are made is agreed on
 * once more (then every rank frees them).
 *
 * The path a communicator was made from rides on it as an MPI attribute,
 * so the paper's loop (split, split the result, ...) with MPI_INFO_NULL
 * keeps the description given to the first call. */
#include "team.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a communicator made here carries. */
typedef struct {
    weft__topo_path_t  path;
    uint64_t           jobsig;    /* hash of the settings, equal on every rank */
    int                has_level; /* 0 for roots communicators */
    weft__topo_level_t level;
} topo_attr_t;

static const char *const info_keys[] = {"weft_topo_synthetic", "weft_topo_xml", "weft_topo_bind",
                                        "weft_topo_node", "weft_topo_slurm_conf"};
static const char *const env_names[] = {"WEFT_TOPO_SYNTHETIC", "WEFT_TOPO_XML", "WEFT_TOPO_BIND",
                                        WEFT__NODE_ENV, "WEFT_TOPO_SLURM_CONF"};
#define NSETTINGS 5

/* ---- the attribute --------------------------------------------------------- */

static pthread_once_t keyval_once = PTHREAD_ONCE_INIT;
static int            keyval = MPI_KEYVAL_INVALID;

/* A duplicated communicator keeps its level (MPI_Comm_dup of a level is the
 * same level). */
static int attr_copy(MPI_Comm old, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)old, (void)kv, (void)extra;
    topo_attr_t *copy = malloc(sizeof(*copy));
    if (!copy)
        return MPI_ERR_NO_MEM;
    memcpy(copy, in, sizeof(*copy));
    *(void **)out = copy;
    *flag = 1;
    return MPI_SUCCESS;
}

static int attr_delete(MPI_Comm comm, int kv, void *value, void *extra)
{
    (void)comm, (void)kv, (void)extra;
    free(value);
    return MPI_SUCCESS;
}

static void keyval_create(void)
{
    MPI_Comm_create_keyval(attr_copy, attr_delete, &keyval, NULL);
}

static topo_attr_t *attr_get(MPI_Comm comm)
{
    void *value;
    int   found = 0;

    pthread_once(&keyval_once, keyval_create);
    if (keyval == MPI_KEYVAL_INVALID || MPI_Comm_get_attr(comm, keyval, &value, &found) != MPI_SUCCESS)
        return NULL;
    return found ? value : NULL;
}

static weft_status_t attr_set(MPI_Comm comm, const topo_attr_t *attr, weft__msg_t *err)
{
    topo_attr_t *copy = malloc(sizeof(*copy));

    if (!copy)
        return weft__fail(err, WEFT_ERR_NO_MEMORY, "out of memory");
    *copy = *attr;
    pthread_once(&keyval_once, keyval_create);
    if (keyval == MPI_KEYVAL_INVALID || MPI_Comm_set_attr(comm, keyval, copy) != MPI_SUCCESS) {
        free(copy);
        return weft__fail(err, WEFT_ERR_MPI, "MPI_Comm_set_attr failed");
    }
    return WEFT_OK;
}

/* ---- settings -------------------------------------------------------------- */

/* The settings' slots in info_keys / env_names order. */
enum { SET_SYNTHETIC, SET_XML, SET_BIND, SET_NODE, SET_SLURM_CONF };

/* Settings from info (which wins) and the environment; *from_info tells
 * whether info named any, in which case the description is rebuilt rather
 * than inherited, and *from_env which came from the environment (a bit
 * per slot). */
static weft_status_t settings_get(MPI_Info info, weft__topo_settings_t *s, int *from_info,
                                  unsigned *from_env, weft__msg_t *err)
{
    char **slot[NSETTINGS] = {&s->synthetic, &s->xml, &s->bind, &s->node, &s->slurm_conf};
    int    nomem = 0;

    memset(s, 0, sizeof(*s));
    *from_info = 0;
    *from_env = 0;
    for (int i = 0; i < NSETTINGS; i++) {
        int         len = 0, found = 0;
        const char *env = getenv(env_names[i]);
        if (info != MPI_INFO_NULL)
            MPI_Info_get_valuelen(info, info_keys[i], &len, &found);
        if (found) {
            *slot[i] = malloc((size_t)len + 1);
            if (*slot[i])
                MPI_Info_get(info, info_keys[i], len + 1, *slot[i], &found);
            *from_info = 1;
        } else if (env && *env) {
            *slot[i] = strdup(env);
            *from_env |= 1u << i;
        } else {
            continue;
        }
        /* the other keys are still looked at: *from_info decides whether
         * the caller takes a collective path */
        nomem |= !*slot[i];
    }
    if (nomem) {
        weft__topo_settings_free(s);
        return weft__fail(err, WEFT_ERR_NO_MEMORY, "out of memory for the settings");
    }
    if (s->synthetic && s->xml) {
        weft__topo_settings_free(s);
        return weft__fail(err, WEFT_ERR_CONFIG,
                          "WEFT_TOPO_SYNTHETIC and WEFT_TOPO_XML are both set: give one");
    }
    return WEFT_OK;
}

static uint64_t settings_hash(const weft__topo_settings_t *s)
{
    const char *v[NSETTINGS] = {s->synthetic, s->xml, s->bind, s->node, s->slurm_conf};
    uint64_t    h = weft__topo_hash_str(0, "weft-topo");

    for (int i = 0; i < NSETTINGS; i++)
        h = weft__topo_hash_str(h, v[i] ? v[i] : "\001unset");
    return h;
}

/* ---- agreement ------------------------------------------------------------- */

typedef struct {
    int  status;
    char msg[WEFT__MSG_MAX];
} failure_t;

#define SIGN_BIT (UINT64_C(1) << 63)

/* MPI_Allreduce(MIN) of vals[0..n) in place, vals[0] being filled with this
 * rank's failure (its rank, or UINT64_MAX when st is WEFT_OK).  Returns the
 * first failing rank's status and message on every rank. */
static weft_status_t agree(MPI_Comm comm, weft_status_t st, uint64_t *vals, int n,
                           weft__msg_t *err)
{
    int       rank;
    failure_t f;

    MPI_Comm_rank(comm, &rank);
    vals[0] = st == WEFT_OK ? UINT64_MAX : (uint64_t)rank;
    /* Reduced as signed 64-bit integers with the top bit flipped, which
     * orders them as the unsigned values: MPICH 4.0 compares MPI_UINT64_T
     * as signed, so an unsigned MIN is not portable. */
    for (int i = 0; i < n; i++)
        vals[i] ^= SIGN_BIT;
    int rc = MPI_Allreduce(MPI_IN_PLACE, vals, n, MPI_INT64_T, MPI_MIN, comm);
    for (int i = 0; i < n; i++)
        vals[i] ^= SIGN_BIT;
    if (rc != MPI_SUCCESS)
        return weft__fail(err, WEFT_ERR_MPI, "MPI_Allreduce failed");
    if (vals[0] == UINT64_MAX)
        return WEFT_OK;
    f.status = st;
    memcpy(f.msg, err->msg, sizeof(f.msg));
    if (MPI_Bcast(&f, sizeof(f), MPI_BYTE, (int)vals[0], comm) != MPI_SUCCESS)
        return weft__fail(err, WEFT_ERR_MPI, "MPI_Bcast failed");
    memcpy(err->msg, f.msg, sizeof(f.msg));
    return (weft_status_t)f.status;
}

/* The MIN reduction also yields maxima: slot i holds v, slot j holds ~v. */
static int differs(const uint64_t *vals, int i, int j)
{
    return vals[i] != ~vals[j];
}

/* ---- building a path from the settings (collective over comm) -------------- */

/* This rank's position among the ranks of comm on the same node; all has
 * room for every rank's node name. */
static weft_status_t local_index(MPI_Comm comm, const char node[WEFT__TOPO_NAME_MAX], char *all,
                                 int *index, weft__msg_t *err)
{
    int rank, n = 0;

    MPI_Comm_rank(comm, &rank);
    if (MPI_Allgather(node, WEFT__TOPO_NAME_MAX, MPI_CHAR, all, WEFT__TOPO_NAME_MAX, MPI_CHAR,
                      comm) != MPI_SUCCESS)
        return weft__fail(err, WEFT_ERR_MPI, "MPI_Allgather failed");
    for (int r = 0; r < rank; r++)
        n += strncmp(all + (size_t)r * WEFT__TOPO_NAME_MAX, node, WEFT__TOPO_NAME_MAX) == 0;
    *index = n;
    return WEFT_OK;
}

/* Threads whose paths path_from computes besides the rank's (n == 0:
 * none): their ids, WEFT_TOPO_THREAD_BIND, the rank's index in its lists. */
typedef struct {
    int                n;
    const pthread_t   *tid;
    const char        *spec;
    int                rank, nranks;
    weft__topo_path_t *paths;
} threads_t;

/* part of spec (';'-separated) for rank: the only part, or the rank's. */
static weft_status_t thread_part(const char *spec, int rank, int nranks, char *out, size_t cap,
                                 weft__msg_t *err)
{
    int         parts = 1;
    const char *p = spec;

    for (const char *c = spec; *c; c++)
        parts += *c == ';' || *c == '|';
    if (parts != 1 && parts != nranks)
        return weft__fail(err, WEFT_ERR_CONFIG,
                          "WEFT_TOPO_THREAD_BIND has %d ';'-separated parts for %d ranks: give "
                          "one for every rank or one per rank", parts, nranks);
    for (int i = 0; parts > 1 && i < rank; i++)
        p += strcspn(p, ";|") + 1;
    size_t len = strcspn(p, ";|");
    if (len == 0 || len >= cap)
        return weft__fail(err, WEFT_ERR_CONFIG, "WEFT_TOPO_THREAD_BIND: part %d is %s", rank,
                          len ? "too long" : "empty");
    memcpy(out, p, len);
    out[len] = 0;
    return WEFT_OK;
}

/* Thread t's binding into ts (set is the rank's): see weft__topo_thread_paths. */
static weft_status_t thread_set(hwloc_topology_t topo, const threads_t *th, int t, int described,
                                hwloc_const_bitmap_t set, hwloc_bitmap_t ts, weft__msg_t *err)
{
    char              part[1024];
    weft__topo_bind_t tb;
    weft_status_t     st;

    hwloc_bitmap_copy(ts, set);
    if (th->spec) {
        if ((st = thread_part(th->spec, th->rank, th->nranks, part, sizeof(part), err)) != WEFT_OK ||
            (st = weft__topo_parse_bind(part, t, th->n, &tb, err)) != WEFT_OK)
            return weft__fail(err, st, "WEFT_TOPO_THREAD_BIND: %.250s", err->msg);
        if (tb.kind == WEFT__BIND_UNBOUND)
            return WEFT_OK;
        return weft__topo_bind_cpuset(topo, &tb, t, 1, ts, err);
    }
    /* This machine: the thread's own binding; failing that, the rank's. */
    if (!described && th->tid && hwloc_get_thread_cpubind(topo, th->tid[t], ts, 0) != 0)
        hwloc_bitmap_copy(ts, set);
    if (hwloc_bitmap_iszero(ts))
        hwloc_bitmap_copy(ts, set);
    return WEFT_OK;
}

/* The local (no MPI) part: topology, binding, network, path (and the
 * threads' paths). */
static weft_status_t path_from(const weft__topo_settings_t *s, const weft__topo_bind_t *bind,
                               const char *node, int index, weft__topo_path_t *path,
                               const threads_t *th, weft__msg_t *err)
{
    weft__topo_net_t  net = {0};
    hwloc_topology_t  topo;
    hwloc_bitmap_t    set, ts = NULL;
    weft_status_t     st;

    if (s->slurm_conf && (st = weft__topo_slurm_load(s->slurm_conf, &net, err)) != WEFT_OK)
        return st;
    if ((st = weft__topo_load(s, node, &topo, err)) != WEFT_OK)
        goto out_free_net;
    if (!(set = hwloc_bitmap_alloc()) || (th && !(ts = hwloc_bitmap_alloc()))) {
        st = weft__fail(err, WEFT_ERR_NO_MEMORY, "out of memory");
        goto out_free_sets;
    }
    st = weft__topo_bind_cpuset(topo, bind, index, s->synthetic || s->xml, set, err);
    if (st == WEFT_OK)
        st = weft__topo_path(s->slurm_conf ? &net : NULL, node, topo, set, path, err);
    for (int t = 0; th && st == WEFT_OK && t < th->n; t++) {
        st = thread_set(topo, th, t, s->synthetic || s->xml, set, ts, err);
        if (st == WEFT_OK)
            st = weft__topo_path(s->slurm_conf ? &net : NULL, node, topo, ts, &th->paths[t], err);
        if (st != WEFT_OK)
            st = weft__fail(err, st, "thread %d: %.250s", t, err->msg);
    }
out_free_sets:
    hwloc_bitmap_free(ts);
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(topo);
out_free_net:
    weft__topo_net_free(&net);
    return st;
}

/* Build this rank's path over comm.  Collective, also when st (the
 * settings' status) is an error, which is then agreed on; returns the
 * rank's own status (the caller agrees on it) except for errors every rank
 * shares.
 *
 * The per-rank settings (WEFT_TOPO_NODE, WEFT_TOPO_BIND) from the
 * environment describe the job: their lists and rules are read at the
 * rank's MPI_COMM_WORLD rank, whatever comm is, so that a communicator
 * made by MPI_Comm_split sees its ranks where the job put them.  From info
 * keys they describe comm, and are read at the rank in comm.  A binding
 * rule's index of a rank on its node is counted over the job when the
 * nodes are named by WEFT_TOPO_NODE, over comm otherwise (host names are
 * not known beyond it without a collective over the job). */
static weft_status_t path_build(MPI_Comm comm, const weft__topo_settings_t *s, unsigned from_env,
                                weft_status_t st, weft__topo_path_t *path, uint64_t *jobsig,
                                threads_t *th, weft__msg_t *err)
{
    weft__topo_bind_t bind = {0};
    char              node[WEFT__TOPO_NAME_MAX] = "";
    char             *names = NULL;
    int               rank, size, wrank, wsize, index = 0;
    int               node_job = s->node && (from_env & (1u << SET_NODE));
    int               bind_job = s->bind && (from_env & (1u << SET_BIND));
    int               by_comm;
    uint64_t          vals[3];

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    *jobsig = settings_hash(s);
    if (st == WEFT_OK)
        st = weft__node_name(s->node, node_job ? wrank : rank, node_job ? wsize : size, node, err);
    if (st == WEFT_OK)
        st = weft__topo_parse_bind(s->bind, bind_job ? wrank : rank, bind_job ? wsize : size,
                                   &bind, err);
    if (st == WEFT_OK && bind.kind == WEFT__BIND_RULE && node_job)
        st = weft__node_parse(s->node, wrank, wsize, node, &index, err);
    /* A rule's index counted over comm takes a gather, whose buffer is
     * allocated before the agreement. */
    by_comm = st == WEFT_OK && bind.kind == WEFT__BIND_RULE && !node_job;
    if (by_comm && !(names = malloc((size_t)size * WEFT__TOPO_NAME_MAX)))
        st = weft__fail(err, WEFT_ERR_NO_MEMORY, "out of memory for the node names");
    /* Everyone must take the same collective path from here on. */
    vals[1] = *jobsig;
    vals[2] = ~*jobsig;
    st = agree(comm, st, vals, 3, err);
    if (st == WEFT_OK && differs(vals, 1, 2))
        st = weft__fail(err, WEFT_ERR_INVALID_ARG,
                        "the topology settings (WEFT_TOPO_* variables or weft_topo_* "
                        "info keys) differ across ranks: give every rank the same");
    if (st == WEFT_OK && by_comm)
        st = local_index(comm, node, names, &index, err);
    free(names);
    if (st != WEFT_OK)
        return st;
    if (th) {
        th->rank = wrank;   /* an environment setting: a list over the job */
        th->nranks = wsize;
    }
    st = path_from(s, &bind, node, index, path, th, err);
    if (st != WEFT_OK)
        return weft__fail(err, st, "rank %d (node %s): %.250s", rank, node, err->msg);
    return WEFT_OK;
}

/* The path of comm's ranks: inherited from the communicator unless info
 * carries settings.  Collective when built, also when the settings could
 * not be read (whether it is built is the same on every rank). */
static weft_status_t path_of(MPI_Comm comm, MPI_Info info, weft__topo_path_t *path,
                             uint64_t *jobsig, weft__msg_t *err)
{
    weft__topo_settings_t s;
    int                   from_info;
    unsigned              from_env;
    topo_attr_t          *attr = attr_get(comm);
    weft_status_t         st = settings_get(info, &s, &from_info, &from_env, err);

    if (attr && !from_info) {
        if (st == WEFT_OK) {
            *path = attr->path;
            *jobsig = attr->jobsig;
        }
    } else {
        st = path_build(comm, &s, from_env, st, path, jobsig, NULL, err);
    }
    weft__topo_settings_free(&s);
    return st;
}

weft_status_t weft__topo_thread_paths(MPI_Comm comm, weft_status_t st, int nthreads,
                                      const pthread_t *tid, weft__topo_path_t *paths,
                                      weft__msg_t *err)
{
    weft__topo_settings_t s = {0};
    weft__topo_path_t     rank_path;
    uint64_t              jobsig, vals[1];
    int                   from_info;
    unsigned              from_env = 0;
    const char           *spec = getenv("WEFT_TOPO_THREAD_BIND");
    threads_t             th = {.n = nthreads, .tid = tid, .spec = spec && *spec ? spec : NULL,
                                .paths = paths};

    if (st == WEFT_OK)
        st = settings_get(MPI_INFO_NULL, &s, &from_info, &from_env, err);
    st = path_build(comm, &s, from_env, st, &rank_path, &jobsig, &th, err);
    weft__topo_settings_free(&s);
    return agree(comm, st, vals, 1, err);
}

/* ---- the split ------------------------------------------------------------- */

typedef weft__topo_kid_t child_t;

static int by_id(const void *a, const void *b)
{
    const child_t *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->first - y->first;
}

static int by_position(const void *a, const void *b)
{
    const child_t *x = a, *y = b;
    if (x->order != y->order)
        return x->order < y->order ? -1 : 1;
    return x->first - y->first;
}

weft_status_t weft__topo_number_children(int n, const uint64_t *id, const int64_t *order,
                                         weft__topo_kid_t *kids, int *num)
{
    int k = 0, distinct = 0;

    for (int r = 0; r < n; r++)
        if (id[r] != 0)
            kids[k++] = (child_t){.id = id[r], .order = order[r], .first = r};
    qsort(kids, (size_t)k, sizeof(*kids), by_id);
    for (int i = 0; i < k; i++)
        if (i == 0 || kids[i].id != kids[i - 1].id)
            kids[distinct++] = kids[i];
    qsort(kids, (size_t)distinct, sizeof(*kids), by_position);
    *num = distinct;
    return WEFT_OK;
}

int weft__topo_common_depth(int n, const weft__topo_path_t *const *paths)
{
    int k = n > 0 ? paths[0]->depth : 0;

    for (int m = 1; m < n; m++) {
        int c = 0;
        while (c < k && c < paths[m]->depth && paths[m]->elem[c].id == paths[0]->elem[c].id)
            c++;
        k = c;
    }
    return k;
}

/* Number the distinct children of the ancestor in sibling order (then by
 * lowest rank, for nodes of a flat network): the index of the rank's own
 * child is its color and its communicator's index.  all and kids have room
 * for 2 values and a child per rank of parent. */
static weft_status_t number_children(MPI_Comm parent, const weft__topo_elem_t *mine, int64_t *all,
                                     child_t *kids, int *color, int *num, weft__msg_t *err)
{
    int     size;
    int64_t sent[2] = {mine ? (int64_t)mine->id : 0, mine ? mine->order : 0};

    MPI_Comm_size(parent, &size);
    if (MPI_Allgather(sent, 2, MPI_INT64_T, all, 2, MPI_INT64_T, parent) != MPI_SUCCESS)
        return weft__fail(err, WEFT_ERR_MPI, "MPI_Allgather failed");
    /* ids and orders side by side in place: ids first, then orders */
    uint64_t *ids = (uint64_t *)all;
    int64_t   tmp_order;
    for (int r = 0; r < size; r++) {
        /* all[2r] (id) moves to ids[r] (r <= 2r: never overwrites an unread id);
         * the orders are kept in kids' first field meanwhile */
        tmp_order = all[2 * r + 1];
        ids[r] = (uint64_t)all[2 * r];
        kids[r].order = tmp_order;
    }
    int64_t *orders = all + size;
    for (int r = 0; r < size; r++)
        orders[r] = kids[r].order;
    weft__topo_number_children(size, ids, orders, kids, num);
    *color = MPI_UNDEFINED;
    for (int i = 0; mine && i < *num; i++)
        if (kids[i].id == mine->id)
            *color = i;
    return WEFT_OK;
}

/* MPI 4 names the resource of a split in the communicator's info; the
 * weft_hlevel_* keys repeat what WEFT_Comm_get_hlevel_info returns. */
static void level_info_set(MPI_Comm comm, const weft__topo_level_t *level)
{
    MPI_Info info;
    char     num[16], index[16];

    if (MPI_Info_create(&info) != MPI_SUCCESS)
        return;
    snprintf(num, sizeof(num), "%d", level->num_comms);
    snprintf(index, sizeof(index), "%d", level->index);
    MPI_Info_set(info, "mpi_hw_resource_type", level->type);
    MPI_Info_set(info, "weft_hlevel_type", level->type);
    MPI_Info_set(info, "weft_hlevel_num", num);
    MPI_Info_set(info, "weft_hlevel_index", index);
    MPI_Comm_set_info(comm, info);
    MPI_Info_free(&info);
}

static weft_status_t check_comm(MPI_Comm comm, weft__msg_t *err)
{
    int inter;

    if (comm == MPI_COMM_NULL)
        return weft__fail(err, WEFT_ERR_INVALID_ARG, "communicator is MPI_COMM_NULL");
    if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return weft__fail(err, WEFT_ERR_INVALID_ARG,
                          "an intercommunicator has no hardware hierarchy");
    return WEFT_OK;
}

weft_status_t weft__topo_split(MPI_Comm parent, MPI_Info info, int key, MPI_Comm *newcomm,
                               MPI_Comm *roots, weft__msg_t *err)
{
    enum { HEAD = 3, D = WEFT__TOPO_MAX_DEPTH };
    topo_attr_t              attr = {0};
    uint64_t                 vals[HEAD + 2 * D];
    const weft__topo_elem_t *child = NULL;
    int                      prank, psize, color = MPI_UNDEFINED, num = 0, k;
    MPI_Comm                 nc = MPI_COMM_NULL, rc = MPI_COMM_NULL;
    int64_t                 *all;
    child_t                 *kids;
    weft_status_t            st;

    if ((st = check_comm(parent, err)) != WEFT_OK)
        return st;
    MPI_Comm_rank(parent, &prank);
    MPI_Comm_size(parent, &psize);
    st = path_of(parent, info, &attr.path, &attr.jobsig, err);
    /* number_children's buffers, agreed on with the rest */
    all = malloc((size_t)psize * 2 * sizeof(*all));
    kids = malloc((size_t)psize * sizeof(*kids));
    if (st == WEFT_OK && (!all || !kids))
        st = weft__fail(err, WEFT_ERR_NO_MEMORY, "out of memory for the children");

    /* Agree on status, settings and paths at once.  An absent level reduces
     * to 0 in one slot and to all-ones in its complement, never equal. */
    vals[1] = attr.jobsig;
    vals[2] = ~attr.jobsig;
    for (int i = 0; i < D; i++) {
        int present = st == WEFT_OK && i < attr.path.depth;
        vals[HEAD + i] = present ? attr.path.elem[i].id : 0;
        vals[HEAD + D + i] = present ? ~attr.path.elem[i].id : 0;
    }
    st = agree(parent, st, vals, HEAD + 2 * D, err);
    if (st == WEFT_OK && differs(vals, 1, 2))
        st = weft__fail(err, WEFT_ERR_INVALID_ARG,
                        "the ranks of this communicator were described with different "
                        "topology settings: give every rank the same");
    for (k = 0; k < D && vals[HEAD + k] != 0 && !differs(vals, HEAD + k, HEAD + D + k); k++)
        ;
    /* k objects are common: the ancestor is elem[k-1], the child elem[k]. */
    if (st == WEFT_OK && k == 0)
        st = weft__fail(err, WEFT_ERR_INVALID_ARG, "the ranks share no root object");
    if (st == WEFT_OK && attr.path.depth > k)
        child = &attr.path.elem[k];
    if (st == WEFT_OK)
        st = number_children(parent, child, all, kids, &color, &num, err);
    free(all);
    free(kids);
    if (st != WEFT_OK)
        return st;
    /* From here every rank makes both splits whatever befalls it, then
     * all agree: a rank that could not label its communicator must not
     * leave the others in a roots split, or holding communicators it
     * freed. */
    if (MPI_Comm_split(parent, color, key, &nc) != MPI_SUCCESS)
        st = weft__fail(err, WEFT_ERR_MPI, "MPI_Comm_split failed");
    if (st == WEFT_OK && nc != MPI_COMM_NULL) {
        attr.has_level = 1;
        attr.level = (weft__topo_level_t){.num_comms = num, .index = color, .type = child->type};
        level_info_set(nc, &attr.level);
        st = attr_set(nc, &attr, err);
    }
    if (roots) {
        /* Algorithm 2: the rank-0s of the new communicators, colored by the
         * ancestor, which every rank of parent shares. */
        int newrank = -1;
        if (nc != MPI_COMM_NULL)
            MPI_Comm_rank(nc, &newrank);
        int64_t anc = attr.path.elem[k - 1].order;
        int rcolor = newrank == 0 ? (int)(anc > 0 && anc < INT_MAX ? anc : 0) : MPI_UNDEFINED;
        if (MPI_Comm_split(parent, rcolor, prank, &rc) != MPI_SUCCESS && st == WEFT_OK)
            st = weft__fail(err, WEFT_ERR_MPI, "MPI_Comm_split failed");
        attr.has_level = 0;
        if (st == WEFT_OK && rc != MPI_COMM_NULL)
            st = attr_set(rc, &attr, err);
    }
    st = agree(parent, st, vals, 1, err);
    if (st != WEFT_OK) {
        if (rc != MPI_COMM_NULL)
            MPI_Comm_free(&rc);
        if (nc != MPI_COMM_NULL)
            MPI_Comm_free(&nc);
        return st;
    }
    *newcomm = nc;
    if (roots)
        *roots = rc;
    return WEFT_OK;
}

weft_status_t weft__topo_level(MPI_Comm comm, weft__topo_level_t *level, weft__msg_t *err)
{
    topo_attr_t  *attr;
    weft_status_t st = check_comm(comm, err);

    if (st != WEFT_OK)
        return st;
    attr = attr_get(comm);
    if (!attr || !attr->has_level)
        return weft__fail(err, WEFT_ERR_INVALID_ARG,
                          "this communicator is not a hardware level (make it with "
                          "WEFT_Comm_split_type(WEFT_COMM_TYPE_PHYSICAL_TOPOLOGY) or "
                          "WEFT_Comm_hsplit_with_roots)");
    *level = attr->level;
    return WEFT_OK;
}

weft_status_t weft__topo_min_level(MPI_Comm comm, MPI_Info info, int nranks, const int *ranks,
                                   const char **type, weft__msg_t *err)
{
    enum { HEAD = 2 };
    weft__topo_path_t path = {0};
    uint64_t          jobsig, vals[HEAD], *ids;
    int               rank, size, depth, listed = 0;
    weft_status_t     st;

    if ((st = check_comm(comm, err)) != WEFT_OK)
        return st;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    st = path_of(comm, info, &path, &jobsig, err);
    vals[1] = st == WEFT_OK ? ~(uint64_t)path.depth : UINT64_MAX;
    if ((st = agree(comm, st, vals, HEAD, err)) != WEFT_OK)
        return st;
    depth = (int)~vals[1];
    /* the gather's size is known only now: agreed on once more */
    ids = calloc((size_t)size * (size_t)depth, sizeof(*ids));
    st = ids ? WEFT_OK : weft__fail(err, WEFT_ERR_NO_MEMORY, "out of memory for the paths");
    if ((st = agree(comm, st, vals, 1, err)) != WEFT_OK) {
        free(ids);
        return st;
    }
    for (int i = 0; i < path.depth; i++)
        ids[(size_t)rank * (size_t)depth + (size_t)i] = path.elem[i].id;
    if (MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ids, depth, MPI_UINT64_T, comm) !=
        MPI_SUCCESS) {
        free(ids);
        return weft__fail(err, WEFT_ERR_MPI, "MPI_Allgather failed");
    }
    /* The list is this rank's own argument: checked here, after the
     * collective part, so a bad list on one rank leaves no other waiting. */
    if (nranks < 1)
        st = weft__fail(err, WEFT_ERR_INVALID_ARG, "need at least one rank (nranks=%d)",
                        nranks);
    else if (!ranks)
        st = weft__fail(err, WEFT_ERR_INVALID_ARG, "ranks is NULL (nranks=%d)", nranks);
    for (int i = 0; st == WEFT_OK && i < nranks; i++) {
        if (ranks[i] < 0 || ranks[i] >= size)
            st = weft__fail(err, WEFT_ERR_INVALID_ARG, "ranks[%d] = %d outside [0, %d)", i,
                            ranks[i], size);
        for (int j = 0; st == WEFT_OK && j < i; j++)
            if (ranks[j] == ranks[i])
                st = weft__fail(err, WEFT_ERR_INVALID_ARG, "rank %d listed twice", ranks[i]);
        listed |= st == WEFT_OK && ranks[i] == rank;
    }
    if (st == WEFT_OK) {
        int common = path.depth;
        for (int i = 0; i < nranks; i++) {
            const uint64_t *other = ids + (size_t)ranks[i] * (size_t)depth;
            int             c = 0;
            while (c < common && other[c] == path.elem[c].id)
                c++;
            common = c;
        }
        *type = !listed ? "Unknown" : common > 0 ? path.elem[common - 1].type : "Unknown";
    }
    free(ids);
    return st;
}
