/* Test helpers: a failed check prints where and why, then aborts the job
 * so no rank waits forever for a failed one. */
#ifndef WEFT_TEST_COMMON_H
#define WEFT_TEST_COMMON_H

#include <weft.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            MPI_Abort(MPI_COMM_WORLD, 1);                                        \
        }                                                                        \
    } while (0)

/* A call that must succeed. */
#define OK(call)                                                                 \
    do {                                                                         \
        weft_status_t st_ = (call);                                              \
        if (st_ != WEFT_OK) {                                                    \
            fprintf(stderr, "%s:%d: %s -> %s (%s)\n", __FILE__, __LINE__, #call,  \
                    weft_strerror(st_), weft_last_error());                      \
            MPI_Abort(MPI_COMM_WORLD, 1);                                        \
        }                                                                        \
    } while (0)

/* A call that must fail with the given status. */
#define FAILS(call, expected)                                                    \
    do {                                                                         \
        weft_status_t st_ = (call);                                              \
        if (st_ != (expected)) {                                                 \
            fprintf(stderr, "%s:%d: %s -> %s, expected %s\n", __FILE__, __LINE__, \
                    #call, weft_strerror(st_), weft_strerror(expected));         \
            MPI_Abort(MPI_COMM_WORLD, 1);                                        \
        }                                                                        \
    } while (0)

/* 1 in a build with AddressSanitizer, whose quarantine keeps freed memory
 * resident: tests report memory growth there but do not bound it. */
#if defined(__SANITIZE_ADDRESS__)
#define WEFT_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WEFT_TEST_ASAN 1
#endif
#endif
#ifndef WEFT_TEST_ASAN
#define WEFT_TEST_ASAN 0
#endif

/* Deterministic per-test pattern: byte i of a message tagged t. */
static inline unsigned char test_pattern(unsigned t, size_t i)
{
    return (unsigned char)((t * 131u + i * 7u + (i >> 8)) & 0xffu);
}

#endif
