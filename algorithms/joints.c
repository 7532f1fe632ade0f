/* joints.c: joint transforms, motion subspaces and their derivatives.
 *
 * The body frame is the joint frame moved by the joint: x_joint = R_J(q) x_body + p_J(q).
 * In the convention of spatial.h, X_J = (R_J^T, p_J). S maps the joint's velocity
 * coordinates to the body's velocity relative to the joint frame, in body coordinates.
 * A joint type with n_q != n_v (spherical, free) adds its cases here only. */
#include "internal.h"

#include <string.h>

static void zero6(double *out) { memset(out, 0, 6 * sizeof *out); }

static void set_axis_column(double *col, const double axis[3], int linear)
{
    zero6(col);
    memcpy(col + (linear ? 3 : 0), axis, 3 * sizeof *axis);
}

/* R_J(q) and S(q). */
static void joint_rotation_and_subspace(double R[9], double *S, const mbd_joint *joint, const double *q)
{
    double R1[9], R2[9], b[3];
    switch (joint->type) {
    case MBD_REVOLUTE:
        rotation_about(R, joint->axis[0], q[0]);
        set_axis_column(S, joint->axis[0], 0);
        break;
    case MBD_PRISMATIC:
    default: /* the model builder admits no other type */
        memcpy(R, (const double[9]){1, 0, 0, 0, 1, 0, 0, 0, 1}, 9 * sizeof *R);
        set_axis_column(S, joint->axis[0], 1);
        break;
    case MBD_CYLINDRICAL:
        rotation_about(R, joint->axis[0], q[0]);
        set_axis_column(S, joint->axis[0], 0);
        set_axis_column(S + 6, joint->axis[0], 1);
        break;
    case MBD_CARDAN: /* R = Rot(a1, q1) Rot(a2, q2); the body sees a1 as b = Rot(a2, q2)^T a1 */
        rotation_about(R1, joint->axis[0], q[0]);
        rotation_about(R2, joint->axis[1], q[1]);
        mat3_mul(R, R1, R2);
        mat3_apply_t(b, R2, joint->axis[0]);
        set_axis_column(S, b, 0);
        set_axis_column(S + 6, joint->axis[1], 0);
        break;
    }
}

void joint_kinematics(mbd_xform *XJ, double *S, const mbd_joint *joint, const double *q)
{
    double R[9];
    joint_rotation_and_subspace(R, S, joint, q);
    for (int i = 0; i < 3; i++) /* E = R^T */
        for (int j = 0; j < 3; j++)
            XJ->E[3 * i + j] = R[3 * j + i];
    const double slide = joint->type == MBD_PRISMATIC     ? q[0]
                         : joint->type == MBD_CYLINDRICAL ? q[1]
                                                          : 0.0;
    for (int k = 0; k < 3; k++)
        XJ->r[k] = joint->axis[0][k] * slide;
}

/* Cardan: b = S's first angular column; d/dt b = -qd2 a2 x b, so
 * c_J = (dS/dt) qd = (qd1 qd2 (b x a2); 0). */
void joint_bias(double out[6], const mbd_joint *joint, const double *S, const double *qd)
{
    zero6(out);
    if (joint->type != MBD_CARDAN)
        return;
    vec3_cross(out, S, joint->axis[1]);
    for (int k = 0; k < 3; k++)
        out[k] *= qd[0] * qd[1];
}

/* Cardan: only S's first column depends on q, and only on q2:
 * (dS/dq2) qd = (qd1 (b x a2); 0). */
void joint_dS_dq_dot(double *out, const mbd_joint *joint, const double *S, const double *qd,
                     const double mu[6])
{
    if (joint->type != MBD_CARDAN)
        return;
    double bxa2[3];
    vec3_cross(bxa2, S, joint->axis[1]);
    out[1] += qd[0] * vec3_dot(bxa2, mu);
}
