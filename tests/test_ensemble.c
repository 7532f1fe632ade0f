/* test_ensemble.c: mbd_simulate_ensemble against mbd_simulate's RK4 run by run, its
 * independence of the thread count and of the other runs (bit for bit), a failed run
 * among good ones, the report times, and bad options. */
#include "support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define K_RUNS 5
#define MAX_REPORTS 64

/* Every report of an ensemble: times and the K runs' (q, qd) rows. */
typedef struct {
    int n, K, count;
    double t[MAX_REPORTS];
    long step[MAX_REPORTS];
    double *x; /* (MAX_REPORTS, K, 2 n) */
    int status[MAX_REPORTS][K_RUNS];
    double t_failed[K_RUNS]; /* at the last report */
} ensemble_log;

static ensemble_log *log_new(int n, int K)
{
    ensemble_log *log = calloc(1, sizeof *log);
    assert_non_null(log);
    log->n = n;
    log->K = K;
    log->x = calloc((size_t)MAX_REPORTS * K * 2 * n, sizeof *log->x);
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
    return log->x + ((size_t)report * log->K + run) * 2 * log->n;
}

static int record_ensemble(const mbd_ensemble_state *s, void *ctx)
{
    ensemble_log *log = ctx;
    assert_true(log->count < MAX_REPORTS);
    assert_int_equal(s->K, log->K);
    log->t[log->count] = s->t;
    log->step[log->count] = s->step;
    for (int k = 0; k < s->K; k++) {
        memcpy(log_state(log, log->count, k), s->q + k * log->n, log->n * sizeof(double));
        memcpy(log_state(log, log->count, k) + log->n, s->qd + k * log->n, log->n * sizeof(double));
        log->status[log->count][k] = s->status[k];
        log->t_failed[k] = s->t_failed[k];
    }
    log->count++;
    return MBD_OK;
}

/* One run by mbd_simulate: its (q, qd) rows at every step. */
typedef struct {
    int n, count;
    double x[MAX_REPORTS][2 * 16];
} single_log;

static int record_single(const mbd_sim_state *s, void *ctx)
{
    single_log *log = ctx;
    assert_true(log->count < MAX_REPORTS);
    memcpy(log->x[log->count], s->q, log->n * sizeof(double));
    memcpy(log->x[log->count] + log->n, s->qd, log->n * sizeof(double));
    log->count++;
    return MBD_OK;
}

static double *initial_states(int n, int K, uint64_t seed)
{
    double *x = malloc((size_t)K * 2 * n * sizeof *x);
    assert_non_null(x);
    test_fill(&seed, x, K * n, -1.5, 1.5);
    test_fill(&seed, x + K * n, K * n, -1.0, 1.0);
    return x;
}

static ensemble_log *run_ensemble(const mbd_model *model, const char *solver,
                                  const mbd_ensemble_options *opt, int K, const double *x0,
                                  int expect)
{
    const int n = mbd_model_nv(model);
    ensemble_log *log = log_new(n, K);
    int status[K_RUNS];
    assert_int_equal(mbd_simulate_ensemble(model, mbd_solver_find(solver), opt, K, x0,
                                           x0 + K * n, record_ensemble, log, status),
                     expect);
    for (int k = 0; k < K; k++)
        assert_int_equal(status[k], log->status[log->count - 1][k]);
    return log;
}

/* Each run equals mbd_simulate's RK4 (every step reported) from the same state, to
 * round-off; t1 is a multiple of the binary step, so both take the same steps. */
static void test_ensemble_equals_single_runs(void **unused)
{
    (void)unused;
    const char *solvers[] = {"bodies", "dense", "sparse"};
    mbd_model *model = load_model("chain:n=4,joint=cardan");
    const int n = mbd_model_nv(model);
    double *x0 = initial_states(n, K_RUNS, 7);
    const mbd_ensemble_options opt = {.t1 = 0.25, .dt = 1.0 / 64, .report_every = 1};
    const mbd_sim_options single = {.formulation = MBD_ACCELERATION, .integrator = MBD_RK4,
                                    .t1 = opt.t1, .dt = opt.dt};
    for (size_t s = 0; s < sizeof solvers / sizeof *solvers; s++) {
        ensemble_log *log = run_ensemble(model, solvers[s], &opt, K_RUNS, x0, MBD_OK);
        assert_int_equal(log->count, 17);
        for (int k = 0; k < K_RUNS; k++) {
            single_log one = {.n = n};
            double *q = malloc(2 * n * sizeof *q);
            memcpy(q, x0 + k * n, n * sizeof *q);
            memcpy(q + n, x0 + (K_RUNS + k) * n, n * sizeof *q);
            assert_int_equal(mbd_simulate(model, mbd_solver_find(solvers[s]), &single, q, q + n,
                                          record_single, &one, NULL),
                             MBD_OK);
            assert_int_equal(one.count, log->count);
            for (int r = 0; r < log->count; r++)
                assert_close(log_state(log, r, k), one.x[r], 2 * n, 1e-12, solvers[s]);
            free(q);
        }
        log_free(log);
    }
    free(x0);
    mbd_model_free(model);
}

/* The same bits whatever the thread count, and a run alone gives its bits in the
 * ensemble. */
static void test_ensemble_independent_of_threads_and_runs(void **unused)
{
    (void)unused;
    mbd_model *model = load_model("tree:n=7,branching=2,skew=0.5");
    const int n = mbd_model_nv(model);
    double *x0 = initial_states(n, K_RUNS, 11);
    mbd_ensemble_options opt = {.t1 = 0.3, .dt = 0.01, .report_every = 5, .threads = 1};
    ensemble_log *one = run_ensemble(model, "bodies", &opt, K_RUNS, x0, MBD_OK);
    opt.threads = 3;
    ensemble_log *three = run_ensemble(model, "bodies", &opt, K_RUNS, x0, MBD_OK);
    assert_int_equal(one->count, three->count);
    assert_memory_equal(one->x, three->x, (size_t)one->count * K_RUNS * 2 * n * sizeof(double));
    const int k = 3;
    double *alone = malloc(2 * n * sizeof *alone);
    memcpy(alone, x0 + k * n, n * sizeof *alone);
    memcpy(alone + n, x0 + (K_RUNS + k) * n, n * sizeof *alone);
    ensemble_log *solo = run_ensemble(model, "bodies", &opt, 1, alone, MBD_OK);
    for (int r = 0; r < one->count; r++)
        assert_memory_equal(log_state(solo, r, 0), log_state(one, r, k), 2 * n * sizeof(double));
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
    const int n = mbd_model_nv(model);
    double *x0 = initial_states(n, 2, 3);
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

/* A run that starts from NaN fails at once with its status and time; the others go on
 * and equal the ensemble without it. */
static void test_ensemble_failed_run(void **unused)
{
    (void)unused;
    mbd_model *model = load_model("chain:n=3,joint=cylindrical");
    const int n = mbd_model_nv(model), bad = 2;
    double *x0 = initial_states(n, K_RUNS, 5);
    const mbd_ensemble_options opt = {.t1 = 0.2, .dt = 0.02, .report_every = 2};
    ensemble_log *good = run_ensemble(model, "bodies", &opt, K_RUNS, x0, MBD_OK);
    x0[(K_RUNS + bad) * n + 1] = NAN;
    ensemble_log *log = run_ensemble(model, "bodies", &opt, K_RUNS, x0, MBD_ENONFINITE);
    for (int r = 0; r < log->count; r++)
        for (int k = 0; k < K_RUNS; k++) {
            assert_int_equal(log->status[r][k], k == bad && r > 0 ? MBD_ENONFINITE : MBD_OK);
            if (k != bad)
                assert_memory_equal(log_state(log, r, k), log_state(good, r, k),
                                    2 * n * sizeof(double));
        }
    assert_true(log->t_failed[bad] == 0.0 && isnan(log->t_failed[0]));
    /* the failed run keeps the state it failed from: its initial one */
    assert_memory_equal(log_state(log, log->count - 1, bad), log_state(log, 0, bad),
                        n * sizeof(double));
    log_free(log);
    log_free(good);
    free(x0);
    mbd_model_free(model);
}

static void test_ensemble_bad_options(void **unused)
{
    (void)unused;
    mbd_model *model = load_model("chain:n=2,joint=revolute");
    const mbd_solver *solver = mbd_solver_find("bodies");
    double x0[4] = {0.1, 0.2, 0.0, 0.0};
    const mbd_ensemble_options good = {.t1 = 1.0, .dt = 0.1, .report_every = 1};
    mbd_ensemble_options bad[] = {good, good, good, good, good};
    bad[0].t1 = 0.0;
    bad[1].dt = -0.1;
    bad[2].dt = NAN;
    bad[3].report_every = 0;
    bad[4].threads = -1;
    for (size_t b = 0; b < sizeof bad / sizeof *bad; b++)
        assert_int_not_equal(mbd_simulate_ensemble(model, solver, &bad[b], 1, x0, x0 + 2, NULL,
                                                   NULL, NULL),
                             MBD_OK);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ensemble_equals_single_runs),
        cmocka_unit_test(test_ensemble_independent_of_threads_and_runs),
        cmocka_unit_test(test_ensemble_report_times),
        cmocka_unit_test(test_ensemble_failed_run),
        cmocka_unit_test(test_ensemble_bad_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
