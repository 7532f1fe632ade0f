/* Closed loops (cut joints, algorithms/loops.c): the four-bar and the slider-crank against
 * their one-degree-of-freedom equations derived here by hand, Phi_q and gamma against
 * finite differences, the two routes against each other, the constraint residual,
 * redundant and inconsistent constraints, O(N) H^-1 b against the dense solve, and the
 * loader's loop errors. */
#include "support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const double g0 = 9.81;
static const char *const routes[] = {"dense", "bodies"};

/* ---- 3x3 helpers ---- */

/* Rotation of angle t about the unit axis a (Rodrigues), row-major. */
static void rotation(double R[3][3], const double a[3], double t)
{
    const double c = cos(t), s = sin(t);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            R[i][j] = (1 - c) * a[i] * a[j] + (i == j ? c : 0.0);
    R[0][1] -= s * a[2], R[0][2] += s * a[1], R[1][0] += s * a[2];
    R[1][2] -= s * a[0], R[2][0] -= s * a[1], R[2][1] += s * a[0];
}

static void apply(double out[3], double R[3][3], const double x[3])
{
    for (int i = 0; i < 3; i++)
        out[i] = R[i][0] * x[0] + R[i][1] * x[1] + R[i][2] * x[2];
}

/* The plane of the linkages: x_world = O + R0 (x, y, 0); its own gravity is -g0 y. */
static const double plane_origin[3] = {0.1, -0.2, 0.3};
static double R0[3][3];

static void plane_point(double out[3], double x, double y)
{
    const double p[3] = {x, y, 0.0};
    apply(out, R0, p);
    for (int k = 0; k < 3; k++)
        out[k] += plane_origin[k];
}

static void setup_plane(void)
{
    const double axis[3] = {1 / sqrt(14.0), 2 / sqrt(14.0), 3 / sqrt(14.0)};
    rotation(R0, axis, 0.7);
}

/* A planar link in the plane: revolute about its frame's z (world R0 z), centre of mass on
 * its x axis at lc, moment Izz about it. */
static void planar_link(mbd_body_def *b, const char *name, int parent, double mass, double lc,
                        double Izz)
{
    memset(b, 0, sizeof *b);
    b->name = name;
    b->parent = parent;
    b->joint = MBD_REVOLUTE;
    b->axes[0][2] = 1.0;
    for (int k = 0; k < 3; k++)
        b->rotation[k][k] = 1.0;
    b->mass = mass;
    b->com[0] = lc;
    b->inertia[0][0] = 0.3 * Izz;
    b->inertia[1][1] = 0.8 * Izz;
    b->inertia[2][2] = Izz;
}

/* A root link: its joint frame at the plane point (x, y), turned into the plane. */
static void place_in_plane(mbd_body_def *b, double x, double y)
{
    plane_point(b->origin, x, y);
    memcpy(b->rotation, R0, sizeof b->rotation);
}

/* Cut-joint frames turned so that the loop's axis (0, 1, 0), given in each frame, is the
 * plane's normal: frame a by Rx(90 deg), frame b by Rx(90 deg) Ry(0.4). */
static void turned_cut_frames(mbd_loop_def *loop)
{
    const double x[3] = {1, 0, 0}, y[3] = {0, 1, 0};
    double Rx[3][3], Ry[3][3];
    rotation(Rx, x, M_PI / 2);
    rotation(Ry, y, 0.4);
    memcpy(loop->rotation_a, Rx, sizeof Rx);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            loop->rotation_b[i][j] = Rx[i][0] * Ry[0][j] + Rx[i][1] * Ry[1][j] + Rx[i][2] * Ry[2][j];
    memcpy(loop->axis, y, sizeof y);
}

static mbd_model *build(const char *name, int nb, const mbd_body_def *defs, int nloops,
                        const mbd_loop_def *loops)
{
    char err[512];
    double gravity[3];
    const double down[3] = {0, -g0, 0};
    apply(gravity, R0, down);
    mbd_model *model = mbd_model_build(name, gravity, nb, defs, err, sizeof err);
    if (!model)
        print_error("%s\n", err);
    assert_non_null(model);
    if (mbd_model_add_loops(model, nloops, loops, err, sizeof err) != MBD_OK)
        print_error("%s\n", err);
    assert_int_equal(mbd_model_nloops(model), nloops);
    return model;
}

/* ---- one-degree-of-freedom equations by hand -------------------------------------
 * With the crank angle th1 the only coordinate, every body's centre-of-mass acceleration
 * and angular acceleration are affine in th1'': a_G = ka th1'' + ha, alpha = kw th1'' + hw,
 * and ka, kw are also d v_G / d th1' and d omega / d th1'. Lagrange's equation (virtual
 * power) is then
 *   sum m ka.(ka th1'' + ha - g) + I kw (kw th1'' + hw) = Q. */
typedef struct {
    double m, I;
    double ka[2], ha[2], kw, hw;
} planar_body;

static double solve_one_dof(const planar_body *bodies, int n, double Q)
{
    double M = 0.0, rhs = Q;
    for (int k = 0; k < n; k++) {
        const planar_body *b = &bodies[k];
        M += b->m * (b->ka[0] * b->ka[0] + b->ka[1] * b->ka[1]) + b->I * b->kw * b->kw;
        rhs -= b->m * (b->ka[0] * b->ha[0] + b->ka[1] * (b->ha[1] + g0)) + b->I * b->kw * b->hw;
    }
    return rhs / M;
}

/* A link turning at th with rate w about a pivot whose acceleration is (kp, hp) in th1'',
 * angular acceleration (kw, hw), centre of mass at distance lc along the link. */
static planar_body link_body(double m, double I, double lc, double th, double w, const double kp[2],
                             const double hp[2], double kw, double hw)
{
    const double e[2] = {cos(th), sin(th)}, p[2] = {-sin(th), cos(th)};
    planar_body b = {.m = m, .I = I, .kw = kw, .hw = hw};
    for (int k = 0; k < 2; k++) {
        b.ka[k] = kp[k] + lc * kw * p[k];
        b.ha[k] = hp[k] + lc * hw * p[k] - lc * w * w * e[k];
    }
    return b;
}

typedef struct {
    double a, b, c, d;      /* crank, coupler, rocker, ground */
    double m[3], lc[3], I[3];
} fourbar;

static const fourbar fb = {0.3, 1.0, 0.8, 0.9, {1.2, 2.0, 1.5}, {0.12, 0.45, 0.35}, {0.02, 0.2, 0.09}};

/* Closure: B at distance b from A = a e(th1) and c from D = (d, 0); the branch above AD. */
static void fourbar_angles(double th1, double th[3])
{
    const double Ax = fb.a * cos(th1), Ay = fb.a * sin(th1), Lx = fb.d - Ax, Ly = -Ay;
    const double L = hypot(Lx, Ly);
    const double beta = acos((fb.b * fb.b + L * L - fb.c * fb.c) / (2 * fb.b * L));
    th[0] = th1;
    th[1] = atan2(Ly, Lx) + beta;
    th[2] = atan2(Ay + fb.b * sin(th[1]), Ax + fb.b * cos(th[1]) - fb.d);
}

/* Velocity closure a w1 p1 + b w2 p2 = c w3 p3 and its derivative, solved by hand:
 * w2 = k2 w1, w3 = k3 w1, alpha2 = k2 alpha1 + h2, alpha3 = k3 alpha1 + h3; alpha1 from
 * Lagrange's equation with joint torques tau (crank, coupler relative, rocker). */
static void fourbar_hand(const double th[3], double w1, const double tau[3], double alpha[3])
{
    const double a = fb.a, b = fb.b, c = fb.c;
    const double s23 = sin(th[1] - th[2]), s32 = -s23;
    const double k2 = -a * sin(th[0] - th[2]) / (b * s23), k3 = a * sin(th[0] - th[1]) / (c * s32);
    const double w2 = k2 * w1, w3 = k3 * w1;
    const double h2 = (-a * w1 * w1 * cos(th[0] - th[2]) - b * w2 * w2 * cos(th[1] - th[2]) + c * w3 * w3) / (b * s23);
    const double h3 = (a * w1 * w1 * cos(th[0] - th[1]) + b * w2 * w2 - c * w3 * w3 * cos(th[2] - th[1])) / (c * s32);
    const double zero[2] = {0, 0}, kA[2] = {-a * sin(th[0]), a * cos(th[0])},
                 hA[2] = {-a * w1 * w1 * cos(th[0]), -a * w1 * w1 * sin(th[0])};
    const planar_body bodies[3] = {
        link_body(fb.m[0], fb.I[0], fb.lc[0], th[0], w1, zero, zero, 1.0, 0.0),
        link_body(fb.m[1], fb.I[1], fb.lc[1], th[1], w2, kA, hA, k2, h2),
        link_body(fb.m[2], fb.I[2], fb.lc[2], th[2], w3, zero, zero, k3, h3),
    };
    const double Q = tau[0] + tau[1] * (k2 - 1.0) + tau[2] * k3;
    alpha[0] = solve_one_dof(bodies, 3, Q);
    alpha[1] = k2 * alpha[0] + h2;
    alpha[2] = k3 * alpha[0] + h3;
}

/* crank (world, at the plane's origin), coupler (on the crank's tip), rocker (world, at
 * (d, 0)); the cut joint joins the coupler's tip to the rocker's. */
static mbd_model *fourbar_model(mbd_loop_type type)
{
    mbd_body_def defs[3];
    planar_link(&defs[0], "crank", -1, fb.m[0], fb.lc[0], fb.I[0]);
    planar_link(&defs[1], "coupler", 0, fb.m[1], fb.lc[1], fb.I[1]);
    planar_link(&defs[2], "rocker", -1, fb.m[2], fb.lc[2], fb.I[2]);
    place_in_plane(&defs[0], 0.0, 0.0);
    defs[1].origin[0] = fb.a;
    place_in_plane(&defs[2], fb.d, 0.0);
    mbd_loop_def loop = {.name = "pin", .type = type, .body_a = 1, .body_b = 2};
    loop.origin_a[0] = fb.b;
    loop.origin_b[0] = fb.c;
    turned_cut_frames(&loop);
    return build("four-bar", 3, defs, 1, &loop);
}

/* q = (th1, th2 - th1, th3) and qd from the closure at crank angle th1, rate w1. */
static void fourbar_state(double th1, double w1, double q[3], double qd[3], double th[3])
{
    fourbar_angles(th1, th);
    const double s23 = sin(th[1] - th[2]);
    const double k2 = -fb.a * sin(th[0] - th[2]) / (fb.b * s23);
    const double k3 = fb.a * sin(th[0] - th[1]) / (fb.c * -s23);
    q[0] = th[0], q[1] = th[1] - th[0], q[2] = th[2];
    qd[0] = w1, qd[1] = (k2 - 1.0) * w1, qd[2] = k3 * w1;
}

static void test_fourbar_against_hand(void **state)
{
    (void)state;
    const mbd_loop_type types[2] = {MBD_LOOP_SPHERICAL, MBD_LOOP_REVOLUTE};
    const double tau[3] = {0.7, -0.2, 0.4};
    for (int t = 0; t < 2; t++) {
        mbd_model *model = fourbar_model(types[t]);
        for (int r = 0; r < 2; r++) {
            mbd_work *work = mbd_work_new(model, mbd_solver_find(routes[r]));
            for (double th1 = -2.5; th1 < 3.0; th1 += 0.9) {
                double q[3], qd[3], th[3], alpha[3], qdd[3], lambda[5];
                fourbar_state(th1, 1.7 - th1, q, qd, th);
                fourbar_hand(th, qd[0], tau, alpha);
                const double expected[3] = {alpha[0], alpha[1] - alpha[0], alpha[2]};
                assert_int_equal(mbd_forward_constrained(model, work, q, qd, tau, NULL, qdd, lambda), MBD_OK);
                assert_close(qdd, expected, 3, 1e-10, routes[r]);
            }
            int rank = -1;
            const double q0[3] = {0.3, 1.1, 2.0};
            assert_int_equal(mbd_constraint_rank(model, work, q0, &rank), MBD_OK);
            assert_int_equal(rank, 2); /* one degree of freedom; the rest is redundant */
            mbd_work_free(work);
        }
        mbd_model_free(model);
    }
}

/* ---- slider-crank ----------------------------------------------------------------- */

static const fourbar sc = {0.25, 0.9, 0.0, 0.1, {1.1, 1.8, 2.5}, {0.1, 0.4, 0.0}, {0.015, 0.15, 0.0}};

/* Closure a sin th1 + b sin th2 = e (the slider's line, e = sc.d), s = a cos th1 + b cos th2;
 * the rod's branch with cos th2 > 0. Rates by hand: w2 = k2 w1, s' = ks w1, alpha2 =
 * k2 alpha1 + h2, s'' = ks alpha1 + hs. */
static void slider_crank_hand(double th1, double w1, const double tau[3], double q[3],
                              double qd[3], double qdd[3])
{
    const double a = sc.a, b = sc.b;
    const double th2 = asin((sc.d - a * sin(th1)) / b), c1 = cos(th1), s1 = sin(th1),
                 c2 = cos(th2), s2 = sin(th2);
    const double k2 = -a * c1 / (b * c2), w2 = k2 * w1;
    const double h2 = (a * w1 * w1 * s1 + b * w2 * w2 * s2) / (b * c2);
    const double ks = -a * s1 - b * k2 * s2, hs = -a * w1 * w1 * c1 - b * h2 * s2 - b * w2 * w2 * c2;
    const double zero[2] = {0, 0}, kA[2] = {-a * s1, a * c1}, hA[2] = {-a * w1 * w1 * c1, -a * w1 * w1 * s1};
    const planar_body bodies[3] = {
        link_body(sc.m[0], sc.I[0], sc.lc[0], th1, w1, zero, zero, 1.0, 0.0),
        link_body(sc.m[1], sc.I[1], sc.lc[1], th2, w2, kA, hA, k2, h2),
        {.m = sc.m[2], .ka = {ks, 0.0}, .ha = {hs, 0.0}},
    };
    const double alpha1 = solve_one_dof(bodies, 3, tau[0] + tau[1] * (k2 - 1.0) + tau[2] * ks);
    q[0] = th1, q[1] = th2 - th1, q[2] = a * c1 + b * c2;
    qd[0] = w1, qd[1] = w2 - w1, qd[2] = ks * w1;
    qdd[0] = alpha1, qdd[1] = k2 * alpha1 + h2 - alpha1, qdd[2] = ks * alpha1 + hs;
}

/* crank, rod on the crank's tip, slider (prismatic along the plane's x on the line y = e);
 * a revolute cut joint pins the rod's tip to the slider. */
static mbd_model *slider_crank_model(void)
{
    mbd_body_def defs[3];
    planar_link(&defs[0], "crank", -1, sc.m[0], sc.lc[0], sc.I[0]);
    planar_link(&defs[1], "rod", 0, sc.m[1], sc.lc[1], sc.I[1]);
    planar_link(&defs[2], "slider", -1, sc.m[2], 0.05, 0.01);
    place_in_plane(&defs[0], 0.0, 0.0);
    defs[1].origin[0] = sc.a;
    place_in_plane(&defs[2], 0.0, sc.d);
    defs[2].joint = MBD_PRISMATIC;
    memcpy(defs[2].axes[0], (const double[3]){1, 0, 0}, 3 * sizeof(double));
    mbd_loop_def loop = {.name = "wrist-pin", .type = MBD_LOOP_REVOLUTE, .body_a = 1, .body_b = 2};
    loop.origin_a[0] = sc.b;
    turned_cut_frames(&loop);
    return build("slider-crank", 3, defs, 1, &loop);
}

static void test_slider_crank_against_hand(void **state)
{
    (void)state;
    mbd_model *model = slider_crank_model();
    const double tau[3] = {-0.5, 0.3, 2.0};
    for (int r = 0; r < 2; r++) {
        mbd_work *work = mbd_work_new(model, mbd_solver_find(routes[r]));
        for (double th1 = -3.0; th1 < 3.0; th1 += 0.7) {
            double q[3], qd[3], expected[3], qdd[3];
            slider_crank_hand(th1, 2.0 + th1, tau, q, qd, expected);
            assert_int_equal(mbd_forward_constrained(model, work, q, qd, tau, NULL, qdd, NULL), MBD_OK);
            assert_close(qdd, expected, 3, 1e-10, routes[r]);
        }
        mbd_work_free(work);
    }
    mbd_model_free(model);
}

int main(void)
{
    setup_plane();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fourbar_against_hand),
        cmocka_unit_test(test_slider_crank_against_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
