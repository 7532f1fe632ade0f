/* Armature and passive forces (mbd_passive, mbd_tendon_def): every solver against the dense
 * one, H's diagonal, the lanes, inverse dynamics, the known forces of a spring, a damper
 * and gravity compensation, the power balance of the energy, the derivatives against
 * central differences of the forward dynamics, and the JSON reader. */
#include "support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* random_model(seed, nb, type, SHAPE_RANDOM) with what `which` asks for: armature,
 * dampers, springs (about random rest positions), gravity compensation (some joints' share
 * left to their actuators), a fixed tendon over the 1-DOF joints. */
enum {
    ARMATURE = 1,
    DAMPERS = 2,
    SPRINGS = 4,
    GRAVCOMP = 8,
    TENDON = 16,
    ALL = 31,
    BY_ACTUATORS = 32, /* every third joint's share of gravity compensation */
    ROTORS_ONLY = 64
}; /* no armature on free joints (whose translation's is tau_p's) */

static mbd_model *passive_model(uint64_t seed, int nb, int type, unsigned which)
{
    mbd_model *rigid = random_model(seed, nb, type, SHAPE_RANDOM);
    mbd_body_def *bodies = calloc((size_t)nb, sizeof *bodies);
    int *tendon_bodies = calloc((size_t)nb, sizeof *tendon_bodies), ncoef = 0;
    double *coef = calloc((size_t)nb, sizeof *coef);
    uint64_t s = seed + 77;
    for (int i = 0; i < nb; i++) {
        mbd_body_def *b = &bodies[i];
        *b = *mbd_model_body(rigid, i);
        const double armature = test_uniform(&s, 0.01, 0.5), damping = test_uniform(&s, 0.1, 2.0);
        const double stiffness = test_uniform(&s, 0.5, 5.0), gravcomp = test_uniform(&s, 0.0, 1.5);
        const int rotor = (which & ARMATURE) && !((which & ROTORS_ONLY) && b->joint == MBD_FREE);
        b->passive.armature = rotor ? armature : 0.0; /* the same draws whichever */
        b->passive.damping = which & DAMPERS ? damping : 0.0;
        b->passive.stiffness = which & SPRINGS ? stiffness : 0.0;
        test_fill(&s, b->passive.springref, mbd_joint_type_nq(b->joint), -0.5, 0.5);
        b->passive.gravcomp = which & GRAVCOMP ? gravcomp : 0.0;
        b->passive.actuator_gravcomp = (which & BY_ACTUATORS) && i % 3 == 1;
        if ((b->joint == MBD_REVOLUTE || b->joint == MBD_PRISMATIC) && (which & TENDON)) {
            tendon_bodies[ncoef] = i;
            coef[ncoef++] = test_uniform(&s, -1.0, 1.0);
        }
    }
    const mbd_tendon_def tendon = {
        "t", ncoef, tendon_bodies, coef, 3.0, which & DAMPERS ? 0.4 : 0.0, {-0.1, 0.05}};
    mbd_model_def def = {.name = "passive",
                         .nbodies = nb,
                         .bodies = bodies,
                         .ntendons = ncoef > 0,
                         .tendons = &tendon};
    mbd_model_gravity(rigid, def.gravity);
    char err[512];
    mbd_model *model;
    if (mbd_model_build(&def, &model, err, sizeof err) != MBD_OK)
        print_error("passive_model: %s\n", err);
    assert_non_null(model);
    mbd_model_free(rigid);
    free(bodies), free(tendon_bodies), free(coef);
    return model;
}

/* A random state with valid (unit) quaternions. */
static state_buf passive_state(const mbd_model *model, uint64_t seed)
{
    state_buf s = state_new(model, seed);
    assert_int_equal(mbd_normalize_positions(model, s.q), MBD_OK);
    return s;
}

/* Every solver's forward and momentum forms against the dense one's, on trees of every
 * joint type with every passive element. */
static void test_solvers_agree(void **state)
{
    (void)state;
    for (int type = MIXED_JOINTS; type < MBD_JOINT_TYPE_COUNT; type++) {
        mbd_model *model = passive_model(11 + (uint64_t)type, 9, type, ALL | BY_ACTUATORS);
        state_buf s = passive_state(model, 5);
        for (int k = 0; k < mbd_solver_count(); k++) {
            const mbd_solver *solver = mbd_solver_at(k);
            if (strcmp(mbd_solver_name(solver), "dense") != 0)
                check_against_dense_at(model, solver, &s, 1e-10, mbd_solver_name(solver));
        }
        state_free(&s);
        mbd_model_free(model);
    }
}

/* H with armature is H without it plus diag(armature), each joint's on each of its
 * velocities; H^-1 (minverse.c) inverts it; p = H qd (mbd_momentum) includes it. */
static void test_armature_on_the_diagonal(void **state)
{
    (void)state;
    mbd_model *rigid = random_model(3, 8, MIXED_JOINTS, SHAPE_RANDOM);
    mbd_model *rotors = passive_model(3, 8, MIXED_JOINTS, ARMATURE);
    const int nv = mbd_model_nv(rigid);
    double *H0 = calloc((size_t)(nv * nv), sizeof *H0), *H = calloc((size_t)(nv * nv), sizeof *H);
    double *Hinv = calloc((size_t)(nv * nv), sizeof *Hinv),
           *I = calloc((size_t)(nv * nv), sizeof *I);
    double *p = calloc((size_t)nv, sizeof *p), *Hqd = calloc((size_t)nv, sizeof *Hqd);
    state_buf s = passive_state(rigid, 2);
    mbd_work *w0, *w;
    mbd_work_new(rigid, NULL, &w0);
    mbd_work_new(rotors, NULL, &w);
    assert_int_equal(mbd_mass_matrix(rigid, w0, s.q, H0), MBD_OK);
    assert_int_equal(mbd_mass_matrix(rotors, w, s.q, H), MBD_OK);
    for (int i = 0; i < mbd_model_nbodies(rotors); i++) {
        const mbd_body_def *b = mbd_model_body(rotors, i);
        const int n = mbd_joint_type_nv(b->joint);
        int v0 = 0;
        for (int j = 0; j < i; j++)
            v0 += mbd_joint_type_nv(mbd_model_body(rotors, j)->joint);
        for (int k = v0; k < v0 + n; k++)
            H0[k * nv + k] += b->passive.armature;
    }
    assert_close(H, H0, nv * nv, 1e-14, "H = H_rigid + diag(armature)");
    assert_int_equal(mbd_mass_matrix_inverse(rotors, w, s.q, Hinv), MBD_OK);
    for (int r = 0; r < nv; r++)
        for (int c = 0; c < nv; c++)
            for (int k = 0; k < nv; k++)
                I[r * nv + c] += Hinv[r * nv + k] * H[k * nv + c] - (r == c && k == 0);
    for (int k = 0; k < nv * nv; k++)
        assert_true(fabs(I[k]) < 1e-10);
    assert_int_equal(mbd_momentum(rotors, w, s.q, s.qd, p), MBD_OK);
    for (int r = 0; r < nv; r++)
        for (int c = 0; c < nv; c++)
            Hqd[r] += H[r * nv + c] * s.qd[c];
    assert_close(p, Hqd, nv, 1e-13, "p = H qd");
    free(H0), free(H), free(Hinv), free(I), free(p), free(Hqd);
    state_free(&s);
    mbd_work_free(w0), mbd_work_free(w);
    mbd_model_free(rigid), mbd_model_free(rotors);
}

/* The lanes (armature only, but a free joint's: passive forces run state by state) give
 * each state's one-state result, in both forms. */
static void test_lanes_with_armature(void **state)
{
    (void)state;
    mbd_model *model = passive_model(21, 12, MIXED_JOINTS, ARMATURE | ROTORS_ONLY);
    const int K = 13, nq = mbd_model_nq(model), nv = mbd_model_nv(model);
    double *q = calloc((size_t)(K * nq), sizeof *q), *x = calloc((size_t)(K * nv), sizeof *x);
    double *tau = calloc((size_t)(K * nv), sizeof *tau), *y = calloc((size_t)(K * nv), sizeof *y);
    double *z = calloc((size_t)(K * nv), sizeof *z), *ref = calloc((size_t)(2 * nv), sizeof *ref);
    for (int k = 0; k < K; k++) {
        state_buf s = passive_state(model, 100 + (uint64_t)k);
        memcpy(q + k * nq, s.q, (size_t)nq * sizeof *q);
        memcpy(x + k * nv, s.qd, (size_t)nv * sizeof *x);
        memcpy(tau + k * nv, s.tau, (size_t)nv * sizeof *tau);
        state_free(&s);
    }
    static const char *const solvers[] = {"bodies", "poisson-ldlt", "poisson-sweep"};
    for (int n = 0; n < 3; n++)
        for (int lanes = 4; lanes <= 8; lanes += 4) {
            const mbd_solver *solver = mbd_solver_find(solvers[n]);
            mbd_batch *batch;
            if (mbd_batch_new(model, solver, 1, lanes, &batch) != MBD_OK)
                continue; /* the CPU runs no such lanes */
            assert_int_equal(mbd_batch_lanes(batch), lanes);
            const int momentum = n > 0;
            mbd_work *work;
            mbd_work_new(model, solver, &work);
            assert_int_equal(
                momentum ? mbd_batch_forward_momentum(model, batch, K, q, x, tau, y, z, NULL)
                         : mbd_batch_forward(model, batch, K, q, x, tau, y, NULL),
                MBD_OK);
            for (int k = 0; k < K; k++) {
                const double *qk = q + k * nq, *xk = x + k * nv, *tk = tau + k * nv;
                assert_int_equal(momentum
                                     ? mbd_forward_momentum(model, work, qk, xk, tk, ref, ref + nv)
                                     : mbd_forward(model, work, qk, xk, tk, ref),
                                 MBD_OK);
                assert_close(y + k * nv, ref, nv, 1e-12, solvers[n]);
                if (momentum)
                    assert_close(z + k * nv, ref + nv, nv, 1e-12, solvers[n]);
            }
            mbd_work_free(work);
            mbd_batch_free(batch);
        }
    free(q), free(x), free(tau), free(y), free(z), free(ref);
    mbd_model_free(model);
}

/* Inverse dynamics returns the tau that gave qdd; a batch (state by state) the forward
 * calls' results. */
static void test_inverse_dynamics_and_batch(void **state)
{
    (void)state;
    mbd_model *model = passive_model(31, 10, MIXED_JOINTS, ALL | BY_ACTUATORS);
    const int nv = mbd_model_nv(model), nq = mbd_model_nq(model);
    state_buf s = passive_state(model, 9);
    mbd_work *work;
    mbd_work_new(model, mbd_solver_find("bodies"), &work);
    assert_int_equal(mbd_forward(model, work, s.q, s.qd, s.tau, s.out), MBD_OK);
    assert_int_equal(mbd_inverse_dynamics(model, work, s.q, s.qd, s.out, s.ref, NULL), MBD_OK);
    assert_close(s.ref, s.tau, nv, 1e-11, "ID(FD(tau)) = tau");
    mbd_batch *batch;
    assert_int_equal(mbd_batch_new(model, mbd_solver_find("bodies"), 2, 0, &batch), MBD_OK);
    double *q2 = malloc(2 * (size_t)nq * sizeof *q2), *qd2 = malloc(2 * (size_t)nv * sizeof *qd2);
    double *tau2 = malloc(2 * (size_t)nv * sizeof *tau2),
           *qdd2 = malloc(2 * (size_t)nv * sizeof *qdd2);
    for (int k = 0; k < 2; k++) {
        memcpy(q2 + k * nq, s.q, (size_t)nq * sizeof *q2);
        memcpy(qd2 + k * nv, s.qd, (size_t)nv * sizeof *qd2);
        memcpy(tau2 + k * nv, s.tau, (size_t)nv * sizeof *tau2);
    }
    assert_int_equal(mbd_batch_forward(model, batch, 2, q2, qd2, tau2, qdd2, NULL), MBD_OK);
    assert_close(qdd2 + nv, s.out, nv, 1e-14, "batch");
    free(q2), free(qd2), free(tau2), free(qdd2);
    mbd_batch_free(batch);
    mbd_work_free(work);
    state_free(&s);
    mbd_model_free(model);
}

/* One revolute pendulum: tau_p = -d qd - k (q - ref) + gravcomp m g l cos q (its weight
 * held up); with gravcomp 1 on every body a tree at rest stays at rest. */
static void test_known_forces(void **state)
{
    (void)state;
    mbd_body_def rod = body_def("rod", -1, MBD_REVOLUTE, 2.0); /* com (0.2, 0, 0), axis z */
    rod.axes[0][2] = 0.0, rod.axes[0][1] = -1.0;               /* gravity -z turns it */
    rod.passive =
        (mbd_passive){.damping = 0.3, .stiffness = 5.0, .springref = {0.25}, .gravcomp = 0.5};
    char err[256];
    const double gravity[3] = {0, 0, -9.81};
    mbd_model *model = build_tree("rod", gravity, 1, &rod, err, sizeof err);
    assert_non_null(model);
    mbd_work *work;
    mbd_work_new(model, NULL, &work);
    const double q = 0.4, qd = -1.3;
    double tau_p;
    assert_int_equal(mbd_passive_forces(model, work, &q, &qd, &tau_p), MBD_OK);
    const double expected = -0.3 * qd - 5.0 * (q - 0.25) + 0.5 * 2.0 * 9.81 * 0.2 * cos(q);
    assert_true(fabs(tau_p - expected) < 1e-13 * fabs(expected));
    mbd_work_free(work);
    mbd_model_free(model);

    mbd_model *held = passive_model(41, 8, MIXED_JOINTS, 0);
    const int nb = mbd_model_nbodies(held);
    mbd_body_def *bodies = calloc((size_t)nb, sizeof *bodies);
    for (int i = 0; i < nb; i++) {
        bodies[i] = *mbd_model_body(held, i);
        bodies[i].passive.gravcomp = 1.0;
    }
    double g[3];
    mbd_model_gravity(held, g);
    mbd_model *floating = build_tree("held", g, nb, bodies, err, sizeof err);
    assert_non_null(floating);
    state_buf s = passive_state(floating, 3);
    memset(s.qd, 0, (size_t)s.nv * sizeof *s.qd);
    memset(s.tau, 0, (size_t)s.nv * sizeof *s.tau);
    mbd_work_new(floating, mbd_solver_find("bodies"), &work);
    assert_int_equal(mbd_forward(floating, work, s.q, s.qd, s.tau, s.out), MBD_OK);
    for (int k = 0; k < s.nv; k++)
        assert_true(fabs(s.out[k]) < 1e-12);
    state_free(&s);
    mbd_work_free(work);
    free(bodies);
    mbd_model_free(held), mbd_model_free(floating);
}

/* The state a time h along the motion: q (+) (h qd + h^2/2 qdd), qd + h qdd. */
static void step_along(const mbd_model *model, const state_buf *s, const double *qdd, double h,
                       double *q, double *qd)
{
    const int nv = mbd_model_nv(model);
    double *v = malloc((size_t)nv * sizeof *v);
    for (int k = 0; k < nv; k++) {
        v[k] = h * s->qd[k] + 0.5 * h * h * qdd[k];
        qd[k] = s->qd[k] + h * qdd[k];
    }
    assert_int_equal(mbd_integrate_positions(model, s->q, v, q), MBD_OK);
    free(v);
}

/* Power balance: d(T + V)/dt = qd . (tau + the dampers' forces), by central differences
 * along the motion; T has the rotors', V the springs' and the compensated weight's. */
static void test_power_balance(void **state)
{
    (void)state;
    mbd_model *model = passive_model(51, 9, MIXED_JOINTS, ALL);
    mbd_model *undamped = passive_model(51, 9, MIXED_JOINTS, ALL & ~DAMPERS);
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
    state_buf s = passive_state(model, 4);
    double *q = malloc((size_t)nq * sizeof *q), *qd = malloc((size_t)nv * sizeof *qd);
    double *damped = malloc((size_t)nv * sizeof *damped),
           *spring = malloc((size_t)nv * sizeof *spring);
    mbd_work *work, *w2;
    mbd_work_new(model, mbd_solver_find("bodies"), &work);
    mbd_work_new(undamped, NULL, &w2);
    assert_int_equal(mbd_forward(model, work, s.q, s.qd, s.tau, s.out), MBD_OK);
    const double h = 1e-4;
    double E[2];
    for (int side = 0; side < 2; side++) {
        double T, V;
        step_along(model, &s, s.out, side ? h : -h, q, qd);
        assert_int_equal(mbd_energy(model, work, q, qd, &T, &V), MBD_OK);
        E[side] = T + V;
    }
    assert_int_equal(mbd_passive_forces(model, work, s.q, s.qd, damped), MBD_OK);
    assert_int_equal(mbd_passive_forces(undamped, w2, s.q, s.qd, spring), MBD_OK);
    double power = 0.0, scale = 0.0;
    for (int k = 0; k < nv; k++) {
        power += s.qd[k] * (s.tau[k] + damped[k] - spring[k]);
        scale += fabs(s.qd[k] * s.tau[k]);
    }
    const double rate = (E[1] - E[0]) / (2.0 * h);
    assert_true(fabs(rate - power) < 1e-6 * (scale + fabs(power)));
    free(q), free(qd), free(damped), free(spring);
    mbd_work_free(work), mbd_work_free(w2);
    state_free(&s);
    mbd_model_free(model), mbd_model_free(undamped);
}

/* Every method's dqdd/dq and dqdd/dqd against central differences of mbd_forward (which
 * adds the passive forces itself), along q (+) v; and dtau/dq, dtau/dqd of the inverse
 * dynamics against those of mbd_inverse_dynamics. */
static void test_derivatives_by_differences(void **state)
{
    (void)state;
    mbd_model *model = passive_model(61, 7, MIXED_JOINTS, ALL | BY_ACTUATORS);
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
    const size_t block = (size_t)nv * (size_t)nv;
    state_buf s = passive_state(model, 8);
    double *A = malloc(block * sizeof *A), *B = malloc(block * sizeof *B);
    double *FA = malloc(block * sizeof *FA), *FB = malloc(block * sizeof *FB);
    double *IA = malloc(block * sizeof *IA), *IB = malloc(block * sizeof *IB);
    double *v = calloc((size_t)nv, sizeof *v), *q = malloc((size_t)nq * sizeof *q);
    double *x = malloc((size_t)nv * sizeof *x), *plus = malloc((size_t)nv * sizeof *plus);
    double *minus = malloc((size_t)nv * sizeof *minus);
    mbd_work *work;
    mbd_work_new(model, mbd_solver_find("bodies"), &work);
    assert_int_equal(mbd_forward(model, work, s.q, s.qd, s.tau, s.ref), MBD_OK);
    const double h = 1e-6;
    for (int c = 0; c < nv; c++) { /* column c of each, by differences */
        for (int dir = 0; dir < 2; dir++) {
            double *out = dir ? plus : minus, *tau_out = dir ? s.out : s.out2;
            v[c] = dir ? h : -h;
            assert_int_equal(mbd_integrate_positions(model, s.q, v, q), MBD_OK);
            assert_int_equal(mbd_forward(model, work, q, s.qd, s.tau, out), MBD_OK);
            assert_int_equal(mbd_inverse_dynamics(model, work, q, s.qd, s.ref, tau_out, NULL),
                             MBD_OK);
            v[c] = 0.0;
        }
        for (int r = 0; r < nv; r++) {
            FA[r * nv + c] = (plus[r] - minus[r]) / (2 * h);
            IA[r * nv + c] = (s.out[r] - s.out2[r]) / (2 * h);
        }
        for (int dir = 0; dir < 2; dir++) {
            double *out = dir ? plus : minus, *tau_out = dir ? s.out : s.out2;
            memcpy(x, s.qd, (size_t)nv * sizeof *x);
            x[c] += dir ? h : -h;
            assert_int_equal(mbd_forward(model, work, s.q, x, s.tau, out), MBD_OK);
            assert_int_equal(mbd_inverse_dynamics(model, work, s.q, x, s.ref, tau_out, NULL),
                             MBD_OK);
        }
        for (int r = 0; r < nv; r++) {
            FB[r * nv + c] = (plus[r] - minus[r]) / (2 * h);
            IB[r * nv + c] = (s.out[r] - s.out2[r]) / (2 * h);
        }
    }
    for (int m = 0; m < mbd_derivatives_method_count(); m++) {
        const mbd_derivatives_method *method = mbd_derivatives_method_at(m);
        assert_int_equal(mbd_forward_derivatives(model, work, s.q, s.qd, s.tau, method, A, B, NULL),
                         MBD_OK);
        assert_close(A, FA, (int)block, 1e-6, mbd_derivatives_method_name(method));
        assert_close(B, FB, (int)block, 1e-6, mbd_derivatives_method_name(method));
    }
    assert_int_equal(mbd_inverse_dynamics_derivatives(model, work, s.q, s.qd, s.ref, A, B), MBD_OK);
    assert_close(A, IA, (int)block, 1e-6, "dtau/dq");
    assert_close(B, IB, (int)block, 1e-6, "dtau/dqd");
    free(A), free(B), free(FA), free(FB), free(IA), free(IB), free(v), free(q), free(x);
    free(plus), free(minus);
    mbd_work_free(work);
    state_free(&s);
    mbd_model_free(model);
}

/* H qdd + C qd + g = tau, g taking the passive forces (joints whose qd are rates). */
static void test_coefficients(void **state)
{
    (void)state;
    mbd_model *model = passive_model(71, 8, MIXED_COORDINATE_JOINTS, ALL);
    const int nv = mbd_model_nv(model);
    double *H = malloc((size_t)(nv * nv) * sizeof *H), *C = malloc((size_t)(nv * nv) * sizeof *C);
    double *g = malloc((size_t)nv * sizeof *g), *Cqd = malloc((size_t)nv * sizeof *Cqd);
    state_buf s = passive_state(model, 1);
    mbd_work *work;
    mbd_work_new(model, NULL, &work);
    assert_int_equal(mbd_coefficients(model, work, s.q, s.qd, H, C, g, Cqd), MBD_OK);
    assert_int_equal(mbd_inverse_dynamics(model, work, s.q, s.qd, s.tau, s.ref, NULL), MBD_OK);
    for (int r = 0; r < nv; r++) {
        s.out[r] = g[r] + Cqd[r];
        for (int c = 0; c < nv; c++)
            s.out[r] += H[r * nv + c] * s.tau[c];
    }
    assert_close(s.out, s.ref, nv, 1e-12, "H qdd + C qd + g = ID");
    free(H), free(C), free(g), free(Cqd);
    mbd_work_free(work);
    state_free(&s);
    mbd_model_free(model);
}

/* JSON: the fields read, each bad value refused naming its field and value. */
static void test_json_fields(void **state)
{
    (void)state;
    static const char *const body =
        "{\"name\": \"p\", \"bodies\": [{\"name\": \"a\", \"parent\": \"world\", \"joint\": "
        "{\"type\": \"revolute\", \"axis\": [0, 0, 1], %s}, \"mass\": 1, \"com\": [0.1, 0, 0], "
        "\"inertia\": [[0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1]]%s}]}";
    char text[1024];
    snprintf(text, sizeof text, body,
             "\"armature\": 0.1, \"damping\": 0.2, \"stiffness\": 3, \"springref\": 0.4",
             ", \"gravcomp\": 0.5");
    mbd_model *model = load_model(temp_file_with(text, ".json"));
    const mbd_passive *p = &mbd_model_body(model, 0)->passive;
    assert_true(p->armature == 0.1 && p->damping == 0.2 && p->stiffness == 3 &&
                p->springref[0] == 0.4 && p->gravcomp == 0.5);
    assert_true(mbd_model_has_passive(model));
    mbd_model_free(model);
    static const char *const bad[][3] = {
        {"\"armature\": -1", "joint.armature", "-1"},
        {"\"damping\": \"x\"", "damping", "\"x\""},
        {"\"springref\": [1, 2]", "springref", "[1,2]"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        snprintf(text, sizeof text, body, bad[k][0], "");
        expect_model_rejected(temp_file_with(text, ".json"), bad[k][1], bad[k][2]);
    }
    snprintf(text, sizeof text, body, "\"damping\": 0", ", \"gravcomp\": [1]");
    expect_model_rejected(temp_file_with(text, ".json"), "gravcomp", "[1]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_solvers_agree),
        cmocka_unit_test(test_armature_on_the_diagonal),
        cmocka_unit_test(test_lanes_with_armature),
        cmocka_unit_test(test_inverse_dynamics_and_batch),
        cmocka_unit_test(test_known_forces),
        cmocka_unit_test(test_power_balance),
        cmocka_unit_test(test_derivatives_by_differences),
        cmocka_unit_test(test_coefficients),
        cmocka_unit_test(test_json_fields),
    };
    return cmocka_run_group_tests(tests, make_temp_dir, remove_temp_dir);
}
