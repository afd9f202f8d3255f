/*
 * ft_wisdom.c -- FFTW plans that are measured once per machine and problem
 * shape, then reused.
 *
 * Measured plans (FFTW_MEASURE) are 1.5-2x faster than estimated ones here,
 * but take seconds to make.  FFTW can save what it learned ("wisdom") and
 * build the same plans again in milliseconds, so the default is: rank 0
 * imports the wisdom file of this host, FFTW version and shape if there is
 * one, plans (measuring only what the file lacks), saves the wisdom when it
 * learned something, and broadcasts it; the other ranks import it and make
 * the same plans without measuring.  One rank measuring also keeps the ranks
 * from measuring against each other on shared cores.
 *
 * Wisdom is only valid for the FFTW build and CPU that made it, hence the
 * hostname and FFTW version in the file name.  The file is written to a
 * temporary name and renamed into place, so a concurrent job reads the old
 * file or the new one, never half of one; a file that FFTW cannot parse is
 * reported and replaced, never fatal.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ft.h"

/* Rank 0's warnings: the run goes on with fresh plans. */
static void warn(const ft_t *ft, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void warn(const ft_t *ft, const char *fmt, ...)
{
    va_list ap;

    if (ft->rank != 0)
        return;
    fprintf(stderr, "ft: warning: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* Keep [A-Za-z0-9._-] of s, so that a hostname or version string cannot
 * put a '/' or a space in the file name. */
static void append_safe(char *buf, size_t len, const char *s)
{
    size_t n = strlen(buf);

    for (; *s && n + 1 < len; s++)
        buf[n++] = (char)((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                                  (*s >= '0' && *s <= '9') || *s == '.' || *s == '-'
                              ? *s : '_');
    buf[n] = '\0';
}

/* $WEFT_FFTW_WISDOM, else $XDG_CACHE_HOME/weft, else ~/.cache/weft. */
static int wisdom_dir(char *buf, size_t len)
{
    const char *dir = getenv("WEFT_FFTW_WISDOM"), *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int n;

    if (dir && *dir)
        n = snprintf(buf, len, "%s", dir);
    else if (xdg && *xdg)
        n = snprintf(buf, len, "%s/weft", xdg);
    else if (home && *home)
        n = snprintf(buf, len, "%s/.cache/weft", home);
    else
        return -1;
    return n > 0 && (size_t)n < len ? 0 : -1;
}

/* mkdir -p: every missing component of path. */
static int make_dirs(char *path)
{
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        const char c = *p;
        *p = '\0';
        const int rc = mkdir(path, 0777);
        *p = c;
        if (rc != 0 && errno != EEXIST)
            return -1;
        if (c == '\0')
            return 0;
    }
}

const char *ft_wisdom_path(ft_t *ft)
{
    char dir[FT_PATH_MAX - 160], host[64] = "";
    char *path = ft->wisdom.path;

    if (wisdom_dir(dir, sizeof dir) != 0) {
        warn(ft, "no directory for FFTW wisdom (set WEFT_FFTW_WISDOM or HOME);"
                 " plans are measured and not saved");
        return NULL;
    }
    if (make_dirs(dir) != 0) {
        warn(ft, "cannot create %s (%s); plans are measured and not saved", dir,
             strerror(errno));
        return NULL;
    }
    gethostname(host, sizeof host - 1);
    /* ft-<host>-<fftw version>-<nx>x<ny>x<nz>-np<P>-pad<N>-<layout>-<effort>.wisdom:
     * the plans depend on the local shape, hence on P and the padding, and
     * on whether the destination is cut in slabs or pencils. */
    snprintf(path, FT_PATH_MAX, "%s/ft-", dir);
    append_safe(path, FT_PATH_MAX, host);
    append_safe(path, FT_PATH_MAX, "-");
    append_safe(path, FT_PATH_MAX, fftw_version);
    char shape[128];
    snprintf(shape, sizeof shape, "-%dx%dx%d-np%d-pad%d-%s-%s.wisdom", ft->nx, ft->ny, ft->nz,
             ft->nranks, ft->opt.pad, ft->opt.grain == FT_GRAIN_PENCILS ? "pencils" : "slabs",
             ft->wisdom.effort == FFTW_PATIENT ? "patient" : "measure");
    append_safe(path, FT_PATH_MAX, shape);
    return path;
}

/* The whole file as a string, or NULL (absent: *absent set). */
static char *read_file(const char *path, int *absent)
{
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    long size;

    *absent = !f && errno == ENOENT;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (text = malloc((size_t)size + 1)) != NULL) {
        if (fread(text, 1, (size_t)size, f) == (size_t)size) {
            text[size] = '\0';
        } else {
            free(text);
            text = NULL;
        }
    }
    fclose(f);
    return text;
}

int ft_wisdom_import_file(ft_t *ft, const char *path)
{
    int absent;
    char *text = read_file(path, &absent);

    if (!text) {
        if (!absent)
            warn(ft, "cannot read FFTW wisdom %s (%s); measuring the plans afresh", path,
                 strerror(errno));
        return 0;
    }
    const int ok = fftw_import_wisdom_from_string(text);
    free(text);
    if (!ok) {
        warn(ft, "FFTW cannot use the wisdom in %s (corrupt, or another FFTW made it);"
                 " measuring the plans afresh and replacing it", path);
        fftw_forget_wisdom();
    }
    return ok;
}

int ft_wisdom_save(ft_t *ft, const char *path, const char *wisdom)
{
    char tmp[FT_PATH_MAX + 32];
    const size_t n = strlen(wisdom);

    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    int ok = f != NULL;
    if (ok) {
        ok = fwrite(wisdom, 1, n, f) == n;
        ok = (fclose(f) == 0) && ok;
    }
    /* rename() replaces the old file in one step: readers see one or the other. */
    if (ok && rename(tmp, path) == 0)
        return 0;
    warn(ft, "cannot save FFTW wisdom to %s (%s); the next run measures again", path,
         strerror(errno));
    if (f)
        unlink(tmp);
    return -1;
}

const char *ft_fftw_mode_name(ft_fftw_mode_t mode)
{
    switch (mode) {
    case FT_FFTW_ESTIMATE: return "estimate";
    case FT_FFTW_MEASURE:  return "measure";
    case FT_FFTW_PATIENT:  return "patient";
    case FT_FFTW_WISDOM:   break;
    }
    return "wisdom";
}
