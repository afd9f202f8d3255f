/*
 * The CPU cost of entering a collective, for the SimGrid SMPI builds of the
 * collective benchmark only.  SMPI runs its collectives in the simulator,
 * where the real library's dispatch to an algorithm (communicator checks,
 * the tuned component's decision, request set-up) costs no simulated time;
 * measured on this machine by weft_smpi_calib (bcast_call_s and
 * reduce_call_s minus the 8-byte send they include), it is charged here as
 * computation on the calling rank before every MPI_Bcast and MPI_Reduce --
 * the program's own calls and each level's call inside WEFT_Hbcast and
 * WEFT_Hreduce alike.
 *
 *   WEFT_SMPI_COLL_ENTRY=BCAST_S,REDUCE_S   seconds per call (unset: none)
 *
 * SMPI loads each rank's copy of the program with its own symbols first,
 * so these definitions replace the library's MPI_Bcast and MPI_Reduce for
 * the program and the weft sources compiled into it; the work is done by
 * PMPI_Bcast and PMPI_Reduce.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

static double entry_s[2];
static int    loaded;

static void load(void)
{
    const char *text = getenv("WEFT_SMPI_COLL_ENTRY");
    loaded = 1;
    if (!text || !*text)
        return;
    if (sscanf(text, "%lf,%lf", &entry_s[0], &entry_s[1]) != 2 || entry_s[0] < 0 || entry_s[1] < 0 ||
        entry_s[0] > 1e-3 || entry_s[1] > 1e-3) {
        fprintf(stderr, "WEFT_SMPI_COLL_ENTRY=%s: want BCAST_S,REDUCE_S, each 0..1e-3 seconds\n", text);
        exit(2); /* under SMPI, MPI_Abort ends the run with status 0 */
    }
}

static void enter(int which)
{
    if (!loaded)
        load();
    if (entry_s[which] > 0)
        smpi_execute(entry_s[which]);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    enter(0);
    return PMPI_Bcast(buf, count, type, root, comm);
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm)
{
    enter(1);
    return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
}
