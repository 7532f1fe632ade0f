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

/* A dual in one vector of 16 doubles, lane 0 the value: clang++ splits it into four of the
 * CPU's vectors (gcc lowered a vector of 8 doubles without AVX-512 through memory). 15
 * tangents a sweep: at N = 30 the 60 directions along q and qd take 4 sweeps instead of 9
 * of 7 (8 doubles), 1.48 M instructions a call against 1.56 M; 12 doubles counted 2.04 M.
 * With T tangents k matrices of nv columns take ceil(k nv / T) sweeps. */
#define DUAL_DOUBLES 16
#define DUAL_TANGENTS (DUAL_DOUBLES - 1)

typedef double dual_vector __attribute__((vector_size(8 * DUAL_DOUBLES)));

struct mbd_dual {
    dual_vector x; /* lane 0 the value, lanes 1 .. DUAL_TANGENTS the tangents */
    mbd_dual() = default;
    mbd_dual(double v) : x{v} {} /* a constant: no tangent */
};

MBD_INLINE mbd_dual dual_of(dual_vector x)
{
    mbd_dual d;
    d.x = x;
    return d;
}

/* x with v in lane 0: a result's value where its tangents' formula would round it. */
MBD_INLINE dual_vector with_value(dual_vector x, double v)
{
    x[0] = v;
    return x;
}

MBD_INLINE double dual_value(mbd_dual a) { return a.x[0]; }
MBD_INLINE double dual_tangent(const mbd_dual *a, int k) { return a->x[1 + k]; }
MBD_INLINE void dual_set_tangent(mbd_dual *a, int k, double t) { a->x[1 + k] = t; }

MBD_INLINE mbd_dual operator+(mbd_dual a, mbd_dual b) { return dual_of(a.x + b.x); }
MBD_INLINE mbd_dual operator+(mbd_dual a, double b) { return dual_of(with_value(a.x, a.x[0] + b)); }
MBD_INLINE mbd_dual operator+(double a, mbd_dual b) { return b + a; }
MBD_INLINE mbd_dual operator-(mbd_dual a) { return dual_of(-a.x); }
MBD_INLINE mbd_dual operator-(mbd_dual a, mbd_dual b) { return dual_of(a.x - b.x); }
MBD_INLINE mbd_dual operator-(mbd_dual a, double b) { return dual_of(with_value(a.x, a.x[0] - b)); }
MBD_INLINE mbd_dual operator-(double a, mbd_dual b)
{
    return dual_of(with_value(-b.x, a - b.x[0]));
}
/* (a b)' = a b' + b a': lane 0 a b + b 0 */
MBD_INLINE mbd_dual operator*(mbd_dual a, mbd_dual b)
{
    return dual_of(dual_value(a) * b.x + dual_value(b) * with_value(a.x, 0.0));
}
MBD_INLINE mbd_dual operator*(mbd_dual a, double b) { return dual_of(a.x * b); }
MBD_INLINE mbd_dual operator*(double a, mbd_dual b) { return dual_of(a * b.x); }
/* (a / b)' = (a' - (a / b) b') / b */
MBD_INLINE mbd_dual operator/(mbd_dual a, mbd_dual b)
{
    const double q = dual_value(a) / dual_value(b), r = 1.0 / dual_value(b);
    return dual_of(with_value((a.x - q * b.x) * r, q));
}
MBD_INLINE mbd_dual operator/(double a, mbd_dual b)
{
    const double q = a / dual_value(b), f = -q / dual_value(b);
    return dual_of(with_value(f * b.x, q));
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
    const unsigned char *known; /* (nb) inertia_known_dual */
    int failed_body;
} mbd_dual_work;

MBD_INLINE mbd_dual lane_splat_dual(double x) { return mbd_dual(x); }

/* The value decides, as in one state: a pivot not > 0 or not finite. */
MBD_INLINE int lane_bad_pivot_dual(mbd_dual x) { return lane_bad_pivot(dual_value(x)); }

/* f(x)' = f'(x) x' for a function of the value alone. */
MBD_INLINE mbd_dual dual_function(mbd_dual x, double f, double df)
{
    return dual_of(with_value(df * x.x, f));
}

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

/* Body i's I^a, D^-1 and U D^-1 in the workspace are those of an earlier sweep, where they
 * had the value and the tangents that this sweep would give them (automatic.cc). */
MBD_INLINE int inertia_known_dual(const mbd_dual_work *work, int i) { return work->known[i]; }

MBD_INLINE int singular_joint_dual(mbd_dual_work *work, int body)
{
    work->failed_body = body;
    return MBD_ESINGULAR;
}

#endif
