/* The shared-memory segments of a job cannot be reached by another
 * process.  This program wraps open (libweft calls it through the dynamic
 * linker, so the definition here is the one it gets) to see the unnamed
 * files weft creates in /dev/shm:
 *  - O_TMPFILE | O_EXCL (no name, and none can be given), mode 0600, owned
 *    by this user, no link;
 * then refuses O_TMPFILE, as a /dev/shm that does not support it would,
 * and wraps shm_open to see every object weft creates instead
 * ("/weft-..."), and to play an attacker who creates weft's next name
 * first:
 *  - weft creates with O_CREAT | O_EXCL, mode 0600 (checked with fstat on
 *    the new object: owner-only, owned by this user), under "/weft-" and
 *    32 hex digits from getrandom, different for every rank and segment;
 *  - once weft_seg_alloc returns, the name is gone: opening it, as a
 *    process of another job would have to, fails with ENOENT;
 *  - a name taken beforehand makes weft draw a new one, never open the
 *    attacker's object (whose content and size stay as they were); taken
 *    on every try, weft_seg_alloc fails cleanly with WEFT_ERR_BUSY on
 *    every rank, and the context stays usable.
 *  - a process of the same user that is not a rank (another job) connects
 *    to the Unix socket on which a rank takes its peers' descriptors, once
 *    staying silent and once sending a forged message (a peer's rank and
 *    a descriptor of its own object): weft_seg_alloc neither waits for it
 *    nor maps its object.
 * Run with 2 ranks on one node (the direct path on). */
#define _GNU_SOURCE
#include "../common.h"

#include <dlfcn.h>
#include <signal.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define SEG 4096
#define MAX_CREATED 16
#define MARK "attacker's object"

static struct created {
    char   name[64];
    int    oflag;
    mode_t mode, st_mode;
    uid_t  st_uid;
} created[MAX_CREATED];
static int ncreated, attacks_left, attacks_made;
static int ntmpfiles, refuse_tmpfile, intrude, my_rank;
static pid_t intruders[2];

/* A process that is not a rank connects to the socket at a: silent, or
 * forging the message of rank claim with an object of its own. */
static pid_t intruder(const struct sockaddr_un *a, socklen_t len, int forge, int claim)
{
    pid_t pid = fork();

    if (pid != 0)
        return pid;
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    if (s < 0 || connect(s, (const struct sockaddr *)a, len) != 0)
        _exit(1);
    if (forge) {
        union {
            struct cmsghdr h;
            char           buf[CMSG_SPACE(sizeof(int))];
        } ctl;
        int32_t r = claim;
        struct iovec iov = {.iov_base = &r, .iov_len = sizeof(r)};
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                             .msg_controllen = sizeof(ctl.buf)};
        int fd = memfd_create("intruder", 0);
        struct cmsghdr *c;

        if (fd < 0 || ftruncate(fd, SEG) != 0 || write(fd, MARK, sizeof(MARK)) < 0)
            _exit(1);
        fchmod(fd, 0600);
        memset(&ctl, 0, sizeof(ctl));
        c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
        if (sendmsg(s, &msg, 0) != (ssize_t)sizeof(r))
            _exit(1);
    }
    sleep(20);  /* stays connected, silent or not */
    _exit(0);
}

/* weft learns its socket's address with getsockname right after listen:
 * the moment for the intruders to connect. */
int getsockname(int fd, struct sockaddr *a, socklen_t *len)
{
    static int (*real)(int, struct sockaddr *, socklen_t *);
    int rc;

    if (real == NULL)
        *(void **)&real = dlsym(RTLD_NEXT, "getsockname");
    rc = real(fd, a, len);
    if (rc == 0 && intrude && a->sa_family == AF_UNIX) {
        intruders[0] = intruder((const struct sockaddr_un *)a, *len, 0, 0);
        intruders[1] = intruder((const struct sockaddr_un *)a, *len, 1, 1 - my_rank);
        intrude = 0;
    }
    return rc;
}

/* Unnamed files of /dev/shm: checked as they are created, or refused. */
static int wrap_open(const char *sym, const char *path, int flags, mode_t mode)
{
    int (*real)(const char *, int, ...);
    struct stat st;
    int fd;

    *(void **)&real = dlsym(RTLD_NEXT, sym);
    if (strcmp(path, "/dev/shm") != 0 || (flags & O_TMPFILE) != O_TMPFILE)
        return real(path, flags, mode);
    if (refuse_tmpfile) {
        errno = EOPNOTSUPP;
        return -1;
    }
    fd = real(path, flags, mode);
    CHECK(fd >= 0);
    CHECK((flags & O_EXCL) && mode == 0600);
    CHECK(fstat(fd, &st) == 0 && (st.st_mode & 07777) == 0600 && st.st_uid == geteuid() &&
          st.st_nlink == 0);
    ntmpfiles++;
    return fd;
}

int open(const char *path, int flags, ...)
{
    va_list ap;
    mode_t mode;

    va_start(ap, flags);
    mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
    va_end(ap);
    return wrap_open("open", path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
    va_list ap;
    mode_t mode;

    va_start(ap, flags);
    mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
    va_end(ap);
    return wrap_open("open64", path, flags, mode);
}
static char attacked[8][64];

int shm_open(const char *name, int oflag, mode_t mode)
{
    static int (*real)(const char *, int, mode_t);
    int fd;

    if (real == NULL)
        *(void **)&real = dlsym(RTLD_NEXT, "shm_open");
    /* MPI's and UCX's own objects pass through */
    if (strncmp(name, "/weft-", 6) != 0)
        return real(name, oflag, mode);
    if ((oflag & O_CREAT) && attacks_left > 0) {
        /* another user's process got there first, with a world-writable object */
        int afd = real(name, O_RDWR | O_CREAT | O_EXCL, 0666);

        CHECK(afd >= 0 && fchmod(afd, 0666) == 0);
        CHECK(write(afd, MARK, sizeof(MARK)) == (ssize_t)sizeof(MARK));
        close(afd);
        snprintf(attacked[attacks_made++], sizeof(attacked[0]), "%s", name);
        attacks_left--;
    }
    fd = real(name, oflag, mode);
    if (fd >= 0 && (oflag & O_CREAT) && ncreated < MAX_CREATED) {
        struct created *c = &created[ncreated++];
        struct stat st;

        CHECK(fstat(fd, &st) == 0);
        snprintf(c->name, sizeof(c->name), "%s", name);
        c->oflag = oflag;
        c->mode = mode;
        c->st_mode = st.st_mode & 07777;
        c->st_uid = st.st_uid;
    }
    return fd;
}

static void check_created(const struct created *c)
{
    CHECK((c->oflag & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL));
    CHECK(c->mode == 0600 && c->st_mode == 0600 && c->st_uid == geteuid());
    CHECK(strncmp(c->name, "/weft-", 6) == 0 && strlen(c->name) == 6 + 32);
    CHECK(strspn(c->name + 6, "0123456789abcdef") == 32);
    /* gone: another job cannot open it by name */
    errno = 0;
    CHECK(shm_open(c->name, O_RDWR, 0) == -1 && errno == ENOENT);
}

/* The attacker's objects were never touched by weft; remove them. */
static void check_attacked(void)
{
    for (int i = 0; i < attacks_made; i++) {
        char buf[sizeof(MARK)];
        struct stat st;
        int fd = shm_open(attacked[i], O_RDWR, 0);

        CHECK(fd >= 0 && fstat(fd, &st) == 0);
        CHECK(st.st_size == (off_t)sizeof(MARK) && (st.st_mode & 0777) == 0666);
        CHECK(read(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf) && memcmp(buf, MARK, sizeof(MARK)) == 0);
        close(fd);
        CHECK(shm_unlink(attacked[i]) == 0);
    }
    attacks_made = 0;
}

/* A put to the right neighbour and back: the segment works. */
static void check_works(weft_ctx_t ctx, weft_ep_t ep, weft_seg_t seg, uint64_t *local, int rank,
                        int n)
{
    uint64_t v = 1000 + (uint64_t)rank;

    OK(weft_put(ep, (rank + 1) % n, seg, 0, &v, sizeof(v)));
    OK(weft_barrier(ctx));
    CHECK(*local == 1000 + (uint64_t)((rank + n - 1) % n));
}

int main(void)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg, seg2;
    uint64_t *local;
    int rank, n;
    char names[2][64], *all;

    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));

    /* intruders at every rank's socket: ignored, and not waited for */
    my_rank = rank;
    intrude = n == 2;
    OK(weft_seg_alloc(ctx, SEG, &seg, (void **)&local));
    if (n == 2) {
        uint64_t *peer;

        CHECK(intrude == 0);
        OK(weft_ptr(ctx, 1 - rank, seg, 0, (void **)&peer));
        CHECK(memcmp(peer, MARK, sizeof(MARK)) != 0);
        check_works(ctx, ep, seg, local, rank, n);
        for (int i = 0; i < 2; i++) {
            int status;

            kill(intruders[i], SIGKILL);
            CHECK(waitpid(intruders[i], &status, 0) == intruders[i]);
            /* the intruder got as far as connecting (and sending) */
            CHECK(WIFSIGNALED(status));
        }
    }
    OK(weft_seg_free(ctx, seg));

    /* unnamed files, where /dev/shm takes O_TMPFILE (tmpfs does) */
    ntmpfiles = 0;
    OK(weft_seg_alloc(ctx, SEG, &seg, (void **)&local));
    CHECK(ntmpfiles == 1 && ncreated == 0);
    check_works(ctx, ep, seg, local, rank, n);
    OK(weft_seg_free(ctx, seg));

    /* how weft creates, names and removes its objects without O_TMPFILE */
    refuse_tmpfile = 1;
    OK(weft_seg_alloc(ctx, SEG, &seg, (void **)&local));
    OK(weft_seg_alloc(ctx, SEG, &seg2, NULL));
    CHECK(ncreated == 2);
    check_created(&created[0]);
    check_created(&created[1]);
    CHECK(strcmp(created[0].name, created[1].name) != 0);
    /* every rank's names differ from every other's */
    snprintf(names[0], sizeof(names[0]), "%s", created[0].name);
    snprintf(names[1], sizeof(names[1]), "%s", created[1].name);
    all = malloc((size_t)n * sizeof(names));
    CHECK(all != NULL);
    MPI_Allgather(names, (int)sizeof(names), MPI_CHAR, all, (int)sizeof(names), MPI_CHAR,
                  MPI_COMM_WORLD);
    for (int i = 0; i < 2 * n; i++)
        for (int j = i + 1; j < 2 * n; j++)
            CHECK(strcmp(all + 64 * i, all + 64 * j) != 0);
    free(all);
    check_works(ctx, ep, seg, local, rank, n);
    OK(weft_seg_free(ctx, seg2));
    OK(weft_seg_free(ctx, seg));

    /* rank 0's first name taken: it draws another, the attacker's object is untouched */
    ncreated = 0;
    if (rank == 0)
        attacks_left = 1;
    OK(weft_seg_alloc(ctx, SEG, &seg, (void **)&local));
    CHECK(attacks_left == 0 && ncreated == 1);
    check_created(&created[0]);
    if (rank == 0)
        CHECK(attacks_made == 1 && strcmp(attacked[0], created[0].name) != 0);
    check_attacked();
    check_works(ctx, ep, seg, local, rank, n);
    OK(weft_seg_free(ctx, seg));

    /* every name rank 0 draws taken: a clean error on every rank */
    ncreated = 0;
    if (rank == 0)
        attacks_left = 8;
    seg = NULL;
    FAILS(weft_seg_alloc(ctx, SEG, &seg, (void **)&local), WEFT_ERR_BUSY);
    CHECK(seg == NULL);
    /* the other ranks' objects of the failed allocation are gone too */
    for (int i = 0; i < ncreated; i++)
        check_created(&created[i]);
    if (rank == 0) {
        CHECK(ncreated == 0);
        CHECK(strstr(weft_last_error(), "File exists") != NULL);
        CHECK(attacks_made >= 1 && attacks_made <= 8);
    }
    attacks_left = 0;
    check_attacked();

    /* and the context still works */
    OK(weft_seg_alloc(ctx, SEG, &seg, (void **)&local));
    check_works(ctx, ep, seg, local, rank, n);
    OK(weft_seg_free(ctx, seg));
    OK(weft_finalize(ctx));
    if (rank == 0)
        printf("shared memory: unnamed O_TMPFILE files, else O_EXCL, 0600, random names gone after allocation; "
               "pre-created names never used\n");
    return 0;
}
