/* transpose.c: a distributed matrix transpose, element by element, through
 * kept targets.
 *
 * An N x N matrix of doubles is spread by block rows: rank r owns rows
 * r*B .. r*B + B - 1 (B = N / NRANKS).  The transpose sends element (i, j)
 * to (j, i), so each rank writes a B x B block into every rank's rows,
 * one 8-byte element at a time -- the small, scattered puts of a
 * fine-grained code.  For each destination the program keeps a
 * weft_target_t in a local variable: weft_target_put_nbi(&t, off, src, 8)
 * is weft_put_nbi(ep, dest, seg, off, src, 8), and on a rank of this node
 * it is a compare and a store in the caller with the target's fields in
 * registers.  weft_flush completes them all; a barrier later every rank
 * checks its rows against the formula that filled the matrix.
 *
 *   mpicc transpose.c $(pkg-config --cflags --libs weft) -o transpose
 *   mpirun -np 4 ./transpose
 */
#include <weft.h>
#include <stdio.h>
#include <stdlib.h>

#define B 64 /* rows per rank, and the side of each block */

static void check(weft_status_t st, const char *call)
{
    if (st != WEFT_OK) {
        fprintf(stderr, "%s: %s (%s)\n", call, weft_strerror(st), weft_last_error());
        exit(EXIT_FAILURE);
    }
}
#define TRY(call) check((call), #call)

/* The value of element (i, j) of the matrix before the transpose. */
static double element(long i, long j)
{
    return (double)i * 1e4 + (double)j;
}

int main(void)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg;
    double *mine;  /* B rows of N: the transpose arrives here */
    int rank, n;

    TRY(weft_init(NULL, &ctx));
    TRY(weft_rank(ctx, &rank));
    TRY(weft_nranks(ctx, &n));
    TRY(weft_ep_default(ctx, &ep));
    long N = (long)n * B;
    TRY(weft_seg_alloc(ctx, (size_t)B * (size_t)N * sizeof(double), &seg, (void **)&mine));

    /* This rank's rows of the matrix, in private memory. */
    double *a = malloc((size_t)B * (size_t)N * sizeof(double));
    if (a == NULL) {
        fprintf(stderr, "out of memory\n");
        return EXIT_FAILURE;
    }
    for (long r = 0; r < B; r++)
        for (long j = 0; j < N; j++)
            a[r * N + j] = element((long)rank * B + r, j);

    /* Element (i, j), i = rank*B + r, j = d*B + c, goes to row c of rank d,
     * column i.  One target per destination, kept while its block goes. */
    for (int k = 0; k < n; k++) {
        int d = (rank + k) % n;  /* start with a different rank each */
        weft_target_t t;

        TRY(weft_target_init(ep, d, seg, &t));
        for (long c = 0; c < B; c++)
            for (long r = 0; r < B; r++) {
                long i = (long)rank * B + r;
                size_t off = (size_t)(c * N + i) * sizeof(double);

                TRY(weft_target_put_nbi(&t, off, &a[r * N + (long)d * B + c], sizeof(double)));
            }
    }
    TRY(weft_flush(ep));      /* every put of this rank is complete */
    TRY(weft_barrier(ctx));   /* and every other rank's */

    long wrong = 0;
    for (long r = 0; r < B; r++)
        for (long j = 0; j < N; j++)
            if (mine[r * N + j] != element(j, (long)rank * B + r))
                wrong++;
    printf("rank %d of %d: %d x %ld block rows transposed, %s\n", rank, n, B, N,
           wrong ? "WRONG" : "every element in place");
    free(a);
    TRY(weft_seg_free(ctx, seg));
    TRY(weft_finalize(ctx));
    return wrong ? EXIT_FAILURE : EXIT_SUCCESS;
}
