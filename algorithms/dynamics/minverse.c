/* minverse.c: H^-1 in O(N^2) by the articulated-body recursion (Carpentier and Mansard
 * 2018; Pinocchio's computeMinverse), one column at a time in body frames.
 *
 *   leaves -> root, once:  U_i = I^A_i S_i,  D_i = S_i^T U_i,  I^A_i = I_i + sum_children
 *                          X_j^T (I^A_j - U_j D_j^-1 U_j^T) X_j
 *   column c, DOF of body b; Z_i are the rows of joint i in that column:
 *     b -> root:   Z_b = D_b^-1 e_c,  F = U_b Z_b;  at each ancestor i, F <- X^T F,
 *                  Z_i = -D_i^-1 S_i^T F,  F += U_i Z_i
 *     root -> b:   a_i = X_i a_lambda (a = 0 above a root),  Z_i -= D_i^-1 U_i^T a_i,
 *                  a_i += S_i Z_i,  for every body i <= b
 * (the articulated-body algorithm for tau = e_c from rest without gravity: F is the bias
 * force p^A, Z_i = D^-1 u_i on the way up, then qdd_i on the way down). The rows up to c
 * (bodies up to b) are then final; the others follow by symmetry. The
 * pass up is O(d), the pass down O(N): O(N^2) in all, against O(N^2 d) by nv solves with
 * the tree-sparse factor (O(N^3) on a chain). */
#include "dynamics/dynamics.h"

#include <string.h>

/* U_i and D_i^-1 (work->U, work->D) of every joint. */
static int articulated_inertias(const mbd_model *model, mbd_work *work)
{
    for (int i = model->nb - 1; i >= 0; i--) {
        const int p = model->parent[i], v0 = model->v0[i], n = model->joint[i].nv;
        const mbd_joint_type type = model->joint_type[i];
        double(*U)[6] = (double(*)[6])(work->U + 6 * v0), *Dinv = work->D + model->d0[i];
        double D[MBD_MAX_JOINT_DOF * MBD_MAX_JOINT_DOF], UDinv[MBD_MAX_JOINT_DOF][6];
        start_inertia_sum(model, work, i, 0);
        joint_space_inertia(U, D, &work->IA[i], type, work->S + 6 * v0);
        add_armature(D, model, i, n);
        if (joint_block_inverse(Dinv, D, n))
            return singular_joint(work, i);
        if (p < 0)
            continue;
        mbd_inertia Ia = work->IA[i]; /* I^A - U D^-1 U^T */
        times_inverse(UDinv, (const double(*)[6])U, Dinv, n);
        for (int k = 0; k < n; k++)
            inertia_sub_outer(&Ia, UDinv[k], U[k]);
        if (!joint_has_armature(model, i))
            inertia_zero_subspace(&Ia, type);
        carry_inertia(model, work, i, &Ia, 0, 0, 0);
    }
    return MBD_OK;
}

/* z_i -= D_i^-1 V_i^T f, with V = S (the pass up) or U (the pass down) */
static void subtract_response(const mbd_model *model, const mbd_work *work, const double *V, int i,
                              const double f[6], double *z)
{
    const int v0 = model->v0[i], n = model->joint[i].nv;
    const double *Dinv = work->D + model->d0[i];
    double t[MBD_MAX_JOINT_DOF];
    for (int k = 0; k < n; k++)
        t[k] = dot6(V + 6 * (v0 + k), f);
    for (int k = 0; k < n; k++)
        for (int m = 0; m < n; m++)
            z[v0 + k] -= Dinv[n * k + m] * t[m];
}

/* out = sum_k V_k x_k over the columns of joint i, V = S or U */
static void columns_times(double out[6], const mbd_model *model, const double *V, int i,
                          const double *x)
{
    const int v0 = model->v0[i];
    memset(out, 0, 6 * sizeof *out);
    for (int k = 0; k < model->joint[i].nv; k++)
        for (int r = 0; r < 6; r++)
            out[r] += V[6 * (v0 + k) + r] * x[v0 + k];
}

/* Column c of H^-1 into z, valid in the rows of the bodies up to c's. */
static void inverse_column(const mbd_model *model, mbd_work *work, int c, double *z)
{
    const int b = body_of_dof(model, c), vb = model->v0[b], nb = model->joint[b].nv;
    memset(z, 0, (size_t)(vb + nb) * sizeof *z);
    for (int r = 0; r < nb; r++)
        z[vb + r] = work->D[model->d0[b] + nb * r + (c - vb)];
    double F[6], Ft[6], dF[6];
    columns_times(F, model, work->U, b, z);
    for (int j = b; model->parent[j] >= 0; j = model->parent[j]) {
        const int i = model->parent[j];
        xform_force_t(Ft, &work->X[j], F);
        subtract_response(model, work, work->S, i, Ft, z);
        columns_times(dF, model, work->U, i, z);
        for (int r = 0; r < 6; r++)
            F[r] = Ft[r] + dF[r];
    }
    for (int i = 0; i <= b; i++) {
        const int p = model->parent[i];
        double *a = work->a[i], aJ[6];
        if (p < 0) {
            memset(a, 0, sizeof work->a[i]);
        } else {
            xform_motion(a, &work->X[i], work->a[p]);
            subtract_response(model, work, work->U, i, a, z);
        }
        columns_times(aJ, model, work->S, i, z);
        for (int r = 0; r < 6; r++)
            a[r] += aJ[r];
    }
}

int mass_matrix_inverse(const mbd_model *model, mbd_work *work, double *Hinv)
{
    int status = articulated_inertias(model, work);
    if (status)
        return status;
    const size_t nv = (size_t)model->nv;
    for (size_t c = 0; c < nv; c++) /* row c holds column c */
        inverse_column(model, work, (int)c, Hinv + c * nv);
    for (size_t r = 1; r < nv; r++) /* Z_rc, r > c, was found in column r as Z_cr */
        for (size_t c = 0; c < r; c++)
            Hinv[c * nv + r] = Hinv[r * nv + c];
    for (size_t c = 0; c < nv; c++)
        if (check_finite(Hinv + c * nv, model->nv))
            return MBD_ENONFINITE;
    return MBD_OK;
}
