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
 * H^-1 being symmetric, L^-1 forms its upper triangle alone. The three matrices' rows lie
 * side by side in one block (dtau/dx written there by the RNEA derivatives), so that a row
 * operation is one over all three, 8 entries a register, 4 to 8 registers in flight.
 * A model of free bodies alone (a quadrotor, loose objects) has its derivatives in closed
 * form instead, from the I^-1 that its model holds (free_bodies_derivatives).
 * Measured: algorithms/PERFORMANCE.md. */
#include "derivatives/derivatives.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
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

/* The model's tree in the factor's terms, made on a workspace's first analytic call and
 * kept (it depends on the model alone): adr and lambda (tree_factor_index); the DOF of
 * each entry of the factor's rows (chain: row k's are k, lambda(k), lambda^2(k), ...); L
 * by columns for the pass up (below[k] .. below[k + 1] - 1: the DOFs under k, by their
 * rows, and where their entries L_jk lie in the rows); last[k], the last DOF of k's
 * subtree. */
typedef struct {
    size_t *adr, *below;
    int *lambda, *chain, *under, *column_at, *last;
} tree_index;

/* L's columns (below, under, column_at) from its rows' chains, and last[k] = the largest
 * DOF of k's subtree (the DOFs of a subtree follow their root). */
static void index_columns(const mbd_model *model, const tree_index *t)
{
    const int nv = model->nv;
    size_t *start = t->below;
    memset(start, 0, ((size_t)nv + 1) * sizeof *start);
    for (int k = 0; k < nv; k++) {
        t->last[k] = k;
        for (size_t e = t->adr[k] + 1; e < t->adr[k + 1]; e++)
            start[t->chain[e] + 1]++;
    }
    for (int k = 0; k < nv; k++)
        start[k + 1] += start[k];
    for (int k = 0; k < nv; k++) /* start[i]: the next free place of column i, for now */
        for (size_t e = t->adr[k] + 1; e < t->adr[k + 1]; e++) {
            const int i = t->chain[e];
            t->under[start[i]] = k;
            t->column_at[start[i]++] = (int)e;
        }
    for (int k = nv; k > 0; k--) /* back to the columns' starts */
        start[k] = start[k - 1];
    start[0] = 0;
    for (int k = nv - 1; k >= 0; k--)
        if (t->lambda[k] >= 0 && t->last[k] > t->last[t->lambda[k]])
            t->last[t->lambda[k]] = t->last[k];
}

/* The workspace's tree index, made on first use; NULL if it cannot be had. */
static const tree_index *tree_index_of(const mbd_model *model, mbd_work *work)
{
    if (work->derivative_index)
        return work->derivative_index;
    const size_t n = (size_t)model->nv, triangle = n * (n + 1) / 2;
    carved_block block = {NULL, 0};
    tree_index *t = NULL;
    for (int pass = 0; pass < 2; pass++) { /* measure, then carve */
        block.used = 0;
        t = carve(&block, sizeof *t);
        tree_index index;
        index.adr = carve(&block, (n + 1) * sizeof(size_t));
        index.below = carve(&block, (n + 1) * sizeof(size_t));
        index.column_at = carve(&block, triangle * sizeof(int));
        index.lambda = carve(&block, n * sizeof(int));
        index.chain = carve(&block, triangle * sizeof(int));
        index.under = carve(&block, triangle * sizeof(int));
        index.last = carve(&block, n * sizeof(int));
        if (t)
            *t = index;
        else if (!(block.base = aligned_alloc(64, block.used)))
            return NULL;
    }
    tree_factor_index(model, t->adr, t->lambda);
    tree_factor_chains(model->nv, t->adr, t->lambda, t->chain);
    index_columns(model, t);
    return work->derivative_index = t;
}

/* The analytic method's per-call arrays in one block: the factor's rows (at most nv (nv +
 * 1) / 2), L's entries by columns (as the index's column_at), the RNEA derivatives'
 * buffer, the three matrices' rows side by side and a row operation's chunks. */
typedef struct {
    tree_factor H;
    const tree_index *index;
    void *buffer;
    double *column, *side_by_side;
    size_t *chunks;
} analytic_layout;

static int lay_out(const mbd_model *model, mbd_work *work, analytic_layout *out)
{
    const size_t n = (size_t)model->nv, triangle = n * (n + 1) / 2;
    const tree_index *t = tree_index_of(model, work);
    if (!t)
        return MBD_ENOMEM;
    out->index = t;
    out->H.adr = t->adr;
    out->H.lambda = t->lambda;
    out->H.chain = t->chain;
    carved_block block = {NULL, 0};
    for (int pass = 0; pass < 2; pass++) { /* measure, then carve the workspace's block */
        block.used = 0;
        out->H.rows = carve(&block, triangle * sizeof(double));
        out->column = carve(&block, triangle * sizeof(double));
        out->buffer = carve(&block, rnea_derivatives_bytes(model));
        out->side_by_side = carve(&block, n * ((3 * n + 7) & ~(size_t)7) * sizeof(double));
        out->chunks = carve(&block, ((3 * n + 7) / 8 + 7) * sizeof(size_t));
        if (!block.base && !(block.base = derivative_scratch(work, block.used)))
            return MBD_ENOMEM;
    }
    return MBD_OK;
}

/* 8 doubles of a row, at any address. */
typedef double row_chunk __attribute__((vector_size(64), aligned(8), may_alias));

/* The chunks at[0 .. chunks) of row r of W (stride S) = scale row - sum_m l_m row_{from_m}:
 * chunks (a constant: unrolled) independent sums in registers, so that the multiply-adds of
 * one m do not wait on one another, the row index and l_m loaded once for all; then stored
 * (a chunk listed twice is stored twice, the same). */
MBD_INLINE void combine_chunks(double *W, size_t S, size_t r, double scale, const double *l,
                               const int *from, int count, const size_t *at, int chunks)
{
    row_chunk sum[8];
    double *row = W + S * r;
    for (int j = 0; j < chunks; j++)
        sum[j] = scale * *(const row_chunk *)(row + at[j]);
    for (int m = 0; m < count; m++) {
        const double *other = W + S * (size_t)from[m];
        for (int j = 0; j < chunks; j++)
            sum[j] -= l[m] * *(const row_chunk *)(other + at[j]);
    }
    for (int j = 0; j < chunks; j++)
        *(row_chunk *)(row + at[j]) = sum[j];
}

/* The chunks at[0 .. chunks) (chunks > 0) of row r = scale row - sum_m l_m row_{from_m}, 8
 * at a time (the most in flight that the registers hold), the last group filled up to 4 or
 * 8 by repeating its last chunk (at has room for 7 more): under 4, at no cost, their sums
 * waiting on one another's latency anyway. */
static void combine_rows(double *W, size_t S, size_t r, double scale, const double *l,
                         const int *from, int count, size_t *at, int chunks)
{
    for (int done = 0; done < chunks; done += 8) {
        const int left = chunks - done, group = left > 4 ? 8 : 4;
        for (int j = left; j < group; j++)
            at[done + j] = at[chunks - 1];
        if (group == 8)
            combine_chunks(W, S, r, scale, l, from, count, at + done, 8);
        else
            combine_chunks(W, S, r, scale, l, from, count, at + done, 4);
    }
}

/* Appends the chunks of columns [lo, hi) rounded out to 8 to at[0 .. chunks) (in increasing
 * order, those listed already left out): the new count. */
static int list_chunks(size_t *at, int chunks, size_t lo, size_t hi)
{
    size_t c = lo & ~(size_t)7;
    if (chunks > 0 && c <= at[chunks - 1])
        c = at[chunks - 1] + 8;
    for (; c < hi; c += 8)
        at[chunks++] = c;
    return chunks;
}

/* The rows of -H^-1, X and Y (those asked for) side by side in W, so that each row operation
 * is one over the three. Its columns being independent, an operation may run over more of
 * them than it needs: the parts are packed tight (n columns each), the stride a multiple
 * of 8, and an operation's columns rounded out to 8. */
typedef struct {
    double *W;
    size_t S, hinv, x, y; /* the stride, each part's first column (none: SIZE_MAX) */
} side_by_side;

static size_t part_at(size_t *used, size_t n, const double *part)
{
    if (!part)
        return SIZE_MAX;
    *used += n;
    return *used - n;
}

/* The parts of W for X, Y and Hinv (those not NULL), all zero (the RNEA derivatives write
 * the entries of dtau/dx on a common path alone) but -I in -H^-1's part (the same -D^-1 as
 * X's and Y's then yields H^-1). */
static side_by_side lay_side_by_side(size_t n, double *W, const double *X, const double *Y,
                                     const double *Hinv)
{
    side_by_side w = {W, 0, 0, 0, 0};
    w.hinv = part_at(&w.S, n, Hinv);
    w.x = part_at(&w.S, n, X);
    w.y = part_at(&w.S, n, Y);
    w.S = (w.S + 7) & ~(size_t)7;
    memset(W, 0, n * w.S * sizeof *W);
    for (size_t k = 0; Hinv && k < n; k++)
        W[w.S * k + w.hinv + k] = -1.0;
    return w;
}

/* The chunks of the pass up's row i: columns i .. end - 1 of H^-1's part, 0 .. end - 1 of
 * X's and Y's (the rest is zero there). */
static int chunks_up(const side_by_side *w, size_t *at, size_t i, size_t end)
{
    int chunks = 0;
    if (w->hinv != SIZE_MAX)
        chunks = list_chunks(at, chunks, w->hinv + i, w->hinv + end);
    if (w->x != SIZE_MAX)
        chunks = list_chunks(at, chunks, w->x, w->x + end);
    if (w->y != SIZE_MAX)
        chunks = list_chunks(at, chunks, w->y, w->y + end);
    return chunks;
}

/* X = -H^-1 dtau/dq, Y = -H^-1 dtau/dqd (dtau/dx in w's parts, their pattern's zeros used)
 * and Hinv = H^-1 (each may be NULL), with the factor of H, on their rows side by side: L^-T from the leaves up, row i
 * from the final rows under it (L's column i), then -D^-1 and L^-1 from the root down,
 * row k from the final rows above it (L's row k), over H^-1's upper triangle alone (the
 * lower one's entries in row k's first chunk are not used), mirrored. */
static void solve(const mbd_model *model, const analytic_layout *a, const side_by_side w, double *X,
                  double *Y, double *Hinv)
{
    const int nv = model->nv;
    const size_t n = (size_t)nv;
    const tree_factor *f = &a->H;
    const tree_index *t = a->index;
    size_t *at = a->chunks;
    for (size_t e = 0; e < t->below[n]; e++)
        a->column[e] = f->rows[t->column_at[e]];
    for (int i = nv - 1; i >= 0; i--) {
        const size_t start = t->below[i];
        const int count = (int)(t->below[i + 1] - start);
        if (count > 0)
            combine_rows(w.W, w.S, (size_t)i, 1.0, a->column + start, t->under + start, count, at,
                         chunks_up(&w, at, (size_t)i, (size_t)t->last[i] + 1));
    }
    for (int k = 0; k < nv; k++) {
        const double *L = f->rows + f->adr[k];
        const int chunks = list_chunks(at, 0, Hinv ? (size_t)k : 0, w.S);
        combine_rows(w.W, w.S, (size_t)k, -1.0 / L[0], L + 1, t->chain + f->adr[k] + 1,
                     (int)(f->adr[k + 1] - f->adr[k]) - 1, at, chunks);
    }
    for (size_t k = 0; k < n; k++) {
        const double *row = w.W + w.S * k;
        if (X)
            memcpy(X + n * k, row + w.x, n * sizeof *X);
        if (Y)
            memcpy(Y + n * k, row + w.y, n * sizeof *Y);
        for (size_t c = k; Hinv && c < n; c++)
            Hinv[n * k + c] = Hinv[n * c + k] = row[w.hinv + c];
    }
}

/* Whether every body is a free body on its own whose D^-1 = I^-1 the model holds (a
 * quadrotor, a scene of loose objects). */
static int free_bodies_alone(const mbd_model *model)
{
    for (int i = 0; i < model->nb; i++)
        if (!model_free_body_inverse(model, i))
            return 0;
    return 1;
}

/* M = d(v x* I v)/dv (row-major), by columns: the product rule's v x* (I e_j) + e_j x* (I v). */
static void bias_jacobian(double M[36], const mbd_rigid *body, const double v[6])
{
    double Iv[6], e[6] = {0}, Ie[6], turned[6], moved[6];
    rigid_inertia_apply(Iv, body, v);
    for (int j = 0; j < 6; j++) {
        e[j] = 1.0;
        rigid_inertia_apply(Ie, body, e);
        cross_force(turned, v, Ie);
        cross_force(moved, e, Iv);
        e[j] = 0.0;
        for (int r = 0; r < 6; r++)
            M[6 * r + j] = turned[r] + moved[r];
    }
}

/* Free bodies on their own, in closed form. In a body's coordinates (v = S qd = qd, c = 0),
 *   I qdd = tau - v x* I v - I X a_0,  X a_0 = (0; -E g),
 * so that dqdd/dtau = I^-1 and dqdd/dqd = -I^-1 d(v x* I v)/dv; q moves qdd by gravity's
 * turn alone: a turn dtheta about body axes takes E g to E g + (E g) x dtheta. Every other
 * entry is zero. */
static void free_bodies_derivatives(const mbd_model *model, const mbd_work *work, const double *qd,
                                    double *dqdd_dq, double *dqdd_dqd, double *dqdd_dtau)
{
    const size_t n = (size_t)model->nv;
    double *const out[3] = {dqdd_dq, dqdd_dqd, dqdd_dtau};
    for (int k = 0; k < 3; k++)
        if (out[k])
            memset(out[k], 0, n * n * sizeof *out[k]);
    for (int i = 0; i < model->nb; i++) {
        const size_t at = (size_t)model->v0[i] * (n + 1);
        const double *Iinv = model_free_body_inverse(model, i);
        double M[36];
        bias_jacobian(M, &model->inertia[i], qd + model->v0[i]);
        for (size_t r = 0; r < 6; r++)
            for (size_t c = 0; c < 6; c++) {
                double sum = 0.0;
                for (size_t k = 0; k < 6; k++)
                    sum -= Iinv[6 * r + k] * M[6 * k + c];
                if (dqdd_dqd)
                    dqdd_dqd[at + n * r + c] = sum;
                if (dqdd_dtau)
                    dqdd_dtau[at + n * r + c] = Iinv[6 * r + c];
            }
        double Eg[3];
        mat3_apply(Eg, work->X[i].E, model->gravity);
        for (size_t c = 0; dqdd_dq && c < 3; c++) {
            double e[3] = {0}, column[3];
            e[c] = 1.0;
            vec3_cross(column, Eg, e);
            for (size_t r = 0; r < 3; r++)
                dqdd_dq[at + n * (3 + r) + c] = column[r];
        }
    }
}

static int analytic_forward(const mbd_model *model, mbd_work *work, const double *q,
                            const double *qd, const double *tau, double *dqdd_dq, double *dqdd_dqd,
                            double *dqdd_dtau)
{
    int status = mbd_kinematics(model, work, q);
    if (status || (!dqdd_dq && !dqdd_dqd && !dqdd_dtau))
        return status;
    if (free_bodies_alone(model)) {
        free_bodies_derivatives(model, work, qd, dqdd_dq, dqdd_dqd, dqdd_dtau);
        return MBD_OK;
    }
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
    const side_by_side w =
        lay_side_by_side((size_t)model->nv, a.side_by_side, dqdd_dq, dqdd_dqd, dqdd_dtau);
    rnea_derivatives_at(model, a.buffer, qd, qdd, dqdd_dq ? w.W + w.x : NULL,
                        dqdd_dqd ? w.W + w.y : NULL, w.S);
    solve(model, &a, w, dqdd_dq, dqdd_dqd, dqdd_dtau);
    return MBD_OK;
}

const mbd_derivatives_method mbd_derivatives_analytic = {
    .name = "analytic",
    .summary =
        "RNEA derivatives (Carpentier-Mansard) solved with H's tree-sparse L^T D L from the same pass",
    .forward = analytic_forward,
};
