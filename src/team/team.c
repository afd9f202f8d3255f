/* weft teams: a context's MPI communicator, split by the same code as the
 * MPI-level API. */
#include "team.h"
#include "runtime/runtime.h"

#include <pthread.h>
#include <stdlib.h>
#include <weft_mpi.h>

#define TEAM_ALIVE 0x7465616d /* "team" */

/* The scratch segment of a world team and every team split from it. */
struct scratch {
    weft_seg_t seg;
    char      *local;
    size_t     slot_bytes, chunk;
    int        nslots, nranks;
    int        next;      /* the lowest slot no team of this rank uses */
    int        refs;      /* teams of the family still alive here */
    unsigned   taken;     /* slots some team of this rank holds or held (a bit each) */
};

/* Guards every family's next, refs and taken: the threads of an endpoint
 * team's rank make and free teams of one family at the same time. */
static pthread_mutex_t scratch_lock = PTHREAD_MUTEX_INITIALIZER;

struct weft__team {
    uint32_t           magic;
    weft_ctx_t         ctx;
    MPI_Comm           comm;
    struct scratch    *scratch;    /* NULL: no one-sided collectives */
    int                slot;       /* -1: none */
    void              *state;      /* the coll layer's */
    void             (*state_free)(void *);
    weft__eteam_t     *et;         /* an endpoint team's member (eteam.c), else NULL */
    weft_ep_t          ep;         /* the one-sided collectives' endpoint; NULL: the
                                      context's default one */
    void              *join;       /* endpoint teams being joined over this team (eteam.c) */
    struct weft__team *next_shell;
};

/* A freed team stays as a shell, as contexts do, so that a second free or
 * a call through a stale copy of the handle is reported, not undefined. */
static pthread_mutex_t    shells_lock = PTHREAD_MUTEX_INITIALIZER;
static struct weft__team *shells;

static weft_status_t team_check(weft_team_t team, const char *fn)
{
    if (!team || team->magic != TEAM_ALIVE)
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "not a team (NULL or freed)");
    return weft__ctx_check(team->ctx, fn);
}

/* Allocate n team structures (NULL where want[i] is 0) before the
 * collective call that makes their communicators, and agree over parent
 * that every rank has them: a rank short of memory must not leave the
 * others holding teams over communicators it has freed. */
static weft_status_t teams_alloc(MPI_Comm parent, weft_team_t *t, const int *want, int n,
                                 const char *fn)
{
    int ok = 1, all_ok = 0;
    weft_status_t st = WEFT_OK;

    for (int i = 0; i < n; i++) {
        t[i] = want[i] ? malloc(sizeof(*t[i])) : NULL;
        ok &= !want[i] || t[i] != NULL;
    }
    if (MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, parent) != MPI_SUCCESS)
        st = weft__error(WEFT_ERR_MPI, fn, "MPI_Allreduce failed");
    else if (!all_ok)
        st = weft__error(WEFT_ERR_NO_MEMORY, fn, ok ? "out of memory for a team on another rank"
                                                    : "out of memory for a team");
    for (int i = 0; st != WEFT_OK && i < n; i++)
        free(t[i]);
    return st;
}

/* t (from teams_alloc) becomes the team of comm, or is freed when comm is
 * MPI_COMM_NULL. */
static weft_team_t team_wrap(weft_team_t t, weft_ctx_t ctx, MPI_Comm comm)
{
    if (comm == MPI_COMM_NULL) {
        free(t);
        return WEFT_TEAM_NULL;
    }
    *t = (struct weft__team){.magic = TEAM_ALIVE, .ctx = ctx, .comm = comm, .slot = -1};
    return t;
}

/* The scratch segment of a new family.  Per writer, nbuf buffers of a
 * chunk that shrinks with the number of ranks, so that a slot stays near
 * 512 KiB of buffers.  Collective over the context; a context whose ranks
 * cannot allocate it runs the MPI path (weft_seg_alloc returns the same
 * status on every rank, so they all agree). */
static struct scratch *scratch_new(weft_ctx_t ctx)
{
    struct scratch *s = calloc(1, sizeof(*s));
    int             n, ok = s != NULL, all_ok = 0;
    void           *local = NULL;

    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, weft__ctx_comm(ctx));
    if (!all_ok) {
        free(s);
        return NULL;
    }
    MPI_Comm_size(weft__ctx_comm(ctx), &n);
    size_t chunk = ((size_t)512 * 1024 / ((size_t)n * WEFT__TEAM_NBUF)) & ~(size_t)63;
    chunk = chunk < 1024 ? 1024 : chunk > 65536 ? 65536 : chunk;
    size_t slot = (size_t)n * WEFT__TEAM_LINE +
                  (size_t)n * WEFT__TEAM_NBUF * (WEFT__TEAM_LINE + chunk);
    slot = (slot + 4095) & ~(size_t)4095;
    /* At most 64 MiB per rank: fewer slots on very large contexts. */
    size_t nslots = ((size_t)64 << 20) / slot;
    nslots = nslots > WEFT__TEAM_SLOTS ? WEFT__TEAM_SLOTS : nslots;
    if (nslots < 2 || weft_seg_alloc(ctx, nslots * slot, &s->seg, &local) != WEFT_OK) {
        free(s);
        return NULL;
    }
    s->local = local;
    s->slot_bytes = slot;
    s->chunk = chunk;
    s->nslots = (int)nslots;
    s->nranks = n;
    return s;
}

/* t joins family s with slot (or none when the slots are used up). */
static void scratch_join(weft_team_t t, struct scratch *s, int slot)
{
    if (!t || !s)
        return;
    pthread_mutex_lock(&scratch_lock);
    t->scratch = s;
    t->slot = slot >= 0 && slot < s->nslots ? slot : -1;
    if (t->slot >= 0)
        s->taken |= 1u << slot;
    s->refs++;
    pthread_mutex_unlock(&scratch_lock);
}

weft_status_t weft__team_scratch(weft_team_t team, weft__team_scratch_t *out)
{
    if (!team || team->magic != TEAM_ALIVE || !team->scratch || team->slot < 0)
        return WEFT_ERR_UNSUPPORTED;
    struct scratch *s = team->scratch;
    *out = (weft__team_scratch_t){.ctx = team->ctx, .seg = s->seg,
                                  .off = (size_t)team->slot * s->slot_bytes,
                                  .local = s->local + (size_t)team->slot * s->slot_bytes,
                                  .chunk = s->chunk, .nbuf = WEFT__TEAM_NBUF,
                                  .nranks = s->nranks, .ep = team->ep};
    return out->ep ? WEFT_OK : weft_ep_default(team->ctx, &out->ep);
}

void weft__team_ep_set(weft_team_t team, weft_ep_t ep) { team->ep = ep; }

void *weft__team_state(weft_team_t team) { return team->state; }

void *weft__team_live_state(weft_team_t team)
{
    if (team == NULL || team->magic != TEAM_ALIVE || team->et != NULL || team->ctx == NULL ||
        team->ctx->state != WEFT__ALIVE)
        return NULL;
    return team->state;
}

void weft__team_state_set(weft_team_t team, void *state, void (*free_fn)(void *))
{
    team->state = state;
    team->state_free = free_fn;
}

weft__eteam_t *weft__team_et(weft_team_t team) { return team ? team->et : NULL; }
MPI_Comm       weft__team_comm(weft_team_t team) { return team->comm; }
weft_ctx_t     weft__team_ctx(weft_team_t team) { return team->ctx; }
void         **weft__team_join_slot(weft_team_t team) { return &team->join; }

weft_team_t weft__team_new_endpoint(weft_ctx_t ctx, weft__eteam_t *et)
{
    weft_team_t t = malloc(sizeof(*t));

    if (t)
        *t = (struct weft__team){.magic = TEAM_ALIVE, .ctx = ctx, .comm = MPI_COMM_NULL,
                                 .slot = -1, .et = et};
    return t;
}

/* A slot of parent's family for t, agreed over comm (t's ranks).  Other
 * threads of this rank may agree on slots of the same family at the same
 * time, over other communicators, so no lock is held across the
 * collective: each rank reserves a candidate, the ranks take the highest,
 * and try again (from above it) while the highest is a slot another team
 * of some rank took meanwhile.  Slots are not reused, so this ends. */
static void scratch_agree(struct scratch *s, MPI_Comm comm, weft_team_t t)
{
    if (!s)
        return;
    for (;;) {
        int cand, agreed, ok, all_ok;
        pthread_mutex_lock(&scratch_lock);
        cand = s->next++;
        if (cand < s->nslots)
            s->taken |= 1u << cand;
        pthread_mutex_unlock(&scratch_lock);
        MPI_Allreduce(&cand, &agreed, 1, MPI_INT, MPI_MAX, comm);
        pthread_mutex_lock(&scratch_lock);
        ok = agreed == cand || agreed >= s->nslots || !(s->taken & (1u << agreed));
        if (ok && agreed < s->nslots)
            s->taken |= 1u << agreed;
        if (s->next <= agreed)
            s->next = agreed + 1;
        pthread_mutex_unlock(&scratch_lock);
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
        if (all_ok) {
            scratch_join(t, s, agreed);
            return;
        }
    }
}

weft_status_t weft__team_dup(weft_team_t parent, weft_team_t *out, weft__msg_t *err)
{
    MPI_Comm comm;
    const int one = 1;

    *out = WEFT_TEAM_NULL;
    weft_team_t t;
    if (teams_alloc(parent->comm, &t, &one, 1, "weft_team_join") != WEFT_OK)
        return weft__fail(err, WEFT_ERR_NO_MEMORY, "out of memory for a team");
    if (MPI_Comm_dup(parent->comm, &comm) != MPI_SUCCESS) {
        free(t);
        return weft__fail(err, WEFT_ERR_MPI, "MPI_Comm_dup failed");
    }
    *out = team_wrap(t, parent->ctx, comm);
    scratch_agree(parent->scratch, comm, *out);
    return WEFT_OK;
}

weft_status_t weft__team_subset(weft_team_t parent, const int *ranks, int n, int tag,
                                weft_team_t *out, weft__msg_t *err)
{
    MPI_Group pg, g;
    MPI_Comm  comm = MPI_COMM_NULL;
    weft_team_t t = malloc(sizeof(*t));
    int       rc;

    *out = WEFT_TEAM_NULL;
    MPI_Comm_group(parent->comm, &pg);
    MPI_Group_incl(pg, n, ranks, &g);
    /* Every member of the group enters, also short of memory, and frees
     * what it got then: the others' creation must not hang. */
    rc = MPI_Comm_create_group(parent->comm, g, tag, &comm);
    MPI_Group_free(&g);
    MPI_Group_free(&pg);
    if (rc != MPI_SUCCESS || !t) {
        if (comm != MPI_COMM_NULL)
            MPI_Comm_free(&comm);
        free(t);
        return weft__fail(err, t ? WEFT_ERR_MPI : WEFT_ERR_NO_MEMORY,
                          t ? "MPI_Comm_create_group failed" : "out of memory for a team");
    }
    *out = team_wrap(t, parent->ctx, comm);
    scratch_agree(parent->scratch, comm, *out);
    return WEFT_OK;
}

weft_status_t weft_team_world(weft_ctx_t ctx, weft_team_t *team)
{
    MPI_Comm      comm;
    weft_team_t   t;
    const int     one = 1;
    weft_status_t st = weft__ctx_check(ctx, __func__);

    if (st != WEFT_OK)
        return st;
    if (!team)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "team is NULL");
    if ((st = teams_alloc(weft__ctx_comm(ctx), &t, &one, 1, __func__)) != WEFT_OK)
        return st;
    /* A duplicate, so that the team's attributes are its own. */
    if (MPI_Comm_dup(weft__ctx_comm(ctx), &comm) != MPI_SUCCESS) {
        free(t);
        return weft__error(WEFT_ERR_MPI, __func__, "MPI_Comm_dup failed");
    }
    *team = team_wrap(t, ctx, comm);
    struct scratch *s = scratch_new(ctx);
    if (s) {
        s->next = 1;
        scratch_join(*team, s, 0);
    }
    return WEFT_OK;
}

weft_status_t weft_team_split_topology(weft_team_t parent, weft_team_t *child,
                                       weft_team_t *roots)
{
    weft__msg_t err;
    MPI_Comm         nc, rc = MPI_COMM_NULL;
    weft_team_t      t[2];
    int              rank, want[2] = {1, roots != NULL};
    weft_status_t    st = team_check(parent, __func__);

    if (st != WEFT_OK)
        return st;
    if (parent->et)
        return weft__et_split(parent, child, roots);
    if (!child)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "child is NULL");
    if ((st = teams_alloc(parent->comm, t, want, 2, __func__)) != WEFT_OK)
        return st;
    MPI_Comm_rank(parent->comm, &rank);
    st = weft__topo_split(parent->comm, MPI_INFO_NULL, rank, &nc, roots ? &rc : NULL, &err);
    if (st != WEFT_OK) {
        free(t[0]);
        free(t[1]);
        return weft__error(st, __func__, "%s", err.msg);
    }
    *child = team_wrap(t[0], parent->ctx, nc);
    if (roots)
        *roots = team_wrap(t[1], parent->ctx, rc);
    /* Every rank of parent is in the same family (or none), so all take
     * part; the highest next free slot is free on every member. */
    struct scratch *s = parent->scratch;
    if (s) {
        pthread_mutex_lock(&scratch_lock);
        int next = s->next;
        pthread_mutex_unlock(&scratch_lock);
        MPI_Allreduce(MPI_IN_PLACE, &next, 1, MPI_INT, MPI_MAX, parent->comm);
        scratch_join(*child, s, next);
        if (roots)
            scratch_join(*roots, s, next + 1);
        pthread_mutex_lock(&scratch_lock);
        if (s->next < next + 2)
            s->next = next + 2;
        pthread_mutex_unlock(&scratch_lock);
    }
    return WEFT_OK;
}

weft_status_t weft_team_level_info(weft_team_t team, int *num, int *index, const char **type)
{
    weft__msg_t        err;
    weft__topo_level_t level;
    weft_status_t      st = team_check(team, __func__);

    if (st != WEFT_OK)
        return st;
    if (!num || !index || !type)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "NULL output argument");
    if (team->et) {
        if (!team->et->sh->has_level)
            return weft__error(WEFT_ERR_INVALID_ARG, __func__,
                               "this endpoint team is not a hardware level (make it with "
                               "weft_team_split_topology)");
        *num = team->et->sh->level.num_comms;
        *index = team->et->sh->level.index;
        *type = team->et->sh->level.type;
        return WEFT_OK;
    }
    if ((st = weft__topo_level(team->comm, &level, &err)) != WEFT_OK)
        return weft__error(st, __func__, "%s", err.msg);
    *num = level.num_comms;
    *index = level.index;
    *type = level.type;
    return WEFT_OK;
}

weft_status_t weft_team_rank(weft_team_t team, int *rank)
{
    weft_status_t st = team_check(team, __func__);

    if (st == WEFT_OK && !rank)
        st = weft__error(WEFT_ERR_INVALID_ARG, __func__, "rank is NULL");
    if (st == WEFT_OK && team->et)
        *rank = team->et->member;
    else if (st == WEFT_OK)
        MPI_Comm_rank(team->comm, rank);
    return st;
}

weft_status_t weft_team_nranks(weft_team_t team, int *nranks)
{
    weft_status_t st = team_check(team, __func__);

    if (st == WEFT_OK && !nranks)
        st = weft__error(WEFT_ERR_INVALID_ARG, __func__, "nranks is NULL");
    if (st == WEFT_OK && team->et)
        *nranks = team->et->sh->n;
    else if (st == WEFT_OK)
        MPI_Comm_size(team->comm, nranks);
    return st;
}

weft_status_t weft_team_ctx_rank(weft_team_t team, int team_rank, int *ctx_rank)
{
    MPI_Group     mine, all;
    int           size, out;
    weft_status_t st = team_check(team, __func__);

    if (st != WEFT_OK)
        return st;
    if (!ctx_rank)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "ctx_rank is NULL");
    if (team->et) {
        if (team_rank < 0 || team_rank >= team->et->sh->n)
            return weft__error(WEFT_ERR_RANK, __func__, "team member %d outside [0, %d)",
                               team_rank, team->et->sh->n);
        *ctx_rank = team->et->sh->mctx[team_rank];
        return WEFT_OK;
    }
    MPI_Comm_size(team->comm, &size);
    if (team_rank < 0 || team_rank >= size)
        return weft__error(WEFT_ERR_RANK, __func__, "team rank %d outside [0, %d)", team_rank, size);
    MPI_Comm_group(team->comm, &mine);
    MPI_Comm_group(weft__ctx_comm(team->ctx), &all);
    MPI_Group_translate_ranks(mine, 1, &team_rank, all, &out);
    MPI_Group_free(&all);
    MPI_Group_free(&mine);
    *ctx_rank = out;
    return WEFT_OK;
}

weft_status_t weft_team_free(weft_team_t *team)
{
    if (!team)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "team is NULL");
    if (*team == WEFT_TEAM_NULL)
        return WEFT_OK;
    if ((*team)->magic != TEAM_ALIVE)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "not a team (already freed?)");
    int finalized = 0;
    MPI_Finalized(&finalized);
    (*team)->magic = 0;
    if ((*team)->state_free)
        (*team)->state_free((*team)->state);
    (*team)->state = NULL;
    /* The segment itself is the context's (freed by weft_finalize): freeing
     * it would take every rank of the context, which a team free is not. */
    pthread_mutex_lock(&scratch_lock);
    int last = (*team)->scratch && --(*team)->scratch->refs == 0;
    pthread_mutex_unlock(&scratch_lock);
    if (last)
        free((*team)->scratch);
    (*team)->scratch = NULL;
    if ((*team)->et)
        weft__et_release((*team)->et);
    (*team)->et = NULL;
    /* After MPI_Finalize the communicator is gone with MPI. */
    if (!finalized && (*team)->comm != MPI_COMM_NULL)
        MPI_Comm_free(&(*team)->comm);
    pthread_mutex_lock(&shells_lock);
    (*team)->next_shell = shells;
    shells = *team;
    pthread_mutex_unlock(&shells_lock);
    *team = WEFT_TEAM_NULL;
    return WEFT_OK;
}

int WEFT_Team_comm(weft_team_t team, MPI_Comm *comm)
{
    if (team_check(team, __func__) != WEFT_OK || !comm)
        return MPI_ERR_ARG;
    if (team->et) {
        weft__error(WEFT_ERR_INVALID_ARG, __func__,
                    "an endpoint team has no communicator (its members are threads)");
        return MPI_ERR_ARG;
    }
    *comm = team->comm;
    return MPI_SUCCESS;
}
