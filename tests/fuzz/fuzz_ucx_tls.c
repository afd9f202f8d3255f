/* UCX_TLS as weft reads it (src/runtime/peer.c, weft__ucx_tls_has_mm):
 * whether the list lets UCX use a transport of its mm component.  The
 * first byte splits the rest into two lists s and t.  Properties: the
 * answer is 0 or 1; a list of names (no '^') that gets ",sm" appended
 * has one, and an exclusion list ending in ",sm" has none; two such lists
 * joined by ',' have one exactly when either has one. */
#include "fuzz.h"
#include "runtime/runtime.h"

static char *joined(const char *a, const char *b, const char *c)
{
    size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
    char *s = malloc(n);

    if (s == NULL)
        abort();
    snprintf(s, n, "%s%s%s", a, b, c);
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t cut;
    char *s, *t, *x;
    int hs, ht;

    if (size < 1)
        return 0;
    cut = size > 1 ? data[0] % size : 0;
    s = fuzz_cstr(data + 1, cut);
    t = fuzz_cstr(data + 1 + cut, size - 1 - cut);
    hs = weft__ucx_tls_has_mm(s);
    ht = weft__ucx_tls_has_mm(t);
    FUZZ_ASSERT(hs == 0 || hs == 1);
    FUZZ_ASSERT(ht == 0 || ht == 1);
    if (s[0] != '^') {
        x = joined(s, ",sm", "");
        FUZZ_ASSERT(weft__ucx_tls_has_mm(x) == 1);
        free(x);
        x = joined("^", s, ",sm");
        FUZZ_ASSERT(weft__ucx_tls_has_mm(x) == 0);
        free(x);
        /* an empty list means UCX's default, not "no name" */
        if (s[0] != '\0' && t[0] != '\0' && t[0] != '^') {
            x = joined(s, ",", t);
            FUZZ_ASSERT(weft__ucx_tls_has_mm(x) == (hs || ht));
            free(x);
        }
    }
    free(s);
    free(t);
    return 0;
}
