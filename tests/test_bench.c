/* test_bench.c: mbd-bench's repetitions made one measurement after another and
 * interleaved (--interleave) give the same rows in the same order, each measurement's
 * repetitions with one iteration count, and an interleaved run stopped by a signal writes
 * what it has, whole and marked partial; -h and --help print the flags. */
#include "support.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define REPETITIONS 3
#define SMALL_RUN "./mbd-bench --suite percall,batch --n 2,5 --batch-n 4 --threads 1,2 --batch-k 16 " \
                  "--filter 'bodies|ldlt' --min-time 0.002 --repetitions 3"

/* Runs COMMAND --json temp_dir/NAME, expects exit_status, and returns the JSON it wrote. */
static json_t *bench_json(const char *command, const char *name, int exit_status)
{
    char line[1024], path[256];
    snprintf(path, sizeof path, "%s/%s", temp_dir, name);
    snprintf(line, sizeof line, "%s --json %s", command, path);
    cli_result r = shell_run(line);
    if (r.status != exit_status)
        print_error("%s: exit %d\n%s", line, r.status, r.err);
    assert_int_equal(r.status, exit_status);
    cli_result_free(&r);
    json_error_t error;
    json_t *root = json_load_file(path, 0, &error);
    if (!root)
        print_error("%s: %s\n", path, error.text);
    assert_non_null(root);
    return root;
}

static const char *row_string(const json_t *row, const char *key)
{
    return json_string_value(json_object_get(row, key));
}

static json_int_t row_integer(const json_t *row, const char *key)
{
    return json_integer_value(json_object_get(row, key));
}

/* Every iteration row of a measurement has its "repetitions" (1..REPETITIONS) rows, one
 * iteration count, and repetition indices 0, 1, ... in order. */
static void expect_whole_measurements(const json_t *rows)
{
    size_t k = 0;
    while (k < json_array_size(rows)) {
        const json_t *first = json_array_get(rows, k);
        if (strcmp(row_string(first, "run_type"), "iteration") != 0) {
            k++;
            continue;
        }
        const json_int_t count = row_integer(first, "repetitions");
        assert_in_range(count, 1, REPETITIONS);
        for (json_int_t r = 0; r < count; r++) {
            const json_t *row = json_array_get(rows, k + (size_t)r);
            assert_non_null(row);
            assert_string_equal(row_string(row, "run_name"), row_string(first, "run_name"));
            assert_int_equal(row_integer(row, "repetition_index"), r);
            assert_int_equal(row_integer(row, "iterations"), row_integer(first, "iterations"));
        }
        k += (size_t)count;
    }
}

static void test_interleaved_rows_as_consecutive(void **unused)
{
    (void)unused;
    json_t *one = bench_json(SMALL_RUN, "consecutive.json", 0);
    json_t *two = bench_json(SMALL_RUN " --interleave", "interleaved.json", 0);
    assert_false(json_is_true(json_object_get(json_object_get(one, "context"), "interleaved")));
    assert_true(json_is_true(json_object_get(json_object_get(two, "context"), "interleaved")));
    const json_t *a = json_object_get(one, "benchmarks"), *b = json_object_get(two, "benchmarks");
    assert_true(json_array_size(a) > 0);
    assert_int_equal(json_array_size(a), json_array_size(b));
    for (size_t k = 0; k < json_array_size(a); k++) {
        const json_t *x = json_array_get(a, k), *y = json_array_get(b, k);
        assert_string_equal(row_string(x, "name"), row_string(y, "name"));
        assert_string_equal(row_string(x, "run_type"), row_string(y, "run_type"));
        assert_int_equal(row_integer(x, "repetitions"), REPETITIONS);
        assert_int_equal(row_integer(y, "repetitions"), REPETITIONS);
        assert_int_equal(row_integer(x, "family_index"), row_integer(y, "family_index"));
        assert_int_equal(row_integer(x, "per_family_instance_index"),
                         row_integer(y, "per_family_instance_index"));
        /* a batch's efficiency against its one-thread median: that median's is 1 */
        if (strncmp(row_string(y, "name"), "batch_", 6) == 0) {
            assert_non_null(json_object_get(y, "efficiency"));
            if (strstr(row_string(y, "name"), "/threads:1_median"))
                assert_true(json_number_value(json_object_get(y, "efficiency")) == 1.0);
        }
    }
    expect_whole_measurements(a);
    expect_whole_measurements(b);
    json_decref(one);
    json_decref(two);
}

/* SIGTERM two seconds into the first pass, and again 0.05 s later, within the measurement
 * under way (timeout(1) sends it twice, to the program and then to its process group):
 * exit 128 + 15, and the measurements made so far in a whole file, marked partial. */
static void test_interleaved_stop_writes_partial(void **unused)
{
    (void)unused;
    json_t *root = bench_json("sh -c './mbd-bench \"$@\" & pid=$!; sleep 2; kill -TERM $pid; sleep 0.05; kill -TERM $pid; "
                              "wait $pid' sh --suite percall --min-time 0.5 --repetitions 3 --interleave",
                              "stopped.json", 128 + 15);
    assert_true(json_is_true(json_object_get(json_object_get(root, "context"), "partial")));
    const json_t *rows = json_object_get(root, "benchmarks");
    assert_true(json_array_size(rows) > 0);
    expect_whole_measurements(rows);
    json_decref(root);
}

/* -h and --help, with other flags or alone, print the flags and exit 0 without a run. */
static void test_help(void **unused)
{
    (void)unused;
    const char *lines[] = {"./mbd-bench -h", "./mbd-bench --suite batch --help"};
    for (int k = 0; k < 2; k++) {
        cli_result r = shell_run(lines[k]);
        assert_int_equal(r.status, 0);
        assert_non_null(strstr(r.out, "usage: mbd-bench"));
        assert_string_equal(r.err, ""); /* a run prints its context there */
        cli_result_free(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interleaved_rows_as_consecutive),
        cmocka_unit_test(test_interleaved_stop_writes_partial),
        cmocka_unit_test(test_help),
    };
    return cmocka_run_group_tests(tests, make_temp_dir, remove_temp_dir);
}
