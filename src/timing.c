/* timing.c: iteration growth, repetitions and the aggregate statistics. */
#include "timing.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A guard against a body so cheap (or broken) that min_time is never reached. */
#define TIMING_MAX_ITERATIONS 1000000000L

static double clock_seconds(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One run of `iterations`; real and cpu are the totals in seconds. */
static int run_once(const timing_options *options, timing_body body, void *ctx, long iterations,
                    double *real, double *cpu)
{
    const double real0 = clock_seconds(CLOCK_MONOTONIC);
    const double cpu0 = clock_seconds(options->cpu_clock);
    int status = body(ctx, iterations);
    *cpu = clock_seconds(options->cpu_clock) - cpu0;
    *real = clock_seconds(CLOCK_MONOTONIC) - real0;
    return status;
}

/* Aims 40% past min_time so the next run most likely suffices, but grows at most tenfold
 * per run: a first run dominated by cold caches must not explode the count. */
static long next_iterations(long iterations, double real, double min_time)
{
    double factor = real > 0 ? 1.4 * min_time / real : 10.0;
    if (factor > 10.0)
        factor = 10.0;
    long next = (long)((double)iterations * factor);
    if (next <= iterations)
        next = iterations + 1;
    return next < TIMING_MAX_ITERATIONS ? next : TIMING_MAX_ITERATIONS;
}

/* Appends one run of `iterations` as a repetition. */
static void append(timing_result *result, double real, double cpu)
{
    result->real[result->repetitions] = real / (double)result->iterations;
    result->cpu[result->repetitions] = cpu / (double)result->iterations;
    result->repetitions++;
    result->spent += real;
}

int timing_calibrate(const timing_options *options, timing_body body, void *ctx,
                     timing_result *result)
{
    long iterations = 1;
    double real, cpu, calibration = 0;
    for (;;) {
        int status = run_once(options, body, ctx, iterations, &real, &cpu);
        if (status)
            return status;
        if (real >= options->min_time || iterations == TIMING_MAX_ITERATIONS)
            break;
        calibration += real;
        iterations = next_iterations(iterations, real, options->min_time);
    }
    result->iterations = iterations;
    result->repetitions = 0;
    result->spent = calibration;
    append(result, real, cpu);
    return 0;
}

int timing_repeat(const timing_options *options, timing_body body, void *ctx, timing_result *result)
{
    if (result->repetitions == TIMING_MAX_REPETITIONS)
        return 0;
    double real, cpu;
    int status = run_once(options, body, ctx, result->iterations, &real, &cpu);
    if (!status)
        append(result, real, cpu);
    return status;
}

/* The untimed iteration where it costs a tenth of the repetition or less: a longer one
 * outlasts the cold start by far (and warming up a 0.3 s iteration doubled the run). */
#define TIMING_WARM_UP_FROM 10

int timing_rerun(const timing_options *options, timing_body body, void *ctx, timing_result *result)
{
    int status = result->iterations >= TIMING_WARM_UP_FROM ? body(ctx, 1) : 0;
    return status ? status : timing_repeat(options, body, ctx, result);
}

int timing_measure(const timing_options *options, timing_body body, void *ctx,
                   timing_result *result)
{
    int status = timing_calibrate(options, body, ctx, result);
    while (!status && result->repetitions < options->repetitions &&
           !(options->max_total > 0 && result->spent >= options->max_total))
        status = timing_repeat(options, body, ctx, result);
    return status;
}

const char *timing_stat_name(timing_stat stat)
{
    static const char *const names[STAT_COUNT] = {"mean", "median", "stddev", "cv"};
    return names[stat];
}

static double mean_of(const double *x, int n)
{
    double sum = 0;
    for (int k = 0; k < n; k++)
        sum += x[k];
    return sum / n;
}

static double stddev_of(const double *x, int n)
{
    if (n < 2)
        return 0;
    const double mean = mean_of(x, n);
    double sum = 0;
    for (int k = 0; k < n; k++)
        sum += (x[k] - mean) * (x[k] - mean);
    return sqrt(sum / (n - 1));
}

static double median_of(const double *x, int n)
{
    double sorted[TIMING_MAX_REPETITIONS];
    memcpy(sorted, x, (size_t)n * sizeof *x);
    for (int i = 1; i < n; i++) /* insertion sort: n is a repetition count */
        for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
            double t = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = t;
        }
    return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

double timing_statistic(timing_stat stat, const double *x, int n)
{
    switch (stat) {
    case STAT_MEAN:
        return mean_of(x, n);
    case STAT_MEDIAN:
        return median_of(x, n);
    case STAT_STDDEV:
        return stddev_of(x, n);
    case STAT_CV:
        return stddev_of(x, n) / mean_of(x, n);
    case STAT_COUNT:
        break;
    }
    return NAN;
}

/* The unit that keeps at most four digits before the point, as Google Benchmark's table. */
void timing_format(char *out, size_t size, double seconds)
{
    static const char *const units[] = {"ns", "us", "ms", "s"};
    double value = seconds * 1e9;
    int unit = 0;
    while (unit < 3 && value >= 1e4) {
        value /= 1e3;
        unit++;
    }
    snprintf(out, size, "%12.1f %-2s", value, units[unit]);
}
