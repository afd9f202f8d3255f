/*
 * Helpers shared by the benchmarks: a clock and the name of the UCX
 * transport weft uses to reach a peer.
 */
#ifndef WEFT_BENCH_COMMON_H
#define WEFT_BENCH_COMMON_H

#include <weft.h>
#include <stddef.h>

/* Seconds on the monotonic clock. */
double bench_now(void);

/* "sysv/memory,posix/memory,cma/memory": the transports/devices of the
 * lanes of ep's connection to rank, as UCX reports them ("unknown" when it
 * cannot tell). */
void bench_transport_of(weft_ep_t ep, int rank, weft_seg_t seg, char *out, size_t len);

#endif
