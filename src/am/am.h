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

/* The wire format: UCX AM id, header [source rank | id | user header],
 * the payload as data. */
#define WEFT__AM_WIRE_HDR (2 * sizeof(int32_t))

/* An arriving message, once checked: who sent it, to which id, and the
 * user header within the wire header. */
struct weft__am_msg {
    int32_t     src;
    int         id;
    const void *hdr;       /* inside the wire header */
    size_t      hdr_len;   /* <= WEFT_AM_MAX_HDR */
};

/* Check what UCX delivered (header, header_length, data, length; rndv when
 * the payload is still at the sender) against the wire format and a
 * context of nranks: NULL and *msg filled when it is well formed, else why
 * not, with the offending value in *value.  Pure: reads the header only
 * (never data), so the receive path and the fuzzer (tests/fuzz/
 * fuzz_am_recv.c) check arriving messages with the same code. */
const char *weft__am_parse(const void *header, size_t header_length, const void *data,
                           size_t length, int rndv, int nranks, struct weft__am_msg *msg,
                           long long *value);

#endif
