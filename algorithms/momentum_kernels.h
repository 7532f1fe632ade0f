/* momentum_kernels.h: pd = Q + dT/dq in the momentum form, from the subtree momenta,
 * written once over the lane type of lane.h (no include guard; kinematics.c instantiates
 * one state for every momentum solver, batch_x4.c and batch_x8.c W lanes). */

/* a_g,i = X_i a_g,lambda with a_g,0 = (0; g), then the wrench I_i a_g,i. Its angular part
 * stays zero, so only the linear part g_i = E_i g_lambda is carried (in work->a), and
 * I_i (0; g_i) = (h x g_i; m g_i) (rigid_inertia_apply's blocks): 21 multiplications a body
 * instead of 48. */
LANE_API void LANE_FN(gravity_wrenches)(const mbd_model *model, lane_work *work, lane (*out)[6])
{
    lane g0[3];
    for (int r = 0; r < 3; r++)
        g0[r] = LANE_FN(lane_splat)(model->gravity[r]);
    lane (*g)[6] = work->a;
    for (int i = 0; i < model->nb; i++) {
        const int p = model->parent[i];
        const mbd_inertia *I = &model->inertia[i];
        lane h[3];
        LANE_FN(rigid_first_moment)(h, I);
        LANE_FN(mat3_apply)(g[i], work->X[i].E, p < 0 ? g0 : g[p]);
        LANE_FN(vec3_cross)(out[i], h, g[i]);
        for (int r = 0; r < 3; r++)
            out[i][3 + r] = I->C[0] * g[i][r];
    }
}

/* pd_i = tau_i + S_i^T f^B_i + (dv_i/dq_i)^T mu_i, where f^B_i is the gravity on the
 * subtree of i and dv_i/dq_k = -(S_k x) X_i v_lambda + (dS/dq_k) qd, so that
 * (dv_i/dq_k)^T mu = -S_k^T (w x* mu) + ((dS/dq_k) qd)^T mu with w = v_i - S_i qd_i.
 * Spherical and free joints: their velocities are not derivatives of coordinates, and
 * pd_i = d/dt (S_i^T mu_i) = tau_i + S_i^T f^B_i - S_i^T (v_i x* mu_i) (the subtree's
 * momentum in the moving body frame; S constant there), so w = v_i. For the other joints
 * the two forms agree (S^T (S qd x* mu) = 0, or the Cardan dS/dq terms make up for it). */
MBD_INLINE void LANE_FN(momentum_rate_step)(const mbd_model *model, lane_work *work, const lane (*mu)[6],
                                   const lane *qd, const lane *tau, lane *pd, int i,
                                   const mbd_joint_type type)
{
    lane (*fB)[6] = work->g;
    const int p = model->parent[i], v0 = model->v0[i], nv = joint_dofs(type);
    const lane *S = work->S + 6 * v0;
    lane w[6], wxmu[6], dT[MBD_MAX_JOINT_DOF];
    for (int k = 0; k < nv; k++)
        dT[k] = LANE_FN(lane_splat)(0.0);
    memcpy(w, work->v[i], sizeof w);
    if (!joint_has_quaternion(type))
        for (int k = 0; k < nv; k++)
            LANE_FN(column_add)(w, type, S, k, -qd[v0 + k]);
    LANE_FN(cross_force)(wxmu, w, mu[i]);
    if (type == MBD_CARDAN)
        LANE_FN(joint_dS_dq_dot)(dT, &model->joint[i], S, qd + v0, mu[i]);
    for (int k = 0; k < nv; k++)
        pd[v0 + k] = (tau ? tau[v0 + k] : LANE_FN(lane_splat)(0.0)) + LANE_FN(column_dot)(type, S, k, fB[i]) -
                     LANE_FN(column_dot)(type, S, k, wxmu) + dT[k];
    if (p >= 0) {
        lane t[6];
        LANE_FN(xform_force_t)(t, &work->X[i], fB[i]);
        for (int r = 0; r < 6; r++)
            fB[p][r] += t[r];
    }
}

LANE_API void LANE_FN(momentum_rates)(const mbd_model *model, lane_work *work, const lane (*mu)[6],
                    const lane *qd, const lane *tau, lane *pd)
{
    LANE_FN(gravity_wrenches)(model, work, work->g);
    for (int i = model->nb - 1; i >= 0; i--)
        DISPATCH_JOINT(model->joint_type[i], LANE_FN(momentum_rate_step), model, work, mu, qd, tau, pd, i);
}

