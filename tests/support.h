/* support.h: what the cmocka test files share. Tests run from the repository root. */
#ifndef MBD_TEST_SUPPORT_H
#define MBD_TEST_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <jansson.h>

#include "mbd.h"

/* ||a - b|| / max(||b||, floor) in the 2-norm. */
double rel_error(const double *a, const double *b, int n, double floor);

/* Fails the test, printing label and both errors, unless rel_error <= tol. */
#define assert_close(a, b, n, tol, label)                                                          \
    assert_close_at((a), (b), (n), (tol), (label), __FILE__, __LINE__)
void assert_close_at(const double *a, const double *b, int n, double tol, const char *label,
                     const char *file, int line);

/* mbd_model_build of a tree (no loops): the model, or NULL with the message in err; fails
 * the test unless the status agrees (MBD_OK with a model, negative without). */
mbd_model *build_tree(const char *name, const double gravity[3], int nbodies,
                      const mbd_body_def *bodies, char *err, size_t err_size);

/* The tree's bodies (as mbd_model_body gives them), gravity and name built again with
 * loops: mbd_model_build's status, the model in *closed. */
int rebuild_with_loops(const mbd_model *tree, int nloops, const mbd_loop_def *loops,
                       mbd_model **closed, char *err, size_t err_size);

/* Loads a model or generator spec; fails the test on error. */
mbd_model *load_model(const char *spec);

/* Deterministic uniform numbers in [lo, hi) (xorshift), for states and models. */
double test_uniform(uint64_t *state, double lo, double hi);
void test_fill(uint64_t *state, double *x, int n, double lo, double hi);

#endif

/* A deterministic random state of the model's size (q, qd, tau drawn; the rest zero),
 * one allocation: state_free. */
typedef struct {
    int nq, nv;
    double *q, *qd, *tau, *out, *out2, *ref, *ref2, *p;
} state_buf;

state_buf state_new(const mbd_model *model, uint64_t seed);
void state_free(state_buf *s);

/* solver against the dense one at s: qdd, and from p = H qd the solver's qd (against
 * s->qd) and pd, each to tol in rel_error; s's out, ref and p slots are overwritten. */
void check_against_dense_at(const mbd_model *model, const mbd_solver *solver, state_buf *s,
                            double tol, const char *label);

/* Loads the plugin library at path for a group of tests (their group setup): 0, also
 * where it was not built, after a SKIP line saying so (why: what the build lacked), and
 * then skip_without_plugin() skips each test; -1 after the loader's message. */
int load_test_plugin(const char *path, const char *why);
void skip_without_plugin(void);

/* check(model, seed, label) on random models of the joint type (random_model's), 9 bodies
 * as chains, binary and random trees, three seeds each. */
void check_random_models(int type,
                         void (*check)(const mbd_model *model, uint64_t seed, const char *label));

/* The solver's batch over three threads against its mbd_forward one state at a time, bit
 * for bit (works per thread), on a small tree with a floating base. */
void check_batch_bitwise(const mbd_solver *solver);

/* cond(H(q)) = largest / smallest eigenvalue, by LAPACK (dsyev). */
double condition_number(const mbd_model *model, const double *q);

typedef enum { SHAPE_CHAIN, SHAPE_BINARY, SHAPE_RANDOM } tree_shape;

/* random_model's type for mixed joints: all types, or those whose velocities are the
 * derivatives of the coordinates (nq == nv: no spherical or free joints). */
#define MIXED_JOINTS (-1)
#define MIXED_COORDINATE_JOINTS (-2)

/* A random but physically valid model: nb bodies of the given joint type (or mixed when
 * type < 0), parents by shape, random axes, placements, masses and inertias. */
mbd_model *random_model(uint64_t seed, int nb, int type, tree_shape shape);

/* The output of one run of the mbd command (MBD names the binary; default ./mbd). */
typedef struct {
    int status; /* exit status */
    char *out;  /* stdout, NUL-terminated; freed by cli_result_free */
    char *err;  /* stderr */
} cli_result;

/* Runs "mbd ARGS" (ARGS as a shell would split it). */
cli_result mbd_run(const char *args);
/* Runs a shell command line (stdin empty), capturing both outputs. */
cli_result shell_run(const char *command);
/* $MBD, or ./mbd. */
const char *mbd_binary(void);
void cli_result_free(cli_result *result);

/* Runs "mbd ARGS"; fails unless it exits with exit_status and prints the fragments (either
 * may be NULL) on stdout (status 0) or stderr. */
void expect_mbd2(const char *args, int exit_status, const char *fragment, const char *fragment2);
void expect_mbd(const char *args, int exit_status, const char *fragment);

/* Runs "mbd ARGS", which must succeed, and parses its stdout as JSON (json_decref it). */
json_t *run_json(const char *args);
/* The JSON file at path, which must parse (json_decref it). */
json_t *load_json_file(const char *path);
/* Runs "mbd ARGS"; expects exit 2, nothing on stdout and one stderr line containing every
 * needle (a NULL-terminated list). */
void expect_rejected(const char *args, const char *const *needles);
/* "mbd fd PATH" rejected naming the path, field and value; removes the file. */
void expect_model_rejected(const char *path, const char *field, const char *value);

/* The whole file as a NUL-terminated string (malloc'ed); fails the test if unreadable. */
char *read_text_file(const char *path);

/* A temporary directory for a group of tests (cmocka's group setup and teardown):
 * make_temp_dir makes it and names it in temp_dir, remove_temp_dir removes it and all in it. */
extern char temp_dir[64];
int make_temp_dir(void **state);
int remove_temp_dir(void **state);

/* Writes text to a new temporary file, returns its path (static buffer, one at a time). */
const char *temp_file_with(const char *text, const char *suffix);
/* temp_dir/name, in a static buffer of its own per slot (0..3). */
const char *temp_path(int slot, const char *name);
/* Writes text to path, replacing what was there; fails the test on error. */
void write_text(const char *path, const char *text);

/* A body on the given joint (axes z, then y), parent (-1: the world) and mass: no rotation,
 * com (0.2, 0, 0), inertia diag(0.1, 0.1, 0.15) times the mass. */
mbd_body_def body_def(const char *name, int parent, mbd_joint_type joint, double mass);
