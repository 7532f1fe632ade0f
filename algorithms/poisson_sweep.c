/* poisson_sweep.c: the Poisson-impulse sweep (generalized-momentum form; Ivanov 2017,
 * section 3), written as the seed writes it: D_i^-1 formed explicitly and the 6x6
 * H_i = E - I^A_i S_i D_i^-1 S_i^T, a Gaussian elimination that ignores symmetry.
 *
 * State (q, p). Unknowns v_i, qd_i and the subtree momenta mu_i = I^A_i v_i + phi_i:
 *   leaves -> root:  D_i = S_i^T I^A_i S_i,  H_i = E - I^A_i S_i D_i^-1 S_i^T,
 *                    I^A_l += X_i^T (H_i I^A_i) X_i,
 *                    phi_l += X_i^T (H_i phi_i + I^A_i S_i D_i^-1 p_i)
 *   root -> leaves:  qd_i = D_i^-1 (p_i - S_i^T (I^A_i X_i v_l + phi_i)),
 *                    v_i = X_i v_l + S_i qd_i,  mu_i = I^A_i v_i + phi_i
 *   then pd = Q + dT/dq from mu (momentum_rates). */
#include "internal.h"

#include <string.h>

/* I^A_i here is a general 6x6 matrix (H_i I^A_i is not symmetric): kept in the scratch. */
static size_t sweep_scratch(const mbd_model *model) { return 36 * (size_t)model->nb; }

static double (*general_inertias(mbd_work *work))[36] { return (double (*)[36])work->scratch; }

static int eliminate(const mbd_model *model, mbd_work *work, const double *p)
{
    double (*phi)[6] = work->c, (*IAs)[36] = general_inertias(work);
    for (int i = 0; i < model->nb; i++)
        inertia_to_matrix(IAs[i], &model->inertia[i]);
    memset(phi, 0, (size_t)model->nb * sizeof *phi);
    for (int i = model->nb - 1; i >= 0; i--) {
        const int parent = model->parent[i], v0 = model->v0[i], nv = model->joint[i].nv;
        const double *S = work->S + 6 * v0, *IA = IAs[i];
        double *U = work->U + 6 * v0, *Dinv = work->D + model->d0[i];
        double D[MBD_MAX_JOINT_DOF * MBD_MAX_JOINT_DOF];
        for (int k = 0; k < nv; k++) /* U = I^A S in row form: I^A is not symmetric */
            mat6_apply(U + 6 * k, IA, S + 6 * k);
        for (int k = 0; k < nv; k++)
            for (int m = 0; m < nv; m++)
                D[nv * k + m] = dot6(S + 6 * k, U + 6 * m);
        if (joint_block_inverse(Dinv, D, nv))
            return singular_joint(work, i);
        if (parent < 0)
            continue;
        double UDinv[MBD_MAX_JOINT_DOF][6], H[36], HIA[36], rhs[6], t[6];
        times_inverse(UDinv, (const double (*)[6])U, Dinv, nv);
        for (int r = 0; r < 6; r++) /* H = E - U D^-1 S^T */
            for (int s = 0; s < 6; s++) {
                H[6 * r + s] = r == s ? 1.0 : 0.0;
                for (int k = 0; k < nv; k++)
                    H[6 * r + s] -= UDinv[k][r] * S[6 * k + s];
            }
        for (int r = 0; r < 6; r++)
            for (int s = 0; s < 6; s++) {
                HIA[6 * r + s] = 0.0;
                for (int k = 0; k < 6; k++)
                    HIA[6 * r + s] += H[6 * r + k] * IA[6 * k + s];
            }
        matrix_add_congruence(IAs[parent], &work->X[i], HIA);
        mat6_apply(rhs, H, phi[i]);
        for (int r = 0; r < 6; r++)
            for (int k = 0; k < nv; k++)
                rhs[r] += UDinv[k][r] * p[v0 + k];
        xform_force_t(t, &work->X[i], rhs);
        for (int r = 0; r < 6; r++)
            phi[parent][r] += t[r];
    }
    return MBD_OK;
}

static void rates_and_momenta(const mbd_model *model, mbd_work *work, const double *p, double *qd)
{
    const double (*phi)[6] = (const double (*)[6])work->c;
    const double zero[6] = {0};
    for (int i = 0; i < model->nb; i++) {
        const int parent = model->parent[i], v0 = model->v0[i], nv = model->joint[i].nv;
        const double *S = work->S + 6 * v0, *Dinv = work->D + model->d0[i];
        double w[6], f[6], rhs[MBD_MAX_JOINT_DOF];
        xform_motion(w, &work->X[i], parent < 0 ? zero : work->v[parent]);
        mat6_apply(f, general_inertias(work)[i], w);
        for (int r = 0; r < 6; r++)
            f[r] += phi[i][r];
        subspace_dot(rhs, model->joint[i].type, S, f);
        for (int k = 0; k < nv; k++) {
            qd[v0 + k] = 0.0;
            for (int m = 0; m < nv; m++)
                qd[v0 + k] += Dinv[nv * k + m] * (p[v0 + m] - rhs[m]);
        }
        const double *U = work->U + 6 * v0; /* v_i = w + S qd, mu_i = I^A v_i + phi = f + U qd */
        double vJ[6];
        subspace_times(vJ, model->joint[i].type, S, qd + v0);
        for (int r = 0; r < 6; r++) {
            work->v[i][r] = w[r] + vJ[r];
            work->f[i][r] = f[r];
            for (int k = 0; k < nv; k++)
                work->f[i][r] += U[6 * k + r] * qd[v0 + k];
        }
    }
}

static int sweep_mom(const mbd_model *model, mbd_work *work, const double *p, const double *tau,
                     double *qd, double *pd)
{
    int status = eliminate(model, work, p);
    if (status)
        return status;
    rates_and_momenta(model, work, p, qd);
    momentum_rates(model, work, (const double (*)[6])work->f, qd, tau, pd);
    return MBD_OK;
}

const mbd_solver mbd_solver_poisson_sweep = {
    .name = "poisson-sweep",
    .summary = "Poisson-impulse sweep (Ivanov 2017 sec. 3: explicit D^-1, 6x6 H_i), O(N); momentum form",
    .scratch_doubles = sweep_scratch,
    .solve_mom = sweep_mom,
};
