/* The differential method's arithmetic (ablate.h). */
#include "ablate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_VALUES 65536

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

double ablate_median(double *v, long n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The p-quantile of sorted v[0, n), linear between neighbours. */
static double quantile(const double *v, long n, double p)
{
    double x = p * (double)(n - 1);
    long i = (long)x;

    return i + 1 < n ? v[i] + (x - (double)i) * (v[i + 1] - v[i]) : v[n - 1];
}

double ablate_median_halfwidth(const double *v, long n)
{
    if (n < ABLATE_MIN_PAIRS)
        return INFINITY;
    /* for a normal sample the median's standard error is 1.2533 sigma /
     * sqrt(n); the interquartile range estimates sigma without the chunks
     * a rank was descheduled in */
    return 1.96 * 1.2533 * ((quantile(v, n, 0.75) - quantile(v, n, 0.25)) / 1.349) /
           sqrt((double)n);
}

void ablate_paired(const double *a, const double *b, const char *use, long n,
                   struct ablate_est *out)
{
    static double d[MAX_VALUES];
    long m = 0;

    for (long c = 0; c < n && m < MAX_VALUES; c++)
        if (use == NULL || use[c])
            d[m++] = a[c] - b[c];
    out->n = m;
    out->ns = ablate_median(d, m);
    out->res = ablate_median_halfwidth(d, m);
}

void ablate_combo(const double *const *v, const double *w, int k, const char *use, long n,
                  struct ablate_est *out)
{
    static double d[MAX_VALUES];
    long m = 0;

    for (long c = 0; c < n && m < MAX_VALUES; c++)
        if (use == NULL || use[c]) {
            double x = 0;

            for (int i = 0; i < k; i++)
                x += w[i] * v[i][c];
            d[m++] = x;
        }
    out->n = m;
    out->ns = ablate_median(d, m);
    out->res = ablate_median_halfwidth(d, m);
}

/* The median of v[0, n) (copied: v is left as it is) and its half-width. */
static void median_of(const double *v, long n, double *med, double *res)
{
    static double w[MAX_VALUES];

    if (n > MAX_VALUES)
        n = MAX_VALUES;
    memcpy(w, v, sizeof(*w) * (size_t)(n > 0 ? n : 0));
    *med = ablate_median(w, n);
    *res = ablate_median_halfwidth(w, n);
}

void ablate_unpaired(const double *a, long na, const double *b, long nb, struct ablate_est *out)
{
    double ma, ra, mb, rb;

    median_of(a, na, &ma, &ra);
    median_of(b, nb, &mb, &rb);
    out->ns = ma - mb;
    out->res = sqrt(ra * ra + rb * rb);
    out->n = na < nb ? na : nb;
}

struct ablate_est ablate_sum(struct ablate_est x, struct ablate_est y)
{
    struct ablate_est s = {x.ns + y.ns, sqrt(x.res * x.res + y.res * y.res), x.n < y.n ? x.n : y.n};

    return s;
}

struct ablate_est ablate_sub(struct ablate_est x, struct ablate_est y)
{
    y.ns = -y.ns;
    return ablate_sum(x, y);
}

double ablate_resolution(double estimate_ns, double halfwidth_ns, double known_ns, double floor_ns)
{
    double r = fabs(estimate_ns - known_ns) + (isfinite(halfwidth_ns) ? halfwidth_ns : INFINITY);

    return r > floor_ns ? r : floor_ns;
}

void ablate_cycles(const double *const *val, const char *const *calm, const char *keep, long n,
                   const int *loops, int nloops, const struct ablate_def *def, int ndef,
                   char *use, struct ablate_est *out)
{
    long nuse = 0;

    for (long c = 0; c < n; c++) {
        use[c] = keep[c];
        for (int l = 0; l < nloops; l++)
            use[c] &= calm[loops[l]][c];
        nuse += use[c];
    }
    for (int d = 0; d < ndef; d++) {
        const double *v[4];

        for (int i = 0; i < 4; i++)
            v[i] = val[def[d].kind[i]];
        ablate_combo(v, def[d].w, 4, nuse >= ABLATE_MIN_PAIRS ? use : keep, n, &out[d]);
    }
}
