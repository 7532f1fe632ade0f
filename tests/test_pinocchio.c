/* test_pinocchio.c: the Pinocchio plugin (bench/peers/pinocchio/pinocchio_plugin.cc), its
 * solvers pinocchio-aba and pinocchio-crba against the dense solver to 1e-10 (relative) on
 * random models of every joint type and of mixed ones (chains, binary and random trees),
 * generated chains and trees, the URDF robots (the quadruped on a floating base), a model
 * with armature and passive forces, and one with a loop (the open tree, as every
 * mbd_forward solves it); in a batch over threads as one state at a time. Its derivatives
 * method pinocchio-aba (computeABADerivatives, the tangent conventions mapped) against
 * analytic's three matrices to 1e-9 (computeABADerivatives' dq is 1.5e-10 off on an 8-ball
 * chain whose analytic and automatic agree to 1e-13) and finite-difference's to 1e-7 (its
 * accuracy, python/tests/test_derivatives.py) on the same models but the loop (which no
 * method takes); mbd check --cases with its derivatives. Skipped where the plugin was not
 * built (the Makefile builds it when the pin package is in .venv/). The robots of
 * example-robot-data and Menagerie: python/tests/test_pinocchio.py. */
#include "support.h"

#include "mbd_plugin.h"

#include <jansson.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PLUGIN MBD_TEST_PLUGINS "/pinocchio.so"

static const char *const solvers[] = {"pinocchio-aba", "pinocchio-crba"};
enum { NSOLVERS = sizeof solvers / sizeof solvers[0] };

static int load_plugin(void **state)
{
    (void)state;
    return load_test_plugin(PLUGIN, "no pin package in .venv/");
}

/* The three derivative matrices of method at s, in a workspace of solver (nv x nv each,
 * after one another in d). */
static void derivatives_at(const mbd_model *model, const char *solver, const char *method,
                           const state_buf *s, double *d)
{
    const size_t nn = (size_t)s->nv * (size_t)s->nv;
    mbd_work *work;
    assert_int_equal(mbd_work_new(model, mbd_solver_find(solver), &work), MBD_OK);
    assert_int_equal(mbd_forward_derivatives(model, work, s->q, s->qd, s->tau,
                                             mbd_derivatives_method_find(method), d, d + nn,
                                             d + 2 * nn),
                     MBD_OK);
    mbd_work_free(work);
}

/* Pinocchio's derivatives against analytic's and finite-difference's at s, in its own
 * workspace and in bodies'. */
static void check_derivatives(const mbd_model *model, const state_buf *s, const char *label)
{
    const size_t nn = (size_t)s->nv * (size_t)s->nv;
    double *d = malloc(4 * 3 * nn * sizeof *d), *analytic = d + 3 * nn, *fd = d + 6 * nn,
           *in_bodies = d + 9 * nn;
    derivatives_at(model, "pinocchio-aba", "pinocchio-aba", s, d);
    derivatives_at(model, "bodies", "pinocchio-aba", s, in_bodies);
    derivatives_at(model, "bodies", "analytic", s, analytic);
    derivatives_at(model, "bodies", "finite-difference", s, fd);
    assert_memory_equal(d, in_bodies, 3 * nn * sizeof *d);
    static const char *const names[] = {"dqdd/dq", "dqdd/dqd", "dqdd/dtau"};
    for (int k = 0; k < 3; k++) {
        char what[200];
        snprintf(what, sizeof what, "pinocchio-aba %s: %s (analytic)", names[k], label);
        assert_close(d + k * nn, analytic + k * nn, (int)nn, 1e-9, what);
        snprintf(what, sizeof what, "pinocchio-aba %s: %s (finite-difference)", names[k], label);
        assert_close(d + k * nn, fd + k * nn, (int)nn, 1e-7, what);
    }
    free(d);
}

/* Both solvers against dense at a random state (seed) of the model, and the derivatives
 * (a model without loops). */
static void check_model(const mbd_model *model, uint64_t seed, const char *label)
{
    state_buf s = state_new(model, seed);
    mbd_work *dense;
    assert_int_equal(mbd_work_new(model, mbd_solver_find("dense"), &dense), MBD_OK);
    assert_int_equal(mbd_forward(model, dense, s.q, s.qd, s.tau, s.ref), MBD_OK);
    for (int k = 0; k < NSOLVERS; k++) {
        mbd_work *work;
        char what[160];
        snprintf(what, sizeof what, "%s: %s", solvers[k], label);
        assert_int_equal(mbd_work_new(model, mbd_solver_find(solvers[k]), &work), MBD_OK);
        assert_int_equal(mbd_forward(model, work, s.q, s.qd, s.tau, s.out), MBD_OK);
        assert_close(s.out, s.ref, s.nv, 1e-10, what);
        mbd_work_free(work);
    }
    if (mbd_model_nloops(model) == 0)
        check_derivatives(model, &s, label);
    mbd_work_free(dense);
    state_free(&s);
}

/* Every joint type alone and all mixed, as chains, binary trees and random trees (whose
 * bodies are not depth first, the order Pinocchio's CRBA needs). */
static void test_random_models(void **state)
{
    (void)state;
    skip_without_plugin();
    for (int type = MIXED_JOINTS; type < MBD_JOINT_TYPE_COUNT; type++)
        check_random_models(type, check_model);
}

/* Generated chains and trees, the URDF robots, armature and passive forces (they reach the
 * plugin inside tau), and a loop left open. */
static void test_robots_and_generators(void **state)
{
    (void)state;
    skip_without_plugin();
    static const char *const specs[] = {
        "models/arm7.urdf",
        "chain:n=30,joint=revolute",
        "chain:n=12,joint=cardan",
        "chain:n=8,joint=spherical",
        "tree:n=40,branching=3,skew=0.5,base=free",
        "tree:n=31,branching=2",
        "models/cylindrical-tree.json",
        "models/passive-arm.json",
        "models/four-bar.json",
    };
    for (size_t m = 0; m < sizeof specs / sizeof specs[0]; m++) {
        mbd_model *model = load_model(specs[m]);
        check_model(model, 7 + m, specs[m]);
        mbd_model_free(model);
    }
    const mbd_load_options floating = {.floating_base = 1};
    char err[MBD_ERROR_SIZE];
    mbd_model *quadruped;
    assert_int_equal(
        mbd_model_load("models/quadruped.urdf", &floating, &quadruped, err, sizeof err), MBD_OK);
    check_model(quadruped, 3, "quadruped.urdf --floating-base");
    mbd_model_free(quadruped);
}

/* Works per thread: a batch over threads gives each state's mbd_forward, bit for bit. */
static void test_batch(void **state)
{
    (void)state;
    skip_without_plugin();
    for (int k = 0; k < NSOLVERS; k++)
        check_batch_bitwise(mbd_solver_find(solvers[k]));
}

/* Friction: refused by the host, as for every plugin solver. */
static void test_friction_refused(void **state)
{
    (void)state;
    skip_without_plugin();
    mbd_model *model = load_model("chain:n=3,joint=revolute,friction=0.2");
    double q[3] = {0.1, 0.2, 0.3}, qd[3] = {0}, qdd[3];
    mbd_work *work;
    assert_int_equal(mbd_work_new(model, mbd_solver_find("pinocchio-aba"), &work), MBD_OK);
    assert_int_equal(mbd_forward(model, work, q, qd, NULL, qdd), MBD_EUNSUPPORTED);
    mbd_work_free(work);
    mbd_model_free(model);
}

/* A model whose pinocchio::Data would hold gigabytes (4 nv^3 doubles of second-order
 * tensors, nv = 900 here) is refused with MBD_ELIMIT, before Pinocchio allocates; mbd-bench
 * leaves such a measurement out (a forward call's and a derivatives one's), listed in the
 * context's left_out, and still exits 0. */
static void test_large_model_refused(void **state)
{
    (void)state;
    skip_without_plugin();
    mbd_model *model = load_model("chain:n=300,joint=spherical");
    state_buf s = state_new(model, 1);
    mbd_work *work;
    assert_int_equal(mbd_work_new(model, mbd_solver_find("pinocchio-aba"), &work), MBD_OK);
    assert_int_equal(mbd_forward(model, work, s.q, s.qd, s.tau, s.out), MBD_ELIMIT);
    mbd_work_free(work);
    state_free(&s);
    mbd_model_free(model);

    char path[] = "/tmp/mbd-pinocchio-bench-XXXXXX", line[512];
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    snprintf(line, sizeof line,
             "./mbd-bench --plugin " PLUGIN " --suite percall,derivatives --n 2,300 "
             "--derivatives-n 2,300 --filter 'pinocchio-aba/chain-cardan' --min-time 0.001 "
             "--repetitions 1 --json %s",
             path);
    cli_result r = shell_run(line);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "fd_pinocchio-aba/chain-cardan/n:300/threads:1 left out"));
    assert_non_null(
        strstr(r.err, "derivatives_pinocchio-aba/chain-cardan/n:300/threads:1 left out"));
    cli_result_free(&r);
    json_error_t error;
    json_t *root = json_load_file(path, 0, &error);
    unlink(path);
    assert_non_null(root);
    json_t *left_out = json_object_get(json_object_get(root, "context"), "left_out");
    assert_int_equal(json_array_size(left_out), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(left_out, 0), "name")),
                        "fd_pinocchio-aba/chain-cardan/n:300/threads:1");
    assert_int_equal(json_array_size(json_object_get(root, "benchmarks")), 2);
    json_decref(root);
}

/* mbd check --cases checks pinocchio-aba's derivatives against the file's (analytic's),
 * on a floating base. */
static void test_cases_checked(void **state)
{
    (void)state;
    skip_without_plugin();
    char path[] = "/tmp/mbd-pinocchio-cases-XXXXXX", args[512];
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    snprintf(args, sizeof args, "cases models/quadruped.urdf --floating-base --states 3 --out %s",
             path);
    expect_mbd(args, 0, NULL);
    snprintf(args, sizeof args, "check --cases %s --solver pinocchio-aba --plugin " PLUGIN, path);
    expect_mbd2(args, 0, "pass", "solver pinocchio-aba");
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_models), cmocka_unit_test(test_robots_and_generators),
        cmocka_unit_test(test_batch),         cmocka_unit_test(test_friction_refused),
        cmocka_unit_test(test_cases_checked), cmocka_unit_test(test_large_model_refused),
    };
    return cmocka_run_group_tests(tests, load_plugin, NULL);
}
