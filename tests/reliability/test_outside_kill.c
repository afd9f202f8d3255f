/* The workload of outside_kill.py: every rank does one-sided operations and
 * active messages of random kinds to random ranks for SECONDS, while a
 * process outside the job SIGKILLs or SIGSTOPs one of them at a moment no
 * rank knows.  No rank quiesces: the kill lands anywhere.
 *
 * Each rank writes its pid to $OUTSIDE_KILL_DIR/pid.<rank> once weft is
 * initialised, and $OUTSIDE_KILL_DIR/end.<rank> when it starts the end of
 * the run (the killer's "end" kill point).  An operation that ends with
 * WEFT_ERR_PEER_FAILED or WEFT_ERR_TIMEOUT must have made weft report its
 * rank failed; any other error fails the rank.  A wait or flush that
 * WEFT_TIMEOUT_MS ends is retried (a stopped rank is slow, not failed)
 * for GIVE_UP seconds at most; one still outstanding then makes its
 * target "stuck": the rank says so on a line
 *
 *   STUCK rank R: WHAT kind K to rank T outstanding after S s
 *
 * ("to any rank" for a flush, which covers the operations to every rank)
 * and ends its operations there (so a later flush, which would cover the
 * abandoned operation too, blames no other rank).  That is what a SIGKILL does to UCX's
 * shared-memory transport when it lands while the victim writes into a
 * live rank's receive queue (docs/limits.md): the queue's reader waits
 * for that entry for good, and everything sent to the rank behind it with
 * it.  At the end each rank tells every rank it thinks alive that it is
 * done (a barrier of the context would need the dead rank) and waits, 20 s
 * at most, until those of them that are not stuck have told it so; then
 * weft_finalize.  The rank prints
 *
 *   RESULT rank R failed F learnt L ops N end E expired X said S stuck T
 *
 * F the ranks it considers failed (comma-separated, "-" for none; a rank
 * seen to go after it said it was done is not counted), L the
 * CLOCK_MONOTONIC time in ns at which it learnt each (to compare with the
 * killer's clock), N its operations, E "ok" or "timeout" (the done
 * exchange), X the waits and flushes that WEFT_TIMEOUT_MS ended and that
 * were retried (a stopped rank: such an expiry declares nobody failed), S
 * the ranks that said they were done with this one, T the stuck ranks ("-"
 * for none).  usage: test_outside_kill SECONDS [GIVE_UP] (GIVE_UP 60 if not
 * given) */
#include "../common.h"
#include "kill_ops.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

#define SEG_BYTES  65536
#define OFF_DONE   0      /* a word per rank: that rank is done with this one */
#define OFF_ATOMIC 1024
#define OFF_DATA   4096
#define MAX_RANKS  64

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static unsigned long expired;   /* waits that WEFT_TIMEOUT_MS ended and were retried */
static uint64_t give_up_ns = 60000000000ull; /* then a wait's target is stuck */
static int gave_up;             /* the last wait or flush ended so */
static int given_up;            /* some operation did: no more operations */

/* weft_wait and weft_flush end with WEFT_ERR_TIMEOUT, the operations still
 * outstanding, when a rank is slow (stopped): that declares nobody failed,
 * and the caller waits again, GIVE_UP seconds at most. */
static weft_status_t wait_on(weft_event_t *ev)
{
    weft_status_t st;
    uint64_t t = now_ns();

    gave_up = 0;
    while ((st = weft_wait(ev)) == WEFT_ERR_TIMEOUT && !(gave_up = now_ns() - t >= give_up_ns))
        expired++;
    return st;
}

static weft_status_t flush_on(weft_ep_t ep)
{
    weft_status_t st;
    uint64_t t = now_ns();

    gave_up = 0;
    while ((st = weft_flush(ep)) == WEFT_ERR_TIMEOUT && !(gave_up = now_ns() - t >= give_up_ns))
        expired++;
    return st;
}

static weft_ctx_t ctx;
static int me, n;
static uint64_t learnt[MAX_RANKS];   /* 0 while the rank is thought alive */
static int left[MAX_RANKS];          /* said it was done before it was seen to go */
static int stuck[MAX_RANKS];         /* alive, but an operation to it never completed */

static char *mine;                   /* this rank's segment */

/* Whether rank r has said it is done with this one. */
static int said_done(int r)
{
    return __atomic_load_n((uint64_t *)(void *)(mine + OFF_DONE + 8 * (size_t)r),
                           __ATOMIC_ACQUIRE) != 0;
}

/* Take in what weft now reports failed.  A rank that said it was done
 * with this one and then leaves (once done with every rank) is seen to
 * go by those still running: that is no failure. */
static void refresh(void)
{
    for (int r = 0; r < n; r++) {
        int failed = 0, done = r != me && said_done(r);

        if (r != me && learnt[r] == 0) {
            OK(weft_rank_failed(ctx, r, &failed));
            if (failed) {
                learnt[r] = now_ns();
                left[r] = done;
            }
        }
    }
}

/* An operation to rank ended with st: fine, a reported failure, or a
 * failed check.  A weft_flush covers the endpoint's operations to every
 * rank since the previous one (kinds 4 and 7), so its failure may be
 * another rank's: then some rank must be reported failed. */
static void judge(weft_status_t st, int rank, int k, const char *what)
{
    if (st == WEFT_OK)
        return;
    if (st == WEFT_ERR_PEER_FAILED || st == WEFT_ERR_TIMEOUT) {
        int any = 0;

        int was = learnt[rank] != 0;

        refresh();
        for (int r = 0; r < n; r++)
            any |= learnt[r] != 0;
        /* how each failure was learnt, for whoever reads the campaign */
        if (!was && learnt[rank] != 0)
            fprintf(stderr, "LEARN rank %d: rank %d by %s kind %d -> %s (%s)\n", me, rank, what,
                    k, weft_strerror(st), weft_last_error());
        /* a flush covers the endpoint's operations to every rank: the
         * one it waits for is not known */
        if (st == WEFT_ERR_TIMEOUT && gave_up && (k == 4 || k == 7)) {
            gave_up = 0;
            given_up = 1;
            fprintf(stderr, "STUCK rank %d: %s kind %d to any rank outstanding after %.0f s\n",
                    me, what, k, (double)give_up_ns / 1e9);
            return;
        }
        if (st == WEFT_ERR_TIMEOUT && gave_up && learnt[rank] == 0) {
            gave_up = 0;
            given_up = 1;
            stuck[rank] = 1;
            fprintf(stderr, "STUCK rank %d: %s kind %d to rank %d outstanding after %.0f s\n", me,
                    what, k, rank, (double)give_up_ns / 1e9);
            return;
        }
        if (learnt[rank] == 0 && !((k == 4 || k == 7) && any)) {
            fprintf(stderr, "FAIL: rank %d: %s to rank %d -> %s, but the rank is not reported "
                    "failed (%s)\n", me, what, rank, weft_strerror(st), weft_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        return;
    }
    fprintf(stderr, "FAIL: rank %d: %s to rank %d -> %s (%s)\n", me, what, rank,
            weft_strerror(st), weft_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void mark(const char *dir, const char *name)
{
    char path[4096];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s.%d", dir, name, me);
    CHECK((f = fopen(path, "w")) != NULL);
    fprintf(f, "%ld\n", (long)getpid());
    CHECK(fclose(f) == 0);
}

int main(int argc, char **argv)
{
    weft_ep_t ep;
    weft_seg_t seg;
    char buf[KILL_BIG];
    struct kill_ops ops_of;
    const char *dir = getenv("OUTSIDE_KILL_DIR");
    double seconds = argc > 1 ? atof(argv[1]) : 2.0;
    unsigned rs;
    unsigned long ops = 0;
    uint64_t end, t;
    int live, done_ok = 1, first;

    if (argc > 2) {
        double g = atof(argv[2]);

        give_up_ns = g > 0 && g < 1e6 ? (uint64_t)(g * 1e9) : 0;
    }
    if (dir == NULL || seconds <= 0 || give_up_ns == 0) {
        fprintf(stderr, "usage: OUTSIDE_KILL_DIR=DIR test_outside_kill SECONDS [GIVE_UP] "
                        "(both > 0)\n");
        return 2;
    }
    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &me));
    OK(weft_nranks(ctx, &n));
    CHECK(n >= 3 && n <= MAX_RANKS);
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, SEG_BYTES, &seg, (void **)&mine));
    ops_of = (struct kill_ops){seg, OFF_DATA, OFF_ATOMIC, wait_on, flush_on};
    OK(weft_am_register(ctx, KILL_AM_ID, kill_on_am, NULL));
    memset(buf, me, sizeof(buf));
    rs = (unsigned)getpid() * 2654435761u + (unsigned)me;
    mark(dir, "pid");
    OK(weft_barrier(ctx));

    end = now_ns() + (uint64_t)(seconds * 1e9);
    while (now_ns() < end && !given_up) {
        int peer = (int)(kill_next_rand(&rs) % (unsigned)n), k = (int)(kill_next_rand(&rs) % KILL_NKINDS);

        if (peer == me || learnt[peer] != 0 || stuck[peer])
            continue;
        judge(kill_one_op(&ops_of, ep, k, peer, buf), peer, k, "an operation");
        if ((++ops & 63) == 0)
            refresh();
    }

    /* The end: tell every rank thought alive that this one is done with
     * it, then wait until as many have told this one. */
    mark(dir, "end");
    refresh();
    for (int r = 0; r < n; r++) {
        uint64_t old;

        if (r != me && learnt[r] == 0)
            judge(weft_atomic_fetch_add(ep, r, seg, OFF_DONE + 8 * (size_t)me, 1, &old), r, 5,
                  "the done add");
    }
    t = now_ns();
    for (;;) {
        /* every rank thought alive has said it is done (a rank that died
         * after saying so counts either way) */
        refresh();
        live = 0;
        for (int r = 0; r < n; r++)
            live += r != me && learnt[r] == 0 && !stuck[r] && !said_done(r);
        if (live == 0)
            break;
        if (now_ns() - t > 20000000000ull) {
            done_ok = 0;
            break;
        }
        OK(weft_progress(ep, NULL));
    }
    printf("RESULT rank %d failed ", me);
    first = 1;
    for (int r = 0; r < n; r++)
        if (learnt[r] != 0 && !left[r]) {
            printf("%s%d", first ? "" : ",", r);
            first = 0;
        }
    printf("%s learnt ", first ? "-" : "");
    first = 1;
    for (int r = 0; r < n; r++)
        if (learnt[r] != 0 && !left[r]) {
            printf("%s%llu", first ? "" : ",", (unsigned long long)learnt[r]);
            first = 0;
        }
    printf("%s ops %lu end %s expired %lu said ", first ? "-" : "", ops,
           done_ok ? "ok" : "timeout", expired);
    first = 1;
    for (int r = 0; r < n; r++)
        if (r != me && said_done(r)) {
            printf("%s%d", first ? "" : ",", r);
            first = 0;
        }
    printf("%s stuck ", first ? "-" : "");
    first = 1;
    for (int r = 0; r < n; r++)
        if (stuck[r]) {
            printf("%s%d", first ? "" : ",", r);
            first = 0;
        }
    printf("%s\n", first ? "-" : "");
    fflush(stdout);
    {
        weft_status_t st = weft_finalize(ctx);

        /* WEFT_ERR_TIMEOUT: its final barrier waited WEFT_TIMEOUT_MS for a
         * rank that came late (one that was stopped) */
        if (st != WEFT_OK && st != WEFT_ERR_PEER_FAILED && st != WEFT_ERR_TIMEOUT) {
            fprintf(stderr, "FAIL: rank %d: weft_finalize -> %s (%s)\n", me, weft_strerror(st),
                    weft_last_error());
            return 1;
        }
    }
    return 0;
}
