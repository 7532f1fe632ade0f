/* integrate.c: time integration of the equations of motion with SUNDIALS (6.4).
 *
 * rk4 runs on ARKODE's ARKStep with the classic table given explicitly. It cannot run on
 * ERKStep: up to SUNDIALS 6.6 ERKStep takes every table whose last node is c_s = 1 for
 * first-same-as-last and reuses the last stage's slope as the next step's first one,
 * which silently breaks classic RK4 (llnl/sundials issue #311, fixed in 6.7.0).
 * Dormand-Prince is first-same-as-last indeed and stays on ERKStep, which exploits it
 * (6 evaluations per step, ARKStep takes 7). adams is CVODE's Adams-Moulton with
 * fixed-point iteration: the non-stiff pairing, no Jacobian and no linear solver.
 *
 * The state is y = (q, qd) or (q, p), with q' = G(q) qd (mbd_position_rates): qd itself
 * except for spherical and free joints, whose quaternion moves as 1/2 quat (0, w).
 * Keeping the quaternion on the unit sphere: that rate is tangent to the sphere, so |quat|
 * is constant along the exact solution and drifts only by the integrator's error; and
 * nothing else in the equations depends on |quat| (the rotation is formed from
 * quat / |quat| and the rate is linear in quat), so the drift does not change the motion:
 * the equations are invariant under quat -> c quat (tests/test_joints.c checks both). The
 * reported states carry quat / |quat|: unit to rounding, whatever the drift. States at
 * sample times come from each integrator's dense output (ARKODE's Hermite interpolant, CVODE's Nordsieck
 * history), so the steps taken, and the counts, do not depend on the sampling; t1 is a
 * stop time, so the last state is that of a step.
 */
#include "mbd.h"
#include "spatial/spatial.h"

#include <arkode/arkode_arkstep.h>
#include <arkode/arkode_erkstep.h>
#include <cvode/cvode.h>
#include <math.h>
#include <nvector/nvector_serial.h>
#include <stdlib.h>
#include <string.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

/* SUNDIALS allows 500 steps per call by default; one sample interval may need many more.
 * Runaway step-size collapse is still caught by the integrators' own tests. */
#define MAX_STEPS_PER_CALL 100000000L
/* More samples than this would mean a sample interval at the rounding level of t1. */
#define MAX_SAMPLES 1e12

/* The run loop speaks ARKODE's task and return codes to CVODE too. */
_Static_assert(ARK_NORMAL == CV_NORMAL && ARK_ONE_STEP == CV_ONE_STEP &&
                   ARK_TSTOP_RETURN == CV_TSTOP_RETURN && ARK_SUCCESS == CV_SUCCESS,
               "ARKODE and CVODE task and return codes differ");

typedef struct {
    const mbd_model *model;
    mbd_work *work;
    const mbd_sim_options *opt;
    int nq, nv;     /* y = (q, v), v = qd or p */
    int rhs_status; /* the solver's status in the latest right-hand side */
    SUNContext sun;
    N_Vector y;
    SUNNonlinearSolver nls; /* adams only */
    void *mem;              /* the SUNDIALS integrator */
    double *qd, *pd;        /* momentum formulation: the rates at a reported state */
    double *q;              /* (nq) the reported q, quaternions normalized */
    int m;                  /* loop equations */
    double *phi;            /* (2 m) Phi and dPhi/dt at a reported state */
    double energy0, max_kinetic, max_energy_change;
    mbd_sim_callback callback;
    void *ctx;
    mbd_sim_stats stats;
} simulation;

/* One SUNDIALS integrator. Past create, ERKStep's, ARKStep's and CVODE's functions share
 * their signatures, so the run loop needs no case for each. */
typedef struct {
    const char *name;
    void *(*create)(simulation *sim); /* integrator with method and tolerances set */
    int (*set_user_data)(void *mem, void *data);
    int (*set_max_steps)(void *mem, long steps);
    int (*set_error_handler)(void *mem, ARKErrHandlerFn handler, void *data);
    int (*set_stop_time)(void *mem, sunrealtype tstop);
    int (*evolve)(void *mem, sunrealtype tout, N_Vector y, sunrealtype *t, int task);
    void (*counters)(void *mem, mbd_sim_stats *stats);
    void (*free)(void **mem);
} integrator_ops;

static int rhs(sunrealtype t, N_Vector y, N_Vector ydot, void *data)
{
    (void)t; /* free motion: the equations do not depend on time */
    simulation *sim = data;
    const int nq = sim->nq;
    const double *x = N_VGetArrayPointer(y);
    double *dx = N_VGetArrayPointer(ydot);
    const double *qd = x + nq;
    if (sim->opt->formulation == MBD_ACCELERATION) {
        sim->rhs_status = mbd_forward_constrained(sim->model, sim->work, x, qd, NULL,
                                                  &sim->opt->baumgarte, dx + nq, NULL);
    } else {
        sim->rhs_status =
            mbd_forward_momentum(sim->model, sim->work, x, x + nq, NULL, sim->qd, dx + nq);
        qd = sim->qd;
    }
    if (sim->rhs_status == MBD_OK)
        sim->rhs_status = mbd_position_rates(sim->model, x, qd, dx);
    return sim->rhs_status == MBD_OK ? 0 : -1; /* negative: unrecoverable, stop at once */
}

/* SUNDIALS prints its errors to stderr; the caller gets a status instead. */
static void silent(int code, const char *module, const char *function, char *msg, void *data)
{
    (void)code, (void)module, (void)function, (void)msg, (void)data;
}

static void *create_rk4(simulation *sim)
{
    sunrealtype c[4] = {0.0, 0.5, 0.5, 1.0};
    sunrealtype A[4 * 4] = {0.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0,
                            0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0};
    sunrealtype b[4] = {1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0};
    ARKodeButcherTable table = ARKodeButcherTable_Create(4, 4, 0, c, A, b, NULL);
    void *mem = table ? ARKStepCreate(rhs, NULL, 0.0, sim->y, sim->sun) : NULL;
    if (mem && (ARKStepSetTables(mem, 4, 0, NULL, table) != ARK_SUCCESS ||
                ARKStepSetFixedStep(mem, sim->opt->dt) != ARK_SUCCESS))
        ARKStepFree(&mem);
    ARKodeButcherTable_Free(table); /* ARKStep keeps its own copy */
    return mem;
}

static void *create_dopri5(simulation *sim)
{
    void *mem = ERKStepCreate(rhs, 0.0, sim->y, sim->sun);
    if (mem && (ERKStepSetTableNum(mem, ARKODE_DORMAND_PRINCE_7_4_5) != ARK_SUCCESS ||
                ERKStepSStolerances(mem, sim->opt->rtol, sim->opt->atol) != ARK_SUCCESS))
        ERKStepFree(&mem);
    return mem;
}

static void *create_adams(simulation *sim)
{
    void *mem = CVodeCreate(CV_ADAMS, sim->sun);
    sim->nls = SUNNonlinSol_FixedPoint(sim->y, 0, sim->sun);
    if (mem && (!sim->nls || CVodeInit(mem, rhs, 0.0, sim->y) != CV_SUCCESS ||
                CVodeSStolerances(mem, sim->opt->rtol, sim->opt->atol) != CV_SUCCESS ||
                CVodeSetNonlinearSolver(mem, sim->nls) != CV_SUCCESS))
        CVodeFree(&mem);
    return mem;
}

static void arkstep_counters(void *mem, mbd_sim_stats *stats)
{
    long implicit_evals;
    ARKStepGetNumSteps(mem, &stats->steps);
    ARKStepGetNumErrTestFails(mem, &stats->rejected);
    ARKStepGetNumRhsEvals(mem, &stats->rhs_evals, &implicit_evals);
}

static void erkstep_counters(void *mem, mbd_sim_stats *stats)
{
    ERKStepGetNumSteps(mem, &stats->steps);
    ERKStepGetNumErrTestFails(mem, &stats->rejected);
    ERKStepGetNumRhsEvals(mem, &stats->rhs_evals);
}

/* A step whose fixed-point iteration fails to converge is retried, like a failed error
 * test: both count as rejected. */
static void cvode_counters(void *mem, mbd_sim_stats *stats)
{
    long convergence_failures;
    CVodeGetNumSteps(mem, &stats->steps);
    CVodeGetNumErrTestFails(mem, &stats->rejected);
    CVodeGetNumNonlinSolvConvFails(mem, &convergence_failures);
    stats->rejected += convergence_failures;
    CVodeGetNumRhsEvals(mem, &stats->rhs_evals);
}

static const integrator_ops integrators[MBD_INTEGRATOR_COUNT] = {
    [MBD_RK4] = {"rk4", create_rk4, ARKStepSetUserData, ARKStepSetMaxNumSteps,
                 ARKStepSetErrHandlerFn, ARKStepSetStopTime, ARKStepEvolve, arkstep_counters,
                 ARKStepFree},
    [MBD_DOPRI5] = {"dopri5", create_dopri5, ERKStepSetUserData, ERKStepSetMaxNumSteps,
                    ERKStepSetErrHandlerFn, ERKStepSetStopTime, ERKStepEvolve, erkstep_counters,
                    ERKStepFree},
    [MBD_ADAMS] = {"adams", create_adams, CVodeSetUserData, CVodeSetMaxNumSteps,
                   CVodeSetErrHandlerFn, CVodeSetStopTime, CVode, cvode_counters, CVodeFree},
};

const char *mbd_integrator_name(mbd_integrator integrator)
{
    return (unsigned)integrator < MBD_INTEGRATOR_COUNT ? integrators[integrator].name : NULL;
}

int mbd_integrator_find(const char *name)
{
    for (int k = 0; k < MBD_INTEGRATOR_COUNT; k++)
        if (strcmp(integrators[k].name, name) == 0)
            return k;
    return -1;
}

static int positive(double x) { return x > 0.0 && isfinite(x); }

static int check_options(const mbd_model *model, const mbd_solver *solver,
                         const mbd_sim_options *opt)
{
    if (!model || !solver || !opt || (unsigned)opt->integrator >= MBD_INTEGRATOR_COUNT ||
        (opt->formulation != MBD_ACCELERATION && opt->formulation != MBD_MOMENTUM))
        return MBD_EINVAL;
    const int steps_ok =
        opt->integrator == MBD_RK4 ? positive(opt->dt) : positive(opt->rtol) && positive(opt->atol);
    const int sample_ok =
        opt->sample == 0.0 || (positive(opt->sample) && opt->t1 / opt->sample <= MAX_SAMPLES);
    if (!positive(opt->t1) || !steps_ok || !sample_ok)
        return MBD_EINVAL;
    if (!isfinite(opt->baumgarte.alpha) || !isfinite(opt->baumgarte.beta))
        return MBD_EINVAL;
    const int loops = mbd_model_nloops(model) > 0;
    if (!(mbd_solver_formulations(solver) & opt->formulation) ||
        (loops && (opt->formulation != MBD_ACCELERATION || !mbd_solver_closes_loops(solver))))
        return MBD_EUNSUPPORTED;
    return MBD_OK;
}

/* Drift is measured against the larger of |E(0)| and the largest kinetic energy: the
 * potential's zero is arbitrary, so E(0) alone may be near zero for a moving system. */
static void track_energy(simulation *sim, const mbd_sim_state *state)
{
    const double energy = state->kinetic + state->potential;
    if (sim->stats.reported == 0)
        sim->energy0 = energy;
    sim->max_kinetic = fmax(sim->max_kinetic, state->kinetic);
    sim->max_energy_change = fmax(sim->max_energy_change, fabs(energy - sim->energy0));
    const double scale = fmax(fabs(sim->energy0), sim->max_kinetic);
    sim->stats.energy_drift = scale > 0.0 ? sim->max_energy_change / scale : 0.0;
}

/* Hands the current state to the callback, with qd recovered from p in the momentum
 * formulation and the energies. */
static int report(simulation *sim, double t)
{
    const int nq = sim->nq, momentum = sim->opt->formulation == MBD_MOMENTUM;
    const double *x = N_VGetArrayPointer(sim->y);
    mbd_sim_state state = {.t = t, .q = sim->q, .qd = x + nq, .p = momentum ? x + nq : NULL};
    memcpy(sim->q, x, (size_t)nq * sizeof *sim->q);
    int status = mbd_normalize_positions(sim->model, sim->q);
    if (status == MBD_OK && momentum) {
        status = mbd_forward_momentum(sim->model, sim->work, x, x + nq, NULL, sim->qd, sim->pd);
        state.qd = sim->qd;
    }
    if (status == MBD_OK)
        status =
            mbd_energy(sim->model, sim->work, state.q, state.qd, &state.kinetic, &state.potential);
    if (status == MBD_OK && sim->m > 0) {
        status = mbd_constraint_violation(sim->model, sim->work, state.q, state.qd, sim->phi,
                                          sim->phi + sim->m);
        state.phi_norm = vector_norm(sim->phi, sim->m);
        state.phid_norm = vector_norm(sim->phi + sim->m, sim->m);
        sim->stats.max_phi_norm = fmax(sim->stats.max_phi_norm, state.phi_norm);
    }
    if (status)
        return status;
    track_energy(sim, &state);
    sim->stats.reported++;
    sim->stats.t = t;
    return sim->callback ? sim->callback(&state, sim->ctx) : MBD_OK;
}

/* Intervals of length sample, the last one possibly shorter; a t1 within rounding of a
 * multiple of sample counts as that multiple. */
static long sample_count(const mbd_sim_options *opt)
{
    return opt->sample > 0.0 ? (long)ceil(opt->t1 / opt->sample * (1.0 - 1e-12)) : 1;
}

/* Steps to t1, the only stop time, reporting either at each sample time, interpolated
 * by the integrator's dense output, or after every step. */
static int run(simulation *sim, const integrator_ops *ops)
{
    const long samples = sample_count(sim->opt);
    const int task = sim->opt->sample > 0.0 ? ARK_NORMAL : ARK_ONE_STEP;
    if (ops->set_stop_time(sim->mem, sim->opt->t1) != ARK_SUCCESS)
        return MBD_EINTEGRATE;
    for (long k = 1; k <= samples; k++) {
        const double tout = k == samples ? sim->opt->t1 : (double)k * sim->opt->sample;
        int reached;
        do {
            sunrealtype t = sim->stats.t;
            const int flag = ops->evolve(sim->mem, tout, sim->y, &t, task);
            if (flag < 0) {
                sim->stats.t = t;
                return sim->rhs_status != MBD_OK ? sim->rhs_status : MBD_EINTEGRATE;
            }
            reached = task == ARK_NORMAL || flag == ARK_TSTOP_RETURN;
            const int status = report(sim, reached ? tout : t);
            if (status)
                return status;
        } while (!reached);
    }
    return MBD_OK;
}

/* Everything but the integrator, and the initial state y(0) = (q0, qd0 or p0). */
static int prepare(simulation *sim, const mbd_solver *solver, const double *q0, const double *qd0)
{
    const size_t nq = (size_t)sim->nq, nv = (size_t)sim->nv;
    mbd_work_new(sim->model, solver, &sim->work);
    sim->m = mbd_model_nconstraints(sim->model);
    sim->qd = malloc((2 * nv + nq + 2 * (size_t)sim->m) * sizeof *sim->qd);
    if (!sim->work || !sim->qd || SUNContext_Create(NULL, &sim->sun) != 0)
        return MBD_ENOMEM;
    sim->pd = sim->qd + nv;
    sim->q = sim->pd + nv;
    sim->phi = sim->q + nq;
    sim->y = N_VNew_Serial((sunindextype)(nq + nv), sim->sun);
    if (!sim->y)
        return MBD_ENOMEM;
    double *x = N_VGetArrayPointer(sim->y);
    memcpy(x, q0, nq * sizeof *x);
    int status = mbd_normalize_positions(sim->model, x);
    if (status)
        return status;
    if (sim->opt->formulation == MBD_MOMENTUM)
        return mbd_momentum(sim->model, sim->work, x, qd0, x + nq);
    memcpy(x + nq, qd0, nv * sizeof *x);
    return MBD_OK;
}

/* Creation fails only for want of memory: the options were checked before. */
static int start(simulation *sim, const integrator_ops *ops)
{
    sim->mem = ops->create(sim);
    if (!sim->mem || ops->set_user_data(sim->mem, sim) != ARK_SUCCESS ||
        ops->set_max_steps(sim->mem, MAX_STEPS_PER_CALL) != ARK_SUCCESS ||
        ops->set_error_handler(sim->mem, silent, NULL) != ARK_SUCCESS)
        return MBD_ENOMEM;
    return MBD_OK;
}

static void finish(simulation *sim, const integrator_ops *ops)
{
    if (sim->mem) {
        ops->counters(sim->mem, &sim->stats);
        ops->free(&sim->mem);
    }
    if (sim->nls)
        SUNNonlinSolFree(sim->nls);
    if (sim->y)
        N_VDestroy(sim->y);
    if (sim->sun)
        SUNContext_Free(&sim->sun);
    free(sim->qd);
    if (sim->work)
        sim->stats.failed_body = mbd_work_failed_body(sim->work);
    mbd_work_free(sim->work);
}

int mbd_simulate(const mbd_model *model, const mbd_solver *solver, const mbd_sim_options *options,
                 const double *q0, const double *qd0, mbd_sim_callback callback, void *ctx,
                 mbd_sim_stats *stats)
{
    simulation sim = {.model = model,
                      .opt = options,
                      .callback = callback,
                      .ctx = ctx,
                      .stats = {.failed_body = -1}};
    int status = check_options(model, solver, options);
    if (status == MBD_OK) {
        const integrator_ops *ops = &integrators[options->integrator];
        sim.nq = mbd_model_nq(model);
        sim.nv = mbd_model_nv(model);
        status = prepare(&sim, solver, q0, qd0);
        if (status == MBD_OK)
            status = report(&sim, 0.0);
        if (status == MBD_OK)
            status = start(&sim, ops);
        if (status == MBD_OK)
            status = run(&sim, ops);
        finish(&sim, ops);
    }
    if (stats)
        *stats = sim.stats;
    return status;
}
