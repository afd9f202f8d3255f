/* A described machine as weft accepts it (src/team/path.c): an hwloc
 * synthetic string (WEFT_TOPO_SYNTHETIC), a binding (WEFT_TOPO_BIND) and a
 * node name, one per line, turned into the rank's path through the tree.
 * hwloc parses the string; weft must turn whatever hwloc accepts, with any
 * binding, into a path or a clear error.  Properties of a path: it starts
 * at the job and the node, is no deeper than WEFT__TOPO_MAX_DEPTH, and
 * every level has a name.
 *
 * hwloc's load time grows with the square of a level's width (its
 * insert_object_by_cpuset compares each new object with its siblings): a
 * string whose numbers multiply past MAX_OBJECTS is skipped, since
 * 'numa:2 core:44449 pu:1' takes minutes and '5555' (one level of 5555
 * PUs) 15 s inside hwloc, not weft. */
#include "fuzz.h"
#include "team/team.h"

#include <ctype.h>

#define MAX_OBJECTS 2048

/* The product of the numbers of s: at least the number of objects
 * of the deepest level it describes. */
static int too_large(const char *s)
{
    double product = 1;

    for (const char *p = s; *p;) {
        if (!isdigit((unsigned char)*p)) {
            p++;
            continue;
        }
        char  *end;
        double v = (double)strtoull(p, &end, 0);  /* hwloc reads 0x... too */
        p = end > p ? end : p + 1;
        if (v > 1)
            product *= v;
    }
    return product > MAX_OBJECTS;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    weft__topo_settings_t s = {0};
    weft__msg_t           err;
    weft__topo_bind_t     bind;
    weft__topo_path_t     path;
    hwloc_topology_t      topo;
    hwloc_bitmap_t        set;
    char                 *text = fuzz_cstr(data, size), *bind_spec, *node;
    weft_status_t         st;

    /* line 1: synthetic string; line 2: binding of rank 0 of 1; line 3: node */
    s.synthetic = text;
    bind_spec = strchr(text, '\n');
    if (bind_spec)
        *bind_spec++ = '\0';
    node = bind_spec ? strchr(bind_spec, '\n') : NULL;
    if (node)
        *node++ = '\0';
    if (node == NULL || *node == '\0' || strlen(node) >= WEFT__TOPO_NAME_MAX)
        node = "node0";

    if (too_large(text)) {
        free(text);
        return 0;
    }
    st = weft__topo_parse_bind(bind_spec && *bind_spec ? bind_spec : NULL, 0, 1, &bind, &err);
    if (st == WEFT_OK && weft__topo_load(&s, node, &topo, &err) == WEFT_OK) {
        set = hwloc_bitmap_alloc();
        FUZZ_ASSERT(set != NULL);
        st = weft__topo_bind_cpuset(topo, &bind, 0, 1, set, &err);
        if (st == WEFT_OK)
            st = weft__topo_path(NULL, node, topo, set, &path, &err);
        if (st == WEFT_OK) {
            FUZZ_ASSERT(path.depth >= 2 && path.depth <= WEFT__TOPO_MAX_DEPTH);
            FUZZ_ASSERT(strcmp(path.elem[0].type, "Cluster") == 0);
            FUZZ_ASSERT(strcmp(path.elem[1].type, "Machine") == 0);
            for (int i = 0; i < path.depth; i++)
                FUZZ_ASSERT(path.elem[i].type != NULL && path.elem[i].type[0] != '\0');
        } else {
            FUZZ_ASSERT(err.msg[0] != '\0');
        }
        hwloc_bitmap_free(set);
        hwloc_topology_destroy(topo);
    } else {
        FUZZ_ASSERT(err.msg[0] != '\0');
    }
    free(text);
    return 0;
}
