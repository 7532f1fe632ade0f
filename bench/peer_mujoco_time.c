/* peer_mujoco_time.c: peer-mujoco time MODEL..., per call, with bench/'s timing core: our
 * solver variants and MuJoCo's forward-dynamics path (see peer_mujoco.c for the options). */
#include "peer_mujoco.h"

#include "context.h"
#include "harness.h"

#include "../src/cli.h"
#include "../src/workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TIME_CMD "peer-mujoco time" /* messages read "mbd peer-mujoco time: ..." */

#define MUJOCO_PATH "mujoco"
#define MUJOCO_FACTOR_SOLVE "mujoco-factor-solve"

/* What the MuJoCo timing bodies cycle through: the states of an mbd workload. */
typedef struct {
    peer *p;
    const workload *w;
} mujoco_timing;

static int time_forward_path(void *ctx, long iterations)
{
    const mujoco_timing *t = ctx;
    const int nq = t->p->nq, nv = t->p->nv;
    for (long i = 0; i < iterations; i++) {
        const size_t s = (size_t)(i % t->w->nstates);
        peer_set_state(t->p, t->w->model, t->w->q + s * nq, t->w->v + s * nv, t->w->tau + s * nv);
        peer_forward_path(t->p);
        timing_clobber();
    }
    return 0;
}

/* The factorization does not depend on the values (no pivoting): one state serves. */
static int time_factor_solve(void *ctx, long iterations)
{
    const mujoco_timing *t = ctx;
    for (long i = 0; i < iterations; i++) {
        mj_factorM(t->p->m, t->p->d);
        mj_solveM(t->p->m, t->p->d, t->p->d->qacc, t->p->force, 1);
        timing_clobber();
    }
    return 0;
}

typedef struct {
    timing_options options;
    int dense_max_n;
    bench_results results;
    char (*families)[64]; /* one per model: the records' keys point here */
} time_run;

/* The family a MODEL argument names: FAMILY=MODEL gives it; else the model's name without
 * its body count ("chain-cardan-50" -> "chain-cardan"). Returns the MODEL part. */
static const char *family_of(const char *arg, const mbd_model *model, char *out, size_t size)
{
    const size_t label = strcspn(arg, "=:/");
    if (arg[label] == '=') { /* a spec's first '=' comes after its ':' */
        snprintf(out, size, "%.*s", (int)label, arg);
        return arg + label + 1;
    }
    if (!model)
        return arg;
    char count[16];
    snprintf(count, sizeof count, "%d", mbd_model_nbodies(model));
    size_t used = 0;
    out[0] = '\0';
    for (const char *token = mbd_model_name(model); *token;) {
        const size_t len = strcspn(token, "-");
        if (!(len == strlen(count) && strncmp(token, count, len) == 0) && used + len + 2 < size)
            used += (size_t)snprintf(out + used, size - used, "%s%.*s", used ? "-" : "", (int)len,
                                     token);
        token += len + (token[len] == '-');
    }
    return arg;
}

static int add_record(time_run *run, bench_key *key, const char *variant, const mbd_model *model,
                      const timing_result *timing)
{
    snprintf(key->variant, sizeof key->variant, "%s", variant);
    bench_record *record =
        bench_add(&run->results, key, mbd_model_nbodies(model), mbd_model_nv(model), 0, timing);
    if (!record)
        return cli_fail(TIME_CMD, "results", MBD_ENOMEM);
    bench_print_record(stdout, record);
    return 0;
}

/* One variant of ours on the workload's states; keeps the first acceleration workload in
 * *states (every variant drew the same q, qd, tau from the same seed) for MuJoCo. */
static int time_variant(time_run *run, bench_key *key, const mbd_model *model,
                        const workload_variant *variant, workload *states)
{
    workload w;
    timing_result timing;
    int status = workload_init(&w, model, variant, WORKLOAD_CALL_STATES, 1, DEFAULT_SEED);
    if (status == MBD_OK)
        status = timing_measure(&run->options, workload_call_body, &w, &timing);
    int rc = status == MBD_OK ? add_record(run, key, variant->name, model, &timing)
                              : cli_fail(TIME_CMD, variant->name, status);
    if (!states->model && variant->form == MBD_ACCELERATION)
        *states = w;
    else if (w.model)
        workload_free(&w);
    return rc;
}

/* Our variants (dense only up to dense_max_n), then MuJoCo's path and factor + solve. */
static int time_model(time_run *run, const mbd_model *model, const char *family, peer *p)
{
    workload_variant variants[MAX_VARIANTS];
    const int count = workload_variants(variants, MAX_VARIANTS);
    const int n = mbd_model_nbodies(model);
    bench_key key = {.suite = SUITE_PERCALL, .family = family, .n = n, .threads = 1};
    workload states = {0};
    int rc = 0;
    for (int k = 0; k < count && !rc && !bench_stop; k++)
        if (strcmp(mbd_solver_name(variants[k].solver), "dense") != 0 || n <= run->dense_max_n)
            rc = time_variant(run, &key, model, &variants[k], &states);
    if (!rc && !states.model) /* MuJoCo's states come from an acceleration workload */
        rc = cli_fail(TIME_CMD, "no acceleration solver timed", MBD_EUNSUPPORTED);
    mujoco_timing t = {p, &states};
    timing_result timing;
    if (!rc && !bench_stop) {
        timing_measure(&run->options, time_forward_path, &t, &timing);
        rc = add_record(run, &key, MUJOCO_PATH, model, &timing);
    }
    if (!rc && !bench_stop) { /* the path left M and the force of a state behind */
        timing_measure(&run->options, time_factor_solve, &t, &timing);
        rc = add_record(run, &key, MUJOCO_FACTOR_SOLVE, model, &timing);
    }
    if (states.model)
        workload_free(&states);
    return rc;
}

/* " x", or " NaN" for a quantity not measured. */
static void put(FILE *out, double x)
{
    if (isfinite(x))
        fprintf(out, " %.6g", x);
    else
        fputs(" NaN", out);
}

static double median_ns(const bench_results *results, const bench_key *key, const char *variant)
{
    bench_key other = *key;
    snprintf(other.variant, sizeof other.variant, "%s", variant);
    const bench_record *record = bench_find(results, &other);
    return record ? 1e9 * bench_time_stat(record, STAT_MEDIAN) : NAN;
}

/* The rows of percall.dat (bench/dat.c) for our variants, each followed by MuJoCo's two
 * times on the same model, so that a chart or table divides within a row. */
static int write_dat(FILE *out, void *ctx)
{
    const bench_results *results = ctx;
    fprintf(out, "# family variant n bodies dofs median_ns cv mujoco_ns mujoco_factor_solve_ns\n");
    for (int k = 0; k < results->count; k++) {
        const bench_record *r = &results->records[k];
        if (strncmp(r->key.variant, MUJOCO_PATH, strlen(MUJOCO_PATH)) == 0)
            continue;
        fprintf(out, "%s %s %d %d %d %.6g %.4f", r->key.family, r->key.variant, r->key.n, r->bodies,
                r->dofs, 1e9 * bench_time_stat(r, STAT_MEDIAN),
                timing_statistic(STAT_CV, r->timing.real, r->timing.repetitions));
        put(out, median_ns(results, &r->key, MUJOCO_PATH));
        put(out, median_ns(results, &r->key, MUJOCO_FACTOR_SOLVE));
        fputc('\n', out);
    }
    return ferror(out);
}

/* Times every model argument; stops early (keeping what finished) on SIGINT/SIGTERM. */
static int time_models(time_run *run, const char **args, int nargs)
{
    int rc = 0;
    bench_print_header(stdout);
    for (int s = 0; s < nargs && !rc && !bench_stop; s++) {
        const char *spec = family_of(args[s], NULL, run->families[s], sizeof run->families[s]);
        mbd_model *model = cli_load_model(TIME_CMD, spec, NULL);
        peer p;
        char err[1024];
        if (!model)
            return CLI_USAGE_ERROR;
        if (spec == args[s])
            family_of(args[s], model, run->families[s], sizeof run->families[s]);
        if (peer_open(model, NULL, &p, err, sizeof err) < 0) {
            fprintf(stderr, "mbd %s: %s: %s\n", TIME_CMD, spec, err);
            rc = CLI_RUNTIME_ERROR;
        } else {
            rc = time_model(run, model, run->families[s], &p);
            peer_close(&p);
        }
        mbd_model_free(model);
    }
    return rc;
}

/* bench/context.c's context plus this run's settings. */
static json_t *run_context(const char *executable, const time_run *run, int blas_default)
{
    json_t *context = bench_context_collect(executable);
    json_object_update_new(
        context,
        json_pack(
            "{s:s, s:f, s:i, s:i, s:i, s:i, s:s}", "mujoco_version", mj_versionString(), "min_time",
            run->options.min_time, "repetitions", run->options.repetitions, "dense_max_n",
            run->dense_max_n, "openblas_threads", openblas_get_num_threads(),
            "openblas_threads_default", blas_default, "mujoco_note",
            "mujoco: mj_kinematics, mj_comPos, mj_crb, mj_factorM, mj_comVel, mj_rne, mj_solveM "
            "(what mj_forward does with only rigid-body dynamics enabled); mujoco-factor-solve: "
            "mj_factorM + mj_solveM alone"));
    return context;
}

static int run_time(time_run *run, const char **args, int nargs, const char *json_path,
                    const char *dat_path, const char *executable)
{
    const int blas_default = openblas_get_num_threads();
    openblas_set_num_threads(1); /* MuJoCo computes on one thread: so does dense here */
    json_t *context = run_context(executable, run, blas_default);
    bench_context_print(context, stderr);
    int rc = time_models(run, args, nargs);
    json_object_set_new(context, "partial", json_boolean(bench_stop));
    if ((!rc || bench_stop) && json_path)
        rc = bench_write_json(&run->results, context, json_path);
    if ((!rc || bench_stop) && dat_path)
        rc = cli_write_atomic(TIME_CMD, dat_path, write_dat, &run->results);
    json_decref(context);
    return rc ? rc : bench_stop ? 128 + bench_stop : 0;
}

/* --min-time, --repetitions, --dense-max-n; times per thread: every timed call runs on one. */
static int time_options(const cli_flag *flags, time_run *run)
{
    double repetitions, dense_max_n;
    int rc = cli_number(TIME_CMD, flags, "--min-time", 1e-3, 60, 0.1, &run->options.min_time);
    if (!rc)
        rc = cli_number(TIME_CMD, flags, "--repetitions", 1, TIMING_MAX_REPETITIONS, 5,
                        &repetitions);
    if (!rc)
        rc = cli_number(TIME_CMD, flags, "--dense-max-n", 0, 1e6, 300, &dense_max_n);
    run->options.repetitions = rc ? 0 : (int)repetitions;
    run->options.cpu_clock = CLOCK_THREAD_CPUTIME_ID;
    run->dense_max_n = rc ? 0 : (int)dense_max_n;
    return rc;
}

int peer_time_main(int argc, char **argv)
{
    cli_flag flags[] = {{"--min-time", NULL, 0},    {"--repetitions", NULL, 0},
                        {"--dense-max-n", NULL, 0}, {"--json", NULL, 0},
                        {"--dat", NULL, 0},         {NULL, NULL, 0}};
    const char **args = malloc((size_t)argc * sizeof *args);
    time_run run = {0};
    int nargs = 0, rc = args ? cli_parse(TIME_CMD, argc, argv, 2, flags, args, argc, &nargs)
                             : cli_fail(TIME_CMD, "arguments", MBD_ENOMEM);
    if (!rc && nargs == 0)
        rc = peer_usage();
    if (!rc)
        rc = time_options(flags, &run);
    /* the outputs checked before the run, as mbd-bench's */
    if (!rc && cli_get(flags, "--json"))
        rc = bench_check_json_paths(cli_get(flags, "--json"));
    if (!rc && cli_get(flags, "--dat"))
        rc = cli_check_output(TIME_CMD, cli_get(flags, "--dat")); /* a file, written whole */
    if (!rc && !(run.families = calloc((size_t)nargs, sizeof *run.families)))
        rc = cli_fail(TIME_CMD, "arguments", MBD_ENOMEM);
    if (!rc)
        rc =
            run_time(&run, args, nargs, cli_get(flags, "--json"), cli_get(flags, "--dat"), argv[0]);
    bench_results_free(&run.results);
    free(run.families);
    free(args);
    return rc;
}
