/* test_mujoco_plugin.c: the MuJoCo plugin (bench/peers/mujoco/mujoco_plugin.c), its solvers
 * mujoco-smooth and mujoco-forward against the dense solver to 1e-10 (relative) on random
 * models of every joint type that maps to MuJoCo's (hinge, slide, ball; cylindrical and
 * Cardan as two joints on one body) and mixed ones, floating bases (free joints), the
 * project's models (JSON, URDF, MJCF) with armature and every passive force (a free body's
 * armature and a tendon included), and a loop (the open tree); and against each other to
 * round-off (mj_forward's qacc is qacc_smooth on these models). A free joint below another
 * body, which MuJoCo lacks, is refused.
 * Skipped where the plugin was not built (the Makefile builds it when the mujoco wheel is
 * in .venv/). */
#include "support.h"

#include "mbd_plugin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLUGIN MBD_TEST_PLUGINS "/mujoco.so"

static const char *const solvers[] = {"mujoco-smooth", "mujoco-forward"};
enum { NSOLVERS = sizeof solvers / sizeof solvers[0] };

static int load_plugin(void **state)
{
    (void)state;
    return load_test_plugin(PLUGIN, "no mujoco wheel in .venv/");
}

/* Both solvers against dense at a random state (seed) of the model, and mj_forward's
 * qacc against the smooth path's to round-off. */
static void check_model(const mbd_model *model, uint64_t seed, const char *label)
{
    state_buf s = state_new(model, seed);
    double *smooth = malloc((size_t)s.nv * sizeof *smooth);
    for (int k = 0; k < NSOLVERS; k++) {
        char what[160];
        snprintf(what, sizeof what, "%s: %s", solvers[k], label);
        check_against_dense_at(model, mbd_solver_find(solvers[k]), &s, 1e-10, what);
        if (k == 0)
            memcpy(smooth, s.out, (size_t)s.nv * sizeof *smooth);
    }
    char what[160];
    snprintf(what, sizeof what, "mj_forward against the smooth path: %s", label);
    assert_close(s.out, smooth, s.nv, 1e-13, what);
    free(smooth);
    state_free(&s);
}

/* Each joint type that maps (all but free, which MuJoCo takes on the world's children
 * only: see test_floating_bases) and mixed ones, as chains, binary and random trees. */
static void test_random_models(void **state)
{
    (void)state;
    skip_without_plugin();
    for (int type = MIXED_COORDINATE_JOINTS; type <= MBD_SPHERICAL; type++)
        if (type != MIXED_JOINTS) /* it draws free joints below other bodies */
            check_random_models(type, check_model);
}

/* Free joints on the world's children: generated trees, the quadruped, and a free body
 * with armature (whose term -armature w x v_O MuJoCo makes itself) and every passive
 * force, a tendon's included. */
static void test_floating_bases(void **state)
{
    (void)state;
    skip_without_plugin();
    mbd_model *model = load_model("tree:n=40,branching=3,skew=0.5,base=free");
    check_model(model, 2, "tree base=free");
    mbd_model_free(model);
    const mbd_load_options floating = {.floating_base = 1};
    char err[MBD_ERROR_SIZE];
    assert_int_equal(mbd_model_load("models/quadruped.urdf", &floating, &model, err, sizeof err),
                     MBD_OK);
    check_model(model, 3, "quadruped.urdf --floating-base");
    mbd_model_free(model);

    mbd_body_def bodies[4] = {
        body_def("torso", -1, MBD_FREE, 4.0), body_def("arm", 0, MBD_SPHERICAL, 1.0),
        body_def("hand", 1, MBD_REVOLUTE, 0.5), body_def("finger", 2, MBD_REVOLUTE, 0.1)};
    bodies[0].passive =
        (mbd_passive){.armature = 0.3, .damping = 0.2, .stiffness = 1.5, .gravcomp = 0.4};
    bodies[0].passive.springref[3] = 1.0;
    bodies[1].passive = (mbd_passive){.armature = 0.05, .damping = 0.1};
    bodies[1].origin[0] = 0.3;
    bodies[2].passive = (mbd_passive){.armature = 0.02, .stiffness = 2.0, .springref = {0.2}};
    bodies[2].origin[1] = 0.2;
    bodies[3].origin[2] = 0.1;
    const int tendon_bodies[2] = {2, 3};
    const double coef[2] = {1.0, -0.5};
    const mbd_tendon_def tendon = {.name = "pull",
                                   .ncoef = 2,
                                   .bodies = tendon_bodies,
                                   .coef = coef,
                                   .stiffness = 3.0,
                                   .damping = 0.2,
                                   .length_spring = {-0.1, 0.1}};
    const mbd_model_def def = {.name = "free-passive",
                               .gravity = {0, 0, -9.81},
                               .nbodies = 4,
                               .bodies = bodies,
                               .ntendons = 1,
                               .tendons = &tendon};
    assert_int_equal(mbd_model_build(&def, &model, err, sizeof err), MBD_OK);
    for (uint64_t seed = 1; seed <= 4; seed++)
        check_model(model, seed, "free body with armature, passive forces and a tendon");
    mbd_model_free(model);
}

/* The project's models in every format: generated chains and trees, URDF, JSON with
 * armature and passive forces (they reach the plugin inside tau), MJCF compiled by MuJoCo
 * (bodies with several joints, between which our reader puts massless bodies; springs,
 * dampers, gravity compensation, a tendon, a free body's armature), and a loop left open. */
static void test_project_models(void **state)
{
    (void)state;
    skip_without_plugin();
    static const char *const specs[] = {
        "models/arm7.urdf",
        "chain:n=30,joint=revolute",
        "chain:n=12,joint=cardan",
        "chain:n=8,joint=spherical",
        "chain:n=70,joint=cylindrical",
        "tree:n=31,branching=2",
        "models/cylindrical-tree.json",
        "models/passive-arm.json",
        "models/cardan-chain.json",
        "models/double-pendulum.json",
        "models/planar-arm.json",
        "models/four-bar.json",
        "models/mjcf/arm.xml",
        "models/mjcf/ball-tree.xml",
        "models/mjcf/quadruped.xml",
        "models/mjcf/passive.xml",
        "models/mjcf/two-joints.xml",
    };
    for (size_t m = 0; m < sizeof specs / sizeof specs[0]; m++) {
        mbd_model *model = load_model(specs[m]);
        check_model(model, 7 + m, specs[m]);
        mbd_model_free(model);
    }
}

/* Works per thread: a batch over threads gives each state's mbd_forward, bit for bit. */
static void test_batch(void **state)
{
    (void)state;
    skip_without_plugin();
    for (int k = 0; k < NSOLVERS; k++)
        check_batch_bitwise(mbd_solver_find(solvers[k]));
}

/* A free joint below another body has no MuJoCo joint (its free joints are the world's
 * children's): the work is made (after a line on stderr) and its calls are unsupported. */
static void test_nested_free_joint_refused(void **state)
{
    (void)state;
    skip_without_plugin();
    mbd_model *model = random_model(5, 3, MBD_FREE, SHAPE_CHAIN);
    state_buf s = state_new(model, 1);
    for (int k = 0; k < NSOLVERS; k++) {
        mbd_work *work;
        assert_int_equal(mbd_work_new(model, mbd_solver_find(solvers[k]), &work), MBD_OK);
        assert_int_equal(mbd_forward(model, work, s.q, s.qd, s.tau, s.out), MBD_EUNSUPPORTED);
        mbd_work_free(work);
    }
    state_free(&s);
    mbd_model_free(model);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_models),
        cmocka_unit_test(test_floating_bases),
        cmocka_unit_test(test_project_models),
        cmocka_unit_test(test_batch),
        cmocka_unit_test(test_nested_free_joint_refused),
    };
    return cmocka_run_group_tests(tests, load_plugin, NULL);
}
