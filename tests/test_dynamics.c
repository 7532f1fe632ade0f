/* Inverse dynamics, the mass matrix and the dense solver: closed-form pendulums, the
 * identities between RNEA, CRBA and the dense solve, and joint reactions. */
#include "support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double g0 = 9.81;

/* Planar links in the x-y plane, revolute about z, gravity -y: link k has length len[k],
 * mass m[k], centre of mass at (lc[k], 0, 0) and inertia Izz[k] about it. */
static mbd_model *planar_links(int n, const double *len, const double *m, const double *lc,
                               const double *Izz)
{
    mbd_body_def defs[2];
    memset(defs, 0, sizeof defs);
    static const char *names[] = {"upper", "lower"};
    for (int k = 0; k < n; k++) {
        mbd_body_def *b = &defs[k];
        b->name = names[k];
        b->parent = k - 1;
        b->joint = MBD_REVOLUTE;
        b->axes[0][2] = 1.0;
        b->origin[0] = k ? len[k - 1] : 0.0;
        b->rotation[0][0] = b->rotation[1][1] = b->rotation[2][2] = 1.0;
        b->mass = m[k];
        b->com[0] = lc[k];
        b->inertia[0][0] = 1e-3 * Izz[k];
        b->inertia[1][1] = b->inertia[2][2] = Izz[k];
    }
    char err[256];
    const double gravity[3] = {0, -g0, 0};
    mbd_model *model = build_tree("planar", gravity, n, defs, err, sizeof err);
    if (!model)
        print_error("%s\n", err);
    assert_non_null(model);
    return model;
}

/* (I + m lc^2) qdd + m g lc cos q = tau */
static void test_single_pendulum(void **state)
{
    (void)state;
    const double len = 1.2, m = 2.5, lc = 0.7, Izz = 0.04;
    mbd_model *model = planar_links(1, &len, &m, &lc, &Izz);
    const mbd_solver *dense = mbd_solver_find("dense");
    mbd_work *work;
    mbd_work_new(model, dense, &work);
    const double q = 0.4, qd = -1.3, tau = 0.8;
    double qdd, tau_out;
    const double expected = (tau - m * g0 * lc * cos(q)) / (Izz + m * lc * lc);
    assert_int_equal(mbd_forward(model, work, &q, &qd, &tau, &qdd), MBD_OK);
    assert_close(&qdd, &expected, 1, 1e-14, "qdd");
    assert_int_equal(mbd_inverse_dynamics(model, work, &q, &qd, &expected, &tau_out, NULL), MBD_OK);
    assert_close(&tau_out, &tau, 1, 1e-14, "tau");
    mbd_work_free(work);
    mbd_model_free(model);
}

/* The textbook double pendulum: H, Coriolis and gravity terms in closed form. */
static void test_double_pendulum(void **state)
{
    (void)state;
    const double len[2] = {1.0, 0.8}, m[2] = {1.5, 0.9}, lc[2] = {0.45, 0.35}, I[2] = {0.05, 0.03};
    mbd_model *model = planar_links(2, len, m, lc, I);
    mbd_work *work;
    mbd_work_new(model, NULL, &work);
    const double q[2] = {0.3, -0.7}, qd[2] = {1.1, -0.4}, qdd[2] = {0.5, 2.0};
    const double c2 = cos(q[1]), s2 = sin(q[1]), h = m[1] * len[0] * lc[1];
    const double H[4] = {I[0] + I[1] + m[0] * lc[0] * lc[0] +
                             m[1] * (len[0] * len[0] + lc[1] * lc[1] + 2 * len[0] * lc[1] * c2),
                         I[1] + m[1] * (lc[1] * lc[1] + len[0] * lc[1] * c2), 0,
                         I[1] + m[1] * lc[1] * lc[1]};
    const double C[2] = {-h * s2 * (2 * qd[0] * qd[1] + qd[1] * qd[1]), h * s2 * qd[0] * qd[0]};
    const double G[2] = {(m[0] * lc[0] + m[1] * len[0]) * g0 * cos(q[0]) +
                             m[1] * lc[1] * g0 * cos(q[0] + q[1]),
                         m[1] * lc[1] * g0 * cos(q[0] + q[1])};
    const double tau[2] = {H[0] * qdd[0] + H[1] * qdd[1] + C[0] + G[0],
                           H[1] * qdd[0] + H[3] * qdd[1] + C[1] + G[1]};
    double tau_out[2], H_out[4];
    const double H_full[4] = {H[0], H[1], H[1], H[3]};
    assert_int_equal(mbd_inverse_dynamics(model, work, q, qd, qdd, tau_out, NULL), MBD_OK);
    assert_close(tau_out, tau, 2, 1e-14, "tau");
    assert_int_equal(mbd_mass_matrix(model, work, q, H_out), MBD_OK);
    assert_close(H_out, H_full, 4, 1e-14, "H");
    mbd_work_free(work);
    mbd_model_free(model);
}

typedef struct {
    mbd_model *model;
    mbd_work *work;
    int nq, nv;
    double *q, *qd, *qdd, *tau, *H, *col;
} fixture;

static fixture *fixture_new(mbd_model *model, const mbd_solver *solver, uint64_t seed)
{
    fixture *f = calloc(1, sizeof *f);
    f->model = model;
    mbd_work_new(model, solver, &f->work);
    f->nq = mbd_model_nq(model);
    f->nv = mbd_model_nv(model);
    f->q = calloc((size_t)(f->nq + 5 * f->nv + f->nv * f->nv), sizeof(double));
    f->qd = f->q + f->nq;
    f->qdd = f->qd + f->nv;
    f->tau = f->qdd + f->nv;
    f->col = f->tau + f->nv;
    f->H = f->col + f->nv;
    uint64_t s = seed + 1;
    test_fill(&s, f->q, f->nq, -2.0, 2.0);
    test_fill(&s, f->qd, f->nv, -1.5, 1.5);
    test_fill(&s, f->tau, f->nv, -3.0, 3.0);
    return f;
}

static void fixture_free(fixture *f)
{
    mbd_work_free(f->work);
    mbd_model_free(f->model);
    free(f->q);
    free(f);
}

static void for_each_random_model(void (*check)(fixture *))
{
    static const tree_shape shapes[] = {SHAPE_CHAIN, SHAPE_BINARY, SHAPE_RANDOM};
    for (int type = -1; type < MBD_JOINT_TYPE_COUNT; type++)
        for (int s = 0; s < 3; s++) {
            const uint64_t seed = (uint64_t)(31 * (type + 1) + s);
            fixture *f = fixture_new(random_model(seed, 12, type, shapes[s]),
                                     mbd_solver_find("dense"), seed);
            check(f);
            fixture_free(f);
        }
}

/* H = H^T, positive definite (every leading minor by Cholesky), and column j of H is
 * RNEA(q, 0, e_j) without gravity. The gravity-free RNEA is RNEA with gravity minus
 * RNEA at rest. */
static void check_mass_matrix_identities(fixture *f)
{
    const int nv = f->nv;
    double *at_rest = calloc((size_t)nv, sizeof(double)),
           *zero = calloc((size_t)nv, sizeof(double));
    double *Hcol = malloc(sizeof(double) * (size_t)nv),
           *L = malloc(sizeof(double) * (size_t)nv * nv);
    assert_int_equal(mbd_mass_matrix(f->model, f->work, f->q, f->H), MBD_OK);
    for (int r = 0; r < nv; r++)
        for (int c = 0; c < r; c++)
            assert_true(f->H[r * nv + c] == f->H[c * nv + r]);
    assert_int_equal(mbd_inverse_dynamics(f->model, f->work, f->q, zero, zero, at_rest, NULL),
                     MBD_OK);
    for (int j = 0; j < nv; j++) {
        f->qdd[j] = 1.0;
        assert_int_equal(mbd_inverse_dynamics(f->model, f->work, f->q, zero, f->qdd, f->col, NULL),
                         MBD_OK);
        f->qdd[j] = 0.0;
        for (int r = 0; r < nv; r++)
            f->col[r] -= at_rest[r];
        for (int r = 0; r < nv; r++)
            Hcol[r] = f->H[r * nv + j];
        assert_close(f->col, Hcol, nv, 1e-12, "H column vs RNEA");
    }
    memcpy(L, f->H, sizeof(double) * (size_t)nv * nv); /* Cholesky: positive pivots */
    for (int j = 0; j < nv; j++) {
        double d = L[j * nv + j];
        for (int k = 0; k < j; k++)
            d -= L[j * nv + k] * L[j * nv + k];
        assert_true(d > 0.0);
        L[j * nv + j] = sqrt(d);
        for (int i = j + 1; i < nv; i++) {
            double s = L[i * nv + j];
            for (int k = 0; k < j; k++)
                s -= L[i * nv + k] * L[j * nv + k];
            L[i * nv + j] = s / L[j * nv + j];
        }
    }
    free(Hcol);
    free(L);
    free(at_rest);
    free(zero);
}

/* RNEA(q, qd, FD(q, qd, tau)) = tau */
static void check_inverse_of_forward(fixture *f)
{
    assert_int_equal(mbd_forward(f->model, f->work, f->q, f->qd, f->tau, f->qdd), MBD_OK);
    assert_int_equal(mbd_inverse_dynamics(f->model, f->work, f->q, f->qd, f->qdd, f->col, NULL),
                     MBD_OK);
    assert_close(f->col, f->tau, f->nv, 1e-11, "RNEA(FD(tau))");
}

/* Motion subspace of a joint at q, rebuilt from the model description alone. */
static int joint_subspace_from_def(const mbd_body_def *b, const double *q, double S[6][6])
{
    memset(S, 0, 6 * sizeof S[0]);
    const double *a = b->axes[0], *a2 = b->axes[1];
    switch (b->joint) {
    case MBD_SPHERICAL: /* the body's own angular velocity: e_0, e_1, e_2 */
    case MBD_FREE:      /* its spatial velocity (w; v_O): the identity */
        for (int k = 0; k < mbd_joint_type_nv(b->joint); k++)
            S[k][k] = 1.0;
        return mbd_joint_type_nv(b->joint);
    case MBD_REVOLUTE:
        memcpy(S[0], a, 3 * sizeof *a);
        return 1;
    case MBD_PRISMATIC:
        memcpy(S[0] + 3, a, 3 * sizeof *a);
        return 1;
    case MBD_CYLINDRICAL:
        memcpy(S[0], a, 3 * sizeof *a);
        memcpy(S[1] + 3, a, 3 * sizeof *a);
        return 2;
    default: { /* Rot(a2, q2)^T a1 by Rodrigues: a1 cos - (a2 x a1) sin + a2 (a2.a1)(1 - cos) */
        const double c = cos(q[1]), s = sin(q[1]), d = a[0] * a2[0] + a[1] * a2[1] + a[2] * a2[2];
        const double x[3] = {a2[1] * a[2] - a2[2] * a[1], a2[2] * a[0] - a2[0] * a[2],
                             a2[0] * a[1] - a2[1] * a[0]};
        for (int k = 0; k < 3; k++)
            S[0][k] = a[k] * c - x[k] * s + a2[k] * d * (1 - c);
        memcpy(S[1], a2, 3 * sizeof *a2);
        return 2;
    }
    }
}

static double norm_of(const double *x, int n)
{
    double s = 0.0;
    for (int k = 0; k < n; k++)
        s += x[k] * x[k];
    return sqrt(s);
}

/* Each joint's reaction wrench, projected on that joint's motion subspace (rebuilt here
 * from the axes), is the joint's tau. Axes are normalized for the check. */
static void check_reactions_project_to_tau(fixture *f)
{
    const int nb = mbd_model_nbodies(f->model);
    double *reactions = malloc(sizeof(double) * 6 * (size_t)nb);
    test_fill(&(uint64_t){7}, f->qdd, f->nv, -1.0, 1.0);
    assert_int_equal(
        mbd_inverse_dynamics(f->model, f->work, f->q, f->qd, f->qdd, f->tau, reactions), MBD_OK);
    int qi = 0, vi = 0;
    for (int i = 0; i < nb; i++) {
        mbd_body_def b = *mbd_model_body(f->model, i);
        for (int k = 0; k < 2; k++) {
            const double n = norm_of(b.axes[k], 3);
            for (int r = 0; r < 3; r++)
                b.axes[k][r] /= n;
        }
        double S[6][6];
        const int nv = joint_subspace_from_def(&b, f->q + qi, S);
        for (int k = 0; k < nv; k++) {
            double projected = 0.0;
            for (int r = 0; r < 6; r++)
                projected += S[k][r] * reactions[6 * i + r];
            assert_close(&projected, &f->tau[vi + k], 1, 1e-12, "S^T reaction");
        }
        qi += mbd_joint_type_nq(b.joint), vi += nv;
    }
    free(reactions);
}

/* At rest, whatever q, the base joint carries the whole weight: |f| = M |g|. */
static void check_base_carries_weight(fixture *f)
{
    const int nb = mbd_model_nbodies(f->model);
    double *reactions = malloc(sizeof(double) * 6 * (size_t)nb), g[3], total = 0.0, carried = 0.0;
    int roots = 0;
    memset(f->qd, 0, sizeof(double) * (size_t)f->nv);
    memset(f->qdd, 0, sizeof(double) * (size_t)f->nv);
    assert_int_equal(
        mbd_inverse_dynamics(f->model, f->work, f->q, f->qd, f->qdd, f->tau, reactions), MBD_OK);
    mbd_model_gravity(f->model, g);
    for (int i = 0; i < nb; i++) {
        total += mbd_model_body(f->model, i)->mass;
        if (mbd_model_body(f->model, i)->parent < 0) {
            carried = norm_of(reactions + 6 * i + 3, 3);
            roots++;
        }
    }
    const double weight = total * norm_of(g, 3);
    if (roots == 1) /* chains and binary trees; a random forest has several roots */
        assert_close(&carried, &weight, 1, 1e-12, "base reaction");
    free(reactions);
}

static void test_mass_matrix_identities(void **state)
{
    (void)state;
    for_each_random_model(check_mass_matrix_identities);
}
static void test_inverse_of_forward(void **state)
{
    (void)state;
    for_each_random_model(check_inverse_of_forward);
}
static void test_reactions_project_to_tau(void **state)
{
    (void)state;
    for_each_random_model(check_reactions_project_to_tau);
}
static void test_base_carries_weight(void **state)
{
    (void)state;
    for_each_random_model(check_base_carries_weight);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_pendulum),          cmocka_unit_test(test_double_pendulum),
        cmocka_unit_test(test_mass_matrix_identities),   cmocka_unit_test(test_inverse_of_forward),
        cmocka_unit_test(test_reactions_project_to_tau), cmocka_unit_test(test_base_carries_weight),
    };
    return cmocka_run_group_tests_name("dynamics", tests, NULL, NULL);
}
