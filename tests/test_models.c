/* Models: the example files, the JSON loader's error messages, mbd_model_build's
 * validation, the generators and their specs, and the offsets and tree-transform forms a built
 * model holds. */
#include "support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "solvers/solvers.h"

/* ---- temporary model files ---- */

#define MAX_FILES 128

static char temp_files[MAX_FILES][96];
static int ntemp_files;

/* A new empty file in the temporary directory, open for writing in *file; returns its path. */
static const char *new_temp_file(FILE **file)
{
    assert_true(ntemp_files < MAX_FILES);
    char *name = temp_files[ntemp_files++];
    snprintf(name, sizeof temp_files[0], "%s/model-XXXXXX", temp_dir);
    const int fd = mkstemp(name);
    assert_true(fd >= 0);
    *file = fdopen(fd, "w");
    assert_non_null(*file);
    return name;
}

/* Writes text with every ' turned into ", so that the cases below stay readable. */
static const char *write_model(const char *text)
{
    FILE *file;
    const char *path = new_temp_file(&file);
    for (const char *c = text; *c; c++)
        fputc(*c == '\'' ? '"' : *c, file);
    fclose(file);
    return path;
}

/* Fails unless loading path fails with one line that starts with the path (or spec) and
 * holds every fragment (NULL-ended). */
static void expect_load_error_v(const char *path, const char *label, va_list fragments)
{
    char err[512] = "";
    mbd_model *model;
    const int status = mbd_model_load(path, NULL, &model, err, sizeof err);
    if (model || status >= 0) {
        print_error("%s: loaded (status %d), expected an error\n", label, status);
        mbd_model_free(model);
        fail();
    }
    if (strncmp(err, path, strlen(path)) != 0 || strchr(err, '\n')) {
        print_error("%s: message \"%s\" is not one line starting with the path\n", label, err);
        fail();
    }
    for (const char *f = va_arg(fragments, const char *); f; f = va_arg(fragments, const char *))
        if (!strstr(err, f)) {
            print_error("%s: message \"%s\" lacks \"%s\"\n", label, err, f);
            fail();
        }
}

static void expect_load_error(const char *path, ...)
{
    va_list fragments;
    va_start(fragments, path);
    expect_load_error_v(path, path, fragments);
    va_end(fragments);
}

/* Writes text as a model file; expects the load to fail naming the file and fragments. */
static void expect_json_error(const char *text, ...)
{
    const char *path = write_model(text);
    char label[600];
    snprintf(label, sizeof label, "%s (%s)", path, text);
    va_list fragments;
    va_start(fragments, text);
    expect_load_error_v(path, label, fragments);
    va_end(fragments);
}

/* ---- JSON building blocks: one valid body, with any field replaceable ---- */

#define UNIT3 "[[1, 0, 0], [0, 1, 0], [0, 0, 1]]"
#define REVOLUTE_Z "{'type': 'revolute', 'axis': [0, 0, 1]}"
#define BODY(name, parent, joint, mass, com, inertia)                                              \
    "{'name': " name ", 'parent': " parent ", 'joint': " joint ", 'mass': " mass ", 'com': " com   \
    ", 'inertia': " inertia "}"
#define BODY_WITH_JOINT(joint) BODY("'a'", "'world'", joint, "1", "[0, 0, 0]", UNIT3)
#define BODY_WITH_MASS(mass) BODY("'a'", "'world'", REVOLUTE_Z, mass, "[0, 0, 0]", UNIT3)
#define BODY_WITH_INERTIA(I) BODY("'a'", "'world'", REVOLUTE_Z, "1", "[0, 0, 0]", I)
#define VALID_BODY(name, parent)                                                                   \
    BODY("'" name "'", "'" parent "'", REVOLUTE_Z, "1", "[0, 0, 0]", UNIT3)
#define MODEL(bodies) "{'bodies': [" bodies "]}"

/* ---- the example files ---- */

/* The loader's results seen in the user's frames (the solvers' are turned by Q_i =
 * user_rotation, x_user = Q_i x_solver): unit axis k of body i's joint, and the tree
 * transform X_T = (E, r) of the file, E = Q_i E' Q_p^T, r = Q_p r'. */
static void user_axis(double out[3], const mbd_model *m, int i, int k)
{
    mat3_apply(out, m->user_rotation[i], m->joint[i].axis[k]);
}

static mbd_xform user_tree_transform(const mbd_model *m, int i)
{
    static const double identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    const double *Q = m->user_rotation[i], *E = m->Xtree[i].E;
    const double *Qp = m->parent[i] < 0 ? identity : m->user_rotation[m->parent[i]];
    mbd_xform X;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            double sum = 0.0;
            for (int k = 0; k < 3; k++)
                for (int l = 0; l < 3; l++)
                    sum += Q[3 * r + k] * E[3 * k + l] * Qp[3 * c + l];
            X.E[3 * r + c] = sum;
        }
    mat3_apply(X.r, Qp, m->Xtree[i].r);
    return X;
}

static void test_double_pendulum_file(void **state)
{
    (void)state;
    mbd_model *model = load_model("models/double-pendulum.json");
    assert_string_equal(mbd_model_name(model), "double-pendulum");
    assert_int_equal(mbd_model_nbodies(model), 2);
    assert_int_equal(mbd_model_nq(model), 2);
    assert_int_equal(mbd_model_nv(model), 2);
    assert_string_equal(mbd_model_body(model, 1)->name, "lower");
    assert_int_equal(mbd_model_body(model, 1)->parent, 0);
    assert_int_equal(mbd_model_body(model, 0)->joint, MBD_REVOLUTE);
    double gravity[3];
    mbd_model_gravity(model, gravity);
    assert_true(gravity[0] == 0.0 && gravity[1] == 0.0 && gravity[2] == -9.81);
    assert_string_equal(model->source, "models/double-pendulum.json");
    mbd_model_free(model);
}

static void test_cylindrical_tree_file(void **state)
{
    (void)state;
    mbd_model *model = load_model("models/cylindrical-tree.json");
    static const int parents[] = {-1, 0, 0, 1, 2}, v0[] = {0, 2, 3, 4, 6}, d0[] = {0, 4, 5, 6, 10};
    assert_int_equal(model->nb, 5);
    assert_int_equal(model->nq, 7);
    assert_int_equal(model->nv, 7);
    assert_int_equal(model->ndd, 11);
    assert_int_equal(model->max_children, 2);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(model->parent[i], parents[i]);
        assert_int_equal(model->q0[i], v0[i]);
        assert_int_equal(model->v0[i], v0[i]);
        assert_int_equal(model->d0[i], d0[i]);
    }
    /* The wrist's axis [0, 0.6, 0.8] is already unit; the right arm's frame is turned by
     * pi about z: E = R^T, r = origin. */
    double axis[3];
    user_axis(axis, model, 4, 0);
    assert_true(fabs(axis[1] - 0.6) < 1e-15);
    static const double E_right[9] = {-1, 0, 0, 0, -1, 0, 0, 0, 1}, r_right[3] = {0, -0.1, 1};
    const mbd_xform right = user_tree_transform(model, 2);
    assert_close(right.E, E_right, 9, 1e-15, "right arm E");
    assert_close(right.r, r_right, 3, 1e-15, "right arm r");
    mbd_model_free(model);
}

static void test_cardan_chain_file(void **state)
{
    (void)state;
    mbd_model *model = load_model("models/cardan-chain.json");
    assert_int_equal(model->nv, 6);
    assert_int_equal(model->ndd, 12);
    assert_int_equal(model->max_children, 1);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(model->joint[i].type, MBD_CARDAN);
        assert_int_equal(model->joint[i].nq, 2);
        assert_int_equal(model->v0[i], 2 * i);
        assert_int_equal(model->d0[i], 4 * i);
    }
    /* The wrist's rotation R = Rz(90 deg): E = R^T. */
    static const double E_wrist[9] = {0, 1, 0, -1, 0, 0, 0, 0, 1};
    assert_close(user_tree_transform(model, 2).E, E_wrist, 9, 1e-15, "wrist E");
    mbd_model_free(model);
}

static void test_defaults_and_print(void **state)
{
    (void)state;
    const char *path = write_model(MODEL(VALID_BODY("a", "world") ", " VALID_BODY("b", "a")));
    mbd_model *model = load_model(path);
    double gravity[3];
    mbd_model_gravity(model, gravity);
    assert_true(gravity[0] == 0.0 && gravity[1] == 0.0 && gravity[2] == -9.81);
    assert_string_equal(mbd_model_name(model), strrchr(path, '/') + 1);
    assert_null(mbd_model_body(model, 2));
    assert_null(mbd_model_body(model, -1));
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    mbd_model_print(model, out);
    fclose(out);
    assert_non_null(strstr(text, path));
    assert_non_null(strstr(text, "2 bodies, nq 2, nv 2"));
    assert_non_null(strstr(text, "parent world"));
    assert_non_null(strstr(text, "parent a"));
    assert_non_null(strstr(text, "revolute [0, 0, 1]"));
    assert_non_null(strstr(text, "principal moments [1, 1, 1]"));
    free(text);
    mbd_model_free(model);
}

/* ---- JSON errors: each names the file, the field's path and the value ---- */

static void test_json_value_errors(void **state)
{
    (void)state;
    expect_json_error(MODEL(BODY_WITH_JOINT("{'type': 'revolute', 'axis': [0, 'abc', 1]}")),
                      "bodies[0] (\"a\").joint.axis: expected an array of 3 finite numbers",
                      "[0,\"abc\",1]", NULL);
    expect_json_error(MODEL(BODY_WITH_JOINT("{'type': 'revolute', 'axis': [0, 1]}")), "joint.axis",
                      "[0,1]", NULL);
    expect_json_error(MODEL(BODY_WITH_JOINT("{'type': 'ball', 'axis': [0, 0, 1]}")), "joint.type",
                      "\"ball\"", NULL);
    expect_json_error(MODEL(BODY_WITH_JOINT("{'type': 'cardan', 'axis': [0, 0, 1]}")), "joint.axis",
                      "[0,0,1]", NULL);
    expect_json_error(
        MODEL(BODY_WITH_JOINT("{'type': 'prismatic', 'axes': [[0, 0, 1], [1, 0, 0]]}")),
        "joint.axes", "[[0,0,1],[1,0,0]]", NULL);
    expect_json_error(MODEL(BODY_WITH_JOINT("{'type': 'cardan', 'axes': [[0, 0, 1]]}")),
                      "joint.axes", "[[0,0,1]]", NULL);
    expect_json_error(
        MODEL(BODY_WITH_JOINT("{'type': 'revolute', 'axis': [0, 0, 1], 'origin': null}")),
        "joint.origin", "null", NULL);
    expect_json_error(MODEL(BODY_WITH_JOINT("{'type': 'revolute', 'axis': [0, 0, 1], "
                                            "'rotation': [[1, 0, 0], [0, 1, 0]]}")),
                      "joint.rotation", "[[1,0,0],[0,1,0]]", NULL);
    expect_json_error(MODEL(BODY_WITH_JOINT("'revolute'")), "joint: expected an object",
                      "\"revolute\"", NULL);
    expect_json_error(MODEL(BODY_WITH_JOINT("{'axis': [0, 0, 1]}")), "joint.type: missing", NULL);
    expect_json_error(MODEL(BODY_WITH_MASS("'heavy'")), "mass", "\"heavy\"", NULL);
    expect_json_error(MODEL(BODY("'a'", "'world'", REVOLUTE_Z, "1", "[0, 0]", UNIT3)), "com",
                      "[0,0]", NULL);
    expect_json_error(MODEL(BODY_WITH_INERTIA("[1, 0, 0]")), "inertia", "[1,0,0]", NULL);
    expect_json_error(MODEL(BODY("42", "'world'", REVOLUTE_Z, "1", "[0, 0, 0]", UNIT3)),
                      "bodies[0].name", "42", NULL);
}

static void test_json_structure_errors(void **state)
{
    (void)state;
    expect_json_error(MODEL(VALID_BODY("a", "nobody")), "bodies[0] (\"a\").parent", "\"nobody\"",
                      NULL);
    expect_json_error(MODEL(VALID_BODY("a", "b") ", " VALID_BODY("b", "world")),
                      "bodies[0] (\"a\").parent", "\"b\"", NULL);
    expect_json_error(MODEL("{'name': 'a', 'parent': 'world', 'joint': " REVOLUTE_Z
                            ", 'mass': 1, 'com': [0, 0, 0], 'inertia': " UNIT3 ", 'color': 'red'}"),
                      "bodies[0] (\"a\").color: unknown field", "\"red\"", NULL);
    expect_json_error(MODEL(BODY_WITH_JOINT("{'type': 'revolute', 'axis': [0, 0, 1], 'limit': 3}")),
                      "joint.limit: unknown field", "3", NULL);
    expect_json_error("{'author': 'me', 'bodies': [" VALID_BODY("a", "world") "]}",
                      "author: unknown field", "\"me\"", NULL);
    expect_json_error(MODEL("{'name': 'a', 'parent': 'world', 'joint': " REVOLUTE_Z
                            ", 'com': [0, 0, 0], 'inertia': " UNIT3 "}"),
                      "bodies[0] (\"a\").mass: missing", NULL);
    expect_json_error("{'gravity': [0, 0], 'bodies': [" VALID_BODY("a", "world") "]}", "gravity",
                      "[0,0]", NULL);
    expect_json_error("{'name': 7, 'bodies': [" VALID_BODY("a", "world") "]}", "name", "7", NULL);
    expect_json_error("{'bodies': []}", "bodies", "[]", NULL);
    expect_json_error("{'bodies': {}}", "bodies", "{}", NULL);
    expect_json_error("{'name': 'x'}", "bodies: missing", NULL);
    expect_json_error("{'bodies': [5]}", "bodies[0]: expected an object", "5", NULL);
    expect_json_error("[1]", "top level", "[1]", NULL);
}

static void test_json_physics_errors(void **state)
{
    (void)state;
    expect_json_error(MODEL(BODY_WITH_JOINT("{'type': 'revolute', 'axis': [0, 0, 0]}")),
                      "bodies[0] (\"a\").joint.axis", "[0, 0, 0]", NULL);
    expect_json_error(MODEL(BODY_WITH_JOINT("{'type': 'cardan', 'axes': [[1, 0, 0], [-2, 0, 0]]}")),
                      "joint.axes", "collinear", "[[1, 0, 0], [-2, 0, 0]]", NULL);
    expect_json_error(MODEL(BODY_WITH_JOINT("{'type': 'revolute', 'axis': [0, 0, 1], "
                                            "'rotation': [[1, 0, 0], [0, 2, 0], [0, 0, 1]]}")),
                      "joint.rotation", "orthonormal", "[0, 2, 0]", NULL);
    expect_json_error(MODEL(BODY_WITH_JOINT("{'type': 'revolute', 'axis': [0, 0, 1], "
                                            "'rotation': [[1, 0, 0], [0, 1, 0], [0, 0, -1]]}")),
                      "joint.rotation", "determinant", "[0, 0, -1]", NULL);
    expect_json_error(MODEL(BODY_WITH_MASS("0")), "bodies[0] (\"a\").mass", "got 0", NULL);
    expect_json_error(MODEL(BODY_WITH_MASS("-2.5")), "mass", "got -2.5", NULL);
    expect_json_error(MODEL(BODY_WITH_INERTIA("[[1, 0.5, 0], [0, 1, 0], [0, 0, 1]]")), "inertia",
                      "symmetric", "[1, 0.5, 0]", NULL);
    expect_json_error(MODEL(BODY_WITH_INERTIA("[[1, 0, 0], [0, 1, 0], [0, 0, 0]]")), "inertia",
                      "positive definite", "[0, 0, 0]", NULL);
    expect_json_error(MODEL(BODY_WITH_INERTIA("[[-1, 0, 0], [0, 1, 0], [0, 0, 1]]")), "inertia",
                      "positive definite", "[-1, 0, 0]", NULL);
    expect_json_error(MODEL(BODY_WITH_INERTIA("[[1, 0, 0], [0, 1, 0], [0, 0, 2.5]]")), "inertia",
                      "triangle", "2.5", NULL);
    expect_json_error(MODEL(BODY_WITH_INERTIA("[[1e308, 0, 0], [0, 1e308, 0], [0, 0, 1e308]]")),
                      "inertia", "finite principal moments", "1e+308", NULL);
    expect_json_error(MODEL(VALID_BODY("a", "world") ", " VALID_BODY("a", "a")),
                      "bodies[1] (\"a\").name: duplicate of bodies[0]", NULL);
    expect_json_error(MODEL(VALID_BODY("", "world")), "name", "\"\"", NULL);
    expect_json_error(MODEL(VALID_BODY("world", "world")), "name", "\"world\"", NULL);
}

static void test_json_syntax_and_file_errors(void **state)
{
    (void)state;
    const char *path = write_model("{'bodies': [\n  {'name': 'a',]}");
    char expected[160];
    snprintf(expected, sizeof expected, "%s:2:", path);
    expect_load_error(path, expected, NULL);
    path = write_model("{'name': 'a', 'name': 'b', 'bodies': []}");
    snprintf(expected, sizeof expected, "%s:1:", path);
    expect_load_error(path, expected, "duplicate", NULL);
    path = write_model(MODEL(BODY_WITH_MASS("1e999")));
    expect_load_error(path, path, NULL);

    FILE *file;
    path = new_temp_file(&file); /* nested beyond jansson's depth limit */
    for (int k = 0; k < 5000; k++)
        fputc('[', file);
    fclose(file);
    snprintf(expected, sizeof expected, "%s:1:", path);
    expect_load_error(path, expected, NULL);

    snprintf(expected, sizeof expected, "%s/missing.json", temp_dir);
    expect_load_error(expected, expected, "cannot open", "No such file", NULL);
    expect_load_error(temp_dir, temp_dir, "cannot open", NULL);
}

static void test_json_limits(void **state)
{
    (void)state;
    FILE *file;
    const char *path = new_temp_file(&file); /* sparse: 64 MiB + 1 byte */
    assert_int_equal(ftruncate(fileno(file), 64L * 1024 * 1024 + 1), 0);
    fclose(file);
    expect_load_error(path, path, "67108865", "limit", NULL);

    path = new_temp_file(&file);
    fputs("{\"bodies\": [{}", file);
    for (int k = 1; k <= 1000000; k++)
        fputs(",{}", file);
    fputs("]}", file);
    fclose(file);
    expect_load_error(path, path, "bodies", "1000001", "limit", NULL);
}

/* ---- mbd_model_build ---- */

static mbd_body_def valid_body(const char *name, int parent)
{
    mbd_body_def b = {.name = name, .parent = parent, .joint = MBD_REVOLUTE, .mass = 1.0};
    b.axes[0][2] = 2.0;
    for (int k = 0; k < 3; k++)
        b.rotation[k][k] = b.inertia[k][k] = 1.0;
    return b;
}

/* Builds bodies[0..n) and expects failure naming every fragment (NULL-ended). */
static void expect_build_error(const mbd_body_def *bodies, int n, ...)
{
    static const double gravity[3] = {0, 0, -9.81};
    char err[512] = "";
    mbd_model_def def = {.name = "test", .nbodies = n, .bodies = bodies};
    memcpy(def.gravity, gravity, sizeof def.gravity);
    mbd_model *model;
    assert_int_equal(mbd_model_build(&def, &model, err, sizeof err), MBD_EPARSE);
    assert_null(model);
    va_list fragments;
    va_start(fragments, n);
    for (const char *f = va_arg(fragments, const char *); f; f = va_arg(fragments, const char *))
        if (!strstr(err, f)) {
            print_error("message \"%s\" lacks \"%s\"\n", err, f);
            fail();
        }
    va_end(fragments);
}

static void test_build_rejects(void **state)
{
    (void)state;
    mbd_body_def b[2] = {valid_body("a", -1), valid_body("b", 0)};
    b[1].mass = NAN;
    expect_build_error(b, 2, "bodies[1] (\"b\").mass", "nan", NULL);
    b[1] = valid_body("b", 0);
    b[1].com[2] = INFINITY;
    expect_build_error(b, 2, "bodies[1] (\"b\").com", "inf", NULL);
    b[1] = valid_body("b", 0);
    b[1].inertia[0][1] = NAN;
    expect_build_error(b, 2, "inertia", "nan", NULL);
    b[1] = valid_body("b", 0);
    b[1].origin[0] = -INFINITY;
    expect_build_error(b, 2, "joint.origin", "-inf", NULL);
    b[1] = valid_body("b", 0);
    b[1].joint = (mbd_joint_type)(MBD_FIXED + 2);
    char type_value[16];
    snprintf(type_value, sizeof type_value, "got %d", MBD_FIXED + 2);
    expect_build_error(b, 2, "joint.type", type_value, NULL);
    b[1] = valid_body("b", 0);
    b[1].joint = MBD_CARDAN;
    b[1].axes[1][0] = NAN;
    expect_build_error(b, 2, "joint.axes[1]", "nan", NULL);
    b[1] = valid_body("b", 1);
    expect_build_error(b, 2, "bodies[1] (\"b\").parent", "got 1", NULL);
    b[1] = valid_body("b", -2);
    expect_build_error(b, 2, "parent", "-2", NULL);
    b[1] = valid_body(NULL, 0);
    expect_build_error(b, 2, "bodies[1].name", "NULL", NULL);
    b[1] = valid_body("a", 0);
    expect_build_error(b, 2, "bodies[1] (\"a\").name: duplicate of bodies[0]", NULL);

    const mbd_model_def bad_gravity = {
        .name = "test", .gravity = {0, NAN, 0}, .nbodies = 1, .bodies = b};
    char err[256] = "";
    mbd_model *model;
    assert_int_equal(mbd_model_build(&bad_gravity, &model, err, sizeof err), MBD_EPARSE);
    assert_null(model);
    assert_non_null(strstr(err, "gravity"));
    /* no message buffer */
    assert_int_equal(mbd_model_build(&bad_gravity, &model, NULL, 0), MBD_EPARSE);
    assert_null(model);
    assert_int_equal(mbd_model_build(NULL, &model, err, sizeof err), MBD_EINVAL);
    assert_null(model);
    expect_build_error(b, 0, "bodies", "0", NULL);
}

static void test_build_copies_and_normalizes(void **state)
{
    (void)state;
    char name[] = "base";
    mbd_body_def b[3] = {valid_body(name, -1), valid_body("arm", 0), valid_body("hand", 0)};
    b[1].joint = MBD_CARDAN;
    b[1].axes[0][0] = 3.0;
    b[1].axes[0][2] = 0.0;
    b[1].axes[1][0] = 1.0;
    b[1].axes[1][1] = 1.0;
    b[1].axes[1][2] = 0.0;
    b[2].joint = MBD_PRISMATIC;
    b[2].origin[1] = 0.5;
    static const double gravity[3] = {0, 0, -9.81};
    char err[256];
    mbd_model_def def = {.name = "copy", .nbodies = 3, .bodies = b};
    memcpy(def.gravity, gravity, sizeof def.gravity);
    mbd_model *model;
    assert_int_equal(mbd_model_build(&def, &model, err, sizeof err), MBD_OK);
    assert_non_null(model);
    name[0] = 'X';
    assert_string_equal(mbd_model_body(model, 0)->name, "base");
    assert_int_equal(model->nq, 4);
    assert_int_equal(model->max_children, 2);
    assert_int_equal(model->q0[2], 3);
    assert_int_equal(model->d0[2], 5);
    double axes[3][3];
    user_axis(axes[0], model, 0, 0);
    user_axis(axes[1], model, 1, 0);
    user_axis(axes[2], model, 1, 1);
    assert_true(axes[0][2] == 1.0);
    assert_true(fabs(axes[1][0] - 1.0) < 1e-15); /* (3, 0, 0) -> unit */
    assert_true(fabs(axes[2][0] - sqrt(0.5)) < 1e-15);
    assert_true(fabs(user_tree_transform(model, 2).r[1] - 0.5) < 1e-15);
    assert_true(mbd_model_body(model, 1)->axes[0][0] == 3.0); /* descriptions as given */
    mbd_model_free(model);
    mbd_model_free(NULL);
}

static void test_joint_types(void **state)
{
    (void)state;
    static const char *names[] = {"revolute", "prismatic", "cylindrical",
                                  "cardan",   "spherical", "free"};
    static const int dofs[] = {1, 1, 2, 2, 3, 6}, coordinates[] = {1, 1, 2, 2, 4, 7};
    for (int t = 0; t < MBD_JOINT_TYPE_COUNT; t++) {
        assert_string_equal(mbd_joint_type_name((mbd_joint_type)t), names[t]);
        assert_int_equal(mbd_joint_type_nv((mbd_joint_type)t), dofs[t]);
        assert_int_equal(mbd_joint_type_nq((mbd_joint_type)t), coordinates[t]);
    }
}

/* ---- generators ---- */

static void test_tree_parents(void **state)
{
    (void)state;
    mbd_model *model = load_model("tree:n=7,branching=2");
    static const int binary[] = {-1, 0, 0, 1, 1, 2, 2};
    assert_int_equal(model->nv, 7);
    assert_int_equal(model->max_children, 2);
    for (int i = 0; i < 7; i++)
        assert_int_equal(model->parent[i], binary[i]);
    assert_string_equal(mbd_model_body(model, 6)->name, "b7");
    mbd_model_free(model);

    /* Non-integer branching alternates 1 and 2 children: floor((i - 2 + 2) / 1.5). */
    model = load_model("tree:n=8,branching=1.5");
    for (int i = 1; i <= 8; i++)
        assert_int_equal(model->parent[i - 1], (int)floor(i / 1.5) - 1);
    mbd_model_free(model);

    model = load_model("tree:n=5");
    for (int i = 0; i < 5; i++)
        assert_int_equal(model->parent[i], i - 1);
    assert_string_equal(mbd_model_name(model), "tree-5");
    assert_string_equal(model->source, "tree:n=5");
    mbd_model_free(model);
}

static void test_tree_geometry(void **state)
{
    (void)state;
    mbd_model *model = load_model("tree:n=3,skew=0.5,taper=0.9");
    const double c = cos(0.5), s = sin(0.5);
    const double identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, rx[9] = {1, 0, 0, 0, c, s, 0, -s, c};
    assert_close(model->Xtree[0].E, identity, 9, 1e-15, "body 1 at the world frame");
    assert_close(model->Xtree[1].E, rx, 9, 1e-15, "spatial_v2 rotx(skew)");
    for (int i = 0; i < 3; i++) /* joint axes already z: the solvers' frames are the user's */
        assert_close(model->user_rotation[i], identity, 9, 0.0, "no turn");
    assert_true(model->Xtree[1].r[0] == 1.0);
    assert_true(fabs(model->Xtree[2].r[0] - 0.9) < 1e-15); /* the parent's length */
    const mbd_body_def *b3 = mbd_model_body(model, 2);
    assert_true(fabs(b3->mass - pow(0.9, 6)) < 1e-15);
    assert_true(fabs(b3->com[0] - 0.5 * 0.81) < 1e-15);
    assert_true(fabs(b3->inertia[1][1] - pow(0.9, 10) * 1.015 / 12) < 1e-15);
    mbd_model_free(model);
}

static void test_chain_generator(void **state)
{
    (void)state;
    for (int t = 0; t <= MBD_CARDAN; t++) { /* the types with axes */
        char spec[64];
        snprintf(spec, sizeof spec, "chain:n=6,joint=%s", mbd_joint_type_name((mbd_joint_type)t));
        mbd_model *model = load_model(spec);
        const int nv = mbd_joint_type_nv((mbd_joint_type)t);
        assert_int_equal(model->nv, 6 * nv);
        for (int i = 0; i < 6; i++) {
            double a[2][3];
            user_axis(a[0], model, i, 0);
            user_axis(a[1], model, i, 1);
            assert_int_equal(model->parent[i], i - 1);
            assert_int_equal(model->v0[i], nv * i);
            assert_int_equal(model->d0[i], nv * nv * i);
            assert_true(fabs(a[0][2]) < 0.95); /* never along gravity */
            assert_true(fabs(a[0][0]) + fabs(a[0][1]) > 0.2);
            if (t == MBD_CARDAN)
                assert_true(fabs(vec3_dot(a[0], a[1])) < 1e-15);
            assert_true(model->defs[i].inertia[0][1] != 0.0);
        }
        /* Consecutive axes differ. */
        double a0[3], a1[3];
        user_axis(a0, model, 0, 0);
        user_axis(a1, model, 1, 0);
        assert_true(fabs(vec3_dot(a0, a1)) < 0.5);
        char name[64];
        snprintf(name, sizeof name, "chain-%s-6", mbd_joint_type_name((mbd_joint_type)t));
        assert_string_equal(mbd_model_name(model), name);
        mbd_model_free(model);
    }
}

static void assert_inertia_close(const mbd_inertia *got, const mbd_inertia *want, double tol)
{
    const double *blocks[3][2] = {{want->A, got->A}, {want->B, got->B}, {want->C, got->C}};
    for (int block = 0; block < 3; block++)
        for (int k = 0; k < (block == 1 ? 9 : 6); k++) {
            const double a = blocks[block][0][k], b = blocks[block][1][k];
            assert_true(fabs(a - b) <= tol * (1.0 + fabs(a)));
        }
}

/* The turns of symmetric and general 3x3 blocks about each axis skip the products with
 * rows (and columns) known to be zero: the same result as the full turn of the block
 * with those zeros, for every pattern of zeros. */
static void test_turns_skip_zeros(void **state)
{
    (void)state;
    const double c = cos(0.7), s = sin(0.7);
    for (int k = 0; k < 3; k++)
        for (unsigned zero = 0; zero < 8; zero++) {
            double sym[6], full_sym[6], M[9], full_M[9];
            for (int r = 0; r < 3; r++)
                for (int col = r; col < 3; col++)
                    sym[SYM3(r, col)] =
                        zero >> r & 1 || zero >> col & 1 ? 0.0 : 1.0 + r + 0.3 * col;
            for (int e = 0; e < 9; e++)
                M[e] = zero >> (e / 3) & 1 ? 0.0 : 0.5 + 0.25 * e;
            memcpy(full_sym, sym, sizeof sym);
            memcpy(full_M, M, sizeof M);
            sym3_turn(sym, k, c, s, c * c - s * s, 2.0 * c * s, zero);
            sym3_turn(full_sym, k, c, s, c * c - s * s, 2.0 * c * s, 0);
            mat3_turn(M, k, c, s, zero);
            mat3_turn(full_M, k, c, s, 0);
            assert_close(sym, full_sym, 6, 1e-15, "sym3_turn");
            assert_close(M, full_M, 9, 1e-15, "mat3_turn");
            for (int r = 0; r < 3; r++) /* the zeros that a turn keeps are kept */
                if (zero_after_turn(zero, k) >> r & 1)
                    for (int col = 0; col < 3; col++)
                        assert_true(sym[SYM3(r, col)] == 0.0 && M[3 * r + col] == 0.0);
        }
}

/* The tree transforms that the builder marks as axial screws (tree_form), and the
 * screw congruence and motion and force transforms against the general ones across them,
 * at several joint angles. */
static void check_screw_congruence(const mbd_model *m, int i)
{
    static const double Ic[9] = {0.3, 0.02, -0.01, 0.02, 0.5, 0.04, -0.01, 0.04, 0.4};
    const double com[3] = {0.2, -0.1, 0.05};
    mbd_rigid rigid;
    mbd_inertia I, screw, general;
    rigid_inertia(&rigid, 2.5, com, Ic);
    rigid_blocks(&I, &rigid);
    for (double angle = -3.0; angle <= 3.0; angle += 0.7) {
        const double q[7] = {angle}; /* the longest joint's coordinates */
        const double sin_q[2] = {sin(angle)}, cos_q[2] = {cos(angle), 1.0};
        double S[36];
        mbd_xform X;
        fixed_kinematics(&X, m->joint_type[i], &m->Xtree[i]);
        joint_kinematics(&X, S, m->joint_type[i], &m->joint[i], q, sin_q, cos_q, &m->Xtree[i], 0);
        inertia_add_congruence(&general, &I, NULL, &X, &I, 0, 0);
        const int twisted = m->tree_form[i] == TREE_SCREW;
        const double *twice = twisted ? m->joint[i].twice_twist : NULL;
        inertia_add_screw_congruence(&screw, &I, NULL, &X, twice, &I, 0, 0);
        assert_inertia_close(&screw, &general, 1e-13);
        /* a sum started from the rigid body itself (base NULL) adds its blocks: the same
         * sums, within an ulp (which products fuse into multiply-adds is the compiler's:
         * bit for bit under LTO, an ulp apart without; 1e-17 fails) */
        mbd_inertia from_body;
        inertia_add_congruence(&from_body, NULL, &rigid, &X, &I, 0, 0);
        assert_inertia_close(&from_body, &general, 2.3e-16);
        inertia_add_screw_congruence(&from_body, NULL, &rigid, &X, twice, &I, 0, 0);
        assert_inertia_close(&from_body, &screw, 2.3e-16);
        /* an articulated inertia of a turn about z (A's row and column 2 and B's row 2
         * zero), whose zeros the screw kernel skips across both turns */
        mbd_inertia Ia = I;
        Ia.A[SYM3(0, 2)] = Ia.A[SYM3(1, 2)] = Ia.A[SYM3(2, 2)] = 0.0;
        Ia.B[6] = Ia.B[7] = Ia.B[8] = 0.0;
        inertia_add_congruence(&general, &I, NULL, &X, &Ia, 0, 0);
        inertia_add_screw_congruence(&screw, &I, NULL, &X, twice, &Ia, 4, 0);
        assert_inertia_close(&screw, &general, 1e-13);
        const double x[6] = {0.3, -1.2, 0.7, 2.0, 0.4, -0.9};
        double by_matrix[6], by_screw[6];
        xform_motion(by_matrix, &X, x);
        screw_motion(by_screw, &X, twisted, x);
        assert_close(by_screw, by_matrix, 6, 1e-14, "screw_motion");
        xform_force_t(by_matrix, &X, x);
        screw_force_t(by_screw, &X, twisted, x);
        assert_close(by_screw, by_matrix, 6, 1e-14, "screw_force_t");
    }
}

static void test_tree_forms(void **state)
{
    (void)state;
    mbd_model *tree = load_model("tree:n=7,branching=2");
    mbd_model *skewed = load_model("tree:n=4,branching=1,skew=0.5,taper=0.9");
    mbd_model *chain = load_model("chain:n=4,joint=revolute");
    mbd_model *rods = load_model("rods:n=3");
    for (int i = 1; i < 7; i++)
        assert_int_equal(tree->tree_form[i], TREE_OFFSET);
    for (int i = 1; i < 4; i++) {
        assert_int_equal(skewed->tree_form[i], TREE_SCREW);
        assert_int_equal(chain->tree_form[i], TREE_GENERAL);
        check_screw_congruence(skewed, i);
        check_screw_congruence(tree, i);
    }
    for (int i = 1; i < 3; i++)
        assert_int_equal(rods->tree_form[i], TREE_OFFSET);
    mbd_model_free(tree);
    mbd_model_free(skewed);
    mbd_model_free(chain);
    mbd_model_free(rods);
}

/* rigid_inverse against the product with the rigid inertia's own 6 x 6 (rigid_blocks):
 * the identity to round-off; a massless body or an Ic that is not positive definite
 * refused. The builder keeps it for free bodies without parent, children or armature
 * alone (model->free_body_inverse). */
static void test_rigid_inverse(void **state)
{
    (void)state;
    static const double Ic[9] = {0.3, 0.02, -0.01, 0.02, 0.5, 0.04, -0.01, 0.04, 0.4};
    static const double flat[9] = {0.3, 0.0, 0.0, 0.0, 0.3, 0.0, 0.0, 0.0, 0.0};
    const double com[3] = {0.2, -0.1, 0.05};
    mbd_rigid rigid;
    mbd_inertia I;
    double inverse[36], product[36], identity[36] = {0}, column[6], out[6];
    rigid_inertia(&rigid, 2.5, com, Ic);
    rigid_blocks(&I, &rigid);
    assert_int_equal(rigid_inverse(inverse, &rigid), 0);
    for (int j = 0; j < 6; j++) {
        for (int k = 0; k < 6; k++)
            column[k] = inverse[6 * k + j];
        inertia_apply(out, &I, column);
        for (int k = 0; k < 6; k++)
            product[6 * k + j] = out[k];
        identity[7 * j] = 1.0;
    }
    assert_close(product, identity, 36, 1e-14, "I I^-1");
    rigid_inertia(&rigid, 0.0, com, Ic);
    assert_int_equal(rigid_inverse(inverse, &rigid), -1);
    rigid_inertia(&rigid, 2.5, com, flat);
    assert_int_equal(rigid_inverse(inverse, &rigid), -1);

    mbd_model *alone = load_model("tree:n=1,branching=2,skew=0.5,base=free");
    mbd_model *with_children = load_model("tree:n=3,branching=2,skew=0.5,base=free");
    assert_non_null(alone->free_body_inverse);
    assert_null(with_children->free_body_inverse);
    mbd_model_free(alone);
    mbd_model_free(with_children);
}

/* mbd_kinematics takes the sines and cosines of all angles at once (4 in a vector where
 * the CPU allows): X agrees with joint_kinematics fed libm's sin and cos to a few ulp, for
 * angles of every quadrant and beyond 1e5, wherever the angles lie among the coordinates
 * (after a free base's seven, between a cylindrical chain's slides, none at all). */
static void test_kinematics_sines(void **state)
{
    (void)state;
    static const char *const specs[] = {
        "tree:n=11,branching=2,skew=0.5,base=free", "chain:n=7,joint=cylindrical",
        "chain:n=5,joint=cardan", "chain:n=6,joint=prismatic", "models/cylindrical-tree.json"};
    for (size_t m = 0; m < sizeof specs / sizeof *specs; m++) {
        mbd_model *model = load_model(specs[m]);
        mbd_work *work;
        mbd_work_new(model, mbd_solver_find("bodies"), &work);
        double *q = malloc((size_t)model->nq * sizeof *q);
        uint64_t seed = 31;
        for (int round = 0; round < 2; round++) {
            mbd_neutral_positions(model, q);
            for (int i = 0; i < model->nb; i++)
                for (int k = 0; k < joint_angles(model->joint_type[i]); k++)
                    test_fill(&seed, q + model->q0[i] + k, 1, round ? 1e5 : -60.0,
                              round ? 3e5 : 60.0);
            assert_int_equal(mbd_kinematics(model, work, q), MBD_OK);
            for (int i = 0; i < model->nb; i++) {
                const double *qi = q + model->q0[i];
                double sin_q[2] = {0.0}, cos_q[2] = {1.0, 1.0}, S[36];
                for (int k = 0; k < joint_angles(model->joint_type[i]); k++) {
                    sin_q[k] = sin(qi[k]);
                    cos_q[k] = cos(qi[k]);
                }
                mbd_xform X = {{0.0}, {0.0}};
                fixed_kinematics(&X, model->joint_type[i], &model->Xtree[i]);
                joint_kinematics(&X, S, model->joint_type[i], &model->joint[i], qi, sin_q, cos_q,
                                 &model->Xtree[i], 0);
                assert_close(work->X[i].E, X.E, 9, 1e-14, "E");
                assert_close(work->X[i].r, X.r, 3, 1e-14, "r");
            }
        }
        free(q);
        mbd_work_free(work);
        mbd_model_free(model);
    }
}

static void test_rods_generator(void **state)
{
    (void)state;
    mbd_model *model = load_model("rods:n=4");
    double gravity[3];
    mbd_model_gravity(model, gravity);
    assert_true(gravity[0] == 0.0 && gravity[1] == -9.81 && gravity[2] == 0.0);
    assert_int_equal(model->nv, 4);
    assert_string_equal(mbd_model_name(model), "rods-4");
    for (int i = 0; i < 4; i++) {
        const mbd_body_def *b = mbd_model_body(model, i);
        assert_true(b->mass == 2.5);
        assert_true(b->com[0] == 0.125);
        assert_true(b->origin[0] == (i ? 0.25 : 0.0));
        assert_true(fabs(b->inertia[2][2] - 2.5 * 0.0625 / 12) < 1e-16);
        assert_true(b->inertia[0][0] > 0.0);
    }
    mbd_model_free(model);
}

static void test_bad_specs(void **state)
{
    (void)state;
    expect_load_error("tree:n=0", "tree:n=0", "n=0", NULL);
    expect_load_error("tree:n=1000001", "n=1000001", "1000000", NULL);
    expect_load_error("tree:n=abc", "n=abc", "\"abc\"", NULL);
    expect_load_error("tree:n=2.5", "n=2.5", NULL);
    expect_load_error("tree:n=5,foo=1", "foo=1", "unknown key \"foo\"", NULL);
    expect_load_error("tree:n=5,branching=0.5", "branching=0.5", NULL);
    expect_load_error("tree:n=5,skew=", "skew=", NULL);
    expect_load_error("tree:n=5,taper=nan", "taper=nan", NULL);
    expect_load_error("tree:n=3,n=4", "n=4", "twice", NULL);
    expect_load_error("legged:legs=1000,dof=1000", "1000001 bodies", "limit of 1000000", NULL);
    expect_load_error("legged:legs=4", "dof", "missing", NULL);
    expect_load_error("tree:n=3,base=floating", "base=floating", "expected fixed or free", NULL);
    expect_load_error("chain:n=3,joint=ball", "joint=ball", "spherical or free", NULL);
    expect_load_error("tree:n=3,", "tree:n=3,", "trailing", NULL);
    expect_load_error("tree:n", "\"n\"", "key=value", NULL);
    expect_load_error("tree:", "tree:", "n: missing", NULL);
    expect_load_error("chain:n=3", "chain:n=3", "joint: missing", NULL);
    expect_load_error("chain:n=3,joint=ball", "joint=ball", "\"ball\"", NULL);
    expect_load_error("rods:n=-1", "n=-1", NULL);
    expect_load_error("rods:n=3,joint=revolute", "joint=revolute", "unknown key", NULL);
    expect_load_error("forest:n=3", "forest:n=3", "generator", NULL);
}

static void test_generators_help(void **state)
{
    (void)state;
    const char *help = mbd_generators_help();
    assert_non_null(strstr(help, "tree:n=N"));
    assert_non_null(strstr(help, "chain:n=N,joint="));
    assert_non_null(strstr(help, "rods:n=N"));
}

/* autoTree(2) at q = 0: the check value published with spatial_v2 (7 decimals). */
static void test_autotree2_mass_matrix(void **state)
{
    (void)state;
    mbd_model *model = load_model("tree:n=2");
    mbd_work *work;
    mbd_work_new(model, mbd_solver_at(0), &work);
    assert_non_null(work);
    const double q[2] = {0, 0}, expected[4] = {2.6691667, 0.8345833, 0.8345833, 0.3345833};
    double H[4];
    assert_int_equal(mbd_mass_matrix(model, work, q, H), MBD_OK);
    for (int k = 0; k < 4; k++)
        assert_true(fabs(H[k] - expected[k]) < 1e-6);
    mbd_work_free(work);
    mbd_model_free(model);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_double_pendulum_file),
        cmocka_unit_test(test_cylindrical_tree_file),
        cmocka_unit_test(test_cardan_chain_file),
        cmocka_unit_test(test_defaults_and_print),
        cmocka_unit_test(test_json_value_errors),
        cmocka_unit_test(test_json_structure_errors),
        cmocka_unit_test(test_json_physics_errors),
        cmocka_unit_test(test_json_syntax_and_file_errors),
        cmocka_unit_test(test_json_limits),
        cmocka_unit_test(test_build_rejects),
        cmocka_unit_test(test_build_copies_and_normalizes),
        cmocka_unit_test(test_joint_types),
        cmocka_unit_test(test_tree_parents),
        cmocka_unit_test(test_tree_geometry),
        cmocka_unit_test(test_chain_generator),
        cmocka_unit_test(test_rods_generator),
        cmocka_unit_test(test_tree_forms),
        cmocka_unit_test(test_rigid_inverse),
        cmocka_unit_test(test_turns_skip_zeros),
        cmocka_unit_test(test_kinematics_sines),
        cmocka_unit_test(test_bad_specs),
        cmocka_unit_test(test_generators_help),
        cmocka_unit_test(test_autotree2_mass_matrix),
    };
    return cmocka_run_group_tests(tests, make_temp_dir, remove_temp_dir);
}
