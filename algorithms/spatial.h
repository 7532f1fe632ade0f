/* spatial.h: fixed-size spatial algebra kernels (Featherstone's notation, body frames).
 *
 * Motion vector m = (w; v), force vector f = (n; f), 6 doubles each.
 * A transform X = (E, r) maps motion vectors from frame A to frame B, where E (3x3,
 * row-major) rotates A coordinates into B coordinates and r is B's origin in A
 * coordinates: X m = (E w; E (v - r x w)). Its transpose maps forces from B to A.
 * 6x6 matrices are row-major; the output argument comes first. */
#ifndef MBD_SPATIAL_H
#define MBD_SPATIAL_H

/* For kernels that must inline into their caller, so that constant sizes unroll. */
#define MBD_INLINE static inline __attribute__((always_inline))

typedef struct {
    double E[9];
    double r[3];
} mbd_xform;

static inline void vec3_cross(double *restrict out, const double *a, const double *b)
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

static inline double vec3_dot(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* out = E a */
static inline void mat3_apply(double *restrict out, const double *E, const double *a)
{
    out[0] = E[0] * a[0] + E[1] * a[1] + E[2] * a[2];
    out[1] = E[3] * a[0] + E[4] * a[1] + E[5] * a[2];
    out[2] = E[6] * a[0] + E[7] * a[1] + E[8] * a[2];
}

/* out = E^T a */
static inline void mat3_apply_t(double *restrict out, const double *E, const double *a)
{
    out[0] = E[0] * a[0] + E[3] * a[1] + E[6] * a[2];
    out[1] = E[1] * a[0] + E[4] * a[1] + E[7] * a[2];
    out[2] = E[2] * a[0] + E[5] * a[1] + E[8] * a[2];
}

/* out = A B */
static inline void mat3_mul(double *restrict out, const double *A, const double *B)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            out[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}

/* out = X m (motion, A -> B) */
static inline void xform_motion(double *restrict out, const mbd_xform *X, const double *m)
{
    double t[3];
    vec3_cross(t, X->r, m);
    t[0] = m[3] - t[0];
    t[1] = m[4] - t[1];
    t[2] = m[5] - t[2];
    mat3_apply(out, X->E, m);
    mat3_apply(out + 3, X->E, t);
}

/* out = X^T f (force, B -> A) */
static inline void xform_force_t(double *restrict out, const mbd_xform *X, const double *f)
{
    double n[3], rf[3];
    mat3_apply_t(n, X->E, f);
    mat3_apply_t(out + 3, X->E, f + 3);
    vec3_cross(rf, X->r, out + 3);
    out[0] = n[0] + rf[0];
    out[1] = n[1] + rf[1];
    out[2] = n[2] + rf[2];
}

/* out = A B: first B (frame 0 -> 1), then A (1 -> 2) */
static inline void xform_compose(mbd_xform *restrict out, const mbd_xform *A, const mbd_xform *B)
{
    double t[3];
    mat3_mul(out->E, A->E, B->E);
    mat3_apply_t(t, B->E, A->r);
    out->r[0] = B->r[0] + t[0];
    out->r[1] = B->r[1] + t[1];
    out->r[2] = B->r[2] + t[2];
}

/* out = m1 x m2 (motion cross product) */
static inline void cross_motion(double *restrict out, const double *m1, const double *m2)
{
    double t[3];
    vec3_cross(out, m1, m2);
    vec3_cross(out + 3, m1, m2 + 3);
    vec3_cross(t, m1 + 3, m2);
    out[3] += t[0];
    out[4] += t[1];
    out[5] += t[2];
}

/* out = m x* f (force cross product) */
static inline void cross_force(double *restrict out, const double *m, const double *f)
{
    double t[3];
    vec3_cross(out, m, f);
    vec3_cross(t, m + 3, f + 3);
    out[0] += t[0];
    out[1] += t[1];
    out[2] += t[2];
    vec3_cross(out + 3, m, f + 3);
}

static inline double dot6(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

/* out = M a (6x6 times 6) */
static inline void mat6_apply(double *restrict out, const double *M, const double *a)
{
    for (int i = 0; i < 6; i++)
        out[i] = dot6(M + 6 * i, a);
}

/* Spatial inertia about the frame origin of a body with mass m, centre of mass c and
 * rotational inertia Ic about c: [Ic - m cx cx, m cx; -m cx, m 1]. */
void spatial_inertia(double *restrict out, double m, const double c[3], const double Ic[9]);

/* ---- symmetric spatial inertias in block form ----
 * I = [A B; B^T C] maps motion (w; v) to force (A w + B v; B^T w + C v). A and C are
 * symmetric and stored as their upper triangles (xx xy xz yy yz zz), B row-major: 21
 * numbers. Every kernel forms the upper triangles only, so I stays exactly symmetric (an
 * accuracy matter: rounding asymmetry grows along long chains). */
typedef struct {
    double A[6], B[9], C[6];
} mbd_inertia;

/* Index of entry (i, j) of a symmetric 3x3 stored as its upper triangle. */
#define SYM3(i, j) ((i) <= (j) ? (i) * (5 - (i)) / 2 + (j) : (j) * (5 - (j)) / 2 + (i))

/* out = S a for a symmetric 3x3 S */
MBD_INLINE void sym3_apply(double *restrict out, const double *S, const double *a)
{
    out[0] = S[0] * a[0] + S[1] * a[1] + S[2] * a[2];
    out[1] = S[1] * a[0] + S[3] * a[1] + S[4] * a[2];
    out[2] = S[2] * a[0] + S[4] * a[1] + S[5] * a[2];
}

/* out = I m (motion -> force) */
MBD_INLINE void inertia_apply(double *restrict out, const mbd_inertia *I, const double *m)
{
    double t[3];
    sym3_apply(out, I->A, m);
    mat3_apply(t, I->B, m + 3);
    sym3_apply(out + 3, I->C, m + 3);
    for (int k = 0; k < 3; k++) {
        out[k] += t[k];
        out[3 + k] += I->B[k] * m[0] + I->B[3 + k] * m[1] + I->B[6 + k] * m[2];
    }
}

/* Column k of I (k < 3: rotational, else translational), as the 6-vector I e_k. */
MBD_INLINE void inertia_column(double out[6], const mbd_inertia *I, int k)
{
    for (int r = 0; r < 3; r++) {
        out[r] = k < 3 ? I->A[SYM3(r, k)] : I->B[3 * r + k - 3];
        out[3 + r] = k < 3 ? I->B[3 * k + r] : I->C[SYM3(r, k - 3)];
    }
}

/* I -= x y^T on the upper triangles and B: one term of a symmetric sum such as
 * U D^-1 U^T = sum_k U_k (U D^-1)_k^T, whose upper triangle is the sum of the terms'. */
MBD_INLINE void inertia_sub_outer(mbd_inertia *I, const double x[6], const double y[6])
{
    for (int i = 0; i < 3; i++) {
        for (int j = i; j < 3; j++) {
            I->A[SYM3(i, j)] -= x[i] * y[j];
            I->C[SYM3(i, j)] -= x[3 + i] * y[3 + j];
        }
        for (int j = 0; j < 3; j++)
            I->B[3 * i + j] -= x[i] * y[3 + j];
    }
}

/* The block form of a symmetric 6x6 matrix (its upper triangle), and back. */
void inertia_from_matrix(mbd_inertia *out, const double *M);
void inertia_to_matrix(double *out, const mbd_inertia *I);

/* I_parent += X^T I X, I in child coordinates: about 200 multiplications. */
void inertia_add_congruence(mbd_inertia *restrict I_parent, const mbd_xform *X,
                            const mbd_inertia *I);

/* M_parent += X^T M X for any 6x6 M (no symmetry assumed). */
void matrix_add_congruence(double *restrict M_parent, const mbd_xform *X, const double *M);

/* Rotation matrix of angle q about unit axis a (Rodrigues). */
void rotation_about(double *restrict out, const double a[3], double q);

#endif
