/* mbd: the command-line front end of mbdbench: the table of subcommands (each in its own
 * src/cmd_*.c), their usage and main. */
#include "cli.h"
#include "par.h"

#include <string.h>

/* The commit of this build (git describe), from the Makefile. */
#ifndef MBD_COMMIT
#define MBD_COMMIT "unknown"
#endif

typedef struct {
    const char *name;
    int (*run)(const char *cmd, int argc, char **argv);
    const char *usage;
} command;

static int cmd_help(const char *cmd, int argc, char **argv);

static const command commands[] = {
    {"solvers", cmd_solvers, "mbd solvers                      list the registered solvers"},
    {"info", cmd_info,
     "mbd info MODEL [--json]          bodies, joints, frames, loops, DOFs and parameters;\n"
     "                                 --json: {nq, nv, joints: [{name, type, body,\n"
     "                                 q_index, v_index, nq, nv}, ...]}"},
    {"id", cmd_id,
     "mbd id MODEL [--q L] [--qd L] [--qdd L]\n"
     "                                 inverse dynamics: tau (the actuators', which also\n"
     "                                 overcome joint friction) and joint reactions"},
    {"fd", cmd_fd,
     "mbd fd MODEL [--solver S] [--q L] [--qd L | --p L] [--tau L] [--baumgarte A,B]\n"
     "                                 forward dynamics with one solver (and the joint\n"
     "                                 friction of MODEL: friction_iterations); a model\n"
     "                                 with loops (dense or bodies) prints qdd, lambda and\n"
     "                                 each loop's wrench (n; f) on body_a in frame a's axes;\n"
     "                                 " CLI_SOLVER_HELP "\n"
     "                                 " CLI_BAUMGARTE_HELP},
    {"coeffs", cmd_coeffs,
     "mbd coeffs MODEL [--q L] [--qd L] [--json]\n"
     "                                 H, Christoffel Coriolis matrix C, g and C qd of\n"
     "                                 H qdd + C qd + g = tau (no friction)"},
    {"minv", cmd_minv, "mbd minv MODEL [--q L]           inverse mass matrix H^-1, O(N^2)"},
    {"derivatives", cmd_derivatives,
     "mbd derivatives MODEL [--method M] [--solver S] [--q L] [--qd L] [--tau L] [--json]\n"
     "                                 dqdd/dq (along q (+) delta, tangent coordinates),\n"
     "                                 dqdd/dqd and dqdd/dtau = H^-1 (nv x nv, rows of qdd);\n"
     "                                 --method: one of the table, plugins' included\n"
     "                                 (default: --solver's own, else the table's first);\n"
     "                                 --solver: what automatic differentiates (default bodies);\n"
     "                                 alone, the solver's own: a plugin's, automatic of a built-in"},
    {"simulate", cmd_simulate,
     "mbd simulate MODEL --integrator rk4|dopri5|adams --t1 T [--dt H | --rtol R --atol A]\n"
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
    {"check", cmd_check,
     "mbd check [--models NAMES] [--solver S] [--json FILE]\n"
     "                                 every solver (or S) x integrator against the golden\n"
     "                                 trajectories ($MBD_DATA, beside mbd, or installed)\n"
     "       mbd check --cases FILE --solver S\n"
     "                                 S against a reference-data file (mbd cases);\n"
     "                                 exit 1 when outside tolerance, with the worst error"},
    {"cases", cmd_cases,
     "mbd cases MODEL --states K [--seed S] --out FILE.json\n"
     "                                 reference data: K random states with the dense\n"
     "                                 reference's qdd, H, C qd + g and joint reactions\n"
     "                                 (docs/reference-data.md)"},
    {"export", cmd_export,
     "mbd export mjcf MODEL --out FILE.xml\n"
     "                                 MuJoCo model of MODEL (deep trees add FILE.partK.xml)"},
    {"recommend", cmd_recommend,
     "mbd recommend MODEL [--formulation acceleration|momentum] [--batch K] [--json]\n"
     "                                 time every solver here and rank them;\n"
     "                                 --derivatives: rank the methods of mbd derivatives"},
    {"help", cmd_help,
     "mbd help [CMD]                   this text, or CMD's part (also mbd CMD --help)"},
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
        fprintf(
            out,
            "\nMODEL is a JSON model file, a URDF robot, a MuJoCo MJCF model (compiled by MuJoCo:\n"
            "its smooth dynamics; 'mbd info MODEL' lists what they leave out) or a generator spec:\n%s",
            mbd_generators_help());
        fprintf(out, "Every command that takes one MODEL also takes %s.\n", CLI_FLOATING_BASE_HELP);
    }
    if (!only || strstr(only->usage, " L]"))
        fprintf(out, "L is a comma-separated list of numbers; omitted vectors are zero.\n");
    fprintf(out, "Every command takes %s.\n", CLI_PLUGIN_HELP);
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
    if (cli_load_plugins("mbd", &argc, argv, 1))
        return CLI_USAGE_ERROR;
    if (argc < 2) {
        print_usage(stderr, NULL);
        return CLI_USAGE_ERROR;
    }
    if (strcmp(argv[1], "--version") == 0) {
        const char *mujoco = mbd_mujoco_version();
        printf("mbdbench %s\ncommit %s\n%s%s\n", mbd_version(), MBD_COMMIT,
               mujoco ? "MuJoCo " : "no MuJoCo (MJCF models unread)", mujoco ? mujoco : "");
        return 0;
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
