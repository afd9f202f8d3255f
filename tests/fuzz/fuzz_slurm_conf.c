/* Slurm topology.conf (src/team/slurm.c).  Properties of an accepted file:
 * a forest (parents in range, no cycle, a parent higher than its
 * children), every node under one leaf switch, names unique. */
#include "fuzz.h"
#include "team/team.h"

static void check_net(const weft__topo_net_t *net)
{
    FUZZ_ASSERT(net->nswitches >= 1 && net->nnodes >= 0);
    for (int i = 0; i < net->nswitches; i++) {
        const weft__topo_switch_t *s = &net->switches[i];
        int                        steps = 0;
        FUZZ_ASSERT(s->parent >= -1 && s->parent < net->nswitches);
        FUZZ_ASSERT(s->height >= 1 && s->position >= 0);
        FUZZ_ASSERT(strnlen(s->name, WEFT__TOPO_NAME_MAX) < WEFT__TOPO_NAME_MAX && s->name[0]);
        if (s->parent >= 0)
            FUZZ_ASSERT(net->switches[s->parent].height > s->height);
        for (int p = i; p >= 0; p = net->switches[p].parent)
            FUZZ_ASSERT(++steps <= net->nswitches);
        for (int j = 0; j < i; j++)
            FUZZ_ASSERT(strcmp(net->switches[j].name, s->name) != 0);
    }
    for (int n = 0; n < net->nnodes; n++) {
        FUZZ_ASSERT(net->node_switch[n] >= 0 && net->node_switch[n] < net->nswitches);
        FUZZ_ASSERT(net->node_position[n] >= 0);
        FUZZ_ASSERT(net->nodes[n] != NULL && net->nodes[n][0] != '\0');
    }
    /* names are unique; quadratic, so only on small trees */
    for (int n = 0; n < net->nnodes && net->nnodes <= 2048; n++)
        for (int m = 0; m < n; m++)
            FUZZ_ASSERT(strcmp(net->nodes[n], net->nodes[m]) != 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    weft__msg_t      err;
    weft__topo_net_t net;
    char            *text = fuzz_cstr(data, size);
    weft_status_t    st = weft__topo_slurm_parse(text, &net, &err);

    if (st == WEFT_OK) {
        check_net(&net);
        weft__topo_net_free(&net);
    } else {
        FUZZ_ASSERT((st == WEFT_ERR_CONFIG || st == WEFT_ERR_NO_MEMORY) && err.msg[0] != '\0');
    }
    free(text);
    return 0;
}
