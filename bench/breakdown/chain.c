/*
 * libweft_bench_chain -- a call chain shaped like a put, with no weft and
 * no UCX in it: an entry point called through the PLT, a checking layer,
 * an indirect call into a "transport" that stores 8 bytes and counts, and
 * a window count on the way back.  bench/timer_shadow.c times it, and
 * beside it bench_chain_spin, a call of about the same length whose time is
 * a chain of dependent multiplications: the control, work the core's
 * execution units and not its front end set the pace of.
 */
#include "chain.h"

#include <string.h>

__attribute__((noinline)) static int chain_store(struct bench_chain *c, const void *src,
                                                 uint64_t off)
{
    if (c->flags & 1)
        return -1;
    memcpy(c->base + off, src, 8);
    c->count++;
    return 0;
}

__attribute__((noinline)) static int chain_check(struct bench_chain *c, const void *src,
                                                 uint64_t off)
{
    int r;

    if (off + 8 > c->size)
        return -2;
    if ((r = c->op(c, src, off)) < 0)
        return r;
    if (++c->window >= 8192)
        c->window = 0;
    return 0;
}

void bench_chain_init(struct bench_chain *c, char *base, uint64_t size)
{
    memset(c, 0, sizeof(*c));
    c->op = chain_store;
    c->base = base;
    c->size = size;
}

int bench_chain_put(struct bench_chain *c, const void *src, uint64_t off)
{
    if (c == NULL || src == NULL)
        return -3;
    return chain_check(c, src, off);
}

uint64_t bench_chain_spin(uint64_t x)
{
    /* 24 dependent multiply-adds: about 96 cycles of latency in 48
     * instructions, which the front end delivers far ahead of them */
    for (int i = 0; i < 24; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        __asm__ volatile("" : "+r"(x));  /* one multiply-add per step */
    }
    return x;
}

uint64_t bench_chain_steps(uint64_t x, int steps)
{
    for (int i = 0; i < steps; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}
