/* Endpoint teams: threads of every rank join a team, which is split level
 * by level down to the bottom.  Every member checks its team at every
 * level (members, level name, index and count) against the expected
 * hierarchy given on the command line, the roots team of the first split,
 * and the results of every collective (bcast, reduce and gather from every
 * root, allreduce, barrier; every type and operation) against flat
 * references computed here over the expected members; then bad input
 * (joining twice, different thread counts, NULL arguments, a malformed
 * WEFT_TOPO_THREAD_BIND, bad collective arguments).  Threads of different
 * teams of a level run their teams' collectives at the same time.
 *
 * Usage: test_eteam 2 timeout         (threads that stay away from a join,
 *                                      a collective and a split get
 *                                      WEFT_ERR_TIMEOUT; WEFT_TIMEOUT_MS set)
 *        test_eteam NTHREADS pinned   (this machine: thread t bound to CPU
 *                                      t mod 2, the walk must end in the team
 *                                      of the threads on that CPU)
 *        test_eteam NTHREADS LINE...  where a LINE is
 * "depth:Type:index/num:r.t,r.t,..." for every team of the walk (depth 1
 * is the first split); a member in no line at a depth gets WEFT_TEAM_NULL
 * there. */
#define _GNU_SOURCE
#include <weft.h>
#include <sched.h>
#include <unistd.h>
#include <mpi.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

static int         nthreads, me_rank, nlines, pinned, ncpu;
static char      **lines;
static weft_team_t world;
static weft_ep_pool_t pool;
static pthread_mutex_t check_lock = PTHREAD_MUTEX_INITIALIZER;

#define TCHECK(cond, ...)                                                                  \
    do {                                                                                   \
        int ok_ = (cond);                                                                  \
        pthread_mutex_lock(&check_lock);                                                   \
        CHECK(ok_, __VA_ARGS__);                                                           \
        pthread_mutex_unlock(&check_lock);                                                 \
    } while (0)

/* The expected line holding member r.t at depth d, or NULL. */
static const char *line_of(int d, int r, int t)
{
    char who[32];
    snprintf(who, sizeof(who), "%d.%d", r, t);
    for (int i = 0; i < nlines; i++) {
        if (atoi(lines[i]) != d)
            continue;
        const char *list = strrchr(lines[i], ':') + 1;
        char        copy[512];
        snprintf(copy, sizeof(copy), "%s", list);
        for (char *s, *tok = strtok_r(copy, ",", &s); tok; tok = strtok_r(NULL, ",", &s))
            if (strcmp(tok, who) == 0)
                return lines[i];
    }
    return NULL;
}

/* The team's description in the lines' format. */
static void describe(weft_team_t team, int d, char *out, size_t cap)
{
    int         num = -1, index = -1, n = 0;
    const char *type = "?";
    size_t      len;

    weft_team_level_info(team, &num, &index, &type);
    weft_team_nranks(team, &n);
    len = (size_t)snprintf(out, cap, "%d:%s:%d/%d:", d, type, index, num);
    for (int m = 0; m < n && len < cap; m++) {
        int r = -1, t = -1;
        weft_team_member(team, m, &r, &t);
        len += (size_t)snprintf(out + len, cap - len, "%s%d.%d", m ? "," : "", r, t);
    }
}

static int64_t value(int r, int t, int i) { return 1000 * r + 10 * t + i + 1; }

/* Allreduce over team (members as described) against the serial sum. */
static void check_allreduce(weft_team_t team, int r, int t, const char *what)
{
    enum { BIG = 20000 };   /* over a ranks' team chunk, so it is pipelined */
    int      n = 0, sizes[] = {1, 7, BIG};
    int64_t *src = malloc(BIG * sizeof(int64_t)), *dst = malloc(BIG * sizeof(int64_t));
    double   ds, dd;

    weft_team_nranks(team, &n);
    for (int round = 0; round < 20; round++) {
        int count = sizes[round % 3];
        for (int i = 0; i < count; i++)
            src[i] = value(r, t, i) + round;
        TCHECK(weft_team_allreduce(team, src, dst, (size_t)count, WEFT_TYPE_INT64, WEFT_OP_SUM) ==
                   WEFT_OK, "%s: allreduce: %s", what, weft_last_error());
        for (int i = 0; i < count; i++) {
            int64_t want = 0;
            for (int m = 0; m < n; m++) {
                int mr, mt;
                weft_team_member(team, m, &mr, &mt);
                want += value(mr, mt, i) + round;
            }
            if (dst[i] != want) {
                TCHECK(0, "%s: round %d element %d: %lld, want %lld", what, round, i,
                       (long long)dst[i], (long long)want);
                break;
            }
        }
        TCHECK(weft_team_barrier(team) == WEFT_OK, "%s: barrier: %s", what, weft_last_error());
    }
    /* In place, and a maximum of doubles */
    ds = r * 0.5 + t;
    TCHECK(weft_team_allreduce(team, &ds, &ds, 1, WEFT_TYPE_DOUBLE, WEFT_OP_MAX) == WEFT_OK,
           "%s: allreduce in place: %s", what, weft_last_error());
    dd = -1;
    for (int m = 0; m < n; m++) {
        int mr, mt;
        weft_team_member(team, m, &mr, &mt);
        dd = mr * 0.5 + mt > dd ? mr * 0.5 + mt : dd;
    }
    TCHECK(ds == dd, "%s: max %g, want %g", what, ds, dd);
    free(src);
    free(dst);
}

/* ---- rooted collectives, every type and operation ------------------------ */

static void put_elem(weft_type_t ty, void *b, size_t i, int64_t v)
{
    switch (ty) {
    case WEFT_TYPE_BYTE: ((unsigned char *)b)[i] = (unsigned char)v; break;
    case WEFT_TYPE_INT32: ((int32_t *)b)[i] = (int32_t)v; break;
    case WEFT_TYPE_INT64: ((int64_t *)b)[i] = v; break;
    case WEFT_TYPE_UINT32: ((uint32_t *)b)[i] = (uint32_t)v; break;
    case WEFT_TYPE_UINT64: ((uint64_t *)b)[i] = (uint64_t)v; break;
    case WEFT_TYPE_FLOAT: ((float *)b)[i] = (float)v; break;
    case WEFT_TYPE_DOUBLE: ((double *)b)[i] = (double)v; break;
    }
}

static int64_t get_elem(weft_type_t ty, const void *b, size_t i)
{
    switch (ty) {
    case WEFT_TYPE_BYTE: return ((const unsigned char *)b)[i];
    case WEFT_TYPE_INT32: return ((const int32_t *)b)[i];
    case WEFT_TYPE_INT64: return ((const int64_t *)b)[i];
    case WEFT_TYPE_UINT32: return ((const uint32_t *)b)[i];
    case WEFT_TYPE_UINT64: return (int64_t)((const uint64_t *)b)[i];
    case WEFT_TYPE_FLOAT: return (int64_t)((const float *)b)[i];
    case WEFT_TYPE_DOUBLE: return (int64_t)((const double *)b)[i];
    }
    return -1;
}

/* Member (r, t)'s element i: 1 or 2, so that every reduction (products
 * of up to 16 members included) is exact in every type. */
static int64_t small(int r, int t, int i, int salt) { return 1 + ((r * 3 + t + i + salt) % 2); }

/* The flat reference: op over every member of team, in member order. */
static int64_t reference(weft_team_t team, weft_op_t op, int i, int salt)
{
    int     n = 0;
    int64_t acc = 0;

    weft_team_nranks(team, &n);
    for (int m = 0; m < n; m++) {
        int     mr, mt;
        weft_team_member(team, m, &mr, &mt);
        int64_t v = small(mr, mt, i, salt);
        if (m == 0) {
            acc = v;
            continue;
        }
        switch (op) {
        case WEFT_OP_SUM: acc += v; break;
        case WEFT_OP_PROD: acc *= v; break;
        case WEFT_OP_MIN: acc = v < acc ? v : acc; break;
        case WEFT_OP_MAX: acc = v > acc ? v : acc; break;
        case WEFT_OP_BAND: acc &= v; break;
        case WEFT_OP_BOR: acc |= v; break;
        case WEFT_OP_BXOR: acc ^= v; break;
        }
    }
    return acc;
}

/* bcast and gather from every root, reduce to every root, at sizes from
 * one element to more than a ranks' team chunk; reduce and allreduce over
 * every type and operation; results against the flat references. */
static void check_rooted(weft_team_t team, int r, int t, const char *what)
{
    enum { BIG = 20000 };
    int      n = 0, me = -1, sizes[] = {1, 7, BIG};
    int64_t *buf = malloc(BIG * sizeof(int64_t)), *dst = malloc(BIG * sizeof(int64_t));
    int32_t *all;

    weft_team_nranks(team, &n);
    weft_team_rank(team, &me);
    all = malloc(sizeof(int32_t) * 7 * (size_t)n);
    for (int root = 0; root < n; root++)
        for (int k = 0; k < 3; k++) {
            int count = sizes[k];
            if (count == BIG && root != 0 && root != n - 1)
                continue;   /* pipelined sizes from two roots: enough, and quick */
            int     rr, rt;
            weft_team_member(team, root, &rr, &rt);
            for (int i = 0; i < count; i++)
                buf[i] = me == root ? value(rr, rt, i) + root : -1;
            TCHECK(weft_team_bcast(team, buf, (size_t)count, WEFT_TYPE_INT64, root) == WEFT_OK,
                   "%s: bcast from %d: %s", what, root, weft_last_error());
            for (int i = 0; i < count; i++)
                if (buf[i] != value(rr, rt, i) + root) {
                    TCHECK(0, "%s: bcast from %d, %d elements: [%d] = %lld, want %lld", what,
                           root, count, i, (long long)buf[i],
                           (long long)(value(rr, rt, i) + root));
                    break;
                }
            for (int i = 0; i < count; i++) {
                buf[i] = value(r, t, i) - root;
                dst[i] = -7;
            }
            TCHECK(weft_team_reduce(team, buf, dst, (size_t)count, WEFT_TYPE_INT64, WEFT_OP_SUM,
                                    root) == WEFT_OK,
                   "%s: reduce to %d: %s", what, root, weft_last_error());
            for (int i = 0; i < count; i++) {
                int64_t want = -7;
                if (me == root) {
                    want = 0;
                    for (int m = 0; m < n; m++) {
                        int mr, mt;
                        weft_team_member(team, m, &mr, &mt);
                        want += value(mr, mt, i) - root;
                    }
                }
                if (dst[i] != want) {
                    TCHECK(0, "%s: reduce to %d, %d elements: [%d] = %lld, want %lld", what,
                           root, count, i, (long long)dst[i], (long long)want);
                    break;
                }
            }
        }
    /* Gather: 7 elements of every member, on every root in turn. */
    for (int root = 0; root < n; root++) {
        int32_t mine[7];
        for (int i = 0; i < 7; i++)
            mine[i] = (int32_t)value(r, t, i);
        for (int i = 0; i < 7 * n; i++)
            all[i] = -1;
        TCHECK(weft_team_gather(team, mine, me == root ? all : NULL, 7, WEFT_TYPE_INT32, root) ==
                   WEFT_OK, "%s: gather to %d: %s", what, root, weft_last_error());
        for (int m = 0; me == root && m < n; m++) {
            int mr, mt;
            weft_team_member(team, m, &mr, &mt);
            for (int i = 0; i < 7; i++)
                if (all[m * 7 + i] != (int32_t)value(mr, mt, i)) {
                    TCHECK(0, "%s: gather to %d: member %d element %d: %d, want %lld", what,
                           root, m, i, all[m * 7 + i], (long long)value(mr, mt, i));
                    m = n;
                    break;
                }
        }
    }
    /* Every type and operation the rank teams take, reduce (in place on
     * the root) and allreduce. */
    int salt = 0;
    for (weft_type_t ty = WEFT_TYPE_INT32; ty <= WEFT_TYPE_DOUBLE; ty++)
        for (weft_op_t op = WEFT_OP_SUM; op <= WEFT_OP_BXOR; op++, salt++) {
            if (op >= WEFT_OP_BAND && (ty == WEFT_TYPE_FLOAT || ty == WEFT_TYPE_DOUBLE))
                continue;
            int  root = salt % n;
            char in[5 * 8], out[5 * 8];
            for (int i = 0; i < 5; i++) {
                put_elem(ty, in, (size_t)i, small(r, t, i, salt));
                put_elem(ty, out, (size_t)i, 99);
            }
            TCHECK(weft_team_allreduce(team, in, out, 5, ty, op) == WEFT_OK,
                   "%s: allreduce type %d op %d: %s", what, (int)ty, (int)op, weft_last_error());
            TCHECK(weft_team_reduce(team, in, me == root ? in : NULL, 5, ty, op, root) ==
                       WEFT_OK, "%s: reduce type %d op %d: %s", what, (int)ty, (int)op,
                   weft_last_error());
            for (int i = 0; i < 5; i++) {
                int64_t want = reference(team, op, i, salt);
                TCHECK(get_elem(ty, out, (size_t)i) == want,
                       "%s: allreduce type %d op %d [%d] = %lld, want %lld", what, (int)ty,
                       (int)op, i, (long long)get_elem(ty, out, (size_t)i), (long long)want);
                if (me == root)
                    TCHECK(get_elem(ty, in, (size_t)i) == want,
                           "%s: reduce type %d op %d [%d] = %lld, want %lld", what, (int)ty,
                           (int)op, i, (long long)get_elem(ty, in, (size_t)i), (long long)want);
            }
        }
    /* Bytes from the last member, in place. */
    unsigned char bytes[3] = {0, 0, 0};
    if (me == n - 1)
        memcpy(bytes, "abc", 3);
    TCHECK(weft_team_bcast(team, bytes, 3, WEFT_TYPE_BYTE, n - 1) == WEFT_OK && !memcmp(bytes, "abc", 3),
           "%s: bcast of bytes: %s", what, weft_last_error());
    free(buf);
    free(dst);
    free(all);
}

/* Bad arguments of the endpoint-team collectives: each member is told so
 * on its own, without waiting for the others. */
static void check_bad_args(weft_team_t team, const char *what)
{
    int     n = 0;
    int64_t x = 0;
    float   f = 0;

    weft_team_nranks(team, &n);
    TCHECK(weft_team_bcast(team, &x, 1, WEFT_TYPE_INT64, n) == WEFT_ERR_RANK,
           "%s: bcast root %d", what, n);
    TCHECK(weft_team_reduce(team, &x, &x, 1, WEFT_TYPE_INT64, WEFT_OP_SUM, -1) == WEFT_ERR_RANK,
           "%s: reduce root -1", what);
    TCHECK(weft_team_gather(team, &x, &x, 1, WEFT_TYPE_INT64, n) == WEFT_ERR_RANK &&
               strstr(weft_last_error(), "root"), "%s: gather root %d: %s", what, n,
           weft_last_error());
    TCHECK(weft_team_bcast(team, NULL, 1, WEFT_TYPE_INT64, 0) == WEFT_ERR_INVALID_ARG,
           "%s: bcast of NULL", what);
    int me = -1;
    weft_team_rank(team, &me);
    TCHECK(weft_team_reduce(team, &x, NULL, 1, WEFT_TYPE_INT64, WEFT_OP_SUM, me) ==
               WEFT_ERR_INVALID_ARG && strstr(weft_last_error(), "dst is NULL"),
           "%s: reduce to a NULL dst on the root: %s", what, weft_last_error());
    TCHECK(weft_team_gather(team, NULL, &x, 1, WEFT_TYPE_INT64, 0) == WEFT_ERR_INVALID_ARG,
           "%s: gather of NULL", what);
    /* Members of a rank times count over what the ranks' team takes (the
     * joined teams have 2 or more threads a rank). */
    TCHECK(weft_team_gather(team, &x, &x, (size_t)INT32_MAX / 2 + 1, WEFT_TYPE_INT64, 0) ==
               WEFT_ERR_TOO_LARGE && strstr(weft_last_error(), "members of a rank"),
           "%s: gather of 2^30 elements from 2 members a rank: %s", what, weft_last_error());
    TCHECK(weft_team_allreduce(team, &x, &x, (size_t)INT32_MAX + 1, WEFT_TYPE_INT64,
                               WEFT_OP_SUM) == WEFT_ERR_TOO_LARGE, "%s: count over INT32_MAX",
           what);
    TCHECK(weft_team_reduce(team, &f, &f, 1, WEFT_TYPE_FLOAT, WEFT_OP_BXOR, 0) ==
               WEFT_ERR_INVALID_ARG && strstr(weft_last_error(), "bitwise"),
           "%s: bitwise reduce of floats: %s", what, weft_last_error());
    TCHECK(weft_team_reduce(team, &x, &x, 1, WEFT_TYPE_BYTE, WEFT_OP_SUM, 0) ==
               WEFT_ERR_INVALID_ARG, "%s: reduce of bytes", what);
    TCHECK(weft_team_bcast(team, &x, 1, (weft_type_t)42, 0) == WEFT_ERR_INVALID_ARG &&
               strstr(weft_last_error(), "datatype"), "%s: unknown type: %s", what,
           weft_last_error());
    TCHECK(weft_team_allreduce(team, &x, &x, 1, WEFT_TYPE_INT64, (weft_op_t)42) ==
               WEFT_ERR_INVALID_ARG, "%s: unknown op", what);
}

static void *walk(void *arg)
{
    int         t = (int)(intptr_t)arg, d = 0;
    weft_ep_t   ep;
    weft_team_t team, child, roots;
    char        got[512];

    TCHECK(weft_ep_get(pool, t, &ep) == WEFT_OK, "weft_ep_get: %s", weft_last_error());
    if (pinned) {
        /* This machine, bindings from the OS: thread t on CPU t mod ncpu,
         * on every rank, whatever the launcher bound the rank to. */
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(t % ncpu, &set);
        TCHECK(pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0, "pinning");
    }
    TCHECK(weft_team_join(world, t, nthreads, ep, &team) == WEFT_OK, "join: %s",
           weft_last_error());
    int n = 0, size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    weft_team_nranks(team, &n);
    TCHECK(n == size * nthreads, "joined team has %d members, want %d", n, size * nthreads);
    int pos = -1;
    weft_team_rank(team, &pos);
    TCHECK(pos == me_rank * nthreads + t, "member %d, want %d", pos, me_rank * nthreads + t);
    weft_ep_t back = NULL;
    weft_team_ep(team, &back);
    TCHECK(back == ep, "weft_team_ep gives another endpoint");
    check_bad_args(team, "joined");
    check_allreduce(team, me_rank, t, "joined");
    check_rooted(team, me_rank, t, "joined");
    while (team != WEFT_TEAM_NULL) {
        d++;
        TCHECK(weft_team_split_topology(team, &child, d == 1 ? &roots : NULL) == WEFT_OK,
               "depth %d: split: %s", d, weft_last_error());
        const char *want = line_of(d, me_rank, t);
        if (pinned) {
            /* The walk ends in the team of the threads on the caller's
             * CPU, all of them, on every rank: the only members whose
             * paths are the same. */
            if (!child) {
                int n = 0, size, same = 0;
                MPI_Comm_size(MPI_COMM_WORLD, &size);
                weft_team_nranks(team, &n);
                for (int m = 0; m < n; m++) {
                    int mr, mt;
                    weft_team_member(team, m, &mr, &mt);
                    same += mt % ncpu == t % ncpu;
                }
                int want_n = 0;
                for (int q = 0; q < nthreads; q++)
                    want_n += q % ncpu == t % ncpu;
                TCHECK(same == n && n == want_n * size,
                       "%d.%d: deepest team (depth %d) has %d members, %d on its CPU; want "
                       "the %d threads of every rank on CPU %d", me_rank, t, d - 1, n, same,
                       want_n * size, t % ncpu);
            }
        } else if (!child) {
            TCHECK(!want, "%d.%d at depth %d: no team, want %s", me_rank, t, d, want);
        } else {
            describe(child, d, got, sizeof(got));
            TCHECK(want && strcmp(got, want) == 0, "%d.%d at depth %d: %s, want %s", me_rank, t,
                   d, got, want ? want : "no team");
            snprintf(got, sizeof(got), "depth %d", d);
            check_allreduce(child, me_rank, t, got);
            check_rooted(child, me_rank, t, got);
        }
        if (d == 1 && !pinned) {
            /* The roots: the first member of every depth-1 team, in order. */
            int is_root = 0;
            if (want) {
                char first[32];
                int  len = snprintf(first, sizeof(first), "%d.%d", me_rank, t);
                const char *list = strrchr(want, ':') + 1;
                is_root = strncmp(list, first, (size_t)len) == 0 &&
                          (list[len] == ',' || list[len] == 0);
            }
            TCHECK((roots != NULL) == is_root, "%d.%d: roots %s, want %s", me_rank, t,
                   roots ? "set" : "null", is_root ? "set" : "null");
            if (roots) {
                int num, index;
                const char *type;
                TCHECK(weft_team_level_info(roots, &num, &index, &type) == WEFT_ERR_INVALID_ARG,
                       "a roots team is no level");
                check_allreduce(roots, me_rank, t, "roots");
                check_rooted(roots, me_rank, t, "roots");
                weft_team_free(&roots);
            }
        }
        weft_team_free(&team);
        team = child;
    }
    return NULL;
}

/* ---- bad input ----------------------------------------------------------- */

typedef struct {
    int          thread, nthreads, null_ep, null_team;
    weft_status_t st;
    char         msg[256];
} bad_t;

static void *bad_join(void *arg)
{
    bad_t      *b = arg;
    weft_ep_t   ep;
    weft_team_t team = WEFT_TEAM_NULL;

    weft_ep_get(pool, b->thread < 0 ? 0 : b->thread % nthreads, &ep);
    b->st = weft_team_join(world, b->thread, b->nthreads, b->null_ep ? NULL : ep,
                           b->null_team ? NULL : &team);
    snprintf(b->msg, sizeof(b->msg), "%s", weft_last_error());
    if (team)
        weft_team_free(&team);
    return NULL;
}

/* A split of an endpoint team with bad arguments: thread 1 gives a NULL
 * child, or splits through thread 0's handle (a member joining twice). */
typedef struct {
    int          t, mode;
    weft_team_t *teams;
    weft_status_t st;
    char         msg[256];
} bad_split_t;

static pthread_barrier_t two;

static void *bad_split(void *arg)
{
    bad_split_t *b = arg;
    weft_ep_t    ep;
    weft_team_t  child = WEFT_TEAM_NULL;

    weft_ep_get(pool, b->t, &ep);
    TCHECK(weft_team_join(world, b->t, 2, ep, &b->teams[b->t]) == WEFT_OK, "join: %s",
           weft_last_error());
    pthread_barrier_wait(&two);
    weft_team_t use = b->mode == 1 && b->t == 1 ? b->teams[0] : b->teams[b->t];
    b->st = weft_team_split_topology(use, b->mode == 0 && b->t == 1 ? NULL : &child, NULL);
    snprintf(b->msg, sizeof(b->msg), "%s", weft_last_error());
    if (child)
        weft_team_free(&child);
    pthread_barrier_wait(&two);
    weft_team_free(&b->teams[b->t]);
    return NULL;
}

static void bad_split_case(const char *what, int mode, const char *frag)
{
    pthread_t   th[2];
    weft_team_t teams[2] = {0};
    bad_split_t b[2] = {{.t = 0, .mode = mode, .teams = teams},
                        {.t = 1, .mode = mode, .teams = teams}};
    int         named = 0, all_named = 0;

    pthread_barrier_init(&two, NULL, 2);
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, bad_split, &b[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&two);
    for (int i = 0; i < 2; i++) {
        CHECK(b[i].st == WEFT_ERR_INVALID_ARG, "%s: thread %d got %d (%s)", what, i,
              (int)b[i].st, b[i].msg);
        named |= strstr(b[i].msg, frag) != NULL;
    }
    MPI_Allreduce(&named, &all_named, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(all_named, "%s: no message names '%s' (%s)", what, frag, b[0].msg);
}

/* Two threads join with the arguments given; both must fail with st and
 * a message naming frag (on the rank that saw the error). */
static void bad_case(const char *what, bad_t b0, bad_t b1, weft_status_t st, const char *frag)
{
    pthread_t th[2];
    bad_t     b[2] = {b0, b1};
    int       named = 0, all_named = 0;

    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, bad_join, &b[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 2; i++) {
        CHECK(b[i].st == st, "%s: thread %d got %d (%s), want %d", what, i, (int)b[i].st,
              b[i].msg, (int)st);
        named |= strstr(b[i].msg, frag) != NULL;
    }
    MPI_Allreduce(&named, &all_named, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(all_named, "%s: no message names '%s' (%s)", what, frag, b[0].msg);
}

static void bad_input(void)
{
    weft_team_t t = WEFT_TEAM_NULL;
    weft_ep_t   ep;

    /* The cases join 2 threads a rank: the scenario's thread list goes. */
    unsetenv("WEFT_TOPO_THREAD_BIND");
    weft_ep_get(pool, 0, &ep);
    CHECK(weft_team_join(NULL, 0, 1, ep, &t) == WEFT_ERR_INVALID_ARG && !t, "NULL parent");
    CHECK(weft_team_member(NULL, 0, NULL, NULL) == WEFT_ERR_INVALID_ARG, "member of NULL");
    CHECK(weft_team_ep(world, NULL) == WEFT_ERR_INVALID_ARG, "NULL ep");
    bad_case("joining twice", (bad_t){.thread = 0, .nthreads = 2},
             (bad_t){.thread = 0, .nthreads = 2}, WEFT_ERR_INVALID_ARG, "joined twice");
    bad_case("thread counts", (bad_t){.thread = 0, .nthreads = 2},
             (bad_t){.thread = 1, .nthreads = 3}, WEFT_ERR_INVALID_ARG, "thread counts");
    bad_case("index", (bad_t){.thread = 0, .nthreads = 2},
             (bad_t){.thread = 2, .nthreads = 2}, WEFT_ERR_INVALID_ARG, "outside");
    bad_case("NULL ep", (bad_t){.thread = 0, .nthreads = 2},
             (bad_t){.thread = 1, .nthreads = 2, .null_ep = 1}, WEFT_ERR_INVALID_ARG,
             "NULL endpoint");
    bad_case("NULL team", (bad_t){.thread = 0, .nthreads = 2},
             (bad_t){.thread = 1, .nthreads = 2, .null_team = 1}, WEFT_ERR_INVALID_ARG,
             "NULL team");
    bad_split_case("split, NULL child", 0, "child is NULL");
    bad_split_case("split, joined twice", 1, "twice");
    /* A list with a part for neither every rank nor one per rank. */
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char spec[256] = "core:0";
    for (int i = 0; i < size; i++)
        strcat(spec, ";core:0");
    setenv("WEFT_TOPO_THREAD_BIND", spec, 1);
    bad_case("thread bind", (bad_t){.thread = 0, .nthreads = 2},
             (bad_t){.thread = 1, .nthreads = 2}, WEFT_ERR_CONFIG, "WEFT_TOPO_THREAD_BIND");
}

/* ---- a thread that does not arrive (WEFT_TIMEOUT_MS set small) ------------ */

typedef struct {
    int           t, mode;
    weft_status_t st;
    char          msg[256];
} late_t;

/* In mode 4 the member, once its call returned, reuses its buffers and
 * waits here for the late leader's call to end before it checks them. */
static pthread_barrier_t late_bar;

/* mode 0: thread 1 does not join; 1: thread 1 skips a barrier; 2: thread 0
 * (the leader) skips an allreduce; 3: thread 1 skips a split; 4: thread 0
 * (the leader) comes to a reduce to thread 1 after thread 1 gave up
 * waiting for it, and must then leave thread 1's buffers alone.  The same
 * thread stays away on every rank, so no rank waits for another in MPI. */
static void late_reduce(late_t *x, weft_team_t team)
{
    /* Over 32 bytes, so the leader would read the source by pointer. */
    int64_t src[8], dst[8];
    for (int i = 0; i < 8; i++)
        src[i] = 1, dst[i] = -1;
    if (x->t == 0) {
        const char *ms = getenv("WEFT_TIMEOUT_MS");
        usleep((useconds_t)(ms ? atoi(ms) : 1000) * 1500);
    }
    x->st = weft_team_reduce(team, src, dst, 8, WEFT_TYPE_INT64, WEFT_OP_SUM, 1);
    snprintf(x->msg, sizeof(x->msg), "%s", weft_last_error());
    if (x->t == 1) {
        for (int i = 0; i < 8; i++)
            src[i] = 7, dst[i] = 7;
    }
    pthread_barrier_wait(&late_bar);
    if (x->t == 1) {
        int kept = 1;
        for (int i = 0; i < 8; i++)
            kept &= src[i] == 7 && dst[i] == 7;
        TCHECK(kept, "the late leader wrote into a buffer of a member whose call had returned");
    }
}

static void *late(void *arg)
{
    late_t     *x = arg;
    weft_ep_t   ep;
    weft_team_t team = WEFT_TEAM_NULL, child = WEFT_TEAM_NULL;
    int64_t     v = 1;

    weft_ep_get(pool, x->t, &ep);
    x->st = WEFT_OK;
    if (x->mode == 0) {
        if (x->t == 0)
            x->st = weft_team_join(world, 0, 2, ep, &team);
    } else {
        TCHECK(weft_team_join(world, x->t, 2, ep, &team) == WEFT_OK, "join: %s",
               weft_last_error());
        if (x->mode == 1 && x->t == 0)
            x->st = weft_team_barrier(team);
        else if (x->mode == 2 && x->t == 1)
            x->st = weft_team_allreduce(team, &v, &v, 1, WEFT_TYPE_INT64, WEFT_OP_SUM);
        else if (x->mode == 3 && x->t == 0)
            x->st = weft_team_split_topology(team, &child, NULL);
        else if (x->mode == 4)
            late_reduce(x, team);
    }
    if (x->mode != 4)
        snprintf(x->msg, sizeof(x->msg), "%s", weft_last_error());
    if (child)
        weft_team_free(&child);
    if (team)
        weft_team_free(&team);
    return NULL;
}

static void timeouts(void)
{
    static const struct {
        const char *what;
        int         waiter;   /* the thread that arrived and waits */
        const char *frag;
    } cases[] = {
        {"join", 0, "1 of the 2 threads of this rank arrived within WEFT_TIMEOUT_MS"},
        {"barrier", 0, "(thread 1 of this rank) did not arrive"},
        {"allreduce", 1, "(thread 0 of this rank, which leads its members) did not arrive"},
        {"split", 0, "1 of the 2 threads of this rank arrived within WEFT_TIMEOUT_MS"},
        {"late leader", 1, "(thread 0 of this rank, which leads its members) did not arrive"},
    };

    pthread_barrier_init(&late_bar, NULL, 2);
    for (int mode = 0; mode < 5; mode++) {
        pthread_t th[2];
        late_t    x[2] = {{.t = 0, .mode = mode}, {.t = 1, .mode = mode}};
        for (int i = 0; i < 2; i++)
            pthread_create(&th[i], NULL, late, &x[i]);
        for (int i = 0; i < 2; i++)
            pthread_join(th[i], NULL);
        late_t *w = &x[cases[mode].waiter];
        CHECK(w->st == WEFT_ERR_TIMEOUT && strstr(w->msg, cases[mode].frag),
              "%s, a thread away: got %d (%s), want WEFT_ERR_TIMEOUT and '%s'",
              cases[mode].what, (int)w->st, w->msg, cases[mode].frag);
        /* The late leader finds the member withdrawn and fails too. */
        CHECK(mode != 4 || (x[0].st == WEFT_ERR_TIMEOUT && strstr(x[0].msg, "stopped waiting")),
              "late leader: got %d (%s), want WEFT_ERR_TIMEOUT and 'stopped waiting'",
              (int)x[0].st, x[0].msg);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    pthread_barrier_destroy(&late_bar);
}

int main(int argc, char **argv)
{
    weft_ctx_t ctx;
    int        provided;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me_rank);
    check_rank = me_rank;
    if (argc < 2 || (nthreads = atoi(argv[1])) < 1 || provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "usage: test_eteam NTHREADS LINE... (needs MPI_THREAD_MULTIPLE)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    lines = argv + 2;
    nlines = argc - 2;
    pinned = nlines == 1 && strcmp(lines[0], "pinned") == 0;
    int away = nlines == 1 && strcmp(lines[0], "timeout") == 0;
    ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (pinned && ncpu > 2)
        ncpu = 2;   /* 2 CPUs: same-core or not, depending on the machine */
    CHECK(weft_init(NULL, &ctx) == WEFT_OK, "weft_init: %s", weft_last_error());
    CHECK(weft_team_world(ctx, &world) == WEFT_OK, "weft_team_world: %s", weft_last_error());
    /* With the progress thread, the pool must share its worker ("single"). */
    const char *pt = getenv("WEFT_PROGRESS_THREAD");
    weft_ep_pool_params_t p = {.nthreads = nthreads > 2 ? nthreads : 2,
                               .policy = pt && atoi(pt) ? "single" : NULL};
    CHECK(weft_ep_pool_create(ctx, &p, &pool) == WEFT_OK, "pool: %s", weft_last_error());
    if (away) {
        timeouts();
        goto done;
    }

    pthread_t *th = malloc(sizeof(*th) * (size_t)nthreads);
    for (int t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, walk, (void *)(intptr_t)t);
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    free(th);
    bad_input();
done:
    weft_team_free(&world);
    weft_ep_pool_destroy(pool);
    weft_finalize(ctx);
    int failed = 0;
    MPI_Allreduce(&check_failures, &failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me_rank == 0)
        printf("test_eteam: %s\n", failed ? "FAILED" : "ok");
    MPI_Finalize();
    return failed != 0;
}
