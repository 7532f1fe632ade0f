/* momentum_kernels.h: pd = Q + dT/dq in the momentum form, from the subtree momenta, in
 * steps that each momentum solver calls in its own passes; written once over the lane type
 * of lane.h (no include guard: the solver files instantiate one state, batch_x4.c and
 * batch_x8.c W lanes). */

/* The gravity on the subtree of i, as a wrench about i's origin in i's coordinates, is
 * f^B_i = (h^C_i x g_i; m^C_i g_i): g_i = E_i g_lambda the gravity vector in body axes,
 * m^C_i the subtree's mass and h^C_i its first moment about i's origin (the sum of m_j
 * times the centre of mass of body j). The subtree sums run leaves -> root,
 * h^C_lambda += E_i^T h^C_i + m^C_i r_i (carried like the inertias: the highest-index
 * child starts its parent's sum from the parent's own h and m), and g_i root -> leaves,
 * so pd needs no pass of its own: a solver calls subtree_mass_step in a backward pass and
 * momentum_rate_step in its last forward one: 12 multiplications a body for the sums
 * instead of the 24 of carrying each f^B back by X^T, and 18 for g_i and f^B, as the
 * forward pass of the body wrenches took. (h^C, m^C) are kept in work->mass_moments, g_i where
 * the caller keeps accelerations (work->a, or the Poisson solvers' slots: motion_of). */
MBD_INLINE void LANE_FN(subtree_mass_step)(const mbd_model *model, lane_work *work, int i,
                                           mbd_joint_type type)
{
    lane(*hm)[6] = work->mass_moments;
    const int p = model->parent[i];
    if (model->last_child[i] < 0) {
        LANE_FN(rigid_first_moment)(hm[i], &model->inertia[i]);
        hm[i][3] = LANE_FN(lane_splat)(model->inertia[i].m);
    }
    if (p < 0)
        return;
    lane t[3];
    LANE_FN(body_rotate)(t, model, work, i, type, 1, hm[i]);
    for (int r = 0; r < 3; r++)
        t[r] += hm[i][3] * work->X[i].r[r];
    if (model->last_child[p] == i) {
        lane h[3];
        LANE_FN(rigid_first_moment)(h, &model->inertia[p]);
        for (int r = 0; r < 3; r++)
            hm[p][r] = h[r] + t[r];
        hm[p][3] = model->inertia[p].m + hm[i][3];
    } else {
        for (int r = 0; r < 3; r++)
            hm[p][r] += t[r];
        hm[p][3] += hm[i][3];
    }
}

/* pd_i = tau_i + S_i^T f^B_i + (dv_i/dq_i)^T mu_i, where f^B_i is the gravity on the
 * subtree of i and dv_i/dq_k = -(S_k x) X_i v_lambda + (dS/dq_k) qd, so that
 * (dv_i/dq_k)^T mu = -S_k^T (w x* mu) + ((dS/dq_k) qd)^T mu with w = v_i - S_i qd_i.
 * Spherical and free joints: their velocities are not derivatives of coordinates, and
 * pd_i = d/dt (S_i^T mu_i) = tau_i + S_i^T f^B_i - S_i^T (v_i x* mu_i) (the subtree's
 * momentum in the moving body frame; S constant there), so w = v_i. For the other joints
 * the two forms agree (S^T (S qd x* mu) = 0, or the Cardan dS/dq terms make up for it).
 * mu = mu_i, v = v_i; g = g_i from g_parent (NULL at a root: the gravity's). */
MBD_INLINE void LANE_FN(momentum_rate_step)(const mbd_model *model, lane_work *work, const lane *mu,
                                            const lane *v, const lane *g_parent, lane *g,
                                            const lane *qd, const lane *tau, lane *pd, int i,
                                            const mbd_joint_type type)
{
    const int v0 = model->v0[i], nv = joint_dofs(type);
    const lane *S = work->S + 6 * v0, *hm = work->mass_moments[i];
    lane g0[3], fB[6], w[6], wxmu[6], dT[MBD_MAX_JOINT_DOF];
    for (int r = 0; r < 3; r++)
        g0[r] = LANE_FN(lane_splat)(model->gravity[r]);
    LANE_FN(body_rotate)(g, model, work, i, type, 0, g_parent ? g_parent : g0);
    LANE_FN(vec3_cross)(fB, hm, g);
    for (int r = 0; r < 3; r++)
        fB[3 + r] = hm[3] * g[r];
    for (int k = 0; k < nv; k++)
        dT[k] = LANE_FN(lane_splat)(0.0);
    memcpy(w, v, sizeof w);
    if (!joint_has_quaternion(type))
        for (int k = 0; k < nv; k++)
            LANE_FN(column_add)(w, type, S, k, -qd[v0 + k]);
    LANE_FN(cross_force)(wxmu, w, mu);
    if (type == MBD_CARDAN)
        LANE_FN(joint_dS_dq_dot)(dT, &model->joint[i], S, qd + v0, mu);
    for (int k = 0; k < nv; k++)
        pd[v0 + k] = (tau ? tau[v0 + k] : LANE_FN(lane_splat)(0.0)) +
                     LANE_FN(column_dot)(type, S, k, fB) - LANE_FN(column_dot)(type, S, k, wxmu) +
                     dT[k];
}
