/*
 * weft_bench_summa -- SUMMA matrix multiplication C = A.B on a p x q grid of
 * ranks, with the block broadcasts flat, hierarchical over user-given groups
 * or hierarchical over the machine's groups: §7.3 of the
 * hierarchical-communicators paper (Figs. 11-13).
 *
 *   mpirun -np P weft_bench_summa --json FILE [--n N] [--block B]
 *          [--variants simple,hier,topo2,topo] [--groups G1,G2,...] [--rounds R]
 *          [--flop-rate GFLOPS [--charge-only]] [--by-node N]
 *
 * The grid is the most square p x q = P (p <= q).  A, B and C are n x n,
 * each rank holding one block of each (balanced block distribution).  At
 * each step the owner column of the next panel of A (at most B columns)
 * broadcasts it along its grid row, the owner row of the matching panel of
 * B along its grid column, and every rank adds their product to its block
 * of C with OpenBLAS (cblas_dgemm).
 *
 *   simple  MPI_Bcast on the row and column communicators (rows are
 *           consecutive ranks);
 *   hier    the paper's "Hierarchical (G groups)", hierarchical SUMMA: the
 *           grid is cut into G = gr x gc groups of (p/gr) x (q/gc) ranks
 *           (the most square such groups); a row broadcast goes first to
 *           the ranks at the owner's place in the other groups of the row,
 *           then inside each group (WEFT_Hbcast over weft_coll_groups
 *           "gc,q/gc"; columns alike);
 *   topo2   the same two-level broadcast with the groups the machine
 *           gives -- the first split of MPI_COMM_WORLD by
 *           WEFT_Comm_split_type (nodes of a cluster, blades of an SMP) --
 *           each laid out as one block of the grid (its ranks row by row);
 *   topo    the paper's "Hierarchical topological": the same layout, and
 *           each broadcast goes down every level of the machine the row
 *           (column) spans -- network, node, socket, NUMA node, cache, core
 *           -- by WEFT_Hbcast over the machine's hierarchy of the row
 *           (column) communicator.  The JSON names the levels ("row_levels",
 *           "col_levels": the path of MPI_COMM_WORLD rank 0).
 *
 * On a described machine (WEFT_TOPO_SYNTHETIC, as in the emulated and
 * simulated runs) the description's per-rank lists speak of
 * MPI_COMM_WORLD's ranks, not of a row's: each row (column) communicator
 * is given its own -- the same nodes, each rank's node from the machine
 * level WEFT_Comm_split_type finds in MPI_COMM_WORLD, and each rank bound
 * to the PU (core) its place in its node gives it under
 * WEFT_TOPO_BIND=by-pu (by-core), the only bindings the topo variant
 * accepts there.  Without a
 * description, weft sees this machine and the OS binding, right for any
 * communicator.
 *
 * simple and hier place rank r at grid position r (row-major); with
 * --by-node N at position i * N + k for the i-th rank of node k (k = r /
 * (P/N)): the numbering a scheduler placing ranks round-robin over N nodes
 * would give, under which consecutive positions sit on different nodes.
 * The topo variants follow the machine whatever the numbering.
 *
 * For the two hierarchical variants every row (column) has one
 * communicator per possible owner, its ranks rotated so that the owner is
 * rank 0 and the groups stay whole: every broadcast starts at the block's
 * owner with no extra hop.
 *
 * Each variant runs R rounds after a barrier; a rank's total, broadcast and
 * multiply times are the medians of its rounds; the JSON gives the maximum
 * total over the ranks (the time of the multiplication) and the mean
 * broadcast and multiply times (the paper's bars), the broadcast split into
 * its row (A panels) and column (B panels) parts.  The C of every variant
 * is checked against a serial cblas_dgemm of the same matrices (each rank
 * its block, from its rows of A and columns of B): the largest absolute
 * difference must stay under n^2 * DBL_EPSILON, a bound of twice the
 * forward error of an n-term dot product of entries in [-1, 1].
 *
 * Under SimGrid SMPI (built with smpicc) MPI_Wtime is simulated time; with
 * --flop-rate each local multiply also costs 2mnk / rate simulated seconds
 * (smpi_execute), the product itself still being computed (and verified);
 * --charge-only skips the product and its check (the simulated time is the
 * same, the host time of large simulated runs is not spent on DGEMMs that
 * are not measured): such a run says "checked": false.
 *
 * Output: {"benchmark": "summa", "nranks": P, "grid": [p, q], "n": N,
 *          "block": B, "runs": [{"variant": ..., "groups": G, "total_s": t,
 *          "comm_s": t, "comp_s": t, "row_s": t, "col_s": t, "max_abs_err": e,
 *          ...}], "checked": ..., "verified": ...}
 */
#include "common.h"
#include <weft_mpi.h>

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CONFIGS 16
#define MAX_ROUNDS 64

enum variant { SIMPLE, HIER, TOPO2, TOPO, NVARIANTS };
static const char *const variant_names[] = {"simple", "hier", "topo2", "topo"};

struct opts {
    const char *json;
    long        n, block, rounds, by_node;
    int         variants[NVARIANTS]; /* selected */
    long        groups[MAX_CONFIGS];
    int         ngroups;
    double      flop_rate;   /* GFLOP/s per rank, SMPI only; 0: none */
    int         charge_only; /* SMPI: charge the multiplies, skip them */
};

struct config {
    enum variant variant;
    int          G, gr, gc;   /* groups, as a gr x gc grid of blocks */
};

/* Where this rank is and the communicators of one configuration. */
struct layout {
    int       row, col;
    MPI_Comm  rowc, colc;     /* ordered by column / by row */
    MPI_Comm *rowo, *colo;    /* per owner (hierarchical variants) */
    char      rowlv[128], collv[128];   /* levels of the topo variant */
};

static int  rank, nranks, p, q;
static long n;
/* This rank's node (lowest MPI_COMM_WORLD rank on it) and place in it,
 * bound to the place-th object of bind_type; node < 0: the machine is not
 * described, weft sees it itself. */
static int         my_node = -1, my_place;
static const char *bind_type;

static long start(long i, long parts) { return i * n / parts; }

/* The part (of parts) that holds index k in the balanced distribution. */
static int owner(long k, long parts)
{
    long i = k * parts / n;
    while (i + 1 < parts && start(i + 1, parts) <= k)
        i++;
    while (start(i, parts) > k)
        i--;
    return (int)i;
}

static double a_at(long i, long j) { return (double)((i * 7 + j * 13) % 17 - 8) / 8.0; }
static double b_at(long i, long j) { return (double)((i * 11 + j * 5) % 19 - 9) / 9.0; }

static int parse_variants(const char *text, struct opts *o)
{
    char buf[64], *save = NULL;
    snprintf(buf, sizeof(buf), "%s", text);
    memset(o->variants, 0, sizeof(o->variants));
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int found = 0;
        for (int v = 0; v < NVARIANTS; v++)
            if (!strcmp(t, variant_names[v]))
                o->variants[v] = found = 1;
        if (!found)
            return 0;
    }
    for (int v = 0; v < NVARIANTS; v++)
        if (o->variants[v])
            return 1;
    return 0;
}

static int parse(int argc, char **argv, struct opts *o)
{
    const char *variants = NULL, *groups = NULL;
    const struct bench_opt opts[] = {
        {"--json", .text = &o->json},         {"--n", .value = &o->n},
        {"--block", .value = &o->block},      {"--by-node", .value = &o->by_node},
        {"--rounds", .value = &o->rounds},    {"--variants", .text = &variants},
        {"--groups", .text = &groups},        {"--flop-rate", .real = &o->flop_rate},
        {"--charge-only", .flag = &o->charge_only},
        {NULL},
    };

    *o = (struct opts){.n = 256, .block = 32, .rounds = 3, .variants = {1, 1, 0, 1},
                       .groups = {2}, .ngroups = 1};
    if (bench_parse_opts(argc, argv, opts) != 0 || o->rounds > MAX_ROUNDS)
        return 0;
    if (variants != NULL && !parse_variants(variants, o))
        return 0;
    if (groups != NULL &&
        (o->ngroups = bench_parse_positive_list(groups, o->groups, MAX_CONFIGS - 2)) < 1)
        return 0;
#ifndef SMPI_H
    if (o->flop_rate > 0)
        return 0;   /* a simulated cost: only under SMPI */
#endif
    return o->json != NULL && (!o->charge_only || o->flop_rate > 0);
}

static void usage(void)
{
    fprintf(stderr, "usage: weft_bench_summa --json FILE [--n N] [--block B] "
                    "[--variants simple,hier,topo2,topo] [--groups G1,G2,...] [--rounds R (<= %d)] "
                    "[--flop-rate GFLOPS [--charge-only] (SMPI only)] [--by-node N]\n", MAX_ROUNDS);
}

/* gr x gc = G with gr | p and gc | q, the groups as square as can be;
 * 0 when there is none. */
static int group_grid(int G, int *gr, int *gc)
{
    long best = -1;
    for (int r = 1; r <= G; r++) {
        if (G % r || p % r || q % (G / r))
            continue;
        long d = labs((long)(p / r) - (long)(q / (G / r)));
        if (best < 0 || d < best) {
            best = d;
            *gr = r;
            *gc = G / r;
        }
    }
    return best >= 0;
}

/* The machine's first level: this rank's group and its place in it.
 * Returns 0 and a message on every rank when the groups cannot be blocks
 * of the grid. */
static int topo_groups(int *G, int *g, int *m, char *level, size_t len, char *why, size_t wlen)
{
    MPI_Comm    node;
    int         has, any, all, size = 1, sizes[2], idx = 0, num = 1;
    const char *type = "none";

    if (WEFT_Comm_split_type(MPI_COMM_WORLD, WEFT_COMM_TYPE_PHYSICAL_TOPOLOGY, rank, MPI_INFO_NULL,
                             &node) != MPI_SUCCESS) {
        snprintf(why, wlen, "WEFT_Comm_split_type: %s", weft_last_error());
        return 0;
    }
    has = node != MPI_COMM_NULL;
    MPI_Allreduce(&has, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    MPI_Allreduce(&has, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (any && !all) {
        snprintf(why, wlen, "the machine's first level leaves some ranks out (bind every rank)");
        return 0;
    }
    *m = rank;
    if (has) {
        MPI_Comm_size(node, &size);
        MPI_Comm_rank(node, m);
        WEFT_Comm_get_hlevel_info(node, &num, &idx, &type);
        MPI_Comm_free(&node);
    } else {
        size = nranks;
    }
    sizes[0] = size;
    sizes[1] = -size;
    MPI_Allreduce(MPI_IN_PLACE, sizes, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (sizes[0] != -sizes[1]) {
        snprintf(why, wlen, "the machine's first level (%s) has groups of %d to %d ranks: "
                 "SUMMA needs equal groups", type, -sizes[1], sizes[0]);
        return 0;
    }
    *G = num;
    *g = idx;
    snprintf(level, len, "%s", type);
    return 1;
}

/* Rank of grid position c (of parts, in groups of span) in the
 * communicator rotated for owner o: o first, groups kept whole. */
static int rotated(int c, int o, int ngroups, int span)
{
    int g = c / span, i = c % span, go = o / span, io = o % span;
    return ((g - go + ngroups) % ngroups) * span + (i - io + span) % span;
}

/* my_node and my_place on a described machine: the node is the group of
 * the "Machine" level of MPI_COMM_WORLD's hierarchy (all of it when there
 * is none, one SMP).  Collective. */
static int machine_place(char *why, size_t wlen)
{
    const char *bind = getenv("WEFT_TOPO_BIND");
    MPI_Comm    cur = MPI_COMM_WORLD, next, node = MPI_COMM_NULL;
    int         num, idx, rc;
    const char *type;

    if (!getenv("WEFT_TOPO_SYNTHETIC"))
        return 1;
    if (!bind || (strcmp(bind, "by-pu") && strcmp(bind, "by-core"))) {
        snprintf(why, wlen, "on a described machine (WEFT_TOPO_SYNTHETIC) the topo variant needs "
                 "WEFT_TOPO_BIND=by-pu or by-core, not %s", bind ? bind : "(unset)");
        return 0;
    }
    bind_type = strcmp(bind, "by-pu") ? "core" : "pu";
    for (;;) {
        rc = WEFT_Comm_split_type(cur, WEFT_COMM_TYPE_PHYSICAL_TOPOLOGY, rank, MPI_INFO_NULL,
                                  &next);
        if (cur != MPI_COMM_WORLD && cur != node)
            MPI_Comm_free(&cur);
        if (rc != MPI_SUCCESS) {
            snprintf(why, wlen, "WEFT_Comm_split_type: %s", weft_last_error());
            return 0;
        }
        if (next == MPI_COMM_NULL)
            break;
        WEFT_Comm_get_hlevel_info(next, &num, &idx, &type);
        if (!strcmp(type, "Machine"))
            node = next;
        cur = next;
    }
    if (node == MPI_COMM_NULL)
        MPI_Comm_dup(MPI_COMM_WORLD, &node);
    MPI_Comm_rank(node, &my_place);
    MPI_Allreduce(&rank, &my_node, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    return 1;
}

/* The machine's description of comm's ranks (see machine_place), on info;
 * nothing when the machine is not described.  Collective over comm. */
static void describe(MPI_Comm comm, MPI_Info info)
{
    int   size, mine[2], *all;
    char *nodes, *binds;
    const char *slurm = getenv("WEFT_TOPO_SLURM_CONF");

    if (my_node < 0)
        return;
    MPI_Comm_size(comm, &size);
    mine[0] = my_node;
    mine[1] = my_place;
    all = malloc(sizeof(int) * 2 * (size_t)size);
    nodes = malloc(16 * (size_t)size + 1);
    binds = malloc(16 * (size_t)size + 1);
    MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, comm);
    nodes[0] = binds[0] = '\0';
    for (int i = 0, un = 0, ub = 0; i < size; i++) {
        un += snprintf(nodes + un, 16, "%snode%d", i ? "," : "", all[2 * i]);
        ub += snprintf(binds + ub, 16, "%s%s:%d", i ? "," : "", bind_type, all[2 * i + 1]);
    }
    MPI_Info_set(info, "weft_topo_synthetic", getenv("WEFT_TOPO_SYNTHETIC"));
    MPI_Info_set(info, "weft_topo_node", nodes);
    MPI_Info_set(info, "weft_topo_bind", binds);
    if (slurm)
        MPI_Info_set(info, "weft_topo_slurm_conf", slurm);
    free(all);
    free(nodes);
    free(binds);
}

/* The machine's levels inside comm on this rank's path, top first, as
 * "Machine>Package>NUMANode" (WEFT_Comm_split_type until nothing is
 * left to split).  Collective over comm. */
static int machine_levels(MPI_Comm comm, char *out, size_t len, char *why, size_t wlen)
{
    MPI_Comm    cur = comm, next;
    int         num, idx;
    const char *type;
    size_t      used = 0;

    out[0] = '\0';
    for (;;) {
        MPI_Info info = MPI_INFO_NULL;
        if (cur == comm && my_node >= 0) {
            MPI_Info_create(&info);
            describe(comm, info);
        }
        int rc = WEFT_Comm_split_type(cur, WEFT_COMM_TYPE_PHYSICAL_TOPOLOGY, 0, info, &next);
        if (info != MPI_INFO_NULL)
            MPI_Info_free(&info);
        if (cur != comm)
            MPI_Comm_free(&cur);
        if (rc != MPI_SUCCESS) {
            snprintf(why, wlen, "WEFT_Comm_split_type: %s", weft_last_error());
            return 0;
        }
        if (next == MPI_COMM_NULL)
            return 1;
        WEFT_Comm_get_hlevel_info(next, &num, &idx, &type);
        if (used < len)
            used += (size_t)snprintf(out + used, len - used, "%s%s", used ? ">" : "", type);
        cur = next;
    }
}

static int layout_make(const struct config *c, int tg, int tm, long by_node, struct layout *L,
                       char *why, size_t wlen)
{
    int  sr = p / c->gr, sc = q / c->gc;
    long num = by_node ? (rank % (nranks / by_node)) * by_node + rank / (nranks / by_node) : rank;

    if (c->variant == TOPO || c->variant == TOPO2) {
        L->row = (tg / c->gc) * sr + tm / sc;
        L->col = (tg % c->gc) * sc + tm % sc;
    } else {
        L->row = (int)(num / q);
        L->col = (int)(num % q);
    }
    MPI_Comm_split(MPI_COMM_WORLD, L->row, L->col, &L->rowc);
    MPI_Comm_split(MPI_COMM_WORLD, L->col, L->row, &L->colc);
    L->rowo = L->colo = NULL;
    L->rowlv[0] = L->collv[0] = '\0';
    if (c->variant == SIMPLE)
        return 1;
    if (c->variant == TOPO && !(machine_levels(L->rowc, L->rowlv, sizeof(L->rowlv), why, wlen) &&
                                machine_levels(L->colc, L->collv, sizeof(L->collv), why, wlen)))
        return 0;
    L->rowo = malloc(sizeof(MPI_Comm) * (size_t)q);
    L->colo = malloc(sizeof(MPI_Comm) * (size_t)p);
    for (int dim = 0; dim < 2; dim++) {
        int       parts = dim ? p : q, ng = dim ? c->gr : c->gc, span = parts / ng;
        int       me = dim ? L->row : L->col;
        MPI_Comm  base = dim ? L->colc : L->rowc, *out = dim ? L->colo : L->rowo;
        MPI_Info  info;
        char      groups[32];
        snprintf(groups, sizeof(groups), "%d,%d", ng, span);
        MPI_Info_create(&info);
        MPI_Info_set(info, "weft_coll_groups", groups);
        for (int o = 0; o < parts; o++) {
            MPI_Info machine = MPI_INFO_NULL;
            int      rc;
            MPI_Comm_split(base, 0, rotated(me, o, ng, span), &out[o]);
            if (c->variant == TOPO && my_node >= 0) {
                MPI_Info_create(&machine);
                describe(out[o], machine);
            }
            rc = WEFT_Comm_hier_init(out[o], c->variant == TOPO ? machine : info);
            if (machine != MPI_INFO_NULL)
                MPI_Info_free(&machine);
            if (rc != MPI_SUCCESS) {
                snprintf(why, wlen, "WEFT_Comm_hier_init: %s", weft_last_error());
                MPI_Info_free(&info);
                return 0;
            }
        }
        MPI_Info_free(&info);
    }
    return 1;
}

static void layout_free(struct layout *L)
{
    for (int o = 0; L->rowo && o < q; o++)
        MPI_Comm_free(&L->rowo[o]);
    for (int o = 0; L->colo && o < p; o++)
        MPI_Comm_free(&L->colo[o]);
    free(L->rowo);
    free(L->colo);
    MPI_Comm_free(&L->rowc);
    MPI_Comm_free(&L->colc);
}

/* One multiplication: C = A.B; *comm and *comp get the broadcast and the
 * multiply times. */
static void summa(const struct config *c, const struct layout *L, const struct opts *o,
                  const double *A, const double *B, double *C, double *apan, double *bpan,
                  double *rowt, double *colt, double *comp)
{
    long r0 = start(L->row, p), mloc = start(L->row + 1, p) - r0;
    long c0 = start(L->col, q), nloc = start(L->col + 1, q) - c0;
    long kk = 0;

    memset(C, 0, sizeof(double) * (size_t)(mloc * nloc));
    *rowt = *colt = *comp = 0;
    while (kk < n) {
        int    ac = owner(kk, q), br = owner(kk, p);
        long   w = o->block, t;
        double t0, tr, t1, t2;
        if ((t = start(ac + 1, q) - kk) < w)
            w = t;
        if ((t = start(br + 1, p) - kk) < w)
            w = t;
        t0 = MPI_Wtime();
        if (L->col == ac) {
            long first = kk - start(ac, q);
            for (long i = 0; i < mloc; i++)
                memcpy(apan + i * w, A + i * nloc + first, sizeof(double) * (size_t)w);
        }
        if (L->row == br)
            memcpy(bpan, B + (kk - start(br, p)) * nloc, sizeof(double) * (size_t)(w * nloc));
        if (c->variant == SIMPLE)
            MPI_Bcast(apan, (int)(mloc * w), MPI_DOUBLE, ac, L->rowc);
        else
            WEFT_Hbcast(apan, (int)(mloc * w), MPI_DOUBLE, 0, L->rowo[ac]);
        tr = MPI_Wtime();
        if (c->variant == SIMPLE)
            MPI_Bcast(bpan, (int)(w * nloc), MPI_DOUBLE, br, L->colc);
        else
            WEFT_Hbcast(bpan, (int)(w * nloc), MPI_DOUBLE, 0, L->colo[br]);
        t1 = MPI_Wtime();
        if (!o->charge_only)
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)mloc, (int)nloc, (int)w,
                        1.0, apan, (int)w, bpan, (int)nloc, 1.0, C, (int)nloc);
#ifdef SMPI_H
        if (o->flop_rate > 0)
            smpi_execute(2.0 * (double)mloc * (double)nloc * (double)w / (o->flop_rate * 1e9));
#endif
        t2 = MPI_Wtime();
        *rowt += tr - t0;
        *colt += t1 - tr;
        *comp += t2 - t1;
        kk += w;
    }
}

/* This rank's block of A.B from a serial cblas_dgemm of its rows of A and
 * columns of B. */
static double *reference(const struct layout *L)
{
    long    r0 = start(L->row, p), mloc = start(L->row + 1, p) - r0;
    long    c0 = start(L->col, q), nloc = start(L->col + 1, q) - c0;
    double *ra = malloc(sizeof(double) * (size_t)(mloc * n));
    double *cb = malloc(sizeof(double) * (size_t)(n * nloc));
    double *ref = malloc(sizeof(double) * (size_t)(mloc * nloc));

    for (long i = 0; i < mloc; i++)
        for (long k = 0; k < n; k++)
            ra[i * n + k] = a_at(r0 + i, k);
    for (long k = 0; k < n; k++)
        for (long j = 0; j < nloc; j++)
            cb[k * nloc + j] = b_at(k, c0 + j);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)mloc, (int)nloc, (int)n, 1.0, ra,
                (int)n, cb, (int)nloc, 0.0, ref, (int)nloc);
    free(ra);
    free(cb);
    return ref;
}

/* Runs one configuration and writes its JSON object; returns whether C
 * was right. */
static int run_config(const struct config *c, int tg, int tm, const struct opts *o, FILE *f,
                      int first, double bound)
{
    struct layout L;
    char          why[512] = "";
    int           ok = layout_make(c, tg, tm, o->by_node, &L, why, sizeof(why)), all;

    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!ok) {
        if (rank == 0)
            fprintf(stderr, "weft_bench_summa: %s %d groups: %s\n", variant_names[c->variant],
                    c->G, why[0] ? why : "failed on another rank");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    long    r0 = start(L.row, p), mloc = start(L.row + 1, p) - r0;
    long    c0 = start(L.col, q), nloc = start(L.col + 1, q) - c0;
    long    wmax = o->block;
    double *A = malloc(sizeof(double) * (size_t)(mloc * nloc));
    double *B = malloc(sizeof(double) * (size_t)(mloc * nloc));
    double *C = malloc(sizeof(double) * (size_t)(mloc * nloc));
    double *apan = malloc(sizeof(double) * (size_t)(mloc * wmax));
    double *bpan = malloc(sizeof(double) * (size_t)(wmax * nloc));
    double  tot[MAX_ROUNDS], rwt[MAX_ROUNDS], clt[MAX_ROUNDS], com[MAX_ROUNDS], cmp[MAX_ROUNDS];
    double  mine[5], sum[5], worst[2], err = 0;

    for (long i = 0; i < mloc; i++)
        for (long j = 0; j < nloc; j++) {
            A[i * nloc + j] = a_at(r0 + i, c0 + j);
            B[i * nloc + j] = b_at(r0 + i, c0 + j);
        }
    for (int r = 0; r < o->rounds; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t = MPI_Wtime();
        summa(c, &L, o, A, B, C, apan, bpan, &rwt[r], &clt[r], &cmp[r]);
        tot[r] = MPI_Wtime() - t;
        com[r] = rwt[r] + clt[r];
    }
    if (!o->charge_only) {
        double *ref = reference(&L);
        for (long i = 0; i < mloc * nloc; i++)
            err = fmax(err, fabs(C[i] - ref[i]));
        free(ref);
    }
    mine[0] = bench_median(tot, (int)o->rounds);
    mine[1] = bench_median(com, (int)o->rounds);
    mine[2] = bench_median(cmp, (int)o->rounds);
    mine[3] = bench_median(rwt, (int)o->rounds);
    mine[4] = bench_median(clt, (int)o->rounds);
    MPI_Reduce(mine, sum, 5, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    worst[0] = mine[0];
    worst[1] = mine[1];
    MPI_Reduce(worst, mine, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&err, &worst[0], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    all = worst[0] <= bound;
    if (f)
        fprintf(f, "%s\n  {\"variant\": \"%s\", \"groups\": %d, \"group_grid\": [%d, %d], "
                   "\"row_levels\": \"%s\", \"col_levels\": \"%s\", "
                   "\"total_s\": %.9e, \"comm_s\": %.9e, \"comp_s\": %.9e, \"comm_max_s\": %.9e, "
                   "\"row_s\": %.9e, \"col_s\": %.9e, \"max_abs_err\": %.3e, \"verified\": %s}",
                first ? "" : ",", variant_names[c->variant], c->G, c->gr, c->gc, L.rowlv, L.collv,
                mine[0], sum[1] / nranks, sum[2] / nranks, mine[1], sum[3] / nranks,
                sum[4] / nranks, worst[0], o->charge_only ? "null" : all ? "true" : "false");
    if (rank == 0)
        printf("summa %-6s G=%-3d (%dx%d groups): total %.6f s, max |C - C_ref| = %.3e "
               "(bound %.3e) %s\n", variant_names[c->variant], c->G, c->gr, c->gc, mine[0],
               worst[0], bound, o->charge_only ? "not computed" : all ? "ok" : "WRONG");
    free(A);
    free(B);
    free(C);
    free(apan);
    free(bpan);
    layout_free(&L);
    return all;
}

int main(int argc, char **argv)
{
    struct opts   o;
    struct config cfg[MAX_CONFIGS];
    int           ncfg = 0, tg = 0, tm = 0, ok = 1;
    char          level[32] = "none", why[256], lib[256];

    bench_mpi_start(&argc, &argv, &rank, &nranks);
    if (!parse(argc, argv, &o)) {
        if (rank == 0)
            usage();
        MPI_Finalize();
        return 2;
    }
    n = o.n;
    for (p = 1; (p + 1) * (p + 1) <= nranks; p++)
        ;
    while (nranks % p)
        p--;
    q = nranks / p;
    if (o.by_node && nranks % o.by_node) {
        if (rank == 0)
            fprintf(stderr, "weft_bench_summa: --by-node %ld does not divide the %d ranks\n",
                    o.by_node, nranks);
        MPI_Finalize();
        return 2;
    }
    if (n < q) {
        if (rank == 0)
            fprintf(stderr, "weft_bench_summa: --n %ld is smaller than the %d x %d grid\n", n, p, q);
        MPI_Finalize();
        return 2;
    }
    if (o.variants[SIMPLE])
        cfg[ncfg++] = (struct config){SIMPLE, 1, 1, 1};
    for (int i = 0; o.variants[HIER] && i < o.ngroups; i++) {
        struct config c = {HIER, (int)o.groups[i], 1, 1};
        if (!group_grid(c.G, &c.gr, &c.gc)) {
            if (rank == 0)
                fprintf(stderr, "weft_bench_summa: %d groups do not tile the %d x %d grid "
                                "(need gr x gc = %d with gr | %d and gc | %d)\n",
                        c.G, p, q, c.G, p, q);
            MPI_Finalize();
            return 2;
        }
        cfg[ncfg++] = c;
    }
    if (o.variants[TOPO2] || o.variants[TOPO]) {
        struct config c = {TOPO2, 1, 1, 1};
        int           good = topo_groups(&c.G, &tg, &tm, level, sizeof(level), why, sizeof(why));
        if (good && o.variants[TOPO])
            good = machine_place(why, sizeof(why));
        if (good && !group_grid(c.G, &c.gr, &c.gc)) {
            snprintf(why, sizeof(why), "the machine's %d %s groups do not tile the %d x %d grid",
                     c.G, level, p, q);
            good = 0;
        }
        if (!good) {
            if (rank == 0)
                fprintf(stderr, "weft_bench_summa: topo: %s\n", why);
            MPI_Finalize();
            return 2;
        }
        if (o.variants[TOPO2])
            cfg[ncfg++] = c;
        c.variant = TOPO;
        if (o.variants[TOPO])
            cfg[ncfg++] = c;
    }
    FILE *f = rank == 0 ? bench_json_open("weft_bench_summa", o.json) : NULL;
    double bound = (double)n * (double)n * DBL_EPSILON;
    bench_mpi_library(lib, sizeof(lib));
    if (f)
        fprintf(f, "{\"benchmark\": \"summa\", \"nranks\": %d, \"grid\": [%d, %d], \"n\": %ld, "
                   "\"block\": %ld, \"rounds\": %ld, \"mpi\": \"%.120s\", \"topo_level\": \"%s\", "
                   "\"flop_rate_gflops\": %g, \"err_bound\": %.3e, \"by_node\": %ld, \"runs\": [",
                nranks, p, q, n, o.block, o.rounds, lib, level, o.flop_rate, bound, o.by_node);
    for (int i = 0; i < ncfg; i++)
        ok &= run_config(&cfg[i], tg, tm, &o, f, i == 0, bound);
    if (f) {
        fprintf(f, "\n], \"checked\": %s, \"verified\": %s}\n", o.charge_only ? "false" : "true",
                o.charge_only ? "null" : ok ? "true" : "false");
        bench_json_close(f);
    }
    MPI_Finalize();
    return ok ? 0 : 1;
}
