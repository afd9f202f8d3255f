/* The progress thread under each of its settings (WEFT_PROGRESS_BIND,
 * _PRIORITY, _SPIN_US) serves a rank that does not call weft: rank 0 gets
 * a word from rank 1 and puts a flag there while rank 1 only reads its
 * memory.  Run over TCP, where UCX needs the target's CPU for both, so the
 * put and get complete only if rank 1's thread serves them.  A thread bound
 * to one CPU is found there, and with a list of CPUs on the one of its
 * place on the host; with `spare`, on a CPU no rank of the host runs on,
 * or on the rank's if there is none; a CPU that cannot exist fails
 * weft_init with an error naming the setting. */
#define _GNU_SOURCE
#include "../common.h"
#include "affinity.h"

#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* With WEFT_PROGRESS_BIND=spare and the ranks of the host bound to the
 * CPUs host_cpus (this one to rank_cpu): the thread must be on one CPU
 * none of them has when this process may use one (spare_exists), else on
 * the rank's. */
static cpu_set_t host_cpus;
static int spare_exists, rank_cpu = -1;

/* The CPU set of weft's progress thread (named "weft-progress"), which
 * must be the only one. */
static void thread_set(cpu_set_t *out)
{
    CHECK(bench_progress_thread_set(out) == 1);
}

/* 1 if weft's progress thread may run on `cpu` alone */
static int thread_bound_to(int cpu)
{
    cpu_set_t set;

    thread_set(&set);
    return CPU_COUNT(&set) == 1 && CPU_ISSET(cpu, &set);
}

/* 1 if the thread is where WEFT_PROGRESS_BIND=spare must put it */
static int thread_on_spare(void)
{
    cpu_set_t set, both;

    thread_set(&set);
    if (!spare_exists)
        return CPU_COUNT(&set) == 1 && CPU_ISSET(rank_cpu, &set);
    CPU_AND(&both, &set, &host_cpus);
    return CPU_COUNT(&set) == 1 && CPU_COUNT(&both) == 0;
}

#define SPARE (-2)  /* serve_once's cpu: check the spare policy */

static void serve_once(const char *bind, const char *prio, const char *spin, int cpu)
{
    weft_config_t cfg;
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg;
    void *base;
    volatile uint64_t *mine;
    uint64_t got = 0, one = 1, word = 0x5eed0000u;
    int rank;

    setenv("WEFT_PROGRESS_BIND", bind, 1);
    setenv("WEFT_PROGRESS_PRIORITY", prio, 1);
    setenv("WEFT_PROGRESS_SPIN_US", spin, 1);
    OK(weft_config_init(&cfg));
    CHECK(cfg.progress_thread == 1);
    OK(weft_init(&cfg, &ctx));
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, 4096, &seg, &base));
    OK(weft_rank(ctx, &rank));
    mine = (volatile uint64_t *)base;
    mine[0] = word + (uint64_t)rank;
    mine[1] = 0;
    if (cpu >= 0)
        CHECK(thread_bound_to(cpu));
    if (cpu == SPARE)
        CHECK(thread_on_spare());
    OK(weft_barrier(ctx));
    if (rank == 0) {
        OK(weft_get(ep, &got, 1, seg, 0, sizeof(got)));
        CHECK(got == word + 1);
        OK(weft_put(ep, 1, seg, 8, &one, sizeof(one)));
        OK(weft_flush(ep));
    } else if (rank == 1) {
        /* no weft call: only rank 1's progress thread can serve rank 0 */
        test_wait_flag(&mine[1]);
    }
    OK(weft_barrier(ctx));
    OK(weft_seg_free(ctx, seg));
    OK(weft_finalize(ctx));
}

/* The spare policy, the ranks of the host bound to `used` of the CPUs in
 * `allowed` (1: all on the first; else each on its own, if there are
 * enough): the thread then on a CPU none of them has, if there is one. */
static void spare_check(const cpu_set_t *allowed, int used)
{
    MPI_Comm host;
    int here, nhere, k = 0;
    cpu_set_t mine;

    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
    MPI_Comm_rank(host, &here);
    MPI_Comm_size(host, &nhere);
    MPI_Comm_free(&host);
    if (used != 1 && (used = nhere) > CPU_COUNT(allowed))
        return;  /* ranks must share CPUs: that is the first case */
    CPU_ZERO(&host_cpus);
    for (int c = 0; c < CPU_SETSIZE && k < used; c++) {
        if (!CPU_ISSET(c, allowed))
            continue;
        CPU_SET(c, &host_cpus);
        if (k++ == (used == 1 ? 0 : here))
            rank_cpu = c;
    }
    spare_exists = CPU_COUNT(allowed) > used;
    CPU_ZERO(&mine);
    CPU_SET(rank_cpu, &mine);
    CHECK(sched_setaffinity(0, sizeof(mine), &mine) == 0);
    serve_once("spare", "short", "0", SPARE);
    if (used != 1) {
        /* A context of part of the job (here each rank alone) keeps the
         * thread on the rank's cores even with spare: the cores it would
         * see as spare are the other ranks'. */
        weft_config_t cfg;
        weft_ctx_t ctx;
        MPI_Comm self = MPI_COMM_SELF;

        setenv("WEFT_PROGRESS_BIND", "spare", 1);
        OK(weft_config_init(&cfg));
        cfg.mpi_comm = &self;
        OK(weft_init(&cfg, &ctx));
        spare_exists = 0;
        CHECK(thread_on_spare());
        OK(weft_finalize(ctx));
    }
    CHECK(sched_setaffinity(0, sizeof(*allowed), allowed) == 0);
}

int main(int argc, char **argv)
{
    cpu_set_t set;
    char cpu[16];
    int provided, first = 0;
    weft_config_t cfg;
    weft_ctx_t ctx;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    setenv("WEFT_PROGRESS_THREAD", "1", 1);
    /* a CPU this rank may run on */
    CHECK(sched_getaffinity(0, sizeof(set), &set) == 0);
    while (!CPU_ISSET(first, &set))
        first++;
    snprintf(cpu, sizeof(cpu), "%d", first);

    serve_once("rank", "normal", "0", -1);
    serve_once("rank", "short", "0", -1);
    /* SCHED_FIFO where permitted, else what the thread may have */
    serve_once("all", "fifo", "0", -1);
    /* The thread must be where WEFT_PROGRESS_BIND says, not where the
     * rank is: widen the rank's CPU set to every CPU first, so that a
     * thread that only inherited it is not bound to one CPU (a launcher
     * that binds the rank to a core would otherwise make both the same).
     * A machine of one CPU cannot tell them apart. */
    {
        cpu_set_t all;
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

        CPU_ZERO(&all);
        for (long c = 0; c < ncpu && c < CPU_SETSIZE; c++)
            CPU_SET((int)c, &all);
        if (ncpu > 1 && sched_setaffinity(0, sizeof(all), &all) == 0 &&
            sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 1) {
            int second = 0, here;
            char list[32];
            MPI_Comm host;

            serve_once(cpu, "short", "20", first);
            /* A list: the ranks of a host take its CPUs in turn, by their
             * place among the host's ranks (not by their rank in the job) */
            /* another CPU of the set: it has more than one */
            while (second == first || !CPU_ISSET(second, &set))
                second++;
            snprintf(list, sizeof(list), "%d,%d", second, first);
            MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
            MPI_Comm_rank(host, &here);
            MPI_Comm_free(&host);
            serve_once(list, "short", "0", here % 2 == 0 ? second : first);
            spare_check(&set, 1);
            spare_check(&set, 0);
        } else {
            serve_once(cpu, "short", "20", -1);
        }
    }

    /* no machine has CPU 65535 in a CPU set of this C library */
    setenv("WEFT_PROGRESS_BIND", "65535", 1);
    OK(weft_config_init(&cfg));
    FAILS(weft_init(&cfg, &ctx), WEFT_ERR_CONFIG);
    CHECK(strstr(weft_last_error(), "WEFT_PROGRESS_BIND") != NULL);
    printf("progress settings: served under each, bad CPU refused\n");
    MPI_Finalize();
    return 0;
}
