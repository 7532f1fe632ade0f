/* MuJoCo as an independent check of frames, joints and inertias: every generator
 * family and joint type (ball and free joints too), N up to 300, exported by mbd_export_mjcf and compared by
 * build/peer-mujoco (PEER_MUJOCO names another binary), which links the mujoco wheel's libmujoco
 * and fails when qdd, H or the bias forces differ by more than 1e-10 (qdd: or than
 * cond(H) allows). Also the export's files and the `mbd export` command. */
#include "support.h"

#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* 300 links nest 300 levels deep: the export splits them into include files. */
static const char *const peer_models[] = {
    "tree:n=300,branching=1,skew=0.5",
    "tree:n=300,branching=2,skew=0.5",
    "tree:n=40,branching=3,skew=-1.2,taper=0.9",
    "chain:n=300,joint=revolute",
    "chain:n=300,joint=prismatic",
    "chain:n=300,joint=cylindrical",
    "chain:n=300,joint=cardan",
    "rods:n=300",
    "tree:n=1",
    "chain:n=1,joint=cardan",
    "chain:n=7,joint=cylindrical",
    "rods:n=2",
    "models/double-pendulum.json",
    "models/cylindrical-tree.json",
    "models/cardan-chain.json",
    /* ball joints; free joints with the identity and a turned, offset joint frame */
    "chain:n=80,joint=spherical",
    "tree:n=300,branching=2,skew=0.5,base=free",
    "chain:n=30,joint=spherical,base=free",
    "legged:legs=4,dof=3",
};

/* Model files. URDF robots, through our export and read by MuJoCo itself (--direct: its
 * URDF parser, which fuses the fixed links as we merge them, with limits and damping
 * switched off).
 * MuJoCo diagonalizes a URDF's full <inertia> itself; on arm7, whose links have products
 * of inertia and close principal moments, its H then differs from ours by 1.1e-8 and its
 * qacc by 6.7e-10, while our export (principal axes computed in double) agrees to 3e-14,
 * and so does the direct route on arm7 with its products of inertia set to zero (2e-14).
 * Hence arm7's direct route at 1e-7. */
static const char *const file_checks[] = {
    "models/arm7.urdf",
    "models/arm7.urdf --direct --tolerance 1e-7",
    "models/quadruped.urdf",
    "models/quadruped.urdf --direct",
    "models/quadruped.urdf --floating-base",
    "models/passive-arm.json", /* armature, springs, dampers, gravcomp through the export */
    /* MJCF models read by our loader (MuJoCo's compiler) against MuJoCo reading the same
     * file (--direct), coordinates matched by joint name; and the round trip MJCF -> our
     * export -> MuJoCo where no body has several joints (the export refuses the massless
     * bodies that split them). */
    "models/mjcf/arm.xml --direct",
    "models/mjcf/quadruped.xml --direct",
    "models/mjcf/ball-tree.xml --direct",
    "models/mjcf/two-joints.xml --direct",
    "models/mjcf/passive.xml --direct",
    "models/mjcf/arm.xml",
    "models/mjcf/ball-tree.xml",
};

static const char *const reference_files[] = {
    "tests/reference/revolute-prismatic-tree.json",
    "tests/reference/mixed-tree.json",
    "tests/reference/cardan-tree.json",
};

/* Names that XML must escape, and a space; the last body is a lamina (A + B = C), turned
 * so that its principal moments come out of the decomposition an ulp off. */
static const char escaped_names_model[] =
    "{\"name\": \"a<b>&'c'\", \"gravity\": [0.1, -9.8, 0.3], \"bodies\": ["
    "{\"name\": \"x&y\", \"parent\": \"world\","
    " \"joint\": {\"type\": \"cardan\", \"axes\": [[1, 0, 0], [0, 1, 1]]},"
    " \"mass\": 1.5, \"com\": [0.1, 0.2, 0],"
    " \"inertia\": [[0.2, 0.01, 0], [0.01, 0.3, 0], [0, 0, 0.4]]},"
    "{\"name\": \"<\\\"quoted\\\">\", \"parent\": \"x&y\","
    " \"joint\": {\"type\": \"cylindrical\", \"axis\": [0, 1, 0], \"origin\": [0.5, 0, 0]},"
    " \"mass\": 0.7, \"com\": [0, 0.3, 0.1],"
    " \"inertia\": [[0.05, 0, 0], [0, 0.06, 0], [0, 0, 0.07]]},"
    "{\"name\": \"with space\", \"parent\": \"x&y\","
    " \"joint\": {\"type\": \"prismatic\", \"axis\": [1, 1, 0], \"origin\": [0, 0.4, 0]},"
    " \"mass\": 0.9, \"com\": [0, 0, 0.2], \"inertia\": [[0.031138305371652505,"
    " -0.0044024571192746416, 0.0097064116155708285], [-0.0044024571192746416,"
    " 0.023858033991627649, 0.0020830952516782044], [0.0097064116155708285,"
    " 0.0020830952516782044, 0.045003660636719844]]}]}";

/* Runs `peer-mujoco check MODEL [ARGS]`, its report line going to the test's output;
 * 0 = agree. */
static int peer_check_with(const char *model, const char *args)
{
    const char *peer = getenv("PEER_MUJOCO");
    char command[1024];
    snprintf(command, sizeof command, "%s check '%s' --states 3 %s </dev/null",
             peer && *peer ? peer : "build/peer-mujoco", model, args);
    fflush(stdout);
    const int rc = system(command);
    return rc != -1 && WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static int peer_check(const char *model) { return peer_check_with(model, ""); }

/* "MODEL ARGS" */
static void test_peer_agrees_on_file(void **state)
{
    char model[128];
    snprintf(model, sizeof model, "%s", (const char *)*state);
    char *args = strchr(model, ' ');
    if (args)
        *args++ = '\0';
    assert_int_equal(peer_check_with(model, args ? args : ""), 0);
}

static void test_peer_agrees(void **state) { assert_int_equal(peer_check(*state), 0); }

/* The reference file's "model" member, written out alone as a model file. */
static void test_peer_agrees_on_reference(void **state)
{
    json_error_t error;
    json_t *root = json_load_file(*state, 0, &error);
    assert_non_null(root);
    char *text = json_dumps(json_object_get(root, "model"), JSON_REAL_PRECISION(17));
    assert_non_null(text);
    char path[64];
    snprintf(path, sizeof path, "%s", temp_file_with(text, ".json"));
    const int status = peer_check(path);
    unlink(path);
    free(text);
    json_decref(root);
    assert_int_equal(status, 0);
}

static void test_peer_agrees_on_escaped_names(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "%s", temp_file_with(escaped_names_model, ".json"));
    const int status = peer_check(path);
    unlink(path);
    assert_int_equal(status, 0);
}

/* ---- the export's files ---- */

static char *read_text(const char *path)
{
    FILE *in = fopen(path, "r");
    assert_non_null(in);
    fseek(in, 0, SEEK_END);
    const long size = ftell(in);
    rewind(in);
    char *text = malloc((size_t)size + 1);
    assert_int_equal(fread(text, 1, (size_t)size, in), (size_t)size);
    text[size] = '\0';
    fclose(in);
    return text;
}

/* The deepest element nesting of an XML text (comments and declarations skipped). */
static int element_depth(const char *xml)
{
    int depth = 0, deepest = 0;
    for (const char *c = strchr(xml, '<'); c; c = strchr(c + 1, '<')) {
        if (c[1] == '!' || c[1] == '?')
            continue;
        if (c[1] == '/') {
            depth--;
            continue;
        }
        const char *end = strchr(c, '>');
        assert_non_null(end);
        if (++depth > deepest)
            deepest = depth;
        if (end[-1] == '/')
            depth--;
    }
    assert_int_equal(depth, 0);
    return deepest;
}

/* Names the directory's entries, sorted, into one space-separated string. */
static void list_directory(const char *dir, char *out, size_t size)
{
    struct dirent **entries;
    const int n = scandir(dir, &entries, NULL, alphasort);
    assert_true(n >= 0);
    out[0] = '\0';
    for (int k = 0; k < n; k++) {
        if (entries[k]->d_name[0] != '.')
            snprintf(out + strlen(out), size - strlen(out), "%s%s", out[0] ? " " : "",
                     entries[k]->d_name);
        free(entries[k]);
    }
    free(entries);
}

static void remove_directory(const char *dir)
{
    char names[1024], path[256];
    list_directory(dir, names, sizeof names);
    for (char *save = NULL, *name = strtok_r(names, " ", &save); name;
         name = strtok_r(NULL, " ", &save)) {
        snprintf(path, sizeof path, "%s/%s", dir, name);
        unlink(path);
    }
    rmdir(dir);
}

/* 150 nested bodies: a main file and two includes, each within tinyxml2's depth of 100,
 * and no temporary file left behind. */
static void test_export_splits_deep_chains(void **state)
{
    (void)state;
    char dir[] = "/tmp/mbd-mjcf-XXXXXX", path[64], names[1024];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/chain.xml", dir);
    mbd_model *model = load_model("chain:n=150,joint=cardan");
    char err[256];
    assert_int_equal(mbd_export_mjcf(model, path, err, sizeof err), MBD_OK);
    list_directory(dir, names, sizeof names);
    assert_string_equal(names, "chain.part1.xml chain.part2.xml chain.xml");
    const char *const files[] = {"chain.xml", "chain.part1.xml", "chain.part2.xml"};
    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[k]);
        char *xml = read_text(path);
        assert_true(element_depth(xml) <= 100);
        assert_int_equal(strstr(xml, "<include") != NULL, k < 2);
        free(xml);
    }
    mbd_model_free(model);
    remove_directory(dir);
}

static void test_export_reports_unwritable_path(void **state)
{
    (void)state;
    mbd_model *model = load_model("rods:n=2");
    char err[256] = "";
    assert_int_equal(mbd_export_mjcf(model, "/nonexistent-dir/m.xml", err, sizeof err), MBD_EIO);
    assert_non_null(strstr(err, "/nonexistent-dir/m.xml"));
    assert_null(strchr(err, '\n'));
    mbd_model_free(model);
}

/* ---- mbd export ---- */

static void test_cli_export(void **state)
{
    (void)state;
    char dir[] = "/tmp/mbd-mjcf-XXXXXX", args[256], names[256];
    assert_non_null(mkdtemp(dir));
    snprintf(args, sizeof args, "export mjcf rods:n=3 --out %s/rods.xml", dir);
    cli_result r = mbd_run(args);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "");
    cli_result_free(&r);
    list_directory(dir, names, sizeof names);
    assert_string_equal(names, "rods.xml");
    remove_directory(dir);
}

/* Exit status and the one stderr line naming what was wrong. */
static void expect_export_error(const char *args, int status, const char *needle)
{
    cli_result r = mbd_run(args);
    if (r.status != status || !strstr(r.err, needle))
        print_error("mbd %s: exit %d, stderr: %s\n", args, r.status, r.err);
    assert_int_equal(r.status, status);
    assert_non_null(strstr(r.err, needle));
    assert_ptr_equal(strchr(r.err, '\n'), r.err + strlen(r.err) - 1);
    cli_result_free(&r);
}

static void test_cli_export_errors(void **state)
{
    (void)state;
    expect_export_error("export stl rods:n=3 --out /tmp/x.stl", 2, "stl");
    expect_export_error("export mjcf rods:n=3", 2, "--out");
    expect_export_error("export mjcf rods:n=0 --out /tmp/x.xml", 2, "rods:n=0");
    expect_export_error("export mjcf rods:n=3 --out /nonexistent-dir/x.xml", 2, /* as given */
                        "/nonexistent-dir/x.xml");
    char args[256];
    snprintf(
        args, sizeof args, "export mjcf %s --out /tmp/mbd-massless.xml",
        temp_file_with(
            "{\"bodies\": [{\"name\": \"frame\", \"parent\": \"world\","
            " \"joint\": {\"type\": \"revolute\", \"axis\": [0, 0, 1]},"
            " \"mass\": 0, \"com\": [0, 0, 0], \"inertia\": [[0, 0, 0], [0, 0, 0], [0, 0, 0]]},"
            " {\"name\": \"link\", \"parent\": \"frame\","
            " \"joint\": {\"type\": \"revolute\", \"axis\": [1, 0, 0]},"
            " \"mass\": 1, \"com\": [0.5, 0, 0], \"inertia\": [[0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1]]}]}",
            ".json"));
    expect_export_error(args, 1, "massless");
    expect_export_error(
        "export mjcf chain:n=3,joint=free --out /tmp/x.xml", 1,
        "bodies[1] (\"b2\").joint: free: MuJoCo allows free joints on children of the world only");
}

/* ---- MJCF models ---- */

/* An MJCF file of one pendulum whose <joint> has the extra attributes, and around its
 * <worldbody> the extra elements. */
static const char *mjcf_with(const char *joint_attributes, const char *elements)
{
    static char text[1024];
    snprintf(text, sizeof text,
             "<mujoco model=\"m\">%s<worldbody><body name=\"b\"><joint name=\"j\" %s/>"
             "<body name=\"c\" pos=\"0 0 -1\"><joint name=\"k\" type=\"slide\"/>"
             "<geom type=\"sphere\" size=\"0.1\"/></body>"
             "<geom type=\"capsule\" fromto=\"0 0 0 0 0 -1\" size=\"0.05\"/></body>"
             "</worldbody></mujoco>",
             elements, joint_attributes);
    return temp_file_with(text, ".xml");
}

/* mbd info on the file, refused (exit 2, one line) naming the file and each needle. */
static void expect_mjcf_refused(const char *path, const char *needle, const char *needle2)
{
    char args[256];
    snprintf(args, sizeof args, "info %s", path);
    const char *const needles[] = {path, needle, needle2, NULL};
    expect_rejected(args, needles);
    unlink(path);
}

/* What forward dynamics does not model, refused with the element and attribute. */
static void test_mjcf_refusals(void **state)
{
    (void)state;
    /* every offending element in one message, each with its reason */
    expect_mjcf_refused(
        temp_file_with("<mujoco><option density=\"1.2\"/><worldbody><site name=\"p\"/>"
                       "<body name=\"b\"><joint name=\"j\"/><site name=\"r\" pos=\"0 0 -1\"/>"
                       "<geom type=\"sphere\" size=\"0.1\"/></body></worldbody><tendon>"
                       "<spatial name=\"s\" stiffness=\"5\"><site site=\"p\"/><site "
                       "site=\"r\"/></spatial></tendon></mujoco>",
                       ".xml"),
        "<option> density=\"1.2\": fluid forces",
        "<spatial name=\"s\"> stiffness: a spatial tendon's passive forces");
    expect_mjcf_refused(mjcf_with("class=\"soft\"", "<compiler angle=\"radian\"/><default><default "
                                                    "class=\"soft\"><joint stiffness=\"3\" "
                                                    "springyield=\"1\"/></default></default>"),
                        "<joint name=\"j\" class=\"soft\"> springyield=\"1\"", "plastic");
    expect_mjcf_refused(mjcf_with("", "<tendon><fixed name=\"t\" armature=\"0.2\"><joint joint="
                                      "\"j\" coef=\"1\"/></fixed></tendon>"),
                        "<fixed name=\"t\"> armature=\"0.2\"", "not modelled");
    /* With fluid forces' passive flags off they do nothing: accepted. */
    const char *quiet = mjcf_with("damping=\"2\" stiffness=\"3\"",
                                  "<option density=\"1.2\"><flag spring=\"disable\" "
                                  "damper=\"disable\"/></option>");
    char args[256];
    snprintf(args, sizeof args, "info %s", quiet);
    expect_mbd(args, 0, "nv 2");
    unlink(quiet);
}

/* What the smooth dynamics leave out loads, listed by mbd info (text and JSON) and in one
 * line on stderr of the other commands. */
static void test_mjcf_left_out(void **state)
{
    (void)state;
    const char *path = mjcf_with("frictionloss=\"0.5\" range=\"-1 1\" limited=\"true\"",
                                 "<equality><joint name=\"e\" joint1=\"j\" joint2=\"k\"/>"
                                 "</equality><tendon><fixed name=\"t\"><joint joint=\"j\" "
                                 "coef=\"1\"/></fixed></tendon>");
    char args[256];
    snprintf(args, sizeof args, "info %s", path);
    expect_mbd2(args, 0, "left out: ", "1 equality constraint");
    snprintf(args, sizeof args, "info %s --json", path);
    json_t *info = run_json(args);
    const json_t *left_out = json_object_get(info, "left_out");
    assert_true(json_is_array(left_out) && json_array_size(left_out) == 5);
    static const char *const kinds[] = {"contacts", "limit", "frictionloss", "equality constraint",
                                        "tendon without passive forces"};
    for (size_t k = 0; k < 5; k++)
        assert_non_null(strstr(json_string_value(json_array_get(left_out, k)), kinds[k]));
    json_decref(info);
    snprintf(args, sizeof args, "fd %s", path);
    expect_mbd2(args, 0, "qdd", NULL);
    cli_result run = mbd_run(args);
    assert_non_null(strstr(run.err, "left out of the dynamics: "));
    assert_null(strchr(strchr(run.err, '\n') + 1, '\n')); /* one line */
    cli_result_free(&run);
    unlink(path);
}

/* Malformed MJCF: MuJoCo's compiler's message on one line, naming the file and line. */
static void test_mjcf_malformed(void **state)
{
    (void)state;
    expect_mjcf_refused(temp_file_with("<mujoco><worldbody><body><joint type=\"hinge\"/>"
                                       "</worldbody></mujoco>",
                                       ".xml"),
                        "MuJoCo's compiler", "Line number=1");
    expect_mjcf_refused(mjcf_with("type=\"screw\"", ""), "MuJoCo's compiler", "screw");
    const char *path = mjcf_with("", "");
    char args[256];
    snprintf(args, sizeof args, "info %s --floating-base", path);
    const char *const needles[] = {path, "floating base", NULL};
    expect_rejected(args, needles);
    unlink(path);
}

/* Every solver (the momentum forms too) against dense, which the peer checks hold to
 * MuJoCo's qacc: each MJCF model at random states. */
static void test_mjcf_every_solver(void **state)
{
    (void)state;
    const char *const files[] = {"models/mjcf/arm.xml", "models/mjcf/quadruped.xml",
                                 "models/mjcf/ball-tree.xml", "models/mjcf/two-joints.xml"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        mbd_model *model = load_model(files[f]);
        for (uint64_t seed = 1; seed <= 3; seed++)
            for (int k = 0; k < mbd_solver_count(); k++) {
                state_buf s = state_new(model, seed);
                mbd_normalize_positions(model, s.q);
                check_against_dense_at(model, mbd_solver_at(k), &s, 1e-10,
                                       mbd_solver_name(mbd_solver_at(k)));
                state_free(&s);
            }
        mbd_model_free(model);
    }
}

/* mbd info --json names the joints as MuJoCo does, in qpos order: the quadruped's hips
 * have two joints each, the first on a massless body. */
static void test_mjcf_joint_names(void **state)
{
    (void)state;
    json_t *info = run_json("info models/mjcf/quadruped.xml --json");
    json_t *joints = json_object_get(info, "joints");
    const char *const names[] = {"root", "FL_abduct", "FL_flex", "FL_knee"};
    const int q_index[] = {0, 7, 8, 9};
    for (int k = 0; k < 4; k++) {
        json_t *joint = json_array_get(joints, (size_t)k);
        assert_string_equal(json_string_value(json_object_get(joint, "name")), names[k]);
        assert_int_equal(json_integer_value(json_object_get(joint, "q_index")), q_index[k]);
    }
    assert_int_equal(json_integer_value(json_object_get(info, "nq")), 19);
    json_decref(info);
}

/* qdd of the model's dense solver at s, into out. */
static void dense_qdd(const mbd_model *model, const state_buf *s, double *out)
{
    mbd_work *work;
    assert_int_equal(mbd_work_new(model, mbd_solver_find("dense"), &work), MBD_OK);
    assert_int_equal(mbd_forward(model, work, s->q, s->qd, s->tau, out), MBD_OK);
    mbd_work_free(work);
}

/* mbd_model_load_text reads a file's text as mbd_model_load reads the file (MJCF compiled
 * from memory, arm.xml's <include> found beside the name given): the same qdd, bit for
 * bit; a refusal names the name; no text, no MuJoCo model: MBD_EINVAL. */
static void test_load_text_is_the_file(void **state)
{
    (void)state;
    const char *const files[] = {"models/mjcf/arm.xml", "models/mjcf/quadruped.xml",
                                 "models/arm7.urdf", "models/double-pendulum.json"};
    char err[MBD_ERROR_SIZE] = "";
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char *text = read_text_file(files[f]);
        mbd_model *from_text, *from_file = load_model(files[f]);
        assert_int_equal(mbd_model_load_text(text, files[f], NULL, &from_text, err, sizeof err),
                         MBD_OK);
        state_buf s = state_new(from_file, 5);
        mbd_normalize_positions(from_file, s.q);
        dense_qdd(from_file, &s, s.ref);
        dense_qdd(from_text, &s, s.out);
        assert_memory_equal(s.ref, s.out, (size_t)s.nv * sizeof *s.out);
        state_free(&s);
        mbd_model_free(from_text), mbd_model_free(from_file), free(text);
    }
    mbd_model *model;
    assert_int_equal(mbd_model_load_text("<mujoco><worldbody><body><joint/></body></worldbody>"
                                         "</mujoco>",
                                         "massless.xml", NULL, &model, err, sizeof err),
                     MBD_EPARSE);
    assert_non_null(strstr(err, "massless.xml: MuJoCo's compiler"));
    assert_int_equal(mbd_model_load_text(NULL, "x", NULL, &model, err, sizeof err), MBD_EINVAL);
    assert_int_equal(mbd_model_from_mujoco(NULL, "x", &model, err, sizeof err), MBD_EINVAL);
    assert_null(model);
}

int main(void)
{
    const struct CMUnitTest fixed[] = {
        cmocka_unit_test(test_peer_agrees_on_escaped_names),
        cmocka_unit_test(test_export_splits_deep_chains),
        cmocka_unit_test(test_export_reports_unwritable_path),
        cmocka_unit_test(test_cli_export),
        cmocka_unit_test(test_cli_export_errors),
        cmocka_unit_test(test_mjcf_every_solver),
        cmocka_unit_test(test_mjcf_refusals),
        cmocka_unit_test(test_mjcf_left_out),
        cmocka_unit_test(test_mjcf_malformed),
        cmocka_unit_test(test_mjcf_joint_names),
        cmocka_unit_test(test_load_text_is_the_file),
    };
    enum { NPEER = sizeof peer_models / sizeof peer_models[0] };
    enum { NREF = sizeof reference_files / sizeof reference_files[0] };
    enum { NFILE = sizeof file_checks / sizeof file_checks[0] };
    struct CMUnitTest tests[NPEER + NFILE + NREF + sizeof fixed / sizeof fixed[0]];
    size_t n = 0;
    for (int k = 0; k < NPEER; k++) /* named by the model, which the output then shows */
        tests[n++] = (struct CMUnitTest){.name = peer_models[k],
                                         .test_func = test_peer_agrees,
                                         .initial_state = (void *)peer_models[k]};
    for (int k = 0; k < NFILE; k++)
        tests[n++] = (struct CMUnitTest){.name = file_checks[k],
                                         .test_func = test_peer_agrees_on_file,
                                         .initial_state = (void *)file_checks[k]};
    for (int k = 0; k < NREF; k++)
        tests[n++] = (struct CMUnitTest){.name = reference_files[k],
                                         .test_func = test_peer_agrees_on_reference,
                                         .initial_state = (void *)reference_files[k]};
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++)
        tests[n++] = fixed[k];
    return _cmocka_run_group_tests("mujoco", tests, n, NULL, NULL);
}
