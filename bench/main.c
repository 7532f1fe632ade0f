/* mbd-bench: flags, context, the run, and the outputs. See bench/README.md. */
#include "compare.h"
#include "context.h"
#include "machine.h"
#include "ranks.h"
#include "suite.h"

#include "../src/cli.h"
#include "../src/par.h"
#include "../src/workload.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CMD "bench"
#define DENSE_MAX_N 300
#define DEFAULT_ROBOTS "bench/robots.txt"

static const char usage[] =
    "usage: mbd-bench [flags]\n"
    "  --suite LIST        percall,phases,batch,loops,scaling,derivatives,robots,\n"
    "                      robot-derivatives,machine (default: all); machine: the FP64\n"
    "                      peak, memory bandwidth and cache load rates, into the context\n"
    "  --n LIST            percall body counts (default 1,2,3,5,7,10,15,20,30,50,70,100,150,\n"
    "                      200,300,500,700,1000)\n"
    "  --phase-n LIST      phases body counts (default 5,10,20,30,40,50)\n"
    "  --batch-n LIST      batch body counts (default 10,50,200)\n"
    "  --loops-k LIST      loops suite: rods between rungs of the 64-rod ladder, 64/k loops\n"
    "                      (default 64,16,4,1); the five-bar is timed once\n"
    "  --scaling-n LIST    scaling suite body counts, O(N) solvers only (default 1000,3000,\n"
    "                      10000)\n"
    "  --derivatives-n LIST  derivatives suite body counts, every method of mbd derivatives\n"
    "                      (default 1,2,3,5,10,20,30,50,100,200,300); arm7 is timed once\n"
    "  --robots FILE       the robots of the robot suites, NAME fixed|floating|file PATH per\n"
    "                      line (default " DEFAULT_ROBOTS ")\n"
    "  --threads LIST      batch thread counts (default 1..all cores)\n"
    "  --batch-k K         states per batch (default 1024)\n"
    "  --dense-max-n N     largest N for the O(N^3) solvers: dense, and sparse on chains;\n"
    "                      also for plugins, whose cost in N is unknown\n"
    "                      (default 300)\n"
    "  --min-time S        seconds per repetition, at least (default 0.05)\n"
    "  --repetitions R     repetitions of each measurement (default 5)\n"
    "  --interleave        repetition r of every measurement before r + 1 of any (a slow\n"
    "                      spell of the machine spreads over all); the table at the end\n"
    "  --seed S            seed of the random states (default 1)\n"
    "  --filter REGEX      only measurements whose name matches (POSIX extended)\n"
    "  --json PATHS        write Google Benchmark JSON to each comma-separated path\n"
    "  --dat DIR           write the charts' .dat tables into DIR\n"
    "  --plugin PATH.so    add a plugin's solvers, timed as the built-in ones (repeatable;\n"
    "                      also MBD_PLUGINS=A.so:B.so); not in phases or with friction\n"
    "  -h, --help          this text\n"
    "mbd-bench compare A.json B.json [--html OUT.html] [--fail-on-slower]: two runs row by\n"
    "row (mbd-bench compare --help).\n"
    "The table goes to stdout; context and progress to stderr. SIGINT/SIGTERM stop the run\n"
    "after the current measurement and write what finished, marked \"partial\": true.\n"
    "Under mpirun -n P the ranks share the measurements (one node per rank keeps timings\n"
    "clean); rank 0 writes the one JSON, each row with its \"host\" (no --dat: chart from it).\n";

static const bench_list default_ns = {
    {1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100, 150, 200, 300, 500, 700, 1000}, 18};
static const bench_list default_phase_ns = {{5, 10, 20, 30, 40, 50}, 6};
static const bench_list default_batch_ns = {{10, 50, 200}, 3};
static const bench_list default_loops_k = {{64, 16, 4, 1}, 4};
static const bench_list default_scaling_ns = {{1000, 3000, 10000}, 3};
static const bench_list default_derivatives_ns = {{1, 2, 3, 5, 10, 20, 30, 50, 100, 200, 300}, 11};

/* A comma-separated list of integers in [lo, hi] into list (default kept if absent). */
static int int_list(const cli_flag *flags, const char *name, int lo, int hi, bench_list *list)
{
    const char *text = cli_get(flags, name);
    if (!text)
        return 0;
    list->count = 0;
    for (const char *p = text;;) {
        char *end;
        errno = 0;
        long value = strtol(p, &end, 10);
        if (end == p || (*end && *end != ',') || errno || value < lo || value > hi ||
            list->count == BENCH_MAX_LIST) {
            fprintf(
                stderr,
                "mbd %s: %s: expected up to %d comma-separated integers in [%d, %d], got '%.60s'\n",
                CMD, name, BENCH_MAX_LIST, lo, hi, text);
            return CLI_USAGE_ERROR;
        }
        list->value[list->count++] = (int)value;
        if (!*end)
            return 0;
        p = end + 1;
    }
}

static int suite_list(const cli_flag *flags, unsigned *suites)
{
    const char *text = cli_get(flags, "--suite");
    *suites = (1u << SUITE_COUNT) - 1;
    if (!text)
        return 0;
    *suites = 0;
    for (const char *p = text;;) {
        size_t len = strcspn(p, ",");
        int found = 0;
        for (int s = 0; s < SUITE_COUNT; s++)
            if (strlen(bench_suite_name((bench_suite)s)) == len &&
                strncmp(p, bench_suite_name((bench_suite)s), len) == 0)
                *suites |= 1u << s, found = 1;
        if (!found) {
            fprintf(
                stderr,
                "mbd %s: --suite: unknown suite '%.*s' (percall, phases, batch, loops, scaling, derivatives, "
                "robots, robot-derivatives, machine)\n",
                CMD, (int)len, p);
            return CLI_USAGE_ERROR;
        }
        if (!p[len])
            return 0;
        p += len + 1;
    }
}

static int number_flags(const cli_flag *flags, bench_config *config)
{
    double min_time, repetitions, batch_k, dense_max_n, seed;
    int rc;
    if ((rc = cli_number(CMD, flags, "--min-time", 1e-6, 3600, 0.05, &min_time)) ||
        (rc =
             cli_number(CMD, flags, "--repetitions", 1, TIMING_MAX_REPETITIONS, 5, &repetitions)) ||
        (rc = cli_number(CMD, flags, "--batch-k", 1, 1 << 24, 1024, &batch_k)) ||
        (rc = cli_number(CMD, flags, "--dense-max-n", 0, INT_MAX, DENSE_MAX_N, &dense_max_n)) ||
        (rc = cli_number(CMD, flags, "--seed", 0, 4294967295.0, 1, &seed)))
        return rc;
    if (repetitions != (int)repetitions || batch_k != (int)batch_k ||
        dense_max_n != (int)dense_max_n || seed != (unsigned long)seed) {
        fprintf(stderr,
                "mbd %s: --repetitions, --batch-k, --dense-max-n and --seed take integers\n", CMD);
        return CLI_USAGE_ERROR;
    }
    config->timing.min_time = min_time;
    config->timing.repetitions = (int)repetitions;
    config->batch_k = (int)batch_k;
    config->dense_max_n = (int)dense_max_n;
    config->seed = (unsigned long)seed;
    return 0;
}

static int parse_flags(cli_flag *flags, bench_config *config, regex_t *filter)
{
    const int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    config->ns[SUITE_PERCALL] = default_ns;
    config->ns[SUITE_PHASES] = default_phase_ns;
    config->ns[SUITE_BATCH] = default_batch_ns;
    config->ns[SUITE_LOOPS] = default_loops_k;
    config->ns[SUITE_SCALING] = default_scaling_ns;
    config->ns[SUITE_DERIVATIVES] = default_derivatives_ns;
    config->threads.count = cores < BENCH_MAX_LIST ? cores : BENCH_MAX_LIST;
    for (int t = 0; t < config->threads.count; t++)
        config->threads.value[t] = t + 1;
    int rc;
    if ((rc = suite_list(flags, &config->suites)) || (rc = number_flags(flags, config)) ||
        (rc = int_list(flags, "--n", 1, 1000000, &config->ns[SUITE_PERCALL])) ||
        (rc = int_list(flags, "--phase-n", 1, 1000000, &config->ns[SUITE_PHASES])) ||
        (rc = int_list(flags, "--batch-n", 1, 1000000, &config->ns[SUITE_BATCH])) ||
        (rc = int_list(flags, "--loops-k", 1, 64, &config->ns[SUITE_LOOPS])) ||
        (rc = int_list(flags, "--scaling-n", 1, 1000000, &config->ns[SUITE_SCALING])) ||
        (rc = int_list(flags, "--derivatives-n", 1, 1000000, &config->ns[SUITE_DERIVATIVES])) ||
        (rc = int_list(flags, "--threads", 1, 1024, &config->threads)))
        return rc;
    config->rank = par_rank();
    config->ranks = par_size();
    if (config->ranks > 1 && cli_get(flags, "--dat")) {
        fprintf(stderr,
                "mbd %s: --dat: not over MPI ranks (each holds a share of the results): "
                "--json, then chart from it\n",
                CMD);
        return CLI_USAGE_ERROR;
    }
    /* the outputs checked before the run, not found unusable after it */
    const char *json = cli_get(flags, "--json"), *dat = cli_get(flags, "--dat");
    if ((json && bench_check_json_paths(json)) || (dat && cli_check_output_dir(CMD, dat)))
        return CLI_USAGE_ERROR;
    const char *pattern = cli_get(flags, "--filter");
    if (pattern && regcomp(filter, pattern, REG_EXTENDED | REG_NOSUB) != 0) {
        fprintf(stderr, "mbd %s: --filter: not a valid regular expression: '%.60s'\n", CMD,
                pattern);
        return CLI_USAGE_ERROR;
    }
    config->filter = pattern ? filter : NULL;
    config->interleave = cli_get(flags, "--interleave") != NULL;
    return 0;
}

/* The robots of the list, where a robot suite runs. */
static int load_robots(const cli_flag *flags, bench_config *config, bench_robots *robots)
{
    const unsigned robot_suites = (1u << SUITE_ROBOTS) | (1u << SUITE_ROBOT_DERIVATIVES);
    if (!(config->suites & robot_suites))
        return 0;
    const char *list = cli_get(flags, "--robots");
    if (!list && access(DEFAULT_ROBOTS, R_OK) != 0) {
        fprintf(stderr,
                "mbd-bench: no %s here (run in the repository, or give --robots): the "
                "robot suites measure nothing\n",
                DEFAULT_ROBOTS);
        return 0;
    }
    const int rc = bench_robots_load(list ? list : DEFAULT_ROBOTS, robots);
    config->robots = rc ? NULL : robots;
    return rc;
}

/* The run's settings, so that the JSON says what was measured and how. */
static void add_settings(json_t *context, const bench_config *config, int blas_default)
{
    json_t *suites = json_array();
    for (int s = 0; s < SUITE_COUNT; s++)
        if (config->suites & (1u << s))
            json_array_append_new(suites, json_string(bench_suite_name((bench_suite)s)));
    char note[256];
    snprintf(note, sizeof note,
             "dense (O(N^3)), sparse on chains (O(N^3) there) and plugins "
             "(cost unknown) are timed up to N = %d only: beyond it a cubic cost makes it "
             "pointless",
             config->dense_max_n);
    json_object_update_new(
        context,
        json_pack(
            "{s:o, s:o, s:f, s:i, s:b, s:I, s:i, s:i, s:s, s:i, s:i, s:s}", "suites", suites,
            "families", bench_families_json(), "min_time", config->timing.min_time, "repetitions",
            config->timing.repetitions, "interleaved", config->interleave, "seed",
            (json_int_t)config->seed, "batch_k", config->batch_k, "dense_max_n",
            config->dense_max_n, "dense_note", note, "openblas_threads", openblas_get_num_threads(),
            "openblas_threads_default", blas_default, "openblas_note",
            "OpenBLAS pinned to 1 thread (openblas_set_num_threads(1)) for every measurement: "
            "threads:1 means one thread, and a batch runs one LAPACK thread per OpenMP thread"));
}

/* Over ranks (collective): every rank's rows to rank 0, which writes them. */
static int write_gathered_json(const bench_results *results, const json_t *context,
                               const char *paths)
{
    json_t *rows = bench_gather_rows(results, par_host());
    if (par_rank() != 0)
        return 0;
    return rows ? bench_write_json_rows(rows, context, paths) : CLI_RUNTIME_ERROR;
}

static int write_outputs(const bench_results *results, const json_t *context, const cli_flag *flags)
{
    const char *json = cli_get(flags, "--json"), *dat = cli_get(flags, "--dat");
    if (par_size() > 1)
        return json ? write_gathered_json(results, context, json) : 0;
    int rc = json ? bench_write_json(results, context, json) : 0;
    if (!rc && dat)
        rc = bench_write_dat(results, dat);
    return rc;
}

static int run_bench(int argc, char **argv)
{
    cli_flag flags[] = {{"--suite", NULL, 0},
                        {"--n", NULL, 0},
                        {"--phase-n", NULL, 0},
                        {"--batch-n", NULL, 0},
                        {"--threads", NULL, 0},
                        {"--batch-k", NULL, 0},
                        {"--loops-k", NULL, 0},
                        {"--scaling-n", NULL, 0},
                        {"--derivatives-n", NULL, 0},
                        {"--dense-max-n", NULL, 0},
                        {"--min-time", NULL, 0},
                        {"--repetitions", NULL, 0},
                        {"--seed", NULL, 0},
                        {"--filter", NULL, 0},
                        {"--json", NULL, 0},
                        {"--dat", NULL, 0},
                        {"--interleave", NULL, 1},
                        {"--robots", NULL, 0},
                        {NULL, NULL, 0}};
    bench_config config = {0};
    bench_robots robots = {0};
    regex_t filter;
    if (cli_wants_help(argc, argv, 1)) {
        fputs(usage, stdout);
        return 0;
    }
    int npos, rc = cli_load_plugins("mbd-bench", &argc, argv, 1);
    if (!rc)
        rc = cli_parse(CMD, argc, argv, 1, flags, NULL, 0, &npos);
    if (!rc)
        rc = parse_flags(flags, &config, &filter);
    if (!rc && (rc = load_robots(flags, &config, &robots)) && config.filter)
        regfree(&filter);
    /* before any other collective call: all ranks go on, or none */
    const int agreed = par_agree(rc);
    if (agreed) {
        if (!rc && config.filter)
            regfree(&filter);
        bench_robots_free(&robots);
        return agreed;
    }
    const int blas_default = openblas_get_num_threads();
    openblas_set_num_threads(1);
    json_t *context = bench_context_collect(argv[0]);
    add_settings(context, &config, blas_default);
    if (config.robots)
        json_object_update_new(context, json_pack("{s:O, s:O}", "robots", robots.listed,
                                                  "robots_skipped", robots.skipped));
    bench_context_print(context, stderr);
    bench_catch_signals();
    bench_results results = {0};
    int failed = 0;
    /* Before the rest, whose targets are ratios to it; by rank 0 alone, whose context the JSON
     * carries, while the others wait (par_agree): they would share its node's cores. */
    if (config.suites & (1u << SUITE_MACHINE) && config.rank == 0)
        failed |= bench_machine_measure(&config.timing, json_object_get(context, "caches"),
                                        config.threads.value[config.threads.count - 1], context);
    if (config.suites & (1u << SUITE_MACHINE))
        par_agree(MBD_OK);
    failed |= bench_run(&config, &results);
    if (results.left_out)
        json_object_set(context, "left_out", results.left_out);
    json_object_set_new(context, "ranks", json_integer(config.ranks));
    json_object_set_new(context, "partial", json_boolean(par_sum(bench_stop != 0) > 0));
    if (bench_stop)
        fprintf(stderr,
                "\nmbd-bench: stopped by signal %d: writing the %d finished measurements, "
                "marked partial\n",
                (int)bench_stop, results.count);
    rc = write_outputs(&results, context, flags);
    bench_results_free(&results);
    bench_robots_free(&robots);
    json_decref(context);
    if (config.filter)
        regfree(&filter);
    return rc ? rc : bench_stop ? 128 + bench_stop : failed;
}

/* Under mpirun every rank runs its share (bench_config's rank and ranks). */
int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "compare") == 0)
        return compare_main(argc - 1, argv + 1);
    const int rc = par_start(&argc, &argv);
    return rc ? rc : par_finish(run_bench(argc, argv));
}
