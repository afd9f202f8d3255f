/* A rank SIGKILLs itself at a random moment while every other rank is
 * putting, getting, sending active messages and doing atomics to it; run
 * by check_peer_kill.sh under mpirun --enable-recovery, many seeds.
 *
 * Each survivor must: see WEFT_ERR_PEER_FAILED (or WEFT_ERR_TIMEOUT) from
 * an operation to the dead rank, never hang; then find every later
 * operation to it refused with WEFT_ERR_PEER_FAILED; keep exchanging data
 * with the live ranks (checked values); see a signal wait for a signal
 * that cannot come end after WEFT_TIMEOUT_MS; and return from
 * weft_finalize.  It prints "PASS rank R detect_us D ops N" for the
 * script, which counts them.
 *
 * usage: test_peer_kill SEED
 * PEER_KILL_QUIESCE=1 in the environment makes the victim flush its own
 * operations before it dies (used over TCP, see below). */
#include "../common.h"
#include "kill_ops.h"

#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SEG_BYTES 65536

/* segment layout: [0, 8) phase counter on rank 0, [64, 72) a signal
 * nobody sets, [128, 136) atomics word, [4096, ...) data */
#define OFF_PHASE  0
#define OFF_NEVER  64
#define OFF_ATOMIC 128
#define OFF_DATA   4096

static unsigned long am_seen;   /* active messages served (kill_on_am) */

static double now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Data to a live rank still arrives intact. */
static void check_live(weft_ep_t ep, weft_ctx_t ctx, int live, weft_seg_t seg, int me)
{
    char out[256], in[256];
    uint64_t old;

    for (size_t i = 0; i < sizeof(out); i++)
        out[i] = (char)test_pattern((unsigned)me, i);
    /* each survivor writes its own slot of the live rank's segment */
    OK(weft_put(ep, live, seg, OFF_DATA + KILL_BIG + 256 * (size_t)me, out, sizeof(out)));
    OK(weft_get(ep, in, live, seg, OFF_DATA + KILL_BIG + 256 * (size_t)me, sizeof(in)));
    CHECK(memcmp(in, out, sizeof(in)) == 0);
    OK(weft_atomic_fetch_add(ep, live, seg, OFF_ATOMIC, 0, &old));
    OK(weft_am_send(ep, live, KILL_AM_ID, NULL, 0, out, sizeof(out)));
    (void)ctx;
}

int main(int argc, char **argv)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg;
    char *mine, buf[KILL_BIG];
    int me, n, victim, failed, quiesce;
    unsigned seed, rs;
    double t0, last_ok, t_fail = 0;
    unsigned long ops = 0;
    weft_status_t st = WEFT_OK;
    weft_config_t cfg;
    struct kill_ops ops_of = {0};

    seed = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 1;
    quiesce = getenv("PEER_KILL_QUIESCE") != NULL && atoi(getenv("PEER_KILL_QUIESCE")) == 1;
    OK(weft_init(NULL, &ctx));
    OK(weft_config_init(&cfg));
    OK(weft_rank(ctx, &me));
    OK(weft_nranks(ctx, &n));
    CHECK(n >= 3);
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, SEG_BYTES, &seg, (void **)&mine));
    ops_of = (struct kill_ops){seg, OFF_DATA, OFF_ATOMIC, weft_wait, weft_flush};
    OK(weft_am_register(ctx, KILL_AM_ID, kill_on_am, &am_seen));
    memset(buf, me, sizeof(buf));
    victim = 1 + (int)(seed % (unsigned)(n - 1));
    rs = seed * 2654435761u + (unsigned)me;
    OK(weft_barrier(ctx));

    if (me == victim) {
        /* die after a random time (0-200 ms) spent serving the others and
         * sending to them: the kill lands anywhere in their operations */
        double until = now_us() + (double)(kill_next_rand(&rs) % 200000u);
        int peer = 0;

        while (now_us() < until) {
            (void)kill_one_op(&ops_of, ep, (int)(kill_next_rand(&rs) % KILL_NKINDS), peer, buf);
            peer = (peer + 1) % n;
            if (peer == me)
                peer = (peer + 1) % n;
        }
        /* PEER_KILL_QUIESCE=1: first wait until the survivors have
         * acknowledged this rank's puts.  Over TCP, UCX 1.13 aborts a
         * target whose acknowledgement of a put goes to a rank that has
         * just died (docs/limits.md); the kill then still lands
         * anywhere in the survivors' operations to this rank. */
        if (quiesce)
            (void)weft_flush(ep);
        raise(SIGKILL);
    }

    /* survivors: operations of random kinds to the victim until one fails */
    t0 = last_ok = now_us();
    while (now_us() - t0 < 30e6) {
        st = kill_one_op(&ops_of, ep, (int)(kill_next_rand(&rs) % KILL_NKINDS), victim, buf);
        ops++;
        if (st != WEFT_OK)
            break;
        last_ok = now_us();
    }
    t_fail = now_us();
    if (st != WEFT_ERR_PEER_FAILED && st != WEFT_ERR_TIMEOUT) {
        fprintf(stderr, "FAIL rank %d: after %lu operations to dead rank %d: %s (%s)\n", me, ops,
                victim, weft_strerror(st), weft_last_error());
        return 1;
    }
    OK(weft_rank_failed(ctx, victim, &failed));
    CHECK(failed == 1);
    /* every kind of operation to it is now refused */
    for (int k = 0; k < KILL_NKINDS; k++) {
        weft_status_t s = kill_one_op(&ops_of, ep, k, victim, buf);

        if (s != WEFT_ERR_PEER_FAILED) {
            fprintf(stderr, "FAIL rank %d: operation %d to dead rank %d -> %s (%s)\n", me, k,
                    victim, weft_strerror(s), weft_last_error());
            return 1;
        }
    }

    /* live ranks still work: each survivor checks the next survivor */
    {
        int live = (me + 1) % n == victim ? (me + 2) % n : (me + 1) % n;
        uint64_t v, old;
        int survivors = n - 1;

        check_live(ep, ctx, live, seg, me);
        /* a signal nobody sends: the wait ends after WEFT_TIMEOUT_MS */
        if (cfg.timeout_ms > 0 && seed % 10 == 0) {
            double t = now_us();

            FAILS(weft_signal_wait_until(ep, seg, OFF_NEVER, 1, NULL), WEFT_ERR_TIMEOUT);
            t = (now_us() - t) / 1e3;
            CHECK(t >= (double)cfg.timeout_ms * 0.99 && t < (double)cfg.timeout_ms + 1000.0);
        }
        /* the survivors meet on rank 0's counter (a barrier of the context
         * would need the dead rank): each adds 1 when done with the live
         * ranks, waits for all, adds 1 again as its last access to rank
         * 0, which leaves last */
        double t = now_us();

        /* Waiting ranks progress: a peer's first active message to this
         * rank needs it to answer UCX's connection handshake. */
        OK(weft_atomic_fetch_add(ep, 0, seg, OFF_PHASE, 1, &old));
        do {
            OK(weft_progress(ep, NULL));
            OK(weft_atomic_fetch_add(ep, 0, seg, OFF_PHASE, 0, &v));
            CHECK(now_us() - t < 30e6);
        } while (v < (uint64_t)survivors);
        if (me != 0) {
            OK(weft_atomic_fetch_add(ep, 0, seg, OFF_PHASE, 1, &old));
        } else {
            OK(weft_atomic_fetch_add(ep, 0, seg, OFF_PHASE, 1, &old));
            do {
                OK(weft_progress(ep, NULL));
                v = __atomic_load_n((uint64_t *)(void *)(mine + OFF_PHASE), __ATOMIC_ACQUIRE);
                CHECK(now_us() - t < 30e6);
            } while (v < 2 * (uint64_t)survivors);
        }
    }

    st = weft_finalize(ctx);
    if (st != WEFT_OK && st != WEFT_ERR_PEER_FAILED) {
        fprintf(stderr, "FAIL rank %d: weft_finalize -> %s (%s)\n", me, weft_strerror(st),
                weft_last_error());
        return 1;
    }
    printf("PASS rank %d detect_us %.0f ops %lu am_seen %lu\n", me, t_fail - last_ok, ops,
           am_seen);
    fflush(stdout);
    return 0;
}
