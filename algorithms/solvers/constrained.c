/* constrained.c: forward dynamics of a model with closed loops (the equations and their
 * terms: dynamics/loops.c), through the Schur complement: qdd0 = H^-1 (tau - C),
 * Y = H^-1 Phi_q^T, K = Phi_q Y, K lambda = rhs - Phi_q qdd0, qdd = qdd0 + Y lambda. The
 * dense route forms H (CRBA) and factors it (LAPACK dpotrf, dense_factor); the bodies
 * route takes qdd0 from the O(N) sweep and each column of Y from its inverse, O(N)
 * per equation. */
#include "solvers/solvers.h"

#include <math.h>
#include <string.h>

#define CONSISTENCY_TOL 1e-8

/* Dense route: H by CRBA, H = R^T R (dpotrf), qdd0 = H^-1 (tau - C), Y = H^-1 Phi_q^T. */
static int dense_route(const mbd_model *model, mbd_work *work, loop_buffers *b, const double *qd,
                       const double *tau, double *qdd)
{
    const int nv = model->nv, m = model->nc;
    rnea(model, work, qd, b->zero, 1, b->tau);
    for (int k = 0; k < nv; k++)
        qdd[k] = (tau ? tau[k] : 0.0) - b->tau[k];
    int status = dense_factor(model, work, b->H);
    if (status)
        return status;
    memcpy(b->Y, b->J, (size_t)m * nv * sizeof *b->Y);
    status = dense_solve(model, b->H, 1, qdd);
    return status ? status : dense_solve(model, b->H, m, b->Y);
}

/* O(N) route: qdd0 from the bodies sweep, then each column of Y from its factorization
 * (the solver's inverse). */
static int bodies_route(const mbd_model *model, mbd_work *work, loop_buffers *b, const double *qd,
                        const double *tau, double *qdd)
{
    const mbd_solve_call call = {.form = MBD_ACCELERATION, .in = qd, .tau = tau, .out = qdd};
    int status = work->solver->solve(model, work, &call);
    for (int r = 0; status == MBD_OK && r < model->nc; r++)
        work->solver->inverse(model, work, b->J + (size_t)r * model->nv,
                              b->Y + (size_t)r * model->nv, NULL);
    return status;
}

int mbd_solver_closes_loops(const mbd_solver *solver)
{
    return solver && solver->loop_route != LOOPS_NONE;
}

int mbd_forward_constrained(const mbd_model *model, mbd_work *work, const double *q,
                            const double *qd, const double *tau, const mbd_baumgarte *stab,
                            double *qdd, double *lambda)
{
    if (!work || work->model != model || !work->solver)
        return MBD_EINVAL;
    if (model->nloops == 0)
        return mbd_forward(model, work, q, qd, tau, qdd);
    if (!mbd_solver_closes_loops(work->solver))
        return MBD_EUNSUPPORTED;
    const int dense = closes_loops_densely(work->solver);
    const double alpha = stab ? stab->alpha : 0.0, beta = stab ? stab->beta : 0.0;
    if (!isfinite(alpha) || !isfinite(beta) || (tau && check_finite(tau, model->nv)))
        return MBD_ENONFINITE;
    const int m = model->nc, nv = model->nv;
    loop_buffers b = loops_buffers_of(model, work, dense);
    work->failed_body = -1;
    int status = constraint_terms(model, work, &b, q, qd, 1);
    if (status == MBD_OK && model->has_passive) { /* tau + tau_p, at its kinematics */
        status = passive_add(model, work, q, qd, tau, work->passive_tau);
        tau = work->passive_tau;
    }
    if (status == MBD_OK)
        status = dense ? dense_route(model, work, &b, qd, tau, qdd)
                       : bodies_route(model, work, &b, qd, tau, qdd);
    if (status)
        return status;
    loops_times(b.y, b.J, qdd, m, nv);
    for (int r = 0; r < m; r++)
        b.rhs[r] = b.gamma[r] - 2.0 * alpha * b.phid[r] - beta * beta * b.phi[r] - b.y[r];
    const double scale = vector_norm(b.rhs, m) + vector_norm(b.y, m);
    loops_gram(b.K, b.J, b.Y, m, nv);
    double residual;
    if (loops_pseudo_solve(&b, m, b.rhs, b.y, &residual) < 0)
        return MBD_EINVAL;
    if (residual > CONSISTENCY_TOL * scale)
        return MBD_EINCONSISTENT;
    for (int r = 0; r < m; r++) /* qdd = qdd0 + Y lambda */
        for (int j = 0; j < nv; j++)
            qdd[j] += b.Y[(size_t)r * nv + j] * b.y[r];
    if (lambda)
        memcpy(lambda, b.y, (size_t)m * sizeof *lambda);
    return check_finite(qdd, nv) || check_finite(b.y, m) ? MBD_ENONFINITE : MBD_OK;
}
