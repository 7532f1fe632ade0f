/* dual.h: the lane type of the `automatic` derivatives (automatic.cc), C++ only: a dual
 * number x + sum_k t_k eps_k (eps_k eps_l = 0) carries a value and DUAL_TANGENTS
 * directional derivatives, and every operation of the kernel headers on it applies the
 * chain rule: (a b)' = a' b + a b', (a / b)' = (a' - (a / b) b') / b, sqrt, sin and cos
 * likewise. The kernels (spatial_kernels.h, joint_kernels.h, bodies_kernels.h) are written
 * with C operators over `lane`; here those operators are overloaded, so that the same
 * source computes the value and its derivatives (forward-mode automatic differentiation,
 * Griewank & Walther, "Evaluating Derivatives", 2008, ch. 3). Include after lane.h with
 * MBD_LANES == MBD_LANES_DUAL; the workspace and helpers keep the lanes' names (_dual). */
#ifndef MBD_DUAL_H
#define MBD_DUAL_H

/* A dual in DUAL_VECTORS vectors of 4 doubles: lane 0 of the first the value, the other
 * lanes the tangents. In the CPU's own vectors: gcc lowers a vector of 8 doubles without
 * AVX-512 through memory, its sweeps then ran 3 times slower than central differences.
 * With T tangents a matrix of nv columns takes ceil(nv / T) sweeps; each operation costs
 * its scalar value's part once and then one or two instructions per vector. Wider duals
 * (3 or 4 vectors, fewer sweeps) compile for many minutes more and are not measured. */
#ifndef DUAL_VECTORS
#define DUAL_VECTORS 2
#endif
#define DUAL_TANGENTS (4 * DUAL_VECTORS - 1)

typedef double dual_half __attribute__((vector_size(32)));

/* for each vector k of a dual */
#define DUAL_EACH(k) _Pragma("GCC unroll 8") for (int k = 0; k < DUAL_VECTORS; k++)

struct mbd_dual {
    dual_half part[DUAL_VECTORS];
    mbd_dual() = default;
    mbd_dual(double v) : part{{v}} {} /* a constant: no tangent */
};

/* lo with v in lane 0: a result's value where its tangents' formula would round it. */
MBD_INLINE dual_half with_value(dual_half lo, double v)
{
    const dual_half value = {v};
    return __builtin_shufflevector(value, lo, 0, 5, 6, 7);
}

MBD_INLINE double dual_value(mbd_dual a) { return a.part[0][0]; }
MBD_INLINE double dual_tangent(const mbd_dual *a, int k) { return a->part[(k + 1) / 4][(k + 1) % 4]; }
MBD_INLINE void dual_set_tangent(mbd_dual *a, int k, double t) { a->part[(k + 1) / 4][(k + 1) % 4] = t; }

MBD_INLINE mbd_dual operator+(mbd_dual a, mbd_dual b)
{
    DUAL_EACH(k) a.part[k] += b.part[k];
    return a;
}
MBD_INLINE mbd_dual operator+(mbd_dual a, double b)
{
    a.part[0][0] += b;
    return a;
}
MBD_INLINE mbd_dual operator+(double a, mbd_dual b) { return b + a; }
MBD_INLINE mbd_dual operator-(mbd_dual a)
{
    DUAL_EACH(k) a.part[k] = -a.part[k];
    return a;
}
MBD_INLINE mbd_dual operator-(mbd_dual a, mbd_dual b)
{
    DUAL_EACH(k) a.part[k] -= b.part[k];
    return a;
}
MBD_INLINE mbd_dual operator-(mbd_dual a, double b) { return a + -b; }
MBD_INLINE mbd_dual operator-(double a, mbd_dual b) { return -b + a; }
/* (a b)' = a b' + b a'. The value a b is a scalar product blended into lane 0, not lane 0
 * of the tangents' formula: the values' chain through the sweep then waits on a
 * multiplication alone, not on a broadcast and two vector operations. */
MBD_INLINE mbd_dual operator*(mbd_dual a, mbd_dual b)
{
    const double av = dual_value(a), bv = dual_value(b);
    mbd_dual c;
    DUAL_EACH(k) c.part[k] = av * b.part[k] + bv * a.part[k];
    c.part[0] = with_value(c.part[0], av * bv);
    return c;
}
MBD_INLINE mbd_dual operator*(mbd_dual a, double b)
{
    DUAL_EACH(k) a.part[k] *= b;
    return a;
}
MBD_INLINE mbd_dual operator*(double a, mbd_dual b) { return b * a; }
/* f(x)' = f'(x) x' for a function of the value alone. */
MBD_INLINE mbd_dual dual_function(mbd_dual x, double f, double df)
{
    DUAL_EACH(k) x.part[k] *= df;
    x.part[0] = with_value(x.part[0], f);
    return x;
}
/* (a / b)' = (a' - (a / b) b') / b */
MBD_INLINE mbd_dual operator/(mbd_dual a, mbd_dual b)
{
    const double q = dual_value(a) / dual_value(b), r = 1.0 / dual_value(b);
    DUAL_EACH(k) a.part[k] = (a.part[k] - q * b.part[k]) * r;
    a.part[0] = with_value(a.part[0], q);
    return a;
}
MBD_INLINE mbd_dual operator/(double a, mbd_dual b)
{
    const double q = a / dual_value(b);
    return dual_function(b, q, -q / dual_value(b));
}
MBD_INLINE mbd_dual &operator+=(mbd_dual &a, mbd_dual b) { return a = a + b; }
MBD_INLINE mbd_dual &operator-=(mbd_dual &a, mbd_dual b) { return a = a - b; }
MBD_INLINE mbd_dual &operator*=(mbd_dual &a, mbd_dual b) { return a = a * b; }

typedef struct {
    mbd_dual E[9];
    mbd_dual r[3];
} mbd_dual_xform;

typedef struct {
    mbd_dual A[6], B[9], C[6];
} mbd_dual_inertia;

/* The per-state arrays of mbd_work that the bodies sweep's W-lane form reads, in duals. */
typedef struct {
    mbd_dual_xform *X;
    mbd_dual *S, *U, *D, *u;
    mbd_dual (*v)[6], (*a)[6], (*f)[6], (*c)[6];
    mbd_dual_inertia *IA;
    int failed_body;
} mbd_dual_work;

MBD_INLINE mbd_dual lane_splat_dual(double x) { return mbd_dual(x); }

/* The value decides, as in one state: a pivot not > 0 or not finite. */
MBD_INLINE int lane_bad_pivot_dual(mbd_dual x) { return lane_bad_pivot(dual_value(x)); }

MBD_INLINE mbd_dual lane_sqrt_dual(mbd_dual x)
{
    const double root = sqrt(dual_value(x));
    return dual_function(x, root, 0.5 / root);
}

MBD_INLINE void lane_sincos_dual(mbd_dual q, mbd_dual *s, mbd_dual *c)
{
    const double sin_q = sin(dual_value(q)), cos_q = cos(dual_value(q));
    *s = dual_function(q, sin_q, cos_q);
    *c = dual_function(q, cos_q, -sin_q);
}

/* One state in the lanes' passes: no next rows to fetch, no rows to scatter. */
MBD_INLINE void prefetch_next_dual(const mbd_dual_work *work, int i) { (void)work, (void)i; }
MBD_INLINE void scatter_ready_dual(const mbd_model *model, const mbd_dual_work *work, int i)
{
    (void)model, (void)work, (void)i;
}

MBD_INLINE int singular_joint_dual(mbd_dual_work *work, int body)
{
    work->failed_body = body;
    return MBD_ESINGULAR;
}

#endif
