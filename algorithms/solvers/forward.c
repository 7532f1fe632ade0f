/* forward.c: the forward entry points: mbd_solve and mbd_solve_momentum (the solve phase
 * after mbd_kinematics), mbd_forward and mbd_forward_momentum (kinematics and solve), each
 * through the work's solver, with friction (friction.c) and passive forces around it. */
#include "solvers/solvers.h"

static int require_solver(const mbd_model *model, const mbd_work *work, mbd_formulation form)
{
    if (!work || work->model != model || !work->solver)
        return MBD_EINVAL;
    return mbd_solver_formulations(work->solver) & form ? MBD_OK : MBD_EUNSUPPORTED;
}

/* mbd_solve after require_solver; q not NULL: by the solver's forward_acc, after
 * start_kinematics(q). */
static int solve_acc(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
                     const double *tau, double *qdd)
{
    if (check_finite(qd, model->nv) || (tau && check_finite(tau, model->nv)))
        return MBD_ENONFINITE;
    work->failed_body = -1;
    const int status = q ? work->solver->forward_acc(model, work, q, qd, tau, qdd)
                       : model->has_friction ? friction_solve_acc(model, work, qd, tau, qdd)
                                             : work->solver->solve_acc(model, work, qd, tau, qdd);
    if (status == MBD_OK && check_finite(qdd, model->nv))
        return MBD_ENONFINITE;
    return status;
}

/* The solve phases have no q, which springs read: models with passive forces run the
 * forward calls, which add them. */
int mbd_solve(const mbd_model *model, mbd_work *work, const double *qd, const double *tau,
              double *qdd)
{
    const int status = require_solver(model, work, MBD_ACCELERATION);
    if (status == MBD_OK && (work->solver->plugin || model->has_passive))
        return MBD_EUNSUPPORTED; /* a plugin has no solve phase of its own */
    return status ? status : solve_acc(model, work, NULL, qd, tau, qdd);
}

/* mbd_solve_momentum after require_solver; q as in solve_acc (forward_mom). */
static int solve_mom(const mbd_model *model, mbd_work *work, const double *q, const double *p,
                     const double *tau, double *qd, double *pd)
{
    if (check_finite(p, model->nv) || (tau && check_finite(tau, model->nv)))
        return MBD_ENONFINITE;
    work->failed_body = -1;
    const int status = q ? work->solver->forward_mom(model, work, q, p, tau, qd, pd)
                       : model->has_friction ? friction_solve_mom(model, work, p, tau, qd, pd)
                                             : work->solver->solve_mom(model, work, p, tau, qd, pd);
    if (status == MBD_OK && (check_finite(qd, model->nv) || check_finite(pd, model->nv)))
        return MBD_ENONFINITE;
    return status;
}

int mbd_solve_momentum(const mbd_model *model, mbd_work *work, const double *p, const double *tau,
                       double *qd, double *pd)
{
    const int status = require_solver(model, work, MBD_MOMENTUM);
    if (status == MBD_OK && model->has_passive)
        return MBD_EUNSUPPORTED;
    return status ? status : solve_mom(model, work, NULL, p, tau, qd, pd);
}

int mbd_forward(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
                const double *tau, double *qdd)
{
    int status = require_solver(model, work, MBD_ACCELERATION);
    if (status)
        return status;
    if (model->has_passive) { /* tau + tau_p(q, qd), from the kinematics at q */
        status = mbd_kinematics(model, work, q);
        if (status == MBD_OK)
            status = passive_add(model, work, q, qd, tau, work->passive_tau);
        if (status)
            return status;
        tau = work->passive_tau;
    }
    if (work->solver->plugin)
        return plugin_forward(model, work, q, qd, tau, qdd);
    const int fused = work->solver->forward_acc && !model->has_friction && !model->has_passive;
    if (!model->has_passive)
        status = fused ? start_kinematics(model, work, q) : mbd_kinematics(model, work, q);
    return status ? status : solve_acc(model, work, fused ? q : NULL, qd, tau, qdd);
}

/* pd += tau_p(q, qd): pd = tau + (terms of q and qd alone), and qd = H^-1 p does not
 * depend on tau, so the passive forces join after the solve, at its qd. */
static int add_passive_rate(const mbd_model *model, mbd_work *work, const double *q,
                            const double *qd, double *pd)
{
    const int status = passive_add(model, work, q, qd, NULL, work->passive_tau);
    for (int k = 0; k < model->nv && status == MBD_OK; k++)
        pd[k] += work->passive_tau[k];
    return status;
}

int mbd_forward_momentum(const mbd_model *model, mbd_work *work, const double *q, const double *p,
                         const double *tau, double *qd, double *pd)
{
    int status = require_solver(model, work, MBD_MOMENTUM);
    if (status)
        return status;
    const int fused = work->solver->forward_mom && !model->has_friction && !model->has_passive;
    status = fused ? start_kinematics(model, work, q) : mbd_kinematics(model, work, q);
    if (status == MBD_OK)
        status = solve_mom(model, work, fused ? q : NULL, p, tau, qd, pd);
    return status == MBD_OK && model->has_passive ? add_passive_rate(model, work, q, qd, pd)
                                                  : status;
}
