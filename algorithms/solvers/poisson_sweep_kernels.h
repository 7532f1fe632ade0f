/* poisson_sweep_kernels.h: the Poisson-impulse sweep (generalized-momentum form; Ivanov 2017,
 * section 3), written as the paper writes it: D_i^-1 formed explicitly and the 6x6
 * H_i = E - I^A_i S_i D_i^-1 S_i^T, a Gaussian elimination that ignores symmetry.
 *
 * State (q, p). Unknowns v_i, qd_i and the subtree momenta mu_i = I^A_i v_i + phi_i:
 *   leaves -> root:  D_i = S_i^T I^A_i S_i,  H_i = E - I^A_i S_i D_i^-1 S_i^T,
 *                    I^A_l += X_i^T (H_i I^A_i) X_i,
 *                    phi_l += X_i^T (H_i phi_i + I^A_i S_i D_i^-1 p_i)
 *   root -> leaves:  qd_i = D_i^-1 (p_i - S_i^T (I^A_i X_i v_l + phi_i)),
 *                    v_i = X_i v_l + S_i qd_i,  mu_i = I^A_i v_i + phi_i
 *   and pd = Q + dT/dq from mu, the subtree masses summed in the first pass and pd_i
 *   taken in the second (momentum_kernels.h).
 * Written once over the lane type of lane.h (no include guard; poisson_sweep.c
 * instantiates one state, batch_x4.c and batch_x8.c W lanes). */

/* The 6x6 matrix of I (row-major). */
MBD_INLINE void LANE_FN(inertia_to_matrix)(lane *out, const lane_inertia *I)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            out[6 * i + j] = I->A[SYM3(i, j)];
            out[6 * i + j + 3] = I->B[3 * i + j];
            out[6 * (i + 3) + j] = I->B[3 * j + i];
            out[6 * (i + 3) + j + 3] = I->C[SYM3(i, j)];
        }
}

/* The 6x6 matrix of a rigid body's inertia, in every lane. */
MBD_INLINE void LANE_FN(rigid_to_matrix)(lane *out, const mbd_rigid *I)
{
    lane_inertia blocks;
    LANE_FN(rigid_blocks)(&blocks, I);
    LANE_FN(inertia_to_matrix)(out, &blocks);
}

/* out -= M rx for a 3x3 M (rx = r x): row i of M rx is (row i of M) x r. along_x: r is
 * (r_0, 0, 0) (an axial screw's offset), and a row's product is two terms. */
MBD_INLINE void LANE_FN(sub_times_cross)(lane *out, const lane *M, const lane *r, int along_x)
{
    for (int i = 0; i < 3; i++) {
        const lane *m = M + 3 * i;
        lane t[3];
        if (along_x) {
            out[3 * i + 1] -= m[2] * r[0];
            out[3 * i + 2] += m[1] * r[0];
            continue;
        }
        LANE_FN(vec3_cross)(t, m, r);
        for (int j = 0; j < 3; j++)
            out[3 * i + j] -= t[j];
    }
}

/* out += rx M for a 3x3 M: column j of rx M is r x (column j of M); along_x as above. */
MBD_INLINE void LANE_FN(add_cross_times)(lane *out, const lane *r, const lane *M, int along_x)
{
    for (int j = 0; j < 3; j++) {
        const lane m[3] = {M[j], M[3 + j], M[6 + j]};
        lane t[3];
        if (along_x) {
            out[3 + j] -= r[0] * m[2];
            out[6 + j] += r[0] * m[1];
            continue;
        }
        LANE_FN(vec3_cross)(t, r, m);
        for (int i = 0; i < 3; i++)
            out[3 * i + j] += t[i];
    }
}

/* out = E^T M E for the 3x3 block at M (rows at stride 6) whose rows in zero_rows are zero,
 * E the rotation of X: across an axial screw by turns of 2x2 blocks (mat3_screw_turn). */
MBD_INLINE void LANE_FN(turn_block)(lane *restrict out, const lane *M, const lane_xform *X,
                                    mbd_tree_form form, unsigned zero_rows)
{
    if (form == TREE_GENERAL) {
        LANE_FN(mat3_rotate_back)(out, M, 6, X->E, zero_rows, 0);
        return;
    }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            out[3 * i + j] = M[6 * i + j];
    LANE_FN(mat3_screw_turn)(out, X, form == TREE_SCREW, zero_rows);
}

/* out = base + block, for a 3x3 block of 6x6 matrices */
MBD_INLINE void LANE_FN(add_block)(lane *out, const lane *base, const lane *block)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            out[6 * i + j] = base[6 * i + j] + block[3 * i + j];
}

/* M_parent = base + X^T M X for any 6x6 M (no symmetry assumed, unlike the inertias'
 * congruence of spatial_kernels.h, which keeps upper triangles; base may be M_parent), M's
 * rows in zero_top (0-2) and zero_bottom (3-5) zero; form: X's tree transform
 * (mbd_tree_form). With X = rot(E) xlt(r), each block turns into the parent's axes
 * (turn_block), then shifts by r: M = [A B; C D] becomes
 *   D' = D,  C' = C - D rx,  B' = B + rx D,  A' = A - B rx + rx C'
 * (rx C' = rx C - rx D rx: four products with rx, not five), each written as soon as it is
 * known (few live values: in 8 lanes, registers). */
MBD_INLINE void LANE_FN(matrix_add_congruence)(lane *M_parent, const lane *base,
                                               const lane_xform *X, mbd_tree_form form,
                                               const lane *M, unsigned zero_top,
                                               unsigned zero_bottom)
{
    const int along_x = form != TREE_GENERAL;
    lane A[9], B[9], C[9], D[9];
    LANE_FN(turn_block)(D, M + 21, X, form, zero_bottom);
    LANE_FN(add_block)(M_parent + 21, base + 21, D);
    LANE_FN(turn_block)(C, M + 18, X, form, zero_bottom);
    LANE_FN(sub_times_cross)(C, D, X->r, along_x);
    LANE_FN(add_block)(M_parent + 18, base + 18, C);
    LANE_FN(turn_block)(A, M, X, form, zero_top);
    LANE_FN(add_cross_times)(A, X->r, C, along_x);
    LANE_FN(turn_block)(B, M + 3, X, form, zero_top);
    LANE_FN(sub_times_cross)(A, B, X->r, along_x);
    LANE_FN(add_block)(M_parent, base, A);
    LANE_FN(add_cross_times)(B, X->r, D, along_x);
    LANE_FN(add_block)(M_parent + 3, base + 3, B);
}

/* Row r of H times M's column at m (rows at stride), for H = E - U D^-1 S^T: H's columns
 * off S's support (subspace_support) are those of E, so there the product picks M's row r */
MBD_INLINE lane LANE_FN(h_row_times)(const lane *h_row, int r, const lane *m, int stride,
                                     unsigned support)
{
    const lane sum = LANE_FN(dot_over)(h_row, m, stride, support);
    return support >> r & 1 ? sum : m[stride * r] + sum;
}

/* out = M a (6x6 times 6) */
static inline void LANE_FN(mat6_apply)(lane *restrict out, const lane *M, const lane *a)
{
    for (int i = 0; i < 6; i++)
        out[i] = LANE_FN(dot6)(M + 6 * i, a);
}

/* I^A_i here is a general 6x6 matrix (H_i I^A_i is not symmetric): kept in the scratch. A
 * body's sum starts at its highest-index child as in carry_inertia (joint_kernels.h). */
static lane (*LANE_FN(general_inertias)(lane_work *work))[36] { return (lane(*)[36])work->scratch; }

/* D^-1, H = E - I^A S D^-1 S^T, and the parent's I^A += X^T (H I^A) X and
 * phi += X^T (H phi + I^A S D^-1 p). S^T H = 0, so the rows of H along S's unit columns
 * (zero_top, zero_bottom: bit masks of rows 0-2 and 3-5) are set to exact zeros, and H I^A
 * and the congruence skip them; for 1 and 2 DOFs only (sweep_eliminate_step), where D^-1 is the closed-form inverse of
 * the (not quite symmetric) D. For 3 and 6 DOFs it comes from a Cholesky factor, which
 * reads one triangle of D: there the rows of H keep what corrects for that (zeroed, they
 * cost all accuracy on a spherical chain of masses 1e-6 .. 1e6, test_robustness). H's
 * columns off S's support are those of E (h_row_times): H I^A and H phi read I^A's and
 * phi's rows there instead of multiplying by ones and zeros (5 x 6 x 6 multiplications
 * become 5 x 6 for a revolute joint). */
MBD_INLINE int LANE_FN(sweep_eliminate_masked)(const mbd_model *model, lane_work *work,
                                               const lane *q, const lane *p, int i,
                                               const mbd_joint_type type, unsigned zero_top,
                                               unsigned zero_bottom)
{
    lane(*phi)[6] = work->phi, (*IAs)[36] = LANE_FN(general_inertias)(work);
    const int parent = model->parent[i], v0 = model->v0[i], nv = joint_dofs(type);
    const unsigned support = subspace_support(type);
    const mbd_tree_form form = type == MBD_REVOLUTE ? model->tree_form[i] : TREE_GENERAL;
    const lane *S = work->S + 6 * v0, *IA = IAs[i];
    lane *U = work->U + 6 * v0, *Dinv = work->D + model->d0[i];
    lane D[MBD_MAX_JOINT_DOF * MBD_MAX_JOINT_DOF];
    if (q) /* X_i and S_i from q first (as the bodies sweep's velocity_step) */
        LANE_FN(body_kinematics)(model, work, q, i, type);
    if (model->last_child[i] < 0) /* a leaf; the other sums are started by their last child */
        LANE_FN(rigid_to_matrix)(IAs[i], &model->inertia[i]);
    LANE_FN(start_force_sum)(model, phi, i);
    LANE_FN(subtree_mass_step)(model, work, i, type);
    for (int k = 0; k < nv; k++) { /* U = I^A S in row form: I^A is not symmetric */
        const int unit = unit_column(type, k);
        for (int r = 0; r < 6; r++)
            U[6 * k + r] =
                unit >= 0 ? IA[6 * r + unit] : LANE_FN(dot_over)(IA + 6 * r, S + 6 * k, 1, support);
    }
    for (int k = 0; k < nv; k++)
        for (int m = 0; m < nv; m++)
            D[nv * k + m] = LANE_FN(column_dot)(type, S, k, U + 6 * m);
    LANE_FN(add_armature)(D, model, i, nv);
    if (LANE_FN(joint_block_inverse)(Dinv, D, nv))
        return LANE_FN(singular_joint)(work, i);
    if (parent < 0)
        return MBD_OK;
    lane UDinv[MBD_MAX_JOINT_DOF][6], H[36], HIA[36], rhs[6], t[6], mat[36];
    LANE_FN(times_inverse)(UDinv, (const lane(*)[6])U, Dinv, nv);
    for (int r = 0; r < 6; r++) {   /* H = E - U D^-1 S^T, column by column of S */
        for (int c = 0; c < 6; c++) /* the columns off the support: E's, not stored */
            if (support >> c & 1)
                H[6 * r + c] = LANE_FN(lane_splat)(r == c ? 1.0 : 0.0);
        for (int k = 0; k < nv; k++) {
            const int unit = unit_column(type, k);
            if (unit >= 0)
                H[6 * r + unit] -= UDinv[k][r];
            else
                for (int c = 0; c < 6; c++)
                    if (support >> c & 1)
                        H[6 * r + c] -= UDinv[k][r] * S[6 * k + c];
        }
    }
    for (int r = 0; r < 6; r++) { /* H I^A, and H phi + U D^-1 p; H's zero rows skipped */
        const int zero = (r < 3 ? zero_top : zero_bottom) >> r % 3 & 1;
        for (int c = 0; c < 6; c++)
            HIA[6 * r + c] = zero ? LANE_FN(lane_splat)(0.0)
                                  : LANE_FN(h_row_times)(H + 6 * r, r, IA + c, 6, support);
        rhs[r] = zero ? LANE_FN(lane_splat)(0.0)
                      : LANE_FN(h_row_times)(H + 6 * r, r, phi[i], 1, support);
        for (int k = 0; k < nv; k++)
            rhs[r] += UDinv[k][r] * p[v0 + k];
    }
    const lane *sum = IAs[parent];
    if (model->last_child[parent] == i) {
        LANE_FN(rigid_to_matrix)(mat, &model->inertia[parent]);
        sum = mat;
    }
    const lane_xform *X = &work->X[i];
    if (form == TREE_GENERAL) /* a constant, so that the congruence is specialized */
        LANE_FN(matrix_add_congruence)(IAs[parent], sum, X, TREE_GENERAL, HIA, zero_top,
                                       zero_bottom);
    else
        LANE_FN(matrix_add_congruence)(IAs[parent], sum, X, form, HIA, zero_top, zero_bottom);
    LANE_FN(body_force_t)(t, model, work, i, type, rhs);
    LANE_FN(carry_force)(model, phi, i, t);
    return MBD_OK;
}

/* The step with H's zero rows for the joint type (1 and 2 DOFs, see above), none with a
 * rotor's armature (S^T H = armature D^-1 S^T: joint_has_armature). */
MBD_INLINE int LANE_FN(sweep_eliminate_step)(const mbd_model *model, lane_work *work, const lane *q,
                                             const lane *p, int i, const mbd_joint_type type)
{
    if (joint_dofs(type) > 2 || joint_has_armature(model, i))
        return LANE_FN(sweep_eliminate_masked)(model, work, q, p, i, type, 0, 0);
    return LANE_FN(sweep_eliminate_masked)(model, work, q, p, i, type, zero_rows(type, 0),
                                           zero_rows(type, 1));
}

static int LANE_FN(eliminate)(const mbd_model *model, lane_work *work, const lane *q, const lane *p)
{
    int status = MBD_OK;
    for (int i = model->nb - 1; i >= 0 && status == MBD_OK; i--)
        DISPATCH_JOINT(model->joint_type[i], status = LANE_FN(sweep_eliminate_step), model, work, q,
                       p, i);
    return status;
}

/* z = D_i^-1 x for the joint block's rows x (nv of them). */
MBD_INLINE void LANE_FN(block_inverse_times)(lane *z, const lane *Dinv, const lane *x, int nv)
{
    for (int k = 0; k < nv; k++) {
        z[k] = Dinv[nv * k] * x[0];
        for (int m = 1; m < nv; m++)
            z[k] += Dinv[nv * k + m] * x[m];
    }
}

/* The rates' part of the forward pass, v_lambda known (vp): w = X_i v_lambda,
 * f = I^A_i w + phi_i and rate = qd_i = D_i^-1 (p_i - S_i^T f). */
MBD_INLINE void LANE_FN(sweep_rate_step)(const mbd_model *model, lane_work *work, const lane *p,
                                         const lane *vp, lane w[6], lane f[6], lane *rate, int i,
                                         const mbd_joint_type type)
{
    const int v0 = model->v0[i], nv = joint_dofs(type);
    const lane *S = work->S + 6 * v0, *phi = work->phi[i];
    lane rhs[MBD_MAX_JOINT_DOF];
    LANE_FN(body_motion)(w, model, work, i, type, vp);
    LANE_FN(mat6_apply)(f, LANE_FN(general_inertias)(work)[i], w);
    for (int r = 0; r < 6; r++)
        f[r] += phi[r];
    LANE_FN(subspace_dot)(rhs, type, S, f);
    for (int k = 0; k < nv; k++)
        rhs[k] = p[v0 + k] - rhs[k];
    LANE_FN(block_inverse_times)(rate, work->D + model->d0[i], rhs, nv);
}

/* Body i's qd_i, v_i and mu_i (into its slot of work->v, motion_of, and work->f), and pd_i,
 * its parent's v known. */
MBD_INLINE void LANE_FN(sweep_rates_step)(const mbd_model *model, lane_work *work, const lane *p,
                                          const lane *tau, lane *qd, lane *pd, int i,
                                          const mbd_joint_type type)
{
    static const lane zero[6];
    const int parent = model->parent[i], v0 = model->v0[i], nv = joint_dofs(type);
    const lane *S = work->S + 6 * v0;
    lane w[6], f[6], rate[MBD_MAX_JOINT_DOF];
    const lane *vp = parent < 0 ? zero : LANE_FN(motion_of)(model, work->v, parent);
    LANE_FN(sweep_rate_step)(model, work, p, vp, w, f, rate, i, type);
    for (int k = 0; k < nv; k++)
        qd[v0 + k] = rate[k];
    const lane *U = work->U + 6 * v0; /* v_i = w + S qd, mu_i = I^A v_i + phi = f + U qd */
    lane vJ[6], *v = LANE_FN(motion_of)(model, work->v, i);
    LANE_FN(subspace_times)(vJ, type, S, rate);
    for (int r = 0; r < 6; r++) {
        lane mu = f[r];
        for (int k = 0; k < nv; k++)
            mu += U[6 * k + r] * rate[k];
        v[r] = w[r] + vJ[r];
        work->f[i][r] = mu;
    }
    LANE_FN(momentum_rate_step)(model, work, work->f[i], v,
                                parent < 0 ? NULL : LANE_FN(motion_of)(model, work->a, parent),
                                LANE_FN(motion_of)(model, work->a, i), qd, tau, pd, i, type);
}

static void LANE_FN(rates_and_momenta)(const mbd_model *model, lane_work *work, const lane *p,
                                       const lane *tau, lane *qd, lane *pd)
{
    for (int i = 0; i < model->nb; i++) {
        LANE_FN(prefetch_next)(work, i);
        DISPATCH_JOINT(model->joint_type[i], LANE_FN(sweep_rates_step), model, work, p, tau, qd, pd,
                       i);
        LANE_FN(scatter_ready)(model, work, i);
    }
}

/* qd and pd from p and tau (NULL: zero); the position kinematics from q in the first pass
 * (after start_kinematics for one state), or with q NULL done before. */
static int LANE_FN(sweep_solve)(const mbd_model *model, lane_work *work, const lane *q,
                                const lane *p, const lane *tau, lane *qd, lane *pd)
{
    int status = LANE_FN(eliminate)(model, work, q, p);
    if (status)
        return status;
    LANE_FN(rates_and_momenta)(model, work, p, tau, qd, pd);
    return MBD_OK;
}
