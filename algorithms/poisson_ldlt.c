/* poisson_ldlt.c: the block LDL^T (Cholesky) variant of the Poisson-impulse solve
 * (Ivanov 2017, section 4). Same unknowns as poisson_sweep.c; the joint block is factored
 * instead of inverted and the inertia update is a symmetric rank-n_i downdate:
 *   leaves -> root:  U_i = I^A_i S_i,  L_i L_i^T = S_i^T U_i,  V_i = L_i^-1 U_i^T X_i,
 *                    I^A_l += X_i^T I^A_i X_i - V_i^T V_i,
 *                    x_i = L_i^-1 (p_i - S_i^T phi_i),  phi_l += X_i^T phi_i + V_i^T x_i
 *   root -> leaves:  L_i^T qd_i = x_i - V_i v_l,  v_i = X_i v_l + S_i qd_i,
 *                    mu_i = I^A_i v_i + phi_i
 *   then pd = Q + dT/dq from mu (momentum_rates). V_i (n_i x 6) is kept in work->U. */
#include "internal.h"

#include <string.h>

MBD_INLINE int eliminate_step(const mbd_model *model, mbd_work *work, const double *p, int i,
                              const mbd_joint_type type)
{
    double (*phi)[6] = work->c;
    const int parent = model->parent[i], v0 = model->v0[i], nv = joint_dofs(type);
    const double *S = work->S + 6 * v0;
    double *V = work->U + 6 * v0, *L = work->D + model->d0[i], *x = work->u + v0;
    double U[MBD_MAX_JOINT_DOF][6], t[6];
    joint_space_inertia(U, L, &work->IA[i], type, S);
    if (small_cholesky(L, nv))
        return singular_joint(work, i);
    for (int k = 0; k < nv; k++)
        x[k] = p[v0 + k] - column_dot(type, S, k, phi[i]);
    small_forward_subst(L, nv, x);
    if (parent < 0)
        return MBD_OK;
    for (int k = 0; k < nv; k++) /* rows of V: (X^T U_k)^T, then L^-1 */
        xform_force_t(V + 6 * k, &work->X[i], U[k]);
    small_forward_subst_rows(L, nv, V);
    inertia_add_congruence(&work->IA[parent], &work->X[i], &work->IA[i]);
    for (int k = 0; k < nv; k++) /* symmetric rank-n_i downdate */
        inertia_sub_outer(&work->IA[parent], V + 6 * k, V + 6 * k);
    xform_force_t(t, &work->X[i], phi[i]);
    for (int r = 0; r < 6; r++) {
        phi[parent][r] += t[r];
        for (int k = 0; k < nv; k++)
            phi[parent][r] += V[6 * k + r] * x[k];
    }
    return MBD_OK;
}

/* qd_i, v_i = w + S_i qd_i with w = X_i v_lambda, and mu_i = I^A_i v_i + phi_i into work->f. */
MBD_INLINE void rate_step(const mbd_model *model, mbd_work *work, double *qd, int i,
                          const mbd_joint_type type)
{
    const double zero[6] = {0};
    const int parent = model->parent[i], v0 = model->v0[i], nv = joint_dofs(type);
    const double *V = work->U + 6 * v0, *L = work->D + model->d0[i];
    const double *vp = parent < 0 ? zero : work->v[parent];
    double *v = work->v[i], *mu = work->f[i];
    for (int k = 0; k < nv; k++)
        qd[v0 + k] = work->u[v0 + k] - (parent < 0 ? 0.0 : dot6(V + 6 * k, vp));
    small_backward_subst(L, nv, qd + v0);
    xform_motion(v, &work->X[i], vp);
    for (int k = 0; k < nv; k++)
        column_add(v, type, work->S + 6 * v0, k, qd[v0 + k]);
    inertia_apply(mu, &work->IA[i], v);
    for (int r = 0; r < 6; r++)
        mu[r] += work->c[i][r];
}

static int ldlt_mom(const mbd_model *model, mbd_work *work, const double *p, const double *tau,
                    double *qd, double *pd)
{
    int status = MBD_OK;
    memcpy(work->IA, model->inertia, (size_t)model->nb * sizeof *work->IA);
    memset(work->c, 0, (size_t)model->nb * sizeof *work->c);
    for (int i = model->nb - 1; i >= 0 && status == MBD_OK; i--)
        DISPATCH_JOINT(model->joint[i].type, status = eliminate_step, model, work, p, i);
    if (status)
        return status;
    for (int i = 0; i < model->nb; i++)
        DISPATCH_JOINT(model->joint[i].type, rate_step, model, work, qd, i);
    momentum_rates(model, work, (const double (*)[6])work->f, qd, tau, pd);
    return MBD_OK;
}

const mbd_solver mbd_solver_poisson_ldlt = {
    .name = "poisson-ldlt",
    .summary = "Poisson-impulse block LDL^T (Ivanov 2017 sec. 4: Cholesky of S^T I^A S, rank-n downdate), O(N); momentum form",
    .solve_mom = ldlt_mom,
};
