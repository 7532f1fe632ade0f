/* cmd_ensemble.c: mbd simulate --ensemble K, K runs of fixed-step RK4 on the batch solver
 * (mbd_simulate_ensemble), split over the ranks of an MPI job (par.h) when there is one.
 *
 * The CSV is time-major: after the header, the rows of report s (t_s) for runs 0..K-1,
 * then those of report s + 1. Every row has the same width (fixed-width numbers, 17
 * significant digits, so that they read back exactly), so row (s, k) lies at a known
 * offset: each rank writes the rows of its runs at each report as one block, with no
 * exchange between ranks and nothing funnelled through rank 0, and the file is the same
 * bytes for any number of ranks. --out-dir then copies each run's rows into a file of its
 * own, every rank those of its runs.
 */
#include "cli.h"
#include "par.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NUMBER_WIDTH 24 /* "%24.16e": sign, 17 digits, point, exponent up to e-308 */
#define STATUS_WIDTH 3  /* mbd_status codes down to -99 */
#define COMBINED_NAME "ensemble.csv"

/* The flags that only an ensemble takes (`mbd help` lists them). */
static const char *const ensemble_only[] = {"--states", "--spread", "--seed", "--out-dir",
                                            "--threads"};

typedef struct {
    const char *cmd;
    const mbd_model *model; /* names the columns */
    int K, first, count;    /* all runs; this rank's are first .. first + count - 1 */
    int nq, nv, run_width;
    size_t header_size, row_size;
    long report;    /* index of the next report */
    char *rows;     /* (count row_size) this rank's rows of one report */
    par_file *file; /* or stdout */
    int write_failed;
    double t1, next_progress;
    struct timespec start;
} ensemble_output;

int cli_check_ensemble_flags(const char *cmd, const cli_flag *flags)
{
    if (cli_get(flags, "--ensemble"))
        return 0;
    if (par_size() > 1) {
        fprintf(stderr,
                "mbd %s: %d MPI ranks would each run the same trajectory: only "
                "--ensemble K splits its runs over ranks\n",
                cmd, par_size());
        return CLI_USAGE_ERROR;
    }
    for (size_t k = 0; k < sizeof ensemble_only / sizeof *ensemble_only; k++)
        if (cli_get(flags, ensemble_only[k])) {
            fprintf(stderr, "mbd %s: %s: only with --ensemble K\n", cmd, ensemble_only[k]);
            return CLI_USAGE_ERROR;
        }
    return 0;
}

static int usage_error(const char *cmd, const char *flag, const char *why)
{
    fprintf(stderr, "mbd %s: %s: %s\n", cmd, flag, why);
    return CLI_USAGE_ERROR;
}

/* What the ensemble cannot run, and the flags that go together. */
static int check_combination(const char *cmd, const cli_flag *flags, const mbd_model *model,
                             const mbd_sim_options *opt)
{
    if (opt->integrator != MBD_RK4)
        return usage_error(cmd, "--integrator", "an ensemble runs rk4 only (fixed step --dt)");
    if (opt->formulation != MBD_ACCELERATION)
        return usage_error(cmd, "--formulation",
                           "an ensemble runs the acceleration formulation only");
    if (mbd_model_nloops(model) > 0)
        return usage_error(cmd, "--ensemble",
                           "not for a model with loops (the batch solves open trees)");
    if (cli_get(flags, "--states") &&
        (cli_get(flags, "--spread") || cli_get(flags, "--q0") || cli_get(flags, "--qd0")))
        return usage_error(cmd, "--states",
                           "gives every initial state: no --spread, --q0 or --qd0");
    if (cli_get(flags, "--seed") && !cli_get(flags, "--spread"))
        return usage_error(cmd, "--seed", "only with --spread");
    if (cli_get(flags, "--out") && cli_get(flags, "--out-dir"))
        return usage_error(cmd, "--out-dir", "either --out FILE or --out-dir DIR");
    if (par_size() > 1 && !cli_get(flags, "--out") && !cli_get(flags, "--out-dir"))
        return usage_error(cmd, "--out",
                           "more than one rank writes a file: --out FILE or --out-dir DIR");
    return 0;
}

/* --sample: a whole number of steps (every step without it). */
static int report_every(const char *cmd, const mbd_sim_options *opt, long *every)
{
    *every = opt->sample > 0.0 ? lround(opt->sample / opt->dt) : 1;
    if (opt->sample == 0.0 ||
        (*every >= 1 && fabs((double)*every * opt->dt - opt->sample) <= 1e-9 * opt->sample))
        return 0;
    fprintf(stderr,
            "mbd %s: --sample: an ensemble reports at whole steps: %g is not a multiple "
            "of --dt %g\n",
            cmd, opt->sample, opt->dt);
    return CLI_USAGE_ERROR;
}

/* splitmix64: the draw of run k's coordinate i depends on (seed, k, i) only, so that
 * it does not depend on which rank draws it. */
static double uniform_pm1(uint64_t seed, uint64_t index)
{
    uint64_t z = seed * 0x9e3779b97f4a7c15u + index + 1;
    for (int round = 0; round < 2; round++) {
        z += 0x9e3779b97f4a7c15u;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
        z ^= z >> 31;
    }
    return (double)(z >> 11) * 0x1.0p-52 - 1.0;
}

/* q0 + spread u (u uniform in [-1, 1) per coordinate, quaternions' too: the integrator
 * normalizes them) and qd0, for this rank's runs. */
static void spread_states(const ensemble_output *o, double spread, uint64_t seed, const double *q0,
                          const double *qd0, double *q, double *qd)
{
    for (int k = 0; k < o->count; k++) {
        for (int i = 0; i < o->nq; i++) {
            const uint64_t index = (uint64_t)(o->first + k) * (uint64_t)o->nq + (uint64_t)i;
            q[(size_t)k * o->nq + i] = q0[i] + spread * uniform_pm1(seed, index);
        }
        memcpy(qd + (size_t)k * o->nv, qd0, (size_t)o->nv * sizeof *qd);
    }
}

/* One data line of --states: nq + nv finite numbers into q and qd. */
static int parse_state_line(const char *cmd, const char *path, long line_no, char *line, int nq,
                            int nv, double *q, double *qd)
{
    int count = 0;
    for (char *save = NULL, *field = strtok_r(line, ",\n\r", &save); field;
         field = strtok_r(NULL, ",\n\r", &save), count++) {
        char *end;
        errno = 0;
        const double x = strtod(field, &end);
        while (*end == ' ' || *end == '\t')
            end++;
        if (end == field || *end || errno || !isfinite(x)) {
            fprintf(stderr,
                    "mbd %s: --states %s: line %ld, column %d: not a finite number: '%.40s'\n", cmd,
                    path, line_no, count + 1, field);
            return CLI_USAGE_ERROR;
        }
        if (count < nq)
            q[count] = x;
        else if (count < nq + nv)
            qd[count - nq] = x;
    }
    if (count != nq + nv) {
        fprintf(stderr, "mbd %s: --states %s: line %ld: expected %d numbers (q then qd), got %d\n",
                cmd, path, line_no, nq + nv, count);
        return CLI_USAGE_ERROR;
    }
    return 0;
}

/* The rows of --states (a first line that starts with a letter is a header); all are
 * checked, this rank's runs kept. */
static int read_states(const ensemble_output *o, const char *path, double *q, double *qd)
{
    FILE *in = fopen(path, "r");
    if (!in) {
        fprintf(stderr, "mbd %s: --states %s: cannot open: %s\n", o->cmd, path, strerror(errno));
        return CLI_USAGE_ERROR;
    }
    char *line = NULL;
    size_t cap = 0;
    long line_no = 0, rows = 0;
    int rc = 0;
    double *scratch = malloc(((size_t)o->nq + o->nv) * sizeof *scratch);
    if (!scratch)
        rc = cli_fail(o->cmd, "--states", MBD_ENOMEM);
    while (!rc && getline(&line, &cap, in) > 0) {
        line_no++;
        const char *p = line + strspn(line, " \t");
        if ((line_no == 1 && ((*p | 32) >= 'a' && (*p | 32) <= 'z')) || *p == '\n' || !*p)
            continue;
        const long k = rows++ - o->first;
        const int mine = k >= 0 && k < o->count;
        rc = parse_state_line(o->cmd, path, line_no, line, o->nq, o->nv,
                              mine ? q + k * o->nq : scratch,
                              mine ? qd + k * o->nv : scratch + o->nq);
    }
    if (!rc && rows != o->K) {
        fprintf(stderr, "mbd %s: --states %s: has %ld states, --ensemble asks for %d\n", o->cmd,
                path, rows, o->K);
        rc = CLI_USAGE_ERROR;
    }
    free(scratch);
    free(line);
    fclose(in);
    return rc;
}

static int initial_states(const ensemble_output *o, const cli_flag *flags, const double *q0,
                          const double *qd0, double *q, double *qd)
{
    const char *states = cli_get(flags, "--states");
    if (states)
        return read_states(o, states, q, qd);
    double spread;
    long long seed;
    int rc = cli_number(o->cmd, flags, "--spread", 0.0, 1e6, 0.0, &spread);
    if (!rc)
        rc = cli_integer(o->cmd, flags, "--seed", 0, 9007199254740992.0, 1, &seed);
    if (!rc)
        spread_states(o, spread, (uint64_t)seed, q0, qd0, q, qd);
    return rc;
}

static int digits(int x)
{
    int d = 1;
    while (x >= 10)
        x /= 10, d++;
    return d;
}

static int write_header(FILE *out, void *ctx)
{
    const ensemble_output *o = ctx;
    fputs("run,t", out);
    cli_state_columns(out, o->model, 0);
    fputs(",status\n", out);
    return ferror(out) ? -1 : 0;
}

/* Run k's row at t: nan where the run has failed, whose status column says why. */
static void format_row(const ensemble_output *o, char *row, int k, double t, const double *q,
                       const double *qd, int status)
{
    char *p = row + sprintf(row, "%*d,%*.15g", o->run_width, o->first + k, NUMBER_WIDTH, t);
    for (int i = 0; i < o->nq + o->nv; i++) {
        const double x = status ? NAN : i < o->nq ? q[i] : qd[i - o->nq];
        p += sprintf(p, ",%*.16e", NUMBER_WIDTH, x);
    }
    sprintf(p, ",%*d\n", STATUS_WIDTH, status);
}

static int write_block(ensemble_output *o, long long offset, const void *data, size_t size)
{
    if (o->file)
        return par_file_write_at(o->file, offset, data, size);
    return fwrite(data, 1, size, stdout) == size ? 0 : cli_fail(o->cmd, "standard output", MBD_EIO);
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t0->tv_sec) + 1e-9 * (double)(now.tv_nsec - t0->tv_nsec);
}

/* Rank 0, about once a second: how far its runs are. */
static void show_progress(ensemble_output *o, double t)
{
    if (par_rank() != 0 || seconds_since(&o->start) < o->next_progress)
        return;
    o->next_progress += 1.0;
    const int tty = isatty(STDERR_FILENO);
    fprintf(stderr, "%smbd %s: ensemble t = %.4g / %g (%.0f%%)%s", tty ? "\r" : "", o->cmd, t,
            o->t1, 100.0 * t / o->t1, tty ? "" : "\n");
}

/* mbd_simulate_ensemble's callback: this rank's rows of one report, as one block. */
static int write_report(const mbd_ensemble_state *s, void *ctx)
{
    ensemble_output *o = ctx;
    for (int k = 0; k < o->count; k++)
        format_row(o, o->rows + (size_t)k * o->row_size, k, s->t, s->q + (size_t)k * o->nq,
                   s->qd + (size_t)k * o->nv, s->status[k]);
    const long long offset = (long long)o->header_size +
                             ((long long)o->report * o->K + o->first) * (long long)o->row_size;
    o->report++;
    show_progress(o, s->t);
    if (write_block(o, offset, o->rows, (size_t)o->count * o->row_size)) {
        o->write_failed = 1;
        return MBD_EIO;
    }
    return MBD_OK;
}

/* The header at offset 0, by rank 0. */
static int start_output(ensemble_output *o)
{
    char *header = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&header, &size);
    int rc = out && write_header(out, o) == 0 && fclose(out) == 0
                 ? 0
                 : cli_fail(o->cmd, "header", MBD_ENOMEM);
    o->header_size = size;
    if (!rc && par_rank() == 0)
        rc = write_block(o, 0, header, size);
    free(header);
    return rc;
}

/* Run k's rows, read back from the combined file (by pread: a seek per row would make
 * stdio refill its whole buffer for every row). */
typedef struct {
    FILE *combined;
    const ensemble_output *o;
    long reports;
    int k;
} run_copy;

static int copy_run(FILE *out, void *ctx)
{
    const run_copy *c = ctx;
    const ensemble_output *o = c->o;
    char *row = o->rows;
    if (write_header(out, (void *)o))
        return -1;
    for (long s = 0; s < c->reports; s++) {
        const long long offset = (long long)o->header_size +
                                 ((long long)s * o->K + o->first + c->k) * (long long)o->row_size;
        if (pread(fileno(c->combined), row, o->row_size, (off_t)offset) != (ssize_t)o->row_size ||
            fwrite(row, 1, o->row_size, out) != o->row_size)
            return -1;
    }
    return 0;
}

/* --out-dir: DIR/run-K.csv for each of this rank's runs, from DIR/ensemble.csv. */
static int split_runs(const ensemble_output *o, const char *dir, const char *combined_path)
{
    FILE *combined = fopen(combined_path, "r");
    if (!combined)
        return cli_fail(o->cmd, combined_path, MBD_EIO);
    const size_t len = strlen(dir) + 32;
    char *path = malloc(len);
    int rc = path ? 0 : cli_fail(o->cmd, dir, MBD_ENOMEM);
    for (int k = 0; !rc && k < o->count; k++) {
        run_copy c = {combined, o, o->report, k};
        snprintf(path, len, "%s/run-%0*d.csv", dir, o->run_width, o->first + k);
        rc = cli_write_atomic(o->cmd, path, copy_run, &c);
    }
    free(path);
    fclose(combined);
    return rc;
}

static void print_summary(const ensemble_output *o, const mbd_solver *solver,
                          const mbd_ensemble_options *eo, long long failed)
{
    fprintf(stderr,
            "mbd %s: ensemble of %d runs over %d rank%s x %d threads, %s rk4 dt %g: "
            "t = %g, %ld steps, %lld failed\n",
            o->cmd, o->K, par_size(), par_size() > 1 ? "s" : "",
            eo->threads ? eo->threads : omp_get_max_threads(), mbd_solver_name(solver), eo->dt,
            eo->t1, mbd_ensemble_steps(eo), failed);
    if (failed)
        fprintf(stderr,
                "mbd %s: %lld of %d runs failed: from its failure on, a run's rows hold "
                "nan and its mbd_status in the status column\n",
                o->cmd, failed, o->K);
}

/* This rank's share of the runs (contiguous, in run order) and the row layout. */
static int lay_out(ensemble_output *o, long long K, double **states)
{
    const int rank = par_rank(), size = par_size();
    o->K = (int)K;
    o->first = (int)(K * rank / size);
    o->count = (int)(K * (rank + 1) / size) - o->first;
    o->run_width = digits(o->K - 1);
    o->row_size = (size_t)o->run_width + 1 + NUMBER_WIDTH +
                  (size_t)(o->nq + o->nv) * (1 + NUMBER_WIDTH) + 1 + STATUS_WIDTH + 1;
    const size_t n = (size_t)o->count * (size_t)(o->nq + o->nv);
    *states = malloc(n * sizeof **states + (size_t)o->count * sizeof(int) + 1);
    o->rows = malloc((size_t)(o->count + 1) * o->row_size + 1); /* + sprintf's NUL */
    return *states && o->rows ? 0 : cli_fail(o->cmd, "allocation", MBD_ENOMEM);
}

/* Everything a rank must check before the first agreement. */
static int prepare(ensemble_output *o, const cli_flag *flags, const mbd_model *model,
                   const mbd_sim_options *opt, mbd_ensemble_options *eo, const double *q0,
                   const double *qd0, double **states)
{
    long long K, threads;
    int rc = check_combination(o->cmd, flags, model, opt);
    if (!rc)
        rc = cli_integer(o->cmd, flags, "--ensemble", 1, INT_MAX, 0, &K);
    if (!rc)
        rc = cli_integer(o->cmd, flags, "--threads", 0, 4096, 0, &threads);
    if (!rc)
        rc = report_every(o->cmd, opt, &eo->report_every);
    if (!rc) {
        eo->threads = (int)threads;
        rc = lay_out(o, K, states);
    }
    if (!rc)
        rc = initial_states(o, flags, q0, qd0, *states, *states + (size_t)o->count * o->nq);
    const char *dir = cli_get(flags, "--out-dir");
    if (!rc && dir)
        rc = cli_check_output_dir(o->cmd, dir);
    if (!rc && dir && par_rank() == 0 && mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "mbd %s: --out-dir %s: cannot create: %s\n", o->cmd, dir, strerror(errno));
        rc = CLI_RUNTIME_ERROR;
    }
    return rc;
}

/* Integrates this rank's runs into the output; the number of failed runs in *failed. */
static int integrate(ensemble_output *o, const mbd_model *model, const mbd_solver *solver,
                     const mbd_ensemble_options *eo, double *states, long long *failed)
{
    int *status = (int *)(states + (size_t)o->count * (o->nq + o->nv));
    clock_gettime(CLOCK_MONOTONIC, &o->start);
    o->next_progress = 1.0;
    int rc = start_output(o);
    const int outcome =
        rc ? MBD_OK
           : mbd_simulate_ensemble(model, solver, eo, o->count, states,
                                   states + (size_t)o->count * o->nq, write_report, o, status);
    if (!rc && o->write_failed)
        rc = CLI_RUNTIME_ERROR;
    else if (!rc && (outcome == MBD_ENOMEM || outcome == MBD_EINVAL || outcome == MBD_EUNSUPPORTED))
        rc = cli_fail_solver(o->cmd, "ensemble", solver, outcome);
    *failed = 0;
    for (int k = 0; !rc && k < o->count; k++)
        *failed += status[k] != MBD_OK;
    return rc;
}

int cmd_ensemble(const char *cmd, const cli_flag *flags, const mbd_model *model,
                 const mbd_solver *solver, const mbd_sim_options *opt, const double *q0,
                 const double *qd0)
{
    ensemble_output o = {.cmd = cmd,
                         .model = model,
                         .nq = mbd_model_nq(model),
                         .nv = mbd_model_nv(model),
                         .t1 = opt->t1};
    mbd_ensemble_options eo = {.t1 = opt->t1, .dt = opt->dt};
    double *states = NULL;
    const char *out = cli_get(flags, "--out"), *dir = cli_get(flags, "--out-dir");
    char *combined = dir ? malloc(strlen(dir) + sizeof COMBINED_NAME + 1) : NULL;
    int rc = dir && !combined ? cli_fail(cmd, dir, MBD_ENOMEM)
                              : prepare(&o, flags, model, opt, &eo, q0, qd0, &states);
    const int agreed = par_agree(rc);
    if (agreed) {
        free(combined), free(states), free(o.rows);
        return agreed;
    }
    if (dir)
        sprintf(combined, "%s/%s", dir, COMBINED_NAME);
    const char *path = out ? out : combined;
    long long failed = 0;
    if (path && !(o.file = par_file_open(cmd, path)))
        rc = CLI_RUNTIME_ERROR;
    else {
        rc = integrate(&o, model, solver, &eo, states, &failed);
        rc = path             ? par_file_close(o.file, rc)
             : rc             ? rc
             : fflush(stdout) ? cli_fail(cmd, "standard output", MBD_EIO)
                              : 0;
    }
    if (!rc)
        failed = par_sum(failed);
    if (!rc && dir)
        rc = split_runs(&o, dir, combined);
    if (!rc && par_rank() == 0)
        print_summary(&o, solver, &eo, failed);
    free(combined), free(states), free(o.rows);
    return rc ? rc : failed ? CLI_RUNTIME_ERROR : 0;
}
