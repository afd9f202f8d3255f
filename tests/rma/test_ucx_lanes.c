/* Ranks of one node reached through UCX (WEFT_SHM=0) use UCX's
 * shared-memory transports, even though every weft connection is in UCX's
 * peer error mode: UCX 1.13 gives those transports to such connections
 * only when their error handling is enabled (weft__ucx_config_read), and
 * would otherwise fall back to TCP loopback.  Checked on the lanes UCX
 * prints for the connection (ucp_ep_print_info). */
#define _GNU_SOURCE
#include "../common.h"

#include <string.h>
#include <weft_ucx.h>

int main(void)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg;
    ucp_ep_h uep;
    ucp_rkey_h rkey;
    uint64_t raddr;
    char *text = NULL;
    size_t len = 0;
    FILE *f;
    int rank, n;

    OK(weft_init(NULL, &ctx));
    OK(weft_rank(ctx, &rank));
    OK(weft_nranks(ctx, &n));
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, 4096, &seg, NULL));
    OK(weft_ucx_target(ep, (rank + 1) % n, seg, 0, &uep, &rkey, &raddr));
    CHECK((f = open_memstream(&text, &len)) != NULL);
    ucp_ep_print_info(uep, f);
    fclose(f);
    if (strstr(text, "tcp/") != NULL || strstr(text, "/memory") == NULL) {
        fprintf(stderr, "rank %d: a same-node connection not on UCX shared memory:\n%s", rank, text);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    free(text);
    OK(weft_barrier(ctx));
    OK(weft_seg_free(ctx, seg));
    OK(weft_finalize(ctx));
    if (rank == 0)
        printf("same-node connections in peer error mode use UCX shared memory\n");
    return 0;
}
