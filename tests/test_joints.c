/* Spherical and free joints (nq != nv) against known answers: Euler's equations of a free
 * body, the torque-free symmetric top in closed form, conservation of energy and momentum
 * through the intermediate-axis flip, the conical spherical pendulum, a floating tree
 * keeping its momentum without gravity and its centre of mass falling at g with it, and
 * the errors that these joints bring (friction, loops, coefficients, bad quaternions,
 * vector lengths, CSV names). World poses and momenta are formed here from the state, by
 * the test's own quaternion formula, not the library's. */
#include "support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- small helpers ---- */

static void cross(double out[3], const double a[3], const double b[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

static double dot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* out = M x for a row-major 3x3 M */
static void apply(double out[3], const double M[9], const double x[3])
{
    for (int r = 0; r < 3; r++)
        out[r] = M[3 * r] * x[0] + M[3 * r + 1] * x[1] + M[3 * r + 2] * x[2];
}

/* out = M^T x */
static void apply_t(double out[3], const double M[9], const double x[3])
{
    for (int r = 0; r < 3; r++)
        out[r] = M[r] * x[0] + M[3 + r] * x[1] + M[6 + r] * x[2];
}

/* qdd of the s-th solver at (q, qd), tau = 0, into a new workspace (NULL if the solver has
 * no acceleration form); the caller frees it. */
static mbd_work *forward_with(const mbd_model *model, int s, const double *q, const double *qd,
                              double *qdd)
{
    const mbd_solver *solver = mbd_solver_at(s);
    if (!(mbd_solver_formulations(solver) & MBD_ACCELERATION))
        return NULL;
    mbd_work *work;
    mbd_work_new(model, solver, &work);
    assert_int_equal(mbd_forward(model, work, q, qd, NULL, qdd), MBD_OK);
    return work;
}

/* The rotation (body -> world) of the unit quaternion (w, x, y, z): R v = q v q*, here
 * as v + 2 w (u x v) + 2 u x (u x v), u = (x, y, z), column by column. */
static void rotation_of(double R[9], const double quat[4])
{
    const double *u = quat + 1;
    for (int c = 0; c < 3; c++) {
        const double e[3] = {c == 0, c == 1, c == 2};
        double uxe[3], uxuxe[3];
        cross(uxe, u, e);
        cross(uxuxe, u, uxe);
        for (int r = 0; r < 3; r++)
            R[3 * r + c] = e[r] + 2.0 * quat[0] * uxe[r] + 2.0 * uxuxe[r];
    }
}

static double quaternion_norm(const double quat[4])
{
    return sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3]);
}

/* One body on a joint of the given type at the world origin. */
static mbd_model *one_body(mbd_joint_type joint, double mass, const double com[3],
                           const double inertia[9], const double gravity[3])
{
    mbd_body_def body = {.name = "body", .parent = -1, .joint = joint, .mass = mass};
    memcpy(body.com, com, sizeof body.com);
    memcpy(body.inertia, inertia, sizeof body.inertia);
    for (int k = 0; k < 3; k++)
        body.rotation[k][k] = 1.0;
    char err[256];
    mbd_model *model = build_tree("one body", gravity, 1, &body, err, sizeof err);
    if (!model)
        print_error("%s\n", err);
    assert_non_null(model);
    return model;
}

/* The root body's pose in the world (a free joint at the root): x_world = r + R x_body,
 * with the joint frame (origin o, rotation Q) and q's position p and quaternion:
 * r = o + Q p, R = Q R(quat). */
static void root_pose(const mbd_model *model, const double *q, double r[3], double R[9])
{
    const mbd_body_def *root = mbd_model_body(model, 0);
    double Rq[9], Qp[3];
    rotation_of(Rq, q + 3);
    apply(Qp, (const double *)root->rotation, q);
    for (int i = 0; i < 3; i++) {
        r[i] = root->origin[i] + Qp[i];
        for (int j = 0; j < 3; j++)
            R[3 * i + j] = root->rotation[i][0] * Rq[j] + root->rotation[i][1] * Rq[3 + j] +
                           root->rotation[i][2] * Rq[6 + j];
    }
}

/* The world-frame momentum (L about the world origin; P) of a tree whose root has a free
 * joint: the root's p = H v is the whole tree's momentum (n_O; f) in the root's frame
 * about its origin. */
static void world_momentum(const mbd_model *model, const double *q, const double *qd, double L[3],
                           double P[3])
{
    mbd_work *work;
    mbd_work_new(model, NULL, &work);
    double *p = malloc(sizeof(double) * (size_t)mbd_model_nv(model)), r[3], R[9], Rn[3], rxP[3];
    assert_int_equal(mbd_momentum(model, work, q, qd, p), MBD_OK);
    root_pose(model, q, r, R);
    apply(Rn, R, p);
    apply(P, R, p + 3);
    cross(rxP, r, P);
    for (int k = 0; k < 3; k++)
        L[k] = Rn[k] + rxP[k];
    free(p);
    mbd_work_free(work);
}

/* ---- instantaneous known answers ---- */

/* A free body about its centre of mass: Euler's equations I w' = -w x I w, and the body
 * frame's origin (the centre of mass) moving uniformly: v' = -w x v in body coordinates;
 * under gravity g, v' = -w x v + R^T g. Every acceleration solver. */
static void test_free_body_euler(void **state)
{
    (void)state;
    static const double com[3] = {0}, gravity[3] = {0.3, -0.4, -9.81};
    static const double I[9] = {0.8, 0.1, -0.05, 0.1, 1.3, 0.2, -0.05, 0.2, 1.9};
    mbd_model *model = one_body(MBD_FREE, 2.5, com, I, gravity);
    const double q[7] = {0.3, -1.2, 2.0, 0.5, -0.5, 0.1, 0.7},
                 qd[6] = {0.7, -1.1, 0.4, 0.2, 0.5, -0.9};
    double unit_q[7], R[9], Iw[3], wxIw[3], wxv[3], expected[6], g_body[3], qdd[6];
    memcpy(unit_q, q, sizeof q);
    const double norm = quaternion_norm(q + 3);
    for (int k = 3; k < 7; k++)
        unit_q[k] /= norm;
    rotation_of(R, unit_q + 3);
    apply(Iw, I, qd);
    cross(wxIw, qd, Iw);
    cross(wxv, qd, qd + 3);
    apply_t(g_body, R, gravity);
    /* w' = -I^-1 (w x I w) by Cramer's rule on the 3x3 I */
    double cof[9];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            const int r1 = (r + 1) % 3, r2 = (r + 2) % 3, c1 = (c + 1) % 3, c2 = (c + 2) % 3;
            cof[3 * c + r] = I[3 * r1 + c1] * I[3 * r2 + c2] - I[3 * r1 + c2] * I[3 * r2 + c1];
        }
    const double det = I[0] * cof[0] + I[1] * cof[3] + I[2] * cof[6];
    for (int r = 0; r < 3; r++) {
        expected[r] =
            -(cof[3 * r] * wxIw[0] + cof[3 * r + 1] * wxIw[1] + cof[3 * r + 2] * wxIw[2]) / det;
        expected[3 + r] = -wxv[r] + g_body[r];
    }
    for (int s = 0; s < mbd_solver_count(); s++) {
        mbd_work *work = forward_with(model, s, q, qd, qdd);
        if (work)
            assert_close(qdd, expected, 6, 1e-14, mbd_solver_name(mbd_solver_at(s)));
        mbd_work_free(work);
    }
    mbd_model_free(model);
}

/* A body on a spherical joint, at rest, its centre of mass at c: w' = I_O^-1 (c x m g_body)
 * with I_O = I_c + m (|c|^2 1 - c c^T) the inertia about the joint; checked as
 * I_O w' = c x m g_body. Also the joint's reaction: the force that holds the body. */
static void test_spherical_at_rest(void **state)
{
    (void)state;
    static const double com[3] = {0.1, -0.2, -0.7}, gravity[3] = {0, 0, -9.81};
    static const double I[9] = {0.05, 0.01, 0, 0.01, 0.04, 0, 0, 0, 0.03};
    const double m = 1.5;
    mbd_model *model = one_body(MBD_SPHERICAL, m, com, I, gravity);
    const double q[4] = {0.9, 0.2, -0.3, 0.1}, qd[3] = {0};
    double unit[4], R[9], g_body[3], torque[3], IO[9], lhs[3], qdd[3];
    for (int k = 0; k < 4; k++)
        unit[k] = q[k] / quaternion_norm(q);
    rotation_of(R, unit);
    apply_t(g_body, R, gravity);
    for (int k = 0; k < 3; k++)
        g_body[k] *= m;
    cross(torque, com, g_body);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            IO[3 * r + c] = I[3 * r + c] + m * ((r == c) * dot(com, com) - com[r] * com[c]);
    for (int s = 0; s < mbd_solver_count(); s++) {
        mbd_work *work = forward_with(model, s, q, qd, qdd);
        if (!work)
            continue;
        apply(lhs, IO, qdd);
        assert_close(lhs, torque, 3, 1e-14, mbd_solver_name(mbd_solver_at(s)));
        double tau[3], reactions[6], accel[3], wxc[3], expected_force[3];
        assert_int_equal(mbd_inverse_dynamics(model, work, q, qd, qdd, tau, reactions), MBD_OK);
        for (int k = 0; k < 3; k++)
            assert_true(fabs(tau[k]) <= 1e-14);
        cross(wxc, qdd, com); /* the centre of mass accelerates at w' x c (at rest) */
        for (int k = 0; k < 3; k++) {
            accel[k] = wxc[k];
            expected_force[k] = m * accel[k] - g_body[k];
        }
        assert_close(reactions + 3, expected_force, 3, 1e-13, "joint force = m a - m g");
        mbd_work_free(work);
    }
    mbd_model_free(model);
}

/* ---- motion ---- */

typedef struct {
    const mbd_model *model;
    double worst_quaternion; /* max ||quat| - 1| */
    double L0[3], P0[3], E0;
    double worst_L, worst_P, worst_E; /* max deviations from the first state */
    double min_w1, max_w1;            /* extremes of qd[1] */
    int count;
} invariants;

static int track_invariants(const mbd_sim_state *s, void *ctx)
{
    invariants *inv = ctx;
    double L[3], P[3];
    inv->worst_quaternion = fmax(inv->worst_quaternion, fabs(quaternion_norm(s->q + 3) - 1.0));
    world_momentum(inv->model, s->q, s->qd, L, P);
    const double E = s->kinetic + s->potential;
    if (inv->count++ == 0) {
        memcpy(inv->L0, L, sizeof L);
        memcpy(inv->P0, P, sizeof P);
        inv->E0 = E;
        inv->min_w1 = inv->max_w1 = s->qd[1];
    }
    for (int k = 0; k < 3; k++) {
        inv->worst_L = fmax(inv->worst_L, fabs(L[k] - inv->L0[k]));
        inv->worst_P = fmax(inv->worst_P, fabs(P[k] - inv->P0[k]));
    }
    inv->worst_E = fmax(inv->worst_E, fabs(E - inv->E0));
    inv->min_w1 = fmin(inv->min_w1, s->qd[1]);
    inv->max_w1 = fmax(inv->max_w1, s->qd[1]);
    return 0;
}

static const double zero3[3] = {0};

/* An asymmetric free body, spun about its intermediate axis with a small perturbation:
 * it flips (w_2 changes sign) and back, while energy, angular momentum about the world
 * origin and linear momentum stay put to 1e-12 (rk4, h = 1e-4 s, 10 s; the centre of mass
 * off the body origin and moving, so that every part of the free joint takes part), and
 * every reported quaternion is a unit one to 1e-12; both formulations. */
static void test_intermediate_axis_flip(void **state)
{
    (void)state;
    static const double I[9] = {1.0, 0, 0, 0, 2.0, 0, 0, 0, 3.0}, com[3] = {0.2, -0.1, 0.3};
    mbd_model *model = one_body(MBD_FREE, 3.0, com, I, zero3);
    const double q0[7] = {0.5, -0.2, 0.1, 1, 0, 0, 0}, qd0[6] = {0.01, 2.0, 0.01, 0.3, -0.2, 0.1};
    for (int form = MBD_ACCELERATION; form <= MBD_MOMENTUM; form++) {
        const mbd_sim_options opt = {.formulation = (mbd_formulation)form,
                                     .integrator = MBD_RK4,
                                     .t1 = 10.0,
                                     .dt = 1e-4,
                                     .sample = 0.05};
        invariants inv = {.model = model};
        const mbd_solver *solver =
            mbd_solver_find(form == MBD_ACCELERATION ? "bodies" : "poisson-ldlt");
        assert_int_equal(mbd_simulate(model, solver, &opt, q0, qd0, track_invariants, &inv, NULL),
                         MBD_OK);
        assert_int_equal(inv.count, 201);
        assert_true(inv.min_w1 < -1.9 && inv.max_w1 > 1.9); /* flipped */
        assert_true(inv.worst_quaternion <= 1e-12);
        assert_true(inv.worst_E <= 1e-12 * fabs(inv.E0));
        assert_true(inv.worst_L <= 1e-12 * sqrt(dot(inv.L0, inv.L0)));
        assert_true(inv.worst_P <= 1e-12 * sqrt(dot(inv.P0, inv.P0)));
    }
    mbd_model_free(model);
}

/* A symmetric top (I1 = I2 = A, I3 = C) without torque: w_3 stays, and w_1 + i w_2 turns
 * at Omega = (C - A) w_3 / A: w_1 + i w_2 = (w_1(0) + i w_2(0)) e^(i Omega t). dopri5 at
 * rtol = atol = 1e-12, sampled over 20 s, against that to 1e-9. */
typedef struct {
    double A, C, w0[3];
    double worst;
} top;

static int compare_top(const mbd_sim_state *s, void *ctx)
{
    top *tp = ctx;
    const double Omega = (tp->C - tp->A) * tp->w0[2] / tp->A, c = cos(Omega * s->t),
                 sn = sin(Omega * s->t);
    const double w[3] = {tp->w0[0] * c - tp->w0[1] * sn, tp->w0[0] * sn + tp->w0[1] * c, tp->w0[2]};
    for (int k = 0; k < 3; k++)
        tp->worst = fmax(tp->worst, fabs(s->qd[k] - w[k]));
    return 0;
}

static void test_symmetric_top(void **state)
{
    (void)state;
    top tp = {.A = 1.0, .C = 1.6, .w0 = {0.8, -0.3, 2.5}};
    const double I[9] = {tp.A, 0, 0, 0, tp.A, 0, 0, 0, tp.C};
    mbd_model *model = one_body(MBD_FREE, 2.0, zero3, I, zero3);
    const double q0[7] = {0, 0, 0, 0.6, 0.0, 0.8, 0.0};
    const double qd0[6] = {tp.w0[0], tp.w0[1], tp.w0[2], 0, 0, 0};
    const mbd_sim_options opt = {.formulation = MBD_ACCELERATION,
                                 .integrator = MBD_DOPRI5,
                                 .t1 = 20.0,
                                 .rtol = 1e-12,
                                 .atol = 1e-12,
                                 .sample = 0.1};
    assert_int_equal(
        mbd_simulate(model, mbd_solver_find("dense"), &opt, q0, qd0, compare_top, &tp, NULL),
        MBD_OK);
    assert_true(tp.worst <= 1e-9);
    mbd_model_free(model);
}

/* A spherical pendulum (a ball of mass m, isotropic inertia k about its centre, at
 * distance l below the joint) started on the conical orbit: tilted by theta and turning
 * about the vertical at phi' with l cos(theta) phi'^2 = g (the isotropic inertia drops out:
 * w x I_O w = -m (r . w) w x r). Then the ball runs the horizontal circle
 * r(t) = l (sin theta cos phi' t, sin theta sin phi' t, -cos theta) exactly; adams at
 * 1e-11 over three turns, against that to 1e-8. */
typedef struct {
    double l, theta, rate, worst;
} cone;

static int compare_cone(const mbd_sim_state *s, void *ctx)
{
    cone *cn = ctx;
    double R[9], r[3];
    const double c_body[3] = {0, 0, -cn->l};
    rotation_of(R, s->q);
    apply(r, R, c_body);
    const double a = cn->rate * s->t;
    const double expected[3] = {cn->l * sin(cn->theta) * cos(a), cn->l * sin(cn->theta) * sin(a),
                                -cn->l * cos(cn->theta)};
    for (int k = 0; k < 3; k++)
        cn->worst = fmax(cn->worst, fabs(r[k] - expected[k]));
    return 0;
}

static void test_conical_pendulum(void **state)
{
    (void)state;
    cone cn = {.l = 0.8, .theta = 0.6};
    const double g = 9.81, gravity[3] = {0, 0, -g}, com[3] = {0, 0, -cn.l};
    const double I[9] = {0.01, 0, 0, 0, 0.01, 0, 0, 0, 0.01};
    cn.rate = sqrt(g / (cn.l * cos(cn.theta)));
    mbd_model *model = one_body(MBD_SPHERICAL, 1.2, com, I, gravity);
    /* turned by -theta about y, which puts the ball at +x; w = phi' R^T e_z in the body */
    const double q0[4] = {cos(cn.theta / 2), 0, -sin(cn.theta / 2), 0};
    double R[9];
    rotation_of(R, q0);
    const double qd0[3] = {cn.rate * R[6], cn.rate * R[7], cn.rate * R[8]}; /* R^T e_z */
    const mbd_sim_options opt = {.formulation = MBD_MOMENTUM,
                                 .integrator = MBD_ADAMS,
                                 .t1 = 3 * 2 * M_PI / cn.rate,
                                 .rtol = 1e-11,
                                 .atol = 1e-11,
                                 .sample = 0.05};
    assert_int_equal(mbd_simulate(model, mbd_solver_find("poisson-sweep"), &opt, q0, qd0,
                                  compare_cone, &cn, NULL),
                     MBD_OK);
    assert_true(cn.worst <= 1e-8);
    mbd_model_free(model);
}

/* A copy of a generated model with other gravity. */
static mbd_model *with_gravity(const char *spec, const double gravity[3])
{
    mbd_model *generated = load_model(spec);
    const int nb = mbd_model_nbodies(generated);
    mbd_body_def *defs = malloc(sizeof *defs * (size_t)nb);
    for (int i = 0; i < nb; i++)
        defs[i] = *mbd_model_body(generated, i);
    char err[256];
    mbd_model *model = build_tree(spec, gravity, nb, defs, err, sizeof err);
    assert_non_null(model);
    free(defs);
    mbd_model_free(generated);
    return model;
}

/* A random state: q in [-1, 1] (quaternions normalized), qd in [-1, 1]. */
static void random_state(const mbd_model *model, uint64_t seed, double *q, double *qd)
{
    test_fill(&seed, q, mbd_model_nq(model), -1.0, 1.0);
    test_fill(&seed, qd, mbd_model_nv(model), -1.0, 1.0);
    assert_int_equal(mbd_normalize_positions(model, q), MBD_OK);
}

/* Floating trees without gravity keep their momentum (world frame, about the world origin)
 * to 1e-10 over 2 s (dopri5 at 1e-12), while their joints move; both formulations. */
static void test_floating_tree_keeps_momentum(void **state)
{
    (void)state;
    static const char *const specs[] = {"tree:n=7,branching=2,skew=0.4,base=free",
                                        "legged:legs=4,dof=3",
                                        "chain:n=5,joint=spherical,base=free"};
    for (size_t m = 0; m < sizeof specs / sizeof specs[0]; m++) {
        mbd_model *model = with_gravity(specs[m], zero3);
        double q0[64], qd0[64];
        random_state(model, 7 + m, q0, qd0);
        for (int form = MBD_ACCELERATION; form <= MBD_MOMENTUM; form++) {
            const mbd_sim_options opt = {.formulation = (mbd_formulation)form,
                                         .integrator = MBD_DOPRI5,
                                         .t1 = 2.0,
                                         .rtol = 1e-12,
                                         .atol = 1e-12,
                                         .sample = 0.1};
            invariants inv = {.model = model};
            const mbd_solver *solver =
                mbd_solver_find(form == MBD_ACCELERATION ? "sparse" : "poisson-sweep");
            assert_int_equal(
                mbd_simulate(model, solver, &opt, q0, qd0, track_invariants, &inv, NULL), MBD_OK);
            assert_true(inv.worst_L <= 1e-10 * sqrt(dot(inv.L0, inv.L0)));
            assert_true(inv.worst_P <= 1e-10 * sqrt(dot(inv.P0, inv.P0)));
            assert_true(inv.worst_E <= 1e-10 * fabs(inv.E0));
            assert_true(inv.worst_quaternion <= 1e-12);
        }
        mbd_model_free(model);
    }
}

/* Under gravity the total linear momentum of a floating tree changes at M g exactly:
 * from the momentum form, d/dt P_world = R (f' + w x f), with (n; f) the root's p and
 * f' its rate, for every momentum solver at random states. And along a simulated fall the
 * centre of mass height, V / (M g), follows z0 + (P_z / M) t - g t^2 / 2 to 1e-9. */
typedef struct {
    double M, g, z0, vz0, worst;
} fall;

static int compare_fall(const mbd_sim_state *s, void *ctx)
{
    fall *f = ctx;
    const double z = s->potential / (f->M * f->g);
    f->worst = fmax(f->worst, fabs(z - (f->z0 + f->vz0 * s->t - 0.5 * f->g * s->t * s->t)));
    return 0;
}

static void test_centre_of_mass_falls_at_g(void **state)
{
    (void)state;
    static const char *const specs[] = {"tree:n=7,branching=2,skew=0.4,base=free",
                                        "legged:legs=4,dof=3",
                                        "chain:n=5,joint=spherical,base=free"};
    const double gravity[3] = {0, 0, -9.81};
    for (size_t m = 0; m < sizeof specs / sizeof specs[0]; m++) {
        mbd_model *model = load_model(specs[m]);
        const int nb = mbd_model_nbodies(model);
        double M = 0.0, q[64], qd[64], p[64], qd_out[64], pd[64];
        for (int i = 0; i < nb; i++)
            M += mbd_model_body(model, i)->mass;
        random_state(model, 11 + m, q, qd);
        for (int s = 0; s < mbd_solver_count(); s++) {
            const mbd_solver *solver = mbd_solver_at(s);
            if (!(mbd_solver_formulations(solver) & MBD_MOMENTUM))
                continue;
            mbd_work *work;
            mbd_work_new(model, solver, &work);
            assert_int_equal(mbd_momentum(model, work, q, qd, p), MBD_OK);
            assert_int_equal(mbd_forward_momentum(model, work, q, p, NULL, qd_out, pd), MBD_OK);
            double r[3], R[9], wxf[3], rate[3], Pdot[3];
            root_pose(model, q, r, R);
            cross(wxf, qd_out, p + 3);
            for (int k = 0; k < 3; k++)
                rate[k] = pd[3 + k] + wxf[k];
            apply(Pdot, R, rate);
            for (int k = 0; k < 3; k++)
                assert_true(fabs(Pdot[k] - M * gravity[k]) <= 1e-12 * M * 9.81);
            mbd_work_free(work);
        }
        double L[3], P[3], T, V;
        world_momentum(model, q, qd, L, P);
        mbd_work *work;
        mbd_work_new(model, NULL, &work);
        assert_int_equal(mbd_energy(model, work, q, qd, &T, &V), MBD_OK);
        mbd_work_free(work);
        fall f = {.M = M, .g = 9.81, .z0 = V / (M * 9.81), .vz0 = P[2] / M};
        const mbd_sim_options opt = {.formulation = MBD_ACCELERATION,
                                     .integrator = MBD_DOPRI5,
                                     .t1 = 1.0,
                                     .rtol = 1e-12,
                                     .atol = 1e-12,
                                     .sample = 0.1};
        assert_int_equal(
            mbd_simulate(model, mbd_solver_find("bodies"), &opt, q, qd, compare_fall, &f, NULL),
            MBD_OK);
        assert_true(f.worst <= 1e-9);
        mbd_model_free(model);
    }
}

/* What integrate.c's argument rests on: the dynamics see quat / |quat| only, and the
 * quaternion's rate is linear in it, so a drift of |quat| changes nothing else: q with a
 * scaled quaternion gives the same qdd (to rounding) and the quaternion rates scaled. */
static void test_quaternion_scale_invariance(void **state)
{
    (void)state;
    mbd_model *model = load_model("legged:legs=2,dof=2");
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
    double q[16], qd[16], scaled[16], qdd[16], qdd_scaled[16], rates[16], rates_scaled[16];
    random_state(model, 5, q, qd);
    memcpy(scaled, q, sizeof q);
    for (int k = 3; k < 7; k++)
        scaled[k] *= 2.5;
    mbd_work *work;
    mbd_work_new(model, mbd_solver_find("bodies"), &work);
    assert_int_equal(mbd_forward(model, work, q, qd, NULL, qdd), MBD_OK);
    assert_int_equal(mbd_forward(model, work, scaled, qd, NULL, qdd_scaled), MBD_OK);
    assert_close(qdd_scaled, qdd, nv, 1e-14, "qdd with |quat| = 2.5");
    assert_int_equal(mbd_position_rates(model, q, qd, rates), MBD_OK);
    assert_int_equal(mbd_position_rates(model, scaled, qd, rates_scaled), MBD_OK);
    for (int k = 3; k < 7; k++)
        rates[k] *= 2.5;
    assert_close(rates_scaled, rates, nq, 1e-15, "position rates");
    mbd_work_free(work);
    mbd_model_free(model);
}

/* ---- what these joints refuse ---- */

static void test_refusals(void **state)
{
    (void)state;
    /* a zero quaternion */
    mbd_model *model = load_model("legged:legs=2,dof=2");
    mbd_work *work;
    mbd_work_new(model, mbd_solver_find("bodies"), &work);
    double q[16] = {0}, qd[16] = {0}, out[16];
    assert_int_equal(mbd_forward(model, work, q, qd, NULL, out), MBD_EINVAL);
    assert_int_equal(mbd_position_rates(model, q, qd, out), MBD_EINVAL);
    mbd_neutral_positions(model, q);
    assert_true(q[3] == 1.0 && q[0] == 0.0 && q[4] == 0.0);
    assert_int_equal(mbd_forward(model, work, q, qd, NULL, out), MBD_OK);
    /* coefficients: no Christoffel symbols for body-frame velocities */
    double *H = calloc(4 * 10 * 10, sizeof *H);
    assert_int_equal(mbd_coefficients(model, work, q, qd, H, H + 100, H + 200, H + 300),
                     MBD_EUNSUPPORTED);
    free(H);
    /* loops */
    mbd_loop_def loop = {.name = "foot", .type = MBD_LOOP_SPHERICAL, .body_a = 2, .body_b = -1};
    for (int k = 0; k < 3; k++)
        loop.rotation_a[k][k] = loop.rotation_b[k][k] = 1.0;
    char err[256];
    mbd_model *closed;
    assert_int_equal(rebuild_with_loops(model, 1, &loop, &closed, err, sizeof err),
                     MBD_EUNSUPPORTED);
    assert_null(closed);
    assert_non_null(strstr(err, "\"b1\") has a free joint"));
    mbd_work_free(work);
    mbd_model_free(model);
    /* friction, in a model file */
    expect_model_rejected(
        temp_file_with(
            "{\"name\": \"f\", \"bodies\": [{\"name\": \"ball\", "
            "\"parent\": \"world\", \"joint\": {\"type\": \"spherical\", "
            "\"friction\": {\"coulomb\": 0.2, \"smoothing\": 0.01}}, "
            "\"mass\": 1, \"com\": [0, 0, 0], \"inertia\": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}]}",
            ".json"),
        "joint.friction.coulomb", "0.2");
    expect_model_rejected(temp_file_with("{\"name\": \"f\", \"bodies\": [{\"name\": \"ball\", "
                                         "\"parent\": \"world\", \"joint\": {\"type\": \"free\", "
                                         "\"axis\": [0, 0, 1]}, \"mass\": 1, \"com\": [0, 0, 0], "
                                         "\"inertia\": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}]}",
                                         ".json"),
                          "joint.axis", "takes no axis");
}

/* ---- the command line ---- */

/* A model file with a free torso and a ball-jointed arm; nq-long --q, nv-long --qd; free
 * fall from the neutral pose; CSV names. */
static void test_cli(void **state)
{
    (void)state;
    char path[64], args[128];
    snprintf(
        path, sizeof path, "%s",
        temp_file_with(
            "{\"name\": \"torso-arm\", \"bodies\": ["
            "{\"name\": \"torso\", \"parent\": \"world\", \"joint\": {\"type\": \"free\"}, "
            "\"mass\": 5, \"com\": [0, 0, 0], \"inertia\": [[0.2, 0, 0], [0, 0.3, 0], [0, 0, 0.4]]}, "
            "{\"name\": \"arm\", \"parent\": \"torso\", "
            "\"joint\": {\"type\": \"spherical\", \"origin\": [0.3, 0, 0.1]}, "
            "\"mass\": 1, \"com\": [0.2, 0, 0], \"inertia\": [[0.01, 0, 0], [0, 0.02, 0], [0, 0, 0.02]]}]}",
            ".json"));
    snprintf(args, sizeof args, "info %s", path);
    expect_mbd2(args, 0, "2 bodies, nq 11, nv 9", "spherical (nq 4, nv 3)");
    snprintf(args, sizeof args, "fd %s --solver poisson-sweep --qd 0,0,0,0,0,0,1,0,0", path);
    json_t *momentum = run_json(args);
    assert_int_equal(json_array_size(json_object_get(momentum, "pd")), 9);
    json_decref(momentum);
    unlink(path);
    json_t *fd = run_json("fd chain:n=2,joint=spherical,base=free --solver bodies "
                          "--q 0,0,1,1,0,0,0,1,0,0,0 --qd 0,0,0,0,0,0,0,0,0");
    json_t *qdd = json_object_get(fd, "qdd");
    assert_int_equal(json_array_size(qdd), 9);
    json_decref(fd);
    static const char *const wrong_q[] = {"--q", "expected 11 numbers, got 9", NULL};
    expect_rejected("fd chain:n=2,joint=spherical,base=free --solver bodies --q 0,0,0,0,0,0,0,0,0",
                    wrong_q);
    static const char *const zero_quaternion[] = {"--q", "quaternion", "zero", NULL};
    expect_rejected("fd chain:n=1,joint=spherical --solver dense --q 0,0,0,0", zero_quaternion);
    json_t *free_fall = run_json("fd tree:n=3,base=free --solver dense");
    assert_true(fabs(json_real_value(json_array_get(json_object_get(free_fall, "qdd"), 5)) + 9.81) <
                1e-12);
    json_decref(free_fall);
    json_t *id = run_json("id chain:n=1,joint=spherical --q 1,0,0,0 --qd 1,2,3 --qdd 0,0,0");
    assert_int_equal(json_array_size(json_object_get(id, "tau")), 3);
    json_decref(id);
    cli_result r = mbd_run("simulate legged:legs=1,dof=1 --integrator rk4 --dt 0.01 --t1 0.01 "
                           "--formulation momentum --solver poisson-ldlt");
    assert_int_equal(r.status, 0);
    const char *header = "t,b1.q0,b1.q1,b1.q2,b1.q3,b1.q4,b1.q5,b1.q6,b2.q,b1.qd0,b1.qd1,b1.qd2,"
                         "b1.qd3,b1.qd4,b1.qd5,b2.qd,b1.p0,b1.p1,b1.p2,b1.p3,b1.p4,b1.p5,b2.p,"
                         "kinetic,potential,total\n";
    assert_memory_equal(r.out, header, strlen(header));
    cli_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_free_body_euler),
        cmocka_unit_test(test_spherical_at_rest),
        cmocka_unit_test(test_intermediate_axis_flip),
        cmocka_unit_test(test_symmetric_top),
        cmocka_unit_test(test_conical_pendulum),
        cmocka_unit_test(test_floating_tree_keeps_momentum),
        cmocka_unit_test(test_centre_of_mass_falls_at_g),
        cmocka_unit_test(test_quaternion_scale_invariance),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_cli),
    };
    return cmocka_run_group_tests_name("joints", tests, NULL, NULL);
}
