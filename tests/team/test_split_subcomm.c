/* A communicator made by MPI_Comm_split sees its ranks where the job put
 * them: the environment's WEFT_TOPO_NODE and WEFT_TOPO_BIND are read at
 * each rank's MPI_COMM_WORLD rank, while info keys describe the
 * communicator they come with.  Run on 4 ranks with
 * WEFT_TOPO_NODE=block:n%d:2 (ranks 0, 1 on n0; 2, 3 on n1),
 * WEFT_TOPO_BIND=by-core and a machine of 2 cores. */
#include "check.h"

#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <weft_mpi.h>

/* The first level of comm's hierarchy on this rank: its type and size. */
static void first_level(MPI_Comm comm, MPI_Info info, const char **type, int *size)
{
    MPI_Comm level;
    int      rank, num, index;

    MPI_Comm_rank(comm, &rank);
    CHECK(WEFT_Comm_split_type(comm, WEFT_COMM_TYPE_PHYSICAL_TOPOLOGY, rank, info, &level) ==
              MPI_SUCCESS,
          "WEFT_Comm_split_type");
    *type = "none";
    *size = 0;
    if (level == MPI_COMM_NULL)
        return;
    WEFT_Comm_get_hlevel_info(level, &num, &index, type);
    MPI_Comm_size(level, size);
    MPI_Comm_free(&level);
}

int main(int argc, char **argv)
{
    MPI_Comm    pairs, halves;
    MPI_Info    info;
    const char *type;
    int         rank, size, failures;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check_rank = rank;
    if (size != 4) {
        if (rank == 0)
            fprintf(stderr, "test_split_subcomm: run on 4 ranks\n");
        MPI_Finalize();
        return 2;
    }

    /* {0, 2} and {1, 3}: one rank of each node; the first split is by
     * node, and each rank is alone on its node */
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &pairs);
    first_level(pairs, MPI_INFO_NULL, &type, &size);
    CHECK_STR(type, "Machine");
    CHECK(size == 1, "alone on its node within {%d, %d}, got a level of %d", rank % 2,
          rank % 2 + 2, size);

    /* {0, 1} and {2, 3}: both of one node, each on the core the job gives
     * it (world ranks 2 and 3 are cores 0 and 1 of n1, not by their rank
     * in the half): the first split is by core */
    MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &halves);
    first_level(halves, MPI_INFO_NULL, &type, &size);
    CHECK_STR(type, "Core");
    CHECK(size == 1, "alone on its core, got a level of %d", size);

    /* info keys describe the communicator itself: on {0, 2} and {1, 3},
     * block:n%d:2 puts both ranks of the pair on n0, by their rank in it */
    MPI_Info_create(&info);
    MPI_Info_set(info, "weft_topo_node", "block:n%d:2");
    first_level(pairs, info, &type, &size);
    CHECK_STR(type, "Core");
    MPI_Info_free(&info);

    MPI_Comm_free(&pairs);
    MPI_Comm_free(&halves);
    MPI_Allreduce(&check_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_split_subcomm: %s\n", failures ? "FAILED" : "ok");
    MPI_Finalize();
    return failures ? 1 : 0;
}
