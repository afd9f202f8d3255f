/* The settings parsers (src/runtime/config.c) and weft_config_init reading
 * WEFT_* variables.  The first byte picks the parser and its bounds, the
 * rest is the value.  Properties: a parser either fails with
 * WEFT_ERR_CONFIG and a message naming the variable, leaving its output
 * alone, or returns a value inside what it promises. */
#include "fuzz.h"
#include "runtime/runtime.h"

#include <errno.h>
#include <limits.h>
#include <strings.h>

static const char *const variables[] = {"WEFT_CONNECT", "WEFT_PROGRESS_THREAD",
                                        "WEFT_PROGRESS_INTERVAL_US", "WEFT_VERBOSE"};

/* WEFT_PROGRESS_BIND: spare, rank, all, or a list of 1 to WEFT__BIND_LIST_MAX
 * CPUs of at most 65535, whose first is the CPU until weft_init picks. */
static void fuzz_progress_bind(const char *value)
{
    weft__progress_cfg_t pc, before;
    weft_status_t st;

    memset(&pc, 0x5a, sizeof(pc));
    before = pc;
    setenv("WEFT_PROGRESS_BIND", value, 1);
    st = weft__progress_cfg_read(&pc);
    unsetenv("WEFT_PROGRESS_BIND");
    if (st != WEFT_OK) {
        FUZZ_ASSERT(st == WEFT_ERR_CONFIG && memcmp(&pc, &before, sizeof(pc)) == 0);
        FUZZ_ASSERT(strstr(weft_last_error(), "WEFT_PROGRESS_BIND") != NULL);
        return;
    }
    FUZZ_ASSERT(pc.bind == WEFT__BIND_RANK || pc.bind == WEFT__BIND_ALL ||
                pc.bind == WEFT__BIND_CPU || pc.bind == WEFT__BIND_SPARE);
    if (pc.bind != WEFT__BIND_CPU)
        return;
    FUZZ_ASSERT(pc.ncpus >= 1 && pc.ncpus <= WEFT__BIND_LIST_MAX && pc.cpu == pc.cpus[0]);
    for (int i = 0; i < pc.ncpus; i++)
        FUZZ_ASSERT(pc.cpus[i] <= 65535 && weft__progress_cpu(&pc, i) == pc.cpus[i] &&
                    weft__progress_cpu(&pc, i + pc.ncpus) == pc.cpus[i]);
}

static void fuzz_config_init(const char *var, const char *value)
{
    weft_config_t cfg, before;
    weft_status_t st;

    memset(&cfg, 0x5a, sizeof(cfg));
    before = cfg;
    setenv(var, value, 1);
    st = weft_config_init(&cfg);
    unsetenv(var);
    if (st != WEFT_OK) {
        FUZZ_ASSERT(st == WEFT_ERR_CONFIG);
        FUZZ_ASSERT(memcmp(&cfg, &before, sizeof(cfg)) == 0);
        FUZZ_ASSERT(strstr(weft_last_error(), var) != NULL);
        return;
    }
    FUZZ_ASSERT(cfg.connect == WEFT_CONNECT_LAZY || cfg.connect == WEFT_CONNECT_EAGER);
    FUZZ_ASSERT(cfg.progress_thread == 0 || cfg.progress_thread == 1);
    FUZZ_ASSERT(cfg.verbose == 0 || cfg.verbose == 1);
    FUZZ_ASSERT(cfg.progress_interval_us >= 1 && cfg.progress_interval_us <= 1000000);
    FUZZ_ASSERT(cfg.mpi_comm == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = {"lazy", "eager", "spread", "compact", ""};
    unsigned      mode;
    char         *s;
    int           out = -7;
    unsigned long u = 77, min, max;
    weft_status_t st;

    if (size < 1)
        return 0;
    mode = data[0];
    s = fuzz_cstr(data + 1, size - 1);
    switch (mode % 6) {
    case 0:
        st = weft__parse_bool("WEFT_B", s, &out);
        FUZZ_ASSERT(st == WEFT_OK ? (out == 0 || out == 1)
                                  : (st == WEFT_ERR_CONFIG && out == -7 &&
                                     strstr(weft_last_error(), "WEFT_B") != NULL));
        break;
    case 1: {
        /* bounds from the mode byte: small ranges, and the whole range */
        min = (mode >> 3) & 3;
        max = (mode & 0x80) ? ULONG_MAX : min + ((mode >> 5) & 3) * 1000;
        st = weft__parse_uint("WEFT_U", s, min, max, &u);
        if (st == WEFT_OK) {
            char *end;
            errno = 0;
            FUZZ_ASSERT(u >= min && u <= max && u == strtoul(s, &end, 10) && *end == '\0');
        } else {
            FUZZ_ASSERT(st == WEFT_ERR_CONFIG && u == 77);
            FUZZ_ASSERT(strstr(weft_last_error(), "WEFT_U") != NULL);
        }
        break;
    }
    case 2: {
        int count = 1 + (int)((mode >> 3) % 5);
        st = weft__parse_enum("WEFT_E", s, names, count, &out);
        FUZZ_ASSERT(st == WEFT_OK ? (out >= 0 && out < count && strcasecmp(s, names[out]) == 0)
                                  : (st == WEFT_ERR_CONFIG && out == -7));
        break;
    }
    case 5:
        fuzz_progress_bind(s);
        break;
    default:
        fuzz_config_init(variables[(mode >> 2) % 4], s);
        break;
    }
    free(s);
    return 0;
}
