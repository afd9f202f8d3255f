/* Pure parsers of the per-rank settings (WEFT_TOPO_BIND, WEFT_TOPO_NODE)
 * and the small helpers every file of the layer shares.  Nothing here
 * touches MPI, so each function is unit-tested (and fuzzable) alone. */
#include "team.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

weft_status_t weft__topo_fail(weft__topo_err_t *err, weft_status_t st, const char *fmt, ...)
{
    char    msg[sizeof(err->msg)];
    va_list ap;

    /* Formatted apart: callers often wrap the previous message. */
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    memcpy(err->msg, msg, sizeof(msg));
    return st;
}

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

/* ---- shared pieces of the list grammars ---------------------------------- */

/* A decimal number in [min, max] at *p; advances *p past it. */
static int scan_uint(const char **p, unsigned long min, unsigned long max, unsigned long *out)
{
    char         *end;
    unsigned long v;

    if (!isdigit((unsigned char)**p))
        return -1;
    errno = 0;
    v = strtoul(*p, &end, 10);
    if (errno || v < min || v > max)
        return -1;
    *p = end;
    *out = v;
    return 0;
}

/* Length of the entry starting at s (up to ',' or the end). */
static size_t entry_len(const char *s)
{
    return strcspn(s, ",");
}

/* Split "item*count" of length len: item length and count (1 if absent). */
static int split_repeat(const char *s, size_t len, size_t *item_len, unsigned long *count)
{
    const char *star = memchr(s, '*', len);

    *count = 1;
    *item_len = len;
    if (!star)
        return 0;
    const char *p = star + 1;
    if (scan_uint(&p, 1, INT_MAX, count) || p != s + len)
        return -1;
    *item_len = (size_t)(star - s);
    return 0;
}

/* Check one item of a per-rank list; offset is its place in the list. */
typedef weft_status_t (*item_check_fn)(const char *item, size_t len, long offset,
                                       weft__topo_err_t *err);

/* Walk a per-rank list "ITEM[*N],ITEM[*N],..." of the variable var: check
 * every item, find the one that covers rank (*mine, *mine_len), and require
 * the list to cover exactly nranks ranks (what says so is `expected`). */
static weft_status_t walk_rank_list(const char *var, const char *spec, int rank, int nranks,
                                    item_check_fn check, const char *what,
                                    const char *expected, const char **mine, size_t *mine_len,
                                    weft__topo_err_t *err)
{
    long seen = 0;

    *mine = NULL;
    for (const char *s = spec;; s++) {
        size_t        len = entry_len(s), item_len;
        unsigned long count;
        weft_status_t st;

        if (split_repeat(s, len, &item_len, &count))
            return weft__topo_fail(err, WEFT_ERR_CONFIG, "%s entry '%.*s': bad repeat count after '*'",
                                   var, (int)(len > 60 ? 60 : len), s);
        if ((st = check(s, item_len, (long)(s - spec), err)) != WEFT_OK)
            return st;
        if (*mine == NULL && rank < seen + (long)count) {
            *mine = s;
            *mine_len = item_len;
        }
        seen += (long)count;
        if (seen > INT_MAX)
            break;
        s += len;
        if (*s == '\0')
            break;
    }
    if (seen != nranks)
        return weft__topo_fail(err, WEFT_ERR_CONFIG, "%s lists %ld %s%s for %d ranks (%s)", var, seen,
                               what, seen == 1 ? "" : "s", nranks, expected);
    return WEFT_OK;
}

/* ---- WEFT_TOPO_BIND ------------------------------------------------------ */

static weft_status_t parse_type(const char *s, size_t len, hwloc_obj_type_t *type,
                                weft__topo_err_t *err)
{
    char                 name[WEFT__TOPO_NAME_MAX];
    union hwloc_obj_attr_u attr;

    if (len == 0 || len >= sizeof(name))
        return weft__topo_fail(err, WEFT_ERR_CONFIG, "empty or overlong object type");
    memcpy(name, s, len);
    name[len] = '\0';
    if (hwloc_type_sscanf(name, type, &attr, sizeof(attr)) != 0)
        return weft__topo_fail(err, WEFT_ERR_CONFIG,
                               "unknown object type '%s' (expected e.g. pu, core, l2, l3, "
                               "numa, package, group, machine)", name);
    if (*type == HWLOC_OBJ_MISC || *type == HWLOC_OBJ_BRIDGE || *type == HWLOC_OBJ_PCI_DEVICE ||
        *type == HWLOC_OBJ_OS_DEVICE || *type == HWLOC_OBJ_MEMCACHE)
        return weft__topo_fail(err, WEFT_ERR_CONFIG,
                               "'%s' objects cannot hold a binding (use CPU-side objects)", name);
    return WEFT_OK;
}

/* One binding item ("unbound", "core:3", "l2:0-1", "0x3"). */
static weft_status_t parse_bind_item(const char *s, size_t len, weft__topo_bind_t *b,
                                     weft__topo_err_t *err)
{
    memset(b, 0, sizeof(*b));
    snprintf(b->text, sizeof(b->text), "%.*s", (int)len, s);
    if (len == 7 && strncmp(s, "unbound", 7) == 0) {
        b->kind = WEFT__BIND_UNBOUND;
        return WEFT_OK;
    }
    if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        if (len > 18)
            return weft__topo_fail(err, WEFT_ERR_CONFIG,
                                   "binding '%s': a cpuset mask has at most 16 hex digits", b->text);
        for (size_t i = 2; i < len; i++)
            if (!isxdigit((unsigned char)s[i]))
                return weft__topo_fail(err, WEFT_ERR_CONFIG,
                                       "binding '%s': bad hexadecimal cpuset", b->text);
        b->kind = WEFT__BIND_MASK;
        b->mask = strtoull(b->text + 2, NULL, 16);
        if (b->mask == 0)
            return weft__topo_fail(err, WEFT_ERR_CONFIG, "binding '%s': empty cpuset", b->text);
        return WEFT_OK;
    }
    const char *colon = memchr(s, ':', len);
    if (!colon)
        return weft__topo_fail(err, WEFT_ERR_CONFIG,
                               "binding '%s': expected TYPE:INDEX[-INDEX], 0xMASK or unbound",
                               b->text);
    weft_status_t st = parse_type(s, (size_t)(colon - s), &b->type, err);
    if (st != WEFT_OK)
        return weft__topo_fail(err, st, "binding '%s': %.200s", b->text, err->msg);
    const char   *p = colon + 1;
    unsigned long first, last;
    if (scan_uint(&p, 0, INT_MAX, &first))
        return weft__topo_fail(err, WEFT_ERR_CONFIG, "binding '%s': bad index", b->text);
    last = first;
    if (p < s + len && *p == '-') {
        p++;
        if (scan_uint(&p, first, INT_MAX, &last))
            return weft__topo_fail(err, WEFT_ERR_CONFIG,
                                   "binding '%s': bad range (second index below the first?)",
                                   b->text);
    }
    if (p != s + len)
        return weft__topo_fail(err, WEFT_ERR_CONFIG, "binding '%s': trailing characters",
                               b->text);
    b->kind = WEFT__BIND_OBJECTS;
    b->first = (unsigned)first;
    b->last = (unsigned)last;
    return WEFT_OK;
}

static weft_status_t check_bind_item(const char *item, size_t len, long offset,
                                     weft__topo_err_t *err)
{
    weft__topo_bind_t b;
    weft_status_t     st = parse_bind_item(item, len, &b, err);

    (void)offset;
    return st == WEFT_OK ? st : weft__topo_fail(err, st, "WEFT_TOPO_BIND: %.260s", err->msg);
}

weft_status_t weft__topo_parse_bind(const char *spec, int rank, int nranks,
                                    weft__topo_bind_t *out, weft__topo_err_t *err)
{
    weft__topo_bind_t item;
    const char       *mine;
    size_t            mine_len;
    weft_status_t     st;

    if (rank < 0 || rank >= nranks)
        return weft__topo_fail(err, WEFT_ERR_INVALID_ARG, "rank %d outside [0, %d)", rank, nranks);
    if (!spec) {
        memset(out, 0, sizeof(*out));
        out->kind = WEFT__BIND_OS;
        return WEFT_OK;
    }
    if (strncmp(spec, "by-", 3) == 0) {
        st = parse_type(spec + 3, strlen(spec + 3), &item.type, err);
        if (st != WEFT_OK)
            return weft__topo_fail(err, st, "WEFT_TOPO_BIND rule '%.60s': %.200s", spec, err->msg);
        memset(out, 0, sizeof(*out));
        out->kind = WEFT__BIND_RULE;
        out->type = item.type;
        snprintf(out->text, sizeof(out->text), "%s", spec);
        return WEFT_OK;
    }
    if (strcmp(spec, "unbound") == 0)
        return parse_bind_item(spec, 7, out, err);
    st = walk_rank_list("WEFT_TOPO_BIND", spec, rank, nranks, check_bind_item, "binding",
                        "give one per rank, 'ITEM*N' repeats, or a rule: unbound, by-core, by-pu, ...",
                        &mine, &mine_len, err);
    if (st != WEFT_OK)
        return st;
    return parse_bind_item(mine, mine_len, out, err);
}

/* ---- WEFT_TOPO_NODE ------------------------------------------------------ */

static int is_name_char(char c)
{
    return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.';
}

/* "FMT:K" of block:/cyclic: rules; FMT has exactly one %d. */
static weft_status_t parse_node_rule(const char *rule, const char *body, unsigned long value,
                                     int by_block, char name[WEFT__TOPO_NAME_MAX],
                                     unsigned long *count, weft__topo_err_t *err)
{
    const char   *colon = strrchr(body, ':');
    const char   *p;
    unsigned long k;
    int           holes = 0;

    if (!colon)
        return weft__topo_fail(err, WEFT_ERR_CONFIG,
                               "WEFT_TOPO_NODE '%.60s': expected %s:FORMAT:%s", rule,
                               by_block ? "block" : "cyclic", by_block ? "RANKS_PER_NODE" : "NODES");
    p = colon + 1;
    if (scan_uint(&p, 1, INT_MAX, &k) || *p)
        return weft__topo_fail(err, WEFT_ERR_CONFIG,
                               "WEFT_TOPO_NODE '%.60s': the count after the last ':' must be a "
                               "positive integer", rule);
    size_t flen = (size_t)(colon - body);
    for (size_t i = 0; i < flen; i++) {
        if (body[i] == '%') {
            if (i + 1 >= flen || body[i + 1] != 'd')
                return weft__topo_fail(err, WEFT_ERR_CONFIG,
                                       "WEFT_TOPO_NODE '%.60s': the format may only hold %%d", rule);
            holes++;
            i++;
        } else if (!is_name_char(body[i])) {
            return weft__topo_fail(err, WEFT_ERR_CONFIG,
                                   "WEFT_TOPO_NODE '%.60s': '%c' is not allowed in a node name",
                                   rule, body[i]);
        }
    }
    if (holes != 1)
        return weft__topo_fail(err, WEFT_ERR_CONFIG,
                               "WEFT_TOPO_NODE '%.60s': the format needs exactly one %%d", rule);
    unsigned long index = by_block ? value / k : value % k;
    *count = k;
    const char   *hole = strstr(body, "%d");
    int n = snprintf(name, WEFT__TOPO_NAME_MAX, "%.*s%lu%.*s", (int)(hole - body), body, index,
                     (int)(colon - hole - 2), hole + 2);
    if (n < 0 || n >= WEFT__TOPO_NAME_MAX)
        return weft__topo_fail(err, WEFT_ERR_CONFIG, "WEFT_TOPO_NODE '%.60s': node name too long",
                               rule);
    return WEFT_OK;
}

static weft_status_t check_node_item(const char *item, size_t len, long offset,
                                     weft__topo_err_t *err)
{
    if (len == 0 || len >= WEFT__TOPO_NAME_MAX)
        return weft__topo_fail(err, WEFT_ERR_CONFIG,
                               "WEFT_TOPO_NODE: empty or overlong node name at offset %ld", offset);
    for (size_t i = 0; i < len; i++)
        if (!is_name_char(item[i]))
            return weft__topo_fail(err, WEFT_ERR_CONFIG,
                                   "WEFT_TOPO_NODE entry '%.*s': '%c' is not allowed in a "
                                   "node name", (int)len, item, item[i]);
    return WEFT_OK;
}

weft_status_t weft__topo_parse_node_index(const char *spec, int rank, int nranks,
                                          char name[WEFT__TOPO_NAME_MAX], int *index,
                                          weft__topo_err_t *err)
{
    const char   *mine;
    size_t        mine_len;
    unsigned long k;
    long          seen = 0;
    weft_status_t st;

    *index = 0;
    if (rank < 0 || rank >= nranks)
        return weft__topo_fail(err, WEFT_ERR_INVALID_ARG, "rank %d outside [0, %d)", rank, nranks);
    if (!spec || !*spec)
        return weft__topo_fail(err, WEFT_ERR_CONFIG, "WEFT_TOPO_NODE is empty");
    /* A rule's names differ for different node numbers (one %d, decimal):
     * a node holds the ranks of one block, or those equal modulo k. */
    if (strncmp(spec, "block:", 6) == 0) {
        if ((st = parse_node_rule(spec, spec + 6, (unsigned long)rank, 1, name, &k, err)) == WEFT_OK)
            *index = (int)((unsigned long)rank % k);
        return st;
    }
    if (strncmp(spec, "cyclic:", 7) == 0) {
        if ((st = parse_node_rule(spec, spec + 7, (unsigned long)rank, 0, name, &k, err)) == WEFT_OK)
            *index = (int)((unsigned long)rank / k);
        return st;
    }
    st = walk_rank_list("WEFT_TOPO_NODE", spec, rank, nranks, check_node_item, "node name",
                        "give one per rank, 'NAME*N' repeats, or block:FMT:K / cyclic:FMT:N",
                        &mine, &mine_len, err);
    if (st != WEFT_OK)
        return st;
    snprintf(name, WEFT__TOPO_NAME_MAX, "%.*s", (int)mine_len, mine);
    /* the list is valid: count the ranks before this one that its entries
     * put on the same node */
    for (const char *s = spec; seen < rank; s++) {
        size_t        len = entry_len(s), item_len;
        unsigned long count;

        split_repeat(s, len, &item_len, &count);
        if (item_len == mine_len && memcmp(s, mine, mine_len) == 0)
            *index += (int)((long)count < rank - seen ? (long)count : rank - seen);
        seen += (long)count;
        s += len;
    }
    return WEFT_OK;
}

weft_status_t weft__topo_parse_node(const char *spec, int rank, int nranks,
                                    char name[WEFT__TOPO_NAME_MAX], weft__topo_err_t *err)
{
    int index;

    return weft__topo_parse_node_index(spec, rank, nranks, name, &index, err);
}
