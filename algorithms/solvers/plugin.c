/* plugin.c: solvers from plugin libraries (mbd_plugin.h): the registry that the solver
 * table continues into (plugins/load.c loads and checks a library's table), and the
 * one-state calls. */
#include "solvers/solvers.h"

#include <stdlib.h>
#include <string.h>

/* The plugin solvers in the order loaded, and the derivatives methods of those that have
 * forward_derivatives; each lives until the process ends. */
static mbd_solver **registry;
static int registry_count;
static mbd_derivatives_method **methods;
static int method_count;

int plugin_solver_count(void) { return registry_count; }

const mbd_solver *plugin_solver_at(int index)
{
    return index >= 0 && index < registry_count ? registry[index] : NULL;
}

int plugin_method_count(void) { return method_count; }

const mbd_derivatives_method *plugin_method_at(int index)
{
    return index >= 0 && index < method_count ? methods[index] : NULL;
}

const char *mbd_solver_plugin_path(const mbd_solver *solver) { return solver->plugin_path; }

/* What the host returns for a plugin's status and outputs (those not NULL, size doubles
 * each): a code that is not an mbd status is MBD_EINVAL, a NaN or Inf MBD_ENONFINITE. */
static int plugin_status(int status, double *const *outputs, int count, size_t size)
{
    if (status > 0 || status < -31) /* not an mbd status: the batch's statuses lie in -31..0 */
        return MBD_EINVAL;
    for (int k = 0; status == MBD_OK && k < count; k++)
        if (outputs[k] && check_finite(outputs[k], (int)size))
            status = MBD_ENONFINITE;
    return status;
}

/* The solve of a plugin's row (SOLVER_NEEDS_Q: mbd_forward's alone), after the checks of
 * every solve: the plugin's call, then its result. */
static int plugin_solve(const mbd_model *model, mbd_work *work, const mbd_solve_call *call)
{
    if (model->has_friction)
        return MBD_EUNSUPPORTED;
    const int status = work->solver->plugin->forward(model, work->plugin_work, call->q, call->in,
                                                     call->tau, call->out);
    return plugin_status(status, (double *const[]){call->out}, 1, (size_t)model->nv);
}

int plugin_register(const mbd_plugin_solver *entries, int count, const char *path)
{
    mbd_solver **grown = realloc(registry, (size_t)(registry_count + count) * sizeof *grown);
    if (grown)
        registry = grown;
    mbd_derivatives_method **grown_methods =
        realloc(methods, (size_t)(method_count + count) * sizeof *grown_methods);
    if (grown_methods)
        methods = grown_methods;
    mbd_solver *solvers = calloc((size_t)count, sizeof *solvers);
    mbd_derivatives_method *own_methods = calloc((size_t)count, sizeof *own_methods);
    char *path_copy = strdup(path);
    if (!grown || !grown_methods || !solvers || !own_methods || !path_copy) {
        free(solvers);
        free(own_methods);
        free(path_copy);
        return MBD_ENOMEM;
    }
    int with_derivatives = 0;
    for (int k = 0; k < count; k++) {
        solvers[k] = (mbd_solver){.name = entries[k].name,
                                  .summary = entries[k].summary,
                                  .forms = MBD_ACCELERATION,
                                  .features = SOLVER_NEEDS_Q,
                                  .solve = plugin_solve,
                                  .plugin = &entries[k],
                                  .plugin_path = path_copy};
        registry[registry_count++] = &solvers[k];
        if (entries[k].forward_derivatives) {
            own_methods[k] = (mbd_derivatives_method){
                .name = entries[k].name, .summary = entries[k].summary, .plugin = &solvers[k]};
            methods[method_count++] = &own_methods[k];
            with_derivatives++;
        }
    }
    if (!with_derivatives) /* nothing points into it */
        free(own_methods);
    return MBD_OK;
}

void plugin_derivative_work_free(mbd_work *work)
{
    if (work->derivative_plugin_work)
        work->derivative_plugin->plugin->work_free(work->derivative_plugin_work);
    work->derivative_plugin_work = NULL;
    work->derivative_plugin = NULL;
}

/* The plugin's work for solver's derivatives on this work: its own where the work is that
 * solver's, else one made on first use and kept (as the derivatives' scratch is) until a
 * call of another plugin's method; NULL if work_new fails. */
static void *derivative_work(mbd_work *work, const mbd_solver *solver)
{
    if (work->solver == solver)
        return work->plugin_work;
    if (work->derivative_plugin != solver) {
        plugin_derivative_work_free(work);
        if ((work->derivative_plugin_work = solver->plugin->work_new(work->model)))
            work->derivative_plugin = solver;
    }
    return work->derivative_plugin_work;
}

int plugin_forward_derivatives(const mbd_model *model, mbd_work *work, const mbd_solver *solver,
                               const double *q, const double *qd, const double *tau,
                               double *dqdd_dq, double *dqdd_dqd, double *dqdd_dtau)
{
    int status = start_kinematics(model, work, q); /* checks q, as for forward */
    if (status)
        return status;
    void *plugin_work = derivative_work(work, solver);
    if (!plugin_work)
        return MBD_ENOMEM;
    status = solver->plugin->forward_derivatives(model, plugin_work, q, qd, tau, dqdd_dq, dqdd_dqd,
                                                 dqdd_dtau);
    const size_t nv = (size_t)model->nv;
    return plugin_status(status, (double *const[]){dqdd_dq, dqdd_dqd, dqdd_dtau}, 3, nv * nv);
}
