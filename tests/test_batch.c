/* test_batch.c: mbd_batch_* against one-state calls, state by state: odd K, tau NULL, a
 * non-finite state among good ones, both formulations, every solver; and the lane forms
 * (bodies, poisson-ldlt, poisson-sweep) at each width the CPU runs (1, 4, 8): lane by lane on random
 * models of every joint type and shape, K = 1, W - 1, W + 1, 1000, unaligned rows,
 * threads 1..4 bit-identical, a singular and a NaN lane among good ones; the lanes' sine
 * and cosine against libm. */
#include "batch/batch.h"
#include "support.h"

#include <math.h>
#include <omp.h>
#include <stdint.h>
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
    mbd_batch *batch;
    mbd_batch_new(model, solver, threads, 0, &batch);
    mbd_work *work;
    mbd_work_new(model, solver, &work);
    assert_non_null(batch);
    assert_non_null(work);
    const int nq = b->nq, nv = b->nv;
    const int rc = mbd_batch_forward(model, batch, b->K, b->q, b->qd, b->tau, b->out, b->status);
    int first = MBD_OK;
    for (int k = 0; k < b->K; k++) {
        const int expect = mbd_forward(model, work, b->q + k * nq, b->qd + k * nv, b->tau + k * nv,
                                       b->ref + k * nv);
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
        assert_int_equal(mbd_batch_forward_momentum(model, batch, b->K, b->q, b->qd, NULL, b->out,
                                                    b->out2, NULL),
                         bad_state >= 0 ? MBD_ENONFINITE : MBD_OK);
        for (int k = 0; k < b->K; k++) {
            if (k == bad_state)
                continue;
            assert_int_equal(mbd_forward_momentum(model, work, b->q + k * nq, b->qd + k * nv, NULL,
                                                  b->ref + k * nv, b->ref2 + k * nv),
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
    mbd_batch *batch;
    assert_int_equal(mbd_batch_new(NULL, bodies, 1, 0, &batch), MBD_EINVAL);
    assert_null(batch);
    assert_int_equal(mbd_batch_new(model, NULL, 1, 0, &batch), MBD_EINVAL);
    assert_null(batch);
    assert_int_equal(mbd_batch_new(model, bodies, -1, 0, &batch), MBD_EINVAL);
    assert_null(batch);
    assert_int_equal(mbd_batch_new(model, bodies, 1, 3, &batch), MBD_EINVAL);
    assert_null(batch);
    assert_int_equal(mbd_batch_new(model, bodies, 1, 0, NULL), MBD_EINVAL);
    mbd_work *work;
    assert_int_equal(mbd_work_new(NULL, bodies, &work), MBD_EINVAL);
    assert_null(work);
    assert_int_equal(mbd_work_new(model, bodies, NULL), MBD_EINVAL);
    assert_int_equal(mbd_batch_new(model, bodies, 0, 1, &batch), MBD_OK);
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

/* ---- the lane forms ---- */

static const int widths[] = {1, 4, 8};

/* Whether this CPU runs the lane width (as mbd_batch_new decides). */
static int cpu_runs(int lanes) { return lanes == 1 || cpu_runs_lanes(lanes); }

/* A batch of the forced width, or NULL (checked) where the CPU cannot run it. */
static mbd_batch *lane_batch(const mbd_model *model, const mbd_solver *solver, int threads,
                             int lanes)
{
    mbd_batch *batch;
    const int status = mbd_batch_new(model, solver, threads, lanes, &batch);
    if (!cpu_runs(lanes)) {
        assert_int_equal(status, MBD_EUNSUPPORTED);
        assert_null(batch);
        return NULL;
    }
    assert_int_equal(status, MBD_OK);
    assert_non_null(batch);
    assert_int_equal(mbd_batch_lanes(batch), lanes);
    return batch;
}

/* A width the CPU cannot run is refused as such, not as bad arguments or no memory. */
static void test_batch_width_unsupported(void **state)
{
    (void)state;
    mbd_model *model = load_model("chain:n=3,joint=revolute");
    int refused = 0;
    for (int lanes = 4; lanes <= 8; lanes += 4)
        if (!cpu_runs(lanes)) {
            mbd_batch *batch;
            assert_int_equal(mbd_batch_new(model, mbd_solver_find("bodies"), 1, lanes, &batch),
                             MBD_EUNSUPPORTED);
            assert_null(batch);
            refused++;
        }
    if (refused == 0)
        print_message("this CPU runs every width: nothing to refuse\n");
    mbd_model_free(model);
}

/* The batch call of the solver's formulation (bodies: acceleration, the Poisson solvers:
 * momentum) into out (and out2). */
static int run_lanes(const mbd_model *model, mbd_batch *batch, const mbd_solver *solver, int K,
                     const double *q, const double *x, const double *tau, double *out, double *out2,
                     int *status)
{
    if (mbd_solver_formulations(solver) & MBD_ACCELERATION)
        return mbd_batch_forward(model, batch, K, q, x, tau, out, status);
    return mbd_batch_forward_momentum(model, batch, K, q, x, tau, out, out2, status);
}

/* Every state of b against the one-state solver: its status, and where it succeeded its
 * results to 1e-12 relative. */
static void check_lanes(const mbd_model *model, const mbd_solver *solver, batch_states *b,
                        int threads, int lanes)
{
    mbd_batch *batch = lane_batch(model, solver, threads, lanes);
    if (!batch)
        return;
    mbd_work *work;
    mbd_work_new(model, solver, &work);
    const int nq = b->nq, nv = b->nv, acc = mbd_solver_formulations(solver) & MBD_ACCELERATION;
    run_lanes(model, batch, solver, b->K, b->q, b->qd, b->tau, b->out, b->out2, b->status);
    for (int k = 0; k < b->K; k++) {
        const double *q = b->q + k * nq, *x = b->qd + k * nv, *tau = b->tau + k * nv;
        const int expect =
            acc ? mbd_forward(model, work, q, x, tau, b->ref + k * nv)
                : mbd_forward_momentum(model, work, q, x, tau, b->ref + k * nv, b->ref2 + k * nv);
        assert_int_equal(b->status[k], expect);
        if (expect)
            continue;
        assert_close(b->out + k * nv, b->ref + k * nv, nv, 1e-12, mbd_solver_name(solver));
        if (!acc)
            assert_close(b->out2 + k * nv, b->ref2 + k * nv, nv, 1e-12, "pd");
    }
    mbd_work_free(work);
    mbd_batch_free(batch);
}

static const char *const lane_solvers[] = {"bodies", "poisson-ldlt", "poisson-sweep"};

static void test_lanes_random_models(void **state)
{
    (void)state;
    for (int type = -1; type < MBD_JOINT_TYPE_COUNT; type++)
        for (int shape = SHAPE_CHAIN; shape <= SHAPE_RANDOM; shape++) {
            mbd_model *model = random_model(40 + 3 * type + shape, 13, type, (tree_shape)shape);
            for (int w = 0; w < 3; w++)
                for (int s = 0; s < 3; s++) {
                    const int W = widths[w], Ks[] = {1, W + 1, W > 1 ? W - 1 : 2, 37};
                    for (int i = 0; i < 4; i++) {
                        batch_states b = states_new(model, Ks[i], 5 + i + 7 * w);
                        check_lanes(model, mbd_solver_find(lane_solvers[s]), &b, 2, W);
                        states_free(&b);
                    }
                }
            mbd_model_free(model);
        }
}

static void test_lanes_thousand_states(void **state)
{
    (void)state;
    mbd_model *model = load_model("chain:n=20,joint=cardan");
    batch_states b = states_new(model, 1000, 17);
    for (int w = 0; w < 3; w++)
        for (int s = 0; s < 3; s++)
            check_lanes(model, mbd_solver_find(lane_solvers[s]), &b, 3, widths[w]);
    states_free(&b);
    mbd_model_free(model);
}

/* Joint angles of every quadrant (the lanes' inline sine and cosine) and beyond 1e5 (the
 * libmvec path, for the whole group or for one lane of a group) on revolute and Cardan
 * chains and binary trees of axial screws, untwisted and twisted (the lanes' X of a screw
 * holds only cos q and sin q), against the one-state solvers' libm (angles only: slides
 * that long would make the dynamics too ill-conditioned to compare at 1e-12). */
static void test_lanes_all_angles(void **state)
{
    (void)state;
    static const char *const specs[] = {"chain:n=12,joint=revolute", "chain:n=12,joint=cardan",
                                        "tree:n=12,branching=2", "tree:n=12,branching=2,skew=0.5"};
    for (size_t m = 0; m < sizeof specs / sizeof *specs; m++) {
        mbd_model *model = load_model(specs[m]);
        batch_states b = states_new(model, 48, 23);
        uint64_t seed = 29;
        test_fill(&seed, b.q, 32 * b.nq, -60.0, 60.0);
        test_fill(&seed, b.q + 32 * b.nq, 8 * b.nq, 1e5, 3e5);
        b.q[40 * b.nq + 3] = -2.5e5; /* state 40's group: one lane's angle is large */
        for (int w = 0; w < 3; w++)
            for (int s = 0; s < 3; s++)
                check_lanes(model, mbd_solver_find(lane_solvers[s]), &b, 1, widths[w]);
        states_free(&b);
        mbd_model_free(model);
    }
}

/* |x - want| in units of want's last place. */
static double ulps(double x, double want)
{
    return fabs(x - want) / (nextafter(fabs(want), INFINITY) - fabs(want));
}

/* The lanes' inline sine and cosine (sincos_x4, which one state uses for its angles where
 * the CPU runs 4 lanes) within 2 units in the last place of libm's over a sweep of 16
 * turns, the quadrants' edges and angles to 1e5; within 4 beyond (libmvec), in groups of 4
 * that mix both. */
static void test_lane_sines(void **state)
{
    (void)state;
    enum { SWEEP = 1 << 16, EDGES = 3 * 64, BEYOND = SWEEP + EDGES + 256, N = BEYOND + 256 };
    static double x[N], s[N], c[N];
    uint64_t seed = 31;
    for (int k = 0; k < SWEEP; k++)
        x[k] = -16.0 * M_PI + 32.0 * M_PI * (k + 0.5) / SWEEP;
    for (int k = 0; k < EDGES; k++) { /* j pi/4 for j = -32..31, and one ulp below and above */
        const double edge = (k / 3 - 32) * M_PI / 4;
        x[SWEEP + k] = k % 3 ? nextafter(edge, k % 3 == 1 ? -INFINITY : INFINITY) : edge;
    }
    test_fill(&seed, x + SWEEP + EDGES, 256, -1e5, 1e5);
    test_fill(&seed, x + BEYOND, 256, 1e5, 3e5);
    x[SWEEP + EDGES + 1] = 1e-300;
    x[BEYOND + 2] = 0.5; /* libmvec's too: its group of 4 has angles beyond 1e5 */
    sincos_x4(x, N, s, c);
    for (int k = 0; k < N; k++) {
        const double most = k < BEYOND ? 2.0 : 4.0;
        if (ulps(s[k], sin(x[k])) > most || ulps(c[k], cos(x[k])) > most)
            fail_msg("sincos_x4(%.17g) = (%.17g, %.17g), libm (%.17g, %.17g)", x[k], s[k], c[k],
                     sin(x[k]), cos(x[k]));
    }
}

/* The good states of b (all but bad1, bad2) give the same bits as when the bad states'
 * rows are copies of state 0: a state's result does not depend on its group-mates. */
static void check_group_mates(const mbd_model *model, const mbd_solver *solver,
                              const batch_states *b, int lanes, int bad1, int bad2)
{
    mbd_batch *batch = lane_batch(model, solver, 2, lanes);
    if (!batch)
        return;
    batch_states clean = states_new(model, b->K, 1);
    const int nq = b->nq, nv = b->nv;
    memcpy(clean.q, b->q, (size_t)b->K * (size_t)nq * sizeof(double));
    memcpy(clean.qd, b->qd, (size_t)b->K * (size_t)nv * sizeof(double));
    memcpy(clean.tau, b->tau, (size_t)b->K * (size_t)nv * sizeof(double));
    for (int k = 0; k < b->K; k++)
        if (k == bad1 || k == bad2) {
            memcpy(clean.q + k * nq, clean.q, (size_t)nq * sizeof(double));
            memcpy(clean.qd + k * nv, clean.qd, (size_t)nv * sizeof(double));
        }
    assert_int_equal(run_lanes(model, batch, solver, b->K, clean.q, clean.qd, clean.tau, clean.out,
                               clean.out2, NULL),
                     MBD_OK);
    for (int k = 0; k < b->K; k++)
        if (k != bad1 && k != bad2)
            assert_memory_equal(b->out + k * nv, clean.out + k * nv, (size_t)nv * sizeof(double));
    states_free(&clean);
    mbd_batch_free(batch);
}

/* A singular state (slides of 1e200 at rest make the articulated inertias overflow) and a NaN
 * state among good ones: each reports its own status, the others stay right, to the bit. */
static void test_lanes_bad_states(void **state)
{
    (void)state;
    mbd_model *model = random_model(9, 7, MIXED_COORDINATE_JOINTS, SHAPE_CHAIN);
    for (int w = 0; w < 3; w++)
        for (int s = 0; s < 3; s++) {
            batch_states b = states_new(model, 2 * widths[w] + 5, 11);
            for (int j = 0; j < b.nq; j++)
                b.q[3 * b.nq + j] = j % 2 ? 1e200 : -1e200;
            memset(b.qd + 3 * b.nv, 0, (size_t)b.nv * sizeof *b.qd);
            b.qd[(b.K - 2) * b.nv] = NAN;
            check_lanes(model, mbd_solver_find(lane_solvers[s]), &b, 2, widths[w]);
            if (cpu_runs(widths[w])) {
                assert_int_equal(b.status[3], MBD_ESINGULAR);
                assert_int_equal(b.status[b.K - 2], MBD_ENONFINITE);
            }
            check_group_mates(model, mbd_solver_find(lane_solvers[s]), &b, widths[w], 3, b.K - 2);
            states_free(&b);
        }
    mbd_model_free(model);
}

/* The bodies sweep runs each group's first pass within the last pass of the group before
 * (batch_lanes.h): groups with a lane whose result overflows, with a NaN lane, all NaN,
 * good, with a singular lane (its first pass run by the good group, the group solved
 * again in lanes without it) and a tail, on one thread and two, against the one-state
 * solver. */
static void test_lanes_pipelined_failures(void **state)
{
    (void)state;
    mbd_model *model = random_model(9, 7, MIXED_COORDINATE_JOINTS, SHAPE_CHAIN);
    for (int w = 0; w < 3; w++) {
        const int W = widths[w];
        batch_states b = states_new(model, 6 * W + 3, 13);
        for (int j = 0; j < b.nv; j++)
            b.qd[(W + 1) * b.nv + j] = 1e160; /* v x I v overflows */
        b.q[(2 * W + 1) * b.nq] = NAN;
        for (int k = 3 * W; k < 4 * W; k++)
            b.qd[k * b.nv] = NAN;
        for (int j = 0; j < b.nq; j++) /* as in test_lanes_bad_states */
            b.q[(5 * W + 1) * b.nq + j] = j % 2 ? 1e200 : -1e200;
        memset(b.qd + (5 * W + 1) * b.nv, 0, (size_t)b.nv * sizeof *b.qd);
        for (int threads = 1; threads <= 2; threads++) {
            check_lanes(model, mbd_solver_find("bodies"), &b, threads, W);
            if (cpu_runs(W)) {
                assert_int_equal(b.status[W + 1], MBD_ENONFINITE);
                assert_int_equal(b.status[2 * W + 1], MBD_ENONFINITE);
                assert_int_equal(b.status[4 * W - 1], MBD_ENONFINITE);
                assert_int_equal(b.status[4 * W], MBD_OK);
                assert_int_equal(b.status[5 * W + 1], MBD_ESINGULAR);
                assert_int_equal(b.status[6 * W + 1], MBD_OK);
            }
        }
        states_free(&b);
    }
    mbd_model_free(model);
}

/* Rows at addresses that are not multiples of 16, 32 or 64 bytes give the same bits;
 * so do 1, 2, 3 and 4 threads. */
static void test_lanes_alignment_and_threads(void **state)
{
    (void)state;
    mbd_model *model = random_model(23, 11, -1, SHAPE_BINARY);
    const mbd_solver *bodies = mbd_solver_find("bodies");
    batch_states b = states_new(model, 45, 29);
    const size_t nq = (size_t)b.K * b.nq, nv = (size_t)b.K * b.nv;
    const size_t doubles = 1 + nq + 3 * nv;                   /* offset by one, then the rows */
    double *base = aligned_alloc(64, (doubles + 7) / 8 * 64); /* whole 64-byte lines */
    assert_non_null(base);
    double *q = base + 1, *qd = q + nq, *tau = qd + nv, *out = tau + nv; /* 8 mod 64 */
    memcpy(q, b.q, nq * sizeof *q);
    memcpy(qd, b.qd, nv * sizeof *qd);
    memcpy(tau, b.tau, nv * sizeof *tau);
    for (int w = 0; w < 3; w++) {
        mbd_batch *reference = lane_batch(model, bodies, 1, widths[w]);
        if (!reference)
            continue;
        assert_int_equal(mbd_batch_forward(model, reference, b.K, b.q, b.qd, b.tau, b.ref, NULL),
                         MBD_OK);
        assert_int_equal(mbd_batch_forward(model, reference, b.K, q, qd, tau, out, NULL), MBD_OK);
        assert_memory_equal(out, b.ref, nv * sizeof *out);
        for (int threads = 2; threads <= 4; threads++) {
            mbd_batch *batch = lane_batch(model, bodies, threads, widths[w]);
            assert_int_equal(mbd_batch_forward(model, batch, b.K, b.q, b.qd, b.tau, b.out, NULL),
                             MBD_OK);
            assert_memory_equal(b.out, b.ref, nv * sizeof *out);
            mbd_batch_free(batch);
        }
        mbd_batch_free(reference);
    }
    free(base);
    states_free(&b);
    mbd_model_free(model);
}

/* lanes 0 picks the widest width the CPU runs for a solver with a lane form, 1 for the
 * others; a forced width on a solver without one runs the one-state loop. */
static void test_lanes_choice(void **state)
{
    (void)state;
    mbd_model *model = load_model("chain:n=4,joint=revolute");
    mbd_model *friction = load_model("chain:n=4,joint=revolute,friction=0.2");
    const int widest = cpu_runs(8) ? 8 : cpu_runs(4) ? 4 : 1;
    for (int s = 0; s < mbd_solver_count(); s++) {
        const mbd_solver *solver = mbd_solver_at(s);
        const char *name = mbd_solver_name(solver);
        const int has_lanes = !strcmp(name, "bodies") || !strncmp(name, "poisson-", 8);
        mbd_batch *batch;
        mbd_batch_new(model, solver, 1, 0, &batch);
        assert_int_equal(mbd_batch_lanes(batch), has_lanes ? widest : 1);
        mbd_batch_free(batch);
        mbd_batch_new(friction, solver, 1, 0, &batch);
        assert_int_equal(mbd_batch_lanes(batch), 1);
        mbd_batch_free(batch);
        if (widest > 1) {
            mbd_batch_new(model, solver, 1, widest, &batch);
            assert_int_equal(mbd_batch_lanes(batch), has_lanes ? widest : 1);
            mbd_batch_free(batch);
        }
    }
    mbd_model_free(friction);
    mbd_model_free(model);
}

/* mbd recommend --batch ranks the SIMD forms with the others: bodies-simd among the rows,
 * named by its solver and W where the CPU has lanes, absent where it has none. */
static void test_recommend_ranks_simd(void **state)
{
    (void)state;
    json_t *root =
        run_json("recommend chain:n=3,joint=revolute --formulation acceleration --batch 16 --json");
    const int W = mbd_solver_lanes(mbd_solver_find("bodies"), MBD_ACCELERATION);
    json_t *ranking = json_object_get(root, "ranking"), *row;
    size_t k;
    int simd_rows = 0;
    json_array_foreach(ranking, k, row)
    {
        const char *variant = json_string_value(json_object_get(row, "variant"));
        assert_non_null(variant);
        if (strcmp(variant, "bodies-simd") != 0)
            continue;
        simd_rows++;
        assert_string_equal(json_string_value(json_object_get(row, "solver")), "bodies");
        assert_int_equal(json_integer_value(json_object_get(row, "lanes")), W);
    }
    assert_int_equal(simd_rows, W > 1);
    assert_true(json_array_size(ranking) >= 3u + (W > 1));
    json_decref(root);
}

/* ---- OpenMP batches: the race check of the batch runner ---- */

/* A batch of states evaluated with one thread and with 2, 3 and 4 threads (OpenMP, one
 * workspace per thread, schedule(static), the model shared read-only) gives bit-identical
 * results: no thread writes anything another reads. libgomp is not instrumented for
 * ThreadSanitizer; this is the equivalent check, and under ASan it also catches a
 * workspace overrun into a neighbour's. */
static void evaluate_batch(const mbd_model *model, const mbd_solver *solver, int threads,
                           int nstates, const double *q, const double *v, const double *tau,
                           double *out, double *pd, int *worst)
{
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
    const int momentum = !(mbd_solver_formulations(solver) & MBD_ACCELERATION);
    mbd_work **works = calloc((size_t)threads, sizeof *works);
    for (int t = 0; t < threads; t++)
        mbd_work_new(model, solver, &works[t]);
    int status_min = MBD_OK;
#pragma omp parallel num_threads(threads) reduction(min : status_min)
    {
        mbd_work *work = works[omp_get_thread_num()];
#pragma omp for schedule(static)
        for (int s = 0; s < nstates; s++) {
            const size_t iq = (size_t)s * (size_t)nq, iv = (size_t)s * (size_t)nv;
            const int status =
                momentum
                    ? mbd_forward_momentum(model, work, q + iq, v + iv, tau + iv, out + iv, pd + iv)
                    : mbd_forward(model, work, q + iq, v + iv, tau + iv, out + iv);
            if (status < status_min)
                status_min = status;
        }
    }
    *worst = status_min;
    for (int t = 0; t < threads; t++)
        mbd_work_free(works[t]);
    free(works);
}

void openblas_set_num_threads(int num_threads); /* libopenblas's own control */

static void test_openmp_batch_bit_identical(void **state)
{
    (void)state;
    /* As the benchmark's batches do: one OpenBLAS thread per state. OpenBLAS threads a
     * factorization only outside an active parallel region, and its threaded dpotrf rounds
     * differently from the sequential one, which the 1-thread reference would see. */
    openblas_set_num_threads(1);
    static const char *const specs[] = {"chain:n=40,joint=cardan",
                                        "tree:n=63,branching=2,skew=0.3"};
    enum { NSTATES = 96 };
    for (size_t m = 0; m < sizeof specs / sizeof specs[0]; m++) {
        mbd_model *model = load_model(specs[m]);
        const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
        const size_t sq = (size_t)NSTATES * (size_t)nq, sv = (size_t)NSTATES * (size_t)nv;
        double *q = malloc(sizeof(double) * sq), *v = malloc(sizeof(double) * sv);
        double *tau = malloc(sizeof(double) * sv);
        double *ref = malloc(sizeof(double) * 2 * sv), *got = malloc(sizeof(double) * 2 * sv);
        uint64_t seed = 2024 + m;
        test_fill(&seed, q, (int)sq, -2.0, 2.0);
        test_fill(&seed, v, (int)sv, -1.0, 1.0);
        test_fill(&seed, tau, (int)sv, -1.0, 1.0);
        for (int k = 0; k < mbd_solver_count(); k++) {
            const mbd_solver *solver = mbd_solver_at(k);
            int worst;
            memset(ref, 0, sizeof(double) * 2 * sv);
            evaluate_batch(model, solver, 1, NSTATES, q, v, tau, ref, ref + sv, &worst);
            assert_int_equal(worst, MBD_OK);
            for (int threads = 2; threads <= 4; threads++) {
                memset(got, 0, sizeof(double) * 2 * sv);
                evaluate_batch(model, solver, threads, NSTATES, q, v, tau, got, got + sv, &worst);
                assert_int_equal(worst, MBD_OK);
                if (memcmp(ref, got, sizeof(double) * 2 * sv) != 0) {
                    print_error("%s, %s: %d threads differ from 1 thread\n", specs[m],
                                mbd_solver_name(solver), threads);
                    fail();
                }
            }
        }
        free(q);
        free(v);
        free(tau);
        free(ref);
        free(got);
        mbd_model_free(model);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_equals_one_state),
        cmocka_unit_test(test_batch_nonfinite_state),
        cmocka_unit_test(test_batch_bad_arguments),
        cmocka_unit_test(test_batch_width_unsupported),
        cmocka_unit_test(test_lanes_random_models),
        cmocka_unit_test(test_lanes_thousand_states),
        cmocka_unit_test(test_lanes_all_angles),
        cmocka_unit_test(test_lane_sines),
        cmocka_unit_test(test_lanes_bad_states),
        cmocka_unit_test(test_lanes_pipelined_failures),
        cmocka_unit_test(test_lanes_alignment_and_threads),
        cmocka_unit_test(test_lanes_choice),
        cmocka_unit_test(test_recommend_ranks_simd),
        cmocka_unit_test(test_openmp_batch_bit_identical),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
