/* cmd_recommend.c: mbd recommend, which times every applicable solver on the user's model
 * on this machine with mbd-bench's timing core (src/timing.c, src/workload.c) and
 * ranks them: one call on one thread, or with --batch K, K states per OpenMP batch on all
 * threads. A few seconds at most: each solver gets at most RECOMMEND_BUDGET seconds, its
 * repetitions interleaved with the others'. With --derivatives it ranks the methods of the
 * derivatives' table (mbd_forward_derivatives) in the same way, one call at a time. */
#include "cli.h"

#include "timing.h"
#include "workload.h"

#include <jansson.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define RECOMMEND_MIN_TIME 0.02
#define RECOMMEND_REPETITIONS 5
#define RECOMMEND_BUDGET 1.0
/* closer than 5% is within the noise of such timings on a quiet machine; on a busy one,
 * closer than the two solvers' cv added (recommend_noise) */
#define RECOMMEND_NOISE 1.05
#define MAX_VARIANTS 64

typedef struct {
    workload_variant variant;
    timing_result timing;
    double seconds; /* median per state */
    double cv;
} ranked;

typedef struct {
    const mbd_model *model;
    unsigned forms; /* formulations asked for */
    int batch;      /* states per batch; 0: one call */
    int threads;
    int derivatives; /* rank the derivatives' methods, not the solvers */
    ranked rows[MAX_VARIANTS];
    int count;
    char advice[512];
} recommendation;

static const char *form_name(mbd_formulation form)
{
    return form == MBD_MOMENTUM ? "momentum" : "acceleration";
}

static int parse_forms(const char *cmd, const cli_flag *flags, unsigned *forms)
{
    const char *name = cli_get(flags, "--formulation");
    *forms = MBD_ACCELERATION | MBD_MOMENTUM;
    if (!name)
        return 0;
    if (strcmp(name, "acceleration") == 0 || strcmp(name, "momentum") == 0) {
        *forms = name[0] == 'a' ? MBD_ACCELERATION : MBD_MOMENTUM;
        return 0;
    }
    fprintf(stderr, "mbd %s: --formulation: expected acceleration or momentum, got '%.60s'\n", cmd,
            name);
    return CLI_USAGE_ERROR;
}

/* One repetition of a variant by step (timing_calibrate, then timing_rerun), on a
 * workload set up anew; 0 or a status. */
static int time_once(const recommendation *rec, ranked *row, timing_step step)
{
    workload w;
    const int nstates = rec->batch ? rec->batch : WORKLOAD_CALL_STATES;
    int status = workload_init(&w, rec->model, &row->variant, nstates, rec->threads, 1);
    if (status)
        return status;
    w.threads = rec->threads;
    const timing_options options = {RECOMMEND_MIN_TIME, RECOMMEND_REPETITIONS, RECOMMEND_BUDGET,
                                    rec->batch ? CLOCK_PROCESS_CPUTIME_ID
                                               : CLOCK_THREAD_CPUTIME_ID};
    status =
        step(&options, rec->batch ? workload_batch_body : workload_call_body, &w, &row->timing);
    workload_free(&w);
    return status;
}

/* Median seconds per state and cv, as mbd-bench quotes them: a batch by real time, one
 * call by the thread's cpu time, which other load on the machine does not inflate. */
static void summarize(const recommendation *rec, ranked *row)
{
    const timing_result *t = &row->timing;
    const double *quoted = rec->batch ? t->real : t->cpu;
    row->seconds =
        timing_statistic(STAT_MEDIAN, quoted, t->repetitions) / (rec->batch ? rec->batch : 1);
    row->cv = timing_statistic(STAT_CV, quoted, t->repetitions);
}

static int by_time(const void *a, const void *b)
{
    const double ta = ((const ranked *)a)->seconds, tb = ((const ranked *)b)->seconds;
    return (ta > tb) - (ta < tb);
}

static void leave_out(const char *cmd, const ranked *row, int status)
{
    fprintf(stderr, "mbd %s: %s: %s (left out)\n", cmd, row->variant.name, mbd_strerror(status));
}

/* The first repetition of every variant asked for, in rec->rows; one that fails is
 * reported and left out. */
static void calibrate_variants(const char *cmd, recommendation *rec)
{
    workload_variant variants[MAX_VARIANTS];
    const int count = rec->derivatives ? workload_derivative_variants(variants, MAX_VARIANTS)
                      : rec->batch     ? workload_batch_variants(variants, MAX_VARIANTS)
                                       : workload_variants(variants, MAX_VARIANTS);
    for (int k = 0; k < count; k++) {
        if (!(variants[k].form & rec->forms) ||
            (mbd_model_nloops(rec->model) > 0 && !workload_variant_closes_loops(&variants[k])))
            continue;
        ranked *row = &rec->rows[rec->count];
        row->variant = variants[k];
        const int status = time_once(rec, row, timing_calibrate);
        if (status == MBD_OK)
            rec->count++;
        else
            leave_out(cmd, row, status);
    }
}

/* Times every variant asked for, the repetitions interleaved as mbd-bench --interleave
 * makes them (the second of every variant after the first of all, ...: a slow spell of
 * the machine cannot reorder the ranking), each variant's within RECOMMEND_BUDGET
 * seconds; ranks them by median. */
static int rank_variants(const char *cmd, recommendation *rec)
{
    calibrate_variants(cmd, rec);
    for (int pass = 1; pass < RECOMMEND_REPETITIONS; pass++)
        for (int k = 0; k < rec->count; k++) {
            ranked *row = &rec->rows[k];
            if (row->timing.spent >= RECOMMEND_BUDGET)
                continue;
            const int status = time_once(rec, row, timing_rerun);
            if (status != MBD_OK) { /* rare: its first repetition ran */
                leave_out(cmd, row, status);
                rec->rows[k--] = rec->rows[--rec->count];
            }
        }
    for (int k = 0; k < rec->count; k++)
        summarize(rec, &rec->rows[k]);
    qsort(rec->rows, (size_t)rec->count, sizeof rec->rows[0], by_time);
    if (rec->count > 0)
        return 0;
    fprintf(stderr, "mbd %s: no %s could be timed on this model\n", cmd,
            rec->derivatives ? "method" : "solver");
    return CLI_RUNTIME_ERROR;
}

/* The ratio of two solvers' medians under which they are not told apart: RECOMMEND_NOISE,
 * or more where their repetitions spread more (a busy machine: mbd-bench's cv). */
static double recommend_noise(const ranked *a, const ranked *b)
{
    return fmax(RECOMMEND_NOISE, 1 + a->cv + b->cv);
}

static void write_advice(recommendation *rec)
{
    const ranked *best = &rec->rows[0];
    char where[96];
    if (rec->batch)
        snprintf(where, sizeof where, "for batches of %d states on %d threads", rec->batch,
                 rec->threads);
    else
        snprintf(where, sizeof where, "for one call at a time");
    if (rec->count == 1) {
        snprintf(rec->advice, sizeof rec->advice, "Use %s (%s form): it is the only %s.",
                 best->variant.name, form_name(best->variant.form),
                 rec->derivatives ? "method of derivatives"
                                  : "solver that offers this formulation");
        return;
    }
    const ranked *next = &rec->rows[1];
    const double ratio = next->seconds / best->seconds, noise = recommend_noise(best, next);
    if (ratio < noise)
        snprintf(rec->advice, sizeof rec->advice,
                 "%s and %s are within %.0f%% of each other %s "
                 "on this model, inside the noise of these timings (cv %.1f%% and %.1f%%): either "
                 "will do, so choose by formulation%s.",
                 best->variant.name, next->variant.name, 100 * (ratio - 1), where, 100 * best->cv,
                 100 * next->cv,
                 noise > RECOMMEND_NOISE ? ", or run again on a quieter machine" : "");
    else
        snprintf(rec->advice, sizeof rec->advice,
                 "Use %s (%s form) %s on this model: it is %.2fx "
                 "faster than the runner-up, %s.",
                 best->variant.name, form_name(best->variant.form), where, ratio,
                 next->variant.name);
}

static void print_table(const recommendation *rec)
{
    printf("%s: %d bodies, %d dofs; %s, median of up to %d repetitions\n\n",
           mbd_model_name(rec->model), mbd_model_nbodies(rec->model), mbd_model_nv(rec->model),
           rec->batch ? "real time per state in OpenMP batches" : "cpu time per call on one thread",
           RECOMMEND_REPETITIONS);
    printf("rank  %-18s %-13s %15s %13s %10s %7s\n", rec->derivatives ? "method" : "solver",
           "formulation", "median", "ns per body", "x fastest", "cv");
    for (int k = 0; k < rec->count; k++) {
        const ranked *row = &rec->rows[k];
        char text[32];
        timing_format(text, sizeof text, row->seconds);
        printf("%4d  %-18s %-13s %s %13.1f %10.2f %6.1f%%\n", k + 1, row->variant.name,
               form_name(row->variant.form), text,
               1e9 * row->seconds / mbd_model_nbodies(rec->model),
               row->seconds / rec->rows[0].seconds, 100 * row->cv);
    }
    printf("\n%s\n", rec->advice);
}

static void print_json(const recommendation *rec)
{
    json_t *ranking = json_array();
    for (int k = 0; k < rec->count; k++) {
        const ranked *row = &rec->rows[k];
        const int lanes = row->variant.lanes
                              ? row->variant.lanes
                              : mbd_solver_lanes(row->variant.solver, row->variant.form);
        json_array_append_new(
            ranking, json_pack("{s:s, s:s, s:s, s:i, s:f, s:f, s:f}", "solver",
                               mbd_solver_name(row->variant.solver), "variant", row->variant.name,
                               "formulation", form_name(row->variant.form), "lanes", lanes,
                               "median_ns", 1e9 * row->seconds, "cv", row->cv, "ratio_to_fastest",
                               row->seconds / rec->rows[0].seconds));
    }
    json_t *root =
        json_pack("{s:s, s:i, s:i, s:i, s:i, s:b, s:o, s:s}", "model", mbd_model_name(rec->model),
                  "bodies", mbd_model_nbodies(rec->model), "dofs", mbd_model_nv(rec->model),
                  "batch", rec->batch, "threads", rec->threads, "derivatives", rec->derivatives,
                  "ranking", ranking, "advice", rec->advice);
    json_dumpf(root, stdout, JSON_INDENT(2));
    putchar('\n');
    json_decref(root);
}

int cmd_recommend(const char *cmd, int argc, char **argv)
{
    cli_flag flags[] = {{"--formulation", NULL, 0}, {"--batch", NULL, 0}, {"--json", NULL, 1},
                        {"--derivatives", NULL, 1}, CLI_FLOATING_BASE,    {NULL, NULL, 0}};
    const char *pos[1];
    recommendation rec = {0};
    double batch;
    int npos, rc = cli_parse(cmd, argc, argv, 2, flags, pos, 1, &npos);
    if (!rc && npos != 1) {
        fprintf(stderr, "mbd %s: missing MODEL (a model file or a generator spec)\n", cmd);
        rc = CLI_USAGE_ERROR;
    }
    if (rc || (rc = parse_forms(cmd, flags, &rec.forms)) ||
        (rc = cli_number(cmd, flags, "--batch", 1, 1 << 24, 0, &batch)))
        return rc;
    rec.derivatives = cli_get(flags, "--derivatives") != NULL;
    if (rec.derivatives && (cli_get(flags, "--batch") || cli_get(flags, "--formulation"))) {
        fprintf(stderr,
                "mbd %s: --derivatives: ranks one call of each method, without --batch "
                "or --formulation\n",
                cmd);
        return CLI_USAGE_ERROR;
    }
    if (batch != floor(batch)) {
        fprintf(stderr, "mbd %s: --batch: expected a whole number of states, got %g\n", cmd, batch);
        return CLI_USAGE_ERROR;
    }
    mbd_model *model = cli_load_model(cmd, pos[0], flags);
    if (!model)
        return CLI_USAGE_ERROR;
    if (rec.derivatives && cli_check_derivatives_model(cmd, model)) {
        mbd_model_free(model);
        return CLI_USAGE_ERROR;
    }
    rec.model = model;
    rec.batch = (int)batch;
    rec.threads = rec.batch ? omp_get_max_threads() : 1;
    if (rec.batch) /* one LAPACK thread per batch thread, as mbd-bench's batches */
        openblas_set_num_threads(1);
    rc = rank_variants(cmd, &rec);
    if (!rc) {
        write_advice(&rec);
        (cli_get(flags, "--json") ? print_json : print_table)(&rec);
    }
    mbd_model_free(model);
    return rc;
}
