/* mbd: the command-line front end of mbdbench. One function per subcommand. */
#include "cli.h"
#include "par.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

typedef struct {
    const char *name;
    int (*run)(const char *cmd, int argc, char **argv);
    const char *usage;
} command;

static int cmd_solvers(const char *cmd, int argc, char **argv)
{
    cli_flag flags[] = {END_FLAGS};
    const char *pos[1];
    int npos, rc = cli_parse(cmd, argc, argv, 2, flags, pos, 0, &npos);
    if (rc)
        return rc;
    for (int k = 0; k < mbd_solver_count(); k++) {
        const mbd_solver *s = mbd_solver_at(k);
        unsigned forms = mbd_solver_formulations(s);
        printf("%-14s %-22s %s\n", mbd_solver_name(s),
               forms == (MBD_ACCELERATION | MBD_MOMENTUM) ? "acceleration,momentum"
               : forms == MBD_MOMENTUM                    ? "momentum"
                                                          : "acceleration",
               mbd_solver_summary(s));
    }
    return 0;
}

/* One entry of info --json's "joints". */
static json_t *joint_entry(const char *name, const char *type, const char *body, int q_index,
                           int v_index, int nq, int nv)
{
    return json_pack("{s:s, s:s, s:s, s:i, s:i, s:i, s:i}", "name", name, "type", type, "body",
                     body, "q_index", q_index, "v_index", v_index, "nq", nq, "nv", nv);
}

/* {"nq", "nv", "joints": [...]}: the moving joints in coordinate order, then the fixed
 * ones (nq = nv = 0, q_index = v_index = -1, body: the body they are fixed in). */
static int print_info_json(const mbd_model *model)
{
    json_t *joints = json_array();
    int q = 0, v = 0, status = joints ? 0 : -1;
    for (int i = 0; i < mbd_model_nbodies(model) && status == 0; i++) {
        const mbd_body_def *b = mbd_model_body(model, i);
        const int nq = mbd_joint_type_nq(b->joint), nv = mbd_joint_type_nv(b->joint);
        status = json_array_append_new(joints, joint_entry(mbd_model_joint_name(model, i),
                                                           mbd_joint_type_name(b->joint),
                                                           b->name, q, v, nq, nv));
        q += nq, v += nv;
    }
    for (int f = 0; f < mbd_model_nframes(model) && status == 0; f++) {
        const mbd_frame_def *fr = mbd_model_frame(model, f);
        status = json_array_append_new(
            joints, joint_entry(fr->joint_name ? fr->joint_name : fr->name, "fixed",
                                fr->body < 0 ? "world" : mbd_model_body(model, fr->body)->name,
                                -1, -1, 0, 0));
    }
    json_t *root = status == 0 ? json_pack("{s:i, s:i, s:o}", "nq", mbd_model_nq(model), "nv",
                                           mbd_model_nv(model), "joints", joints)
                               : NULL;
    if (!root) {
        json_decref(joints);
        return -1;
    }
    json_dumpf(root, stdout, 0);
    putchar('\n');
    json_decref(root);
    return 0;
}

static int cmd_info(const char *cmd, int argc, char **argv)
{
    cli_flag flags[] = {SWITCH("--json"), CLI_FLOATING_BASE, END_FLAGS};
    mbd_model *model;
    int rc = cli_open_model(cmd, argc, argv, flags, &model);
    if (rc)
        return rc;
    if (!cli_get(flags, "--json"))
        mbd_model_print(model, stdout);
    else if (print_info_json(model) < 0)
        rc = cli_fail(cmd, "--json", MBD_ENOMEM);
    mbd_model_free(model);
    return rc;
}

static int cmd_id(const char *cmd, int argc, char **argv)
{
    cli_flag flags[] = {FLAG("--q"), FLAG("--qd"), FLAG("--qdd"), CLI_FLOATING_BASE, END_FLAGS};
    mbd_model *model;
    int rc = cli_open_model(cmd, argc, argv, flags, &model);
    if (rc)
        return rc;
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model), nb = mbd_model_nbodies(model);
    double *q = malloc(sizeof(double) * ((size_t)nq + 3 * (size_t)nv + 6 * (size_t)nb));
    double *qd = q + nq, *qdd = qd + nv, *tau = qdd + nv, *reactions = tau + nv;
    mbd_work *work;
    mbd_work_new(model, NULL, &work);
    if (!q || !work)
        rc = cli_fail(cmd, "allocation", MBD_ENOMEM);
    else if (!(rc = cli_positions(cmd, flags, "--q", model, q)) &&
             !(rc = cli_vector(cmd, flags, "--qd", nv, qd)) &&
             !(rc = cli_vector(cmd, flags, "--qdd", nv, qdd))) {
        int status = mbd_inverse_dynamics(model, work, q, qd, qdd, tau, reactions);
        if (status) {
            rc = cli_fail(cmd, "inverse dynamics", status);
        } else {
            printf("{");
            json_key_vector(stdout, "tau", tau, nv, 0);
            printf("\"reactions\": [");
            for (int i = 0; i < nb; i++) {
                printf(i ? ", " : "");
                json_vector(stdout, reactions + 6 * i, 6);
            }
            printf("]}\n");
        }
    }
    mbd_work_free(work);
    free(q);
    mbd_model_free(model);
    return rc;
}

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
        fprintf(stderr, "mbd %s: --p: solver '%s' takes --qd, not momenta\n", cmd, mbd_solver_name(solver));
        return CLI_USAGE_ERROR;
    }
    if (cli_get(flags, "--p") && cli_get(flags, "--qd")) {
        fprintf(stderr, "mbd %s: give --qd or --p, not both\n", cmd);
        return CLI_USAGE_ERROR;
    }
    if ((rc = cli_positions(cmd, flags, "--q", model, q)) || (rc = cli_vector(cmd, flags, "--qd", nv, qd)) ||
        (rc = cli_vector(cmd, flags, "--p", nv, p)) || (rc = cli_vector(cmd, flags, "--tau", nv, tau)))
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
        rc = cli_fail_solve(cmd, mbd_solver_name(solver), model, mbd_work_failed_body(work), status);
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
    double *q = malloc(sizeof(double) * ((size_t)nq + 3 * (size_t)nv + (size_t)m + 6 * (size_t)nloops));
    double *qd = q + nq, *tau = qd + nv, *qdd = tau + nv, *lambda = qdd + nv, *wrench = lambda + m;
    mbd_work *work = NULL;
    if (q)
        mbd_work_new(model, solver, &work);
    if (!work)
        rc = cli_fail(cmd, "allocation", MBD_ENOMEM);
    else if (!(rc = cli_positions(cmd, flags, "--q", model, q)) && !(rc = cli_vector(cmd, flags, "--qd", nv, qd)) &&
             !(rc = cli_vector(cmd, flags, "--tau", nv, tau))) {
        int status = mbd_forward_constrained(model, work, q, qd, tau, &stab, qdd, lambda);
        if (status == MBD_OK)
            status = mbd_loop_wrenches(model, work, q, lambda, wrench);
        if (status) {
            rc = cli_fail_solve(cmd, mbd_solver_name(solver), model, mbd_work_failed_body(work), status);
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

static int cmd_fd(const char *cmd, int argc, char **argv)
{
    cli_flag flags[] = {FLAG("--solver"), FLAG("--q"), FLAG("--qd"), FLAG("--p"), FLAG("--tau"),
                        FLAG("--baumgarte"), CLI_FLOATING_BASE, END_FLAGS};
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

/* A matrix as rows: JSON (a list of rows, full precision) or text (one row a line, 12
 * digits). */
static void print_matrix(const char *key, const double *M, int n, int json, int last)
{
    printf(json ? "\"%s\": [" : "%s =\n", key);
    for (int r = 0; r < n; r++) {
        if (json) {
            printf(r ? ", " : "");
            json_vector(stdout, M + (size_t)r * n, n);
        } else {
            for (int c = 0; c < n; c++)
                printf(" % .12g", M[(size_t)r * n + c]);
            printf("\n");
        }
    }
    printf(json ? (last ? "]" : "], ") : "");
}

static void print_vector(const char *key, const double *x, int n, int json, int last)
{
    if (json) {
        json_key_vector(stdout, key, x, n, last);
        return;
    }
    printf("%s =\n", key);
    for (int k = 0; k < n; k++)
        printf(" % .12g", x[k]);
    printf("\n");
}

static int cmd_coeffs(const char *cmd, int argc, char **argv)
{
    cli_flag flags[] = {FLAG("--q"), FLAG("--qd"), SWITCH("--json"), CLI_FLOATING_BASE, END_FLAGS};
    mbd_model *model;
    int rc = cli_open_model(cmd, argc, argv, flags, &model);
    if (rc)
        return rc;
    const size_t nq = (size_t)mbd_model_nq(model), nv = (size_t)mbd_model_nv(model);
    double *q = malloc(sizeof(double) * (nq + 3 * nv + 2 * nv * nv));
    double *qd = q + nq, *g = qd + nv, *Cqd = g + nv, *H = Cqd + nv, *C = H + nv * nv;
    mbd_work *work;
    mbd_work_new(model, NULL, &work);
    const int json = cli_get(flags, "--json") != NULL, n = (int)nv;
    if (!q || !work) {
        rc = cli_fail(cmd, "allocation", MBD_ENOMEM);
    } else if (!(rc = cli_positions(cmd, flags, "--q", model, q)) &&
               !(rc = cli_vector(cmd, flags, "--qd", n, qd))) {
        const int status = mbd_coefficients(model, work, q, qd, H, C, g, Cqd);
        if (status) {
            rc = cli_fail(cmd, "coefficients", status);
        } else {
            printf(json ? "{" : "");
            print_matrix("H", H, n, json, 0);
            print_matrix("C", C, n, json, 0);
            print_vector("g", g, n, json, 0);
            print_vector("Cqd", Cqd, n, json, 1);
            printf(json ? "}\n" : "");
        }
    }
    mbd_work_free(work);
    free(q);
    mbd_model_free(model);
    return rc;
}

/* H^-1 (mbd_mass_matrix_inverse), one JSON row per coordinate. */
static int cmd_minv(const char *cmd, int argc, char **argv)
{
    cli_flag flags[] = {FLAG("--q"), CLI_FLOATING_BASE, END_FLAGS};
    mbd_model *model;
    int rc = cli_open_model(cmd, argc, argv, flags, &model);
    if (rc)
        return rc;
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
    double *q = malloc(sizeof(double) * ((size_t)nq + (size_t)nv * (size_t)nv)), *Hinv = q + nq;
    mbd_work *work;
    mbd_work_new(model, NULL, &work);
    if (!q || !work) {
        rc = cli_fail(cmd, "allocation", MBD_ENOMEM);
    } else if (!(rc = cli_positions(cmd, flags, "--q", model, q))) {
        int status = mbd_mass_matrix_inverse(model, work, q, Hinv);
        if (status) {
            rc = cli_fail_solve(cmd, "H^-1", model, mbd_work_failed_body(work), status);
        } else {
            printf("{\"Hinv\": [");
            for (int r = 0; r < nv; r++) {
                printf(r ? ", " : "");
                json_vector(stdout, Hinv + (size_t)r * nv, nv);
            }
            printf("]}\n");
        }
    }
    mbd_work_free(work);
    free(q);
    mbd_model_free(model);
    return rc;
}

static int cmd_help(const char *cmd, int argc, char **argv);

static const command commands[] = {
    {"solvers", cmd_solvers, "mbd solvers                      list the registered solvers"},
    {"info", cmd_info, "mbd info MODEL [--json]          bodies, joints, frames, loops, DOFs and parameters;\n"
                       "                                 --json: {nq, nv, joints: [{name, type, body,\n"
                       "                                 q_index, v_index, nq, nv}, ...]}"},
    {"id", cmd_id, "mbd id MODEL [--q L] [--qd L] [--qdd L]\n"
                   "                                 inverse dynamics: tau (the actuators', which also\n"
                   "                                 overcome joint friction) and joint reactions"},
    {"fd", cmd_fd, "mbd fd MODEL [--solver S] [--q L] [--qd L | --p L] [--tau L] [--baumgarte A,B]\n"
                   "                                 forward dynamics with one solver (and the joint\n"
                   "                                 friction of MODEL: friction_iterations); a model\n"
                   "                                 with loops (dense or bodies) prints qdd, lambda and\n"
                   "                                 each loop's wrench (n; f) on body_a in frame a's axes;\n"
                   "                                 " CLI_SOLVER_HELP "\n"
                   "                                 " CLI_BAUMGARTE_HELP},
    {"coeffs", cmd_coeffs, "mbd coeffs MODEL [--q L] [--qd L] [--json]\n"
                           "                                 H, Christoffel Coriolis matrix C, g and C qd of\n"
                           "                                 H qdd + C qd + g = tau (no friction)"},
    {"minv", cmd_minv, "mbd minv MODEL [--q L]           inverse mass matrix H^-1, O(N^2)"},
    {"simulate", cmd_simulate, "mbd simulate MODEL --integrator rk4|dopri5|adams --t1 T [--dt H | --rtol R --atol A]\n"
                               "             [--solver S] [--formulation acceleration|momentum] [--q0 L] [--qd0 L]\n"
                               "             [--sample DT] [--out FILE.csv] [--baumgarte A,B] [--project-initial]\n"
                               "             [--ensemble K (--states FILE | --spread S [--seed N]) [--threads T] [--out-dir DIR]]\n"
                               "                                 trajectory as CSV (rtol 1e-8, atol 1e-10 by default); a model\n"
                               "                                 with loops (dense or bodies, acceleration) adds |Phi| and |dPhi/dt|\n"
                               "                                 columns and must start on its constraints (|Phi|, |dPhi/dt| <= 1e-8)\n"
                               "                                 unless --project-initial moves it there (Gauss-Newton);\n"
                               "                                 " CLI_SOLVER_HELP "\n"
                               "                                 " CLI_BAUMGARTE_HELP "\n"
                               "                                 --ensemble: K runs of rk4 (fixed-width CSV run, t, q, qd, status),\n"
                               "                                 split over the ranks under mpirun; see README.md, Ensembles"},
    {"check", cmd_check, "mbd check [--models NAMES] [--json FILE]\n"
                         "                                 every solver x integrator against tests/golden"},
    {"export", cmd_export, "mbd export mjcf MODEL --out FILE.xml\n"
                           "                                 MuJoCo model of MODEL (deep trees add FILE.partK.xml)"},
    {"recommend", cmd_recommend, "mbd recommend MODEL [--formulation acceleration|momentum] [--batch K] [--json]\n"
                                 "                                 time every solver here and rank them"},
    {"help", cmd_help, "mbd help [CMD]                   this text, or CMD's part (also mbd CMD --help)"},
};

static const command *find_command(const char *name)
{
    for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++)
        if (strcmp(name, commands[k].name) == 0)
            return &commands[k];
    return NULL;
}

/* The usage of the commands (all: every command's) on out, and what MODEL and L are where
 * one of them takes those. */
static void print_usage(FILE *out, const command *only)
{
    fprintf(out, "usage:\n");
    for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++)
        if (!only || only == &commands[k])
            fprintf(out, "  %s\n", commands[k].usage);
    if (!only || strstr(only->usage, "MODEL")) {
        fprintf(out, "\nMODEL is a JSON model file, a URDF robot or a generator spec:\n%s", mbd_generators_help());
        fprintf(out, "Every command that takes one MODEL also takes %s.\n", CLI_FLOATING_BASE_HELP);
    }
    if (!only || strstr(only->usage, " L]"))
        fprintf(out, "L is a comma-separated list of numbers; omitted vectors are zero.\n");
}

/* mbd help [CMD] */
static int cmd_help(const char *cmd, int argc, char **argv)
{
    const char *pos[1];
    cli_flag flags[] = {END_FLAGS};
    int npos, rc = cli_parse(cmd, argc, argv, 2, flags, pos, 1, &npos);
    if (rc)
        return rc;
    const command *only = npos ? find_command(pos[0]) : NULL;
    if (npos && !only) {
        fprintf(stderr, "mbd help: unknown command '%.60s'\n", pos[0]);
        return CLI_USAGE_ERROR;
    }
    print_usage(stdout, only);
    return 0;
}

static int run_command(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr, NULL);
        return CLI_USAGE_ERROR;
    }
    const command *cmd = find_command(argv[1]);
    if (cli_wants_help(argc, argv, 1)) { /* mbd --help, mbd CMD ... -h */
        print_usage(stdout, cmd);
        return 0;
    }
    if (!cmd) {
        fprintf(stderr, "mbd: unknown command '%.60s' (one of:", argv[1]);
        for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++)
            fprintf(stderr, " %s", commands[k].name);
        fprintf(stderr, "; see 'mbd help')\n");
        return CLI_USAGE_ERROR;
    }
    return cmd->run(cmd->name, argc, argv);
}

/* Under mpirun every rank runs the command (mbd simulate --ensemble splits its runs). */
int main(int argc, char **argv)
{
    const int rc = par_start(&argc, &argv);
    return rc ? rc : par_finish(run_command(argc, argv));
}
