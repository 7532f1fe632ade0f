/* friction.c: joint friction coupled to the joint reactions (Zhao and Gu): the forces; the
 * iteration that couples them to a solver's accelerations is solvers/friction.c.
 *
 * Coordinate k of joint i has the unit axis a_k of its motion-subspace column S_k (the
 * angular part for a turning coordinate, the linear part for a sliding one) and the
 * reaction force f_i of the joint (the force part of the wrench that RNEA leaves in
 * work->f), both in body i's coordinates. With N_k = |f_i - (f_i . a_k) a_k|,
 *
 *   tau_f,k = -mu rho N_k tanh(qd_k / v_s) - b qd_k,   rho = r (turning) or 1 (sliding). */
#include "dynamics/dynamics.h"

#include <math.h>

/* Revolute and Cardan coordinates turn, prismatic ones slide; a cylindrical joint turns
 * (k = 0), then slides (k = 1). */
static int coordinate_turns(mbd_joint_type type, int k)
{
    return type == MBD_REVOLUTE || type == MBD_CARDAN || (type == MBD_CYLINDRICAL && k == 0);
}

const double *friction_axis(const mbd_model *model, const mbd_work *work, int i, int dof)
{
    const int turns = coordinate_turns(model->joint_type[i], dof - model->v0[i]);
    return work->S + 6 * dof + (turns ? 0 : 3);
}

double friction_normal(const double *force, const double *axis)
{
    const double along = vec3_dot(force, axis);
    double normal[3];
    for (int r = 0; r < 3; r++)
        normal[r] = force[r] - along * axis[r];
    return sqrt(vec3_dot(normal, normal));
}

/* N of coordinate dof (joint i's reaction force f, work->f, and axis a). */
static double normal_force(const mbd_model *model, const mbd_work *work, int i, int dof)
{
    return friction_normal(work->f[i] + 3, friction_axis(model, work, i, dof));
}

double friction_sliding_factor(const mbd_model *model, int i, int dof, double qd)
{
    const mbd_friction *fr = &model->defs[i].friction;
    const int turns = coordinate_turns(model->joint_type[i], dof - model->v0[i]);
    return fr->coulomb * (turns ? fr->radius : 1.0) * tanh(qd / fr->smoothing);
}

void friction_forces(const mbd_model *model, const mbd_work *work, const double *qd, double *tau_f)
{
    for (int i = 0; i < model->nb; i++)
        for (int dof = model->v0[i]; dof < model->v0[i] + model->joint[i].nv; dof++) {
            tau_f[dof] = -model->defs[i].friction.viscous * qd[dof];
            if (model->defs[i].friction.coulomb > 0.0)
                tau_f[dof] -= friction_sliding_factor(model, i, dof, qd[dof]) *
                              normal_force(model, work, i, dof);
        }
}
