/* test_batch.c: mbd_batch_* against one-state calls, state by state: odd K, tau NULL, a
 * non-finite state among good ones, both formulations, every solver. */
#include "support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int K, nq, nv;
    double *q, *qd, *tau, *out, *out2, *ref, *ref2;
    int *status;
} batch_states;

static batch_states states_new(const mbd_model *model, int K, uint64_t seed)
{
    batch_states b = {.K = K, .nq = mbd_model_nq(model), .nv = mbd_model_nv(model)};
    const size_t nq = (size_t)K * b.nq, nv = (size_t)K * b.nv;
    b.q = malloc((nq + 6 * nv) * sizeof(double));
    b.status = malloc((size_t)K * sizeof(int));
    assert_non_null(b.q);
    assert_non_null(b.status);
    b.qd = b.q + nq;
    b.tau = b.qd + nv;
    b.out = b.tau + nv;
    b.out2 = b.out + nv;
    b.ref = b.out2 + nv;
    b.ref2 = b.ref + nv;
    test_fill(&seed, b.q, (int)nq, -1.5, 1.5);
    test_fill(&seed, b.qd, (int)nv, -1.0, 1.0);
    test_fill(&seed, b.tau, (int)nv, -2.0, 2.0);
    return b;
}

static void states_free(batch_states *b)
{
    free(b->q);
    free(b->status);
}

/* Each state of the batch against mbd_forward (and, where offered, the momentum form). */
static void check_batch(const mbd_model *model, const mbd_solver *solver, batch_states *b,
                        int threads, int bad_state)
{
    mbd_batch *batch = mbd_batch_new(model, solver, threads, 0);
    mbd_work *work = mbd_work_new(model, solver);
    assert_non_null(batch);
    assert_non_null(work);
    const int nq = b->nq, nv = b->nv;
    const int rc = mbd_batch_forward(model, batch, b->K, b->q, b->qd, b->tau, b->out, b->status);
    int first = MBD_OK;
    for (int k = 0; k < b->K; k++) {
        const int expect = mbd_forward(model, work, b->q + k * nq, b->qd + k * nv,
                                       b->tau + k * nv, b->ref + k * nv);
        assert_int_equal(b->status[k], expect);
        if (!first)
            first = expect;
        if (!expect)
            assert_close(b->out + k * nv, b->ref + k * nv, nv, 1e-12, mbd_solver_name(solver));
        else if (mbd_solver_formulations(solver) & MBD_ACCELERATION)
            assert_int_equal(k * 100 + expect, bad_state * 100 + MBD_ENONFINITE);
    }
    assert_int_equal(rc, first);
    if (mbd_solver_formulations(solver) & MBD_MOMENTUM) {
        assert_int_equal(mbd_batch_forward_momentum(model, batch, b->K, b->q, b->qd, NULL,
                                                    b->out, b->out2, NULL),
                         bad_state >= 0 ? MBD_ENONFINITE : MBD_OK);
        for (int k = 0; k < b->K; k++) {
            if (k == bad_state)
                continue;
            assert_int_equal(mbd_forward_momentum(model, work, b->q + k * nq, b->qd + k * nv,
                                                  NULL, b->ref + k * nv, b->ref2 + k * nv),
                             MBD_OK);
            assert_close(b->out + k * nv, b->ref + k * nv, nv, 1e-12, "batch qd");
            assert_close(b->out2 + k * nv, b->ref2 + k * nv, nv, 1e-12, "batch pd");
        }
    }
    mbd_work_free(work);
    mbd_batch_free(batch);
}

static void test_batch_equals_one_state(void **state)
{
    (void)state;
    mbd_model *model = random_model(11, 9, -1, SHAPE_RANDOM);
    const int Ks[] = {0, 1, 3, 7, 9, 17, 101};
    for (int s = 0; s < mbd_solver_count(); s++)
        for (size_t i = 0; i < sizeof Ks / sizeof *Ks; i++)
            for (int threads = 1; threads <= 3; threads++) {
                batch_states b = states_new(model, Ks[i], 7 + i);
                check_batch(model, mbd_solver_at(s), &b, threads, -1);
                states_free(&b);
            }
    mbd_model_free(model);
}

static void test_batch_nonfinite_state(void **state)
{
    (void)state;
    mbd_model *model = load_model("chain:n=6,joint=revolute");
    batch_states b = states_new(model, 13, 3);
    b.qd[5 * b.nv + 2] = NAN;
    for (int s = 0; s < mbd_solver_count(); s++)
        check_batch(model, mbd_solver_at(s), &b, 2, 5);
    states_free(&b);
    mbd_model_free(model);
}

static void test_batch_bad_arguments(void **state)
{
    (void)state;
    mbd_model *model = load_model("chain:n=3,joint=revolute");
    mbd_model *other = load_model("chain:n=3,joint=revolute");
    const mbd_solver *bodies = mbd_solver_find("bodies");
    assert_null(mbd_batch_new(NULL, bodies, 1, 0));
    assert_null(mbd_batch_new(model, NULL, 1, 0));
    assert_null(mbd_batch_new(model, bodies, -1, 0));
    assert_null(mbd_batch_new(model, bodies, 1, 3));
    mbd_batch *batch = mbd_batch_new(model, bodies, 0, 1);
    assert_non_null(batch);
    assert_int_equal(mbd_batch_lanes(batch), 1);
    assert_true(mbd_batch_threads(batch) >= 1);
    double q[3] = {0}, qdd[3];
    assert_int_equal(mbd_batch_forward(other, batch, 1, q, q, NULL, qdd, NULL), MBD_EINVAL);
    assert_int_equal(mbd_batch_forward(model, batch, -1, q, q, NULL, qdd, NULL), MBD_EINVAL);
    assert_int_equal(mbd_batch_forward(model, batch, 1, q, NULL, NULL, qdd, NULL), MBD_EINVAL);
    assert_int_equal(mbd_batch_forward(model, batch, 0, NULL, NULL, NULL, NULL, NULL), MBD_OK);
    mbd_batch_free(batch);
    mbd_model_free(other);
    mbd_model_free(model);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_equals_one_state),
        cmocka_unit_test(test_batch_nonfinite_state),
        cmocka_unit_test(test_batch_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
