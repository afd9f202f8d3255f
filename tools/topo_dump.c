/* weft_topo_dump: run the paper's loop (WEFT_Comm_hsplit_with_roots until
 * MPI_COMM_NULL) on every rank and print, from rank 0, every communicator
 * made at every step as JSON.  The machine comes from the WEFT_TOPO_*
 * variables (docs/topology.md), or is this machine.  `weft topo` runs it
 * under mpirun and draws the result.
 *
 * Output: {"np": N, "steps": [{"step": 1, "comms": [{"type", "index", "num",
 * "members", "parent"}], "roots": [{"members", "parent"}], "null": [...]}]}
 * where members are MPI_COMM_WORLD ranks in communicator order, "parent" the
 * first rank of the communicator that was split, and "null" the ranks that
 * received MPI_COMM_NULL at that step. */
#include <weft_mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TYPE_LEN = 32, HEAD = 6 };

/* One rank's record of a step: has_comm, num, index, comm size, roots size,
 * parent first rank, then the type name, the members, the roots. */
typedef struct {
    int  head[HEAD];
    char type[TYPE_LEN];
} record_t;

static void world_ranks(MPI_Comm comm, int *out)
{
    MPI_Group g, world;
    int       n;

    MPI_Comm_size(comm, &n);
    int *in = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        in[i] = i;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_translate_ranks(g, n, in, world, out);
    MPI_Group_free(&g);
    MPI_Group_free(&world);
    free(in);
}

static int comm_size(MPI_Comm comm)
{
    int n = 0;
    if (comm != MPI_COMM_NULL)
        MPI_Comm_size(comm, &n);
    return n;
}

static void print_list(const int *v, int n)
{
    putchar('[');
    for (int i = 0; i < n; i++)
        printf("%s%d", i ? ", " : "", v[i]);
    putchar(']');
}

/* s as a JSON string: a level's type name comes from hwloc or from the
 * user's synthetic description, so it is escaped. */
static void print_string(const char *s)
{
    putchar('"');
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\')
            printf("\\%c", *c);
        else if (*c < 0x20 || *c == 0x7f)
            printf("\\u%04x", *c);
        else
            putchar(*c);
    }
    putchar('"');
}

/* Print the step from every rank's packed record (rank 0 only). */
static void print_step(int step, int np, char **recs)
{
    if (step == 1)
        printf("{\"np\": %d, \"steps\": [", np);
    printf("%s\n    {\"step\": %d, \"comms\": [", step > 1 ? "," : "", step);
    int first = 1;
    for (int r = 0; r < np; r++) {
        record_t *h = (record_t *)recs[r];
        int      *m = (int *)(h + 1);
        /* A communicator is printed by its rank 0. */
        if (h->head[0] && m[0] == r) {
            printf("%s\n      {\"type\": ", first ? "" : ",");
            print_string(h->type);
            printf(", \"index\": %d, \"num\": %d, \"parent\": %d, \"members\": ", h->head[2], h->head[1],
                   h->head[5]);
            print_list(m, h->head[3]);
            putchar('}');
            first = 0;
        }
    }
    printf("],\n     \"roots\": [");
    first = 1;
    for (int r = 0; r < np; r++) {
        record_t *h = (record_t *)recs[r];
        int      *roots = (int *)(h + 1) + h->head[3];
        if (h->head[4] > 0 && roots[0] == r) {
            printf("%s\n      {\"parent\": %d, \"members\": ", first ? "" : ",", h->head[5]);
            print_list(roots, h->head[4]);
            putchar('}');
            first = 0;
        }
    }
    printf("],\n     \"null\": [");
    first = 1;
    for (int r = 0; r < np; r++) {
        record_t *h = (record_t *)recs[r];
        if (!h->head[0] && h->head[5] >= 0) {
            printf("%s%d", first ? "" : ", ", r);
            first = 0;
        }
    }
    printf("]}");
}

int main(int argc, char **argv)
{
    MPI_Comm comm, next, roots;
    int      rank, np, step = 0, active = 1, status = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    while (active) {
        int parent_first = -1;
        next = roots = MPI_COMM_NULL;
        if (comm != MPI_COMM_NULL) {
            int *m = malloc((size_t)comm_size(comm) * sizeof(int));
            world_ranks(comm, m);
            parent_first = m[0];
            free(m);
            if (WEFT_Comm_hsplit_with_roots(comm, MPI_INFO_NULL, &next, &roots) != MPI_SUCCESS) {
                /* Every rank fails alike; one report is enough. */
                if (rank == 0)
                    fprintf(stderr, "weft_topo_dump: %s\n", weft_last_error());
                status = 1;
            }
        }
        MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (status)
            break;
        step++;

        int    nsize = comm_size(next), rsize = comm_size(roots);
        size_t len = sizeof(record_t) + (size_t)(nsize + rsize) * sizeof(int);
        char  *rec = calloc(1, len);
        record_t *h = (record_t *)rec;
        h->head[0] = next != MPI_COMM_NULL;
        h->head[3] = nsize;
        h->head[4] = rsize;
        h->head[5] = parent_first;
        if (next != MPI_COMM_NULL) {
            const char *type;
            WEFT_Comm_get_hlevel_info(next, &h->head[1], &h->head[2], &type);
            snprintf(h->type, TYPE_LEN, "%s", type);
            world_ranks(next, (int *)(h + 1));
        }
        if (roots != MPI_COMM_NULL)
            world_ranks(roots, (int *)(h + 1) + nsize);

        int   ilen = (int)len, *lens = NULL, *displs = NULL;
        char *all = NULL;
        if (rank == 0) {
            lens = malloc((size_t)np * sizeof(int));
            displs = malloc((size_t)np * sizeof(int));
        }
        MPI_Gather(&ilen, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            int total = 0;
            for (int r = 0; r < np; r++) {
                displs[r] = total;
                total += lens[r];
            }
            all = malloc((size_t)total);
        }
        MPI_Gatherv(rec, ilen, MPI_BYTE, all, lens, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            char **recs = malloc((size_t)np * sizeof(char *));
            for (int r = 0; r < np; r++)
                recs[r] = all + displs[r];
            print_step(step, np, recs);
            free(recs);
            free(all);
            free(lens);
            free(displs);
        }
        free(rec);

        if (roots != MPI_COMM_NULL)
            MPI_Comm_free(&roots);
        if (comm != MPI_COMM_NULL)
            MPI_Comm_free(&comm);
        comm = next;
        active = comm != MPI_COMM_NULL;
        MPI_Allreduce(MPI_IN_PLACE, &active, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    }
    if (rank == 0 && !status)
        printf("\n]}\n");
    if (comm != MPI_COMM_NULL)
        MPI_Comm_free(&comm);
    MPI_Finalize();
    return status;
}
