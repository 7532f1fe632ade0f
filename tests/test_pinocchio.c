/* test_pinocchio.c: the Pinocchio plugin (bench/peers/pinocchio/pinocchio_plugin.cc), its
 * solvers pinocchio-aba and pinocchio-crba against the dense solver to 1e-10 (relative) on
 * random models of every joint type and of mixed ones (chains, binary and random trees),
 * generated chains and trees, the URDF robots (the quadruped on a floating base), a model
 * with armature and passive forces, and one with a loop (the open tree, as every
 * mbd_forward solves it); in a batch over threads as one state at a time. Skipped where the
 * plugin was not built (the Makefile builds it when the pin package is in .venv/). */
#include "support.h"

#include "mbd_plugin.h"

#include <stdio.h>
#include <string.h>

#define PLUGIN "build/plugins/pinocchio.so"

static const char *const solvers[] = {"pinocchio-aba", "pinocchio-crba"};
enum { NSOLVERS = sizeof solvers / sizeof solvers[0] };

static int load_plugin(void **state)
{
    (void)state;
    return load_test_plugin(PLUGIN, "no pin package in .venv/");
}

/* Both solvers against dense at a random state (seed) of the model. */
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
        "models/arm7.urdf", "chain:n=30,joint=revolute", "chain:n=12,joint=cardan",
        "chain:n=8,joint=spherical", "tree:n=40,branching=3,skew=0.5,base=free",
        "tree:n=31,branching=2", "models/cylindrical-tree.json", "models/passive-arm.json",
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
    assert_int_equal(mbd_model_load("models/quadruped.urdf", &floating, &quadruped, err, sizeof err),
                     MBD_OK);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_models),
        cmocka_unit_test(test_robots_and_generators),
        cmocka_unit_test(test_batch),
        cmocka_unit_test(test_friction_refused),
    };
    return cmocka_run_group_tests(tests, load_plugin, NULL);
}
