/* halo.c: a 1-D halo exchange with put-with-signal.
 *
 * A periodic line of NRANKS * CELLS numbers is smoothed ITERS times by a
 * 3-point stencil, u'[i] = (u[i-1] + 2 u[i] + u[i+1]) / 4.  Each rank owns
 * CELLS of them and, before every step, needs one cell from each
 * neighbour: its "halo".  Each rank puts its edge cells straight into the
 * neighbours' halo slots with weft_put_signal_nb, which also adds 1 to a
 * signal word at the target once the data is there; the target waits for
 * that count with weft_signal_wait_until, then reads the halo.  No message
 * matching, no receive calls: the signal says "your data has arrived".
 * At the end every rank recomputes the whole line serially and checks its
 * cells against it.
 *
 *   mpicc halo.c $(pkg-config --cflags --libs weft) -o halo
 *   mpirun -np 4 ./halo
 */
#include <weft.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#define CELLS 16 /* cells per rank */
#define ITERS 50 /* stencil steps */

static void check(weft_status_t st, const char *call)
{
    if (st != WEFT_OK) {
        fprintf(stderr, "%s: %s (%s)\n", call, weft_strerror(st), weft_last_error());
        exit(EXIT_FAILURE);
    }
}
#define TRY(call) check((call), #call)

/* What every rank exposes in its segment.  The signal words come first:
 * a signal is a 64-bit word that weft adds to atomically, so its offset
 * must be a multiple of 8 (WEFT_ERR_ALIGN otherwise); the segment itself
 * starts on a page.  Each halo has two slots, used by even and odd steps:
 * a neighbour can run at most one step ahead (it cannot finish step k + 1
 * without our halo of step k + 1, which we send only after we have read
 * its halo of step k), so it writes slot (k + 2) % 2 = k % 2 only after we
 * are done with it. */
struct halo_seg {
    uint64_t from_left;      /* signal: halos received from the left neighbour */
    uint64_t from_right;     /* signal: halos received from the right neighbour */
    double   left_halo[2];   /* the left neighbour's last cell, by step parity */
    double   right_halo[2];  /* the right neighbour's first cell, by step parity */
};

/* The starting value of global cell g: anything that is not smooth. */
static double initial(long g)
{
    return (double)((g * 7919) % 101) - 50.0;
}

/* One stencil point, for the distributed and the serial computation alike. */
static double smooth(double left, double mid, double right)
{
    return 0.25 * left + 0.5 * mid + 0.25 * right;
}

int main(void)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg;
    struct halo_seg *mine;
    int rank, n;

    TRY(weft_init(NULL, &ctx));
    TRY(weft_rank(ctx, &rank));
    TRY(weft_nranks(ctx, &n));
    TRY(weft_ep_default(ctx, &ep));
    TRY(weft_seg_alloc(ctx, sizeof(struct halo_seg), &seg, (void **)&mine));

    int left = (rank + n - 1) % n, right = (rank + 1) % n;
    double u[CELLS], next[CELLS];
    for (int i = 0; i < CELLS; i++)
        u[i] = initial((long)rank * CELLS + i);

    for (int k = 0; k < ITERS; k++) {
        size_t slot = (size_t)(k % 2) * sizeof(double);
        weft_event_t to_left, to_right;

        /* Our first cell is the left neighbour's right halo, and our last
         * cell its right neighbour's left halo.  Each put also bumps the
         * matching signal word of the target. */
        TRY(weft_put_signal_nb(ep, left, seg, offsetof(struct halo_seg, right_halo) + slot,
                               &u[0], sizeof(double),
                               seg, offsetof(struct halo_seg, from_right), 1, &to_left));
        TRY(weft_put_signal_nb(ep, right, seg, offsetof(struct halo_seg, left_halo) + slot,
                               &u[CELLS - 1], sizeof(double),
                               seg, offsetof(struct halo_seg, from_left), 1, &to_right));

        /* Step k needs the (k + 1)-th halo from each side.  Once a signal
         * word has reached that count, the data it announces is visible. */
        TRY(weft_signal_wait_until(ep, seg, offsetof(struct halo_seg, from_left),
                                   (uint64_t)k + 1, NULL));
        TRY(weft_signal_wait_until(ep, seg, offsetof(struct halo_seg, from_right),
                                   (uint64_t)k + 1, NULL));
        double lh = mine->left_halo[k % 2], rh = mine->right_halo[k % 2];

        for (int i = 0; i < CELLS; i++)
            next[i] = smooth(i == 0 ? lh : u[i - 1], u[i], i == CELLS - 1 ? rh : u[i + 1]);
        /* The puts read u[0] and u[CELLS-1]: wait for them before u changes. */
        TRY(weft_wait(&to_left));
        TRY(weft_wait(&to_right));
        for (int i = 0; i < CELLS; i++)
            u[i] = next[i];
    }

    /* The same ITERS steps on the whole line, in one process. */
    long total = (long)n * CELLS;
    double *line = malloc(2 * (size_t)total * sizeof(double));
    if (line == NULL) {
        fprintf(stderr, "out of memory\n");
        return EXIT_FAILURE;
    }
    double *a = line, *b = line + total;
    for (long g = 0; g < total; g++)
        a[g] = initial(g);
    for (int k = 0; k < ITERS; k++) {
        for (long g = 0; g < total; g++)
            b[g] = smooth(a[(g + total - 1) % total], a[g], a[(g + 1) % total]);
        double *t = a;
        a = b;
        b = t;
    }
    /* A compiler may round the two loops differently (fused multiply-adds),
     * by far less than a missing or stale halo would change a cell. */
    int wrong = 0;
    for (int i = 0; i < CELLS; i++) {
        double diff = u[i] - a[(long)rank * CELLS + i];
        if (diff > 1e-9 || diff < -1e-9)
            wrong++;
    }
    free(line);

    /* Every halo arrived once per step, from each side. */
    if (mine->from_left != ITERS || mine->from_right != ITERS)
        wrong++;
    printf("rank %d of %d: %d steps of %d cells, %s\n", rank, n, ITERS, CELLS,
           wrong ? "WRONG" : "equal to the serial computation");
    TRY(weft_seg_free(ctx, seg));
    TRY(weft_finalize(ctx));
    return wrong ? EXIT_FAILURE : EXIT_SUCCESS;
}
