/* A rank that is stopped while it waits must not, when it resumes, declare
 * the rank it waits for failed: the deadline passed while it could not run,
 * and the answer is waiting for it.
 *
 * Rank 1 does not progress for 1.9 s (over TCP a get needs its target to
 * progress).  Rank 0 gets from it with WEFT_TIMEOUT_MS=1500; a child process
 * stops rank 0 0.3 s into the wait and resumes it at 1.8 s, past the
 * deadline, before rank 1 answers.  The get must succeed (a resumed rank's
 * wait gets up to 1 s more) and rank 1 must not be reported failed. */
#include "../common.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
    weft_ctx_t ctx;
    weft_ep_t ep;
    weft_seg_t seg;
    weft_config_t cfg;
    char *mine, buf[64];
    int me, n, failed, status;
    pid_t child = -1, parent = getpid();

    OK(weft_init(NULL, &ctx));
    OK(weft_config_init(&cfg));
    OK(weft_rank(ctx, &me));
    OK(weft_nranks(ctx, &n));
    CHECK(n == 2);
    CHECK(cfg.timeout_ms == 1500);
    OK(weft_ep_default(ctx, &ep));
    OK(weft_seg_alloc(ctx, 4096, &seg, (void **)&mine));
    memset(mine, 'a' + me, 4096);
    /* a first get connects, so the one timed below waits for rank 1 only */
    if (me == 0)
        OK(weft_get(ep, buf, 1, seg, 0, sizeof(buf)));
    OK(weft_barrier(ctx));
    if (me == 1) {
        usleep(1900000);   /* no progress: the get waits */
    } else {
        if ((child = fork()) == 0) {
            usleep(300000);
            kill(parent, SIGSTOP);
            usleep(1500000);
            kill(parent, SIGCONT);
            _exit(0);
        }
        CHECK(child > 0);
        memset(buf, 0, sizeof(buf));
        OK(weft_get(ep, buf, 1, seg, 0, sizeof(buf)));
        CHECK(buf[0] == 'b' && buf[sizeof(buf) - 1] == 'b');
        OK(weft_rank_failed(ctx, 1, &failed));
        CHECK(failed == 0);
        CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status));
        printf("PASS: the get that outlived its deadline while this rank was stopped "
               "completed\n");
    }
    OK(weft_barrier(ctx));
    OK(weft_finalize(ctx));
    return 0;
}
