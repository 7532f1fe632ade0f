/* Joint friction coupled to the joint reactions: a block on an incline and a slider on a
 * turning arm against equations derived by hand, forward and inverse dynamics as inverses,
 * dissipation along a simulated trajectory, the frictionless path unchanged, the Painleve
 * failure and the model-file checks. Joint frames are turned and axes oblique throughout,
 * so that a reaction or an axis taken in the wrong frame shows. */
#include "solvers/solvers.h"
#include "support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const double g0 = 9.81;

/* R = Rot(axis, angle), row-major (Rodrigues); axis need not be unit. */
static void rotation(double R[3][3], const double axis[3], double angle)
{
    const double n = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    const double u[3] = {axis[0] / n, axis[1] / n, axis[2] / n}, c = cos(angle), s = sin(angle);
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++)
            R[r][k] = (1 - c) * u[r] * u[k] + (r == k ? c : 0.0);
    R[0][1] -= s * u[2], R[1][0] += s * u[2];
    R[0][2] += s * u[1], R[2][0] -= s * u[1];
    R[1][2] -= s * u[0], R[2][1] += s * u[0];
}

/* out = R^T x */
static void apply_t(double out[3], double R[3][3], const double x[3])
{
    for (int r = 0; r < 3; r++)
        out[r] = R[0][r] * x[0] + R[1][r] * x[1] + R[2][r] * x[2];
}

static void multiply(double out[3][3], double A[3][3], double B[3][3])
{
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            out[r][c] = A[r][0] * B[0][c] + A[r][1] * B[1][c] + A[r][2] * B[2][c];
}

static void isotropic(double I[3][3], double J)
{
    memset(I, 0, 9 * sizeof I[0][0]);
    I[0][0] = I[1][1] = I[2][2] = J;
}

static double norm(const double *x, int n)
{
    double sum = 0.0;
    for (int k = 0; k < n; k++)
        sum += x[k] * x[k];
    return sqrt(sum);
}

static mbd_model *build(int n, const mbd_body_def *defs)
{
    char err[512];
    const double gravity[3] = {0, 0, -g0};
    mbd_model *model = build_tree("friction", gravity, n, defs, err, sizeof err);
    if (!model)
        print_error("%s\n", err);
    assert_non_null(model);
    return model;
}

/* The model base with the friction of every joint replaced by fr; frees base. */
static mbd_model *replace_friction(mbd_model *base, const char *name, mbd_friction fr)
{
    const int n = mbd_model_nbodies(base);
    mbd_body_def *defs = malloc((size_t)n * sizeof *defs);
    for (int i = 0; i < n; i++) {
        defs[i] = *mbd_model_body(base, i);
        defs[i].friction = fr;
    }
    char err[512];
    double gravity[3];
    mbd_model_gravity(base, gravity);
    mbd_model *model = build_tree(name, gravity, n, defs, err, sizeof err);
    assert_non_null(model);
    free(defs);
    mbd_model_free(base);
    return model;
}

/* The model of spec with the friction of every joint replaced by fr. */
static mbd_model *with_friction(const char *spec, mbd_friction fr)
{
    return replace_friction(load_model(spec), spec, fr);
}

/* Forward dynamics with every solver in every form it offers; check(solver, form, out,
 * ctx) sees qdd (acceleration) or pd (momentum, from p = H qd). */
typedef void (*forward_check)(const mbd_model *model, mbd_work *work, mbd_formulation form,
                              const double *out, void *ctx);

static void forward_all(const mbd_model *model, const double *q, const double *qd,
                        const double *tau, forward_check check, void *ctx)
{
    const int nv = mbd_model_nv(model);
    double *p = calloc(4 * (size_t)nv, sizeof *p), *out = p + nv, *qd_out = out + nv;
    for (int s = 0; s < mbd_solver_count(); s++) {
        const mbd_solver *solver = mbd_solver_at(s);
        mbd_work *work;
        mbd_work_new(model, solver, &work);
        if (mbd_solver_formulations(solver) & MBD_ACCELERATION) {
            assert_int_equal(mbd_forward(model, work, q, qd, tau, out), MBD_OK);
            check(model, work, MBD_ACCELERATION, out, ctx);
        }
        if (mbd_solver_formulations(solver) & MBD_MOMENTUM) {
            assert_int_equal(mbd_momentum(model, work, q, qd, p), MBD_OK);
            assert_int_equal(mbd_forward_momentum(model, work, q, p, tau, qd_out, out), MBD_OK);
            assert_close(qd_out, qd, nv, 1e-12, "qd = H^-1 p");
            check(model, work, MBD_MOMENTUM, out, ctx);
        }
        mbd_work_free(work);
    }
    free(p);
}

/* ---- a block on an incline ---- */

/* A prismatic joint rising at angle theta, its frame turned about an oblique axis; the
 * block's centre of mass off the axis. The reaction perpendicular to the slide is
 * m g cos(theta), so m qdd = tau - m g sin(theta) - mu m g cos(theta) tanh(qd / v_s) - b qd. */
typedef struct {
    double m, theta, tau, qd;
    mbd_friction fr;
} incline;

static mbd_model *incline_model(const incline *c)
{
    double R[3][3];
    rotation(R, (const double[3]){0.3, -0.5, 0.8}, 0.9);
    const double phi = 0.6;
    const double axis_world[3] = {cos(c->theta) * cos(phi), cos(c->theta) * sin(phi),
                                  sin(c->theta)};
    mbd_body_def b = {.name = "block",
                      .parent = -1,
                      .joint = MBD_PRISMATIC,
                      .mass = c->m,
                      .com = {0.1, -0.2, 0.05},
                      .friction = c->fr};
    apply_t(b.axes[0], R, axis_world);
    memcpy(b.rotation, R, sizeof R);
    memcpy(b.origin, (const double[3]){0.4, 0.1, -0.3}, sizeof b.origin);
    b.inertia[0][0] = 0.02, b.inertia[1][1] = 0.03, b.inertia[2][2] = 0.04;
    return build(1, &b);
}

static void check_incline(const mbd_model *model, mbd_work *work, mbd_formulation form,
                          const double *out, void *ctx)
{
    (void)model;
    const incline *c = ctx;
    const double qdd = (c->tau - c->m * g0 * sin(c->theta) -
                        c->fr.coulomb * c->m * g0 * cos(c->theta) * tanh(c->qd / c->fr.smoothing) -
                        c->fr.viscous * c->qd) /
                       c->m;
    const double expected = form == MBD_MOMENTUM ? c->m * qdd : qdd; /* pd = m qdd */
    assert_close(out, &expected, 1, 1e-12, "incline");
    if (c->fr.coulomb > 0.0)
        assert_true(mbd_work_friction_iterations(work) >= 1);
    else
        assert_int_equal(mbd_work_friction_iterations(work), 0);
}

static void test_incline_closed_form(void **state)
{
    (void)state;
    const incline cases[] = {
        {2.0, 0.35, 1.5, 0.7, {.coulomb = 0.3, .viscous = 0.4, .smoothing = 0.05}},
        {2.0, 0.35, 1.5, -0.02, {.coulomb = 0.3, .viscous = 0.4, .smoothing = 0.05}},
        {0.5, 0.0, 0.0, 1.2, {.coulomb = 0.25, .radius = 7.0, .smoothing = 0.1}}, /* horizontal */
        {0.5, -0.2, 0.3, 1.2, {.viscous = 0.8}}, /* viscous only: no iteration */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        mbd_model *model = incline_model(&cases[k]);
        const double q = 0.3;
        forward_all(model, &q, &cases[k].qd, &cases[k].tau, check_incline, (void *)&cases[k]);
        mbd_model_free(model);
    }
}

/* ---- a slider on a turning arm ---- */

/* The arm turns about the vertical through its origin (angle th); its joint frame is
 * turned by R1, its centre of mass on the axis, its inertia J1 about any axis. The slider
 * slides radially at rho = d + s from the axis, height h, in a joint frame turned by R2
 * within the arm; point-like (inertia J2 I, centre at its origin). In the arm's turning
 * frame (e_r, e_t, e_z) the slider accelerates by (sdd - rho thd^2, rho thdd + 2 sd thd, 0):
 *   (J1 + J2 + m rho^2) thdd + 2 m rho sd thd = tau1 - mu1 r1 N1 tanh(thd / v1) - b1 thd
 *   m (sdd - rho thd^2)                       = tau2 - mu2 N2 tanh(sd / v2) - b2 sd
 * with the reactions perpendicular to each axis (the vertical force on the arm's pin is
 * along its axis; the slider's guide carries its weight and the Coriolis force):
 *   N1 = m |(sdd - rho thd^2, rho thdd + 2 sd thd)|,   N2 = m |(rho thdd + 2 sd thd, g)|. */
typedef struct {
    double m1, J1, m, J2, d, h;
    mbd_friction arm, slider;
    double q[2], qd[2], tau[2];
} turning_arm;

static mbd_model *arm_model(const turning_arm *c)
{
    double R1[3][3], R2[3][3], R12[3][3];
    rotation(R1, (const double[3]){1, 2, -0.5}, 0.7);
    rotation(R2, (const double[3]){-0.3, 0.4, 1}, 1.1);
    multiply(R12, R1, R2);
    mbd_body_def b[2] = {
        {.name = "arm", .parent = -1, .joint = MBD_REVOLUTE, .mass = c->m1, .friction = c->arm},
        {.name = "slider",
         .parent = 0,
         .joint = MBD_PRISMATIC,
         .mass = c->m,
         .friction = c->slider},
    };
    apply_t(b[0].axes[0], R1, (const double[3]){0, 0, 1});
    memcpy(b[0].rotation, R1, sizeof R1);
    memcpy(b[0].origin, (const double[3]){0.2, -0.1, 0.3}, sizeof b[0].origin);
    apply_t(b[0].com, R1, (const double[3]){0, 0, 0.15});
    isotropic(b[0].inertia, c->J1);
    apply_t(b[1].axes[0], R12, (const double[3]){1, 0, 0});
    memcpy(b[1].rotation, R2, sizeof R2);
    apply_t(b[1].origin, R1, (const double[3]){c->d, 0, c->h});
    isotropic(b[1].inertia, c->J2);
    return build(2, b);
}

/* (thdd, sdd) by a fixed point of the two scalar equations above, independent of the
 * library's iteration; and pd = (H11 thdd + 2 m rho sd thd, m sdd). */
static void arm_by_hand(const turning_arm *c, double qdd[2], double pd[2])
{
    const double rho = c->d + c->q[1], thd = c->qd[0], sd = c->qd[1];
    const double H11 = c->J1 + c->J2 + c->m * rho * rho;
    double thdd = 0.0, sdd = 0.0;
    for (int it = 0; it < 500; it++) {
        const double radial = sdd - rho * thd * thd, tangential = rho * thdd + 2 * sd * thd;
        const double N1 = c->m * hypot(radial, tangential), N2 = c->m * hypot(tangential, g0);
        const double F1 = -c->arm.coulomb * c->arm.radius * N1 * tanh(thd / c->arm.smoothing) -
                          c->arm.viscous * thd;
        const double F2 =
            -c->slider.coulomb * N2 * tanh(sd / c->slider.smoothing) - c->slider.viscous * sd;
        thdd = (c->tau[0] + F1 - 2 * c->m * rho * sd * thd) / H11;
        sdd = (c->tau[1] + F2) / c->m + rho * thd * thd;
    }
    qdd[0] = thdd, qdd[1] = sdd;
    pd[0] = H11 * thdd + 2 * c->m * rho * sd * thd;
    pd[1] = c->m * sdd;
}

static void check_arm(const mbd_model *model, mbd_work *work, mbd_formulation form,
                      const double *out, void *ctx)
{
    (void)model;
    double qdd[2], pd[2];
    arm_by_hand(ctx, qdd, pd);
    assert_close(out, form == MBD_MOMENTUM ? pd : qdd, 2, 1e-10, "turning arm");
    assert_true(mbd_work_friction_iterations(work) >= 2);
}

static const turning_arm arm_case = {
    .m1 = 3.0,
    .J1 = 0.2,
    .m = 1.5,
    .J2 = 0.01,
    .d = 0.25,
    .h = 0.1,
    .arm = {.coulomb = 0.4, .radius = 0.1, .viscous = 0.05, .smoothing = 0.2},
    .slider = {.coulomb = 0.3, .viscous = 0.1, .smoothing = 0.1},
    .q = {0.4, 0.15},
    .qd = {1.3, -0.6},
    .tau = {0.5, -0.2},
};

static void test_turning_arm_by_hand(void **state)
{
    (void)state;
    mbd_model *model = arm_model(&arm_case);
    forward_all(model, arm_case.q, arm_case.qd, arm_case.tau, check_arm, (void *)&arm_case);
    mbd_model_free(model);
}

/* Large Coulomb coefficients on both joints: the friction forces feed back with a gain
 * far above 1 and the iteration cannot converge; every solver says so and names a joint. */
static void test_painleve_fails(void **state)
{
    (void)state;
    turning_arm c = arm_case;
    c.J1 = 0.001, c.J2 = 0.001, c.d = 1.0;
    c.arm = (mbd_friction){.coulomb = 5, .radius = 1, .smoothing = 0.01};
    c.slider = (mbd_friction){.coulomb = 5, .smoothing = 0.01};
    mbd_model *model = arm_model(&c);
    double out[2], qd[2], p[2] = {1, 1};
    for (int s = 0; s < mbd_solver_count(); s++) {
        const mbd_solver *solver = mbd_solver_at(s);
        mbd_work *work;
        mbd_work_new(model, solver, &work);
        const int status = mbd_solver_formulations(solver) & MBD_ACCELERATION
                               ? mbd_forward(model, work, c.q, c.qd, c.tau, out)
                               : mbd_forward_momentum(model, work, c.q, p, c.tau, qd, out);
        assert_int_equal(status, MBD_EFRICTION);
        assert_in_range(mbd_work_failed_body(work), 0, 1);
        mbd_work_free(work);
    }
    mbd_model_free(model);
}

/* ---- identities ---- */

/* mbd_inverse_dynamics gives the actuator force that mbd_forward turns back into qdd, without
 * iterating: a check of the iteration by a direct computation. Errors are relative to
 * |tau| + |g(q)|, the size of the joint forces: the chain of 1000 links, whose gravity
 * torques dwarf tau, converges only at the rounding floor of its ill-conditioned solve
 * (1.0e-12 without fused multiply-adds, the sanitizer build's, where the iteration's
 * steps qdd_0 + H^-1 (tau_f - tau_f,0) add their rounding to the first solve's). */
static void test_inverse_of_forward(void **state)
{
    (void)state;
    const char *specs[] = {"chain:n=5,joint=cylindrical", "chain:n=4,joint=cardan",
                           "chain:n=5,joint=prismatic", "tree:n=7,branching=2,skew=0.5",
                           "chain:n=1000,joint=revolute"};
    const mbd_friction fr = {.coulomb = 0.2, .radius = 0.05, .viscous = 0.1, .smoothing = 0.05};
    uint64_t seed = 17;
    for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
        mbd_model *model = with_friction(specs[k], fr);
        const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
        double *q = calloc((size_t)(nq + 6 * nv), sizeof *q);
        double *qd = q + nq, *tau = qd + nv, *qdd = tau + nv, *tau_back = qdd + nv;
        double *g = tau_back + nv, *zero = g + nv;
        test_fill(&seed, q, nq, -1.0, 1.0);
        test_fill(&seed, qd, nv, -1.0, 1.0);
        test_fill(&seed, tau, nv, -2.0, 2.0);
        mbd_work *work;
        mbd_work_new(model, mbd_solver_find("bodies"), &work);
        assert_int_equal(mbd_forward(model, work, q, qd, tau, qdd), MBD_OK);
        assert_true(mbd_work_friction_iterations(work) >= 2);
        assert_int_equal(mbd_inverse_dynamics(model, work, q, qd, qdd, tau_back, NULL), MBD_OK);
        assert_int_equal(mbd_inverse_dynamics(model, work, q, zero, zero, g, NULL), MBD_OK);
        const double scale = norm(tau, nv) + norm(g, nv);
        const double error = rel_error(tau_back, tau, nv, 0.0) * norm(tau, nv) / scale;
        if (!(error <= 2e-12))
            print_error("%s: error %.3e relative to |tau| + |g|\n", specs[k], error);
        assert_true(error <= 2e-12);
        mbd_work_free(work);
        free(q);
        mbd_model_free(model);
    }
}

/* ---- the iteration from the first evaluation ---- */

/* A forward call in the given form into out; momentum form: qd_out and pd (in out) from
 * p = H qd. */
static void forward_once(const mbd_model *model, mbd_work *work, mbd_formulation form,
                         const state_buf *s, double *out, double *qd_out)
{
    if (form == MBD_ACCELERATION) {
        assert_int_equal(mbd_forward(model, work, s->q, s->qd, s->tau, out), MBD_OK);
        return;
    }
    assert_int_equal(mbd_momentum(model, work, s->q, s->qd, s->p), MBD_OK);
    assert_int_equal(mbd_forward_momentum(model, work, s->q, s->p, s->tau, qd_out, out), MBD_OK);
}

/* Random trees of every joint type that has friction and of those mixed: each solver's
 * iteration from its first evaluation (its inverse) gives what the same solver gives
 * re-solving in full at every iteration, within the iteration's tolerance. */
static void test_first_evaluation_as_full_solves(void **state)
{
    (void)state;
    const mbd_friction fr = {.coulomb = 0.3, .radius = 0.08, .viscous = 0.05, .smoothing = 0.05};
    for (int type = MIXED_COORDINATE_JOINTS; type <= MBD_CARDAN; type++) {
        if (type == MIXED_JOINTS) /* spherical and free joints have no friction */
            continue;
        mbd_model *model = replace_friction(
            random_model(40 + (uint64_t)(type + 2), 9, type, SHAPE_RANDOM), "random", fr);
        state_buf s = state_new(model, 7 + (uint64_t)(type + 2));
        for (int k = 0; k < mbd_solver_count(); k++) {
            const mbd_solver *solver = mbd_solver_at(k);
            if (solver->plugin)
                continue;
            assert_non_null(solver->inverse);
            mbd_solver in_full = *solver;
            in_full.inverse = NULL;
            mbd_work *work, *full_work;
            mbd_work_new(model, solver, &work);
            mbd_work_new(model, &in_full, &full_work);
            for (unsigned form = 1; form <= MBD_MOMENTUM; form <<= 1) {
                if (!(mbd_solver_formulations(solver) & form))
                    continue;
                forward_once(model, work, form, &s, s.out, s.out2);
                forward_once(model, full_work, form, &s, s.ref, s.ref2);
                char label[96];
                snprintf(label, sizeof label, "%s, form %u, joint type %d", solver->name, form,
                         type);
                assert_close(s.out, s.ref, s.nv, 1e-12, label);
                assert_true(mbd_work_friction_iterations(work) >= 2);
            }
            mbd_work_free(work);
            mbd_work_free(full_work);
        }
        state_free(&s);
        mbd_model_free(model);
    }
}

/* The force parts of work->f, body after body. */
static void force_parts(const mbd_model *model, const mbd_work *work, double *out)
{
    for (int i = 0; i < mbd_model_nbodies(model); i++)
        memcpy(out + 3 * i, work->f[i] + 3, 3 * sizeof *out);
}

/* Random trees of every joint type: each SOLVER_INVERSE_REACTIONS solver's inverse on a base
 * gives the x = H^-1 b and reaction forces (base plus those of x alone) that its inverse
 * without one and then RNEA's passes (reaction_forces_plus_accelerations) give, on the
 * factorization of a solve in the solver's first form. */
static void test_inverse_reactions_as_generic(void **state)
{
    (void)state;
    for (int type = MIXED_COORDINATE_JOINTS; type <= MBD_CARDAN; type++) {
        mbd_model *model = random_model(60 + (uint64_t)(type + 2), 9, type, SHAPE_RANDOM);
        state_buf s = state_new(model, 3 + (uint64_t)(type + 2));
        const int nb = mbd_model_nbodies(model);
        double(*base)[6] = malloc((size_t)nb * sizeof *base);
        double *ours = malloc(6 * (size_t)nb * sizeof *ours), *generic = ours + 3 * nb;
        uint64_t seed = 11;
        test_fill(&seed, base[0], 6 * nb, -1.0, 1.0);
        for (int k = 0; k < mbd_solver_count(); k++) {
            const mbd_solver *solver = mbd_solver_at(k);
            if (!(solver->features & SOLVER_INVERSE_REACTIONS))
                continue;
            mbd_work *work;
            mbd_work_new(model, solver, &work);
            forward_once(model, work,
                         solver->forms & MBD_ACCELERATION ? MBD_ACCELERATION : MBD_MOMENTUM, &s,
                         s.out, s.out2);
            solver->inverse(model, work, s.tau, s.out, (const double(*)[6])base);
            force_parts(model, work, ours);
            solver->inverse(model, work, s.tau, s.ref, NULL);
            reaction_forces_plus_accelerations(model, work, s.ref, (const double(*)[6])base);
            force_parts(model, work, generic);
            char label[96];
            snprintf(label, sizeof label, "%s, joint type %d", solver->name, type);
            assert_close(s.out, s.ref, s.nv, 1e-12, label);
            assert_close(ours, generic, 3 * nb, 1e-12, label);
            mbd_work_free(work);
        }
        free(base);
        free(ours);
        state_free(&s);
        mbd_model_free(model);
    }
}

/* A call's result does not depend on the calls before it in the same workspace: the
 * same state after a different one gives the same bits as in a fresh workspace. */
static void test_calls_independent(void **state)
{
    (void)state;
    const mbd_friction fr = {.coulomb = 0.2, .radius = 0.05, .viscous = 0.1, .smoothing = 0.05};
    mbd_model *model =
        replace_friction(random_model(3, 12, MIXED_COORDINATE_JOINTS, SHAPE_RANDOM), "random", fr);
    state_buf a = state_new(model, 1), b = state_new(model, 2);
    for (int k = 0; k < mbd_solver_count(); k++) {
        const mbd_solver *solver = mbd_solver_at(k);
        if (solver->plugin)
            continue;
        mbd_work *fresh, *used;
        mbd_work_new(model, solver, &fresh);
        mbd_work_new(model, solver, &used);
        for (unsigned form = 1; form <= MBD_MOMENTUM; form <<= 1) {
            if (!(mbd_solver_formulations(solver) & form))
                continue;
            forward_once(model, fresh, form, &a, a.ref, a.ref2);
            forward_once(model, used, form, &a, a.out, a.out2);
            forward_once(model, used, form, &b, b.out, b.out2);
            forward_once(model, used, form, &a, a.out, a.out2);
            assert_memory_equal(a.out, a.ref, (size_t)a.nv * sizeof *a.out);
            assert_memory_equal(a.out2, a.ref2, (size_t)a.nv * sizeof *a.out2);
        }
        mbd_work_free(fresh);
        mbd_work_free(used);
    }
    state_free(&a);
    state_free(&b);
    mbd_model_free(model);
}

/* Zero coefficients (radius and smoothing set) take the frictionless path: the same bits,
 * no iteration. */
static void test_zero_friction_bit_identical(void **state)
{
    (void)state;
    const char *spec = "chain:n=6,joint=cylindrical";
    mbd_model *plain = load_model(spec);
    mbd_model *zero = with_friction(spec, (mbd_friction){.radius = 0.3, .smoothing = 0.2});
    assert_false(mbd_model_has_friction(zero));
    const int nq = mbd_model_nq(plain), nv = mbd_model_nv(plain);
    double *q = malloc(sizeof(double) * (size_t)(nq + 8 * nv));
    double *qd = q + nq, *tau = qd + nv, *out = tau + nv, *ref = out + 2 * nv, *p = ref + 2 * nv;
    uint64_t seed = 5;
    test_fill(&seed, q, nq, -1.0, 1.0);
    test_fill(&seed, qd, nv, -1.0, 1.0);
    test_fill(&seed, tau, nv, -1.0, 1.0);
    test_fill(&seed, p, nv, -1.0, 1.0);
    for (int s = 0; s < mbd_solver_count(); s++) {
        const mbd_solver *solver = mbd_solver_at(s);
        mbd_work *w_plain, *w_zero;
        mbd_work_new(plain, solver, &w_plain);
        mbd_work_new(zero, solver, &w_zero);
        const size_t bytes = (size_t)(2 * nv) * sizeof *out;
        memset(out, 0, bytes), memset(ref, 0, bytes);
        if (mbd_solver_formulations(solver) & MBD_ACCELERATION) {
            assert_int_equal(mbd_forward(plain, w_plain, q, qd, tau, ref), MBD_OK);
            assert_int_equal(mbd_forward(zero, w_zero, q, qd, tau, out), MBD_OK);
        } else {
            assert_int_equal(mbd_forward_momentum(plain, w_plain, q, p, tau, ref, ref + nv),
                             MBD_OK);
            assert_int_equal(mbd_forward_momentum(zero, w_zero, q, p, tau, out, out + nv), MBD_OK);
        }
        assert_memory_equal(out, ref, bytes);
        assert_int_equal(mbd_work_friction_iterations(w_zero), 0);
        mbd_work_free(w_plain);
        mbd_work_free(w_zero);
    }
    free(q);
    mbd_model_free(plain);
    mbd_model_free(zero);
}

/* ---- dissipation ---- */

typedef struct {
    double last, first, worst_rise;
    long count;
} energy_track;

static int track_energy(const mbd_sim_state *s, void *ctx)
{
    energy_track *e = ctx;
    const double E = s->kinetic + s->potential;
    if (e->count++ == 0)
        e->first = E;
    else
        e->worst_rise = fmax(e->worst_rise, E - e->last);
    e->last = E;
    return 0;
}

/* Coulomb and viscous friction only take energy: T + V never rises along a hanging,
 * swinging and sliding chain, and falls markedly. */
static void test_energy_decreases(void **state)
{
    (void)state;
    mbd_model *model = with_friction(
        "chain:n=4,joint=cylindrical",
        (mbd_friction){.coulomb = 0.2, .radius = 0.05, .viscous = 0.05, .smoothing = 0.05});
    const double q0[8] = {0.3, 0.1, -0.4, 0.0, 0.6, -0.1, 0.2, 0.05};
    const double qd0[8] = {1.0, 0.5, -0.8, 0.3, 0.4, -0.6, 1.2, 0.2};
    const struct {
        const char *solver;
        mbd_formulation form;
    } runs[] = {{"bodies", MBD_ACCELERATION}, {"poisson-ldlt", MBD_MOMENTUM}};
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        const mbd_sim_options opt = {.formulation = runs[r].form,
                                     .integrator = MBD_DOPRI5,
                                     .t1 = 1.0,
                                     .rtol = 1e-10,
                                     .atol = 1e-12,
                                     .sample = 0.01};
        energy_track e = {0};
        assert_int_equal(mbd_simulate(model, mbd_solver_find(runs[r].solver), &opt, q0, qd0,
                                      track_energy, &e, NULL),
                         MBD_OK);
        print_message("%s: E %.6f -> %.6f, largest rise %.1e over %ld samples\n", runs[r].solver,
                      e.first, e.last, e.worst_rise, e.count);
        assert_int_equal(e.count, 101);
        assert_true(e.worst_rise <= 1e-8 * fabs(e.first));
        assert_true(e.first - e.last > 0.05);
    }
    mbd_model_free(model);
}

/* ---- model files and the CLI ---- */

/* A model file of a slider on a turning arm with the joints' friction objects given. */
static const char *arm_json(const char *arm_friction, const char *slider_friction)
{
    static char text[1024];
    snprintf(
        text, sizeof text,
        "{\"bodies\": ["
        "{\"name\": \"arm\", \"parent\": \"world\", \"joint\": {\"type\": \"revolute\", "
        "\"axis\": [0, 0, 1], \"friction\": %s}, "
        "\"mass\": 3, \"com\": [0, 0, 0], \"inertia\": [[1e-3, 0, 0], [0, 1e-3, 0], [0, 0, 1e-3]]}, "
        "{\"name\": \"slider\", \"parent\": \"arm\", \"joint\": {\"type\": \"prismatic\", "
        "\"axis\": [1, 0, 0], \"origin\": [1, 0, 0], \"friction\": %s}, "
        "\"mass\": 1.5, \"com\": [0, 0, 0], \"inertia\": [[1e-3, 0, 0], [0, 1e-3, 0], [0, 0, 1e-3]]}]}",
        arm_friction, slider_friction);
    return temp_file_with(text, ".json");
}

static void test_model_file_errors(void **state)
{
    (void)state;
    const struct {
        const char *friction, *fragment;
    } bad[] = {
        {"{\"coulomb\": 0.3}",
         "bodies[1] (\"slider\").joint.friction.smoothing: expected a number > 0 where coulomb > 0, got 0"},
        {"{\"viscous\": -1}", "joint.friction.viscous: expected a finite number >= 0, got -1"},
        {"{\"coulomb\": \"high\"}",
         "joint.friction.coulomb: expected a finite number, got \"high\""},
        {"{\"static\": 0.3}", "joint.friction.static: unknown field"},
        {"0.3", "bodies[1] (\"slider\").joint.friction: expected an object, got 0.3"},
    };
    char args[256];
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        const char *path = arm_json("{}", bad[k].friction);
        snprintf(args, sizeof args, "info %s", path);
        expect_mbd2(args, 2, bad[k].fragment, path);
        unlink(path);
    }
    mbd_body_def b = {.name = "b",
                      .parent = -1,
                      .joint = MBD_REVOLUTE,
                      .axes = {{0, 0, 1}},
                      .rotation = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}},
                      .mass = 1,
                      .inertia = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}},
                      .friction = {.radius = NAN}};
    char err[256];
    const double gravity[3] = {0, 0, -g0};
    assert_null(build_tree("m", gravity, 1, &b, err, sizeof err));
    assert_non_null(
        strstr(err, "bodies[0] (\"b\").joint.friction.radius: expected a finite number >= 0"));
}

/* mbd fd prints the iteration count, and names the joint when the iteration fails. */
static void test_cli_fd(void **state)
{
    (void)state;
    char args[256];
    const char *path = arm_json("{\"coulomb\": 0.1, \"radius\": 0.05, \"smoothing\": 0.1}",
                                "{\"coulomb\": 0.1, \"smoothing\": 0.1}");
    snprintf(args, sizeof args, "fd %s --qd 1,1", path);
    expect_mbd(args, 0, "\"friction_iterations\": ");
    snprintf(args, sizeof args, "fd %s --qd 1,1 --solver poisson-sweep", path);
    expect_mbd(args, 0, "\"friction_iterations\": ");
    unlink(path);
    path = arm_json("{\"coulomb\": 5, \"radius\": 1, \"smoothing\": 0.01}",
                    "{\"coulomb\": 5, \"smoothing\": 0.01}");
    snprintf(args, sizeof args, "fd %s --qd 1,1 --solver bodies", path);
    expect_mbd2(args, 1, "friction iteration did not converge at the", "joint of body");
    unlink(path);
    expect_mbd("fd chain:n=2,joint=revolute --qd 1,1", 0, "{\"qdd\": [");
    cli_result r = mbd_run("fd chain:n=2,joint=revolute --qd 1,1");
    assert_null(strstr(r.out, "friction"));
    cli_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_incline_closed_form),
        cmocka_unit_test(test_turning_arm_by_hand),
        cmocka_unit_test(test_painleve_fails),
        cmocka_unit_test(test_inverse_of_forward),
        cmocka_unit_test(test_first_evaluation_as_full_solves),
        cmocka_unit_test(test_inverse_reactions_as_generic),
        cmocka_unit_test(test_calls_independent),
        cmocka_unit_test(test_zero_friction_bit_identical),
        cmocka_unit_test(test_energy_decreases),
        cmocka_unit_test(test_model_file_errors),
        cmocka_unit_test(test_cli_fd),
    };
    return cmocka_run_group_tests_name("friction", tests, NULL, NULL);
}
