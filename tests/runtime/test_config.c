/* The settings parsers, good and malformed input, without MPI. */
#include "runtime/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define EXPECT(cond)                                                        \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                     \
        }                                                                   \
    } while (0)

static void test_parse_bool(void)
{
    static const char *yes[] = {"1", "yes", "YES", "on", "true", "True", "y"};
    static const char *no[] = {"0", "no", "off", "false", "FALSE", "n"};
    static const char *bad[] = {"", "2", "maybe", "yes ", " 1", "onn", "-1"};
    int v;

    for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++) {
        v = -1;
        EXPECT(weft__parse_bool("X", yes[i], &v) == WEFT_OK && v == 1);
    }
    for (size_t i = 0; i < sizeof(no) / sizeof(*no); i++) {
        v = -1;
        EXPECT(weft__parse_bool("X", no[i], &v) == WEFT_OK && v == 0);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        v = -1;
        EXPECT(weft__parse_bool("WEFT_X", bad[i], &v) == WEFT_ERR_CONFIG && v == -1);
        EXPECT(strstr(weft_last_error(), "WEFT_X") != NULL);
    }
    EXPECT(weft__parse_bool("X", NULL, &v) == WEFT_ERR_CONFIG);
}

static void test_parse_uint(void)
{
    unsigned long v = 7;

    EXPECT(weft__parse_uint("X", "0", 0, 10, &v) == WEFT_OK && v == 0);
    EXPECT(weft__parse_uint("X", "10", 0, 10, &v) == WEFT_OK && v == 10);
    v = 7;
    EXPECT(weft__parse_uint("X", "11", 0, 10, &v) == WEFT_ERR_CONFIG && v == 7);
    EXPECT(strstr(weft_last_error(), "outside [0, 10]") != NULL);
    EXPECT(weft__parse_uint("X", "-1", 0, 10, &v) == WEFT_ERR_CONFIG);
    EXPECT(weft__parse_uint("X", " 5", 0, 10, &v) == WEFT_ERR_CONFIG);
    EXPECT(weft__parse_uint("X", "5x", 0, 10, &v) == WEFT_ERR_CONFIG);
    EXPECT(weft__parse_uint("X", "", 0, 10, &v) == WEFT_ERR_CONFIG);
    EXPECT(weft__parse_uint("X", "99999999999999999999999", 0, ~0ul, &v) == WEFT_ERR_CONFIG);
    EXPECT(weft__parse_uint("X", NULL, 0, 10, &v) == WEFT_ERR_CONFIG);
    EXPECT(v == 7);
}

static void test_parse_enum(void)
{
    static const char *const names[] = {"lazy", "eager"};
    int v = -1;

    EXPECT(weft__parse_enum("X", "lazy", names, 2, &v) == WEFT_OK && v == 0);
    EXPECT(weft__parse_enum("X", "EAGER", names, 2, &v) == WEFT_OK && v == 1);
    v = -1;
    EXPECT(weft__parse_enum("WEFT_CONNECT", "soon", names, 2, &v) == WEFT_ERR_CONFIG && v == -1);
    EXPECT(strstr(weft_last_error(), "lazy, eager") != NULL);
    EXPECT(weft__parse_enum("X", NULL, names, 2, &v) == WEFT_ERR_CONFIG);
}

static void test_config_env(void)
{
    weft_config_t cfg;

    unsetenv("WEFT_CONNECT");
    unsetenv("WEFT_PROGRESS_THREAD");
    unsetenv("WEFT_PROGRESS_INTERVAL_US");
    unsetenv("WEFT_VERBOSE");
    EXPECT(weft_config_init(&cfg) == WEFT_OK);
    EXPECT(cfg.connect == WEFT_CONNECT_LAZY && cfg.progress_thread == 0 &&
           cfg.progress_interval_us == 50 && cfg.verbose == 0 && cfg.mpi_comm == NULL);
    setenv("WEFT_CONNECT", "eager", 1);
    setenv("WEFT_PROGRESS_THREAD", "on", 1);
    setenv("WEFT_PROGRESS_INTERVAL_US", "200", 1);
    setenv("WEFT_VERBOSE", "1", 1);
    EXPECT(weft_config_init(&cfg) == WEFT_OK);
    EXPECT(cfg.connect == WEFT_CONNECT_EAGER && cfg.progress_thread == 1 &&
           cfg.progress_interval_us == 200 && cfg.verbose == 1);
    setenv("WEFT_PROGRESS_INTERVAL_US", "0", 1);
    EXPECT(weft_config_init(&cfg) == WEFT_ERR_CONFIG);
    EXPECT(strstr(weft_last_error(), "WEFT_PROGRESS_INTERVAL_US") != NULL);
}

/* WEFT_SHM: on by default, a boolean, a bad value names the variable. */
static void test_config_shm(void)
{
    weft_config_t cfg;

    unsetenv("WEFT_PROGRESS_INTERVAL_US");
    unsetenv("WEFT_SHM");
    EXPECT(weft_config_init(&cfg) == WEFT_OK && cfg.shm == 1);
    setenv("WEFT_SHM", "0", 1);
    EXPECT(weft_config_init(&cfg) == WEFT_OK && cfg.shm == 0);
    setenv("WEFT_SHM", "on", 1);
    EXPECT(weft_config_init(&cfg) == WEFT_OK && cfg.shm == 1);
    cfg.shm = 7;
    setenv("WEFT_SHM", "2", 1);
    EXPECT(weft_config_init(&cfg) == WEFT_ERR_CONFIG && cfg.shm == 7);
    EXPECT(strstr(weft_last_error(), "WEFT_SHM") != NULL);
    setenv("WEFT_SHM", "", 1);
    EXPECT(weft_config_init(&cfg) == WEFT_ERR_CONFIG);
    unsetenv("WEFT_SHM");
}

/* WEFT_CHECK: off by default, a boolean, a bad value names the variable
 * and leaves cfg untouched. */
static void test_config_check(void)
{
    weft_config_t cfg;

    unsetenv("WEFT_CHECK");
    EXPECT(weft_config_init(&cfg) == WEFT_OK && cfg.check == 0);
    setenv("WEFT_CHECK", "1", 1);
    EXPECT(weft_config_init(&cfg) == WEFT_OK && cfg.check == 1);
    setenv("WEFT_CHECK", "off", 1);
    EXPECT(weft_config_init(&cfg) == WEFT_OK && cfg.check == 0);
    cfg.check = 7;
    setenv("WEFT_CHECK", "full", 1);
    EXPECT(weft_config_init(&cfg) == WEFT_ERR_CONFIG && cfg.check == 7);
    EXPECT(strstr(weft_last_error(), "WEFT_CHECK") != NULL &&
           strstr(weft_last_error(), "'full'") != NULL);
    setenv("WEFT_CHECK", "", 1);
    EXPECT(weft_config_init(&cfg) == WEFT_ERR_CONFIG);
    unsetenv("WEFT_CHECK");
}

/* WEFT_TIMEOUT_MS: 0 (no limit) by default, milliseconds up to a day, a
 * bad value names the variable and leaves cfg alone. */
static void test_config_timeout(void)
{
    weft_config_t cfg;

    unsetenv("WEFT_TIMEOUT_MS");
    EXPECT(weft_config_init(&cfg) == WEFT_OK && cfg.timeout_ms == 0);
    setenv("WEFT_TIMEOUT_MS", "2500", 1);
    EXPECT(weft_config_init(&cfg) == WEFT_OK && cfg.timeout_ms == 2500);
    setenv("WEFT_TIMEOUT_MS", "86400000", 1);
    EXPECT(weft_config_init(&cfg) == WEFT_OK && cfg.timeout_ms == 86400000);
    cfg.timeout_ms = 7;
    setenv("WEFT_TIMEOUT_MS", "86400001", 1);
    EXPECT(weft_config_init(&cfg) == WEFT_ERR_CONFIG && cfg.timeout_ms == 7);
    EXPECT(strstr(weft_last_error(), "WEFT_TIMEOUT_MS") != NULL);
    setenv("WEFT_TIMEOUT_MS", "-1", 1);
    EXPECT(weft_config_init(&cfg) == WEFT_ERR_CONFIG);
    setenv("WEFT_TIMEOUT_MS", "5s", 1);
    EXPECT(weft_config_init(&cfg) == WEFT_ERR_CONFIG);
    EXPECT(strstr(weft_last_error(), "5s") != NULL);
    unsetenv("WEFT_TIMEOUT_MS");
}

/* UCX_TLS: whether it lets UCX use a shared-memory transport of its mm
 * component, on which weft turns error handling on (and only then: UCX
 * warns of an unused setting). */
static void test_ucx_tls(void)
{
    static const char *has[] = {NULL, "", "all", "sm", "shm", "mm", "posix", "sysv",
                                "tcp,self,sm", "self,posix", "shm:aux", "tcp:aux,sysv",
                                "^tcp", "^posix", "^sysv,cma", "^smx", "^"};
    static const char *has_not[] = {"tcp", "tcp,self", "self", "cma", "rc,ud", "smx",
                                    "tcp:sm", "^sm", "^shm", "^mm", "^all", "^tcp,sm",
                                    "^posix,sysv", "^sysv,tcp,posix", "sm_", ",,", "posixx"};

    for (size_t i = 0; i < sizeof(has) / sizeof(has[0]); i++)
        if (!weft__ucx_tls_has_mm(has[i])) {
            fprintf(stderr, "UCX_TLS=%s: expected the mm transports\n", has[i] ? has[i] : "(unset)");
            failures++;
        }
    for (size_t i = 0; i < sizeof(has_not) / sizeof(has_not[0]); i++)
        if (weft__ucx_tls_has_mm(has_not[i])) {
            fprintf(stderr, "UCX_TLS=%s: expected no mm transport\n", has_not[i]);
            failures++;
        }
}

/* The CPUs a progress thread may take: those the system gives (may) that
 * no rank is bound to (used), in order, across the words of the set. */
static void test_spare_cpus(void)
{
    uint64_t may[WEFT__CPU_WORDS] = {0}, used[WEFT__CPU_WORDS] = {0};
    uint16_t out[WEFT__CPU_MAX];
    int n;

    /* a machine of 4 CPUs, nothing bound: all of them */
    may[0] = 0xf;
    EXPECT(weft__spare_cpus(may, used, out) == 4 && out[0] == 0 && out[3] == 3);
    /* 16 CPUs, ranks on 0-13: 14 and 15 */
    may[0] = 0xffff;
    used[0] = (1u << 14) - 1;
    EXPECT(weft__spare_cpus(may, used, out) == 2 && out[0] == 14 && out[1] == 15);
    /* every CPU bound: none; CPUs the system does not give (isolated) are
     * never spare */
    used[0] = 0xffff;
    EXPECT(weft__spare_cpus(may, used, out) == 0);
    may[0] = 0xf0f0;
    used[0] = 0x00f0;
    EXPECT(weft__spare_cpus(may, used, out) == 4 && out[0] == 12 && out[3] == 15);
    /* across words: 0-63 used, 64 and 66 free, 65 used, nothing above 66 given */
    memset(may, 0, sizeof(may));
    may[0] = ~0ull;
    may[1] = 0x7;
    used[0] = ~0ull;
    used[1] = 1ull << 1;
    n = weft__spare_cpus(may, used, out);
    EXPECT(n == 2 && out[0] == 64 && out[1] == 66);
    /* the whole set: its last CPU too */
    memset(may, 0xff, sizeof(may));
    memset(used, 0, sizeof(used));
    EXPECT(weft__spare_cpus(may, used, out) == WEFT__CPU_MAX && out[WEFT__CPU_MAX - 1] == WEFT__CPU_MAX - 1);
}

/* The progress thread's settings: defaults, each accepted form, and a bad
 * value of each, which weft_config_init reports naming the variable. */
static void test_progress_settings(void)
{
    static const struct {
        const char *var, *value;
    } bad[] = {
        {"WEFT_PROGRESS_BIND", "core0"},   {"WEFT_PROGRESS_BIND", ""},
        {"WEFT_PROGRESS_BIND", "65536"},   {"WEFT_PROGRESS_BIND", "1,"},
        {"WEFT_PROGRESS_BIND", "1,,2"},    {"WEFT_PROGRESS_BIND", "1;2"},
        {"WEFT_PROGRESS_BIND", "3-2"},     {"WEFT_PROGRESS_BIND", "2-"},
        {"WEFT_PROGRESS_BIND", "0-65536"}, {"WEFT_PROGRESS_BIND", "1 ,2"},
        {"WEFT_PROGRESS_BIND", "0-256"},   {"WEFT_PROGRESS_BIND", "0-250,1-6"},
        {"WEFT_PROGRESS_BIND", "1,rank"},  {"WEFT_PROGRESS_BIND", "-1"},
        {"WEFT_PROGRESS_PRIORITY", "high"}, {"WEFT_PROGRESS_PRIORITY", "-1"},
        {"WEFT_PROGRESS_SPIN_US", "-3"},   {"WEFT_PROGRESS_SPIN_US", "1000001"},
        {"WEFT_PROGRESS_SPIN_US", "5us"},
    };
    weft__progress_cfg_t pc;
    weft_config_t cfg;

    unsetenv("WEFT_PROGRESS_BIND");
    unsetenv("WEFT_PROGRESS_PRIORITY");
    unsetenv("WEFT_PROGRESS_SPIN_US");
    EXPECT(weft__progress_cfg_read(&pc) == WEFT_OK);
    EXPECT(pc.bind == WEFT__BIND_RANK && pc.priority == WEFT__PRIO_SHORT && pc.spin_us == 0);
    setenv("WEFT_PROGRESS_BIND", "Spare", 1);
    EXPECT(weft__progress_cfg_read(&pc) == WEFT_OK && pc.bind == WEFT__BIND_SPARE);
    setenv("WEFT_PROGRESS_BIND", "ALL", 1);
    setenv("WEFT_PROGRESS_PRIORITY", "fifo", 1);
    setenv("WEFT_PROGRESS_SPIN_US", "20", 1);
    EXPECT(weft__progress_cfg_read(&pc) == WEFT_OK);
    EXPECT(pc.bind == WEFT__BIND_ALL && pc.priority == WEFT__PRIO_FIFO && pc.spin_us == 20);
    setenv("WEFT_PROGRESS_BIND", "3", 1);
    setenv("WEFT_PROGRESS_PRIORITY", "Normal", 1);
    EXPECT(weft__progress_cfg_read(&pc) == WEFT_OK);
    EXPECT(pc.bind == WEFT__BIND_CPU && pc.cpu == 3 && pc.priority == WEFT__PRIO_NORMAL);
    EXPECT(pc.ncpus == 1 && weft__progress_cpu(&pc, 0) == 3 && weft__progress_cpu(&pc, 5) == 3);
    /* a list: ranks of a host take its CPUs in turn, ranges expanded in
     * order, repeats kept */
    setenv("WEFT_PROGRESS_BIND", "14,15,8-10,8", 1);
    EXPECT(weft__progress_cfg_read(&pc) == WEFT_OK);
    EXPECT(pc.bind == WEFT__BIND_CPU && pc.cpu == 14 && pc.ncpus == 6);
    {
        static const int want[] = {14, 15, 8, 9, 10, 8, 14, 15};

        for (int i = 0; i < 8; i++)
            EXPECT(weft__progress_cpu(&pc, i) == want[i]);
    }
    /* the longest list there may be, and one CPU more */
    setenv("WEFT_PROGRESS_BIND", "0-255", 1);
    EXPECT(weft__progress_cfg_read(&pc) == WEFT_OK);
    EXPECT(pc.ncpus == WEFT__BIND_LIST_MAX && weft__progress_cpu(&pc, 255) == 255);
    setenv("WEFT_PROGRESS_BIND", "65535-65535,0-254", 1);
    EXPECT(weft__progress_cfg_read(&pc) == WEFT_OK);
    EXPECT(pc.ncpus == WEFT__BIND_LIST_MAX && pc.cpu == 65535);
    setenv("WEFT_PROGRESS_BIND", "0-255,7", 1);
    EXPECT(weft__progress_cfg_read(&pc) == WEFT_ERR_CONFIG);
    EXPECT(strstr(weft_last_error(), "more than 256 CPUs") != NULL);
    setenv("WEFT_PROGRESS_BIND", "rank", 1);
    EXPECT(weft_config_init(&cfg) == WEFT_OK);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        unsetenv("WEFT_PROGRESS_BIND");
        unsetenv("WEFT_PROGRESS_PRIORITY");
        unsetenv("WEFT_PROGRESS_SPIN_US");
        setenv(bad[i].var, bad[i].value, 1);
        EXPECT(weft_config_init(&cfg) == WEFT_ERR_CONFIG);
        EXPECT(strstr(weft_last_error(), bad[i].var) != NULL);
    }
    unsetenv("WEFT_PROGRESS_BIND");
    unsetenv("WEFT_PROGRESS_PRIORITY");
    unsetenv("WEFT_PROGRESS_SPIN_US");
}

int main(void)
{
    test_spare_cpus();
    test_parse_bool();
    test_parse_uint();
    test_parse_enum();
    test_config_env();
    test_config_shm();
    test_config_check();
    test_progress_settings();

    test_config_timeout();
    test_ucx_tls();
    if (failures == 0)
        printf("config parsers: all checks passed\n");
    return failures != 0;
}
