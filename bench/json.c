/* json.c: the results in Google Benchmark's JSON schema, which its tools/compare.py
 * reads: one "iteration" row per repetition, then the "aggregate" rows mean, median,
 * stddev and cv (named run_name + "_" + aggregate, as Google Benchmark names them). */
#include "harness.h"

#include "../src/cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* JSON has no NaN: a statistic that is undefined becomes null. */
static json_t *number(double x) { return isfinite(x) ? json_real(x) : json_null(); }

static json_t *common_fields(const bench_record *record, const char *name, const char *run_type)
{
    return json_pack("{s:s, s:i, s:i, s:s, s:s, s:i}", "name", name, "family_index",
                     record->family_index, "per_family_instance_index", record->instance_index,
                     "run_name", record->name, "run_type", run_type, "repetitions",
                     record->timing.repetitions);
}

/* iterations, times and counters; value(x, n, arg) reduces a per-repetition array, and
 * time_scale turns its times into the row's unit. */
static void add_measures(json_t *row, const bench_record *record, long iterations,
                         double (*value)(const double *x, int n, int arg), int arg,
                         double time_scale)
{
    const timing_result *t = &record->timing;
    json_object_set_new(row, "threads", json_integer(record->key.threads));
    json_object_set_new(row, "iterations", json_integer(iterations));
    json_object_set_new(row, "real_time", number(time_scale * value(t->real, t->repetitions, arg)));
    json_object_set_new(row, "cpu_time", number(time_scale * value(t->cpu, t->repetitions, arg)));
    json_object_set_new(row, "time_unit", json_string("ns"));
    for (int c = 0; c < record->ncounters; c++)
        json_object_set_new(row, record->counter[c].name,
                            number(value(record->counter[c].value, t->repetitions, arg)));
}

static double at_repetition(const double *x, int n, int r)
{
    (void)n;
    return x[r];
}

static double statistic(const double *x, int n, int stat)
{
    return timing_statistic((timing_stat)stat, x, n);
}

static json_t *iteration_row(const bench_record *record, int r)
{
    json_t *row = common_fields(record, record->name, "iteration");
    json_object_set_new(row, "repetition_index", json_integer(r));
    add_measures(row, record, record->timing.iterations, at_repetition, r, 1e9);
    return row;
}

/* Times in ns, but the cv row's are fractions (aggregate_unit "percentage"); an
 * aggregate's iterations are the repetitions it summarizes. Both as Google Benchmark. */
static json_t *aggregate_row(const bench_record *record, timing_stat stat)
{
    char name[sizeof record->name + 16];
    snprintf(name, sizeof name, "%s_%s", record->name, timing_stat_name(stat));
    json_t *row = common_fields(record, name, "aggregate");
    json_object_set_new(row, "aggregate_name", json_string(timing_stat_name(stat)));
    json_object_set_new(row, "aggregate_unit",
                        json_string(stat == STAT_CV ? "percentage" : "time"));
    add_measures(row, record, record->timing.repetitions, statistic, (int)stat,
                 stat == STAT_CV ? 1 : 1e9);
    return row;
}

/* Each row names the machine that measured it: under MPI (mbd-bench over ranks) the
 * rows of one file come from several. */
static void append_row(json_t *rows, json_t *row, const char *host)
{
    json_object_set_new(row, "host", json_string(host));
    json_array_append_new(rows, row);
}

json_t *bench_json_rows(const bench_results *results, const char *host)
{
    json_t *rows = json_array();
    for (int k = 0; k < results->count; k++) {
        const bench_record *record = &results->records[k];
        for (int r = 0; r < record->timing.repetitions; r++)
            append_row(rows, iteration_row(record, r), host);
        if (record->timing.repetitions > 1) /* Google Benchmark aggregates only then */
            for (int stat = 0; stat < STAT_COUNT; stat++)
                append_row(rows, aggregate_row(record, (timing_stat)stat), host);
    }
    return rows;
}

static int dump(FILE *out, void *root)
{
    return json_dumpf(root, out, JSON_INDENT(2)) || fputc('\n', out) == EOF;
}

int bench_write_json(const bench_results *results, const json_t *context, const char *paths)
{
    const char *host = json_string_value(json_object_get(context, "host_name"));
    return bench_write_json_rows(bench_json_rows(results, host ? host : "unknown"), context, paths);
}

/* Calls each(path, ctx) on each comma-separated path, an empty one included, until one
 * fails. */
static int each_path(const char *paths, int (*each)(const char *, void *), void *ctx)
{
    char *list = strdup(paths);
    if (!list)
        return cli_fail("bench", "JSON", MBD_ENOMEM);
    int rc = 0;
    for (char *rest = list, *path; !rc && (path = strsep(&rest, ","));)
        rc = each(path, ctx);
    free(list);
    return rc;
}

static int write_root(const char *path, void *root)
{
    return cli_write_atomic("bench", path, dump, root);
}

static int check_path(const char *path, void *unused)
{
    (void)unused;
    return cli_check_output("bench", path);
}

int bench_check_json_paths(const char *paths) { return each_path(paths, check_path, NULL); }

int bench_write_json_rows(json_t *rows, const json_t *context, const char *paths)
{
    json_t *root = json_pack("{s:O, s:o}", "context", (json_t *)context, "benchmarks", rows);
    if (!root)
        return cli_fail("bench", "JSON", MBD_ENOMEM);
    const int rc = each_path(paths, write_root, root);
    json_decref(root);
    return rc;
}
