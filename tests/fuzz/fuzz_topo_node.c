/* WEFT_TOPO_NODE (src/runtime/node.c): per-rank node-name lists
 * ("a*4,b*4") and rules ("block:node%d:8", "cyclic:n%d:4").  The first byte
 * gives nranks (1..64).  Properties: an accepted name is a non-empty node
 * name of the allowed characters that fits its buffer; a rank's index on
 * its node (weft__node_parse's index) is the number of lower ranks
 * given the same name. */
#include "fuzz.h"
#include "runtime/settings.h"

#include <ctype.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    weft__msg_t      err;
    char             name[WEFT__NODE_NAME_MAX], other[WEFT__NODE_NAME_MAX];
    int              nranks, index, count;
    char            *spec;

    if (size < 1)
        return 0;
    nranks = 1 + data[0] % 64;
    spec = fuzz_cstr(data + 1, size - 1);
    for (int rank = 0; rank < nranks; rank++) {
        weft_status_t st = weft__node_parse(spec, rank, nranks, name, NULL, &err);
        if (st != WEFT_OK) {
            FUZZ_ASSERT(st == WEFT_ERR_CONFIG && err.msg[0] != '\0');
            FUZZ_ASSERT(memchr(err.msg, '\0', sizeof(err.msg)) != NULL);
            continue;
        }
        size_t len = strnlen(name, sizeof(name));
        FUZZ_ASSERT(len > 0 && len < sizeof(name));
        for (size_t i = 0; i < len; i++)
            FUZZ_ASSERT(isalnum((unsigned char)name[i]) || strchr("-_.", name[i]));
        FUZZ_ASSERT(weft__node_parse(spec, rank, nranks, other, &index, &err) == WEFT_OK);
        FUZZ_ASSERT(strcmp(other, name) == 0);
        count = 0;
        for (int q = 0; q < rank; q++) {
            FUZZ_ASSERT(weft__node_parse(spec, q, nranks, other, NULL, &err) == WEFT_OK);
            count += strcmp(other, name) == 0;
        }
        FUZZ_ASSERT(index == count);
    }
    free(spec);
    return 0;
}
