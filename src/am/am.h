/*
 * am -- active messages: a handler per id, run on the target when its
 * home worker is progressed (weft_progress, or the progress thread).
 * Owns the context's handler table and the count of dropped messages,
 * and each endpoint's free send-header buffers (ep's am_slots, which only
 * this layer reads).  May call ep, runtime, prof.
 */
#ifndef WEFT_AM_H
#define WEFT_AM_H

#include "ep/ep.h"

#endif
