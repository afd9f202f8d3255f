/* The parser of WEFT_TOPO_BIND, a per-rank setting (its list grammar is
 * the runtime's, which also parses WEFT_TOPO_NODE), and the small helpers
 * every file of the layer shares.  Nothing here touches MPI, so each
 * function is unit-tested (and fuzzable) alone. */
#include "team.h"

#include <ctype.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t weft__topo_hash(uint64_t seed, const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = seed ? seed : 0xcbf29ce484222325ULL;

    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    /* 0 and all-ones mean "absent" in the agreement reduction. */
    if (h == 0 || h == UINT64_MAX)
        h = 0x9e3779b97f4a7c15ULL;
    return h;
}

uint64_t weft__topo_hash_str(uint64_t seed, const char *s)
{
    /* Hash the terminator too, so "ab"+"c" and "a"+"bc" differ. */
    return weft__topo_hash(seed, s, strlen(s) + 1);
}

/* Level names are few (hwloc types, Switch<h>, Cluster); they are handed to
 * users as plain pointers that must outlive every communicator. */
static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;
static char          **interned;
static int             ninterned, interned_cap;

const char *weft__topo_intern(const char *name)
{
    const char *found = NULL;

    pthread_mutex_lock(&intern_lock);
    for (int i = 0; i < ninterned && !found; i++)
        if (strcmp(interned[i], name) == 0)
            found = interned[i];
    if (!found) {
        if (ninterned == interned_cap) {
            int    cap = interned_cap ? 2 * interned_cap : 32;
            char **grown = realloc(interned, (size_t)cap * sizeof(*grown));
            if (grown) {
                interned = grown;
                interned_cap = cap;
            }
        }
        char *copy = ninterned < interned_cap ? strdup(name) : NULL;
        if (copy) {
            interned[ninterned++] = copy;
            found = copy;
        }
    }
    pthread_mutex_unlock(&intern_lock);
    /* Out of memory: a constant is still a correct, if vaguer, name. */
    return found ? found : "Unknown";
}

void weft__topo_settings_free(weft__topo_settings_t *s)
{
    free(s->synthetic);
    free(s->xml);
    free(s->bind);
    free(s->node);
    free(s->slurm_conf);
    memset(s, 0, sizeof(*s));
}

/* ---- WEFT_TOPO_BIND ------------------------------------------------------ */

static weft_status_t parse_type(const char *s, size_t len, hwloc_obj_type_t *type,
                                weft__msg_t *err)
{
    char                 name[WEFT__TOPO_NAME_MAX];
    union hwloc_obj_attr_u attr;

    if (len == 0 || len >= sizeof(name))
        return weft__fail(err, WEFT_ERR_CONFIG, "empty or overlong object type");
    memcpy(name, s, len);
    name[len] = '\0';
    if (hwloc_type_sscanf(name, type, &attr, sizeof(attr)) != 0)
        return weft__fail(err, WEFT_ERR_CONFIG,
                          "unknown object type '%s' (expected e.g. pu, core, l2, l3, "
                          "numa, package, group, machine)", name);
    if (*type == HWLOC_OBJ_MISC || *type == HWLOC_OBJ_BRIDGE || *type == HWLOC_OBJ_PCI_DEVICE ||
        *type == HWLOC_OBJ_OS_DEVICE || *type == HWLOC_OBJ_MEMCACHE)
        return weft__fail(err, WEFT_ERR_CONFIG,
                          "'%s' objects cannot hold a binding (use CPU-side objects)", name);
    return WEFT_OK;
}

/* One binding item ("unbound", "core:3", "l2:0-1", "0x3"). */
static weft_status_t parse_bind_item(const char *s, size_t len, weft__topo_bind_t *b,
                                     weft__msg_t *err)
{
    memset(b, 0, sizeof(*b));
    snprintf(b->text, sizeof(b->text), "%.*s", (int)len, s);
    if (len == 7 && strncmp(s, "unbound", 7) == 0) {
        b->kind = WEFT__BIND_UNBOUND;
        return WEFT_OK;
    }
    if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        if (len > 18)
            return weft__fail(err, WEFT_ERR_CONFIG,
                              "binding '%s': a cpuset mask has at most 16 hex digits", b->text);
        for (size_t i = 2; i < len; i++)
            if (!isxdigit((unsigned char)s[i]))
                return weft__fail(err, WEFT_ERR_CONFIG,
                                  "binding '%s': bad hexadecimal cpuset", b->text);
        b->kind = WEFT__BIND_MASK;
        b->mask = strtoull(b->text + 2, NULL, 16);
        if (b->mask == 0)
            return weft__fail(err, WEFT_ERR_CONFIG, "binding '%s': empty cpuset", b->text);
        return WEFT_OK;
    }
    const char *colon = memchr(s, ':', len);
    if (!colon)
        return weft__fail(err, WEFT_ERR_CONFIG,
                          "binding '%s': expected TYPE:INDEX[-INDEX], 0xMASK or unbound",
                          b->text);
    weft_status_t st = parse_type(s, (size_t)(colon - s), &b->type, err);
    if (st != WEFT_OK)
        return weft__fail(err, st, "binding '%s': %.200s", b->text, err->msg);
    const char   *p = colon + 1;
    unsigned long first, last;
    if (weft__scan_uint(&p, 0, INT_MAX, &first))
        return weft__fail(err, WEFT_ERR_CONFIG, "binding '%s': bad index", b->text);
    last = first;
    if (p < s + len && *p == '-') {
        p++;
        if (weft__scan_uint(&p, first, INT_MAX, &last))
            return weft__fail(err, WEFT_ERR_CONFIG,
                              "binding '%s': bad range (second index below the first?)",
                              b->text);
    }
    if (p != s + len)
        return weft__fail(err, WEFT_ERR_CONFIG, "binding '%s': trailing characters",
                          b->text);
    b->kind = WEFT__BIND_OBJECTS;
    b->first = (unsigned)first;
    b->last = (unsigned)last;
    return WEFT_OK;
}

static weft_status_t check_bind_item(const char *item, size_t len, long offset,
                                     weft__msg_t *err)
{
    weft__topo_bind_t b;
    weft_status_t     st = parse_bind_item(item, len, &b, err);

    (void)offset;
    return st == WEFT_OK ? st : weft__fail(err, st, "WEFT_TOPO_BIND: %.260s", err->msg);
}

weft_status_t weft__topo_parse_bind(const char *spec, int rank, int nranks,
                                    weft__topo_bind_t *out, weft__msg_t *err)
{
    weft__topo_bind_t item;
    const char       *mine;
    size_t            mine_len;
    weft_status_t     st;

    if (rank < 0 || rank >= nranks)
        return weft__fail(err, WEFT_ERR_INVALID_ARG, "rank %d outside [0, %d)", rank, nranks);
    if (!spec) {
        memset(out, 0, sizeof(*out));
        out->kind = WEFT__BIND_OS;
        return WEFT_OK;
    }
    if (strncmp(spec, "by-", 3) == 0) {
        st = parse_type(spec + 3, strlen(spec + 3), &item.type, err);
        if (st != WEFT_OK)
            return weft__fail(err, st, "WEFT_TOPO_BIND rule '%.60s': %.200s", spec, err->msg);
        memset(out, 0, sizeof(*out));
        out->kind = WEFT__BIND_RULE;
        out->type = item.type;
        snprintf(out->text, sizeof(out->text), "%s", spec);
        return WEFT_OK;
    }
    if (strcmp(spec, "unbound") == 0)
        return parse_bind_item(spec, 7, out, err);
    st = weft__rank_list("WEFT_TOPO_BIND", spec, rank, nranks, check_bind_item, "binding",
                         "give one per rank, 'ITEM*N' repeats, or a rule: unbound, by-core, by-pu, ...",
                         &mine, &mine_len, err);
    if (st != WEFT_OK)
        return st;
    return parse_bind_item(mine, mine_len, out, err);
}
