/* Hierarchies: built from the team layer's split or from user-given group
 * sizes, cached on the communicator as an MPI attribute (freed with it). */
#include "coll.h"
#include "runtime/runtime.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static void hier_free(weft__hier_t *h)
{
    int finalized = 0;

    if (!h)
        return;
    MPI_Finalized(&finalized);
    for (int l = 0; l < h->nlevels; l++) {
        if (!finalized && h->up[l] != MPI_COMM_NULL)
            MPI_Comm_free(&h->up[l]);
        free(h->gcount[l]);
    }
    if (!finalized && h->comm != MPI_COMM_NULL)
        MPI_Comm_free(&h->comm);
    free(h->up);
    free(h->uprank);
    free(h->gcount);
    free(h->order);
    free(h);
}

/* ---- the attribute --------------------------------------------------------- */

static pthread_once_t keyval_once = PTHREAD_ONCE_INIT;
static int            keyval = MPI_KEYVAL_INVALID;

static int attr_delete(MPI_Comm comm, int kv, void *value, void *extra)
{
    (void)comm, (void)kv, (void)extra;
    hier_free(value);
    return MPI_SUCCESS;
}

/* A duplicate gets no copy: it builds its own hierarchy on first use, since
 * the levels are communicators of the original. */
static void keyval_create(void)
{
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, attr_delete, &keyval, NULL);
}

/* ---- parsing --------------------------------------------------------------- */

weft_status_t weft__hier_parse_groups(const char *text, int nranks, int *fanout, int max,
                                      int *nlevels, weft__msg_t *err)
{
    const char *p = text;
    long long   product = 1;
    int         n = 0;

    if (!text || !*text)
        return weft__fail(err, WEFT_ERR_CONFIG, "weft_coll_groups is empty");
    for (;;) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < 1 || v > INT_MAX)
            return weft__fail(err, WEFT_ERR_CONFIG,
                              "weft_coll_groups '%s': expected a positive group size at "
                              "'%s'", text, p);
        if (n == max)
            return weft__fail(err, WEFT_ERR_CONFIG,
                              "weft_coll_groups '%s': more than %d levels", text, max);
        fanout[n++] = (int)v;
        product *= v;
        if (product > INT_MAX)
            return weft__fail(err, WEFT_ERR_CONFIG,
                              "weft_coll_groups '%s': product of the sizes overflows", text);
        if (*end == '\0')
            break;
        if (*end != ',')
            return weft__fail(err, WEFT_ERR_CONFIG,
                              "weft_coll_groups '%s': unexpected '%c'", text, *end);
        p = end + 1;
    }
    if (product != nranks)
        return weft__fail(err, WEFT_ERR_CONFIG,
                          "weft_coll_groups '%s': the group sizes multiply to %lld, the "
                          "communicator has %d ranks", text, product, nranks);
    *nlevels = n;
    return WEFT_OK;
}

/* ---- building -------------------------------------------------------------- */

static weft_status_t hier_alloc(weft__hier_t *h, int nlevels, weft__msg_t *err)
{
    h->up = malloc(sizeof(*h->up) * (size_t)(nlevels ? nlevels : 1));
    h->uprank = malloc(sizeof(*h->uprank) * (size_t)(nlevels ? nlevels : 1));
    h->gcount = calloc((size_t)(nlevels ? nlevels : 1), sizeof(*h->gcount));
    if (!h->up || !h->uprank || !h->gcount)
        return weft__fail(err, WEFT_ERR_NO_MEMORY, "out of memory for a hierarchy");
    for (int l = 0; l < nlevels; l++)
        h->up[l] = MPI_COMM_NULL;
    return WEFT_OK;
}

/* The machine's levels: the team layer's split, repeated down to the
 * bottom.  Ranks with no group at a level join that level's roots. */
static weft_status_t build_topo(MPI_Comm comm, MPI_Info info, weft__hier_t *h,
                                weft__msg_t *err)
{
    MPI_Comm      cur = comm;
    int           contiguous = 1;
    weft_status_t st = hier_alloc(h, WEFT__HIER_MAX_LEVELS, err);

    while (st == WEFT_OK) {
        MPI_Comm child, roots, up;
        int      csize, crank, has, all, leader;

        MPI_Comm_size(cur, &csize);
        MPI_Comm_rank(cur, &crank);
        if (csize == 1)
            break;
        if (h->nlevels == WEFT__HIER_MAX_LEVELS) {
            st = weft__fail(err, WEFT_ERR_INVALID_ARG, "the machine has more than %d levels",
                            WEFT__HIER_MAX_LEVELS);
            break;
        }
        st = weft__topo_split(cur, h->nlevels == 0 ? info : MPI_INFO_NULL, crank, &child, &roots,
                              err);
        if (st != WEFT_OK)
            break;
        has = child != MPI_COMM_NULL;
        MPI_Allreduce(&has, &all, 1, MPI_INT, MPI_LAND, cur);
        leader = !has;
        if (has) {
            MPI_Group cg, pg;
            int       ends[2], at[2], n;
            MPI_Comm_size(child, &n);
            MPI_Comm_rank(child, &leader);
            leader = leader == 0;
            ends[0] = 0;
            ends[1] = n - 1;
            MPI_Comm_group(child, &cg);
            MPI_Comm_group(cur, &pg);
            MPI_Group_translate_ranks(cg, 2, ends, pg, at);
            MPI_Group_free(&cg);
            MPI_Group_free(&pg);
            contiguous &= at[1] - at[0] + 1 == n;
        }
        if (all) {
            up = roots;    /* exactly the groups' rank 0s */
        } else {
            if (roots != MPI_COMM_NULL)
                MPI_Comm_free(&roots);
            MPI_Comm_split(cur, leader ? 0 : MPI_UNDEFINED, crank, &up);
        }
        h->up[h->nlevels] = up;
        h->uprank[h->nlevels] = -1;
        if (up != MPI_COMM_NULL)
            MPI_Comm_rank(up, &h->uprank[h->nlevels]);
        h->nlevels++;
        if (cur != comm)
            MPI_Comm_free(&cur);
        cur = comm;
        if (!has)
            break;
        cur = child;
    }
    if (cur != comm)
        MPI_Comm_free(&cur);
    h->contiguous = contiguous;
    return st;
}

/* A tailor-made hierarchy: fanout[0] groups at the top, each of fanout[1]
 * groups, ..., the bottom groups of fanout[n-1] consecutive ranks. */
static weft_status_t build_groups(MPI_Comm comm, const int *fanout, int n, weft__hier_t *h,
                                  weft__msg_t *err)
{
    weft_status_t st = hier_alloc(h, n, err);
    long long     stride = h->size;

    for (int l = 0; l < n && st == WEFT_OK; l++) {
        long long span = stride;        /* ranks under one group of level l */
        stride /= fanout[l];            /* ranks under one member of it */
        int in = fanout[l] > 1 && h->rank % stride == 0;
        MPI_Comm_split(comm, in ? (int)(h->rank / span) : MPI_UNDEFINED, h->rank, &h->up[l]);
        h->uprank[l] = -1;
        if (h->up[l] != MPI_COMM_NULL)
            MPI_Comm_rank(h->up[l], &h->uprank[l]);
        h->nlevels++;
    }
    h->contiguous = 1;
    return st;
}

/* How many blocks each member brings at each level it leads, and (rank 0)
 * whose block is where after a gather: the gather of the ranks themselves. */
static weft_status_t gather_layout(weft__hier_t *h, weft__msg_t *err)
{
    h->nblocks = 1;
    h->leads = 0;
    for (int l = h->nlevels - 1; l >= 0; l--) {
        if (h->up[l] == MPI_COMM_NULL)
            continue;
        int n;
        MPI_Comm_size(h->up[l], &n);
        if (h->uprank[l] != 0) {
            MPI_Gather(&h->nblocks, 1, MPI_INT, NULL, 1, MPI_INT, 0, h->up[l]);
            break;
        }
        if (!(h->gcount[l] = malloc(sizeof(int) * (size_t)n)))
            return weft__fail(err, WEFT_ERR_NO_MEMORY, "out of memory for a hierarchy");
        MPI_Gather(&h->nblocks, 1, MPI_INT, h->gcount[l], 1, MPI_INT, 0, h->up[l]);
        h->nblocks = 0;
        for (int i = 0; i < n; i++)
            h->nblocks += h->gcount[l][i];
        h->leads = 1;
    }
    int *ranks = malloc(sizeof(int) * (size_t)h->nblocks);
    if (!ranks)
        return weft__fail(err, WEFT_ERR_NO_MEMORY, "out of memory for a hierarchy");
    ranks[0] = h->rank;
    MPI_Datatype block;
    MPI_Type_contiguous(1, MPI_INT, &block);
    MPI_Type_commit(&block);
    int rc = weft__hgather_blocks(h, ranks, block);
    MPI_Type_free(&block);
    if (rc != MPI_SUCCESS) {
        free(ranks);
        return weft__fail(err, WEFT_ERR_MPI, "MPI_Gatherv failed while building");
    }
    if (h->rank == 0)
        h->order = ranks;
    else
        free(ranks);
    return WEFT_OK;
}

weft_status_t weft__hier_init(MPI_Comm comm, MPI_Info info, weft__msg_t *err)
{
    weft__hier_t *h = calloc(1, sizeof(*h));
    weft_status_t st = WEFT_OK;
    char          groups[256];
    int           fanout[WEFT__HIER_MAX_LEVELS], nfan = 0, has_groups = 0, bad, anybad;

    if (!h)
        return weft__fail(err, WEFT_ERR_NO_MEMORY, "out of memory for a hierarchy");
    h->comm = MPI_COMM_NULL;
    MPI_Comm_rank(comm, &h->rank);
    MPI_Comm_size(comm, &h->size);
    if (info != MPI_INFO_NULL) {
        MPI_Info_get(info, "weft_coll_groups", (int)sizeof(groups) - 1, groups, &has_groups);
        if (has_groups)
            st = weft__hier_parse_groups(groups, h->size, fanout, WEFT__HIER_MAX_LEVELS, &nfan,
                                         err);
    }
    /* Every rank must agree on how to build before any communicator is made. */
    bad = st != WEFT_OK;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, comm);
    if (anybad) {
        hier_free(h);
        return bad ? st : weft__fail(err, WEFT_ERR_CONFIG, "weft_coll_groups is malformed "
                                     "on another rank");
    }
    if (MPI_Comm_dup(comm, &h->comm) != MPI_SUCCESS) {
        hier_free(h);
        return weft__fail(err, WEFT_ERR_MPI, "MPI_Comm_dup failed");
    }
    st = has_groups ? build_groups(comm, fanout, nfan, h, err) : build_topo(comm, info, h, err);
    /* Levels below the top are split by subsets of ranks: agree on the outcome. */
    bad = st != WEFT_OK;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, comm);
    if (!anybad) {
        MPI_Allreduce(MPI_IN_PLACE, &h->contiguous, 1, MPI_INT, MPI_LAND, comm);
        st = gather_layout(h, err);
        bad = st != WEFT_OK;
        MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, comm);
    }
    if (anybad) {
        hier_free(h);
        return bad ? st : weft__fail(err, WEFT_ERR_MPI, "building the hierarchy failed on "
                                     "another rank");
    }
    pthread_once(&keyval_once, keyval_create);
    if (keyval == MPI_KEYVAL_INVALID || MPI_Comm_set_attr(comm, keyval, h) != MPI_SUCCESS) {
        hier_free(h);
        return weft__fail(err, WEFT_ERR_MPI, "MPI_Comm_set_attr failed");
    }
    return WEFT_OK;
}

weft_status_t weft__hier_get(MPI_Comm comm, weft__hier_t **hier, weft__msg_t *err)
{
    void         *value;
    int           found = 0;
    weft_status_t st;

    pthread_once(&keyval_once, keyval_create);
    if (keyval != MPI_KEYVAL_INVALID && MPI_Comm_get_attr(comm, keyval, &value, &found) == MPI_SUCCESS
        && found) {
        *hier = value;
        return WEFT_OK;
    }
    if ((st = weft__hier_init(comm, MPI_INFO_NULL, err)) != WEFT_OK)
        return st;
    MPI_Comm_get_attr(comm, keyval, &value, &found);
    *hier = value;
    return WEFT_OK;
}
