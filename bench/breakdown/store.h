/*
 * The direct path's store without weft (libweft_bench_nop, nop.c): a
 * function with weft_put_nbi's arguments, called as the Misc loop calls
 * its empty functions, that stores the 8 bytes through the peer's mapping
 * as weft's direct path does (docs/breakdown.md, "Differential
 * measurement").
 */
#ifndef WEFT_BENCH_STORE_H
#define WEFT_BENCH_STORE_H

#include <stddef.h>
#include <weft.h>

/* Where bench_store_post stores: the peer's segment, mapped (weft_ptr). */
void bench_store_target(void *base);

weft_status_t bench_store_post(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, const void *src,
                               size_t n);

#endif
