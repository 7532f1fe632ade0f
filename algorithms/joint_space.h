/* joint_space.h: the motion subspaces S_i and the n_i x n_i joint-space blocks (n_i <= 6),
 * inline so that a solver that calls them with a constant joint type gets them unrolled
 * and folded (DISPATCH_JOINT). S and U are n_i columns of 6 doubles; blocks row-major.
 *
 * In the solvers' joint frames (joints.c) the columns of S are unit vectors e_k for
 * revolute (k = 2: turn about z), prismatic (k = 5: slide along z) and cylindrical joints
 * (2 and 5), so that U = I^A S is a column of I^A, D = S^T U an entry, and S^T f an entry
 * of f. Cardan columns are angular, (b(q2); 0) and (a2; 0), read from S. Spherical joints
 * have the three angular unit columns e_0, e_1, e_2 and free joints all six: their v is
 * the body's own (angular, spatial) velocity in its frame, so S is the identity there. */
#ifndef MBD_JOINT_SPACE_H
#define MBD_JOINT_SPACE_H

#include <math.h>

#include "mbd.h"
#include "spatial.h"

#define MBD_MAX_JOINT_DOF 6

/* Calls step(args..., type) with type a compile-time constant, so that an always-inline
 * step is specialized for each joint type. */
#define DISPATCH_JOINT(type, step, ...)                \
    do {                                               \
        switch (type) {                                \
        case MBD_REVOLUTE:                             \
            step(__VA_ARGS__, MBD_REVOLUTE);           \
            break;                                     \
        case MBD_PRISMATIC:                            \
            step(__VA_ARGS__, MBD_PRISMATIC);          \
            break;                                     \
        case MBD_CYLINDRICAL:                          \
            step(__VA_ARGS__, MBD_CYLINDRICAL);        \
            break;                                     \
        case MBD_SPHERICAL:                            \
            step(__VA_ARGS__, MBD_SPHERICAL);          \
            break;                                     \
        case MBD_FREE:                                 \
            step(__VA_ARGS__, MBD_FREE);               \
            break;                                     \
        default:                                       \
            step(__VA_ARGS__, MBD_CARDAN);             \
            break;                                     \
        }                                              \
    } while (0)

MBD_INLINE int joint_dofs(mbd_joint_type type)
{
    switch (type) {
    case MBD_REVOLUTE:
    case MBD_PRISMATIC:
        return 1;
    case MBD_SPHERICAL:
        return 3;
    case MBD_FREE:
        return 6;
    default:
        return 2;
    }
}

/* Whether the joint's velocities are the body's own angular (and linear) velocity rather
 * than the derivatives of its position coordinates (nq != nv): spherical and free. */
MBD_INLINE int joint_has_quaternion(mbd_joint_type type)
{
    return type == MBD_SPHERICAL || type == MBD_FREE;
}

/* The index k of column `col` of S when it is the unit vector e_k, else -1 (Cardan). */
MBD_INLINE int unit_column(mbd_joint_type type, int col)
{
    switch (type) {
    case MBD_REVOLUTE:
        return 2;
    case MBD_PRISMATIC:
        return 5;
    case MBD_CYLINDRICAL:
        return col == 0 ? 2 : 5;
    case MBD_SPHERICAL:
    case MBD_FREE:
        return col;
    default:
        return -1;
    }
}

/* S_col . f */
MBD_INLINE double column_dot(mbd_joint_type type, const double *S, int col, const double f[6])
{
    const int k = unit_column(type, col);
    return k >= 0 ? f[k] : vec3_dot(S + 6 * col, f);
}

/* out += S_col x */
MBD_INLINE void column_add(double out[6], mbd_joint_type type, const double *S, int col, double x)
{
    const int k = unit_column(type, col);
    if (k >= 0)
        out[k] += x;
    else
        for (int r = 0; r < 3; r++)
            out[r] += S[6 * col + r] * x;
}

/* out = I S_col */
MBD_INLINE void inertia_times_column(double out[6], const mbd_inertia *I, mbd_joint_type type,
                                     const double *S, int col)
{
    const int k = unit_column(type, col);
    if (k >= 0) {
        inertia_column(out, I, k);
        return;
    }
    const double *s = S + 6 * col; /* (A s; B^T s) */
    sym3_apply(out, I->A, s);
    mat3_apply_t(out + 3, I->B, s);
}

/* I^a S = 0 exactly in exact arithmetic: zero the unit columns' rows and columns of I^a
 * rather than keep their rounding residue. */
MBD_INLINE void inertia_zero_subspace(mbd_inertia *I, mbd_joint_type type)
{
    for (int col = 0; col < joint_dofs(type); col++) {
        const int k = unit_column(type, col);
        if (k < 0)
            return;
        double *block = k < 3 ? I->A : I->C;
        const int j = k % 3;
        for (int r = 0; r < 3; r++) {
            block[SYM3(r, j)] = 0.0;
            if (k < 3)
                I->B[3 * j + r] = 0.0;
            else
                I->B[3 * r + j] = 0.0;
        }
    }
}

/* out = S x */
MBD_INLINE void subspace_times(double out[6], mbd_joint_type type, const double *S, const double *x)
{
    for (int r = 0; r < 6; r++)
        out[r] = 0.0;
    for (int col = 0; col < joint_dofs(type); col++)
        column_add(out, type, S, col, x[col]);
}

/* out_k = S_k . f */
MBD_INLINE void subspace_dot(double *out, mbd_joint_type type, const double *S, const double f[6])
{
    for (int col = 0; col < joint_dofs(type); col++)
        out[col] = column_dot(type, S, col, f);
}

/* U = I S and D = S^T U (n x n) */
MBD_INLINE void joint_space_inertia(double (*U)[6], double *D, const mbd_inertia *I,
                                    mbd_joint_type type, const double *S)
{
    const int n = joint_dofs(type);
    for (int col = 0; col < n; col++)
        inertia_times_column(U[col], I, type, S, col);
    for (int k = 0; k < n; k++)
        for (int m = 0; m < n; m++)
            D[n * k + m] = column_dot(type, S, k, U[m]);
}

/* Columns of U D^-1: UDinv[k] = sum_m U_m Dinv[m][k]. */
MBD_INLINE void times_inverse(double (*UDinv)[6], const double (*U)[6], const double *Dinv, int n)
{
    for (int k = 0; k < n; k++)
        for (int r = 0; r < 6; r++) {
            UDinv[k][r] = 0.0;
            for (int m = 0; m < n; m++)
                UDinv[k][r] += U[m][r] * Dinv[n * m + k];
        }
}

/* In place A = L L^T, L lower; 0, or -1 if A is not numerically positive definite (a
 * pivot not > 0 or not finite). */
MBD_INLINE int small_cholesky(double *A, int n)
{
    for (int j = 0; j < n; j++) {
        double d = A[n * j + j];
        for (int k = 0; k < j; k++)
            d -= A[n * j + k] * A[n * j + k];
        if (!(d > 0.0) || !isfinite(d))
            return -1;
        const double ljj = sqrt(d);
        A[n * j + j] = ljj;
        for (int i = j + 1; i < n; i++) {
            double s = A[n * i + j];
            for (int k = 0; k < j; k++)
                s -= A[n * i + k] * A[n * j + k];
            A[n * i + j] = s / ljj;
        }
    }
    return 0;
}

/* x = L^-1 x and x = L^-T x for the factor of small_cholesky. */
MBD_INLINE void small_forward_subst(const double *L, int n, double *x)
{
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < i; k++)
            x[i] -= L[n * i + k] * x[k];
        x[i] /= L[n * i + i];
    }
}

/* Y = L^-1 Y for the n rows of 6 of Y: all columns at once, one division per row. */
MBD_INLINE void small_forward_subst_rows(const double *L, int n, double *Y)
{
    for (int i = 0; i < n; i++) {
        const double inverse = 1.0 / L[n * i + i];
        for (int r = 0; r < 6; r++) {
            double y = Y[6 * i + r];
            for (int k = 0; k < i; k++)
                y -= L[n * i + k] * Y[6 * k + r];
            Y[6 * i + r] = y * inverse;
        }
    }
}

MBD_INLINE void small_backward_subst(const double *L, int n, double *x)
{
    for (int i = n - 1; i >= 0; i--) {
        for (int k = i + 1; k < n; k++)
            x[i] -= L[n * k + i] * x[k];
        x[i] /= L[n * i + i];
    }
}

/* Dinv = D^-1 for the n x n SPD block D (n <= 6); -1 if D is not numerically positive
 * definite (a pivot not > 0 or not finite). 1x1 and 2x2 in closed form; larger blocks
 * (spherical, free) by Cholesky, D^-1 = L^-T L^-1, of which the lower triangle is formed
 * and mirrored, so that Dinv is exactly symmetric. */
MBD_INLINE int joint_block_inverse(double *restrict Dinv, const double *D, int n)
{
    if (n == 1) {
        if (!(D[0] > 0.0) || !isfinite(D[0]))
            return -1;
        Dinv[0] = 1.0 / D[0];
        return 0;
    }
    if (n == 2) {
        const double det = D[0] * D[3] - D[1] * D[2];
        if (!(D[0] > 0.0) || !(det > 0.0) || !isfinite(det))
            return -1;
        const double inv = 1.0 / det;
        Dinv[0] = D[3] * inv;
        Dinv[1] = -D[1] * inv;
        Dinv[2] = -D[2] * inv;
        Dinv[3] = D[0] * inv;
        return 0;
    }
    double L[MBD_MAX_JOINT_DOF * MBD_MAX_JOINT_DOF];
    for (int k = 0; k < n * n; k++)
        L[k] = D[k];
    if (small_cholesky(L, n))
        return -1;
    for (int j = 0; j < n; j++) { /* column j of D^-1: L^-T L^-1 e_j, rows >= j kept */
        double x[MBD_MAX_JOINT_DOF] = {0};
        x[j] = 1.0;
        small_forward_subst(L, n, x);
        small_backward_subst(L, n, x);
        for (int i = j; i < n; i++)
            Dinv[n * i + j] = Dinv[n * j + i] = x[i];
    }
    return 0;
}

#endif
