/* poisson_ldlt_kernels.h: the block LDL^T (Cholesky) variant of the Poisson-impulse solve
 * (Ivanov 2017, section 4). Same unknowns as poisson_sweep.c; the joint block is factored
 * instead of inverted and the inertia update is a symmetric rank-n_i downdate:
 *   leaves -> root:  U_i = I^A_i S_i,  L_i L_i^T = S_i^T U_i,  V_i = L_i^-1 U_i^T X_i,
 *                    I^A_l += X_i^T I^A_i X_i - V_i^T V_i,
 *                    x_i = L_i^-1 (p_i - S_i^T phi_i),  phi_l += X_i^T phi_i + V_i^T x_i
 *   root -> leaves:  L_i^T qd_i = x_i - V_i v_l,  v_i = X_i v_l + S_i qd_i,
 *                    mu_i = I^A_i v_i + phi_i
 *   and pd = Q + dT/dq from mu, the subtree masses summed in the first pass and pd_i
 *   taken in the second (momentum_kernels.h). V_i (n_i x 6) is kept in work->U.
 * Written once over the lane type of lane.h (no include guard; poisson_ldlt.c instantiates
 * one state, batch_x4.c and batch_x8.c W lanes). */

/* The right-hand side's part of the backward pass, once L_i and V_i are known:
 * x_i = L_i^-1 (p_i - S_i^T phi_i) into work->u, phi_lambda += X_i^T phi_i + V_i^T x_i. */
MBD_INLINE void LANE_FN(ldlt_reduce_step)(const mbd_model *model, lane_work *work, lane (*phi)[6],
                                          const lane *p, int i, const mbd_joint_type type)
{
    const int parent = model->parent[i], v0 = model->v0[i], nv = joint_dofs(type);
    const lane *S = work->S + 6 * v0, *V = work->U + 6 * v0, *L = work->D + model->d0[i];
    lane *x = work->u + v0, t[6];
    for (int k = 0; k < nv; k++)
        x[k] = p[v0 + k] - LANE_FN(column_dot)(type, S, k, phi[i]);
    LANE_FN(small_forward_subst)(L, nv, x);
    if (parent < 0)
        return;
    LANE_FN(body_force_t)(t, model, work, i, type, phi[i]);
    for (int k = 0; k < nv; k++)
        for (int r = 0; r < 6; r++)
            t[r] += V[6 * k + r] * x[k];
    LANE_FN(carry_force)(model, phi, i, t);
}

/* The rates' part of the forward pass: qd_i = L_i^-T (x_i - V_i v_lambda) (vp: v_lambda;
 * at a root, where it is not read, some motion of the workspace, never NULL, as
 * body_velocity's) and w = X_i v_lambda + S_i qd_i, v_i. */
MBD_INLINE void LANE_FN(ldlt_rate_step)(const mbd_model *model, const lane_work *work,
                                        const lane *vp, lane *qd, lane w[6], int i,
                                        const mbd_joint_type type)
{
    const int root = model->parent[i] < 0, v0 = model->v0[i], nv = joint_dofs(type);
    const lane *V = work->U + 6 * v0, *L = work->D + model->d0[i];
    for (int k = 0; k < nv; k++)
        qd[v0 + k] = root ? work->u[v0 + k] : work->u[v0 + k] - LANE_FN(dot6)(V + 6 * k, vp);
    LANE_FN(small_backward_subst)(L, nv, qd + v0);
    if (root)
        for (int r = 0; r < 6; r++)
            w[r] = LANE_FN(lane_splat)(0.0);
    else
        LANE_FN(body_motion)(w, model, work, i, type, vp);
    for (int k = 0; k < nv; k++)
        LANE_FN(column_add)(w, type, work->S + 6 * v0, k, qd[v0 + k]);
}

/* q not NULL: X_i and S_i from it first (as the bodies sweep's velocity_step). */
MBD_INLINE int LANE_FN(eliminate_step)(const mbd_model *model, lane_work *work, const lane *q,
                                       const lane *p, int i, const mbd_joint_type type)
{
    lane(*phi)[6] = work->phi;
    const int parent = model->parent[i], v0 = model->v0[i], nv = joint_dofs(type);
    const lane *S = work->S + 6 * v0;
    lane *V = work->U + 6 * v0, *L = work->D + model->d0[i];
    lane U[MBD_MAX_JOINT_DOF][6];
    if (q)
        LANE_FN(body_kinematics)(model, work, q, i, type);
    LANE_FN(start_inertia_sum)(model, work, i, 0);
    LANE_FN(start_force_sum)(model, phi, i);
    LANE_FN(subtree_mass_step)(model, work, i, type);
    LANE_FN(joint_space_inertia)(U, L, &work->IA[i], type, S);
    LANE_FN(add_armature)(L, model, i, nv);
    if (LANE_FN(small_cholesky)(L, nv))
        return LANE_FN(singular_joint)(work, i);
    if (parent < 0) {
        LANE_FN(ldlt_reduce_step)(model, work, phi, p, i, type);
        return MBD_OK;
    }
    for (int k = 0; k < nv; k++) /* rows of V: (X^T U_k)^T, then L^-1 */
        LANE_FN(body_force_t)(V + 6 * k, model, work, i, type, U[k]);
    LANE_FN(small_forward_subst_rows)(L, nv, V);
    LANE_FN(carry_inertia)(model, work, i, &work->IA[i], 0, 0, 0);
    for (int k = 0; k < nv; k++) /* symmetric rank-n_i downdate */
        LANE_FN(inertia_sub_outer)(&work->IA[parent], V + 6 * k, V + 6 * k);
    LANE_FN(ldlt_reduce_step)(model, work, phi, p, i, type);
    return MBD_OK;
}

/* qd_i, v_i = w + S_i qd_i with w = X_i v_lambda (v and g_i in the sweeps' slots:
 * motion_of), mu_i = I^A_i v_i + phi_i into work->f, and pd_i. */
MBD_INLINE void LANE_FN(rate_step)(const mbd_model *model, lane_work *work, const lane *tau,
                                   lane *qd, lane *pd, int i, const mbd_joint_type type)
{
    const int parent = model->parent[i];
    lane *v = LANE_FN(motion_of)(model, work->v, i), *mu = work->f[i], w[6];
    const lane *vp = parent < 0 ? v : LANE_FN(motion_of)(model, work->v, parent);
    LANE_FN(ldlt_rate_step)(model, work, vp, qd, w, i, type); /* w summed in a local */
    for (int r = 0; r < 6; r++)
        v[r] = w[r];
    LANE_FN(inertia_apply)(mu, &work->IA[i], w);
    for (int r = 0; r < 6; r++)
        mu[r] += work->phi[i][r];
    LANE_FN(momentum_rate_step)(model, work, mu, v,
                                parent < 0 ? NULL : LANE_FN(motion_of)(model, work->a, parent),
                                LANE_FN(motion_of)(model, work->a, i), qd, tau, pd, i, type);
}

/* qd and pd from p and tau (NULL: zero); the position kinematics from q in the first pass
 * (after start_kinematics for one state), or with q NULL done before. */
static int LANE_FN(ldlt_solve)(const mbd_model *model, lane_work *work, const lane *q,
                               const lane *p, const lane *tau, lane *qd, lane *pd)
{
    int status = MBD_OK;
    for (int i = model->nb - 1; i >= 0 && status == MBD_OK; i--)
        DISPATCH_JOINT(model->joint_type[i], status = LANE_FN(eliminate_step), model, work, q, p,
                       i);
    if (status)
        return status;
    for (int i = 0; i < model->nb; i++) { /* scatter_ready here: 1-4% slower in W lanes */
        LANE_FN(prefetch_next)(work, i);
        DISPATCH_JOINT(model->joint_type[i], LANE_FN(rate_step), model, work, tau, qd, pd, i);
    }
    return MBD_OK;
}
