/* bodies_kernels.h: the separate-bodies sweep (Vereshchagin 1974; the articulated-body
 * recursion), written once over the lane type of lane.h (no include guard: bodies.c
 * instantiates one state, batch_x4.c and batch_x8.c W states in lockstep).
 *
 *   root -> leaves:  v_i = X_i v_l + S_i qd_i,  c_i = v_i x S_i qd_i + c_J,
 *                    I^A_i = I_i,  p^A_i = v_i x* I_i v_i
 *   leaves -> root:  U_i = I^A_i S_i,  D_i = S_i^T U_i,  u_i = tau_i - S_i^T p^A_i,
 *                    I^a_i = I^A_i - U_i D_i^-1 U_i^T,  p^a_i = p^A_i + I^a_i c_i + U_i D_i^-1 u_i,
 *                    I^A_l += X_i^T I^a_i X_i,  p^A_l += X_i^T p^a_i
 *   root -> leaves:  a'_i = X_i a_l + c_i (a_0 = -a_g),  qdd_i = D_i^-1 (u_i - U_i^T a'_i),
 *                    a_i = a'_i + S_i qdd_i
 *                    (computed as qdd_i = u'_i - W_i^T a_l with W_i = X_i^T U_i D_i^-1 and
 *                    u'_i = D_i^-1 (u_i - U_i^T c_i), both from the backward pass; in W
 *                    lanes as u'_i - (U_i D_i^-1)^T X_i a_l, KEEP_UDINV)
 * Only matrices of size <= 6 appear; O(N). Each pass is a loop over bodies calling one
 * inline step, specialized for each joint type by DISPATCH_JOINT. What makes it fast (see
 * algorithms/PERFORMANCE.md): inertias as symmetric 3x3 blocks (mbd_inertia), joint frames
 * turned so that S has unit columns (U is a column of I^A, D an entry), and the explicit
 * D^-1 of a 1x1 or 2x2 block. A singular block in any lane stops the sweep
 * (joint_block_inverse); the batch then solves that group's states one at a time. */

/* `keep` (the sweep's callers, constant in each): each body's I^a_i and D_i^-1 (a free
 * root's D_i as its factor, root_block_factored) stay in work->IA and work->D after the
 * sweep, in one state for bodies_inverse and the reactions, in the dual derivatives
 * (automatic.cc) for the sweeps after, which take them where q alone decides them and no
 * direction moves them (inertia_known). Else (W lanes,
 * and the GPU where asked) the inertia sums live in shared slots (inertia_sum) and D^-1
 * in registers: the sweep alone reads them, and a chain's two slots stay in L1 instead of
 * 21 W doubles per body going out to L2 and memory. v and a always live in slots
 * (motion_of). One state keeps a sum per body: its pass was 2-5% slower with the sums in
 * slots (each step's loads wait on the stores just made to the same two addresses;
 * algorithms/PERFORMANCE.md, "Linear to 10 000 bodies"). */

/* In W lanes work->U keeps U D^-1 itself, and the last pass takes qdd = u' - (U D^-1)^T
 * X a_lambda from the X a_lambda that it forms anyway: no X^T (U D^-1) in the backward
 * pass (per column 18 operations across an axial screw, 30 across a general transform).
 * One state keeps W = X^T U D^-1 (algorithms/PERFORMANCE.md, step 7): its last pass
 * waits on the chain of accelerations, and W^T a_lambda does not wait on X a_lambda. */
#define KEEP_UDINV (MBD_LANES > 1)

/* On the GPU the first pass keeps v_i alone (in work->c[i], all 6 rows), and the passes
 * after form c_i and p^A_i again from v_i and qd (velocity_product, rigid_bias_force;
 * work->gpu_qd): 6 doubles out and 14 in per body and state instead of c_i and p^A_i's 10
 * out and 20 in, the bias forces' sums in the sweep's slots (BIAS_SLOT: model->sum_slot,
 * as the inertias'; each parent's started at its first child's step) instead of per body
 * (docs/gpu.md, the bytes budget). The CPU keeps c and p^A: to its caches they are not
 * bytes to memory, and forming them again costs it time. */
#if defined(MBD_GPU_C) && MBD_LANES == 1
#define BIAS_FROM_VELOCITY 1
#define BIAS_SLOT(model, i) ((model)->sum_slot[i])
#else
#define BIAS_FROM_VELOCITY 0
#define BIAS_SLOT(model, i) (i)
#endif

/* q not NULL (mbd_forward, and the batch's lanes): X_i and S_i from it first
 * (body_kinematics; in W lanes for the solvers' kernels alone), while the body's values
 * are at hand rather than in a pass of their own. */
MBD_INLINE void LANE_FN(velocity_step)(const mbd_model *model, lane_work *work, const lane *q,
                                       const lane *qd, int i, const mbd_joint_type type)
{
    const int p = model->parent[i];
    lane c[6], *v = LANE_FN(motion_of)(model, work->v, i);
    if (q)
        LANE_FN(body_kinematics)(model, work, q, i, type);
    LANE_FN(body_velocity)(v, model, work, p < 0 ? v : LANE_FN(motion_of)(model, work->v, p), qd, i,
                           type); /* at a root its own slot, unread */
#if BIAS_FROM_VELOCITY
    (void)c;
    for (int r = 0; r < 6; r++)
        work->c[i][r] = v[r];
#else
    LANE_FN(velocity_product)(c, v, model, work, qd, i, type); /* in a local: summed in registers */
    for (int r = 0; r < 6; r++)
        if (!(bias_zero_rows(type) >> r & 1)) /* nor read by the passes after */
            work->c[i][r] = c[r];
    LANE_FN(rigid_bias_force)(work->f[i], &model->inertia[i], v); /* p^A */
#endif
}

/* c_i (rows outside bias_zero_rows) where a pass after the first reads it: from v_i and qd
 * on the GPU (BIAS_FROM_VELOCITY), else kept by the first pass. */
MBD_INLINE const lane *LANE_FN(bias_acceleration)(lane c[6], const mbd_model *model,
                                                  const lane_work *work, int i,
                                                  const mbd_joint_type type)
{
#if BIAS_FROM_VELOCITY
    LANE_FN(velocity_product)(c, work->c[i], model, work, work->gpu_qd, i, type);
    return c;
#else
    (void)c, (void)model, (void)type;
    return work->c[i];
#endif
}

/* On the GPU (BIAS_FROM_VELOCITY), at body i's backward step: its parent's sum of bias
 * forces starts at its first child (this body where it is the last child), and its own
 * p^A_i = v_i x* I_i v_i joins its children's (a leaf's starts with it). */
MBD_INLINE void LANE_FN(start_bias_sum)(const mbd_model *model, lane_work *work, int i)
{
#if BIAS_FROM_VELOCITY
    const int p = model->parent[i];
    lane pA[6], *sum = work->f[BIAS_SLOT(model, i)];
    if (p >= 0 && model->last_child[p] == i)
        for (int r = 0; r < 6; r++)
            work->f[BIAS_SLOT(model, p)][r] = 0.0;
    LANE_FN(rigid_bias_force)(pA, &model->inertia[i], work->c[i]);
    for (int r = 0; r < 6; r++)
        sum[r] = model->last_child[i] < 0 ? pA[r] : sum[r] + pA[r];
#else
    (void)model, (void)work, (void)i;
#endif
}

/* Whether body i's D_i^-1 is kept as D_i's Cholesky factor instead (joint_block_factor):
 * a free joint at a root, whose articulated inertia no parent takes, needs D^-1 u alone,
 * one solve, where forming D^-1 took a third of a free body's call (a free body on its
 * own takes the model's D^-1: no factor, and a product instead of two substitutions). */
MBD_INLINE int LANE_FN(root_block_factored)(const mbd_model *model, int i, mbd_joint_type type)
{
    return type == MBD_FREE && model->parent[i] < 0 && !joint_has_armature(model, i) &&
           !model_free_body_inverse(model, i);
}

/* u_i = tau_i - S_i^T p_i; work->u keeps D_i^-1 u_i, and p_lambda += X_i^T p_i + W_i u_i
 * (= X_i^T (p_i + U_i D_i^-1 u_i)): the bias forces' part of the backward pass, once W_i
 * and D_i^-1 are known (p: p^A with I^a c added). sums_start: p holds no bias forces of
 * the bodies' own, and each p_i starts at zero here (start_force_sum, carry_force). */
MBD_INLINE void LANE_FN(bias_force_step)(const mbd_model *model, lane_work *work, lane (*p)[6],
                                         const lane *Dinv, const lane *tau, int sums_start, int i,
                                         const mbd_joint_type type)
{
    const int parent = model->parent[i], v0 = model->v0[i], n = joint_dofs(type);
    const lane *S = work->S + 6 * v0, *W = work->U + 6 * v0, *pi = p[BIAS_SLOT(model, i)];
    lane u[MBD_MAX_JOINT_DOF], t[6];
    if (sums_start)
        LANE_FN(start_force_sum)(model, p, i);
    for (int k = 0; k < n; k++)
        u[k] = (tau ? tau[v0 + k] : LANE_FN(lane_splat)(0.0)) - LANE_FN(column_dot)(type, S, k, pi);
    if (LANE_FN(root_block_factored)(model, i, type)) {
        LANE_FN(block_factor_solve)(work->u + v0, Dinv, u, n);
        return;
    }
    for (int k = 0; k < n; k++) { /* summed in a local: work->u might alias Dinv */
        lane sum = Dinv[n * k] * u[0];
        for (int m = 1; m < n; m++)
            sum += Dinv[n * k + m] * u[m];
        work->u[v0 + k] = sum;
    }
    if (parent < 0)
        return;
    if (KEEP_UDINV) { /* X^T (p_i + U_i D_i^-1 u_i) */
        lane pu[6];
        for (int r = 0; r < 6; r++) {
            pu[r] = pi[r];
            for (int k = 0; k < n; k++)
                pu[r] += W[6 * k + r] * u[k];
        }
        LANE_FN(body_force_t)(t, model, work, i, type, pu);
    } else {
        LANE_FN(body_force_t)(t, model, work, i, type, pi);
        for (int k = 0; k < n; k++)
            for (int r = 0; r < 6; r++)
                t[r] += W[6 * k + r] * u[k];
    }
    if (sums_start)
        LANE_FN(carry_force)(model, p, i, t);
    else
        for (int r = 0; r < 6; r++)
            p[BIAS_SLOT(model, parent)][r] += t[r];
}

/* W = X^T, column by column: (row k of E; 0) and (r x row k of E; row k of E). A free
 * joint's W = X^T U D^-1, since S = 1 makes U = D and U D^-1 = 1 exactly. */
MBD_INLINE void LANE_FN(transpose_columns)(lane (*W)[6], const lane_xform *X)
{
    for (int k = 0; k < 3; k++) {
        const lane *row = X->E + 3 * k;
        for (int r = 0; r < 3; r++) {
            W[k][r] = W[3 + k][3 + r] = row[r];
            W[k][3 + r] = LANE_FN(lane_splat)(0.0);
        }
        LANE_FN(vec3_cross)(W[3 + k], X->r, row);
    }
}

/* U, D^-1; I^a = I^A - U D^-1 U^T carried to the parent, and p^A + I^a c with the bias
 * forces (S^T I^a c = 0, so u is unchanged by the I^a c term). U D^-1 is then kept in the
 * parent's coordinates, W = X^T U D^-1 (in work->U; in W lanes U D^-1 itself), and D^-1 u as
 * u' = D^-1 u - (U D^-1)^T c (in work->u), so that the last pass's
 * qdd = u' - W^T a_lambda waits only on the parent's acceleration. A free joint's
 * U D^-1 = 1 is not multiplied out (transpose_columns). */
MBD_INLINE int LANE_FN(articulated_step_as)(const mbd_model *model, lane_work *work,
                                            const lane *tau, int keep, int i,
                                            const mbd_joint_type type, const int rotor)
{
    const int p = model->parent[i], v0 = model->v0[i], n = joint_dofs(type);
    const lane *S = work->S + 6 * v0;
    lane(*W)[6] = (lane(*)[6])(work->U + 6 * v0);
    lane Dinv_here[MBD_MAX_JOINT_DOF * MBD_MAX_JOINT_DOF];
    lane *restrict Dinv = keep ? work->D + model->d0[i] : Dinv_here;
    /* U in a local, not in work->U: a store to I^a could alias it there, and every
     * product of inertia_sub_outer would reload its operand */
    lane U[MBD_MAX_JOINT_DOF][6], D[MBD_MAX_JOINT_DOF * MBD_MAX_JOINT_DOF];
    lane UDinv[MBD_MAX_JOINT_DOF][6], Iac[6];
    const int slots = !keep;
    const int free_joint = type == MBD_FREE && !rotor; /* U D^-1 = 1 */
    /* known: I^a_i, D_i^-1 and U_i D_i^-1 (in W) are an earlier sweep's, and still hold */
    const int known = LANE_FN(inertia_known)(work, i);
    const lane(*UD)[6] = known ? (const lane(*)[6])W : (const lane(*)[6])UDinv;
    lane c_here[6];
    const lane *c = LANE_FN(bias_acceleration)(c_here, model, work, i, type);
    LANE_FN(start_bias_sum)(model, work, i);
    lane_inertia *Ia = LANE_FN(inertia_sum)(model, work, i, slots);
    if (!known) {
        /* a free body on its own: D_i is its rigid inertia, D_i^-1 the model's */
        const double *fixed = type == MBD_FREE ? model_free_body_inverse(model, i) : NULL;
        LANE_FN(start_inertia_sum)(model, work, i, slots);
        if (fixed) { /* U unread: a free joint's U D^-1 = 1, and no parent */
            for (int k = 0; k < n * n; k++)
                Dinv[k] = LANE_FN(lane_splat)(fixed[k]);
        } else {
            LANE_FN(joint_space_inertia)(U, D, Ia, type, S);
            if (rotor)
                LANE_FN(add_armature)(D, model, i, n);
            if (LANE_FN(root_block_factored)(model, i, type)
                    ? LANE_FN(joint_block_factor)(Dinv, D, n)
                    : LANE_FN(joint_block_inverse)(Dinv, D, n))
                return LANE_FN(singular_joint)(work, i);
        }
        if (free_joint)
            for (int k = 0; k < n; k++)
                LANE_FN(set_unit_column)(UDinv[k], k);
        else
            LANE_FN(times_inverse)(UDinv, (const lane(*)[6])U, Dinv, n);
    }
    if (p >= 0) {
        /* I^A_i becomes I^a_i in place (no copy); a free joint's is zero whole, which
         * inertia_zero_subspace writes */
        for (int k = 0; k < n && !free_joint && !known; k++)
            LANE_FN(inertia_sub_outer)(Ia, UDinv[k], U[k]);
        if (!known && !rotor)
            LANE_FN(inertia_zero_subspace)(Ia, type);
        if (!LANE_FN(inertia_known)(work, p)) { /* else the parent's I^a holds it already */
            if (rotor)
                LANE_FN(carry_inertia)(model, work, i, Ia, 0, 0, slots);
            else
                LANE_FN(carry_inertia)(model, work, i, Ia, zero_rows(type, 0), zero_rows(type, 1),
                                       slots);
        }
        if (rotor)
            LANE_FN(inertia_apply_skipping)(Iac, Ia, c, 0, 0, bias_zero_rows(type));
        else
            LANE_FN(inertia_apply_skipping)(Iac, Ia, c, zero_rows(type, 0), zero_rows(type, 1),
                                            bias_zero_rows(type));
        if (rotor) { /* S^T I^a c != 0: I^a c joins the parent's bias force, not u_i */
            lane t[6];
            LANE_FN(body_force_t)(t, model, work, i, type, Iac);
            for (int r = 0; r < 6; r++)
                work->f[BIAS_SLOT(model, p)][r] += t[r];
        } else { /* S^T I^a c = 0: u is the same with it */
            for (int r = 0; r < 6; r++)
                work->f[BIAS_SLOT(model, i)][r] += Iac[r];
        }
    }
    if (KEEP_UDINV)
        for (int k = 0; k < n && !known; k++)
            for (int r = 0; r < 6; r++)
                W[k][r] = UDinv[k][r];
    else if (free_joint)
        LANE_FN(transpose_columns)(W, &work->X[i]);
    else
        for (int k = 0; k < n; k++)
            LANE_FN(body_force_t)(W[k], model, work, i, type, UDinv[k]);
    LANE_FN(bias_force_step)(model, work, work->f, Dinv, tau, 0, i, type);
    const unsigned c_rows = 63u & ~bias_zero_rows(type);
    for (int k = 0; k < n; k++)
        work->u[v0 + k] -= free_joint ? c[k] : LANE_FN(dot_over)(UD[k], c, 1, c_rows);
    return MBD_OK;
}

/* The step specialized twice, rotor a constant in each (joint_has_armature): a model
 * without armature runs the code it ran before there was any, one test per body aside. */
MBD_INLINE int LANE_FN(articulated_step)(const mbd_model *model, lane_work *work, const lane *tau,
                                         int keep, int i, const mbd_joint_type type)
{
    if (joint_has_armature(model, i))
        return LANE_FN(articulated_step_as)(model, work, tau, keep, i, type, 1);
    return LANE_FN(articulated_step_as)(model, work, tau, keep, i, type, 0);
}

/* qdd_i = u'_i - W_i^T a_lambda (in W lanes (U_i D_i^-1)^T X_i a_lambda),
 * a_i = X_i a_lambda + c_i + S_i qdd_i (c NULL: zero;
 * a_lambda = a0 at a root); a_i summed in a local and stored once, as in body_velocity.
 * A free joint's W^T a_lambda is X_i a_lambda (transpose_columns). */
MBD_INLINE void LANE_FN(acceleration_step)(const mbd_model *model, lane_work *work, const lane *a0,
                                           const lane (*c)[6], lane *qdd, int i,
                                           const mbd_joint_type type)
{
    const int p = model->parent[i], v0 = model->v0[i], n = joint_dofs(type);
    const lane *W = work->U + 6 * v0;
    const lane *ap = p < 0 ? a0 : LANE_FN(motion_of)(model, work->a, p);
    lane a[6], qdd_i[MBD_MAX_JOINT_DOF], c_here[6];
    LANE_FN(body_motion)(a, model, work, i, type, ap);
    for (int k = 0; k < n; k++)
        qdd[v0 + k] = qdd_i[k] =
            work->u[v0 + k] - (type == MBD_FREE && !joint_has_armature(model, i)
                                   ? a[k]
                                   : LANE_FN(dot6)(W + 6 * k, KEEP_UDINV ? a : ap));
    if (c) {
        const lane *ci =
            BIAS_FROM_VELOCITY ? LANE_FN(bias_acceleration)(c_here, model, work, i, type) : c[i];
        for (int r = 0; r < 6; r++)
            if (!(bias_zero_rows(type) >> r & 1))
                a[r] += ci[r];
    }
    for (int k = 0; k < n; k++)
        LANE_FN(column_add)(a, type, work->S + 6 * v0, k, qdd_i[k]);
    lane *out = LANE_FN(motion_of)(model, work->a, i);
    for (int r = 0; r < 6; r++)
        out[r] = a[r];
}

/* The first pass: velocities, c and p^A from qd, and X and S from q (not NULL, after
 * start_kinematics for one state; NULL: done before, mbd_kinematics). */
MBD_INLINE void LANE_FN(bodies_velocity_pass)(const mbd_model *model, lane_work *work,
                                              const lane *q, const lane *qd)
{
    for (int i = 0; i < model->nb; i++)
        DISPATCH_JOINT(model->joint_type[i], LANE_FN(velocity_step), model, work, q, qd, i);
}

/* The backward pass: MBD_OK, or the status of a singular joint block; keep as above. */
MBD_INLINE int LANE_FN(bodies_articulated_pass)(const mbd_model *model, lane_work *work,
                                                const lane *tau, int keep)
{
    int status = MBD_OK;
    for (int i = model->nb - 1; i >= 0 && status == MBD_OK; i--)
        DISPATCH_JOINT(model->joint_type[i], status = LANE_FN(articulated_step), model, work, tau,
                       keep, i);
    return status;
}

/* The last pass; next_qd not NULL (W lanes): the first pass of the next lane group too,
 * from its q and qd, body by body, each of its steps after the last pass's step of the
 * same body, which has read what it overwrites. The last pass waits on the chain of
 * accelerations from body to body, and the next group's work, which does not wait on
 * it, fills the wait (bodies_lanes, batch_lanes.h). */
MBD_INLINE void LANE_FN(bodies_acceleration_pass)(const mbd_model *model, lane_work *work,
                                                  lane *qdd, const lane *next_q,
                                                  const lane *next_qd)
{
    lane a0[6];
    for (int r = 0; r < 6; r++)
        a0[r] = LANE_FN(lane_splat)(r < 3 ? 0.0 : -model->gravity[r - 3]);
    const lane(*c)[6] = (const lane(*)[6])work->c;
    for (int i = 0; i < model->nb; i++) {
        LANE_FN(prefetch_next)(work, i);
        DISPATCH_JOINT(model->joint_type[i], LANE_FN(acceleration_step), model, work, a0, c, qdd,
                       i);
        LANE_FN(scatter_ready)(model, work, i);
        if (next_qd)
            DISPATCH_JOINT(model->joint_type[i], LANE_FN(velocity_step), model, work, next_q,
                           next_qd, i);
    }
}

/* qdd from qd and tau (NULL: zero), q as bodies_velocity_pass's, keep as above. Inline,
 * so that a constant q = NULL or keep folds. */
MBD_INLINE int LANE_FN(bodies_sweep)(const mbd_model *model, lane_work *work, const lane *q,
                                     const lane *qd, const lane *tau, lane *qdd, int keep)
{
    LANE_FN(bodies_velocity_pass)(model, work, q, qd);
    const int status = LANE_FN(bodies_articulated_pass)(model, work, tau, keep);
    if (status == MBD_OK)
        LANE_FN(bodies_acceleration_pass)(model, work, qdd, NULL, NULL);
    return status;
}
