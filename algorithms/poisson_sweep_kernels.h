/* poisson_sweep_kernels.h: the Poisson-impulse sweep (generalized-momentum form; Ivanov 2017,
 * section 3), written as the seed writes it: D_i^-1 formed explicitly and the 6x6
 * H_i = E - I^A_i S_i D_i^-1 S_i^T, a Gaussian elimination that ignores symmetry.
 *
 * State (q, p). Unknowns v_i, qd_i and the subtree momenta mu_i = I^A_i v_i + phi_i:
 *   leaves -> root:  D_i = S_i^T I^A_i S_i,  H_i = E - I^A_i S_i D_i^-1 S_i^T,
 *                    I^A_l += X_i^T (H_i I^A_i) X_i,
 *                    phi_l += X_i^T (H_i phi_i + I^A_i S_i D_i^-1 p_i)
 *   root -> leaves:  qd_i = D_i^-1 (p_i - S_i^T (I^A_i X_i v_l + phi_i)),
 *                    v_i = X_i v_l + S_i qd_i,  mu_i = I^A_i v_i + phi_i
 *   then pd = Q + dT/dq from mu (momentum_rates).
 * Written once over the lane type of lane.h (no include guard; poisson_sweep.c
 * instantiates one state, batch_x4.c and batch_x8.c W lanes). */

/* The 6x6 matrix of I (row-major). */
static inline void LANE_FN(inertia_to_matrix)(lane *out, const lane_inertia *I)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            out[6 * i + j] = I->A[SYM3(i, j)];
            out[6 * i + j + 3] = I->B[3 * i + j];
            out[6 * (i + 3) + j] = I->B[3 * j + i];
            out[6 * (i + 3) + j + 3] = I->C[SYM3(i, j)];
        }
}

/* out = E^T M E for the 3x3 block M of the 6x6 I at (row, col). */
static inline void LANE_FN(block_rotate_back)(lane *restrict out, const lane *I, int row, int col,
                                     const lane *E)
{
    lane T[9]; /* M E */
    for (int i = 0; i < 3; i++) {
        const lane *m = I + 6 * (row + i) + col;
        for (int j = 0; j < 3; j++)
            T[3 * i + j] = m[0] * E[j] + m[1] * E[3 + j] + m[2] * E[6 + j];
    }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            out[3 * i + j] = E[i] * T[j] + E[3 + i] * T[3 + j] + E[6 + i] * T[6 + j];
}

/* M_parent += X^T M X for any 6x6 M (no symmetry assumed).
 * General M = [A B; C D]: A' = A - B rx + rx C - rx D rx, B' = B + rx D, C' = C - D rx. */
static inline void LANE_FN(matrix_add_congruence)(lane *restrict M_parent, const lane_xform *X, const lane *M)
{
    lane A[9], B[9], C[9], D[9];
    LANE_FN(block_rotate_back)(A, M, 0, 0, X->E);
    LANE_FN(block_rotate_back)(B, M, 0, 3, X->E);
    LANE_FN(block_rotate_back)(C, M, 3, 0, X->E);
    LANE_FN(block_rotate_back)(D, M, 3, 3, X->E);
    const lane *r = X->r;
    const lane zero = LANE_FN(lane_splat)(0.0);
    const lane rx[9] = {zero, -r[2], r[1], r[2], zero, -r[0], -r[1], r[0], zero};
    lane Brx[9], rxC[9], rxD[9], rxDrx[9], Drx[9];
    LANE_FN(mat3_mul)(Brx, B, rx);
    LANE_FN(mat3_mul)(rxC, rx, C);
    LANE_FN(mat3_mul)(rxD, rx, D);
    LANE_FN(mat3_mul)(rxDrx, rxD, rx);
    LANE_FN(mat3_mul)(Drx, D, rx);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            const int k = 3 * i + j;
            M_parent[6 * i + j] += A[k] - Brx[k] + rxC[k] - rxDrx[k];
            M_parent[6 * i + j + 3] += B[k] + rxD[k];
            M_parent[6 * (i + 3) + j] += C[k] - Drx[k];
            M_parent[6 * (i + 3) + j + 3] += D[k];
        }
}

/* out = M a (6x6 times 6) */
static inline void LANE_FN(mat6_apply)(lane *restrict out, const lane *M, const lane *a)
{
    for (int i = 0; i < 6; i++)
        out[i] = LANE_FN(dot6)(M + 6 * i, a);
}

/* I^A_i here is a general 6x6 matrix (H_i I^A_i is not symmetric): kept in the scratch. */
static lane (*LANE_FN(general_inertias)(lane_work *work))[36] { return (lane (*)[36])work->scratch; }

static int LANE_FN(eliminate)(const mbd_model *model, lane_work *work, const lane *p)
{
    lane (*phi)[6] = work->c, (*IAs)[36] = LANE_FN(general_inertias)(work);
    for (int i = 0; i < model->nb; i++)
        LANE_FN(inertia_to_matrix)(IAs[i], &LANE_BODY_INERTIA(model, work)[i]);
    memset(phi, 0, (size_t)model->nb * sizeof *phi);
    for (int i = model->nb - 1; i >= 0; i--) {
        const int parent = model->parent[i], v0 = model->v0[i], nv = model->joint[i].nv;
        const lane *S = work->S + 6 * v0, *IA = IAs[i];
        lane *U = work->U + 6 * v0, *Dinv = work->D + model->d0[i];
        lane D[MBD_MAX_JOINT_DOF * MBD_MAX_JOINT_DOF];
        for (int k = 0; k < nv; k++) /* U = I^A S in row form: I^A is not symmetric */
            LANE_FN(mat6_apply)(U + 6 * k, IA, S + 6 * k);
        for (int k = 0; k < nv; k++)
            for (int m = 0; m < nv; m++)
                D[nv * k + m] = LANE_FN(dot6)(S + 6 * k, U + 6 * m);
        if (LANE_FN(joint_block_inverse)(Dinv, D, nv))
            return LANE_FN(singular_joint)(work, i);
        if (parent < 0)
            continue;
        lane UDinv[MBD_MAX_JOINT_DOF][6], H[36], HIA[36], rhs[6], t[6];
        LANE_FN(times_inverse)(UDinv, (const lane (*)[6])U, Dinv, nv);
        for (int r = 0; r < 6; r++) /* H = E - U D^-1 S^T */
            for (int s = 0; s < 6; s++) {
                H[6 * r + s] = LANE_FN(lane_splat)(r == s ? 1.0 : 0.0);
                for (int k = 0; k < nv; k++)
                    H[6 * r + s] -= UDinv[k][r] * S[6 * k + s];
            }
        for (int r = 0; r < 6; r++)
            for (int s = 0; s < 6; s++) {
                HIA[6 * r + s] = LANE_FN(lane_splat)(0.0);
                for (int k = 0; k < 6; k++)
                    HIA[6 * r + s] += H[6 * r + k] * IA[6 * k + s];
            }
        LANE_FN(matrix_add_congruence)(IAs[parent], &work->X[i], HIA);
        LANE_FN(mat6_apply)(rhs, H, phi[i]);
        for (int r = 0; r < 6; r++)
            for (int k = 0; k < nv; k++)
                rhs[r] += UDinv[k][r] * p[v0 + k];
        LANE_FN(xform_force_t)(t, &work->X[i], rhs);
        for (int r = 0; r < 6; r++)
            phi[parent][r] += t[r];
    }
    return MBD_OK;
}

static void LANE_FN(rates_and_momenta)(const mbd_model *model, lane_work *work, const lane *p, lane *qd)
{
    const lane (*phi)[6] = (const lane (*)[6])work->c;
    lane zero[6];
    for (int r = 0; r < 6; r++)
        zero[r] = LANE_FN(lane_splat)(0.0);
    for (int i = 0; i < model->nb; i++) {
        const int parent = model->parent[i], v0 = model->v0[i], nv = model->joint[i].nv;
        const lane *S = work->S + 6 * v0, *Dinv = work->D + model->d0[i];
        lane w[6], f[6], rhs[MBD_MAX_JOINT_DOF] = {0}; /* nv of them set by subspace_dot */
        LANE_FN(xform_motion)(w, &work->X[i], parent < 0 ? zero : work->v[parent]);
        LANE_FN(mat6_apply)(f, LANE_FN(general_inertias)(work)[i], w);
        for (int r = 0; r < 6; r++)
            f[r] += phi[i][r];
        LANE_FN(subspace_dot)(rhs, model->joint[i].type, S, f);
        for (int k = 0; k < nv; k++) {
            qd[v0 + k] = LANE_FN(lane_splat)(0.0);
            for (int m = 0; m < nv; m++)
                qd[v0 + k] += Dinv[nv * k + m] * (p[v0 + m] - rhs[m]);
        }
        const lane *U = work->U + 6 * v0; /* v_i = w + S qd, mu_i = I^A v_i + phi = f + U qd */
        lane vJ[6];
        LANE_FN(subspace_times)(vJ, model->joint[i].type, S, qd + v0);
        for (int r = 0; r < 6; r++) {
            work->v[i][r] = w[r] + vJ[r];
            work->f[i][r] = f[r];
            for (int k = 0; k < nv; k++)
                work->f[i][r] += U[6 * k + r] * qd[v0 + k];
        }
    }
}

/* qd and pd from p and tau (NULL: zero) after the position kinematics. */
static int LANE_FN(sweep_mom)(const mbd_model *model, lane_work *work, const lane *p, const lane *tau,
                     lane *qd, lane *pd)
{
    int status = LANE_FN(eliminate)(model, work, p);
    if (status)
        return status;
    LANE_FN(rates_and_momenta)(model, work, p, qd);
    LANE_FN(momentum_rates)(model, work, (const lane (*)[6])work->f, qd, tau, pd);
    return MBD_OK;
}

