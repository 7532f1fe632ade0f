/* joint_space.h: the n_i x n_i joint-space blocks (n_i <= 6) and the 6 x n_i motion
 * subspaces, inline so that a solver calling them with a constant n_i gets them unrolled.
 * S and U are n_i columns of 6 doubles; n_i x n_i blocks are row-major. */
#ifndef MBD_JOINT_SPACE_H
#define MBD_JOINT_SPACE_H

#include <math.h>

#include "spatial.h"

/* out = S x */
MBD_INLINE void subspace_times(double out[6], const double *S, int nv, const double *x)
{
    for (int r = 0; r < 6; r++)
        out[r] = S[r] * x[0];
    for (int k = 1; k < nv; k++)
        for (int r = 0; r < 6; r++)
            out[r] += S[6 * k + r] * x[k];
}

/* out_k = S_k . f */
MBD_INLINE void subspace_dot(double *out, const double *S, int nv, const double f[6])
{
    for (int k = 0; k < nv; k++)
        out[k] = dot6(S + 6 * k, f);
}

/* U = I^A S and D = S^T U (I^A need not be symmetric: D[k][m] = S_k . U_m). */
MBD_INLINE void joint_space_inertia(double *U, double *D, const double *IA, const double *S, int nv)
{
    for (int k = 0; k < nv; k++)
        mat6_apply(U + 6 * k, IA, S + 6 * k); /* row form: I^A of the sweep is not symmetric */
    for (int k = 0; k < nv; k++)
        for (int m = 0; m < nv; m++)
            D[nv * k + m] = dot6(S + 6 * k, U + 6 * m);
}

/* Columns of U D^-1: UDinv[k] = sum_m U_m Dinv[m][k]. */
MBD_INLINE void times_inverse(double (*UDinv)[6], const double *U, const double *Dinv, int nv)
{
    for (int k = 0; k < nv; k++)
        for (int r = 0; r < 6; r++) {
            UDinv[k][r] = 0.0;
            for (int m = 0; m < nv; m++)
                UDinv[k][r] += U[6 * m + r] * Dinv[nv * m + k];
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

MBD_INLINE void small_backward_subst(const double *L, int n, double *x)
{
    for (int i = n - 1; i >= 0; i--) {
        for (int k = i + 1; k < n; k++)
            x[i] -= L[n * k + i] * x[k];
        x[i] /= L[n * i + i];
    }
}

/* out = A^-1 by Gauss-Jordan without pivoting (A is SPD in exact arithmetic); -1 if a
 * pivot is not > 0. */
MBD_INLINE int small_spd_inverse(double *restrict out, const double *A, int n)
{
    double M[36];
    for (int k = 0; k < n * n; k++) {
        M[k] = A[k];
        out[k] = 0.0;
    }
    for (int k = 0; k < n; k++)
        out[n * k + k] = 1.0;
    for (int j = 0; j < n; j++) {
        const double pivot = M[n * j + j];
        if (!(pivot > 0.0) || !isfinite(pivot))
            return -1;
        for (int k = 0; k < n; k++) {
            M[n * j + k] /= pivot;
            out[n * j + k] /= pivot;
        }
        for (int i = 0; i < n; i++) {
            const double factor = M[n * i + j];
            if (i == j || factor == 0.0)
                continue;
            for (int k = 0; k < n; k++) {
                M[n * i + k] -= factor * M[n * j + k];
                out[n * i + k] -= factor * out[n * j + k];
            }
        }
    }
    return 0;
}

#endif
