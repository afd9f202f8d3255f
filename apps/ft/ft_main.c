/*
 * ft_main.c -- NAS FT driver: options, the timed run, verification against
 * the NPB reference checksums, and the report (text and JSON).
 *
 *   ft --class A --alg slabs-weft [--pad N] [--fftw wisdom|estimate|measure|patient]
 *      [--json FILE]
 *
 * Exit status: 0 verified, 1 not verified or a runtime failure, 2 bad usage.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ft.h"

#define FT_EPSILON 1.0e-12

static const struct {
    const char         *name;
    const ft_backend_t *backend;
    ft_grain_t          grain;
} algorithms[] = {
    {"exchange-mpi",  &ft_backend_mpi,  FT_GRAIN_EXCHANGE},
    {"slabs-mpi",     &ft_backend_mpi,  FT_GRAIN_SLABS},
    {"pencils-mpi",   &ft_backend_mpi,  FT_GRAIN_PENCILS},
    {"exchange-weft", &ft_backend_weft, FT_GRAIN_EXCHANGE},
    {"slabs-weft",    &ft_backend_weft, FT_GRAIN_SLABS},
    {"pencils-weft",  &ft_backend_weft, FT_GRAIN_PENCILS},
};
#define NALGS (sizeof algorithms / sizeof algorithms[0])

void ft_die(const ft_t *ft, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    MPI_Abort(ft ? ft->comm : MPI_COMM_WORLD, 1);
    exit(1);
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: ft [--class S|W|A|B|C] [--alg NAME] [--pad N]\n"
            "          [--fftw wisdom|estimate|measure|patient]\n"
            "          [--json FILE]\n"
            "  --class   NPB problem class (default S)\n"
            "  --alg     transposition algorithm (default exchange-mpi):");
    for (size_t i = 0; i < NALGS; i++)
        fprintf(out, " %s", algorithms[i].name);
    fprintf(out,
            "\n  --pad     extra elements per row, to break the power-of-two stride of the\n"
            "            strided FFTs (default 0)\n"
            "  --fftw    FFTW planning (default wisdom: measured once per machine and shape,\n"
            "            saved under $WEFT_FFTW_WISDOM, else $XDG_CACHE_HOME/weft or\n"
            "            ~/.cache/weft, and imported by later runs; estimate, measure and\n"
            "            patient plan on every run and save nothing)\n"
            "  --json    also write the report as JSON to FILE\n");
}

/* Parse argv into opt; on failure write the reason into err and return -1
 * (before MPI starts, so that the thread level can depend on the backend). */
static int parse_args(int argc, char **argv, ft_options_t *opt, char *err, size_t errlen)
{
    *opt = (ft_options_t){.cls = ft_class_find("S"), .alg = "exchange-mpi",
                          .backend = &ft_backend_mpi, .grain = FT_GRAIN_EXCHANGE,
                          .fftw = FT_FFTW_WISDOM};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            snprintf(err, errlen, "help");
            return -1;
        }
        if (i + 1 >= argc) {
            snprintf(err, errlen, "unknown option or missing value: '%s'", a);
            return -1;
        }
        const char *v = argv[++i];
        if (strcmp(a, "--class") == 0) {
            opt->cls = ft_class_find(v);
            if (!opt->cls) {
                snprintf(err, errlen, "unknown class '%s' (expected one of %s)", v,
                         ft_class_names());
                return -1;
            }
        } else if (strcmp(a, "--alg") == 0) {
            size_t k = 0;
            while (k < NALGS && strcmp(algorithms[k].name, v) != 0)
                k++;
            if (k == NALGS) {
                snprintf(err, errlen, "unknown algorithm '%s' (see --help)", v);
                return -1;
            }
            opt->alg = algorithms[k].name;
            opt->backend = algorithms[k].backend;
            opt->grain = algorithms[k].grain;
        } else if (strcmp(a, "--pad") == 0) {
            char *end;
            long pad = strtol(v, &end, 10);
            if (*v == '\0' || *end != '\0' || pad < 0 || pad > 64) {
                snprintf(err, errlen, "--pad must be an integer in [0, 64], not '%s'", v);
                return -1;
            }
            opt->pad = (int)pad;
        } else if (strcmp(a, "--fftw") == 0) {
            const ft_fftw_mode_t modes[] = {FT_FFTW_WISDOM, FT_FFTW_ESTIMATE, FT_FFTW_MEASURE,
                                            FT_FFTW_PATIENT};
            size_t k = 0;
            while (k < 4 && strcmp(ft_fftw_mode_name(modes[k]), v) != 0)
                k++;
            if (k == 4) {
                snprintf(err, errlen,
                         "--fftw must be 'wisdom', 'estimate', 'measure' or 'patient', not '%s'", v);
                return -1;
            }
            opt->fftw = modes[k];
        } else if (strcmp(a, "--json") == 0) {
            opt->json = v;
        } else {
            snprintf(err, errlen, "unknown option '%s'", a);
            return -1;
        }
    }
    return 0;
}

static double mflops(const ft_class_t *c, double seconds)
{
    const double n = (double)c->nx * c->ny * c->nz;

    return seconds > 0.0
        ? 1e-6 * n * (14.8157 + 7.19641 * log(n) + (5.23518 + 7.21113 * log(n)) * c->niter)
              / seconds
        : 0.0;
}

typedef struct {
    double complex sums[FT_MAX_NITER];
    double         max_err;
    int            verified;
    double         time, comm_max, comm_mean;
} ft_result_t;

static double rel_err(double v, double ref)
{
    return fabs((v - ref) / ref);
}

/* The timed part of NPB FT: twiddle, initial conditions, forward FFT, then
 * evolve / inverse FFT / checksum for each iteration. */
static void run(ft_t *ft, ft_result_t *res)
{
    const ft_class_t *c = ft->opt.cls;

    /* Untimed pass that touches every array, plan and message path once. */
    ft_initial_conditions(ft);
    ft_fft3d(ft, &ft->fwd, ft->u2, 0);
    ft_fft3d(ft, &ft->inv, ft->u0, 0);
    /* Also what lets the weft backend put into arrays that peers were
     * still transforming during the warm-up. */
    MPI_Barrier(ft->comm);

    ft->comm_time = 0.0;
    const double t0 = MPI_Wtime();
    ft_compute_twiddle(ft);
    ft_initial_conditions(ft);
    ft_fft3d(ft, &ft->fwd, ft->u2, 0);
    for (int t = 0; t < c->niter; t++) {
        /* u0 *= twiddle, then the inverse FFT of u0. */
        ft_fft3d(ft, &ft->inv, ft->u0, 1);
        res->sums[t] = ft_checksum(ft);
    }
    const double mine = MPI_Wtime() - t0;

    MPI_Allreduce(&mine, &res->time, 1, MPI_DOUBLE, MPI_MAX, ft->comm);
    MPI_Allreduce(&ft->comm_time, &res->comm_max, 1, MPI_DOUBLE, MPI_MAX, ft->comm);
    MPI_Allreduce(&ft->comm_time, &res->comm_mean, 1, MPI_DOUBLE, MPI_SUM, ft->comm);
    res->comm_mean /= ft->nranks;

    res->verified = 1;
    res->max_err = 0.0;
    for (int t = 0; t < c->niter; t++) {
        const double er = rel_err(creal(res->sums[t]), c->ref[t][0]);
        const double ei = rel_err(cimag(res->sums[t]), c->ref[t][1]);
        res->max_err = fmax(res->max_err, fmax(er, ei));
        if (!(er <= FT_EPSILON && ei <= FT_EPSILON))
            res->verified = 0;
    }
}

static long long total_msgs(const ft_t *ft)
{
    return ft->fwd.msgs + ft->opt.cls->niter * ft->inv.msgs;
}

static const char *effort_name(unsigned effort)
{
    return effort == FFTW_ESTIMATE ? "estimate" : effort == FFTW_PATIENT ? "patient" : "measure";
}

/* How the plans were made and what that cost: never part of the timed run. */
static void report_planning(const ft_t *ft)
{
    const ft_planning_t *w = &ft->wisdom;

    printf(" FFTW planning      = %s (%s), %.3f s, not timed\n", ft_fftw_mode_name(ft->opt.fftw),
           effort_name(w->effort), w->seconds);
    if (ft->opt.fftw != FT_FFTW_WISDOM)
        return;
    if (w->imported)
        printf(" FFTW wisdom        = imported from %s\n", w->path);
    else if (w->saved)
        printf(" FFTW wisdom        = measured in this run and saved to %s\n", w->path);
    else
        printf(" FFTW wisdom        = measured, not saved\n");
    if (w->candidates > 1) {
        printf(" FFTW candidates    = %d measured plan sets; forward + inverse FFT", w->candidates);
        for (int c = 0; c < w->candidates; c++)
            printf(" %.4f", w->candidate_s[c]);
        printf(" s; kept set %d\n", w->chosen + 1);
    }
}

/* s as a JSON string (null for NULL); paths may hold quotes or backslashes. */
static void json_string(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static void report_text(const ft_t *ft, const ft_result_t *r)
{
    const ft_class_t *c = ft->opt.cls;

    printf("\n NAS FT (weft apps/ft)\n");
    printf(" Class              = %s\n", c->name);
    printf(" Size               = %dx%dx%d\n", c->nx, c->ny, c->nz);
    printf(" Iterations         = %d\n", c->niter);
    printf(" Ranks              = %d\n", ft->nranks);
    printf(" Algorithm          = %s\n", ft->opt.alg);
    printf(" Padding            = %d\n", ft->opt.pad);
    report_planning(ft);
    for (int t = 0; t < c->niter; t++)
        printf(" T = %2d   Checksum = %22.12e %22.12e\n", t + 1, creal(r->sums[t]),
               cimag(r->sums[t]));
    printf(" Max relative error = %.3e (limit %.0e)\n", r->max_err, FT_EPSILON);
    printf(" Time in seconds    = %.4f\n", r->time);
    printf(" Mop/s total        = %.2f\n", mflops(c, r->time));
    printf(" Messages per rank  = %lld per forward, %lld per inverse transposition"
           " (%lld in all)\n", ft->fwd.msgs, ft->inv.msgs, total_msgs(ft));
    printf(" Message size       = %zu B forward, %zu B inverse\n", ft->fwd.msg_bytes,
           ft->inv.msg_bytes);
    printf(" Comm. init+compl.  = %.4f s max, %.4f s mean over ranks\n", r->comm_max,
           r->comm_mean);
    printf(" Verification       = %s\n\n", r->verified ? "VERIFIED" : "NOT VERIFIED");
}

static int report_json(const ft_t *ft, const ft_result_t *r, const char *path)
{
    const ft_class_t *c = ft->opt.cls;
    FILE *f = fopen(path, "w");

    if (!f)
        return -1;
    fprintf(f, "{\n  \"benchmark\": \"ft\",\n  \"class\": \"%s\",\n", c->name);
    fprintf(f, "  \"nx\": %d, \"ny\": %d, \"nz\": %d, \"niter\": %d,\n", c->nx, c->ny, c->nz,
            c->niter);
    fprintf(f, "  \"nranks\": %d,\n  \"algorithm\": \"%s\",\n  \"pad\": %d,\n", ft->nranks,
            ft->opt.alg, ft->opt.pad);
    const ft_planning_t *w = &ft->wisdom;
    fprintf(f, "  \"fftw\": \"%s\",\n  \"fftw_effort\": \"%s\",\n  \"fftw_version\": \"%s\",\n",
            ft_fftw_mode_name(ft->opt.fftw), effort_name(w->effort), fftw_version);
    fprintf(f, "  \"plan_time_s\": %.9g,\n", w->seconds);
    if (ft->opt.fftw == FT_FFTW_WISDOM) {
        fprintf(f, "  \"wisdom\": {\"path\": ");
        json_string(f, w->path[0] ? w->path : NULL);
        fprintf(f, ", \"imported\": %s, \"saved\": %s, \"candidates_s\": [",
                w->imported ? "true" : "false", w->saved ? "true" : "false");
        for (int c = 0; c < w->candidates; c++)
            fprintf(f, "%s%.9g", c ? ", " : "", w->candidate_s[c]);
        fprintf(f, "], \"chosen\": %d},\n", w->candidates ? w->chosen : 0);
    }
    fprintf(f, "  \"time_s\": %.9g,\n  \"mflops\": %.6g,\n", r->time, mflops(c, r->time));
    fprintf(f, "  \"comm_time_s\": {\"max\": %.9g, \"mean\": %.9g},\n", r->comm_max,
            r->comm_mean);
    fprintf(f, "  \"compute_time_s\": %.9g,\n", r->time - r->comm_mean);
    fprintf(f, "  \"messages\": {\"forward\": {\"count\": %lld, \"bytes\": %zu}, "
               "\"inverse\": {\"count\": %lld, \"bytes\": %zu}, \"total_per_rank\": %lld},\n",
            ft->fwd.msgs, ft->fwd.msg_bytes, ft->inv.msgs, ft->inv.msg_bytes, total_msgs(ft));
    fprintf(f, "  \"checksums\": [");
    for (int t = 0; t < c->niter; t++)
        fprintf(f, "%s[%.15e, %.15e]", t ? ", " : "", creal(r->sums[t]), cimag(r->sums[t]));
    fprintf(f, "],\n  \"max_rel_err\": %.3e,\n", r->max_err);
    fprintf(f, "  \"verified\": %s\n}\n", r->verified ? "true" : "false");
    return fclose(f) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    ft_t ft = {0};
    char err[256] = "";
    const int bad_args = parse_args(argc, argv, &ft.opt, err, sizeof err) != 0;
    /* weft serves other threads' operations; MPI must allow that. */
    const int want = ft.opt.backend == &ft_backend_weft ? MPI_THREAD_MULTIPLE
                                                        : MPI_THREAD_FUNNELED;
    int provided;

    MPI_Init_thread(&argc, &argv, want, &provided);
    ft.comm = MPI_COMM_WORLD;
    MPI_Comm_rank(ft.comm, &ft.rank);
    MPI_Comm_size(ft.comm, &ft.nranks);

    if (bad_args) {
        const int help = strcmp(err, "help") == 0;
        if (ft.rank == 0) {
            if (!help)
                fprintf(stderr, "ft: %s\n", err);
            usage(help ? stdout : stderr);
        }
        MPI_Finalize();
        return help ? 0 : 2;
    }
    const ft_class_t *c = ft.opt.cls;
    if (c->nz % ft.nranks != 0 || c->ny % ft.nranks != 0) {
        if (ft.rank == 0)
            fprintf(stderr, "ft: %d ranks do not divide the grid of class %s (ny = %d, nz = %d);"
                    " use a number of ranks that divides both\n", ft.nranks, c->name, c->ny,
                    c->nz);
        MPI_Finalize();
        return 2;
    }

    if (ft.opt.backend->init(&ft) != 0)
        ft_die(&ft, "ft: cannot start the %s backend\n", ft.opt.backend->name);
    if (ft_setup(&ft) != 0)
        ft_die(&ft, "ft: rank %d: out of memory or FFTW planning failed (class %s)\n", ft.rank,
               c->name);

    ft_result_t res;
    run(&ft, &res);

    int status = res.verified ? 0 : 1;
    if (ft.rank == 0) {
        report_text(&ft, &res);
        if (ft.opt.json && report_json(&ft, &res, ft.opt.json) != 0) {
            fprintf(stderr, "ft: cannot write %s\n", ft.opt.json);
            status = 1;
        }
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, ft.comm);

    ft_teardown(&ft);
    ft.opt.backend->finalize(&ft);
    fftw_cleanup();
    MPI_Finalize();
    return status;
}
