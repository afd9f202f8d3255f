/* Profiling: WEFT_PROFILE / WEFT_PROFILE_FILE at init and finalize, and
 * the public weft_prof_* calls over the prof layer (checks and errors). */
#include "runtime.h"
#include "prof/prof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DEFAULT_FILE "weft-profile-%r.json"

/* WEFT_PROFILE_FILE as read at init; written at finalize. */
static char profile_file[4096];

static weft_status_t parse(const char *what, const char *points, uint32_t *mask)
{
    int    bad = weft__prof_parse(points, mask);
    char   names[WEFT__PROF_NPOINTS * 16] = "";
    size_t len = 0;

    if (bad == 0)
        return WEFT_OK;
    for (int i = 0; i < WEFT__PROF_NPOINTS && len < sizeof(names); i++)
        len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", i ? ", " : "",
                                weft__prof_names[i]);
    return weft__error(WEFT_ERR_CONFIG, what, "unknown point '%.*s' in '%.128s' (points: %s; or "
                       "1/all, 0)", (int)strcspn(points + bad - 1, ","), points + bad - 1, points,
                       names);
}

static weft_status_t select_mask(const char *fn, uint32_t mask)
{
    if (mask != 0 && !WEFT__PROF_TRACE)
        return weft__error(WEFT_ERR_UNSUPPORTED, fn,
                           "this weft was built without trace points (CMake option WEFT_PROFILE=OFF)");
    if (weft__prof_select(mask) != 0)
        return weft__error(WEFT_ERR_UNSUPPORTED, fn, "this CPU has no invariant TSC");
    return WEFT_OK;
}

weft_status_t weft__profile_start(void)
{
    const char *points = getenv("WEFT_PROFILE"), *file = getenv("WEFT_PROFILE_FILE");
    uint32_t mask;
    weft_status_t st;

    profile_file[0] = '\0';
    if (points == NULL)
        return WEFT_OK;
    if ((st = parse("WEFT_PROFILE", points, &mask)) != WEFT_OK ||
        (st = select_mask("WEFT_PROFILE", mask)) != WEFT_OK)
        return st;
    if (file == NULL || file[0] == '\0')
        file = DEFAULT_FILE;
    if (strlen(file) >= sizeof(profile_file))
        return weft__error(WEFT_ERR_CONFIG, "WEFT_PROFILE_FILE", "path of %zu characters is too long",
                           strlen(file));
    if (mask != 0)
        strcpy(profile_file, file);
    return WEFT_OK;
}

weft_status_t weft__profile_finish(int rank)
{
    char path[sizeof(profile_file) + 16];
    const char *r = strstr(profile_file, "%r");

    if (profile_file[0] == '\0')
        return WEFT_OK;
    if (r != NULL)
        snprintf(path, sizeof(path), "%.*s%d%s", (int)(r - profile_file), profile_file, rank, r + 2);
    else
        snprintf(path, sizeof(path), "%s", profile_file);
    return weft_prof_write(path, rank);
}

weft_status_t weft_prof_select(const char *points)
{
    uint32_t mask;
    weft_status_t st;

    if (points == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "points is NULL");
    if ((st = parse(__func__, points, &mask)) != WEFT_OK)
        return st;
    return select_mask(__func__, mask);
}

weft_status_t weft_prof_reset(void)
{
    weft__prof_reset();
    return WEFT_OK;
}

weft_status_t weft_prof_stat(const char *point, weft_prof_stat_t *out)
{
    struct weft__prof_stat s;

    if (point == NULL || out == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "%s is NULL", point ? "out" : "point");
    for (int i = 0; i < WEFT__PROF_NPOINTS; i++) {
        if (strcasecmp(point, weft__prof_names[i]) != 0)
            continue;
        weft__prof_stat(i, &s);
        out->count = s.count;
        out->total_ns = s.total_ns;
        out->min_ns = s.min_ns;
        out->median_ns = s.median_ns;
        out->trimmed_mean_ns = s.trimmed_ns;
        return WEFT_OK;
    }
    return weft__error(WEFT_ERR_CONFIG, __func__, "unknown point '%.64s'", point);
}

weft_status_t weft_prof_timer(double *tsc_ghz, double *overhead_ns)
{
    double g, o;

    if (tsc_ghz == NULL || overhead_ns == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "%s is NULL",
                           tsc_ghz ? "overhead_ns" : "tsc_ghz");
    weft__prof_timer(&g, &o);
    if (g == 0)
        return weft__error(WEFT_ERR_NOT_INIT, __func__,
                           "the timer is calibrated by the first selection (weft_prof_select)");
    *tsc_ghz = g;
    *overhead_ns = o;
    return WEFT_OK;
}

weft_status_t weft_prof_write(const char *path, int rank)
{
    FILE *f;
    int bad;

    if (path == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "path is NULL");
    if ((f = fopen(path, "w")) == NULL)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "cannot write %.256s", path);
    bad = weft__prof_write(f, rank);
    if (fclose(f) != 0 || bad)
        return weft__error(WEFT_ERR_INVALID_ARG, __func__, "writing %.256s failed", path);
    return WEFT_OK;
}
