/*
 * shmem_gups -- OpenSHMEM's figure for weft bench gups: the updates of
 * weft_bench_gups (bench/gups.c: the same stream, table, owner and word of
 * each update, window and verification) made with shmem_ulong_atomic_xor,
 * shmem_quiet every window.
 *
 *   oshrun -np P shmem_gups --json FILE [--log2-table N] [--updates U]
 *                           [--window W] [--rounds R]
 *
 * The JSON (weft_bench_gups's results, impl "openshmem-xor") is written
 * before shmem_finalize, which crashes in Open MPI 4.1's OpenSHMEM on some
 * machines: the caller reads the file and ignores the exit status.  Built
 * with oshcc.
 */
#include <shmem.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <getopt.h>
#include <string.h>
#include <time.h>

#define MAX_ROUNDS 32
#define MAX_LOG2   28

static int me, npes;
static long log2_table = 20, nupdates, window = 1024, rounds = 3;

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline uint64_t next(uint64_t x)
{
    return (x << 1) ^ ((int64_t)x < 0 ? 7u : 0u);
}

static inline int owner(uint64_t v)
{
    return (int)(((v >> 32) * (uint64_t)npes) >> 32);
}

static void updates(unsigned long *table, uint64_t start)
{
    const uint64_t mask = ((uint64_t)1 << log2_table) - 1;
    uint64_t v = start;
    long w = 0;

    for (long i = 0; i < nupdates; i++) {
        v = next(v);
        shmem_ulong_atomic_xor(&table[v & mask], (unsigned long)v, owner(v));
        if (++w == window || i + 1 == nupdates) {
            w = 0;
            shmem_quiet();
        }
    }
}

/* getopt_long scans the line ("--name value" or "--name=value"); every
 * count must be a positive integer. */
static int parse(int argc, char **argv, const char **json)
{
    static const struct option lo[] = {
        {"log2-table", required_argument, NULL, 't'}, {"updates", required_argument, NULL, 'u'},
        {"window", required_argument, NULL, 'w'},     {"rounds", required_argument, NULL, 'r'},
        {"json", required_argument, NULL, 'j'},       {NULL, 0, NULL, 0},
    };
    int c;

    opterr = 0;
    optind = 0;   /* a new scan (glibc) */
    while ((c = getopt_long(argc, argv, "+:", lo, NULL)) != -1) {
        long *dst = c == 't' ? &log2_table : c == 'u' ? &nupdates : c == 'w' ? &window
                  : c == 'r' ? &rounds : NULL;
        char *end;

        if (c == 'j') {
            *json = optarg;
            continue;
        }
        if (dst == NULL)
            return -1;
        errno = 0;
        *dst = strtol(optarg, &end, 10);
        if (end == optarg || *end != '\0' || errno != 0 || *dst <= 0)
            return -1;
    }
    if (optind < argc)
        return -1;
    if (*json == NULL || log2_table < 4 || log2_table > MAX_LOG2 || rounds > MAX_ROUNDS)
        return -1;
    if (nupdates == 0)
        nupdates = 4L << log2_table;
    return 0;
}

int main(int argc, char **argv)
{
    static long psync[SHMEM_REDUCE_SYNC_SIZE];
    static double pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE], dt, slowest;
    static long lpwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE], bad, total;
    const char *json = NULL;
    double gups[MAX_ROUNDS], worst = 0;
    unsigned long *table;
    uint64_t start = 1, words;
    FILE *f;

    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    if (parse(argc, argv, &json) != 0) {
        if (me == 0)
            fprintf(stderr, "usage: oshrun -np P shmem_gups --json FILE [--log2-table N (4..%d)] "
                            "[--updates U] [--window W] [--rounds R (1..%d)]\n", MAX_LOG2, MAX_ROUNDS);
        return 2;
    }
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        psync[i] = SHMEM_SYNC_VALUE;
    table = shmem_malloc(sizeof(unsigned long) << log2_table);
    words = (uint64_t)npes << log2_table;
    for (long i = 0; i < (long)me * nupdates; i++)
        start = next(start);

    for (long r = 0; r < rounds; r++) {
        uint64_t base = (uint64_t)me << log2_table;

        for (uint64_t i = 0; i < ((uint64_t)1 << log2_table); i++)
            table[i] = base + i;
        shmem_barrier_all();
        dt = now();
        updates(table, start);
        dt = now() - dt;
        shmem_barrier_all();
        shmem_double_max_to_all(&slowest, &dt, 1, 0, 0, npes, pwrk, psync);
        shmem_barrier_all();
        /* undo, one PE at a time, then count */
        for (int p = 0; p < npes; p++) {
            if (p == me)
                updates(table, start);
            shmem_barrier_all();
        }
        bad = 0;
        for (uint64_t i = 0; i < ((uint64_t)1 << log2_table); i++)
            bad += table[i] != base + i;
        shmem_long_sum_to_all(&total, &bad, 1, 0, 0, npes, lpwrk, psync);
        shmem_barrier_all();
        gups[r] = (double)npes * (double)nupdates / slowest * 1e-9;
        if ((double)total > worst)
            worst = (double)total;
    }
    if (me == 0) {
        if ((f = fopen(json, "w")) == NULL) {
            perror(json);
            return 1;
        }
        fprintf(f, "{\n  \"benchmark\": \"gups\",\n  \"ranks\": %d,\n  \"log2_table\": %ld,\n"
                   "  \"updates_per_rank\": %ld,\n  \"window\": %ld,\n  \"results\": [\n"
                   "    {\"impl\": \"openshmem-xor\", \"op\": \"xor\", \"unit\": \"GUP/s\", \"rounds\": [",
                npes, log2_table, nupdates, window);
        for (long r = 0; r < rounds; r++)
            fprintf(f, "%s%.6g", r ? ", " : "", gups[r]);
        fprintf(f, "], \"errors\": %.0f, \"error_rate\": %.6g, \"verified\": %s}\n  ]\n}\n", worst,
                worst / (double)words, worst / (double)words <= 0.01 ? "true" : "false");
        fclose(f);
    }
    shmem_barrier_all();
    shmem_free(table);
    shmem_finalize();
    return 0;
}
