/* test_cases.c: reference data through the command: mbd cases writes a file that every
 * solver passes under mbd check --cases; the same seed gives the same file; a corrupted
 * qdd fails with exit 1 naming the case; malformed files, a model that does not fit and a
 * non-finite answer are rejected with exit 2 naming the file and field; mbd check finds
 * its golden data from any working directory; the fuzz target's seeds replay cleanly. */
#include "support.h"

#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CARDAN "chain:n=4,joint=cardan"
#define QUADRUPED "models/quadruped.urdf --floating-base"

/* mbd cases MODEL --states K --seed S --out temp_dir/NAME; returns the path (slot). */
static const char *make_cases(int slot, const char *name, const char *model, int states, int seed)
{
    const char *path = temp_path(slot, name);
    char args[512];
    snprintf(args, sizeof args, "cases %s --states %d --seed %d --out %s", model, states, seed,
             path);
    expect_mbd(args, 0, NULL);
    return path;
}

static void save_json(const json_t *root, const char *path)
{
    assert_int_equal(json_dump_file(root, path, JSON_REAL_PRECISION(17)), 0);
}

static void check_every_solver(const char *path)
{
    for (int s = 0; s < mbd_solver_count(); s++) {
        char args[512];
        snprintf(args, sizeof args, "check --cases %s --solver %s", path,
                 mbd_solver_name(mbd_solver_at(s)));
        expect_mbd2(args, 0, "pass", "worst relative error");
    }
}

static void test_round_trip_every_solver(void **state)
{
    (void)state;
    check_every_solver(make_cases(0, "cardan.json", CARDAN, 5, 3));
    check_every_solver(make_cases(0, "quadruped.json", QUADRUPED, 3, 4));
}

/* A floating base's quaternion (q[3..6] of its free joint) has unit norm in every case. */
static void test_floating_base_quaternions(void **state)
{
    (void)state;
    json_t *root = load_json_file(make_cases(0, "quadruped.json", QUADRUPED, 20, 9));
    assert_true(json_is_true(json_object_get(root, "floating_base")));
    json_t *base = json_array_get(json_object_get(root, "joints"), 0);
    assert_string_equal(json_string_value(json_object_get(base, "type")), "free");
    const size_t first = (size_t)json_integer_value(json_object_get(base, "q_index")) + 3;
    size_t k;
    json_t *item;
    json_array_foreach(json_object_get(root, "cases"), k, item)
    {
        const json_t *q = json_object_get(item, "q");
        double norm2 = 0.0;
        for (size_t i = first; i < first + 4; i++)
            norm2 += pow(json_number_value(json_array_get(q, i)), 2);
        assert_true(fabs(sqrt(norm2) - 1.0) < 1e-15);
    }
    json_decref(root);
}

static void test_same_seed_same_file(void **state)
{
    (void)state;
    char *a = read_text_file(make_cases(0, "a.json", CARDAN, 3, 11));
    char *b = read_text_file(make_cases(0, "b.json", CARDAN, 3, 11));
    char *c = read_text_file(make_cases(0, "c.json", CARDAN, 3, 12));
    assert_string_equal(a, b);
    assert_true(strcmp(a, c) != 0);
    free(a);
    free(b);
    free(c);
}

/* qdd[1] of case 2 moved by 1e-3: exit 1, the worst error named there. */
static void test_corrupted_qdd_fails(void **state)
{
    (void)state;
    const char *path = make_cases(0, "corrupt.json", CARDAN, 4, 5);
    json_t *root = load_json_file(path);
    json_t *qdd = json_object_get(json_array_get(json_object_get(root, "cases"), 2), "qdd");
    json_array_set_new(qdd, 1, json_real(json_number_value(json_array_get(qdd, 1)) + 1e-3));
    save_json(root, path);
    json_decref(root);
    char args[512];
    snprintf(args, sizeof args, "check --cases %s --solver bodies", path);
    expect_mbd2(args, 1, "case 2, qdd[1]", "FAIL");
}

/* One change to a good file, and what the one-line message must name. */
typedef struct {
    const char *name;
    void (*spoil)(json_t *root);
    const char *field, *value;
} spoiled;

static json_t *case_field(json_t *root, size_t k, const char *field)
{
    return json_object_get(json_array_get(json_object_get(root, "cases"), k), field);
}

/* A derivative of case 1 moved by 1e-3: exit 1 naming it; the file without derivatives
 * (as written before they were added) still passes. */
static void test_derivatives_checked_when_present(void **state)
{
    (void)state;
    const char *path = make_cases(0, "derivatives.json", CARDAN, 3, 5);
    json_t *root = load_json_file(path);
    json_t *row = json_array_get(case_field(root, 1, "dqdd_dqd"), 2);
    json_array_set_new(row, 3, json_real(json_number_value(json_array_get(row, 3)) + 1e-3));
    save_json(root, path);
    char args[512];
    snprintf(args, sizeof args, "check --cases %s --solver bodies", path);
    expect_mbd2(args, 1, "case 1, dqdd_dqd[2][3]", "FAIL");
    static const char *const fields[] = {"dqdd_dq", "dqdd_dqd", "dqdd_dtau"};
    for (size_t k = 0; k < json_array_size(json_object_get(root, "cases")); k++)
        for (int f = 0; f < 3; f++)
            json_object_del(json_array_get(json_object_get(root, "cases"), k), fields[f]);
    save_json(root, path);
    json_decref(root);
    expect_mbd2(args, 0, "pass", "worst relative error");
}

static void drop_qdd(json_t *root)
{
    json_object_del(json_array_get(json_object_get(root, "cases"), 1), "qdd");
}
static void short_h_row(json_t *root)
{
    json_array_remove(json_array_get(case_field(root, 1, "H"), 3), 0);
}
static void text_in_q(json_t *root)
{
    json_array_set_new(case_field(root, 0, "q"), 2, json_string("x"));
}
static void huge_tau(json_t *root)
{
    json_array_set_new(case_field(root, 1, "tau"), 0, json_real(1e308));
}
static void schema_2(json_t *root) { json_object_set_new(root, "schema", json_integer(2)); }
static void renamed_joint(json_t *root)
{
    json_object_set_new(json_array_get(json_object_get(root, "joints"), 1), "name",
                        json_string("elbow"));
}
static void other_model(json_t *root)
{
    json_object_set_new(root, "model", json_string("chain:n=5,joint=cardan"));
}
static void unknown_field(json_t *root)
{
    json_object_set_new(json_array_get(json_object_get(root, "cases"), 0), "qddd", json_integer(1));
}

static void test_malformed_files_rejected(void **state)
{
    (void)state;
    const spoiled cases[] = {
        {"drop_qdd", drop_qdd, "cases[1].qdd: missing", NULL},
        {"short_h_row", short_h_row, "cases[1].H: expected 8 arrays of 8", NULL},
        {"text_in_q", text_in_q, "cases[0].q: expected an array of 8 finite numbers", "\"x\""},
        {"huge_tau", huge_tau, "cases[1]: mbd_forward (bodies)", "NaN or Inf"},
        {"schema_2", schema_2, "schema", "got 2"},
        {"renamed_joint", renamed_joint, "joints[1] (\"b2\").name", "\"elbow\""},
        {"other_model", other_model, "joints", "5 joints"},
        {"unknown_field", unknown_field, "cases[0].qddd: unknown field", NULL},
    };
    const char *good = make_cases(0, "good.json", CARDAN, 3, 6);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        json_t *root = load_json_file(good);
        cases[k].spoil(root);
        char name[64], args[512];
        snprintf(name, sizeof name, "%s.json", cases[k].name);
        const char *path = temp_path(1, name);
        save_json(root, path);
        json_decref(root);
        snprintf(args, sizeof args, "check --cases %s --solver bodies", path);
        expect_rejected(args, (const char *const[]){path, cases[k].field,
                                                    cases[k].value ? cases[k].value : ":", NULL});
    }
    write_text(temp_path(1, "cut.json"), "{\"schema\": 1, \"cases\": [");
    char args[512];
    snprintf(args, sizeof args, "check --cases %s --solver dense", temp_path(1, "cut.json"));
    expect_rejected(args, (const char *const[]){"cut.json:1:", NULL});
}

static void test_bad_requests_rejected(void **state)
{
    (void)state;
    const char *good = make_cases(0, "good.json", CARDAN, 2, 6);
    char args[512];
    snprintf(args, sizeof args, "check --cases %s --solver nope", good);
    expect_rejected(args, (const char *const[]){"--solver", "nope", NULL});
    snprintf(args, sizeof args, "check --cases %s", good);
    expect_rejected(args, (const char *const[]){"--cases", "--solver", NULL});
    const char *out = temp_path(1, "friction.json");
    snprintf(args, sizeof args, "cases chain:n=3,joint=revolute,friction=0.1 --states 2 --out %s",
             out);
    expect_rejected(args, (const char *const[]){"friction", NULL});
    assert_int_equal(access(out, F_OK), -1); /* no file written */
    snprintf(args, sizeof args, "cases %s --states 0 --out %s", CARDAN, out);
    expect_rejected(args, (const char *const[]){"--states", NULL});
}

/* The golden data from another working directory, by the executable's absolute path; and
 * MBD_DATA, when set, is the only place looked in. */
static void test_golden_from_any_directory(void **state)
{
    (void)state;
    char binary[PATH_MAX], line[PATH_MAX + 256];
    assert_non_null(realpath(mbd_binary(), binary));
    snprintf(line, sizeof line, "cd %s && %s check --models chain5 --solver bodies", temp_dir,
             binary);
    cli_result r = shell_run(line);
    if (r.status)
        print_error("%s: %s\n", line, r.err);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "worst: "));
    assert_null(strstr(r.out, "poisson")); /* --solver narrows the table */
    cli_result_free(&r);
    snprintf(line, sizeof line, "MBD_DATA=%s %s check --models chain5", temp_dir, binary);
    r = shell_run(line);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "no golden data"));
    cli_result_free(&r);
}

/* The fuzz target's seeds through the command: each passes, fails or is rejected with one
 * line, and never crashes. */
static void test_fuzz_seeds_replay(void **state)
{
    (void)state;
    DIR *dir = opendir("fuzz/corpus/fuzz_cases");
    assert_non_null(dir);
    int replayed = 0;
    for (struct dirent *e; (e = readdir(dir));) {
        if (e->d_name[0] == '.')
            continue;
        char args[512];
        snprintf(args, sizeof args, "check --cases fuzz/corpus/fuzz_cases/%s --solver sparse",
                 e->d_name);
        cli_result r = mbd_run(args);
        if (r.status < 0 || r.status > 2)
            print_error("mbd %s: exit %d: %s\n", args, r.status, r.err);
        assert_true(r.status >= 0 && r.status <= 2);
        const char *newline = strchr(r.status ? r.err : r.out, '\n');
        assert_true(newline && newline[1] == '\0');
        cli_result_free(&r);
        replayed++;
    }
    closedir(dir);
    assert_true(replayed > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_every_solver),
        cmocka_unit_test(test_floating_base_quaternions),
        cmocka_unit_test(test_same_seed_same_file),
        cmocka_unit_test(test_corrupted_qdd_fails),
        cmocka_unit_test(test_derivatives_checked_when_present),
        cmocka_unit_test(test_malformed_files_rejected),
        cmocka_unit_test(test_bad_requests_rejected),
        cmocka_unit_test(test_golden_from_any_directory),
        cmocka_unit_test(test_fuzz_seeds_replay),
    };
    return cmocka_run_group_tests_name("cases", tests, make_temp_dir, remove_temp_dir);
}
