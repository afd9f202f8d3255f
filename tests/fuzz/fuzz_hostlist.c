/* Slurm hostlists (src/team/hostlist.c): "n[0-3,7]", "gpu[01-02]x",
 * "r[0-1]n[0-1]".  Properties: an accepted list yields at least one name,
 * each non-empty, shorter than WEFT__TOPO_NAME_MAX and free of the list's
 * own syntax; a rejected one says why. */
#include "fuzz.h"
#include "team/team.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    weft__msg_t      err;
    char           **names = NULL;
    int              count = -1;
    char            *list = fuzz_cstr(data, size);
    weft_status_t    st = weft__topo_hostlist(list, &names, &count, &err);

    if (st != WEFT_OK) {
        FUZZ_ASSERT(st == WEFT_ERR_CONFIG && err.msg[0] != '\0' && count == -1);
    } else {
        FUZZ_ASSERT(count >= 1);
        for (int i = 0; i < count; i++) {
            size_t len = strlen(names[i]);
            FUZZ_ASSERT(len > 0 && len < WEFT__TOPO_NAME_MAX);
            FUZZ_ASSERT(strpbrk(names[i], "[],") == NULL);
        }
        weft__topo_names_free(names, count);
    }
    free(list);
    return 0;
}
