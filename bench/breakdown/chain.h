/*
 * A call chain shaped like a put (bench/chain.c, libweft_bench_chain).
 */
#ifndef WEFT_BENCH_CHAIN_H
#define WEFT_BENCH_CHAIN_H

#include <stdint.h>

struct bench_chain {
    int (*op)(struct bench_chain *, const void *, uint64_t);
    uint64_t count, flags, window, size;
    char *base;
};

void bench_chain_init(struct bench_chain *c, char *base, uint64_t size);

/* Store 8 bytes of src at base + off: 0, or < 0 if off is out of range. */
int bench_chain_put(struct bench_chain *c, const void *src, uint64_t off);

/* The control: x after 24 dependent multiply-adds (LCG steps). */
uint64_t bench_chain_spin(uint64_t x);

/* x after `steps` dependent multiply-adds (0: the call alone): the
 * self-check's workloads of known cost (selfcheck.c). */
uint64_t bench_chain_steps(uint64_t x, int steps);

#endif
