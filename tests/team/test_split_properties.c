/* Properties of the hierarchical split over many random machines and
 * bindings (default 60; argv[1] overrides, argv[2] is the seed):
 *
 *  - the new communicators partition the parent: every rank of the parent
 *    is in exactly one of them or has MPI_COMM_NULL, and each is a strict
 *    subset of the parent;
 *  - who is grouped with whom, and who gets MPI_COMM_NULL, match a
 *    reference computed here with hwloc's own queries (within a node: the
 *    deepest object covering every binding, then which of its children
 *    holds each binding; across nodes of a flat network: one group per node);
 *  - num_comms counts the groups and index numbers them 0..num-1;
 *  - the roots communicator holds exactly the rank 0s of the new
 *    communicators, in one communicator;
 *  - the recursion ends: every rank reaches MPI_COMM_NULL within the depth
 *    of the machine plus its network.
 * Rank 0 draws each machine (synthetic string, node of every rank, binding
 * of every rank, sometimes a topology.conf) and every rank receives it
 * through info keys of the first split. */
#include <weft_mpi.h>
#include <hwloc.h>
#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_RANKS  64
#define MAX_STEPS  24
#define TEXT       2048

typedef struct {
    char synthetic[256];
    char nodes[TEXT];
    char binds[TEXT];
    char conf[256];             /* path, "" for a flat network */
    int  node_of[MAX_RANKS];
    unsigned long cpus[MAX_RANKS];  /* each rank's binding as a PU mask */
} machine_t;

static unsigned rnd(unsigned *seed, unsigned n)
{
    *seed = *seed * 1103515245u + 12345u;
    return (*seed >> 16) % n;
}

static void append(char *buf, const char *fmt, int value1, int value2)
{
    size_t len = strlen(buf);
    snprintf(buf + len, TEXT - len, fmt, value1, value2);
}

/* A random node: a subset of the usual levels with small arities, a NUMA
 * node attached somewhere (or only at the top), at most 16 PUs. */
static void draw_synthetic(unsigned *seed, char *out, size_t len)
{
    static const char *const levels[] = {"pack", "group", "l3", "l2", "l1", "core", "pu"};
    int pus = 1, numa_at = (int)rnd(seed, 8);

    out[0] = '\0';
    for (int i = 0; i < 7; i++) {
        if (i < 6 && rnd(seed, 3) == 0)
            continue;
        int arity = 1 + (int)rnd(seed, 3);
        while (pus * arity > 16)
            arity--;
        pus *= arity;
        size_t n = strlen(out);
        snprintf(out + n, len - n, "%s%s:%d%s", n ? " " : "", levels[i], arity,
                 i == numa_at && i < 6 ? " [numa]" : "");
    }
}

static void draw_machine(unsigned *seed, int np, int iter, machine_t *m)
{
    hwloc_topology_t topo;
    static const hwloc_obj_type_t kinds[] = {HWLOC_OBJ_PU, HWLOC_OBJ_CORE, HWLOC_OBJ_L2CACHE,
                                             HWLOC_OBJ_L3CACHE, HWLOC_OBJ_PACKAGE,
                                             HWLOC_OBJ_NUMANODE, HWLOC_OBJ_L1CACHE};
    static const char *const names[] = {"pu", "core", "l2", "l3", "package", "numa", "l1"};

    memset(m, 0, sizeof(*m));
    draw_synthetic(seed, m->synthetic, sizeof(m->synthetic));
    hwloc_topology_init(&topo);
    hwloc_topology_set_synthetic(topo, m->synthetic);
    hwloc_topology_load(topo);
    int nnodes = 1 + (int)rnd(seed, 4);
    for (int r = 0; r < np; r++) {
        m->node_of[r] = (int)rnd(seed, (unsigned)nnodes);
        append(m->nodes, r ? ",n%d" : "n%d", m->node_of[r], 0);
        hwloc_const_bitmap_t set = hwloc_topology_get_topology_cpuset(topo);
        unsigned k = rnd(seed, 9);
        if (k >= 7) {
            append(m->binds, r ? ",unbound" : "unbound", 0, 0);
        } else {
            int count = hwloc_get_nbobjs_by_type(topo, kinds[k]);
            if (count <= 0) {
                k = 0;
                count = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
            }
            int    idx = (int)rnd(seed, (unsigned)count);
            size_t len = strlen(m->binds);
            snprintf(m->binds + len, TEXT - len, "%s%s:%d", r ? "," : "", names[k], idx);
            set = hwloc_get_obj_by_type(topo, kinds[k], (unsigned)idx)->cpuset;
        }
        m->cpus[r] = hwloc_bitmap_to_ulong(set);
    }
    hwloc_topology_destroy(topo);
    /* Half of the machines get a two-level network: a spine and one or two
     * leaf switches sharing the nodes. */
    if (rnd(seed, 2)) {
        snprintf(m->conf, sizeof(m->conf), "/tmp/weft-test-props-%d-%d.conf", (int)getpid(), iter);
        FILE *f = fopen(m->conf, "w");
        int   leaves = nnodes > 1 ? 1 + (int)rnd(seed, 2) : 1, cut = (nnodes + 1) / 2;
        fprintf(f, "SwitchName=spine Switches=leaf[0-%d]\n", leaves - 1);
        if (leaves == 1)
            fprintf(f, "SwitchName=leaf0 Nodes=n[0-%d]\n", nnodes - 1);
        else
            fprintf(f, "SwitchName=leaf0 Nodes=n[0-%d]\nSwitchName=leaf1 Nodes=n[%d-%d]\n",
                    cut - 1, cut, nnodes - 1);
        fclose(f);
    }
}

/* Reference: the group of rank r inside parent members[0..n) (world
 * ranks), as a key; -1 for MPI_COMM_NULL. */
static long reference_group(hwloc_topology_t topo, const machine_t *m, const int *members, int n,
                            int r)
{
    int multi = 0;
    for (int i = 0; i < n; i++)
        multi |= m->node_of[members[i]] != m->node_of[members[0]];
    if (multi)
        return m->node_of[r];
    hwloc_bitmap_t all = hwloc_bitmap_alloc(), mine = hwloc_bitmap_alloc();
    for (int i = 0; i < n; i++) {
        hwloc_bitmap_from_ulong(mine, m->cpus[members[i]]);
        hwloc_bitmap_or(all, all, mine);
    }
    hwloc_bitmap_from_ulong(mine, m->cpus[r]);
    hwloc_obj_t anc = hwloc_get_obj_covering_cpuset(topo, all);
    long        key = -1;
    for (hwloc_obj_t c = anc->first_child; c; c = c->next_sibling)
        if (hwloc_bitmap_isincluded(mine, c->cpuset))
            key = c->logical_index;
    hwloc_bitmap_free(all);
    hwloc_bitmap_free(mine);
    return key;
}

static void world_members(MPI_Comm comm, int *out, int *n)
{
    MPI_Group g, w;
    int       in[MAX_RANKS];

    MPI_Comm_size(comm, n);
    for (int i = 0; i < *n; i++)
        in[i] = i;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    MPI_Group_translate_ranks(g, *n, in, w, out);
    MPI_Group_free(&g);
    MPI_Group_free(&w);
}

/* What each rank of a parent reports about the split. */
typedef struct {
    int group;      /* world rank of the new communicator's rank 0, -1 for none */
    int size, num, index, in_roots, roots_first, roots_size;
} report_t;

static void check_step(const machine_t *m, hwloc_topology_t topo, MPI_Comm parent, MPI_Comm nc,
                       MPI_Comm rc, int iter, int step)
{
    int      members[MAX_RANKS], n, me, nmembers;
    report_t mine = {.group = -1, .roots_first = -1}, all[MAX_RANKS];

    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    world_members(parent, members, &n);
    if (nc != MPI_COMM_NULL) {
        int         ncm[MAX_RANKS];
        const char *type;
        world_members(nc, ncm, &nmembers);
        mine.group = ncm[0];
        mine.size = nmembers;
        WEFT_Comm_get_hlevel_info(nc, &mine.num, &mine.index, &type);
    }
    if (rc != MPI_COMM_NULL) {
        int rcm[MAX_RANKS];
        world_members(rc, rcm, &nmembers);
        mine.in_roots = 1;
        mine.roots_first = rcm[0];
        mine.roots_size = nmembers;
    }
    MPI_Allgather(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine), MPI_BYTE, parent);

    int groups = 0, roots = 0;
    for (int i = 0; i < n; i++) {
        const report_t *a = &all[i];
        int             r = members[i];
        if (a->group < 0) {
            CHECK(!a->in_roots, "iter %d step %d: p%d has no communicator but is a root", iter,
                  step, r);
            continue;
        }
        int count = 0;
        for (int j = 0; j < n; j++)
            count += all[j].group == a->group;
        CHECK(count == a->size, "iter %d step %d: group of p%d: %d ranks report it, size %d", iter,
              step, a->group, count, a->size);
        CHECK(a->size < n, "iter %d step %d: p%d's communicator is not a strict subset", iter,
              step, r);
        CHECK(a->in_roots == (a->group == r), "iter %d step %d: p%d root membership wrong", iter,
              step, r);
        if (a->group == r) {
            groups++;
            roots++;
            CHECK(a->roots_first == all[0].roots_first || all[0].roots_first < 0,
                  "iter %d step %d: roots split in several communicators", iter, step);
        }
    }
    for (int i = 0; i < n; i++) {
        const report_t *a = &all[i];
        if (a->group < 0)
            continue;
        CHECK(a->num == groups, "iter %d step %d: num_comms %d, want %d", iter, step, a->num,
              groups);
        CHECK(a->index >= 0 && a->index < groups, "iter %d step %d: index %d", iter, step, a->index);
        if (a->in_roots)
            CHECK(a->roots_size == roots, "iter %d step %d: roots communicator has %d ranks, want %d",
                  iter, step, a->roots_size, roots);
        for (int j = 0; j < n; j++)
            if (all[j].group >= 0 && all[j].group != a->group)
                CHECK(all[j].index != a->index, "iter %d step %d: two groups share index %d", iter,
                      step, a->index);
    }
    /* The reference grouping (flat network only: switches change the top). */
    if (m->conf[0])
        return;
    for (int i = 0; i < n; i++) {
        long ki = reference_group(topo, m, members, n, members[i]);
        CHECK((ki < 0) == (all[i].group < 0), "iter %d step %d: p%d %s MPI_COMM_NULL (machine '%s', "
              "binds %s)", iter, step, members[i], ki < 0 ? "should get" : "should not get",
              m->synthetic, m->binds);
        for (int j = 0; j < i && ki >= 0; j++) {
            long kj = reference_group(topo, m, members, n, members[j]);
            CHECK((ki == kj) == (all[i].group == all[j].group),
                  "iter %d step %d: p%d and p%d grouping differs from the reference (machine "
                  "'%s', binds %s)", iter, step, members[i], members[j], m->synthetic, m->binds);
        }
    }
}

int main(int argc, char **argv)
{
    int      np, me, iters = argc > 1 ? atoi(argv[1]) : 60;
    unsigned seed = argc > 2 ? (unsigned)atoi(argv[2]) : 20181127u;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    check_rank = me;
    if (np > MAX_RANKS)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int iter = 0; iter < iters; iter++) {
        machine_t m;
        if (me == 0)
            draw_machine(&seed, np, iter, &m);
        MPI_Bcast(&m, sizeof(m), MPI_BYTE, 0, MPI_COMM_WORLD);

        hwloc_topology_t topo;
        hwloc_topology_init(&topo);
        hwloc_topology_set_synthetic(topo, m.synthetic);
        hwloc_topology_load(topo);
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "weft_topo_synthetic", m.synthetic);
        MPI_Info_set(info, "weft_topo_node", m.nodes);
        MPI_Info_set(info, "weft_topo_bind", m.binds);
        if (m.conf[0])
            MPI_Info_set(info, "weft_topo_slurm_conf", m.conf);

        MPI_Comm comm = MPI_COMM_WORLD;
        int      step = 0;
        while (comm != MPI_COMM_NULL && step < MAX_STEPS) {
            MPI_Comm nc, rc;
            int code = WEFT_Comm_hsplit_with_roots(comm, step == 0 ? info : MPI_INFO_NULL, &nc, &rc);
            CHECK(code == MPI_SUCCESS, "iter %d: %s", iter, weft_last_error());
            if (code != MPI_SUCCESS)
                break;
            check_step(&m, topo, comm, nc, rc, iter, ++step);
            if (rc != MPI_COMM_NULL)
                MPI_Comm_free(&rc);
            if (comm != MPI_COMM_WORLD)
                MPI_Comm_free(&comm);
            comm = nc;
        }
        CHECK(comm == MPI_COMM_NULL, "iter %d: no MPI_COMM_NULL after %d steps", iter, step);
        if (comm != MPI_COMM_NULL && comm != MPI_COMM_WORLD)
            MPI_Comm_free(&comm);
        MPI_Info_free(&info);
        hwloc_topology_destroy(topo);
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0 && m.conf[0])
            unlink(m.conf);
        MPI_Allreduce(MPI_IN_PLACE, &check_failures, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (check_failures)
            break;  /* one machine's failures are enough to read */
    }
    if (me == 0 && check_failures)
        fprintf(stderr, "check(s) failed\n");
    MPI_Finalize();
    return check_failures != 0;
}
