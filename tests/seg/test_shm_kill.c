/* A rank SIGKILLed inside weft_seg_alloc or weft_finalize, or after its
 * segments are mapped: run by check_shm_kill.sh, which then checks that no
 * weft file stays in /dev/shm.  A killed rank cannot clean anything up, so
 * this holds only if no name exists across a step that can be cut short.
 *
 * The steps are the MPI calls and the system calls of shared memory and
 * Unix sockets that weft makes inside weft_seg_alloc and weft_finalize:
 * this program defines them, counts them and forwards them to MPI's PMPI_
 * entry points and to the C library, so that the library is tested as it
 * is built, with no hook of its own.
 *
 *   SHM_KILL_RANK=r SHM_KILL_STEP=s   rank r raises SIGKILL before its
 *                                     step s (counted from 1)
 *   SHM_KILL_STEP=mapped              the last rank kills itself once both
 *                                     segments are mapped
 *   SHM_KILL_LOOP=seconds             allocate and free segments until
 *                                     killed from outside (the pids go to
 *                                     SHM_KILL_PIDS, one line per rank)
 *   none of these                     a run that prints each rank's number
 *                                     of steps ("steps: N") */
#define _GNU_SOURCE
#include "../common.h"

#include <dlfcn.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int armed;        /* counting: inside weft_seg_alloc or weft_finalize */
static int steps;        /* steps counted so far */
static int kill_step;    /* 0: none */
static int my_rank = -1;

/* One step: the process dies here if it is the chosen one. */
static void step(const char *what)
{
    if (!armed)
        return;
    steps++;
    if (getenv("SHM_KILL_TRACE") != NULL)
        fprintf(stderr, "rank %d step %d: %s\n", my_rank, steps, what);
    if (kill_step > 0 && steps == kill_step) {
        fprintf(stderr, "rank %d: SIGKILL at step %d, before %s\n", my_rank, steps, what);
        raise(SIGKILL);
    }
}

#define NEXT(ret, name, ...)                                      \
    static ret (*next)(__VA_ARGS__);                              \
    if (next == NULL)                                             \
        *(void **)&next = dlsym(RTLD_NEXT, name)

int MPI_Iallreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c,
                   MPI_Request *q)
{
    step("MPI_Iallreduce");
    return PMPI_Iallreduce(s, r, n, t, op, c, q);
}

int MPI_Allgather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                  MPI_Comm c)
{
    step("MPI_Allgather");
    return PMPI_Allgather(s, sn, st, r, rn, rt, c);
}

int MPI_Allgatherv(const void *s, int sn, MPI_Datatype st, void *r, const int *rn,
                   const int *d, MPI_Datatype rt, MPI_Comm c)
{
    step("MPI_Allgatherv");
    return PMPI_Allgatherv(s, sn, st, r, rn, d, rt, c);
}

int MPI_Ibarrier(MPI_Comm c, MPI_Request *q)
{
    step("MPI_Ibarrier");
    return PMPI_Ibarrier(c, q);
}

int MPI_Comm_free(MPI_Comm *c)
{
    step("MPI_Comm_free");
    return PMPI_Comm_free(c);
}

int shm_open(const char *name, int flags, mode_t mode)
{
    NEXT(int, "shm_open", const char *, int, mode_t);
    step("shm_open");
    return next(name, flags, mode);
}

int shm_unlink(const char *name)
{
    NEXT(int, "shm_unlink", const char *);
    step("shm_unlink");
    return next(name);
}

int ftruncate(int fd, off_t len)
{
    NEXT(int, "ftruncate", int, off_t);
    step("ftruncate");
    return next(fd, len);
}

int posix_fallocate(int fd, off_t off, off_t len)
{
    NEXT(int, "posix_fallocate", int, off_t, off_t);
    step("posix_fallocate");
    return next(fd, off, len);
}

int socket(int domain, int type, int proto)
{
    NEXT(int, "socket", int, int, int);
    /* UCX opens many inet sockets (interface queries) in weft_finalize:
     * only the Unix sockets of segments are steps */
    if (domain == AF_UNIX)
        step("socket");
    return next(domain, type, proto);
}

int connect(int fd, const struct sockaddr *a, socklen_t len)
{
    NEXT(int, "connect", int, const struct sockaddr *, socklen_t);
    step("connect");
    return next(fd, a, len);
}

ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
    NEXT(ssize_t, "sendmsg", int, const struct msghdr *, int);
    step("sendmsg");
    return next(fd, m, flags);
}

int accept4(int fd, struct sockaddr *a, socklen_t *len, int flags)
{
    NEXT(int, "accept4", int, struct sockaddr *, socklen_t *, int);
    step("accept4");
    return next(fd, a, len, flags);
}

ssize_t recvmsg(int fd, struct msghdr *m, int flags)
{
    NEXT(ssize_t, "recvmsg", int, struct msghdr *, int);
    step("recvmsg");
    return next(fd, m, flags);
}

static double now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Allocate and free segments until killed from outside. */
static int loop(weft_ctx_t ctx, int rank, double seconds)
{
    const char *path = getenv("SHM_KILL_PIDS");
    double end = now() + seconds;
    weft_seg_t s;

    if (path != NULL) {
        FILE *f = fopen(path, "a");

        CHECK(f != NULL);
        fprintf(f, "%d %d\n", rank, (int)getpid());
        fclose(f);
    }
    while (now() < end) {
        OK(weft_seg_alloc(ctx, 8 << 20, &s, NULL));
        OK(weft_seg_free(ctx, s));
    }
    OK(weft_finalize(ctx));
    return 0;
}

int main(void)
{
    const char *ks = getenv("SHM_KILL_STEP"), *kr = getenv("SHM_KILL_RANK"),
               *kl = getenv("SHM_KILL_LOOP");
    int mapped = ks != NULL && strcmp(ks, "mapped") == 0;
    weft_ctx_t ctx;
    weft_seg_t a, b;
    void *p;
    int rank, n;

    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    my_rank = rank;
    if (kl != NULL)
        return loop(ctx, rank, atof(kl));
    if (ks != NULL && !mapped && kr != NULL && atoi(kr) == rank)
        kill_step = atoi(ks);

    armed = 1;
    OK(weft_seg_alloc(ctx, 1 << 20, &a, NULL));
    OK(weft_seg_alloc(ctx, 4096, &b, NULL));
    armed = 0;
    /* the segments are mapped across ranks */
    OK(weft_ptr(ctx, (rank + 1) % n, a, 0, &p));
    OK(weft_barrier(ctx));
    if (mapped && rank == n - 1) {
        printf("rank %d: segments mapped, killing myself\n", rank);
        fflush(stdout);
        raise(SIGKILL);
    }
    if (mapped) {
        /* the others wait to be taken down by the launcher */
        sleep(30);
        return 3;
    }
    armed = 1;
    OK(weft_finalize(ctx));
    armed = 0;
    printf("rank %d steps: %d\n", rank, steps);
    return 0;
}
