/* bodies.c: the separate-bodies sweep (Vereshchagin 1974; the articulated-body recursion).
 *
 *   root -> leaves:  v_i = X_i v_l + S_i qd_i,  c_i = v_i x S_i qd_i + c_J,
 *                    I^A_i = I_i,  p^A_i = v_i x* I_i v_i
 *   leaves -> root:  U_i = I^A_i S_i,  D_i = S_i^T U_i,  u_i = tau_i - S_i^T p^A_i,
 *                    I^a_i = I^A_i - U_i D_i^-1 U_i^T,  p^a_i = p^A_i + I^a_i c_i + U_i D_i^-1 u_i,
 *                    I^A_l += X_i^T I^a_i X_i,  p^A_l += X_i^T p^a_i
 *   root -> leaves:  a'_i = X_i a_l + c_i (a_0 = -a_g),  qdd_i = D_i^-1 (u_i - U_i^T a'_i),
 *                    a_i = a'_i + S_i qdd_i
 * Only matrices of size <= 6 appear; O(N). Each pass is a loop over bodies calling one
 * inline step, specialized for each joint type by DISPATCH_JOINT. What makes it fast (see
 * algorithms/README.md): inertias as symmetric 3x3 blocks (mbd_inertia), joint frames
 * turned so that S has unit columns (U is a column of I^A, D an entry), and the explicit
 * D^-1 of a 1x1 or 2x2 block. */
#include "internal.h"

#include <string.h>

MBD_INLINE void velocity_step(const mbd_model *model, mbd_work *work, const double *qd, int i,
                              const mbd_joint_type type)
{
    const int p = model->parent[i], v0 = model->v0[i];
    const double *S = work->S + 6 * v0;
    double vJ[6], cJ[6], Iv[6];
    subspace_times(vJ, type, S, qd + v0);
    if (p < 0)
        memcpy(work->v[i], vJ, sizeof vJ);
    else {
        xform_motion(work->v[i], &work->X[i], work->v[p]);
        for (int r = 0; r < 6; r++)
            work->v[i][r] += vJ[r];
    }
    cross_motion(work->c[i], work->v[i], vJ);
    if (type == MBD_CARDAN) {
        joint_bias(cJ, &model->joint[i], S, qd + v0);
        for (int r = 0; r < 3; r++)
            work->c[i][r] += cJ[r];
    }
    work->IA[i] = model->inertia[i];
    inertia_apply(Iv, &model->inertia[i], work->v[i]);
    cross_force(work->f[i], work->v[i], Iv); /* p^A */
}

/* u_i = tau_i - S_i^T p_i and p_lambda += X_i^T (p_i + U_i D_i^-1 u_i): the bias forces'
 * part of the backward pass, once U_i and D_i^-1 are known (p: p^A with I^a c added). */
MBD_INLINE void bias_force_step(const mbd_model *model, mbd_work *work, double (*p)[6],
                                const double *tau, int i, const mbd_joint_type type)
{
    const int parent = model->parent[i], v0 = model->v0[i], n = joint_dofs(type);
    const double *S = work->S + 6 * v0, *U = work->U + 6 * v0, *Dinv = work->D + model->d0[i];
    double *restrict u = work->u + v0, pa[6], t[6];
    for (int k = 0; k < n; k++)
        u[k] = (tau ? tau[v0 + k] : 0.0) - column_dot(type, S, k, p[i]);
    if (parent < 0)
        return;
    memcpy(pa, p[i], sizeof pa);
    for (int k = 0; k < n; k++) {
        double Dinv_u = 0.0;
        for (int m = 0; m < n; m++)
            Dinv_u += Dinv[n * k + m] * u[m];
        for (int r = 0; r < 6; r++)
            pa[r] += U[6 * k + r] * Dinv_u;
    }
    xform_force_t(t, &work->X[i], pa);
    for (int r = 0; r < 6; r++)
        p[parent][r] += t[r];
}

/* U, D^-1; I^a = I^A - U D^-1 U^T carried to the parent, and p^A + I^a c with the bias
 * forces (S^T I^a c = 0, so u is unchanged by the I^a c term). */
MBD_INLINE int articulated_step(const mbd_model *model, mbd_work *work, const double *tau, int i,
                                const mbd_joint_type type)
{
    const int p = model->parent[i], v0 = model->v0[i], n = joint_dofs(type);
    const double *S = work->S + 6 * v0;
    double (*U)[6] = (double (*)[6])(work->U + 6 * v0);
    double *restrict Dinv = work->D + model->d0[i];
    double D[MBD_MAX_JOINT_DOF * MBD_MAX_JOINT_DOF], UDinv[MBD_MAX_JOINT_DOF][6], Iac[6];
    joint_space_inertia(U, D, &work->IA[i], type, S);
    if (joint_block_inverse(Dinv, D, n))
        return singular_joint(work, i);
    if (p >= 0) {
        mbd_inertia Ia = work->IA[i];
        times_inverse(UDinv, (const double (*)[6])U, Dinv, n);
        for (int k = 0; k < n; k++)
            inertia_sub_outer(&Ia, UDinv[k], U[k]);
        inertia_zero_subspace(&Ia, type);
        inertia_add_congruence(&work->IA[p], &work->X[i], &Ia);
        inertia_apply(Iac, &Ia, work->c[i]);
        for (int r = 0; r < 6; r++)
            work->f[i][r] += Iac[r];
    }
    bias_force_step(model, work, work->f, tau, i, type);
    return MBD_OK;
}

/* a'_i = X_i a_lambda + c_i (c NULL: zero), qdd_i = D_i^-1 (u_i - U_i^T a'_i),
 * a_i = a'_i + S_i qdd_i. */
MBD_INLINE void acceleration_step(const mbd_model *model, mbd_work *work, const double *a0,
                                  const double (*c)[6], double *qdd, int i,
                                  const mbd_joint_type type)
{
    const int p = model->parent[i], v0 = model->v0[i], n = joint_dofs(type);
    const double *U = work->U + 6 * v0, *Dinv = work->D + model->d0[i];
    double *a = work->a[i], rhs[MBD_MAX_JOINT_DOF];
    xform_motion(a, &work->X[i], p < 0 ? a0 : work->a[p]);
    if (c)
        for (int r = 0; r < 6; r++)
            a[r] += c[i][r];
    for (int k = 0; k < n; k++)
        rhs[k] = work->u[v0 + k] - dot6(U + 6 * k, a);
    for (int k = 0; k < n; k++) {
        double x = 0.0;
        for (int m = 0; m < n; m++)
            x += Dinv[n * k + m] * rhs[m];
        qdd[v0 + k] = x;
        column_add(a, type, work->S + 6 * v0, k, x);
    }
}

static int bodies_acc(const mbd_model *model, mbd_work *work, const double *qd, const double *tau,
                      double *qdd)
{
    const double a0[6] = {0, 0, 0, -model->gravity[0], -model->gravity[1], -model->gravity[2]};
    const double (*c)[6] = (const double (*)[6])work->c;
    int status = MBD_OK;
    for (int i = 0; i < model->nb; i++)
        DISPATCH_JOINT(model->joint[i].type, velocity_step, model, work, qd, i);
    for (int i = model->nb - 1; i >= 0 && status == MBD_OK; i--)
        DISPATCH_JOINT(model->joint[i].type, status = articulated_step, model, work, tau, i);
    for (int i = 0; i < model->nb && status == MBD_OK; i++)
        DISPATCH_JOINT(model->joint[i].type, acceleration_step, model, work, a0, c, qdd, i);
    return status;
}

/* x = H^-1 b: the last two passes again, with no velocity, gravity or bias (p^A = 0,
 * c = 0, tau = b), on the U, D^-1 and X of the preceding solve. Overwrites work->u, a, g. */
void bodies_inverse_times(const mbd_model *model, mbd_work *work, const double *b, double *x)
{
    const double zero[6] = {0};
    memset(work->g, 0, (size_t)model->nb * sizeof *work->g);
    for (int i = model->nb - 1; i >= 0; i--)
        DISPATCH_JOINT(model->joint[i].type, bias_force_step, model, work, work->g, b, i);
    for (int i = 0; i < model->nb; i++)
        DISPATCH_JOINT(model->joint[i].type, acceleration_step, model, work, zero, NULL, x, i);
}

const mbd_solver mbd_solver_bodies = {
    .name = "bodies",
    .summary = "separate-bodies sweep (Vereshchagin 1974, articulated-body recursion), O(N)",
    .solve_acc = bodies_acc,
};
