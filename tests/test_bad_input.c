/* Bad input to the loader: its limits (nesting, sizes, specs), special files named as
 * models, the fuzz corpora replayed and every input a fuzzer found, as regression tests:
 * a one-line error naming the file, field and value, never a crash or a hang. */
#include "support.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../fuzz/fuzz_exercise.h"

/* ---- limits of the loader ---- */

static void expect_load_error(const char *path, const char *fragment1, const char *fragment2)
{
    char err[512] = "";
    mbd_model *model;
    mbd_model_load(path, NULL, &model, err, sizeof err);
    if (model || !strstr(err, fragment1) || (fragment2 && !strstr(err, fragment2)) ||
        strchr(err, '\n')) {
        print_error("%s: expected one line with \"%s\" and \"%s\", got \"%s\"\n", path, fragment1,
                    fragment2 ? fragment2 : "", model ? "(loaded)" : err);
        mbd_model_free(model);
        fail();
    }
}

static void test_json_nesting_limit(void **state)
{
    (void)state;
    const char *path = temp_path(0, "nested.json");
    char text[200] = "{\"bodies\": ";
    for (int k = 0; k < 31; k++)
        strcat(text, "[");
    write_text(path, text); /* 32 levels: jansson reports the syntax error */
    expect_load_error(path, path, NULL);
    strcat(text, "[");
    write_text(path, text); /* 33 levels: our limit, with line and column */
    expect_load_error(path, ":1:43: arrays and objects nested deeper than 32 levels", NULL);
    /* brackets inside strings do not count */
    write_text(
        path,
        "{\"name\": \"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\\\"[[[[[[[[\", \"bodies\": 1}");
    expect_load_error(path, "bodies", "non-empty array");
}

static void test_limits_of_specs_and_builder(void **state)
{
    (void)state;
    expect_load_error("chain:n=1000001,joint=revolute", "1000000", "1000001");
    expect_load_error("tree:n=99999999999999999999999", "expected an integer", NULL);
    expect_load_error("tree:n=200,taper=1000", "leave the range of doubles", "b");
    expect_load_error("tree:n=200,taper=0.001", "leave the range of doubles", NULL);
    mbd_body_def b = body_def("a", -1, MBD_REVOLUTE, 1.0);
    char err[256] = "";
    const double gravity[3] = {0};
    assert_null(build_tree("big", gravity, 1000001, &b, err, sizeof err));
    assert_non_null(strstr(err, "1000001"));
}

/* A FIFO, a device or a directory named as a model: a clear error, and no wait for a
 * writer; a file whose size fstat does not know is read to its end. */
static void test_special_files(void **state)
{
    (void)state;
    const char *fifo = temp_path(0, "fifo.json");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    expect_load_error(fifo, fifo, "not a regular file");
    expect_load_error(temp_dir, temp_dir, "not a regular file");
    expect_load_error("/dev/null", "/dev/null", "not a regular file");
    unlink(fifo);
    /* fstat says 0 bytes, yet there is text: read all the same (a syntax error here) */
    expect_load_error("/proc/self/status", "/proc/self/status:1:", NULL);
}

/* ---- the fuzz corpora and the inputs the fuzzers found ---- */

/* Loads (and if it loads, solves) every file of a model file target's corpus with the
 * options given (the floating base for the URDF target, as it does too); returns the
 * number of files. */
static int replay_model_files(const char *target, int floating_options)
{
    char dir_path[128];
    snprintf(dir_path, sizeof dir_path, "fuzz/corpus/%s", target);
    DIR *dir = opendir(dir_path);
    assert_non_null(dir);
    int files = 0;
    for (struct dirent *e; (e = readdir(dir));) {
        if (e->d_name[0] == '.')
            continue;
        for (int floating = 0; floating < floating_options; floating++) {
            char path[512], err[512] = "";
            snprintf(path, sizeof path, "%s/%s", dir_path, e->d_name);
            const mbd_load_options options = {.floating_base = floating};
            mbd_model *model;
            mbd_model_load(path, &options, &model, err, sizeof err);
            if (model) {
                fuzz_exercise_model(model);
                mbd_model_free(model);
            } else {
                fuzz_check_message(err);
            }
        }
        files++;
    }
    closedir(dir);
    return files;
}

/* Every file of fuzz/corpus/fuzz_model_json and fuzz_model_urdf, and every line of every
 * file of fuzz/corpus/fuzz_model_spec, as the fuzz targets load them. */
static void test_fuzz_corpora_replay(void **state)
{
    (void)state;
    assert_true(replay_model_files("fuzz_model_urdf", 2) >= 2);
    int files = replay_model_files("fuzz_model_json", 1);
    DIR *dir = opendir("fuzz/corpus/fuzz_model_spec");
    assert_non_null(dir);
    for (struct dirent *e; (e = readdir(dir));) {
        if (e->d_name[0] == '.')
            continue;
        char path[512], err[512] = "";
        snprintf(path, sizeof path, "fuzz/corpus/fuzz_model_spec/%s", e->d_name);
        char *spec = read_text_file(path);
        assert_non_null(spec);
        spec[strcspn(spec, "\n")] = '\0';
        mbd_model *model = NULL;
        if (!fuzz_spec_skipped(spec))
            mbd_model_load(spec, NULL, &model, err, sizeof err);
        if (model) {
            fuzz_exercise_model(model);
            mbd_model_free(model);
        }
        free(spec);
        files++;
    }
    closedir(dir);
    assert_true(files >= 20);
}

/* Regression inputs: each must load with a one-line error naming fragment, or (fragment
 * NULL) load and solve. Every crash or hang a fuzzer finds goes here (none so far: see
 * README.md, Reliability); the cases below are the loader's edges found while writing the fuzz
 * targets. */
static void test_regression_inputs(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *fragment;
    } json_cases[] = {
        /* deeper than any model: refused before jansson's recursive parser runs */
        {"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", "nested deeper"},
        /* a massless body written with -0: accepted (as 0), then singular, not a crash */
        {"{\"bodies\":[{\"name\":\"a\",\"parent\":\"world\",\"joint\":{\"type\":\"revolute\",\"axis\":[0,0,1]},"
         "\"mass\":-0,\"com\":[0,0,0],\"inertia\":[[-0,0,0],[0,0,0],[0,0,-0]]}]}",
         NULL},
    };
    for (size_t k = 0; k < sizeof json_cases / sizeof json_cases[0]; k++) {
        const char *path = temp_path(2, "regression.json");
        write_text(path, json_cases[k].text);
        char err[512] = "";
        mbd_model *model;
        mbd_model_load(path, NULL, &model, err, sizeof err);
        if (model) {
            assert_null(json_cases[k].fragment);
            fuzz_exercise_model(model);
            mbd_model_free(model);
        } else {
            fuzz_check_message(err);
            assert_non_null(json_cases[k].fragment);
            assert_non_null(strstr(err, json_cases[k].fragment));
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_nesting_limit),
        cmocka_unit_test(test_limits_of_specs_and_builder),
        cmocka_unit_test(test_special_files),
        cmocka_unit_test(test_fuzz_corpora_replay),
        cmocka_unit_test(test_regression_inputs),
    };
    return cmocka_run_group_tests_name("bad input", tests, make_temp_dir, remove_temp_dir);
}
