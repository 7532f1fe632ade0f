/* joint_space.h: what the joint kernels (joint_kernels.h) and the solvers know of a joint
 * type at compile time: its DOF count, which columns of S are unit vectors, and
 * DISPATCH_JOINT, which specializes a step for each type. */
#ifndef MBD_JOINT_SPACE_H
#define MBD_JOINT_SPACE_H

#include "mbd.h"
#include "spatial/spatial.h"

#define MBD_MAX_JOINT_DOF 6

/* Calls step(args..., type) with type a compile-time constant, so that an always-inline
 * step is specialized for each joint type. */
#define DISPATCH_JOINT(type, step, ...)                                                            \
    do {                                                                                           \
        switch (type) {                                                                            \
        case MBD_REVOLUTE:                                                                         \
            step(__VA_ARGS__, MBD_REVOLUTE);                                                       \
            break;                                                                                 \
        case MBD_PRISMATIC:                                                                        \
            step(__VA_ARGS__, MBD_PRISMATIC);                                                      \
            break;                                                                                 \
        case MBD_CYLINDRICAL:                                                                      \
            step(__VA_ARGS__, MBD_CYLINDRICAL);                                                    \
            break;                                                                                 \
        case MBD_SPHERICAL:                                                                        \
            step(__VA_ARGS__, MBD_SPHERICAL);                                                      \
            break;                                                                                 \
        case MBD_FREE:                                                                             \
            step(__VA_ARGS__, MBD_FREE);                                                           \
            break;                                                                                 \
        default:                                                                                   \
            step(__VA_ARGS__, MBD_CARDAN);                                                         \
            break;                                                                                 \
        }                                                                                          \
    } while (0)

MBD_INLINE int joint_dofs(mbd_joint_type type)
{
    switch (type) {
    case MBD_REVOLUTE:
    case MBD_PRISMATIC:
        return 1;
    case MBD_SPHERICAL:
        return 3;
    case MBD_FREE:
        return 6;
    default:
        return 2;
    }
}

/* The joint's leading position coordinates that are angles (of which the kinematics takes
 * sines and cosines): a revolute's and a cylindrical's first, a Cardan's two. */
MBD_INLINE int joint_angles(mbd_joint_type type)
{
    return type == MBD_REVOLUTE || type == MBD_CYLINDRICAL ? 1 : type == MBD_CARDAN ? 2 : 0;
}

/* Whether the joint's velocities are the body's own angular (and linear) velocity rather
 * than the derivatives of its position coordinates (nq != nv): spherical and free. */
MBD_INLINE int joint_has_quaternion(mbd_joint_type type)
{
    return type == MBD_SPHERICAL || type == MBD_FREE;
}

/* The index k of column `col` of S when it is the unit vector e_k, else -1 (Cardan's
 * first). */
MBD_INLINE int unit_column(mbd_joint_type type, int col)
{
    switch (type) {
    case MBD_REVOLUTE:
        return 2;
    case MBD_PRISMATIC:
        return 5;
    case MBD_CYLINDRICAL:
        return col == 0 ? 2 : 5;
    case MBD_SPHERICAL:
    case MBD_FREE:
        return col;
    default:
        return col == 1 ? 2 : -1;
    }
}

/* The rows of a 6-vector where some column of S can be non-zero, as a bit mask (bit r for
 * row r): a unit column e_k's k, a general column's angular rows 0-2 (Cardan's columns
 * are angular, (s; 0)). */
MBD_INLINE unsigned subspace_support(mbd_joint_type type)
{
    unsigned mask = 0;
    for (int col = 0; col < joint_dofs(type); col++) {
        const int k = unit_column(type, col);
        mask |= k >= 0 ? 1u << k : 7u;
    }
    return mask;
}

/* The rows and columns of the projected inertia I^a = I^A - U D^-1 U^T that are exactly
 * zero (inertia_zero_subspace), as a bit mask of the angular (linear 0) or the linear
 * (linear 1) block's rows: bit j for a unit column e_j (e_{3+j}). */
MBD_INLINE unsigned zero_rows(mbd_joint_type type, int linear)
{
    unsigned mask = 0;
    for (int col = 0; col < joint_dofs(type); col++) {
        const int k = unit_column(type, col);
        if (k >= 0 && (k >= 3) == linear)
            mask |= 1u << k % 3;
    }
    return mask;
}

/* The rows of c = v x S qd + c_J (velocity_product) that are zero whatever the state, as a
 * bit mask: v x e_z has no z part, so a turn about z leaves rows 2 and 5 zero, and a slide
 * along z moves only rows 3 and 4. The bodies sweep neither stores nor reads them. */
MBD_INLINE unsigned bias_zero_rows(mbd_joint_type type)
{
    switch (type) {
    case MBD_REVOLUTE:
    case MBD_CYLINDRICAL:
        return 1u << 2 | 1u << 5;
    case MBD_PRISMATIC:
        return 7u | 1u << 5;
    default:
        return 0;
    }
}

#endif
