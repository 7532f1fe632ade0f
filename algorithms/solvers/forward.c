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

/* The solve of call after require_solver: its inputs and outputs checked, friction's
 * iteration around the solver where the model has friction and the call no q. */
static int solve(const mbd_model *model, mbd_work *work, const mbd_solve_call *call)
{
    const int nv = model->nv;
    if (check_finite(call->in, nv) || (call->tau && check_finite(call->tau, nv)))
        return MBD_ENONFINITE;
    work->failed_body = -1;
    const int status = call->q || !model->has_friction ? work->solver->solve(model, work, call)
                                                       : friction_solve(model, work, call);
    if (status == MBD_OK &&
        (check_finite(call->out, nv) || (call->rate && check_finite(call->rate, nv))))
        return MBD_ENONFINITE;
    return status;
}

/* Whether the forward call hands q to the solve (mbd_solve_call): a plugin always; a
 * solver that forms X_i and S_i in its first pass where no friction iterates on the
 * kinematics and no passive forces needed them first. */
static int solve_takes_q(const mbd_model *model, const mbd_solver *solver)
{
    return solver->features & SOLVER_NEEDS_Q ||
           (solver->features & SOLVER_TAKES_Q && !model->has_friction && !model->has_passive);
}

/* The solve phases have no q, which springs read: models with passive forces run the
 * forward calls, which add them. A plugin has no solve phase of its own. */
static int require_solve_phase(const mbd_model *model, const mbd_work *work, mbd_formulation form)
{
    const int status = require_solver(model, work, form);
    if (status == MBD_OK && (work->solver->features & SOLVER_NEEDS_Q || model->has_passive))
        return MBD_EUNSUPPORTED;
    return status;
}

int mbd_solve(const mbd_model *model, mbd_work *work, const double *qd, const double *tau,
              double *qdd)
{
    const int status = require_solve_phase(model, work, MBD_ACCELERATION);
    const mbd_solve_call call = {.form = MBD_ACCELERATION, .in = qd, .tau = tau, .out = qdd};
    return status ? status : solve(model, work, &call);
}

int mbd_solve_momentum(const mbd_model *model, mbd_work *work, const double *p, const double *tau,
                       double *qd, double *pd)
{
    const int status = require_solve_phase(model, work, MBD_MOMENTUM);
    const mbd_solve_call call = {.form = MBD_MOMENTUM, .in = p, .tau = tau, .out = qd, .rate = pd};
    return status ? status : solve(model, work, &call);
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
    const int takes_q = solve_takes_q(model, work->solver);
    if (!model->has_passive) /* start_kinematics checks q for a plugin too */
        status = takes_q ? start_kinematics(model, work, q) : mbd_kinematics(model, work, q);
    const mbd_solve_call call = {
        .form = MBD_ACCELERATION, .q = takes_q ? q : NULL, .in = qd, .tau = tau, .out = qdd};
    return status ? status : solve(model, work, &call);
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
    const int takes_q = solve_takes_q(model, work->solver);
    status = takes_q ? start_kinematics(model, work, q) : mbd_kinematics(model, work, q);
    const mbd_solve_call call = {
        .form = MBD_MOMENTUM, .q = takes_q ? q : NULL, .in = p, .tau = tau, .out = qd, .rate = pd};
    if (status == MBD_OK)
        status = solve(model, work, &call);
    return status == MBD_OK && model->has_passive ? add_passive_rate(model, work, q, qd, pd)
                                                  : status;
}
