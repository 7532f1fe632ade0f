/* Closed loops (cut joints, algorithms/dynamics/loops.c): the four-bar and the slider-crank against
 * their one-degree-of-freedom equations derived here by hand, Phi_q and gamma against
 * finite differences, the two routes against each other, the constraint residual,
 * redundant and inconsistent constraints, O(N) H^-1 b against the dense solve, and the
 * loader's loop errors. */
#include "support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/solvers.h"

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

/* The links' body frames may be turned against their planar frames (x along the link, z
 * the plane's normal) by a constant T, x_planar = T x_body, so that joint axes, offsets,
 * centres of mass, inertias and cut-joint frames all have other coordinates. */
static double T[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};

static void turn_links(int turned)
{
    const double axis[3] = {0.6, 0.0, 0.8};
    double I3[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    if (turned)
        rotation(T, axis, 2.0);
    else
        memcpy(T, I3, sizeof T);
}

/* out = T^T (x, y, z): planar coordinates into body coordinates. */
static void to_body(double out[3], double x, double y, double z)
{
    for (int i = 0; i < 3; i++)
        out[i] = T[0][i] * x + T[1][i] * y + T[2][i] * z;
}

/* out = A B for 3x3 matrices; with transpose_a, A^T B. */
static void mat_mul(double out[3][3], double A[3][3], double B[3][3], int transpose_a)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            out[i][j] = 0.0;
            for (int k = 0; k < 3; k++)
                out[i][j] += (transpose_a ? A[k][i] : A[i][k]) * B[k][j];
        }
}

/* A planar link in the plane: revolute about the plane's normal, centre of mass on the
 * link at lc, moments 0.3, 0.8 and 1 times Izz about the link, its normal in the plane and
 * the plane's normal. A child's joint frame sits at planar_offset(); same T, so no turn. */
static void planar_link(mbd_body_def *b, const char *name, int parent, double mass, double lc,
                        double Izz)
{
    memset(b, 0, sizeof *b);
    b->name = name;
    b->parent = parent;
    b->joint = MBD_REVOLUTE;
    to_body(b->axes[0], 0, 0, 1);
    for (int k = 0; k < 3; k++)
        b->rotation[k][k] = 1.0;
    b->mass = mass;
    to_body(b->com, lc, 0, 0);
    double D[3][3] = {{0.3 * Izz, 0, 0}, {0, 0.8 * Izz, 0}, {0, 0, Izz}}, DT[3][3];
    mat_mul(DT, D, T, 0);
    mat_mul(b->inertia, T, DT, 1); /* T^T D T */
}

/* A child's joint frame at planar (x, 0) of its parent link. */
static void planar_offset(mbd_body_def *b, double x) { to_body(b->origin, x, 0, 0); }

/* A root link: its joint frame at the plane point (x, y), turned into the plane (R0 T). */
static void place_in_plane(mbd_body_def *b, double x, double y)
{
    plane_point(b->origin, x, y);
    mat_mul(b->rotation, R0, T, 0);
}

/* Cut-joint frames turned so that the loop's axis (0, 1, 0), given in each frame, is the
 * plane's normal: frame a by Rx(90 deg), frame b by Rx(90 deg) Ry(0.4) against the planar
 * frames of their links. */
static void turned_cut_frames(mbd_loop_def *loop)
{
    const double x[3] = {1, 0, 0}, y[3] = {0, 1, 0};
    double Rx[3][3], Ry[3][3], RxRy[3][3];
    rotation(Rx, x, M_PI / 2);
    rotation(Ry, y, 0.4);
    mat_mul(RxRy, Rx, Ry, 0);
    mat_mul(loop->rotation_a, T, Rx, 1);
    mat_mul(loop->rotation_b, T, RxRy, 1);
    memcpy(loop->axis, y, sizeof y);
}

static mbd_model *build(const char *name, int nb, const mbd_body_def *defs, int nloops,
                        const mbd_loop_def *loops)
{
    char err[512];
    double gravity[3];
    const double down[3] = {0, -g0, 0};
    apply(gravity, R0, down);
    mbd_model_def def = {
        .name = name, .nbodies = nb, .bodies = defs, .nloops = nloops, .loops = loops};
    memcpy(def.gravity, gravity, sizeof def.gravity);
    mbd_model *model; /* the loops closed in the one call */
    const int status = mbd_model_build(&def, &model, err, sizeof err);
    if (status != MBD_OK)
        print_error("%s\n", err);
    assert_int_equal(status, MBD_OK);
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
    double a, b, c, d; /* crank, coupler, rocker, ground */
    double m[3], lc[3], I[3];
} fourbar;

static const fourbar fb = {
    0.3, 1.0, 0.8, 0.9, {1.2, 2.0, 1.5}, {0.12, 0.45, 0.35}, {0.02, 0.2, 0.09}};

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
    const double h2 =
        (-a * w1 * w1 * cos(th[0] - th[2]) - b * w2 * w2 * cos(th[1] - th[2]) + c * w3 * w3) /
        (b * s23);
    const double h3 =
        (a * w1 * w1 * cos(th[0] - th[1]) + b * w2 * w2 - c * w3 * w3 * cos(th[2] - th[1])) /
        (c * s32);
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
    planar_offset(&defs[1], fb.a);
    place_in_plane(&defs[2], fb.d, 0.0);
    mbd_loop_def loop = {.name = "pin", .type = type, .body_a = 1, .body_b = 2};
    to_body(loop.origin_a, fb.b, 0, 0);
    to_body(loop.origin_b, fb.c, 0, 0);
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
    for (int t = 0; t < 4; t++) {
        turn_links(t >= 2);
        mbd_model *model = fourbar_model(types[t % 2]);
        for (int r = 0; r < 2; r++) {
            mbd_work *work;
            mbd_work_new(model, mbd_solver_find(routes[r]), &work);
            for (double th1 = -2.5; th1 < 3.0; th1 += 0.9) {
                double q[3], qd[3], th[3], alpha[3], qdd[3], lambda[5];
                fourbar_state(th1, 1.7 - th1, q, qd, th);
                fourbar_hand(th, qd[0], tau, alpha);
                const double expected[3] = {alpha[0], alpha[1] - alpha[0], alpha[2]};
                assert_int_equal(
                    mbd_forward_constrained(model, work, q, qd, tau, NULL, qdd, lambda), MBD_OK);
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
    turn_links(0);
}

/* ---- slider-crank ----------------------------------------------------------------- */

static const fourbar sc = {
    0.25, 0.9, 0.0, 0.1, {1.1, 1.8, 2.5}, {0.1, 0.4, 0.0}, {0.015, 0.15, 0.0}};

/* Closure a sin th1 + b sin th2 = e (the slider's line, e = sc.d), s = a cos th1 + b cos th2;
 * the rod's branch with cos th2 > 0. Rates by hand: w2 = k2 w1, s' = ks w1, alpha2 =
 * k2 alpha1 + h2, s'' = ks alpha1 + hs. */
static void slider_crank_hand(double th1, double w1, const double tau[3], double q[3], double qd[3],
                              double qdd[3])
{
    const double a = sc.a, b = sc.b;
    const double th2 = asin((sc.d - a * sin(th1)) / b), c1 = cos(th1), s1 = sin(th1), c2 = cos(th2),
                 s2 = sin(th2);
    const double k2 = -a * c1 / (b * c2), w2 = k2 * w1;
    const double h2 = (a * w1 * w1 * s1 + b * w2 * w2 * s2) / (b * c2);
    const double ks = -a * s1 - b * k2 * s2,
                 hs = -a * w1 * w1 * c1 - b * h2 * s2 - b * w2 * w2 * c2;
    const double zero[2] = {0, 0}, kA[2] = {-a * s1, a * c1},
                 hA[2] = {-a * w1 * w1 * c1, -a * w1 * w1 * s1};
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
    planar_offset(&defs[1], sc.a);
    place_in_plane(&defs[2], 0.0, sc.d);
    defs[2].joint = MBD_PRISMATIC;
    to_body(defs[2].axes[0], 1, 0, 0);
    mbd_loop_def loop = {.name = "wrist-pin", .type = MBD_LOOP_REVOLUTE, .body_a = 1, .body_b = 2};
    to_body(loop.origin_a, sc.b, 0, 0);
    turned_cut_frames(&loop);
    return build("slider-crank", 3, defs, 1, &loop);
}

static void test_slider_crank_against_hand(void **state)
{
    (void)state;
    const double tau[3] = {-0.5, 0.3, 2.0};
    for (int r = 0; r < 4; r++) {
        turn_links(r >= 2);
        mbd_model *model = slider_crank_model();
        mbd_work *work;
        mbd_work_new(model, mbd_solver_find(routes[r % 2]), &work);
        for (double th1 = -3.0; th1 < 3.0; th1 += 0.7) {
            double q[3], qd[3], expected[3], qdd[3];
            slider_crank_hand(th1, 2.0 + th1, tau, q, qd, expected);
            assert_int_equal(mbd_forward_constrained(model, work, q, qd, tau, NULL, qdd, NULL),
                             MBD_OK);
            assert_close(qdd, expected, 3, 1e-10, routes[r % 2]);
        }
        mbd_work_free(work);
        mbd_model_free(model);
    }
    turn_links(0);
}

/* ---- random 3-D models with loops ------------------------------------------------ */

/* World pose of every body at q = 0 from the descriptions (the user's frames): there the
 * body frame is the joint frame. */
static void poses_at_zero(const mbd_model *model, double (*R)[3][3], double (*p)[3])
{
    for (int i = 0; i < mbd_model_nbodies(model); i++) {
        const mbd_body_def *b = mbd_model_body(model, i);
        double Rp[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, pp[3] = {0, 0, 0}, t[3];
        if (b->parent >= 0) {
            memcpy(Rp, R[b->parent], sizeof Rp);
            memcpy(pp, p[b->parent], sizeof pp);
        }
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                R[i][r][c] = Rp[r][0] * b->rotation[0][c] + Rp[r][1] * b->rotation[1][c] +
                             Rp[r][2] * b->rotation[2][c];
        apply(t, Rp, b->origin);
        for (int k = 0; k < 3; k++)
            p[i][k] = pp[k] + t[k];
    }
}

/* A frame fixed in body (-1: world) that sits at the world point P with axes F at q = 0. */
static void frame_at(const double (*R)[3][3], const double (*p)[3], int body, const double P[3],
                     double F[3][3], double origin[3], double rotation[3][3])
{
    static const double I3[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    const double(*Rb)[3] = body < 0 ? I3 : R[body];
    for (int r = 0; r < 3; r++) {
        origin[r] = 0.0;
        for (int k = 0; k < 3; k++) {
            origin[r] += Rb[k][r] * (P[k] - (body < 0 ? 0.0 : p[body][k]));
            rotation[r][k] = Rb[0][r] * F[0][k] + Rb[1][r] * F[1][k] + Rb[2][r] * F[2][k];
        }
    }
}

/* random_model(seed, a chain of 20 bodies, mixed joints) closed by a spherical joint from
 * its tip to the world, a revolute and a weld joint across segments of 5 and 6 joints
 * (14 independent equations); consistent at q = 0. */
static mbd_model *random_loop_model(uint64_t seed)
{
    mbd_model *model = random_model(seed, 20, MIXED_COORDINATE_JOINTS, SHAPE_CHAIN);
    static const mbd_loop_type types[3] = {MBD_LOOP_SPHERICAL, MBD_LOOP_REVOLUTE, MBD_LOOP_WELD};
    static const int ends[3][2] = {{19, -1}, {12, 7}, {6, 0}};
    static const char *names[3] = {"ball", "hinge", "weld"};
    double R[20][3][3], p[20][3];
    poses_at_zero(model, R, p);
    uint64_t s = seed + 7;
    mbd_loop_def loops[3];
    memset(loops, 0, sizeof loops);
    for (int l = 0; l < 3; l++) {
        double P[3], axis[3], F[3][3];
        test_fill(&s, P, 3, -0.5, 0.5);
        test_fill(&s, axis, 3, -1.0, 1.0);
        const double norm = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
        for (int k = 0; k < 3; k++)
            axis[k] /= norm;
        rotation(F, axis, test_uniform(&s, -3.0, 3.0));
        loops[l] = (mbd_loop_def){
            .name = names[l], .type = types[l], .body_a = ends[l][0], .body_b = ends[l][1]};
        frame_at((const double(*)[3][3])R, (const double(*)[3])p, ends[l][0], P, F,
                 loops[l].origin_a, loops[l].rotation_a);
        frame_at((const double(*)[3][3])R, (const double(*)[3])p, ends[l][1], P, F,
                 loops[l].origin_b, loops[l].rotation_b);
        test_fill(&s, loops[l].axis, 3, -1.0, 1.0);
    }
    char err[512];
    mbd_model *closed;
    if (rebuild_with_loops(model, 3, loops, &closed, err, sizeof err) != MBD_OK)
        print_error("%s\n", err);
    mbd_model_free(model);
    assert_int_equal(mbd_model_nconstraints(closed), 14);
    return closed;
}

/* A random state near q = 0 projected onto Phi = 0, Phi_q qd = 0. */
static void consistent_state(const mbd_model *model, mbd_work *work, uint64_t seed, double *q,
                             double *qd)
{
    const int n = mbd_model_nv(model);
    uint64_t s = seed;
    test_fill(&s, q, n, -0.15, 0.15);
    test_fill(&s, qd, n, -1.0, 1.0);
    assert_int_equal(mbd_project_constraints(model, work, q, qd, 1e-13), MBD_OK);
}

static double norm2(const double *x, int n)
{
    double t = 0.0;
    for (int k = 0; k < n; k++)
        t += x[k] * x[k];
    return sqrt(t);
}

/* Phi_q by central differences of Phi; gamma = -d/dt (Phi_q qd) along q(t) = q + t qd. */
static void test_jacobian_and_gamma_by_differences(void **state)
{
    (void)state;
    mbd_model *model = random_loop_model(3);
    const int n = mbd_model_nv(model), m = mbd_model_nconstraints(model);
    mbd_work *work;
    mbd_work_new(model, NULL, &work);
    double *q = calloc((size_t)(6 * n + 6 * m + m * n), sizeof *q);
    double *qd = q + n, *qp = qd + n, *qm = qp + n, *phip = qm + n, *phim = phip + m,
           *dp = phim + m, *dm = dp + m, *gamma = dm + m, *fd = gamma + m, *J = fd + m,
           *col = J + (size_t)m * n;
    uint64_t s = 11;
    test_fill(&s, q, n, -1.0, 1.0); /* anywhere: the identities hold off the manifold too */
    test_fill(&s, qd, n, -1.0, 1.0);
    assert_int_equal(mbd_constraint_jacobian(model, work, q, qd, J, gamma), MBD_OK);
    const double h = 1e-6;
    for (int j = 0; j < n; j++) {
        memcpy(qp, q, (size_t)n * sizeof *q);
        memcpy(qm, q, (size_t)n * sizeof *q);
        qp[j] += h, qm[j] -= h;
        assert_int_equal(mbd_constraint_violation(model, work, qp, NULL, phip, NULL), MBD_OK);
        assert_int_equal(mbd_constraint_violation(model, work, qm, NULL, phim, NULL), MBD_OK);
        for (int r = 0; r < m; r++) {
            fd[r] = (phip[r] - phim[r]) / (2 * h);
            col[r] = J[(size_t)r * n + j];
        }
        assert_close(col, fd, m, 1e-8, "Phi_q column");
    }
    for (int k = 0; k < n; k++)
        qp[k] = q[k] + h * qd[k], qm[k] = q[k] - h * qd[k];
    assert_int_equal(mbd_constraint_violation(model, work, qp, qd, phip, dp), MBD_OK);
    assert_int_equal(mbd_constraint_violation(model, work, qm, qd, phim, dm), MBD_OK);
    for (int r = 0; r < m; r++)
        fd[r] = -(dp[r] - dm[r]) / (2 * h);
    assert_close(gamma, fd, m, 1e-7, "gamma");
    free(q);
    mbd_work_free(work);
    mbd_model_free(model);
}

/* Both routes agree; Phi_q qdd = gamma - 2 alpha dPhi - beta^2 Phi on and off the manifold. */
static void test_routes_agree_and_residual(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        mbd_model *model = random_loop_model(seed);
        const int n = mbd_model_nv(model), m = mbd_model_nconstraints(model);
        mbd_work *work[2];
        mbd_work_new(model, mbd_solver_find(routes[0]), &work[0]);
        mbd_work_new(model, mbd_solver_find(routes[1]), &work[1]);
        double *q = calloc((size_t)(6 * n + 6 * m + m * n), sizeof *q);
        double *qd = q + n, *tau = qd + n, *qdd[2] = {tau + n, tau + 2 * n},
               *lambda[2] = {tau + 3 * n, tau + 3 * n + m}, *phi = lambda[1] + m, *phid = phi + m,
               *gamma = phid + m, *res = gamma + m, *J = res + m;
        uint64_t s = seed;
        test_fill(&s, tau, n, -2.0, 2.0);
        for (int off = 0; off < 2; off++) {
            consistent_state(model, work[0], seed, q, qd);
            if (off) /* off the manifold: Baumgarte's terms pull back */
                for (int k = 0; k < n; k++)
                    q[k] += 0.01 * sin(k + 1.0), qd[k] += 0.05 * cos(k + 1.0);
            const mbd_baumgarte stab = {off ? 5.0 : 0.0, off ? 7.0 : 0.0};
            int rank = -1;
            assert_int_equal(mbd_constraint_rank(model, work[0], q, &rank), MBD_OK);
            assert_int_equal(rank, m); /* independent: off the manifold too, a solution exists */
            for (int r = 0; r < 2; r++)
                assert_int_equal(
                    mbd_forward_constrained(model, work[r], q, qd, tau, &stab, qdd[r], lambda[r]),
                    MBD_OK);
            assert_close(qdd[1], qdd[0], n, 1e-10, "qdd, bodies vs dense");
            assert_close(lambda[1], lambda[0], m, 1e-10, "lambda, bodies vs dense");
            assert_int_equal(mbd_constraint_jacobian(model, work[0], q, qd, J, gamma), MBD_OK);
            assert_int_equal(mbd_constraint_violation(model, work[0], q, qd, phi, phid), MBD_OK);
            for (int r = 0; r < m; r++) {
                res[r] = -(gamma[r] - 2 * stab.alpha * phid[r] - stab.beta * stab.beta * phi[r]);
                for (int j = 0; j < n; j++)
                    res[r] += J[(size_t)r * n + j] * qdd[0][j];
            }
            const double scale = norm2(J, m * n) * norm2(qdd[0], n) + norm2(gamma, m);
            if (!(norm2(res, m) <= 1e-12 * scale))
                fail_msg("seed %d: residual %.3g > 1e-12 x %.3g", (int)seed, norm2(res, m), scale);
        }
        free(q);
        mbd_work_free(work[0]);
        mbd_work_free(work[1]);
        mbd_model_free(model);
    }
}

/* Every built-in solver's inverse after a forward call in its first form: H x = b with H
 * from CRBA (the loops' O(N) route takes Y = H^-1 Phi_q^T from the bodies sweep's). */
static void check_solver_inverses(mbd_model *model)
{
    const int n = mbd_model_nv(model);
    double *q = calloc((size_t)(6 * n + n * n), sizeof *q);
    double *qd = q + n, *b = qd + n, *x = b + n, *Hx = x + n, *pd = Hx + n, *H = pd + n;
    uint64_t s = 5;
    test_fill(&s, q, n, -2.0, 2.0);
    test_fill(&s, qd, n, -2.0, 2.0);
    test_fill(&s, b, n, -1.0, 1.0);
    mbd_work *other;
    mbd_work_new(model, NULL, &other);
    assert_int_equal(mbd_mass_matrix(model, other, q, H), MBD_OK);
    for (int k = 0; k < mbd_solver_count(); k++) {
        const mbd_solver *solver = mbd_solver_at(k);
        if (!solver->inverse)
            continue;
        mbd_work *work;
        mbd_work_new(model, solver, &work);
        assert_int_equal(solver->forms & MBD_ACCELERATION
                             ? mbd_forward(model, work, q, qd, NULL, x)
                             : mbd_forward_momentum(model, work, q, qd, NULL, x, pd),
                         MBD_OK);
        solver->inverse(model, work, b, x, NULL);
        for (int r = 0; r < n; r++) {
            Hx[r] = 0.0;
            for (int c = 0; c < n; c++)
                Hx[r] += H[(size_t)r * n + c] * x[c];
        }
        assert_close(Hx, b, n, 1e-12, solver->name);
        mbd_work_free(work);
    }
    free(q);
    mbd_work_free(other);
    mbd_model_free(model);
}

/* Mixed joints; a floating base, whose root block the bodies sweep keeps as a factor; a
 * free body on its own, whose D^-1 is the model's. */
static void test_solver_inverses(void **state)
{
    (void)state;
    check_solver_inverses(random_model(5, 30, MIXED_COORDINATE_JOINTS, SHAPE_RANDOM));
    check_solver_inverses(load_model("tree:n=12,branching=2,skew=0.5,base=free"));
    check_solver_inverses(load_model("tree:n=1,branching=2,skew=0.5,base=free"));
}

/* A pendulum whose tip is also pinned to the world: locked. At rest the pin carries the
 * weight; moving, the centripetal acceleration it would need is not in range(Phi_q). */
static void test_inconsistent_constraints(void **state)
{
    (void)state;
    mbd_body_def rod;
    planar_link(&rod, "rod", -1, 2.0, 0.5, 0.1);
    place_in_plane(&rod, 0.0, 0.0);
    mbd_loop_def pin = {.name = "tip", .type = MBD_LOOP_SPHERICAL, .body_a = 0, .body_b = -1};
    pin.origin_a[0] = 1.0;
    plane_point(pin.origin_b, 1.0, 0.0);
    for (int k = 0; k < 3; k++)
        pin.rotation_a[k][k] = pin.rotation_b[k][k] = 1.0;
    mbd_model *model = build("pinned", 1, &rod, 1, &pin);
    for (int r = 0; r < 2; r++) {
        mbd_work *work;
        mbd_work_new(model, mbd_solver_find(routes[r]), &work);
        const double q = 0.0, still = 0.0, moving = 1.0;
        double qdd = 1.0, lambda[3], wrench[6], f[3];
        assert_int_equal(mbd_forward_constrained(model, work, &q, &still, NULL, NULL, &qdd, lambda),
                         MBD_OK);
        assert_true(fabs(qdd) < 1e-14);
        /* the pin holds the moment of the weight about the joint: f_y l = m g lc */
        assert_int_equal(mbd_loop_wrenches(model, work, &q, lambda, wrench), MBD_OK);
        const double up[3] = {0, 2.0 * g0 * 0.5 / 1.0, 0};
        memcpy(f, wrench + 3, sizeof f);
        assert_close(f, up, 3, 1e-12, "pin force in frame a (the rod's axes at q = 0)");
        assert_int_equal(mbd_forward_constrained(model, work, &q, &moving, NULL, NULL, &qdd, NULL),
                         MBD_EINCONSISTENT);
        mbd_work_free(work);
    }
    mbd_model_free(model);
}

/* Solvers without a constrained route refuse; a model without loops gives mbd_forward. */
static void test_unsupported_and_tree(void **state)
{
    (void)state;
    mbd_model *model = fourbar_model(MBD_LOOP_SPHERICAL);
    mbd_work *work;
    mbd_work_new(model, mbd_solver_find("poisson-ldlt"), &work);
    double q[3] = {0}, qdd[3];
    assert_int_equal(mbd_forward_constrained(model, work, q, q, NULL, NULL, qdd, NULL),
                     MBD_EUNSUPPORTED);
    mbd_work_free(work);
    mbd_model_free(model);
    model = random_model(2, 6, MIXED_COORDINATE_JOINTS, SHAPE_CHAIN);
    const int n = mbd_model_nv(model);
    double x[3][12];
    uint64_t s = 2;
    test_fill(&s, x[0], n, -1.0, 1.0);
    mbd_work_new(model, mbd_solver_find("bodies"), &work);
    assert_int_equal(mbd_forward_constrained(model, work, x[0], x[0], NULL, NULL, x[1], NULL),
                     MBD_OK);
    assert_int_equal(mbd_forward(model, work, x[0], x[0], NULL, x[2]), MBD_OK);
    assert_close(x[1], x[2], n, 0.0, "tree qdd");
    mbd_work_free(work);
    mbd_model_free(model);
}

/* ladder:n=12,k=3: 24 rail rods and 4 rungs, closed at q = 0, 2 independent equations per
 * rung; both routes agree on it. */
static void test_ladder_generator(void **state)
{
    (void)state;
    mbd_model *model = load_model("ladder:n=12,k=3");
    assert_int_equal(mbd_model_nbodies(model), 28);
    assert_int_equal(mbd_model_nloops(model), 4);
    assert_int_equal(mbd_model_nconstraints(model), 20);
    mbd_work *work[2];
    mbd_work_new(model, mbd_solver_find(routes[0]), &work[0]);
    mbd_work_new(model, mbd_solver_find(routes[1]), &work[1]);
    double q[28] = {0}, qd[28], phi[20], qdd[2][28];
    int rank = -1;
    assert_int_equal(mbd_constraint_violation(model, work[0], q, NULL, phi, NULL), MBD_OK);
    assert_true(norm2(phi, 20) < 1e-15);
    assert_int_equal(mbd_constraint_rank(model, work[0], q, &rank), MBD_OK);
    assert_int_equal(rank, 8);
    consistent_state(model, work[0], 9, q, qd);
    for (int r = 0; r < 2; r++)
        assert_int_equal(mbd_forward_constrained(model, work[r], q, qd, NULL, NULL, qdd[r], NULL),
                         MBD_OK);
    assert_close(qdd[1], qdd[0], 28, 1e-10, "ladder qdd, bodies vs dense");
    mbd_work_free(work[0]);
    mbd_work_free(work[1]);
    mbd_model_free(model);
}

/* ---- integration ------------------------------------------------------------------ */

/* The four-bar over 10 s from a consistent state: with alpha = beta = 0 the constraint
 * forces do no work, so the energy keeps to the integrator's tolerance; Baumgarte's terms
 * hold |Phi| far below its unstabilized drift, compared at a tolerance loose enough that
 * the drift stands well above round-off (at 1e-10 both are ~1e-9 and their ratio is
 * round-off's). Both routes. */
static void test_simulate_energy_and_drift(void **state)
{
    (void)state;
    mbd_model *model = fourbar_model(MBD_LOOP_SPHERICAL);
    double q[3], qd[3], th[3];
    fourbar_state(0.4, 3.0, q, qd, th);
    for (int r = 0; r < 2; r++) {
        mbd_sim_options opt = {.formulation = MBD_ACCELERATION,
                               .integrator = MBD_DOPRI5,
                               .t1 = 10.0,
                               .rtol = 1e-10,
                               .atol = 1e-12,
                               .sample = 0.1};
        mbd_sim_stats tight, free_run, stabilized;
        const mbd_solver *solver = mbd_solver_find(routes[r]);
        assert_int_equal(mbd_simulate(model, solver, &opt, q, qd, NULL, NULL, &tight), MBD_OK);
        opt.rtol = 1e-6;
        opt.atol = 1e-8;
        assert_int_equal(mbd_simulate(model, solver, &opt, q, qd, NULL, NULL, &free_run), MBD_OK);
        opt.baumgarte = (mbd_baumgarte){10.0, 10.0};
        assert_int_equal(mbd_simulate(model, solver, &opt, q, qd, NULL, NULL, &stabilized), MBD_OK);
        if (!(tight.energy_drift < 1e-8) ||
            !(stabilized.max_phi_norm < 0.1 * free_run.max_phi_norm) ||
            !(free_run.max_phi_norm > 0.0))
            fail_msg("%s: energy drift %.3g; max |Phi| at rtol 1e-6 %.3g free, %.3g stabilized",
                     routes[r], tight.energy_drift, free_run.max_phi_norm, stabilized.max_phi_norm);
    }
    mbd_sim_options momentum = {
        .formulation = MBD_MOMENTUM, .integrator = MBD_RK4, .t1 = 1.0, .dt = 0.01};
    assert_int_equal(
        mbd_simulate(model, mbd_solver_find("dense"), &momentum, q, qd, NULL, NULL, NULL),
        MBD_EUNSUPPORTED);
    mbd_model_free(model);
}

/* Gauss-Newton lands on Phi = 0, Phi_q qd = 0 from a perturbed state. */
static void test_projection(void **state)
{
    (void)state;
    mbd_model *model = slider_crank_model();
    mbd_work *work;
    mbd_work_new(model, NULL, &work);
    double q[3] = {0.5, 0.3, 0.4}, qd[3] = {1.0, -2.0, 0.5}, phi[5], phid[5];
    assert_int_equal(mbd_project_constraints(model, work, q, qd, 1e-13), MBD_OK);
    assert_int_equal(mbd_constraint_violation(model, work, q, qd, phi, phid), MBD_OK);
    assert_true(norm2(phi, 5) <= 1e-13 && norm2(phid, 5) <= 1e-12);
    double hq[3], hqd[3], hqdd[3];
    const double zero[3] = {0};
    slider_crank_hand(q[0], qd[0], zero, hq, hqd, hqdd);
    assert_close(q, hq, 3, 1e-12, "projected q on the hand's closure");
    assert_close(qd, hqd, 3, 1e-12, "projected qd on the hand's closure");
    mbd_work_free(work);
    mbd_model_free(model);
}

/* ---- the command line and the loader ------------------------------------------------ */

static void test_cli_fd(void **state)
{
    (void)state;
    cli_result r = mbd_run(
        "fd models/four-bar.json --solver bodies --q 0.1,-0.2,0.05 --qd 1,0,0 --baumgarte 3,4");
    assert_int_equal(r.status, 0);
    mbd_model *model = load_model("models/four-bar.json");
    mbd_work *work;
    mbd_work_new(model, mbd_solver_find("bodies"), &work);
    const double q[3] = {0.1, -0.2, 0.05}, qd[3] = {1, 0, 0};
    const mbd_baumgarte stab = {3, 4};
    double qdd[3], lambda[5], wrench[6];
    assert_int_equal(mbd_forward_constrained(model, work, q, qd, NULL, &stab, qdd, lambda), MBD_OK);
    assert_int_equal(mbd_loop_wrenches(model, work, q, lambda, wrench), MBD_OK);
    char expected[1024];
    int used = snprintf(expected, sizeof expected, "{\"qdd\": [%.17g, %.17g, %.17g], \"lambda\": [",
                        qdd[0], qdd[1], qdd[2]);
    for (int k = 0; k < 5; k++)
        used +=
            snprintf(expected + used, sizeof expected - used, "%s%.17g", k ? ", " : "", lambda[k]);
    used += snprintf(expected + used, sizeof expected - used,
                     "], \"loops\": [{\"name\": \"coupler-rocker\", \"wrench\": [");
    for (int k = 0; k < 6; k++)
        used +=
            snprintf(expected + used, sizeof expected - used, "%s%.17g", k ? ", " : "", wrench[k]);
    snprintf(expected + used, sizeof expected - used, "]}]}\n");
    assert_string_equal(r.out, expected);
    cli_result_free(&r);
    mbd_work_free(work);
    mbd_model_free(model);
    expect_rejected("fd models/four-bar.json --solver poisson-ldlt",
                    (const char *const[]){"poisson-ldlt", "loops", "bodies", NULL});
    expect_rejected("fd models/four-bar.json --baumgarte 1,-2",
                    (const char *const[]){"--baumgarte", "1,-2", NULL});
    expect_rejected("fd models/double-pendulum.json --baumgarte 1,2",
                    (const char *const[]){"--baumgarte", "no loops", NULL});
}

static void test_cli_simulate_and_info(void **state)
{
    (void)state;
    expect_rejected(
        "simulate models/slider-crank.json --integrator rk4 --dt 0.01 --t1 0.1 --q0 0.1,0,0",
        (const char *const[]){"--q0", "violates", "--project-initial", NULL});
    expect_rejected(
        "simulate models/slider-crank.json --integrator rk4 --dt 0.01 --t1 0.1 --formulation momentum",
        (const char *const[]){"--formulation", "acceleration", NULL});
    cli_result r = mbd_run(
        "simulate models/slider-crank.json --integrator rk4 --dt 0.001 --t1 0.5 --sample 0.5 "
        "--q0 0.1,0,0 --qd0 1,1,1 --project-initial --solver bodies");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, ",total,phi_norm,phid_norm\n"));
    const char *last = strrchr(strstr(r.out, "\n0.5,"), ',');
    assert_true(atof(last + 1) < 1e-6); /* |dPhi/dt| at t = 0.5, stabilized */
    cli_result_free(&r);
    r = mbd_run("info models/five-bar.json");
    assert_int_equal(r.status, 0);
    assert_non_null(
        strstr(r.out, "1 loops, 5 constraint equations; at q = 0 Phi_q has rank 2: 2 DOF"));
    assert_non_null(strstr(r.out, "end-effector revolute  left-distal - right-distal"));
    cli_result_free(&r);
}

/* A valid four-bar file whose loop is LOOP. */
static const char *fourbar_with_loop(const char *loop)
{
    char *text = read_text_file("models/four-bar.json");
    char *loops = strstr(text, "\"loops\"");
    assert_non_null(loops);
    static char out[8192];
    snprintf(out, sizeof out, "%.*s\"loops\": [%s]}\n", (int)(loops - text), text, loop);
    free(text);
    return temp_file_with(out, ".json");
}

static void expect_loop_rejected(const char *loop, const char *field, const char *value)
{
    expect_model_rejected(fourbar_with_loop(loop), field, value);
}

static void test_loader_errors(void **state)
{
    (void)state;
    expect_loop_rejected(
        "{\"name\": \"x\", \"type\": \"spherical\", \"body_a\": \"nope\", \"body_b\": \"rocker\"}",
        "loops[0] (\"x\").body_a", "\"nope\"");
    expect_loop_rejected(
        "{\"name\": \"x\", \"type\": \"spherical\", \"body_a\": \"world\", \"body_b\": \"rocker\"}",
        "loops[0] (\"x\").body_a", "\"world\"");
    expect_loop_rejected(
        "{\"name\": \"x\", \"type\": \"revolute\", \"body_a\": \"coupler\", \"body_b\": \"rocker\", \"axis\": [0, 0, 0]}",
        "loops[0] (\"x\").axis", "[0, 0, 0]");
    expect_loop_rejected(
        "{\"name\": \"x\", \"type\": \"weld\", \"body_a\": \"rocker\", \"body_b\": \"rocker\"}",
        "loops[0] (\"x\").body_b", "on itself");
    expect_loop_rejected(
        "{\"name\": \"x\", \"type\": \"hinge\", \"body_a\": \"coupler\", \"body_b\": \"rocker\"}",
        "loops[0] (\"x\").type", "\"hinge\"");
    expect_loop_rejected(
        "{\"name\": \"x\", \"type\": \"spherical\", \"body_a\": \"coupler\", \"body_b\": \"rocker\", \"axis\": [0, 0, 1]}",
        "loops[0] (\"x\").axis", "only a revolute");
    expect_loop_rejected(
        "{\"name\": \"x\", \"type\": \"spherical\", \"body_a\": \"coupler\", \"body_b\": \"rocker\", \"origin_a\": [0, \"a\", 0]}",
        "loops[0] (\"x\").origin_a", "[0,\"a\",0]");
    expect_loop_rejected(
        "{\"name\": \"x\", \"type\": \"spherical\", \"body_a\": \"coupler\", \"body_b\": \"rocker\", \"rotation_b\": [[1, 0, 0], [0, 1, 0], [0, 0, -1]]}",
        "loops[0] (\"x\").rotation_b", "reflection");
    expect_loop_rejected(
        "{\"name\": \"x\", \"type\": \"spherical\", \"body_a\": \"coupler\", \"body_b\": \"rocker\", \"colour\": 1}",
        "loops[0] (\"x\").colour", "unknown field");
    expect_loop_rejected(
        "{\"name\": \"x\", \"type\": \"spherical\", \"body_a\": \"coupler\", \"body_b\": \"world\"}, "
        "{\"name\": \"x\", \"type\": \"spherical\", \"body_a\": \"rocker\", \"body_b\": \"world\"}",
        "loops[1] (\"x\").name", "duplicate");
    expect_loop_rejected(
        "{\"type\": \"spherical\", \"body_a\": \"coupler\", \"body_b\": \"rocker\"}",
        "loops[0].name", "missing");
    /* The constrained solve has no friction: a loop model with it is refused, not solved
     * without it. */
    char *text = read_text_file("models/four-bar.json");
    char *type = strstr(text, "\"type\": \"revolute\"");
    assert_non_null(type);
    static char with_friction[8192];
    snprintf(with_friction, sizeof with_friction, "%.*s\"friction\": {\"viscous\": 0.1}, %s",
             (int)(type - text), text, type);
    free(text);
    expect_model_rejected(temp_file_with(with_friction, ".json"), "loops", "friction");
}

/* mbd_model_build closes the loops in the one call, and refuses them on a tree with
 * friction with add_loops' status and message; a failed build leaves no model. */
static void test_build_with_loops(void **state)
{
    (void)state;
    mbd_model *model = fourbar_model(MBD_LOOP_REVOLUTE);
    assert_int_equal(mbd_model_nloops(model), 1);
    assert_int_equal(mbd_model_nconstraints(model), 5);
    assert_string_equal(mbd_model_loop(model, 0)->name, "pin");
    mbd_body_def defs[3];
    for (int i = 0; i < 3; i++)
        defs[i] = *mbd_model_body(model, i);
    defs[1].friction = (mbd_friction){.viscous = 0.1};
    mbd_model_def def = {.name = "four-bar",
                         .gravity = {0, -9.81, 0},
                         .nbodies = 3,
                         .bodies = defs,
                         .nloops = 1,
                         .loops = mbd_model_loop(model, 0)};
    char err[256];
    mbd_model *refused;
    assert_int_equal(mbd_model_build(&def, &refused, err, sizeof err), MBD_EUNSUPPORTED);
    assert_null(refused);
    assert_string_equal(err, "loops: joint friction in a model with loops is not supported");
    def.nloops = -1;
    assert_int_equal(mbd_model_build(&def, &refused, err, sizeof err), MBD_EINVAL);
    assert_null(refused);
    mbd_model_free(model);
}

int main(void)
{
    setup_plane();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fourbar_against_hand),
        cmocka_unit_test(test_slider_crank_against_hand),
        cmocka_unit_test(test_jacobian_and_gamma_by_differences),
        cmocka_unit_test(test_routes_agree_and_residual),
        cmocka_unit_test(test_solver_inverses),
        cmocka_unit_test(test_inconsistent_constraints),
        cmocka_unit_test(test_unsupported_and_tree),
        cmocka_unit_test(test_ladder_generator),
        cmocka_unit_test(test_simulate_energy_and_drift),
        cmocka_unit_test(test_projection),
        cmocka_unit_test(test_cli_fd),
        cmocka_unit_test(test_cli_simulate_and_info),
        cmocka_unit_test(test_loader_errors),
        cmocka_unit_test(test_build_with_loops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
