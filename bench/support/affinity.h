/*
 * Where threads run, for the benchmarks and the tests that check weft's
 * progress thread: a CPU set as a list, and the CPU set of the thread weft
 * names "weft-progress".  Needs _GNU_SOURCE (cpu_set_t) before any
 * system header.
 */
#ifndef WEFT_BENCH_AFFINITY_H
#define WEFT_BENCH_AFFINITY_H

#include <sched.h>
#include <stddef.h>

/* The CPUs of set as a list ("1", "0-3,8"; digits, commas and dashes
 * only) into out of len bytes; a list too long ends at its last whole
 * entry. */
void bench_cpu_list(const cpu_set_t *set, char *out, size_t len);

/* How many threads of this process are named "weft-progress"; the CPU
 * set of the last one found goes to out (untouched when there is none). */
int bench_progress_thread_set(cpu_set_t *out);

#endif
