/* Strided put and get (shmem_iput / shmem_iget) and indexed put and get
 * (GASNet-EX's VIS indexed transfers): the whole range is checked first,
 * so bad input issues nothing, then each element (each run of bytes
 * contiguous on both sides, for indexed ones) is one implicit put or get
 * through the public calls -- on the direct path a store or load each,
 * over UCX one small operation each. */
#include "rma/rma.h"

/* Bytes from the first byte of the first element to the end of the last:
 * (count - 1) * stride * elem + elem; 0 on overflow. */
static size_t span(size_t count, size_t stride, size_t elem)
{
    size_t s;

    if (__builtin_mul_overflow(count - 1, stride, &s) || __builtin_mul_overflow(s, elem, &s) ||
        __builtin_add_overflow(s, elem, &s))
        return 0;
    return s;
}

/* The checks of a strided transfer of count elements of elem bytes: at
 * (rank, seg, off) every rstride elements, and at the local buf every
 * lstride elements. */
static weft_status_t check_strided(weft_ep_t ep, int rank, weft_seg_t seg, size_t off,
                                   size_t rstride, const void *buf, size_t lstride, size_t elem,
                                   size_t count, const char *fn)
{
    weft_status_t st;
    size_t size, remote, local;

    if ((st = weft__rma_check_target(ep, rank, seg, fn)) != WEFT_OK)
        return st;
    if (count == 0)
        return WEFT_OK;
    if (elem == 0)
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "element size is 0");
    if (rstride == 0 || lstride == 0)
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "%s stride is 0 (strides count elements, "
                           ">= 1)", rstride == 0 ? "the segment's" : "the buffer's");
    if (buf == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "buffer is NULL");
    size = weft__seg_size(seg, rank);
    remote = span(count, rstride, elem);
    if (remote == 0 || off > size || remote > size - off)
        return weft__error(WEFT_ERR_BOUNDS, fn, "%zu elements of %zu bytes every %zu from offset "
                           "%zu exceed segment size %zu", count, elem, rstride, off, size);
    local = span(count, lstride, elem);
    if (local == 0 || (uintptr_t)buf > UINTPTR_MAX - (local - 1))
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "%zu elements of %zu bytes every %zu from "
                           "%p run past the end of the address space", count, elem, lstride, buf);
    if (WEFT__UNLIKELY(weft__peer_failed(ep->ctx, rank)))
        return weft__error(WEFT_ERR_PEER_FAILED, fn, "rank %d has failed", rank);
    return WEFT_OK;
}

weft_status_t weft_iput_nbi(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, size_t dst,
                            const void *src, size_t sst, size_t elem, size_t count)
{
    weft_status_t st = check_strided(ep, rank, seg, off, dst, src, sst, elem, count, __func__);

    for (size_t i = 0; st == WEFT_OK && i < count; i++)
        st = weft_put_nbi(ep, rank, seg, off + i * dst * elem,
                          (const char *)src + i * sst * elem, elem);
    return st;
}

weft_status_t weft_iget_nbi(weft_ep_t ep, void *dst_buf, size_t dst, int rank, weft_seg_t seg,
                            size_t off, size_t sst, size_t elem, size_t count)
{
    weft_status_t st = check_strided(ep, rank, seg, off, sst, dst_buf, dst, elem, count,
                                     __func__);

    for (size_t i = 0; st == WEFT_OK && i < count; i++)
        st = weft_get_nbi(ep, (char *)dst_buf + i * dst * elem, rank, seg, off + i * sst * elem,
                          elem);
    return st;
}

weft_status_t weft_iput(weft_ep_t ep, int rank, weft_seg_t seg, size_t off, size_t dst,
                        const void *src, size_t sst, size_t elem, size_t count)
{
    weft_status_t st = check_strided(ep, rank, seg, off, dst, src, sst, elem, count, __func__);

    if (st != WEFT_OK || count == 0)
        return st;
    if ((st = weft_iput_nbi(ep, rank, seg, off, dst, src, sst, elem, count)) != WEFT_OK)
        return st;
    return weft_flush(ep);
}

weft_status_t weft_iget(weft_ep_t ep, void *dst_buf, size_t dst, int rank, weft_seg_t seg,
                        size_t off, size_t sst, size_t elem, size_t count)
{
    weft_status_t st = check_strided(ep, rank, seg, off, sst, dst_buf, dst, elem, count,
                                     __func__);

    if (st != WEFT_OK || count == 0)
        return st;
    if ((st = weft_iget_nbi(ep, dst_buf, dst, rank, seg, off, sst, elem, count)) != WEFT_OK)
        return st;
    return weft_flush(ep);
}

/* ---- indexed ------------------------------------------------------------- */

/* The checks of an indexed transfer: nrem pieces of remlen bytes at
 * offsets rem[] of (rank, seg), nloc pieces of loclen bytes at loc[]; the
 * two hold the same number of bytes.  *total gets it (0: nothing to do). */
static weft_status_t check_indexed(weft_ep_t ep, int rank, weft_seg_t seg, size_t nrem,
                                   const size_t *rem, size_t remlen, size_t nloc,
                                   const void *const *loc, size_t loclen, size_t *total,
                                   const char *fn)
{
    weft_status_t st;
    size_t size, rbytes, lbytes;

    if ((st = weft__rma_check_target(ep, rank, seg, fn)) != WEFT_OK)
        return st;
    if (__builtin_mul_overflow(nrem, remlen, &rbytes) ||
        __builtin_mul_overflow(nloc, loclen, &lbytes) || rbytes != lbytes)
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "the segment's %zu pieces of %zu bytes and "
                           "the buffer's %zu pieces of %zu bytes are not the same number of bytes",
                           nrem, remlen, nloc, loclen);
    *total = rbytes;
    if (rbytes == 0)
        return WEFT_OK;
    if (rem == NULL || loc == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, fn, "the %s list is NULL",
                           rem == NULL ? "offset" : "buffer");
    size = weft__seg_size(seg, rank);
    for (size_t i = 0; i < nrem; i++)
        if (rem[i] > size || remlen > size - rem[i])
            return weft__error(WEFT_ERR_BOUNDS, fn, "piece %zu: offset %zu + %zu bytes exceeds "
                               "segment size %zu", i, rem[i], remlen, size);
    for (size_t i = 0; i < nloc; i++)
        if (loc[i] == NULL || (uintptr_t)loc[i] > UINTPTR_MAX - (loclen - 1))
            return weft__error(WEFT_ERR_INVALID_ARG, fn, "buffer %zu (%p) is NULL or runs past "
                               "the end of the address space", i, loc[i]);
    if (WEFT__UNLIKELY(weft__peer_failed(ep->ctx, rank)))
        return weft__error(WEFT_ERR_PEER_FAILED, fn, "rank %d has failed", rank);
    return WEFT_OK;
}

/* Issue the transfer checked above: the bytes in order, cut where either
 * side's piece ends, runs that are contiguous on both sides joined into
 * one operation.  put: local to remote; else remote to local. */
static weft_status_t indexed(weft_ep_t ep, int rank, weft_seg_t seg, const size_t *rem,
                             size_t remlen, const void *const *loc, size_t loclen, size_t total,
                             int put)
{
    size_t i = 0, ri = 0, j = 0, lj = 0, done = 0, run_off = 0, run_len = 0;
    char *run_ptr = NULL;
    weft_status_t st = WEFT_OK;

    while (done < total && st == WEFT_OK) {
        size_t n = remlen - ri < loclen - lj ? remlen - ri : loclen - lj;
        size_t off = rem[i] + ri;
        char *ptr = (char *)(uintptr_t)loc[j] + lj;

        if (run_len > 0 && off == run_off + run_len && ptr == run_ptr + run_len) {
            run_len += n;
        } else {
            if (run_len > 0)
                st = put ? weft_put_nbi(ep, rank, seg, run_off, run_ptr, run_len)
                         : weft_get_nbi(ep, run_ptr, rank, seg, run_off, run_len);
            run_off = off;
            run_ptr = ptr;
            run_len = n;
        }
        done += n;
        if ((ri += n) == remlen) {
            ri = 0;
            i++;
        }
        if ((lj += n) == loclen) {
            lj = 0;
            j++;
        }
    }
    if (st == WEFT_OK && run_len > 0)
        st = put ? weft_put_nbi(ep, rank, seg, run_off, run_ptr, run_len)
                 : weft_get_nbi(ep, run_ptr, rank, seg, run_off, run_len);
    return st;
}

/* The whole call: check, issue, and for a blocking one flush. */
static weft_status_t indexed_call(weft_ep_t ep, int rank, weft_seg_t seg, size_t nrem,
                                  const size_t *rem, size_t remlen, size_t nloc,
                                  const void *const *loc, size_t loclen, int put, int blocking,
                                  const char *fn)
{
    size_t total = 0;
    weft_status_t st = check_indexed(ep, rank, seg, nrem, rem, remlen, nloc, loc, loclen, &total,
                                     fn);

    if (st != WEFT_OK || total == 0)
        return st;
    if ((st = indexed(ep, rank, seg, rem, remlen, loc, loclen, total, put)) != WEFT_OK ||
        !blocking)
        return st;
    return weft_flush(ep);
}

weft_status_t weft_put_indexed_nbi(weft_ep_t ep, int rank, weft_seg_t seg, size_t ndst,
                                   const size_t *dstoffs, size_t dstlen, size_t nsrc,
                                   const void *const *srcs, size_t srclen)
{
    return indexed_call(ep, rank, seg, ndst, dstoffs, dstlen, nsrc, srcs, srclen, 1, 0, __func__);
}

weft_status_t weft_get_indexed_nbi(weft_ep_t ep, size_t ndst, void *const *dsts, size_t dstlen,
                                   int rank, weft_seg_t seg, size_t nsrc, const size_t *srcoffs,
                                   size_t srclen)
{
    return indexed_call(ep, rank, seg, nsrc, srcoffs, srclen, ndst, (const void *const *)dsts,
                        dstlen, 0, 0, __func__);
}

weft_status_t weft_put_indexed(weft_ep_t ep, int rank, weft_seg_t seg, size_t ndst,
                               const size_t *dstoffs, size_t dstlen, size_t nsrc,
                               const void *const *srcs, size_t srclen)
{
    return indexed_call(ep, rank, seg, ndst, dstoffs, dstlen, nsrc, srcs, srclen, 1, 1, __func__);
}

weft_status_t weft_get_indexed(weft_ep_t ep, size_t ndst, void *const *dsts, size_t dstlen,
                               int rank, weft_seg_t seg, size_t nsrc, const size_t *srcoffs,
                               size_t srclen)
{
    return indexed_call(ep, rank, seg, nsrc, srcoffs, srclen, ndst, (const void *const *)dsts,
                        dstlen, 0, 1, __func__);
}
