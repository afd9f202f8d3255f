/* Helpers shared by the benchmarks (common.h); those that call weft's
 * runtime are in runtime.c. */
#include "common.h"

#include <mpi.h>
#include <errno.h>
#include <stdarg.h>
#include <ctype.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void bench_fail(const char *name, const char *what, weft_status_t st)
{
    fprintf(stderr, "%s: %s: %s (%s)\n", name, what, weft_strerror(st), weft_last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
}

void bench_mpi_start(int *argc, char ***argv, int *rank, int *nranks)
{
    int provided;

    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, nranks);
}

int bench_need_two(const char *name, int args_ok, int rank, int nranks, void (*usage)(void))
{
    if (args_ok && nranks == 2)
        return 0;
    if (rank == 0) {
        usage();
        if (nranks != 2)
            fprintf(stderr, "%s: needs exactly 2 ranks, got %d\n", name, nranks);
    }
    MPI_Finalize();
    return 2;
}

/* The reason the last bench_parse_opts call failed. */
static char opts_error[160];

const char *bench_opts_error(void)
{
    return opts_error;
}

/* A reason for refusing the command line: kept for bench_opts_error and
 * said on stderr by rank 0 (or by the process, before MPI starts). */
static int opts_fail(const char *fmt, ...)
{
    va_list ap;
    int initialized = 0, rank = 0;

    va_start(ap, fmt);
    vsnprintf(opts_error, sizeof(opts_error), fmt, ap);
    va_end(ap);
    MPI_Initialized(&initialized);
    if (initialized)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        fprintf(stderr, "%s\n", opts_error);
    return -1;
}

/* A positive finite number with nothing after it. */
static int parse_real(const char *text, double *dst)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(text, &end);
    if (end == text || *end != '\0' || errno != 0 || !(v > 0) || !isfinite(v))
        return -1;
    *dst = v;
    return 0;
}

/* A positive long with nothing after it. */
static int parse_positive(const char *text, long *dst)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(text, &end, 10);
    if (end == text || *end != '\0' || errno != 0 || v <= 0)
        return -1;
    *dst = v;
    return 0;
}

/* getopt_long does the scanning (long options only, "--name value" or
 * "--name=value", unambiguous prefixes); values are checked here.  Values
 * are stored only once the whole line is valid, so a refused line leaves
 * every default as it was. */
int bench_parse_opts(int argc, char **argv, const struct bench_opt *opts)
{
    struct option lo[BENCH_MAX_OPTS + 1];
    const char *given[BENCH_MAX_OPTS] = {0};
    /* '+': stop at the first word that is not an option (no reordering of
     * argv); ':' next: a missing value is told apart from an unknown
     * option; then the one-letter options ("-m"). */
    char shorts[3 + 2 * BENCH_MAX_OPTS + 1] = "+:";
    size_t ns = 2;
    int n = 0, nlong = 0, c;

    opts_error[0] = '\0';
    for (; opts[n].name != NULL; n++) {
        const char *name = opts[n].name;
        int one = name[0] == '-' && name[1] != '-' && name[1] != '\0' && name[2] == '\0';

        if (n == BENCH_MAX_OPTS || (!one && (strncmp(name, "--", 2) != 0 || name[2] == '\0')))
            return opts_fail("bench_parse_opts: option '%s' is not --name or -x, or one too many",
                             name);
        if (one) {
            shorts[ns++] = name[1];
            if (!opts[n].flag)
                shorts[ns++] = ':';
            shorts[ns] = '\0';
        } else {
            /* getopt_long returns 256 + the option's index */
            lo[nlong++] = (struct option){name + 2,
                                          opts[n].flag ? no_argument : required_argument, NULL,
                                          256 + n};
        }
    }
    lo[nlong] = (struct option){NULL, 0, NULL, 0};
    /* optind = 0 starts a new scan, as glibc documents */
    opterr = 0;
    optind = 0;
    while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
        int i = c - 256;

        /* optopt names a one-letter option (argv[optind - 1] may be a
         * cluster of them, or the next word); 0 for a long one */
        if (c == '?' && optopt > 0 && optopt < 256)
            return opts_fail("unknown option '-%c'", optopt);
        if (c == '?')
            return opts_fail("unknown or ambiguous option '%s'", argv[optind - 1]);
        if (c == ':' && optopt > 0 && optopt < 256)
            return opts_fail("option '-%c' needs a value", optopt);
        if (c == ':')
            return opts_fail("option '%s' needs a value", argv[optind - 1]);
        if (c < 256)
            for (i = 0; i < n && !(opts[i].name[1] == c && opts[i].name[2] == '\0'); i++)
                ;
        given[i] = opts[i].flag ? "" : optarg;
    }
    if (optind < argc)
        return opts_fail("unexpected argument '%s'", argv[optind]);
    for (int i = 0; i < n; i++) {
        long v;
        double r;

        if (given[i] == NULL || opts[i].flag || opts[i].text)
            continue;
        if (opts[i].real ? parse_real(given[i], &r) : parse_positive(given[i], &v))
            return opts_fail("%s '%s': not a positive %s", opts[i].name, given[i],
                             opts[i].real ? "number" : "integer");
    }
    for (int i = 0; i < n; i++) {
        if (given[i] == NULL)
            continue;
        if (opts[i].flag)
            *opts[i].flag = 1;
        else if (opts[i].text)
            *opts[i].text = given[i];
        else if (opts[i].real)
            (void)parse_real(given[i], opts[i].real);
        else
            (void)parse_positive(given[i], opts[i].value);
    }
    return 0;
}

int bench_breakdown_parse(int argc, char **argv, long max_lat_iters,
                          struct bench_breakdown_opts *o)
{
    const struct bench_opt opts[] = {
        {"--json", .text = &o->json},
        {"--iters", .value = &o->iters},
        {"--lat-iters", .value = &o->lat_iters},
        {"--batch", .value = &o->batch},
        {"--rounds", .value = &o->rounds},
        {NULL},
    };

    *o = (struct bench_breakdown_opts){NULL, 200000, 20000, 16, 5};
    if (bench_parse_opts(argc, argv, opts) != 0 || o->rounds > BENCH_BREAKDOWN_MAX_ROUNDS ||
        o->batch > o->iters || o->lat_iters > max_lat_iters)
        return -1;
    return 0;
}

long bench_breakdown_warmup(const struct bench_breakdown_opts *o)
{
    return o->iters / 4 < o->batch ? o->batch : o->iters / 4 + 1;
}

void bench_series_push(struct bench_series *s, double v)
{
    if (s->n < BENCH_BREAKDOWN_MAX_ROUNDS)
        s->v[s->n++] = v;
}

void bench_injection_push(struct bench_injection *in, int nkinds, const double *fig,
                          const double *chunk_ns, const double *regions, double kept, double calm,
                          double cycles)
{
    bench_series_push(&in->kept, kept);
    bench_series_push(&in->calm, calm);
    bench_series_push(&in->cycles, cycles);
    for (int kind = 0; kind < nkinds; kind++) {
        bench_series_push(&in->fig[kind], fig[kind]);
        bench_series_push(&in->chunk[kind], chunk_ns[kind]);
        bench_series_push(&in->regions[kind], regions[kind]);
    }
}

void bench_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(f, "\\%c", *c);
        else if (*c == '\n')
            fputs("\\n", f);
        else if (*c == '\t')
            fputs("\\t", f);
        else if (*c < 0x20 || *c == 0x7f)
            fprintf(f, "\\u%04x", *c);
        else
            fputc(*c, f);
    }
    fputc('"', f);
}

void bench_json_number(FILE *f, const char *fmt, double v)
{
    if (isfinite(v))
        fprintf(f, fmt, v);
    else
        fputs("null", f);
}

void bench_put_value(FILE *f, const char *name, double v, const char *sep)
{
    bench_json_string(f, name);
    fputs(": ", f);
    bench_json_number(f, "%.3f", v);
    fputs(sep, f);
}

void bench_put_list(FILE *f, const char *fmt, const double *v, int n)
{
    fprintf(f, "[");
    for (int i = 0; i < n; i++) {
        fprintf(f, "%s", i ? ", " : "");
        bench_json_number(f, fmt, v[i]);
    }
    fprintf(f, "]");
}

void bench_put_rounds(FILE *f, const char *name, const struct bench_series *s)
{
    bench_json_string(f, name);
    fputs(": ", f);
    bench_put_list(f, "%.3f", s->v, s->n);
}

double bench_timer_corrected(double fig, double regions, double library_ns, double now_ns)
{
    return fig + regions * (library_ns - now_ns);
}

int bench_parse_positive_list(const char *text, long *out, int max)
{
    int k = 0;
    const char *s = text;

    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);

        if (end == s || v < 1 || k == max || (*end && *end != ','))
            return -1;
        out[k++] = v;
        s = *end ? end + 1 : end;
    }
    return k;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void bench_sort(double *v, long n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
}

double bench_median(double *v, int n)
{
    bench_sort(v, n);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double bench_worst_median(double *v, int n)
{
    double mid = bench_median(v, n), worst;

    MPI_Allreduce(&mid, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

double bench_iq_mean(double *v, int n)
{
    double sum = 0;

    bench_sort(v, n);
    for (int i = n / 4; i < n - n / 4; i++)
        sum += v[i];
    return sum / (double)(n - 2 * (n / 4));
}

/* A new array of n zeros (at least one); exits when there is no memory. */
static double *new_doubles(long n)
{
    double *out = calloc((size_t)(n > 0 ? n : 1), sizeof(double));

    if (out == NULL) {
        fprintf(stderr, "weft bench: out of memory for %ld values\n", n);
        exit(2);
    }
    return out;
}

/* The values v[c] of the cycles kept (all when keep is NULL), in a new
 * array of *count. */
static double *kept_values(const double *v, const char *keep, long n, long *count)
{
    double *out = new_doubles(n);
    long k = 0;

    for (long c = 0; c < n; c++)
        if (keep == NULL || keep[c])
            out[k++] = v[c];
    *count = k;
    return out;
}

long bench_keep_speed(const double *observed, const char *calm, long n, double band, char *keep)
{
    long count, kept = 0;
    double *sorted = kept_values(observed, calm, n, &count), speed;

    if (count == 0) {
        free(sorted);
        sorted = kept_values(observed, NULL, n, &count);
        calm = NULL;
    }
    if (count == 0) {
        free(sorted);
        return 0;
    }
    bench_sort(sorted, count);
    speed = sorted[(count - 1) / 2];
    free(sorted);
    for (long c = 0; c < n; c++) {
        keep[c] = (calm == NULL || calm[c]) && observed[c] >= (1 - band) * speed &&
                  observed[c] <= (1 + band) * speed;
        kept += keep[c];
    }
    return kept;
}

double bench_median_kept(const double *v, const char *keep, long n)
{
    long count;
    double *values = kept_values(v, keep, n, &count),
           m = count > 0 ? bench_median(values, (int)count) : 0;

    free(values);
    return m;
}

double bench_median_calm(const double *v, const char *keep, const char *calm, long n)
{
    char *both = malloc(n > 0 ? (size_t)n : 1);
    long count = 0;
    double m;

    if (both == NULL) {
        fprintf(stderr, "bench: out of memory\n");
        exit(2);
    }
    for (long c = 0; c < n; c++) {
        both[c] = (keep == NULL || keep[c]) && (calm == NULL || calm[c]);
        count += both[c];
    }
    if (count == 0 && calm != NULL && n > 0 && memchr(calm, 1, (size_t)n) != NULL) {
        memcpy(both, calm, (size_t)n);   /* the calm chunks of every cycle */
        count = 1;
    }
    m = bench_median_kept(v, count > 0 ? both : keep, n);
    free(both);
    return m;
}

int bench_calm_enough(const char *calm, long stride, int first, int last, long n, long want)
{
    for (int k = first; k < last; k++) {
        long count = 0;

        for (long c = 0; c < n && count < want; c++)
            count += calm[k * stride + c] != 0;
        if (count < want)
            return 0;
    }
    return 1;
}

int bench_schedstat_wait(const char *text, size_t len, unsigned long long *ns)
{
    unsigned long long field[3];
    size_t i = 0;

    for (int f = 0; f < 3; f++) {
        unsigned long long v = 0;
        size_t start;

        while (f > 0 && i < len && text[i] == ' ')
            i++;
        start = i;
        for (; i < len && text[i] >= '0' && text[i] <= '9'; i++) {
            if (v > (ULLONG_MAX - (unsigned)(text[i] - '0')) / 10)
                return -1;
            v = 10 * v + (unsigned)(text[i] - '0');
        }
        if (i == start || (f < 2 && (i == len || text[i] != ' ')))
            return -1;
        field[f] = v;
    }
    if (i < len && text[i] == '\n')
        i++;
    if (i != len)
        return -1;
    *ns = field[1];
    return 0;
}

struct calm_id {
    int  pid;
    char host[64];
    char pidns[64];
};

/* Who this process is, to tell the ranks whose /proc entries it can read. */
static void calm_whoami(struct calm_id *me)
{
    ssize_t n;

    memset(me, 0, sizeof(*me));
    me->pid = (int)getpid();
    if (gethostname(me->host, sizeof(me->host) - 1) != 0)
        me->host[0] = '\0';
    n = readlink("/proc/self/ns/pid", me->pidns, sizeof(me->pidns) - 1);
    me->pidns[n > 0 ? n : 0] = '\0';
}

int bench_calm_open(struct bench_calm *s)
{
    struct calm_id me, *all;
    int nranks;

    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    all = calloc((size_t)nranks, sizeof(*all));
    if (all == NULL) {
        fprintf(stderr, "bench: out of memory\n");
        exit(2);
    }
    calm_whoami(&me);
    MPI_Allgather(&me, (int)sizeof(me), MPI_BYTE, all, (int)sizeof(me), MPI_BYTE, MPI_COMM_WORLD);
    s->n = 0;
    for (int r = 0; r < nranks && s->n < BENCH_CALM_MAX_RANKS; r++) {
        char path[64], text[128];
        unsigned long long ns;
        ssize_t len;
        int fd;

        if (me.pidns[0] == '\0' || strcmp(all[r].host, me.host) != 0 ||
            strcmp(all[r].pidns, me.pidns) != 0)
            continue;
        snprintf(path, sizeof(path), "/proc/%d/schedstat", all[r].pid);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
            continue;
        len = pread(fd, text, sizeof(text), 0);
        if (len <= 0 || bench_schedstat_wait(text, (size_t)len, &ns) != 0) {
            close(fd);
            continue;
        }
        s->fd[s->n++] = fd;
    }
    free(all);
    return s->n;
}

unsigned long long bench_calm_waited(const struct bench_calm *s)
{
    unsigned long long sum = 0, ns;
    char text[128];

    for (int i = 0; i < s->n; i++) {
        ssize_t len = pread(s->fd[i], text, sizeof(text), 0);

        if (len <= 0 || bench_schedstat_wait(text, (size_t)len, &ns) != 0)
            return 0;
        sum += ns;
    }
    return sum;
}

void bench_calm_close(struct bench_calm *s)
{
    for (int i = 0; i < s->n; i++)
        close(s->fd[i]);
    s->n = 0;
}

FILE *bench_json_open(const char *name, const char *path)
{
    FILE *f = path ? fopen(path, "w") : stdout;

    if (f == NULL) {
        fprintf(stderr, "%s: cannot write %s: %s\n", name, path, strerror(errno));
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return f;
}

void bench_json_close(FILE *f)
{
    if (f != stdout)
        fclose(f);
}

const char *bench_ucx_tls(void)
{
    /* weft's own setting first, as weft's UCX contexts read it */
    const char *tls = getenv("WEFT_UCX_TLS");

    if (tls == NULL)
        tls = getenv("UCX_TLS");

    return tls ? tls : "default";
}

void bench_json_head(FILE *f, const char *benchmark, int nranks, const char *transport)
{
    fputs("{\n  \"benchmark\": ", f);
    bench_json_string(f, benchmark);
    fprintf(f, ",\n  \"nranks\": %d,\n  \"transport\": ", nranks);
    bench_json_string(f, transport);
    fputs(",\n  \"ucx_tls\": ", f);
    bench_json_string(f, bench_ucx_tls());
    fputs(",\n", f);
}

void bench_breakdown_head(FILE *f, int nranks, const char *transport,
                          const struct bench_breakdown_opts *o, const char *statistic,
                          double ghz, double overhead_ns)
{
    bench_json_head(f, "breakdown", nranks, transport);
    fprintf(f, "  \"iters\": %ld,\n  \"lat_iters\": %ld,\n  \"rounds\": %ld,\n  \"statistic\": ",
            o->iters, o->lat_iters, o->rounds);
    bench_json_string(f, statistic);
    fputs(",\n  \"timer\": {\"tsc_ghz\": ", f);
    bench_json_number(f, "%.6f", ghz);
    fputs(", \"overhead_ns\": ", f);
    bench_json_number(f, "%.3f", overhead_ns);
    fputs("},\n", f);
}

void bench_weighted_ranks(const double *median, const double *count, double *out, int n)
{
    double *mine = new_doubles(4L * n), *sum = mine + 2 * n;

    for (int i = 0; i < n; i++) {
        mine[i] = count[i] > 0 ? median[i] * count[i] : 0;
        mine[n + i] = count[i];
    }
    MPI_Reduce(mine, sum, 2 * n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++)
        out[i] = sum[n + i] > 0 ? sum[i] / sum[n + i] : 0;
    free(mine);
}

void bench_points_json(FILE *f, const char *const *name, const weft_prof_stat_t *s, int n)
{
    fprintf(f, ",\n  \"points\": {");
    for (int i = 0; i < n; i++) {
        fprintf(f, "%s\n    ", i ? "," : "");
        bench_json_string(f, name[i]);
        fprintf(f, ": {\"count\": %llu, ", (unsigned long long)s[i].count);
        bench_put_value(f, "total_ns", s[i].total_ns, ", ");
        bench_put_value(f, "min_ns", s[i].min_ns, ", ");
        bench_put_value(f, "median_ns", s[i].median_ns, ", ");
        bench_put_value(f, "trimmed_mean_ns", s[i].trimmed_mean_ns, "}");
    }
    fprintf(f, "\n  }");
}

void bench_mpi_library(char *out, int len)
{
    char name[MPI_MAX_LIBRARY_VERSION_STRING];
    int  n, i;

    MPI_Get_library_version(name, &n);
    for (i = 0; i < n; i++)
        if (name[i] == '\n' || name[i] == '"' || name[i] == '\\' || name[i] == '\t')
            name[i] = ' ';
    while (n > 0 && name[n - 1] == ' ')
        name[--n] = '\0';
    snprintf(out, (size_t)len, "%.*s", n, name);
}

double bench_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- sizes and counts of a command line ---------------------------------- */

/* Who says what is wrong with the arguments: program name, and whether
 * this rank says it (every rank parses, one speaks). */
struct said {
    const char *name;
    int         say;
};

static int vsay(const char *name, int said, const char *fmt, va_list ap)
{
    if (said) {
        fprintf(stderr, "%s: ", name);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
    }
    return -1;
}

int bench_bad(const char *name, int said, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsay(name, said, fmt, ap);
    va_end(ap);
    return -1;
}

static int say(const struct said *w, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsay(w->name, w->say, fmt, ap);
    va_end(ap);
    return -1;
}

/* The size of option opt at *s, which ends at `stop` (',' or ':') or at the
 * end of the text: decimal digits and an optional K, M or G (either case:
 * 2^10, 2^20, 2^30), from 1 to `most` bytes.  Into *out, *s moved onto its
 * end; -1 (said) when it is not such a size. */
static int parse_size(const struct said *w, const char *opt, const char **s, char stop, size_t most, size_t *out)
{
    const char *p = *s;
    int len = (int)strcspn(p, (const char[]){stop, '\0'});
    unsigned long long v;
    unsigned shift = 0;
    int digits;
    char *end;

    if (len == 0)
        return say(w, "%s: an empty size", opt);
    if (*p == '-')
        return say(w, "%s: '%.*s' is negative", opt, len, p);
    if (*p < '0' || *p > '9')
        return say(w, "%s: '%.*s' is not a size (digits, then K, M or G)", opt, len, p);
    errno = 0;
    v = strtoull(p, &end, 10);
    digits = (int)(end - p);
    if (*end == 'K' || *end == 'k')
        shift = 10, end++;
    else if (*end == 'M' || *end == 'm')
        shift = 20, end++;
    else if (*end == 'G' || *end == 'g')
        shift = 30, end++;
    if (*end != '\0' && *end != stop) {
        int letters = digits;

        while (letters < len && isalpha((unsigned char)p[letters]))
            letters++;
        if (letters == len)
            return say(w, "%s: '%.*s' has an unknown suffix '%.*s' (K, M or G)", opt, len, p,
                       len - digits, p + digits);
        return say(w, "%s: '%.*s' is not a size (digits, then K, M or G)", opt, len, p);
    }
    if (v == 0)
        return say(w, "%s: '%.*s' is zero", opt, len, p);
    if (errno == ERANGE || v > (unsigned long long)most >> shift)
        return say(w, "%s: '%.*s' is more than %zu bytes, the most the benchmark's segment allows", opt, len, p, most);
    *out = (size_t)(v << shift);
    *s = end;
    return 0;
}

int bench_parse_size_list(const char *name, int said, const char *text, size_t most, size_t *out, int max)
{
    const struct said wsaid = {name, said}, *w = &wsaid;
    int n = 0;

    for (const char *s = text;; s++) {
        if (n == max)
            return say(w, "--sizes: more than %d sizes", max);
        if (parse_size(w, "--sizes", &s, ',', most, &out[n++]) != 0)
            return -1;
        if (*s == '\0')
            return n;
    }
}

int bench_parse_size_range(const char *name, int said, const char *text, size_t most, size_t *out, int max)
{
    const struct said wsaid = {name, said}, *w = &wsaid;
    const char *s = text;
    size_t lo, hi;
    int n = 0;

    if (strchr(text, ':') == NULL)
        return say(w, "-m: '%s' is not MIN:MAX", text);
    if (parse_size(w, "-m", &s, ':', most, &lo) != 0)
        return -1;
    s++;
    if (parse_size(w, "-m", &s, '\0', most, &hi) != 0)
        return -1;
    if (lo > hi)
        return say(w, "-m: MIN %zu is more than MAX %zu", lo, hi);
    for (size_t v = lo; v <= hi; v *= 2) {
        if (n == max)
            return say(w, "-m: more than %d sizes from %zu to %zu", max, lo, hi);
        out[n++] = v;
    }
    return n;
}

int bench_parse_count(const char *name, int said, const char *opt, const char *text, long *out)
{
    const struct said wsaid = {name, said}, *w = &wsaid;
    char *end;
    long v;

    if (*text == '-')
        return say(w, "%s: '%s' is negative", opt, text);
    errno = 0;
    v = strtol(text, &end, 10);
    if (*text < '0' || *text > '9' || *end != '\0' || errno != 0)
        return say(w, "%s: '%s' is not a count (0, 1, 2, ...)", opt, text);
    *out = v;
    return 0;
}
