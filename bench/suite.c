/* suite.c: the model families, the enumeration of measurements, and running one. */
#include "suite.h"

#include "phases.h"

#include "../src/workload.h"
#include "mbd_plugin.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

#define SUITE_BIT(suite) (1u << (suite))

/* The families of the one-call suites: percall, scaling at large N, and derivatives. */
#define PERCALL (SUITE_BIT(SUITE_PERCALL) | SUITE_BIT(SUITE_SCALING) | SUITE_BIT(SUITE_DERIVATIVES))

/* The autoTree families with skew 0.5, so that gravity loads every joint. */
static const bench_family families[] = {
    {"autotree-chain", "tree:n=%d,branching=1,skew=0.5", PERCALL | SUITE_BIT(SUITE_BATCH), 1, 0,
     NULL},
    {"autotree-binary", "tree:n=%d,branching=2,skew=0.5", PERCALL, 0, 0, NULL},
    /* the same tree on a floating base (a free joint at the root: nq = N + 6, nv = N + 5) */
    {"autotree-binary-free", "tree:n=%d,branching=2,skew=0.5,base=free", PERCALL, 0, 0, NULL},
    {"chain-revolute", "chain:n=%d,joint=revolute", PERCALL | SUITE_BIT(SUITE_PHASES), 1, 0, NULL},
    {"chain-cylindrical", "chain:n=%d,joint=cylindrical", PERCALL, 1, 0, NULL},
    {"chain-cardan", "chain:n=%d,joint=cardan",
     PERCALL | SUITE_BIT(SUITE_PHASES) | SUITE_BIT(SUITE_BATCH), 1, 0, NULL},
    /* chain-revolute with Coulomb friction 0.2 on every joint: what friction costs */
    {"chain-revolute-friction", "chain:n=%d,joint=revolute,friction=0.2", SUITE_BIT(SUITE_PERCALL),
     1, 0, NULL},
    /* Closed loops: both constrained routes against the number of loops, 64/k rungs on two
     * rails of 64 rods (128 + 64/k bodies), and the parallel five-bar (4 bodies, 1 loop). */
    {"ladder-64", "ladder:n=64,k=%d", SUITE_BIT(SUITE_LOOPS), 0, 0, NULL},
    {"five-bar", "models/five-bar.json", SUITE_BIT(SUITE_LOOPS), 0, 1, NULL},
    /* a 7-DOF arm, the size that controllers differentiate at every step */
    {"arm7", "models/arm7.urdf", SUITE_BIT(SUITE_DERIVATIVES), 0, 7, NULL},
};

#define FAMILY_COUNT (int)(sizeof families / sizeof families[0])
#define MAX_VARIANTS 64

/* One measurement to make. */
typedef struct {
    bench_key key;
    const workload_variant *variant;
    const bench_family *family;
    rk4_phase phase; /* SUITE_PHASES */
    int group;       /* bench_record's */
} bench_job;

typedef int (*job_fn)(const bench_config *config, const bench_job *job, void *ctx);

static int excluded(const bench_config *config, const bench_job *job)
{
    char name[192];
    bench_key_name(&job->key, name, sizeof name);
    if (config->filter && regexec(config->filter, name, 0, NULL, 0) != 0)
        return 1;
    const char *solver = mbd_solver_name(job->variant->solver);
    const int dense = strcmp(solver, "dense") == 0, sparse = strcmp(solver, "sparse") == 0;
    /* a plugin's solver has no phases of its own and runs no friction (mbd_plugin.h); its
     * cost in N is unknown (pinocchio-crba's is cubic): it stops where dense does */
    const int plugin = mbd_solver_plugin_path(job->variant->solver) != NULL;
    if (plugin && (job->key.suite == SUITE_PHASES || strstr(job->family->spec, "friction=")))
        return 1;
    if (job->key.suite == SUITE_SCALING) /* the built-in O(N) solvers' linearity */
        return dense || sparse || plugin;
    if (job->key.suite == SUITE_ROBOTS) /* the libraries' common ground: qdd */
        return job->variant->form != MBD_ACCELERATION;
    return (dense || plugin || (sparse && job->family->chain)) && job->key.n > config->dense_max_n;
}

/* The instances of one (suite, family, variant, n): the phases, or the thread counts. */
static int visit_instances(const bench_config *config, bench_job *job, job_fn fn, void *ctx)
{
    const int count = job->key.suite == SUITE_PHASES  ? PHASE_COUNT
                      : job->key.suite == SUITE_BATCH ? config->threads.count
                                                      : 1;
    int failed = 0;
    for (int k = 0; k < count && !bench_stop; k++) {
        job->phase = (rk4_phase)k;
        job->key.phase = job->key.suite == SUITE_PHASES ? rk4_phase_name(job->phase) : NULL;
        job->key.threads = job->key.suite == SUITE_BATCH ? config->threads.value[k] : 1;
        if (!excluded(config, job))
            failed |= fn(config, job, ctx);
    }
    return failed;
}

/* Calls fn on every selected measurement of this rank, in the order of the table; stops
 * early on bench_stop. Returns the OR of fn's results. A batch's thread counts stay on one
 * rank, so that its efficiency has its one-thread time. */
static int for_each_job(const bench_config *config, job_fn fn, void *ctx)
{
    workload_variant variants[MAX_VARIANTS];
    int failed = 0, group = 0;
    for (int suite = 0; suite < SUITE_COUNT; suite++) {
        if (!(config->suites & SUITE_BIT(suite)))
            continue;
        const int derivatives = suite == SUITE_DERIVATIVES || suite == SUITE_ROBOT_DERIVATIVES;
        const int nvariants = suite == SUITE_BATCH ? workload_batch_variants(variants, MAX_VARIANTS)
                              : derivatives ? workload_derivative_variants(variants, MAX_VARIANTS)
                                            : workload_variants(variants, MAX_VARIANTS);
        const int robots = suite == SUITE_ROBOTS || suite == SUITE_ROBOT_DERIVATIVES;
        const int nfamilies = robots ? (config->robots ? config->robots->count : 0) : FAMILY_COUNT;
        for (int f = 0; f < nfamilies; f++) {
            const bench_family *family =
                robots ? bench_robot_family(config->robots, f) : &families[f];
            if (!(family->suites & SUITE_BIT(suite)))
                continue;
            const int count = family->fixed_n > 0 ? 1 : config->ns[suite].count;
            for (int v = 0; v < nvariants; v++)
                for (int i = 0; i < count && (suite != SUITE_LOOPS ||
                                              workload_variant_closes_loops(&variants[v]));
                     i++) {
                    if (group++ % config->ranks != config->rank)
                        continue;
                    bench_job job = {.variant = &variants[v], .family = family, .group = group - 1};
                    job.key.suite = (bench_suite)suite;
                    snprintf(job.key.variant, sizeof job.key.variant, "%s", variants[v].name);
                    job.key.family = family->name;
                    job.key.n = family->fixed_n > 0 ? family->fixed_n : config->ns[suite].value[i];
                    job.key.k = suite == SUITE_BATCH ? config->batch_k : 0;
                    failed |= visit_instances(config, &job, fn, ctx);
                }
        }
    }
    return failed;
}

json_t *bench_families_json(void)
{
    json_t *map = json_object();
    for (int f = 0; f < FAMILY_COUNT; f++)
        json_object_set_new(map, families[f].name, json_string(families[f].spec));
    return map;
}

static int count_job(const bench_config *config, const bench_job *job, void *ctx)
{
    (void)config, (void)job;
    ++*(int *)ctx;
    return 0;
}

/* Parallel efficiency T1 / (p Tp) against the one-thread run of the same batch. */
static void add_efficiency(bench_results *results, bench_record *record)
{
    bench_key one = record->key;
    one.threads = 1;
    const bench_record *base = bench_find(results, &one);
    if (!base)
        return;
    const double t1 = bench_time_stat(base, STAT_MEDIAN);
    double *efficiency = bench_add_counter(record, "efficiency");
    for (int r = 0; r < record->timing.repetitions; r++)
        efficiency[r] = t1 / (record->key.threads * bench_quoted_time(record, r));
}

static int measure(const bench_config *config, const bench_job *job, const workload *w,
                   timing_step step, timing_result *result)
{
    timing_options options = config->timing;
    options.cpu_clock =
        job->key.suite == SUITE_BATCH ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_THREAD_CPUTIME_ID;
    switch (job->key.suite) {
    case SUITE_PERCALL:
    case SUITE_SCALING:
    case SUITE_LOOPS:
    case SUITE_DERIVATIVES:
    case SUITE_ROBOTS:
    case SUITE_ROBOT_DERIVATIVES:
        return step(&options, workload_call_body, (void *)w, result);
    case SUITE_PHASES:
        return rk4_measure(w, job->phase, &options, step, result);
    case SUITE_BATCH:
        return step(&options, workload_batch_body, (void *)w, result);
    case SUITE_MACHINE: /* no measurement of its own: machine.c, into the context */
    case SUITE_COUNT:
        break;
    }
    return MBD_EINVAL;
}

#define FORWARD_CACHE 256

/* The time of one bodies forward call on a (family, n), for the derivatives suite. */
typedef struct {
    const bench_family *family;
    int n;
    double seconds;
} forward_time;

typedef struct {
    bench_results *results;
    int done, total;
    int pass; /* interleaved: the repetition that every measurement makes now; -1: all at once */
    forward_time forward[FORWARD_CACHE];
    int nforward;
} run_state;

/* On a terminal, the measurement under way on one rewritten line; in a log, one line
 * every PROGRESS_EVERY measurements. */
#define PROGRESS_EVERY 50

static void show_progress(const run_state *state, const bench_job *job)
{
    const int tty = isatty(STDERR_FILENO);
    if (!tty && state->done % PROGRESS_EVERY != 0)
        return;
    char name[192];
    bench_key_name(&job->key, name, sizeof name);
    fprintf(stderr, "%s[%d/%d] %s%s", tty ? "\r\033[K" : "", state->done + 1, state->total, name,
            tty ? "" : "\n");
    fflush(stderr);
}

/* States per iteration: the batch's K, one call, or none for a phase of a step. */
static int states_per_iteration(const bench_key *key)
{
    return key->suite == SUITE_BATCH ? key->k : key->suite == SUITE_PHASES ? 0 : 1;
}

static int is_derivatives(bench_suite suite)
{
    return suite == SUITE_DERIVATIVES || suite == SUITE_ROBOT_DERIVATIVES;
}

/* A derivatives row's cost as a multiple of one bodies forward call on its model, that
 * call's time, and (where the table has a reference method) the row's deviation from it. */
static void add_derivative_counters(bench_record *record)
{
    double *forward_ns = bench_add_counter(record, "forward_ns");
    double *x_forward = bench_add_counter(record, "x_forward");
    double *deviation = isnan(record->deviation) ? NULL : bench_add_counter(record, "max_rel_dev");
    for (int r = 0; r < record->timing.repetitions; r++) {
        forward_ns[r] = 1e9 * record->forward_seconds;
        x_forward[r] = bench_quoted_time(record, r) / record->forward_seconds;
        if (deviation)
            deviation[r] = record->deviation;
    }
}

/* The counters of a record whose repetitions are all in. */
static void count_record(bench_results *results, bench_record *record)
{
    bench_count(record);
    if (record->key.suite == SUITE_BATCH)
        add_efficiency(results, record);
    if (is_derivatives(record->key.suite))
        add_derivative_counters(record);
}

/* The method the derivatives suite measures every method's deviation from: the exact
 * derivative of the code (automatic), else the analytic one; NULL where neither is in the
 * table. */
static const mbd_derivatives_method *reference_method(void)
{
    const mbd_derivatives_method *automatic = mbd_derivatives_method_find("automatic");
    return automatic ? automatic : mbd_derivatives_method_find("analytic");
}

/* max |A - R| / max |R| over each of the three matrices, the largest of the three, at the
 * workload's first state; NAN without a reference method, or where either fails. */
static double derivative_deviation(const workload *w)
{
    const mbd_derivatives_method *reference = reference_method();
    const size_t nn = (size_t)mbd_model_nv(w->model) * (size_t)mbd_model_nv(w->model);
    double *ref = reference ? malloc(3 * nn * sizeof *ref) : NULL;
    if (!ref || workload_eval(w, w->works[0], 0) != MBD_OK ||
        mbd_forward_derivatives(w->model, w->works[0], w->q, w->v, w->tau, reference, ref, ref + nn,
                                ref + 2 * nn) != MBD_OK) {
        free(ref);
        return NAN;
    }
    double worst = 0.0;
    for (int m = 0; m < 3; m++) {
        double diff = 0.0, scale = 0.0;
        for (size_t k = m * nn; k < (m + 1) * nn; k++) {
            diff = fmax(diff, fabs(w->jacobians[k] - ref[k]));
            scale = fmax(scale, fabs(ref[k]));
        }
        worst = fmax(worst, scale > 0.0 ? diff / scale : diff);
    }
    free(ref);
    return worst;
}

/* The median cpu seconds of one bodies forward call on the job's model, measured once per
 * (family, n) and kept; NAN where it fails. */
static double forward_seconds(const bench_config *config, run_state *state, const bench_job *job,
                              const mbd_model *model)
{
    for (int k = 0; k < state->nforward; k++)
        if (state->forward[k].family == job->family && state->forward[k].n == job->key.n)
            return state->forward[k].seconds;
    const workload_variant bodies = {mbd_solver_find("bodies"), MBD_ACCELERATION, 1, "bodies",
                                     NULL};
    timing_options options = config->timing;
    options.cpu_clock = CLOCK_THREAD_CPUTIME_ID;
    workload w;
    timing_result result;
    double seconds = NAN;
    if (workload_init(&w, model, &bodies, WORKLOAD_CALL_STATES, 1, config->seed) == MBD_OK) {
        if (timing_measure(&options, workload_call_body, &w, &result) == MBD_OK)
            seconds = timing_statistic(STAT_MEDIAN, result.cpu, result.repetitions);
        workload_free(&w);
    }
    if (state->nforward < FORWARD_CACHE)
        state->forward[state->nforward++] = (forward_time){job->family, job->key.n, seconds};
    return seconds;
}

/* A new record; shown at once when its repetitions are all in (not interleaved). */
static int record_result(run_state *state, const bench_job *job, const mbd_model *model,
                         const timing_result *result, const double extras[2])
{
    bench_record *record = bench_add(state->results, &job->key, mbd_model_nbodies(model),
                                     mbd_model_nv(model), states_per_iteration(&job->key), result);
    if (!record)
        return MBD_ENOMEM;
    record->group = job->group;
    record->forward_seconds = extras[0];
    record->deviation = extras[1];
    if (state->pass >= 0)
        return MBD_OK;
    count_record(state->results, record);
    if (isatty(STDERR_FILENO))
        fprintf(stderr, "\r\033[K");
    bench_print_record(stdout, record);
    return MBD_OK;
}

/* The measurement's record in a pass after the first, or NULL where an earlier pass
 * failed (it has fewer repetitions than passes done). */
static bench_record *record_to_extend(const run_state *state, const bench_job *job)
{
    bench_record *record = bench_find(state->results, &job->key);
    return record && record->timing.repetitions == state->pass ? record : NULL;
}

/* The job's model from its family's spec (the body count in place of %d); NULL after a
 * message. */
static mbd_model *load_family(const bench_job *job)
{
    char spec[4096], err[MBD_ERROR_SIZE];
    if (job->family->fixed_n > 0)
        snprintf(spec, sizeof spec, "%s", job->family->spec);
    else
        snprintf(spec, sizeof spec, job->family->spec, job->key.n);
    mbd_model *model;
    if (mbd_model_load(spec, NULL, &model, err, sizeof err) != MBD_OK)
        fprintf(stderr, "mbd-bench: %s\n", err);
    return model;
}

/* A plugin's refusal of the model (one its library cannot take, or too large for it: the
 * plugin's stderr says why) leaves the measurement out of the run instead of failing it. */
static int plugin_refused(const bench_job *job, int status)
{
    const mbd_derivatives_method *method = job->variant->derivatives;
    const mbd_solver *method_plugin = method ? mbd_solver_find(mbd_derivatives_method_name(method))
                                             : NULL; /* a plugin's method has its solver's name */
    return (status == MBD_ELIMIT || status == MBD_EUNSUPPORTED) &&
           (mbd_solver_plugin_path(job->variant->solver) ||
            (method_plugin && mbd_solver_plugin_path(method_plugin)));
}

static int leave_out(bench_results *results, const char *name, int status)
{
    if (!results->left_out && !(results->left_out = json_array()))
        return MBD_ENOMEM;
    return json_array_append_new(results->left_out, json_pack("{s:s, s:s}", "name", name, "error",
                                                              mbd_strerror(status)))
               ? MBD_ENOMEM
               : MBD_OK;
}

/* All repetitions of a measurement (pass -1), or its first (pass 0: a new record), or one
 * more (later passes), each on a model and workload set up anew. */
static int run_job(const bench_config *config, const bench_job *job, void *ctx)
{
    run_state *state = ctx;
    bench_record *extend = state->pass > 0 ? record_to_extend(state, job) : NULL;
    if (state->pass > 0 && !extend) {
        state->done++;
        return 0;
    }
    show_progress(state, job);
    mbd_model *loaded = NULL;
    const mbd_model *model = job->family->model ? job->family->model : (loaded = load_family(job));
    if (!model)
        return 1;
    const int batch = job->key.suite == SUITE_BATCH;
    const int nstates = batch                            ? config->batch_k
                        : job->key.suite == SUITE_PHASES ? 1
                                                         : WORKLOAD_CALL_STATES;
    const timing_step step = state->pass < 0    ? timing_measure
                             : state->pass == 0 ? timing_calibrate
                                                : timing_rerun;
    workload w;
    timing_result result;
    double extras[2] = {NAN, NAN}; /* forward_seconds, deviation of a new derivatives row */
    int status = workload_init(&w, model, job->variant, nstates, job->key.threads, config->seed);
    if (status == MBD_OK) {
        w.threads = job->key.threads;
        status = measure(config, job, &w, step, extend ? &extend->timing : &result);
        if (status == MBD_OK && !extend && is_derivatives(job->key.suite))
            extras[1] = derivative_deviation(&w);
        workload_free(&w);
    }
    if (status == MBD_OK && !extend && is_derivatives(job->key.suite))
        extras[0] = forward_seconds(config, state, job, model);
    if (status == MBD_OK && !extend)
        status = record_result(state, job, model, &result, extras);
    const int refused = plugin_refused(job, status);
    if (status != MBD_OK) {
        char name[192];
        bench_key_name(&job->key, name, sizeof name);
        fprintf(stderr, "%smbd-bench: %s%s: %s\n", isatty(STDERR_FILENO) ? "\r\033[K" : "", name,
                refused ? " left out" : "", mbd_strerror(status));
        if (refused)
            status = leave_out(state->results, name, status);
    }
    state->done++;
    mbd_model_free(loaded);
    return status != MBD_OK;
}

/* Interleaved, repetition r of every measurement before repetition r + 1 of any (after
 * Google Benchmark's random interleaving, in a fixed order): a slow spell of the machine
 * then spreads over all measurements instead of taking every repetition of a few. The
 * table comes at the end. */
static int run_interleaved(const bench_config *config, run_state *state)
{
    int failed = 0;
    for (state->pass = 0; state->pass < config->timing.repetitions && !bench_stop; state->pass++)
        failed |= for_each_job(config, run_job, state);
    if (isatty(STDERR_FILENO))
        fprintf(stderr, "\r\033[K");
    bench_print_header(stdout);
    for (int k = 0; k < state->results->count; k++) {
        count_record(state->results, &state->results->records[k]);
        bench_print_record(stdout, &state->results->records[k]);
    }
    return failed;
}

int bench_run(const bench_config *config, bench_results *results)
{
    run_state state = {.results = results, .pass = config->interleave ? 0 : -1};
    for_each_job(config, count_job, &state.total);
    if (config->interleave) {
        fprintf(stderr, "%d measurements, their %d repetitions interleaved\n", state.total,
                config->timing.repetitions);
        state.total *= config->timing.repetitions;
        return run_interleaved(config, &state);
    }
    fprintf(stderr, "%d measurements\n", state.total);
    bench_print_header(stdout);
    return for_each_job(config, run_job, &state);
}
