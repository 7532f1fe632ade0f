/* test_mpi.c: mbd simulate --ensemble and mbd-bench across MPI ranks (mpirun
 * --oversubscribe, as root where needed), against one process byte for byte; a bad
 * argument on one rank and a rank that dies end the job with one error, no hang, and
 * leave a complete file in place. Skipped where mbd was built without MPI. */
#include "support.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef MBD_WITH_MPI
#define MBD_WITH_MPI 0
#endif

/* No test may hang: a job that does not end in this many seconds fails. Under the
 * sanitizers (make test-sanitize) the ranks run without LeakSanitizer: Open MPI never
 * frees its own allocations; our code's leaks are checked by the one-process runs of the
 * same paths (test_ensemble). */
#define JOB_TIMEOUT "120"
#define MPIRUN                                                                                     \
    "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 timeout " JOB_TIMEOUT              \
    " mpirun --allow-run-as-root --oversubscribe"
#define ENSEMBLE                                                                                   \
    "simulate chain:n=3,joint=cardan,base=free --integrator rk4 --t1 0.2 --dt 0.01 "               \
    "--sample 0.05 --ensemble 13 --spread 0.3 --seed 5 --threads 1"

static void skip_without_mpi(void)
{
    if (!MBD_WITH_MPI) {
        print_message("mbd was built without MPI (no mpicc): skipped\n");
        skip();
    }
}

/* mpirun -n P (P = 0: no mpirun) mbd ARGS; returns the result. */
static cli_result run_ranks(int P, const char *args)
{
    char command[4096];
    if (P > 0)
        snprintf(command, sizeof command, MPIRUN " -n %d %s %s", P, mbd_binary(), args);
    else
        snprintf(command, sizeof command, "%s %s", mbd_binary(), args);
    return shell_run(command);
}

static char *file_at(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", temp_dir, name);
    return read_text_file(path);
}

/* The ensemble on P ranks (0: one process without mpirun), writing out_flags (%s: the
 * test's folder); it must succeed, and over P ranks say so. */
static void run_ensemble(int P, const char *out_flags)
{
    char flags[256], args[512];
    snprintf(flags, sizeof flags, out_flags, temp_dir);
    snprintf(args, sizeof args, ENSEMBLE " %s", flags);
    cli_result r = run_ranks(P, args);
    if (r.status != 0)
        print_error("%s", r.err);
    assert_int_equal(r.status, 0);
    char expect[64];
    snprintf(expect, sizeof expect, "over %d rank", P ? P : 1);
    assert_non_null(strstr(r.err, expect)); /* the ranks did share the runs */
    cli_result_free(&r);
}

/* The same bytes from 1 process and from 1, 2 and 4 ranks (13 runs: uneven shares). */
static void test_ensemble_same_bytes_for_any_ranks(void **unused)
{
    (void)unused;
    skip_without_mpi();
    run_ensemble(0, "--out %s/alone.csv");
    char *alone = file_at("alone.csv");
    const char *const outputs[] = {"--out %s/ranks-1.csv", "--out %s/ranks-2.csv",
                                   "--out %s/ranks-4.csv"};
    const char *const names[] = {"ranks-1.csv", "ranks-2.csv", "ranks-4.csv"};
    const int ranks[] = {1, 2, 4};
    for (int i = 0; i < 3; i++) {
        run_ensemble(ranks[i], outputs[i]);
        char *text = file_at(names[i]);
        assert_string_equal(text, alone);
        free(text);
    }
    free(alone);
}

/* --out-dir over 2 ranks: the files of one process. */
static void test_ensemble_out_dir_over_ranks(void **unused)
{
    (void)unused;
    skip_without_mpi();
    run_ensemble(0, "--out-dir %s/one");
    run_ensemble(2, "--out-dir %s/two");
    for (int k = 0; k <= 13; k++) {
        char one[64], two[64];
        snprintf(one, sizeof one, k < 13 ? "one/run-%02d.csv" : "one/ensemble.csv", k);
        snprintf(two, sizeof two, k < 13 ? "two/run-%02d.csv" : "two/ensemble.csv", k);
        char *a = file_at(one), *b = file_at(two);
        assert_string_equal(a, b);
        free(a), free(b);
    }
}

/* A bad --filter on rank 1 alone (MPMD): one error line, from rank 1, exit 2, no hang
 * (rank 0 must not go on into the run's collective calls). */
static void test_bench_bad_argument_on_one_rank(void **unused)
{
    (void)unused;
    skip_without_mpi();
    const char *args = "--suite percall --n 3 --min-time 0.001 --repetitions 1 --filter";
    char command[1024];
    snprintf(command, sizeof command,
             MPIRUN " -n 1 ./mbd-bench %s bodies : -n 1 ./mbd-bench %s '('", args, args);
    cli_result r = shell_run(command);
    assert_int_equal(r.status, 2);
    const char *line = strstr(r.err, "[rank 1 on ");
    assert_non_null(line);
    assert_non_null(strstr(line, "--filter: not a valid regular expression"));
    assert_null(strstr(strstr(r.err, "mbd bench:") + 1, "mbd bench:")); /* one line */
    cli_result_free(&r);
}

/* Without --ensemble every rank would run the same trajectory: refused, once. */
static void test_single_run_refused_over_ranks(void **unused)
{
    (void)unused;
    skip_without_mpi();
    cli_result r =
        run_ranks(2, "simulate chain:n=2,joint=revolute --integrator rk4 --t1 0.1 --dt 0.01");
    assert_int_equal(r.status, 2);
    assert_string_equal(r.out, "");
    const char *line = strstr(r.err, "mbd simulate: 2 MPI ranks");
    assert_non_null(line);
    assert_null(strstr(line + 1, "mbd simulate:"));
    cli_result_free(&r);
}

/* Fails unless the file in temp_dir holds text. */
static void expect_untouched(const char *name, const char *text)
{
    char *now = file_at(name);
    assert_string_equal(now, text);
    free(now);
}

/* Rank 1 alone gets a missing --states file (MPMD): one error line, from rank 1, exit
 * 2, and the earlier complete file stays. */
static void test_bad_argument_on_one_rank(void **unused)
{
    (void)unused;
    skip_without_mpi();
    char path[256], states[256], command[2048];
    snprintf(path, sizeof path, "%s/kept.csv", temp_dir);
    snprintf(states, sizeof states, "%s/states.csv", temp_dir);
    FILE *f = fopen(path, "w");
    fputs("complete\n", f);
    fclose(f);
    f = fopen(states, "w");
    fputs("0,0,0,0\n0.1,0,0,0\n", f);
    fclose(f);
    const char *args = "simulate chain:n=2,joint=revolute --integrator rk4 --t1 0.1 --dt 0.01 "
                       "--ensemble 2";
    snprintf(command, sizeof command,
             MPIRUN " -n 1 %s %s --states %s --out %s : -n 1 %s %s --states %s.missing --out %s",
             mbd_binary(), args, states, path, mbd_binary(), args, states, path);
    cli_result r = shell_run(command);
    assert_int_equal(r.status, 2);
    const char *line = strstr(r.err, "mbd simulate:");
    assert_non_null(line);
    assert_null(strstr(line + 1, "mbd simulate:")); /* one error line */
    assert_non_null(strstr(r.err, "[rank 1 on "));
    assert_non_null(strstr(r.err, "states.csv.missing: cannot open"));
    cli_result_free(&r);
    expect_untouched("kept.csv", "complete\n");
}

/* Rank 1 is killed mid-run: the job ends (no hang), non-zero, and the complete file
 * stays. */
static void test_rank_that_dies(void **unused)
{
    (void)unused;
    skip_without_mpi();
    char path[256], command[2048];
    snprintf(path, sizeof path, "%s/survivor.csv", temp_dir);
    FILE *f = fopen(path, "w");
    fputs("complete\n", f);
    fclose(f);
    const char *args = "simulate chain:n=5,joint=cardan --integrator rk4 --t1 100 --dt 0.001 "
                       "--ensemble 64 --spread 0.1 --threads 1";
    snprintf(command, sizeof command,
             MPIRUN " -n 1 %s %s --out %s : -n 1 sh -c '%s %s --out %s & pid=$!; sleep 2; "
                    "kill -9 $pid; wait $pid'",
             mbd_binary(), args, path, mbd_binary(), args, path);
    cli_result r = shell_run(command);
    assert_int_not_equal(r.status, 0);
    assert_int_not_equal(r.status, 124); /* not the timeout: mpirun ended it */
    cli_result_free(&r);
    expect_untouched("survivor.csv", "complete\n");
}

#define BENCH_ARGS                                                                                 \
    "--suite percall,batch --n 3,7 --batch-n 10 --threads 1,2 --batch-k 16 "                       \
    "--filter 'bodies|dense' --min-time 0.001 --repetitions 2"

/* The rows' names with their family and instance indices, in order, one per line; and
 * every row has a host. */
static char *row_keys(const char *path)
{
    json_error_t error;
    json_t *root = json_load_file(path, 0, &error);
    assert_non_null(root);
    json_t *rows = json_object_get(root, "benchmarks"), *row;
    const size_t count = json_array_size(rows);
    assert_true(count > 0);
    char **keys = calloc(count, sizeof *keys);
    size_t k, size = 1;
    json_array_foreach(rows, k, row)
    {
        assert_non_null(json_string_value(json_object_get(row, "host")));
        keys[k] = malloc(256);
        snprintf(keys[k], 256, "%s %lld %lld\n", json_string_value(json_object_get(row, "name")),
                 (long long)json_integer_value(json_object_get(row, "family_index")),
                 (long long)json_integer_value(json_object_get(row, "per_family_instance_index")));
        size += strlen(keys[k]);
    }
    char *all = calloc(size, 1);
    for (k = 0; k < count; k++) {
        strcat(all, keys[k]);
        free(keys[k]);
    }
    free(keys);
    json_decref(root);
    return all;
}

/* mbd-bench over 2 ranks: one JSON with the rows, order and family numbering of one process,
 * each row with its host, the context saying 2 ranks. */
static void test_bench_over_ranks(void **unused)
{
    (void)unused;
    skip_without_mpi();
    char command[2048], one[256], two[256];
    snprintf(one, sizeof one, "%s/one.json", temp_dir);
    snprintf(two, sizeof two, "%s/two.json", temp_dir);
    snprintf(command, sizeof command, "./mbd-bench " BENCH_ARGS " --json %s", one);
    cli_result r = shell_run(command);
    assert_int_equal(r.status, 0);
    cli_result_free(&r);
    snprintf(command, sizeof command, MPIRUN " -n 2 ./mbd-bench " BENCH_ARGS " --json %s", two);
    r = shell_run(command);
    if (r.status != 0)
        print_error("%s", r.err);
    assert_int_equal(r.status, 0);
    cli_result_free(&r);
    char *a = row_keys(one), *b = row_keys(two);
    assert_string_equal(a, b);
    free(a), free(b);
    json_error_t error;
    json_t *root = json_load_file(two, 0, &error);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(root, "context"), "ranks")),
                     2);
    json_decref(root);
    snprintf(command, sizeof command, MPIRUN " -n 2 ./mbd-bench --dat %s", temp_dir);
    r = shell_run(command);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--dat: not over MPI ranks"));
    assert_null(strstr(strstr(r.err, "mbd bench:") + 1, "mbd bench:")); /* one line */
    cli_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ensemble_same_bytes_for_any_ranks),
        cmocka_unit_test(test_ensemble_out_dir_over_ranks),
        cmocka_unit_test(test_bad_argument_on_one_rank),
        cmocka_unit_test(test_rank_that_dies),
        cmocka_unit_test(test_bench_over_ranks),
        cmocka_unit_test(test_single_run_refused_over_ranks),
        cmocka_unit_test(test_bench_bad_argument_on_one_rank),
    };
    return cmocka_run_group_tests(tests, make_temp_dir, remove_temp_dir);
}
