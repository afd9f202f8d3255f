/* Slurm hostlist expansion: "n[0-3,7]" -> n0 n1 n2 n3 n7; "gpu[01-02]x" keeps
 * the zero padding of the lower bound (gpu01x gpu02x); several bracket groups
 * multiply ("r[0-1]n[0-1]" -> r0n0 r0n1 r1n0 r1n1); commas outside brackets
 * separate hosts.  Pure, so unit-tested with good and malformed input. */
#include "team.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A list of names that grows; a guard keeps a typo ("n[0-999999999]") from
 * exhausting memory. */
#define HOSTLIST_MAX_NAMES (1 << 20)

typedef struct {
    char **v;
    int    n, cap;
} names_t;

static int names_push(names_t *l, const char *s, size_t len)
{
    if (l->n == l->cap) {
        int    cap = l->cap ? 2 * l->cap : 16;
        char **grown = realloc(l->v, (size_t)cap * sizeof(*grown));
        if (!grown)
            return -1;
        l->v = grown;
        l->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return -1;
    memcpy(copy, s, len);
    copy[len] = '\0';
    l->v[l->n++] = copy;
    return 0;
}

void weft__topo_names_free(char **names, int count)
{
    for (int i = 0; i < count; i++)
        free(names[i]);
    free(names);
}

/* Expand pattern[0..len) after the already-built prefix into out. */
static weft_status_t expand(const char *pattern, size_t len, char *prefix, size_t plen,
                            names_t *out, weft__msg_t *err)
{
    const char *open = memchr(pattern, '[', len);
    size_t      lit = open ? (size_t)(open - pattern) : len;

    if (memchr(pattern, ']', lit))
        return weft__fail(err, WEFT_ERR_CONFIG, "hostlist: ']' without '['");
    if (plen + lit >= WEFT__TOPO_NAME_MAX)
        return weft__fail(err, WEFT_ERR_CONFIG, "hostlist: host name longer than %d",
                          WEFT__TOPO_NAME_MAX - 1);
    memcpy(prefix + plen, pattern, lit);
    plen += lit;
    if (!open) {
        if (plen == 0)
            return weft__fail(err, WEFT_ERR_CONFIG, "hostlist: empty host name");
        if (out->n >= HOSTLIST_MAX_NAMES)
            return weft__fail(err, WEFT_ERR_CONFIG, "hostlist: more than %d hosts",
                              HOSTLIST_MAX_NAMES);
        return names_push(out, prefix, plen) ? weft__fail(err, WEFT_ERR_NO_MEMORY,
                                                          "hostlist: out of memory")
                                             : WEFT_OK;
    }
    const char *close = memchr(open, ']', len - lit);
    if (!close)
        return weft__fail(err, WEFT_ERR_CONFIG, "hostlist: '[' without ']'");
    const char *rest = close + 1;
    size_t      rest_len = len - (size_t)(rest - pattern);
    const char *p = open + 1;
    if (p == close)
        return weft__fail(err, WEFT_ERR_CONFIG, "hostlist: empty brackets");
    while (p < close) {
        const char   *lo_start = p;
        char         *end;
        unsigned long lo, hi;
        if (!isdigit((unsigned char)*p))
            return weft__fail(err, WEFT_ERR_CONFIG,
                              "hostlist: expected a number inside brackets, got '%c'", *p);
        errno = 0;
        lo = strtoul(p, &end, 10);
        if (errno)
            return weft__fail(err, WEFT_ERR_CONFIG, "hostlist: number too large");
        int width = (int)(end - lo_start);
        hi = lo;
        p = end;
        if (p < close && *p == '-') {
            p++;
            if (!isdigit((unsigned char)*p))
                return weft__fail(err, WEFT_ERR_CONFIG, "hostlist: range without an end");
            errno = 0;
            hi = strtoul(p, &end, 10);
            if (errno)
                return weft__fail(err, WEFT_ERR_CONFIG, "hostlist: number too large");
            p = end;
            if (hi < lo)
                return weft__fail(err, WEFT_ERR_CONFIG,
                                  "hostlist: decreasing range %lu-%lu", lo, hi);
            if (hi - lo >= HOSTLIST_MAX_NAMES)
                return weft__fail(err, WEFT_ERR_CONFIG, "hostlist: range %lu-%lu too large",
                                  lo, hi);
        }
        if (p < close && *p != ',')
            return weft__fail(err, WEFT_ERR_CONFIG,
                              "hostlist: unexpected '%c' inside brackets", *p);
        if (p < close)
            p++;
        if (p == close && p[-1] == ',')
            return weft__fail(err, WEFT_ERR_CONFIG, "hostlist: trailing ',' inside brackets");
        /* Zero padding only when the lower bound is written with it. */
        if (!(width > 1 && *lo_start == '0'))
            width = 1;
        for (unsigned long v = lo; v <= hi; v++) {
            char   num[32];
            int    n = snprintf(num, sizeof(num), "%0*lu", width, v);
            /* A wide zero padding ("[000...01]") does not fit num either. */
            if (n < 0 || (size_t)n >= sizeof(num) || plen + (size_t)n >= WEFT__TOPO_NAME_MAX)
                return weft__fail(err, WEFT_ERR_CONFIG, "hostlist: host name longer than %d",
                                  WEFT__TOPO_NAME_MAX - 1);
            memcpy(prefix + plen, num, (size_t)n);
            weft_status_t st = expand(rest, rest_len, prefix, plen + (size_t)n, out, err);
            if (st != WEFT_OK)
                return st;
        }
    }
    return WEFT_OK;
}

weft_status_t weft__topo_hostlist(const char *list, char ***names, int *count,
                                  weft__msg_t *err)
{
    names_t       out = {0};
    char          prefix[WEFT__TOPO_NAME_MAX];
    weft_status_t st = WEFT_OK;
    const char   *s = list;

    if (!list || !*list)
        return weft__fail(err, WEFT_ERR_CONFIG, "hostlist: empty");
    while (st == WEFT_OK) {
        /* A host ends at a comma outside brackets. */
        size_t len = 0;
        int    depth = 0;
        for (; s[len] && (depth > 0 || s[len] != ','); len++) {
            if (s[len] == '[')
                depth++;
            else if (s[len] == ']')
                depth--;
            if (depth < 0 || depth > 1)
                break;
            if (isspace((unsigned char)s[len]))
                break;
        }
        if (s[len] && s[len] != ',')
            st = weft__fail(err, WEFT_ERR_CONFIG,
                            "hostlist '%.60s': unexpected '%c' (nested or unbalanced "
                            "brackets, or a space)", list, s[len]);
        else
            st = expand(s, len, prefix, 0, &out, err);
        if (st == WEFT_OK) {
            if (!s[len])
                break;
            s += len + 1;
        }
    }
    if (st != WEFT_OK) {
        weft__topo_names_free(out.v, out.n);
        return st;
    }
    *names = out.v;
    *count = out.n;
    return WEFT_OK;
}
