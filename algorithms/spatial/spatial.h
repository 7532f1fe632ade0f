/* spatial.h: fixed-size spatial algebra kernels (Featherstone's notation, body frames).
 *
 * Motion vector m = (w; v), force vector f = (n; f), 6 doubles each.
 * A transform X = (E, r) maps motion vectors from frame A to frame B, where E (3x3,
 * row-major) rotates A coordinates into B coordinates and r is B's origin in A
 * coordinates: X m = (E w; E (v - r x w)). Its transpose maps forces from B to A.
 * 6x6 matrices are row-major; the output argument comes first. */
#ifndef MBD_SPATIAL_H
#define MBD_SPATIAL_H

#include <stddef.h>

/* For kernels that must inline into their caller, so that constant sizes unroll. The
 * fuzzing build defines MBD_NO_FORCE_INLINE: forced, the sanitizers' checks make one
 * function of each whole sweep that clang's -O1 takes many minutes over (the Makefile). */
#ifdef MBD_NO_FORCE_INLINE
#define MBD_INLINE static inline
#else
#define MBD_INLINE static inline __attribute__((always_inline))
#endif

typedef struct {
    double E[9];
    double r[3];
} mbd_xform;

/* ---- symmetric spatial inertias in block form ----
 * I = [A B; B^T C] maps motion (w; v) to force (A w + B v; B^T w + C v). A and C are
 * symmetric and stored as their upper triangles (xx xy xz yy yz zz), B row-major: 21
 * numbers. Every kernel forms the upper triangles only, so I stays exactly symmetric (an
 * accuracy matter: rounding asymmetry grows along long chains). */
typedef struct {
    double A[6], B[9], C[6];
} mbd_inertia;

/* A rigid body's inertia about its frame origin by its 10 parameters: I-bar (the
 * rotational inertia about the origin, upper triangle), h = m c (c the centre of mass)
 * and the mass; its blocks are A = I-bar, B = h x, C = m 1 (rigid_blocks). The model
 * keeps its bodies' inertias so: 80 bytes for a pass to read instead of 168. */
typedef struct {
    double Ibar[6], h[3], m;
} mbd_rigid;

/* Index of entry (i, j) of a symmetric 3x3 stored as its upper triangle. */
#define SYM3(i, j) ((i) <= (j) ? (i) * (5 - (i)) / 2 + (j) : (j) * (5 - (j)) / 2 + (i))

/* The zero rows (and columns) of a 3x3 block that stay zero across a turn about axis k
 * (bit masks): k's, and the other two only together. */
MBD_INLINE unsigned zero_after_turn(unsigned zero, int k)
{
    const unsigned plane = 7u & ~(1u << k);
    return (zero & 1u << k) | ((zero & plane) == plane ? plane : 0);
}

/* A 3-vector in the first three lanes of a 4-lane vector (the fourth unused), so that a
 * rotation, an inertia times a vector or a cross product is a few vector operations
 * instead of a dozen scalar ones: the passes in one frame (root_frame.h: sparse.c and the
 * RNEA derivatives), and one state's inertia congruence where the build targets AVX2
 * (spatial_kernels.h). */
typedef double v4 __attribute__((vector_size(32)));

/* No call passes a v4 (the helpers are always inlined), so the note on the ABI of 32-byte
 * vectors that gcc gives for targets without AVX does not apply. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

MBD_INLINE v4 v4_of(const double *x) { return (v4){x[0], x[1], x[2], 0.0}; }

/* __builtin_shufflevector: gcc (12 on) and clang both have it. */
#define YZX(a) __builtin_shufflevector(a, a, 1, 2, 0, 3)
#define ZXY(a) __builtin_shufflevector(a, a, 2, 0, 1, 3)

MBD_INLINE v4 cross4(const v4 *a, const v4 *b) { return YZX(*a) * ZXY(*b) - ZXY(*a) * YZX(*b); }
#pragma GCC diagnostic pop

/* The kernels, one state (lane = double); batch_x4.c and batch_x8.c instantiate them
 * again over W lanes. */
#define MBD_LANES 1
#include "spatial/lane.h"
#include "spatial/spatial_kernels.h"
#include "spatial/lane_end.h"

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

/* The inertia about the frame origin of a body with mass m, centre of mass c and
 * rotational inertia Ic about c (symmetric), whose spatial form is
 * [Ic - m cx cx, m cx; -m cx, m 1]. */
void rigid_inertia(mbd_rigid *out, double m, const double c[3], const double Ic[9]);
/* I^-1 of a rigid inertia as a 6 x 6 row-major matrix ((angular; linear), as its blocks);
 * -1, out untouched, unless m > 0 and Ic is positive definite. */
int rigid_inverse(double out[36], const mbd_rigid *I);

/* ---- for the floors above: the entry points' checks (status.c), a norm and the CPU's
 * lane widths (cpu.c) ---- */

/* MBD_ENONFINITE if one of x[0 .. n - 1] is not finite, else MBD_OK. */
int check_finite(const double *x, int n);
/* The Euclidean norm of x[0 .. n - 1]. */
double vector_norm(const double *x, int n);
/* The CPU runs the lane form of this width (4: AVX2 and FMA, 8: AVX-512; cpu.c, the one
 * place that asks the CPU). */
int cpu_runs_lanes(int lanes);
#define MBD_MAX_LANES 8

#endif
