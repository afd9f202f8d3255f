/* Endpoint teams: teams whose members are threads, each with its own
 * endpoint, split by the machine's hierarchy like rank teams.
 *
 * Joining protocol.  Every call that makes endpoint teams (weft_team_join
 * over a rank team, weft_team_split_topology over an endpoint team) is
 * collective over threads.  The threads of one rank meet at a join object
 * hung on the parent (under one process-wide lock): each records its
 * arguments and sleeps, except the last to arrive, which runs the rank's
 * part -- checks, the MPI collectives over the ranks, the new shared
 * states -- and wakes the others with their results.  A join is complete
 * when as many threads have arrived as the smallest thread count any of
 * them gave, so a wrong count is reported rather than waited on (unless
 * every thread overstates it: then, as when a thread never comes, the
 * threads that came give up after WEFT_TIMEOUT_MS, when set, with
 * WEFT_ERR_TIMEOUT, on their rank only).  The other statuses are agreed
 * on across the ranks, so every thread of every rank returns the same one.
 *
 * A split needs no exchange of paths: every rank holds every member's path
 * from the join, and computes the split with the code rank teams use
 * (weft__topo_common_depth, weft__topo_number_children).  What it needs
 * from MPI is the rank teams of the children (the ranks that hold their
 * members), which carry the step between ranks of their collectives: each
 * rank makes those of the children it has members in, one child after the
 * other in child order, over MPI_Comm_create_group -- collective over the
 * child's ranks only, in an order every rank shares, so no two ranks wait
 * on each other in opposite orders. */
#include "team.h"
#include "runtime/runtime.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ETYPE_MAX 24

/* A path as it travels between ranks (type names, not pointers). */
typedef struct {
    uint64_t id;
    int64_t  order;
    char     type[ETYPE_MAX];
} wire_elem_t;

typedef struct {
    int64_t     depth;
    wire_elem_t elem[WEFT__TOPO_MAX_DEPTH];
} wire_path_t;

typedef struct {
    int         thread, nthreads;
    weft_ep_t   ep;
    pthread_t   tid;
    weft_team_t *out, *roots;
    int         want_roots;
    weft_team_t res, res_roots;   /* what the last arrival hands back */
} arrival_t;

typedef struct {
    pthread_cond_t cond;
    int            expected, arrived, left, done;
    int            timed_out;   /* the wait ended: every arrival fails */
    arrival_t     *a;
    int            cap;
    weft_status_t  st;
    weft__msg_t    err;
} join_t;

static pthread_mutex_t joins_lock = PTHREAD_MUTEX_INITIALIZER;

/* Arrive at *slot; returns the join (NULL: no memory) and the arrival's
 * index; *last is set for the thread that completes it.  A thread that
 * waits longer than timeout_ms (0: no limit) for the others ends the join
 * for every thread that arrived (j->timed_out) and takes it off the
 * slot, so that a thread arriving later starts a join of its own. */
static join_t *arrive(void **slot, const arrival_t *me, int *index, int *last,
                      unsigned long timeout_ms, int *timed_out)
{
    struct timespec deadline;

    if (timeout_ms) {
        /* the condition variable waits on CLOCK_REALTIME, its default */
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += (time_t)(timeout_ms / 1000);
        deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000L;
        }
    }
    pthread_mutex_lock(&joins_lock);
    join_t *j = *slot;
    if (!j) {
        if (!(j = calloc(1, sizeof(*j)))) {
            pthread_mutex_unlock(&joins_lock);
            return NULL;
        }
        pthread_cond_init(&j->cond, NULL);
        j->expected = me->nthreads > 0 ? me->nthreads : 1;
        *slot = j;
    }
    if (j->arrived == j->cap) {
        int        cap = j->cap ? 2 * j->cap : 8;
        arrival_t *grown = realloc(j->a, (size_t)cap * sizeof(*grown));
        if (!grown) {
            pthread_mutex_unlock(&joins_lock);
            return NULL;
        }
        j->a = grown;
        j->cap = cap;
    }
    *index = j->arrived;
    j->a[j->arrived++] = *me;
    if (me->nthreads > 0 && me->nthreads < j->expected)
        j->expected = me->nthreads;
    if (me->nthreads <= 0)
        j->expected = 1;
    *last = j->arrived >= j->expected;
    if (*last)
        *slot = NULL;   /* the next join over this parent starts afresh */
    else
        while (!j->done) {
            /* Once the last thread has come, the wait is for the rank's
             * part, which waits for the other ranks in MPI: no limit. */
            if (!timeout_ms || j->arrived >= j->expected) {
                pthread_cond_wait(&j->cond, &joins_lock);
            } else if (pthread_cond_timedwait(&j->cond, &joins_lock, &deadline) == ETIMEDOUT &&
                       !j->done && j->arrived < j->expected) {
                j->timed_out = j->done = 1;
                if (*slot == j)
                    *slot = NULL;
                pthread_cond_broadcast(&j->cond);
            }
        }
    *timed_out = j->timed_out;
    pthread_mutex_unlock(&joins_lock);
    return j;
}

/* The last arrival hands the results over; every thread then leaves. */
static void finish(join_t *j)
{
    pthread_mutex_lock(&joins_lock);
    j->done = 1;
    pthread_cond_broadcast(&j->cond);
    pthread_mutex_unlock(&joins_lock);
}

static void leave(join_t *j)
{
    pthread_mutex_lock(&joins_lock);
    int gone = ++j->left == j->arrived;
    pthread_mutex_unlock(&joins_lock);
    if (gone) {
        pthread_cond_destroy(&j->cond);
        free(j->a);
        free(j);
    }
}

/* A join that ended without its last thread: this thread leaves it. */
static weft_status_t timed_out(join_t *j, const char *fn, unsigned long ms)
{
    pthread_mutex_lock(&joins_lock);
    int arrived = j->arrived, expected = j->expected;
    pthread_mutex_unlock(&joins_lock);

    leave(j);
    return weft__error(WEFT_ERR_TIMEOUT, fn,
                       "%d of the %d threads of this rank arrived within WEFT_TIMEOUT_MS=%lu ms",
                       arrived, expected, ms);
}

/* ---- shared states ----------------------------------------------------------- */

static weft__eshared_t *eshared_new(weft_ctx_t ctx, int n)
{
    weft__eshared_t *sh = calloc(1, sizeof(*sh));

    if (!sh)
        return NULL;
    sh->ctx = ctx;
    sh->n = n;
    sh->mctx = malloc(sizeof(int) * (size_t)(n ? n : 1));
    sh->mrk = malloc(sizeof(int) * (size_t)(n ? n : 1));
    sh->mthread = malloc(sizeof(int) * (size_t)(n ? n : 1));
    sh->path = malloc(sizeof(*sh->path) * (size_t)(n ? n : 1));
    pthread_mutex_init(&sh->lock, NULL);
    if (!sh->mctx || !sh->mrk || !sh->mthread || !sh->path) {
        free(sh->mctx), free(sh->mrk), free(sh->mthread), free(sh->path), free(sh);
        return NULL;
    }
    return sh;
}

static void eshared_free(weft__eshared_t *sh)
{
    if (!sh)
        return;
    if (sh->ranks)
        weft_team_free(&sh->ranks);
    pthread_mutex_destroy(&sh->lock);
    if (sh->coll)
        sh->coll_free(sh->coll);
    free(sh->mctx), free(sh->mrk), free(sh->mthread), free(sh->path);
    free(sh);
}

void weft__et_release(weft__eteam_t *et)
{
    pthread_mutex_lock(&et->sh->lock);
    int last = --et->sh->refs == 0;
    pthread_mutex_unlock(&et->sh->lock);
    if (last)
        eshared_free(et->sh);
    free(et);
}

/* A handle on sh for member m (sh->refs counts it). */
static weft_team_t handle_new(weft__eshared_t *sh, int m, weft_ep_t ep)
{
    weft__eteam_t *et = calloc(1, sizeof(*et));
    weft_team_t    t = et ? weft__team_new_endpoint(sh->ctx, et) : NULL;

    if (!t) {
        free(et);
        return NULL;
    }
    *et = (weft__eteam_t){.sh = sh, .member = m, .ep = ep};
    sh->refs++;
    return t;
}

/* ---- weft_team_join ------------------------------------------------------------ */

/* The rank's part of a join, by its last arrival: collective over parent. */
static weft_status_t join_rank(weft_team_t parent, join_t *j)
{
    MPI_Comm           comm = weft__team_comm(parent);
    weft__msg_t       *err = &j->err;
    int                n = j->arrived, rank, size, ok, all_ok;
    weft_status_t      st = WEFT_OK;
    pthread_t         *tid = calloc((size_t)n, sizeof(*tid));
    weft__topo_path_t *paths = calloc((size_t)n, sizeof(*paths));
    int               *counts = NULL, *displs = NULL;
    wire_path_t       *mine = NULL, *all = NULL;
    weft_team_t        ranks = WEFT_TEAM_NULL;
    weft__eshared_t   *sh = NULL;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (!tid || !paths)
        st = weft__fail(err, WEFT_ERR_NO_MEMORY, "out of memory for the threads' paths");
    for (int i = 0; st == WEFT_OK && i < n; i++) {
        const arrival_t *a = &j->a[i];
        if (a->nthreads != n)
            st = weft__fail(err, WEFT_ERR_INVALID_ARG,
                            "threads of rank %d gave different thread counts (%d and %d "
                            "threads arrived)", rank, a->nthreads, n);
        else if (a->thread < 0 || a->thread >= n)
            st = weft__fail(err, WEFT_ERR_INVALID_ARG, "thread index %d outside [0, %d)",
                            a->thread, n);
        else if (!a->ep)
            st = weft__fail(err, WEFT_ERR_INVALID_ARG, "thread %d gave a NULL endpoint",
                            a->thread);
        else if (!a->out)
            st = weft__fail(err, WEFT_ERR_INVALID_ARG, "thread %d gave a NULL team pointer",
                            a->thread);
        for (int k = 0; st == WEFT_OK && k < i; k++)
            if (j->a[k].thread == a->thread)
                st = weft__fail(err, WEFT_ERR_INVALID_ARG,
                                "thread index %d joined twice on rank %d", a->thread, rank);
        if (st == WEFT_OK)
            tid[a->thread] = a->tid;
    }
    st = weft__topo_thread_paths(comm, st, st == WEFT_OK ? n : 0, tid, paths, err);
    if (st != WEFT_OK)
        goto out;
    /* Every rank's thread count, then every member's path. */
    counts = malloc(sizeof(int) * (size_t)size);
    displs = malloc(sizeof(int) * (size_t)size);
    mine = calloc((size_t)n, sizeof(*mine));
    ok = counts && displs && mine;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (!all_ok) {
        st = weft__fail(err, WEFT_ERR_NO_MEMORY, "out of memory for the members%s",
                        ok ? " on another rank" : "");
        goto out;
    }
    MPI_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, comm);
    int total = 0;
    for (int r = 0; r < size; r++) {
        displs[r] = total * (int)sizeof(wire_path_t);
        total += counts[r];
        counts[r] *= (int)sizeof(wire_path_t);
    }
    for (int t = 0; t < n; t++) {
        mine[t].depth = paths[t].depth;
        for (int d = 0; d < paths[t].depth; d++) {
            mine[t].elem[d].id = paths[t].elem[d].id;
            mine[t].elem[d].order = paths[t].elem[d].order;
            snprintf(mine[t].elem[d].type, ETYPE_MAX, "%s", paths[t].elem[d].type);
        }
    }
    all = malloc(sizeof(*all) * (size_t)total);
    sh = eshared_new(weft__team_ctx(parent), total);
    ok = all && sh;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (!all_ok) {
        st = weft__fail(err, WEFT_ERR_NO_MEMORY, "out of memory for the members%s",
                        ok ? " on another rank" : "");
        goto out;
    }
    MPI_Allgatherv(mine, n * (int)sizeof(wire_path_t), MPI_BYTE, all, counts, displs, MPI_BYTE,
                   comm);
    if ((st = weft__team_dup(parent, &ranks, err)) != WEFT_OK)
        goto out;
    /* The step between ranks runs on the endpoint of the rank's leader
     * (its first member, thread 0), which is the thread that runs it. */
    for (int i = 0; i < n; i++)
        if (j->a[i].thread == 0)
            weft__team_ep_set(ranks, j->a[i].ep);
    /* Members in (rank, thread) order. */
    for (int r = 0, m = 0; r < size; r++) {
        int ctx_rank = r;
        weft_team_ctx_rank(parent, r, &ctx_rank);
        if (r == rank) {
            sh->first = m;
            sh->nlocal = n;
        }
        for (int t = 0; t < counts[r] / (int)sizeof(wire_path_t); t++, m++) {
            sh->mctx[m] = ctx_rank;
            sh->mrk[m] = r;
            sh->mthread[m] = t;
            sh->path[m].depth = (int)all[m].depth;
            for (int d = 0; d < sh->path[m].depth; d++)
                sh->path[m].elem[d] = (weft__topo_elem_t){
                    .id = all[m].elem[d].id, .order = all[m].elem[d].order,
                    .type = weft__topo_intern(all[m].elem[d].type)};
        }
    }
    sh->ranks = ranks;
    ranks = WEFT_TEAM_NULL;
    for (int i = 0; i < n; i++) {
        arrival_t *a = &j->a[i];
        a->res = handle_new(sh, sh->first + a->thread, a->ep);
        ok = ok && a->res;
    }
    /* A handle short of memory on one rank fails the join everywhere. */
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (!all_ok) {
        for (int i = 0; i < n; i++)
            if (j->a[i].res)
                weft_team_free(&j->a[i].res);   /* the last one frees sh */
        sh = NULL;
        st = weft__fail(err, WEFT_ERR_NO_MEMORY, "out of memory for the team%s",
                        ok ? " on another rank" : "");
    }
    sh = NULL;
out:
    if (ranks)
        weft_team_free(&ranks);
    eshared_free(sh);
    free(tid), free(paths), free(counts), free(displs), free(mine), free(all);
    return st;
}

weft_status_t weft_team_join(weft_team_t ranks, int thread, int nthreads, weft_ep_t ep,
                             weft_team_t *team)
{
    weft_status_t st;
    int           idx, last, late;

    if (!ranks || weft_team_nranks(ranks, &idx) != WEFT_OK)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "not a team (NULL or freed)");
    if (weft__team_et(ranks))
        return weft__error(WEFT_ERR_INVALID_ARG, __func__,
                           "the parent is an endpoint team: join over a team of ranks "
                           "(split an endpoint team with weft_team_split_topology)");
    if (team)
        *team = WEFT_TEAM_NULL;
    arrival_t me = {.thread = thread, .nthreads = nthreads, .ep = ep, .tid = pthread_self(),
                    .out = team};
    unsigned long ms = weft__team_ctx(ranks)->cfg.timeout_ms;
    join_t *j = arrive(weft__team_join_slot(ranks), &me, &idx, &last, ms, &late);
    if (!j)
        return weft__error(WEFT_ERR_NO_MEMORY, __func__, "out of memory for the join");
    if (late)
        return timed_out(j, __func__, ms);
    if (last) {
        j->st = join_rank(ranks, j);
        finish(j);
    }
    st = j->st;
    if (st == WEFT_OK)
        *team = j->a[idx].res;
    weft__msg_t err = j->err;
    leave(j);
    return st == WEFT_OK ? st : weft__error(st, __func__, "%s", err.msg);
}

weft_status_t weft_team_member(weft_team_t team, int member, int *ctx_rank, int *thread)
{
    weft__eteam_t *et = weft__team_et(team);
    int            n;

    if (!team || weft_team_nranks(team, &n) != WEFT_OK)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "not a team (NULL or freed)");
    if (member < 0 || member >= n)
        return weft__error(WEFT_ERR_RANK, __func__, "member %d outside [0, %d)", member, n);
    if (!et) {
        if (thread)
            *thread = 0;
        return ctx_rank ? weft_team_ctx_rank(team, member, ctx_rank) : WEFT_OK;
    }
    if (ctx_rank)
        *ctx_rank = et->sh->mctx[member];
    if (thread)
        *thread = et->sh->mthread[member];
    return WEFT_OK;
}

weft_status_t weft_team_ep(weft_team_t team, weft_ep_t *ep)
{
    weft__eteam_t *et = weft__team_et(team);
    int            n;

    if (!team || weft_team_nranks(team, &n) != WEFT_OK)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "not a team (NULL or freed)");
    if (!ep)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "ep is NULL");
    if (!et)
        return weft_ep_default(weft__team_ctx(team), ep);
    *ep = et->ep;
    return WEFT_OK;
}

/* ---- the split ------------------------------------------------------------------ */

/* A child (or the roots) of sh: the members listed, in sh's order. */
static weft__eshared_t *child_new(weft__eshared_t *sh, const int *list, int n, int *rank_list,
                                  int *nr)
{
    weft__eshared_t *c = eshared_new(sh->ctx, n);

    if (!c)
        return NULL;
    *nr = 0;
    c->first = -1;
    for (int i = 0; i < n; i++) {
        int m = list[i];
        if (*nr == 0 || rank_list[*nr - 1] != sh->mrk[m])
            rank_list[(*nr)++] = sh->mrk[m];
        c->mctx[i] = sh->mctx[m];
        c->mrk[i] = *nr - 1;
        c->mthread[i] = sh->mthread[m];
        c->path[i] = sh->path[m];
        if (m >= sh->first && m < sh->first + sh->nlocal) {
            if (c->first < 0)
                c->first = i;
            c->nlocal++;
        }
    }
    return c;
}

/* The rank's part of a split, by its last arrival: collective over the
 * ranks of parent's children this rank is in. */
static weft_status_t split_rank(weft__eshared_t *sh, join_t *j)
{
    weft__msg_t       *err = &j->err;
    int                n = sh->n, k, num = 0, ok = 1, all_ok = 1;
    weft_status_t      st = WEFT_OK;
    const weft__topo_path_t **pp = malloc(sizeof(*pp) * (size_t)n);
    uint64_t          *id = malloc(sizeof(*id) * (size_t)n);
    int64_t           *order = malloc(sizeof(*order) * (size_t)n);
    weft__topo_kid_t  *kids = malloc(sizeof(*kids) * (size_t)n);
    int               *color = malloc(sizeof(int) * (size_t)n);
    int               *list = malloc(sizeof(int) * (size_t)n);
    int               *rank_list = malloc(sizeof(int) * (size_t)n);
    weft__eshared_t  **child = calloc((size_t)n + 1, sizeof(*child));
    weft__eshared_t   *roots = NULL;

    if (!pp || !id || !order || !kids || !color || !list || !rank_list || !child)
        st = weft__fail(err, WEFT_ERR_NO_MEMORY, "out of memory for the split");
    for (int i = 0; st == WEFT_OK && i < j->arrived; i++) {
        const arrival_t *a = &j->a[i];
        if (a->nthreads != sh->nlocal || a->thread < 0 || a->thread >= sh->nlocal)
            st = weft__fail(err, WEFT_ERR_INVALID_ARG, "a member joined this split twice");
        else if (!a->out)
            st = weft__fail(err, WEFT_ERR_INVALID_ARG, "child is NULL (member %d)",
                            sh->first + a->thread);
        for (int q = 0; st == WEFT_OK && q < i; q++)
            if (j->a[q].thread == a->thread)
                st = weft__fail(err, WEFT_ERR_INVALID_ARG,
                                "member %d joined this split twice", sh->first + a->thread);
    }
    /* Every rank takes the same path from here on. */
    ok = st == WEFT_OK;
    if (sh->ranks)
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, weft__team_comm(sh->ranks));
    if (!all_ok) {
        if (ok)
            st = weft__fail(err, WEFT_ERR_INVALID_ARG, "the split failed on another rank");
        goto out;
    }
    for (int m = 0; m < n; m++)
        pp[m] = &sh->path[m];
    k = weft__topo_common_depth(n, pp);
    for (int m = 0; m < n; m++) {
        id[m] = sh->path[m].depth > k ? sh->path[m].elem[k].id : 0;
        order[m] = sh->path[m].depth > k ? sh->path[m].elem[k].order : 0;
    }
    weft__topo_number_children(n, id, order, kids, &num);
    for (int m = 0; m < n; m++) {
        color[m] = -1;
        for (int c = 0; id[m] && c < num; c++)
            if (kids[c].id == id[m])
                color[m] = c;
    }
    /* The children this rank is in, in child order, then the roots. */
    for (int c = 0; c <= num && st == WEFT_OK; c++) {
        int cnt = 0, local = 0, nr = 0;
        for (int m = 0; m < n; m++) {
            int in = c < num ? color[m] == c : (color[m] >= 0 && kids[color[m]].first == m);
            if (in) {
                list[cnt++] = m;
                local |= m >= sh->first && m < sh->first + sh->nlocal;
            }
        }
        if (!local || cnt == 0)
            continue;
        weft__eshared_t *e = child_new(sh, list, cnt, rank_list, &nr);
        if (!e) {
            /* Not agreed on: the other ranks of this child may wait in its
             * creation (a few hundred bytes short; accepted). */
            st = weft__fail(err, WEFT_ERR_NO_MEMORY, "out of memory for a child team");
            break;
        }
        if (c < num) {
            e->has_level = 1;
            e->level = (weft__topo_level_t){.num_comms = num, .index = c,
                                            .type = sh->path[list[0]].elem[k].type};
        }
        if (nr > 1) {
            weft_status_t s2 = weft__team_subset(sh->ranks, rank_list, nr, c, &e->ranks, err);
            if (s2 != WEFT_OK)
                st = s2;
            /* on the endpoint of the child's leader on this rank */
            for (int i = 0; e->ranks && i < j->arrived; i++)
                if (j->a[i].thread == list[e->first] - sh->first)
                    weft__team_ep_set(e->ranks, j->a[i].ep);
        }
        if (c < num)
            child[c] = e;
        else
            roots = e;
    }
out:
    if (st == WEFT_OK) {
        for (int i = 0; i < j->arrived; i++) {
            arrival_t *a = &j->a[i];
            int        m = sh->first + a->thread, c = color[m];
            weft__eshared_t *e = c >= 0 ? child[c] : NULL;
            int pos = 0;   /* the member's position in its child */
            for (int q = 0; q < m; q++)
                pos += c >= 0 && color[q] == c;
            a->res = e ? handle_new(e, pos, a->ep) : NULL;
            if (e && !a->res)   /* this rank only: the others' teams stand */
                j->st = weft__fail(err, WEFT_ERR_NO_MEMORY, "out of memory for a team handle");
            a->res_roots = NULL;
            if (a->want_roots && roots && c >= 0 && kids[c].first == m) {
                pos = 0;
                for (int q = 0; q < m; q++)
                    pos += color[q] >= 0 && kids[color[q]].first == q;
                a->res_roots = handle_new(roots, pos, a->ep);
            }
        }
    }
    /* States no handle took (or all of them, on error) go now. */
    for (int c = 0; child && c < num; c++)
        if (child[c] && child[c]->refs == 0)
            eshared_free(child[c]);
    if (roots && roots->refs == 0)
        eshared_free(roots);
    free(pp), free(id), free(order), free(kids), free(color), free(list), free(rank_list);
    free(child);
    return st;
}

weft_status_t weft__et_split(weft_team_t parent, weft_team_t *child, weft_team_t *roots)
{
    weft__eteam_t *et = weft__team_et(parent);
    int            idx, last, late;

    if (child)
        *child = WEFT_TEAM_NULL;
    if (roots)
        *roots = WEFT_TEAM_NULL;
    arrival_t me = {.thread = et->member - et->sh->first, .nthreads = et->sh->nlocal,
                    .ep = et->ep, .out = child, .want_roots = roots != NULL};
    unsigned long ms = et->sh->ctx->cfg.timeout_ms;
    join_t *j = arrive(&et->sh->join, &me, &idx, &last, ms, &late);
    if (!j)
        return weft__error(WEFT_ERR_NO_MEMORY, "weft_team_split_topology",
                           "out of memory for the join");
    if (late)
        return timed_out(j, "weft_team_split_topology", ms);
    if (last) {
        weft_status_t st = split_rank(et->sh, j);
        if (st != WEFT_OK)
            j->st = st;
        finish(j);
    }
    weft_status_t st = j->st;
    if (st == WEFT_OK) {
        *child = j->a[idx].res;
        if (roots)
            *roots = j->a[idx].res_roots;
    } else {
        /* a handle short of memory on this rank: the others are let go */
        if (j->a[idx].res)
            weft_team_free(&j->a[idx].res);
        if (j->a[idx].res_roots)
            weft_team_free(&j->a[idx].res_roots);
    }
    weft__msg_t err = j->err;
    leave(j);
    return st == WEFT_OK ? st : weft__error(st, "weft_team_split_topology", "%s", err.msg);
}
