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

/* 8 tangents: two AVX2 vectors (one AVX-512) per operation; with T tangents a matrix of
 * 3 nv columns takes ceil(3 nv / T) sweeps, each costing about 1 + T / 4 scalar sweeps. */
#define DUAL_TANGENTS 8

/* The tangents, at any 8-byte boundary: a dual is 72 bytes, not 128 with padding. */
typedef double dual_tangents __attribute__((vector_size(8 * DUAL_TANGENTS), aligned(8)));

struct mbd_dual {
    double v;        /* the value */
    dual_tangents t; /* its derivatives along the sweep's directions */
    mbd_dual() = default;
    mbd_dual(double x) : v(x), t() {} /* a constant: no tangent */
};

MBD_INLINE mbd_dual dual_of(double v, const dual_tangents &t)
{
    mbd_dual d;
    d.v = v;
    d.t = t;
    return d;
}

MBD_INLINE mbd_dual operator+(mbd_dual a, mbd_dual b) { return dual_of(a.v + b.v, a.t + b.t); }
MBD_INLINE mbd_dual operator+(mbd_dual a, double b) { return dual_of(a.v + b, a.t); }
MBD_INLINE mbd_dual operator+(double a, mbd_dual b) { return dual_of(a + b.v, b.t); }
MBD_INLINE mbd_dual operator-(mbd_dual a) { return dual_of(-a.v, -a.t); }
MBD_INLINE mbd_dual operator-(mbd_dual a, mbd_dual b) { return dual_of(a.v - b.v, a.t - b.t); }
MBD_INLINE mbd_dual operator-(mbd_dual a, double b) { return dual_of(a.v - b, a.t); }
MBD_INLINE mbd_dual operator-(double a, mbd_dual b) { return dual_of(a - b.v, -b.t); }
MBD_INLINE mbd_dual operator*(mbd_dual a, mbd_dual b)
{
    return dual_of(a.v * b.v, a.v * b.t + b.v * a.t);
}
MBD_INLINE mbd_dual operator*(mbd_dual a, double b) { return dual_of(a.v * b, a.t * b); }
MBD_INLINE mbd_dual operator*(double a, mbd_dual b) { return dual_of(a * b.v, a * b.t); }
MBD_INLINE mbd_dual operator/(mbd_dual a, mbd_dual b)
{
    const double q = a.v / b.v;
    return dual_of(q, (a.t - q * b.t) / b.v);
}
MBD_INLINE mbd_dual operator/(double a, mbd_dual b)
{
    const double q = a / b.v;
    return dual_of(q, (-q / b.v) * b.t);
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
MBD_INLINE int lane_bad_pivot_dual(mbd_dual x) { return lane_bad_pivot(x.v); }

MBD_INLINE mbd_dual lane_sqrt_dual(mbd_dual x)
{
    const double root = sqrt(x.v);
    return dual_of(root, (0.5 / root) * x.t);
}

MBD_INLINE void lane_sincos_dual(mbd_dual q, mbd_dual *s, mbd_dual *c)
{
    const double sin_q = sin(q.v), cos_q = cos(q.v);
    *s = dual_of(sin_q, cos_q * q.t);
    *c = dual_of(cos_q, -sin_q * q.t);
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
