/* cmd_fd.c: mbd fd MODEL, the forward dynamics of one state with one solver. */
#include "cli.h"

#include <stdlib.h>

/* Acceleration solvers print qdd; momentum solvers print p = H qd (from --qd) or the given
 * --p, their own recovery qd of the rates, and pd. */
static int run_fd(const char *cmd, const mbd_model *model, const mbd_solver *solver,
                  const cli_flag *flags, double *buf)
{
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
    double *q = buf, *qd = q + nq, *p = qd + nv, *tau = p + nv, *out = tau + nv, *pd = out + nv;
    const int momentum = !(mbd_solver_formulations(solver) & MBD_ACCELERATION);
    int rc;
    if (cli_get(flags, "--p") && !momentum) {
        fprintf(stderr, "mbd %s: --p: solver '%s' takes --qd, not momenta\n", cmd,
                mbd_solver_name(solver));
        return CLI_USAGE_ERROR;
    }
    if (cli_get(flags, "--p") && cli_get(flags, "--qd")) {
        fprintf(stderr, "mbd %s: give --qd or --p, not both\n", cmd);
        return CLI_USAGE_ERROR;
    }
    if ((rc = cli_positions(cmd, flags, "--q", model, q)) ||
        (rc = cli_vector(cmd, flags, "--qd", nv, qd)) ||
        (rc = cli_vector(cmd, flags, "--p", nv, p)) ||
        (rc = cli_vector(cmd, flags, "--tau", nv, tau)))
        return rc;
    mbd_work *work;
    mbd_work_new(model, solver, &work);
    if (!work)
        return cli_fail(cmd, "workspace", MBD_ENOMEM);
    int status = MBD_OK;
    if (momentum && !cli_get(flags, "--p"))
        status = mbd_momentum(model, work, q, qd, p);
    if (status == MBD_OK)
        status = momentum ? mbd_forward_momentum(model, work, q, p, tau, out, pd)
                          : mbd_forward(model, work, q, qd, tau, out);
    const int iterations = mbd_work_friction_iterations(work);
    if (status)
        rc =
            cli_fail_solve(cmd, mbd_solver_name(solver), model, mbd_work_failed_body(work), status);
    mbd_work_free(work);
    if (status)
        return rc;
    printf("{");
    if (momentum) {
        json_key_vector(stdout, "p", p, nv, 0);
        json_key_vector(stdout, "qd", out, nv, 0);
        json_key_vector(stdout, "pd", pd, nv, 1);
    } else {
        json_key_vector(stdout, "qdd", out, nv, 1);
    }
    if (mbd_model_has_friction(model))
        printf(", \"friction_iterations\": %d", iterations);
    printf("}\n");
    return 0;
}

/* {"qdd", "lambda", "loops": [{"name", "wrench"}]} of a model with loops. */
static int run_fd_loops(const char *cmd, const mbd_model *model, const mbd_solver *solver,
                        const cli_flag *flags)
{
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model), m = mbd_model_nconstraints(model);
    const int nloops = mbd_model_nloops(model);
    mbd_baumgarte stab;
    int rc = cli_check_loop_solver(cmd, model, solver);
    if (!rc && cli_get(flags, "--p")) {
        fprintf(stderr, "mbd %s: --p: a model with loops takes --qd, not momenta\n", cmd);
        rc = CLI_USAGE_ERROR;
    }
    if (rc || (rc = cli_baumgarte(cmd, flags, model, &stab)))
        return rc;
    double *q =
        malloc(sizeof(double) * ((size_t)nq + 3 * (size_t)nv + (size_t)m + 6 * (size_t)nloops));
    double *qd = q + nq, *tau = qd + nv, *qdd = tau + nv, *lambda = qdd + nv, *wrench = lambda + m;
    mbd_work *work = NULL;
    if (q)
        mbd_work_new(model, solver, &work);
    if (!work)
        rc = cli_fail(cmd, "allocation", MBD_ENOMEM);
    else if (!(rc = cli_positions(cmd, flags, "--q", model, q)) &&
             !(rc = cli_vector(cmd, flags, "--qd", nv, qd)) &&
             !(rc = cli_vector(cmd, flags, "--tau", nv, tau))) {
        int status = mbd_forward_constrained(model, work, q, qd, tau, &stab, qdd, lambda);
        if (status == MBD_OK)
            status = mbd_loop_wrenches(model, work, q, lambda, wrench);
        if (status) {
            rc = cli_fail_solve(cmd, mbd_solver_name(solver), model, mbd_work_failed_body(work),
                                status);
        } else {
            printf("{");
            json_key_vector(stdout, "qdd", qdd, nv, 0);
            json_key_vector(stdout, "lambda", lambda, m, 0);
            printf("\"loops\": [");
            for (int l = 0; l < nloops; l++) {
                printf("%s{\"name\": \"%s\", ", l ? ", " : "", mbd_model_loop(model, l)->name);
                json_key_vector(stdout, "wrench", wrench + 6 * l, 6, 1);
                printf("}");
            }
            printf("]}\n");
        }
    }
    mbd_work_free(work);
    free(q);
    return rc;
}

int cmd_fd(const char *cmd, int argc, char **argv)
{
    cli_flag flags[] = {FLAG("--solver"), FLAG("--q"),         FLAG("--qd"),      FLAG("--p"),
                        FLAG("--tau"),    FLAG("--baumgarte"), CLI_FLOATING_BASE, END_FLAGS};
    mbd_model *model;
    int rc = cli_open_model(cmd, argc, argv, flags, &model);
    if (rc)
        return rc;
    const mbd_solver *solver = cli_solver(cmd, flags, CLI_DEFAULT_SOLVER);
    const int n = mbd_model_nq(model) + 5 * mbd_model_nv(model);
    double *buf = malloc(sizeof(double) * (size_t)n);
    mbd_baumgarte unused;
    if (!solver)
        rc = CLI_USAGE_ERROR;
    else if (mbd_model_nloops(model) > 0)
        rc = run_fd_loops(cmd, model, solver, flags);
    else if (!buf)
        rc = cli_fail(cmd, "allocation", MBD_ENOMEM);
    else if (!(rc = cli_baumgarte(cmd, flags, model, &unused))) /* refuses --baumgarte */
        rc = run_fd(cmd, model, solver, flags, buf);
    free(buf);
    mbd_model_free(model);
    return rc;
}
