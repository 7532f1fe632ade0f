/* tree_factor.c: the tree-sparse L^T D L factor of H (Featherstone, "Efficient
 * factorization of the joint-space inertia matrix for branched kinematic trees", IJRR
 * 2005; its storage and steps: solvers/sparse.c's opening comment), shared by the sparse
 * solver and the derivatives:
 *   factor:  for k = n-1 .. 0:  for i = lambda(k), lambda^2(k), ...:
 *                a = H_ki / H_kk;  H_ij -= a H_kj for j = i, lambda(i), ...;  H_ki = a,
 *            and in the same loop L^T y = b (y_i -= L_ki y_k), z_k = y_k / H_kk;
 *   solve:   L x = z (k = 0 .. n-1: x_k -= L_ki x_i). */
#include "dynamics/dynamics.h"

#include <math.h>
#include <string.h>

void tree_factor_index(const mbd_model *model, size_t *adr, int *lambda)
{
    adr[0] = 0;
    for (int i = 0; i < model->nb; i++) {
        const int p = model->parent[i], v0 = model->v0[i];
        for (int m = 0; m < model->joint[i].nv; m++) {
            const int k = v0 + m, up = m > 0   ? k - 1
                                       : p < 0 ? -1
                                               : model->v0[p] + model->joint[p].nv - 1;
            lambda[k] = up;
            adr[k + 1] = adr[k] + 1 + (up < 0 ? 0 : adr[up + 1] - adr[up]);
        }
    }
}

/* Each row's chain: k, then its parent's row's chain (a copy, parents first). */
void tree_factor_chains(int nv, const size_t *adr, const int *lambda, int *chain)
{
    for (int k = 0; k < nv; k++) {
        const int up = lambda[k];
        chain[adr[k]] = k;
        if (up >= 0)
            memcpy(chain + adr[k] + 1, chain + adr[up], (adr[up + 1] - adr[up]) * sizeof *chain);
    }
}

/* Eliminates DOF k, and k - 1 with it if pair (they are siblings: neither is the other's
 * ancestor, both rows are final and their ancestors are the same, so that the ancestors'
 * rows take a rank-2 update in one sweep): scales row k to L and x_k to z_k, and subtracts
 * L_ki D_k L_kj from H_ij and L_ki y_k from y_i for the ancestors i. */
MBD_INLINE void eliminate(const tree_factor *f, double *x, int k, int pair)
{
    double *restrict row_k = f->rows + f->adr[k], *restrict row_s = f->rows + f->adr[k - pair];
    const int len = (int)(f->adr[k + 1] - f->adr[k]);
    const double yk = x[k], ys = x[k - pair], inv_dk = 1.0 / row_k[0], inv_ds = 1.0 / row_s[0];
    const int *up = f->chain + f->adr[k];
    for (int m = 1; m < len; m++) {
        const int i = up[m];
        double *restrict row_i = f->rows + f->adr[i];
        const double a = row_k[m] * inv_dk, b = pair ? row_s[m] * inv_ds : 0.0;
        for (int t = 0; t < len - m; t++)
            row_i[t] -= pair ? a * row_k[m + t] + b * row_s[m + t] : a * row_k[m + t];
        row_k[m] = a;
        x[i] -= a * yk;
        if (pair) {
            row_s[m] = b;
            x[i] -= b * ys;
        }
    }
    x[k] = yk * inv_dk;
    if (pair)
        x[k - 1] = ys * inv_ds;
}

/* H = L^T D L in place, and on the way x = D^-1 L^-T x: when DOF k's turn comes, the DOFs
 * below it are done, so that row k of L and x_k = y_k are final. A pivot not > 0 names its
 * body. */
int tree_factor_reduce(const mbd_model *model, mbd_work *work, const tree_factor *f, double *x)
{
    for (int k = model->nv - 1; k >= 0; k--) {
        const int pair = k > 0 && f->lambda[k - 1] == f->lambda[k];
        for (int j = 0; j <= pair; j++) {
            const double d = f->rows[f->adr[k - j]];
            if (!(d > 0.0) || !isfinite(d))
                return singular_joint(work, body_of_dof(model, k - j));
        }
        if (pair)
            eliminate(f, x, k--, 1);
        else
            eliminate(f, x, k, 0);
    }
    return MBD_OK;
}

/* x = L^-1 x (k = 0 .. n-1: x_k -= L_ki x_i): the rest of H^-1 x after tree_factor_reduce.
 * Two sums, so that the multiply-adds of a long row do not all wait on one another. */
void tree_back_substitute(const mbd_model *model, const tree_factor *f, double *x)
{
    for (int k = 0; k < model->nv; k++) {
        const double *L = f->rows + f->adr[k];
        const int *up = f->chain + f->adr[k];
        const int len = (int)(f->adr[k + 1] - f->adr[k]);
        double even = x[k], odd = 0.0;
        int m = 1;
        for (; m + 1 < len; m += 2) {
            even -= L[m] * x[up[m]];
            odd -= L[m + 1] * x[up[m + 1]];
        }
        if (m < len)
            even -= L[m] * x[up[m]];
        x[k] = even + odd;
    }
}
