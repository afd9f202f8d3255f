/*
 * ft.h -- NAS FT on weft: shared types of the benchmark.
 *
 * The 3-D grid is nx * ny * nz complex values, x varying fastest.  It is cut
 * in planes over the ranks (a 1-D layout), first along z, then, after a
 * global transposition, along y.  Every 3-D FFT is one *phase*: 1-D FFTs
 * along the two dimensions a rank holds in full, plane by plane, then the
 * transposition, then the 1-D FFTs along the dimension that was distributed.
 * The algorithms differ only in when the transposition's messages leave
 * (all at once, per slab, or per pencil) and in the library that moves them.
 */
#ifndef FT_H
#define FT_H

#include <complex.h>   /* before fftw3.h: fftw_complex becomes double _Complex */
#include <stddef.h>
#include <fftw3.h>
#include <mpi.h>

typedef fftw_complex ft_cplx;

/*
 * FT_SMPI: the build of tools/smpi, run under SimGrid SMPI.  There a run
 * may leave its computation out (--simulate) and charge each piece the
 * simulated time that the costs given say (smpi_execute), with its arrays
 * shared by all simulated ranks (SMPI_SHARED_MALLOC: their contents no
 * longer matter), so that class C at hundreds of ranks fits in one process.
 * Each FT_ALLOC is a call site of its own, as SMPI_SHARED_MALLOC wants.
 */
#ifdef FT_SMPI
#include <smpi/smpi.h>
#define FT_ALLOC(ft, n) ((ft)->simulate ? (ft_cplx *)SMPI_SHARED_MALLOC((n) * sizeof(ft_cplx)) \
                                        : fftw_alloc_complex(n))
#define FT_FREE(ft, p)                  \
    do {                                \
        if ((ft)->simulate)             \
            SMPI_SHARED_FREE(p);        \
        else                            \
            fftw_free(p);               \
    } while (0)
#else
#define FT_ALLOC(ft, n) fftw_alloc_complex(n)
#define FT_FREE(ft, p) fftw_free(p)
#endif

/*
 * The kinds of computation of a run, timed apart (the profile of the JSON
 * report) and, in a simulated run, charged apart.  The FFT kinds count in
 * flops (5 n log2 n per 1-D FFT of length n), the others in elements.
 */
enum {
    FT_K_PLANE,     /* 1-D FFTs along the rows' dimension a, strided, per source plane */
    FT_K_ROW,       /* 1-D FFTs along x, contiguous, per message's rows */
    FT_K_FINAL,     /* 1-D FFTs along p, strided, the whole destination */
    FT_K_EVOLVE,    /* spectrum *= twiddle */
    FT_K_INIT,      /* NPB's initial conditions */
    FT_K_TWIDDLE,   /* the twiddle factors */
    FT_NKINDS
};
/** "plane", "row", ...: the names of the kinds, in order. */
extern const char *const ft_kind_names[FT_NKINDS];

/* ---- problem classes (ft_classes.c) ----------------------------------- */

/** Iterations of the longest class (B and C). */
#define FT_MAX_NITER 20

typedef struct {
    const char   *name;
    int           nx, ny, nz, niter;   /* niter <= FT_MAX_NITER */
    const double (*ref)[2];   /* niter reference checksums (real, imaginary) */
} ft_class_t;

/** The class named name ("S", "W", "A", "B", "C"), or NULL. */
const ft_class_t *ft_class_find(const char *name);
/** "S, W, A, B, C": the names, for messages. */
const char *ft_class_names(void);

/* ---- NPB pseudo-random numbers (ft_random.c) -------------------------- */

#define FT_SEED 314159265.0
#define FT_A    1220703125.0     /* 5^13 */

/** x = a * x mod 2^46; returns x * 2^-46. */
double ft_randlc(double *x, double a);
/** n successive values of the stream x into y (x advanced by n steps). */
void ft_vranlc(size_t n, double *x, double a, double *y);
/** a^e mod 2^46. */
double ft_ipow46(double a, long long e);

/* ---- layouts and phases ------------------------------------------------ */

/**
 * A rank's part of the grid: nplanes planes (global indices plane0 ...),
 * each of nrows rows of nx contiguous values.  Strides are in elements.
 * "Plane-major" storage has plane_stride = nrows * row_stride; "row-major"
 * storage (plane_stride = row pitch) lets the rows of all local planes that
 * share a row index sit together, which is what makes a slab contiguous.
 */
typedef struct {
    int       nplanes, plane0, nrows;
    ptrdiff_t plane_stride, row_stride;
} ft_layout_t;

/** How the transposition's messages are cut. */
typedef enum {
    FT_GRAIN_EXCHANGE,   /* one block per peer, after all the planes */
    FT_GRAIN_SLABS,      /* one slab (a plane's rows for one peer) at a time */
    FT_GRAIN_PENCILS     /* one row at a time */
} ft_grain_t;

/**
 * One 3-D FFT.  Source planes p (global np of them) have rows a (na); the
 * destination planes are the rows a, cut over the ranks, and hold rows p.
 */
typedef struct {
    ft_layout_t  src, dst;
    int          unit_rows;       /* rows per message */
    fftw_plan    plane_fft;       /* along a, one source plane -> work */
    fftw_plan    row_fft;         /* along x, unit_rows rows of work -> sendbuf */
    fftw_plan    final_fft;       /* along p, the whole destination, in place */
    ft_cplx     *target;          /* destination array */
    void        *target_handle;   /* backend's handle of it (weft segment) */
    int          local_direct;    /* own rows written into target, not sent */
    long long    msgs;            /* messages sent per rank in this phase */
    size_t       msg_bytes;       /* size of each of them */
} ft_phase_t;

typedef struct ft ft_t;

/** A communication backend: MPI two-sided or weft one-sided. */
typedef struct {
    const char *name;
    /** Start the backend (after MPI_Init); 0 on success. */
    int  (*init)(ft_t *ft);
    void (*finalize)(ft_t *ft);
    /** Memory that receives a phase's transposition. */
    ft_cplx *(*alloc_target)(ft_t *ft, size_t n, void **handle);
    void (*free_target)(ft_t *ft, ft_cplx *buf, void *handle);
    /** Slabs/pencils: before a phase's first message (pre-post receives). */
    void (*phase_begin)(ft_t *ft, ft_phase_t *ph);
    /** Slabs/pencils: n elements at src go to offset dst_off of dest's target. */
    void (*send_unit)(ft_t *ft, ft_phase_t *ph, int dest, const ft_cplx *src,
                      size_t dst_off, size_t n);
    /** Slabs/pencils: complete every message of the phase, sent and received. */
    void (*phase_end)(ft_t *ft, ft_phase_t *ph);
    /** Exchange: the whole transposition of sendbuf, at once. */
    void (*exchange)(ft_t *ft, ft_phase_t *ph);
} ft_backend_t;

extern const ft_backend_t ft_backend_mpi;
extern const ft_backend_t ft_backend_rma;
#ifndef FT_SMPI
extern const ft_backend_t ft_backend_weft;
#endif

/** How the FFTW plans are made. */
typedef enum {
    FT_FFTW_WISDOM,     /* measured once per machine and shape, then imported */
    FT_FFTW_ESTIMATE,   /* FFTW_ESTIMATE: no measurement, slower plans */
    FT_FFTW_MEASURE,    /* FFTW_MEASURE on every run, nothing saved */
    FT_FFTW_PATIENT     /* FFTW_PATIENT on every run, nothing saved */
} ft_fftw_mode_t;

/** Options of a run. */
typedef struct {
    const ft_class_t   *cls;
    const ft_backend_t *backend;
    ft_grain_t          grain;
    const char         *alg;          /* "slabs-weft", ... */
    int                 pad;          /* extra elements per row */
    ft_fftw_mode_t      fftw;         /* planning */
    const char         *json;         /* report file, or NULL */
    int                 iters;        /* timed iterations, 0: the class's */
    double              sim_cost[FT_NKINDS];  /* --simulate: seconds per unit of each kind */
    double              put_overhead; /* --put-overhead: seconds charged per MPI_Put */
} ft_options_t;

#define FT_PATH_MAX 4096

/** What the planning did (rank 0's view). */
typedef struct {
    unsigned effort;             /* FFTW_ESTIMATE, FFTW_MEASURE or FFTW_PATIENT */
    char     path[FT_PATH_MAX];  /* wisdom file, "" when none */
    int      had_file;           /* a wisdom file was imported */
    int      imported;           /* the file's wisdom made every plan */
    int      saved;              /* new wisdom was written to the file */
    double   seconds;            /* planning time, slowest rank */
    int      candidates;         /* measured plan sets compared (0: none) */
    int      chosen;             /* the one kept */
    double   candidate_s[3];     /* each one's forward + inverse FFT, seconds */
} ft_planning_t;

struct ft {
    ft_options_t opt;
    MPI_Comm     comm;
    int          rank, nranks;
    int          nx, ny, nz, nx_pad;
    size_t       local_n;          /* elements of every local array */
    ft_phase_t   fwd, inv;
    ft_cplx     *u0;               /* spectrum (forward target, y-cut) */
    ft_cplx     *u2;               /* initial conditions, then inverse target (z-cut) */
    ft_cplx     *twiddle;          /* exp(ap * k^2) in u0's layout */
    ft_cplx     *work;             /* one source plane after its first FFT */
    ft_cplx     *sendbuf;          /* rows after their x FFT, grouped by peer */
    double       comm_time;        /* seconds inside communication calls */
    double       kind_s[FT_NKINDS];      /* seconds of each kind of computation */
    double       kind_units[FT_NKINDS];  /* its flops or elements */
    int          simulate;         /* computation charged, not done (FT_SMPI) */
    ft_planning_t wisdom;
    void        *backend_state;
};

/** Print a message (rank 0 or any rank), then abort the job. */
void ft_die(const ft_t *ft, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

/* ---- FFTW wisdom files (ft_wisdom.c) ----------------------------------- */

/** "estimate", "measure", "patient" or "wisdom". */
const char *ft_fftw_mode_name(ft_fftw_mode_t mode);
/** The wisdom file of this host, FFTW, shape and effort, its directory
 *  created (into ft->wisdom.path); NULL with a warning when there is none. */
const char *ft_wisdom_path(ft_t *ft);
/** Import the wisdom of path; 1 if imported, 0 (with a warning unless the
 *  file does not exist) otherwise. */
int ft_wisdom_import_file(ft_t *ft, const char *path);
/** Write wisdom to path atomically; 0 on success, -1 with a warning. */
int ft_wisdom_save(ft_t *ft, const char *path, const char *wisdom);

/* ---- the benchmark (ft_fft.c) ------------------------------------------- */

/** Allocate the arrays and make the FFTW plans.  0 on success. */
int  ft_setup(ft_t *ft);
void ft_teardown(ft_t *ft);
/** NPB's initial conditions in u2 (the forward phase's source). */
void ft_initial_conditions(ft_t *ft);
/** twiddle = exp(-4 alpha pi^2 (i'^2 + j'^2 + k'^2)), i' the folded index. */
void ft_compute_twiddle(ft_t *ft);
/** One 3-D FFT: ph->target = FFT(src); with evolve, src *= twiddle first
 *  (plane by plane, as the FFT reaches each plane; src is then changed). */
void ft_fft3d(ft_t *ft, ft_phase_t *ph, ft_cplx *src, int evolve);
/** NPB's checksum of the inverse transform (collective; divided by ntotal). */
double complex ft_checksum(ft_t *ft);

#endif /* FT_H */
