/* Strided put and get (shmem_iput / shmem_iget): the whole range is
 * checked first, so bad input issues nothing, then each element is one
 * implicit put or get through the public calls -- on the direct path a
 * store or load each, over UCX one small operation each. */
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

    if ((st = weft__ep_check(ep, fn)) != WEFT_OK)
        return st;
    if (rank < 0 || rank >= ep->nranks)
        return weft__error(WEFT_ERR_RANK, fn, "rank %d is outside [0, %d)", rank, ep->nranks);
    if ((st = weft__seg_check(ep, seg, fn)) != WEFT_OK)
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
