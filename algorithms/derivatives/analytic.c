/* analytic.c: the derivatives of qdd = FD(q, qd, tau) from those of the inverse dynamics
 * (Carpentier and Mansard, "Analytical Derivatives of Rigid Body Dynamics Algorithms", RSS
 * 2018): ID(q, qd, FD(q, qd, tau)) = tau for all x, so
 *   dqdd/dx = -H^-1 dtau/dx (x = q, qd) at qdd = FD(q, qd, tau),  dqdd/dtau = H^-1,
 * with dtau/dx by the O(N d) RNEA derivatives (dynamics/rnea_derivatives.c), whose first
 * passes give H (s_k . I^C s_m, as CRBA) and tau at qdd = 0, so that qdd = H^-1 (tau -
 * tau(qdd = 0)) comes from the same factor as the rest, with no forward solve. H = L L^T
 * is factored densely, dtau/dx solved in place by row operations along contiguous rows
 * and H^-1 formed from L^-1: nv^3 / 6 + 2 nv^3 + nv^3 / 3 multiplications, fewer than the O(N^2) articulated-body inverse
 * (dynamics/minverse.c) and the products with it (measured: algorithms/PERFORMANCE.md). */
#include "internal.h"

#include <math.h>
#include <string.h>

#include "dynamics/cholesky_kernels.h"

/* row -= l done, along n contiguous doubles (row may be NULL: nothing to do) */
static void subtract_row(double *restrict row, double l, const double *restrict done, size_t n)
{
    if (row)
        for (size_t k = 0; k < n; k++)
            row[k] -= l * done[k];
}

static void scale_row(double *row, double factor, size_t n)
{
    if (row)
        for (size_t k = 0; k < n; k++)
            row[k] *= factor;
}

/* X = -L^-T L^-1 X in place for the row-major nv x nv X and Y (either may be NULL), in the
 * same passes: each step subtracts whole rows, so the inner loop runs along contiguous
 * memory and vectorizes. */
static void solve_negated(const double *L, int nv, double *X, double *Y)
{
    const size_t n = (size_t)nv;
    for (size_t r = 0; r < n; r++) { /* L Z = -X */
        double *x = X ? X + r * n : NULL, *y = Y ? Y + r * n : NULL;
        scale_row(x, -1.0, n);
        scale_row(y, -1.0, n);
        for (size_t c = 0; c < r; c++) {
            subtract_row(x, L[r * n + c], X ? X + c * n : NULL, n);
            subtract_row(y, L[r * n + c], Y ? Y + c * n : NULL, n);
        }
        scale_row(x, L[r * n + r], n);
        scale_row(y, L[r * n + r], n);
    }
    for (size_t r = n; r-- > 0;) { /* L^T X = Z */
        double *x = X ? X + r * n : NULL, *y = Y ? Y + r * n : NULL;
        for (size_t c = r + 1; c < n; c++) {
            subtract_row(x, L[c * n + r], X ? X + c * n : NULL, n);
            subtract_row(y, L[c * n + r], Y ? Y + c * n : NULL, n);
        }
        scale_row(x, L[r * n + r], n);
        scale_row(y, L[r * n + r], n);
    }
}

/* b = L^-T L^-1 b in place. */
static void solve_vector(const double *L, int nv, double *b)
{
    const size_t n = (size_t)nv;
    for (size_t r = 0; r < n; r++) {
        double sum = b[r];
        for (size_t c = 0; c < r; c++)
            sum -= L[r * n + c] * b[c];
        b[r] = sum * L[r * n + r];
    }
    for (size_t r = n; r-- > 0;) {
        double sum = b[r];
        for (size_t c = r + 1; c < n; c++)
            sum -= L[c * n + r] * b[c];
        b[r] = sum * L[r * n + r];
    }
}

/* Hinv = L^-T L^-1: L^-1 (lower) formed in place, row by row (entry (i, j) needs L's
 * entries (i, k >= j) only, so increasing j overwrites none still read), then Hinv as the
 * sum of the outer products of its rows, its lower triangle mirrored: nv^3 / 3
 * multiplications. */
static void inverse_from_factor(double *L, int nv, double *Hinv)
{
    const size_t n = (size_t)nv;
    for (size_t i = 1; i < n; i++)
        for (size_t j = 0; j < i; j++) {
            double sum = 0.0;
            for (size_t k = j; k < i; k++)
                sum += L[i * n + k] * L[k * n + j];
            L[i * n + j] = -L[i * n + i] * sum;
        }
    memset(Hinv, 0, n * n * sizeof *Hinv);
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i <= k; i++)
            subtract_row(Hinv + i * n, -L[k * n + i], L + k * n, i + 1);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++)
            Hinv[j * n + i] = Hinv[i * n + j];
}

/* H = L L^T in place (H's lower triangle in L): MBD_OK, or the status of the joint whose
 * pivot is not positive. */
static int factor(const mbd_model *model, mbd_work *work, double *L)
{
    const int failed_row = dense_cholesky(L, model->nv, 1);
    return failed_row >= 0 ? singular_joint(work, body_of_dof(model, failed_row)) : MBD_OK;
}

int inverse_by_factor(const mbd_model *model, mbd_work *work, double *L, double *Hinv)
{
    crba(model, work, L);
    const int status = factor(model, work, L);
    if (status == MBD_OK)
        inverse_from_factor(L, model->nv, Hinv);
    return status;
}

static int analytic_forward(const mbd_model *model, mbd_work *work, const double *q,
                            const double *qd, const double *tau, double *dqdd_dq,
                            double *dqdd_dqd, double *dqdd_dtau)
{
    const int nv = model->nv;
    int status = mbd_kinematics(model, work, q);
    if (status || (!dqdd_dq && !dqdd_dqd && !dqdd_dtau))
        return status;
    const size_t n = (size_t)nv;
    double *L = derivative_scratch(work, n * n * sizeof *L + rnea_derivatives_bytes(model));
    if (!L)
        return MBD_ENOMEM;
    double *buffer = L + n * n, *qdd = work->jv;
    rnea_derivatives_start(model, work, buffer, qd, L, qdd);
    if ((status = factor(model, work, L)) != MBD_OK)
        return status;
    for (size_t k = 0; k < n; k++) /* qdd = H^-1 (tau - tau(qdd = 0)) */
        qdd[k] = (tau ? tau[k] : 0.0) - qdd[k];
    solve_vector(L, nv, qdd);
    rnea_derivatives_at(model, buffer, qd, qdd, dqdd_dq, dqdd_dqd);
    solve_negated(L, nv, dqdd_dq, dqdd_dqd);
    if (dqdd_dtau)
        inverse_from_factor(L, nv, dqdd_dtau);
    return MBD_OK;
}

const mbd_derivatives_method mbd_derivatives_analytic = {
    .name = "analytic",
    .summary = "RNEA derivatives (Carpentier-Mansard) solved with H = L L^T from the same pass",
    .forward = analytic_forward,
};
