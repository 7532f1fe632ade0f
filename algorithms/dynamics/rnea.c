/* rnea.c: the recursive Newton-Euler algorithm (its passes: rnea_kernels.h, which the
 * GPU's dense kernel shares): inverse dynamics, with the joint reactions left in work->f
 * (friction.c reads them). And the change in the reaction forces that a change in qdd
 * alone makes, for the friction iteration. */
#include "dynamics/dynamics.h"
#include "dynamics/rnea_kernels.h"

void rnea(const mbd_model *model, mbd_work *work, const double *qd, const double *qdd,
          int with_gravity, double *tau)
{
    rnea_passes(model, work, qd, qdd, with_gravity, tau);
}

/* At rest the accelerations are gravity's alone: from a_0 = (0; -a_g), a_i = X_i a_lambda
 * = (0; E_i a_lambda) has no angular part, and f_i = I_i a_i = (h x a; m a), with no
 * velocities and no bias terms. */
MBD_INLINE void rest_forward_step(const mbd_model *model, mbd_work *work, int i)
{
    const int p = model->parent[i];
    const mbd_rigid *I = &model->inertia[i];
    const double a0[3] = {-model->gravity[0], -model->gravity[1], -model->gravity[2]};
    double *a = work->a[i] + 3, *f = work->f[i];
    mat3_apply(a, work->X[i].E, p < 0 ? a0 : work->a[p] + 3);
    vec3_cross(f, I->h, a);
    for (int r = 0; r < 3; r++)
        f[3 + r] = I->m * a[r];
}

void rnea_at_rest(const mbd_model *model, mbd_work *work, double *tau)
{
    for (int i = 0; i < model->nb; i++)
        rest_forward_step(model, work, i);
    for (int i = model->nb - 1; i >= 0; i--)
        DISPATCH_JOINT(model->joint_type[i], rnea_backward_step, model, work, tau, i);
}

/* Forward: a_i = X_i a_lambda + S_i qdd_i, and the force part of f_i = I_i a_i:
 * m a_o - h x a_w (rigid_inertia_apply's lower half). */
MBD_INLINE void acceleration_force_step(const mbd_model *model, mbd_work *work, const double *qdd,
                                        int i, const mbd_joint_type type)
{
    const int p = model->parent[i], v0 = model->v0[i];
    const mbd_rigid *I = &model->inertia[i];
    double *a = work->a[i], hxw[3];
    if (p < 0)
        for (int r = 0; r < 6; r++)
            a[r] = 0.0;
    else
        body_motion(a, model, work, i, type, work->a[p]);
    for (int k = 0; k < joint_dofs(type); k++)
        column_add(a, type, work->S + 6 * v0, k, qdd[v0 + k]);
    vec3_cross(hxw, I->h, a);
    for (int r = 0; r < 3; r++)
        work->f[i][3 + r] = I->m * a[3 + r] - hxw[r];
}

/* Backward: the force part of f_lambda += X_i^T f_i, E_i^T f_i (the moment parts need the
 * force's, not the other way round), then f_i += base_i once its subtree's part is summed. */
MBD_INLINE void base_force_step(const mbd_model *model, mbd_work *work, const double (*base)[6],
                                int i, const mbd_joint_type type)
{
    const int p = model->parent[i];
    double *f = work->f[i] + 3;
    if (p >= 0) {
        double fp[3];
        body_rotate(fp, model, work, i, type, 1, f);
        for (int r = 0; r < 3; r++)
            work->f[p][3 + r] += fp[r];
    }
    for (int r = 0; r < 3; r++)
        f[r] += base[i][3 + r];
}

void reaction_forces_plus_accelerations(const mbd_model *model, mbd_work *work, const double *qdd,
                                        const double (*base)[6])
{
    for (int i = 0; i < model->nb; i++)
        DISPATCH_JOINT(model->joint_type[i], acceleration_force_step, model, work, qdd, i);
    for (int i = model->nb - 1; i >= 0; i--)
        DISPATCH_JOINT(model->joint_type[i], base_force_step, model, work, base, i);
}
