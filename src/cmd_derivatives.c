/* cmd_derivatives.c: mbd derivatives MODEL, the derivatives of the forward dynamics
 * qdd = FD(q, qd, tau) by one method of the library's table. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* The method that --method names, else the table's first; NULL after reporting a name
 * that the table lacks. */
static const mbd_derivatives_method *method_of(const char *cmd, const cli_flag *flags)
{
    const char *name = cli_get(flags, "--method");
    const mbd_derivatives_method *method =
        name ? mbd_derivatives_method_find(name) : mbd_derivatives_method_at(0);
    if (!method) {
        fprintf(stderr, "mbd %s: --method: unknown method '%.60s' (one of:", cmd, name);
        for (int k = 0; k < mbd_derivatives_method_count(); k++)
            fprintf(stderr, " %s", mbd_derivatives_method_name(mbd_derivatives_method_at(k)));
        fprintf(stderr, ")\n");
    }
    return method;
}

/* --solver chooses what "automatic" differentiates; the other methods use bodies whatever
 * it names, so it is refused for them rather than silently ignored. */
static int check_solver_flag(const char *cmd, const cli_flag *flags,
                             const mbd_derivatives_method *method)
{
    if (!cli_get(flags, "--solver") || strcmp(mbd_derivatives_method_name(method), "automatic") == 0)
        return 0;
    fprintf(stderr, "mbd %s: --solver: method '%s' does not take a solver (only 'automatic' "
            "differentiates the one named)\n", cmd, mbd_derivatives_method_name(method));
    return CLI_USAGE_ERROR;
}

/* Computes and prints the three matrices; buf holds nq + 2 nv + 3 nv^2 doubles. */
static int run_derivatives(const char *cmd, const mbd_model *model, const mbd_solver *solver,
                           const mbd_derivatives_method *method, const cli_flag *flags,
                           double *buf)
{
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
    const size_t nn = (size_t)nv * (size_t)nv;
    double *q = buf, *qd = q + nq, *tau = qd + nv, *dq = tau + nv, *dqd = dq + nn, *dtau = dqd + nn;
    int rc;
    if ((rc = cli_positions(cmd, flags, "--q", model, q)) || (rc = cli_vector(cmd, flags, "--qd", nv, qd)) ||
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
    cli_flag flags[] = {FLAG("--method"), FLAG("--solver"), FLAG("--q"), FLAG("--qd"),
                        FLAG("--tau"), SWITCH("--json"), CLI_FLOATING_BASE, END_FLAGS};
    mbd_model *model;
    int rc = cli_open_model(cmd, argc, argv, flags, &model);
    if (rc)
        return rc;
    const mbd_derivatives_method *method = method_of(cmd, flags);
    const mbd_solver *solver = method ? cli_solver(cmd, flags, "bodies") : NULL;
    const size_t nv = (size_t)mbd_model_nv(model);
    double *buf = malloc(sizeof(double) * ((size_t)mbd_model_nq(model) + 2 * nv + 3 * nv * nv));
    if (!solver || check_solver_flag(cmd, flags, method))
        rc = CLI_USAGE_ERROR;
    else if (!buf)
        rc = cli_fail(cmd, "allocation", MBD_ENOMEM);
    else if (!(rc = cli_check_derivatives_model(cmd, model)))
        rc = run_derivatives(cmd, model, solver, method, flags, buf);
    free(buf);
    mbd_model_free(model);
    return rc;
}
