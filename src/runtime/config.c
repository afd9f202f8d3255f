/* Settings: defaults, WEFT_* environment variables, and their parsers.
 * The parsers are pure functions of a string so they can be fuzzed. */
#include "runtime.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

weft_status_t weft__parse_bool(const char *name, const char *s, int *out)
{
    static const char *const yes[] = {"1", "yes", "on", "true", "y"};
    static const char *const no[]  = {"0", "no", "off", "false", "n"};

    if (s == NULL)
        return weft__error(WEFT_ERR_CONFIG, name, "missing value");
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcasecmp(s, yes[i]) == 0) { *out = 1; return WEFT_OK; }
        if (strcasecmp(s, no[i]) == 0)  { *out = 0; return WEFT_OK; }
    }
    return weft__error(WEFT_ERR_CONFIG, name,
                       "'%.64s' is not a boolean (use 0/1, yes/no, on/off, true/false)", s);
}

weft_status_t weft__parse_uint(const char *name, const char *s, unsigned long min,
                               unsigned long max, unsigned long *out)
{
    char *end;
    unsigned long v;

    if (s == NULL)
        return weft__error(WEFT_ERR_CONFIG, name, "missing value");
    /* strtoul accepts leading spaces and a minus sign; a setting should not */
    if (!isdigit((unsigned char)s[0]))
        return weft__error(WEFT_ERR_CONFIG, name, "'%.64s' is not a non-negative integer", s);
    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return weft__error(WEFT_ERR_CONFIG, name, "'%.64s' is not a non-negative integer", s);
    if (v < min || v > max)
        return weft__error(WEFT_ERR_CONFIG, name, "%lu is outside [%lu, %lu]", v, min, max);
    *out = v;
    return WEFT_OK;
}

weft_status_t weft__parse_enum(const char *name, const char *s, const char *const *names,
                               int count, int *out)
{
    char expected[256] = "";
    size_t used = 0;

    if (s == NULL)
        return weft__error(WEFT_ERR_CONFIG, name, "missing value");
    for (int i = 0; i < count; i++) {
        if (strcasecmp(s, names[i]) == 0) {
            *out = i;
            return WEFT_OK;
        }
        used += (size_t)snprintf(expected + used, sizeof(expected) - used, "%s%s",
                                 i ? ", " : "", names[i]);
        if (used >= sizeof(expected))
            break;
    }
    return weft__error(WEFT_ERR_CONFIG, name, "'%.64s' is not one of: %s", s, expected);
}

/* A list of CPUs as `3`, `14,15` or `8-11,3`: entries separated by
 * commas, each a CPU (at most 65535) or an increasing range of them, in
 * the order given (repeats allowed), at most WEFT__BIND_LIST_MAX in all. */
static weft_status_t parse_cpu_list(const char *name, const char *v, weft__progress_cfg_t *c)
{
    const char *p = v;

    c->ncpus = 0;
    for (;;) {
        unsigned long lo, hi;

        if (weft__scan_uint(&p, 0, 65535, &lo) != 0)
            break;
        hi = lo;
        if (*p == '-' && (p++, weft__scan_uint(&p, lo, 65535, &hi) != 0))
            break;
        if (hi - lo >= (unsigned long)(WEFT__BIND_LIST_MAX - c->ncpus))
            return weft__error(WEFT_ERR_CONFIG, name, "'%.64s' names more than %d CPUs", v,
                               WEFT__BIND_LIST_MAX);
        for (unsigned long cpu = lo; cpu <= hi; cpu++)
            c->cpus[c->ncpus++] = (uint16_t)cpu;
        if (*p == '\0')
            return WEFT_OK;
        if (*p++ != ',')
            break;
    }
    return weft__error(WEFT_ERR_CONFIG, name,
                       "'%.64s' is not spare, rank, all or a list of CPUs (N or N-M, increasing, "
                       "N at most 65535, separated by commas)", v);
}

int weft__spare_cpus(const uint64_t may[WEFT__CPU_WORDS], const uint64_t used[WEFT__CPU_WORDS],
                     uint16_t out[WEFT__CPU_MAX])
{
    int n = 0;

    for (int c = 0; c < WEFT__CPU_MAX; c++)
        if (((may[c / 64] & ~used[c / 64]) >> (c % 64)) & 1u)
            out[n++] = (uint16_t)c;
    return n;
}

weft_status_t weft__progress_cfg_read(weft__progress_cfg_t *out)
{
    static const char *const prio_names[] = {"normal", "short", "fifo"};
    weft__progress_cfg_t c = {.bind = WEFT__BIND_RANK, .priority = WEFT__PRIO_SHORT};
    const char *v;
    unsigned long u;
    weft_status_t st;

    if ((v = getenv("WEFT_PROGRESS_BIND")) != NULL) {
        if (strcasecmp(v, "spare") == 0) {
            c.bind = WEFT__BIND_SPARE;
        } else if (strcasecmp(v, "rank") == 0) {
            c.bind = WEFT__BIND_RANK;
        } else if (strcasecmp(v, "all") == 0) {
            c.bind = WEFT__BIND_ALL;
        } else {
            /* anything else is a list of CPUs, or refused with the one
             * message that names every form; the CPUs are checked against
             * the machine when the thread is bound: only then does weft
             * know which CPUs exist */
            if ((st = parse_cpu_list("WEFT_PROGRESS_BIND", v, &c)) != WEFT_OK)
                return st;
            c.bind = WEFT__BIND_CPU;
            c.cpu = c.cpus[0];
        }
    }
    if ((v = getenv("WEFT_PROGRESS_PRIORITY")) != NULL &&
        (st = weft__parse_enum("WEFT_PROGRESS_PRIORITY", v, prio_names, 3, &c.priority)) != WEFT_OK)
        return st;
    /* up to a second: a longer spin is a core given to the thread */
    if ((v = getenv("WEFT_PROGRESS_SPIN_US")) != NULL) {
        if ((st = weft__parse_uint("WEFT_PROGRESS_SPIN_US", v, 0, 1000000, &u)) != WEFT_OK)
            return st;
        c.spin_us = (unsigned)u;
    }
    *out = c;
    return WEFT_OK;
}

weft_status_t weft_config_init(weft_config_t *cfg)
{
    static const char *const connect_names[] = {"lazy", "eager"};
    weft_config_t c;
    weft__progress_cfg_t pc;
    const char *v;
    unsigned long u;
    int i;
    weft_status_t st;

    if (cfg == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "cfg is NULL");

    memset(&c, 0, sizeof(c));
    c.connect = WEFT_CONNECT_LAZY;
    c.progress_interval_us = 50;
    c.shm = 1;

    if ((v = getenv("WEFT_CONNECT")) != NULL) {
        if ((st = weft__parse_enum("WEFT_CONNECT", v, connect_names, 2, &i)) != WEFT_OK)
            return st;
        c.connect = (weft_connect_t)i;
    }
    if ((v = getenv("WEFT_PROGRESS_THREAD")) != NULL &&
        (st = weft__parse_bool("WEFT_PROGRESS_THREAD", v, &c.progress_thread)) != WEFT_OK)
        return st;
    if ((v = getenv("WEFT_PROGRESS_INTERVAL_US")) != NULL) {
        if ((st = weft__parse_uint("WEFT_PROGRESS_INTERVAL_US", v, 1, 1000000, &u)) != WEFT_OK)
            return st;
        c.progress_interval_us = (unsigned)u;
    }
    if ((v = getenv("WEFT_VERBOSE")) != NULL &&
        (st = weft__parse_bool("WEFT_VERBOSE", v, &c.verbose)) != WEFT_OK)
        return st;
    if ((v = getenv("WEFT_SHM")) != NULL &&
        (st = weft__parse_bool("WEFT_SHM", v, &c.shm)) != WEFT_OK)
        return st;
    if ((v = getenv("WEFT_CHECK")) != NULL &&
        (st = weft__parse_bool("WEFT_CHECK", v, &c.check)) != WEFT_OK)
        return st;
    /* 0 (no limit) up to a day */
    if ((v = getenv("WEFT_TIMEOUT_MS")) != NULL &&
        (st = weft__parse_uint("WEFT_TIMEOUT_MS", v, 0, 86400000ul, &c.timeout_ms)) != WEFT_OK)
        return st;
    /* read again by weft_init; a bad value is reported here, as the others */
    if ((st = weft__progress_cfg_read(&pc)) != WEFT_OK)
        return st;

    *cfg = c;
    return WEFT_OK;
}
