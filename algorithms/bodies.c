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
 * inline step, specialized for 1- and 2-DOF joints by DISPATCH_NV. */
#include "internal.h"

#include <string.h>

MBD_INLINE void velocity_step(const mbd_model *model, mbd_work *work, const double *qd, int i,
                              const int nv)
{
    const int p = model->parent[i], v0 = model->v0[i];
    const double *S = work->S + 6 * v0;
    double vJ[6], cJ[6], Iv[6];
    subspace_times(vJ, S, nv, qd + v0);
    if (p < 0)
        memcpy(work->v[i], vJ, sizeof vJ);
    else {
        xform_motion(work->v[i], &work->X[i], work->v[p]);
        for (int r = 0; r < 6; r++)
            work->v[i][r] += vJ[r];
    }
    joint_bias(cJ, &model->joint[i], S, qd + v0);
    cross_motion(work->c[i], work->v[i], vJ);
    for (int r = 0; r < 6; r++)
        work->c[i][r] += cJ[r];
    memcpy(work->IA[i], model->inertia[i], sizeof work->IA[i]);
    sym6_apply(Iv, model->inertia[i], work->v[i]);
    cross_force(work->f[i], work->v[i], Iv); /* p^A */
}

/* I^a = I^A - U D^-1 U^T, p^a = p^A + I^a c + U D^-1 u, both carried to the parent. */
MBD_INLINE int articulated_step(const mbd_model *model, mbd_work *work, const double *tau, int i,
                                const int nv)
{
    const int p = model->parent[i], v0 = model->v0[i];
    const double *S = work->S + 6 * v0, *pA = work->f[i];
    double *restrict U = work->U + 6 * v0, *restrict Dinv = work->D + model->d0[i];
    double *restrict u = work->u + v0;
    double D[MBD_MAX_JOINT_DOF * MBD_MAX_JOINT_DOF], UDinv[MBD_MAX_JOINT_DOF][6], Ia[36];
    joint_space_inertia(U, D, work->IA[i], S, nv);
    if (small_spd_inverse(Dinv, D, nv))
        return singular_joint(work, i);
    subspace_dot(u, S, nv, pA);
    for (int k = 0; k < nv; k++)
        u[k] = (tau ? tau[v0 + k] : 0.0) - u[k];
    if (p < 0)
        return MBD_OK;
    times_inverse(UDinv, U, Dinv, nv);
    for (int r = 0; r < 6; r++)
        for (int s = 0; s < 6; s++) {
            double t = work->IA[i][6 * r + s];
            for (int k = 0; k < nv; k++)
                t -= UDinv[k][r] * U[6 * k + s];
            Ia[6 * r + s] = t;
        }
    mirror_upper(Ia); /* rounding made I^a slightly asymmetric; asymmetry would grow */
    double pa[6], t[6];
    sym6_apply(pa, Ia, work->c[i]);
    for (int r = 0; r < 6; r++) {
        pa[r] += pA[r];
        for (int k = 0; k < nv; k++)
            pa[r] += UDinv[k][r] * u[k];
    }
    inertia_add_congruence(work->IA[p], &work->X[i], Ia);
    xform_force_t(t, &work->X[i], pa);
    for (int r = 0; r < 6; r++)
        work->f[p][r] += t[r];
    return MBD_OK;
}

MBD_INLINE void acceleration_step(const mbd_model *model, mbd_work *work, const double *a0,
                                  double *qdd, int i, const int nv)
{
    const int p = model->parent[i], v0 = model->v0[i];
    const double *U = work->U + 6 * v0, *Dinv = work->D + model->d0[i];
    double *a = work->a[i], rhs[MBD_MAX_JOINT_DOF], aJ[6];
    xform_motion(a, &work->X[i], p < 0 ? a0 : work->a[p]);
    for (int r = 0; r < 6; r++)
        a[r] += work->c[i][r];
    for (int k = 0; k < nv; k++)
        rhs[k] = work->u[v0 + k] - dot6(U + 6 * k, a);
    for (int k = 0; k < nv; k++) {
        qdd[v0 + k] = 0.0;
        for (int m = 0; m < nv; m++)
            qdd[v0 + k] += Dinv[nv * k + m] * rhs[m];
    }
    subspace_times(aJ, work->S + 6 * v0, nv, qdd + v0);
    for (int r = 0; r < 6; r++)
        a[r] += aJ[r];
}

static int bodies_acc(const mbd_model *model, mbd_work *work, const double *qd, const double *tau,
                      double *qdd)
{
    const double a0[6] = {0, 0, 0, -model->gravity[0], -model->gravity[1], -model->gravity[2]};
    int status = MBD_OK;
    for (int i = 0; i < model->nb; i++)
        DISPATCH_NV(model->joint[i].nv, velocity_step, model, work, qd, i);
    for (int i = model->nb - 1; i >= 0 && status == MBD_OK; i--)
        DISPATCH_NV(model->joint[i].nv, status = articulated_step, model, work, tau, i);
    for (int i = 0; i < model->nb && status == MBD_OK; i++)
        DISPATCH_NV(model->joint[i].nv, acceleration_step, model, work, a0, qdd, i);
    return status;
}

const mbd_solver mbd_solver_bodies = {
    .name = "bodies",
    .summary = "separate-bodies sweep (Vereshchagin 1974, articulated-body recursion), O(N)",
    .solve_acc = bodies_acc,
};

/* x = H^-1 b by the sweep's last two passes with zero velocity and gravity and tau = b:
 * p^A_i = sum_children X^T (p^A_j + U_j D_j^-1 u_j), u_i = b_i - S_i^T p^A_i; then
 * x_i = D_i^-1 (u_i - U_i^T X_i a_lambda), a_i = X_i a_lambda + S_i x_i. I^A, U and D^-1
 * are those of the preceding solve; x holds u until the forward pass overwrites it. */
void bodies_inverse_times(const mbd_model *model, mbd_work *work, const double *b, double *x)
{
    double (*pA)[6] = work->g, (*a)[6] = work->a;
    memset(pA, 0, (size_t)model->nb * sizeof *pA);
    for (int i = model->nb - 1; i >= 0; i--) {
        const int p = model->parent[i], v0 = model->v0[i], nv = model->joint[i].nv;
        const double *U = work->U + 6 * v0, *Dinv = work->D + model->d0[i];
        subspace_dot(x + v0, work->S + 6 * v0, nv, pA[i]);
        for (int k = 0; k < nv; k++)
            x[v0 + k] = b[v0 + k] - x[v0 + k];
        if (p < 0)
            continue;
        double pa[6], t[6];
        memcpy(pa, pA[i], sizeof pa);
        for (int k = 0; k < nv; k++) {
            double Dinv_u = 0.0;
            for (int l = 0; l < nv; l++)
                Dinv_u += Dinv[nv * k + l] * x[v0 + l];
            for (int r = 0; r < 6; r++)
                pa[r] += U[6 * k + r] * Dinv_u;
        }
        xform_force_t(t, &work->X[i], pa);
        for (int r = 0; r < 6; r++)
            pA[p][r] += t[r];
    }
    for (int i = 0; i < model->nb; i++) {
        const int p = model->parent[i], v0 = model->v0[i], nv = model->joint[i].nv;
        const double *U = work->U + 6 * v0, *Dinv = work->D + model->d0[i];
        double rhs[MBD_MAX_JOINT_DOF], aJ[6];
        if (p < 0)
            memset(a[i], 0, sizeof a[i]);
        else
            xform_motion(a[i], &work->X[i], a[p]);
        for (int k = 0; k < nv; k++)
            rhs[k] = x[v0 + k] - dot6(U + 6 * k, a[i]);
        for (int k = 0; k < nv; k++) {
            x[v0 + k] = 0.0;
            for (int l = 0; l < nv; l++)
                x[v0 + k] += Dinv[nv * k + l] * rhs[l];
        }
        subspace_times(aJ, work->S + 6 * v0, nv, x + v0);
        for (int r = 0; r < 6; r++)
            a[i][r] += aJ[r];
    }
}
