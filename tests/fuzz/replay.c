/* Runs a fuzz target's entry point once on every file of the directories
 * (or files) named on the command line: the seed corpus and the inputs
 * that once crashed it.  Built in every configuration, so the regression
 * inputs are checked by `make check` with gcc as well as under the
 * sanitizers; libFuzzer is needed only to search for new inputs. */
#include "fuzz.h"

#include <dirent.h>
#include <sys/stat.h>

static int run_file(const char *path)
{
    FILE    *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t   len = 0, cap = 0, n;

    if (f == NULL) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    do {
        if (len == cap) {
            cap = cap ? 2 * cap : 4096;
            if ((buf = realloc(buf, cap)) == NULL)
                abort();
        }
        n = fread(buf + len, 1, cap - len, f);
        len += n;
    } while (n > 0);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
    int inputs = 0;

    for (int i = 1; i < argc; i++) {
        struct stat     st;
        struct dirent **list;
        int             n;

        if (stat(argv[i], &st) != 0)
            continue;  /* a target may have no regression inputs yet */
        if (!S_ISDIR(st.st_mode)) {
            if (run_file(argv[i]) != 0)
                return 1;
            inputs++;
            continue;
        }
        if ((n = scandir(argv[i], &list, NULL, by_name)) < 0)
            return 1;
        for (int k = 0; k < n; k++) {
            char path[4096];
            if (list[k]->d_name[0] != '.') {
                snprintf(path, sizeof(path), "%s/%s", argv[i], list[k]->d_name);
                if (run_file(path) != 0)
                    return 1;
                inputs++;
            }
            free(list[k]);
        }
        free(list);
    }
    if (inputs == 0) {
        fprintf(stderr, "replay: no input found\n");
        return 1;
    }
    printf("replay: %d inputs, no crash\n", inputs);
    return 0;
}
