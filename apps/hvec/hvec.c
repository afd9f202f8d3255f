/*
 * weft_bench_hvec -- hierarchical vector processing, Algorithm 5 of the
 * hierarchical-communicators paper (§7.4, Fig. 14): H_topo, the hierarchy of
 * the machine, against H_conf(i), hierarchies a user builds by hand.
 *
 *   mpirun -np P weft_bench_hvec --json FILE [--sizes 1,16,...]
 *          [--confs 3,4,2,3,8/6,2,2,3,8/...] [--no-topo] [--iters N]
 *          [--by-node N]
 *
 * A hierarchy is a list of levels, top first; at each level a rank takes
 * part in one communicator or none.  Every rank starts with a vector of
 * `size` floats (lresult) and a local vector lvec.  Level by level from the
 * bottom up, each communicator gathers its members' vectors on its rank 0
 * (MPI_Gather), which replaces its own vector with func(gathered, lvec):
 * the sum of the gathered vectors divided, element by element, by its
 * lvec.  Rank 0 of MPI_COMM_WORLD ends with the result.
 *
 *   H_topo     the paper's root_based_hierarchic_communicators: the roots
 *              communicators of WEFT_Comm_hsplit_with_roots, repeated from
 *              MPI_COMM_WORLD down to single ranks (on the paper's NTW24E5:
 *              4 switches; 12, 6, 4, 2 nodes; 2 sockets; 2 NUMA nodes; 6
 *              cores);
 *   H_conf(i)  G1,G2,...,Gk: G1 ranks in the top communicator, each of
 *              them leading G2 at the next level, ..., bottom communicators
 *              of Gk consecutive ranks (the product must be P) -- built
 *              with MPI_Comm_split, blind to the machine.  With --by-node
 *              N the H_conf see the ranks numbered as a scheduler placing
 *              them round-robin over the N nodes would number them (the
 *              i-th rank of node k, k = r / (P/N), is number i * N + k), so
 *              that consecutive numbers sit on different nodes; H_topo
 *              follows the machine and does not depend on numbering.
 *
 * Each run starts after a barrier; a point's time is the median over the
 * iterations of each rank, maximum over the ranks.  The result is checked
 * on rank 0 against a serial replay of the same computation over the
 * hierarchy's groups (gathered once, untimed) for a sample of elements.
 *
 * Output: {"benchmark": "hvec", "nranks": P, "runs": [{"name": "H_topo",
 *          "config": "4,12,2,2,6", "levels": [{"comms": c, "sizes": [...]}],
 *          "points": [{"size": s, "time_s": t}]}], "verified": ...}
 */
#include "common.h"
#include <weft_mpi.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 32
#define MAX_CONFS 8
#define MAX_LEVELS 32
#define MAX_ITERS 1000
#define SAMPLES 9

struct opts {
    const char *json;
    long        sizes[MAX_SIZES];
    int         nsizes, topo;
    long        iters, by_node;    /* by_node: 0 or the nodes of a round-robin numbering */
    int         nconfs;
    int         conf[MAX_CONFS][MAX_LEVELS];
    int         conflen[MAX_CONFS];
};

struct hier {
    char     name[32], config[256], type[MAX_LEVELS][32];
    int      nlevels, maxmembers;
    MPI_Comm lv[MAX_LEVELS];       /* top first; MPI_COMM_NULL where not a member */
};

static int rank, nranks;

static float init_at(int r, long i) { return (float)((r * 7 + i * 3) % 11) / 11.0f; }
static float lvec_at(int r, long i) { return 1.0f + (float)((r * 3 + i) % 5) * 0.25f; }

/* "3,4,2,3,8/6,2,2,3,8": configurations separated by '/'. */
static int parse_confs(const char *text, struct opts *o)
{
    char  buf[1024], *save = NULL;
    long  v[MAX_LEVELS];

    snprintf(buf, sizeof(buf), "%s", text);
    o->nconfs = 0;
    for (char *t = strtok_r(buf, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
        int k = bench_parse_positive_list(t, v, MAX_LEVELS);
        if (k < 1 || o->nconfs == MAX_CONFS)
            return 0;
        for (int i = 0; i < k; i++)
            o->conf[o->nconfs][i] = (int)v[i];
        o->conflen[o->nconfs++] = k;
    }
    return 1;
}

static int parse(int argc, char **argv, struct opts *o)
{
    const char *sizes = "1,16,256,4096", *confs = NULL;
    int no_topo = 0;
    const struct bench_opt opts[] = {
        {"--json", .text = &o->json},     {"--sizes", .text = &sizes},
        {"--confs", .text = &confs},      {"--iters", .value = &o->iters},
        {"--by-node", .value = &o->by_node}, {"--no-topo", .flag = &no_topo},
        {NULL},
    };

    *o = (struct opts){.topo = 1, .iters = 10};
    if (bench_parse_opts(argc, argv, opts) != 0 || o->iters > MAX_ITERS)
        return 0;
    o->topo = !no_topo;
    if ((o->nsizes = bench_parse_positive_list(sizes, o->sizes, MAX_SIZES)) < 1 ||
        (confs != NULL && !parse_confs(confs, o)))
        return 0;
    return o->json && (o->topo || o->nconfs);
}

/* The paper's loop: the roots communicator of every split, from
 * MPI_COMM_WORLD down to single ranks.  Where a split leaves every rank of
 * a communicator out (ranks bound no deeper), that communicator is the
 * bottom level.  0 and a message when some ranks of a communicator go
 * deeper than others (Algorithm 5 needs every rank at the same depth).
 * Every rank reaches the same collective calls of MPI_COMM_WORLD, failed
 * or not. */
static int build_topo(struct hier *h, char *why, size_t wlen)
{
    MPI_Comm cur;
    int      len = 0, bad = 0;

    snprintf(h->name, sizeof(h->name), "H_topo");
    MPI_Comm_dup(MPI_COMM_WORLD, &cur);
    h->nlevels = 0;
    while (cur != MPI_COMM_NULL) {
        MPI_Comm    child, roots;
        int         size, has, any, all, num = 0, idx;
        const char *type = "bottom";
        MPI_Comm_size(cur, &size);
        if (size == 1) {
            MPI_Comm_free(&cur);
            break;
        }
        if (h->nlevels == MAX_LEVELS || WEFT_Comm_hsplit_with_roots(cur, MPI_INFO_NULL, &child,
                                                                     &roots) != MPI_SUCCESS) {
            snprintf(why, wlen, "WEFT_Comm_hsplit_with_roots: %s", weft_last_error());
            bad = 1;
            break;
        }
        has = child != MPI_COMM_NULL;
        MPI_Allreduce(&has, &any, 1, MPI_INT, MPI_LOR, cur);
        MPI_Allreduce(&has, &all, 1, MPI_INT, MPI_LAND, cur);
        if (any && !all) {
            snprintf(why, wlen, "a level leaves some ranks out: bind every rank to one core");
            bad = 1;
            break;
        }
        if (has)
            WEFT_Comm_get_hlevel_info(child, &num, &idx, &type);
        snprintf(h->type[h->nlevels], sizeof(h->type[0]), "%s", type);
        if (!any) {
            h->lv[h->nlevels++] = cur;   /* bottom: the whole communicator */
            break;
        }
        h->lv[h->nlevels++] = roots;
        MPI_Comm_free(&cur);
        cur = child;
    }
    /* every rank must succeed and see the same number of levels */
    int range[3] = {h->nlevels, -h->nlevels, bad};
    MPI_Allreduce(MPI_IN_PLACE, range, 3, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (range[2])
        return 0;
    if (range[0] != -range[1]) {
        snprintf(why, wlen, "ranks see %d to %d levels: bind every rank to one core", -range[1],
                 range[0]);
        return 0;
    }
    for (int l = 0; l < h->nlevels; l++) {
        int s = 0;
        if (h->lv[l] != MPI_COMM_NULL)
            MPI_Comm_size(h->lv[l], &s);
        MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        len += snprintf(h->config + len, sizeof(h->config) - (size_t)len, "%s%d", l ? "," : "", s);
    }
    return 1;
}

/* H_conf: fanout[0] ranks at the top, ..., bottom groups of fanout[n-1]
 * consecutive numbers (this rank's number: rank, or its round-robin
 * number over by_node nodes). */
static int build_conf(struct hier *h, const int *fanout, int n, int index, long by_node, char *why,
                      size_t wlen)
{
    long long prod = 1, stride = nranks, num = rank;
    int       len = 0;

    if (by_node) {
        long per = nranks / by_node;
        num = (long long)(rank % per) * by_node + rank / per;
    }

    for (int l = 0; l < n; l++)
        prod *= fanout[l];
    snprintf(h->name, sizeof(h->name), "H_conf%d", index);
    for (int l = 0; l < n; l++)
        len += snprintf(h->config + len, sizeof(h->config) - (size_t)len, "%s%d", l ? "," : "",
                        fanout[l]);
    if (prod != nranks) {
        snprintf(why, wlen, "configuration %s: the sizes multiply to %lld, there are %d ranks",
                 h->config, prod, nranks);
        return 0;
    }
    h->nlevels = n;
    for (int l = 0; l < n; l++) {
        long long span = stride;
        stride /= fanout[l];
        MPI_Comm_split(MPI_COMM_WORLD, num % stride == 0 ? (int)(num / span) : MPI_UNDEFINED,
                       (int)num, &h->lv[l]);
        snprintf(h->type[l], sizeof(h->type[0]), "conf");
    }
    return 1;
}

static void hier_free(struct hier *h)
{
    for (int l = 0; l < h->nlevels; l++)
        if (h->lv[l] != MPI_COMM_NULL)
            MPI_Comm_free(&h->lv[l]);
}

/* lres <- func(temp[0..nm), lvec): the sum of the gathered vectors over lvec. */
static void func(const float *temp, int nm, const float *lvec, float *lres, long size)
{
    for (long i = 0; i < size; i++) {
        float s = 0;
        for (int m = 0; m < nm; m++)
            s += temp[(long)m * size + i];
        lres[i] = s / lvec[i];
    }
}

/* Algorithm 5 over h: levels bottom up. */
static void algorithm5(const struct hier *h, float *lres, float *temp, const float *lvec, long size)
{
    for (int l = h->nlevels - 1; l >= 0; l--) {
        int r, nm;
        if (h->lv[l] == MPI_COMM_NULL)
            continue;
        MPI_Comm_rank(h->lv[l], &r);
        MPI_Comm_size(h->lv[l], &nm);
        MPI_Gather(lres, (int)size, MPI_FLOAT, temp, (int)size, MPI_FLOAT, 0, h->lv[l]);
        if (r == 0)
            func(temp, nm, lvec, lres, size);
    }
}

/* parent[l * P + r]: the world rank of rank 0 of r's communicator at level
 * l, or -1; on rank 0 only (NULL elsewhere).  Untimed. */
static int *structure(struct hier *h)
{
    int  mine[MAX_LEVELS], *all = NULL;
    int  maxm = 0;

    for (int l = 0; l < h->nlevels; l++) {
        mine[l] = -1;
        if (h->lv[l] != MPI_COMM_NULL) {
            int s, r0 = rank;
            MPI_Comm_size(h->lv[l], &s);
            maxm = s > maxm ? s : maxm;
            MPI_Bcast(&r0, 1, MPI_INT, 0, h->lv[l]);
            mine[l] = r0;
        }
    }
    h->maxmembers = maxm;
    if (rank == 0)
        all = malloc(sizeof(int) * (size_t)h->nlevels * (size_t)nranks);
    int *byrank = rank == 0 ? malloc(sizeof(int) * (size_t)h->nlevels * (size_t)nranks) : NULL;
    MPI_Gather(mine, h->nlevels, MPI_INT, byrank, h->nlevels, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 0; r < nranks; r++)
            for (int l = 0; l < h->nlevels; l++)
                all[l * nranks + r] = byrank[r * h->nlevels + l];
        free(byrank);
    }
    return all;
}

/* Rank 0: the result of the replay for element i equals got (relative
 * tolerance of float sums). */
static int replay_ok(const struct hier *h, const int *parent, long i, float got)
{
    float *val = malloc(sizeof(float) * (size_t)nranks);
    int    ok;

    for (int r = 0; r < nranks; r++)
        val[r] = init_at(r, i);
    for (int l = h->nlevels - 1; l >= 0; l--) {
        const int *par = parent + (long)l * nranks;
        for (int root = 0; root < nranks; root++) {
            if (par[root] != root)
                continue;
            float s = 0;
            for (int r = 0; r < nranks; r++)   /* members in rank order, as MPI_Gather */
                if (par[r] == root)
                    s += val[r];
            val[root] = s / lvec_at(root, i);
        }
    }
    ok = fabsf(val[0] - got) <= 1e-5f * fmaxf(1.0f, fabsf(val[0]));
    if (!ok)
        fprintf(stderr, "weft_bench_hvec: element %ld: got %.9g, the replay gives %.9g\n", i,
                (double)got, (double)val[0]);
    free(val);
    return ok;
}

/* Levels' communicator counts and sizes, as JSON (rank 0). */
static void levels_json(FILE *f, const struct hier *h, const int *parent)
{
    int *count = calloc((size_t)nranks, sizeof(int));
    fprintf(f, ", \"levels\": [");
    for (int l = 0; l < h->nlevels; l++) {
        const int *par = parent + (long)l * nranks;
        int        comms = 0, first = 1;
        memset(count, 0, sizeof(int) * (size_t)nranks);
        for (int r = 0; r < nranks; r++)
            if (par[r] >= 0)
                count[par[r]]++;
        for (int r = 0; r < nranks; r++)
            comms += count[r] > 0;
        fprintf(f, "%s{\"type\": \"%s\", \"comms\": %d, \"sizes\": [", l ? ", " : "", h->type[l],
                comms);
        for (int s = nranks; s >= 1; s--) {   /* distinct sizes, largest first */
            int seen = 0;
            for (int r = 0; r < nranks && !seen; r++)
                seen = count[r] == s;
            if (seen) {
                fprintf(f, "%s%d", first ? "" : ", ", s);
                first = 0;
            }
        }
        fprintf(f, "]}");
    }
    fprintf(f, "]");
    free(count);
}

static int run(struct hier *h, const struct opts *o, FILE *f, int first)
{
    int   *parent = structure(h);
    long   maxsize = 0;
    int    ok = 1;
    double times[MAX_ITERS];

    for (int s = 0; s < o->nsizes; s++)
        maxsize = o->sizes[s] > maxsize ? o->sizes[s] : maxsize;
    float *lres = malloc(sizeof(float) * (size_t)maxsize);
    float *lvec = malloc(sizeof(float) * (size_t)maxsize);
    float *temp = malloc(sizeof(float) * (size_t)maxsize * (size_t)(h->maxmembers ? h->maxmembers : 1));
    if (f) {
        fprintf(f, "%s\n  {\"name\": \"%s\", \"config\": \"%s\"", first ? "" : ",", h->name,
                h->config);
        levels_json(f, h, parent);
        fprintf(f, ", \"points\": [");
    }
    for (int s = 0; s < o->nsizes; s++) {
        long   size = o->sizes[s];
        double worst;
        for (long i = 0; i < size; i++)
            lvec[i] = lvec_at(rank, i);
        for (long it = -1; it < o->iters; it++) {
            for (long i = 0; i < size; i++)
                lres[i] = init_at(rank, i);
            MPI_Barrier(MPI_COMM_WORLD);
            double t = MPI_Wtime();
            algorithm5(h, lres, temp, lvec, size);
            if (it >= 0)
                times[it] = MPI_Wtime() - t;
        }
        worst = bench_worst_median(times, (int)o->iters);
        if (rank == 0) {
            for (long k = 0; k < SAMPLES; k++) {
                long i = k < SAMPLES - 1 ? k : size - 1;
                if (i < size)
                    ok &= replay_ok(h, parent, i, lres[i]);
            }
            fprintf(f, "%s{\"size\": %ld, \"time_s\": %.9e}", s ? ", " : "", size, worst);
            printf("hvec %-8s (%s) %8ld floats: %.3e s %s\n", h->name, h->config, size, worst,
                   ok ? "ok" : "WRONG");
        }
    }
    if (f)
        fprintf(f, "]}");
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(lres);
    free(lvec);
    free(temp);
    free(parent);
    return ok;
}

int main(int argc, char **argv)
{
    struct opts o;
    struct hier h;
    char        why[512], lib[256];
    int         ok = 1, runs = 0;

    bench_mpi_start(&argc, &argv, &rank, &nranks);
    if (!parse(argc, argv, &o)) {
        if (rank == 0)
            fprintf(stderr, "usage: weft_bench_hvec --json FILE [--sizes N1,N2,...] "
                            "[--confs G1,G2,.../G1,G2,...] [--no-topo] [--iters N (<= %d)] "
                            "[--by-node N]\n", MAX_ITERS);
        MPI_Finalize();
        return 2;
    }
    if (o.by_node && nranks % o.by_node) {
        if (rank == 0)
            fprintf(stderr, "weft_bench_hvec: --by-node %ld does not divide the %d ranks\n",
                    o.by_node, nranks);
        MPI_Finalize();
        return 2;
    }
    FILE *f = rank == 0 ? bench_json_open("weft_bench_hvec", o.json) : NULL;
    bench_mpi_library(lib, sizeof(lib));
    if (f)
        fprintf(f, "{\"benchmark\": \"hvec\", \"nranks\": %d, \"mpi\": \"%.120s\", \"iters\": %ld, "
                   "\"conf_by_node\": %ld, \"runs\": [", nranks, lib, o.iters, o.by_node);
    for (int c = -1; c < o.nconfs; c++) {
        int built;
        why[0] = '\0';
        if (c < 0 && !o.topo)
            continue;
        built = c < 0 ? build_topo(&h, why, sizeof(why))
                      : build_conf(&h, o.conf[c], o.conflen[c], c + 1, o.by_node, why,
                                   sizeof(why));
        MPI_Allreduce(MPI_IN_PLACE, &built, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        if (!built) {
            if (rank == 0)
                fprintf(stderr, "weft_bench_hvec: %s\n", why[0] ? why : "failed on another rank");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        ok &= run(&h, &o, f, runs++ == 0);
        hier_free(&h);
    }
    if (f) {
        fprintf(f, "\n], \"verified\": %s}\n", ok ? "true" : "false");
        bench_json_close(f);
    }
    MPI_Finalize();
    return ok ? 0 : 1;
}
