/* Slurm topology.conf (topology/tree plugin) -> a switch tree.
 *
 *   # comment
 *   SwitchName=s0 Switches=s[1-2]
 *   SwitchName=s1 Nodes=node[0-1]
 *   SwitchName=s2 Nodes=node[2-3] LinkSpeed=100
 *
 * Keys are case-insensitive as in Slurm; LinkSpeed is accepted and ignored,
 * any other key is an error.  The file must describe a forest: each switch
 * defined once, referenced by at most one parent, no cycle, and each node
 * under exactly one switch.  Switches without a parent hang from the whole
 * job, in file order.  Parsing is pure (text in, tree out). */
#include "team.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A switch while the file is read: the names of its children. */
typedef struct {
    char **switches;
    int    nswitches;
    char **nodes;
    int    nnodes;
    int    line;
} pending_t;

void weft__topo_net_free(weft__topo_net_t *net)
{
    free(net->switches);
    weft__topo_names_free(net->nodes, net->nnodes);
    free(net->node_switch);
    free(net->node_position);
    memset(net, 0, sizeof(*net));
}

static void pending_free(pending_t *p, int n)
{
    for (int i = 0; i < n; i++) {
        weft__topo_names_free(p[i].switches, p[i].nswitches);
        weft__topo_names_free(p[i].nodes, p[i].nnodes);
    }
    free(p);
}

static int find_switch(const weft__topo_net_t *net, const char *name)
{
    for (int i = 0; i < net->nswitches; i++)
        if (strcmp(net->switches[i].name, name) == 0)
            return i;
    return -1;
}

/* Read one "SwitchName=... [Switches=...] [Nodes=...]" line into the next
 * switch slot of net and of pending. */
static weft_status_t parse_line(char *line, int lineno, weft__topo_net_t *net, pending_t *pending,
                                weft__msg_t *err)
{
    pending_t *p = &pending[net->nswitches];
    int        have_name = 0;
    char      *save = NULL;

    for (char *tok = strtok_r(line, " \t\r", &save); tok; tok = strtok_r(NULL, " \t\r", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok || !eq[1])
            return weft__fail(err, WEFT_ERR_CONFIG,
                              "topology.conf line %d: expected KEY=VALUE, got '%.60s'",
                              lineno, tok);
        *eq = '\0';
        const char *value = eq + 1;
        weft_status_t st = WEFT_OK;
        if (strcasecmp(tok, "SwitchName") == 0) {
            if (have_name)
                return weft__fail(err, WEFT_ERR_CONFIG,
                                  "topology.conf line %d: SwitchName given twice", lineno);
            if (strlen(value) >= WEFT__TOPO_NAME_MAX || strpbrk(value, "[],"))
                return weft__fail(err, WEFT_ERR_CONFIG,
                                  "topology.conf line %d: SwitchName '%.60s' must be one "
                                  "name shorter than %d characters", lineno, value,
                                  WEFT__TOPO_NAME_MAX);
            int other = find_switch(net, value);
            if (other >= 0)
                return weft__fail(err, WEFT_ERR_CONFIG,
                                  "topology.conf line %d: switch '%s' already defined on "
                                  "line %d", lineno, value, pending[other].line);
            snprintf(net->switches[net->nswitches].name, WEFT__TOPO_NAME_MAX, "%s", value);
            have_name = 1;
        } else if (strcasecmp(tok, "Switches") == 0) {
            if (p->switches)
                return weft__fail(err, WEFT_ERR_CONFIG,
                                  "topology.conf line %d: Switches given twice", lineno);
            st = weft__topo_hostlist(value, &p->switches, &p->nswitches, err);
        } else if (strcasecmp(tok, "Nodes") == 0) {
            if (p->nodes)
                return weft__fail(err, WEFT_ERR_CONFIG,
                                  "topology.conf line %d: Nodes given twice", lineno);
            st = weft__topo_hostlist(value, &p->nodes, &p->nnodes, err);
        } else if (strcasecmp(tok, "LinkSpeed") != 0) {
            return weft__fail(err, WEFT_ERR_CONFIG,
                              "topology.conf line %d: unknown key '%.40s' (expected "
                              "SwitchName, Switches, Nodes, LinkSpeed)", lineno, tok);
        }
        if (st != WEFT_OK)
            return weft__fail(err, st, "topology.conf line %d: %s: %.200s", lineno, tok,
                              err->msg);
    }
    if (!have_name)
        return weft__fail(err, WEFT_ERR_CONFIG, "topology.conf line %d: no SwitchName",
                          lineno);
    p->line = lineno;
    net->switches[net->nswitches].parent = -1;
    net->nswitches++;
    return WEFT_OK;
}

/* Height of switch i: 1 + its highest child switch (0 for none). */
static int switch_height(weft__topo_net_t *net, const pending_t *p, int i)
{
    if (net->switches[i].height)
        return net->switches[i].height;
    int h = 0;
    for (int c = 0; c < p[i].nswitches; c++) {
        int hc = switch_height(net, p, find_switch(net, p[i].switches[c]));
        if (hc > h)
            h = hc;
    }
    net->switches[i].height = h + 1;
    return h + 1;
}

/* A node of the tree and its place, for sorting by name. */
typedef struct {
    const char *name;
    int         node;
} node_ref_t;

static int by_name(const void *a, const void *b)
{
    const node_ref_t *x = a, *y = b;
    int               c = strcmp(x->name, y->name);

    return c ? c : (x->node > y->node) - (x->node < y->node);
}

/* Each node under one switch.  Sorted, duplicates are neighbours: a
 * pairwise check took minutes on files with 10^5 nodes. */
static weft_status_t check_nodes_unique(const weft__topo_net_t *net, weft__msg_t *err)
{
    node_ref_t   *refs = malloc((size_t)net->nnodes * sizeof(*refs) + 1);
    weft_status_t st = WEFT_OK;

    if (!refs)
        return weft__fail(err, WEFT_ERR_NO_MEMORY, "topology.conf: out of memory");
    for (int i = 0; i < net->nnodes; i++)
        refs[i] = (node_ref_t){net->nodes[i], i};
    qsort(refs, (size_t)net->nnodes, sizeof(*refs), by_name);
    for (int i = 1; i < net->nnodes && st == WEFT_OK; i++)
        if (strcmp(refs[i - 1].name, refs[i].name) == 0)
            st = weft__fail(err, WEFT_ERR_CONFIG,
                            "topology.conf: node '%s' listed twice (switch '%s' and switch "
                            "'%s')", refs[i].name,
                            net->switches[net->node_switch[refs[i - 1].node]].name,
                            net->switches[net->node_switch[refs[i].node]].name);
    free(refs);
    return st;
}

/* Link parents, check the forest, place the nodes. */
static weft_status_t link_tree(weft__topo_net_t *net, pending_t *p, weft__msg_t *err)
{
    int total_nodes = 0, top = 0;

    for (int i = 0; i < net->nswitches; i++) {
        for (int c = 0; c < p[i].nswitches; c++) {
            int child = find_switch(net, p[i].switches[c]);
            if (child < 0)
                return weft__fail(err, WEFT_ERR_CONFIG,
                                  "topology.conf line %d: switch '%s' lists unknown switch "
                                  "'%s'", p[i].line, net->switches[i].name,
                                  p[i].switches[c]);
            if (net->switches[child].parent >= 0)
                return weft__fail(err, WEFT_ERR_CONFIG,
                                  "topology.conf: switch '%s' has two parents ('%s' and "
                                  "'%s')", p[i].switches[c],
                                  net->switches[net->switches[child].parent].name,
                                  net->switches[i].name);
            net->switches[child].parent = i;
            net->switches[child].position = c;
        }
        total_nodes += p[i].nnodes;
    }
    for (int i = 0; i < net->nswitches; i++) {
        /* Walking up more than nswitches steps means a cycle. */
        int steps = 0;
        for (int s = i; s >= 0; s = net->switches[s].parent)
            if (++steps > net->nswitches)
                return weft__fail(err, WEFT_ERR_CONFIG,
                                  "topology.conf: switch '%s' is in a cycle",
                                  net->switches[i].name);
        if (net->switches[i].parent < 0)
            net->switches[i].position = top++;
    }
    for (int i = 0; i < net->nswitches; i++)
        switch_height(net, p, i);

    net->nodes = calloc((size_t)total_nodes + 1, sizeof(*net->nodes));
    net->node_switch = calloc((size_t)total_nodes + 1, sizeof(int));
    net->node_position = calloc((size_t)total_nodes + 1, sizeof(int));
    if (!net->nodes || !net->node_switch || !net->node_position)
        return weft__fail(err, WEFT_ERR_NO_MEMORY, "topology.conf: out of memory");
    for (int i = 0; i < net->nswitches; i++) {
        for (int k = 0; k < p[i].nnodes; k++) {
            /* The name moves from the pending list to the tree. */
            net->nodes[net->nnodes] = p[i].nodes[k];
            p[i].nodes[k] = NULL;
            net->node_switch[net->nnodes] = i;
            net->node_position[net->nnodes] = p[i].nswitches + k;
            net->nnodes++;
        }
    }
    return check_nodes_unique(net, err);
}

weft_status_t weft__topo_slurm_parse(const char *text, weft__topo_net_t *net,
                                     weft__msg_t *err)
{
    weft__topo_net_t t = {0};
    pending_t       *p = NULL;
    char            *copy = strdup(text);
    int              lines = 1, lineno = 0;
    weft_status_t    st = WEFT_OK;

    if (!copy)
        return weft__fail(err, WEFT_ERR_NO_MEMORY, "topology.conf: out of memory");
    for (const char *c = text; *c; c++)
        lines += *c == '\n';
    t.switches = calloc((size_t)lines, sizeof(*t.switches));
    p = calloc((size_t)lines, sizeof(*p));
    if (!t.switches || !p) {
        st = weft__fail(err, WEFT_ERR_NO_MEMORY, "topology.conf: out of memory");
        goto out_free_copy;
    }
    for (char *line = copy, *next; line && st == WEFT_OK; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *s = line;
        while (isspace((unsigned char)*s))
            s++;
        if (*s)
            st = parse_line(s, lineno, &t, p, err);
    }
    if (st == WEFT_OK && t.nswitches == 0)
        st = weft__fail(err, WEFT_ERR_CONFIG, "topology.conf: no switch defined");
    if (st == WEFT_OK)
        st = link_tree(&t, p, err);
    if (st == WEFT_OK)
        *net = t;
    else
        weft__topo_net_free(&t);
    pending_free(p, lines);
out_free_copy:
    free(copy);
    return st;
}

weft_status_t weft__topo_slurm_load(const char *path, weft__topo_net_t *net,
                                    weft__msg_t *err)
{
    FILE         *f = fopen(path, "r");
    char         *text = NULL;
    size_t        len = 0;
    weft_status_t st;

    if (!f)
        return weft__fail(err, WEFT_ERR_CONFIG, "cannot open topology.conf '%.200s'", path);
    FILE *mem = open_memstream(&text, &len);
    if (!mem) {
        fclose(f);
        return weft__fail(err, WEFT_ERR_NO_MEMORY, "topology.conf: out of memory");
    }
    char   buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        fwrite(buf, 1, n, mem);
    fclose(f);
    fclose(mem);
    st = weft__topo_slurm_parse(text, net, err);
    free(text);
    return st;
}
