/* Status names and the per-thread last-error message. */
#include "runtime.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static __thread char last_error[512];

const char *weft_strerror(weft_status_t st)
{
    switch (st) {
    case WEFT_OK:              return "WEFT_OK: success";
    case WEFT_ERR_INVALID_ARG: return "WEFT_ERR_INVALID_ARG: NULL pointer or invalid value";
    case WEFT_ERR_RANK:        return "WEFT_ERR_RANK: rank out of range";
    case WEFT_ERR_BOUNDS:      return "WEFT_ERR_BOUNDS: offset/size past the end of a segment";
    case WEFT_ERR_ALIGN:       return "WEFT_ERR_ALIGN: misaligned address for an atomic";
    case WEFT_ERR_SEG:         return "WEFT_ERR_SEG: not a live segment of this context";
    case WEFT_ERR_NOT_INIT:    return "WEFT_ERR_NOT_INIT: context not initialised or already finalised";
    case WEFT_ERR_AM_ID:       return "WEFT_ERR_AM_ID: active-message id out of range or not registered";
    case WEFT_ERR_NO_MEMORY:   return "WEFT_ERR_NO_MEMORY: allocation or registration failed";
    case WEFT_ERR_TRANSPORT:   return "WEFT_ERR_TRANSPORT: the transport (UCX) reported an error";
    case WEFT_ERR_MPI:         return "WEFT_ERR_MPI: an MPI call failed";
    case WEFT_ERR_CONFIG:      return "WEFT_ERR_CONFIG: malformed setting";
    case WEFT_ERR_BUSY:        return "WEFT_ERR_BUSY: resource already in use";
    case WEFT_ERR_TOO_LARGE:   return "WEFT_ERR_TOO_LARGE: size over a documented limit";
    case WEFT_ERR_PEER_FAILED: return "WEFT_ERR_PEER_FAILED: the target rank is gone";
    case WEFT_ERR_TIMEOUT:     return "WEFT_ERR_TIMEOUT: a bounded wait expired";
    case WEFT_ERR_UNSUPPORTED: return "WEFT_ERR_UNSUPPORTED: not available in this build or transport";
    }
    return "unknown weft status";
}

const char *weft_last_error(void)
{
    return last_error;
}

weft_status_t weft__error(weft_status_t st, const char *fn, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(last_error, sizeof(last_error), "%s: ", fn);

    if (n < 0 || (size_t)n >= sizeof(last_error))
        n = 0;
    va_start(ap, fmt);
    vsnprintf(last_error + n, sizeof(last_error) - (size_t)n, fmt, ap);
    va_end(ap);
    return st;
}

weft_status_t weft__fail(weft__msg_t *err, weft_status_t st, const char *fmt, ...)
{
    char    msg[sizeof(err->msg)];
    va_list ap;

    /* Formatted apart: callers often wrap the previous message. */
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    memcpy(err->msg, msg, sizeof(msg));
    return st;
}

weft_status_t weft__ucs_error(ucs_status_t s, const char *fn, const char *what)
{
    weft_status_t st;

    switch (s) {
    case UCS_ERR_NO_MEMORY:
    case UCS_ERR_NO_RESOURCE:    st = WEFT_ERR_NO_MEMORY; break;
    case UCS_ERR_ENDPOINT_TIMEOUT:
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_UNREACHABLE:
    /* weft cancels operations only by closing the connections of a failed
     * rank, and a closed connection is not used again */
    case UCS_ERR_CANCELED:
    case UCS_ERR_NOT_CONNECTED:  st = WEFT_ERR_PEER_FAILED; break;
    case UCS_ERR_TIMED_OUT:      st = WEFT_ERR_TIMEOUT; break;
    case UCS_ERR_UNSUPPORTED:    st = WEFT_ERR_UNSUPPORTED; break;
    default:                     st = WEFT_ERR_TRANSPORT; break;
    }
    return weft__error(st, fn, "%s: %s", what, ucs_status_string(s));
}
