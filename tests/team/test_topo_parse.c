/* The parsers and the path builder alone, without MPI: bindings, Slurm
 * hostlists, topology.conf, and the paths a rank sees on synthetic
 * machines.  Every error path has a case.  Node names (WEFT_TOPO_NODE)
 * are the runtime's: tests/runtime/test_node.c. */
#include "team/team.h"
#include "check.h"

#include <stdlib.h>

#define FIG1 "pack:2 [numa] l3:1 l2:2 core:2 pu:1"

static weft__msg_t err;

static void test_parse_bind_lists(void)
{
    weft__topo_bind_t b;

    CHECK(weft__topo_parse_bind(NULL, 0, 4, &b, &err) == WEFT_OK && b.kind == WEFT__BIND_OS, "OS");
    CHECK(weft__topo_parse_bind("unbound", 3, 4, &b, &err) == WEFT_OK &&
              b.kind == WEFT__BIND_UNBOUND, "unbound applies to all");
    CHECK(weft__topo_parse_bind("by-core", 3, 4, &b, &err) == WEFT_OK && b.kind == WEFT__BIND_RULE &&
              b.type == HWLOC_OBJ_CORE, "by-core");
    /* §5.2: core 0, core 1, L2 1 twice, NUMA 1 four times. */
    const char *fig2 = "core:0,core:1,l2:1*2,numa:1*4";
    CHECK(weft__topo_parse_bind(fig2, 0, 8, &b, &err) == WEFT_OK && b.kind == WEFT__BIND_OBJECTS &&
              b.type == HWLOC_OBJ_CORE && b.first == 0 && b.last == 0, "rank 0: %s", err.msg);
    CHECK(weft__topo_parse_bind(fig2, 3, 8, &b, &err) == WEFT_OK && b.type == HWLOC_OBJ_L2CACHE &&
              b.first == 1, "rank 3");
    CHECK(weft__topo_parse_bind(fig2, 7, 8, &b, &err) == WEFT_OK && b.type == HWLOC_OBJ_NUMANODE &&
              b.first == 1, "rank 7");
    CHECK(weft__topo_parse_bind("pu:2-3,0x3", 0, 2, &b, &err) == WEFT_OK && b.first == 2 &&
              b.last == 3, "range");
    CHECK(weft__topo_parse_bind("pu:2-3,0x3", 1, 2, &b, &err) == WEFT_OK &&
              b.kind == WEFT__BIND_MASK && b.mask == 3, "mask");
}

static void test_parse_bind_errors(void)
{
    static const struct { const char *spec; int nranks; const char *fragment; } bad[] = {
        {"core:0,core:1", 3, "lists 2 bindings for 3 ranks"},
        {"core:0*4", 3, "lists 4 bindings for 3 ranks"},
        {"cre:0", 1, "unknown object type 'cre'"},
        {"core", 1, "expected TYPE:INDEX"},
        {"core:", 1, "bad index"},
        {"core:x", 1, "bad index"},
        {"core:3-1", 1, "bad range"},
        {"core:1+", 1, "trailing characters"},
        {"core:0*0", 1, "bad repeat count"},
        {"core:0*", 1, "bad repeat count"},
        {"core:0,", 2, "expected TYPE:INDEX"},
        {"0x", 1, "expected TYPE:INDEX"},
        {"0xg1", 1, "bad hexadecimal"},
        {"0x0", 1, "empty cpuset"},
        {"0x12345678901234567", 1, "at most 16 hex digits"},
        {"by-nothing", 1, "unknown object type"},
        {"misc:0", 1, "cannot hold a binding"},
        {"", 1, "expected TYPE:INDEX"},
    };
    weft__topo_bind_t b;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err.msg[0] = '\0';
        CHECK(weft__topo_parse_bind(bad[i].spec, 0, bad[i].nranks, &b, &err) == WEFT_ERR_CONFIG,
              "'%s' accepted", bad[i].spec);
        CHECK_MSG(err.msg, bad[i].fragment);
    }
    CHECK(weft__topo_parse_bind("core:0", 1, 1, &b, &err) == WEFT_ERR_INVALID_ARG, "rank >= nranks");
}

static void expect_hosts(const char *list, const char *joined)
{
    char **names;
    int    n;
    char   got[512] = "";

    if (weft__topo_hostlist(list, &names, &n, &err) != WEFT_OK) {
        CHECK(0, "hostlist '%s' rejected: %s", list, err.msg);
        return;
    }
    for (int i = 0; i < n; i++) {
        strcat(got, i ? " " : "");
        strcat(got, names[i]);
    }
    CHECK_STR(got, joined);
    weft__topo_names_free(names, n);
}

static void test_hostlist(void)
{
    expect_hosts("node0", "node0");
    expect_hosts("n[0-3,7]", "n0 n1 n2 n3 n7");
    expect_hosts("gpu[01-02]x,cpu[8-10]", "gpu01x gpu02x cpu8 cpu9 cpu10");
    expect_hosts("r[0-1]n[0-1]", "r0n0 r0n1 r1n0 r1n1");
    expect_hosts("a,b[2],c", "a b2 c");

    static const struct { const char *list; const char *fragment; } bad[] = {
        {"", "empty"},
        {"n[0-3", "'[' without ']'"},
        {"n0-3]", "unbalanced"},
        {"n[]", "empty brackets"},
        {"n[3-1]", "decreasing range"},
        {"n[a]", "expected a number"},
        {"n[1-]", "range without an end"},
        {"n[1,]", "trailing ','"},
        {"n[1;2]", "unexpected ';'"},
        {"n[[1]]", "nested or unbalanced"},
        {"a,,b", "empty host name"},
        {"a b", "a space"},
        {"n[0-99999999]", "too large"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char **names;
        int    n;
        err.msg[0] = '\0';
        CHECK(weft__topo_hostlist(bad[i].list, &names, &n, &err) == WEFT_ERR_CONFIG,
              "'%s' accepted", bad[i].list);
        CHECK_MSG(err.msg, bad[i].fragment);
    }
}

static void test_slurm_conf(void)
{
    weft__topo_net_t net;
    const char *text = "# two leaf switches under one spine\n"
                       "SwitchName=s0 Switches=s[1-2]\n"
                       "SwitchName=s1 Nodes=node[0-1] LinkSpeed=100\n"
                       "  switchname=s2 nodes=node[2-3]   # case does not matter\n";

    CHECK(weft__topo_slurm_parse(text, &net, &err) == WEFT_OK, "%s", err.msg);
    if (check_failures)
        return;
    CHECK(net.nswitches == 3 && net.nnodes == 4, "%d switches, %d nodes", net.nswitches, net.nnodes);
    CHECK(net.switches[0].parent == -1 && net.switches[0].height == 2, "spine");
    CHECK(net.switches[2].parent == 0 && net.switches[2].position == 1 && net.switches[2].height == 1,
          "leaf s2");
    CHECK_STR(net.nodes[3], "node3");
    CHECK(net.node_switch[3] == 2 && net.node_position[3] == 1, "node3 under s2, second");
    weft__topo_net_free(&net);

    static const struct { const char *text; const char *fragment; } bad[] = {
        {"", "no switch defined"},
        {"# only a comment\n", "no switch defined"},
        {"Nodes=n0\n", "line 1: no SwitchName"},
        {"SwitchName=s0 Nodes=n0\nSwitchName=s0 Nodes=n1\n", "'s0' already defined on line 1"},
        {"SwitchName=s0 Nodes=n0\nSwitchName=s1 Nodes=n[0-1]\n", "node 'n0' listed twice"},
        {"SwitchName=s0 Nodes=n0,n0\n", "node 'n0' listed twice"},
        {"SwitchName=s0 Switches=s9\n", "unknown switch 's9'"},
        {"SwitchName=a Switches=c\nSwitchName=b Switches=c\nSwitchName=c Nodes=n\n", "two parents"},
        {"SwitchName=a Switches=b\nSwitchName=b Switches=a\n", "cycle"},
        {"SwitchName=s0 Color=red\n", "unknown key 'Color'"},
        {"SwitchName=s0 Nodes\n", "expected KEY=VALUE"},
        {"SwitchName=s0 Nodes=n[0-\n", "line 1: Nodes: hostlist"},
        {"SwitchName=s0 SwitchName=s1\n", "SwitchName given twice"},
        {"SwitchName=s0 Nodes=a Nodes=b\n", "Nodes given twice"},
        {"SwitchName=s[0-1] Nodes=a\n", "must be one name"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err.msg[0] = '\0';
        CHECK(weft__topo_slurm_parse(bad[i].text, &net, &err) == WEFT_ERR_CONFIG,
              "conf %zu accepted", i);
        CHECK_MSG(err.msg, bad[i].fragment);
    }
    CHECK(weft__topo_slurm_load("/nonexistent/topology.conf", &net, &err) == WEFT_ERR_CONFIG,
          "missing file");
    CHECK_MSG(err.msg, "cannot open");
}

/* The level names of a rank's path, space-separated. */
static void path_types(const char *synthetic, const char *bind, const weft__topo_net_t *net,
                       const char *node, char *out, size_t len)
{
    weft__topo_settings_t s = {.synthetic = (char *)synthetic};
    weft__topo_bind_t     b;
    weft__topo_path_t     path;
    hwloc_topology_t      topo;
    hwloc_bitmap_t        set = hwloc_bitmap_alloc();

    out[0] = '\0';
    if (weft__topo_load(&s, node, &topo, &err) != WEFT_OK ||
        weft__topo_parse_bind(bind, 0, 1, &b, &err) != WEFT_OK) {
        snprintf(out, len, "error: %s", err.msg);
        hwloc_bitmap_free(set);
        return;
    }
    if (weft__topo_bind_cpuset(topo, &b, 0, 1, set, &err) != WEFT_OK ||
        weft__topo_path(net, node, topo, set, &path, &err) != WEFT_OK) {
        snprintf(out, len, "error: %s", err.msg);
    } else {
        for (int i = 0; i < path.depth; i++) {
            strncat(out, i ? " " : "", len - strlen(out) - 1);
            strncat(out, path.elem[i].type, len - strlen(out) - 1);
        }
    }
    hwloc_topology_destroy(topo);
    hwloc_bitmap_free(set);
}

static void test_paths(void)
{
    char got[512];

    /* Fig. 1: the NUMA node is a level above its package. */
    path_types(FIG1, "core:5", NULL, "n0", got, sizeof(got));
    CHECK_STR(got, "Cluster Machine NUMANode Package L3Cache L2Cache Core PU");
    /* §3.2.4: bound to an L3 -> nothing below it; unbound -> nothing below the node. */
    path_types(FIG1, "l3:1", NULL, "n0", got, sizeof(got));
    CHECK_STR(got, "Cluster Machine NUMANode Package L3Cache");
    path_types(FIG1, "unbound", NULL, "n0", got, sizeof(got));
    CHECK_STR(got, "Cluster Machine");
    path_types(FIG1, "core:2-3", NULL, "n0", got, sizeof(got));
    CHECK_STR(got, "Cluster Machine NUMANode Package L3Cache L2Cache");
    /* Two PUs per core: a core binding stops at the core.  (The single NUMA
     * node hangs from the single package.) */
    path_types("pack:1 core:2 pu:2", "core:1", NULL, "n0", got, sizeof(got));
    CHECK_STR(got, "Cluster Machine NUMANode Package Core");
    path_types("pack:1 core:2 pu:2", "0x4", NULL, "n0", got, sizeof(got));
    CHECK_STR(got, "Cluster Machine NUMANode Package Core PU");
    /* Sub-NUMA clusters: NUMA nodes below the package, above their L3. */
    path_types("pack:2 l3:2 [numa] core:2 pu:1", "core:7", NULL, "n0", got, sizeof(got));
    CHECK_STR(got, "Cluster Machine Package NUMANode L3Cache Core PU");
    /* Groups are levels. */
    path_types("pack:1 group:2 core:2 pu:1", "core:3", NULL, "n0", got, sizeof(got));
    CHECK_STR(got, "Cluster Machine NUMANode Package Group0 Core PU");

    /* Bindings outside the machine. */
    path_types(FIG1, "core:8", NULL, "n0", got, sizeof(got));
    CHECK_MSG(got, "'core:8' is outside the machine: it has 8 Core objects");
    path_types(FIG1, "l1:0", NULL, "n0", got, sizeof(got));
    CHECK_MSG(got, "it has 0 L1Cache objects");
    path_types(FIG1, "0x100", NULL, "n0", got, sizeof(got));
    CHECK_MSG(got, "'0x100' is outside the machine");
    /* Malformed synthetic strings. */
    path_types("pack:2 foo:3", "unbound", NULL, "n0", got, sizeof(got));
    CHECK_MSG(got, "WEFT_TOPO_SYNTHETIC 'pack:2 foo:3' is not a valid hwloc synthetic");
    path_types("pack:0", "unbound", NULL, "n0", got, sizeof(got));
    CHECK_MSG(got, "not a valid hwloc synthetic");

    /* Network levels: the node's switches, root first. */
    weft__topo_net_t net;
    CHECK(weft__topo_slurm_parse("SwitchName=top Switches=l[0-1]\nSwitchName=l0 Nodes=a\n"
                                 "SwitchName=l1 Nodes=b,c\n", &net, &err) == WEFT_OK, "%s", err.msg);
    path_types("core:2 pu:1", "core:1", &net, "c", got, sizeof(got));
    CHECK_STR(got, "Cluster Switch2 Switch1 Machine Core PU");
    path_types("core:2 pu:1", "core:1", &net, "z", got, sizeof(got));
    CHECK_MSG(got, "node 'z' is not listed in topology.conf");
    weft__topo_net_free(&net);
}

static void test_rule_binding(void)
{
    weft__topo_settings_t s = {.synthetic = FIG1};
    weft__topo_bind_t     b;
    hwloc_topology_t      topo;
    hwloc_bitmap_t        set = hwloc_bitmap_alloc();

    CHECK(weft__topo_load(&s, "n", &topo, &err) == WEFT_OK, "%s", err.msg);
    CHECK(weft__topo_parse_bind("by-l2", 0, 1, &b, &err) == WEFT_OK, "%s", err.msg);
    CHECK(weft__topo_bind_cpuset(topo, &b, 3, 1, set, &err) == WEFT_OK &&
              hwloc_bitmap_to_ulong(set) == 0xc0, "4th rank on L2 3: %s", err.msg);
    CHECK(weft__topo_bind_cpuset(topo, &b, 4, 1, set, &err) == WEFT_ERR_CONFIG, "5th rank");
    CHECK_MSG(err.msg, "needs one object per rank of the node");
    hwloc_topology_destroy(topo);
    hwloc_bitmap_free(set);
}

/* An XML description, one file per node through "{node}". */
static void test_xml_per_node(void)
{
    hwloc_topology_t  t, loaded;
    char              path[128];
    weft__topo_settings_t s = {.xml = "/tmp/weft-test-xml-{node}.xml"};

    snprintf(path, sizeof(path), "/tmp/weft-test-xml-nodeA.xml");
    hwloc_topology_init(&t);
    hwloc_topology_set_synthetic(t, FIG1);
    hwloc_topology_load(t);
    CHECK(hwloc_topology_export_xml(t, path, 0) == 0, "export %s", path);
    hwloc_topology_destroy(t);
    CHECK(weft__topo_load(&s, "nodeA", &loaded, &err) == WEFT_OK, "%s", err.msg);
    if (!check_failures) {
        CHECK(hwloc_get_nbobjs_by_type(loaded, HWLOC_OBJ_CORE) == 8, "8 cores from the XML");
        hwloc_topology_destroy(loaded);
    }
    CHECK(weft__topo_load(&s, "nodeB", &loaded, &err) == WEFT_ERR_CONFIG, "no XML for nodeB");
    CHECK_MSG(err.msg, "'/tmp/weft-test-xml-nodeB.xml' cannot be read");
    remove(path);
}

int main(void)
{
    test_parse_bind_lists();
    test_parse_bind_errors();
    test_hostlist();
    test_slurm_conf();
    test_paths();
    test_rule_binding();
    test_xml_per_node();
    if (check_failures)
        fprintf(stderr, "%d check(s) failed\n", check_failures);
    return check_failures != 0;
}
