/* joint_kernels.h: joint transforms and motion subspaces, and the n_i x n_i joint-space
 * blocks (n_i <= 6), written once over the lane type of lane.h (no include guard: included
 * once per width, between lane.h and lane_end.h; dynamics.h instantiates one state).
 * Always inline, so that a solver that calls them with a constant joint type gets them
 * unrolled and folded (DISPATCH_JOINT). S and U are n_i columns of 6 lanes; blocks
 * row-major.
 *
 * The body frame is the joint frame moved by the joint: x_joint = R_J(q) x_body + p_J(q).
 * In the convention of spatial.h, X_J = (R_J^T, p_J). S maps the joint's velocity
 * coordinates to the body's velocity relative to the joint frame, in body coordinates.
 * The model builder turns every joint frame so that its axis is z (a Cardan joint's second
 * axis, its first a1 = (0, s, c) in the y-z plane; canonical_joint_frame, model/frames.c):
 * then R_J is a turn about z (12 multiplications on a transform), p_J lies on z, S has unit
 * columns e_k: revolute (k = 2: turn about z), prismatic (k = 5: slide along z),
 * cylindrical (2 and 5), Cardan's second (2: its second axis is z), so that U = I^A S is a
 * column of I^A, D = S^T U an entry, and S^T f an entry of f. Cardan's first column,
 * (b(q2); 0), is read from S.
 * Spherical and free joints keep the user's frame (they have no axis): q holds the unit
 * quaternion (w, x, y, z) of R_J (after the position p_J for a free joint), and their
 * velocities are the body's own in body coordinates, so S is constant (unit columns) and
 * c_J = 0. R_J is formed from q / |q|: any non-zero quaternion gives a rotation, and a
 * drift of |q| changes nothing (integration relies on it).
 * A new joint type adds its cases to joint_kinematics, joint_bias, joint_dS_dq_dot and
 * unit_column (joint_space.h); one with n_q != n_v (spherical, free) to the first only,
 * and to joint_position_rates (joints.c). */

/* ---- the backward passes' inertia sums, I^A_lambda = I_lambda + sum_children X^T I X ----
 * The passes visit siblings from the highest index down, so the highest
 * (model->last_child) starts its parent's sum from the body inertia and the others add:
 * no pass copies every body's inertia first (in W lanes, 21 loads and stores of W doubles
 * per body). */

/* Where body i's inertia sum lives: work->IA[i], or, slots set (the batch's bodies sweep,
 * which reads a sum only at its own body's step), in a slot shared with sums that do not
 * live at the same time (model->sum_slot): a chain's two slots stay in the L1 cache instead
 * of 21 W doubles per body going out to L2 and back. */
MBD_INLINE lane_inertia *LANE_FN(inertia_sum)(const mbd_model *model, lane_work *work, int i,
                                              int slots)
{
    return &work->IA[slots ? model->sum_slot[i] : i];
}

/* At body i's backward step: a leaf's sum is its own inertia. */
MBD_INLINE void LANE_FN(start_inertia_sum)(const mbd_model *model, lane_work *work, int i,
                                           int slots)
{
    if (model->last_child[i] < 0)
        LANE_FN(rigid_blocks)(LANE_FN(inertia_sum)(model, work, i, slots), &model->inertia[i]);
}

/* The same for a sum of forces f (nb x 6) carried to the parents: a leaf's starts at
 * zero, and the highest-index child starts its parent's with its own t (no pass zeroes
 * them all first). */
MBD_INLINE void LANE_FN(start_force_sum)(const mbd_model *model, lane (*f)[6], int i)
{
    if (model->last_child[i] < 0)
        for (int r = 0; r < 6; r++)
            f[i][r] = LANE_FN(lane_splat)(0.0);
}

MBD_INLINE void LANE_FN(carry_force)(const mbd_model *model, lane (*f)[6], int i, const lane t[6])
{
    const int p = model->parent[i], first = model->last_child[p] == i;
    for (int r = 0; r < 6; r++)
        f[p][r] = first ? t[r] : f[p][r] + t[r];
}

/* X_i as the screw kernels read it (spatial_kernels.h: E[0] = cos q and E[3] = -sin q of the
 * state, E[7], E[8] and r[0] the tree transform's), named `name`: on the GPU, where each
 * entry of the workspace is bytes to and from memory per body and state, formed where it
 * is read, cos q and sin q from q (lane_sincos; about 20 operations, 5 times a body) and
 * the constants from the model, which every thread shares (in cache): 7 doubles per body
 * and state less than the workspace's X_i (docs/gpu.md, the bytes budget). Elsewhere the
 * workspace's X_i, which holds them all (body_kinematics, fixed_kinematics). */
#if defined(MBD_GPU_C) && MBD_LANES == 1
#ifndef MBD_SCREW_XFORM_1 /* once per translation unit */
#define MBD_SCREW_XFORM_1
MBD_INLINE mbd_xform screw_xform(const mbd_model *model, const mbd_work *work, int i)
{
    mbd_xform X = model->Xtree[i];
    double s, c;
    lane_sincos(work->gpu_q[model->q0[i]], &s, &c);
    X.E[0] = c;
    X.E[3] = -s;
    return X;
}
#endif
#define SCREW_XFORM(name, model, work, i)                                                          \
    const mbd_xform name##_view = screw_xform(model, work, i), *name = &name##_view
#define MBD_GPU_SCREW_VIEW 1
#else
#define SCREW_XFORM(name, model, work, i) const lane_xform *name = &(work)->X[i]
#define MBD_GPU_SCREW_VIEW 0
#endif

/* IA_lambda = sum + X_i^T I X_i (sum NULL: body's blocks), by the form of body i's tree
 * transform. */
MBD_INLINE void LANE_FN(add_congruence)(const mbd_model *model, lane_work *work, int i,
                                        const lane_inertia *sum, const mbd_rigid *body,
                                        const lane_inertia *I, unsigned zero_a, unsigned zero_c,
                                        int slots)
{
    lane_inertia *out = LANE_FN(inertia_sum)(model, work, model->parent[i], slots);
    if (model->tree_form[i] == TREE_GENERAL) {
        LANE_FN(inertia_add_congruence)(out, sum, body, &work->X[i], I, zero_a, zero_c);
        return;
    }
    SCREW_XFORM(X, model, work, i);
    LANE_FN(inertia_add_screw_congruence)(
        out, sum, body, X, model->tree_form[i] == TREE_SCREW ? model->joint[i].twice_twist : NULL,
        I, zero_a, zero_c);
}

/* The form of body i's tree transform, a constant TREE_GENERAL for the joint types that
 * are never screws (so that their steps carry no screw code). */
MBD_INLINE mbd_tree_form LANE_FN(tree_form_of)(const mbd_model *model, int i, mbd_joint_type type)
{
    return type == MBD_REVOLUTE ? model->tree_form[i] : TREE_GENERAL;
}

/* out = X_i x for a motion x (parent -> body i) or, force set, X_i^T x for a force x
 * (body i -> parent), by the form of body i's tree transform: a revolute joint after an
 * axial screw turns and shifts (screw_motion, screw_force_t) instead of applying E twice
 * and r x. */
MBD_INLINE void LANE_FN(body_transform)(lane *restrict out, const mbd_model *model,
                                        const lane_work *work, int i, mbd_joint_type type,
                                        int force, const lane *x)
{
    const mbd_tree_form form = LANE_FN(tree_form_of)(model, i, type);
    const int twisted = form == TREE_SCREW;
    if (form == TREE_GENERAL) {
        const lane_xform *X = &work->X[i];
        force ? LANE_FN(xform_force_t)(out, X, x) : LANE_FN(xform_motion)(out, X, x);
        return;
    }
    SCREW_XFORM(X, model, work, i);
    force ? LANE_FN(screw_force_t)(out, X, twisted, x) : LANE_FN(screw_motion)(out, X, twisted, x);
}

/* out = E_i v for a 3-vector v (parent axes -> body i's), or, back set, E_i^T v. In W
 * lanes (SCREW_TRANSFORMS) across an axial screw by turns (screw_rotate: the lanes' X of a
 * screw holds only cos q and sin q, body_kinematics); one state's X is whole, and E's
 * product waits on fewer products than two turns in a row (the subtree sums are a chain
 * from body to body). */
MBD_INLINE void LANE_FN(body_rotate)(lane *restrict out, const mbd_model *model,
                                     const lane_work *work, int i, mbd_joint_type type, int back,
                                     const lane *v)
{
    const mbd_tree_form form = LANE_FN(tree_form_of)(model, i, type);
    const lane *E = work->X[i].E;
    if (SCREW_TRANSFORMS(work) && form != TREE_GENERAL) {
        SCREW_XFORM(X, model, work, i);
        LANE_FN(screw_rotate)(out, X, form == TREE_SCREW, back, v);
    } else
        back ? LANE_FN(mat3_apply_t)(out, E, v) : LANE_FN(mat3_apply)(out, E, v);
}

MBD_INLINE void LANE_FN(body_motion)(lane *restrict out, const mbd_model *model,
                                     const lane_work *work, int i, mbd_joint_type type,
                                     const lane *m)
{
    LANE_FN(body_transform)(out, model, work, i, type, 0, m);
}

MBD_INLINE void LANE_FN(body_force_t)(lane *restrict out, const mbd_model *model,
                                      const lane_work *work, int i, mbd_joint_type type,
                                      const lane *f)
{
    LANE_FN(body_transform)(out, model, work, i, type, 1, f);
}

/* Body i's (articulated or composite) inertia I, in its own frame, joins its parent's sum;
 * zero_a, zero_c: I's zero rows (inertia_add_congruence); slots as inertia_sum's. */
MBD_INLINE void LANE_FN(carry_inertia)(const mbd_model *model, lane_work *work, int i,
                                       const lane_inertia *I, unsigned zero_a, unsigned zero_c,
                                       int slots)
{
    const int p = model->parent[i];
    if (model->last_child[p] == i) /* the sum starts from the parent's own inertia */
        LANE_FN(add_congruence)(model, work, i, NULL, &model->inertia[p], I, zero_a, zero_c, slots);
    else
        LANE_FN(add_congruence)(model, work, i, LANE_FN(inertia_sum)(model, work, p, slots), NULL,
                                I, zero_a, zero_c, slots);
}

/* E = Rz(q)^T E_T: rows 0 and 1 of E_T turned (row 2, E_T's, is written with the
 * workspace: fixed_kinematics). */
MBD_INLINE void LANE_FN(turn_about_z)(lane *restrict E, const double *ET, lane c, lane s)
{
    for (int k = 0; k < 3; k++) {
        E[k] = c * ET[k] + s * ET[3 + k];
        E[3 + k] = c * ET[3 + k] - s * ET[k];
    }
}

/* r = r_T + E_T^T (slide e_z): the slide along the joint's z in parent coordinates. */
MBD_INLINE void LANE_FN(slide_along_z)(lane *restrict r, const mbd_xform *XT, lane slide)
{
    for (int k = 0; k < 3; k++)
        r[k] = XT->r[k] + slide * XT->E[6 + k];
}

/* r = r_T in every lane */
MBD_INLINE void LANE_FN(fixed_offset)(lane *restrict r, const mbd_xform *XT)
{
    for (int k = 0; k < 3; k++)
        r[k] = LANE_FN(lane_splat)(XT->r[k]);
}

/* col = the unit vector e_k */
MBD_INLINE void LANE_FN(set_unit_column)(lane *col, int k)
{
    for (int r = 0; r < 6; r++)
        col[r] = LANE_FN(lane_splat)(r == k);
}

/* Cardan: R_J = R1 Rz(q2) with R1 = Rot(a1, q1), the first axis a1 = (0, s, c) in the
 * y-z plane and the second axis z; E = Rz(q2)^T R1^T E_T, R1^T E_T from the joint's
 * turn_rest and turn_cross (18 multiplications instead of 16 for R1 and 27 for the
 * product). The body sees the second axis as e_z (a unit column of S, written with the
 * workspace) and the first as b = Rz(q2)^T a1 = (s sin q2, s cos q2, c), of which only the
 * first two entries depend on q (the rest: cardan_constant_column). */
MBD_INLINE void LANE_FN(cardan_kinematics)(lane_xform *X, lane *S, const mbd_joint *joint,
                                           const lane *sin_q, const lane *cos_q,
                                           const mbd_xform *XT)
{
    const double *a1 = joint->axis[0];
    const lane s = sin_q[1], c = cos_q[1], versine = 1.0 - cos_q[0];
    lane E1[9];
    for (int k = 0; k < 9; k++)
        E1[k] = XT->E[k] - versine * joint->turn_rest[k] - sin_q[0] * joint->turn_cross[k];
    for (int k = 0; k < 3; k++) {
        X->E[k] = c * E1[k] + s * E1[3 + k];
        X->E[3 + k] = c * E1[3 + k] - s * E1[k];
        X->E[6 + k] = E1[6 + k];
    }
    S[0] = s * a1[1];
    S[1] = c * a1[1];
}

/* The entries of a Cardan joint's first column that do not depend on q: b's third, a1's
 * own, and the zero linear part (written with the workspace, constant_kinematics). */
MBD_INLINE void LANE_FN(cardan_constant_column)(lane *S, const mbd_joint *joint)
{
    S[2] = LANE_FN(lane_splat)(joint->axis[0][2]);
    for (int r = 3; r < 6; r++)
        S[r] = LANE_FN(lane_splat)(0.0);
}

/* R (row-major, x_joint = R x_body) of the rotation quat / |quat|, quat = (w, x, y, z). */
MBD_INLINE void LANE_FN(quaternion_rotation)(lane R[9], const lane quat[4])
{
    const lane w = quat[0], x = quat[1], y = quat[2], z = quat[3];
    const lane s = 2.0 / (w * w + x * x + y * y + z * z);
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

/* Spherical and free: E = R^T E_T for R of the quaternion; r = r_T (written with the
 * workspace) plus E_T^T p for a free joint's position p. (S is the joint's nv unit columns
 * e_0, e_1, ...) */
MBD_INLINE void LANE_FN(quaternion_kinematics)(lane_xform *X, const mbd_joint *joint, const lane *q,
                                               const mbd_xform *XT)
{
    const int free = joint->type == MBD_FREE;
    lane R[9];
    LANE_FN(quaternion_rotation)(R, q + (free ? 3 : 0));
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            X->E[3 * i + j] = R[i] * XT->E[j] + R[3 + i] * XT->E[3 + j] + R[6 + i] * XT->E[6 + j];
    if (free)
        for (int k = 0; k < 3; k++)
            X->r[k] = XT->r[k] + XT->E[k] * q[0] + XT->E[3 + k] * q[1] + XT->E[6 + k] * q[2];
}

/* The part of X = X_J(q) X_T that does not depend on q, written once with the workspace:
 * a prismatic joint's E = E_T, row 2 of a revolute or cylindrical joint's E (that of E_T),
 * and r = r_T where the joint does not slide. */
MBD_INLINE void LANE_FN(fixed_kinematics)(lane_xform *X, mbd_joint_type type, const mbd_xform *XT)
{
    const int turns = type == MBD_REVOLUTE || type == MBD_CYLINDRICAL;
    const int rows_from = type == MBD_PRISMATIC ? 0 : turns ? 6 : 9;
    for (int k = rows_from; k < 9; k++)
        X->E[k] = LANE_FN(lane_splat)(XT->E[k]);
    if (type != MBD_PRISMATIC && type != MBD_CYLINDRICAL && type != MBD_FREE)
        LANE_FN(fixed_offset)(X->r, XT);
}

/* X = X_J(q) X_T: parent frame -> body frame, the part that depends on q (the rest is
 * fixed_kinematics'), and the motion subspace S(q) in body coordinates (nv columns of 6)
 * where it depends on q (Cardan; the other joints' S is constant, written with the
 * workspace: constant_kinematics). type is joint->type, whose other fields only Cardan,
 * spherical and free joints read; sin_q and cos_q are those of the joint's coordinates q
 * (its angles' are read). screw: X is read by the screw kernels alone (the batch's
 * lanes, across an axial screw: mbd_tree_form; SCREW_TRANSFORMS), so that of a revolute
 * joint's E only E[0] = cos q and E[3] = -sin q are formed (E_T = rotx(alpha) makes them
 * so). */
static inline void LANE_FN(joint_kinematics)(lane_xform *X, lane *S, mbd_joint_type type,
                                             const mbd_joint *joint, const lane *q,
                                             const lane *sin_q, const lane *cos_q,
                                             const mbd_xform *XT, int screw)
{
    switch (type) {
    case MBD_REVOLUTE:
        if (screw && MBD_GPU_SCREW_VIEW)
            break; /* formed where it is read (SCREW_XFORM) */
        if (screw) {
            X->E[0] = cos_q[0];
            X->E[3] = -sin_q[0];
        } else
            LANE_FN(turn_about_z)(X->E, XT->E, cos_q[0], sin_q[0]);
        break;
    case MBD_PRISMATIC:
    default: /* the model builder admits no other type */
        LANE_FN(slide_along_z)(X->r, XT, q[0]);
        break;
    case MBD_CYLINDRICAL:
        LANE_FN(turn_about_z)(X->E, XT->E, cos_q[0], sin_q[0]);
        LANE_FN(slide_along_z)(X->r, XT, q[1]);
        break;
    case MBD_CARDAN:
        LANE_FN(cardan_kinematics)(X, S, joint, sin_q, cos_q, XT);
        break;
    case MBD_SPHERICAL:
    case MBD_FREE:
        LANE_FN(quaternion_kinematics)(X, joint, q, XT);
        break;
    }
}

/* What of the kinematics does not depend on q, written when a workspace is made: the unit
 * columns of S and the entries of a Cardan's first column that q does not move (6 and 4 W
 * doubles per column that a call in W lanes does not store), and the fixed part of X
 * (fixed_kinematics): in W lanes a revolute joint's X costs 6 W doubles per call instead
 * of 12 W (2 W across a screw). */
static inline void LANE_FN(constant_kinematics)(const mbd_model *model, lane_work *work)
{
    for (int i = 0; i < model->nb; i++) {
        const mbd_joint_type type = model->joint_type[i];
        for (int k = 0; k < model->joint[i].nv; k++)
            if (unit_column(type, k) >= 0)
                LANE_FN(set_unit_column)(work->S + 6 * (model->v0[i] + k), unit_column(type, k));
            else
                LANE_FN(cardan_constant_column)(work->S + 6 * (model->v0[i] + k), &model->joint[i]);
        LANE_FN(fixed_kinematics)(&work->X[i], type, &model->Xtree[i]);
    }
}

/* X_i = X_J(q_i) X_T(i) and S_i(q_i) for body i. In W lanes only the solvers' kernels
 * read X, so that an axial screw's is formed for them alone (joint_kinematics,
 * SCREW_TRANSFORMS); one state's X is whole, for every consumer. */
MBD_INLINE void LANE_FN(body_kinematics)(const mbd_model *model, lane_work *work, const lane *q,
                                         int i, mbd_joint_type type)
{
    const int q0 = model->q0[i];
#if MBD_LANES == 1 &&                                                                              \
    !defined(MBD_GPU_C) /* start_kinematics took the angles' at once, 4 in a vector */
    const lane *sin_q = work->sin_q + q0, *cos_q = work->cos_q + q0;
#else /* here, while the body's lanes are at hand (zeros, unread, where there are none; on
       * the GPU 4 doubles per angle less to and from memory than work->sin_q, cos_q) */
    lane sin_q[2] = {LANE_FN(lane_splat)(0.0)}, cos_q[2] = {LANE_FN(lane_splat)(0.0)};
    for (int k = 0; k < joint_angles(type); k++)
        LANE_FN(lane_sincos)(q[q0 + k], sin_q + k, cos_q + k);
#endif
    LANE_FN(joint_kinematics)(&work->X[i], work->S + 6 * model->v0[i], type, &model->joint[i],
                              q + q0, sin_q, cos_q, &model->Xtree[i],
                              SCREW_TRANSFORMS(work) && model->tree_form[i] != TREE_GENERAL);
}

/* The same for every body. */
static inline void LANE_FN(tree_kinematics)(const mbd_model *model, lane_work *work, const lane *q)
{
    for (int i = 0; i < model->nb; i++)
        LANE_FN(body_kinematics)(model, work, q, i, model->joint_type[i]);
}

/* c_J = (dS/dt) qd in body coordinates (zero where S is constant); S = S(q).
 * Cardan: b = S's first angular column; d/dt b = -qd2 a2 x b, so
 * c_J = (qd1 qd2 (b x a2); 0). */
MBD_INLINE void LANE_FN(joint_bias)(lane out[6], const mbd_joint *joint, const lane *S,
                                    const lane *qd)
{
    for (int r = 0; r < 6; r++)
        out[r] = LANE_FN(lane_splat)(0.0);
    if (joint->type != MBD_CARDAN)
        return;
    const lane a2[3] = {LANE_FN(lane_splat)(joint->axis[1][0]),
                        LANE_FN(lane_splat)(joint->axis[1][1]),
                        LANE_FN(lane_splat)(joint->axis[1][2])};
    LANE_FN(vec3_cross)(out, S, a2);
    for (int k = 0; k < 3; k++)
        out[k] *= qd[0] * qd[1];
}

/* out[k] += ((dS/dq_k) qd)^T mu: the part of dT/dq_k that comes from S depending on q.
 * Cardan: only S's first column depends on q, and only on q2: (dS/dq2) qd = (qd1 (b x a2); 0). */
MBD_INLINE void LANE_FN(joint_dS_dq_dot)(lane *out, const mbd_joint *joint, const lane *S,
                                         const lane *qd, const lane mu[6])
{
    if (joint->type != MBD_CARDAN)
        return;
    const lane a2[3] = {LANE_FN(lane_splat)(joint->axis[1][0]),
                        LANE_FN(lane_splat)(joint->axis[1][1]),
                        LANE_FN(lane_splat)(joint->axis[1][2])};
    lane bxa2[3];
    LANE_FN(vec3_cross)(bxa2, S, a2);
    out[1] += qd[0] * LANE_FN(vec3_dot)(bxa2, mu);
}

/* S_col . f */
MBD_INLINE lane LANE_FN(column_dot)(mbd_joint_type type, const lane *S, int col, const lane f[6])
{
    const int k = unit_column(type, col);
    return k >= 0 ? f[k] : LANE_FN(vec3_dot)(S + 6 * col, f);
}

/* out += S_col x */
MBD_INLINE void LANE_FN(column_add)(lane out[6], mbd_joint_type type, const lane *S, int col,
                                    lane x)
{
    const int k = unit_column(type, col);
    if (k >= 0)
        out[k] += x;
    else
        for (int r = 0; r < 3; r++)
            out[r] += S[6 * col + r] * x;
}

/* out = I S_col */
MBD_INLINE void LANE_FN(inertia_times_column)(lane out[6], const lane_inertia *I,
                                              mbd_joint_type type, const lane *S, int col)
{
    const int k = unit_column(type, col);
    if (k >= 0) {
        LANE_FN(inertia_column)(out, I, k);
        return;
    }
    const lane *s = S + 6 * col; /* (A s; B^T s) */
    LANE_FN(sym3_apply)(out, I->A, s);
    LANE_FN(mat3_apply_t)(out + 3, I->B, s);
}

/* D_i += armature_i on its diagonal: a rotor's inertia on each of the joint's velocities,
 * the pivots of H + diag(armature) (joint_has_armature, model.h). */
MBD_INLINE void LANE_FN(add_armature)(lane *D, const mbd_model *model, int i, int n)
{
    if (!joint_has_armature(model, i))
        return;
    const lane a = LANE_FN(lane_splat)(model->armature[i]);
    for (int k = 0; k < n; k++)
        D[n * k + k] += a;
}

/* I^a S = 0 exactly in exact arithmetic: zero the unit columns' rows and columns of I^a
 * rather than keep their rounding residue. */
MBD_INLINE void LANE_FN(inertia_zero_subspace)(lane_inertia *I, mbd_joint_type type)
{
    for (int col = 0; col < joint_dofs(type); col++) {
        const int k = unit_column(type, col);
        if (k < 0) /* Cardan's first column */
            continue;
        lane *block = k < 3 ? I->A : I->C;
        const int j = k % 3;
        for (int r = 0; r < 3; r++) {
            block[SYM3(r, j)] = LANE_FN(lane_splat)(0.0);
            if (k < 3)
                I->B[3 * j + r] = LANE_FN(lane_splat)(0.0);
            else
                I->B[3 * r + j] = LANE_FN(lane_splat)(0.0);
        }
    }
}

/* out += x (a x e_j): a cross product with a unit vector is two signed terms. */
MBD_INLINE void LANE_FN(add_cross_unit)(lane out[3], const lane a[3], int j, lane x)
{
    out[(j + 1) % 3] += a[(j + 2) % 3] * x;
    out[(j + 2) % 3] -= a[(j + 1) % 3] * x;
}

/* out = m x (S x), m a motion vector: the velocity-product acceleration v x S qd, a few
 * multiplications per unit column e_k instead of a general cross product. The columns that
 * are not unit vectors are angular, (s; 0) (Cardan): their sum takes one. */
MBD_INLINE void LANE_FN(cross_subspace)(lane out[6], const lane m[6], mbd_joint_type type,
                                        const lane *S, const lane *x)
{
    lane s[3], t[3];
    int general = 0;
    for (int r = 0; r < 6; r++)
        out[r] = LANE_FN(lane_splat)(0.0);
    for (int col = 0; col < joint_dofs(type); col++) {
        const int k = unit_column(type, col);
        if (k < 0) {
            for (int r = 0; r < 3; r++)
                s[r] = general ? s[r] + S[6 * col + r] * x[col] : S[6 * col + r] * x[col];
            general = 1;
        } else if (k < 3) {
            LANE_FN(add_cross_unit)(out, m, k, x[col]);
            LANE_FN(add_cross_unit)(out + 3, m + 3, k, x[col]);
        } else
            LANE_FN(add_cross_unit)(out + 3, m, k - 3, x[col]);
    }
    if (!general)
        return;
    for (int half = 0; half < 2; half++) {
        LANE_FN(vec3_cross)(t, m + 3 * half, s);
        for (int r = 0; r < 3; r++)
            out[3 * half + r] += t[r];
    }
}

/* out = S x */
MBD_INLINE void LANE_FN(subspace_times)(lane out[6], mbd_joint_type type, const lane *S,
                                        const lane *x)
{
    for (int r = 0; r < 6; r++)
        out[r] = LANE_FN(lane_splat)(0.0);
    for (int col = 0; col < joint_dofs(type); col++)
        LANE_FN(column_add)(out, type, S, col, x[col]);
}

/* out_k = S_k . f */
MBD_INLINE void LANE_FN(subspace_dot)(lane *out, mbd_joint_type type, const lane *S,
                                      const lane f[6])
{
    for (int col = 0; col < joint_dofs(type); col++)
        out[col] = LANE_FN(column_dot)(type, S, col, f);
}

/* U = I S and D = S^T U (n x n) */
MBD_INLINE void LANE_FN(joint_space_inertia)(lane (*U)[6], lane *D, const lane_inertia *I,
                                             mbd_joint_type type, const lane *S)
{
    const int n = joint_dofs(type);
    for (int col = 0; col < n; col++)
        LANE_FN(inertia_times_column)(U[col], I, type, S, col);
    for (int k = 0; k < n; k++)
        for (int m = 0; m < n; m++)
            D[n * k + m] = LANE_FN(column_dot)(type, S, k, U[m]);
}

/* Columns of U D^-1: UDinv[k] = sum_m U_m Dinv[m][k]. */
MBD_INLINE void LANE_FN(times_inverse)(lane (*UDinv)[6], const lane (*U)[6], const lane *Dinv,
                                       int n)
{
    for (int k = 0; k < n; k++)
        for (int r = 0; r < 6; r++) {
            UDinv[k][r] = LANE_FN(lane_splat)(0.0);
            for (int m = 0; m < n; m++)
                UDinv[k][r] += U[m][r] * Dinv[n * m + k];
        }
}

/* In place A = L L^T, L lower with its diagonal stored as reciprocals 1/L_jj, so that the
 * substitutions multiply; 0, or -1 if A is not numerically positive definite (a pivot
 * whose reciprocal is not > 0 or not finite; in any lane). Right-looking, on the
 * unscaled column a_j: the trailing block loses a_j a_j^T / d, so the next pivot waits on
 * the division 1/d only, and sqrt(d) runs beside it (1/L_jj = sqrt(d) / d): along a chain every joint's pivots sit on
 * the path from body to body. Unrolled, so that the factor stays in registers (gcc keeps
 * the loop otherwise, at n = 2 too). */
MBD_INLINE int LANE_FN(small_cholesky)(lane *A, int n)
{
#pragma GCC unroll 6
    for (int j = 0; j < n; j++) {
        const lane d = A[n * j + j], reciprocal = 1.0 / d;
        if (LANE_FN(lane_bad_pivot)(reciprocal)) /* d not > 0, not finite, or subnormal */
            return -1;
        const lane inverse_root = LANE_FN(lane_sqrt)(d) * reciprocal;
        for (int i = j + 1; i < n; i++)
            for (int m = j + 1; m <= i; m++)
                A[n * i + m] -= A[n * i + j] * A[n * m + j] * reciprocal;
        for (int i = j + 1; i < n; i++)
            A[n * i + j] *= inverse_root;
        A[n * j + j] = inverse_root;
    }
    return 0;
}

/* x = L^-1 x and x = L^-T x for the factor of small_cholesky. */
MBD_INLINE void LANE_FN(small_forward_subst)(const lane *restrict L, int n, lane *restrict x)
{
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < i; k++)
            x[i] -= L[n * i + k] * x[k];
        x[i] *= L[n * i + i];
    }
}

/* Y = L^-1 Y for the n rows of 6 of Y: all columns at once. */
MBD_INLINE void LANE_FN(small_forward_subst_rows)(const lane *restrict L, int n, lane *restrict Y)
{
    for (int i = 0; i < n; i++)
        for (int r = 0; r < 6; r++) {
            lane y = Y[6 * i + r];
            for (int k = 0; k < i; k++)
                y -= L[n * i + k] * Y[6 * k + r];
            Y[6 * i + r] = y * L[n * i + i];
        }
}

MBD_INLINE void LANE_FN(small_backward_subst)(const lane *restrict L, int n, lane *restrict x)
{
    for (int i = n - 1; i >= 0; i--) {
        for (int k = i + 1; k < n; k++)
            x[i] -= L[n * k + i] * x[k];
        x[i] *= L[n * i + i];
    }
}

/* L = the factor of small_cholesky of the n x n SPD block D, where D^-1 itself is never
 * needed, only D^-1 u (block_factor_solve); -1 as small_cholesky. */
MBD_INLINE int LANE_FN(joint_block_factor)(lane *restrict L, const lane *D, int n)
{
    for (int k = 0; k < n * n; k++)
        L[k] = D[k];
    return LANE_FN(small_cholesky)(L, n);
}

/* x = D^-1 b from the factor L of joint_block_factor. */
MBD_INLINE void LANE_FN(block_factor_solve)(lane *restrict x, const lane *L, const lane *b, int n)
{
    for (int k = 0; k < n; k++)
        x[k] = b[k];
    LANE_FN(small_forward_subst)(L, n, x);
    LANE_FN(small_backward_subst)(L, n, x);
}

/* Dinv = D^-1 for the n x n SPD block D (n <= 6); -1 if D is not numerically positive
 * definite (a pivot not > 0, or its reciprocal not finite: subnormal pivots too; in any
 * lane). 1x1 and 2x2 in closed form; larger blocks (spherical, free) by Cholesky,
 * D^-1 = L^-T L^-1, of which the lower triangle is formed and mirrored, so that Dinv is
 * exactly symmetric. */
MBD_INLINE int LANE_FN(joint_block_inverse)(lane *restrict Dinv, const lane *D, int n)
{
    if (n == 1) {
        Dinv[0] = 1.0 / D[0];
        return LANE_FN(lane_bad_pivot)(Dinv[0]) ? -1 : 0;
    }
    if (n == 2) {
        const lane inv = 1.0 / (D[0] * D[3] - D[1] * D[2]);
        if (LANE_FN(lane_bad_pivot)(D[0]) || LANE_FN(lane_bad_pivot)(inv))
            return -1;
        Dinv[0] = D[3] * inv;
        Dinv[1] = -D[1] * inv;
        Dinv[2] = -D[2] * inv;
        Dinv[3] = D[0] * inv;
        return 0;
    }
    lane L[MBD_MAX_JOINT_DOF * MBD_MAX_JOINT_DOF];
    if (LANE_FN(joint_block_factor)(L, D, n))
        return -1;
    for (int j = 0; j < n; j++) { /* column j of D^-1: L^-T L^-1 e_j, rows >= j kept */
        lane x[MBD_MAX_JOINT_DOF];
        for (int k = 0; k < n; k++)
            x[k] = LANE_FN(lane_splat)(k == j);
        LANE_FN(small_forward_subst)(L, n, x);
        LANE_FN(small_backward_subst)(L, n, x);
        for (int i = j; i < n; i++)
            Dinv[n * i + j] = Dinv[n * j + i] = x[i];
    }
    return 0;
}

/* ---- the velocity terms that the forward passes share ---- */

/* Where the O(N) solvers keep body i's velocity or acceleration (of motions: work->v or
 * work->a; the Poisson solvers' g_i there): they read them only at the steps of the body
 * and its children, so they share slots with bodies whose values do not live at the same
 * time (model->motion_slot, as inertia_sum's slots; a chain's two stay in the L1 cache). */
MBD_INLINE lane *LANE_FN(motion_of)(const mbd_model *model, lane (*motions)[6], int i)
{
    return motions[model->motion_slot[i]];
}

/* out = v_i = X_i v_lambda + S_i qd_i (vp = v_lambda; at a root, where it is not read,
 * some motion of the workspace, never NULL: no path of the kernels leads to a NULL one,
 * docs/gpu.md), summed in a local and stored once: along a chain each body's velocity
 * waits on its parent's, and sums in work->v would put a store and a reload into that
 * wait. */
MBD_INLINE void LANE_FN(body_velocity)(lane *out, const mbd_model *model, const lane_work *work,
                                       const lane *vp, const lane *qd, int i, mbd_joint_type type)
{
    const int v0 = model->v0[i];
    const lane *S = work->S + 6 * v0;
    lane v[6];
    if (model->parent[i] < 0)
        LANE_FN(subspace_times)(v, type, S, qd + v0);
    else {
        LANE_FN(body_motion)(v, model, work, i, type, vp);
        for (int k = 0; k < joint_dofs(type); k++)
            LANE_FN(column_add)(v, type, S, k, qd[v0 + k]);
    }
    for (int r = 0; r < 6; r++)
        out[r] = v[r];
}

/* c = v_i x S_i qd_i + c_J: the acceleration that the joint's motion adds, v = v_i. */
MBD_INLINE void LANE_FN(velocity_product)(lane c[6], const lane *v, const mbd_model *model,
                                          const lane_work *work, const lane *qd, int i,
                                          mbd_joint_type type)
{
    const int v0 = model->v0[i];
    const lane *S = work->S + 6 * v0;
    LANE_FN(cross_subspace)(c, v, type, S, qd + v0);
    if (type == MBD_CARDAN) {
        lane cJ[6];
        LANE_FN(joint_bias)(cJ, &model->joint[i], S, qd + v0);
        for (int r = 0; r < 3; r++)
            c[r] += cJ[r];
    }
}
