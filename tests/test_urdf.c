/* URDF import and fixed joints: the merge against bodies combined by hand (about the origin
 * here, by the parallel-axis theorem in the library), URDF against the same robot built in
 * memory, the example robots (names, sizes, every solver against dense, RNEA(FD) = tau,
 * free fall at g), one-line errors naming file and line for malformed files, and the CLI
 * (info --json, --floating-base). */
#include "support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const double gravity[3] = {0, 0, -9.81};

/* R = Rot(x, 90 degrees), exactly */
static const double turn_x[3][3] = {{1, 0, 0}, {0, 0, -1}, {0, 1, 0}};

static mbd_body_def body(const char *name, int parent, mbd_joint_type joint, double mass,
                         const double com[3], const double inertia[3][3])
{
    mbd_body_def b = {.name = name, .parent = parent, .joint = joint, .mass = mass};
    b.axes[0][2] = 1.0;
    memcpy(b.com, com, sizeof b.com);
    memcpy(b.inertia, inertia, sizeof b.inertia);
    for (int k = 0; k < 3; k++)
        b.rotation[k][k] = 1.0;
    return b;
}

static const double arm_com[3] = {0.3, 0.02, -0.01};
static const double arm_inertia[3][3] = {{0.01, 0.001, 0}, {0.001, 0.02, 0.002}, {0, 0.002, 0.025}};
static const double tool_origin[3] = {0.5, 0.1, 0.05};
static const double tool_com[3] = {0.02, 0.04, 0.01};
static const double tool_inertia[3][3] = {{0.001, 0.0001, 0}, {0.0001, 0.002, 0}, {0, 0, 0.0025}};
static const double finger_origin[3] = {0.1, 0, 0.03};
static const double finger_com[3] = {0, 0, 0.02};
static const double finger_inertia[3][3] = {{2e-4, 0, 0}, {0, 2e-4, 0}, {0, 0, 1e-4}};

/* arm (revolute z) - tool (fixed at tool_origin, turned by turn_x) - finger (prismatic
 * along the tool's y, offset in the tool's frame). */
static mbd_model *arm_tool_finger(void)
{
    mbd_body_def b[3] = {body("arm", -1, MBD_REVOLUTE, 2.0, arm_com, arm_inertia),
                         body("tool", 0, MBD_FIXED, 0.5, tool_com, tool_inertia),
                         body("finger", 1, MBD_PRISMATIC, 0.2, finger_com, finger_inertia)};
    memcpy(b[1].origin, tool_origin, sizeof tool_origin);
    memcpy(b[1].rotation, turn_x, sizeof turn_x);
    b[1].joint_name = "tool_mount";
    memcpy(b[2].origin, finger_origin, sizeof finger_origin);
    b[2].axes[0][1] = 1.0, b[2].axes[0][2] = 0.0;
    char err[256] = "";
    mbd_model *model = build_tree("merged", gravity, 3, b, err, sizeof err);
    if (!model)
        print_error("%s\n", err);
    assert_non_null(model);
    return model;
}

/* The same by hand: the tool's mass properties added to the arm's by sums about the arm's
 * origin (m, m c, I_O = sum R I R^T + m (|c|^2 1 - c c^T)), the finger re-hung from the arm
 * with its placement composed with the tool's. */
static mbd_model *arm_by_hand(void)
{
    double m = 2.0 + 0.5, h[3], I_O[3][3], c_tool[3];
    for (int r = 0; r < 3; r++) {
        c_tool[r] = tool_origin[r];
        for (int k = 0; k < 3; k++)
            c_tool[r] += turn_x[r][k] * tool_com[k];
        h[r] = 2.0 * arm_com[r] + 0.5 * c_tool[r];
    }
    const double *coms[2] = {arm_com, c_tool}, masses[2] = {2.0, 0.5};
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            double turned = 0.0; /* (R I_tool R^T)_rc */
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++)
                    turned += turn_x[r][a] * tool_inertia[a][b] * turn_x[c][b];
            I_O[r][c] = arm_inertia[r][c] + turned;
            for (int p = 0; p < 2; p++) {
                const double *x = coms[p];
                I_O[r][c] += masses[p] *
                             ((r == c) * (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]) - x[r] * x[c]);
            }
        }
    double com[3], I[3][3];
    for (int r = 0; r < 3; r++)
        com[r] = h[r] / m;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            I[r][c] =
                I_O[r][c] - m * ((r == c) * (com[0] * com[0] + com[1] * com[1] + com[2] * com[2]) -
                                 com[r] * com[c]);
    mbd_body_def b[2] = {body("arm", -1, MBD_REVOLUTE, m, com, I),
                         body("finger", 0, MBD_PRISMATIC, 0.2, finger_com, finger_inertia)};
    for (int r = 0; r < 3; r++) {
        b[1].origin[r] = tool_origin[r];
        for (int k = 0; k < 3; k++)
            b[1].origin[r] += turn_x[r][k] * finger_origin[k];
    }
    memcpy(b[1].rotation, turn_x, sizeof turn_x);
    b[1].axes[0][1] = 1.0, b[1].axes[0][2] = 0.0;
    char err[256] = "";
    mbd_model *model = build_tree("by-hand", gravity, 2, b, err, sizeof err);
    assert_non_null(model);
    return model;
}

/* Every solver's qdd on a against the dense solver's on b, both at the same states. */
static void expect_same_dynamics(const mbd_model *a, const mbd_model *b, double tol)
{
    assert_int_equal(mbd_model_nq(a), mbd_model_nq(b));
    const int nv = mbd_model_nv(a);
    mbd_work *ref;
    mbd_work_new(b, mbd_solver_find("dense"), &ref);
    for (int k = 0; k < mbd_solver_count(); k++) {
        const mbd_solver *solver = mbd_solver_at(k);
        if (!(mbd_solver_formulations(solver) & MBD_ACCELERATION))
            continue;
        mbd_work *work;
        mbd_work_new(a, solver, &work);
        for (uint64_t seed = 1; seed <= 3; seed++) {
            state_buf s = state_new(a, seed);
            assert_int_equal(mbd_forward(a, work, s.q, s.qd, s.tau, s.out), MBD_OK);
            assert_int_equal(mbd_forward(b, ref, s.q, s.qd, s.tau, s.ref), MBD_OK);
            assert_close(s.out, s.ref, nv, tol, mbd_solver_name(solver));
            state_free(&s);
        }
        mbd_work_free(work);
    }
    mbd_work_free(ref);
}

static void test_fixed_merge_known_answer(void **state)
{
    (void)state;
    mbd_model *merged = arm_tool_finger(), *hand = arm_by_hand();
    assert_int_equal(mbd_model_nbodies(merged), 2);
    const mbd_body_def *got = mbd_model_body(merged, 0), *want = mbd_model_body(hand, 0);
    assert_true(fabs(got->mass - 2.5) == 0.0);
    assert_close(got->com, want->com, 3, 1e-15, "merged com");
    assert_close(&got->inertia[0][0], &want->inertia[0][0], 9, 1e-13, "merged inertia");
    assert_string_equal(mbd_model_body(merged, 1)->name, "finger");
    assert_int_equal(mbd_model_body(merged, 1)->parent, 0);
    /* the tool stays as a frame of the arm, named, at its place */
    assert_int_equal(mbd_model_nframes(merged), 1);
    const mbd_frame_def *tool = mbd_model_frame(merged, 0);
    assert_string_equal(tool->name, "tool");
    assert_string_equal(tool->joint_name, "tool_mount");
    assert_int_equal(tool->body, 0);
    assert_close(tool->origin, tool_origin, 3, 0.0, "frame origin");
    assert_close(&tool->rotation[0][0], &turn_x[0][0], 9, 0.0, "frame rotation");
    assert_null(mbd_model_frame(merged, 1));
    expect_same_dynamics(merged, hand, 1e-12);
    mbd_model_free(merged);
    mbd_model_free(hand);
}

/* Massless, zero-inertia frames merge away; a fixed body on the world adds nothing; fixed
 * on fixed composes; point masses that are a body only together are accepted merged. */
static void test_fixed_merge_edges(void **state)
{
    (void)state;
    static const double zero[3] = {0}, none[3][3] = {{0}};
    mbd_body_def b[5] = {
        body("stand", -1, MBD_FIXED, 50.0, zero, arm_inertia),
        body("link", 0, MBD_REVOLUTE, 1.0, zero, none), body("p1", 1, MBD_FIXED, 1.0, zero, none),
        body("p2", 2, MBD_FIXED, 1.0, zero, none), body("sensor", 3, MBD_FIXED, 0.0, zero, none)};
    b[1].axes[0][0] = 1.0; /* axis (1, 0, 1) */
    b[2].origin[0] = 0.1;  /* p1 at (0.1, 0, 0) */
    b[3].origin[1] = 0.1;  /* p2 at (0.1, 0.1, 0): composed */
    b[4].origin[2] = 0.3;
    char err[256] = "";
    mbd_model *model = build_tree("points", gravity, 5, b, err, sizeof err);
    if (!model)
        print_error("%s\n", err);
    assert_non_null(model);
    assert_int_equal(mbd_model_nbodies(model), 1);
    assert_int_equal(mbd_model_nframes(model), 4);
    assert_int_equal(mbd_model_frame(model, 0)->body, -1); /* stand: on the world */
    const double sensor_at[3] = {0.1, 0.1, 0.3};
    assert_close(mbd_model_frame(model, 3)->origin, sensor_at, 3, 0.0, "fixed on fixed");
    /* three unit point masses at (0,0,0), (0.1,0,0), (0.1,0.1,0) */
    const mbd_body_def *link = mbd_model_body(model, 0);
    const double com[3] = {0.2 / 3, 0.1 / 3, 0};
    assert_true(link->mass == 3.0);
    assert_close(link->com, com, 3, 1e-15, "points com");
    double I[3][3] = {{0}};
    const double points[3][3] = {{0, 0, 0}, {0.1, 0, 0}, {0.1, 0.1, 0}};
    for (int p = 0; p < 3; p++) {
        double d[3];
        for (int k = 0; k < 3; k++)
            d[k] = points[p][k] - com[k];
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                I[r][c] += (r == c) * (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) - d[r] * d[c];
    }
    assert_close(&link->inertia[0][0], &I[0][0], 9, 1e-14, "points inertia");
    mbd_model_free(model);
    /* one point mass alone is no rigid body: named, with what was merged */
    assert_null(build_tree("point", gravity, 2, b, err, sizeof err));
    assert_non_null(strstr(err, "bodies[1] (\"link\").inertia"));
    b[2].origin[0] = 0.0, b[3].origin[1] = 0.0; /* all three points in one place */
    assert_null(build_tree("points", gravity, 5, b, err, sizeof err));
    assert_non_null(strstr(err, "once its fixed bodies are merged"));
    /* nothing moves */
    assert_null(build_tree("stand", gravity, 1, b, err, sizeof err));
    assert_non_null(strstr(err, "every joint is fixed"));
}

/* A JSON loop may name a body merged by a fixed joint: its frame moves to the carrier. */
static void test_loop_on_fixed_body(void **state)
{
    (void)state;
    static const char model[] =
        "{\"bodies\": ["
        "{\"name\": \"arm\", \"parent\": \"world\", \"joint\": {\"type\": \"revolute\", \"axis\": [0, 0, 1]},"
        " \"mass\": 1, \"com\": [0.5, 0, 0], \"inertia\": [[0.01, 0, 0], [0, 0.1, 0], [0, 0, 0.1]]},"
        "{\"name\": \"holder\", \"parent\": \"arm\", \"joint\": {\"type\": \"fixed\", \"origin\": [1, 0, 0],"
        " \"rotation\": [[1, 0, 0], [0, 0, -1], [0, 1, 0]]},"
        " \"mass\": 0, \"com\": [0, 0, 0], \"inertia\": [[0, 0, 0], [0, 0, 0], [0, 0, 0]]},"
        "{\"name\": \"post\", \"parent\": \"world\", \"joint\": {\"type\": \"fixed\", \"origin\": [0, 2, 0]},"
        " \"mass\": 0, \"com\": [0, 0, 0], \"inertia\": [[0, 0, 0], [0, 0, 0], [0, 0, 0]]}],"
        " \"loops\": [{\"name\": \"pin\", \"type\": \"spherical\", \"body_a\": \"holder\","
        " \"origin_a\": [0, 0.5, 0], \"body_b\": \"post\"}]}";
    char path[64], err[512] = "";
    snprintf(path, sizeof path, "%s", temp_file_with(model, ".json"));
    mbd_model *m;
    mbd_model_load(path, NULL, &m, err, sizeof err);
    if (!m)
        print_error("%s\n", err);
    assert_non_null(m);
    const mbd_loop_def *pin = mbd_model_loop(m, 0);
    assert_int_equal(pin->body_a, 0);
    assert_int_equal(pin->body_b, -1);
    const double a_in_arm[3] = {1, 0, 0.5},
                 b_in_world[3] = {0, 2, 0}; /* R (0, 0.5, 0) = (0, 0, 0.5) */
    assert_close(pin->origin_a, a_in_arm, 3, 0.0, "origin_a on the arm");
    assert_close(pin->origin_b, b_in_world, 3, 0.0, "origin_b in the world");
    assert_close(&pin->rotation_a[0][0], &turn_x[0][0], 9, 0.0, "rotation_a");
    mbd_model_free(m);
    unlink(path);
    /* body_a fixed to the world cannot close a loop */
    char *swapped = strdup(model), *a = strstr(swapped, "\"body_a\": \"holder\"");
    memcpy(a, "\"body_a\": \"post\"  ", strlen("\"body_a\": \"holder\""));
    snprintf(path, sizeof path, "%s", temp_file_with(swapped, ".json"));
    assert_int_equal(mbd_model_load(path, NULL, &m, err, sizeof err), MBD_EPARSE);
    assert_null(m);
    assert_non_null(strstr(err, "loops[0] (\"pin\").body_a: expected a body that moves"));
    free(swapped);
    unlink(path);
}

/* ---- URDF ---- */

static const char arm_urdf[] =
    "<?xml version=\"1.0\"?>\n"
    "<robot name=\"arm-tool-finger\">\n"
    "  <link name=\"world\"/>\n"
    "  <joint name=\"shoulder\" type=\"continuous\">\n"
    "    <parent link=\"world\"/><child link=\"arm\"/><axis xyz=\"0 0 2\"/>\n"
    "  </joint>\n"
    "  <link name=\"arm\">\n"
    "    <inertial><origin xyz=\"0.3 0.02 -0.01\"/><mass value=\"2\"/>\n"
    "      <inertia ixx=\"0.01\" ixy=\"0.001\" ixz=\"0\" iyy=\"0.02\" iyz=\"0.002\" izz=\"0.025\"/>\n"
    "    </inertial>\n"
    "    <visual><geometry><box size=\"1 1 1\"/></geometry></visual>\n"
    "  </link>\n"
    "  <joint name=\"tool_mount\" type=\"fixed\">\n"
    "    <parent link=\"arm\"/><child link=\"tool\"/>\n"
    "    <origin xyz=\"0.5 0.1 0.05\" rpy=\"1.5707963267948966 0 0\"/>\n"
    "  </joint>\n"
    "  <link name=\"tool\">\n"
    "    <inertial><origin xyz=\"0.02 0.04 0.01\" rpy=\"0 0 0\"/><mass value=\"0.5\"/>\n"
    "      <inertia ixx=\"0.001\" ixy=\"0.0001\" ixz=\"0\" iyy=\"0.002\" iyz=\"0\" izz=\"0.0025\"/>\n"
    "    </inertial>\n"
    "  </link>\n"
    "  <joint name=\"slide\" type=\"prismatic\">\n"
    "    <parent link=\"tool\"/><child link=\"finger\"/>\n"
    "    <origin xyz=\"0.1 0 0.03\"/><axis xyz=\"0 1 0\"/><limit lower=\"0\" upper=\"1\"/>\n"
    "  </joint>\n"
    "  <link name=\"finger\">\n"
    /* the inertia given turned by yaw 90 degrees: the same body as finger_inertia */
    "    <inertial><origin xyz=\"0 0 0.02\" rpy=\"0 0 1.5707963267948966\"/><mass value=\"0.2\"/>\n"
    "      <inertia ixx=\"2e-4\" ixy=\"0\" ixz=\"0\" iyy=\"2e-4\" iyz=\"0\" izz=\"1e-4\"/>\n"
    "    </inertial>\n"
    "  </link>\n"
    "</robot>\n";

/* The URDF robot is the one built in memory: names, frames and dynamics. */
static void test_urdf_equals_built_model(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "%s", temp_file_with(arm_urdf, ".urdf"));
    mbd_model *urdf = load_model(path), *built = arm_tool_finger();
    unlink(path);
    assert_string_equal(mbd_model_name(urdf), "arm-tool-finger");
    assert_int_equal(mbd_model_nbodies(urdf), 2);
    assert_string_equal(mbd_model_joint_name(urdf, 0), "shoulder");
    assert_string_equal(mbd_model_joint_name(urdf, 1), "slide");
    assert_string_equal(mbd_model_body(urdf, 1)->name, "finger");
    assert_int_equal(mbd_model_nframes(urdf), 1); /* "world" is the world, not a frame */
    assert_string_equal(mbd_model_frame(urdf, 0)->name, "tool");
    assert_close(&mbd_model_frame(urdf, 0)->rotation[0][0], &turn_x[0][0], 9, 1e-16, "rpy");
    expect_same_dynamics(urdf, built, 1e-12);
    mbd_model_free(urdf);
    mbd_model_free(built);
}

static const char *const arm7_joints[] = {"joint1", "joint2", "joint3", "joint4",
                                          "joint5", "joint6", "joint7"};

static mbd_model *floating_quadruped(void)
{
    char err[256] = "";
    const mbd_load_options floating = {.floating_base = 1};
    mbd_model *quad;
    mbd_model_load("models/quadruped.urdf", &floating, &quad, err, sizeof err);
    assert_non_null(quad);
    return quad;
}

static void test_example_robots_load(void **state)
{
    (void)state;
    mbd_model *arm = load_model("models/arm7.urdf");
    assert_int_equal(mbd_model_nq(arm), 7);
    assert_int_equal(mbd_model_nv(arm), 7);
    double mass = 0.0;
    for (int i = 0; i < 7; i++) {
        assert_string_equal(mbd_model_joint_name(arm, i), arm7_joints[i]);
        assert_int_equal(mbd_model_body(arm, i)->joint, MBD_REVOLUTE);
        mass += mbd_model_body(arm, i)->mass;
    }
    assert_true(fabs(mass - (3.7 + 3.9 + 2.9 + 2.7 + 1.7 + 1.2 + 0.45 + 0.3)) < 1e-12);
    assert_int_equal(mbd_model_nframes(arm), 3);
    assert_string_equal(mbd_model_frame(arm, 1)->name, "flange");
    assert_string_equal(mbd_model_body(arm, mbd_model_frame(arm, 1)->body)->name, "link7");
    mbd_model_free(arm);

    mbd_model *fixed = load_model("models/quadruped.urdf");
    assert_int_equal(mbd_model_nq(fixed), 12);
    assert_int_equal(mbd_model_nframes(fixed), 6); /* the torso too, fixed to the world */
    mbd_model_free(fixed);
    mbd_model *quad = floating_quadruped();
    assert_int_equal(mbd_model_nq(quad), 19);
    assert_int_equal(mbd_model_nv(quad), 18);
    assert_int_equal(mbd_model_nbodies(quad), 13);
    assert_int_equal(mbd_model_body(quad, 0)->joint, MBD_FREE);
    assert_string_equal(mbd_model_body(quad, 0)->name, "torso");
    assert_string_equal(mbd_model_joint_name(quad, 1), "front_left_hip_abduction");
    assert_string_equal(mbd_model_joint_name(quad, 3), "front_left_knee");
    assert_int_equal(mbd_model_nframes(quad), 5);
    mbd_model_free(quad);
}

/* A random state with its quaternions made unit ones. */
static state_buf robot_state(const mbd_model *model, uint64_t seed)
{
    state_buf s = state_new(model, seed);
    mbd_normalize_positions(model, s.q);
    return s;
}

/* Every solver against dense, and RNEA(FD(tau)) = tau. */
static void check_robot_identities(mbd_model *model)
{
    const int nv = mbd_model_nv(model);
    mbd_work *dense;
    mbd_work_new(model, mbd_solver_find("dense"), &dense);
    for (uint64_t seed = 1; seed <= 4; seed++) {
        for (int k = 0; k < mbd_solver_count(); k++) {
            state_buf s = robot_state(model, seed);
            check_against_dense_at(model, mbd_solver_at(k), &s, 1e-10,
                                   mbd_solver_name(mbd_solver_at(k)));
            state_free(&s);
        }
        state_buf s = robot_state(model, seed);
        assert_int_equal(mbd_forward(model, dense, s.q, s.qd, s.tau, s.out), MBD_OK);
        assert_int_equal(mbd_inverse_dynamics(model, dense, s.q, s.qd, s.out, s.ref, NULL), MBD_OK);
        assert_close(s.ref, s.tau, nv, 1e-10, "RNEA(FD(tau))");
        state_free(&s);
    }
    mbd_work_free(dense);
    mbd_model_free(model);
}

static void test_robots_solvers_agree(void **state)
{
    (void)state;
    check_robot_identities(load_model("models/arm7.urdf"));
    check_robot_identities(load_model("models/quadruped.urdf"));
    check_robot_identities(floating_quadruped());
}

/* At rest, without torques, a floating robot falls as one body: the base accelerates at g
 * (in its own frame, R^T g), and no joint moves. */
static void test_floating_robot_falls_at_g(void **state)
{
    (void)state;
    mbd_model *quad = floating_quadruped();
    const int nv = mbd_model_nv(quad);
    for (int k = 0; k < mbd_solver_count(); k++) {
        const mbd_solver *solver = mbd_solver_at(k);
        if (!(mbd_solver_formulations(solver) & MBD_ACCELERATION))
            continue;
        mbd_work *work;
        mbd_work_new(quad, solver, &work);
        state_buf s = robot_state(quad, 7);
        memset(s.qd, 0, (size_t)nv * sizeof *s.qd);
        assert_int_equal(mbd_forward(quad, work, s.q, s.qd, NULL, s.out), MBD_OK);
        const double w = s.q[3], x = s.q[4], y = s.q[5], z = s.q[6];
        /* R^T (0, 0, -g): minus g times R's third row */
        const double R3[3] = {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)};
        double expected[64] = {0};
        for (int r = 0; r < 3; r++)
            expected[3 + r] = -9.81 * R3[r];
        assert_true(rel_error(s.out, expected, nv, 1.0) <= 1e-12);
        state_free(&s);
        mbd_work_free(work);
    }
    mbd_model_free(quad);
}

/* ---- malformed files: one line naming the file and the line ---- */

static void expect_urdf_error(const char *text, int line, const char *fragment)
{
    char path[64], where[96], err[512] = "";
    snprintf(path, sizeof path, "%s", temp_file_with(text, ".urdf"));
    snprintf(where, sizeof where, "%s:%d: ", path, line);
    mbd_model *model;
    mbd_model_load(path, NULL, &model, err, sizeof err);
    unlink(path);
    if (model || strncmp(err, where, strlen(where)) != 0 || !strstr(err, fragment) ||
        strchr(err, '\n'))
        print_error("expected \"%s...%s\", got \"%s\"\n", where, fragment, err);
    assert_null(model);
    assert_int_equal(strncmp(err, where, strlen(where)), 0);
    assert_non_null(strstr(err, fragment));
    assert_null(strchr(err, '\n'));
}

#define INERTIAL                                                                                   \
    "<inertial><mass value=\"1\"/><inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial>"
#define LINK(name) "<link name=\"" name "\">" INERTIAL "</link>\n"
#define JOINT(name, type, parent, child, extra)                                                    \
    "<joint name=\"" name "\" type=\"" type "\"><parent link=\"" parent "\"/><child link=\"" child \
    "\"/>" extra "</joint>\n"

static void test_malformed_urdf(void **state)
{
    (void)state;
    expect_urdf_error("<robot name=\"r\">\n<link name=\"a\">\n</robot>\n", 3, "malformed XML");
    expect_urdf_error("<?xml version=\"1.0\"?>\n<robt/>\n", 2, "expected <robot>");
    expect_urdf_error("<robot>\n<joint name=\"j\"/>\n</robot>\n", 1, "no <link>");
    expect_urdf_error("<robot>\n" LINK("a") "<link/>\n</robot>\n", 3, "link: missing name");
    expect_urdf_error("<robot>\n" LINK("a") LINK("b") LINK("a") "</robot>\n", 4,
                      "link \"a\": duplicate name (also on line 2)");
    expect_urdf_error("<robot>\n" LINK("a")
                          LINK("b") "<joint name=\"j\">\n"
                                    "<parent link=\"a\"/><child link=\"b\"/></joint>\n</robot>\n",
                      4, "joint \"j\": missing type");
    expect_urdf_error("<robot>\n" LINK("a") LINK("b")
                          JOINT("j", "planar", "a", "b", "") "</robot>\n",
                      4, "planar joints are not supported");
    expect_urdf_error("<robot>\n" LINK("a") LINK("b")
                          JOINT("j", "screw", "a", "b", "") "</robot>\n",
                      4, "unknown type \"screw\"");
    expect_urdf_error("<robot>\n" LINK("a") LINK("b")
                          JOINT("j", "revolute", "a", "c", "") "</robot>\n",
                      4, "<child>: no link called \"c\"");
    expect_urdf_error("<robot>\n" LINK("a") LINK("b") LINK("c") JOINT("j", "revolute", "a", "c", "")
                          JOINT("k", "revolute", "b", "c", "") "</robot>\n",
                      6, "already the child of joint \"j\" (line 5): a closed loop");
    expect_urdf_error("<robot>\n" LINK("a") LINK("b") "</robot>\n", 3,
                      "link \"b\": a second root (the first is \"a\", line 2)");
    expect_urdf_error("<robot>\n" LINK("r") LINK("a") LINK("b") JOINT("j", "revolute", "a", "b", "")
                          JOINT("k", "revolute", "b", "a", "") "</robot>\n",
                      3, "link \"a\": not connected to the root \"r\"");
    expect_urdf_error("<robot>\n" LINK("a") LINK("b")
                          JOINT("j", "revolute", "a", "b", "\n<axis xyz=\"0 0 0\"/>") "</robot>\n",
                      5, "joint \"j\": <axis xyz>: expected a non-zero vector");
    expect_urdf_error("<robot>\n" LINK("a") LINK("b") JOINT(
                          "j", "revolute", "a", "b", "\n<origin xyz=\"1 2 x\"/>") "</robot>\n",
                      5, "<origin xyz>: expected 3 finite numbers, got \"1 2 x\"");
    expect_urdf_error(
        "<robot>\n" LINK(
            "a") "<link name=\"b\"><inertial><mass value=\"1\"/>\n"
                 "<inertia ixx=\"1\" ixy=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial></link>\n" JOINT(
                     "j", "revolute", "a", "b", "") "</robot>\n",
        4, "link \"b\": <inertia>: missing ixz");
    expect_urdf_error("<robot>\n" LINK("a") "<link name=\"b\"/>\n" JOINT("j", "revolute", "a", "b",
                                                                         "") "</robot>\n",
                      3,
                      "link \"b\": moves (joint \"j\") but has no mass and carries no moving link");
    expect_urdf_error(
        "<robot>\n" LINK(
            "a") "<link name=\"b\"><inertial><mass value=\"1\"/>\n"
                 "<inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"3\"/></inertial></link>\n" JOINT(
                     "j", "revolute", "a", "b", "") "</robot>\n",
        3, "link \"b\": inertia: principal moments 1, 1, 3 violate the triangle inequality");
    expect_urdf_error("<?xml version=\"1.0\"?>\n<!DOCTYPE robot [<!ENTITY a \"aaaa\">]>\n"
                      "<robot>" LINK("a") "</robot>\n",
                      2, "(<!DOCTYPE>) is not supported");
    expect_urdf_error("<robot>\n" LINK("a") "</robot>\n", 1, "robot: no joint moves");
    expect_urdf_error("<robot>\n<link name=\"world\"/>\n</robot>\n", 1, "robot: no joint moves");
}

/* ---- the command line ---- */

static void test_cli_info_json(void **state)
{
    (void)state;
    json_t *info = run_json("info models/arm7.urdf --json");
    assert_int_equal(json_integer_value(json_object_get(info, "nq")), 7);
    json_t *joints = json_object_get(info, "joints");
    assert_int_equal(json_array_size(joints), 10); /* 7 moving, 3 fixed */
    for (int i = 0; i < 7; i++) {
        json_t *j = json_array_get(joints, (size_t)i);
        assert_string_equal(json_string_value(json_object_get(j, "name")), arm7_joints[i]);
        assert_string_equal(json_string_value(json_object_get(j, "type")), "revolute");
        assert_int_equal(json_integer_value(json_object_get(j, "q_index")), i);
        assert_int_equal(json_integer_value(json_object_get(j, "nv")), 1);
    }
    json_t *flange = json_array_get(joints, 8);
    assert_string_equal(json_string_value(json_object_get(flange, "name")), "flange_mount");
    assert_string_equal(json_string_value(json_object_get(flange, "type")), "fixed");
    assert_string_equal(json_string_value(json_object_get(flange, "body")), "link7");
    assert_int_equal(json_integer_value(json_object_get(flange, "nq")), 0);
    json_decref(info);

    info = run_json("info models/quadruped.urdf --floating-base --json");
    assert_int_equal(json_integer_value(json_object_get(info, "nq")), 19);
    assert_int_equal(json_integer_value(json_object_get(info, "nv")), 18);
    json_t *knee = json_array_get(json_object_get(info, "joints"), 3);
    assert_string_equal(json_string_value(json_object_get(knee, "name")), "front_left_knee");
    assert_int_equal(json_integer_value(json_object_get(knee, "q_index")), 9);
    assert_int_equal(json_integer_value(json_object_get(knee, "v_index")), 8);
    json_decref(info);
}

static void test_cli_floating_base(void **state)
{
    (void)state;
    /* free fall at rest in the identity orientation: (0, 0, 0, 0, 0, -g, 0, ...) */
    json_t *fd = run_json("fd models/quadruped.urdf --floating-base --solver bodies "
                          "--q 0,0,0.4,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0");
    json_t *qdd = json_object_get(fd, "qdd");
    assert_int_equal(json_array_size(qdd), 18);
    assert_true(fabs(json_real_value(json_array_get(qdd, 5)) + 9.81) < 1e-12);
    assert_true(fabs(json_real_value(json_array_get(qdd, 8))) < 1e-12);
    json_decref(fd);
    json_t *id = run_json("id models/quadruped.urdf --floating-base");
    assert_int_equal(json_array_size(json_object_get(id, "tau")), 18);
    json_decref(id);
    expect_mbd(
        "simulate models/quadruped.urdf --floating-base --integrator rk4 --dt 0.01 --t1 0.02 "
        "--q0 0,0,0.4,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0",
        0, "torso");
    expect_rejected("fd models/quadruped.urdf --floating-base --q 0,0,0",
                    (const char *const[]){"--q", "expected 19 numbers", NULL});
    expect_rejected("info models/double-pendulum.json --floating-base",
                    (const char *const[]){"double-pendulum.json", "URDF models only", NULL});
    expect_rejected("info models/arm7.urdf --floating-base",
                    (const char *const[]){"arm7.urdf:6:", "the root is the world itself", NULL});
    expect_mbd("recommend models/arm7.urdf", 0, "bodies");
}

/* A <mimic> joint (a gripper's second finger) keeps a coordinate of its own, as in
 * Pinocchio's default URDF model; the coupling is listed as left out. */
static void test_mimic_joint_keeps_its_coordinate(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "%s",
             temp_file_with("<robot name=\"gripper\">\n" LINK("a") LINK("b") LINK("c")
                                JOINT("j", "prismatic", "a", "b", "<axis xyz=\"0 1 0\"/>") JOINT(
                                    "k", "prismatic", "a", "c",
                                    "<axis xyz=\"0 -1 0\"/><mimic joint=\"j\"/>") "</robot>\n",
                            ".urdf"));
    mbd_model *model = load_model(path);
    unlink(path);
    assert_int_equal(mbd_model_nv(model), 2);
    assert_string_equal(mbd_model_joint_name(model, 1), "k");
    assert_string_equal(mbd_model_left_out(model),
                        "1 <mimic> coupling (each joint keeps its own coordinate)");
    mbd_model_free(model);
    mbd_model *plain = load_model("models/arm7.urdf");
    assert_null(mbd_model_left_out(plain));
    mbd_model_free(plain);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixed_merge_known_answer),
        cmocka_unit_test(test_fixed_merge_edges),
        cmocka_unit_test(test_loop_on_fixed_body),
        cmocka_unit_test(test_urdf_equals_built_model),
        cmocka_unit_test(test_example_robots_load),
        cmocka_unit_test(test_robots_solvers_agree),
        cmocka_unit_test(test_floating_robot_falls_at_g),
        cmocka_unit_test(test_malformed_urdf),
        cmocka_unit_test(test_mimic_joint_keeps_its_coordinate),
        cmocka_unit_test(test_cli_info_json),
        cmocka_unit_test(test_cli_floating_base),
    };
    return cmocka_run_group_tests_name("urdf", tests, NULL, NULL);
}
