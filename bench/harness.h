/* harness.h: the measurements a run collects, the stdout table, Google Benchmark's JSON
 * and the .dat files for gnuplot; stopping on SIGINT/SIGTERM. */
#ifndef MBD_BENCH_HARNESS_H
#define MBD_BENCH_HARNESS_H

#include "../src/timing.h"

#include <jansson.h>
#include <signal.h>
#include <stdio.h>

typedef enum {
    SUITE_PERCALL,
    SUITE_PHASES,
    SUITE_BATCH,
    SUITE_LOOPS,
    SUITE_SCALING,
    SUITE_DERIVATIVES,
    SUITE_ROBOTS,
    SUITE_ROBOT_DERIVATIVES,
    SUITE_MACHINE,
    SUITE_COUNT
} bench_suite;

/* What one measurement is; its name is built from this alone. */
typedef struct {
    bench_suite suite;
    char variant[48];   /* workload_variant name */
    const char *family; /* model family, e.g. "chain-cardan", or a robot */
    int n;              /* bodies; SUITE_LOOPS: the ladder's k (rods between rungs); a
                           robot's: its nv */
    const char *phase;  /* SUITE_PHASES: "integrator", "kinematics", "solve", "step" */
    int k;              /* SUITE_BATCH: states per batch */
    int threads;
} bench_key;

#define BENCH_MAX_COUNTERS 8

typedef struct {
    const char *name;
    double value[TIMING_MAX_REPETITIONS]; /* per repetition, like the times */
} bench_counter;

typedef struct {
    bench_key key;
    char name[192];     /* e.g. "fd_poisson-ldlt/chain-cardan/n:50/threads:1" */
    int family_index;   /* Google Benchmark's family: the name before "/n:" */
    int group;          /* its (suite, family, variant, n) in the run's order: over MPI ranks,
                           rank 0 puts every rank's records back in that order */
    int instance_index; /* within the family, in order of appearance */
    int bodies, dofs;
    int states; /* evaluated per iteration; 0: none (a phase of a step) */
    timing_result timing;
    int ncounters;
    bench_counter counter[BENCH_MAX_COUNTERS];
    /* SUITE_DERIVATIVES, SUITE_ROBOT_DERIVATIVES: the median seconds of one bodies forward call on the row's model,
     * and the method's largest relative deviation from the reference method (NAN: none) */
    double forward_seconds, deviation;
} bench_record;

typedef struct {
    bench_record *records;
    int count, capacity;
    int families; /* family indices handed out */
    /* the measurements whose plugin refused the model, [{name, error}] (NULL: none) */
    json_t *left_out;
} bench_results;

const char *bench_suite_name(bench_suite suite);
void bench_key_name(const bench_key *key, char *out, size_t size);

/* Appends a measurement with the counters bodies, dofs, ns_per_body and (states > 0)
 * states_per_second, where states are evaluated per iteration. Returns NULL when out of
 * memory. */
bench_record *bench_add(bench_results *results, const bench_key *key, int bodies, int dofs,
                        int states, const timing_result *timing);

/* The standard counters anew from the record's repetitions, in place of all it had: for
 * a caller that appends repetitions after bench_add. */
void bench_count(bench_record *record);
/* Adds a counter (BENCH_MAX_COUNTERS in all, the standard ones included) and returns its
 * per-repetition values for the caller to fill. */
double *bench_add_counter(bench_record *record, const char *name);
/* The first record whose key equals key, or NULL. */
bench_record *bench_find(const bench_results *results, const bench_key *key);
/* The median real time per iteration, in seconds. */
double bench_median_real(const bench_record *record);
/* The time a record quotes at repetition r, in seconds per iteration: the thread's cpu
 * time for a one-thread measurement (time spent descheduled by other load on the machine
 * is not the solver's), real time for a batch (its throughput is wall-clock). */
double bench_quoted_time(const bench_record *record, int r);
/* A statistic of bench_quoted_time over the repetitions: its median is what tables,
 * charts and targets quote. */
double bench_time_stat(const bench_record *record, timing_stat stat);
/* The median of the named counter, or NAN if the record has none. */
double bench_counter_median(const bench_record *record, const char *name);
void bench_results_free(bench_results *results);

/* One line per measurement: median real and cpu time, iterations, and the cv and ns per
 * body of the quoted time. */
void bench_print_header(FILE *out);
void bench_print_record(FILE *out, const bench_record *record);

/* The number of the SIGINT or SIGTERM that asked the run to stop after the current
 * measurement; 0 while none has. A second signal a second or more later takes its default
 * action (bench_catch_signals). */
extern volatile sig_atomic_t bench_stop;
void bench_catch_signals(void);

/* json.c: writes {context, benchmarks[]} in Google Benchmark's schema to every path of
 * the comma-separated list, atomically. Returns 0 or CLI_RUNTIME_ERROR. */
int bench_write_json(const bench_results *results, const json_t *context, const char *paths);
/* Its two steps: the rows of the results, each with its host, and a file of rows (taken
 * over, whatever the outcome). */
json_t *bench_json_rows(const bench_results *results, const char *host);
int bench_write_json_rows(json_t *rows, const json_t *context, const char *paths);
/* Checks every path of the list as an output before the run: 0 or CLI_USAGE_ERROR. */
int bench_check_json_paths(const char *paths);

/* dat.c: writes the .dat files of the charts into dir (see bench/README.md), atomically.
 * Returns 0 or CLI_RUNTIME_ERROR. */
int bench_write_dat(const bench_results *results, const char *dir);

#endif
