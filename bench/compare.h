/* compare.h: `mbd-bench compare A.json B.json`, two runs in Google Benchmark's JSON schema
 * side by side: each row's median of B over A's and whether it moved beyond the noise. */
#ifndef MBD_BENCH_COMPARE_H
#define MBD_BENCH_COMPARE_H

#include <jansson.h>
#include <stdio.h>

/* One measurement of a run: its median time (ns) and relative spread (cv, a fraction). */
typedef struct {
    char *name;
    double median, cv;
} compare_row;

typedef struct {
    const char *label; /* the file's name, for messages and the page */
    compare_row *rows; /* in the file's order */
    size_t count;
} compare_run;

typedef enum { VERDICT_FASTER, VERDICT_SLOWER, VERDICT_NOISE } compare_verdict;

/* A row present in both runs. */
typedef struct {
    const compare_row *a, *b;
    double ratio;     /* b->median / a->median */
    double threshold; /* the relative change beyond noise: max(2 %, 3 sqrt(cv_a^2 + cv_b^2)) */
    compare_verdict verdict;
} compare_pair;

typedef struct {
    compare_run a, b;
    compare_pair *pairs; /* in A's order */
    size_t npairs;
    const compare_row **only_a, **only_b; /* rows present in one run only */
    size_t nonly_a, nonly_b;
    size_t count[3]; /* pairs per verdict */
    double geomean;  /* of the pairs' ratios */
} compare_result;

/* The verdict on ratio = B / A given both relative spreads; *threshold set. */
compare_verdict compare_judge(double ratio, double cv_a, double cv_b, double *threshold);
const char *compare_verdict_name(compare_verdict verdict);

/* Reads a run from a parsed document; 0, or CLI_USAGE_ERROR with the reason in err. */
int compare_read_run(const json_t *root, const char *label, compare_run *run, char *err,
                     size_t err_size);
/* Frees a run's rows (one compare_runs has not taken over). */
void compare_run_free(compare_run *run);
/* Pairs the rows of a and b (taking over both runs); 0, or CLI_USAGE_ERROR with the
 * reason in err when they have no row in common. */
int compare_runs(compare_run *a, compare_run *b, compare_result *result, char *err,
                 size_t err_size);
void compare_result_free(compare_result *result);

/* One line per pair, the rows found in one run only, and the summary line. */
void compare_print(FILE *out, const compare_result *result);
/* The page: the pairs as a sortable table and a chart, self-contained (compare_html.c). */
int compare_write_html(FILE *out, void *result);

/* The subcommand: argv[0] is "compare". Exit status 0, 1 (--fail-on-slower and a row
 * slower) or 2 (bad input). */
int compare_main(int argc, char **argv);

#endif
