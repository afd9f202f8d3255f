/* Active-message replies (weft_am_register_replier, weft_am_reply): every
 * rank sends requests to every rank; the replier answers each with the
 * request's values doubled plus its rank, of 16 bytes up to
 * WEFT_AM_MAX_REPLY, and a plain handler checks the answers.  Bad input is
 * tried inside a handler (unregistered id, sizes over the limits, a second
 * reply) and outside.  With --thread (and WEFT_PROGRESS_THREAD=1), only
 * rank 0 asks, while the others wait in MPI_Barrier without calling weft:
 * every request is then handled, and replied to, on the progress thread. */
#include "../common.h"

#include <pthread.h>
#include <string.h>

#define REQ 1
#define ANSWER 2
#define UNUSED 63
#define PER_PEER 30

struct req_hdr {
    int32_t  from;
    uint32_t seq;
};

static pthread_t main_thread;
static int rank;
static unsigned handled, on_other_thread, answers, tried_bad;

static size_t values_of(uint32_t seq)
{
    static const size_t sizes[] = {16, 4096, WEFT_AM_MAX_REPLY};

    return sizes[seq % 3] / sizeof(uint32_t);
}

static void on_request(weft_am_token_t token, const void *hdr, size_t hdr_len,
                       const void *payload, size_t len, void *arg)
{
    static uint32_t out[WEFT_AM_MAX_REPLY / sizeof(uint32_t)];
    struct req_hdr h;
    weft_ctx_t ctx;
    int src;

    (void)arg;
    CHECK(hdr_len == sizeof(h));
    memcpy(&h, hdr, sizeof(h));
    OK(weft_am_token_info(token, &ctx, &src));
    CHECK(src == h.from);
    CHECK(len == values_of(h.seq) * sizeof(uint32_t));
    /* handlers run one at a time: out is this call's */
    /* the payload has no alignment: read it with memcpy */
    memcpy(out, payload, len);
    for (size_t i = 0; i < len / sizeof(uint32_t); i++)
        out[i] = out[i] * 2u + (uint32_t)rank;
    if (__atomic_fetch_add(&tried_bad, 1, __ATOMIC_RELAXED) == 0) {
        FAILS(weft_am_reply(token, UNUSED, &h, sizeof(h), out, len), WEFT_ERR_AM_ID);
        FAILS(weft_am_reply(token, ANSWER, &h, WEFT_AM_MAX_HDR + 1, out, len), WEFT_ERR_TOO_LARGE);
        FAILS(weft_am_reply(token, ANSWER, &h, sizeof(h), out, WEFT_AM_MAX_REPLY + 1),
              WEFT_ERR_TOO_LARGE);
        CHECK(strstr(weft_last_error(), "WEFT_AM_MAX_REPLY") != NULL);
        FAILS(weft_am_reply(token, ANSWER, NULL, sizeof(h), out, len), WEFT_ERR_INVALID_ARG);
    }
    OK(weft_am_reply(token, ANSWER, &h, sizeof(h), out, len));
    FAILS(weft_am_reply(token, ANSWER, &h, sizeof(h), out, len), WEFT_ERR_INVALID_ARG);
    CHECK(strstr(weft_last_error(), "already replied") != NULL);
    if (!pthread_equal(pthread_self(), main_thread))
        __atomic_fetch_add(&on_other_thread, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&handled, 1, __ATOMIC_RELEASE);
}

static void on_answer(weft_ctx_t ctx, int src, const void *hdr, size_t hdr_len,
                      const void *payload, size_t len, void *arg)
{
    struct req_hdr h;
    const unsigned char *bytes = payload;

    (void)ctx;
    (void)arg;
    CHECK(hdr_len == sizeof(h));
    memcpy(&h, hdr, sizeof(h));
    CHECK(h.from == rank);
    CHECK(len == values_of(h.seq) * sizeof(uint32_t));
    for (size_t i = 0; i < len / sizeof(uint32_t); i++) {
        uint32_t v;

        memcpy(&v, bytes + i * sizeof(v), sizeof(v));
        CHECK(v == (h.seq + (uint32_t)i) * 2u + (uint32_t)src);
    }
    __atomic_fetch_add(&answers, 1, __ATOMIC_RELEASE);
}

int main(int argc, char **argv)
{
    static uint32_t payload[WEFT_AM_MAX_REPLY / sizeof(uint32_t)];
    int thread_mode = argc > 1 && strcmp(argv[1], "--thread") == 0;
    weft_ctx_t ctx;
    weft_ep_t ep;
    int n, asks;
    unsigned expect;

    main_thread = pthread_self();
    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    OK(weft_am_register_replier(ctx, REQ, on_request, NULL));
    OK(weft_am_register(ctx, ANSWER, on_answer, NULL));
    OK(weft_barrier(ctx));

    asks = !thread_mode || rank == 0;
    expect = asks ? (unsigned)(n * PER_PEER) : 0;
    for (int q = 0; asks && q < n; q++) {
        for (uint32_t s = 0; s < PER_PEER; s++) {
            struct req_hdr h = {.from = rank, .seq = s};

            for (size_t i = 0; i < values_of(s); i++)
                payload[i] = s + (uint32_t)i;
            OK(weft_am_send(ep, q, REQ, &h, sizeof(h), payload, values_of(s) * sizeof(uint32_t)));
        }
    }
    while (__atomic_load_n(&answers, __ATOMIC_ACQUIRE) < expect)
        OK(weft_progress(ep, NULL));
    CHECK(answers == expect);
    if (thread_mode) {
        /* the others handled rank 0's requests without calling weft */
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank != 0) {
            CHECK(__atomic_load_n(&handled, __ATOMIC_ACQUIRE) == PER_PEER);
            CHECK(on_other_thread == PER_PEER);
        }
    }
    OK(weft_barrier(ctx));
    if (!thread_mode)
        CHECK(handled == (unsigned)(n * PER_PEER));
    if (rank == 0)
        printf("replies: %u answers on %d ranks%s\n", answers, n,
               thread_mode ? ", replied from the progress thread" : "");

    FAILS(weft_am_reply(NULL, ANSWER, NULL, 0, NULL, 0), WEFT_ERR_INVALID_ARG);
    FAILS(weft_am_token_info(NULL, NULL, NULL), WEFT_ERR_INVALID_ARG);
    FAILS(weft_am_register_replier(ctx, WEFT_AM_MAX_ID, on_request, NULL), WEFT_ERR_AM_ID);
    FAILS(weft_am_register_replier(ctx, -1, on_request, NULL), WEFT_ERR_AM_ID);
    FAILS(weft_am_register_replier(ctx, REQ, on_request, NULL), WEFT_ERR_BUSY);
    FAILS(weft_am_register_replier(ctx, ANSWER, on_request, NULL), WEFT_ERR_BUSY);
    FAILS(weft_am_register_replier(ctx, UNUSED, NULL, NULL), WEFT_ERR_INVALID_ARG);
    /* a replier is unregistered as any handler is */
    OK(weft_am_register(ctx, REQ, NULL, NULL));
    OK(weft_am_register_replier(ctx, REQ, on_request, NULL));
    OK(weft_barrier(ctx));
    OK(weft_finalize(ctx));
    FAILS(weft_am_register_replier(ctx, REQ, on_request, NULL), WEFT_ERR_NOT_INIT);
    return 0;
}
