/* cli.h: what the mbd subcommands share: option parsing, vectors, JSON output.
 * Every user error prints one line "mbd CMD: ..." to stderr and yields exit status 2. */
#ifndef MBD_CLI_H
#define MBD_CLI_H

#include "mbd.h"

#include <stdio.h>

#define CLI_USAGE_ERROR 2
#define CLI_RUNTIME_ERROR 1

/* A flag a subcommand accepts; value == NULL until given. */
typedef struct {
    const char *name;  /* "--q" */
    const char *value; /* its argument, or "1" for a switch */
    int kind;          /* CLI_VALUE, CLI_SWITCH or CLI_OUTPUT */
} cli_flag;

enum {
    CLI_VALUE,  /* takes an argument */
    CLI_SWITCH, /* takes no argument */
    CLI_OUTPUT  /* takes the path of a file it writes, checked as given (cli_check_output) */
};

#define FLAG(name)                                                                                 \
    {                                                                                              \
        name, NULL, CLI_VALUE                                                                      \
    }
#define SWITCH(name)                                                                               \
    {                                                                                              \
        name, NULL, CLI_SWITCH                                                                     \
    }
#define OUTPUT(name)                                                                               \
    {                                                                                              \
        name, NULL, CLI_OUTPUT                                                                     \
    }
#define END_FLAGS                                                                                  \
    {                                                                                              \
        NULL, NULL, 0                                                                              \
    }

/* Parses argv[first..] into flags (NULL-name terminated) and up to max_pos positional
 * arguments; an output path is checked here, before any work. Returns 0, or
 * CLI_USAGE_ERROR after printing the reason. */
int cli_parse(const char *cmd, int argc, char **argv, int first, cli_flag *flags, const char **pos,
              int max_pos, int *npos);
const char *cli_get(const cli_flag *flags, const char *name);
/* Whether argv[first..] holds --help or -h: the caller prints its usage and exits 0,
 * whatever else the line holds (as git and Google Benchmark do). */
int cli_wants_help(int argc, char **argv, int first);

/* Parses the flag's comma-separated list into n finite numbers (zeros if absent). */
int cli_vector(const char *cmd, const cli_flag *flags, const char *name, int n, double *out);
/* The model's nq positions from the flag, quaternions scaled to unit length (a zero one is
 * an error); absent: the neutral pose (mbd_neutral_positions). */
int cli_positions(const char *cmd, const cli_flag *flags, const char *name, const mbd_model *model,
                  double *q);
/* Parses a number flag within [lo, hi]; def if absent. */
int cli_number(const char *cmd, const cli_flag *flags, const char *name, double lo, double hi,
               double def, double *out);
/* The same for a whole number. */
int cli_integer(const char *cmd, const cli_flag *flags, const char *name, double lo, double hi,
                double def, long long *out);

/* --floating-base: a URDF model's root link moves freely (mbd_load_options). */
#define CLI_FLOATING_BASE SWITCH("--floating-base")
#define CLI_FLOATING_BASE_HELP                                                                     \
    "--floating-base: a URDF robot's root link moves freely (a free joint)"

/* Loads MODEL with the load options among flags (may be NULL): --floating-base. */
mbd_model *cli_load_model(const char *cmd, const char *path, const cli_flag *flags);
/* Parses "mbd CMD MODEL [flags]" and loads MODEL; 0 or CLI_USAGE_ERROR (reported). */
int cli_open_model(const char *cmd, int argc, char **argv, cli_flag *flags, mbd_model **model);
const mbd_solver *cli_solver(const char *cmd, const cli_flag *flags, const char *def);

/* Models with loops (the constrained forward dynamics; see mbd_forward_constrained). */
#define CLI_BAUMGARTE_DEFAULT 10.0 /* alpha = beta, 1/s: critically damped, time constant 0.1 s */
#define CLI_BAUMGARTE_HELP "--baumgarte: Baumgarte's ALPHA,BETA in 1/s (default 10,10; 0,0: none)"
/* The solver of fd and simulate when --solver is not given: dense, the reference. */
#define CLI_DEFAULT_SOLVER "dense"
#define CLI_SOLVER_HELP                                                                            \
    "--solver: default " CLI_DEFAULT_SOLVER                                                        \
    " (the reference, O(N^3)); 'mbd recommend MODEL' ranks the O(N) ones"
/* --solver must have a constrained route (dense, bodies) on a model with loops. */
int cli_check_loop_solver(const char *cmd, const mbd_model *model, const mbd_solver *solver);
/* Friction and loops are outside every method of mbd_forward_derivatives: 0, or
 * CLI_USAGE_ERROR (reported) for a model with either. */
int cli_check_derivatives_model(const char *cmd, const mbd_model *model);
/* --baumgarte ALPHA,BETA: two finite numbers >= 0, for models with loops only; the default
 * where absent. */
int cli_baumgarte(const char *cmd, const cli_flag *flags, const mbd_model *model,
                  mbd_baumgarte *out);

/* JSON output with full double precision. */
void json_vector(FILE *out, const double *x, int n);
void json_key_vector(FILE *out, const char *key, const double *x, int n, int last);

/* An n x n matrix as rows on stdout: JSON ("KEY": [[...], ...], full precision, ", " after
 * it unless last) or text (KEY =, then one row a line, 12 digits). */
void cli_print_matrix(const char *key, const double *M, int n, int json, int last);

/* The state columns of every trajectory CSV (mbd simulate, --ensemble, tests/golden), each
 * after a comma: for the positions, then the rates (qd), then with momenta the momenta (p),
 * one column per coordinate of each joint in coordinate order, named after the joint as
 * mbd info --json lists it: NAME.q for a joint of one coordinate, NAME.q0, NAME.q1, ...
 * for one of several. */
void cli_state_columns(FILE *out, const mbd_model *model, int momenta);

/* The coordinate map that mbd info --json lists as "joints" (cmd_info.c): the moving joints
 * in coordinate order, then the fixed ones (nq = nv = 0, q_index = v_index = -1, body: the
 * body they are fixed in); NULL when out of memory. */
struct json_t;
struct json_t *cli_joints_json(const mbd_model *model);

/* A result with a NaN or Inf is no result (and no JSON): 0, or CLI_RUNTIME_ERROR after
 * naming the quantity and its first non-finite element. */
int cli_check_finite(const char *cmd, const char *quantity, const double *x, size_t n);

/* Reports a library status for a command; returns CLI_RUNTIME_ERROR. */
int cli_fail(const char *cmd, const char *what, int status);

/* Reports a status of solver's, naming it and, for a plugin's, its file and what
 * MBD_EINVAL means there; returns CLI_RUNTIME_ERROR. */
int cli_fail_solver(const char *cmd, const char *what, const mbd_solver *solver, int status);

/* Reports a failed solve; for MBD_ESINGULAR and MBD_EFRICTION it names the body whose
 * joint failed (mbd_work_failed_body; -1 when unknown). */
int cli_fail_solve(const char *cmd, const char *what, const mbd_model *model, int body, int status);

/* Output files (--out, --json, ...). A regular file, or a new path, is replaced only whole:
 * the bytes go to a temporary file beside it, renamed onto it (onto the file a symbolic link
 * names, the link kept) when complete, and removed on failure or on SIGINT, SIGTERM, SIGHUP
 * or SIGPIPE. A FIFO, a device or /dev/stdout is written in place. Anything else (an empty
 * path, a directory, a missing directory, a file we may not write) is refused. */

/* Checks path as an output before the work that fills it: 0, or CLI_USAGE_ERROR after
 * one line naming path and the reason. */
int cli_check_output(const char *cmd, const char *path);
/* The same for a directory of outputs: one we may create files in, or a new one whose
 * parent we may. */
int cli_check_output_dir(const char *cmd, const char *dir);

/* Writes the bytes produced by write_fn to path as above: 0, CLI_USAGE_ERROR for a bad
 * path, CLI_RUNTIME_ERROR for a failed write (reported). write_fn returns 0, -1 for a
 * failed write (reported here, with errno), or CLI_RUNTIME_ERROR for a failure of its own
 * that it reported. */
int cli_write_atomic(const char *cmd, const char *path, int (*write_fn)(FILE *, void *), void *ctx);

/* Its steps, for writers that need the descriptor (pwrite, MPI-IO by name): open on fd
 * (cli_atomic_write_at: all of data at offset; in place, in order only); closed by
 * cli_atomic_close, which on status 0 syncs the temporary file and renames it onto its
 * target, and otherwise removes it (the failure reported by then). Both return 0 or
 * CLI_RUNTIME_ERROR (reported); cli_atomic_open also CLI_USAGE_ERROR for a bad path. */
typedef struct {
    const char *path;  /* as given: the messages name it */
    char *target;      /* the file the rename replaces; NULL written in place */
    char *tmp;         /* the temporary file beside target, or NULL */
    int fd;            /* -1 once closed */
    long long written; /* bytes so far, that in place must be the next offset */
} cli_atomic;
int cli_atomic_open(const char *cmd, const char *path, cli_atomic *file);
int cli_atomic_write_at(const char *cmd, cli_atomic *file, long long offset, const void *data,
                        size_t size);
int cli_atomic_close(const char *cmd, cli_atomic *file, int status);
/* Unlinks the temporary files that exist now; async-signal-safe, for a signal handler
 * that ends the process (mbd-bench's second signal). */
void cli_remove_temporaries(void);

/* Plugins (mbd_plugin.h): loads those that the environment variable MBD_PLUGINS names
 * (colon-separated), then each "--plugin PATH" of argv[first..], which it takes out of
 * argv (*argc shrinks), so that every command sees its solvers and its own flags alone.
 * 0, or CLI_USAGE_ERROR after one line "PROG: ...: FILE: fault" on stderr. */
#define CLI_PLUGIN_HELP                                                                            \
    "--plugin PATH.so (repeatable; also MBD_PLUGINS=A.so:B.so): add a plugin's solvers"
int cli_load_plugins(const char *prog, int *argc, char **argv, int first);

/* The subcommands, each in its src/cmd_NAME.c; src/mbd.c dispatches to them. */
int cmd_solvers(const char *cmd, int argc, char **argv);
int cmd_info(const char *cmd, int argc, char **argv);
int cmd_id(const char *cmd, int argc, char **argv);
int cmd_fd(const char *cmd, int argc, char **argv);
int cmd_coeffs(const char *cmd, int argc, char **argv);
int cmd_minv(const char *cmd, int argc, char **argv);
int cmd_simulate(const char *cmd, int argc, char **argv);
int cmd_check(const char *cmd, int argc, char **argv);
int cmd_cases(const char *cmd, int argc, char **argv);
int cmd_export(const char *cmd, int argc, char **argv);
int cmd_recommend(const char *cmd, int argc, char **argv);
int cmd_derivatives(const char *cmd, int argc, char **argv);

/* mbd simulate --ensemble K (cmd_ensemble.c), with the options mbd simulate parsed. */
#define CLI_ENSEMBLE_FLAGS                                                                         \
    FLAG("--ensemble"), FLAG("--states"), FLAG("--spread"), FLAG("--seed"), FLAG("--out-dir"),     \
        FLAG("--threads")
int cmd_ensemble(const char *cmd, const cli_flag *flags, const mbd_model *model,
                 const mbd_solver *solver, const mbd_sim_options *opt, const double *q0,
                 const double *qd0);
/* A flag that only --ensemble takes, given without it, or more than one MPI rank without
 * it: CLI_USAGE_ERROR (reported). */
int cli_check_ensemble_flags(const char *cmd, const cli_flag *flags);

#endif
