/* cmd_derivatives.c: mbd derivatives MODEL, the derivatives of the forward dynamics
 * qdd = FD(q, qd, tau) by one method of the library's table (plugins' methods included). */
#include "cli.h"
#include "mbd_plugin.h"

#include <stdlib.h>
#include <string.h>

/* The plugin solver that a method differentiates, which its name names (plugins' methods
 * take their solvers' names, which no built-in method has), else NULL. */
static const mbd_solver *plugin_of(const mbd_derivatives_method *method)
{
    const mbd_solver *solver = mbd_solver_find(mbd_derivatives_method_name(method));
    return solver && mbd_solver_plugin_path(solver) ? solver : NULL;
}

static void print_methods(void)
{
    fprintf(stderr, " (one of:");
    for (int k = 0; k < mbd_derivatives_method_count(); k++)
        fprintf(stderr, " %s", mbd_derivatives_method_name(mbd_derivatives_method_at(k)));
    fprintf(stderr, ")\n");
}

/* The method: the one --method names; else the derivatives of the solver --solver names
 * (a plugin solver's own method, "automatic" of a built-in); else the table's first. NULL
 * after reporting a name that the table lacks or a plugin solver without derivatives. */
static const mbd_derivatives_method *method_of(const char *cmd, const cli_flag *flags,
                                               const mbd_solver *solver)
{
    const char *name = cli_get(flags, "--method");
    if (!name && cli_get(flags, "--solver"))
        name = mbd_solver_plugin_path(solver) ? mbd_solver_name(solver) : "automatic";
    const mbd_derivatives_method *method =
        name ? mbd_derivatives_method_find(name) : mbd_derivatives_method_at(0);
    if (method)
        return method;
    if (cli_get(flags, "--method")) {
        fprintf(stderr, "mbd %s: --method: unknown method '%.60s'", cmd, name);
        print_methods();
    } else {
        fprintf(stderr,
                "mbd %s: --solver: plugin solver '%s' (%s) has no derivatives of its "
                "own (no forward_derivatives); name a method with --method",
                cmd, name, mbd_solver_plugin_path(solver));
        print_methods();
    }
    return NULL;
}

/* --solver chooses what "automatic" differentiates, and may name the plugin solver whose
 * method is asked for; the other methods use bodies (a plugin's method, its plugin's
 * solver) whatever it names, so it is refused for them rather than silently ignored. */
static int check_solver_flag(const char *cmd, const cli_flag *flags,
                             const mbd_derivatives_method *method, const mbd_solver *solver)
{
    if (!cli_get(flags, "--solver") ||
        strcmp(mbd_derivatives_method_name(method), "automatic") == 0 ||
        plugin_of(method) == solver)
        return 0;
    fprintf(stderr,
            "mbd %s: --solver: method '%s' does not take a solver (only 'automatic' "
            "differentiates the one named)\n",
            cmd, mbd_derivatives_method_name(method));
    return CLI_USAGE_ERROR;
}

/* Computes and prints the three matrices; buf holds nq + 2 nv + 3 nv^2 doubles. */
static int run_derivatives(const char *cmd, const mbd_model *model, const mbd_solver *solver,
                           const mbd_derivatives_method *method, const cli_flag *flags, double *buf)
{
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
    const size_t nn = (size_t)nv * (size_t)nv;
    double *q = buf, *qd = q + nq, *tau = qd + nv, *dq = tau + nv, *dqd = dq + nn, *dtau = dqd + nn;
    int rc;
    if ((rc = cli_positions(cmd, flags, "--q", model, q)) ||
        (rc = cli_vector(cmd, flags, "--qd", nv, qd)) ||
        (rc = cli_vector(cmd, flags, "--tau", nv, tau)))
        return rc;
    mbd_work *work;
    mbd_work_new(model, solver, &work);
    if (!work)
        return cli_fail(cmd, "workspace", MBD_ENOMEM);
    const int status = mbd_forward_derivatives(model, work, q, qd, tau, method, dq, dqd, dtau);
    if (status == MBD_EUNSUPPORTED) {
        fprintf(stderr, "mbd %s: --solver: method '%s' cannot differentiate solver '%s'\n", cmd,
                mbd_derivatives_method_name(method), mbd_solver_name(solver));
        rc = CLI_USAGE_ERROR;
    } else if (status) {
        rc = cli_fail_solve(cmd, mbd_derivatives_method_name(method), model,
                            mbd_work_failed_body(work), status);
    }
    mbd_work_free(work);
    if (rc || (rc = cli_check_finite(cmd, "dqdd_dq", dq, nn)) ||
        (rc = cli_check_finite(cmd, "dqdd_dqd", dqd, nn)) ||
        (rc = cli_check_finite(cmd, "dqdd_dtau", dtau, nn)))
        return rc;
    const int json = cli_get(flags, "--json") != NULL;
    printf(json ? "{\"method\": \"%s\", " : "method = %s\n", mbd_derivatives_method_name(method));
    cli_print_matrix("dqdd_dq", dq, nv, json, 0);
    cli_print_matrix("dqdd_dqd", dqd, nv, json, 0);
    cli_print_matrix("dqdd_dtau", dtau, nv, json, 1);
    printf(json ? "}\n" : "");
    return 0;
}

int cmd_derivatives(const char *cmd, int argc, char **argv)
{
    cli_flag flags[] = {FLAG("--method"), FLAG("--solver"), FLAG("--q"),       FLAG("--qd"),
                        FLAG("--tau"),    SWITCH("--json"), CLI_FLOATING_BASE, END_FLAGS};
    mbd_model *model;
    int rc = cli_open_model(cmd, argc, argv, flags, &model);
    if (rc)
        return rc;
    const mbd_solver *solver = cli_solver(cmd, flags, "bodies");
    const mbd_derivatives_method *method = solver ? method_of(cmd, flags, solver) : NULL;
    if (method && !cli_get(flags, "--solver") && plugin_of(method))
        solver = plugin_of(method); /* the method runs in its own solver's work */
    const size_t nv = (size_t)mbd_model_nv(model);
    double *buf = malloc(sizeof(double) * ((size_t)mbd_model_nq(model) + 2 * nv + 3 * nv * nv));
    if (!method || check_solver_flag(cmd, flags, method, solver))
        rc = CLI_USAGE_ERROR;
    else if (!buf)
        rc = cli_fail(cmd, "allocation", MBD_ENOMEM);
    else if (!(rc = cli_check_derivatives_model(cmd, model)))
        rc = run_derivatives(cmd, model, solver, method, flags, buf);
    free(buf);
    mbd_model_free(model);
    return rc;
}
