/* harness.c: collecting measurements, the stdout table, and stopping on a signal. */
#include "harness.h"

#include "../src/cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NAME_WIDTH 64

volatile sig_atomic_t bench_stop = 0;

static double stop_time; /* CLOCK_MONOTONIC seconds of the first signal */

static double monotonic_seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now); /* async-signal-safe */
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

/* The first signal asks for a stop after the current measurement; one a second or more
 * later ends the run at once. A second signal within that second is the same request:
 * timeout(1) sends its signal to the program and then to its whole process group, and
 * ending the run there lost the partial file. */
static void request_stop(int signo)
{
    const double now = monotonic_seconds();
    if (!bench_stop) {
        stop_time = now;
        bench_stop = signo;
    } else if (now - stop_time >= 1.0) {
        cli_remove_temporaries(); /* an output being written goes with the run */
        signal(signo, SIG_DFL);
        raise(signo);
    }
}

void bench_catch_signals(void)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = request_stop;
    sigemptyset(&action.sa_mask);
    sigaddset(&action.sa_mask, SIGINT); /* one handler at a time */
    sigaddset(&action.sa_mask, SIGTERM);
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
}

const char *bench_suite_name(bench_suite suite)
{
    static const char *const names[SUITE_COUNT] = {
        "percall",           "phases", "batch", "loops", "scaling", "derivatives", "robots",
        "robot-derivatives", "machine"};
    return names[suite];
}

void bench_key_name(const bench_key *key, char *out, size_t size)
{
    static const char *const prefix[SUITE_COUNT] = {
        "fd",     "rk4", "batch", "loops", "scale", "derivatives", "robot", "robot_derivatives",
        "machine"};
    int used =
        snprintf(out, size, "%s_%s/%s/n:%d", prefix[key->suite], key->variant, key->family, key->n);
    if (key->phase)
        used += snprintf(out + used, size - (size_t)used, "/phase:%s", key->phase);
    if (key->k)
        used += snprintf(out + used, size - (size_t)used, "/k:%d", key->k);
    snprintf(out + used, size - (size_t)used, "/threads:%d", key->threads);
}

/* Google Benchmark's family is one registered benchmark with its argument list; here it
 * is the name up to the body count, whose instances are the Ns (and phases, threads). */
static size_t family_length(const char *name) { return (size_t)(strstr(name, "/n:") - name); }

static void assign_family(bench_results *results, bench_record *record)
{
    const size_t len = family_length(record->name);
    record->instance_index = 0;
    for (int k = 0; k < results->count; k++) {
        const bench_record *other = &results->records[k];
        if (family_length(other->name) == len && strncmp(other->name, record->name, len) == 0) {
            record->family_index = other->family_index;
            record->instance_index = other->instance_index + 1;
        }
    }
    if (record->instance_index == 0)
        record->family_index = results->families++;
}

double *bench_add_counter(bench_record *record, const char *name)
{
    bench_counter *counter = &record->counter[record->ncounters++];
    counter->name = name;
    return counter->value;
}

double bench_quoted_time(const bench_record *record, int r)
{
    return record->key.suite == SUITE_BATCH ? record->timing.real[r] : record->timing.cpu[r];
}

void bench_count(bench_record *record)
{
    const timing_result *t = &record->timing;
    const int states = record->states;
    record->ncounters = 0;
    double *bodies = bench_add_counter(record, "bodies");
    double *dofs = bench_add_counter(record, "dofs");
    double *ns_per_body = bench_add_counter(record, "ns_per_body");
    double *rate = states > 0 ? bench_add_counter(record, "states_per_second") : NULL;
    const double per_iteration = states > 0 ? states : 1;
    for (int r = 0; r < t->repetitions; r++) {
        bodies[r] = record->bodies;
        dofs[r] = record->dofs;
        ns_per_body[r] = 1e9 * bench_quoted_time(record, r) / per_iteration / record->bodies;
        if (rate)
            rate[r] = per_iteration / bench_quoted_time(record, r);
    }
}

bench_record *bench_add(bench_results *results, const bench_key *key, int bodies, int dofs,
                        int states, const timing_result *timing)
{
    if (results->count == results->capacity) {
        int capacity = results->capacity ? 2 * results->capacity : 64;
        bench_record *grown = realloc(results->records, (size_t)capacity * sizeof *grown);
        if (!grown)
            return NULL;
        results->records = grown;
        results->capacity = capacity;
    }
    bench_record *record = &results->records[results->count];
    memset(record, 0, sizeof *record);
    record->key = *key;
    bench_key_name(key, record->name, sizeof record->name);
    record->bodies = bodies;
    record->dofs = dofs;
    record->states = states;
    record->timing = *timing;
    assign_family(results, record);
    bench_count(record);
    results->count++;
    return record;
}

static int same_key(const bench_key *a, const bench_key *b)
{
    return a->suite == b->suite && strcmp(a->variant, b->variant) == 0 &&
           strcmp(a->family, b->family) == 0 && a->n == b->n && a->k == b->k &&
           a->threads == b->threads &&
           (a->phase && b->phase ? strcmp(a->phase, b->phase) == 0 : a->phase == b->phase);
}

bench_record *bench_find(const bench_results *results, const bench_key *key)
{
    for (int k = 0; k < results->count; k++)
        if (same_key(&results->records[k].key, key))
            return &results->records[k];
    return NULL;
}

double bench_median_real(const bench_record *record)
{
    return timing_statistic(STAT_MEDIAN, record->timing.real, record->timing.repetitions);
}

double bench_time_stat(const bench_record *record, timing_stat stat)
{
    double quoted[TIMING_MAX_REPETITIONS];
    for (int r = 0; r < record->timing.repetitions; r++)
        quoted[r] = bench_quoted_time(record, r);
    return timing_statistic(stat, quoted, record->timing.repetitions);
}

double bench_counter_median(const bench_record *record, const char *name)
{
    for (int c = 0; c < record->ncounters; c++)
        if (strcmp(record->counter[c].name, name) == 0)
            return timing_statistic(STAT_MEDIAN, record->counter[c].value,
                                    record->timing.repetitions);
    return NAN;
}

void bench_results_free(bench_results *results)
{
    free(results->records);
    json_decref(results->left_out);
    memset(results, 0, sizeof *results);
}

void bench_print_header(FILE *out)
{
    fprintf(out, "%-*s %15s %15s %11s %7s %11s\n", NAME_WIDTH, "Benchmark (median of repetitions)",
            "Time", "CPU", "Iterations", "CV", "ns/body");
    for (int k = 0; k < NAME_WIDTH + 65; k++)
        fputc('-', out);
    fputc('\n', out);
}

static void print_time(FILE *out, double seconds)
{
    char text[32];
    timing_format(text, sizeof text, seconds);
    fprintf(out, " %s", text);
}

void bench_print_record(FILE *out, const bench_record *record)
{
    const timing_result *t = &record->timing;
    fprintf(out, "%-*s", NAME_WIDTH, record->name);
    print_time(out, bench_median_real(record));
    print_time(out, timing_statistic(STAT_MEDIAN, t->cpu, t->repetitions));
    fprintf(out, " %11ld %6.2f%% %11.2f\n", t->iterations, 100 * bench_time_stat(record, STAT_CV),
            bench_counter_median(record, "ns_per_body"));
    fflush(out);
}
