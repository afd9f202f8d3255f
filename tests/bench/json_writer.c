/* The benchmarks' JSON writer (bench/support/common.c) writes valid JSON
 * whatever it is given: strings with quotes, backslashes and control
 * characters are escaped, and numbers that are not finite become null.
 * Writes one document to the file named by argv[1]; json_writer_check.py
 * parses it with a strict parser and compares the values. */
#include "common.h"

#include <math.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    const double series[] = {1.5, NAN, INFINITY, -INFINITY, 2.25};
    struct bench_series rounds = {0};
    FILE *f;

    if (argc != 2) {
        fprintf(stderr, "usage: json_writer OUTPUT\n");
        return 2;
    }
    f = fopen(argv[1], "w");
    if (f == NULL) {
        perror(argv[1]);
        return 2;
    }
    bench_json_head(f, "quote\" backslash\\ newline\n tab\t bell\a del\x7f", 2, "posix/memory");
    bench_put_value(f, "nan", NAN, ",\n");
    bench_put_value(f, "inf", INFINITY, ",\n");
    bench_put_value(f, "finite", 0.125, ",\n");
    fputs("\"list\": ", f);
    bench_put_list(f, "%.3f", series, 5);
    fputs(",\n", f);
    for (int i = 0; i < 5; i++)
        bench_series_push(&rounds, series[i]);
    bench_put_rounds(f, "rounds \"of\" \\ them", &rounds);
    fputs(",\n\"number\": ", f);
    bench_json_number(f, "%.6g", NAN);
    fputs("\n}\n", f);
    return fclose(f) == 0 ? 0 : 1;
}
