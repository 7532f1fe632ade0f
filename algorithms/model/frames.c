/* frames.c: the solvers' frames: each joint's canonical frame, the tree transforms and
 * their forms, and the rigid-body inertias in those frames. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/parts.h"

/* Q = [x y n] with Q e_z = n, right-handed (Duff et al., "Building an orthonormal basis,
 * revisited", 2017); Q = 1 when n = e_z, so models already in that form keep their frames. */
static void basis_with_z(double Q[9], const double n[3])
{
    const double sign = copysign(1.0, n[2]), a = -1.0 / (sign + n[2]), b = n[0] * n[1] * a;
    const double x[3] = {1.0 + sign * n[0] * n[0] * a, sign * b, -sign * n[0]};
    const double y[3] = {b, sign + n[1] * n[1] * a, -n[1]};
    for (int k = 0; k < 3; k++) {
        Q[3 * k] = x[k];
        Q[3 * k + 1] = y[k];
        Q[3 * k + 2] = n[k];
    }
}

/* The solvers' joint frame: turned by a constant Q (x_user = Q x_solver) so that the joint's
 * axis is z; a Cardan joint's second axis is z, and its first lies in the y-z plane with a
 * positive y part. Then S has unit columns (all but a Cardan's first) and the joint
 * rotation acts on 2x2 blocks. The body frame turns with it; the joint coordinates are
 * unchanged. */
static void canonical_joint_frame(double Q[9], mbd_joint *joint)
{
    const double *a1 = joint->axis[0];
    if (joint_type_naxes(joint->type) == 0) { /* spherical, free: no axis, frame kept */
        static const double identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
        memcpy(Q, identity, sizeof identity);
        return;
    }
    if (joint->type == MBD_CARDAN) { /* z along the second axis, the first in the y-z plane */
        const double *a2 = joint->axis[1];
        double x[3], y[3];
        vec3_cross(x, a1, a2);
        const double s = sqrt(vec3_dot(x, x)), c = vec3_dot(a1, a2);
        for (int k = 0; k < 3; k++)
            x[k] /= s;
        vec3_cross(y, a2, x);
        for (int k = 0; k < 3; k++) {
            Q[3 * k] = x[k];
            Q[3 * k + 1] = y[k];
            Q[3 * k + 2] = a2[k];
        }
        memcpy(joint->axis[0], (const double[3]){0.0, s, c}, sizeof joint->axis[0]);
        memcpy(joint->axis[1], (const double[3]){0.0, 0.0, 1.0}, sizeof joint->axis[1]);
        return;
    }
    basis_with_z(Q, a1);
    memcpy(joint->axis[0], (const double[3]){0.0, 0.0, 1.0}, sizeof joint->axis[0]);
}

/* out = A^T B (3x3, row-major) */
static void mat3_mul_tn(double *restrict out, const double *A, const double *B)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            out[3 * i + j] = A[i] * B[j] + A[3 + i] * B[3 + j] + A[6 + i] * B[6 + j];
}

/* The tree transform's form (mbd_tree_form): a revolute joint's X_T = (E, r) with
 * E = rotx(alpha) and r = (a, 0, 0). Exact zeros only, as canonical_joint_frame keeps
 * frames whose axes are z exactly; E[0] = c + (1 - c) of a turn about x may miss 1 by an
 * ulp, which the screw kernels' exact 1 replaces at round-off level. */
static mbd_tree_form tree_form(const mbd_joint *joint, const mbd_xform *XT)
{
    const double *E = XT->E;
    const int about_x = fabs(E[0] - 1.0) <= 4 * DBL_EPSILON && E[1] == 0.0 && E[2] == 0.0 &&
                        E[3] == 0.0 && E[6] == 0.0 && E[4] == E[8] && E[5] == -E[7];
    if (joint->type != MBD_REVOLUTE || !about_x || XT->r[1] != 0.0 || XT->r[2] != 0.0)
        return TREE_GENERAL;
    return E[5] == 0.0 && E[4] == 1.0 ? TREE_OFFSET : TREE_SCREW;
}

/* A twisted screw's twice_twist (mbd_joint) from its tree transform's turn about x,
 * E = rotx(alpha): cos alpha = E[8], sin alpha = -E[7]. */
static void screw_twist(mbd_joint *joint, mbd_tree_form form, const double *ET)
{
    if (form != TREE_SCREW)
        return;
    const double c = ET[8], s = -ET[7];
    joint->twice_twist[0] = c * c - s * s;
    joint->twice_twist[1] = 2.0 * c * s;
}

/* A Cardan joint's turn_rest = (1 - a1 a1^T) E_T and turn_cross = a1 x E_T (mbd_joint),
 * column by column. */
static void cardan_first_turn(mbd_joint *joint, const double *ET)
{
    if (joint->type != MBD_CARDAN)
        return;
    const double *a = joint->axis[0];
    for (int j = 0; j < 3; j++) {
        const double col[3] = {ET[j], ET[3 + j], ET[6 + j]}, along = vec3_dot(a, col);
        double cross[3];
        vec3_cross(cross, a, col);
        for (int i = 0; i < 3; i++) {
            joint->turn_rest[3 * i + j] = col[i] - a[i] * along;
            joint->turn_cross[3 * i + j] = cross[i];
        }
    }
}

/* A free joint at a root, a leaf, without armature: a rigid body on its own. */
static int free_body(const mbd_model *m, int i)
{
    return m->joint[i].type == MBD_FREE && m->parent[i] < 0 && m->last_child[i] < 0 &&
           !joint_has_armature(m, i);
}

/* Tree transforms and spatial inertias in the solvers' frames. The user's tree transform is
 * x_parent = origin + R x_joint; with x_parent = Q_p x'_parent and x_joint = Q_i x'_joint it
 * becomes origin' = Q_p^T origin, R' = Q_p^T R Q_i, and X_T = (R'^T, origin'). The centre of
 * mass and inertia turn with the body: c' = Q_i^T c, Ic' = Q_i^T Ic Q_i. */
void fill_geometry(mbd_model *m)
{
    static const double identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    for (int i = 0; i < m->nb; i++) {
        const mbd_body_def *b = &m->defs[i];
        double *Q = m->user_rotation[i], RQ[9], R[9], Ic[9], IcQ[9], Ic_solver[9], com[3];
        canonical_joint_frame(Q, &m->joint[i]);
        const double *Qp = m->parent[i] < 0 ? identity : m->user_rotation[m->parent[i]];
        mat3_mul(RQ, &b->rotation[0][0], Q);
        mat3_mul_tn(R, Qp, RQ);
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                m->Xtree[i].E[3 * r + c] = R[3 * c + r];
        mat3_apply_t(m->Xtree[i].r, Qp, b->origin);
        cardan_first_turn(&m->joint[i], m->Xtree[i].E);
        m->tree_form[i] = tree_form(&m->joint[i], &m->Xtree[i]);
        screw_twist(&m->joint[i], m->tree_form[i], m->Xtree[i].E);
        m->joint_type[i] = m->joint[i].type;
        symmetrized(Ic, &b->inertia[0][0]);
        mat3_mul(IcQ, Ic, Q);
        mat3_mul_tn(Ic_solver, Q, IcQ);
        mat3_apply_t(com, Q, b->com);
        rigid_inertia(&m->inertia[i], b->mass, com, Ic_solver);
        m->has_coulomb |= b->friction.coulomb > 0.0;
        m->has_friction |= b->friction.coulomb > 0.0 || b->friction.viscous > 0.0;
    }
}

int fill_free_body_inverses(mbd_model *m)
{
    int any = 0;
    for (int i = 0; i < m->nb; i++)
        any |= free_body(m, i);
    if (!any)
        return 0;
    if (!(m->free_body_inverse = calloc((size_t)m->ndd, sizeof *m->free_body_inverse)))
        return -1;
    for (int i = 0; i < m->nb; i++)
        if (free_body(m, i))
            rigid_inverse(m->free_body_inverse + m->d0[i], &m->inertia[i]);
    return 0;
}
