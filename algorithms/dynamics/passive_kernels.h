/* passive_kernels.h: the passive forces of a joint that need no libm, one velocity's
 * terms each (passive.c has the whole of tau_p): its damper, its spring where it has no
 * quaternion, and a free joint's armature on its translation, -a w x v_O. passive.c and
 * the GPU's kernels (gpu_kernels.c) both take them, so that the two agree bit for bit. */
#ifndef MBD_PASSIVE_KERNELS_H
#define MBD_PASSIVE_KERNELS_H

#include "dynamics/dynamics.h"

/* out -= damping qd over the joint's nv velocities (qd, out at the joint's first). */
MBD_INLINE void joint_damper(const mbd_passive *p, int nv, const double *qd, double *out)
{
    for (int k = 0; k < nv; k++)
        out[k] -= p->damping * qd[k];
}

/* out -= stiffness (q - springref) over a joint's nv coordinates, of a joint without a
 * quaternion (q at its first coordinate, out at its first velocity). */
MBD_INLINE void linear_spring(const mbd_passive *p, int nv, const double *q, double *out)
{
    for (int k = 0; k < nv; k++)
        out[k] -= p->stiffness * (q[k] - p->springref[k]);
}

/* A free joint's out -= armature w x v (qd and out at its first velocity: w, then v). */
MBD_INLINE void free_armature_force(double armature, const double *qd, double *out)
{
    double wxv[3];
    vec3_cross(wxv, qd, qd + 3);
    for (int k = 0; k < 3; k++)
        out[3 + k] -= armature * wxv[k];
}

#endif
