/*
 * weft_bench_gups -- RandomAccess (HPCC's GUPS): random updates of one
 * 64-bit word of a table spread over the ranks, by weft and by MPI RMA in
 * one run, verified as HPCC verifies them.
 *
 *   mpirun -np P weft_bench_gups [--log2-table N] [--updates U] [--window W]
 *                                [--rounds R] [--json FILE]
 *
 * The table has 2^N words per rank (default 20: 8 MiB); word i of rank r
 * starts as its global index r 2^N + i.  Each rank makes U updates
 * (default 4 2^N, HPCC's four per word) from its own stretch of HPCC's
 * random stream (x' = 2x, xored with 7 when the top bit was set): a value
 * v picks the rank from its top 32 bits and the word from its low N bits,
 * and the update is word ^= v (word += v where said).  Every W updates
 * (default 1024, HPCC's look-ahead) the rank completes them (weft_flush,
 * MPI_Win_flush_all).  The variants, each timed on every rank between two
 * barriers, in rotating order in each of R rounds (default 3):
 *
 *   weft-xor         weft_atomic_nbi(WEFT_AOP_XOR, WEFT_ATYPE_UINT64): HPCC's
 *                    xor as a non-fetching atomic (over UCX one
 *                    ucp_atomic_op_nbx each, without a reply)
 *   weft-add         weft_atomic_add_nbi: an add where HPCC xors; on the
 *                    node the inline path
 *   weft-direct-xor  __atomic_fetch_xor on the word through weft_ptr (only
 *                    when every rank is mapped here: the direct path)
 *   weft-getput      weft_get, xor, weft_put_nbi: not atomic, so two ranks
 *                    updating one word at once may lose an update, as
 *                    HPCC's rules allow (up to 1 % of the table)
 *   mpi-acc          MPI_Accumulate(MPI_BXOR) under MPI_Win_lock_all
 *   mpi-fop          MPI_Fetch_and_op(MPI_BXOR), the old values fetched
 *
 * Verification, after each timed run: the ranks, one after the other, undo
 * their updates with the same operation (xor again; an add of -v), then
 * every word that is not its starting value counts as an error.  The
 * error rate is errors / table words; HPCC accepts up to 1 %.
 */
#include "common.h"
#include <weft.h>

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME        "weft_bench_gups"
#define MAX_ROUNDS  32
#define MAX_LOG2    28

enum { V_XOR, V_ADD, V_DIRECT_XOR, V_GETPUT, V_MPI_ACC, V_MPI_FOP, NVARIANTS };
static const char *const vname[NVARIANTS] = {"weft-xor", "weft-add", "weft-direct-xor",
                                             "weft-getput", "mpi-acc", "mpi-fop"};
static const char *const vop[NVARIANTS] = {"xor", "add", "xor", "xor", "xor", "xor"};

struct opts {
    const char *json;
    long log2, updates, window, rounds;
};

struct result {
    double gups[MAX_ROUNDS];
    double errors[MAX_ROUNDS];
    int n, run;
};

static struct result res[NVARIANTS];
static int rank, nranks;
static weft_ctx_t ctx;
static weft_ep_t ep;
static weft_seg_t seg;
static uint64_t *table;      /* this rank's part of the weft segment */
static uint64_t **mapped;    /* [rank] its part mapped here (direct path), or NULL */
static MPI_Win win;
static uint64_t *wtable;     /* this rank's part of the MPI window */
static uint64_t *fetched;    /* mpi-fop's old values, a window of them */

static void die(const char *what, weft_status_t st)
{
    fprintf(stderr, NAME ": %s: %s (%s)\n", what, weft_strerror(st), weft_last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
}
#define OK(call) do { weft_status_t s_ = (call); if (s_ != WEFT_OK) die(#call, s_); } while (0)

/* HPCC's stream: a shift register of 64 bits with feedback polynomial 7. */
static inline uint64_t next(uint64_t x)
{
    return (x << 1) ^ ((int64_t)x < 0 ? 7u : 0u);
}

/* The value before this rank's first update: the stream stepped
 * rank * updates times from HPCC's seed, so the ranks' stretches follow
 * each other. */
static uint64_t stream_start(long updates)
{
    uint64_t x = 1;

    for (long i = 0; i < (long)rank * updates; i++)
        x = next(x);
    return x;
}

static inline int owner(uint64_t v)
{
    return (int)(((v >> 32) * (uint64_t)nranks) >> 32);
}

/* U updates of variant k from start; inverse: an add of -v instead of v. */
static void updates(int k, uint64_t start, const struct opts *o, int inverse)
{
    const uint64_t mask = ((uint64_t)1 << o->log2) - 1;
    uint64_t v = start;
    long w = 0;

    for (long i = 0; i < o->updates; i++) {
        int r;
        uint64_t off, old;

        v = next(v);
        r = owner(v);
        off = v & mask;
        switch (k) {
        case V_XOR:
            OK(weft_atomic_nbi(ep, r, seg, off * 8, WEFT_AOP_XOR, WEFT_ATYPE_UINT64, v, 0, NULL));
            break;
        case V_ADD:
            OK(weft_atomic_add_nbi(ep, r, seg, off * 8, inverse ? (uint64_t)0 - v : v));
            break;
        case V_DIRECT_XOR:
            __atomic_fetch_xor(&mapped[r][off], v, __ATOMIC_RELAXED);
            break;
        case V_GETPUT:
            OK(weft_get(ep, &old, r, seg, off * 8, 8));
            old ^= v;
            OK(weft_put_nbi(ep, r, seg, off * 8, &old, 8));
            break;
        case V_MPI_ACC:
            MPI_Accumulate(&v, 1, MPI_UINT64_T, r, (MPI_Aint)off, 1, MPI_UINT64_T, MPI_BXOR, win);
            break;
        case V_MPI_FOP:
            MPI_Fetch_and_op(&v, &fetched[w], MPI_UINT64_T, r, (MPI_Aint)off, MPI_BXOR, win);
            break;
        }
        if (++w == o->window || i + 1 == o->updates) {
            w = 0;
            if (k == V_MPI_ACC || k == V_MPI_FOP)
                MPI_Win_flush_all(win);
            else
                OK(weft_flush(ep));
        }
    }
}

static int is_mpi(int k)
{
    return k == V_MPI_ACC || k == V_MPI_FOP;
}

/* Both kinds of table back to their starting values, seen by every rank. */
static void reset(const struct opts *o)
{
    uint64_t base = (uint64_t)rank << o->log2;

    for (uint64_t i = 0; i < ((uint64_t)1 << o->log2); i++)
        table[i] = wtable[i] = base + i;
    MPI_Win_sync(win);
    OK(weft_barrier(ctx));
}

/* Words of this rank's part that are not their starting value. */
static long wrong_words(int k, const struct opts *o)
{
    const uint64_t *t = is_mpi(k) ? wtable : table;
    uint64_t base = (uint64_t)rank << o->log2;
    long bad = 0;

    for (uint64_t i = 0; i < ((uint64_t)1 << o->log2); i++)
        bad += t[i] != base + i;
    return bad;
}

/* Complete whatever reached this rank's memory before the next step. */
static void settle(int k)
{
    if (is_mpi(k)) {
        MPI_Win_flush_all(win);
        MPI_Win_sync(win);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_sync(win);
    } else {
        OK(weft_flush(ep));
        OK(weft_barrier(ctx));
    }
}

static void run(int k, uint64_t start, const struct opts *o)
{
    double t0, dt, slowest;
    long bad, total;

    reset(o);
    settle(k);
    t0 = bench_now();
    updates(k, start, o, 0);
    dt = bench_now() - t0;
    settle(k);
    MPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    /* HPCC's check: undo the updates, one rank at a time, then count */
    for (int r = 0; r < nranks; r++) {
        if (r == rank)
            updates(k, start, o, 1);
        settle(k);
    }
    bad = wrong_words(k, o);
    MPI_Allreduce(&bad, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && res[k].n < MAX_ROUNDS) {
        res[k].gups[res[k].n] = (double)nranks * (double)o->updates / slowest * 1e-9;
        res[k].errors[res[k].n] = (double)total;
        res[k].n++;
    }
}

static void write_json(const struct opts *o, const char *transport)
{
    FILE *f = bench_json_open(NAME, o->json);
    double words = (double)nranks * (double)((uint64_t)1 << o->log2);
    int first = 1;

    bench_json_head(f, "gups", nranks, transport);
    fprintf(f, "  \"log2_table\": %ld,\n  \"table_words\": %.0f,\n  \"updates_per_rank\": %ld,\n"
               "  \"window\": %ld,\n  \"rounds\": %ld,\n  \"results\": [\n",
            o->log2, words, o->updates, o->window, o->rounds);
    for (int k = 0; k < NVARIANTS; k++) {
        double worst = 0;

        if (!res[k].run)
            continue;
        for (int i = 0; i < res[k].n; i++)
            if (res[k].errors[i] > worst)
                worst = res[k].errors[i];
        fprintf(f, "%s    {\"impl\": \"%s\", \"op\": \"%s\", \"unit\": \"GUP/s\", \"value\": ",
                first ? "" : ",\n", vname[k], vop[k]);
        bench_json_number(f, "%.6g", bench_median_kept(res[k].gups, NULL, res[k].n));
        fputs(", \"rounds\": ", f);
        bench_put_list(f, "%.6g", res[k].gups, res[k].n);
        fprintf(f, ", \"errors\": %.0f, \"error_rate\": %.6g, \"verified\": %s}", worst,
                worst / words, worst / words <= 0.01 ? "true" : "false");
        first = 0;
    }
    fputs("\n  ]\n}\n", f);
    bench_json_close(f);
}

static void usage(void)
{
    fprintf(stderr,
            "usage: mpirun -np P " NAME " [--log2-table N] [--updates U] [--window W] [--rounds R]\n"
            "                              [--json FILE]\n"
            "  --log2-table N  2^N 64-bit words per rank, N from 4 to %d (default 20)\n"
            "  --updates U     updates per rank (default 4 * 2^N)\n"
            "  --window W      updates between completions (default 1024)\n"
            "  --rounds R      rounds of every variant, 1 to %d (default 3)\n",
            MAX_LOG2, MAX_ROUNDS);
}

#define bad(...) bench_bad(NAME, rank == 0, __VA_ARGS__)

static int parse(int argc, char **argv, struct opts *o)
{
    const struct bench_opt opts[] = {
        {"--json", .text = &o->json},          {"--log2-table", .value = &o->log2},
        {"--updates", .value = &o->updates},   {"--window", .value = &o->window},
        {"--rounds", .value = &o->rounds},     {NULL},
    };

    *o = (struct opts){.log2 = 20, .updates = 0, .window = 1024, .rounds = 3};
    if (bench_parse_opts(argc, argv, opts) != 0)
        return bad("an unknown option, a missing value or a count that is not a positive integer");
    if (o->log2 < 4 || o->log2 > MAX_LOG2)
        return bad("--log2-table %ld: from 4 to %d", o->log2, MAX_LOG2);
    if (o->rounds > MAX_ROUNDS)
        return bad("--rounds %ld: at most %d", o->rounds, MAX_ROUNDS);
    if (o->updates == 0)
        o->updates = 4L << o->log2;
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o;
    char transport[256];
    uint64_t start;
    int direct = 1, order[NVARIANTS], nrun = 0;

    bench_mpi_start(&argc, &argv, &rank, &nranks);
    if (parse(argc, argv, &o) != 0) {
        if (rank == 0)
            usage();
        MPI_Finalize();
        return 2;
    }
    OK(weft_init(NULL, &ctx));
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, (size_t)8 << o.log2, &seg, (void **)&table));
    if ((mapped = calloc((size_t)nranks, sizeof(*mapped))) == NULL ||
        (fetched = calloc((size_t)o.window, sizeof(*fetched))) == NULL)
        die("memory", WEFT_ERR_NO_MEMORY);
    for (int r = 0; r < nranks; r++)
        direct &= weft_ptr(ctx, r, seg, 0, (void **)&mapped[r]) == WEFT_OK;
    /* every rank must run the same variants */
    MPI_Allreduce(MPI_IN_PLACE, &direct, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (direct)
        snprintf(transport, sizeof(transport), "direct");
    else if (nranks > 1)
        bench_transport_of(ep, (rank + 1) % nranks, seg, transport, sizeof(transport));
    else
        snprintf(transport, sizeof(transport), "self");
    MPI_Win_allocate((MPI_Aint)8 << o.log2, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &wtable, &win);
    MPI_Win_lock_all(0, win);

    for (int k = 0; k < NVARIANTS; k++)
        if (k != V_DIRECT_XOR || direct) {
            order[nrun++] = k;
            res[k].run = 1;
        }
    start = stream_start(o.updates);
    for (long r = 0; r < o.rounds; r++)
        for (int j = 0; j < nrun; j++)
            run(order[(j + r) % nrun], start, &o);
    if (rank == 0)
        write_json(&o, transport);

    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    free(fetched);
    free(mapped);
    bench_finish(NAME, ctx, seg);
    return 0;
}
