/* model.h: the model as the solvers read it, built from its description by the files
 * beside this one (build.c and those it calls), as MuJoCo's mj_setConst fills mjModel.
 * Not installed; users see only include/mbd.h. */
#ifndef MBD_MODEL_H
#define MBD_MODEL_H

#include <stdio.h>

#include "mbd.h"
#include "spatial/spatial.h"

/* A joint as the solvers see it: type, unit axes (joint frame = body frame at q = 0). */
typedef struct {
    mbd_joint_type type;
    int nq, nv;
    double axis[2][3];
    /* Cardan: its first turn R1 = Rot(axis[0], q1) applied to the body's tree transform,
     * R1^T E_T = E_T - (1 - cos q1) turn_rest - sin q1 turn_cross (Rodrigues), with
     * turn_rest = (1 - a1 a1^T) E_T and turn_cross = a1 x E_T (cardan_kinematics) */
    double turn_rest[9], turn_cross[9];
    /* TREE_SCREW (below): cos 2 alpha and sin 2 alpha of its twist, for the turns of
     * symmetric blocks (inertia_add_screw_congruence) */
    double twice_twist[2];
} mbd_joint;

/* How an inertia is carried across a body's tree transform X_T (in the solvers' frames):
 * TREE_SCREW marks a revolute joint (a turn about z) whose X_T is an axial screw about the
 * parent's x axis, rotx(alpha) xlt(a e_x) (McMillan & Orin 1995; autoTree's form, and any
 * chain of parallel or twisted axes along x offsets): then X = rotz(q) rotx(alpha)
 * xlt(a e_x), and X^T I X is two turns of 2x2 blocks and a shift along x
 * (inertia_add_screw_congruence), a third of the general congruence's work. TREE_OFFSET:
 * the same with alpha = 0, one turn. */
typedef enum { TREE_GENERAL, TREE_OFFSET, TREE_SCREW } mbd_tree_form;

/* A cut joint in the solvers' frames (from an mbd_loop_def). Its equations: the 3 of
 * x_a - x_b = 0 (the two frame origins, world coordinates), then ndot of u_k . w_k = 0,
 * with the unit vectors u_k fixed in body_a and w_k in body_b (body coordinates). */
typedef struct {
    int body_a, body_b; /* body_b -1: the world */
    int row0, ndot;     /* first equation; 3 + ndot equations */
    double point_a[3], point_b[3];
    double u[3][3], w[3][3];
    double frame_a[9]; /* frame a's axes (columns) in body a coordinates */
} mbd_loop;

/* Read-only after mbd_model_build. */
struct mbd_model {
    char *name;
    char *source;      /* file path or generator spec it came from */
    double gravity[3]; /* world frame */
    int nb, nq, nv;
    int max_children;
    mbd_body_def *defs;         /* (nb) as given, names owned */
    int *parent;                /* (nb) -1 for the world */
    int *last_child;            /* (nb) each body's highest-index child, -1 for a leaf */
    int *sum_slot;              /* (nb) the slot of each body's inertia sum in the batch's
                                   bodies sweep (inertia_sum, joint_kernels.h) */
    int *motion_slot;           /* (nb) that of its velocity and acceleration in the O(N)
                                   solvers' forward passes (motion_of, joint_kernels.h) */
    int *q0, *v0;               /* (nb) first coordinate and velocity index of each joint */
    int angles_from, angles_to; /* coordinates angles_from to angles_to - 1 hold every
                                  angle (joint_angles): start_kinematics' sines and cosines */
    int *d0;                    /* (nb) offset of each joint's nv x nv block */
    int ndd;                    /* sum of nv_i^2 */
    mbd_joint *joint;           /* (nb) */
    mbd_joint_type *joint_type; /* (nb) joint[i].type, packed: every pass dispatches on it,
                                  and a 64-byte mbd_joint per body per pass is a cache line
                                  of traffic once the model leaves the caches */
    mbd_xform *Xtree;           /* (nb) parent frame -> joint frame */
    mbd_tree_form *tree_form;   /* (nb) */
    mbd_rigid *inertia;         /* (nb) rigid-body inertia about the body frame origin */
    /* (nb) Q_i, row-major: the solvers' body frame i may be turned against the user's
     * (the model file's) by a constant rotation, x_user = Q_i x_internal. Everything in
     * mbd_model and mbd_work (joint axes, Xtree, inertia, X, S, v, f, ...) is in the
     * internal frames; defs keeps the user's. Convert with Q_i where the two meet. */
    double (*user_rotation)[9];
    int has_friction; /* some joint has Coulomb or viscous friction */
    int has_coulomb;  /* some joint has Coulomb friction: the reactions couple in */
    double *armature; /* (nb) each joint's rotor inertia, added to each of its
                            joint-space pivots D_i (and H's diagonal); NULL: none */
    /* (ndd) at d0[i], D_i^-1 = I_i^-1 of each free body without parent, children or
     * armature, whose articulated inertia is its own and so a constant (the bodies sweep
     * then neither forms nor factors D_i); zeros elsewhere, and where I_i is singular (the
     * sweep finds it so). NULL where no body is such. */
    double *free_body_inverse;
    int has_passive;     /* some damper, spring, gravity compensation or tendon:
                            tau_p(q, qd) joins tau (passive.c) */
    mbd_rigid *gravcomp; /* (nb) the share of each body's mass whose weight is
                            compensated (gravcomp m, gravcomp m c); NULL: none */
    char *left_out;      /* what the file describes and the dynamics leave out */
    int ntendons;
    mbd_tendon_def *tendons; /* (ntendons) fixed tendons, bodies and coefs owned */
    int nframes;             /* frames left by merged fixed joints */
    mbd_frame_def *frames;   /* (nframes) names owned */
    int nloops, nc;          /* cut joints and their equations (m) */
    mbd_loop_def *loop_defs; /* (nloops) as given, names owned */
    mbd_loop *loops;         /* (nloops) */
};

/* Whether joint i has a rotor's armature. Then its pivot D_i = S_i^T U_i + armature_i
 * exceeds S_i^T U_i, and I^a_i = I^A_i - U_i D_i^-1 U_i^T no longer vanishes on S_i's support
 * (S^T I^a = armature D^-1 U^T): the sweeps keep I^a whole there instead of skipping the
 * rows that are zero without one. */
static inline int joint_has_armature(const mbd_model *model, int i)
{
    return model->armature && model->armature[i] != 0.0;
}

/* D_i^-1 = I_i^-1 of a free body on its own, as free_body_inverse holds it; NULL where body
 * i is not such a body or its inertia is singular. */
static inline const double *model_free_body_inverse(const mbd_model *model, int i)
{
    const double *Dinv = model->free_body_inverse ? model->free_body_inverse + model->d0[i] : NULL;
    return Dinv && Dinv[0] > 0.0 ? Dinv : NULL;
}

/* mbd_model_print with the rank of Phi_q at q = 0 that a floor above computes (print.c; -1:
 * unavailable). */
void model_print(const mbd_model *model, int loop_rank, FILE *out);

#endif
