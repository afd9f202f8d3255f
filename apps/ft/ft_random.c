/*
 * ft_random.c -- the NPB linear congruential generator
 * x_{k+1} = a * x_k mod 2^46, computed exactly in double precision.
 *
 * NPB defines the stream with doubles, not integers: each operand is split
 * into two 23-bit halves so that every partial product is exact in a 53-bit
 * mantissa.  Keeping that arithmetic keeps the stream bit-identical to the
 * specification on every platform.
 */
#include "ft.h"

#define T23 8388608.0                 /* 2^23 */
#define R23 (1.0 / T23)
#define T46 (T23 * T23)
#define R46 (R23 * R23)

/* Operands are non-negative integers below 2^46: truncation is floor. */
static double split_high(double v)
{
    return (double)(long long)(R23 * v);
}

double ft_randlc(double *x, double a)
{
    const double a1 = split_high(a), a2 = a - T23 * a1;
    const double x1 = split_high(*x), x2 = *x - T23 * x1;

    /* a*x mod 2^46 = 2^23 (a1 x2 + a2 x1 mod 2^23) + a2 x2, reduced mod 2^46 */
    const double cross = a1 * x2 + a2 * x1;
    const double z = cross - T23 * split_high(cross);
    const double t = T23 * z + a2 * x2;
    *x = t - T46 * (double)(long long)(R46 * t);
    return R46 * *x;
}

/*
 * The same stream in integers, for the initial conditions of every run
 * (they are in the timed part, as in NPB).  Seed and multiplier are exact
 * integers below 2^46 and 2^46 divides 2^64, so the low 46 bits of the
 * wrapped 64-bit product are a * x mod 2^46 exactly: the values are the
 * double-precision recurrence's, bit for bit, at one multiply each instead
 * of a chain of a dozen dependent floating-point operations.
 */
void ft_vranlc(size_t n, double *x, double a, double *y)
{
    const unsigned long long mask = (1ULL << 46) - 1;
    const unsigned long long ia = (unsigned long long)a;
    unsigned long long ix = (unsigned long long)*x;

    for (size_t i = 0; i < n; i++) {
        ix = (ia * ix) & mask;
        y[i] = R46 * (double)ix;
    }
    *x = (double)ix;
}

double ft_ipow46(double a, long long e)
{
    double result = 1.0, square = a;

    /* Square-and-multiply; every product is an exact randlc step. */
    while (e > 0) {
        if (e & 1)
            ft_randlc(&result, square);
        ft_randlc(&square, square);
        e >>= 1;
    }
    return result;
}
