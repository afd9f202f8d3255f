/*
 * ft_fft.c -- the computation of NAS FT and the one transposition routine
 * that every algorithm shares.
 *
 * A phase (ft_phase_t) takes a grid cut in planes p and produces the same
 * grid cut in planes a.  For each local source plane it runs the 1-D FFTs
 * along a (strided), then the 1-D FFTs along x row by row, writing each row
 * straight into the send buffer at the place of its destination rank: the
 * local transposition of NPB costs no extra pass.  As soon as a message's
 * rows are computed (slabs, pencils) the backend sends it; the exchange
 * algorithm sends everything at the end.  Once all rows have arrived, the
 * 1-D FFTs along p finish the 3-D transform in place.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ft.h"

#define FT_ALPHA 1.0e-6
#define FT_PI    3.141592653589793238

const char *const ft_kind_names[FT_NKINDS] = {"plane", "row", "final", "evolve", "init", "twiddle"};

/* The flops of count 1-D FFTs of length n, NPB's and FFTW's convention. */
static double fft_flops(int n, double count)
{
    return 5.0 * n * log2((double)n) * count;
}

/* Charge units of kind in a simulated run: the simulated clock advances by
 * their cost, nothing is computed. */
static void simulate(ft_t *ft, int kind, double units)
{
    ft->kind_units[kind] += units;
#ifdef FT_SMPI
    const double s = units * ft->opt.sim_cost[kind];
    smpi_execute(s);
    ft->kind_s[kind] += s;
#endif
}

/* Record units of kind that took the seconds since t0 (a real run). */
static void account(ft_t *ft, int kind, double units, double t0)
{
    ft->kind_units[kind] += units;
    ft->kind_s[kind] += MPI_Wtime() - t0;
}

/*
 * Plane-major: plane, row, x.  Row-major: row, plane, x, so that the local
 * planes' rows with one row index form one contiguous slab.
 */
static ft_layout_t make_layout(int nplanes, int plane0, int nrows, int pitch, int plane_major)
{
    ft_layout_t l = {.nplanes = nplanes, .plane0 = plane0, .nrows = nrows};

    if (plane_major) {
        l.row_stride = pitch;
        l.plane_stride = (ptrdiff_t)nrows * pitch;
    } else {
        l.plane_stride = pitch;
        l.row_stride = (ptrdiff_t)nplanes * pitch;
    }
    return l;
}

static size_t offset_of(const ft_layout_t *l, int plane, int row, int x)
{
    return (size_t)((plane - l->plane0) * l->plane_stride + row * l->row_stride + x);
}

static int plane_owned(const ft_layout_t *l, int plane)
{
    return plane >= l->plane0 && plane < l->plane0 + l->nplanes;
}

static fftw_plan plan_dft(int n, ptrdiff_t is, ptrdiff_t os, int nloops,
                          const fftw_iodim *loops, ft_cplx *in, ft_cplx *out,
                          int sign, unsigned flags)
{
    const fftw_iodim dim = {.n = n, .is = (int)is, .os = (int)os};

    return fftw_plan_guru_dft(1, &dim, nloops, loops, in, out, sign, flags);
}

/*
 * Plans of one phase.  The destination keeps the source layout's pitch, so
 * a message of several rows is as contiguous at the target as in sendbuf.
 */
static int make_phase(ft_t *ft, ft_phase_t *ph, int sign, ft_layout_t src,
                      ft_cplx *src_buf, ft_cplx *target, void *target_handle, unsigned flags)
{
    const int pitch = ft->nx_pad, np = src.nplanes * ft->nranks, na = src.nrows;
    const int nal = na / ft->nranks;
    /* Pencils: each destination plane in one piece, so that the last FFTs
     * stride by one row.  Exchange and slabs: the rows of a slab together,
     * so that a slab (and a whole exchange block) is one message. */
    const int plane_major = ft->opt.grain == FT_GRAIN_PENCILS;

    ph->src = src;
    ph->dst = make_layout(nal, ft->rank * nal, np, pitch, plane_major);
    ph->unit_rows = ft->opt.grain == FT_GRAIN_PENCILS ? 1 : nal;
    ph->target = target;
    ph->target_handle = target_handle;
    if (ft->opt.grain == FT_GRAIN_EXCHANGE) {
        ph->msgs = ft->nranks;
        ph->msg_bytes = (size_t)src.nplanes * nal * pitch * sizeof(ft_cplx);
    } else {
        ph->msgs = (long long)ft->nranks * src.nplanes * (nal / ph->unit_rows);
        ph->msg_bytes = (size_t)ph->unit_rows * pitch * sizeof(ft_cplx);
    }

    if (ft->simulate) {
        ph->local_direct = 1;
        return 0;
    }
    /* Along a: nx strided transforms of one plane; the source is kept
     * (the inverse phase reads the spectrum u0, which must survive). */
    const fftw_iodim along_x = {.n = ft->nx, .is = 1, .os = 1};
    ph->plane_fft = plan_dft(na, src.row_stride, pitch, 1, &along_x, src_buf, ft->work,
                             sign, flags | FFTW_PRESERVE_INPUT);
    /* Along x: the rows of one message, from work into sendbuf. */
    const fftw_iodim rows = {.n = ph->unit_rows, .is = pitch, .os = pitch};
    ph->row_fft = plan_dft(ft->nx, 1, 1, 1, &rows, ft->work, ft->sendbuf, sign,
                           flags | FFTW_DESTROY_INPUT);
    /* Along p: every destination plane, in place. */
    const fftw_iodim dst_loops[2] = {
        {.n = nal, .is = (int)ph->dst.plane_stride, .os = (int)ph->dst.plane_stride},
        {.n = ft->nx, .is = 1, .os = 1},
    };
    ph->final_fft = plan_dft(np, ph->dst.row_stride, ph->dst.row_stride, 2, dst_loops,
                             target, target, sign, flags);
    /* A rank's own rows can be written by the x FFTs straight into the
     * target when every such row is as aligned as the rows of sendbuf the
     * plan was made for (FFTW's rule for executing a plan on new arrays);
     * with the padding of an odd pitch they may not be, and then they take
     * the message path like everyone else's. */
    ph->local_direct = 1;
    for (int pl = 0; pl < src.nplanes && ph->local_direct; pl++)
        for (int al = 0; al < nal; al += ph->unit_rows) {
            const ft_cplx *own = target + al * ph->dst.plane_stride +
                                 (src.plane0 + pl) * ph->dst.row_stride;
            const ft_cplx *buf = ft->sendbuf +
                                 (((size_t)ft->rank * src.nplanes + pl) * nal + al) * pitch;
            if (fftw_alignment_of((double *)own) != fftw_alignment_of((double *)buf)) {
                ph->local_direct = 0;
                break;
            }
        }
    return ph->plane_fft && ph->row_fft && ph->final_fft ? 0 : -1;
}

static void destroy_phase(ft_phase_t *ph)
{
    fftw_plan plans[] = {ph->plane_fft, ph->row_fft, ph->final_fft};

    for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++)
        if (plans[i])
            fftw_destroy_plan(plans[i]);
    ph->plane_fft = ph->row_fft = ph->final_fft = NULL;
}

/* Both phases' plans; 0 on success, -1 (and no plan left) on failure, which
 * with FFTW_WISDOM_ONLY means that the wisdom lacks one of them. */
static int make_plans(ft_t *ft, unsigned flags)
{
    const ft_class_t *c = ft->opt.cls;
    const int P = ft->nranks;
    /* NPB's sign convention for its forward transform is FFTW's backward
     * (exponent +i); the inverse of the benchmark is FFTW's forward. */
    const ft_layout_t z_cut = make_layout(c->nz / P, ft->rank * (c->nz / P), c->ny,
                                          ft->nx_pad, 1);

    if (make_phase(ft, &ft->fwd, FFTW_BACKWARD, z_cut, ft->u2, ft->u0, ft->fwd.target_handle,
                   flags) == 0 &&
        make_phase(ft, &ft->inv, FFTW_FORWARD, ft->fwd.dst, ft->u0, ft->u2,
                   ft->inv.target_handle, flags) == 0)
        return 0;
    destroy_phase(&ft->fwd);
    destroy_phase(&ft->inv);
    return -1;
}

/* Plans from a wisdom string, on every rank (collective): 0 if every rank
 * made them.  A rank whose arrays are aligned differently from rank 0's
 * misses the wisdom and measures its own plan: slower to plan, not wrong. */
static int plans_from(ft_t *ft, const char *wisdom)
{
    int rc, all;

    destroy_phase(&ft->fwd);
    destroy_phase(&ft->inv);
    fftw_forget_wisdom();
    rc = fftw_import_wisdom_from_string(wisdom) ? make_plans(ft, ft->wisdom.effort) : -1;
    MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, ft->comm);
    return all;
}

/* Seconds of a forward and an inverse 3-D FFT with the current plans, on
 * NPB's initial conditions (not on what planning left in the arrays, whose
 * denormals or infinities could time differently), slowest rank. */
static double time_fft_pair(ft_t *ft)
{
    double mine, all;

    ft_initial_conditions(ft);
    /* Also orders this pair's puts after the previous pair's reads. */
    MPI_Barrier(ft->comm);
    const double t0 = MPI_Wtime();
    ft_fft3d(ft, &ft->fwd, ft->u2, 0);
    ft_fft3d(ft, &ft->inv, ft->u0, 0);
    mine = MPI_Wtime() - t0;
    MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, ft->comm);
    return all;
}

/* Rank 0's candidate wisdom strings: the file's when it makes every plan,
 * else n independent measurements.  Returns how many (0 on failure). */
static int make_candidates(ft_t *ft, char **cand, int n)
{
    ft_planning_t *w = &ft->wisdom;
    const char *path = ft->opt.fftw == FT_FFTW_WISDOM ? ft_wisdom_path(ft) : NULL;

    w->had_file = path && ft_wisdom_import_file(ft, path);
    w->imported = w->had_file && make_plans(ft, w->effort | FFTW_WISDOM_ONLY) == 0;
    if (w->imported)
        n = 1;
    for (int c = 0; c < n; c++) {
        /* Forgetting makes each measurement independent of the last. */
        if (!w->imported) {
            fftw_forget_wisdom();
            if (make_plans(ft, w->effort) != 0)
                return 0;
        }
        cand[c] = fftw_export_wisdom_to_string();
        destroy_phase(&ft->fwd);
        destroy_phase(&ft->inv);
        if (!cand[c])
            return 0;
    }
    return n;
}

/*
 * Estimate: every rank plans on its own.  Otherwise rank 0 plans (from the
 * wisdom file when there is one) and broadcasts its wisdom, from which the
 * other ranks make the same plans without measuring.  Collective.
 *
 * When the wisdom is made (no usable file), FFTW's measurements are a
 * benchmark of each 1-D transform alone, and on a shared machine a noisy
 * one: two measurements of one shape here gave plans whose 3-D FFTs
 * differed by tens of per cent.  A file keeps its plans for good, so the
 * wisdom is chosen among FT_WISDOM_CANDIDATES independent measurements by
 * what matters: the time of a forward and an inverse 3-D FFT, every rank
 * computing and communicating, best of FT_WISDOM_ROUNDS alternating rounds.
 */
#define FT_WISDOM_CANDIDATES 3
#define FT_WISDOM_ROUNDS     2

static int plan(ft_t *ft)
{
    const ft_fftw_mode_t mode = ft->opt.fftw;
    ft_planning_t *w = &ft->wisdom;
    const double t0 = MPI_Wtime();
    char *cand[FT_WISDOM_CANDIDATES] = {NULL};
    int n = 0, rc = -1;

    w->effort = mode == FT_FFTW_ESTIMATE ? FFTW_ESTIMATE
              : mode == FT_FFTW_PATIENT  ? FFTW_PATIENT : FFTW_MEASURE;
    if (mode == FT_FFTW_ESTIMATE) {
        rc = make_plans(ft, FFTW_ESTIMATE);
        goto out;
    }
    if (ft->rank == 0)
        n = make_candidates(ft, cand, mode == FT_FFTW_WISDOM ? FT_WISDOM_CANDIDATES : 1);
    MPI_Bcast(&n, 1, MPI_INT, 0, ft->comm);
    for (int c = 0; c < n; c++) {
        long long len = ft->rank == 0 ? (long long)strlen(cand[c]) : 0;

        MPI_Bcast(&len, 1, MPI_LONG_LONG, 0, ft->comm);
        if (ft->rank != 0 && !(cand[c] = fftw_malloc((size_t)len + 1)))
            ft_die(ft, "ft: rank %d: out of memory for FFTW wisdom\n", ft->rank);
        MPI_Bcast(cand[c], (int)len + 1, MPI_CHAR, 0, ft->comm);
    }
    if (n == 0)
        goto out;

    int best = 0;
    if (n > 1) {
        for (int c = 0; c < n; c++)
            w->candidate_s[c] = HUGE_VAL;
        for (int round = 0; round < FT_WISDOM_ROUNDS; round++)
            for (int i = 0; i < n; i++) {
                const int c = round % 2 ? n - 1 - i : i;
                if (plans_from(ft, cand[c]) != 0)
                    goto out;
                w->candidate_s[c] = fmin(w->candidate_s[c], time_fft_pair(ft));
            }
        /* The times are the allreduced ones: every rank picks the same. */
        for (int c = 1; c < n; c++)
            if (w->candidate_s[c] < w->candidate_s[best])
                best = c;
        w->candidates = n;
        w->chosen = best;
    }
    rc = plans_from(ft, cand[best]);
    if (rc == 0 && ft->rank == 0 && mode == FT_FFTW_WISDOM && !w->imported && w->path[0]) {
        /* A file that made only some of the plans (arrays of another
         * alignment, from the other backend) keeps what it had: its wisdom
         * is imported again beside the chosen set's, and both are saved. */
        char *merged = w->had_file && ft_wisdom_import_file(ft, w->path)
                           ? fftw_export_wisdom_to_string() : NULL;
        w->saved = ft_wisdom_save(ft, w->path, merged ? merged : cand[best]) == 0;
        if (merged)
            fftw_free(merged);
    }
out:
    for (int c = 0; c < FT_WISDOM_CANDIDATES; c++)
        if (cand[c])
            fftw_free(cand[c]);
    const double mine = MPI_Wtime() - t0;
    MPI_Allreduce(&mine, &w->seconds, 1, MPI_DOUBLE, MPI_MAX, ft->comm);
    return rc;
}

int ft_setup(ft_t *ft)
{
    const ft_class_t *c = ft->opt.cls;
    const ft_backend_t *be = ft->opt.backend;
    const int P = ft->nranks;

    ft->nx = c->nx;
    ft->ny = c->ny;
    ft->nz = c->nz;
    ft->nx_pad = c->nx + ft->opt.pad;
    ft->local_n = (size_t)ft->nx_pad * c->ny * (c->nz / P);

    void *u0_handle = NULL, *u2_handle = NULL;
    ft->u0 = be->alloc_target(ft, ft->local_n, &u0_handle);
    ft->u2 = be->alloc_target(ft, ft->local_n, &u2_handle);
    ft->twiddle = FT_ALLOC(ft, ft->local_n);
    ft->sendbuf = FT_ALLOC(ft, ft->local_n);
    ft->work = FT_ALLOC(ft, (size_t)ft->nx_pad * (c->ny > c->nz ? c->ny : c->nz));

    ft->fwd.target_handle = u0_handle;
    ft->inv.target_handle = u2_handle;
    if (!ft->u0 || !ft->u2 || !ft->twiddle || !ft->sendbuf || !ft->work)
        return -1;
    if (ft->simulate) {
        /* No FFT runs: the phases' layouts and message counts without plans. */
        const ft_layout_t z_cut = make_layout(c->nz / P, ft->rank * (c->nz / P), c->ny,
                                              ft->nx_pad, 1);
        make_phase(ft, &ft->fwd, FFTW_BACKWARD, z_cut, NULL, ft->u0, u0_handle, 0);
        make_phase(ft, &ft->inv, FFTW_FORWARD, ft->fwd.dst, NULL, ft->u2, u2_handle, 0);
        return 0;
    }
    if (plan(ft) != 0)
        return -1;

    /* Planning with FFTW_MEASURE scribbles on the arrays; the padding is
     * never computed on but travels in messages, so make it defined. */
    ft_cplx *arrays[] = {ft->u0, ft->u2, ft->twiddle, ft->sendbuf};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        memset(arrays[i], 0, ft->local_n * sizeof(ft_cplx));
    return 0;
}

void ft_teardown(ft_t *ft)
{
    const ft_backend_t *be = ft->opt.backend;

    destroy_phase(&ft->fwd);
    destroy_phase(&ft->inv);
    if (ft->u0)
        be->free_target(ft, ft->u0, ft->fwd.target_handle);
    if (ft->u2)
        be->free_target(ft, ft->u2, ft->inv.target_handle);
    FT_FREE(ft, ft->twiddle);
    FT_FREE(ft, ft->sendbuf);
    FT_FREE(ft, ft->work);
}

void ft_initial_conditions(ft_t *ft)
{
    const ft_layout_t *l = &ft->fwd.src;
    const long long plane_values = 2LL * ft->nx * ft->ny;
    const double elements = (double)l->nplanes * ft->nx * ft->ny;
    double start = FT_SEED;

    if (ft->simulate) {
        simulate(ft, FT_K_INIT, elements);
        return;
    }
    const double t0 = MPI_Wtime();

    /* Plane z starts 2*nx*ny*z values into the stream; values fill
     * (real, imaginary) pairs with x varying fastest, then y. */
    ft_randlc(&start, ft_ipow46(FT_A, plane_values * l->plane0));
    const double plane_step = ft_ipow46(FT_A, plane_values);
    for (int z = l->plane0; z < l->plane0 + l->nplanes; z++) {
        double x = start;
        for (int y = 0; y < ft->ny; y++)
            ft_vranlc(2 * (size_t)ft->nx, &x, FT_A, (double *)&ft->u2[offset_of(l, z, y, 0)]);
        ft_randlc(&start, plane_step);
    }
    account(ft, FT_K_INIT, elements, t0);
}

/* The frequency of index i of n: i for the first half, i - n after. */
static int folded(int i, int n)
{
    return (i + n / 2) % n - n / 2;
}

void ft_compute_twiddle(ft_t *ft)
{
    const ft_layout_t *l = &ft->fwd.dst;   /* planes y, rows z */
    const double ap = -4.0 * FT_ALPHA * FT_PI * FT_PI;
    const double elements = (double)l->nplanes * ft->nz * ft->nx;

    if (ft->simulate) {
        simulate(ft, FT_K_TWIDDLE, elements);
        return;
    }
    const double t0 = MPI_Wtime();

    for (int y = l->plane0; y < l->plane0 + l->nplanes; y++) {
        const int fy = folded(y, ft->ny);
        for (int z = 0; z < ft->nz; z++) {
            const int fz = folded(z, ft->nz);
            ft_cplx *t = &ft->twiddle[offset_of(l, y, z, 0)];
            for (int x = 0; x < ft->nx; x++) {
                const int fx = folded(x, ft->nx);
                t[x] = exp(ap * (double)(fx * fx + fy * fy + fz * fz));
            }
        }
    }
    account(ft, FT_K_TWIDDLE, elements, t0);
}

/* src's plane pl *= the twiddle's (same layout): the evolution of the
 * spectrum, done plane by plane just before the plane's FFT reads it, so
 * that the multiplication costs no pass of its own over memory. */
static void evolve_plane(const ft_t *ft, const ft_layout_t *l, ft_cplx *src, int pl)
{
    for (int row = 0; row < l->nrows; row++) {
        const ptrdiff_t off = pl * l->plane_stride + row * l->row_stride;
        ft_cplx *restrict u = src + off;
        const ft_cplx *restrict t = ft->twiddle + off;
        for (int x = 0; x < ft->nx; x++)
            u[x] *= t[x];
    }
}

void ft_fft3d(ft_t *ft, ft_phase_t *ph, ft_cplx *src, int evolve)
{
    const ft_backend_t *be = ft->opt.backend;
    const int P = ft->nranks, pitch = ft->nx_pad, k = ph->unit_rows;
    const int nal = ph->dst.nplanes, npl = ph->src.nplanes;
    const int overlap = ft->opt.grain != FT_GRAIN_EXCHANGE;
    const double plane_elements = (double)ph->src.nrows * ft->nx;
    double t0;

    if (overlap) {
        t0 = MPI_Wtime();
        be->phase_begin(ft, ph);
        ft->comm_time += MPI_Wtime() - t0;
    }
    for (int pl = 0; pl < npl; pl++) {
        const int p = ph->src.plane0 + pl;

        if (evolve) {
            t0 = MPI_Wtime();
            if (ft->simulate)
                simulate(ft, FT_K_EVOLVE, plane_elements);
            else {
                evolve_plane(ft, &ph->src, src, pl);
                account(ft, FT_K_EVOLVE, plane_elements, t0);
            }
        }
        t0 = MPI_Wtime();
        if (ft->simulate)
            simulate(ft, FT_K_PLANE, fft_flops(ph->src.nrows, ft->nx));
        else {
            fftw_execute_dft(ph->plane_fft, src + pl * ph->src.plane_stride, ft->work);
            account(ft, FT_K_PLANE, fft_flops(ph->src.nrows, ft->nx), t0);
        }
        /* The row FFTs of the plane, less the sends between them. */
        const double rows0 = MPI_Wtime(), comm0 = ft->comm_time;
        /* Next rank first and this rank last, so that peers do not all
         * target the same rank at the same time. */
        for (int d = 1; d <= P; d++) {
            const int r = (ft->rank + d) % P;
            for (int al = 0; al < nal; al += k) {
                const size_t dst_off = (size_t)(al * ph->dst.plane_stride + p * ph->dst.row_stride);
                ft_cplx *out = ft->sendbuf + (((size_t)r * npl + pl) * nal + al) * pitch;

                /* This rank's own rows go straight to their place in the
                 * target: no message, no copy (ph->local_direct). */
                if (r == ft->rank && ph->local_direct)
                    out = ph->target + dst_off;
                if (ft->simulate)
                    simulate(ft, FT_K_ROW, fft_flops(ft->nx, k));
                else
                    fftw_execute_dft(ph->row_fft, ft->work + (size_t)(r * nal + al) * pitch, out);
                if (overlap && !(r == ft->rank && ph->local_direct)) {
                    t0 = MPI_Wtime();
                    be->send_unit(ft, ph, r, out, dst_off, (size_t)k * pitch);
                    ft->comm_time += MPI_Wtime() - t0;
                }
            }
        }
        if (!ft->simulate)
            account(ft, FT_K_ROW, fft_flops(ft->nx, (double)P * nal),
                    rows0 + (ft->comm_time - comm0));
    }
    t0 = MPI_Wtime();
    if (overlap)
        be->phase_end(ft, ph);
    else
        be->exchange(ft, ph);
    ft->comm_time += MPI_Wtime() - t0;
    const double final_flops = fft_flops(npl * P, (double)nal * ft->nx);
    t0 = MPI_Wtime();
    if (ft->simulate)
        simulate(ft, FT_K_FINAL, final_flops);
    else {
        fftw_execute(ph->final_fft);
        account(ft, FT_K_FINAL, final_flops, t0);
    }
}

double complex ft_checksum(ft_t *ft)
{
    const ft_layout_t *l = &ft->inv.dst;   /* planes z, rows y */
    double complex sum = 0.0, all;

    for (int j = 1; j <= 1024; j++) {
        const int x = j % ft->nx, y = (3 * j) % ft->ny, z = (5 * j) % ft->nz;
        if (plane_owned(l, z))
            sum += ft->u2[offset_of(l, z, y, x)];
    }
    /* An allreduce, not a reduce: besides giving every rank the verdict, it
     * is the point after which no rank reads u2 any more in this iteration,
     * which the one-sided backend relies on before putting into u2 again. */
    MPI_Allreduce(&sum, &all, 1, MPI_C_DOUBLE_COMPLEX, MPI_SUM, ft->comm);
    return all / ((double)ft->nx * ft->ny * ft->nz);
}
