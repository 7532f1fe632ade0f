/* The coefficients H, C, g of H qdd + C qd + g = tau (mbd_coefficients, mbd coeffs):
 * against RNEA, the Christoffel symbols of finite-differenced H, the skew symmetry of
 * dH/dt - 2C, C(q, 0) = 0, and the two-link planar arm of the README in closed form. */
#include "support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int nq, nv;
    double *q, *qd, *qdd, *H, *C, *g, *Cqd, *tau, *scratch;
} coeff_state;

static coeff_state coeff_state_new(const mbd_model *model, uint64_t *seed)
{
    coeff_state s = {.nq = mbd_model_nq(model), .nv = mbd_model_nv(model)};
    const size_t nv = (size_t)s.nv;
    s.q = malloc(sizeof(double) * ((size_t)s.nq + 5 * nv + 4 * nv * nv));
    s.qd = s.q + s.nq, s.qdd = s.qd + nv, s.g = s.qdd + nv, s.Cqd = s.g + nv, s.tau = s.Cqd + nv;
    s.H = s.tau + nv, s.C = s.H + nv * nv, s.scratch = s.C + nv * nv;
    test_fill(seed, s.q, s.nq, -1.5, 1.5);
    test_fill(seed, s.qd, s.nv, -2.0, 2.0);
    test_fill(seed, s.qdd, s.nv, -2.0, 2.0);
    return s;
}

/* H, C, g, Cqd at the state's q, qd. */
static void coefficients(const mbd_model *model, mbd_work *work, coeff_state *s)
{
    assert_int_equal(mbd_coefficients(model, work, s->q, s->qd, s->H, s->C, s->g, s->Cqd), MBD_OK);
}

/* out = H(q + h dir) in place of s->q (restored) */
static void mass_matrix_at(const mbd_model *model, mbd_work *work, coeff_state *s,
                           const double *dir, double h, double *out)
{
    double *q = malloc(sizeof(double) * (size_t)s->nq);
    for (int k = 0; k < s->nq; k++)
        q[k] = s->q[k] + h * dir[k];
    assert_int_equal(mbd_mass_matrix(model, work, q, out), MBD_OK);
    free(q);
}

static const char *const specs[] = {"chain:n=6,joint=revolute", "chain:n=5,joint=cylindrical",
                                    "chain:n=4,joint=cardan", "chain:n=5,joint=prismatic",
                                    "tree:n=9,branching=2,skew=0.5"};
#define NSPECS (sizeof specs / sizeof specs[0])

/* H qdd + C qd + g = RNEA's tau, with the C qd of the matrix (and mbd_coefficients' Cqd). */
static void test_equations_match_rnea(void **unused)
{
    (void)unused;
    uint64_t seed = 3;
    for (size_t m = 0; m < NSPECS + 3; m++) {
        mbd_model *model = m < NSPECS ? load_model(specs[m])
                                      : random_model(m, 7, MIXED_COORDINATE_JOINTS,
                                                     m % 2 ? SHAPE_RANDOM : SHAPE_BINARY);
        mbd_work *work;
        mbd_work_new(model, NULL, &work);
        coeff_state s = coeff_state_new(model, &seed);
        const int n = s.nv;
        coefficients(model, work, &s);
        assert_int_equal(mbd_inverse_dynamics(model, work, s.q, s.qd, s.qdd, s.tau, NULL), MBD_OK);
        double *lhs = s.scratch, *Cqd = lhs + n;
        for (int i = 0; i < n; i++) {
            Cqd[i] = 0.0;
            for (int j = 0; j < n; j++)
                Cqd[i] += s.C[i * n + j] * s.qd[j];
            lhs[i] = Cqd[i] + s.g[i];
            for (int j = 0; j < n; j++)
                lhs[i] += s.H[i * n + j] * s.qdd[j];
        }
        assert_close(lhs, s.tau, n, 1e-12, "H qdd + C qd + g");
        assert_close(s.Cqd, Cqd, n, 1e-14, "Cqd");
        free(s.q);
        mbd_work_free(work);
        mbd_model_free(model);
    }
}

/* C_ij = sum_k 1/2 (dH_ij/dq_k + dH_ik/dq_j - dH_jk/dq_i) qd_k with dH/dq by central
 * differences here (never in the library), and dH/dt - 2C skew with dH/dt likewise. */
static void test_christoffel_and_skew(void **unused)
{
    (void)unused;
    uint64_t seed = 11;
    const double h = 1e-5;
    for (size_t m = 0; m < NSPECS; m++) {
        mbd_model *model = load_model(specs[m]);
        mbd_work *work;
        mbd_work_new(model, NULL, &work);
        coeff_state s = coeff_state_new(model, &seed);
        const int n = s.nv;
        const size_t nn = (size_t)n * (size_t)n;
        double *dH = malloc(sizeof(double) * (nn * (size_t)n + 3 * nn)); /* dH[k] = dH/dq_k */
        double *plus = dH + nn * (size_t)n, *minus = plus + nn, *expected = minus + nn;
        double *dir = calloc((size_t)n, sizeof *dir);
        for (int k = 0; k < n; k++) {
            dir[k] = 1.0;
            mass_matrix_at(model, work, &s, dir, h, plus);
            mass_matrix_at(model, work, &s, dir, -h, minus);
            dir[k] = 0.0;
            for (size_t e = 0; e < nn; e++)
                dH[(size_t)k * nn + e] = (plus[e] - minus[e]) / (2 * h);
        }
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double c = 0.0;
                for (int k = 0; k < n; k++)
                    c += 0.5 *
                         (dH[(size_t)k * nn + i * n + j] + dH[(size_t)j * nn + i * n + k] -
                          dH[(size_t)i * nn + j * n + k]) *
                         s.qd[k];
                expected[i * n + j] = c;
            }
        coefficients(model, work, &s);
        assert_close(s.C, expected, (int)nn, 1e-7, specs[m]);
        /* dH/dt along qd, then N = dH/dt - 2C: N + N^T = 0 */
        mass_matrix_at(model, work, &s, s.qd, h, plus);
        mass_matrix_at(model, work, &s, s.qd, -h, minus);
        double worst = 0.0, scale = 0.0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                const double Nij =
                    (plus[i * n + j] - minus[i * n + j]) / (2 * h) - 2 * s.C[i * n + j];
                const double Nji =
                    (plus[j * n + i] - minus[j * n + i]) / (2 * h) - 2 * s.C[j * n + i];
                worst = fmax(worst, fabs(Nij + Nji));
                scale = fmax(scale, fabs(s.C[i * n + j]));
            }
        if (!(worst <= 1e-7 * scale))
            print_error("%s: |N + N^T| %.3e, |C| %.3e\n", specs[m], worst, scale);
        assert_true(worst <= 1e-7 * scale);
        free(dir);
        free(dH);
        free(s.q);
        mbd_work_free(work);
        mbd_model_free(model);
    }
}

static void test_no_velocity_no_coriolis(void **unused)
{
    (void)unused;
    uint64_t seed = 23;
    mbd_model *model = load_model("chain:n=4,joint=cardan");
    mbd_work *work;
    mbd_work_new(model, NULL, &work);
    coeff_state s = coeff_state_new(model, &seed);
    memset(s.qd, 0, (size_t)s.nv * sizeof *s.qd);
    coefficients(model, work, &s);
    for (int e = 0; e < s.nv * s.nv; e++)
        assert_true(s.C[e] == 0.0);
    for (int i = 0; i < s.nv; i++)
        assert_true(s.Cqd[i] == 0.0);
    free(s.q);
    mbd_work_free(work);
    mbd_model_free(model);
}

/* The README's two-link planar arm (models/planar-arm.json): links of mass m1, m2, length
 * l1, centres lc1, lc2 on the links, inertias I1, I2 about them, gravity g along -y:
 *   H11 = I1 + I2 + m1 lc1^2 + m2 (l1^2 + lc2^2 + 2 l1 lc2 c2), H12 = I2 + m2 (lc2^2 + l1 lc2 c2),
 *   H22 = I2 + m2 lc2^2,  with h = m2 l1 lc2 s2:
 *   C = [[-h qd2, -h (qd1 + qd2)], [h qd1, 0]],
 *   g = [(m1 lc1 + m2 l1) g c1 + m2 lc2 g c12, m2 lc2 g c12]. */
static void arm_closed_form(const double q[2], const double qd[2], double H[4], double C[4],
                            double g[2])
{
    const double m1 = 3, m2 = 2, l1 = 1, lc1 = 0.5, lc2 = 0.4, I1 = 0.25, I2 = 0.1, g0 = 9.81;
    const double c2 = cos(q[1]), h = m2 * l1 * lc2 * sin(q[1]);
    H[0] = I1 + I2 + m1 * lc1 * lc1 + m2 * (l1 * l1 + lc2 * lc2 + 2 * l1 * lc2 * c2);
    H[1] = H[2] = I2 + m2 * (lc2 * lc2 + l1 * lc2 * c2);
    H[3] = I2 + m2 * lc2 * lc2;
    C[0] = -h * qd[1], C[1] = -h * (qd[0] + qd[1]), C[2] = h * qd[0], C[3] = 0.0;
    g[0] = (m1 * lc1 + m2 * l1) * g0 * cos(q[0]) + m2 * lc2 * g0 * cos(q[0] + q[1]);
    g[1] = m2 * lc2 * g0 * cos(q[0] + q[1]);
}

static void test_planar_arm_closed_form(void **unused)
{
    (void)unused;
    mbd_model *model = load_model("models/planar-arm.json");
    mbd_work *work;
    mbd_work_new(model, NULL, &work);
    const double q[2] = {0.4, -1.1}, qd[2] = {0.7, -1.9};
    double H[4], C[4], g[2], Cqd[2], He[4], Ce[4], ge[2];
    arm_closed_form(q, qd, He, Ce, ge);
    assert_int_equal(mbd_coefficients(model, work, q, qd, H, C, g, Cqd), MBD_OK);
    assert_close(H, He, 4, 1e-14, "H");
    assert_close(C, Ce, 4, 1e-13, "C");
    assert_close(g, ge, 2, 1e-14, "g");
    mbd_work_free(work);
    mbd_model_free(model);
}

/* mbd coeffs --json: the same numbers as the library, matrices as lists of rows; and the
 * README's state q = (0, pi/2), qd = (1, 2) in closed form. */
static void test_cli_json(void **unused)
{
    (void)unused;
    json_t *root =
        run_json("coeffs models/planar-arm.json --q 0,1.5707963267948966 --qd 1,2 --json");
    const double q[2] = {0, 1.5707963267948966}, qd[2] = {1, 2};
    double H[4], C[4], g[2];
    arm_closed_form(q, qd, H, C, g);
    const double Cqd[2] = {C[0] * qd[0] + C[1] * qd[1], C[2] * qd[0] + C[3] * qd[1]};
    const struct {
        const char *key;
        const double *expected;
        int rows;
    } fields[] = {{"H", H, 2}, {"C", C, 2}, {"g", g, 0}, {"Cqd", Cqd, 0}};
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
        const json_t *value = json_object_get(root, fields[f].key);
        double got[4];
        const int n = fields[f].rows ? 4 : 2;
        for (int e = 0; e < n; e++) {
            const json_t *x =
                fields[f].rows ? json_array_get(json_array_get(value, (size_t)e / 2), (size_t)e % 2)
                               : json_array_get(value, (size_t)e);
            assert_true(json_is_number(x));
            got[e] = json_number_value(x);
        }
        assert_close(got, fields[f].expected, n, 1e-14, fields[f].key);
    }
    json_decref(root);
    expect_mbd("coeffs models/planar-arm.json --q 0,1.5707963267948966 --qd 1,2", 0,
               "C =\n -1.6 -2.4\n  0.8");
    expect_mbd("coeffs models/planar-arm.json --qd 1,2,3", 2,
               "mbd coeffs: --qd: expected 2 numbers, got 3");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equations_match_rnea),
        cmocka_unit_test(test_christoffel_and_skew),
        cmocka_unit_test(test_no_velocity_no_coriolis),
        cmocka_unit_test(test_planar_arm_closed_form),
        cmocka_unit_test(test_cli_json),
    };
    return cmocka_run_group_tests_name("coefficients", tests, NULL, NULL);
}
