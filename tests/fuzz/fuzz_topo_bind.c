/* WEFT_TOPO_BIND (src/team/parse.c): per-rank binding lists ("core:0,l2:1*2",
 * "0x3", rules "by-core").  The first byte gives nranks (1..64).
 * Properties: every rank reaches the same verdict on a spec (the spec is
 * validated whole, so no rank of a job accepts what another rejects), and
 * an accepted binding is well formed. */
#include "fuzz.h"
#include "team/team.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    weft__msg_t       err;
    weft__topo_bind_t b;
    weft_status_t     first = WEFT_OK;
    int               nranks;
    char             *spec;

    if (size < 1)
        return 0;
    nranks = 1 + data[0] % 64;
    spec = fuzz_cstr(data + 1, size - 1);
    for (int rank = 0; rank < nranks; rank++) {
        weft_status_t st = weft__topo_parse_bind(spec, rank, nranks, &b, &err);
        if (rank == 0)
            first = st;
        FUZZ_ASSERT(st == first);
        if (st != WEFT_OK) {
            FUZZ_ASSERT(st == WEFT_ERR_CONFIG && err.msg[0] != '\0');
            FUZZ_ASSERT(memchr(err.msg, '\0', sizeof(err.msg)) != NULL);
            break;
        }
        FUZZ_ASSERT(memchr(b.text, '\0', sizeof(b.text)) != NULL);
        switch (b.kind) {
        case WEFT__BIND_OBJECTS:
            FUZZ_ASSERT(b.first <= b.last);
            break;
        case WEFT__BIND_MASK:
            FUZZ_ASSERT(b.mask != 0);
            break;
        case WEFT__BIND_UNBOUND:
        case WEFT__BIND_RULE:
            break;
        default:
            FUZZ_ASSERT(!"a spec never yields the OS binding");
        }
    }
    free(spec);
    return 0;
}
