/* Test helpers: a failed check prints where and why, then aborts the job
 * so no rank waits forever for a failed one. */
#ifndef WEFT_TEST_COMMON_H
#define WEFT_TEST_COMMON_H

#include <weft.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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

/* The n bytes rank `from` sends with tag t, into b. */
static inline void test_fill_from(unsigned char *b, size_t n, int from, unsigned t)
{
    for (size_t i = 0; i < n; i++)
        b[i] = test_pattern(t + 17u * (unsigned)from, i);
}

/* Whether the n bytes at are those rank `from` sends with tag t. */
static inline int test_is_from(const void *at, size_t n, int from, unsigned t)
{
    const unsigned char *b = (const unsigned char *)at;

    for (size_t i = 0; i < n; i++)
        if (b[i] != test_pattern(t + 17u * (unsigned)from, i))
            return 0;
    return 1;
}

/* Spin until the word, written by another rank or thread, reads 1,
 * without a weft call (so only a progress thread can serve the peer that
 * writes it meanwhile); abort the job after a minute. */
static inline void test_wait_flag(volatile uint64_t *word)
{
    struct timespec t0, t;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        clock_gettime(CLOCK_MONOTONIC, &t);
        CHECK(t.tv_sec - t0.tv_sec < 60);
    } while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != 1);
}

#endif
