/* The progress thread under each of its settings (WEFT_PROGRESS_BIND,
 * _PRIORITY, _SPIN_US) serves a rank that does not call weft: rank 0 gets
 * a word from rank 1 and puts a flag there while rank 1 only reads its
 * memory.  Run over TCP, where UCX needs the target's CPU for both, so the
 * put and get complete only if rank 1's thread serves them.  A thread bound
 * to one CPU is found there, and with a list of CPUs on the one of its
 * place on the host; a CPU that cannot exist fails weft_init with an
 * error naming the setting. */
#define _GNU_SOURCE
#include "../common.h"

#include <dirent.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* 1 if weft's progress thread (named "weft-progress") may run on `cpu`
 * alone */
static int thread_bound_to(int cpu)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int found = 0, seen = 0;

    CHECK(d != NULL);
    while ((e = readdir(d)) != NULL) {
        cpu_set_t set;
        pid_t tid = (pid_t)atoi(e->d_name);
        char path[64], name[32] = "";
        FILE *f;

        if (tid <= 0)
            continue;
        snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)tid);
        if ((f = fopen(path, "r")) == NULL)
            continue;
        if (fgets(name, sizeof(name), f) == NULL)
            name[0] = '\0';
        fclose(f);
        if (strncmp(name, "weft-progress", 13) != 0)
            continue;
        seen++;
        if (sched_getaffinity(tid, sizeof(set), &set) == 0)
            found = CPU_COUNT(&set) == 1 && CPU_ISSET(cpu, &set);
    }
    closedir(d);
    CHECK(seen == 1);
    return found;
}

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
    OK(weft_barrier(ctx));
    if (rank == 0) {
        OK(weft_get(ep, &got, 1, seg, 0, sizeof(got)));
        CHECK(got == word + 1);
        OK(weft_put(ep, 1, seg, 8, &one, sizeof(one)));
        OK(weft_flush(ep));
    } else if (rank == 1) {
        struct timespec t0, t;

        /* no weft call: only rank 1's progress thread can serve rank 0 */
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do {
            clock_gettime(CLOCK_MONOTONIC, &t);
            CHECK(t.tv_sec - t0.tv_sec < 60);
        } while (__atomic_load_n(&mine[1], __ATOMIC_ACQUIRE) != 1);
    }
    OK(weft_barrier(ctx));
    OK(weft_seg_free(ctx, seg));
    OK(weft_finalize(ctx));
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
            int second = first + 1, here;
            char list[32];
            MPI_Comm host;

            serve_once(cpu, "short", "20", first);
            /* A list: the ranks of a host take its CPUs in turn, by their
             * place among the host's ranks (not by their rank in the job) */
            while (!CPU_ISSET(second, &set))
                second++;
            snprintf(list, sizeof(list), "%d,%d", second, first);
            MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
            MPI_Comm_rank(host, &here);
            MPI_Comm_free(&host);
            serve_once(list, "short", "0", here % 2 == 0 ? second : first);
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
