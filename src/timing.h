/* timing.h: the measuring core shared by mbd-bench and `mbd recommend`.
 *
 * In the manner of Google Benchmark: the iteration count grows until one run lasts at
 * least min_time; that count is then kept for every further repetition, so repetitions
 * are comparable. Times are per iteration, in seconds: real time from CLOCK_MONOTONIC,
 * cpu time from the clock the caller names (the thread's for one thread, the process's
 * for an OpenMP batch). */
#ifndef MBD_TIMING_H
#define MBD_TIMING_H

#include <stddef.h>
#include <time.h>

#define TIMING_MAX_REPETITIONS 64

typedef struct {
    double min_time;  /* seconds one repetition lasts at least */
    int repetitions;  /* 1..TIMING_MAX_REPETITIONS */
    double max_total; /* no new repetition after this many seconds in all; 0: no limit */
    clockid_t cpu_clock;
} timing_options;

typedef struct {
    long iterations; /* per repetition */
    int repetitions; /* done: fewer than asked when max_total, or a stop, cut the run short */
    double spent;    /* seconds of real time in all runs, the calibration's included */
    double real[TIMING_MAX_REPETITIONS]; /* seconds per iteration */
    double cpu[TIMING_MAX_REPETITIONS];
} timing_result;

/* Does the measured work `iterations` times; returns 0 or the first failure status. */
typedef int (*timing_body)(void *ctx, long iterations);

/* Measures body; returns 0, or the body's status (result then undefined). */
int timing_measure(const timing_options *options, timing_body body, void *ctx,
                   timing_result *result);

/* timing_measure's two parts, for a caller that interleaves the repetitions of many
 * measurements: the calibration, whose last run (the first to last min_time) is the first
 * repetition, and one more repetition of result->iterations appended. A workload set up
 * anew for it runs one untimed iteration first (timing_rerun), to warm the caches as the
 * calibration's runs did, unless one iteration is a tenth of the repetition or more. All
 * return 0, or the body's status. */
int timing_calibrate(const timing_options *options, timing_body body, void *ctx,
                     timing_result *result);
int timing_repeat(const timing_options *options, timing_body body, void *ctx,
                  timing_result *result);
int timing_rerun(const timing_options *options, timing_body body, void *ctx, timing_result *result);

/* Any of the four: how a caller's measurement is to be made. */
typedef int (*timing_step)(const timing_options *options, timing_body body, void *ctx,
                           timing_result *result);

/* The aggregates of Google Benchmark, in its order. cv = stddev / mean (a fraction). */
typedef enum { STAT_MEAN, STAT_MEDIAN, STAT_STDDEV, STAT_CV, STAT_COUNT } timing_stat;

const char *timing_stat_name(timing_stat stat);
/* stddev is the sample standard deviation (n - 1); 0 for n < 2. */
double timing_statistic(timing_stat stat, const double *x, int n);

/* seconds as a short number and unit, "812.3 ns" or "12.5 ms", width 15. */
void timing_format(char *out, size_t size, double seconds);

/* A compiler barrier: the compiler must assume that all memory is read (and written)
 * here, so it can neither drop the work whose outputs nobody reads nor hoist it out of
 * the timing loop. */
static inline void timing_clobber(void) { __asm__ volatile("" : : : "memory"); }

#endif
