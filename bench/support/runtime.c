/* The helpers of common.h that call weft's runtime and UCX (bench_finish,
 * bench_transport_of): apart from common.c, so that the programs built
 * with only the collectives compiled in (the coll benchmark with another
 * MPI's wrapper, the SMPI builds) can link common.c. */
#define _GNU_SOURCE  /* open_memstream */
#include "common.h"

#include <weft_ucx.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bench_finish(const char *name, weft_ctx_t ctx, weft_seg_t seg)
{
    BENCH_OK(name, weft_seg_free(ctx, seg));
    BENCH_OK(name, weft_finalize(ctx));
    MPI_Finalize();
}

void bench_transport_of(weft_ep_t ep, int rank, weft_seg_t seg, char *out, size_t len)
{
    ucp_ep_h uep;
    ucp_rkey_h rkey;
    uint64_t raddr;
    char *text = NULL, *line, *save = NULL;
    size_t tlen = 0, used = 0;
    FILE *f;

    snprintf(out, len, "unknown");
    if (weft_ucx_target(ep, rank, seg, 0, &uep, &rkey, &raddr) != WEFT_OK ||
        (f = open_memstream(&text, &tlen)) == NULL)
        return;
    ucp_ep_print_info(uep, f);
    fclose(f);
    /* lines look like "lane[0]:  3:sysv/memory.0 md[2] -> ... amo#0 am" */
    out[0] = '\0';
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char tl[64], *p = strstr(line, "lane[");
        /* the transport/device follows the second colon, up to a dot */
        if (p == NULL || (p = strchr(p, ':')) == NULL || (p = strchr(p + 1, ':')) == NULL ||
            sscanf(p + 1, "%63[^. ]", tl) != 1 || strstr(out, tl) != NULL)
            continue;
        used += (size_t)snprintf(out + used, len - used, "%s%s", used ? "," : "", tl);
        if (used >= len)
            break;
    }
    free(text);
}
