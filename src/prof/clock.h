/*
 * prof -- timers and trace points.  Used by every layer, calls none.
 *
 * clock.h: a monotonic nanosecond clock for timeouts and sleeps on slow
 * paths.  (Cycle-accurate timers for the breakdown model live beside it.)
 */
#ifndef WEFT_PROF_CLOCK_H
#define WEFT_PROF_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t weft__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
