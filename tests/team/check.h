/* Assertions of the team tests: a failed check prints where and why (with
 * the MPI rank when there is one) and the test exits non-zero at the end. */
#ifndef WEFT_TEST_TEAM_CHECK_H
#define WEFT_TEST_TEAM_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures;
static int check_rank = -1;

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            if (check_rank >= 0)                                                           \
                fprintf(stderr, "[rank %d] ", check_rank);                                 \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond);       \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fputc('\n', stderr);                                                           \
            check_failures++;                                                              \
        }                                                                                  \
    } while (0)

#define CHECK_STR(got, want) check_str(__FILE__, __LINE__, (got), (want))

static inline void check_str(const char *file, int line, const char *got, const char *want)
{
    if (got && strcmp(got, want) == 0)
        return;
    if (check_rank >= 0)
        fprintf(stderr, "[rank %d] ", check_rank);
    fprintf(stderr, "%s:%d: got '%s', want '%s'\n", file, line, got ? got : "(null)", want);
    check_failures++;
}

/* True when the message names every fragment (clear errors name the input). */
#define CHECK_MSG(msg, fragment) \
    CHECK(strstr((msg), (fragment)) != NULL, "message '%s' lacks '%s'", (msg), (fragment))

#endif
