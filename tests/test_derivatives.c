/* Derivatives of the forward dynamics, for every method of the table: a single pendulum's
 * in closed form, dqdd/dtau against H^-1, every method against central differences, the
 * positions step q (+) v, and the models and arguments refused. */
#include "support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How close a method comes to an exact derivative: central differences to about
 * eps^(2/3) relative, the others to round-off. */
static double method_tolerance(const mbd_derivatives_method *method)
{
    return strcmp(mbd_derivatives_method_name(method), "finite-difference") == 0 ? 1e-7 : 1e-10;
}

/* The three nv x nv matrices of one call. */
typedef struct {
    double *dq, *dqd, *dtau;
} derivatives;

static derivatives derivatives_new(int nv)
{
    const size_t n = (size_t)nv * (size_t)nv;
    double *block = calloc(3 * n, sizeof *block);
    assert_non_null(block);
    return (derivatives){block, block + n, block + 2 * n};
}

static int forward_derivatives(const mbd_model *model, mbd_work *work, const state_buf *s,
                               const mbd_derivatives_method *method, derivatives *d)
{
    return mbd_forward_derivatives(model, work, s->q, s->qd, s->tau, method, d->dq, d->dqd,
                                   d->dtau);
}

/* A pendulum swinging about z under gravity -y, its centre of mass lc from the axis:
 * (I + m lc^2) qdd = tau - m g lc cos q, so dqdd/dq = m g lc sin q / J, dqdd/dqd = 0,
 * dqdd/dtau = 1 / J with J = I + m lc^2; of the inverse dynamics dtau/dq = -m g lc sin q,
 * dtau/dqd = 0. */
static void test_single_pendulum(void **state)
{
    (void)state;
    const double m = 2.5, lc = 0.7, Izz = 0.04, g = 9.81, J = Izz + m * lc * lc;
    mbd_body_def body = {.name = "link", .parent = -1, .joint = MBD_REVOLUTE, .mass = m};
    body.axes[0][2] = 1.0;
    body.rotation[0][0] = body.rotation[1][1] = body.rotation[2][2] = 1.0;
    body.com[0] = lc;
    body.inertia[0][0] = 1e-3 * Izz;
    body.inertia[1][1] = body.inertia[2][2] = Izz;
    char err[256];
    const double gravity[3] = {0, -g, 0};
    mbd_model *model = build_tree("pendulum", gravity, 1, &body, err, sizeof err);
    mbd_work *work;
    assert_int_equal(mbd_work_new(model, mbd_solver_find("bodies"), &work), MBD_OK);
    const double q = 0.4, qd = -1.3, tau = 0.8;
    const double expected[3] = {m * g * lc * sin(q) / J, 0.0, 1.0 / J};
    for (int k = 0; k < mbd_derivatives_method_count(); k++) {
        const mbd_derivatives_method *method = mbd_derivatives_method_at(k);
        double got[3];
        assert_int_equal(
            mbd_forward_derivatives(model, work, &q, &qd, &tau, method, &got[0], &got[1], &got[2]),
            MBD_OK);
        assert_close(got, expected, 3, method_tolerance(method),
                     mbd_derivatives_method_name(method));
    }
    const double qdd = 0.3,
                 dtau_expected[2] = {-m * g * lc * sin(q), 0.0}; /* tau = J qdd + m g lc cos q */
    double dtau[2];
    assert_int_equal(
        mbd_inverse_dynamics_derivatives(model, work, &q, &qd, &qdd, &dtau[0], &dtau[1]), MBD_OK);
    assert_close(dtau, dtau_expected, 2, 1e-13, "dtau/dq, dtau/dqd");
    mbd_work_free(work);
    mbd_model_free(model);
}

/* dqdd/dtau is H^-1, on random trees of 6 and 18 bodies of every joint type and of all
 * types mixed (18 free joints: more coordinates than automatic factors H densely for). */
static void test_inverse_mass_matrix(void **state)
{
    (void)state;
    for (int type = MIXED_JOINTS; type < MBD_JOINT_TYPE_COUNT; type++)
        for (int bodies = 6; bodies <= 18; bodies += 12) {
            if (type == MIXED_COORDINATE_JOINTS)
                continue;
            mbd_model *model = random_model(40 + (uint64_t)(type + 2) + 10 * (uint64_t)(bodies - 6),
                                            bodies, type, SHAPE_RANDOM);
            const int nv = mbd_model_nv(model);
            mbd_work *work;
            assert_int_equal(mbd_work_new(model, mbd_solver_find("bodies"), &work), MBD_OK);
            state_buf s = state_new(model, 7);
            double *Hinv = calloc((size_t)nv * (size_t)nv, sizeof *Hinv);
            assert_int_equal(mbd_mass_matrix_inverse(model, work, s.q, Hinv), MBD_OK);
            for (int k = 0; k < mbd_derivatives_method_count(); k++) {
                const mbd_derivatives_method *method = mbd_derivatives_method_at(k);
                derivatives d = derivatives_new(nv);
                assert_int_equal(mbd_forward_derivatives(model, work, s.q, s.qd, s.tau, method,
                                                         NULL, NULL, d.dtau),
                                 MBD_OK);
                assert_close(d.dtau, Hinv, nv * nv, method_tolerance(method),
                             mbd_derivatives_method_name(method));
                free(d.dq);
            }
            free(Hinv);
            state_free(&s);
            mbd_work_free(work);
            mbd_model_free(model);
        }
}

/* Every method agrees with central differences to 1e-6 relative, on every joint type. */
static void test_against_differences(void **state)
{
    (void)state;
    const mbd_derivatives_method *fd = mbd_derivatives_method_find("finite-difference");
    assert_non_null(fd);
    for (int type = MIXED_JOINTS; type < MBD_JOINT_TYPE_COUNT; type++) {
        if (type == MIXED_COORDINATE_JOINTS)
            continue;
        mbd_model *model = random_model(90 + (uint64_t)(type + 2), 7, type, SHAPE_RANDOM);
        const int nv = mbd_model_nv(model);
        mbd_work *work;
        assert_int_equal(mbd_work_new(model, mbd_solver_find("bodies"), &work), MBD_OK);
        state_buf s = state_new(model, 11);
        derivatives ref = derivatives_new(nv);
        assert_int_equal(forward_derivatives(model, work, &s, fd, &ref), MBD_OK);
        for (int k = 0; k < mbd_derivatives_method_count(); k++) {
            const mbd_derivatives_method *method = mbd_derivatives_method_at(k);
            if (method == fd)
                continue;
            derivatives d = derivatives_new(nv);
            assert_int_equal(forward_derivatives(model, work, &s, method, &d), MBD_OK);
            assert_close(d.dq, ref.dq, nv * nv, 1e-6, mbd_derivatives_method_name(method));
            assert_close(d.dqd, ref.dqd, nv * nv, 1e-6, mbd_derivatives_method_name(method));
            assert_close(d.dtau, ref.dtau, nv * nv, 1e-6, mbd_derivatives_method_name(method));
            free(d.dq);
        }
        free(ref.dq);
        state_free(&s);
        mbd_work_free(work);
        mbd_model_free(model);
    }
}

/* Column j of dtau/dq and dtau/dqd by central differences of mbd_inverse_dynamics, along
 * q (+) h e_j and qd + h e_j; qdd is s->tau. */
static void inverse_dynamics_differences(const mbd_model *model, mbd_work *work, const state_buf *s,
                                         double *dq, double *dqd)
{
    const int nq = s->nq, nv = s->nv;
    const double h = 1e-5;
    double *block = calloc((size_t)(nq + 3 * nv), sizeof *block), *moved = block,
           *delta = moved + nq, *plus = delta + nv, *minus = plus + nv;
    assert_non_null(block);
    for (int j = 0; j < nv; j++) {
        for (int side = 0; side < 2; side++) {
            delta[j] = side ? -h : h;
            assert_int_equal(mbd_integrate_positions(model, s->q, delta, moved), MBD_OK);
            assert_int_equal(
                mbd_inverse_dynamics(model, work, moved, s->qd, s->tau, side ? minus : plus, NULL),
                MBD_OK);
        }
        delta[j] = 0.0;
        for (int i = 0; i < nv; i++)
            dq[i * nv + j] = (plus[i] - minus[i]) / (2 * h);
        const double qd_j = s->qd[j];
        for (int side = 0; side < 2; side++) {
            s->qd[j] = side ? qd_j - h : qd_j + h;
            assert_int_equal(
                mbd_inverse_dynamics(model, work, s->q, s->qd, s->tau, side ? minus : plus, NULL),
                MBD_OK);
        }
        s->qd[j] = qd_j;
        for (int i = 0; i < nv; i++)
            dqd[i * nv + j] = (plus[i] - minus[i]) / (2 * h);
    }
    free(block);
}

/* The exact methods (all but central differences) agree with each other to 1e-10 relative:
 * analytic's recursion and automatic's duals through the sweep share no code but the
 * kinematics, on every joint type, chains and random trees of 12 bodies. */
static void test_exact_methods_agree(void **state)
{
    (void)state;
    const mbd_derivatives_method *fd = mbd_derivatives_method_find("finite-difference");
    for (int type = MIXED_JOINTS; type < MBD_JOINT_TYPE_COUNT; type++)
        for (tree_shape shape = SHAPE_CHAIN; shape <= SHAPE_RANDOM; shape += 2) {
            if (type == MIXED_COORDINATE_JOINTS)
                continue;
            mbd_model *model =
                random_model(130 + (uint64_t)(type + 2) + 10 * shape, 12, type, shape);
            const int nv = mbd_model_nv(model);
            mbd_work *work;
            assert_int_equal(mbd_work_new(model, mbd_solver_find("bodies"), &work), MBD_OK);
            state_buf s = state_new(model, 17);
            derivatives first = derivatives_new(nv);
            const mbd_derivatives_method *reference = NULL;
            for (int k = 0; k < mbd_derivatives_method_count(); k++) {
                const mbd_derivatives_method *method = mbd_derivatives_method_at(k);
                if (method == fd)
                    continue;
                if (!reference) {
                    reference = method;
                    assert_int_equal(forward_derivatives(model, work, &s, method, &first), MBD_OK);
                    continue;
                }
                derivatives d = derivatives_new(nv);
                assert_int_equal(forward_derivatives(model, work, &s, method, &d), MBD_OK);
                assert_close(d.dq, first.dq, 3 * nv * nv, 1e-10,
                             mbd_derivatives_method_name(method));
                free(d.dq);
            }
            free(first.dq);
            state_free(&s);
            mbd_work_free(work);
            mbd_model_free(model);
        }
}

/* Two loose objects under tilted gravity, the second placed by a turned joint frame, its
 * centre of mass off its origin. */
static const char loose_objects[] =
    "{\"name\": \"loose\", \"gravity\": [1, -2, -9.81], \"bodies\": ["
    "{\"name\": \"box\", \"parent\": \"world\", \"joint\": {\"type\": \"free\"},"
    " \"mass\": 2, \"com\": [0, 0, 0], \"inertia\": [[0.1, 0, 0], [0, 0.2, 0], [0, 0, 0.3]]},"
    "{\"name\": \"rod\", \"parent\": \"world\", \"joint\": {\"type\": \"free\","
    " \"origin\": [0.5, -1, 2], \"rotation\": [[1, 0, 0], [0, 0.8, -0.6], [0, 0.6, 0.8]]},"
    " \"mass\": 0.7, \"com\": [0.3, -0.2, 0.1],"
    " \"inertia\": [[0.05, 0.01, -0.005], [0.01, 0.04, 0.002], [-0.005, 0.002, 0.03]]}]}";

/* Branched robots on a floating base, whose factor of H is tree-sparse and whose dtau/dx
 * has zeros between branches that analytic skips: autoTree's trees on a free joint (bodies
 * breadth-first, so that a subtree's DOFs are not contiguous: binary, four-way, and
 * branching 1.25, long limbs that fork now and then); and free bodies on their own, whose
 * derivatives analytic takes in closed form (a lone body, as a quadrotor; two loose
 * objects). analytic against automatic to 1e-10, against central differences to 1e-6, and
 * dqdd/dtau against mbd_mass_matrix_inverse, each matrix asked for alone too. */
static void test_floating_branched(void **state)
{
    (void)state;
    const char *specs[] = {"tree:n=20,branching=2,skew=0.5,base=free",
                           "tree:n=29,branching=4,skew=0.9,taper=0.95,base=free",
                           "tree:n=16,branching=1.25,skew=0.2,base=free",
                           "tree:n=1,branching=2,skew=0.5,base=free",
                           temp_file_with(loose_objects, ".json")};
    const mbd_derivatives_method *analytic = mbd_derivatives_method_find("analytic"),
                                 *automatic = mbd_derivatives_method_find("automatic"),
                                 *fd = mbd_derivatives_method_find("finite-difference");
    for (size_t m = 0; m < sizeof specs / sizeof specs[0]; m++) {
        mbd_model *model = NULL;
        char err[256];
        assert_int_equal(mbd_model_load(specs[m], NULL, &model, err, sizeof err), MBD_OK);
        const int nv = mbd_model_nv(model);
        mbd_work *work;
        assert_int_equal(mbd_work_new(model, mbd_solver_find("bodies"), &work), MBD_OK);
        state_buf s = state_new(model, 19);
        derivatives got = derivatives_new(nv), dual = derivatives_new(nv),
                    ref = derivatives_new(nv);
        double *Hinv = calloc((size_t)nv * (size_t)nv, sizeof *Hinv);
        assert_non_null(Hinv);
        assert_int_equal(forward_derivatives(model, work, &s, analytic, &got), MBD_OK);
        assert_int_equal(forward_derivatives(model, work, &s, automatic, &dual), MBD_OK);
        assert_int_equal(forward_derivatives(model, work, &s, fd, &ref), MBD_OK);
        assert_int_equal(mbd_mass_matrix_inverse(model, work, s.q, Hinv), MBD_OK);
        assert_close(got.dq, dual.dq, 3 * nv * nv, 1e-10, specs[m]);
        assert_close(got.dq, ref.dq, nv * nv, 1e-6, specs[m]);
        assert_close(got.dqd, ref.dqd, nv * nv, 1e-6, specs[m]);
        assert_close(got.dtau, Hinv, nv * nv, 1e-10, specs[m]);
        for (int alone = 0; alone < 3; alone++) {
            double *outputs[3] = {NULL, NULL, NULL}, *want[3] = {got.dq, got.dqd, got.dtau};
            outputs[alone] = ref.dq + (size_t)alone * (size_t)nv * (size_t)nv;
            assert_int_equal(mbd_forward_derivatives(model, work, s.q, s.qd, s.tau, analytic,
                                                     outputs[0], outputs[1], outputs[2]),
                             MBD_OK);
            assert_close(outputs[alone], want[alone], nv * nv, 1e-14, specs[m]);
        }
        free(Hinv);
        free(got.dq);
        free(dual.dq);
        free(ref.dq);
        state_free(&s);
        mbd_work_free(work);
        mbd_model_free(model);
    }
    unlink(specs[4]);
}

/* mbd_inverse_dynamics_derivatives agrees with central differences of the inverse dynamics
 * to 1e-6 relative: every joint type on random trees, mixed joints on chains, binary and
 * random trees. */
static void test_inverse_dynamics_derivatives(void **state)
{
    (void)state;
    for (int type = MIXED_JOINTS; type < MBD_JOINT_TYPE_COUNT; type++)
        for (tree_shape shape = SHAPE_CHAIN; shape <= SHAPE_RANDOM; shape++) {
            if (type == MIXED_COORDINATE_JOINTS || (type != MIXED_JOINTS && shape != SHAPE_RANDOM))
                continue;
            mbd_model *model = random_model(70 + (uint64_t)(type + 2) + 10 * shape, 7, type, shape);
            const int nv = mbd_model_nv(model);
            mbd_work *work;
            assert_int_equal(mbd_work_new(model, mbd_solver_find("dense"), &work), MBD_OK);
            state_buf s = state_new(model, 13);
            derivatives got = derivatives_new(nv), ref = derivatives_new(nv);
            assert_int_equal(
                mbd_inverse_dynamics_derivatives(model, work, s.q, s.qd, s.tau, got.dq, got.dqd),
                MBD_OK);
            inverse_dynamics_differences(model, work, &s, ref.dq, ref.dqd);
            assert_close(got.dq, ref.dq, nv * nv, 1e-6, "dtau/dq");
            assert_close(got.dqd, ref.dqd, nv * nv, 1e-6, "dtau/dqd");
            assert_int_equal(
                mbd_inverse_dynamics_derivatives(model, work, s.q, s.qd, s.tau, NULL, got.dqd),
                MBD_OK);
            assert_close(got.dqd, ref.dqd, nv * nv, 1e-6, "dtau/dqd alone");
            free(got.dq);
            free(ref.dq);
            state_free(&s);
            mbd_work_free(work);
            mbd_model_free(model);
        }
}

/* "automatic" differentiates the workspace's solver: bodies' gives the derivatives, every
 * other solver's the same or MBD_EUNSUPPORTED (no dual form); the other methods take any
 * solver's workspace. */
static void test_every_solver(void **state)
{
    (void)state;
    mbd_model *model = random_model(17, 6, MIXED_JOINTS, SHAPE_RANDOM);
    const int nv = mbd_model_nv(model);
    state_buf s = state_new(model, 5);
    mbd_work *bodies;
    assert_int_equal(mbd_work_new(model, mbd_solver_find("bodies"), &bodies), MBD_OK);
    for (int k = 0; k < mbd_derivatives_method_count(); k++) {
        const mbd_derivatives_method *method = mbd_derivatives_method_at(k);
        derivatives ref = derivatives_new(nv);
        assert_int_equal(forward_derivatives(model, bodies, &s, method, &ref), MBD_OK);
        for (int j = 0; j < mbd_solver_count(); j++) {
            mbd_work *work;
            assert_int_equal(mbd_work_new(model, mbd_solver_at(j), &work), MBD_OK);
            derivatives d = derivatives_new(nv);
            const int status = forward_derivatives(model, work, &s, method, &d);
            if (status == MBD_EUNSUPPORTED) {
                assert_string_equal(mbd_derivatives_method_name(method), "automatic");
            } else {
                assert_int_equal(status, MBD_OK);
                assert_close(d.dq, ref.dq, 3 * nv * nv, 1e-10, mbd_solver_name(mbd_solver_at(j)));
            }
            free(d.dq);
            mbd_work_free(work);
        }
        free(ref.dq);
    }
    mbd_work_free(bodies);
    state_free(&s);
    mbd_model_free(model);
}

/* "automatic" takes its directions T to a sweep, the three matrices' columns one after
 * the other: each matrix alone, its columns at other places in the sweeps, is the same to
 * the bit as with all three, on models whose nv is not a multiple of T. */
static void test_directions_in_sweeps(void **state)
{
    (void)state;
    const mbd_derivatives_method *method = mbd_derivatives_method_find("automatic");
    assert_non_null(method);
    const int bodies[] = {1, 3, 9, 17};
    for (int m = 0; m < 4; m++) {
        mbd_model *model = random_model(200 + (uint64_t)m, bodies[m], MIXED_JOINTS, SHAPE_RANDOM);
        const int nv = mbd_model_nv(model);
        mbd_work *work;
        assert_int_equal(mbd_work_new(model, mbd_solver_find("bodies"), &work), MBD_OK);
        state_buf s = state_new(model, 9);
        derivatives all = derivatives_new(nv), alone = derivatives_new(nv);
        assert_int_equal(forward_derivatives(model, work, &s, method, &all), MBD_OK);
        double *outputs[3] = {alone.dq, alone.dqd, alone.dtau};
        for (int k = 0; k < 3; k++)
            assert_int_equal(mbd_forward_derivatives(
                                 model, work, s.q, s.qd, s.tau, method, k == 0 ? outputs[0] : NULL,
                                 k == 1 ? outputs[1] : NULL, k == 2 ? outputs[2] : NULL),
                             MBD_OK);
        assert_close(alone.dq, all.dq, 3 * nv * nv, 0.0, "each matrix alone");
        free(all.dq);
        free(alone.dq);
        state_free(&s);
        mbd_work_free(work);
        mbd_model_free(model);
    }
}

/* q (+) 0 = q; d/dh q (+) h v at h = 0 is G(q) v (mbd_position_rates); a spherical joint
 * from the identity turned by t about z reaches (cos t/2, 0, 0, sin t/2). */
static void test_integrate_positions(void **state)
{
    (void)state;
    mbd_model *model = random_model(5, 8, MIXED_JOINTS, SHAPE_RANDOM);
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
    state_buf s = state_new(model, 3);
    double *moved = calloc((size_t)(3 * nq + nv), sizeof *moved), *back = moved + nq,
           *rates = back + nq, *step = rates + nq;
    assert_int_equal(mbd_integrate_positions(model, s.q, step, moved), MBD_OK); /* step = 0 */
    assert_close(moved, s.q, nq, 0.0, "q (+) 0");
    const double h = 1e-5;
    for (int j = 0; j < nv; j++)
        step[j] = h * s.qd[j];
    assert_int_equal(mbd_integrate_positions(model, s.q, step, moved), MBD_OK);
    for (int j = 0; j < nv; j++)
        step[j] = -h * s.qd[j];
    assert_int_equal(mbd_integrate_positions(model, s.q, step, back), MBD_OK);
    for (int j = 0; j < nq; j++)
        moved[j] = (moved[j] - back[j]) / (2 * h);
    assert_int_equal(mbd_position_rates(model, s.q, s.qd, rates), MBD_OK);
    assert_close(moved, rates, nq, 1e-8, "d/dh q (+) h qd");
    free(moved);
    state_free(&s);
    mbd_model_free(model);

    model = load_model("chain:n=1,joint=spherical");
    const double identity[4] = {1, 0, 0, 0}, turn[3] = {0, 0, 0.6};
    const double expected[4] = {cos(0.3), 0, 0, sin(0.3)};
    double quat[4];
    assert_int_equal(mbd_integrate_positions(model, identity, turn, quat), MBD_OK);
    assert_close(quat, expected, 4, 1e-15, "quat exp(w / 2)");
    assert_int_equal(mbd_integrate_positions(model, (double[4]){0}, turn, quat), MBD_EINVAL);
    mbd_model_free(model);
}

/* Friction and loops are refused; bad arguments named by their status; NULL outputs skip. */
static void test_refused(void **state)
{
    (void)state;
    const mbd_derivatives_method *method = mbd_derivatives_method_at(0);
    assert_null(mbd_derivatives_method_find("no-such-method"));
    assert_null(mbd_derivatives_method_at(mbd_derivatives_method_count()));
    const char *refused[] = {"chain:n=4,joint=revolute,friction=0.2", "models/four-bar.json"};
    for (int k = 0; k < 2; k++) {
        mbd_model *model = load_model(refused[k]);
        mbd_work *work;
        assert_int_equal(mbd_work_new(model, mbd_solver_find("dense"), &work), MBD_OK);
        state_buf s = state_new(model, 1);
        derivatives d = derivatives_new(mbd_model_nv(model));
        assert_int_equal(forward_derivatives(model, work, &s, method, &d), MBD_EUNSUPPORTED);
        assert_int_equal(
            mbd_inverse_dynamics_derivatives(model, work, s.q, s.qd, s.tau, d.dq, d.dqd),
            MBD_EUNSUPPORTED);
        free(d.dq);
        state_free(&s);
        mbd_work_free(work);
        mbd_model_free(model);
    }
    mbd_model *model = load_model("chain:n=3,joint=cardan");
    mbd_work *work;
    assert_int_equal(mbd_work_new(model, mbd_solver_find("bodies"), &work), MBD_OK);
    state_buf s = state_new(model, 2);
    derivatives d = derivatives_new(mbd_model_nv(model));
    assert_int_equal(forward_derivatives(model, work, &s, NULL, &d), MBD_EINVAL);
    assert_int_equal(
        mbd_forward_derivatives(model, work, s.q, s.qd, s.tau, method, NULL, NULL, NULL), MBD_OK);
    s.qd[2] = NAN;
    assert_int_equal(forward_derivatives(model, work, &s, method, &d), MBD_ENONFINITE);
    free(d.dq);
    state_free(&s);
    mbd_work_free(work);
    mbd_model_free(model);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_pendulum),
        cmocka_unit_test(test_inverse_mass_matrix),
        cmocka_unit_test(test_against_differences),
        cmocka_unit_test(test_exact_methods_agree),
        cmocka_unit_test(test_floating_branched),
        cmocka_unit_test(test_inverse_dynamics_derivatives),
        cmocka_unit_test(test_every_solver),
        cmocka_unit_test(test_directions_in_sweeps),
        cmocka_unit_test(test_integrate_positions),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
