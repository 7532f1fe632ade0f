/* compare.c: two runs in Google Benchmark's JSON schema, row by row. A row is a run_name;
 * its median and relative spread come from the run's "median" and "cv" aggregates where
 * present, else from its iteration rows. Times as the report quotes them: real time for
 * batches (rows named batch_..., throughput is wall-clock), cpu time for the rest. */
#include "compare.h"

#include "../src/cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CMD "bench compare"
#define NOISE_FLOOR 0.02 /* medians within 2 % are alike, however steady both runs */
#define NOISE_SIGMAS 3.0 /* and within three combined relative spreads */

static const char usage[] =
    "usage: mbd-bench compare A.json B.json [--html OUT.html] [--fail-on-slower]\n"
    "  One line per row present in both runs: its name, A's and B's median, B's over A's,\n"
    "  and a verdict: faster or slower where the medians differ by more than the larger of\n"
    "  2 % and three times the runs' combined relative spread (sqrt(cv_A^2 + cv_B^2)), else\n"
    "  within noise. Then the rows found in one run only and a summary line.\n"
    "  --html OUT.html     also write the comparison as a self-contained page\n"
    "  --fail-on-slower    exit 1 when any row is slower (else 0 whatever the verdicts)\n"
    "Bad input (not Google Benchmark JSON, no row in common) exits 2.\n";

compare_verdict compare_judge(double ratio, double cv_a, double cv_b, double *threshold)
{
    *threshold = fmax(NOISE_FLOOR, NOISE_SIGMAS * sqrt(cv_a * cv_a + cv_b * cv_b));
    if (fabs(ratio - 1) <= *threshold)
        return VERDICT_NOISE;
    return ratio < 1 ? VERDICT_FASTER : VERDICT_SLOWER;
}

const char *compare_verdict_name(compare_verdict verdict)
{
    static const char *const names[] = {"faster", "slower", "within noise"};
    return names[verdict];
}

/* ---- reading a run ---------------------------------------------------------------- */

typedef enum { SAMPLE_ITERATION, SAMPLE_MEDIAN, SAMPLE_CV } sample_kind;

typedef struct {
    const char *name;
    size_t order;
    sample_kind kind;
    double value;
} sample;

static int by_name_then_order(const void *x, const void *y)
{
    const sample *a = x, *b = y;
    const int c = strcmp(a->name, b->name);
    return c ? c : (a->order > b->order) - (a->order < b->order);
}

static double unit_in_ns(const char *unit)
{
    static const struct {
        const char *name;
        double ns;
    } units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
    for (size_t k = 0; k < sizeof units / sizeof *units; k++)
        if (strcmp(unit, units[k].name) == 0)
            return units[k].ns;
    return 0;
}

/* The row's time field, as the report quotes it; the other one where it is missing. */
static const json_t *time_field(const json_t *row, const char *name)
{
    const char *first = strncmp(name, "batch_", 6) == 0 ? "real_time" : "cpu_time";
    const json_t *value = json_object_get(row, first);
    return json_is_number(value)
               ? value
               : json_object_get(row, strcmp(first, "cpu_time") ? "cpu_time" : "real_time");
}

/* Row k of the benchmarks array as a sample; 0 and *use = 0 for rows that carry no time
 * (errors, other aggregates), CLI_USAGE_ERROR for a row that is malformed. */
static int read_sample(const json_t *row, size_t k, const char *label, sample *s, int *use,
                       char *err, size_t err_size)
{
    *use = 0;
    const char *name = json_string_value(json_object_get(row, "run_name"));
    if (!name)
        name = json_string_value(json_object_get(row, "name"));
    if (!json_is_object(row) || !name) {
        snprintf(err, err_size, "%s: benchmarks[%zu]: not a row with a \"name\"", label, k);
        return CLI_USAGE_ERROR;
    }
    const char *type = json_string_value(json_object_get(row, "run_type"));
    const char *aggregate = json_string_value(json_object_get(row, "aggregate_name"));
    *s = (sample){name, k, SAMPLE_ITERATION, 0};
    if (type && strcmp(type, "aggregate") == 0) {
        if (!aggregate || (strcmp(aggregate, "median") && strcmp(aggregate, "cv")))
            return 0;
        s->kind = strcmp(aggregate, "cv") ? SAMPLE_MEDIAN : SAMPLE_CV;
    }
    const json_t *time = time_field(row, name);
    if (!json_is_number(time) || json_is_true(json_object_get(row, "error_occurred")))
        return 0;
    const char *unit = json_string_value(json_object_get(row, "time_unit"));
    const double scale = s->kind == SAMPLE_CV ? 1 : unit ? unit_in_ns(unit) : 1;
    if (scale == 0) {
        snprintf(err, err_size,
                 "%s: benchmarks[%zu] (%.80s): time_unit '%.20s' is none of ns, us, ms, s", label,
                 k, name, unit);
        return CLI_USAGE_ERROR;
    }
    s->value = scale * json_number_value(time);
    *use = isfinite(s->value) && (s->kind == SAMPLE_CV ? s->value >= 0 : s->value > 0);
    return 0;
}

static int by_value(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The median and the relative sample standard deviation of n > 0 values (sorted here). */
static void median_and_cv(double *x, size_t n, double *median, double *cv)
{
    qsort(x, n, sizeof *x, by_value);
    *median = n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
    double mean = 0, sum2 = 0;
    for (size_t k = 0; k < n; k++)
        mean += x[k] / (double)n;
    for (size_t k = 0; k < n; k++)
        sum2 += (x[k] - mean) * (x[k] - mean);
    *cv = n > 1 ? sqrt(sum2 / (double)(n - 1)) / mean : 0;
}

/* One row from the samples s[0..n) of one name; 0 when they hold no time. The iteration
 * values are gathered in scratch. */
static int make_row(const sample *s, size_t n, double *scratch, compare_row *row)
{
    size_t iterations = 0;
    double median = NAN, cv = NAN;
    for (size_t k = 0; k < n; k++) {
        if (s[k].kind == SAMPLE_ITERATION)
            scratch[iterations++] = s[k].value;
        else if (s[k].kind == SAMPLE_MEDIAN)
            median = s[k].value;
        else
            cv = s[k].value;
    }
    double own_median = NAN, own_cv = 0;
    if (iterations)
        median_and_cv(scratch, iterations, &own_median, &own_cv);
    row->median = isnan(median) ? own_median : median;
    row->cv = isnan(cv) ? own_cv : cv;
    row->name = NULL;
    return !isnan(row->median);
}

/* A row and the index of its name's first row in the file. */
typedef struct {
    size_t order;
    compare_row row;
} ordered_row;

static int by_order(const void *x, const void *y)
{
    const size_t a = ((const ordered_row *)x)->order, b = ((const ordered_row *)y)->order;
    return (a > b) - (a < b);
}

/* Groups the samples by name into run->rows, in the order of each name's first row. */
static int group_rows(sample *samples, size_t n, compare_run *run)
{
    qsort(samples, n, sizeof *samples, by_name_then_order);
    ordered_row *rows = malloc((n ? n : 1) * sizeof *rows);
    double *scratch = malloc((n ? n : 1) * sizeof *scratch);
    run->rows = malloc((n ? n : 1) * sizeof *run->rows);
    int ok = rows && scratch && run->rows;
    size_t count = 0;
    for (size_t k = 0, end; ok && k < n; k = end) {
        for (end = k + 1; end < n && strcmp(samples[end].name, samples[k].name) == 0; end++)
            ;
        if (make_row(samples + k, end - k, scratch, &rows[count].row)) {
            ok = (rows[count].row.name = strdup(samples[k].name)) != NULL;
            rows[count].order = samples[k].order;
            count += ok;
        }
    }
    if (ok)
        qsort(rows, count, sizeof *rows, by_order);
    for (size_t k = 0; k < count; k++)
        run->rows[k] = rows[k].row; /* on failure too, so that compare_run_free frees the names */
    run->count = count;
    free(rows);
    free(scratch);
    return ok ? 0 : CLI_RUNTIME_ERROR;
}

int compare_read_run(const json_t *root, const char *label, compare_run *run, char *err,
                     size_t err_size)
{
    *run = (compare_run){label, NULL, 0};
    const json_t *rows = json_object_get(root, "benchmarks");
    if (!json_is_array(rows)) {
        snprintf(err, err_size, "%s: not Google Benchmark JSON (no \"benchmarks\" array)", label);
        return CLI_USAGE_ERROR;
    }
    const size_t n = json_array_size(rows);
    sample *samples = malloc((n ? n : 1) * sizeof *samples);
    if (!samples) {
        snprintf(err, err_size, "%s: out of memory", label);
        return CLI_RUNTIME_ERROR;
    }
    size_t used = 0;
    int rc = 0;
    for (size_t k = 0; k < n && !rc; k++) {
        int use;
        rc = read_sample(json_array_get(rows, k), k, label, &samples[used], &use, err, err_size);
        used += use;
    }
    if (!rc && (rc = group_rows(samples, used, run)))
        snprintf(err, err_size, "%s: out of memory", label);
    free(samples);
    return rc;
}

/* ---- pairing ------------------------------------------------------------------------ */

static int by_row_name(const void *x, const void *y)
{
    return strcmp((*(const compare_row *const *)x)->name, (*(const compare_row *const *)y)->name);
}

/* The rows of run, sorted by name, for bsearch. */
static const compare_row **sorted_by_name(const compare_run *run)
{
    const compare_row **sorted = malloc((run->count ? run->count : 1) * sizeof *sorted);
    if (!sorted)
        return NULL;
    for (size_t k = 0; k < run->count; k++)
        sorted[k] = &run->rows[k];
    qsort(sorted, run->count, sizeof *sorted, by_row_name);
    return sorted;
}

static const compare_row *find_row(const compare_row **sorted, size_t n, const compare_row *key)
{
    const compare_row **found = bsearch(&key, sorted, n, sizeof *sorted, by_row_name);
    return found ? *found : NULL;
}

/* The rows of from that other lacks, into *only. */
static size_t rows_missing(const compare_run *from, const compare_row **other, size_t nother,
                           const compare_row **only)
{
    size_t n = 0;
    for (size_t k = 0; k < from->count; k++)
        if (!find_row(other, nother, &from->rows[k]))
            only[n++] = &from->rows[k];
    return n;
}

static void pair_rows(compare_result *r, const compare_row **sorted_b)
{
    double log_sum = 0;
    for (size_t k = 0; k < r->a.count; k++) {
        const compare_row *b = find_row(sorted_b, r->b.count, &r->a.rows[k]);
        if (!b)
            continue;
        compare_pair *p = &r->pairs[r->npairs++];
        p->a = &r->a.rows[k];
        p->b = b;
        p->ratio = b->median / p->a->median;
        p->verdict = compare_judge(p->ratio, p->a->cv, b->cv, &p->threshold);
        r->count[p->verdict]++;
        log_sum += log(p->ratio);
    }
    r->geomean = r->npairs ? exp(log_sum / (double)r->npairs) : NAN;
}

int compare_runs(compare_run *a, compare_run *b, compare_result *result, char *err, size_t err_size)
{
    *result = (compare_result){.a = *a, .b = *b};
    *a = *b = (compare_run){0};
    compare_result *r = result;
    const compare_row **sorted_a = sorted_by_name(&r->a), **sorted_b = sorted_by_name(&r->b);
    r->pairs = malloc((r->a.count ? r->a.count : 1) * sizeof *r->pairs);
    r->only_a = malloc((r->a.count ? r->a.count : 1) * sizeof *r->only_a);
    r->only_b = malloc((r->b.count ? r->b.count : 1) * sizeof *r->only_b);
    int rc = 0;
    if (!sorted_a || !sorted_b || !r->pairs || !r->only_a || !r->only_b) {
        snprintf(err, err_size, "out of memory");
        rc = CLI_RUNTIME_ERROR;
    } else {
        pair_rows(r, sorted_b);
        r->nonly_a = rows_missing(&r->a, sorted_b, r->b.count, r->only_a);
        r->nonly_b = rows_missing(&r->b, sorted_a, r->a.count, r->only_b);
        if (!r->npairs) {
            snprintf(err, err_size, "%s and %s: no row in common (%zu and %zu rows with a time)",
                     r->a.label, r->b.label, r->a.count, r->b.count);
            rc = CLI_USAGE_ERROR;
        }
    }
    free(sorted_a);
    free(sorted_b);
    return rc;
}

void compare_run_free(compare_run *run)
{
    for (size_t k = 0; k < run->count; k++)
        free(run->rows[k].name);
    free(run->rows);
}

void compare_result_free(compare_result *result)
{
    compare_run_free(&result->a);
    compare_run_free(&result->b);
    free(result->pairs);
    free(result->only_a);
    free(result->only_b);
}

/* ---- the text ----------------------------------------------------------------------- */

/* A time in ns with three significant digits and its unit. */
static const char *format_time(double ns, char *text, size_t size)
{
    static const char *const units[] = {"ns", "us", "ms", "s"};
    int u = 0;
    for (; u < 3 && ns >= 1000; u++)
        ns /= 1000;
    snprintf(text, size, "%.3g %s", ns, units[u]);
    return text;
}

void compare_print(FILE *out, const compare_result *r)
{
    int width = 4;
    for (size_t k = 0; k < r->npairs; k++)
        width = fmax(width, fmin(80, (double)strlen(r->pairs[k].a->name)));
    fprintf(out, "%-*s  %10s  %10s  %7s  %s\n", width, "name", "A", "B", "B/A", "verdict (noise)");
    for (size_t k = 0; k < r->npairs; k++) {
        const compare_pair *p = &r->pairs[k];
        char a[32], b[32];
        fprintf(out, "%-*s  %10s  %10s  %7.3f  %s (%.1f%%)\n", width, p->a->name,
                format_time(p->a->median, a, sizeof a), format_time(p->b->median, b, sizeof b),
                p->ratio, compare_verdict_name(p->verdict), 100 * p->threshold);
    }
    for (size_t k = 0; k < r->nonly_a; k++)
        fprintf(out, "only in %s: %s\n", r->a.label, r->only_a[k]->name);
    for (size_t k = 0; k < r->nonly_b; k++)
        fprintf(out, "only in %s: %s\n", r->b.label, r->only_b[k]->name);
    fprintf(out,
            "%zu rows in both: %zu faster, %zu slower, %zu within noise; geometric mean of "
            "B/A %.4f; %zu only in %s, %zu only in %s\n",
            r->npairs, r->count[VERDICT_FASTER], r->count[VERDICT_SLOWER], r->count[VERDICT_NOISE],
            r->geomean, r->nonly_a, r->a.label, r->nonly_b, r->b.label);
}

/* ---- the subcommand ----------------------------------------------------------------- */

static int load_run(const char *path, compare_run *run)
{
    json_error_t error;
    char err[256];
    struct stat info;
    if (stat(path, &info) == 0 && S_ISDIR(info.st_mode)) { /* which reads as an empty file */
        fprintf(stderr, "mbd %s: %s: a directory, not a results file (JSON)\n", CMD, path);
        return CLI_USAGE_ERROR;
    }
    json_t *root = json_load_file(path, 0, &error);
    if (!root && json_error_code(&error) == json_error_cannot_open_file) {
        fprintf(stderr, "mbd %s: %s: cannot read: %s\n", CMD, path, error.text);
        return CLI_USAGE_ERROR;
    }
    if (!root) {
        fprintf(stderr, "mbd %s: %s: not JSON: %s (line %d)\n", CMD, path, error.text, error.line);
        return CLI_USAGE_ERROR;
    }
    const int rc = compare_read_run(root, path, run, err, sizeof err);
    json_decref(root);
    if (rc)
        fprintf(stderr, "mbd %s: %s\n", CMD, err);
    return rc;
}

int compare_main(int argc, char **argv)
{
    cli_flag flags[] = {OUTPUT("--html"), SWITCH("--fail-on-slower"), END_FLAGS};
    const char *files[2];
    int nfiles;
    if (cli_wants_help(argc, argv, 1)) {
        fputs(usage, stdout);
        return 0;
    }
    int rc = cli_parse(CMD, argc, argv, 1, flags, files, 2, &nfiles);
    if (!rc && nfiles != 2) {
        fprintf(stderr, "mbd %s: expected two JSON files, A and B\n%s", CMD, usage);
        rc = CLI_USAGE_ERROR;
    }
    compare_run a = {0}, b = {0};
    if (rc || (rc = load_run(files[0], &a)) || (rc = load_run(files[1], &b))) {
        compare_run_free(&a);
        compare_run_free(&b);
        return rc;
    }
    compare_result result;
    char err[512];
    if ((rc = compare_runs(&a, &b, &result, err, sizeof err)))
        fprintf(stderr, "mbd %s: %s\n", CMD, err);
    else
        compare_print(stdout, &result);
    const char *html = cli_get(flags, "--html");
    if (!rc && html)
        rc = cli_write_atomic(CMD, html, compare_write_html, &result);
    if (!rc && cli_get(flags, "--fail-on-slower") && result.count[VERDICT_SLOWER])
        rc = CLI_RUNTIME_ERROR;
    compare_result_free(&result);
    return rc;
}
