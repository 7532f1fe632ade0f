/* cholesky_kernels.h: the dense factor H = L L^T, one state, for the analytic derivatives
 * (derivatives/analytic.c) and the GPU's dense kernel (gpu_kernels.c, where no LAPACK
 * runs), which include it after dynamics.h. Row-major n x n, in place on the lower
 * triangle, each entry of L from contiguous rows:
 *   L_jj = sqrt(H_jj - sum_k<j L_jk^2),  L_ij = (H_ij - sum_k<j L_ik L_jk) / L_jj  (i > j),
 * L's diagonal stored as reciprocals 1/L_jj, so that small_forward_subst and
 * small_backward_subst (joint_kernels.h) multiply. */
#ifndef MBD_CHOLESKY_KERNELS_H
#define MBD_CHOLESKY_KERNELS_H

/* The first row whose pivot d is not > 0, or -1 when all are. With finite_pivots 0 a NaN
 * pivot passes, as in OpenBLAS's dpotrf (the GPU's dense state then ends MBD_ENONFINITE,
 * as the CPU's dense solver's does); with 1 a NaN or infinite pivot stops too. */
MBD_INLINE int dense_cholesky(double *A, int n, int finite_pivots)
{
    for (int j = 0; j < n; j++) {
        double *row_j = A + (size_t)n * j, d = row_j[j];
        for (int k = 0; k < j; k++)
            d -= row_j[k] * row_j[k];
        if (finite_pivots ? !(d > 0.0 && d < INFINITY) : d <= 0.0)
            return j;
        const double inverse_root = 1.0 / lane_sqrt(d);
        row_j[j] = inverse_root;
        for (int i = j + 1; i < n; i++) {
            double *row_i = A + (size_t)n * i, sum = row_i[j];
            for (int k = 0; k < j; k++)
                sum -= row_i[k] * row_j[k];
            row_i[j] = sum * inverse_root;
        }
    }
    return -1;
}

#endif
