/* lane.h: the lane type that the kernel headers (spatial_kernels.h, joint_kernels.h,
 * bodies_kernels.h, poisson_ldlt_kernels.h, poisson_sweep_kernels.h, momentum_kernels.h)
 * are written over, so that one source of each recurrence compiles to
 * one state (MBD_LANES 1: lane is double, the kernels keep their plain names and work on
 * mbd_xform, mbd_inertia, mbd_work) and to W states in lockstep (MBD_LANES 4 or 8: lane is
 * a gcc vector of W doubles, names get the suffix _x4 or _x8; batch_x4.c, batch_x8.c).
 * Arithmetic on lanes is written with C operators (gcc vector extensions; a double operand
 * is broadcast to every lane). What differs per width is here: splat, the pivot test,
 * square root (one vector instruction for W lanes), sine and cosine (inline polynomials for
 * W lanes, libmvec beyond 1e5 rad; one state takes those of 4 lanes for all its angles at
 * once (sincos_x4), libm's where the CPU has no AVX2: the two may differ by a few ulp, so
 * lanes agree with the one-state solver to round-off, not always bit for bit).
 *
 * Include it with MBD_LANES defined, then the kernel headers, then lane_end.h. No include
 * guard: a translation unit may instantiate several widths, one after the other. */
#ifndef MBD_LANES
#error "lane.h needs MBD_LANES (1, 4, 8 or MBD_LANES_DUAL)"
#endif

#include <math.h>

/* MBD_LANES_DUAL: a dual number (a value and its tangents, algorithms/derivatives/dual.h)
 * in C++ (derivatives/automatic.cc): the kernels take their W-lane forms (MBD_LANES > 1),
 * which hold their own kinematics, and names get the suffix _dual. */
#define MBD_LANES_DUAL 9

#if MBD_LANES == 1
#define lane double
#define lane_xform mbd_xform
#define lane_inertia mbd_inertia
#define lane_work mbd_work
#define LANE_FN(name) name
#define LANE_API /* the one-state passes that several solver files share are extern */
#elif MBD_LANES == MBD_LANES_DUAL
#define LANE_FN(name) name##_dual
#define lane mbd_dual
#define lane_xform mbd_dual_xform
#define lane_inertia mbd_dual_inertia
#define lane_work mbd_dual_work
#define LANE_API static
#else
#define LANE_PASTE(name, w) name##_x##w
#define LANE_NAME(name, w) LANE_PASTE(name, w)
#define LANE_FN(name) LANE_NAME(name, MBD_LANES)
#define lane LANE_FN(mbd_lane)
#define lane_xform LANE_FN(mbd_lane_xform)
#define lane_inertia LANE_FN(mbd_lane_inertia)
#define lane_work LANE_FN(mbd_lane_work)
#define LANE_API static
#endif

/* Whether X_i of a revolute joint across an axial screw holds only what the screw
 * kernels read (cos q and sin q formed per call, the screw's constants with the
 * workspace; joint_kinematics), and E_i is applied as turns (body_rotate): the lanes, and
 * the GPU's kernels that read X only through them (bodies, poisson-ldlt: on the GPU X is
 * bytes to and from memory per body and state); one state on the CPU keeps X whole for
 * every consumer, and turns wait longer than one product by E. */
#ifdef MBD_GPU_C
#define SCREW_TRANSFORMS(work) (MBD_LANES > 1 || (work)->screw_transforms)
#else
#define SCREW_TRANSFORMS(work) (MBD_LANES > 1)
#endif

/* ---- the types and helpers of one width, defined once per translation unit ---- */
#if MBD_LANES == 1 && !defined(MBD_LANE_HELPERS_1)
#define MBD_LANE_HELPERS_1

MBD_INLINE double lane_splat(double x) { return x; }

/* A double's bits as an integer, and back (a copy the compiler folds into a move). */
MBD_INLINE unsigned long long bits_of_double(double x)
{
    unsigned long long b;
    __builtin_memcpy(&b, &x, sizeof b);
    return b;
}

MBD_INLINE double double_of_bits(unsigned long long b)
{
    double x;
    __builtin_memcpy(&x, &b, sizeof x);
    return x;
}

/* A pivot that is not > 0 or not finite: D is not numerically positive definite. */
MBD_INLINE int lane_bad_pivot(double x) { return !(x > 0.0 && x < INFINITY); }

#ifdef __NVPTX__ /* the GPU (algorithms/gpu/): no libm; PTX's correctly rounded root */
MBD_INLINE double lane_sqrt(double x) { return __nvvm_sqrt_rn_d(x); }
#else
MBD_INLINE double lane_sqrt(double x) { return sqrt(x); }
#endif

#ifdef MBD_GPU_C
/* The GPU's C, wherever it is compiled (algorithms/gpu/gpu_kernels.c): the lanes'
 * polynomial (sincos_body.h), since the GPU has no libm; beyond 1e5 rad, where the lanes
 * take libmvec, its reduction loses digits (at 1e7 rad about 1e-10 absolute). */
MBD_INLINE void lane_sincos(double q, double *s, double *c)
{
    typedef unsigned long long bits;
#define SINCOS_FMA __builtin_fma
#define SINCOS_SPLAT(x) (x)
#define SINCOS_BITS(x) bits_of_double(x)
#define SINCOS_LANE(b) double_of_bits(b)
#include "spatial/sincos_body.h"
}
#else
MBD_INLINE void lane_sincos(double q, double *s, double *c)
{
    *s = sin(q);
    *c = cos(q);
}
#endif

/* One state has no next rows (lanes: the batch's states after the group). */
MBD_INLINE void prefetch_next(const void *work, int i) { (void)work, (void)i; }
MBD_INLINE void scatter_ready(const void *model, const void *work, int i)
{
    (void)model, (void)work, (void)i;
}

/* No body's articulated inertia is known from an earlier sweep (the dual derivatives'
 * inertia_known_dual, derivatives/dual.h): one state and the lanes form every one. */
MBD_INLINE int inertia_known(const void *work, int i) { return (void)work, (void)i, 0; }

#endif

/* One guard per width: defined() cannot take a macro call. */
#if MBD_LANES == 4 && !defined(MBD_LANE_HELPERS_4) || MBD_LANES == 8 && !defined(MBD_LANE_HELPERS_8)
#if MBD_LANES == 4
#define MBD_LANE_HELPERS_4
#else
#define MBD_LANE_HELPERS_8
#endif

#include <immintrin.h>

/* The width's intrinsic op: _mm256_op or _mm512_op. */
#if MBD_LANES == 4
#define LANE_MM(op) _mm256_##op
#else
#define LANE_MM(op) _mm512_##op
#endif

typedef double lane __attribute__((vector_size(8 * MBD_LANES)));

typedef struct {
    lane E[9];
    lane r[3];
} lane_xform;

typedef struct {
    lane A[6], B[9], C[6];
} lane_inertia;

/* The per-state arrays of mbd_work, W lanes each (structure of arrays per body), and the
 * lane group's inputs and outputs transposed: state w of the group in lane w. */
typedef struct {
    lane_xform *X;
    lane *S, *U, *D, *u;
    lane (*v)[6], (*a)[6], (*f)[6];
    union { /* as mbd_work's */
        lane (*c)[6];
        lane (*phi)[6];
    };
    lane (*mass_moments)[6]; /* as mbd_work's (the lanes have no bodies_inverse) */
    lane_inertia *IA;
    lane *scratch;             /* the solver's scratch_doubles, in lanes */
    lane *q, *x, *tau, *y, *z; /* (nq) q; (nv) qd or p, tau, qdd or qd, pd */
    const mbd_solver *solver;
    int failed_body;
    /* the rows of the states after the group, a share of them into the cache at each
     * body of a pass (prefetch_next): regions of lines, those to read (q, x, tau) first,
     * then those to write (y, z) */
    struct {
        const char *at;
        size_t lines;
    } next[5];
    size_t next_step;             /* lines of each region per body */
    int next_regions, next_reads; /* of them read */
    /* the rows of the results and their lanes (scatter_ready): of the states in the mask,
     * entries below out_from written */
    struct {
        double *rows;
        const lane *lanes;
    } out[2];
    int outs, out_from;
    unsigned out_mask;
} lane_work;

/* x in every lane: a broadcast (gcc cannot fold the 0.0 + x of (lane){0} + x, since
 * -0.0 + 0.0 is +0.0, and spent a scalar addition before each broadcast). */
MBD_INLINE lane LANE_FN(lane_splat)(double x) { return LANE_MM(set1_pd)(x); }

/* The lanes where x compares to y as the _CMP_ predicate says, as bits (lane w: bit w):
 * AVX-512's comparison into a mask register, AVX2's comparison and movemask. gcc's
 * vector comparisons give all-ones lanes instead, and turned them back into a mask with
 * two more instructions. */
#if MBD_LANES == 4
#define LANES_WHERE(x, y, predicate) ((unsigned)_mm256_movemask_pd(_mm256_cmp_pd(x, y, predicate)))
#else
#define LANES_WHERE(x, y, predicate) ((unsigned)_mm512_cmp_pd_mask(x, y, predicate))
#endif
#define LANES_ALL ((1u << MBD_LANES) - 1)

/* Some lane's pivot is not > 0 or not finite. */
MBD_INLINE int LANE_FN(lane_bad_pivot)(lane x)
{
    return (LANES_WHERE(x, LANE_FN(lane_splat)(0.0), _CMP_GT_OQ) &
            LANES_WHERE(x, LANE_FN(lane_splat)(INFINITY), _CMP_LT_OQ)) != LANES_ALL;
}

/* The lanes where x is NaN. */
MBD_INLINE unsigned LANE_FN(nan_lanes)(lane x) { return LANES_WHERE(x, x, _CMP_UNORD_Q); }

/* One vector square root, correctly rounded as libm's sqrt, instead of a libm call per
 * lane (each behind its errno test): W scalar roots one after the other on the divider. */
MBD_INLINE lane LANE_FN(lane_sqrt)(lane x) { return LANE_MM(sqrt_pd)(x); }

/* glibc's libmvec (x86-64 vector function ABI: 'd' is AVX2, 'e' AVX-512): all lanes in
 * one call, within 4 ulp of libm's sin and cos; lane_sincos's path for large angles. */
#if MBD_LANES == 4
lane _ZGVdN4v_sin(lane q);
lane _ZGVdN4v_cos(lane q);
#define LANE_SIN _ZGVdN4v_sin
#define LANE_COS _ZGVdN4v_cos
#else
lane _ZGVeN8v_sin(lane q);
lane _ZGVeN8v_cos(lane q);
#define LANE_SIN _ZGVeN8v_sin
#define LANE_COS _ZGVeN8v_cos
#endif

/* Every lane's |x| <= limit (false for NaN). */
MBD_INLINE int LANE_FN(lanes_within)(lane x, double limit)
{
    return (LANES_WHERE(x, LANE_FN(lane_splat)(limit), _CMP_LE_OQ) &
            LANES_WHERE(x, LANE_FN(lane_splat)(-limit), _CMP_GE_OQ)) == LANES_ALL;
}

/* Sine and cosine of W angles inline, both from one range reduction and two polynomials
 * (sincos_body.h). Two libmvec calls cost as much again, and as calls they made the
 * velocity pass save and restore every live vector register; larger angles take them. */
MBD_INLINE void LANE_FN(lane_sincos)(lane q, lane *s, lane *c)
{
    typedef unsigned long long bits
        __attribute__((vector_size(8 * MBD_LANES))); /* shifts into the sign bit */
    if (!LANE_FN(lanes_within)(q, 1e5)) {
        *s = LANE_SIN(q);
        *c = LANE_COS(q);
        return;
    }
#define SINCOS_FMA LANE_MM(fmadd_pd)
#define SINCOS_SPLAT LANE_FN(lane_splat)
#define SINCOS_BITS(x) ((bits)(x))
#define SINCOS_LANE(b) ((lane)(b))
#include "spatial/sincos_body.h"
}
#undef LANE_SIN
#undef LANE_COS

/* Body i's share of the next rows (work->next: next_step lines of each region) into the
 * cache, called at each body of a solver's last pass where the batch's rows do not fit
 * in L2 (batch.c): they come from memory while this group computes, rather than at its
 * gather and scatter (N = 200, 1024 states: 13% of the time went there, 8% after). The
 * rows to read go into L2 only: a pass or more (pipelined: a whole group) runs before
 * they are gathered, and in L1 they would evict the lanes' workspace (level to 1% faster in
 * alternating runs); those to write into L1. */
MBD_INLINE void LANE_FN(prefetch_next)(const lane_work *work, int i)
{
    const size_t from = work->next_step * (size_t)i;
    for (int r = 0; r < work->next_regions; r++) {
        const size_t end = work->next[r].lines;
        const size_t to = from + work->next_step < end ? from + work->next_step : end;
        for (size_t l = from; l < to; l++) {
            if (r < work->next_reads)
                __builtin_prefetch(work->next[r].at + 64 * l, 0, 2);
            else
                __builtin_prefetch(work->next[r].at + 64 * l, 1, 3);
        }
    }
}

/* Step s of a W x W transposition in registers: lanes (a, b) = rows (i, i + s) swap the
 * entries whose row and column indices differ in bit s (the indices select from a's lanes,
 * then b's). After the steps s = 1, 2, 4 (< W), row i holds column i. */
#if MBD_LANES == 4
#define LANE_STEPS(step) step(1, 0, 4, 2, 6, 1, 5, 3, 7) step(2, 0, 1, 4, 5, 2, 3, 6, 7)
#define LANE_STEP(s, l0, l1, l2, l3, h0, h1, h2, h3)                                               \
    for (int i = 0; i < MBD_LANES; i++)                                                            \
        if (!(i & s)) {                                                                            \
            const lane a = m[i], b = m[i + s];                                                     \
            m[i] = __builtin_shufflevector(a, b, l0, l1, l2, l3);                                  \
            m[i + s] = __builtin_shufflevector(a, b, h0, h1, h2, h3);                              \
        }
#else
#define LANE_STEPS(step)                                                                           \
    step(1, 0, 8, 2, 10, 4, 12, 6, 14, 1, 9, 3, 11, 5, 13, 7, 15)                                  \
        step(2, 0, 1, 8, 9, 4, 5, 12, 13, 2, 3, 10, 11, 6, 7, 14, 15)                              \
            step(4, 0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15)
#define LANE_STEP(s, l0, l1, l2, l3, l4, l5, l6, l7, h0, h1, h2, h3, h4, h5, h6, h7)               \
    for (int i = 0; i < MBD_LANES; i++)                                                            \
        if (!(i & s)) {                                                                            \
            const lane a = m[i], b = m[i + s];                                                     \
            m[i] = __builtin_shufflevector(a, b, l0, l1, l2, l3, l4, l5, l6, l7);                  \
            m[i + s] = __builtin_shufflevector(a, b, h0, h1, h2, h3, h4, h5, h6, h7);              \
        }
#endif

MBD_INLINE void LANE_FN(transpose)(lane m[MBD_LANES]) { LANE_STEPS(LANE_STEP) }
#undef LANE_STEPS
#undef LANE_STEP

/* W doubles at any address (a row's), read or written as one lane. */
typedef double LANE_FN(row_chunk)
    __attribute__((vector_size(8 * MBD_LANES), aligned(8), may_alias));

/* Rows w in the mask, entries j .. j + W - 1 = lane w of in[j .. j + W - 1]. */
MBD_INLINE void LANE_FN(scatter_chunk)(double *rows, const lane *in, int n, unsigned mask, int j)
{
    lane m[MBD_LANES];
    for (int c = 0; c < MBD_LANES; c++)
        m[c] = in[j + c];
    LANE_FN(transpose)(m);
    for (int w = 0; w < MBD_LANES; w++)
        if (mask >> w & 1)
            *(LANE_FN(row_chunk) *)(rows + (size_t)w * (size_t)n + (size_t)j) = m[w];
}

/* Body i's results are in (the last pass goes from body to body in index order, and a
 * body's entries follow its parent's): the chunks of W entries that are now whole go out to
 * their rows while the pass goes on. At the end, in one go, their stores waited on lines
 * that were not in L1 (N = 200: 4% of a batch); among the pass's work they are hidden. */
MBD_INLINE void LANE_FN(scatter_ready)(const mbd_model *model, lane_work *work, int i)
{
    const int done = i + 1 < model->nb ? model->v0[i + 1] : model->nv;
    for (; work->out_from + MBD_LANES <= done; work->out_from += MBD_LANES)
        for (int o = 0; o < work->outs; o++)
            LANE_FN(scatter_chunk)(work->out[o].rows, work->out[o].lanes, model->nv, work->out_mask,
                                   work->out_from);
}

/* As one state's: the lanes form every body's articulated inertia. */
MBD_INLINE int LANE_FN(inertia_known)(const lane_work *work, int i)
{
    return (void)work, (void)i, 0;
}

/* The lane group gives up at a singular joint block: its states are solved again one at
 * a time, which names the body. */
MBD_INLINE int LANE_FN(singular_joint)(lane_work *work, int body)
{
    work->failed_body = body;
    return MBD_ESINGULAR;
}
#undef LANE_MM
#undef LANES_WHERE
#undef LANES_ALL
#endif
