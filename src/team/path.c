/* A rank's view of the machine as a root-to-leaf path of objects: the whole
 * job, its network switches, its node, then the hwloc objects whose cpusets
 * contain its binding.  The split (split.c) only compares paths, so this
 * file is where the paper's tree is defined:
 *
 *  - hwloc 2 hangs NUMA nodes beside the tree as memory children; the
 *    paper's examples (hwloc 1) have them as a level.  A NUMA node becomes a
 *    level just above the object it is attached to, so "Package + NUMA"
 *    is named NUMANode, the highest of the equal levels, as in §5.
 *  - I/O and Misc objects never form levels (only normal children are
 *    walked).
 *  - The path stops at the deepest object that contains the binding, so a
 *    rank bound to an L3 sees nothing below it and an unbound one nothing
 *    below its node (§3.2.4).
 * No MPI here. */
#include "team.h"

#include <stdio.h>
#include <string.h>

weft_status_t weft__topo_load(const weft__topo_settings_t *s, const char *node,
                              hwloc_topology_t *topo, weft__msg_t *err)
{
    hwloc_topology_t t;

    if (hwloc_topology_init(&t) != 0)
        return weft__fail(err, WEFT_ERR_NO_MEMORY, "hwloc_topology_init failed");
    if (s->synthetic) {
        if (hwloc_topology_set_synthetic(t, s->synthetic) != 0) {
            hwloc_topology_destroy(t);
            return weft__fail(err, WEFT_ERR_CONFIG,
                              "WEFT_TOPO_SYNTHETIC '%.120s' is not a valid hwloc synthetic "
                              "description (e.g. \"pack:2 [numa] l3:1 l2:2 core:2 pu:1\")",
                              s->synthetic);
        }
    } else if (s->xml) {
        /* "{node}" in the path selects one file per node. */
        char        path[1024];
        const char *hole = strstr(s->xml, "{node}");
        int n = hole ? snprintf(path, sizeof(path), "%.*s%s%s", (int)(hole - s->xml), s->xml, node,
                                hole + 6)
                     : snprintf(path, sizeof(path), "%s", s->xml);
        if (n < 0 || (size_t)n >= sizeof(path) || hwloc_topology_set_xml(t, path) != 0) {
            hwloc_topology_destroy(t);
            return weft__fail(err, WEFT_ERR_CONFIG,
                              "WEFT_TOPO_XML '%.200s' cannot be read as an hwloc XML topology",
                              path);
        }
    }
    if (hwloc_topology_load(t) != 0) {
        hwloc_topology_destroy(t);
        return weft__fail(err, WEFT_ERR_CONFIG, "hwloc cannot load the %s topology",
                          s->synthetic ? "synthetic" : s->xml ? "XML" : "machine's");
    }
    *topo = t;
    return WEFT_OK;
}

/* The index-th object of a type, or NULL with a message naming the count. */
static hwloc_obj_t object_of(hwloc_topology_t topo, hwloc_obj_type_t type, unsigned index,
                             const char *what, weft__msg_t *err)
{
    int depth = hwloc_get_type_depth(topo, type);
    if (depth == HWLOC_TYPE_DEPTH_MULTIPLE) {
        weft__fail(err, WEFT_ERR_CONFIG,
                   "binding '%s': %s objects sit at several depths of this machine, name "
                   "another type", what, hwloc_obj_type_string(type));
        return NULL;
    }
    int         count = depth == HWLOC_TYPE_DEPTH_UNKNOWN ? 0 : hwloc_get_nbobjs_by_depth(topo, depth);
    hwloc_obj_t obj = count > 0 ? hwloc_get_obj_by_depth(topo, depth, index) : NULL;
    if (!obj)
        weft__fail(err, WEFT_ERR_CONFIG,
                   "binding '%s' is outside the machine: it has %d %s object%s", what, count,
                   hwloc_obj_type_string(type), count == 1 ? "" : "s");
    return obj;
}

weft_status_t weft__topo_bind_cpuset(hwloc_topology_t topo, const weft__topo_bind_t *bind,
                                     int local_index, int described, hwloc_bitmap_t set,
                                     weft__msg_t *err)
{
    hwloc_const_bitmap_t all = hwloc_topology_get_topology_cpuset(topo);
    hwloc_obj_t          obj;

    switch (bind->kind) {
    case WEFT__BIND_OS:
        /* A described node is not the one we run on: its binding is unknown. */
        if (described || hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) != 0)
            hwloc_bitmap_copy(set, all);
        hwloc_bitmap_and(set, set, all);
        if (hwloc_bitmap_iszero(set))
            hwloc_bitmap_copy(set, all);
        return WEFT_OK;
    case WEFT__BIND_UNBOUND:
        hwloc_bitmap_copy(set, all);
        return WEFT_OK;
    case WEFT__BIND_OBJECTS:
        hwloc_bitmap_zero(set);
        for (unsigned i = bind->first; i <= bind->last; i++) {
            if (!(obj = object_of(topo, bind->type, i, bind->text, err)))
                return WEFT_ERR_CONFIG;
            hwloc_bitmap_or(set, set, obj->cpuset);
        }
        return WEFT_OK;
    case WEFT__BIND_MASK:
        hwloc_bitmap_from_ulong(set, (unsigned long)bind->mask);
        if (!hwloc_bitmap_isincluded(set, all))
            return weft__fail(err, WEFT_ERR_CONFIG,
                              "binding '%s' is outside the machine (PUs of the machine: "
                              "0x%llx)", bind->text,
                              (unsigned long long)hwloc_bitmap_to_ulong(all));
        return WEFT_OK;
    case WEFT__BIND_RULE:
        if (!(obj = object_of(topo, bind->type, (unsigned)local_index, bind->text, err)))
            return weft__fail(err, WEFT_ERR_CONFIG,
                              "rule '%s' needs one object per rank of the node: %.200s",
                              bind->text, err->msg);
        hwloc_bitmap_copy(set, obj->cpuset);
        return WEFT_OK;
    }
    return weft__fail(err, WEFT_ERR_INVALID_ARG, "unknown binding kind");
}

static weft_status_t push(weft__topo_path_t *path, uint64_t id, int64_t order, const char *type,
                          weft__msg_t *err)
{
    if (path->depth == WEFT__TOPO_MAX_DEPTH)
        return weft__fail(err, WEFT_ERR_TOO_LARGE, "topology deeper than %d levels",
                          WEFT__TOPO_MAX_DEPTH);
    path->elem[path->depth++] = (weft__topo_elem_t){.id = id, .order = order,
                                                    .type = weft__topo_intern(type)};
    return WEFT_OK;
}

/* Switches from the root of the network down to the node's leaf switch. */
static weft_status_t push_switches(const weft__topo_net_t *net, const char *node,
                                   weft__topo_path_t *path, int64_t *node_order,
                                   weft__msg_t *err)
{
    int leaf = -1, chain[WEFT__TOPO_MAX_DEPTH], n = 0;

    for (int i = 0; i < net->nnodes && leaf < 0; i++)
        if (strcmp(net->nodes[i], node) == 0) {
            leaf = net->node_switch[i];
            *node_order = net->node_position[i];
        }
    if (leaf < 0)
        return weft__fail(err, WEFT_ERR_CONFIG,
                          "node '%s' is not listed in topology.conf (every node of the job "
                          "must be under a switch)", node);
    for (int s = leaf; s >= 0; s = net->switches[s].parent) {
        if (n == WEFT__TOPO_MAX_DEPTH)
            return weft__fail(err, WEFT_ERR_TOO_LARGE, "switch tree deeper than %d levels",
                              WEFT__TOPO_MAX_DEPTH);
        chain[n++] = s;
    }
    while (n-- > 0) {
        const weft__topo_switch_t *sw = &net->switches[chain[n]];
        char                       type[WEFT__TOPO_NAME_MAX];
        snprintf(type, sizeof(type), "Switch%d", sw->height);
        weft_status_t st = push(path, weft__topo_hash_str(weft__topo_hash_str(0, "switch"),
                                                          sw->name),
                                sw->position, type, err);
        if (st != WEFT_OK)
            return st;
    }
    return WEFT_OK;
}

/* The normal child of obj whose cpuset holds the binding, if any. */
static hwloc_obj_t child_holding(hwloc_obj_t obj, hwloc_const_bitmap_t binding)
{
    for (hwloc_obj_t c = obj->first_child; c; c = c->next_sibling)
        if (c->cpuset && hwloc_bitmap_isincluded(binding, c->cpuset))
            return c;
    return NULL;
}

weft_status_t weft__topo_path(const weft__topo_net_t *net, const char *node,
                              hwloc_topology_t topo, hwloc_const_bitmap_t binding,
                              weft__topo_path_t *path, weft__msg_t *err)
{
    weft__topo_path_t p = {0};
    int64_t           node_order = -1;
    hwloc_obj_t       obj = hwloc_get_root_obj(topo);
    weft_status_t     st;

    if (hwloc_bitmap_iszero(binding) || !hwloc_bitmap_isincluded(binding, obj->cpuset))
        return weft__fail(err, WEFT_ERR_CONFIG, "binding outside the machine of node '%s'",
                          node);
    st = push(&p, weft__topo_hash_str(0, "cluster"), 0, "Cluster", err);
    if (st == WEFT_OK && net)
        st = push_switches(net, node, &p, &node_order, err);
    uint64_t node_id = weft__topo_hash_str(weft__topo_hash_str(0, "node"), node);
    if (st == WEFT_OK)
        st = push(&p, node_id, node_order, "Machine", err);
    for (hwloc_obj_t c; st == WEFT_OK && (c = child_holding(obj, binding)); obj = c) {
        char     type[WEFT__TOPO_NAME_MAX];
        uint64_t where[2] = {(uint64_t)c->depth, c->logical_index};
        int64_t  order = c->sibling_rank;
        if (c->memory_arity > 0) {
            uint64_t numa = c->memory_first_child->logical_index;
            st = push(&p, weft__topo_hash(weft__topo_hash_str(node_id, "numa"), &numa, sizeof(numa)),
                      order, "NUMANode", err);
            order = 0;  /* the object is the only child of its NUMA level */
        }
        hwloc_obj_type_snprintf(type, sizeof(type), c, 1);
        if (st == WEFT_OK)
            st = push(&p, weft__topo_hash(node_id, where, sizeof(where)), order, type, err);
    }
    if (st == WEFT_OK)
        *path = p;
    return st;
}
