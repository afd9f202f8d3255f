/* Segments of the direct path are reserved and populated when allocated,
 * and weft_flush still completes UCX operations issued after direct-only
 * epochs:
 *   - a put of a whole 4 MiB segment to a mapped rank takes no page fault
 *     in the initiator (lazily mapped, it would take one per 4 KiB page);
 *   - a part larger than /dev/shm fails weft_seg_alloc with
 *     WEFT_ERR_NO_MEMORY on every rank, naming /dev/shm (or the node's
 *     memory when it is larger than that too), and the context stays
 *     usable (checked where every rank shares its node with another);
 *   - on each endpoint: a direct put and a flush (nothing for UCX to do),
 *     then a 256 KiB put_nbi to the right neighbour and a flush: after a
 *     barrier the neighbour holds every byte, whichever path reached it. */
#include "../common.h"

#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define BIG (4u << 20)
#define FLUSHED (256u << 10)

static long minor_faults(void)
{
    struct rusage ru;

    CHECK(getrusage(RUSAGE_SELF, &ru) == 0);
    return ru.ru_minflt;
}

int main(void)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg, huge;
    unsigned char *mine, *src;
    void *peer, *p;
    int rank, n, others_mapped = 0, all_share;

    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, BIG, &seg, (void **)&mine));
    int right = (rank + 1) % n, left = (rank + n - 1) % n;
    src = malloc(BIG);
    CHECK(src != NULL);
    for (size_t k = 0; k < BIG; k++)
        src[k] = test_pattern((unsigned)rank, k);

    /* no first-touch faults on a mapped neighbour's part */
    others_mapped = right != rank && (weft_ptr(ctx, right, seg, 0, &p) == WEFT_OK ||
                                      weft_ptr(ctx, left, seg, 0, &p) == WEFT_OK);
    if (right != rank && weft_ptr(ctx, right, seg, 0, &peer) == WEFT_OK) {
        long before = minor_faults();
        memcpy(peer, src, BIG);
        long faults = minor_faults() - before;
        /* under AddressSanitizer its shadow of the part (1 byte per 8)
         * is touched for the first time too: 128 pages, not the part's */
        long bound = 16 + (WEFT_TEST_ASAN ? (long)(BIG / 8 / 4096) : 0);
        if (faults >= bound) {
            fprintf(stderr, "rank %d: %ld page faults writing a mapped 4 MiB part\n", rank, faults);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    OK(weft_barrier(ctx));

    /* a part /dev/shm cannot hold: refused by the check of its free space,
     * or before it by the check of the node's memory when the part is also
     * larger than that (here /dev/shm is as large as the memory; by
     * default it is half of it) */
    MPI_Allreduce(&others_mapped, &all_share, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all_share) {
        struct statvfs fs;
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        size_t ram = (size_t)sysconf(_SC_PHYS_PAGES) * page;

        CHECK(statvfs("/dev/shm", &fs) == 0);
        size_t too_big = (size_t)fs.f_blocks * fs.f_frsize + ((size_t)1 << 30);
        FAILS(weft_seg_alloc(ctx, too_big, &huge, &p), WEFT_ERR_NO_MEMORY);
        CHECK(strstr(weft_last_error(), too_big > ram ? "larger than this node's memory"
                                                      : "/dev/shm") != NULL);
    }

    /* a direct-only epoch, then one with a large put on either path */
    for (int round = 0; round < 3; round++) {
        unsigned tag = (unsigned)(rank * 16 + round);
        for (size_t k = 0; k < FLUSHED; k++)
            src[k] = test_pattern(tag, k);
        if (weft_ptr(ctx, right, seg, 0, &p) == WEFT_OK || weft_ptr(ctx, left, seg, 0, &p) == WEFT_OK) {
            int near = weft_ptr(ctx, right, seg, 0, &p) == WEFT_OK ? right : left;
            OK(weft_put_nbi(ep, near, seg, 0, src, 64));
            OK(weft_flush(ep));
        }
        OK(weft_barrier(ctx));
        OK(weft_put_nbi(ep, right, seg, 0, src, FLUSHED));
        OK(weft_flush(ep));
        OK(weft_barrier(ctx));
        unsigned ltag = (unsigned)(left * 16 + round);
        for (size_t k = 0; k < FLUSHED; k++)
            if (mine[k] != test_pattern(ltag, k)) {
                fprintf(stderr, "rank %d, round %d: byte %zu is %u, expected %u\n", rank, round,
                        k, mine[k], test_pattern(ltag, k));
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        OK(weft_barrier(ctx));
    }

    /* the context is still usable after the failed allocation */
    OK(weft_seg_alloc(ctx, 64, &huge, &p));
    OK(weft_seg_free(ctx, huge));
    OK(weft_seg_free(ctx, seg));
    free(src);
    OK(weft_finalize(ctx));
    if (rank == 0)
        printf("populated parts, /dev/shm check %s, flushes verified on %d ranks\n",
               all_share ? "done" : "skipped (a rank alone on its node)", n);
    return 0;
}
