/* sparse.c: CRBA with the tree-sparse L^T D L factorization (Featherstone, RBDA §6.5;
 * IJRR 2005), which never touches the zeros that branching leaves in H.
 *
 * Multi-DOF joints are expanded into a chain of DOFs (the standard trick), so that the
 * tree is one of DOFs: lambda(k), the parent of DOF k, is k - 1 inside a joint, else the
 * last DOF of the parent body's joint (-1 at the root). H_kj != 0 only if j = k or one of
 * j, k is an ancestor of the other, and the factor keeps that pattern (no fill-in).
 *
 * Storage (lambda-indexed, lower triangle by rows): row k holds H_{k,j} for
 * j = k, lambda(k), lambda^2(k), ..., depth(k) + 1 entries, so row i = lambda^m(k) lines up
 * with row k shifted by m and every inner loop below runs over contiguous memory.
 *
 *   H by CRBA:  I^C_i = I_i + sum_children X_j^T I^C_j X_j;  for each DOF k of body i,
 *               F = I^C_i S_k and H_kl = S_l . F for l = k, lambda(k), ..., both vectors
 *               taken to world coordinates (X0_i = X_i X0_lambda(i)), where the dot
 *               product needs no transform per step up the tree.
 *   C:          RNEA(q, qd, qdd = 0) with gravity.
 *   factor:     for k = n-1 .. 0:  for i = lambda(k), lambda^2(k), ...:
 *                   a = H_ki / H_kk;  H_ij -= a H_kj for j = i, lambda(i), ...;  H_ki = a
 *               giving H = L^T D L, D = diag(H_kk), L unit lower with L_ki = H_ki.
 *   solve:      L^T y = b (k = n-1 .. 0: y_i -= L_ki y_k for i = lambda^m(k)),
 *               z = D^-1 y,  L x = z (k = 0 .. n-1: x_k -= L_ki x_i).
 * The factorization costs O(sum_k depth(k)^2) = O(N d^2), d the depth of the DOF tree;
 * CRBA and the solve O(N d). The momentum form is qd = H^-1 p, then pd from the subtree
 * momenta as in dense.c. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A composite inertia is a rigid-body inertia, so it is kept as its 13 parameters: mass,
 * h = m c and I-bar about the frame origin (full 3x3). Carrying it to the parent costs
 * half a general congruence X^T I X. */
typedef struct {
    double m, h[3], I[9];
} rigid_inertia;

/* The scratch: the row addresses (nv + 1) and lambda (nv ints), one nv vector, the
 * transforms world -> body and the composite inertias (nb each), then the factor's rows. */
typedef struct {
    size_t *adr;
    int *lambda;
    double *vec;
    mbd_xform *X0;
    rigid_inertia *IC;
    double *rows;
} sparse_layout;

/* Doubles per body: a transform world -> body and a composite inertia. */
#define BODY_DOUBLES ((sizeof(mbd_xform) + sizeof(rigid_inertia)) / sizeof(double))

static size_t index_doubles(size_t nv)
{
    return ((nv + 1) * sizeof(size_t) + nv * sizeof(int) + sizeof(double) - 1) / sizeof(double);
}

/* The factor's size, sum over DOFs k of depth(k) + 1, from the number of DOFs above each
 * body; (size_t)-1 / 64, so that mbd_work_new fails, if that cannot be counted. */
static size_t factor_size(const mbd_model *model)
{
    int *above = malloc((size_t)model->nb * sizeof *above);
    if (!above)
        return (size_t)-1 / 64;
    size_t total = 0;
    for (int i = 0; i < model->nb; i++) {
        const int p = model->parent[i], n = model->joint[i].nv;
        above[i] = p < 0 ? 0 : above[p] + model->joint[p].nv;
        total += (size_t)n * (size_t)above[i] + (size_t)n * (size_t)(n + 1) / 2;
    }
    free(above);
    return total;
}

static size_t sparse_scratch(const mbd_model *model)
{
    const size_t nv = (size_t)model->nv;
    return index_doubles(nv) + nv + BODY_DOUBLES * (size_t)model->nb + factor_size(model);
}

/* Carves the scratch and fills lambda and the row addresses (they depend on the model
 * only, and cost O(nv)). */
static sparse_layout layout(const mbd_model *model, mbd_work *work)
{
    const size_t nv = (size_t)model->nv;
    sparse_layout s = {.adr = (size_t *)work->scratch, .vec = work->scratch + index_doubles(nv)};
    s.lambda = (int *)(s.adr + nv + 1);
    s.X0 = (mbd_xform *)(s.vec + nv);
    s.IC = (rigid_inertia *)(s.X0 + model->nb);
    s.rows = s.vec + nv + BODY_DOUBLES * (size_t)model->nb;
    s.adr[0] = 0;
    for (int i = 0; i < model->nb; i++) {
        const int p = model->parent[i], v0 = model->v0[i];
        for (int m = 0; m < model->joint[i].nv; m++) {
            const int k = v0 + m, up = m > 0 ? k - 1 : p < 0 ? -1 : model->v0[p] + model->joint[p].nv - 1;
            s.lambda[k] = up;
            s.adr[k + 1] = s.adr[k] + 1 + (up < 0 ? 0 : s.adr[up + 1] - s.adr[up]);
        }
    }
    return s;
}

static void rigid_from_inertia(rigid_inertia *out, const mbd_inertia *I)
{
    out->m = I->C[0];
    out->h[0] = I->B[7]; /* B = h x */
    out->h[1] = I->B[2];
    out->h[2] = I->B[3];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            out->I[3 * r + c] = I->A[SYM3(r, c)];
}

/* f = I s = (I-bar w + h x v; m v - h x w) */
static void rigid_apply(double *restrict f, const rigid_inertia *I, const double *s)
{
    double hv[3], hw[3];
    vec3_cross(hv, I->h, s + 3);
    vec3_cross(hw, I->h, s);
    mat3_apply(f, I->I, s);
    for (int r = 0; r < 3; r++) {
        f[r] += hv[r];
        f[3 + r] = I->m * s[3 + r] - hw[r];
    }
}

/* parent += X^T I X (RBDA §2.13): with h' = E^T h, h_p = h' + m r and
 * I-bar_p = E^T I-bar E - r x h' x - h_p x r x = E^T I-bar E - h' r^T - r h_p^T + (r.h' + r.h_p) 1. */
static void rigid_add_to_parent(rigid_inertia *restrict parent, const mbd_xform *X, const rigid_inertia *I)
{
    const double *r = X->r;
    double hr[3], hp[3], IE[9], EtIE[9], Et[9];
    mat3_apply_t(hr, X->E, I->h);
    for (int k = 0; k < 3; k++)
        hp[k] = hr[k] + I->m * r[k];
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            Et[3 * a + b] = X->E[3 * b + a];
    mat3_mul(IE, I->I, X->E);
    mat3_mul(EtIE, Et, IE);
    const double trace_term = vec3_dot(r, hr) + vec3_dot(r, hp);
    parent->m += I->m;
    for (int a = 0; a < 3; a++) {
        parent->h[a] += hp[a];
        for (int b = 0; b < 3; b++)
            parent->I[3 * a + b] += EtIE[3 * a + b] - hr[a] * r[b] - r[a] * hp[b] + (a == b ? trace_term : 0.0);
    }
}

/* m in world coordinates from body coordinates, X0 = world -> body: (E^T w; E^T v + r x E^T w). */
static void motion_to_world(double *restrict out, const mbd_xform *X0, const double *m)
{
    double rw[3];
    mat3_apply_t(out, X0->E, m);
    mat3_apply_t(out + 3, X0->E, m + 3);
    vec3_cross(rw, X0->r, out);
    for (int r = 0; r < 3; r++)
        out[3 + r] += rw[r];
}

/* CRBA into the rows. H_kl = S_l^T X^T F_k is a power, the same in any frame: with S_l
 * (in work->U) and F_k = I^C_i S_k both in world coordinates, each entry is one dot
 * product instead of one transform per step up the tree. */
static void sparse_crba(const mbd_model *model, mbd_work *work, const sparse_layout *s)
{
    double *Sw = work->U;
    for (int i = 0; i < model->nb; i++) {
        const int p = model->parent[i];
        if (p < 0)
            s->X0[i] = work->X[i];
        else
            xform_compose(&s->X0[i], &work->X[i], &s->X0[p]);
        for (int k = model->v0[i]; k < model->v0[i] + model->joint[i].nv; k++)
            motion_to_world(Sw + 6 * k, &s->X0[i], work->S + 6 * k);
        rigid_from_inertia(&s->IC[i], &model->inertia[i]);
    }
    for (int i = model->nb - 1; i >= 0; i--) {
        for (int k = model->v0[i]; k < model->v0[i] + model->joint[i].nv; k++) {
            double *restrict row = s->rows + s->adr[k], F[6], Fw[6];
            rigid_apply(F, &s->IC[i], work->S + 6 * k);
            xform_force_t(Fw, &s->X0[i], F);
            for (int t = 0, l = k; l >= 0; t++, l = s->lambda[l])
                row[t] = dot6(Sw + 6 * l, Fw);
        }
        if (model->parent[i] >= 0)
            rigid_add_to_parent(&s->IC[model->parent[i]], &work->X[i], &s->IC[i]);
    }
}

/* H = L^T D L in place; a pivot not > 0 names its body. */
static int factor_in_place(const mbd_model *model, mbd_work *work, const sparse_layout *s)
{
    double *restrict rows = s->rows;
    for (int k = model->nv - 1; k >= 0; k--) {
        double *restrict row_k = rows + s->adr[k];
        const int len = (int)(s->adr[k + 1] - s->adr[k]);
        const double d = row_k[0];
        if (!(d > 0.0) || !isfinite(d))
            return singular_joint(work, body_of_dof(model, k));
        const double inv_d = 1.0 / d;
        int i = s->lambda[k];
        for (int m = 1; m < len; m++, i = s->lambda[i]) {
            double *restrict row_i = rows + s->adr[i];
            const double a = row_k[m] * inv_d;
            for (int t = 0; t < len - m; t++)
                row_i[t] -= a * row_k[m + t];
            row_k[m] = a;
        }
    }
    return MBD_OK;
}

/* x = H^-1 x from the factor. */
static void solve_in_place(const mbd_model *model, const sparse_layout *s, double *x)
{
    const int nv = model->nv;
    const double *rows = s->rows;
    for (int k = nv - 1; k >= 0; k--) { /* L^T y = b */
        const double *L = rows + s->adr[k], xk = x[k];
        const int len = (int)(s->adr[k + 1] - s->adr[k]);
        for (int m = 1, i = s->lambda[k]; m < len; m++, i = s->lambda[i])
            x[i] -= L[m] * xk;
    }
    for (int k = 0; k < nv; k++) { /* z = D^-1 y, then L x = z */
        const double *L = rows + s->adr[k];
        const int len = (int)(s->adr[k + 1] - s->adr[k]);
        double xk = x[k] / L[0];
        for (int m = 1, i = s->lambda[k]; m < len; m++, i = s->lambda[i])
            xk -= L[m] * x[i];
        x[k] = xk;
    }
}

static int factor_mass_matrix(const mbd_model *model, mbd_work *work, sparse_layout *s)
{
    *s = layout(model, work);
    sparse_crba(model, work, s);
    return factor_in_place(model, work, s);
}

static int sparse_acc(const mbd_model *model, mbd_work *work, const double *qd, const double *tau,
                      double *qdd)
{
    sparse_layout s;
    int status = factor_mass_matrix(model, work, &s);
    if (status)
        return status;
    memset(qdd, 0, (size_t)model->nv * sizeof *qdd);
    rnea(model, work, qd, qdd, 1, s.vec);
    for (int k = 0; k < model->nv; k++)
        qdd[k] = (tau ? tau[k] : 0.0) - s.vec[k];
    solve_in_place(model, &s, qdd);
    return MBD_OK;
}

static int sparse_mom(const mbd_model *model, mbd_work *work, const double *p, const double *tau,
                      double *qd, double *pd)
{
    sparse_layout s;
    int status = factor_mass_matrix(model, work, &s);
    if (status)
        return status;
    memcpy(qd, p, (size_t)model->nv * sizeof *qd);
    solve_in_place(model, &s, qd);
    momentum_rates_from_qd(model, work, qd, tau, pd);
    return MBD_OK;
}

const mbd_solver mbd_solver_sparse = {
    .name = "sparse",
    .summary = "CRBA + tree-sparse L^T D L (Featherstone 2005), O(N d^2), d = tree depth; both formulations",
    .scratch_doubles = sparse_scratch,
    .solve_acc = sparse_acc,
    .solve_mom = sparse_mom,
};
