/* Conformance of every registered solver: the O(N) solvers against the dense one on random
 * models of every joint type and shape, the momentum round trip, pd against finite
 * differences of the Lagrangian and of p along the motion, long chains, and bad states. */
#include "support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    mbd_model *model;
    int nq, nv;
    double *q, *qd, *tau, *p, *out, *out2, *ref, *ref2;
} problem;

static problem *problem_new(mbd_model *model, uint64_t seed)
{
    problem *pr = calloc(1, sizeof *pr);
    pr->model = model;
    pr->nq = mbd_model_nq(model);
    pr->nv = mbd_model_nv(model);
    double *mem = calloc((size_t)(pr->nq + 8 * pr->nv), sizeof(double));
    double **slots[] = {&pr->qd, &pr->tau, &pr->p, &pr->out, &pr->out2, &pr->ref, &pr->ref2};
    pr->q = mem;
    for (size_t k = 0; k < sizeof slots / sizeof slots[0]; k++)
        *slots[k] = mem + pr->nq + (size_t)k * pr->nv;
    uint64_t s = seed + 17;
    test_fill(&s, pr->q, pr->nq, -2.0, 2.0);
    test_fill(&s, pr->qd, pr->nv, -1.0, 1.0);
    test_fill(&s, pr->tau, pr->nv, -2.0, 2.0);
    return pr;
}

static void problem_free(problem *pr)
{
    mbd_model_free(pr->model);
    free(pr->q);
    free(pr);
}

static double norm2(const double *x, int n)
{
    double s = 0.0;
    for (int k = 0; k < n; k++)
        s += x[k] * x[k];
    return sqrt(s);
}

/* L = T - V at (q, qd). */
static double lagrangian_at(problem *pr, mbd_work *work, const double *q, const double *qd)
{
    double T = 0.0, V = 0.0;
    assert_int_equal(mbd_energy(pr->model, work, q, qd, &T, &V), MBD_OK);
    return T - V;
}

/* Every momentum solver's pd at (q, p = H qd) equals pr->ref to 1e-7 (finite differences). */
static void check_pd_of_momentum_solvers(problem *pr, const char *label)
{
    mbd_work *work;
    mbd_work_new(pr->model, NULL, &work);
    assert_int_equal(mbd_momentum(pr->model, work, pr->q, pr->qd, pr->p), MBD_OK);
    mbd_work_free(work);
    for (int s = 0; s < mbd_solver_count(); s++) {
        const mbd_solver *solver = mbd_solver_at(s);
        if (!(mbd_solver_formulations(solver) & MBD_MOMENTUM))
            continue;
        mbd_work *sw;
        mbd_work_new(pr->model, solver, &sw);
        assert_int_equal(
            mbd_forward_momentum(pr->model, sw, pr->q, pr->p, pr->tau, pr->out, pr->out2), MBD_OK);
        char what[96];
        snprintf(what, sizeof what, "%s, %s", label, mbd_solver_name(solver));
        assert_close(pr->out2, pr->ref, pr->nv, 1e-7, what);
        mbd_work_free(sw);
    }
}

/* qd -> p -> qd_back: the residual H qd_back - p is at round-off whatever the model; the
 * forward error qd_back - qd is cond(H) eps, so 1e-12 holds for the small models only
 * (measured: up to 1.2e-10 on random 200-body chains of 1- and 2-DOF joints; cond(H)
 * reaches 4.4e8 on the 200-body chain of free joints, so 1e-7 there). */
static void check_round_trip(problem *pr, mbd_work *work, const double *qd_back, const char *label)
{
    double *p_back = malloc(sizeof(double) * (size_t)pr->nv);
    assert_int_equal(mbd_momentum(pr->model, work, pr->q, qd_back, p_back), MBD_OK);
    assert_close(p_back, pr->p, pr->nv, 1e-12, label);
    assert_close(qd_back, pr->qd, pr->nv,
                 pr->nv <= 60       ? 1e-12
                 : pr->nq == pr->nv ? 1e-9
                                    : 1e-7,
                 label);
    free(p_back);
}

/* Every solver against the dense one: qdd, and (qd, pd) from p = H qd; p round trip. Two
 * solvers differ by cond(H) eps: 1e-10 holds up to cond(H) ~ 1e5, but the random 200-body
 * chains and trees with spherical and free joints reach cond(H) = 4.4e8 (measured
 * 1.8e-10 between bodies and dense), so 1e-8 there. */
static void check_against_dense(problem *pr)
{
    const double tol = pr->nq != pr->nv && pr->nv > 60 ? 1e-8 : 1e-10;
    const mbd_solver *dense = mbd_solver_find("dense");
    mbd_work *ref_work;
    mbd_work_new(pr->model, dense, &ref_work);
    double *qdd_ref = malloc(sizeof(double) * (size_t)pr->nv);
    assert_int_equal(mbd_momentum(pr->model, ref_work, pr->q, pr->qd, pr->p), MBD_OK);
    assert_int_equal(mbd_forward(pr->model, ref_work, pr->q, pr->qd, pr->tau, qdd_ref), MBD_OK);
    assert_int_equal(
        mbd_forward_momentum(pr->model, ref_work, pr->q, pr->p, pr->tau, pr->ref, pr->ref2),
        MBD_OK);
    check_round_trip(pr, ref_work, pr->ref, "dense");
    for (int k = 0; k < mbd_solver_count(); k++) {
        const mbd_solver *solver = mbd_solver_at(k);
        mbd_work *work;
        mbd_work_new(pr->model, solver, &work);
        if (mbd_solver_formulations(solver) & MBD_ACCELERATION) {
            assert_int_equal(mbd_forward(pr->model, work, pr->q, pr->qd, pr->tau, pr->out), MBD_OK);
            assert_close(pr->out, qdd_ref, pr->nv, tol, mbd_solver_name(solver));
        }
        if (mbd_solver_formulations(solver) & MBD_MOMENTUM) {
            assert_int_equal(
                mbd_forward_momentum(pr->model, work, pr->q, pr->p, pr->tau, pr->out, pr->out2),
                MBD_OK);
            check_round_trip(pr, work, pr->out, mbd_solver_name(solver));
            assert_close(pr->out2, pr->ref2, pr->nv, tol, mbd_solver_name(solver));
        }
        mbd_work_free(work);
    }
    free(qdd_ref);
    mbd_work_free(ref_work);
}

/* pd = tau + dL/dq at fixed qd (L = T - V), by central differences, for each momentum
 * solver. Step 1e-5: truncation ~1e-10, round-off ~1e-11 relative. Only where qd = dq/dt:
 * with spherical and free joints pd = d/dt p holds (check_pd_along_motion), not this. */
static void check_pd_against_lagrangian(problem *pr)
{
    const double h = 1e-5;
    mbd_work *work;
    mbd_work_new(pr->model, NULL, &work);
    double *qh = malloc(sizeof(double) * (size_t)pr->nq);
    for (int k = 0; k < pr->nv; k++) {
        memcpy(qh, pr->q, sizeof(double) * (size_t)pr->nq);
        qh[k] = pr->q[k] + h;
        const double Lp = lagrangian_at(pr, work, qh, pr->qd);
        qh[k] = pr->q[k] - h;
        const double Lm = lagrangian_at(pr, work, qh, pr->qd);
        pr->ref[k] = pr->tau[k] + (Lp - Lm) / (2 * h);
    }
    free(qh);
    mbd_work_free(work);
    check_pd_of_momentum_solvers(pr, "pd vs tau + dL/dq");
}

/* pd = d/dt (H qd) along the motion that `bodies` computes: central difference of p over
 * the second-order Taylor states q(+-h) = q +- h qdot + h^2/2 qddot, qd(+-h) = qd +- h qdd,
 * with qdot = G(q) qd (mbd_position_rates) and qddot = d/dt (G(q) qd) by a central
 * difference of its own (its error, O(h^2), enters q(+-h) times h^2). */
static void check_pd_along_motion(problem *pr)
{
    const double h = 1e-5;
    mbd_work *bw;
    mbd_work_new(pr->model, mbd_solver_find("bodies"), &bw);
    const int n = pr->nv, nq = pr->nq;
    double *qdd = malloc(sizeof(double) * (3 * (size_t)n + 5 * (size_t)nq));
    double *vs = qdd + n, *pp = vs + n, *qs = pp + n, *qdot = qs + nq, *qddot = qdot + nq;
    double *rate_plus = qddot + nq, *rate_minus = rate_plus + nq;
    assert_int_equal(mbd_forward(pr->model, bw, pr->q, pr->qd, pr->tau, qdd), MBD_OK);
    assert_int_equal(mbd_position_rates(pr->model, pr->q, pr->qd, qdot), MBD_OK);
    for (int sign = 1; sign >= -1; sign -= 2) {
        for (int k = 0; k < nq; k++)
            qs[k] = pr->q[k] + sign * h * qdot[k];
        for (int k = 0; k < n; k++)
            vs[k] = pr->qd[k] + sign * h * qdd[k];
        assert_int_equal(mbd_position_rates(pr->model, qs, vs, sign > 0 ? rate_plus : rate_minus),
                         MBD_OK);
    }
    for (int k = 0; k < nq; k++)
        qddot[k] = (rate_plus[k] - rate_minus[k]) / (2 * h);
    for (int sign = 1; sign >= -1; sign -= 2) {
        for (int k = 0; k < nq; k++)
            qs[k] = pr->q[k] + sign * h * qdot[k] + 0.5 * h * h * qddot[k];
        for (int k = 0; k < n; k++)
            vs[k] = pr->qd[k] + sign * h * qdd[k];
        assert_int_equal(mbd_momentum(pr->model, bw, qs, vs, sign > 0 ? pp : pr->ref), MBD_OK);
    }
    for (int k = 0; k < n; k++)
        pr->ref[k] = (pp[k] - pr->ref[k]) / (2 * h);
    free(qdd);
    mbd_work_free(bw);
    check_pd_of_momentum_solvers(pr, "pd vs d/dt(H qd)");
}

/* Random models of every joint type (type < 0: mixed), or with coordinates_only those
 * whose velocities are the derivatives of the coordinates (no spherical or free joints). */
static void for_random_models(void (*check)(problem *), const int *sizes, int nsizes,
                              int coordinates_only)
{
    static const tree_shape shapes[] = {SHAPE_CHAIN, SHAPE_BINARY, SHAPE_RANDOM};
    const int mixed = coordinates_only ? MIXED_COORDINATE_JOINTS : MIXED_JOINTS;
    const int last = coordinates_only ? MBD_CARDAN : MBD_JOINT_TYPE_COUNT - 1;
    for (int type = mixed; type <= last; type++)
        for (int s = 0; s < 3; s++)
            for (int k = 0; k < nsizes; k++) {
                if (coordinates_only && type == MIXED_JOINTS)
                    continue;
                const uint64_t seed = (uint64_t)(1000 * (type + 1) + 100 * s + k);
                problem *pr = problem_new(random_model(seed, sizes[k], type, shapes[s]), seed);
                check(pr);
                problem_free(pr);
            }
}

static void test_against_dense(void **state)
{
    (void)state;
    static const int sizes[] = {1, 2, 3, 7, 30, 200};
    for_random_models(check_against_dense, sizes, 6, 0);
}

static void test_pd_against_lagrangian(void **state)
{
    (void)state;
    static const int sizes[] = {1, 4, 12};
    for_random_models(check_pd_against_lagrangian, sizes, 3, 1);
}

static void test_pd_along_motion(void **state)
{
    (void)state;
    static const int sizes[] = {1, 4, 12};
    for_random_models(check_pd_along_motion, sizes, 3, 0);
}

/* qd from p on a long chain: the forward error grows with cond(H) (1e-9 at N = 1000,
 * 1e-7 at N = 5000 for both Poisson solvers alike), so the check is the residual. */
static void check_long_round_trip(problem *pr, mbd_work *work, const char *label)
{
    double *p_back = malloc(sizeof(double) * (size_t)pr->nv);
    assert_int_equal(mbd_momentum(pr->model, work, pr->q, pr->out, p_back), MBD_OK);
    assert_close(p_back, pr->p, pr->nv, 1e-12, label);
    free(p_back);
}

/* Long chains: finite results; RNEA of the bodies qdd gives tau back; both Poisson solvers
 * recover p and agree on pd. Their pd differ by cond(H) eps through qd: measured 2e-10 at
 * N = 1000 and 1.6e-8 on the 5000-body cylindrical chain (2e-14 on the binary tree). */
static void check_long_chain(const char *spec, double pd_tol)
{
    problem *pr = problem_new(load_model(spec), 5);
    const mbd_solver *bodies = mbd_solver_find("bodies");
    const mbd_solver *sweep = mbd_solver_find("poisson-sweep"),
                     *ldlt = mbd_solver_find("poisson-ldlt");
    mbd_work *bw, *sw;
    mbd_work_new(pr->model, bodies, &bw);
    mbd_work_new(pr->model, sweep, &sw);
    mbd_work *lw;
    mbd_work_new(pr->model, ldlt, &lw);
    assert_int_equal(mbd_forward(pr->model, bw, pr->q, pr->qd, pr->tau, pr->ref2), MBD_OK);
    assert_int_equal(mbd_inverse_dynamics(pr->model, bw, pr->q, pr->qd, pr->ref2, pr->out, NULL),
                     MBD_OK);
    double *bias = calloc((size_t)pr->nv, sizeof(double)),
           *zero = calloc((size_t)pr->nv, sizeof(double));
    assert_int_equal(mbd_inverse_dynamics(pr->model, bw, pr->q, pr->qd, zero, bias, NULL), MBD_OK);
    /* relative to the forces at play (gravity on a long chain dwarfs tau) */
    assert_true(rel_error(pr->out, pr->tau, pr->nv, 0.0) * norm2(pr->tau, pr->nv) <=
                1e-12 * norm2(bias, pr->nv));
    free(bias);
    free(zero);
    assert_int_equal(mbd_momentum(pr->model, sw, pr->q, pr->qd, pr->p), MBD_OK);
    assert_int_equal(mbd_forward_momentum(pr->model, sw, pr->q, pr->p, pr->tau, pr->out, pr->ref),
                     MBD_OK);
    check_long_round_trip(pr, sw, "poisson-sweep");
    assert_int_equal(mbd_forward_momentum(pr->model, lw, pr->q, pr->p, pr->tau, pr->out, pr->out2),
                     MBD_OK);
    check_long_round_trip(pr, lw, "poisson-ldlt");
    assert_close(pr->out2, pr->ref, pr->nv, pd_tol, "pd sweep vs ldlt");
    mbd_work_free(bw);
    mbd_work_free(sw);
    mbd_work_free(lw);
    problem_free(pr);
}

static void test_long_chains(void **state)
{
    (void)state;
    check_long_chain("chain:n=1000,joint=revolute", 1e-8);
    check_long_chain("chain:n=1000,joint=cardan", 1e-8);
    check_long_chain("chain:n=1000,joint=cylindrical", 1e-8);
    check_long_chain("chain:n=5000,joint=cylindrical", 1e-7);
    check_long_chain("tree:n=5000,branching=2,skew=0.5", 1e-8);
}

/* NaN or Inf anywhere in the state gives MBD_ENONFINITE from every solver. */
static void test_nonfinite_states(void **state)
{
    (void)state;
    problem *pr = problem_new(random_model(3, 6, -1, SHAPE_RANDOM), 3);
    double *inputs[] = {pr->q, pr->qd, pr->tau};
    for (int s = 0; s < mbd_solver_count(); s++) {
        const mbd_solver *solver = mbd_solver_at(s);
        mbd_work *work;
        mbd_work_new(pr->model, solver, &work);
        for (int k = 0; k < 3; k++) {
            const double saved = inputs[k][1];
            inputs[k][1] = k == 1 ? INFINITY : NAN;
            if (mbd_solver_formulations(solver) & MBD_ACCELERATION)
                assert_int_equal(mbd_forward(pr->model, work, pr->q, pr->qd, pr->tau, pr->out),
                                 MBD_ENONFINITE);
            if (mbd_solver_formulations(solver) & MBD_MOMENTUM)
                assert_int_equal(mbd_forward_momentum(pr->model, work, pr->q, pr->qd, pr->tau,
                                                      pr->out, pr->out2),
                                 MBD_ENONFINITE);
            inputs[k][1] = saved;
        }
        mbd_work_free(work);
    }
    problem_free(pr);
}

/* A solver asked for a formulation it does not offer says so. */
static void test_unsupported_formulation(void **state)
{
    (void)state;
    problem *pr = problem_new(random_model(4, 3, MBD_REVOLUTE, SHAPE_CHAIN), 4);
    mbd_work *bw;
    mbd_work_new(pr->model, mbd_solver_find("bodies"), &bw);
    mbd_work *lw;
    mbd_work_new(pr->model, mbd_solver_find("poisson-ldlt"), &lw);
    assert_int_equal(mbd_forward_momentum(pr->model, bw, pr->q, pr->p, NULL, pr->out, pr->out2),
                     MBD_EUNSUPPORTED);
    assert_int_equal(mbd_forward(pr->model, lw, pr->q, pr->qd, NULL, pr->out), MBD_EUNSUPPORTED);
    mbd_work_free(bw);
    mbd_work_free(lw);
    problem_free(pr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_dense),    cmocka_unit_test(test_pd_against_lagrangian),
        cmocka_unit_test(test_pd_along_motion),  cmocka_unit_test(test_long_chains),
        cmocka_unit_test(test_nonfinite_states), cmocka_unit_test(test_unsupported_formulation),
    };
    return cmocka_run_group_tests_name("solvers", tests, NULL, NULL);
}
