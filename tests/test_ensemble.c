/* test_ensemble.c: mbd_simulate_ensemble against mbd_simulate's RK4 run by run (free
 * and spherical joints too: nq != nv), its independence of the thread count and of the
 * other runs (bit for bit), a failed run among good ones, the report times, and bad
 * options. */
#include "support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define K_RUNS 5
#define MAX_REPORTS 64

/* Every report of an ensemble: times and the K runs' (q, qd) rows. */
typedef struct {
    int nq, nv, K, count;
    double t[MAX_REPORTS];
    long step[MAX_REPORTS];
    double *x; /* (MAX_REPORTS, K, nq + nv) */
    int status[MAX_REPORTS][K_RUNS];
    double t_failed[K_RUNS]; /* at the last report */
} ensemble_log;

static ensemble_log *log_new(int nq, int nv, int K)
{
    ensemble_log *log = calloc(1, sizeof *log);
    assert_non_null(log);
    log->nq = nq;
    log->nv = nv;
    log->K = K;
    log->x = calloc((size_t)MAX_REPORTS * K * (nq + nv), sizeof *log->x);
    assert_non_null(log->x);
    return log;
}

static void log_free(ensemble_log *log)
{
    free(log->x);
    free(log);
}

static double *log_state(const ensemble_log *log, int report, int run)
{
    return log->x + ((size_t)report * log->K + run) * (log->nq + log->nv);
}

static int record_ensemble(const mbd_ensemble_state *s, void *ctx)
{
    ensemble_log *log = ctx;
    assert_true(log->count < MAX_REPORTS);
    assert_int_equal(s->K, log->K);
    log->t[log->count] = s->t;
    log->step[log->count] = s->step;
    for (int k = 0; k < s->K; k++) {
        memcpy(log_state(log, log->count, k), s->q + k * log->nq, log->nq * sizeof(double));
        memcpy(log_state(log, log->count, k) + log->nq, s->qd + k * log->nv,
               log->nv * sizeof(double));
        log->status[log->count][k] = s->status[k];
        log->t_failed[k] = s->t_failed[k];
    }
    log->count++;
    return MBD_OK;
}

/* One run by mbd_simulate: its (q, qd) rows at every step. */
typedef struct {
    int nq, nv, count;
    double x[MAX_REPORTS][32];
} single_log;

static int record_single(const mbd_sim_state *s, void *ctx)
{
    single_log *log = ctx;
    assert_true(log->count < MAX_REPORTS && log->nq + log->nv <= 32);
    memcpy(log->x[log->count], s->q, log->nq * sizeof(double));
    memcpy(log->x[log->count] + log->nq, s->qd, log->nv * sizeof(double));
    log->count++;
    return MBD_OK;
}

/* K rows of q (quaternions not normalized), then K rows of qd. */
static double *initial_states(const mbd_model *model, int K, uint64_t seed)
{
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
    double *x = malloc((size_t)K * (nq + nv) * sizeof *x);
    assert_non_null(x);
    test_fill(&seed, x, K * nq, -1.5, 1.5);
    test_fill(&seed, x + K * nq, K * nv, -1.0, 1.0);
    return x;
}

/* Run k's (q0, qd0) out of the rows of initial_states, as one state (free it). */
static double *one_state(const mbd_model *model, const double *x0, int K, int k)
{
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
    double *x = malloc((nq + nv) * sizeof *x);
    assert_non_null(x);
    memcpy(x, x0 + k * nq, nq * sizeof *x);
    memcpy(x + nq, x0 + K * nq + k * nv, nv * sizeof *x);
    return x;
}

static ensemble_log *run_ensemble(const mbd_model *model, const char *solver,
                                  const mbd_ensemble_options *opt, int K, const double *x0,
                                  int expect)
{
    const int nq = mbd_model_nq(model);
    ensemble_log *log = log_new(nq, mbd_model_nv(model), K);
    int status[K_RUNS];
    assert_int_equal(mbd_simulate_ensemble(model, mbd_solver_find(solver), opt, K, x0, x0 + K * nq,
                                           record_ensemble, log, status),
                     expect);
    for (int k = 0; k < K; k++)
        assert_int_equal(status[k], log->status[log->count - 1][k]);
    return log;
}

/* Each run equals mbd_simulate's RK4 (every step reported) from the same state, to
 * round-off; t1 is a multiple of the binary step, so both take the same steps. The free
 * base and spherical joints integrate quaternions (q' = G(q) qd), from states whose
 * quaternions are not unit. */
static void test_ensemble_equals_single_runs(void **unused)
{
    (void)unused;
    const char *models[] = {"chain:n=4,joint=cardan", "chain:n=3,joint=spherical,base=free"};
    const char *solvers[] = {"bodies", "dense", "sparse"};
    const mbd_ensemble_options opt = {.t1 = 0.25, .dt = 1.0 / 64, .report_every = 1};
    const mbd_sim_options single = {
        .formulation = MBD_ACCELERATION, .integrator = MBD_RK4, .t1 = opt.t1, .dt = opt.dt};
    for (size_t m = 0; m < sizeof models / sizeof *models; m++) {
        mbd_model *model = load_model(models[m]);
        const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
        double *x0 = initial_states(model, K_RUNS, 7);
        for (size_t s = 0; s < sizeof solvers / sizeof *solvers; s++) {
            ensemble_log *log = run_ensemble(model, solvers[s], &opt, K_RUNS, x0, MBD_OK);
            assert_int_equal(log->count, 17);
            for (int k = 0; k < K_RUNS; k++) {
                single_log one = {.nq = nq, .nv = nv};
                double *q = one_state(model, x0, K_RUNS, k);
                assert_int_equal(mbd_simulate(model, mbd_solver_find(solvers[s]), &single, q,
                                              q + nq, record_single, &one, NULL),
                                 MBD_OK);
                assert_int_equal(one.count, log->count);
                for (int r = 0; r < log->count; r++)
                    assert_close(log_state(log, r, k), one.x[r], nq + nv, 1e-12, models[m]);
                free(q);
            }
            log_free(log);
        }
        free(x0);
        mbd_model_free(model);
    }
}

/* The same bits whatever the thread count, and a run alone gives its bits in the
 * ensemble. */
static void test_ensemble_independent_of_threads_and_runs(void **unused)
{
    (void)unused;
    mbd_model *model = load_model("tree:n=7,branching=2,skew=0.5,base=free");
    const int n = mbd_model_nq(model) + mbd_model_nv(model);
    double *x0 = initial_states(model, K_RUNS, 11);
    mbd_ensemble_options opt = {.t1 = 0.3, .dt = 0.01, .report_every = 5, .threads = 1};
    ensemble_log *one = run_ensemble(model, "bodies", &opt, K_RUNS, x0, MBD_OK);
    opt.threads = 3;
    ensemble_log *three = run_ensemble(model, "bodies", &opt, K_RUNS, x0, MBD_OK);
    assert_int_equal(one->count, three->count);
    assert_memory_equal(one->x, three->x, (size_t)one->count * K_RUNS * n * sizeof(double));
    const int k = 3;
    double *alone = one_state(model, x0, K_RUNS, k);
    ensemble_log *solo = run_ensemble(model, "bodies", &opt, 1, alone, MBD_OK);
    for (int r = 0; r < one->count; r++)
        assert_memory_equal(log_state(solo, r, 0), log_state(one, r, k), n * sizeof(double));
    free(alone);
    log_free(solo);
    log_free(three);
    log_free(one);
    free(x0);
    mbd_model_free(model);
}

/* Reports at t = 0, every report_every steps and t1, the last step shortened to end
 * there. */
static void test_ensemble_report_times(void **unused)
{
    (void)unused;
    mbd_model *model = load_model("chain:n=2,joint=revolute");
    double *x0 = initial_states(model, 2, 3);
    const mbd_ensemble_options opt = {.t1 = 0.95, .dt = 0.1, .report_every = 3};
    assert_int_equal(mbd_ensemble_steps(&opt), 10);
    ensemble_log *log = run_ensemble(model, "bodies", &opt, 2, x0, MBD_OK);
    const long steps[] = {0, 3, 6, 9, 10};
    assert_int_equal(log->count, 5);
    for (int r = 0; r < log->count; r++) {
        assert_int_equal(log->step[r], steps[r]);
        assert_true(fabs(log->t[r] - (r == 4 ? 0.95 : 0.1 * steps[r])) < 1e-15);
    }
    log_free(log);
    free(x0);
    mbd_model_free(model);
}

/* Run `bad` with coordinates first .. first + count - 1 of its q row (of its qd row if
 * in_qd) set to value fails at once with status expect at t = 0; the others go on and
 * equal the ensemble without it. */
static void check_failed_run(const char *spec, int in_qd, int first, int count, double value,
                             int expect)
{
    mbd_model *model = load_model(spec);
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model), bad = 2;
    double *x0 = initial_states(model, K_RUNS, 5);
    const mbd_ensemble_options opt = {.t1 = 0.2, .dt = 0.02, .report_every = 2};
    ensemble_log *good = run_ensemble(model, "bodies", &opt, K_RUNS, x0, MBD_OK);
    double *spoiled = x0 + (in_qd ? K_RUNS * nq + bad * nv : bad * nq) + first;
    for (int i = 0; i < count; i++)
        spoiled[i] = value;
    ensemble_log *log = run_ensemble(model, "bodies", &opt, K_RUNS, x0, expect);
    for (int r = 0; r < log->count; r++)
        for (int k = 0; k < K_RUNS; k++) {
            assert_int_equal(log->status[r][k], k == bad && r > 0 ? expect : MBD_OK);
            if (k != bad)
                assert_memory_equal(log_state(log, r, k), log_state(good, r, k),
                                    (nq + nv) * sizeof(double));
        }
    assert_true(log->t_failed[bad] == 0.0 && isnan(log->t_failed[0]));
    /* the failed run keeps the state it failed from: its initial one */
    assert_memory_equal(log_state(log, log->count - 1, bad), log_state(log, 0, bad),
                        (nq + nv) * sizeof(double));
    log_free(log);
    log_free(good);
    free(x0);
    mbd_model_free(model);
}

/* A velocity that is NaN; a zero quaternion (the spherical chain's first joint). */
static void test_ensemble_failed_run(void **unused)
{
    (void)unused;
    check_failed_run("chain:n=3,joint=cylindrical", 1, 1, 1, NAN, MBD_ENONFINITE);
    check_failed_run("chain:n=3,joint=spherical", 0, 0, 4, 0.0, MBD_EINVAL);
}

static void test_ensemble_bad_options(void **unused)
{
    (void)unused;
    mbd_model *model = load_model("chain:n=2,joint=revolute");
    const mbd_solver *solver = mbd_solver_find("bodies");
    double x0[4] = {0.1, 0.2, 0.0, 0.0};
    const mbd_ensemble_options good = {.t1 = 1.0, .dt = 0.1, .report_every = 1};
    mbd_ensemble_options bad[] = {good, good, good, good, good, good};
    bad[0].t1 = 0.0;
    bad[1].dt = -0.1;
    bad[2].dt = NAN;
    bad[3].report_every = 0;
    bad[4].threads = -1;
    bad[5].lanes = 3;
    for (size_t b = 0; b < sizeof bad / sizeof *bad; b++)
        assert_int_equal(
            mbd_simulate_ensemble(model, solver, &bad[b], 1, x0, x0 + 2, NULL, NULL, NULL),
            MBD_EINVAL);
    assert_int_equal(mbd_simulate_ensemble(model, solver, &good, -1, x0, x0 + 2, NULL, NULL, NULL),
                     MBD_EINVAL);
    assert_int_equal(mbd_simulate_ensemble(model, NULL, &good, 1, x0, x0 + 2, NULL, NULL, NULL),
                     MBD_EINVAL);
    assert_int_equal(mbd_simulate_ensemble(model, solver, &good, 0, NULL, NULL, NULL, NULL, NULL),
                     MBD_OK);
    assert_int_equal(mbd_simulate_ensemble(model, mbd_solver_find("poisson-ldlt"), &good, 1, x0,
                                           x0 + 2, NULL, NULL, NULL),
                     MBD_EUNSUPPORTED);
    mbd_model_free(model);
}

/* ---- mbd simulate --ensemble ------------------------------------------------------ */

#define RK4 "--integrator rk4 --t1 0.05 --dt 0.0125"
#define MAX_CELLS 4096

/* A CSV's data rows as numbers (nan kept), after checking that every line has the
 * header's column count (and, if fixed, the same width); returns the row count. */
static int csv_numbers(const char *text, int columns, int fixed, double *cells)
{
    const char *line = strchr(text, '\n') + 1;
    int rows = 0;
    size_t width = 0;
    for (; *line; rows++) {
        const char *end = strchr(line, '\n');
        assert_non_null(end);
        if (rows == 0)
            width = (size_t)(end - line);
        if (fixed)
            assert_int_equal((size_t)(end - line), width);
        const char *p = line;
        for (int c = 0; c < columns; c++) {
            char *stop;
            assert_true(rows * columns + c < MAX_CELLS);
            cells[rows * columns + c] = strtod(p, &stop);
            assert_true(stop > p && *stop == (c + 1 < columns ? ',' : '\n'));
            p = stop + 1;
        }
        line = end + 1;
    }
    return rows;
}

/* Two initial states (q row, qd row) from a file with a header: each run of the ensemble is mbd
 * simulate's RK4 run from its state, every step, to round-off; rows are time-major with
 * run and status. */
static void check_cli_ensemble_equals_simulate(const char *model, int nq, int nv, const char *q[2],
                                               const char *qd[2])
{
    char text[512], args[1024];
    snprintf(text, sizeof text, "q,qd\n%s,%s\n%s,%s\n", q[0], qd[0], q[1], qd[1]);
    const char *states = temp_file_with(text, ".csv");
    snprintf(args, sizeof args, "simulate %s " RK4 " --ensemble 2 --states %s", model, states);
    cli_result r = mbd_run(args);
    assert_int_equal(r.status, 0);
    assert_true(strncmp(r.out, "run,t,b1.q", 10) == 0);
    static double cells[MAX_CELLS], single[MAX_CELLS];
    const int columns = 2 + nq + nv + 1, single_columns = 1 + nq + nv + 3; /* + energies */
    assert_int_equal(csv_numbers(r.out, columns, 1, cells), 2 * 5);
    for (int k = 0; k < 2; k++) {
        snprintf(args, sizeof args, "simulate %s " RK4 " --q0 %s --qd0 %s", model, q[k], qd[k]);
        cli_result one = mbd_run(args);
        assert_int_equal(one.status, 0);
        const int rows = csv_numbers(one.out, single_columns, 0, single);
        assert_int_equal(rows, 5);
        for (int s = 0; s < rows; s++) {
            const double *row = cells + (s * 2 + k) * columns;
            assert_true(row[0] == k && row[columns - 1] == 0.0);
            assert_close(row + 1, single + s * single_columns, 1 + nq + nv, 1e-13, args);
        }
        cli_result_free(&one);
    }
    cli_result_free(&r);
    unlink(states);
}

/* A revolute chain, and a free-floating tree whose quaternions are not unit (both
 * sides normalize them). */
static void test_cli_ensemble_equals_simulate(void **unused)
{
    (void)unused;
    check_cli_ensemble_equals_simulate("chain:n=2,joint=revolute", 2, 2,
                                       (const char *[]){"0.3,-0.2", "-0.7,0.4"},
                                       (const char *[]){"0.1,0.5", "0,-1"});
    check_cli_ensemble_equals_simulate(
        "tree:n=3,branching=2,base=free", 9, 8,
        (const char *[]){"0.1,-0.2,0.3,0.9,0.2,-0.3,0.1,0.4,-0.5", "0,0,0,-0.5,0.5,0.5,-0.6,1,2"},
        (const char *[]){"0.1,0.5,-0.3,1,0,0.2,0.7,-1", "0,-1,2,0.3,0.4,-0.5,0,0"});
}

/* The state columns that mbd info --json implies for model, each after a comma: every
 * joint's NAME.q (one coordinate) or NAME.q0, NAME.q1, ... (several), then the rates alike
 * (NAME.qd, NAME.qd0, ...). */
static void columns_from_info(const char *model, char *out, size_t size)
{
    char args[256];
    snprintf(args, sizeof args, "info --json %s", model);
    json_t *info = run_json(args), *joint;
    size_t used = 0, j;
    for (int rates = 0; rates < 2; rates++)
        json_array_foreach(json_object_get(info, "joints"), j, joint)
        {
            const int n = (int)json_integer_value(json_object_get(joint, rates ? "nv" : "nq"));
            const char *name = json_string_value(json_object_get(joint, "name"));
            for (int k = 0; k < n; k++) {
                used +=
                    (size_t)snprintf(out + used, size - used, ",%s.%s", name, rates ? "qd" : "q");
                if (n > 1)
                    used += (size_t)snprintf(out + used, size - used, "%d", k);
                assert_true(used < size);
            }
        }
    json_decref(info);
}

/* One CSV naming for every trajectory: mbd simulate and its --ensemble write the state
 * columns that mbd info --json implies, on models with joints of several coordinates
 * (Cardan, free, spherical) among others, and a robot whose joints are not named after
 * their bodies. */
static void test_cli_ensemble_header_equals_simulate(void **unused)
{
    (void)unused;
    static const char *const models[] = {"chain:n=3,joint=cardan", "tree:n=3,branching=2,base=free",
                                         "legged:legs=2,dof=2", "chain:n=2,joint=spherical",
                                         "models/quadruped.urdf --floating-base"};
    for (size_t m = 0; m < sizeof models / sizeof *models; m++) {
        char columns[2048], expected[2200], args[512];
        columns_from_info(models[m], columns, sizeof columns);
        snprintf(args, sizeof args, "simulate %s " RK4, models[m]);
        cli_result one = mbd_run(args);
        assert_int_equal(one.status, 0);
        snprintf(expected, sizeof expected, "t%s,kinetic,potential,total\n", columns);
        assert_memory_equal(one.out, expected, strlen(expected));
        snprintf(args, sizeof args, "simulate %s " RK4 " --ensemble 2 --spread 0", models[m]);
        cli_result many = mbd_run(args);
        assert_int_equal(many.status, 0);
        snprintf(expected, sizeof expected, "run,t%s,status\n", columns);
        assert_memory_equal(many.out, expected, strlen(expected));
        cli_result_free(&one);
        cli_result_free(&many);
    }
}

static char *ensemble_output(const char *flags)
{
    char args[512];
    snprintf(args, sizeof args, "simulate chain:n=3,joint=cardan " RK4 " --ensemble 4 %s", flags);
    cli_result r = mbd_run(args);
    if (r.status != 0)
        print_error("mbd %s: %s", args, r.err);
    assert_int_equal(r.status, 0);
    free(r.err);
    return r.out;
}

/* The same seed, the same bytes; another seed, other states; spread 0: q0 for all. */
static void test_cli_ensemble_spread_seed(void **unused)
{
    (void)unused;
    char *a = ensemble_output("--spread 0.2 --seed 9 --threads 1");
    char *b = ensemble_output("--spread 0.2 --seed 9 --threads 2");
    char *c = ensemble_output("--spread 0.2 --seed 10");
    char *d = ensemble_output("--spread 0 --q0 0.1,0.2,0.3,0.4,0.5,0.6");
    assert_string_equal(a, b);
    assert_string_not_equal(a, c);
    static double cells[MAX_CELLS];
    const int columns = 2 + 12 + 1;
    assert_int_equal(csv_numbers(d, columns, 1, cells), 4 * 5);
    const double q0[] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6};
    for (int k = 0; k < 4; k++)
        assert_memory_equal(cells + k * columns + 2, q0, sizeof q0);
    assert_int_equal(csv_numbers(a, columns, 1, cells), 4 * 5);
    for (int i = 0; i < 6; i++) /* within the spread of q0 = 0 */
        assert_true(fabs(cells[columns + 2 + i]) <= 0.2 && cells[columns + 2 + i] != 0.0);
    free(a), free(b), free(c), free(d);
}

/* --out: the stdout bytes; --out-dir: ensemble.csv and run-K.csv, the header and that
 * run's rows. */
static void test_cli_ensemble_files(void **unused)
{
    (void)unused;
    char dir[] = "/tmp/mbd-ensemble-XXXXXX", flags[256], path[320];
    assert_non_null(mkdtemp(dir));
    char *reference = ensemble_output("--spread 0.1");
    snprintf(flags, sizeof flags, "--spread 0.1 --out %s/all.csv", dir);
    free(ensemble_output(flags));
    snprintf(path, sizeof path, "%s/all.csv", dir);
    char *text = read_text_file(path);
    assert_string_equal(text, reference);
    free(text);
    unlink(path);
    snprintf(flags, sizeof flags, "--spread 0.1 --out-dir %s/runs", dir);
    free(ensemble_output(flags));
    snprintf(path, sizeof path, "%s/runs/ensemble.csv", dir);
    text = read_text_file(path);
    assert_string_equal(text, reference);
    free(text);
    unlink(path);
    const size_t header = (size_t)(strchr(reference, '\n') + 1 - reference);
    const size_t row = (size_t)(strchr(reference + header, '\n') + 1 - reference) - header;
    for (int k = 0; k < 4; k++) {
        snprintf(path, sizeof path, "%s/runs/run-%d.csv", dir, k);
        text = read_text_file(path);
        assert_int_equal(strlen(text), header + 5 * row);
        assert_memory_equal(text, reference, header);
        for (int s = 0; s < 5; s++)
            assert_memory_equal(text + header + s * row, reference + header + (s * 4 + k) * row,
                                row);
        free(text);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/runs", dir);
    assert_int_equal(rmdir(path), 0); /* nothing else left there */
    assert_int_equal(rmdir(dir), 0);
    free(reference);
}

/* A run that overflows fails alone: nan and its status from then on, exit 1, file kept. */
static void test_cli_ensemble_failed_run(void **unused)
{
    (void)unused;
    const char *states = temp_file_with("0.1,0.2,0,0\n0.1,0.2,1e300,1e300\n", ".csv");
    char args[512];
    snprintf(args, sizeof args,
             "simulate chain:n=2,joint=revolute " RK4 " --ensemble 2 --states %s", states);
    cli_result r = mbd_run(args);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "1 of 2 runs failed"));
    static double cells[MAX_CELLS];
    assert_int_equal(csv_numbers(r.out, 7, 1, cells), 2 * 5);
    for (int s = 1; s < 5; s++) {
        assert_true(cells[(s * 2) * 7 + 6] == 0.0 && isfinite(cells[(s * 2) * 7 + 2]));
        assert_true(cells[(s * 2 + 1) * 7 + 6] == MBD_ENONFINITE &&
                    isnan(cells[(s * 2 + 1) * 7 + 2]));
    }
    cli_result_free(&r);
    unlink(states);
}

static void test_cli_ensemble_rejects(void **unused)
{
    (void)unused;
    const char *base = "simulate chain:n=2,joint=revolute --t1 0.1 --dt 0.01";
    char *bad_states = strdup(temp_file_with("0.1,0.2,0\n", ".csv"));
    char *nan_states = strdup(temp_file_with("0.1,0.2,0,x\n", ".csv"));
    char *two_states = strdup(temp_file_with("0,0,0,0\n0,0,0,0\n", ".csv"));
    const struct {
        const char *flags, *needle;
    } cases[] = {
        {"--integrator rk4 --spread 0.1", "--spread: only with --ensemble"},
        {"--integrator rk4 --ensemble 0", "--ensemble"},
        {"--integrator rk4 --ensemble 2.5", "--ensemble: expected an integer"},
        {"--integrator dopri5 --ensemble 2", "--dt"},
        {"--integrator rk4 --ensemble 2 --sample 0.015", "not a multiple of --dt"},
        {"--integrator rk4 --ensemble 2 --seed 3", "--seed: only with --spread"},
        {"--integrator rk4 --ensemble 2 --threads -1", "--threads"},
        {"--integrator rk4 --ensemble 2 --out a.csv --out-dir b", "--out-dir"},
        {"--integrator rk4 --ensemble 2 --formulation momentum --solver bodies", "--formulation"},
        {"--integrator rk4 --ensemble 2 --states /nonexistent.csv",
         "/nonexistent.csv: cannot open"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char args[512];
        snprintf(args, sizeof args, "%s %s", base, cases[c].flags);
        expect_rejected(args, (const char *const[]){cases[c].needle, NULL});
    }
    char args[512];
    snprintf(args, sizeof args, "%s --integrator rk4 --ensemble 1 --states %s", base, bad_states);
    expect_rejected(args, (const char *const[]){bad_states, "line 1", "expected 4 numbers", NULL});
    snprintf(args, sizeof args, "%s --integrator rk4 --ensemble 1 --states %s", base, nan_states);
    expect_rejected(args, (const char *const[]){nan_states, "column 4", "'x'", NULL});
    snprintf(args, sizeof args, "%s --integrator rk4 --ensemble 3 --states %s", base, two_states);
    expect_rejected(args, (const char *const[]){two_states, "has 2 states", "asks for 3", NULL});
    expect_rejected(
        "simulate models/five-bar.json --integrator rk4 --t1 0.1 --dt 0.01 --ensemble 2",
        (const char *const[]){"loops", NULL});
    char *files[] = {bad_states, nan_states, two_states};
    for (int f = 0; f < 3; f++) {
        unlink(files[f]);
        free(files[f]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ensemble_equals_single_runs),
        cmocka_unit_test(test_ensemble_independent_of_threads_and_runs),
        cmocka_unit_test(test_ensemble_report_times),
        cmocka_unit_test(test_ensemble_failed_run),
        cmocka_unit_test(test_ensemble_bad_options),
        cmocka_unit_test(test_cli_ensemble_equals_simulate),
        cmocka_unit_test(test_cli_ensemble_header_equals_simulate),
        cmocka_unit_test(test_cli_ensemble_spread_seed),
        cmocka_unit_test(test_cli_ensemble_files),
        cmocka_unit_test(test_cli_ensemble_failed_run),
        cmocka_unit_test(test_cli_ensemble_rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
