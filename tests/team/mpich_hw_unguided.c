/* The peer of weft's split in MPICH 4: the loop of the paper with
 * MPI_COMM_TYPE_HW_UNGUIDED (MPI 4.0), printing what every step gives.
 * Plain MPI, built with mpicc.mpich; compared with weft_topo_dump by
 * compare_mpich.sh.  One line per rank per step, from rank 0:
 *   step S rank R: TYPE [members as world ranks]   or   step S rank R: null */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Comm comm = MPI_COMM_WORLD, next;
    int      me, np, step = 0, active = 1;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int *members = malloc((size_t)np * sizeof(int)), *all = malloc((size_t)np * np * sizeof(int));
    char type[64], *types = malloc((size_t)np * sizeof(type));
    while (active && step < 16) {
        step++;
        next = MPI_COMM_NULL;
        if (comm != MPI_COMM_NULL)
            MPI_Comm_split_type(comm, MPI_COMM_TYPE_HW_UNGUIDED, me, MPI_INFO_NULL, &next);
        for (int i = 0; i < np; i++)
            members[i] = -1;
        snprintf(type, sizeof(type), "null");
        if (next != MPI_COMM_NULL) {
            MPI_Group g, w;
            MPI_Info  info;
            int       n, flag;
            MPI_Comm_size(next, &n);
            int *in = malloc((size_t)n * sizeof(int));
            for (int i = 0; i < n; i++)
                in[i] = i;
            MPI_Comm_group(next, &g);
            MPI_Comm_group(MPI_COMM_WORLD, &w);
            MPI_Group_translate_ranks(g, n, in, w, members);
            MPI_Group_free(&g);
            MPI_Group_free(&w);
            free(in);
            MPI_Comm_get_info(next, &info);
            MPI_Info_get(info, "mpi_hw_resource_type", sizeof(type) - 1, type, &flag);
            if (!flag)
                snprintf(type, sizeof(type), "(no type)");
            MPI_Info_free(&info);
        }
        MPI_Gather(members, np, MPI_INT, all, np, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Gather(type, sizeof(type), MPI_CHAR, types, sizeof(type), MPI_CHAR, 0, MPI_COMM_WORLD);
        if (me == 0)
            for (int r = 0; r < np; r++) {
                printf("step %d rank %d: %s", step, r, types + r * sizeof(type));
                for (int i = 0; i < np && all[r * np + i] >= 0; i++)
                    printf("%s%d", i ? "," : " [", all[r * np + i]);
                printf("%s\n", all[r * np] >= 0 ? "]" : "");
            }
        if (comm != MPI_COMM_WORLD && comm != MPI_COMM_NULL)
            MPI_Comm_free(&comm);
        comm = next;
        active = comm != MPI_COMM_NULL;
        MPI_Allreduce(MPI_IN_PLACE, &active, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    }
    free(members);
    free(all);
    free(types);
    MPI_Finalize();
    return 0;
}
