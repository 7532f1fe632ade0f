/* joints.c: joint transforms, motion subspaces and their derivatives.
 *
 * The body frame is the joint frame moved by the joint: x_joint = R_J(q) x_body + p_J(q).
 * In the convention of spatial.h, X_J = (R_J^T, p_J). S maps the joint's velocity
 * coordinates to the body's velocity relative to the joint frame, in body coordinates.
 * The model builder turns every joint frame so that its axis is z (a Cardan joint's second
 * axis a2 = (0, s, c) in the y-z plane; see canonical_joint_frame in models/model.c): then
 * R_J is a turn about z (12 multiplications on a transform), p_J lies on z and S has unit
 * columns. Spherical and free joints keep the user's frame (they have no axis): q holds
 * the unit quaternion (w, x, y, z) of R_J (after the position p_J for a free joint), and
 * their velocities are the body's own in body coordinates, so S is constant (unit columns)
 * and c_J = 0. R_J is formed from q / |q|: any non-zero quaternion gives a rotation, and a
 * drift of |q| changes nothing (integrate.c relies on it). */
#include "internal.h"

#include <math.h>
#include <string.h>

/* E = Rz(q)^T E_T: rows 0 and 1 of E_T turned, row 2 kept. */
static void turn_about_z(double *restrict E, const double *ET, double c, double s)
{
    for (int k = 0; k < 3; k++) {
        E[k] = c * ET[k] + s * ET[3 + k];
        E[3 + k] = c * ET[3 + k] - s * ET[k];
        E[6 + k] = ET[6 + k];
    }
}

/* r = r_T + E_T^T (slide e_z): the slide along the joint's z in parent coordinates. */
static void slide_along_z(double *restrict r, const mbd_xform *XT, double slide)
{
    for (int k = 0; k < 3; k++)
        r[k] = XT->r[k] + slide * XT->E[6 + k];
}

static void set_unit_column(double *col, int k)
{
    memset(col, 0, 6 * sizeof *col);
    col[k] = 1.0;
}

/* Cardan: R_J = Rz(q1) R2 with R2 = Rot(a2, q2); E = R2^T Rz(q1)^T E_T. The body sees the
 * first axis as b = R2^T e_z (row 2 of R2), the second as a2. */
static void cardan_kinematics(mbd_xform *X, double *S, const mbd_joint *joint, const double *q,
                              const mbd_xform *XT)
{
    double R2[9], E1[9];
    turn_about_z(E1, XT->E, cos(q[0]), sin(q[0]));
    rotation_about(R2, joint->axis[1], q[1]);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            X->E[3 * i + j] = R2[i] * E1[j] + R2[3 + i] * E1[3 + j] + R2[6 + i] * E1[6 + j];
    memcpy(X->r, XT->r, sizeof X->r);
    memset(S, 0, 12 * sizeof *S);
    memcpy(S, R2 + 6, 3 * sizeof *S);
    memcpy(S + 6, joint->axis[1], 3 * sizeof *S);
}

/* R (row-major) of the quaternion quat / |quat| = (w, x, y, z): x_joint = R x_body. */
void quaternion_rotation(double R[9], const double quat[4])
{
    const double w = quat[0], x = quat[1], y = quat[2], z = quat[3];
    const double s = 2.0 / (w * w + x * x + y * y + z * z);
    R[0] = 1.0 - s * (y * y + z * z);
    R[1] = s * (x * y - w * z);
    R[2] = s * (x * z + w * y);
    R[3] = s * (x * y + w * z);
    R[4] = 1.0 - s * (x * x + z * z);
    R[5] = s * (y * z - w * x);
    R[6] = s * (x * z - w * y);
    R[7] = s * (y * z + w * x);
    R[8] = 1.0 - s * (x * x + y * y);
}

int joint_coordinates_valid(const mbd_joint *joint, const double *q)
{
    if (!joint_has_quaternion(joint->type))
        return 1;
    const double *quat = q + (joint->type == MBD_FREE ? 3 : 0);
    const double norm2 = quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3];
    return norm2 > 0.0 && isfinite(2.0 / norm2) && isfinite(norm2);
}

/* E = R^T E_T for R of the quaternion; S = the joint's nv unit columns e_0, e_1, ... */
static void quaternion_kinematics(mbd_xform *X, double *S, const mbd_joint *joint,
                                  const double *quat, const mbd_xform *XT)
{
    double R[9];
    quaternion_rotation(R, quat);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            X->E[3 * i + j] = R[i] * XT->E[j] + R[3 + i] * XT->E[3 + j] + R[6 + i] * XT->E[6 + j];
    for (int k = 0; k < joint->nv; k++)
        set_unit_column(S + 6 * k, k);
}

void joint_kinematics(mbd_xform *X, double *S, const mbd_joint *joint, const double *q,
                      const mbd_xform *XT)
{
    switch (joint->type) {
    case MBD_REVOLUTE:
        turn_about_z(X->E, XT->E, cos(q[0]), sin(q[0]));
        memcpy(X->r, XT->r, sizeof X->r);
        set_unit_column(S, 2);
        break;
    case MBD_PRISMATIC:
    default: /* the model builder admits no other type */
        memcpy(X->E, XT->E, sizeof X->E);
        slide_along_z(X->r, XT, q[0]);
        set_unit_column(S, 5);
        break;
    case MBD_CYLINDRICAL:
        turn_about_z(X->E, XT->E, cos(q[0]), sin(q[0]));
        slide_along_z(X->r, XT, q[1]);
        set_unit_column(S, 2);
        set_unit_column(S + 6, 5);
        break;
    case MBD_CARDAN:
        cardan_kinematics(X, S, joint, q, XT);
        break;
    case MBD_SPHERICAL:
        quaternion_kinematics(X, S, joint, q, XT);
        memcpy(X->r, XT->r, sizeof X->r);
        break;
    case MBD_FREE: /* r = r_T + E_T^T p */
        quaternion_kinematics(X, S, joint, q + 3, XT);
        for (int k = 0; k < 3; k++)
            X->r[k] = XT->r[k] + XT->E[k] * q[0] + XT->E[3 + k] * q[1] + XT->E[6 + k] * q[2];
        break;
    }
}

/* qd_quat = 1/2 quat (0, w) (quaternion product), w the angular velocity in body
 * coordinates: tangent to the sphere |quat| = const. */
static void quaternion_rate(double out[4], const double quat[4], const double w[3])
{
    const double a = quat[0], b = quat[1], c = quat[2], d = quat[3];
    out[0] = 0.5 * (-b * w[0] - c * w[1] - d * w[2]);
    out[1] = 0.5 * (a * w[0] + c * w[2] - d * w[1]);
    out[2] = 0.5 * (a * w[1] + d * w[0] - b * w[2]);
    out[3] = 0.5 * (a * w[2] + b * w[1] - c * w[0]);
}

void joint_position_rates(double *qdot, const mbd_joint *joint, const double *q, const double *v)
{
    switch (joint->type) {
    case MBD_SPHERICAL:
        quaternion_rate(qdot, q, v);
        break;
    case MBD_FREE: { /* p' = R v_O, with R of the unit quaternion */
        double R[9];
        quaternion_rotation(R, q + 3);
        mat3_apply(qdot, R, v + 3);
        quaternion_rate(qdot + 3, q + 3, v);
        break;
    }
    default:
        memcpy(qdot, v, (size_t)joint->nv * sizeof *qdot);
        break;
    }
}

/* Cardan: b = S's first angular column; d/dt b = -qd2 a2 x b, so
 * c_J = (dS/dt) qd = (qd1 qd2 (b x a2); 0). */
void joint_bias(double out[6], const mbd_joint *joint, const double *S, const double *qd)
{
    memset(out, 0, 6 * sizeof *out);
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
