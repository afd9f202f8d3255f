/*
 * CPU costs of the real MPI library that SMPI does not simulate, for the
 * SimGrid SMPI builds of the collective benchmark only, measured on this
 * machine by weft_smpi_calib and charged here as computation on the calling
 * rank:
 *
 *   WEFT_SMPI_COLL_ENTRY=BCAST_S,REDUCE_S
 *       entering a collective (the library's dispatch to an algorithm,
 *       communicator checks, request set-up), seconds per MPI_Bcast and per
 *       MPI_Reduce: the program's own calls and each level's call inside
 *       WEFT_Hbcast and WEFT_Hreduce alike (bcast_call_s and reduce_call_s
 *       minus the 8-byte send they include);
 *   WEFT_SMPI_SELF_COPY=SIZE:S,SIZE:S,...
 *       an MPI_Sendrecv on a one-rank communicator (a copy through the
 *       library, which SMPI makes at no cost; WEFT_Hreduce copies a
 *       leader's operand so), seconds by message size (self_s), linear
 *       between the sizes given and in proportion beyond the largest.
 *
 * Unset or empty: nothing is charged.  SMPI loads each rank's copy of the
 * program with its own symbols first, so these definitions replace the
 * library's for the program and the weft sources compiled into it; the work
 * is done by the PMPI_ calls.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PIECES 32
#define MAX_COST_S 1.0   /* larger values are taken for a unit mistake */

static double entry_s[2];
static long   copy_size[MAX_PIECES];
static double copy_s[MAX_PIECES];
static int    copy_n, loaded;

static void bad(const char *name, const char *text, const char *want)
{
    fprintf(stderr, "%s=%s: want %s\n", name, text, want);
    exit(2); /* under SMPI, MPI_Abort ends the run with status 0 */
}

static void load(void)
{
    const char *text = getenv("WEFT_SMPI_COLL_ENTRY");
    loaded = 1;
    if (text && *text &&
        (sscanf(text, "%lf,%lf", &entry_s[0], &entry_s[1]) != 2 || entry_s[0] < 0 || entry_s[1] < 0 ||
         entry_s[0] > 1e-3 || entry_s[1] > 1e-3))
        bad("WEFT_SMPI_COLL_ENTRY", text, "BCAST_S,REDUCE_S, each 0..1e-3 seconds");
    text = getenv("WEFT_SMPI_SELF_COPY");
    for (const char *p = text; p && *p; copy_n++) {
        char *end;
        if (copy_n == MAX_PIECES)
            bad("WEFT_SMPI_SELF_COPY", text, "at most 32 SIZE:SECONDS pieces");
        copy_size[copy_n] = strtol(p, &end, 10);
        if (end == p || *end != ':' || copy_size[copy_n] < 1 || (copy_n && copy_size[copy_n] <= copy_size[copy_n - 1]))
            bad("WEFT_SMPI_SELF_COPY", text, "SIZE:SECONDS,... with sizes rising from 1");
        p = end + 1;
        copy_s[copy_n] = strtod(p, &end);
        if (end == p || (*end && *end != ',') || copy_s[copy_n] < 0 || copy_s[copy_n] > MAX_COST_S)
            bad("WEFT_SMPI_SELF_COPY", text, "SIZE:SECONDS,... with seconds 0..1");
        p = *end ? end + 1 : end;
    }
}

static void charge(double seconds)
{
    if (seconds > 0)
        smpi_execute(seconds);
}

/* The self-copy cost of a message of bytes. */
static double self_copy_s(long bytes)
{
    if (copy_n == 0)
        return 0;
    if (bytes <= copy_size[0])
        return copy_s[0];
    for (int i = 1; i < copy_n; i++)
        if (bytes <= copy_size[i])
            return copy_s[i - 1] + (copy_s[i] - copy_s[i - 1]) * (double)(bytes - copy_size[i - 1]) /
                                       (double)(copy_size[i] - copy_size[i - 1]);
    return copy_s[copy_n - 1] * (double)bytes / (double)copy_size[copy_n - 1];
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    if (!loaded)
        load();
    charge(entry_s[0]);
    return PMPI_Bcast(buf, count, type, root, comm);
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm)
{
    if (!loaded)
        load();
    charge(entry_s[1]);
    return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    int size = 0, bytes = 0;
    if (!loaded)
        load();
    if (copy_n && PMPI_Comm_size(comm, &size) == MPI_SUCCESS && size == 1 &&
        PMPI_Type_size(sendtype, &bytes) == MPI_SUCCESS)
        charge(self_copy_s((long)bytes * sendcount));
    return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                         comm, status);
}
