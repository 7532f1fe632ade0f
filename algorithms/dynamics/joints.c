/* joints.c: what a joint's coordinates mean beyond the kinematics kernels (those are in
 * joint_kernels.h, shared by one state and the SIMD lanes): whether q is a pose,
 * and the position rates qd = G(q) v of the joints whose velocities are not derivatives
 * of their coordinates (spherical, free: q holds a quaternion, v the body's own velocity).
 * The GPU's kernels include this file (gpu_kernels.c). */
#include "dynamics/dynamics.h"

#include <math.h>
#include <string.h>

int joint_coordinates_valid(mbd_joint_type type, const double *q)
{
    if (!joint_has_quaternion(type))
        return 1;
    const double *quat = q + (type == MBD_FREE ? 3 : 0);
    const double norm2 =
        quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3];
    return norm2 > 0.0 && isfinite(2.0 / norm2) && isfinite(norm2);
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
