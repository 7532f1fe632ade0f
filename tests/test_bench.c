/* test_bench.c: mbd-bench's repetitions made one measurement after another and
 * interleaved (--interleave) give the same rows in the same order, each measurement's
 * repetitions with one iteration count, and an interleaved run stopped by a signal writes
 * what it has, whole and marked partial; -h and --help print the flags. `mbd-bench compare`
 * judges each row against the noise of both runs, lists the rows of one run only, exits 2
 * on bad input naming the file, and 1 under --fail-on-slower when a row is slower. The
 * machine suite's rates are in the context, positive, with STREAM's byte counts, and the
 * report's targets that are ratios to them read PASS or MISS as the ratio says. */
#include "support.h"

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REPETITIONS 3
#define SMALL_RUN                                                                                  \
    "./mbd-bench --suite percall,batch --n 2,5 --batch-n 4 --threads 1,2 --batch-k 16 "            \
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
    return load_json_file(path);
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
    json_t *root = bench_json(
        "sh -c './mbd-bench \"$@\" & pid=$!; sleep 2; kill -TERM $pid; sleep 0.05; kill -TERM $pid; "
        "wait $pid' sh --suite percall --min-time 0.5 --repetitions 3 --interleave",
        "stopped.json", 128 + 15);
    assert_true(json_is_true(json_object_get(json_object_get(root, "context"), "partial")));
    const json_t *rows = json_object_get(root, "benchmarks");
    assert_true(json_array_size(rows) > 0);
    expect_whole_measurements(rows);
    json_decref(root);
}

/* The derivatives suite: a row per method of the table, family and N, named
 * derivatives_METHOD/FAMILY/n:N, each with one bodies forward call's time on its model and
 * the cost as a multiple of it; where the table has a reference method, the deviation from
 * it (zero for the reference itself); none for families with friction or loops. The .dat
 * table has the same rows. */
static void test_derivatives_suite(void **unused)
{
    (void)unused;
    char command[512];
    snprintf(command, sizeof command,
             "./mbd-bench --suite derivatives --derivatives-n 2,4 "
             "--filter 'chain-revolute|arm7' --min-time 0.002 --repetitions 2 --dat %s/dat",
             temp_dir);
    json_t *root = bench_json(command, "derivatives.json", 0);
    const json_t *rows = json_object_get(root, "benchmarks");
    const int methods = mbd_derivatives_method_count();
    int medians = 0;
    for (size_t k = 0; k < json_array_size(rows); k++) {
        const json_t *row = json_array_get(rows, k);
        const char *name = row_string(row, "name");
        assert_int_equal(strncmp(name, "derivatives_", 12), 0);
        assert_null(strstr(name, "friction"));
        if (!strstr(name, "_median"))
            continue;
        medians++;
        char method[64];
        assert_int_equal(sscanf(name, "derivatives_%63[^/]", method), 1);
        assert_non_null(mbd_derivatives_method_find(method));
        const double forward = json_number_value(json_object_get(row, "forward_ns"));
        const double ratio = json_number_value(json_object_get(row, "x_forward"));
        assert_true(forward > 0.0 && ratio > 0.0);
        assert_float_equal(ratio * forward, json_number_value(json_object_get(row, "cpu_time")),
                           1e-6 * ratio * forward);
        const json_t *deviation = json_object_get(row, "max_rel_dev");
        const int has_reference =
            mbd_derivatives_method_find("automatic") || mbd_derivatives_method_find("analytic");
        assert_int_equal(deviation != NULL, has_reference);
        if (deviation)
            assert_true(json_number_value(deviation) < 1e-5);
    }
    /* chain-revolute at N = 2 and 4, and arm7 once: every method */
    assert_int_equal(medians, 3 * methods);
    snprintf(command, sizeof command, "%s/dat/derivatives.dat", temp_dir);
    char *table = read_text_file(command);
    int lines = 0;
    for (const char *c = table; (c = strchr(c, '\n')); c++)
        lines++;
    assert_int_equal(lines, 1 + 3 * methods);
    free(table);
    json_decref(root);
}

/* The robot suites on a list of three robots: arm7 fixed, the quadruped on a floating
 * base, and a file that is missing (left out, named in the context's robots_skipped). One
 * row per acceleration-form solver (no momentum forms) and per derivatives method on each
 * robot loaded, n its nv; robots.dat holds each solver's time over the fastest (1 for the
 * fastest); a malformed list is a usage error naming the file and line. */
static void test_robot_suites(void **unused)
{
    (void)unused;
    char list[256], command[768];
    snprintf(list, sizeof list, "%s/robots.txt", temp_dir);
    FILE *f = fopen(list, "w");
    assert_non_null(f);
    fputs("# name base path\narm7 fixed models/arm7.urdf\nquad floating models/quadruped.urdf\n"
          "gone fixed models/no-such-robot*.urdf\n",
          f);
    fclose(f);
    snprintf(command, sizeof command,
             "./mbd-bench --suite robots,robot-derivatives --robots %s "
             "--min-time 0.002 --repetitions 2 --dat %s/dat",
             list, temp_dir);
    json_t *root = bench_json(command, "robots.json", 0);
    const json_t *context = json_object_get(root, "context");
    assert_int_equal(json_array_size(json_object_get(context, "robots")), 2);
    const json_t *skipped = json_object_get(context, "robots_skipped");
    assert_int_equal(json_array_size(skipped), 1);
    assert_string_equal(row_string(json_array_get(skipped, 0), "name"), "gone");
    const json_t *rows = json_object_get(root, "benchmarks");
    int forward = 0, derivatives = 0;
    for (size_t k = 0; k < json_array_size(rows); k++) {
        const char *name = row_string(json_array_get(rows, k), "name");
        if (!strstr(name, "_median"))
            continue;
        assert_null(strstr(name, "-momentum"));
        assert_true(strstr(name, "/arm7/n:7/") || strstr(name, "/quad/n:18/"));
        forward += strncmp(name, "robot_derivatives_", 18) != 0;
        derivatives += strncmp(name, "robot_derivatives_", 18) == 0;
    }
    int solvers = 0;
    for (int k = 0; k < mbd_solver_count(); k++)
        solvers += (mbd_solver_formulations(mbd_solver_at(k)) & MBD_ACCELERATION) != 0;
    assert_int_equal(forward, 2 * solvers);
    assert_int_equal(derivatives, 2 * mbd_derivatives_method_count());
    snprintf(command, sizeof command, "%s/dat/robots.dat", temp_dir);
    char *table = read_text_file(command);
    assert_non_null(strstr(table, "# robot variant nv bodies median_ns cv relative_to_fastest\n"));
    assert_non_null(strstr(table, " 1.0000\n"));
    free(table);
    json_decref(root);
    f = fopen(list, "w");
    assert_non_null(f);
    fputs("arm7 fixed models/arm7.urdf\narm7 sideways models/arm7.urdf\n", f);
    fclose(f);
    snprintf(command, sizeof command, "./mbd-bench --suite robots --robots %s", list);
    cli_result r = shell_run(command);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, ":2: expected NAME fixed|floating|file PATH"));
    cli_result_free(&r);
}

/* The rate of a machine kernel: work (flops or bytes) per iteration over its seconds. */
static double kernel_rate(const json_t *machine, const char *kernel, const char *work,
                          const char *rate)
{
    const json_t *k = json_object_get(machine, kernel);
    if (!k)
        print_error("no machine kernel '%s'", kernel);
    assert_non_null(k);
    const double seconds = json_number_value(json_object_get(k, "seconds"));
    const double value = json_number_value(json_object_get(k, rate));
    assert_true(isfinite(value) && value > 0.0 && isfinite(seconds) && seconds > 0.0);
    assert_float_equal(value, json_number_value(json_object_get(k, work)) / seconds / 1e9,
                       1e-9 * value);
    return value;
}

static double kernel_number(const json_t *machine, const char *kernel, const char *key)
{
    return json_number_value(json_object_get(json_object_get(machine, kernel), key));
}

/* --suite machine: no rows, the rates in the context's "machine", each positive and finite
 * and its work over its time; the SIMD kernel's flops those of the scalar one times its
 * lanes; copy and triad count 16 and 24 bytes an element (STREAM's), on arrays at least 4
 * times the largest cache (or a sixteenth of the memory), on one thread and on one per core. */
static void test_machine_suite(void **unused)
{
    (void)unused;
    json_t *root = bench_json("./mbd-bench --suite machine --min-time 0.002 --repetitions 2",
                              "machine.json", 0);
    assert_int_equal(json_array_size(json_object_get(root, "benchmarks")), 0);
    const json_t *context = json_object_get(root, "context");
    const json_t *machine = json_object_get(context, "machine");
    assert_non_null(machine);
    kernel_rate(machine, "fp64_scalar", "flops", "gflops");
    kernel_rate(machine, "fp64_simd", "flops", "gflops");
    const double lanes = kernel_number(machine, "fp64_simd", "lanes");
    assert_true(lanes >= 2);
    assert_float_equal(kernel_number(machine, "fp64_simd", "flops"),
                       lanes * kernel_number(machine, "fp64_scalar", "flops"), 0);
    static const char *const streams[] = {"copy", "triad", "copy_all_threads", "triad_all_threads"};
    double largest_cache = 0;
    size_t index;
    json_t *cache;
    json_array_foreach(json_object_get(context, "caches"), index, cache) largest_cache =
        fmax(largest_cache, (double)json_integer_value(json_object_get(cache, "size")));
    for (int k = 0; k < 4; k++) {
        kernel_rate(machine, streams[k], "bytes", "gbytes_per_second");
        const double elements = kernel_number(machine, streams[k], "elements");
        const double memory = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
        assert_true(8 * elements >= fmin(4 * largest_cache, memory / 16) - 512);
        assert_float_equal(kernel_number(machine, streams[k], "bytes"),
                           (k % 2 ? 24 : 16) * elements, 0);
        /* all threads: one per core, as the batch suite's default --threads */
        const json_int_t cores = json_integer_value(json_object_get(context, "num_cpus"));
        assert_int_equal(kernel_number(machine, streams[k], "threads"), k < 2        ? 1
                                                                        : cores < 64 ? cores
                                                                                     : 64);
    }
    kernel_rate(machine, "l1_load", "bytes", "gbytes_per_second");
    kernel_rate(machine, "l2_load", "bytes", "gbytes_per_second");
    json_decref(root);
}

/* The report's targets that are ratios to the machine's rates (report/summary.awk), on
 * made-up tables: bodies does 600 flops per body in 50 ns (12 GFLOP/s), bodies-simd in 10
 * ns per body and state (60 GFLOP/s), and the batch on 2 threads moves 4 x 8 x 50 bytes
 * a state at 10^6 states/s (1.6 GB/s). Against limits 0.5, 0.5 and 0.25, rates that make
 * the shares 0.6, 0.6 and 0.1 PASS; rates that make them 0.4, 0.4 and 0.4 MISS. */
static void test_summary_machine_targets(void **unused)
{
    (void)unused;
    write_text(
        temp_path(0, "percall.dat"),
        "# family variant n bodies dofs median_ns cv ns_per_body\n"
        "chain-revolute bodies 50 50 50 2500 0.01 50\nchain-revolute bodies 100 100 100 5000 0.01 50\n");
    write_text(temp_path(1, "flops.dat"), "# family variant n flops_per_call flops_per_body\n"
                                          "chain-revolute bodies 100 60000 600\n");
    write_text(
        temp_path(2, "batch.dat"),
        "# family variant n k threads median_ns states_per_second efficiency ns_per_body_state\n"
        "chain-revolute bodies-simd 50 1024 1 512000 2e6 1 10\n"
        "chain-revolute bodies 50 1024 2 1024000 1e6 0.9 20\n");
    static const struct {
        const char *rates, *verdict;
    } runs[] = {{"-v fp64_scalar=20 -v fp64_simd=100 -v triad_all=16", "PASS"},
                {"-v fp64_scalar=30 -v fp64_simd=150 -v triad_all=4", "MISS"}};
    static const char *const rows[] = {"the scalar FP64 peak", "the SIMD FP64 peak, one thread, N",
                                       "the triad bandwidth"};
    static const char *const shares[2][3] = {{"worst 0.60", "worst 0.60", "worst 0.10"},
                                             {"worst 0.40", "worst 0.40", "worst 0.40"}};
    for (int run = 0; run < 2; run++) {
        char command[1024];
        snprintf(
            command, sizeof command,
            "awk -v section=targets %s -v BODIES_SCALAR_SHARE=0.5 "
            "-v SIMD_PEAK_SHARE=0.5 -v BATCH_BANDWIDTH_SHARE=0.25 -f report/summary.awk %s %s %s",
            runs[run].rates, temp_path(0, "percall.dat"), temp_path(1, "flops.dat"),
            temp_path(2, "batch.dat"));
        cli_result r = shell_run(command);
        assert_int_equal(r.status, 0);
        for (int k = 0; k < 3; k++) {
            const char *line = strstr(r.out, rows[k]);
            if (!line)
                print_error("no row '%s' in\n%s", rows[k], r.out);
            assert_non_null(line);
            const char *end = strchr(line, '\n');
            const char *share = strstr(line, shares[run][k]),
                       *verdict = strstr(line, runs[run].verdict);
            if (!share || share > end || !verdict || verdict > end)
                print_error("expected '%s' and %s in: %.*s\n", shares[run][k], runs[run].verdict,
                            (int)(end - line), line);
            assert_true(share && share < end && verdict && verdict < end);
        }
        cli_result_free(&r);
    }
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

/* ---- mbd-bench compare ---------------------------------------------------------------- */

/* A row given by its median and cv aggregates (cpu_time; ns), as mbd-bench writes them. */
#define AGGREGATES(name, median, cv)                                                               \
    "{\"name\": \"" name "_median\", \"run_name\": \"" name "\", \"run_type\": \"aggregate\", "    \
    "\"aggregate_name\": \"median\", \"cpu_time\": " #median ", \"real_time\": 1, "                \
    "\"time_unit\": \"ns\"}, "                                                                     \
    "{\"name\": \"" name "_cv\", \"run_name\": \"" name "\", \"run_type\": \"aggregate\", "        \
    "\"aggregate_name\": \"cv\", \"cpu_time\": " #cv ", \"real_time\": 0, "                        \
    "\"time_unit\": \"ns\"}"
/* One iteration row in microseconds (no aggregates: a single repetition, cv 0). */
#define ITERATION(name, us)                                                                        \
    "{\"name\": \"" name "\", \"run_type\": \"iteration\", \"cpu_time\": " #us                     \
    ", \"time_unit\": \"us\"}"
#define RUN(rows) "{\"context\": {}, \"benchmarks\": [" rows "]}"

/* Runs mbd-bench compare with args; the result, its exit status expected. */
static cli_result compare_run(const char *args, int exit_status)
{
    char line[1024];
    snprintf(line, sizeof line, "./mbd-bench compare %s", args);
    cli_result r = shell_run(line);
    if (r.status != exit_status)
        print_error("%s: exit %d\n%s%s", line, r.status, r.out, r.err);
    assert_int_equal(r.status, exit_status);
    return r;
}

/* The output line of the row named name (its text up to the end of the line). */
static void expect_line(const char *out, const char *name, const char *verdict)
{
    char key[128];
    snprintf(key, sizeof key, "\n%s ", name);
    const char *line = strstr(out, key);
    if (!line)
        print_error("no line for %s in\n%s", name, out);
    assert_non_null(line);
    const char *end = strchr(line + 1, '\n');
    const char *found = strstr(line, verdict);
    if (!found || found > end)
        print_error("%s: expected '%s' in\n%.*s\n", name, verdict, (int)(end - line), line);
    assert_true(found && found < end);
}

/* 2 % is the floor; three combined cv widen it; spread from the iterations where a run has
 * no aggregates; rows of one run only are listed. */
static void test_compare_verdicts(void **unused)
{
    (void)unused;
    write_text(
        temp_path(0, "a.json"),
        RUN(AGGREGATES("steady_slower", 100, 0.001) ", " AGGREGATES("steady_noise", 100, 0.001) ", " AGGREGATES("steady_faster", 100, 0.001) ", " AGGREGATES(
            "noisy", 100,
            0.03) ", " AGGREGATES("noisy_slower", 100,
                                  0.03) ", " ITERATION("reps",
                                                       1) ", " ITERATION("reps",
                                                                         1.1) ", " ITERATION("reps",
                                                                                             0.9) ", " ITERATION("single",
                                                                                                                 2) ", " ITERATION("gone",
                                                                                                                                   5)));
    write_text(
        temp_path(1, "b.json"),
        RUN(AGGREGATES("steady_slower", 102.5, 0.001) ", " AGGREGATES("steady_noise", 101.5, 0.001) ", " AGGREGATES(
            "steady_faster", 97.5,
            0.001) ", " AGGREGATES("noisy", 112,
                                   0.03) ", " AGGREGATES("noisy_slower", 113,
                                                         0.03) ", " ITERATION("reps",
                                                                              1.25) ", " ITERATION("single",
                                                                                                   1.5) ", " ITERATION("new",
                                                                                                                       5)));
    char args[256];
    snprintf(args, sizeof args, "%s %s", temp_path(0, "a.json"), temp_path(1, "b.json"));
    cli_result r = compare_run(args, 0);
    expect_line(r.out, "steady_slower", "1.025  slower (2.0%)");
    expect_line(r.out, "steady_noise", "within noise (2.0%)");
    expect_line(r.out, "steady_faster", "0.975  faster");
    /* 3 sqrt(0.03^2 + 0.03^2) = 12.7 % */
    expect_line(r.out, "noisy", "1.120  within noise (12.7%)");
    expect_line(r.out, "noisy_slower", "1.130  slower (12.7%)");
    /* the iterations' median 1 us, cv 0.1: 3 sqrt(0.1^2) = 30 % */
    expect_line(r.out, "reps", "1.250  within noise (30.0%)");
    expect_line(r.out, "single", "0.750  faster (2.0%)");
    assert_non_null(strstr(r.out, "a.json: gone\n"));
    assert_non_null(strstr(r.out, "b.json: new\n"));
    assert_null(strstr(r.out, "\ngone "));
    assert_non_null(strstr(r.out, "7 rows in both: 2 faster, 2 slower, 3 within noise; "));
    cli_result_free(&r);
    /* --fail-on-slower: 1 with slower rows, 0 without (B against itself) */
    snprintf(args, sizeof args, "%s %s --fail-on-slower", temp_path(0, "a.json"),
             temp_path(1, "b.json"));
    cli_result_free((cli_result[]){compare_run(args, 1)});
    snprintf(args, sizeof args, "%s %s --fail-on-slower", temp_path(1, "b.json"),
             temp_path(1, "b.json"));
    r = compare_run(args, 0);
    assert_non_null(strstr(
        r.out, "8 rows in both: 0 faster, 0 slower, 8 within noise; geometric mean of B/A 1.0000"));
    cli_result_free(&r);
}

/* --html writes a page with the rows in it, whole. */
static void test_compare_html(void **unused)
{
    (void)unused;
    write_text(temp_path(0, "a.json"), RUN(AGGREGATES("solver/x", 100, 0.01)));
    write_text(temp_path(1, "b.json"), RUN(AGGREGATES("solver/x", 150, 0.01)));
    char args[512];
    snprintf(args, sizeof args, "%s %s --html %s", temp_path(0, "a.json"), temp_path(1, "b.json"),
             temp_path(2, "compare.html"));
    cli_result_free((cli_result[]){compare_run(args, 0)});
    char *page = read_text_file(temp_path(2, "compare.html"));
    assert_non_null(strstr(page, "<!doctype html>"));
    assert_non_null(strstr(page, "solver\\/x")); /* the data, with "/" escaped inside <script> */
    assert_non_null(strstr(page, "\"slower\""));
    assert_non_null(strstr(page, "</html>\n"));
    free(page);
}

/* Not JSON, not Google Benchmark's schema, a bad time unit, no row in common, a missing
 * file: exit 2 and a message that names the file. */
static void test_compare_bad_input(void **unused)
{
    (void)unused;
    const char *good = temp_path(0, "good.json");
    write_text(good, RUN(AGGREGATES("x", 100, 0.01)));
    const struct {
        const char *text, *message;
    } cases[] = {
        {"# not JSON\n", "not JSON"},
        {"{\"context\": {}}", "not Google Benchmark JSON"},
        {"[1, 2]", "not Google Benchmark JSON"},
        {RUN("7"), "benchmarks[0]: not a row"},
        {RUN("{\"name\": \"x\", \"cpu_time\": 3, \"time_unit\": \"fortnights\"}"),
         "time_unit 'fortnights'"},
        {RUN(AGGREGATES("y", 100, 0.01)), "no row in common"},
        {RUN(""), "no row in common"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const char *bad = temp_path(1, "bad.json");
        write_text(bad, cases[k].text);
        char args[256];
        snprintf(args, sizeof args, "%s %s", good, bad);
        cli_result r = compare_run(args, 2);
        if (!strstr(r.err, bad) || !strstr(r.err, cases[k].message))
            print_error("case %zu: expected '%s' and '%s' in: %s", k, bad, cases[k].message, r.err);
        assert_non_null(strstr(r.err, bad));
        assert_non_null(strstr(r.err, cases[k].message));
        cli_result_free(&r);
    }
    cli_result r = compare_run("/nonexistent/a.json /nonexistent/b.json", 2);
    assert_non_null(strstr(r.err, "/nonexistent/a.json"));
    cli_result_free(&r);
    char args[256];
    snprintf(args, sizeof args, "%s %s", good, temp_dir);
    r = compare_run(args, 2);
    assert_non_null(strstr(r.err, "a directory"));
    cli_result_free(&r);
    cli_result_free((cli_result[]){compare_run("only-one.json", 2)});
}

/* Outputs checked before the run: --json (each path of the list), --dat and compare's
 * --html into a missing directory exit 2 at once, naming the path; nothing runs. */
static void test_bad_outputs_before_the_run(void **unused)
{
    (void)unused;
    const char *missing = temp_path(0, "no/such/dir/out.json");
    const char *ok = temp_path(1, "ok.json");
    char line[1024];
    static const char *const forms[] = {"--json %s", "--json %2$s,%1$s", "--dat %s/dat"};
    for (size_t k = 0; k < sizeof forms / sizeof *forms; k++) {
        char flag[512];
        snprintf(flag, sizeof flag, forms[k], missing, ok);
        snprintf(line, sizeof line, SMALL_RUN " %s", flag);
        cli_result r = shell_run(line);
        if (r.status != 2 || !strstr(r.err, missing) || strstr(r.out, "bodies"))
            print_error("%s: exit %d\n%s%s", line, r.status, r.out, r.err);
        assert_int_equal(r.status, 2);
        assert_non_null(strstr(r.err, missing));
        assert_null(strstr(r.out, "bodies")); /* no row measured */
        cli_result_free(&r);
    }
    snprintf(line, sizeof line, "a.json b.json --html %s", missing);
    cli_result r = compare_run(line, 2);
    assert_non_null(strstr(r.err, missing));
    cli_result_free(&r);
}

/* The fuzz target's seeds (run A, a form feed, run B), through the command: exit 0 or 2,
 * never a crash. */
static void test_compare_replays_fuzz_seeds(void **unused)
{
    (void)unused;
    DIR *dir = opendir("fuzz/corpus/fuzz_bench_json");
    assert_non_null(dir);
    int seeds = 0;
    for (struct dirent *e; (e = readdir(dir));) {
        if (e->d_name[0] == '.')
            continue;
        char path[512], args[512];
        snprintf(path, sizeof path, "fuzz/corpus/fuzz_bench_json/%s", e->d_name);
        char *text = read_text_file(path), *split = strchr(text, '\f');
        if (split)
            *split = '\0';
        write_text(temp_path(0, "seed-a.json"), text);
        write_text(temp_path(1, "seed-b.json"), split ? split + 1 : text);
        free(text);
        snprintf(args, sizeof args, "./mbd-bench compare %s %s > /dev/null",
                 temp_path(0, "seed-a.json"), temp_path(1, "seed-b.json"));
        cli_result r = shell_run(args);
        if (r.status != 0 && r.status != 2)
            print_error("%s: exit %d\n%s", path, r.status, r.err);
        assert_true(r.status == 0 || r.status == 2);
        cli_result_free(&r);
        seeds++;
    }
    closedir(dir);
    assert_true(seeds > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interleaved_rows_as_consecutive),
        cmocka_unit_test(test_interleaved_stop_writes_partial),
        cmocka_unit_test(test_derivatives_suite),
        cmocka_unit_test(test_robot_suites),
        cmocka_unit_test(test_machine_suite),
        cmocka_unit_test(test_summary_machine_targets),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_compare_verdicts),
        cmocka_unit_test(test_compare_html),
        cmocka_unit_test(test_compare_bad_input),
        cmocka_unit_test(test_compare_replays_fuzz_seeds),
        cmocka_unit_test(test_bad_outputs_before_the_run),
    };
    return cmocka_run_group_tests(tests, make_temp_dir, remove_temp_dir);
}
