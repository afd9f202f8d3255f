/* The attacker of check_cross_user.sh: tries to reach the memory of a
 * running job from outside it, and reports every attempt.
 *
 *   attach_all other PID...   every System V segment (shmat, read-only
 *                             and read-write), every file of /dev/shm
 *                             (open), and each PID's /proc/PID/maps,
 *                             map_files, mem and fd entries: all must fail
 *                             (with ATTACH_MAPS_DIR, maps.PID there lists
 *                             the ranges to try when maps is denied)
 *   attach_all same UID       a process of the job's own user (another
 *                             job): the System V segments of UID, which
 *                             it could attach, must not exist
 *
 * Exit status 0 when nothing was reached, 1 otherwise, 2 on bad usage. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/shm.h>
#include <unistd.h>

static int attempts, reached;

static void result(int ok, const char *what)
{
    attempts++;
    if (ok) {
        reached++;
        printf("REACHED: %s\n", what);
    }
}

/* The ids and owners of the System V segments, from /proc/sysvipc/shm. */
static void sysv(int only_uid, int *found)
{
    FILE *f = fopen("/proc/sysvipc/shm", "r");
    char line[512], what[128];

    *found = 0;
    if (f == NULL)
        return;
    if (fgets(line, sizeof(line), f) == NULL) {  /* the header */
        fclose(f);
        return;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        long key, size;
        int id, perms, cpid, lpid, nattch, uid;

        if (sscanf(line, "%ld %d %o %ld %d %d %d %d", &key, &id, &perms, &size, &cpid, &lpid,
                   &nattch, &uid) != 8)
            continue;
        if (only_uid >= 0 && uid != only_uid)
            continue;
        (*found)++;
        printf("System V segment %d: mode %03o, uid %d, %ld bytes\n", id, perms, uid, size);
        void *p = shmat(id, NULL, SHM_RDONLY);
        snprintf(what, sizeof(what), "shmat(%d, read-only)", id);
        result(p != (void *)-1, what);
        if (p != (void *)-1)
            shmdt(p);
        p = shmat(id, NULL, 0);
        snprintf(what, sizeof(what), "shmat(%d, read-write)", id);
        result(p != (void *)-1, what);
        if (p != (void *)-1)
            shmdt(p);
    }
    fclose(f);
}

static void try_open(const char *path, int flags, const char *how)
{
    char what[600];
    int fd = open(path, flags | O_CLOEXEC);

    snprintf(what, sizeof(what), "open(%s, %s)", path, how);
    result(fd >= 0, what);
    if (fd >= 0)
        close(fd);
}

static void dev_shm(void)
{
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    char path[512];

    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name);
        try_open(path, O_RDONLY, "read");
        try_open(path, O_RDWR, "write");
    }
    closedir(d);
}

/* /proc/PID/maps, and each mapping through map_files and mem; the
 * descriptors in /proc/PID/fd. */
static void process(int pid)
{
    char path[320], line[512], what[600];
    FILE *maps;
    DIR *d;
    struct dirent *e;
    int mem;

    snprintf(path, sizeof(path), "/proc/%d/maps", pid);
    maps = fopen(path, "r");
    result(maps != NULL && fgets(line, sizeof(line), maps) != NULL, path);
    if (maps != NULL) {
        rewind(maps);
    } else if (getenv("ATTACH_MAPS_DIR") != NULL) {
        /* maps is denied: every range is still tried, from a copy the
         * job's owner made (as an attacker who guessed them would) */
        snprintf(path, sizeof(path), "%s/maps.%d", getenv("ATTACH_MAPS_DIR"), pid);
        maps = fopen(path, "r");
    }
    snprintf(path, sizeof(path), "/proc/%d/mem", pid);
    mem = open(path, O_RDONLY | O_CLOEXEC);
    result(mem >= 0, "open(/proc/PID/mem)");
    while (maps != NULL && fgets(line, sizeof(line), maps) != NULL) {
        unsigned long lo, hi;
        char byte;

        if (sscanf(line, "%lx-%lx", &lo, &hi) != 2)
            continue;
        snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", pid, lo, hi);
        try_open(path, O_RDONLY, "read");
        if (mem >= 0) {
            snprintf(what, sizeof(what), "pread(/proc/%d/mem, 0x%lx)", pid, lo);
            result(pread(mem, &byte, 1, (off_t)lo) == 1, what);
        }
    }
    if (maps != NULL)
        fclose(maps);
    if (mem >= 0)
        close(mem);
    snprintf(path, sizeof(path), "/proc/%d/map_files", pid);
    d = opendir(path);
    result(d != NULL, path);
    if (d != NULL)
        closedir(d);
    snprintf(path, sizeof(path), "/proc/%d/fd", pid);
    d = opendir(path);
    result(d != NULL, path);
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/%d/fd/%s", pid, e->d_name);
        try_open(path, O_RDONLY, "read");
    }
    if (d != NULL)
        closedir(d);
}

int main(int argc, char **argv)
{
    int found;

    if (argc >= 3 && strcmp(argv[1], "same") == 0) {
        sysv(atoi(argv[2]), &found);
        printf("same user (uid %d): %d System V segments of the job's user, %d attaches "
               "succeeded\n", (int)geteuid(), found, reached);
        return found > 0 || reached > 0;
    }
    if (argc < 3 || strcmp(argv[1], "other") != 0) {
        fprintf(stderr, "usage: %s other PID... | %s same UID\n", argv[0], argv[0]);
        return 2;
    }
    sysv(-1, &found);
    dev_shm();
    for (int i = 2; i < argc; i++)
        process(atoi(argv[i]));
    printf("uid %d gid %d: %d attempts (%d System V segments), %d reached\n", (int)geteuid(),
           (int)getegid(), attempts, found, reached);
    return reached > 0;
}
