/*
 * runtime/settings.h -- the runtime's parsers of settings, and the node a
 * rank is on.  No UCX or MPI type appears here, so the team layer, which
 * parses the WEFT_TOPO_* settings with the same per-rank list grammar,
 * includes this header alone.  runtime.h includes it.
 */
#ifndef WEFT_RUNTIME_SETTINGS_H
#define WEFT_RUNTIME_SETTINGS_H

#include <stdint.h>
#include <weft.h>
#include <stddef.h>

/* Settings parsers (pure functions, fuzzable): the error, naming the
 * variable `name`, is recorded for the calling thread (config.c). */
weft_status_t weft__parse_bool(const char *name, const char *s, int *out);
weft_status_t weft__parse_uint(const char *name, const char *s, unsigned long min,
                               unsigned long max, unsigned long *out);
weft_status_t weft__parse_enum(const char *name, const char *s, const char *const *names,
                               int count, int *out);

/* How the progress thread runs (WEFT_PROGRESS_BIND, _PRIORITY, _SPIN_US).
 * Not in weft_config_t, whose layout is part of the ABI: weft_config_init
 * checks them, and weft_init reads them again when it starts the thread. */
enum { WEFT__BIND_RANK, WEFT__BIND_ALL, WEFT__BIND_CPU, WEFT__BIND_SPARE };
enum { WEFT__PRIO_NORMAL, WEFT__PRIO_SHORT, WEFT__PRIO_FIFO };
#define WEFT__BIND_LIST_MAX 256  /* CPUs a WEFT_PROGRESS_BIND list may name */
typedef struct {
    int      bind;      /* WEFT__BIND_*: the rank's cores, any core, cpu,
                         * or a CPU no rank of the node is bound to */
    int      cpu;       /* WEFT__BIND_CPU: this rank's CPU (OS index): the
                         * first listed, until weft_init picks by the rank's
                         * place on its node (weft__progress_cpu) */
    int      ncpus;     /* WEFT__BIND_CPU: how many CPUs the list names */
    uint16_t cpus[WEFT__BIND_LIST_MAX]; /* ... and which, in order */
    int      priority;  /* WEFT__PRIO_*: the most asked for */
    unsigned spin_us;   /* polling after work before sleeping */
} weft__progress_cfg_t;

/* CPUs 0 .. 64 * WEFT__CPU_WORDS - 1 as bits (c: bit c % 64 of word
 * c / 64), as many as a cpu_set_t of the C library holds. */
#define WEFT__CPU_WORDS 16
#define WEFT__CPU_MAX   (64 * WEFT__CPU_WORDS)

/* The CPUs whose bit is set in `may` and clear in `used`, in increasing
 * order, into out; how many.  Pure. */
int weft__spare_cpus(const uint64_t may[WEFT__CPU_WORDS], const uint64_t used[WEFT__CPU_WORDS],
                     uint16_t out[WEFT__CPU_MAX]);

/* The CPU of a list that the rank at place `node_index` among the ranks of
 * its node takes: the list's entries in turn, round again past its end. */
static inline int weft__progress_cpu(const weft__progress_cfg_t *pc, int node_index)
{
    return pc->cpus[(unsigned)node_index % (unsigned)pc->ncpus];
}

/* The progress thread's settings from the environment (config.c). */
weft_status_t weft__progress_cfg_read(weft__progress_cfg_t *out);

/* An error message built by a pure function, which its caller reports:
 * recorded with weft__error, or first agreed on across ranks (the team
 * layer sends the first failing rank's message to every rank). */
#define WEFT__MSG_MAX 320
typedef struct {
    char msg[WEFT__MSG_MAX];
} weft__msg_t;

/* Write the message into err and return st (errors.c).  The message is
 * formatted apart, so an argument may be err->msg itself. */
weft_status_t weft__fail(weft__msg_t *err, weft_status_t st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- Per-rank lists (node.c) --------------------------------------------
 * A per-rank setting lists one item per rank, in rank order:
 * "ITEM[*N],ITEM[*N],...", where *N repeats an item for N ranks. */

/* A decimal number in [min, max] at *p: 0, and *p moved past it, or -1. */
int weft__scan_uint(const char **p, unsigned long min, unsigned long max, unsigned long *out);

/* Check one item of a list (len bytes at item; offset is its place in the
 * list), writing err on failure. */
typedef weft_status_t (*weft__item_check_fn)(const char *item, size_t len, long offset,
                                             weft__msg_t *err);

/* Walk the per-rank list spec of the variable var: check every item, find
 * the one that covers rank (*mine, *mine_len), and require the list to
 * cover exactly nranks ranks (`what` names an item, `expected` says what
 * is accepted). */
weft_status_t weft__rank_list(const char *var, const char *spec, int rank, int nranks,
                              weft__item_check_fn check, const char *what,
                              const char *expected, const char **mine, size_t *mine_len,
                              weft__msg_t *err);

/* ---- Which node a rank is on (node.c) -----------------------------------
 * The one answer to "which ranks share a node": the segments that the
 * direct path cross-maps (seg) and the Machine level of the topology tree
 * (team) both ask here. */

#define WEFT__NODE_ENV      "WEFT_TOPO_NODE"
#define WEFT__NODE_NAME_MAX 64

/* The node of `rank` of `nranks` from a WEFT_TOPO_NODE spec: a per-rank
 * list of names, or a rule (block:FMT:K, cyclic:FMT:N).  index, unless
 * NULL, gets the rank's index on its node: how many ranks below it the
 * spec puts there.  One pass over the spec (a rule: constant time).
 * Pure. */
weft_status_t weft__node_parse(const char *spec, int rank, int nranks,
                               char name[WEFT__NODE_NAME_MAX], int *index, weft__msg_t *err);

/* The node of `rank` of `nranks`: from a WEFT_TOPO_NODE spec, or this
 * host's MPI_Get_processor_name when spec is NULL. */
weft_status_t weft__node_name(const char *spec, int rank, int nranks,
                              char name[WEFT__NODE_NAME_MAX], weft__msg_t *err);

#endif
