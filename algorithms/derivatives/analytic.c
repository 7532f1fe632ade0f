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
#include "derivatives/derivatives.h"

#include <math.h>
#include <string.h>

#include "dynamics/cholesky_kernels.h"

/* row[lo .. hi) -= l done[lo .. hi) (row may be NULL: nothing to do) */
static void subtract_range(double *restrict row, double l, const double *restrict done, size_t lo,
                           size_t hi)
{
    if (row)
        for (size_t c = lo; c < hi; c++)
            row[c] -= l * done[c];
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
 * the RNEA derivatives' buffer, adr and lambda; the DOF of each entry of the rows (chain:
 * row k's are k, lambda(k), lambda^2(k), ...); L by columns for the pass up (below[k] ..
 * below[k + 1] - 1: the DOFs under k, by their rows, with their entries L_jk); last[k],
 * the last DOF of k's subtree. */
typedef struct {
    tree_factor H;
    void *buffer;
    size_t *below;
    int *chain, *under, *last;
    double *column;
} analytic_layout;

static int lay_out(const mbd_model *model, mbd_work *work, analytic_layout *out)
{
    const size_t n = (size_t)model->nv, triangle = n * (n + 1) / 2;
    carved_block block = {NULL, 0};
    for (int pass = 0; pass < 2; pass++) { /* measure, then carve the workspace's block */
        block.used = 0;
        out->H.rows = carve(&block, triangle * sizeof(double));
        out->column = carve(&block, triangle * sizeof(double));
        out->buffer = carve(&block, rnea_derivatives_bytes(model));
        out->H.adr = carve(&block, (n + 1) * sizeof(size_t));
        out->below = carve(&block, (n + 1) * sizeof(size_t));
        out->H.lambda = carve(&block, n * sizeof(int));
        out->chain = carve(&block, triangle * sizeof(int));
        out->under = carve(&block, triangle * sizeof(int));
        out->last = carve(&block, n * sizeof(int));
        if (!block.base && !(block.base = derivative_scratch(work, block.used)))
            return MBD_ENOMEM;
    }
    return MBD_OK;
}

/* The chain of each row: k, then its parent's row's chain (a copy, parents first: no walk
 * up lambda, whose loads wait on one another). */
static void index_chains(const mbd_model *model, const analytic_layout *a)
{
    const tree_factor *f = &a->H;
    for (int k = 0; k < model->nv; k++) {
        int *chain = a->chain + f->adr[k];
        const int up = f->lambda[k];
        chain[0] = k;
        if (up >= 0)
            memcpy(chain + 1, a->chain + f->adr[up], (f->adr[up + 1] - f->adr[up]) * sizeof *chain);
    }
}

/* L's columns (below, under, column) from its rows, and last[k] = the largest DOF of k's
 * subtree (the DOFs of a subtree follow their root). */
static void index_columns(const mbd_model *model, const analytic_layout *a)
{
    const tree_factor *f = &a->H;
    const int nv = model->nv;
    size_t *start = a->below;
    memset(start, 0, ((size_t)nv + 1) * sizeof *start);
    for (int k = 0; k < nv; k++) {
        a->last[k] = k;
        for (size_t e = f->adr[k] + 1; e < f->adr[k + 1]; e++)
            start[a->chain[e] + 1]++;
    }
    for (int k = 0; k < nv; k++)
        start[k + 1] += start[k];
    for (int k = 0; k < nv; k++) /* start[i]: the next free place of column i, for now */
        for (size_t e = f->adr[k] + 1; e < f->adr[k + 1]; e++) {
            const int i = a->chain[e];
            a->under[start[i]] = k;
            a->column[start[i]++] = f->rows[e];
        }
    for (int k = nv; k > 0; k--) /* back to the columns' starts */
        start[k] = start[k - 1];
    start[0] = 0;
    for (int k = nv - 1; k >= 0; k--)
        if (f->lambda[k] >= 0 && a->last[k] > a->last[f->lambda[k]])
            a->last[f->lambda[k]] = a->last[k];
}

/* 8 doubles of a row, at any address. */
typedef double row_chunk __attribute__((vector_size(64), aligned(8), may_alias));

/* The entries c .. c + 8 chunks - 1 of scale row - sum_m l_m row_{from_m} of A (n columns),
 * into sum: chunks independent sums, so that the multiply-adds of one m do not wait on one
 * another, with the row index and l_m loaded once for all (chunks a constant: unrolled). */
MBD_INLINE void combined_chunks(row_chunk *sum, int chunks, const double *row, double scale,
                                const double *l, const int *from, int count, const double *A,
                                size_t n, size_t c)
{
    for (int j = 0; j < chunks; j++)
        sum[j] = scale * *(const row_chunk *)(row + c + 8 * (size_t)j);
    for (int m = 0; m < count; m++) {
        const double *other = A + n * (size_t)from[m] + c;
        for (int j = 0; j < chunks; j++)
            sum[j] -= l[m] * *(const row_chunk *)(other + 8 * (size_t)j);
    }
}

/* row[lo .. hi) = (scale row - sum_m l_m row_{from_m})[lo .. hi), rows of A (NULL: nothing
 * to do; row not among the from rows): each 8 entries summed in a register, 32 at a time,
 * stored once (the row's last 8, which may overlap the others, computed first and stored
 * last); under 8 entries, entry by entry. */
static void combine_rows(double *A, size_t n, size_t r, double scale, const double *l,
                         const int *from, int count, size_t lo, size_t hi)
{
    if (!A)
        return;
    double *restrict row = A + n * r;
    if (hi - lo < 8) {
        for (size_t c = lo; c < hi; c++)
            row[c] *= scale;
        for (int m = 0; m < count; m++)
            for (size_t c = lo; c < hi; c++)
                row[c] -= l[m] * A[n * (size_t)from[m] + c];
        return;
    }
    row_chunk last, four[4];
    combined_chunks(&last, 1, row, scale, l, from, count, A, n, hi - 8);
    size_t c = lo;
    for (; c + 32 < hi; c += 32) {
        combined_chunks(four, 4, row, scale, l, from, count, A, n, c);
        for (int j = 0; j < 4; j++)
            *(row_chunk *)(row + c + 8 * (size_t)j) = four[j];
    }
    for (; c + 8 < hi; c += 8) {
        combined_chunks(four, 1, row, scale, l, from, count, A, n, c);
        *(row_chunk *)(row + c) = four[0];
    }
    *(row_chunk *)(row + hi - 8) = last;
}

/* X = -H^-1 X, Y = -H^-1 Y for X, Y of dtau/dx's pattern, and Hinv = H^-1 (each may be
 * NULL), with the factor of H: L^-T from the leaves up, row i from the final rows under it
 * (L's column i), then -D^-1 (D^-1 for Hinv) and L^-1 from the root down, row k from the
 * final rows above it (L's row k), Hinv's upper triangle alone, mirrored. */
static void solve_in_place(const mbd_model *model, const analytic_layout *a, double *X, double *Y,
                           double *Hinv)
{
    const int nv = model->nv;
    const size_t n = (size_t)nv;
    const tree_factor *f = &a->H;
    if (Hinv) {
        memset(Hinv, 0, n * n * sizeof *Hinv);
        for (size_t k = 0; k < n; k++)
            Hinv[k * n + k] = 1.0;
    }
    for (int i = nv - 1; i >= 0; i--) {
        const size_t at = a->below[i], end = (size_t)a->last[i] + 1, r = (size_t)i;
        const int count = (int)(a->below[i + 1] - at);
        const double *l = a->column + at;
        const int *from = a->under + at;
        combine_rows(X, n, r, 1.0, l, from, count, 0, end);
        combine_rows(Y, n, r, 1.0, l, from, count, 0, end);
        combine_rows(Hinv, n, r, 1.0, l, from, count, r, end);
    }
    for (int k = 0; k < nv; k++) {
        const double *L = f->rows + f->adr[k];
        const int *path = a->chain + f->adr[k] + 1;
        const int count = (int)(f->adr[k + 1] - f->adr[k]) - 1;
        const size_t r = (size_t)k;
        combine_rows(X, n, r, -1.0 / L[0], L + 1, path, count, 0, n);
        combine_rows(Y, n, r, -1.0 / L[0], L + 1, path, count, 0, n);
        combine_rows(Hinv, n, r, 1.0 / L[0], L + 1, path, count, r, n);
    }
    for (size_t i = 0; Hinv && i < n; i++)
        for (size_t j = 0; j < i; j++)
            Hinv[i * n + j] = Hinv[j * n + i];
}

static int analytic_forward(const mbd_model *model, mbd_work *work, const double *q,
                            const double *qd, const double *tau, double *dqdd_dq, double *dqdd_dqd,
                            double *dqdd_dtau)
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
    index_chains(model, &a);
    index_columns(model, &a);
    rnea_derivatives_at(model, a.buffer, qd, qdd, dqdd_dq, dqdd_dqd);
    solve_in_place(model, &a, dqdd_dq, dqdd_dqd, dqdd_dtau);
    return MBD_OK;
}

const mbd_derivatives_method mbd_derivatives_analytic = {
    .name = "analytic",
    .summary =
        "RNEA derivatives (Carpentier-Mansard) solved with H's tree-sparse L^T D L from the same pass",
    .forward = analytic_forward,
};
