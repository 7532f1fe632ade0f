/* rnea_kernels.h: the recursive Newton-Euler algorithm's passes (RBDA section 5.3), one
 * state, for rnea.c and the GPU's dense kernel (gpu_kernels.c), which include it after
 * dynamics.h:
 *
 *   root -> leaves:  v_i = X_i v_lambda + S_i qd_i,
 *                    a_i = X_i a_lambda + S_i qdd_i + c_J + v_i x S_i qd_i  (a_0 = -a_g),
 *                    f_i = I_i a_i + v_i x* I_i v_i
 *   leaves -> root:  tau_i = S_i^T f_i,  f_lambda += X_i^T f_i
 * O(N), after mbd_kinematics; the joint reactions are left in work->f. */
#ifndef MBD_RNEA_KERNELS_H
#define MBD_RNEA_KERNELS_H

/* Forward: v_i, a_i = X_i a_lambda + S qdd + c_J + v_i x S qd, f_i = I a + v x* I v. */
MBD_INLINE void rnea_forward_step(const mbd_model *model, mbd_work *work, const double *qd,
                                  const double *qdd, const double *a0, int i,
                                  const mbd_joint_type type)
{
    const int p = model->parent[i], v0 = model->v0[i];
    double *v = work->v[i], *a = work->a[i], *f = work->f[i], c[6], vxIv[6];
    const double zero[6] = {0};
    body_velocity(v, model, work, p < 0 ? zero : work->v[p], qd, i, type);
    velocity_product(c, v, model, work, qd, i, type);
    xform_motion(a, &work->X[i], p < 0 ? a0 : work->a[p]);
    for (int r = 0; r < 6; r++)
        a[r] += c[r];
    for (int k = 0; k < joint_dofs(type); k++)
        column_add(a, type, work->S + 6 * v0, k, qdd[v0 + k]);
    rigid_inertia_apply(f, &model->inertia[i], a);
    rigid_bias_force(vxIv, &model->inertia[i], v);
    for (int r = 0; r < 6; r++)
        f[r] += vxIv[r];
}

/* Backward: tau_i = S^T f_i, f_lambda += X^T f_i. */
MBD_INLINE void rnea_backward_step(const mbd_model *model, mbd_work *work, double *tau, int i,
                                   const mbd_joint_type type)
{
    const int p = model->parent[i];
    subspace_dot(tau + model->v0[i], type, work->S + 6 * model->v0[i], work->f[i]);
    if (p >= 0) {
        double fp[6];
        xform_force_t(fp, &work->X[i], work->f[i]);
        for (int r = 0; r < 6; r++)
            work->f[p][r] += fp[r];
    }
}

/* rnea (dynamics.h): gravity enters as a_0 = -a_g. */
MBD_INLINE void rnea_passes(const mbd_model *model, mbd_work *work, const double *qd,
                            const double *qdd, int with_gravity, double *tau)
{
    const double g = with_gravity ? 1.0 : 0.0;
    const double a0[6] = {
        0, 0, 0, -g * model->gravity[0], -g * model->gravity[1], -g * model->gravity[2]};
    for (int i = 0; i < model->nb; i++)
        DISPATCH_JOINT(model->joint_type[i], rnea_forward_step, model, work, qd, qdd, a0, i);
    for (int i = model->nb - 1; i >= 0; i--)
        DISPATCH_JOINT(model->joint_type[i], rnea_backward_step, model, work, tau, i);
}

#endif
