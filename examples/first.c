/* first.c: each rank puts a number into its right neighbour's memory.
 *   mpicc first.c $(pkg-config --cflags --libs weft) -o first
 *   mpirun -np 2 ./first                                              */
#include <weft.h>
#include <stdio.h>
#include <stdlib.h>

/* Every weft call returns a status: stop at the first error, saying why.
 * (mpirun then stops the other ranks: a rank failed without MPI_Finalize). */
static void check(weft_status_t st, const char *call)
{
    if (st != WEFT_OK) {
        fprintf(stderr, "%s: %s (%s)\n", call, weft_strerror(st), weft_last_error());
        exit(EXIT_FAILURE);
    }
}
#define TRY(call) check((call), #call)

int main(void)
{
    weft_ctx_t ctx;  weft_ep_t ep;  weft_seg_t seg;
    uint64_t *mine; /* this rank's part of the segment */
    int rank, n;

    TRY(weft_init(NULL, &ctx)); /* also starts MPI if the program has not */
    TRY(weft_rank(ctx, &rank));
    TRY(weft_nranks(ctx, &n));
    TRY(weft_ep_default(ctx, &ep));
    /* Collective: every rank gets 8 zeroed bytes, addressable by any rank. */
    TRY(weft_seg_alloc(ctx, sizeof(uint64_t), &seg, (void **)&mine));

    int right = (rank + 1) % n, left = (rank + n - 1) % n;
    uint64_t value = 100 + (uint64_t)rank; /* unchanged until the flush */
    TRY(weft_put_nbi(ep, right, seg, 0, &value, sizeof(value)));
    TRY(weft_flush(ep));      /* this rank's put is visible at its target */
    TRY(weft_barrier(ctx));   /* and once all are here, so is everyone's */

    int ok = *mine == 100 + (uint64_t)left;
    printf("rank %d of %d: got %llu from rank %d, %s\n", rank, n,
           (unsigned long long)*mine, left, ok ? "correct" : "WRONG");
    TRY(weft_seg_free(ctx, seg));
    TRY(weft_finalize(ctx));  /* finalises MPI too, as weft_init started it */
    return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
