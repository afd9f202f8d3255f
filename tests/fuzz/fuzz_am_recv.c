/* The receive path of active messages (src/am/am.c, weft__am_parse): what
 * UCX delivers from the wire -- header bytes and length, payload length,
 * whether the payload is still at the sender (rendezvous), whether data
 * came with it -- is untrusted input (SECURITY.md).  The input's first 10
 * bytes choose the context size (1..65536 ranks), a rendezvous flag, a
 * missing-data flag and a claimed payload length (any 64-bit value); the
 * rest is the wire header, given in a buffer of its exact size so that
 * ASan catches a read past it.  Properties: an accepted message has an id
 * in [0, WEFT_AM_MAX_ID), a source rank in [0, nranks), a user header of
 * at most WEFT_AM_MAX_HDR bytes that lies inside the wire header and
 * holds its bytes, and a payload the receiver can hold (data present
 * unless rendezvous, a rendezvous length within WEFT_AM_MAX_PAYLOAD); a
 * refused one has a reason; the answer does not depend on the payload
 * bytes, which weft__am_parse must never read. */
#include "fuzz.h"
#include "am/am.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct weft__am_msg m;
    const char *why, *again;
    long long value;
    uint64_t length;
    uint8_t *hdr;
    size_t hlen;
    int nranks, rndv, nodata;
    /* payload data the parser must not read: one byte, so that ASan
     * catches a read of more */
    static const char sentinel;
    const void *payload;

    if (size < 10)
        return 0;
    nranks = 1 + (int)(((unsigned)data[0] << 8 | data[1]) & 0xffffu);
    rndv = data[2] & 1;
    nodata = (data[2] >> 1) & 1;
    memcpy(&length, data + 2, sizeof(length));
    length >>= 8;                         /* 56 bits of claimed length */
    if (data[2] & 4)
        length = UINT64_MAX - (length & 0xff);  /* lengths near the top too */
    hlen = size - 10;
    hdr = malloc(hlen ? hlen : 1);
    if (hdr == NULL)
        abort();
    memcpy(hdr, data + 10, hlen);
    payload = nodata ? NULL : &sentinel;

    why = weft__am_parse(hlen ? hdr : NULL, hlen, payload, (size_t)length, rndv, nranks, &m,
                         &value);
    if (why == NULL) {
        FUZZ_ASSERT(m.id >= 0 && m.id < WEFT_AM_MAX_ID);
        FUZZ_ASSERT(m.src >= 0 && m.src < nranks);
        FUZZ_ASSERT(m.hdr_len <= WEFT_AM_MAX_HDR);
        FUZZ_ASSERT(m.hdr_len + WEFT__AM_WIRE_HDR == hlen);
        FUZZ_ASSERT((const uint8_t *)m.hdr == hdr + WEFT__AM_WIRE_HDR);
        FUZZ_ASSERT(m.hdr_len == 0 || memcmp(m.hdr, data + 10 + WEFT__AM_WIRE_HDR, m.hdr_len) == 0);
        FUZZ_ASSERT(rndv || length == 0 || payload != NULL);
        FUZZ_ASSERT(!rndv || length <= WEFT_AM_MAX_PAYLOAD);
    } else {
        FUZZ_ASSERT(why[0] != '\0');
        FUZZ_ASSERT(hlen < WEFT__AM_WIRE_HDR || hlen > WEFT__AM_WIRE_HDR + WEFT_AM_MAX_HDR ||
                    strcmp(why, "header length") != 0);
    }
    /* the same answer with other (non-NULL) payload bytes */
    again = weft__am_parse(hlen ? hdr : NULL, hlen, nodata ? NULL : data, (size_t)length, rndv,
                           nranks, &m, &value);
    FUZZ_ASSERT((why == NULL) == (again == NULL));
    FUZZ_ASSERT(why == NULL || strcmp(why, again) == 0);
    free(hdr);
    return 0;
}
