/* Which node a rank is on: the WEFT_TOPO_NODE setting (a per-rank list of
 * node names, or a rule), else the host's name.  The per-rank list
 * grammar lives here too, for the team layer's WEFT_TOPO_BIND as well.
 * Everything but weft__node_name and weft__ctx_node is a pure function of
 * its arguments, unit-tested (tests/runtime/test_node.c) and fuzzed
 * (tests/fuzz/fuzz_topo_node.c) alone. */
#include "runtime.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Per-rank lists ------------------------------------------------------ */

int weft__scan_uint(const char **p, unsigned long min, unsigned long max, unsigned long *out)
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
    if (weft__scan_uint(&p, 1, INT_MAX, count) || p != s + len)
        return -1;
    *item_len = (size_t)(star - s);
    return 0;
}

weft_status_t weft__rank_list(const char *var, const char *spec, int rank, int nranks,
                              weft__item_check_fn check, const char *what,
                              const char *expected, const char **mine, size_t *mine_len,
                              weft__msg_t *err)
{
    long seen = 0;

    *mine = NULL;
    for (const char *s = spec;; s++) {
        size_t        len = entry_len(s), item_len;
        unsigned long count;
        weft_status_t st;

        if (split_repeat(s, len, &item_len, &count))
            return weft__fail(err, WEFT_ERR_CONFIG, "%s entry '%.*s': bad repeat count after '*'",
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
        return weft__fail(err, WEFT_ERR_CONFIG, "%s lists %ld %s%s for %d ranks (%s)", var, seen,
                          what, seen == 1 ? "" : "s", nranks, expected);
    return WEFT_OK;
}

/* ---- WEFT_TOPO_NODE ------------------------------------------------------ */

static int is_name_char(char c)
{
    return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.';
}

/* "FMT:K" of block:/cyclic: rules; FMT has exactly one %d. */
static weft_status_t parse_node_rule(const char *rule, const char *body, unsigned long value,
                                     int by_block, char name[WEFT__NODE_NAME_MAX],
                                     unsigned long *count, weft__msg_t *err)
{
    const char   *colon = strrchr(body, ':');
    const char   *p;
    unsigned long k;
    int           holes = 0;

    if (!colon)
        return weft__fail(err, WEFT_ERR_CONFIG,
                          "WEFT_TOPO_NODE '%.60s': expected %s:FORMAT:%s", rule,
                          by_block ? "block" : "cyclic", by_block ? "RANKS_PER_NODE" : "NODES");
    p = colon + 1;
    if (weft__scan_uint(&p, 1, INT_MAX, &k) || *p)
        return weft__fail(err, WEFT_ERR_CONFIG,
                          "WEFT_TOPO_NODE '%.60s': the count after the last ':' must be a "
                          "positive integer", rule);
    size_t flen = (size_t)(colon - body);
    for (size_t i = 0; i < flen; i++) {
        if (body[i] == '%') {
            if (i + 1 >= flen || body[i + 1] != 'd')
                return weft__fail(err, WEFT_ERR_CONFIG,
                                  "WEFT_TOPO_NODE '%.60s': the format may only hold %%d", rule);
            holes++;
            i++;
        } else if (!is_name_char(body[i])) {
            return weft__fail(err, WEFT_ERR_CONFIG,
                              "WEFT_TOPO_NODE '%.60s': '%c' is not allowed in a node name",
                              rule, body[i]);
        }
    }
    if (holes != 1)
        return weft__fail(err, WEFT_ERR_CONFIG,
                          "WEFT_TOPO_NODE '%.60s': the format needs exactly one %%d", rule);
    unsigned long index = by_block ? value / k : value % k;
    *count = k;
    const char   *hole = strstr(body, "%d");
    int n = snprintf(name, WEFT__NODE_NAME_MAX, "%.*s%lu%.*s", (int)(hole - body), body, index,
                     (int)(colon - hole - 2), hole + 2);
    if (n < 0 || n >= WEFT__NODE_NAME_MAX)
        return weft__fail(err, WEFT_ERR_CONFIG, "WEFT_TOPO_NODE '%.60s': node name too long",
                          rule);
    return WEFT_OK;
}

static weft_status_t check_node_item(const char *item, size_t len, long offset,
                                     weft__msg_t *err)
{
    if (len == 0 || len >= WEFT__NODE_NAME_MAX)
        return weft__fail(err, WEFT_ERR_CONFIG,
                          "WEFT_TOPO_NODE: empty or overlong node name at offset %ld", offset);
    for (size_t i = 0; i < len; i++)
        if (!is_name_char(item[i]))
            return weft__fail(err, WEFT_ERR_CONFIG,
                              "WEFT_TOPO_NODE entry '%.*s': '%c' is not allowed in a "
                              "node name", (int)len, item, item[i]);
    return WEFT_OK;
}

weft_status_t weft__node_parse(const char *spec, int rank, int nranks,
                               char name[WEFT__NODE_NAME_MAX], int *index, weft__msg_t *err)
{
    const char   *mine;
    size_t        mine_len;
    unsigned long k;
    long          seen = 0;
    int           dummy;
    weft_status_t st;

    if (index == NULL)
        index = &dummy;
    *index = 0;
    if (rank < 0 || rank >= nranks)
        return weft__fail(err, WEFT_ERR_INVALID_ARG, "rank %d outside [0, %d)", rank, nranks);
    if (!spec || !*spec)
        return weft__fail(err, WEFT_ERR_CONFIG, "WEFT_TOPO_NODE is empty");
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
    st = weft__rank_list("WEFT_TOPO_NODE", spec, rank, nranks, check_node_item, "node name",
                         "give one per rank, 'NAME*N' repeats, or block:FMT:K / cyclic:FMT:N",
                         &mine, &mine_len, err);
    if (st != WEFT_OK)
        return st;
    snprintf(name, WEFT__NODE_NAME_MAX, "%.*s", (int)mine_len, mine);
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

weft_status_t weft__node_name(const char *spec, int rank, int nranks,
                              char name[WEFT__NODE_NAME_MAX], weft__msg_t *err)
{
    char host[MPI_MAX_PROCESSOR_NAME];
    int  len;

    if (spec)
        return weft__node_parse(spec, rank, nranks, name, NULL, err);
    MPI_Get_processor_name(host, &len);
    snprintf(name, WEFT__NODE_NAME_MAX, "%.*s", WEFT__NODE_NAME_MAX - 1, host);
    return WEFT_OK;
}

weft_status_t weft__ctx_node(weft_ctx_t ctx, char name[WEFT__NODE_NAME_MAX], const char *fn)
{
    weft__msg_t err;

    if (weft__node_name(getenv(WEFT__NODE_ENV), ctx->rank, ctx->nranks, name, &err) != WEFT_OK)
        return weft__error(WEFT_ERR_CONFIG, fn, "%s", err.msg);
    return WEFT_OK;
}
