/* test_plugins.c: solver plugins (mbd_plugin.h). The example plugin
 * (examples/plugins/textbook.c) loaded into this program agrees with the dense solver to
 * 1e-10 one state at a time and in a batch; a plugin's NaN is MBD_ENONFINITE per state;
 * mbd and mbd-bench take --plugin and MBD_PLUGINS, and refuse each faulty plugin
 * (tests/plugins/faulty.c) with exit 2 and one line naming the file and the fault; ABI-1
 * plugins still load; a plugin's derivatives are a method of the table. The libraries are
 * built by `make plugins` into $(BUILD)/plugins/ (MBD_TEST_PLUGINS). (tests/test_pinocchio.c checks derivatives
 * that a plugin computes.) */
#include "support.h"

#include "mbd_plugin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXAMPLE MBD_TEST_PLUGINS "/textbook.so"
#define FAULTY(fault) MBD_TEST_PLUGINS "/faulty_" fault ".so"

/* Loads the example and the NaN plugin into this program once, for the tests below. */
static int load_plugins(void **state)
{
    (void)state;
    return mbd_plugin_load(EXAMPLE, NULL, 0) || mbd_plugin_load(FAULTY("nan_result"), NULL, 0)
               ? -1
               : make_temp_dir(state);
}

static void test_example_is_listed(void **state)
{
    (void)state;
    const mbd_solver *textbook = mbd_solver_find("textbook");
    assert_non_null(textbook);
    assert_ptr_equal(mbd_solver_at(mbd_solver_count() - 2), textbook);
    assert_string_equal(mbd_solver_plugin_path(textbook), EXAMPLE);
    assert_null(mbd_solver_plugin_path(mbd_solver_find("dense")));
    assert_int_equal(mbd_solver_formulations(textbook), MBD_ACCELERATION);
    assert_int_equal(mbd_solver_lanes(textbook, MBD_ACCELERATION), 1);
    assert_false(mbd_solver_closes_loops(textbook));
    char err[512];
    const int count = mbd_solver_count();
    assert_int_equal(mbd_plugin_load(EXAMPLE, err, sizeof err), MBD_EINVAL);
    assert_non_null(strstr(err, "'textbook' is already taken"));
    assert_int_equal(mbd_solver_count(), count); /* nothing added twice */
}

/* The textbook route against dense, on joints of every type and a floating base. */
static void test_example_matches_dense(void **state)
{
    (void)state;
    static const char *const specs[] = {
        "chain:n=7,joint=revolute",    "chain:n=5,joint=cardan",
        "chain:n=4,joint=spherical",   "tree:n=12,branching=2,skew=0.5,base=free",
        "chain:n=6,joint=cylindrical",
    };
    const mbd_solver *textbook = mbd_solver_find("textbook");
    for (size_t m = 0; m < sizeof specs / sizeof specs[0]; m++) {
        mbd_model *model = load_model(specs[m]);
        state_buf s = state_new(model, 11 + m);
        mbd_work *plugin, *dense;
        assert_int_equal(mbd_work_new(model, textbook, &plugin), MBD_OK);
        assert_int_equal(mbd_work_new(model, mbd_solver_find("dense"), &dense), MBD_OK);
        assert_int_equal(mbd_forward(model, plugin, s.q, s.qd, s.tau, s.out), MBD_OK);
        assert_int_equal(mbd_forward(model, dense, s.q, s.qd, s.tau, s.ref), MBD_OK);
        assert_close(s.out, s.ref, s.nv, 1e-10, specs[m]);
        /* no solve phase of its own, no momentum form */
        assert_int_equal(mbd_solve(model, plugin, s.qd, s.tau, s.out), MBD_EUNSUPPORTED);
        assert_int_equal(mbd_forward_momentum(model, plugin, s.q, s.qd, s.tau, s.out, s.out2),
                         MBD_EUNSUPPORTED);
        mbd_work_free(plugin);
        mbd_work_free(dense);
        state_free(&s);
        mbd_model_free(model);
    }
}

/* A batch of the plugin runs it state by state over the threads, each thread with its
 * own work: every state's result is mbd_forward's, bit for bit. */
static void test_example_in_batch(void **state)
{
    (void)state;
    enum { K = 37 };
    mbd_model *model = load_model("tree:n=9,branching=2,skew=0.5");
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
    double *q = malloc(sizeof *q * K * nq), *qd = malloc(sizeof *qd * K * nv);
    double *qdd = malloc(sizeof *qdd * K * nv), one[64];
    int status[K];
    uint64_t seed = 5;
    test_fill(&seed, q, K * nq, -2, 2);
    test_fill(&seed, qd, K * nv, -2, 2);
    const mbd_solver *textbook = mbd_solver_find("textbook");
    mbd_batch *batch;
    mbd_work *work;
    assert_int_equal(mbd_batch_new(model, textbook, 3, 0, &batch), MBD_OK);
    assert_int_equal(mbd_batch_lanes(batch), 1);
    assert_int_equal(mbd_batch_forward(model, batch, K, q, qd, NULL, qdd, status), MBD_OK);
    assert_int_equal(mbd_work_new(model, textbook, &work), MBD_OK);
    for (int k = 0; k < K; k++) {
        assert_int_equal(status[k], MBD_OK);
        assert_int_equal(mbd_forward(model, work, q + k * nq, qd + k * nv, NULL, one), MBD_OK);
        assert_memory_equal(one, qdd + k * nv, sizeof *one * nv);
    }
    mbd_work_free(work);
    mbd_batch_free(batch);
    free(q), free(qd), free(qdd);
    mbd_model_free(model);
}

/* What a plugin solver does not run: friction (MBD_EUNSUPPORTED), loops (the open tree,
 * as every solver's mbd_forward; no constrained route); its NaN is MBD_ENONFINITE. */
static void test_plugin_limits(void **state)
{
    (void)state;
    mbd_model *friction = load_model("chain:n=3,joint=revolute,friction=0.2");
    mbd_model *model = load_model("chain:n=3,joint=revolute");
    double q[3] = {0.1, 0.2, 0.3}, qd[3] = {0}, qdd[3];
    int status[2];
    mbd_work *work;
    mbd_batch *batch;
    assert_int_equal(mbd_work_new(friction, mbd_solver_find("textbook"), &work), MBD_OK);
    assert_int_equal(mbd_forward(friction, work, q, qd, NULL, qdd), MBD_EUNSUPPORTED);
    mbd_work_free(work);
    assert_int_equal(mbd_work_new(model, mbd_solver_find("faulty"), &work), MBD_OK);
    assert_int_equal(mbd_forward(model, work, q, qd, NULL, qdd), MBD_ENONFINITE);
    mbd_work_free(work);
    assert_int_equal(mbd_batch_new(model, mbd_solver_find("faulty"), 2, 0, &batch), MBD_OK);
    double q2[6] = {0}, qd2[6] = {0}, qdd2[6];
    assert_int_equal(mbd_batch_forward(model, batch, 2, q2, qd2, NULL, qdd2, status),
                     MBD_ENONFINITE);
    assert_int_equal(status[0], MBD_ENONFINITE);
    assert_int_equal(status[1], MBD_ENONFINITE);
    mbd_batch_free(batch);
    mbd_model_free(friction);
    mbd_model_free(model);
}

/* Each faulty plugin refused by mbd with exit 2 and one line naming its file and fault;
 * and through MBD_PLUGINS. */
static void test_faulty_plugins_refused(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"missing", "cannot load the plugin"},
        {"no_table_function", "has no function mbd_plugin_solvers"},
        {"null_table", "mbd_plugin_solvers returned NULL"},
        {"negative_count", "count of -1, not 1 to 64"},
        {"huge_count", "count of 1000000, not 1 to 64"},
        {"wrong_abi", "ABI 3, but this mbdbench loads ABI 1 or 2"},
        {"mixed_abi", "solver 1: ABI 1, but solver 0's is 2"},
        {"method_name", "name 'analytic' is already taken"},
        {"null_name", "name is NULL"},
        {"space_name", "name has a character other than"},
        {"long_name", "name is longer than 40 bytes"},
        {"builtin_name", "name 'dense' is already taken"},
        {"twin_names", "solver 1: name 'faulty' is already taken"},
        {"null_summary", "summary is NULL"},
        {"null_work_new", "function work_new is NULL"},
        {"null_work_free", "function work_free is NULL"},
        {"null_forward", "function forward is NULL"},
        {"dash_name", "name starts with '-'"},
        {"row_name", "name ends with '-momentum'"},
        {"simd_name", "name ends with '-simd'"},
    };
    char args[512], path[256];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        snprintf(path, sizeof path, FAULTY("%s"), cases[k][0]);
        snprintf(args, sizeof args, "solvers --plugin %s", path);
        expect_rejected(args, (const char *const[]){"--plugin", path, cases[k][1], NULL});
    }
    expect_rejected("fd chain:n=2,joint=revolute --plugin " EXAMPLE " --plugin " EXAMPLE,
                    (const char *const[]){EXAMPLE, "'textbook' is already taken", NULL});
    expect_rejected("solvers --plugin", (const char *const[]){"--plugin", "needs a value", NULL});
    setenv("MBD_PLUGINS", EXAMPLE ":" FAULTY("null_forward"), 1);
    expect_rejected("solvers", (const char *const[]){"MBD_PLUGINS", FAULTY("null_forward"),
                                                     "function forward is NULL", NULL});
    unsetenv("MBD_PLUGINS");
}

static void read_qdd(const char *args, double *qdd, int nv)
{
    json_t *root = run_json(args);
    json_t *array = json_object_get(root, "qdd");
    assert_int_equal((int)json_array_size(array), nv);
    for (int k = 0; k < nv; k++)
        qdd[k] = json_number_value(json_array_get(array, (size_t)k));
    json_decref(root);
}

/* The example through mbd: listed, fd agrees with dense, simulate and recommend run it;
 * the NaN plugin's state fails as a built-in's would. */
static void test_example_in_mbd(void **state)
{
    (void)state;
    expect_mbd2("solvers --plugin " EXAMPLE, 0, "textbook", "plugin: H qdd = tau - C");
    const char *state_args = "chain:n=4,joint=cardan --q 0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8 "
                             "--qd 1,-1,1,-1,1,-1,1,-1";
    char args[512];
    double plugin[8], dense[8];
    snprintf(args, sizeof args, "fd %s --plugin %s --solver textbook", state_args, EXAMPLE);
    read_qdd(args, plugin, 8);
    snprintf(args, sizeof args, "fd %s --solver dense", state_args);
    read_qdd(args, dense, 8);
    assert_close(plugin, dense, 8, 1e-10, "mbd fd --solver textbook");
    setenv("MBD_PLUGINS", EXAMPLE, 1);
    expect_mbd(
        "simulate chain:n=3,joint=revolute --integrator rk4 --dt 0.01 --t1 0.05 --solver textbook",
        0, "t,");
    expect_mbd("recommend chain:n=3,joint=revolute", 0, "textbook");
    unsetenv("MBD_PLUGINS");
    expect_mbd("fd chain:n=2,joint=revolute --plugin " FAULTY("nan_result") " --solver faulty", 1,
               "NaN or Inf");
}

/* Plugins built against ABI 1's header (shorter entries, no forward_derivatives) load: the
 * second entry of a two-entry table read in its place, the example's forward as dense's;
 * neither has derivatives. */
static void test_older_abi_loads(void **state)
{
    (void)state;
    expect_mbd2("solvers --plugin " FAULTY("abi1"), 0, "faulty-2", "a plugin with a fault");
    expect_mbd("fd chain:n=2,joint=revolute --plugin " FAULTY("abi1") " --solver faulty-2", 1,
               "NaN or Inf");
    const char *state_args = "chain:n=4,joint=cardan --q 0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8";
    char args[512];
    double plugin[8], dense[8];
    snprintf(args, sizeof args,
             "fd %s --plugin " MBD_TEST_PLUGINS "/textbook_abi1.so --solver textbook", state_args);
    read_qdd(args, plugin, 8);
    snprintf(args, sizeof args, "fd %s --solver dense", state_args);
    read_qdd(args, dense, 8);
    assert_close(plugin, dense, 8, 1e-10, "mbd fd --solver textbook (ABI 1)");
    expect_rejected(
        "derivatives chain:n=2,joint=revolute --plugin " FAULTY("abi1") " --solver faulty-2",
        (const char *const[]){"--solver", "'faulty-2'", "has no derivatives", NULL});
}

/* Derivatives through a plugin: an ABI-2 solver with forward_derivatives is a method of
 * its name (the example, without, is none), run in any workspace of the model, its NaN
 * MBD_ENONFINITE; mbd derivatives takes it by --method or as --solver's own. */
static void test_plugin_derivatives(void **state)
{
    (void)state;
    const mbd_derivatives_method *faulty = mbd_derivatives_method_find("faulty");
    assert_non_null(faulty);
    assert_ptr_equal(mbd_derivatives_method_at(mbd_derivatives_method_count() - 1), faulty);
    assert_string_equal(mbd_derivatives_method_summary(faulty), "a plugin with a fault");
    assert_null(mbd_derivatives_method_find("textbook"));
    mbd_model *model = load_model("chain:n=3,joint=revolute");
    double q[3] = {0.1, 0.2, 0.3}, qd[3] = {0}, d[9];
    static const char *const solvers[] = {"faulty", "bodies", "textbook"};
    for (int k = 0; k < 3; k++) { /* its own workspace, a built-in's, another plugin's */
        mbd_work *work;
        assert_int_equal(mbd_work_new(model, mbd_solver_find(solvers[k]), &work), MBD_OK);
        assert_int_equal(mbd_forward_derivatives(model, work, q, qd, NULL, faulty, NULL, d, NULL),
                         MBD_ENONFINITE);
        assert_int_equal(mbd_forward_derivatives(model, work, q, qd, NULL,
                                                 mbd_derivatives_method_find("analytic"), NULL, d,
                                                 NULL),
                         MBD_OK);
        mbd_work_free(work);
    }
    mbd_model_free(model);
    static const char *const nan_runs[] = {"--method faulty", "--solver faulty",
                                           "--method faulty --solver faulty"};
    char args[512];
    for (int k = 0; k < 3; k++) {
        snprintf(args, sizeof args, "derivatives chain:n=2,joint=revolute --plugin %s %s",
                 FAULTY("nan_result"), nan_runs[k]);
        expect_mbd(args, 1, "NaN or Inf");
    }
    expect_rejected("derivatives chain:n=2,joint=revolute --plugin " FAULTY(
                        "nan_result") " --method faulty --solver dense",
                    (const char *const[]){"--solver", "'faulty' does not take a solver", NULL});
    expect_rejected("derivatives chain:n=2,joint=revolute --plugin " EXAMPLE " --solver textbook",
                    (const char *const[]){"'textbook'", EXAMPLE, "has no derivatives", NULL});
    expect_mbd("derivatives chain:n=2,joint=revolute --solver bodies --json", 0,
               "\"method\": \"automatic\"");
    expect_mbd(
        "derivatives chain:n=2,joint=revolute --plugin " FAULTY("not_a_status") " --method faulty",
        1, "invalid argument");
}

/* A plugin that fails in a call is named with its fault: a NULL workspace in mbd check
 * --cases (once an empty message), a code that is not a status in an ensemble (once
 * "ensemble: invalid argument"). */
static void test_plugin_call_faults_named(void **state)
{
    (void)state;
    char args[512];
    const char *cases = temp_path(0, "plugin-cases.json");
    snprintf(args, sizeof args, "cases chain:n=2,joint=revolute --states 2 --out %s", cases);
    expect_mbd(args, 0, NULL);
    snprintf(args, sizeof args, "check --cases %s --solver faulty --plugin %s", cases,
             FAULTY("work_new_fails"));
    expect_mbd2(args, 1, "solver 'faulty'", "work_new failed");
    expect_mbd2("simulate chain:n=2,joint=revolute --ensemble 2 --integrator rk4 --dt 0.01 "
                "--t1 0.05 --solver faulty --plugin " FAULTY("not_a_status"),
                1, FAULTY("not_a_status"), "not an mbd status");
}

/* mbd-bench times the plugin as a built-in: rows in the percall and batch suites. */
static void test_example_in_bench(void **state)
{
    (void)state;
    char line[512], path[256];
    snprintf(path, sizeof path, "%s/bench.json", temp_dir);
    snprintf(line, sizeof line,
             "./mbd-bench --plugin " EXAMPLE " --suite percall,batch --n 3 --batch-n 3 "
             "--threads 1 --batch-k 8 --filter textbook --min-time 0.001 --repetitions 2 "
             "--json %s",
             path);
    cli_result r = shell_run(line);
    if (r.status != 0)
        print_error("%s: exit %d\n%s", line, r.status, r.err);
    assert_int_equal(r.status, 0);
    cli_result_free(&r);
    json_error_t error;
    json_t *root = json_load_file(path, 0, &error);
    assert_non_null(root);
    json_t *rows = json_object_get(root, "benchmarks");
    int percall = 0, batch = 0;
    for (size_t k = 0; k < json_array_size(rows); k++) {
        const char *name = json_string_value(json_object_get(json_array_get(rows, k), "name"));
        percall += name && strncmp(name, "fd_textbook/", 12) == 0;
        batch += name && strncmp(name, "batch_textbook/", 15) == 0;
    }
    json_decref(root);
    assert_true(percall > 0);
    assert_true(batch > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_example_is_listed),
        cmocka_unit_test(test_example_matches_dense),
        cmocka_unit_test(test_example_in_batch),
        cmocka_unit_test(test_plugin_limits),
        cmocka_unit_test(test_faulty_plugins_refused),
        cmocka_unit_test(test_example_in_mbd),
        cmocka_unit_test(test_example_in_bench),
        cmocka_unit_test(test_plugin_call_faults_named),
        cmocka_unit_test(test_older_abi_loads),
        cmocka_unit_test(test_plugin_derivatives),
    };
    return cmocka_run_group_tests_name("plugins", tests, load_plugins, remove_temp_dir);
}
