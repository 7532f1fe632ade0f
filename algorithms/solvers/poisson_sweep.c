/* poisson_sweep.c: the Poisson-impulse sweep solver, one state at a time (the recurrence
 * and its steps: poisson_sweep_kernels.h). */
#include "solvers/solvers.h"

#include <string.h>

#define MBD_LANES 1
#include "spatial/lane.h"
#include "solvers/momentum_kernels.h"
#include "solvers/poisson_sweep_kernels.h"
#include "spatial/lane_end.h"

/* The general 6x6 I^A_i of every body. */
static size_t sweep_scratch(const mbd_model *model) { return 36 * (size_t)model->nb; }

/* The right-hand side's part of the backward pass on the U_i and D_i^-1 of the preceding
 * solve: phi_lambda += X_i^T (H_i phi_i + U_i D_i^-1 p_i), with H_i = 1 - U_i D_i^-1 S_i^T
 * not formed: X_i^T (phi_i + U_i D_i^-1 (p_i - S_i^T phi_i)). */
MBD_INLINE void sweep_reduce_step(const mbd_model *model, mbd_work *work, const double *p, int i,
                                  const mbd_joint_type type)
{
    const int parent = model->parent[i], v0 = model->v0[i], nv = joint_dofs(type);
    const double *S = work->S + 6 * v0, *U = work->U + 6 * v0;
    double x[MBD_MAX_JOINT_DOF], z[MBD_MAX_JOINT_DOF], sum[6], t[6];
    if (parent < 0)
        return;
    subspace_dot(x, type, S, work->phi[i]);
    for (int k = 0; k < nv; k++)
        x[k] = p[v0 + k] - x[k];
    block_inverse_times(z, work->D + model->d0[i], x, nv);
    for (int r = 0; r < 6; r++) {
        sum[r] = work->phi[i][r];
        for (int k = 0; k < nv; k++)
            sum[r] += U[6 * k + r] * z[k];
    }
    body_force_t(t, model, work, i, type, sum);
    carry_force(model, work->phi, i, t);
}

/* The velocities' part of the forward pass: qd_i, and v_i = w + S_i qd_i; base not NULL:
 * also the force part of work->f[i] = base_i + that of mu_i = f + U_i qd_i, where
 * f = I^A_i w + phi_i. */
MBD_INLINE void sweep_velocity_step(const mbd_model *model, mbd_work *work, const double *p,
                                    double *qd, const double (*base)[6], int i,
                                    const mbd_joint_type type)
{
    static const double zero[6];
    const int parent = model->parent[i], v0 = model->v0[i], nv = joint_dofs(type);
    const double *U = work->U + 6 * v0;
    double f[6];
    sweep_rate_step(model, work, p, parent < 0 ? zero : work->v[parent], work->v[i], f, qd + v0, i,
                    type);
    if (base)
        for (int r = 3; r < 6; r++) {
            double mu = base[i][r] + f[r];
            for (int k = 0; k < nv; k++)
                mu += U[6 * k + r] * qd[v0 + k];
            work->f[i][r] = mu;
        }
    subspace_times(f, type, work->S + 6 * v0, qd + v0);
    for (int r = 0; r < 6; r++)
        work->v[i][r] += f[r];
}

/* qd = H^-1 b: the right-hand side's parts of the two passes again. Overwrites work->phi
 * and v. base not NULL: also the force parts of work->f = those of base + the reactions of
 * the accelerations x alone, the subtree momenta mu_i of this impulse problem (as
 * ldlt_inverse in poisson_ldlt.c says). */
static void sweep_inverse(const mbd_model *model, mbd_work *work, const double *b, double *x,
                          const double (*base)[6])
{
    for (int i = model->nb - 1; i >= 0; i--) {
        start_force_sum(model, work->phi, i);
        DISPATCH_JOINT(model->joint_type[i], sweep_reduce_step, model, work, b, i);
    }
    for (int i = 0; i < model->nb; i++)
        DISPATCH_JOINT(model->joint_type[i], sweep_velocity_step, model, work, b, x, base, i);
}

/* The momentum form only. */
static int sweep_solve_call(const mbd_model *model, mbd_work *work, const mbd_solve_call *call)
{
    return sweep_solve(model, work, call->q, call->in, call->tau, call->out, call->rate);
}

const mbd_solver mbd_solver_poisson_sweep = {
    .name = "poisson-sweep",
    .summary =
        "Poisson-impulse sweep (Ivanov 2017 sec. 3: explicit D^-1, 6x6 H_i), O(N); momentum form",
    .scratch_doubles = sweep_scratch,
    .forms = MBD_MOMENTUM,
    .features = SOLVER_TAKES_Q | SOLVER_INVERSE_REACTIONS,
    .solve = sweep_solve_call,
    .inverse = sweep_inverse,
    .lane_kernels = LANES_POISSON_SWEEP,
};
