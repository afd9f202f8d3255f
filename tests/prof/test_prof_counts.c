/* Trace points count what is issued, and nothing when profiling is off.
 *
 *   test_prof_counts            off: counts stay 0; on: one HLP_post and
 *                               one LLP_post (or direct_copy) per put and
 *                               AM, one HLP_post_tail per operation that
 *                               went through UCX, one HLP_prog per
 *                               weft_progress, one HLP_rx_prog per AM
 *                               delivered, one direct_copy per direct
 *                               operation of every kind (none over UCX),
 *                               one signal_add per direct put-with-signal
 *                               and one signal_poll per
 *                               weft_signal_wait_until; a point selected
 *                               alone records alone; a point selected by
 *                               another thread sends the accesses of a
 *                               kept target that was current (weft_target_t
 *                               on the direct path, weft_ucx_put_target_t
 *                               over UCX) to the library, which records
 *                               them
 *   test_prof_counts --issue N  issue N puts (rank 0 to 1) and N AMs (rank
 *                               1 to 0) with whatever WEFT_PROFILE selected,
 *                               for the JSON that weft_finalize writes
 *                               (checked by python/tests/test_prof_json.py)
 */
#include "../common.h"

#include <weft_ucx.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define N 1000
#define AM_ID 3

static volatile int delivered;
static uint64_t progress_calls;  /* weft_progress calls of issue() */

static void on_am(weft_ctx_t ctx, int src, const void *hdr, size_t hlen, const void *payload,
                  size_t len, void *arg)
{
    (void)ctx, (void)src, (void)hdr, (void)hlen, (void)payload, (void)len, (void)arg;
    delivered++;
}

/* n puts from rank 0 to 1, then n AMs from rank 1 to 0. */
static void issue(weft_ctx_t ctx, weft_ep_t ep, weft_seg_t seg, int rank, int n)
{
    uint64_t v = 7;

    delivered = 0;
    OK(weft_barrier(ctx));
    if (rank == 0) {
        for (int i = 0; i < n; i++)
            OK(weft_put_nbi(ep, 1, seg, (size_t)(i % 64) * 8, &v, 8));
        OK(weft_flush(ep));
    }
    OK(weft_barrier(ctx));
    if (rank == 1)
        for (int i = 0; i < n; i++)
            OK(weft_am_send(ep, 0, AM_ID, NULL, 0, &v, 8));
    if (rank == 0)
        while (delivered < n) {
            OK(weft_progress(ep, NULL));
            progress_calls++;
        }
    OK(weft_barrier(ctx));
}

/* Rank 0 signals rank 1 once (put-with-signal), rank 1 waits for it. */
static void signal_once(weft_ctx_t ctx, weft_ep_t ep, weft_seg_t seg, int rank)
{
    static uint64_t sent;
    uint64_t v = 5;
    weft_event_t ev;

    sent++;
    if (rank == 0) {
        OK(weft_put_signal_nb(ep, 1, seg, 48, &v, 8, seg, 40, 1, &ev));
        OK(weft_wait(&ev));
    } else {
        OK(weft_signal_wait_until(ep, seg, 40, sent, NULL));
    }
    OK(weft_barrier(ctx));
}

static uint64_t count(const char *point)
{
    weft_prof_stat_t s;

    OK(weft_prof_stat(point, &s));
    return s.count;
}

/* Rank 0 issues one operation of each kind that copies data to or from
 * rank 1; each adds one direct_copy on the direct path, none over UCX. */
static void direct_ops(weft_ctx_t ctx, weft_ep_t ep, weft_seg_t seg, int rank)
{
    const uint64_t per_op = getenv("WEFT_SHM") && strcmp(getenv("WEFT_SHM"), "0") == 0 ? 0 : 1;
    uint64_t v = 9, w = 0, before, before_sig, before_hlp;
    weft_event_t ev;

    OK(weft_barrier(ctx));
    if (rank == 0) {
        before = count("direct_copy");
        OK(weft_get_nbi(ep, &w, 1, seg, 0, 8));
        OK(weft_flush(ep));
        CHECK(count("direct_copy") == before + per_op);
        OK(weft_put_nb(ep, 1, seg, 8, &v, 8, &ev));
        OK(weft_wait(&ev));
        CHECK(count("direct_copy") == before + 2 * per_op);
        OK(weft_get_nb(ep, &w, 1, seg, 8, 8, &ev));
        OK(weft_wait(&ev));
        CHECK(count("direct_copy") == before + 3 * per_op);
        OK(weft_put(ep, 1, seg, 16, &v, 8));
        CHECK(count("direct_copy") == before + 4 * per_op);
        OK(weft_get(ep, &w, 1, seg, 16, 8));
        CHECK(count("direct_copy") == before + 5 * per_op);
        before_sig = count("signal_add");
        before_hlp = count("HLP_post");
        OK(weft_put_signal_nb(ep, 1, seg, 24, &v, 8, seg, 32, 1, &ev));
        OK(weft_wait(&ev));
        CHECK(count("direct_copy") == before + 6 * per_op);
        /* the signal's add is timed on the direct path; weft's code before
         * the copy (or the UCX calls) on both */
        CHECK(count("signal_add") == before_sig + per_op);
        CHECK(count("HLP_post") == before_hlp + 1);
    } else {
        /* one successful poll per wait, on either path */
        before = count("signal_poll");
        OK(weft_signal_wait_until(ep, seg, 32, 1, NULL));
        CHECK(count("signal_poll") == before + 1);
    }
    OK(weft_barrier(ctx));
}

static void *select_point(void *point)
{
    OK(weft_prof_select((const char *)point));
    return NULL;
}

/* point selected by another thread, while this one holds a current target */
static void select_elsewhere(const char *point)
{
    pthread_t th;

    CHECK(pthread_create(&th, NULL, select_point, (void *)(uintptr_t)point) == 0);
    CHECK(pthread_join(th, NULL) == 0);
}

/* A kept target, current on the direct path, runs inline: nothing of it
 * is recorded.  Another thread selects a trace point, which sets the gate
 * of every endpoint; the target's next accesses -- in the same flush
 * epoch, with no weft call of this thread between -- go to the library,
 * which records each (over UCX every access is the library's anyway, and
 * none is a direct copy). */
static void target_divert(weft_ctx_t ctx, weft_ep_t ep, weft_seg_t seg, int rank)
{
    const int direct = !(getenv("WEFT_SHM") && strcmp(getenv("WEFT_SHM"), "0") == 0);
    weft_target_t t;
    weft_ucx_put_target_t u;
    uint64_t v = 5;

    OK(weft_barrier(ctx));
    if (rank == 0) {
        OK(weft_prof_select("0"));
        OK(weft_target_init(ep, 1, seg, &t));
        OK(weft_target_put(&t, 40, &v, 8));
        CHECK(!direct || weft__inline_word_of(ep) == t.key);
        for (int i = 0; i < 8; i++)
            OK(weft_target_put_nbi(&t, 40, &v, 8));
        OK(weft_prof_reset());
        select_elsewhere("direct_copy");
        CHECK(weft__inline_word_of(ep) != t.key);
        for (int i = 0; i < 8; i++)
            OK(weft_target_put_nbi(&t, 40, &v, 8));
        CHECK(count("direct_copy") == (direct ? 8 : 0));
        OK(weft_flush(ep));
        OK(weft_prof_select("0"));

        /* the same with a UCX put target, current over UCX: its puts
         * then pass the library's HLP_post, one each */
        OK(weft_ucx_put_target(ep, 1, seg, &u));
        OK(weft_ucx_put_nbi(&u, 40, &v, 8));
        CHECK(direct || weft__inline_word_of(ep) == u.key);
        for (int i = 0; i < 8; i++)
            OK(weft_ucx_put_nbi(&u, 40, &v, 8));
        OK(weft_prof_reset());
        select_elsewhere("HLP_post");
        CHECK(weft__inline_word_of(ep) != u.key);
        for (int i = 0; i < 8; i++)
            OK(weft_ucx_put_nbi(&u, 40, &v, 8));
        CHECK(count("HLP_post") == 8);
        OK(weft_flush(ep));
        OK(weft_prof_select("0"));
    }
    OK(weft_barrier(ctx));
}

int main(int argc, char **argv)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg;
    void *local;
    int rank, nranks, n = 0;

    if (argc == 3 && strcmp(argv[1], "--issue") == 0)
        n = atoi(argv[2]);
    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &nranks));
    CHECK(nranks == 2);
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, 4096, &seg, &local));
    OK(weft_am_register(ctx, AM_ID, on_am, NULL));
    OK(weft_barrier(ctx));

    if (n > 0) {
        issue(ctx, ep, seg, rank, n);
    } else {
        const char *points[] = {"HLP_post", "LLP_post", "LLP_prog", "LLP_poll", "HLP_tx_prog",
                                "HLP_rx_prog", "busy_post", "direct_copy", "HLP_post_tail",
                                "HLP_prog", "signal_add", "signal_poll"};
        const int npoints = (int)(sizeof(points) / sizeof(points[0]));
        /* rank 0's puts go through UCX under WEFT_SHM=0, else direct */
        const int ucx_puts = getenv("WEFT_SHM") && strcmp(getenv("WEFT_SHM"), "0") == 0;

        /* off (no WEFT_PROFILE): nothing is recorded */
        issue(ctx, ep, seg, rank, N);
        signal_once(ctx, ep, seg, rank);
        for (int i = 0; i < npoints; i++)
            CHECK(count(points[i]) == 0);

        /* on: every operation passes its points once */
        OK(weft_prof_select("all"));
        OK(weft_prof_reset());
        progress_calls = 0;
        issue(ctx, ep, seg, rank, N);
        CHECK(count("HLP_post") == N);
        /* a put to a rank of this node is a direct copy unless WEFT_SHM=0;
         * an AM always goes through UCX */
        CHECK(count("LLP_post") + count("direct_copy") == N);
        CHECK(rank == 0 || count("LLP_post") == N);
        /* weft's code after the UCX call: once per operation that made it */
        CHECK(count("HLP_post_tail") == count("LLP_post"));
        /* weft_progress's own code: once per call (rank 0's delivery loop) */
        CHECK(count("HLP_prog") == progress_calls);
        CHECK(rank != 0 || progress_calls > 0);

        /* a point selected alone records alone */
        OK(weft_prof_select("HLP_post_tail"));
        OK(weft_prof_reset());
        progress_calls = 0;
        issue(ctx, ep, seg, rank, N);
        CHECK(count("HLP_post") == 0 && count("LLP_post") == 0 && count("HLP_prog") == 0);
        CHECK(count("HLP_post_tail") == (rank == 1 || ucx_puts ? N : 0));
        OK(weft_prof_select("HLP_prog"));
        OK(weft_prof_reset());
        progress_calls = 0;
        issue(ctx, ep, seg, rank, N);
        CHECK(count("HLP_post") == 0 && count("HLP_post_tail") == 0 && count("LLP_prog") == 0);
        CHECK(count("HLP_prog") == progress_calls);

        OK(weft_prof_select("all"));
        OK(weft_prof_reset());
        issue(ctx, ep, seg, rank, N);
        CHECK(count("HLP_rx_prog") == (rank == 0 ? N : 0));
        /* rank 0 progresses until the AMs arrive (rank 1 may never need to) */
        CHECK(rank != 0 || count("LLP_prog") > 0);

        /* off again: the counts stay */
        OK(weft_prof_select("0"));
        issue(ctx, ep, seg, rank, N);
        CHECK(count("HLP_post") == N);
        CHECK(count("HLP_rx_prog") == (rank == 0 ? N : 0));

        OK(weft_prof_select("all"));
        direct_ops(ctx, ep, seg, rank);
        OK(weft_prof_select("0"));
        target_divert(ctx, ep, seg, rank);
        if (rank == 0)
            printf("prof counts: off 0, on %d puts and %d AMs counted once each\n", N, N);
    }
    OK(weft_seg_free(ctx, seg));
    OK(weft_finalize(ctx));
    return 0;
}
