/* analytic.c: the derivatives of qdd = FD(q, qd, tau) from those of the inverse dynamics
 * (Carpentier and Mansard, "Analytical Derivatives of Rigid Body Dynamics Algorithms", RSS
 * 2018): ID(q, qd, FD(q, qd, tau)) = tau for all x, so
 *   dqdd/dx = -H^-1 dtau/dx (x = q, qd) at qdd = FD(q, qd, tau),  dqdd/dtau = H^-1,
 * with dtau/dx by the O(N d) RNEA derivatives (dynamics/rnea_derivatives.c), whose first
 * passes give H (s_k . I^C s_m, as CRBA) and tau at qdd = 0, so that qdd = H^-1 (tau -
 * tau(qdd = 0)) comes from the same factor as the rest, with no forward solve.
 * H = L^T D L is factored in the tree-sparse form (Featherstone 2005, solvers/sparse.c: no
 * fill-in, L_ki != 0 only for i an ancestor of k), and H^-1 X = L^-1 D^-1 L^-T X is formed
 * in place by row operations along contiguous rows (they vectorize), one per nonzero of L
 * and pass: 2 nnz(L) nv multiplications a matrix instead of the dense factor's 2 nv^3 / 2
 * (nv^2 (d + 1) on a tree of depth d). The zeros go further: row m of dtau/dx is nonzero
 * only on the ancestors and the subtree of m, within columns 0 .. last(m) (the subtree's
 * last DOF), which L^-T (leaves to root) keeps; the identity's row m, on its subtree; and
 * H^-1 being symmetric, L^-1 forms its upper triangle alone. Measured:
 * algorithms/PERFORMANCE.md. */
#include "internal.h"

#include <math.h>
#include <string.h>

#include "dynamics/cholesky_kernels.h"

/* row[lo .. hi) -= l done[lo .. hi) (row may be NULL: nothing to do) */
static void subtract_range(double *restrict row, double l, const double *restrict done,
                           size_t lo, size_t hi)
{
    if (row)
        for (size_t c = lo; c < hi; c++)
            row[c] -= l * done[c];
}

static void scale_range(double *row, double factor, size_t lo, size_t hi)
{
    if (row)
        for (size_t c = lo; c < hi; c++)
            row[c] *= factor;
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
            subtract_range(Hinv + i * n, -L[k * n + i], L + k * n, 0, i + 1);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++)
            Hinv[j * n + i] = Hinv[i * n + j];
}

/* The dense route, for the automatic method's H^-1 (inverse_by_factor): H = L L^T in place
 * (H's lower triangle in L): MBD_OK, or the status of the joint whose
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

/* The analytic method's arrays in one block: the factor's rows (at most nv (nv + 1) / 2),
 * the RNEA derivatives' buffer, then adr, lambda and last (last[k]: the last DOF of k's
 * subtree). */
typedef struct {
    tree_factor H;
    int *last;
    void *buffer;
} analytic_layout;

static int lay_out(const mbd_model *model, mbd_work *work, analytic_layout *out)
{
    const size_t n = (size_t)model->nv;
    carved_block block = {NULL, 0};
    for (int pass = 0; pass < 2; pass++) { /* measure, then carve the workspace's block */
        block.used = 0;
        out->H.rows = carve(&block, n * (n + 1) / 2 * sizeof(double));
        out->buffer = carve(&block, rnea_derivatives_bytes(model));
        out->H.adr = carve(&block, (n + 1) * sizeof(size_t));
        out->H.lambda = carve(&block, n * sizeof(int));
        out->last = carve(&block, n * sizeof(int));
        if (!block.base && !(block.base = derivative_scratch(work, block.used)))
            return MBD_ENOMEM;
    }
    return MBD_OK;
}

/* last[k] = the largest DOF of k's subtree (the DOFs of a subtree follow their root). */
static void subtree_ends(const int *lambda, int nv, int *last)
{
    for (int k = 0; k < nv; k++)
        last[k] = k;
    for (int k = nv - 1; k >= 0; k--)
        if (lambda[k] >= 0 && last[k] > last[lambda[k]])
            last[lambda[k]] = last[k];
}

/* Row r of the row-major n x n A, or NULL without A. */
static double *row_of(double *A, size_t n, int r)
{
    return A ? A + n * (size_t)r : NULL;
}

/* X = -H^-1 X, Y = -H^-1 Y for X, Y of dtau/dx's pattern, and Hinv = H^-1 (each may be
 * NULL), with the factor of H: L^-T and D^-1 from the leaves up (each row final when its
 * turn comes), then L^-1 from the root down, Hinv's upper triangle alone, mirrored. */
static void solve_in_place(const mbd_model *model, const analytic_layout *a, double *X,
                           double *Y, double *Hinv)
{
    const int nv = model->nv;
    const size_t n = (size_t)nv;
    const tree_factor *f = &a->H;
    if (Hinv) {
        memset(Hinv, 0, n * n * sizeof *Hinv);
        for (size_t k = 0; k < n; k++)
            Hinv[k * n + k] = 1.0;
    }
    for (int k = nv - 1; k >= 0; k--) {
        const double *L = f->rows + f->adr[k];
        const size_t len = f->adr[k + 1] - f->adr[k], end = (size_t)a->last[k] + 1, d = (size_t)k;
        double *x = row_of(X, n, k), *y = row_of(Y, n, k), *h = row_of(Hinv, n, k);
        for (size_t m = 1, i = (size_t)f->lambda[k]; m < len; m++, i = (size_t)f->lambda[i]) {
            subtract_range(row_of(X, n, (int)i), L[m], x, 0, end);
            subtract_range(row_of(Y, n, (int)i), L[m], y, 0, end);
            subtract_range(row_of(Hinv, n, (int)i), L[m], h, d, end);
        }
        scale_range(x, -1.0 / L[0], 0, end);
        scale_range(y, -1.0 / L[0], 0, end);
        scale_range(h, 1.0 / L[0], d, end);
    }
    for (int k = 0; k < nv; k++) {
        const double *L = f->rows + f->adr[k];
        const size_t len = f->adr[k + 1] - f->adr[k], d = (size_t)k;
        double *x = row_of(X, n, k), *y = row_of(Y, n, k), *h = row_of(Hinv, n, k);
        for (size_t m = 1, i = (size_t)f->lambda[k]; m < len; m++, i = (size_t)f->lambda[i]) {
            subtract_range(x, L[m], row_of(X, n, (int)i), 0, n);
            subtract_range(y, L[m], row_of(Y, n, (int)i), 0, n);
            subtract_range(h, L[m], row_of(Hinv, n, (int)i), d, n);
        }
    }
    for (size_t i = 0; Hinv && i < n; i++)
        for (size_t j = 0; j < i; j++)
            Hinv[i * n + j] = Hinv[j * n + i];
}

static int analytic_forward(const mbd_model *model, mbd_work *work, const double *q,
                            const double *qd, const double *tau, double *dqdd_dq,
                            double *dqdd_dqd, double *dqdd_dtau)
{
    int status = mbd_kinematics(model, work, q);
    if (status || (!dqdd_dq && !dqdd_dqd && !dqdd_dtau))
        return status;
    analytic_layout a;
    if ((status = lay_out(model, work, &a)) != MBD_OK)
        return status;
    double *qdd = work->jv;
    rnea_derivatives_start(model, work, a.buffer, qd, &a.H, qdd);
    for (int k = 0; k < model->nv; k++) /* qdd = H^-1 (tau - tau(qdd = 0)) */
        qdd[k] = (tau ? tau[k] : 0.0) - qdd[k];
    if ((status = tree_factor_reduce(model, work, &a.H, qdd)) != MBD_OK)
        return status;
    tree_back_substitute(model, &a.H, qdd);
    subtree_ends(a.H.lambda, model->nv, a.last);
    rnea_derivatives_at(model, a.buffer, qd, qdd, dqdd_dq, dqdd_dqd);
    solve_in_place(model, &a, dqdd_dq, dqdd_dqd, dqdd_dtau);
    return MBD_OK;
}

const mbd_derivatives_method mbd_derivatives_analytic = {
    .name = "analytic",
    .summary = "RNEA derivatives (Carpentier-Mansard) solved with H's tree-sparse L^T D L from the same pass",
    .forward = analytic_forward,
};
