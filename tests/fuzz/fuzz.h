/* Shared by the fuzz targets: the libFuzzer entry point, a NUL-terminated
 * copy of the input (the parsers take C strings), and an assertion that
 * crashes so that libFuzzer keeps the input that broke a property. */
#ifndef WEFT_FUZZ_H
#define WEFT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A property of the parser that must hold for every input. */
#define FUZZ_ASSERT(cond)                                                           \
    do {                                                                            \
        if (!(cond)) {                                                              \
            fprintf(stderr, "%s:%d: property violated: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                \
        }                                                                           \
    } while (0)

/* data[0..size) as a malloc'ed C string (cut at an embedded NUL, as getenv
 * and file readers would see it); the exact size lets ASan catch reads past
 * the terminator. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);

    if (s == NULL)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

#endif
