/*
 * weft_smpi_calib -- the point-to-point figures the SimGrid platforms are
 * calibrated with, measured between ranks 0 and 1 (2 ranks):
 *
 *   mpirun -np 2 weft_smpi_calib --json FILE [--sizes 8,64,...] [--reps N]
 *
 * For each message size:
 *   pingpong_s  one-way time, half a round trip (MPI_Send/MPI_Recv), each
 *               rank sending from one buffer and receiving into another: a
 *               source the peer has just written into would cross the
 *               caches dirty (up to 2x slower here from 64 KiB), which a
 *               collective's source does not;
 *   send_s      time in MPI_Send of one message of a back-to-back stream
 *               whose receives are already posted: the sender's
 *               per-message overhead (SMPI's smpi/os) while the message is
 *               sent eagerly;
 *   isend_s     time in MPI_Isend alone, the requests completed afterwards
 *               (smpi/ois);
 *   recv_s      time in MPI_Recv of a message that has already arrived
 *               (smpi/or);
 *   self_s      time of an MPI_Sendrecv of the size to oneself on
 *               MPI_COMM_SELF (a copy through the library, which SMPI
 *               makes at no cost: bench/smpi/entry.c charges it);
 *   flood_Bps   bytes per second of a stream of MPI_Isend (bandwidth).
 * Once, at 8 bytes, the CPU cost of entering a collective (the MPI
 * library's dispatch to its algorithm, charged as computation by the
 * simulated copy):
 *   bcast_call_s   time in MPI_Bcast of the root of a stream of 8-byte
 *                  broadcasts (its one eager send included);
 *   reduce_call_s  time in MPI_Reduce of the non-root rank of a stream of
 *                  one-double reductions to rank 0 (its eager send included).
 * Minus send_s at 8 bytes, they are what a collective call costs beyond its
 * message.  Neither is a collective's latency: the streams have no barrier,
 * and no rank waits for another.
 * Each figure is the minimum over --reps repetitions of a batch of
 * messages: on a machine shared with other work, noise only adds time, and
 * the simulated platform describes the machine alone.  The same source builds with smpicc: run on the simulated copy
 * of this machine it shows what the calibrated model gives back.
 *
 * Output: {"benchmark": "smpi-calib", "mpi": "...", "bcast_call_s": t, "reduce_call_s": t,
 *          "points": [{"size": B, "pingpong_s": t, "send_s": t, "isend_s": t,
 *                      "recv_s": t, "self_s": t, "flood_Bps": b}, ...]}
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <getopt.h>
#include <string.h>

#define MAX_SIZES 32
#define MAX_REPS  64
#define BATCH     32

static int rank;

static int parse_sizes(const char *text, long *sizes, int *n)
{
    const char *p = text;
    *n = 0;
    while (*p) {
        char *end;
        long  v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > (1L << 26) || *n == MAX_SIZES || (*end && *end != ','))
            return 0;
        sizes[(*n)++] = v;
        p = *end ? end + 1 : end;
    }
    return *n > 0;
}

static double minimum(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

static double maximum(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

/* Per-message figures of one batch; rank 0 sends, rank 1 receives.  The
 * figure is rank 0's (sends) or rank 1's (receives), broadcast to both. */
static double pingpong(char *buf, long size, int count)
{
    char *in = buf + size;   /* a receive never lands in the next send's source */
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    for (int i = 0; i < count; i++) {
        if (rank == 0) {
            MPI_Send(buf, (int)size, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(in, (int)size, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(in, (int)size, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)size, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
    t = (MPI_Wtime() - t) / (2.0 * count);
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return t;
}

static double send_stream(char *buf, long size, int count, int nonblocking, double *flood)
{
    MPI_Request req[BATCH];
    if (rank == 1)
        for (int i = 0; i < count; i++)
            MPI_Irecv(buf + (size_t)i * size, (int)size, MPI_BYTE, 0, i, MPI_COMM_WORLD, &req[i]);
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime(), posted = 0;
    if (rank == 0) {
        for (int i = 0; i < count; i++) {
            if (nonblocking)
                MPI_Isend(buf + (size_t)i * size, (int)size, MPI_BYTE, 1, i, MPI_COMM_WORLD, &req[i]);
            else
                MPI_Send(buf + (size_t)i * size, (int)size, MPI_BYTE, 1, i, MPI_COMM_WORLD);
        }
        posted = MPI_Wtime() - t;
        if (nonblocking)
            MPI_Waitall(count, req, MPI_STATUSES_IGNORE);
    } else if (rank == 1) {
        MPI_Waitall(count, req, MPI_STATUSES_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double total = MPI_Wtime() - t;
    if (flood) {
        *flood = (double)size * count / total;
        MPI_Bcast(flood, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    }
    posted /= count;
    MPI_Bcast(&posted, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return posted;
}

/* Time per call in a stream of count collectives of 8 bytes, on the rank
 * that only sends: the root of a broadcast, rank 1 of a reduction to 0. */
static double collective_stream(char *buf, int count, int reduce)
{
    double in = 1.0, out = 0.0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    for (int i = 0; i < count; i++) {
        if (reduce)
            MPI_Reduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        else
            MPI_Bcast(buf, 8, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
    t = (MPI_Wtime() - t) / count;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Bcast(&t, 1, MPI_DOUBLE, reduce ? 1 : 0, MPI_COMM_WORLD);
    return t;
}

/* Time per MPI_Sendrecv to oneself on MPI_COMM_SELF, rank 0's. */
static double self_copy(char *buf, long size, int count)
{
    double t = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        t = MPI_Wtime();
        for (int i = 0; i < count; i++)
            MPI_Sendrecv(buf, (int)size, MPI_BYTE, 0, 0, buf + size, (int)size, MPI_BYTE, 0, 0, MPI_COMM_SELF,
                         MPI_STATUS_IGNORE);
        t = (MPI_Wtime() - t) / count;
    }
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return t;
}

static double recv_arrived(char *buf, long size, int count)
{
    MPI_Request req[BATCH];
    if (rank == 0)
        for (int i = 0; i < count; i++)
            MPI_Isend(buf + (size_t)i * size, (int)size, MPI_BYTE, 1, i, MPI_COMM_WORLD, &req[i]);
    /* a probe of the last message makes sure they have all arrived (the
     * data of an eager one, the envelope of a rendezvous one) */
    if (rank == 1)
        MPI_Probe(0, count - 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    if (rank == 1)
        for (int i = 0; i < count; i++)
            MPI_Recv(buf + (size_t)i * size, (int)size, MPI_BYTE, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    t = (MPI_Wtime() - t) / count;
    if (rank == 0)
        MPI_Waitall(count, req, MPI_STATUSES_IGNORE);
    MPI_Bcast(&t, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD);
    return t;
}

int main(int argc, char **argv)
{
    const char *json = NULL;
    long        sizes[MAX_SIZES];
    int         nsizes = 0, reps = 15, nranks;
    parse_sizes("8,64,512,2048,3072,4032,4048,8192,16384,65536,262144,1048576,4194304", sizes, &nsizes);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int ok = nranks >= 2;
    static const struct option lo[] = {
        {"json", required_argument, NULL, 'j'}, {"sizes", required_argument, NULL, 's'},
        {"reps", required_argument, NULL, 'r'}, {NULL, 0, NULL, 0},
    };
    int c;
    char *end;

    /* getopt_long scans the line ("--name value" or "--name=value") */
    opterr = 0;
    optind = 0;   /* a new scan (glibc); under SMPI every rank scans in one process */
    while (ok && (c = getopt_long(argc, argv, "+:", lo, NULL)) != -1) {
        if (c == 'j') {
            json = optarg;
        } else if (c == 's') {
            ok = parse_sizes(optarg, sizes, &nsizes);
        } else if (c == 'r') {
            long r = strtol(optarg, &end, 10);

            ok = end != optarg && *end == '\0' && r >= 1 && r <= MAX_REPS;
            reps = (int)r;
        } else {
            ok = 0;
        }
    }
    ok = ok && optind == argc;
    if (!ok || !json) {
        if (rank == 0)
            fprintf(stderr, "usage: weft_smpi_calib --json FILE [--sizes 8,64,...(1..2^26)] "
                            "[--reps 1..%d] (2+ ranks, %d given)\n", MAX_REPS, nranks);
        MPI_Finalize();
        return 2;
    }
    long largest = 0;
    for (int s = 0; s < nsizes; s++)
        largest = sizes[s] > largest ? sizes[s] : largest;
    char *buf = calloc((size_t)BATCH, (size_t)largest);
    FILE *out = rank == 0 ? fopen(json, "w") : NULL;
    if (!buf || (rank == 0 && !out)) {
        fprintf(stderr, "weft_smpi_calib: cannot allocate %d x %ld bytes or open %s\n", BATCH, largest, json);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int  len;
    MPI_Get_library_version(version, &len);
    for (char *c = version; *c; c++)
        if (*c == '"' || *c == '\\' || *c == '\n' || *c == '\t')
            *c = ' ';
    if (out)
        fprintf(out, "{\"benchmark\": \"smpi-calib\", \"mpi\": \"%.80s\", ", version);
    double bc[MAX_REPS] = {0}, rd[MAX_REPS] = {0};
    collective_stream(buf, BATCH, 0);
    collective_stream(buf, BATCH, 1);
    for (int r = 0; r < reps; r++) {
        bc[r] = collective_stream(buf, BATCH, 0);
        rd[r] = collective_stream(buf, BATCH, 1);
    }
    if (out)
        fprintf(out, "\"bcast_call_s\": %.9g, \"reduce_call_s\": %.9g, \"points\": [", minimum(bc, reps),
                minimum(rd, reps));
    for (int s = 0; s < nsizes; s++) {
        long   size  = sizes[s];
        int    count = size > (1L << 20) ? 4 : size > (1L << 16) ? 8 : BATCH;
        double pp[MAX_REPS], snd[MAX_REPS], isnd[MAX_REPS], rcv[MAX_REPS], bw[MAX_REPS], self[MAX_REPS];
        pingpong(buf, size, 2);
        for (int r = 0; r < reps; r++) {
            pp[r]   = pingpong(buf, size, count);
            snd[r]  = send_stream(buf, size, count, 0, NULL);
            isnd[r] = send_stream(buf, size, count, 1, &bw[r]);
            rcv[r]  = recv_arrived(buf, size, count);
            self[r] = self_copy(buf, size, count / 2);
        }
        if (out)
            fprintf(out, "%s\n  {\"size\": %ld, \"pingpong_s\": %.9g, \"send_s\": %.9g, \"isend_s\": %.9g, "
                         "\"recv_s\": %.9g, \"self_s\": %.9g, \"flood_Bps\": %.9g}", s ? "," : "", size,
                    minimum(pp, reps), minimum(snd, reps), minimum(isnd, reps), minimum(rcv, reps),
                    minimum(self, reps), maximum(bw, reps));
    }
    if (out) {
        fprintf(out, "\n]}\n");
        fclose(out);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
