/* topo_bcast.c: communicators that follow the machine, and a broadcast
 * that goes down them.
 *
 * An MPI program (no weft context is needed for this part of weft) splits
 * MPI_COMM_WORLD level by level along the hardware -- nodes, then packages,
 * NUMA nodes, caches, cores, as far as each rank's binding goes -- with
 * WEFT_Comm_hsplit_with_roots, and prints the levels each rank went
 * through.  Then it broadcasts with WEFT_Hbcast, which sends once per
 * level, top down, and checks the result against MPI_Bcast.
 *
 *   mpicc topo_bcast.c $(pkg-config --cflags --libs weft) -o topo_bcast
 *   mpirun -np 4 --bind-to core ./topo_bcast
 *
 * An unbound rank sees no level inside its node.  To try the program on a
 * machine it does not run on, describe one (docs/topology.md), e.g. two
 * nodes of two packages of two cores, each rank bound to a core:
 *
 *   mpirun -np 8 -x WEFT_TOPO_SYNTHETIC="pack:2 core:2 pu:1" \
 *          -x WEFT_TOPO_NODE=block:node%d:4 -x WEFT_TOPO_BIND=by-core ./topo_bcast
 */
#include <weft_mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COUNT 1000  /* doubles broadcast */
#define LINE  512   /* bytes of one rank's description of its levels */

/* The WEFT_ calls return MPI error classes; weft_last_error() says why. */
static void check(int rc, const char *call)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "%s: MPI error class %d (%s)\n", call, rc, weft_last_error());
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
    }
}
#define TRY(call) check((call), #call)

int main(int argc, char **argv)
{
    int rank, n;
    char line[LINE] = "";

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);

    /* Walk down: each split gives the next level holding this rank, until
     * MPI_COMM_NULL (the bottom of this rank's binding).  The roots
     * communicator joins the first rank of every group the split made: what
     * a broadcast goes through from one level to the next.  It is not
     * MPI_COMM_NULL on those ranks only, which the line marks with '*'.
     * (The hierarchical collectives build their own, so it is freed here.) */
    int len = snprintf(line, LINE, "rank %d:", rank), levels = 0;
    MPI_Comm comm = MPI_COMM_WORLD;
    while (comm != MPI_COMM_NULL) {
        MPI_Comm level, roots;
        int num, index;
        const char *type;

        TRY(WEFT_Comm_hsplit_with_roots(comm, MPI_INFO_NULL, &level, &roots));
        if (comm != MPI_COMM_WORLD)
            MPI_Comm_free(&comm);
        if (level != MPI_COMM_NULL) {
            int size;
            TRY(WEFT_Comm_get_hlevel_info(level, &num, &index, &type));
            MPI_Comm_size(level, &size);
            len += snprintf(line + len, (size_t)(LINE - len), "%s %s %d/%d (%d rank%s)%s",
                            levels ? " >" : "", type, index, num, size, size > 1 ? "s" : "",
                            roots != MPI_COMM_NULL ? "*" : "");
            if (len >= LINE)
                len = LINE - 1;
            levels++;
        }
        if (roots != MPI_COMM_NULL)
            MPI_Comm_free(&roots);
        comm = level;
    }
    if (levels == 0)
        snprintf(line + len, (size_t)(LINE - len), " no level below the whole job");

    /* Rank 0 prints every rank's line, in rank order. */
    char *all = rank == 0 ? malloc((size_t)n * LINE) : NULL;
    if (rank == 0 && all == NULL)
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
    MPI_Gather(line, LINE, MPI_CHAR, all, LINE, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("Levels of each rank, \"type index/count\"; * where the rank is the root\n"
               "of its group, through which a broadcast enters the group:\n");
        for (int r = 0; r < n; r++)
            printf("%s\n", all + (size_t)r * LINE);
        free(all);
    }

    /* Broadcast from the first and from the last rank: WEFT_Hbcast takes
     * the arguments of MPI_Bcast and must give the same result. */
    int wrong = 0;
    static double buf[COUNT], ref[COUNT];
    int from[2] = {0, n - 1};
    for (int k = 0; k < 2; k++) {
        int root = from[k];
        for (int i = 0; i < COUNT; i++)
            buf[i] = ref[i] = rank == root ? root * 1e6 + i : -1.0;
        TRY(WEFT_Hbcast(buf, COUNT, MPI_DOUBLE, root, MPI_COMM_WORLD));
        MPI_Bcast(ref, COUNT, MPI_DOUBLE, root, MPI_COMM_WORLD);
        if (memcmp(buf, ref, sizeof(buf)) != 0)
            wrong = 1;
    }

    /* One verdict for the job: the program fails if any rank saw a difference. */
    int any_wrong;
    MPI_Allreduce(&wrong, &any_wrong, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("WEFT_Hbcast on %d ranks, %d level(s) below the job on rank 0: %s\n", n,
               levels, any_wrong ? "DIFFERS from MPI_Bcast" : "same as MPI_Bcast");
    MPI_Finalize();
    return any_wrong ? EXIT_FAILURE : EXIT_SUCCESS;
}
