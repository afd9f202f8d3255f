/* Active messages from the wire are checked before use.  Rank 1 sends rank
 * 0 malformed messages straight through UCX (weft_ucx.h gives the UCX
 * endpoint weft uses): headers too short or too long -- eager and
 * rendezvous, where an overlong header once overflowed a buffer -- ids
 * outside [0, WEFT_AM_MAX_ID) or without a handler, and source ranks
 * outside the context; then two well-formed ones.  Rank 0's handler must
 * see exactly the two good messages, intact, and weft_am_dropped must
 * count every malformed one. */
#include "../common.h"
#include <weft_ucx.h>

#include <string.h>

#define AM_ID    3
#define BIG      65536
#define NBAD     10

static int good;

static void on_message(weft_ctx_t ctx, int src, const void *hdr, size_t hdr_len,
                       const void *payload, size_t len, void *arg)
{
    const unsigned char *p = payload;

    (void)ctx;
    (void)arg;
    CHECK(src == 1);
    CHECK(hdr_len == 2 && memcmp(hdr, "ok", 2) == 0);
    CHECK(len == 8 || len == BIG);
    for (size_t i = 0; i < len; i++)
        CHECK(p[i] == test_pattern(7, i));
    good++;
}

/* Send a raw UCX active message and wait for it to leave. */
static void raw_send(ucp_worker_h w, ucp_ep_h uep, const void *hdr, size_t hdr_len,
                     const void *payload, size_t len, int rndv)
{
    ucp_request_param_t p;
    ucs_status_ptr_t sp;

    memset(&p, 0, sizeof(p));
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = rndv ? UCP_AM_SEND_FLAG_RNDV : UCP_AM_SEND_FLAG_EAGER;
    sp = ucp_am_send_nbx(uep, AM_ID, hdr, hdr_len, payload, len, &p);
    CHECK(!UCS_PTR_IS_ERR(sp));
    if (sp != NULL) {
        while (ucp_request_check_status(sp) == UCS_INPROGRESS)
            ucp_worker_progress(w);
        CHECK(ucp_request_check_status(sp) == UCS_OK);
        ucp_request_free(sp);
    }
}

/* A header as weft writes it: source rank, id, user header. */
static size_t wire_header(char *out, int32_t src, int32_t id, const void *user, size_t len)
{
    memcpy(out, &src, sizeof(src));
    memcpy(out + sizeof(src), &id, sizeof(id));
    memcpy(out + 2 * sizeof(int32_t), user, len);
    return 2 * sizeof(int32_t) + len;
}

int main(void)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg;
    int rank, n;
    uint64_t dropped;
    static unsigned char payload[BIG];
    static char hdr[2 * sizeof(int32_t) + WEFT_AM_MAX_HDR + 64], user[WEFT_AM_MAX_HDR + 64];

    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, 4096, &seg, NULL));
    OK(weft_am_register(ctx, AM_ID, on_message, NULL));
    for (size_t i = 0; i < BIG; i++)
        payload[i] = test_pattern(7, i);
    memset(user, 'x', sizeof(user));
    FAILS(weft_am_dropped(ctx, NULL), WEFT_ERR_INVALID_ARG);
    OK(weft_barrier(ctx));

    if (rank == 1) {
        ucp_worker_h w;
        ucp_ep_h uep;
        ucp_rkey_h rkey;
        uint64_t raddr;

        OK(weft_ucx_worker(ep, &w));
        OK(weft_ucx_target(ep, 0, seg, 0, &uep, &rkey, &raddr));
        /* header too short: none, 4 bytes, 7 bytes */
        raw_send(w, uep, NULL, 0, payload, 8, 0);
        raw_send(w, uep, hdr, wire_header(hdr, 1, AM_ID, user, 0) - 4, payload, 8, 0);
        raw_send(w, uep, hdr, 7, payload, 8, 0);
        /* header longer than WEFT_AM_MAX_HDR, eager and rendezvous */
        raw_send(w, uep, hdr, wire_header(hdr, 1, AM_ID, user, WEFT_AM_MAX_HDR + 1), payload, 8, 0);
        raw_send(w, uep, hdr, wire_header(hdr, 1, AM_ID, user, WEFT_AM_MAX_HDR + 64), payload,
                 BIG, 1);
        /* ids out of range or unregistered at the target */
        raw_send(w, uep, hdr, wire_header(hdr, 1, -1, "ok", 2), payload, 8, 0);
        raw_send(w, uep, hdr, wire_header(hdr, 1, WEFT_AM_MAX_ID, "ok", 2), payload, BIG, 1);
        raw_send(w, uep, hdr, wire_header(hdr, 1, AM_ID + 1, "ok", 2), payload, 8, 0);
        /* source ranks outside the context */
        raw_send(w, uep, hdr, wire_header(hdr, -1, AM_ID, "ok", 2), payload, 8, 0);
        raw_send(w, uep, hdr, wire_header(hdr, n, AM_ID, "ok", 2), payload, BIG, 1);
        /* the well-formed ones, eager and rendezvous */
        raw_send(w, uep, hdr, wire_header(hdr, 1, AM_ID, "ok", 2), payload, 8, 0);
        raw_send(w, uep, hdr, wire_header(hdr, 1, AM_ID, "ok", 2), payload, BIG, 1);
    }
    if (rank == 0) {
        do {
            OK(weft_progress(ep, NULL));
            OK(weft_am_dropped(ctx, &dropped));
        } while (good < 2 || dropped < NBAD);
        CHECK(dropped == NBAD);
        printf("rank 0: %d good active messages handled, %llu malformed ones dropped\n", good,
               (unsigned long long)dropped);
    }
    OK(weft_barrier(ctx));
    if (rank == 0) {
        OK(weft_am_dropped(ctx, &dropped));
        CHECK(dropped == NBAD && good == 2);
    } else {
        OK(weft_am_dropped(ctx, &dropped));
        CHECK(dropped == 0 && good == 0);
    }
    OK(weft_seg_free(ctx, seg));
    OK(weft_finalize(ctx));
    FAILS(weft_am_dropped(ctx, &dropped), WEFT_ERR_NOT_INIT);
    return 0;
}
