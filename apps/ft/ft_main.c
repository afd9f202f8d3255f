/*
 * ft_main.c -- NAS FT driver: options, the timed run, verification against
 * the NPB reference checksums, and the report (text and JSON).
 *
 *   ft --class A --alg slabs-weft [--pad N] [--fftw wisdom|estimate|measure|patient]
 *      [--iters N] [--json FILE]
 *
 * The build for SimGrid SMPI (FT_SMPI, tools/smpi) has no weft algorithms
 * and two more options: --simulate KIND=SECONDS,... leaves the computation
 * out and charges each kind its seconds per flop or element, and
 * --put-overhead S charges every MPI_Put of the rma algorithms S seconds.
 *
 * Exit status: 0 verified, 1 not verified or a runtime failure, 2 bad usage.
 */
#include <getopt.h>
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
#ifndef FT_SMPI
    {"exchange-weft", &ft_backend_weft, FT_GRAIN_EXCHANGE},
    {"slabs-weft",    &ft_backend_weft, FT_GRAIN_SLABS},
    {"pencils-weft",  &ft_backend_weft, FT_GRAIN_PENCILS},
#endif
    {"exchange-rma",  &ft_backend_rma,  FT_GRAIN_EXCHANGE},
    {"slabs-rma",     &ft_backend_rma,  FT_GRAIN_SLABS},
    {"pencils-rma",   &ft_backend_rma,  FT_GRAIN_PENCILS},
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
            "          [--fftw wisdom|estimate|measure|patient] [--iters N]\n"
#ifdef FT_SMPI
            "          [--simulate KIND=S,...] [--put-overhead S]\n"
#endif
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
            "  --iters   timed iterations (default: the class's; fewer verify the first N)\n"
#ifdef FT_SMPI
            "  --simulate  compute nothing; charge each kind (plane, row, final: seconds\n"
            "            per flop; evolve, init, twiddle: seconds per element) its cost\n"
            "  --put-overhead  seconds charged per MPI_Put (rma algorithms)\n"
#endif
            "  --json    also write the report as JSON to FILE\n");
}

#ifdef FT_SMPI
/* "plane=1e-10,row=2e-10,..." into cost (every kind named once at most,
 * the others 0); -1 with the reason in err. */
static int parse_costs(const char *v, double *cost, char *err, size_t errlen)
{
    char buf[512];

    if (strlen(v) >= sizeof buf) {
        snprintf(err, errlen, "--simulate: too long");
        return -1;
    }
    strcpy(buf, v);
    for (char *save = NULL, *item = strtok_r(buf, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '='), *end;
        int k = 0;

        if (eq)
            *eq = '\0';
        while (k < FT_NKINDS && strcmp(ft_kind_names[k], item) != 0)
            k++;
        if (!eq || k == FT_NKINDS) {
            snprintf(err, errlen, "--simulate wants KIND=SECONDS with KIND one of plane, row, "
                     "final, evolve, init, twiddle, not '%s'", item);
            return -1;
        }
        cost[k] = strtod(eq + 1, &end);
        if (eq[1] == '\0' || *end != '\0' || !(cost[k] >= 0.0)) {
            snprintf(err, errlen, "--simulate: %s must be a number of seconds >= 0, not '%s'",
                     item, eq + 1);
            return -1;
        }
    }
    return 0;
}
#endif

/* Parse argv into opt; on failure write the reason into err and return -1
 * (before MPI starts, so that the thread level can depend on the backend). */
static int parse_args(int argc, char **argv, ft_options_t *opt, int *simulate, char *err,
                      size_t errlen)
{
#ifndef FT_SMPI
    (void)simulate;
#endif
    *opt = (ft_options_t){.cls = ft_class_find("S"), .alg = "exchange-mpi",
                          .backend = &ft_backend_mpi, .grain = FT_GRAIN_EXCHANGE,
                          .fftw = FT_FFTW_WISDOM};
    /* getopt_long scans ("--name value", "--name=value", unambiguous
     * prefixes); the values are checked below. */
    static const struct option lo[] = {
        {"help", no_argument, NULL, 'h'},     {"class", required_argument, NULL, 'c'},
        {"alg", required_argument, NULL, 'a'}, {"pad", required_argument, NULL, 'p'},
        {"fftw", required_argument, NULL, 'f'}, {"json", required_argument, NULL, 'j'},
        {"iters", required_argument, NULL, 'i'},
#ifdef FT_SMPI
        {"simulate", required_argument, NULL, 's'},
        {"put-overhead", required_argument, NULL, 'o'},
#endif
        {NULL, 0, NULL, 0},
    };
    int c;

    opterr = 0;
    optind = 0;
    while ((c = getopt_long(argc, argv, "+:h", lo, NULL)) != -1) {
        const char *v = optarg;

        if (c == 'h') {
            snprintf(err, errlen, "help");
            return -1;
        }
        if (c == ':') {
            snprintf(err, errlen, "missing value for option '%s'", argv[optind - 1]);
            return -1;
        }
        if (c == '?') {
            snprintf(err, errlen, "unknown option '%s'", argv[optind - 1]);
            return -1;
        }
        if (c == 'c') {
            opt->cls = ft_class_find(v);
            if (!opt->cls) {
                snprintf(err, errlen, "unknown class '%s' (expected one of %s)", v,
                         ft_class_names());
                return -1;
            }
        } else if (c == 'a') {
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
        } else if (c == 'p') {
            char *end;
            long pad = strtol(v, &end, 10);
            if (*v == '\0' || *end != '\0' || pad < 0 || pad > 64) {
                snprintf(err, errlen, "--pad must be an integer in [0, 64], not '%s'", v);
                return -1;
            }
            opt->pad = (int)pad;
        } else if (c == 'f') {
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
        } else if (c == 'j') {
            opt->json = v;
        } else if (c == 'i') {
            char *end;
            long n = strtol(v, &end, 10);
            if (*v == '\0' || *end != '\0' || n < 1 || n > FT_MAX_NITER) {
                snprintf(err, errlen, "--iters must be an integer in [1, %d], not '%s'",
                         FT_MAX_NITER, v);
                return -1;
            }
            opt->iters = (int)n;
#ifdef FT_SMPI
        } else if (c == 's') {
            if (parse_costs(v, opt->sim_cost, err, errlen) != 0)
                return -1;
            *simulate = 1;
        } else if (c == 'o') {
            char *end;
            opt->put_overhead = strtod(v, &end);
            if (*v == '\0' || *end != '\0' || !(opt->put_overhead >= 0.0)) {
                snprintf(err, errlen, "--put-overhead must be seconds >= 0, not '%s'", v);
                return -1;
            }
#endif
        }
    }
    if (optind < argc) {
        snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    return 0;
}

static double mflops(const ft_class_t *c, int niter, double seconds)
{
    const double n = (double)c->nx * c->ny * c->nz;

    return seconds > 0.0
        ? 1e-6 * n * (14.8157 + 7.19641 * log(n) + (5.23518 + 7.21113 * log(n)) * niter)
              / seconds
        : 0.0;
}

typedef struct {
    double complex sums[FT_MAX_NITER];
    double         max_err;
    int            verified;
    double         time, comm_max, comm_mean;
    double         first;           /* twiddle, initial conditions, forward FFT */
    double         kind_s[FT_NKINDS];   /* computation by kind, mean over ranks */
} ft_result_t;

static int iterations(const ft_t *ft)
{
    return ft->opt.iters ? ft->opt.iters : ft->opt.cls->niter;
}

static double rel_err(double v, double ref)
{
    return fabs((v - ref) / ref);
}

/* The timed part of NPB FT: twiddle, initial conditions, forward FFT, then
 * evolve / inverse FFT / checksum for each iteration. */
static void run(ft_t *ft, ft_result_t *res)
{
    const ft_class_t *c = ft->opt.cls;
    const int niter = iterations(ft);

    /* Untimed pass that touches every array, plan and message path once
     * (a simulated run has no caches or plans to warm). */
    if (!ft->simulate) {
        ft_initial_conditions(ft);
        ft_fft3d(ft, &ft->fwd, ft->u2, 0);
        ft_fft3d(ft, &ft->inv, ft->u0, 0);
    }
    /* Also what lets the weft backend put into arrays that peers were
     * still transforming during the warm-up. */
    MPI_Barrier(ft->comm);

    ft->comm_time = 0.0;
    for (int k = 0; k < FT_NKINDS; k++)
        ft->kind_s[k] = ft->kind_units[k] = 0.0;
    const double t0 = MPI_Wtime();
    ft_compute_twiddle(ft);
    ft_initial_conditions(ft);
    ft_fft3d(ft, &ft->fwd, ft->u2, 0);
    const double first = MPI_Wtime() - t0;
    for (int t = 0; t < niter; t++) {
        /* u0 *= twiddle, then the inverse FFT of u0. */
        ft_fft3d(ft, &ft->inv, ft->u0, 1);
        res->sums[t] = ft_checksum(ft);
    }
    const double mine = MPI_Wtime() - t0;

    MPI_Allreduce(&mine, &res->time, 1, MPI_DOUBLE, MPI_MAX, ft->comm);
    MPI_Allreduce(&first, &res->first, 1, MPI_DOUBLE, MPI_MAX, ft->comm);
    MPI_Allreduce(&ft->comm_time, &res->comm_max, 1, MPI_DOUBLE, MPI_MAX, ft->comm);
    MPI_Allreduce(&ft->comm_time, &res->comm_mean, 1, MPI_DOUBLE, MPI_SUM, ft->comm);
    MPI_Allreduce(ft->kind_s, res->kind_s, FT_NKINDS, MPI_DOUBLE, MPI_SUM, ft->comm);
    res->comm_mean /= ft->nranks;
    for (int k = 0; k < FT_NKINDS; k++)
        res->kind_s[k] /= ft->nranks;

    /* A simulated run computed nothing: there is nothing to verify. */
    res->verified = !ft->simulate;
    res->max_err = 0.0;
    for (int t = 0; t < niter && !ft->simulate; t++) {
        const double er = rel_err(creal(res->sums[t]), c->ref[t][0]);
        const double ei = rel_err(cimag(res->sums[t]), c->ref[t][1]);
        res->max_err = fmax(res->max_err, fmax(er, ei));
        if (!(er <= FT_EPSILON && ei <= FT_EPSILON))
            res->verified = 0;
    }
}

static long long total_msgs(const ft_t *ft)
{
    return ft->fwd.msgs + iterations(ft) * ft->inv.msgs;
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
    printf(" Iterations         = %d%s\n", iterations(ft), ft->opt.iters ? " (--iters)" : "");
    printf(" Ranks              = %d\n", ft->nranks);
    printf(" Algorithm          = %s\n", ft->opt.alg);
    printf(" Padding            = %d\n", ft->opt.pad);
    report_planning(ft);
    for (int t = 0; t < iterations(ft) && !ft->simulate; t++)
        printf(" T = %2d   Checksum = %22.12e %22.12e\n", t + 1, creal(r->sums[t]),
               cimag(r->sums[t]));
    printf(" Max relative error = %.3e (limit %.0e)\n", r->max_err, FT_EPSILON);
    printf(" Time in seconds    = %.4f\n", r->time);
    printf(" Mop/s total        = %.2f\n", mflops(c, iterations(ft), r->time));
    printf(" Messages per rank  = %lld per forward, %lld per inverse transposition"
           " (%lld in all)\n", ft->fwd.msgs, ft->inv.msgs, total_msgs(ft));
    printf(" Message size       = %zu B forward, %zu B inverse\n", ft->fwd.msg_bytes,
           ft->inv.msg_bytes);
    printf(" Comm. init+compl.  = %.4f s max, %.4f s mean over ranks\n", r->comm_max,
           r->comm_mean);
    printf(" Computation        =");
    for (int k = 0; k < FT_NKINDS; k++)
        printf(" %s %.4f", ft_kind_names[k], r->kind_s[k]);
    printf(" s (mean over ranks)%s\n", ft->simulate ? ", SIMULATED" : "");
    printf(" Verification       = %s\n\n",
           ft->simulate ? "NOT CHECKED (computation simulated)"
                        : r->verified ? "VERIFIED" : "NOT VERIFIED");
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
    fprintf(f, "  \"iterations\": %d,\n  \"simulated\": %s,\n", iterations(ft),
            ft->simulate ? "true" : "false");
    fprintf(f, "  \"time_first_s\": %.9g,\n  \"time_per_iter_s\": %.9g,\n", r->first,
            (r->time - r->first) / iterations(ft));
    fprintf(f, "  \"compute_s\": {");
    for (int k = 0; k < FT_NKINDS; k++)
        fprintf(f, "%s\"%s\": %.9g", k ? ", " : "", ft_kind_names[k], r->kind_s[k]);
    fprintf(f, "},\n  \"compute_units\": {");
    for (int k = 0; k < FT_NKINDS; k++)
        fprintf(f, "%s\"%s\": %.9g", k ? ", " : "", ft_kind_names[k], ft->kind_units[k]);
    fprintf(f, "},\n");
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
    fprintf(f, "  \"time_s\": %.9g,\n  \"mflops\": %.6g,\n", r->time, mflops(c, iterations(ft), r->time));
    fprintf(f, "  \"comm_time_s\": {\"max\": %.9g, \"mean\": %.9g},\n", r->comm_max,
            r->comm_mean);
    fprintf(f, "  \"compute_time_s\": %.9g,\n", r->time - r->comm_mean);
    fprintf(f, "  \"messages\": {\"forward\": {\"count\": %lld, \"bytes\": %zu}, "
               "\"inverse\": {\"count\": %lld, \"bytes\": %zu}, \"total_per_rank\": %lld},\n",
            ft->fwd.msgs, ft->fwd.msg_bytes, ft->inv.msgs, ft->inv.msg_bytes, total_msgs(ft));
    fprintf(f, "  \"checksums\": [");
    for (int t = 0; t < iterations(ft) && !ft->simulate; t++)
        fprintf(f, "%s[%.15e, %.15e]", t ? ", " : "", creal(r->sums[t]), cimag(r->sums[t]));
    fprintf(f, "],\n  \"max_rel_err\": %.3e,\n", r->max_err);
    fprintf(f, "  \"verified\": %s\n}\n", r->verified ? "true" : "false");
    return fclose(f) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    ft_t ft = {0};
    char err[256] = "";
    const int bad_args = parse_args(argc, argv, &ft.opt, &ft.simulate, err, sizeof err) != 0;
    /* weft serves other threads' operations; MPI must allow that. */
#ifdef FT_SMPI
    const int want = MPI_THREAD_FUNNELED;
#else
    const int want = ft.opt.backend == &ft_backend_weft ? MPI_THREAD_MULTIPLE
                                                        : MPI_THREAD_FUNNELED;
#endif
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

    int status = res.verified || ft.simulate ? 0 : 1;
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
