/*
 * shmem_peer -- OpenSHMEM's figures for the comparison of weft bench rma
 * --peers, measured with the same loops as weft_bench_rma:
 *   put rate 8 B   windows of shmem_putmem_nbi, then shmem_quiet
 *   put latency    shmem_putmem + shmem_quiet
 *   get latency    shmem_getmem of 8 bytes
 *   bandwidth      windows of shmem_putmem_nbi of 8 B ... 4 MiB, then quiet
 *
 *   oshrun -np 2 shmem_peer --json FILE [--iters N] [--window W] [--rounds R]
 *
 * PE 0 initiates, PE 1 is the target.  The JSON (weft_bench_rma's format,
 * impl "openshmem") is written before shmem_finalize, which crashes in
 * Open MPI 4.1's OpenSHMEM on some machines: the caller reads the file and
 * ignores the exit status.  Built by weft bench rma with oshcc.
 */
#include <shmem.h>

#include <stdio.h>
#include <stdlib.h>
#include <getopt.h>
#include <string.h>
#include <time.h>

#define MAX_ROUNDS  64
#define MAX_SIZE    (4u << 20)
#define SWEEP_BYTES (64u << 20)

static const size_t sizes[] = {8, 64, 512, 4096, 32768, 65536, 262144, 1u << 20, MAX_SIZE};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

struct sample {
    const char *op, *unit;
    size_t size;
    double v[MAX_ROUNDS];
    int n;
};

static struct sample samples[NSIZES + 3];
static int nsamples;

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void record(const char *op, size_t size, const char *unit, double v)
{
    struct sample *s = NULL;

    for (int i = 0; i < nsamples; i++)
        if (!strcmp(samples[i].op, op) && samples[i].size == size)
            s = &samples[i];
    if (s == NULL) {
        s = &samples[nsamples++];
        s->op = op;
        s->size = size;
        s->unit = unit;
    }
    if (s->n < MAX_ROUNDS)
        s->v[s->n++] = v;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const struct sample *s)
{
    double t[MAX_ROUNDS];

    memcpy(t, s->v, sizeof(double) * (size_t)s->n);
    qsort(t, (size_t)s->n, sizeof(double), cmp_double);
    return s->n % 2 ? t[s->n / 2] : 0.5 * (t[s->n / 2 - 1] + t[s->n / 2]);
}

static void round_8b(char *sym, long iters, long window)
{
    char src[8] = {42}, dst[8];
    double t0 = now();

    for (long i = 0; i < iters; i++) {
        shmem_putmem(sym, src, 8, 1);
        shmem_quiet();
    }
    record("put_lat", 8, "us", 1e6 * (now() - t0) / (double)iters);
    t0 = now();
    for (long i = 0; i < iters; i++)
        shmem_getmem(dst, sym, 8, 1);
    record("get_lat", 8, "us", 1e6 * (now() - t0) / (double)iters);
    t0 = now();
    for (long i = 0; i < iters; i += window) {
        for (long w = 0; w < window; w++)
            shmem_putmem_nbi(sym + (w & 63) * 8, src, 8, 1);
        shmem_quiet();
    }
    record("put_rate", 8, "Mmsg/s", 1e-6 * (double)iters / (now() - t0));
}

static void round_sweep(char *sym, const char *src, long iters, long window)
{
    for (size_t k = 0; k < NSIZES; k++) {
        long count = (long)(SWEEP_BYTES / sizes[k]);
        count = count < 16 ? 16 : count > iters ? iters : count;
        long win = count < window ? count : window;
        double t0 = now();

        for (long i = 0; i < count; i += win) {
            for (long w = 0; w < win; w++)
                shmem_putmem_nbi(sym, src, sizes[k], 1);
            shmem_quiet();
        }
        record("put_bw", sizes[k], "MB/s", 1e-6 * (double)sizes[k] * (double)count / (now() - t0));
    }
}

static int write_json(const char *path, long iters, long window, long rounds)
{
    FILE *f = fopen(path, "w");

    if (f == NULL)
        return -1;
    fprintf(f, "{\n  \"benchmark\": \"rma-peer\",\n  \"nranks\": 2,\n  \"iters\": %ld,\n"
               "  \"window\": %ld,\n  \"rounds\": %ld,\n  \"results\": [\n", iters, window, rounds);
    for (int i = 0; i < nsamples; i++) {
        const struct sample *s = &samples[i];
        fprintf(f, "    {\"impl\": \"openshmem\", \"op\": \"%s\", \"size\": %zu, \"unit\": \"%s\", "
                   "\"value\": %.6g, \"rounds\": [", s->op, s->size, s->unit, median(s));
        for (int k = 0; k < s->n; k++)
            fprintf(f, "%s%.6g", k ? ", " : "", s->v[k]);
        fprintf(f, "]}%s\n", i + 1 < nsamples ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    return fclose(f);
}

int main(int argc, char **argv)
{
    const char *json = NULL;
    long iters = 100000, window = 256, rounds = 5;
    char *sym, *src;

    static const struct option lo[] = {
        {"json", required_argument, NULL, 'j'},   {"iters", required_argument, NULL, 'i'},
        {"window", required_argument, NULL, 'w'}, {"rounds", required_argument, NULL, 'r'},
        {NULL, 0, NULL, 0},
    };
    int c, bad = 0;

    /* getopt_long scans the line; a count that is not a whole number is
     * refused below as not positive */
    opterr = 0;
    optind = 0;   /* a new scan (glibc) */
    while ((c = getopt_long(argc, argv, "+:", lo, NULL)) != -1) {
        long *dst = c == 'i' ? &iters : c == 'w' ? &window : c == 'r' ? &rounds : NULL;
        char *end;

        if (c == 'j') {
            json = optarg;
        } else if (dst == NULL) {
            bad = 1;
        } else {
            *dst = strtol(optarg, &end, 10);
            if (end == optarg || *end != '\0')
                *dst = 0;
        }
    }
    if (bad || optind < argc) {
        fprintf(stderr, "usage: oshrun -np 2 shmem_peer --json FILE [--iters N] [--window W] "
                        "[--rounds R]\n");
        return 2;
    }
    if (json == NULL || iters <= 0 || window <= 0 || window > iters || rounds <= 0 ||
        rounds > MAX_ROUNDS) {
        fprintf(stderr, "shmem_peer: --json FILE is required; counts must be positive, "
                        "window <= iters, rounds <= %d\n", MAX_ROUNDS);
        return 2;
    }
    iters -= iters % window;
    shmem_init();
    if (shmem_n_pes() != 2) {
        if (shmem_my_pe() == 0)
            fprintf(stderr, "shmem_peer: needs exactly 2 PEs, got %d\n", shmem_n_pes());
        return 2;
    }
    sym = shmem_malloc(MAX_SIZE);
    src = malloc(MAX_SIZE);
    if (sym == NULL || src == NULL) {
        fprintf(stderr, "shmem_peer: out of memory\n");
        return 2;
    }
    memset(src, 1, MAX_SIZE);
    shmem_barrier_all();
    if (shmem_my_pe() == 0) {
        round_8b(sym, window * 4, window);  /* warm-up */
        nsamples = 0;
        for (long r = 0; r < rounds; r++) {
            round_8b(sym, iters, window);
            round_sweep(sym, src, iters, window);
        }
        if (write_json(json, iters, window, rounds) != 0) {
            fprintf(stderr, "shmem_peer: cannot write %s\n", json);
            return 2;
        }
    }
    shmem_barrier_all();
    free(src);
    shmem_free(sym);
    shmem_finalize();
    return 0;
}
