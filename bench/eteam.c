/*
 * weft_bench_eteam -- allreduce (or bcast) latency of endpoint teams
 * beside the MPI path, side by side in one run:
 *
 *   mpirun -np 2 weft_bench_eteam [--op allreduce|bcast] [--iters N] [--batch K]
 *                                 [--size BYTES]
 *
 * Variants (every iteration runs each in turn, as a batch of K
 * back-to-back allreduces -- or bcasts from member 0, rank 0 for MPI -- of
 * BYTES of doubles after a barrier; a sample is
 * the batch's mean, a variant's figure the median sample, maximum over
 * the ranks):
 *   threads_1x2  an endpoint team of the 2 threads of one rank (each rank
 *                runs its own): shared memory only
 *   ranks_2x1    an endpoint team of 1 thread on each of the 2 ranks: the
 *                one-sided collective of the ranks' team carries it
 *   mpi_2        MPI_Allreduce (MPI_Bcast) over the 2 ranks (the MPI path
 *                for the same number of members)
 * The 1x2 teams come from splitting the team of every thread of both ranks
 * at its first level, so the ranks are described as one package each
 * (WEFT_TOPO_SYNTHETIC="pack:2 core:2 pu:1", WEFT_TOPO_BIND=pack:0,pack:1,
 * set here unless the environment sets them).  Prints one line per variant
 * and the ratios to mpi_2.
 */
#define _GNU_SOURCE
#include "common.h"
#include <sched.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME "weft_bench_eteam"

static long           iters = 200, batch = 100, bytes = 8;
static int            bcast;   /* --op bcast */
static weft_ctx_t     ctx;
static weft_team_t    world;
static weft_ep_pool_t pool;
static pthread_barrier_t local;
static double        *samples[3];
static int            me;   /* per variant, per iteration (thread 0) */

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One call of the variant being timed: an allreduce of src into dst, or a
 * bcast of dst from member 0. */
static void one(weft_team_t team, const double *src, double *dst, size_t n)
{
    if (!team)
        bcast ? MPI_Bcast(dst, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD)
              : MPI_Allreduce(src, dst, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    else if (bcast)
        BENCH_OK(NAME, weft_team_bcast(team, dst, n, WEFT_TYPE_DOUBLE, 0));
    else
        BENCH_OK(NAME, weft_team_allreduce(team, src, dst, n, WEFT_TYPE_DOUBLE, WEFT_OP_SUM));
}

/* Thread 0 of each rank does the MPI barrier; both threads leave together. */
static void sync_all(int t)
{
    pthread_barrier_wait(&local);
    if (t == 0)
        MPI_Barrier(MPI_COMM_WORLD);
    pthread_barrier_wait(&local);
}

static void *run(void *arg)
{
    int         t = (int)(intptr_t)arg;
    size_t      n = (size_t)bytes / sizeof(double);
    double     *src = calloc(n, sizeof(double)), *dst = calloc(n, sizeof(double));
    weft_ep_t   ep;
    weft_team_t all, mine, roots, pair = WEFT_TEAM_NULL;

    for (size_t i = 0; i < n; i++)
        src[i] = dst[i] = t + 1;
    /* Threads of a rank on cores of their own, as a threaded code binds
     * them (two threads time-sharing a core hand over at the scheduler's
     * pace), thread 0 of rank r on core r, where the MPI variants run. */
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((me + t) % (int)sysconf(_SC_NPROCESSORS_ONLN), &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    BENCH_OK(NAME, weft_ep_get(pool, t, &ep));
    BENCH_OK(NAME, weft_team_join(world, t, 2, ep, &all));
    BENCH_OK(NAME, weft_team_split_topology(all, &mine, NULL));
    if (t == 0)
        BENCH_OK(NAME, weft_team_join(world, 0, 1, ep, &pair));
    pthread_barrier_wait(&local);
    (void)roots;
    for (long it = -5; it < iters; it++) {   /* 5 rounds of warm-up */
        double t0, t1;
        /* One rank at a time, the other asleep: its threads spinning too
         * would only measure how the cores are shared. */
        for (int r = 0; r < 2; r++) {
            sync_all(t);
            if (r == me) {
                t0 = MPI_Wtime();
                for (long k = 0; k < batch; k++)
                    one(mine, src, dst, n);
                t1 = MPI_Wtime();
                if (t == 0 && it >= 0)
                    samples[0][it] = (t1 - t0) / (double)batch;
            }
            pthread_barrier_wait(&local);
            if (t == 0) {
                MPI_Request req;
                int         done = 0;
                MPI_Ibarrier(MPI_COMM_WORLD, &req);
                while (!done) {
                    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
                    if (!done && r != me)
                        usleep(20);
                }
            }
            pthread_barrier_wait(&local);
        }
        sync_all(t);
        if (t == 0) {
            t0 = MPI_Wtime();
            for (long k = 0; k < batch; k++)
                one(pair, src, dst, n);
            t1 = MPI_Wtime();
            if (it >= 0)
                samples[1][it] = (t1 - t0) / (double)batch;
        }
        sync_all(t);
        if (t == 0) {
            t0 = MPI_Wtime();
            for (long k = 0; k < batch; k++)
                one(WEFT_TEAM_NULL, src, dst, n);
            t1 = MPI_Wtime();
            if (it >= 0)
                samples[2][it] = (t1 - t0) / (double)batch;
        }
    }
    /* the results of the last calls: both ranks' thread 0 summed, or
     * rank 0's thread 0's value */
    if (t == 0 && n && dst[0] != (bcast ? 1.0 : 2.0)) {
        fprintf(stderr, NAME ": MPI_%s gave %g, want %g\n", bcast ? "Bcast" : "Allreduce",
                dst[0], bcast ? 1.0 : 2.0);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    if (pair)
        weft_team_free(&pair);
    weft_team_free(&mine);
    weft_team_free(&all);
    free(src);
    free(dst);
    return NULL;
}

int main(int argc, char **argv)
{
    int rank, nranks, ok = 1;
    const char *op = "allreduce";
    const struct bench_opt opts[] = {
        {"--iters", .value = &iters}, {"--batch", .value = &batch},
        {"--op", .text = &op},        {"--size", .value = &bytes},
        {NULL},
    };

    setenv("WEFT_TOPO_SYNTHETIC", "pack:2 core:2 pu:1", 0);
    setenv("WEFT_TOPO_BIND", "pack:0,pack:1", 0);
    bench_mpi_start(&argc, &argv, &rank, &nranks);
    me = rank;
    /* bench_parse_opts says what is wrong with the line itself */
    ok = bench_parse_opts(argc, argv, opts) == 0;
    if (ok && bytes % 8 != 0) {
        if (rank == 0)
            fprintf(stderr, NAME ": --size %ld is not a multiple of 8 (doubles)\n", bytes);
        ok = 0;
    }
    if (ok && strcmp(op, "bcast") != 0 && strcmp(op, "allreduce") != 0) {
        if (rank == 0)
            fprintf(stderr, NAME ": --op '%s': allreduce or bcast\n", op);
        ok = 0;
    }
    bcast = ok && !strcmp(op, "bcast");
    if (!ok || nranks != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 2 " NAME " [--op allreduce|bcast] [--iters N] "
                            "[--batch K] [--size BYTES (a multiple of 8)]\n");
        MPI_Finalize();
        return 2;
    }
    BENCH_OK(NAME, weft_init(NULL, &ctx));
    BENCH_OK(NAME, weft_team_world(ctx, &world));
    weft_ep_pool_params_t p = {.nthreads = 2};
    BENCH_OK(NAME, weft_ep_pool_create(ctx, &p, &pool));
    for (int v = 0; v < 3; v++)
        samples[v] = calloc((size_t)iters, sizeof(double));
    pthread_barrier_init(&local, NULL, 2);
    pthread_t th;
    pthread_create(&th, NULL, run, (void *)(intptr_t)1);
    run((void *)(intptr_t)0);
    pthread_join(th, NULL);

    const char *names[3] = {"threads_1x2", "ranks_2x1", "mpi_2"};
    double      med[3];
    for (int v = 0; v < 3; v++) {
        qsort(samples[v], (size_t)iters, sizeof(double), cmp);
        double mine = samples[v][iters / 2];
        MPI_Allreduce(&mine, &med[v], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    if (rank == 0) {
        printf("# %s of %ld B, median of %ld batches of %ld, max over 2 ranks\n",
               bcast ? "bcast" : "allreduce", bytes, iters, batch);
        for (int v = 0; v < 3; v++)
            printf("%-12s %9.3f us   %.2fx mpi_2\n", names[v], med[v] * 1e6, med[v] / med[2]);
    }
    weft_ep_pool_destroy(pool);
    weft_team_free(&world);
    weft_finalize(ctx);
    MPI_Finalize();
    return 0;
}
