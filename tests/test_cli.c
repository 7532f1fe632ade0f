/* The mbd command: outputs that parse and agree with the library, and every bad input
 * rejected with one line naming the file, field and value, and exit status 2. */
#include "support.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A valid one-body model file with one field replaced: FIELD is printed verbatim. */
static const char *model_with(const char *joint, const char *mass, const char *inertia,
                              const char *parent)
{
    static char text[1024];
    snprintf(text, sizeof text,
             "{\"name\": \"m\", \"bodies\": [{\"name\": \"link\", \"parent\": %s,"
             " \"joint\": %s, \"mass\": %s, \"com\": [0, 0, 0.1], \"inertia\": %s}]}",
             parent, joint, mass, inertia);
    return temp_file_with(text, ".json");
}

static const char *good_joint = "{\"type\": \"revolute\", \"axis\": [0, 1, 0]}";
static const char *good_inertia = "[[0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1]]";

static void test_bad_model_files(void **state)
{
    (void)state;
    expect_model_rejected(
        model_with("{\"type\": \"helical\", \"axis\": [0, 0, 1]}", "1", good_inertia, "\"world\""),
        "type", "helical");
    expect_model_rejected(model_with(good_joint, "-2", good_inertia, "\"world\""), "mass", "-2");
    expect_model_rejected(
        model_with(good_joint, "0.5", "[[1, 0, 0], [0, 1, 0], [0, 0, 3]]", "\"world\""), "inertia",
        "3");
    expect_model_rejected(
        model_with(good_joint, "0.5", "[[1, 0.2, 0], [0, 1, 0], [0, 0, 1]]", "\"world\""),
        "inertia", "0.2");
    expect_model_rejected(
        model_with(good_joint, "0.5", "[[-1, 0, 0], [0, 1, 0], [0, 0, 1]]", "\"world\""), "inertia",
        "-1");
    expect_model_rejected(model_with(good_joint, "1", good_inertia, "\"ghost\""), "parent",
                          "ghost");
    expect_model_rejected(model_with("{\"type\": \"revolute\", \"axis\": [0, 1, 0], \"pitch\": 2}",
                                     "1", good_inertia, "\"world\""),
                          "pitch", "2");
    expect_model_rejected(model_with(good_joint, "\"heavy\"", good_inertia, "\"world\""), "mass",
                          "heavy");
    expect_model_rejected(temp_file_with("{\"bodies\": [", ".json"), ":1:12:", "expected");
    expect_rejected("fd /nonexistent/model.json",
                    (const char *const[]){"/nonexistent/model.json", "cannot open", NULL});
}

static void test_bad_flags_and_vectors(void **state)
{
    (void)state;
    expect_rejected("fd rods:n=3 --q 1,2",
                    (const char *const[]){"--q", "expected 3", "got 2", NULL});
    expect_rejected("fd rods:n=3 --qd 1,nan,2", (const char *const[]){"--qd", "nan", NULL});
    expect_rejected("fd rods:n=3 --tau 1,inf,2", (const char *const[]){"--tau", "inf", NULL});
    expect_rejected("fd rods:n=3 --q 1,,2", (const char *const[]){"--q", "element 1", NULL});
    expect_rejected("fd rods:n=3 --frobnicate 1", (const char *const[]){"--frobnicate", NULL});
    expect_rejected("fd rods:n=3 --solver magic", (const char *const[]){"--solver", "magic", NULL});
    expect_rejected("fd rods:n=3 --solver bodies --p 1,2,3",
                    (const char *const[]){"--p", "bodies", NULL});
    expect_rejected("fd rods:n=3 --q", (const char *const[]){"--q", "needs a value", NULL});
    expect_rejected("fd rods:n=0", (const char *const[]){"rods:n=0", "n", "0", NULL});
    expect_rejected("fd chain:n=4,joint=ball", (const char *const[]){"joint", "ball", NULL});
    expect_rejected("frobnicate",
                    (const char *const[]){"frobnicate", "simulate", "recommend", NULL});
    expect_rejected("fd", (const char *const[]){"MODEL", NULL});
}

static void read_json_array(json_t *array, double *out, int n)
{
    assert_int_equal((int)json_array_size(array), n);
    for (int k = 0; k < n; k++)
        out[k] = json_number_value(json_array_get(array, (size_t)k));
}

/* fd and id print full precision: the library's numbers come back bit for bit, and
 * momentum solvers print p, their own qd and pd. */
static void test_outputs_match_library(void **state)
{
    (void)state;
    const char *spec = "chain:n=3,joint=cardan";
    const double q[6] = {0.1, -0.2, 0.3, 0.4, -0.5, 0.6}, qd[6] = {1, 2, 3, -1, -2, -3};
    double tau[6] = {0.5, 0, 0, 0, 0, -0.5}, qdd[6], out[6], p[6], pd[6];
    mbd_model *model = load_model(spec);
    mbd_work *work;
    mbd_work_new(model, mbd_solver_find("bodies"), &work);
    assert_int_equal(mbd_forward(model, work, q, qd, tau, qdd), MBD_OK);
    json_t *fd = run_json("fd chain:n=3,joint=cardan --solver bodies --q 0.1,-0.2,0.3,0.4,-0.5,0.6"
                          " --qd 1,2,3,-1,-2,-3 --tau 0.5,0,0,0,0,-0.5");
    read_json_array(json_object_get(fd, "qdd"), out, 6);
    assert_memory_equal(out, qdd, sizeof out);
    json_t *mom =
        run_json("fd chain:n=3,joint=cardan --solver poisson-ldlt --q 0.1,-0.2,0.3,0.4,-0.5,0.6"
                 " --qd 1,2,3,-1,-2,-3 --tau 0.5,0,0,0,0,-0.5");
    assert_int_equal(mbd_momentum(model, work, q, qd, p), MBD_OK);
    read_json_array(json_object_get(mom, "p"), out, 6);
    assert_memory_equal(out, p, sizeof out);
    read_json_array(json_object_get(mom, "qd"), out, 6);
    assert_close(out, qd, 6, 1e-13, "qd from p");
    read_json_array(json_object_get(mom, "pd"), out, 6);
    mbd_work *ldlt;
    mbd_work_new(model, mbd_solver_find("poisson-ldlt"), &ldlt);
    assert_int_equal(mbd_forward_momentum(model, ldlt, q, p, tau, qdd, pd), MBD_OK);
    assert_memory_equal(out, pd, sizeof out);
    mbd_work_free(ldlt);
    json_t *inv =
        run_json("id chain:n=3,joint=cardan --q 0.1,-0.2,0.3,0.4,-0.5,0.6 --qd 1,2,3,-1,-2,-3");
    double printed[18], reactions[18], tau_id[6];
    read_json_array(json_object_get(inv, "tau"), tau_id, 6);
    json_t *rows = json_object_get(inv, "reactions");
    assert_int_equal((int)json_array_size(rows), 3);
    for (int i = 0; i < 3; i++)
        read_json_array(json_array_get(rows, (size_t)i), printed + 6 * i, 6);
    const double zero[6] = {0};
    assert_int_equal(mbd_inverse_dynamics(model, work, q, qd, zero, tau, reactions), MBD_OK);
    assert_memory_equal(printed, reactions, sizeof reactions);
    assert_memory_equal(tau_id, tau, sizeof tau);
    json_decref(fd);
    json_decref(mom);
    json_decref(inv);
    mbd_work_free(work);
    mbd_model_free(model);
}

/* mbd minv prints the library's H^-1 at full precision, one row per coordinate; H H^-1 = I. */
static void test_minv(void **state)
{
    (void)state;
    mbd_model *model = load_model("chain:n=3,joint=cardan");
    const double q[6] = {0.1, -0.2, 0.3, 0.4, -0.5, 0.6};
    double Hinv[36], printed[36], H[36], HHinv[36], eye[36] = {0};
    mbd_work *work;
    mbd_work_new(model, NULL, &work);
    assert_int_equal(mbd_mass_matrix_inverse(model, work, q, Hinv), MBD_OK);
    assert_int_equal(mbd_mass_matrix(model, work, q, H), MBD_OK);
    json_t *out = run_json("minv chain:n=3,joint=cardan --q 0.1,-0.2,0.3,0.4,-0.5,0.6");
    json_t *rows = json_object_get(out, "Hinv");
    assert_int_equal((int)json_array_size(rows), 6);
    for (int r = 0; r < 6; r++)
        read_json_array(json_array_get(rows, (size_t)r), printed + 6 * r, 6);
    /* not bit for bit: mbd is an LTO build and this test is not, and they may fuse a * b + c
     * into FMAs in different places (measured: a few ulps) */
    assert_close(printed, Hinv, 36, 1e-15, "mbd minv against the library");
    for (int r = 0; r < 6; r++) {
        eye[7 * r] = 1.0;
        for (int c = 0; c < 6; c++) {
            HHinv[6 * r + c] = 0.0;
            for (int k = 0; k < 6; k++)
                HHinv[6 * r + c] += H[6 * r + k] * printed[6 * k + c];
        }
    }
    assert_close(HHinv, eye, 36, 1e-12, "H H^-1");
    json_decref(out);
    mbd_work_free(work);
    mbd_model_free(model);
    expect_rejected("minv rods:n=3 --q 1,2",
                    (const char *const[]){"--q", "expected 3", "got 2", NULL});
    expect_rejected("minv rods:n=3 --qd 1,2,3", (const char *const[]){"--qd", NULL});
}

/* Row-major n x n from a JSON list of n rows of n numbers. */
static void read_json_matrix(json_t *rows, double *out, int n)
{
    assert_int_equal((int)json_array_size(rows), n);
    for (int r = 0; r < n; r++)
        read_json_array(json_array_get(rows, (size_t)r), out + (size_t)r * n, n);
}

/* mbd derivatives: a pendulum's in closed form (about z under gravity -y, centre of mass lc
 * from the axis: J qdd = tau - m g lc cos q), by every method of the table; dqdd/dtau = H^-1
 * on a chain of cardan joints; the text form; and the refusals. */
static void test_derivatives(void **state)
{
    (void)state;
    const double m = 2.5, lc = 0.7, Izz = 0.04, g = 9.81, J = Izz + m * lc * lc, q = 0.4;
    const char *pendulum = temp_file_with(
        "{\"name\": \"pendulum\", \"gravity\": [0, -9.81, 0], \"bodies\": [{\"name\": \"link\","
        " \"parent\": \"world\", \"joint\": {\"type\": \"revolute\", \"axis\": [0, 0, 1]},"
        " \"mass\": 2.5, \"com\": [0.7, 0, 0],"
        " \"inertia\": [[4e-5, 0, 0], [0, 0.04, 0], [0, 0, 0.04]]}]}",
        ".json");
    const double expected[3] = {m * g * lc * sin(q) / J, 0.0, 1.0 / J};
    char args[512];
    for (int k = 0; k < mbd_derivatives_method_count(); k++) {
        const char *name = mbd_derivatives_method_name(mbd_derivatives_method_at(k));
        snprintf(args, sizeof args, "derivatives %s --method %s --q 0.4 --qd -1.3 --tau 0.8 --json",
                 pendulum, name);
        json_t *out = run_json(args);
        assert_string_equal(json_string_value(json_object_get(out, "method")), name);
        double got[3];
        read_json_matrix(json_object_get(out, "dqdd_dq"), &got[0], 1);
        read_json_matrix(json_object_get(out, "dqdd_dqd"), &got[1], 1);
        read_json_matrix(json_object_get(out, "dqdd_dtau"), &got[2], 1);
        assert_close(got, expected, 3, 1e-7, name);
        json_decref(out);
    }
    snprintf(args, sizeof args, "derivatives %s --q 0.4", pendulum);
    expect_mbd2(args, 0, "dqdd_dq =", "dqdd_dtau =\n  0.79");

    mbd_model *model = load_model("chain:n=3,joint=cardan");
    const double qs[6] = {0.1, -0.2, 0.3, 0.4, -0.5, 0.6};
    double Hinv[36], printed[36];
    mbd_work *work;
    mbd_work_new(model, NULL, &work);
    assert_int_equal(mbd_mass_matrix_inverse(model, work, qs, Hinv), MBD_OK);
    json_t *out = run_json("derivatives chain:n=3,joint=cardan --q 0.1,-0.2,0.3,0.4,-0.5,0.6"
                           " --qd 1,2,3,-1,-2,-3 --json");
    read_json_matrix(json_object_get(out, "dqdd_dtau"), printed, 6);
    /* to the accuracy of central differences, the least accurate method */
    assert_close(printed, Hinv, 36, 1e-7, "dqdd/dtau against H^-1");
    read_json_matrix(json_object_get(out, "dqdd_dq"), printed, 6);
    read_json_matrix(json_object_get(out, "dqdd_dqd"), printed, 6);
    json_decref(out);
    mbd_work_free(work);
    mbd_model_free(model);

    expect_rejected("derivatives rods:n=3 --method magic",
                    (const char *const[]){"--method", "magic", NULL});
    expect_rejected("derivatives rods:n=3 --solver magic",
                    (const char *const[]){"--solver", "magic", NULL});
    expect_rejected("derivatives rods:n=3 --q 1,2",
                    (const char *const[]){"--q", "expected 3", NULL});
    expect_rejected("derivatives rods:n=3 --tau 1,nan,2",
                    (const char *const[]){"--tau", "nan", NULL});
    expect_rejected("derivatives rods:n=3 --p 1,2,3", (const char *const[]){"--p", NULL});
    expect_rejected("derivatives chain:n=4,joint=revolute,friction=0.2",
                    (const char *const[]){"friction", "without friction or loops", NULL});
    expect_rejected("derivatives models/four-bar.json",
                    (const char *const[]){"four-bar", "loops", NULL});
}

static void test_solvers_and_info(void **state)
{
    (void)state;
    cli_result r = mbd_run("solvers");
    assert_int_equal(r.status, 0);
    for (int k = 0; k < mbd_solver_count(); k++)
        assert_non_null(strstr(r.out, mbd_solver_name(mbd_solver_at(k))));
    cli_result_free(&r);
    r = mbd_run("info tree:n=7,branching=2");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "7 bodies"));
    cli_result_free(&r);
}

/* --help and -h anywhere print the usage on stdout and exit 0: the whole of it, or one
 * command's with what MODEL and L are where it takes them; mbd help CMD the same. */
static void test_help(void **state)
{
    (void)state;
    const char *whole[] = {"--help", "-h", "help"};
    for (int k = 0; k < 3; k++) {
        cli_result r = mbd_run(whole[k]);
        assert_int_equal(r.status, 0);
        assert_non_null(strstr(r.out, "mbd simulate MODEL"));
        assert_non_null(strstr(r.out, "mbd recommend MODEL"));
        cli_result_free(&r);
    }
    const char *one[] = {"fd --help", "fd rods:n=3 --q 1 -h", "help fd"};
    for (int k = 0; k < 3; k++) {
        cli_result r = mbd_run(one[k]);
        assert_int_equal(r.status, 0);
        assert_non_null(strstr(r.out, "mbd fd MODEL"));
        assert_non_null(strstr(r.out, "MODEL is a JSON model file"));
        assert_non_null(strstr(r.out, "L is a comma-separated list"));
        assert_null(strstr(r.out, "mbd simulate"));
        cli_result_free(&r);
    }
    cli_result r = mbd_run("solvers -h");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "mbd solvers"));
    assert_null(strstr(r.out, "MODEL is"));
    cli_result_free(&r);
    r = mbd_run(""); /* a mistake: the usage goes to stderr */
    assert_int_equal(r.status, 2);
    assert_string_equal(r.out, "");
    assert_non_null(strstr(r.err, "usage:"));
    cli_result_free(&r);
    expect_rejected("help frobnicate", (const char *const[]){"frobnicate", NULL});
    expect_rejected("help fd id", (const char *const[]){"id", NULL});
}

/* fd without --solver is fd --solver dense, as its usage says. */
static void test_default_solver(void **state)
{
    (void)state;
    const char *args =
        "fd chain:n=3,joint=cardan --q 0.1,-0.2,0.3,0.4,-0.5,0.6 --qd 1,2,3,-1,-2,-3";
    char with[256];
    snprintf(with, sizeof with, "%s --solver dense", args);
    cli_result plain = mbd_run(args), dense = mbd_run(with), usage = mbd_run("fd --help");
    assert_int_equal(plain.status, 0);
    assert_int_equal(dense.status, 0);
    assert_string_equal(plain.out, dense.out);
    assert_non_null(strstr(usage.out, "--solver: default dense"));
    cli_result_free(&plain);
    cli_result_free(&dense);
    cli_result_free(&usage);
}

/* mbd recommend names one solver only where the two fastest are further apart than the
 * noise: 5%, or their cv added where the repetitions spread more. */
static void test_recommend_advice_follows_noise(void **state)
{
    (void)state;
    json_t *root = run_json("recommend rods:n=4 --json");
    json_t *ranking = json_object_get(root, "ranking");
    assert_true(json_array_size(ranking) >= 2);
    const json_t *best = json_array_get(ranking, 0), *next = json_array_get(ranking, 1);
    const double ratio = json_real_value(json_object_get(next, "ratio_to_fastest"));
    const double noise = fmax(1.05, 1 + json_real_value(json_object_get(best, "cv")) +
                                        json_real_value(json_object_get(next, "cv")));
    const char *advice = json_string_value(json_object_get(root, "advice"));
    assert_non_null(advice);
    if (ratio < noise)
        assert_non_null(strstr(advice, "inside the noise"));
    else
        assert_non_null(strstr(advice, "faster than the runner-up"));
    json_decref(root);
}

/* mbd recommend --derivatives ranks every method of the table, each row named after its
 * method, fastest first; it refuses --batch and models with friction or loops. */
static void test_recommend_derivatives(void **state)
{
    (void)state;
    json_t *root = run_json("recommend chain:n=3,joint=revolute --derivatives --json");
    assert_true(json_is_true(json_object_get(root, "derivatives")));
    json_t *ranking = json_object_get(root, "ranking");
    assert_int_equal((int)json_array_size(ranking), mbd_derivatives_method_count());
    double previous = 0.0;
    for (size_t k = 0; k < json_array_size(ranking); k++) {
        const json_t *row = json_array_get(ranking, k);
        assert_non_null(
            mbd_derivatives_method_find(json_string_value(json_object_get(row, "variant"))));
        const double ratio = json_real_value(json_object_get(row, "ratio_to_fastest"));
        assert_true(ratio >= previous);
        previous = ratio;
    }
    json_decref(root);
    expect_mbd("recommend chain:n=3,joint=revolute --derivatives", 0, "method");
    expect_rejected("recommend rods:n=3 --derivatives --batch 4",
                    (const char *const[]){"--derivatives", "--batch", NULL});
    expect_rejected("recommend chain:n=3,joint=revolute,friction=0.2 --derivatives",
                    (const char *const[]){"friction", NULL});
}

/* mbd fd on a model with a massless leaf: exit status 1 and a message saying "singular"
 * and naming the body; mbd info describes the model. */
static void test_massless_leaf_cli(void **state)
{
    (void)state;
    const char *path = temp_path(0, "massless-leaf.json");
    write_text(
        path,
        "{\"name\": \"massless-leaf\", \"bodies\": [\n"
        " {\"name\": \"arm\", \"parent\": \"world\", \"joint\": {\"type\": \"revolute\", \"axis\": [0, 0, 1]},\n"
        "  \"mass\": 1, \"com\": [0.5, 0, 0], \"inertia\": [[0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1]]},\n"
        " {\"name\": \"sensor\", \"parent\": \"arm\", \"joint\": {\"type\": \"revolute\", \"axis\": [0, 1, 0], \"origin\": [1, 0, 0]},\n"
        "  \"mass\": 0, \"com\": [0, 0, 0], \"inertia\": [[0, 0, 0], [0, 0, 0], [0, 0, 0]]}]}\n");
    char args[512];
    for (int k = 0; k < mbd_solver_count(); k++) {
        snprintf(args, sizeof args, "fd %s --solver %s --q 0.1,0.2 --qd 1,2", path,
                 mbd_solver_name(mbd_solver_at(k)));
        expect_mbd2(args, 1, "singular", "\"sensor\"");
        snprintf(args, sizeof args, "simulate %s --solver %s --integrator rk4 --t1 0.1 --dt 0.01",
                 path, mbd_solver_name(mbd_solver_at(k)));
        expect_mbd2(args, 1, "singular", "\"sensor\"");
    }
    snprintf(args, sizeof args, "info %s", path);
    expect_mbd(args, 0, "sensor");
}

/* mbd fd: NaN, Inf or overflowing numbers in --q, --qd, --p, --tau: exit 2 naming the flag. */
static void test_nonfinite_cli(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"--q nan,0", "--q"},        {"--qd 0,inf", "--qd"},        {"--tau -inf,1", "--tau"},
        {"--q 1e999,0", "--q"},      {"--qd 0,-1e400", "--qd"},     {"--tau 0,NaN", "--tau"},
        {"--q '0,nan(0x1)'", "--q"}, {"--tau 0,infinity", "--tau"},
    };
    char args[256];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        snprintf(args, sizeof args, "fd chain:n=2,joint=revolute %s", cases[k][0]);
        expect_mbd(args, 2, cases[k][1]);
    }
    expect_mbd("fd chain:n=2,joint=revolute --solver poisson-ldlt --p 0,inf", 2, "--p");
    expect_mbd("fd chain:n=2,joint=revolute --q 0.1,0.2 --qd 1,2 --tau 3,4", 0, "qdd");
}

/* Results that overflow to NaN or Inf: exit 1 naming the quantity, never "nan" as JSON;
 * fd already failed so. */
static void test_nonfinite_results(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"id chain:n=3,joint=revolute --qd 1e200,0,0", "tau"},
        {"derivatives chain:n=3,joint=revolute --qd 1e200,0,0 --json", "dqdd_dq"},
        {"coeffs chain:n=3,joint=revolute --qd 1e200,1e200,0 --json", "C"},
        {"fd chain:n=3,joint=revolute --tau 0,0,1e308", "NaN or Inf"},
    };
    char args[256];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        cli_result r = mbd_run(cases[k][0]);
        if (r.status != 1 || !strstr(r.err, cases[k][1]) || strstr(r.out, "nan"))
            print_error("mbd %s: exit %d, stdout \"%s\", stderr \"%s\"\n", cases[k][0], r.status,
                        r.out, r.err);
        assert_int_equal(r.status, 1);
        assert_non_null(strstr(r.err, cases[k][1]));
        assert_null(strstr(r.out, "nan"));
        cli_result_free(&r);
    }
    for (int m = 0; m < mbd_derivatives_method_count(); m++) {
        snprintf(args, sizeof args,
                 "derivatives chain:n=3,joint=revolute --tau 0,0,1e308 "
                 "--method %s",
                 mbd_derivatives_method_name(mbd_derivatives_method_at(m)));
        expect_mbd(args, 1, "NaN or Inf");
    }
}

/* derivatives --solver: what "automatic" differentiates; refused for the methods that
 * always use bodies, rather than ignored. */
static void test_derivatives_solver_flag(void **state)
{
    (void)state;
    expect_rejected("derivatives chain:n=3,joint=revolute --method analytic --solver dense",
                    (const char *const[]){"--solver", "analytic", NULL});
    expect_rejected(
        "derivatives chain:n=3,joint=revolute --method finite-difference --solver bodies",
        (const char *const[]){"--solver", "finite-difference", NULL});
    expect_mbd("derivatives chain:n=3,joint=revolute --method automatic --solver bodies --json", 0,
               "dqdd_dq");
}

/* A step or sample count beyond the limit is refused up front, naming the flag. */
static void test_simulate_step_limit(void **state)
{
    (void)state;
    expect_rejected("simulate chain:n=3,joint=revolute --integrator rk4 --t1 1 --dt 1e-300",
                    (const char *const[]){"--dt", "1e-300", "steps", NULL});
    expect_rejected("simulate chain:n=3,joint=revolute --integrator dopri5 --t1 1 --sample 1e-12",
                    (const char *const[]){"--sample", NULL});
    expect_rejected("simulate chain:n=3,joint=revolute --integrator rk4 --t1 1 --dt 1e-300 "
                    "--ensemble 2",
                    (const char *const[]){"--dt", NULL});
}

/* Output paths checked before the work: exit 2 naming the path, nothing written. */
static void test_bad_output_paths(void **state)
{
    (void)state;
    char args[512];
    const char *missing = temp_path(0, "no/such/dir/out.json");
    static const char *const commands[] = {
        "cases chain:n=2,joint=revolute --states 2 --out",
        "check --models double-pendulum --json",
        "simulate chain:n=2,joint=revolute --integrator rk4 --t1 0.1 --dt 0.01 --out",
        "simulate chain:n=2,joint=revolute --integrator rk4 --t1 0.1 --dt 0.01 --ensemble 2 --out",
        "export mjcf chain:n=2,joint=revolute --out",
    };
    for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++) {
        snprintf(args, sizeof args, "%s %s", commands[k], missing);
        expect_rejected(args, (const char *const[]){missing, "No such file or directory", NULL});
        snprintf(args, sizeof args, "%s ''", commands[k]);
        expect_rejected(args, (const char *const[]){"an empty path", NULL});
        snprintf(args, sizeof args, "%s %s", commands[k], temp_dir);
        expect_rejected(args, (const char *const[]){temp_dir, "a directory", NULL});
    }
    expect_rejected("export mjcf chain:n=2,joint=revolute --out /dev/null",
                    (const char *const[]){"/dev/null", "not a regular file", NULL});
    snprintf(args, sizeof args,
             "simulate chain:n=2,joint=revolute --integrator rk4 --t1 0.1 "
             "--dt 0.01 --ensemble 2 --out-dir %s",
             missing);
    expect_rejected(args, (const char *const[]){missing, "No such file or directory", NULL});
}

/* A model whose cases fail: one message, the case's, and no second about the write. */
static void test_cases_failure_said_once(void **state)
{
    (void)state;
    const char *model = temp_path(1, "massless.json");
    write_text(
        model,
        "{\"name\": \"massless\", \"bodies\": [\n"
        " {\"name\": \"leaf\", \"parent\": \"world\", \"joint\": {\"type\": \"revolute\", \"axis\": [0, 0, 1]},\n"
        "  \"mass\": 0, \"com\": [0, 0, 0], \"inertia\": [[0, 0, 0], [0, 0, 0], [0, 0, 0]]}]}\n");
    char args[512];
    snprintf(args, sizeof args, "cases %s --states 2 --out %s", model, temp_path(2, "c.json"));
    cli_result r = mbd_run(args);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "case 0"));
    assert_null(strstr(r.err, "cannot write"));
    assert_null(strchr(strchr(r.err, '\n') + 1, '\n')); /* one line */
    cli_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_model_files),
        cmocka_unit_test(test_bad_flags_and_vectors),
        cmocka_unit_test(test_outputs_match_library),
        cmocka_unit_test(test_minv),
        cmocka_unit_test(test_derivatives),
        cmocka_unit_test(test_solvers_and_info),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_recommend_advice_follows_noise),
        cmocka_unit_test(test_recommend_derivatives),
        cmocka_unit_test(test_default_solver),
        cmocka_unit_test(test_massless_leaf_cli),
        cmocka_unit_test(test_nonfinite_cli),
        cmocka_unit_test(test_nonfinite_results),
        cmocka_unit_test(test_derivatives_solver_flag),
        cmocka_unit_test(test_simulate_step_limit),
        cmocka_unit_test(test_bad_output_paths),
        cmocka_unit_test(test_cases_failure_said_once),
    };
    return cmocka_run_group_tests_name("cli", tests, make_temp_dir, remove_temp_dir);
}
