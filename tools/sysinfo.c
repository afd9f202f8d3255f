/*
 * weft_sysinfo -- what this machine offers weft, as JSON on stdout:
 * versions of weft, UCX, MPI and hwloc, UCX's transports and devices, and
 * a summary of the hwloc tree.  Used by `weft info` and recorded with
 * benchmark results.  Needs no MPI launcher.
 */
#include <weft.h>

#include <hwloc.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <ucp/api/ucp.h>
#include <uct/api/uct.h>

/* Print s as a JSON string. */
static void jstr(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", (unsigned char)*s);
        else
            putchar(*s);
    }
    putchar('"');
}

static void transports(void)
{
    uct_component_h *comps;
    unsigned ncomps;
    int first = 1;

    printf("\"transports\": [");
    if (uct_query_components(&comps, &ncomps) != UCS_OK) {
        printf("]");
        return;
    }
    for (unsigned c = 0; c < ncomps; c++) {
        uct_component_attr_t ca = {.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME |
                                                 UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT};
        if (uct_component_query(comps[c], &ca) != UCS_OK)
            continue;
        uct_md_resource_desc_t mds[ca.md_resource_count ? ca.md_resource_count : 1];
        ca.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
        ca.md_resources = mds;
        if (uct_component_query(comps[c], &ca) != UCS_OK)
            continue;
        for (unsigned m = 0; m < ca.md_resource_count; m++) {
            uct_md_config_t *mdc;
            uct_md_h md;
            uct_tl_resource_desc_t *tls;
            unsigned ntls;

            if (uct_md_config_read(comps[c], NULL, NULL, &mdc) != UCS_OK)
                continue;
            if (uct_md_open(comps[c], mds[m].md_name, mdc, &md) == UCS_OK) {
                if (uct_md_query_tl_resources(md, &tls, &ntls) == UCS_OK) {
                    for (unsigned t = 0; t < ntls; t++) {
                        printf("%s{\"component\": ", first ? "" : ", ");
                        jstr(ca.name);
                        printf(", \"transport\": ");
                        jstr(tls[t].tl_name);
                        printf(", \"device\": ");
                        jstr(tls[t].dev_name);
                        printf("}");
                        first = 0;
                    }
                    uct_release_tl_resource_list(tls);
                }
                uct_md_close(md);
            }
            uct_config_release(mdc);
        }
    }
    uct_release_component_list(comps);
    printf("]");
}

static void hwloc_info(void)
{
    hwloc_topology_t topo;
    int depth, first = 1;
    char summary[1024] = "", attr[128], type[64];
    size_t used = 0;

    /* the release comes from the build (pkg-config); the library only
     * reports its API version */
    printf("\"hwloc\": {\"version\": \"%s\", \"api_version\": \"%u.%u.%u\", ", WEFT_HWLOC_VERSION,
           (hwloc_get_api_version() >> 16) & 0xff, (hwloc_get_api_version() >> 8) & 0xff,
           hwloc_get_api_version() & 0xff);
    if (hwloc_topology_init(&topo) != 0 || hwloc_topology_load(topo) != 0) {
        printf("\"error\": \"cannot load the topology\"}");
        return;
    }
    depth = hwloc_topology_get_depth(topo);
    printf("\"levels\": [");
    for (int d = 0; d < depth; d++) {
        hwloc_obj_t o = hwloc_get_obj_by_depth(topo, d, 0);
        unsigned n = (unsigned)hwloc_get_nbobjs_by_depth(topo, d);
        hwloc_obj_type_snprintf(type, sizeof(type), o, 0);
        attr[0] = '\0';
        if (hwloc_obj_type_is_cache(o->type))
            snprintf(attr, sizeof(attr), "%llu KiB", (unsigned long long)o->attr->cache.size / 1024);
        printf("%s{\"depth\": %d, \"type\": ", first ? "" : ", ", d);
        jstr(type);
        printf(", \"count\": %u, \"attr\": ", n);
        jstr(attr);
        printf("}");
        first = 0;
        /* "Machine > Package > L3 (256 MiB) > 2 x (L2 ...)" */
        unsigned parent_n = d ? (unsigned)hwloc_get_nbobjs_by_depth(topo, d - 1) : 1;
        used += (size_t)snprintf(summary + used, used < sizeof(summary) ? sizeof(summary) - used : 0,
                                 "%s%s%.0u%s%s%s%s%s", d ? " > " : "",
                                 n > parent_n ? "" : "", n > parent_n ? n / parent_n : 0,
                                 n > parent_n ? " x " : "", type, attr[0] ? " (" : "", attr,
                                 attr[0] ? ")" : "");
    }
    printf("], \"summary\": ");
    jstr(summary);
    printf(", \"cores\": %d, \"pus\": %d, \"numa_nodes\": %d}",
           hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE), hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU),
           hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE));
    hwloc_topology_destroy(topo);
}

int main(void)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len, major, minor;

    MPI_Get_library_version(lib, &len);
    MPI_Get_version(&major, &minor);
    /* keep the first line: Open MPI adds repository details after it */
    lib[strcspn(lib, "\n")] = '\0';
    printf("{\"weft_version\": \"%d.%d.%d\", ", WEFT_VERSION_MAJOR, WEFT_VERSION_MINOR,
           WEFT_VERSION_PATCH);
    printf("\"ucx\": {\"version\": ");
    jstr(ucp_get_version_string());
    printf(", ");
    transports();
    printf("}, \"mpi\": {\"library\": ");
    jstr(lib);
    printf(", \"standard\": \"%d.%d\"}, ", major, minor);
    hwloc_info();
    printf("}\n");
    return 0;
}
