/* cmd_simulate.c: mbd simulate, a trajectory of one solver and integrator as CSV. */
#include "cli.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_RTOL 1e-8
#define DEFAULT_ATOL 1e-10
#define MAX_TIME 1e9 /* bound of --t1 and --dt; also keeps the sample count countable */
/* The most steps (t1 / dt) or rows (t1 / sample): a dt of 1e-300 is a mistake to refuse,
 * not to run forever. Python's simulate has the same (python/ext/simulate.c). */
#define MAX_STEPS 1e9

/* The CSV writer and progress display that mbd_simulate calls back for every state. */
typedef struct {
    FILE *out;
    int nq, nv, momentum, loops, tty;
    double t1;
    struct timespec start;
    double next_progress; /* seconds since start */
    int progress_shown;
} trajectory;

static void write_header(FILE *out, const mbd_model *model, int momentum, int loops)
{
    fputs("t", out);
    cli_state_columns(out, model, momentum);
    fputs(loops ? ",kinetic,potential,total,phi_norm,phid_norm\n" : ",kinetic,potential,total\n",
          out);
}

static void write_values(FILE *out, const double *x, int n)
{
    for (int k = 0; k < n; k++)
        fprintf(out, ",%.17g", x[k]);
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t0->tv_sec) + 1e-9 * (double)(now.tv_nsec - t0->tv_nsec);
}

/* Runs longer than a second report where they are about once a second, on one line that
 * a terminal overwrites. */
static void show_progress(trajectory *tr, double t)
{
    if (seconds_since(&tr->start) < tr->next_progress)
        return;
    tr->next_progress += 1.0;
    tr->progress_shown = 1;
    fprintf(stderr, "%smbd simulate: t = %.4g / %g (%.0f%%)%s", tr->tty ? "\r" : "", t, tr->t1,
            100.0 * t / tr->t1, tr->tty ? "" : "\n");
}

/* t to 15 digits, so that sample times read as given (0.3, not 0.30000000000000004). */
static int write_row(const mbd_sim_state *s, void *ctx)
{
    trajectory *tr = ctx;
    fprintf(tr->out, "%.15g", s->t);
    write_values(tr->out, s->q, tr->nq);
    write_values(tr->out, s->qd, tr->nv);
    if (tr->momentum)
        write_values(tr->out, s->p, tr->nv);
    fprintf(tr->out, ",%.17g,%.17g,%.17g", s->kinetic, s->potential, s->kinetic + s->potential);
    if (tr->loops)
        fprintf(tr->out, ",%.17g,%.17g", s->phi_norm, s->phid_norm);
    fputc('\n', tr->out);
    show_progress(tr, s->t);
    return ferror(tr->out) ? MBD_EIO : MBD_OK;
}

static int copy_stream(FILE *out, void *ctx)
{
    FILE *in = ctx;
    char buf[1 << 16];
    size_t n;
    rewind(in);
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            return -1;
    return ferror(in) ? -1 : 0;
}

/* A number flag in (0, max]; def if absent. */
static int positive_number(const char *cmd, const cli_flag *flags, const char *name, double max,
                           double def, double *out)
{
    int rc = cli_number(cmd, flags, name, 0.0, max, def, out);
    if (rc == 0 && !(*out > 0.0)) {
        fprintf(stderr, "mbd %s: %s: expected a positive number, got '%s'\n", cmd, name,
                cli_get(flags, name));
        rc = CLI_USAGE_ERROR;
    }
    return rc;
}

static int missing(const char *cmd, const char *name, const char *what)
{
    fprintf(stderr, "mbd %s: %s: missing (%s)\n", cmd, name, what);
    return CLI_USAGE_ERROR;
}

static int parse_formulation(const char *cmd, const cli_flag *flags, const mbd_solver *solver,
                             mbd_sim_options *opt)
{
    const char *name = cli_get(flags, "--formulation");
    const unsigned offered = mbd_solver_formulations(solver);
    if (!name) {
        opt->formulation = offered & MBD_ACCELERATION ? MBD_ACCELERATION : MBD_MOMENTUM;
        return 0;
    }
    if (strcmp(name, "acceleration") == 0 || strcmp(name, "momentum") == 0)
        opt->formulation = name[0] == 'a' ? MBD_ACCELERATION : MBD_MOMENTUM;
    else {
        fprintf(stderr, "mbd %s: --formulation: expected acceleration or momentum, got '%.60s'\n",
                cmd, name);
        return CLI_USAGE_ERROR;
    }
    if (!(offered & opt->formulation)) {
        fprintf(stderr, "mbd %s: --formulation: solver '%s' does not offer the %s formulation\n",
                cmd, mbd_solver_name(solver), name);
        return CLI_USAGE_ERROR;
    }
    return 0;
}

static int parse_integrator(const char *cmd, const cli_flag *flags, mbd_sim_options *opt)
{
    const char *name = cli_get(flags, "--integrator");
    const int found = name ? mbd_integrator_find(name) : -1;
    if (found >= 0) {
        opt->integrator = (mbd_integrator)found;
        return 0;
    }
    if (name)
        fprintf(stderr, "mbd %s: --integrator: unknown integrator '%.60s' (one of:", cmd, name);
    else
        fprintf(stderr, "mbd %s: --integrator: missing (one of:", cmd);
    for (int k = 0; k < MBD_INTEGRATOR_COUNT; k++)
        fprintf(stderr, " %s", mbd_integrator_name((mbd_integrator)k));
    fprintf(stderr, ")\n");
    return CLI_USAGE_ERROR;
}

/* rk4 takes --dt only; the adaptive integrators take --rtol and --atol only. */
static int parse_step_control(const char *cmd, const cli_flag *flags, mbd_sim_options *opt)
{
    const int fixed = opt->integrator == MBD_RK4;
    const char *misplaced = fixed ? (cli_get(flags, "--rtol")   ? "--rtol"
                                     : cli_get(flags, "--atol") ? "--atol"
                                                                : NULL)
                                  : (cli_get(flags, "--dt") ? "--dt" : NULL);
    if (misplaced) {
        fprintf(stderr, "mbd %s: %s: not for %s, which %s\n", cmd, misplaced,
                mbd_integrator_name(opt->integrator),
                fixed ? "takes a fixed step --dt" : "is adaptive (--rtol, --atol)");
        return CLI_USAGE_ERROR;
    }
    if (fixed)
        return cli_get(flags, "--dt") ? positive_number(cmd, flags, "--dt", MAX_TIME, 0.0, &opt->dt)
                                      : missing(cmd, "--dt", "rk4's step size");
    int rc = positive_number(cmd, flags, "--rtol", 1.0, DEFAULT_RTOL, &opt->rtol);
    return rc ? rc : positive_number(cmd, flags, "--atol", MAX_TIME, DEFAULT_ATOL, &opt->atol);
}

/* t1 / step (steps of --dt, rows of --sample; 0: none) within MAX_STEPS. */
static int check_count(const char *cmd, const char *name, double step, double t1)
{
    if (step <= 0.0 || t1 / step <= MAX_STEPS)
        return 0;
    fprintf(stderr, "mbd %s: %s: %g over --t1 %g makes %.3g steps, more than %g\n", cmd, name, step,
            t1, t1 / step, MAX_STEPS);
    return CLI_USAGE_ERROR;
}

static int parse_options(const char *cmd, const cli_flag *flags, const mbd_solver *solver,
                         mbd_sim_options *opt)
{
    int rc = parse_formulation(cmd, flags, solver, opt);
    if (!rc)
        rc = parse_integrator(cmd, flags, opt);
    if (!rc)
        rc = cli_get(flags, "--t1") ? positive_number(cmd, flags, "--t1", MAX_TIME, 0.0, &opt->t1)
                                    : missing(cmd, "--t1", "the end time");
    if (!rc)
        rc = parse_step_control(cmd, flags, opt);
    if (!rc && cli_get(flags, "--sample"))
        rc = positive_number(cmd, flags, "--sample", opt->t1, 0.0, &opt->sample);
    if (!rc)
        rc = check_count(cmd, "--dt", opt->dt, opt->t1);
    return rc ? rc : check_count(cmd, "--sample", opt->sample, opt->t1);
}

/* A model with loops: a constrained route, the acceleration formulation, Baumgarte's
 * terms. */
static int parse_loop_options(const char *cmd, const cli_flag *flags, const mbd_model *model,
                              const mbd_solver *solver, mbd_sim_options *opt)
{
    int rc = cli_check_loop_solver(cmd, model, solver);
    if (!rc && mbd_model_nloops(model) > 0 && opt->formulation != MBD_ACCELERATION) {
        fprintf(
            stderr,
            "mbd %s: --formulation: a model with loops runs in the acceleration formulation only\n",
            cmd);
        rc = CLI_USAGE_ERROR;
    }
    if (!rc && cli_get(flags, "--project-initial") && mbd_model_nloops(model) == 0) {
        fprintf(stderr, "mbd %s: --project-initial: model %s has no loops\n", cmd,
                mbd_model_name(model));
        rc = CLI_USAGE_ERROR;
    }
    return rc ? rc : cli_baumgarte(cmd, flags, model, &opt->baumgarte);
}

/* |Phi| and |dPhi/dt| above this at the start are an error, unless --project-initial moves
 * the state onto the constraints (Gauss-Newton to PROJECTION_TOL). */
#define INITIAL_TOL 1e-8
#define PROJECTION_TOL 1e-12

/* |x|, by OpenBLAS's CBLAS (scaled against overflow). */
static double norm(const double *x, int n) { return cblas_dnrm2(n, x, 1); }

static int initial_state_on_loops(const char *cmd, const cli_flag *flags, const mbd_model *model,
                                  double *q0, double *qd0)
{
    const int m = mbd_model_nconstraints(model);
    if (m == 0)
        return 0;
    double *phi = malloc(2 * (size_t)m * sizeof *phi);
    mbd_work *work = NULL;
    if (phi)
        mbd_work_new(model, NULL, &work);
    int rc = 0, status = !work ? MBD_ENOMEM : MBD_OK;
    if (!status && cli_get(flags, "--project-initial"))
        status = mbd_project_constraints(model, work, q0, qd0, PROJECTION_TOL);
    if (!status)
        status = mbd_constraint_violation(model, work, q0, qd0, phi, phi + m);
    if (status)
        rc = cli_fail(cmd,
                      cli_get(flags, "--project-initial") ? "--project-initial" : "initial state",
                      status);
    else if (norm(phi, m) > INITIAL_TOL || norm(phi + m, m) > INITIAL_TOL) {
        fprintf(stderr,
                "mbd %s: --q0/--qd0: the initial state violates the loop constraints "
                "(|Phi| = %.3g, |dPhi/dt| = %.3g, over %g); --project-initial moves it onto them\n",
                cmd, norm(phi, m), norm(phi + m, m), INITIAL_TOL);
        rc = CLI_USAGE_ERROR;
    }
    mbd_work_free(work);
    free(phi);
    return rc;
}

static void print_summary(const char *cmd, const mbd_model *model, const mbd_solver *solver,
                          const mbd_sim_options *opt, const mbd_sim_stats *st)
{
    fprintf(stderr,
            "mbd %s: %s, %s %s %s: t = %g, %ld steps (%ld rejected), %ld RHS evaluations, "
            "energy %s %.3g (relative)\n",
            cmd, mbd_model_name(model), mbd_solver_name(solver),
            opt->formulation == MBD_MOMENTUM ? "momentum" : "acceleration",
            mbd_integrator_name(opt->integrator), st->t, st->steps, st->rejected, st->rhs_evals,
            mbd_model_has_friction(model) ? "change (friction dissipates)" : "drift",
            st->energy_drift);
    if (mbd_model_nloops(model) > 0)
        fprintf(stderr, "mbd %s: loops: max |Phi| %.3g (Baumgarte alpha %g, beta %g)\n", cmd,
                st->max_phi_norm, opt->baumgarte.alpha, opt->baumgarte.beta);
}

/* Integrates into rows (stdout, or a temporary file that out_path then receives whole). */
static int simulate(const char *cmd, const mbd_model *model, const mbd_solver *solver,
                    const mbd_sim_options *opt, const double *q0, const double *qd0,
                    const char *out_path)
{
    trajectory tr = {.out = out_path ? tmpfile() : stdout,
                     .nq = mbd_model_nq(model),
                     .nv = mbd_model_nv(model),
                     .momentum = opt->formulation == MBD_MOMENTUM,
                     .loops = mbd_model_nloops(model) > 0,
                     .tty = isatty(STDERR_FILENO),
                     .t1 = opt->t1,
                     .next_progress = 1.0};
    if (!tr.out)
        return cli_fail(cmd, "temporary file", MBD_EIO);
    clock_gettime(CLOCK_MONOTONIC, &tr.start);
    write_header(tr.out, model, tr.momentum, tr.loops);
    mbd_sim_stats stats;
    const int status = mbd_simulate(model, solver, opt, q0, qd0, write_row, &tr, &stats);
    if (tr.progress_shown && tr.tty)
        fputc('\n', stderr);
    int rc = 0;
    if (status) {
        char what[160];
        snprintf(what, sizeof what, "%s %s at t = %g", mbd_solver_name(solver),
                 mbd_integrator_name(opt->integrator), stats.t);
        rc = cli_fail_solve(cmd, what, model, stats.failed_body, status);
    } else if (out_path) {
        rc = cli_write_atomic(cmd, out_path, copy_stream, tr.out);
    } else if (fflush(stdout) != 0) {
        rc = cli_fail(cmd, "standard output", MBD_EIO);
    }
    if (out_path)
        fclose(tr.out);
    if (!rc)
        print_summary(cmd, model, solver, opt, &stats);
    return rc;
}

int cmd_simulate(const char *cmd, int argc, char **argv)
{
    cli_flag flags[] = {FLAG("--solver"),
                        FLAG("--formulation"),
                        FLAG("--integrator"),
                        FLAG("--t1"),
                        FLAG("--dt"),
                        FLAG("--rtol"),
                        FLAG("--atol"),
                        FLAG("--q0"),
                        FLAG("--qd0"),
                        FLAG("--sample"),
                        OUTPUT("--out"),
                        FLAG("--baumgarte"),
                        SWITCH("--project-initial"),
                        CLI_ENSEMBLE_FLAGS,
                        CLI_FLOATING_BASE,
                        END_FLAGS};
    mbd_model *model;
    int rc = cli_open_model(cmd, argc, argv, flags, &model);
    if (rc)
        return rc;
    const mbd_solver *solver = cli_solver(cmd, flags, CLI_DEFAULT_SOLVER);
    if (!solver) {
        mbd_model_free(model);
        return CLI_USAGE_ERROR;
    }
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
    double *q0 = malloc(sizeof(double) * (size_t)(nq + nv));
    mbd_sim_options opt = {0};
    if (!q0)
        rc = cli_fail(cmd, "allocation", MBD_ENOMEM);
    else if (!(rc = parse_options(cmd, flags, solver, &opt)) &&
             !(rc = parse_loop_options(cmd, flags, model, solver, &opt)) &&
             !(rc = cli_positions(cmd, flags, "--q0", model, q0)) &&
             !(rc = cli_vector(cmd, flags, "--qd0", nv, q0 + nq)) &&
             !(rc = initial_state_on_loops(cmd, flags, model, q0, q0 + nq)) &&
             !(rc = cli_check_ensemble_flags(cmd, flags)))
        rc = cli_get(flags, "--ensemble")
                 ? cmd_ensemble(cmd, flags, model, solver, &opt, q0, q0 + nq)
                 : simulate(cmd, model, solver, &opt, q0, q0 + nq, cli_get(flags, "--out"));
    free(q0);
    mbd_model_free(model);
    return rc;
}
