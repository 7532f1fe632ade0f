/* dat.c: one whitespace table per chart, for gnuplot and awk. Times are medians over the
 * repetitions of bench_quoted_time, in ns; a quantity that was not measured is NaN. Each file opens with a
 * comment naming its columns. */
#include "harness.h"
#include "phases.h"

#include "../src/cli.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

/* The pair of Ivanov 2017, Fig. 3: sweep over block LDL^T. */
#define RATIO_NUMERATOR "poisson-sweep"
#define RATIO_DENOMINATOR "poisson-ldlt"

/* " x", or " NaN" for a quantity not measured (printf would write "nan" or "-nan"). */
static void put(FILE *out, double x)
{
    if (isfinite(x))
        fprintf(out, " %.6g", x);
    else
        fputs(" NaN", out);
}

static double median_ns_of(const bench_results *results, const bench_key *key)
{
    const bench_record *record = bench_find(results, key);
    return record ? 1e9 * bench_time_stat(record, STAT_MEDIAN) : NAN;
}

/* The one-call measurements of a suite (percall, scaling). */
static int write_calls(FILE *out, const bench_results *results, bench_suite suite)
{
    fprintf(out, "# family variant n bodies dofs median_ns cv ns_per_body\n");
    for (int k = 0; k < results->count; k++) {
        const bench_record *r = &results->records[k];
        if (r->key.suite == suite)
            fprintf(out, "%s %s %d %d %d %.6g %.4f %.6g\n", r->key.family, r->key.variant, r->key.n,
                    r->bodies, r->dofs, 1e9 * bench_time_stat(r, STAT_MEDIAN),
                    bench_time_stat(r, STAT_CV), bench_counter_median(r, "ns_per_body"));
    }
    return ferror(out);
}

static int write_percall(FILE *out, void *ctx) { return write_calls(out, ctx, SUITE_PERCALL); }

/* Each method of a derivatives suite: its time, one bodies forward call's on the same
 * model, the ratio of the two, and its deviation from the reference method (NaN: none). */
static int write_method_rows(FILE *out, const bench_results *results, bench_suite suite)
{
    fprintf(out, "# family variant n bodies dofs median_ns cv forward_ns x_forward max_rel_dev\n");
    for (int k = 0; k < results->count; k++) {
        const bench_record *r = &results->records[k];
        if (r->key.suite != suite)
            continue;
        fprintf(out, "%s %s %d %d %d", r->key.family, r->key.variant, r->key.n, r->bodies, r->dofs);
        put(out, 1e9 * bench_time_stat(r, STAT_MEDIAN));
        put(out, bench_time_stat(r, STAT_CV));
        put(out, bench_counter_median(r, "forward_ns"));
        put(out, bench_counter_median(r, "x_forward"));
        put(out, bench_counter_median(r, "max_rel_dev"));
        fputc('\n', out);
    }
    return ferror(out);
}

static int write_derivatives(FILE *out, void *ctx)
{
    return write_method_rows(out, ctx, SUITE_DERIVATIVES);
}

static int write_robot_derivatives(FILE *out, void *ctx)
{
    return write_method_rows(out, ctx, SUITE_ROBOT_DERIVATIVES);
}

static int write_scaling(FILE *out, void *ctx) { return write_calls(out, ctx, SUITE_SCALING); }

/* One row per (family, variant, n), at its first phase: the phases of its RK4 step side
 * by side. */
static int write_phases(FILE *out, void *ctx)
{
    const bench_results *results = ctx;
    fprintf(out, "# family variant n");
    for (int p = 0; p < PHASE_COUNT; p++)
        fprintf(out, " %s_ns", rk4_phase_name((rk4_phase)p));
    fputc('\n', out);
    for (int k = 0; k < results->count; k++) {
        const bench_record *r = &results->records[k];
        if (r->key.suite != SUITE_PHASES ||
            strcmp(r->key.phase, rk4_phase_name(PHASE_INTEGRATOR)) != 0)
            continue;
        fprintf(out, "%s %s %d", r->key.family, r->key.variant, r->key.n);
        bench_key key = r->key;
        for (int p = 0; p < PHASE_COUNT; p++) {
            key.phase = rk4_phase_name((rk4_phase)p);
            put(out, median_ns_of(results, &key));
        }
        fputc('\n', out);
    }
    return ferror(out);
}

/* Ivanov 2017, Fig. 3: the sweep's time over block LDL^T's, of the solve phase (what the paper
 * compares) and of a whole call (kinematics included). */
static int write_ratio(FILE *out, void *ctx)
{
    const bench_results *results = ctx;
    fprintf(out, "# family n solve_ratio call_ratio   (%s / %s)\n", RATIO_NUMERATOR,
            RATIO_DENOMINATOR);
    for (int k = 0; k < results->count; k++) {
        const bench_record *r = &results->records[k];
        if (r->key.suite != SUITE_PHASES ||
            strcmp(r->key.phase, rk4_phase_name(PHASE_SOLVE)) != 0 ||
            strcmp(r->key.variant, RATIO_DENOMINATOR) != 0)
            continue;
        bench_key sweep = r->key, call = r->key;
        snprintf(sweep.variant, sizeof sweep.variant, "%s", RATIO_NUMERATOR);
        call.suite = SUITE_PERCALL;
        call.phase = NULL;
        const double call_ldlt = median_ns_of(results, &call);
        snprintf(call.variant, sizeof call.variant, "%s", RATIO_NUMERATOR);
        fprintf(out, "%s %d", r->key.family, r->key.n);
        put(out, median_ns_of(results, &sweep) / (1e9 * bench_time_stat(r, STAT_MEDIAN)));
        put(out, median_ns_of(results, &call) / call_ldlt);
        fputc('\n', out);
    }
    return ferror(out);
}

static int write_batch(FILE *out, void *ctx)
{
    const bench_results *results = ctx;
    fprintf(
        out,
        "# family variant n k threads median_ns states_per_second efficiency ns_per_body_state\n");
    for (int k = 0; k < results->count; k++) {
        const bench_record *r = &results->records[k];
        if (r->key.suite != SUITE_BATCH)
            continue;
        fprintf(out, "%s %s %d %d %d", r->key.family, r->key.variant, r->key.n, r->key.k,
                r->key.threads);
        put(out, 1e9 * bench_time_stat(r, STAT_MEDIAN));
        put(out, bench_counter_median(r, "states_per_second"));
        put(out, bench_counter_median(r, "efficiency"));
        put(out, bench_counter_median(r, "ns_per_body"));
        fputc('\n', out);
    }
    return ferror(out);
}

/* The fastest median of r's suite at r's family and N. */
static double fastest_at(const bench_results *results, const bench_record *r)
{
    double best = INFINITY;
    for (int k = 0; k < results->count; k++) {
        const bench_record *o = &results->records[k];
        if (o->key.suite == r->key.suite && o->key.n == r->key.n &&
            strcmp(o->key.family, r->key.family) == 0)
            best = fmin(best, bench_time_stat(o, STAT_MEDIAN));
    }
    return best;
}

/* Each variant's time relative to the fastest at the same family and N: 1 is the winner. */
static int write_crossover(FILE *out, void *ctx)
{
    const bench_results *results = ctx;
    fprintf(out, "# family n variant median_ns relative_to_fastest\n");
    for (int k = 0; k < results->count; k++) {
        const bench_record *r = &results->records[k];
        if (r->key.suite != SUITE_PERCALL)
            continue;
        const double median = bench_time_stat(r, STAT_MEDIAN);
        fprintf(out, "%s %d %s %.6g %.4f\n", r->key.family, r->key.n, r->key.variant, 1e9 * median,
                median / fastest_at(results, r));
    }
    return ferror(out);
}

/* Each robot's forward calls, every solver and plugin, and their time relative to the
 * fastest on that robot. */
static int write_robots(FILE *out, void *ctx)
{
    const bench_results *results = ctx;
    fprintf(out, "# robot variant nv bodies median_ns cv relative_to_fastest\n");
    for (int k = 0; k < results->count; k++) {
        const bench_record *r = &results->records[k];
        if (r->key.suite != SUITE_ROBOTS)
            continue;
        const double median = bench_time_stat(r, STAT_MEDIAN);
        fprintf(out, "%s %s %d %d %.6g %.4f %.4f\n", r->key.family, r->key.variant, r->dofs,
                r->bodies, 1e9 * median, bench_time_stat(r, STAT_CV),
                median / fastest_at(results, r));
    }
    return ferror(out);
}

int bench_write_dat(const bench_results *results, const char *dir)
{
    static const struct {
        const char *file;
        int (*write)(FILE *, void *);
    } tables[] = {
        {"percall.dat", write_percall},
        {"ratio.dat", write_ratio},
        {"phases.dat", write_phases},
        {"batch.dat", write_batch},
        {"crossover.dat", write_crossover},
        {"scaling.dat", write_scaling},
        {"derivatives.dat", write_derivatives},
        {"robots.dat", write_robots},
        {"robot_derivatives.dat", write_robot_derivatives},
    };
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "mbd-bench: %s: %s\n", dir, strerror(errno));
        return CLI_RUNTIME_ERROR;
    }
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, tables[t].file);
        if (cli_write_atomic("bench", path, tables[t].write, (void *)results))
            return CLI_RUNTIME_ERROR;
    }
    return 0;
}
