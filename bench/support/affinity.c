/* Where threads run (affinity.h). */
#define _GNU_SOURCE
#include "affinity.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

void bench_cpu_list(const cpu_set_t *set, char *out, size_t len)
{
    size_t used = 0;

    if (len == 0)
        return;
    out[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE; c++) {
        int e = c, n;

        if (!CPU_ISSET(c, set))
            continue;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))
            e++;
        n = e > c ? snprintf(out + used, len - used, "%s%d-%d", used ? "," : "", c, e)
                  : snprintf(out + used, len - used, "%s%d", used ? "," : "", c);
        if (n < 0 || (size_t)n >= len - used) {
            out[used] = '\0';
            return;
        }
        used += (size_t)n;
        c = e;
    }
}

int bench_progress_thread_set(cpu_set_t *out)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int seen = 0;

    while (d != NULL && (e = readdir(d)) != NULL) {
        char path[64], name[32] = "";
        pid_t tid = (pid_t)atoi(e->d_name);
        cpu_set_t set;
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
            *out = set;
    }
    if (d != NULL)
        closedir(d);
    return seen;
}
