/*
 * libweft_bench_nop -- empty functions with the arguments of weft_put_nbi
 * and weft_progress (common.h).  A shared library of their own, so that a
 * benchmark's loop calls them as it calls libweft: through the PLT, with
 * the same argument setup and status check (docs/breakdown.md, Misc).
 */
#include "common.h"
#include "store.h"

#include <string.h>

weft_status_t bench_nop_post(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, const void *src,
                             size_t n)
{
    (void)ep, (void)rank, (void)seg, (void)off, (void)src, (void)n;
    __asm__ __volatile__("" ::: "memory");
    return WEFT_OK;
}

weft_status_t bench_nop_progress(weft_ep_t ep, unsigned *count)
{
    (void)ep, (void)count;
    __asm__ __volatile__("" ::: "memory");
    return WEFT_OK;
}

static char *store_base;

void bench_store_target(void *base)
{
    store_base = base;
}

weft_status_t bench_store_post(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, const void *src,
                               size_t n)
{
    (void)ep, (void)rank, (void)seg;
    /* 8 bytes, as the direct path's put: a load and a store */
    if (n == 8)
        memcpy(store_base + off, src, 8);
    else
        memcpy(store_base + off, src, n);
    return WEFT_OK;
}
