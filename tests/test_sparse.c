/* The tree-sparse solver (algorithms/solvers/sparse.c) and H^-1 (mbd_mass_matrix_inverse,
 * algorithms/dynamics/minverse.c): sparse equals dense to 1e-12 cond(H) on every family and joint
 * type, the L^T D L factor of H has no fill outside the ancestor pattern, H^-1 equals
 * LAPACK's inverse, and a branched prismatic tree whose H^-1 and qdd follow by hand. */
#include "support.h"

#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* sparse against dense, both formulations, to 1e-12 cond(H). */
static void check_sparse_matches_dense(mbd_model *model, uint64_t seed, const char *label)
{
    state_buf s = state_new(model, seed);
    const double cond = condition_number(model, s.q);
    char what[160];
    snprintf(what, sizeof what, "%s, cond(H) %.2g", label, cond);
    check_against_dense_at(model, mbd_solver_find("sparse"), &s, 1e-12 * cond, what);
    state_free(&s);
    mbd_model_free(model);
}

static void test_sparse_matches_dense(void **state)
{
    (void)state;
    static const char *const families[] = {
        "tree:n=300,branching=2,skew=0.5", "tree:n=100,branching=3,skew=0.3,taper=0.9",
        "tree:n=60,branching=1,skew=0.5",  "chain:n=60,joint=revolute",
        "chain:n=60,joint=prismatic",      "chain:n=40,joint=cylindrical",
        "chain:n=40,joint=cardan",         "rods:n=10",
    };
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        check_sparse_matches_dense(load_model(families[f]), 7 + f, families[f]);
    static const tree_shape shapes[] = {SHAPE_CHAIN, SHAPE_BINARY, SHAPE_RANDOM};
    for (int type = -1; type < MBD_JOINT_TYPE_COUNT; type++)
        for (int shape = 0; shape < 3; shape++) {
            char label[64];
            snprintf(label, sizeof label, "random, joint type %d, shape %d", type, shape);
            check_sparse_matches_dense(
                random_model((uint64_t)(50 + 10 * type + shape), 40, type, shapes[shape]),
                (uint64_t)shape, label);
        }
}

/* The DOF tree: lambda[k] = k - 1 inside a joint, else the last DOF of the parent body. */
static int *dof_parents(const mbd_model *model)
{
    int *lambda = malloc(sizeof(int) * (size_t)mbd_model_nv(model)),
        *last = malloc(sizeof(int) * (size_t)mbd_model_nbodies(model));
    for (int i = 0, k = 0; i < mbd_model_nbodies(model); i++) {
        const mbd_body_def *b = mbd_model_body(model, i);
        for (int m = 0; m < mbd_joint_type_nv(b->joint); m++, k++)
            lambda[k] = m > 0 ? k - 1 : b->parent < 0 ? -1 : last[b->parent];
        last[i] = k - 1;
    }
    free(last);
    return lambda;
}

static int is_ancestor(const int *lambda, int i, int k)
{
    for (int j = lambda[k]; j >= 0; j = lambda[j])
        if (j == i)
            return 1;
    return 0;
}

/* H = L^T D L by the dense algorithm, blind to the tree (every i < k): the entries of L
 * off the ancestor pattern stay exactly zero, so storing the pattern alone loses nothing
 * (on it, entries are nonzero but for structural zeros such as the turn-slide coupling
 * of a cylindrical joint). */
static void test_no_fill_outside_ancestors(void **state)
{
    (void)state;
    for (int shape = SHAPE_BINARY; shape <= SHAPE_RANDOM; shape++) {
        mbd_model *model = random_model((uint64_t)(91 + shape), 30, -1, (tree_shape)shape);
        state_buf s = state_new(model, 3);
        const int n = s.nv;
        double *H = malloc(sizeof(double) * (size_t)n * (size_t)n);
        mbd_work *work;
        mbd_work_new(model, NULL, &work);
        assert_int_equal(mbd_mass_matrix(model, work, s.q, H), MBD_OK);
        for (int k = n - 1; k >= 0; k--)
            for (int i = k - 1; i >= 0; i--) {
                const double a = H[n * k + i] / H[n * k + k];
                for (int j = i; j >= 0; j--)
                    H[n * i + j] -= a * H[n * k + j];
                H[n * k + i] = a;
            }
        int *lambda = dof_parents(model), on_pattern = 0;
        for (int k = 0; k < n; k++)
            for (int i = 0; i < k; i++) {
                if (is_ancestor(lambda, i, k))
                    on_pattern += H[n * k + i] != 0.0;
                else
                    assert_true(H[n * k + i] == 0.0);
            }
        assert_true(on_pattern > n); /* depth and multi-DOF joints: far from diagonal */
        free(lambda);
        free(H);
        mbd_work_free(work);
        state_free(&s);
        mbd_model_free(model);
    }
}

/* H^-1 against LAPACK's dpotrf + dpotri on H, to 1e-12 cond(H); exactly symmetric. */
static void check_inverse(mbd_model *model, const char *label)
{
    state_buf s = state_new(model, 11);
    const int n = s.nv;
    double *H = malloc(sizeof(double) * 2 * (size_t)n * (size_t)n), *Hinv = H + (size_t)n * n;
    mbd_work *work;
    mbd_work_new(model, NULL, &work);
    assert_int_equal(mbd_mass_matrix(model, work, s.q, H), MBD_OK);
    assert_int_equal(LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', n, H, n), 0);
    assert_int_equal(LAPACKE_dpotri(LAPACK_ROW_MAJOR, 'L', n, H, n), 0);
    for (int r = 0; r < n; r++)
        for (int c = r + 1; c < n; c++)
            H[n * r + c] = H[n * c + r];
    assert_int_equal(mbd_mass_matrix_inverse(model, work, s.q, Hinv), MBD_OK);
    for (int r = 0; r < n; r++)
        for (int c = 0; c < r; c++)
            assert_true(Hinv[n * r + c] == Hinv[n * c + r]);
    char what[128];
    snprintf(what, sizeof what, "H^-1 vs dpotri, %s", label);
    assert_close(Hinv, H, n * n, 1e-12 * condition_number(model, s.q), what);
    free(H);
    mbd_work_free(work);
    state_free(&s);
    mbd_model_free(model);
}

static void test_inverse_against_lapack(void **state)
{
    (void)state;
    check_inverse(load_model("tree:n=100,branching=2,skew=0.5"), "binary tree");
    check_inverse(load_model("chain:n=30,joint=cardan"), "Cardan chain");
    check_inverse(load_model("chain:n=150,joint=revolute"), "long revolute chain");
    check_inverse(load_model("rods:n=10"), "rods");
    check_inverse(load_model("chain:n=1,joint=cylindrical"), "one cylindrical joint");
    for (int type = -1; type < MBD_JOINT_TYPE_COUNT; type++)
        check_inverse(random_model((uint64_t)(200 + type), 25, type, SHAPE_RANDOM), "random tree");
}

/* A prismatic base (mass m0) with two prismatic children (m1, m2), all sliding along the
 * world x axis; each child's joint frame is turned (its axis reads (0, -1, 0) or (0, 0, 1)
 * in it) and offset. With x along gravity:
 *   H = [m0+m1+m2, m1, m2; m1, m1, 0; m2, 0, m2],
 *   H^-1 = [1, -1, -1; -1, 1 + m0/m1, 1; -1, 1, 1 + m0/m2] / m0,
 * and the free fall is qdd = (g, 0, 0). */
static void test_branched_slides_by_hand(void **state)
{
    (void)state;
    const double m[3] = {2.0, 0.5, 3.0}, g = -9.81;
    mbd_body_def defs[3];
    memset(defs, 0, sizeof defs);
    static const char *const names[] = {"base", "left", "right"};
    for (int i = 0; i < 3; i++) {
        defs[i] = (mbd_body_def){
            .name = names[i], .parent = i ? 0 : -1, .joint = MBD_PRISMATIC, .mass = m[i]};
        for (int k = 0; k < 3; k++)
            defs[i].inertia[k][k] = 0.1 * (k + 1);
        defs[i].com[1] = 0.2 * i;
    }
    defs[0].axes[0][0] = 1.0;
    defs[0].rotation[0][0] = defs[0].rotation[1][1] = defs[0].rotation[2][2] = 1.0;
    /* left: Rz(90 deg), joint y = -parent x */
    defs[1].rotation[0][1] = -1.0, defs[1].rotation[1][0] = 1.0, defs[1].rotation[2][2] = 1.0;
    defs[1].axes[0][1] = -1.0;
    defs[1].origin[1] = 0.7;
    /* right: Ry(-90 deg), joint z = parent x */
    defs[2].rotation[0][2] = 1.0, defs[2].rotation[1][1] = 1.0, defs[2].rotation[2][0] = -1.0;
    defs[2].axes[0][2] = 1.0;
    defs[2].origin[2] = -0.4;
    char err[256];
    mbd_model *model = build_tree("slides", (const double[3]){g, 0, 0}, 3, defs, err, sizeof err);
    assert_non_null(model);
    const double q[3] = {0.3, -0.2, 0.5}, qd[3] = {0.4, 1.0, -2.0};
    const double Hinv_hand[9] = {1, -1, -1, -1, 1 + m[0] / m[1], 1, -1, 1, 1 + m[0] / m[2]};
    double Hinv[9], expect[9], qdd[3];
    for (int k = 0; k < 9; k++)
        expect[k] = Hinv_hand[k] / m[0];
    mbd_work *work;
    mbd_work_new(model, mbd_solver_find("sparse"), &work);
    assert_int_equal(mbd_mass_matrix_inverse(model, work, q, Hinv), MBD_OK);
    assert_close(Hinv, expect, 9, 1e-14, "H^-1 of the slides");
    assert_int_equal(mbd_forward(model, work, q, qd, NULL, qdd), MBD_OK);
    assert_close(qdd, ((const double[3]){g, 0, 0}), 3, 1e-14, "free fall of the slides");
    mbd_work_free(work);
    mbd_model_free(model);
}

/* Bad calls: another model's workspace, NaN in q, and a massless leaf, which names its
 * body as the solvers do. */
static void test_inverse_errors(void **state)
{
    (void)state;
    mbd_model *model = load_model("chain:n=3,joint=revolute");
    double q[3] = {0.1, 0.2, 0.3}, Hinv[9];
    mbd_model *other = load_model("chain:n=3,joint=revolute");
    mbd_work *foreign;
    mbd_work_new(other, NULL, &foreign);
    assert_int_equal(mbd_mass_matrix_inverse(model, foreign, q, Hinv), MBD_EINVAL);
    mbd_work *work;
    mbd_work_new(model, mbd_solver_find("bodies"), &work);
    q[1] = NAN;
    assert_int_equal(mbd_mass_matrix_inverse(model, work, q, Hinv), MBD_ENONFINITE);
    mbd_work_free(work);
    mbd_work_free(foreign);
    mbd_model_free(other);
    mbd_model_free(model);

    mbd_body_def defs[2] = {{.name = "a", .parent = -1, .joint = MBD_CARDAN, .mass = 1.0},
                            {.name = "tip", .parent = 0, .joint = MBD_REVOLUTE, .mass = 0.0}};
    for (int i = 0; i < 2; i++) {
        defs[i].axes[0][2] = defs[i].axes[1][0] = 1.0;
        defs[i].rotation[0][0] = defs[i].rotation[1][1] = defs[i].rotation[2][2] = 1.0;
    }
    defs[0].inertia[0][0] = defs[0].inertia[1][1] = defs[0].inertia[2][2] = 0.1;
    defs[1].origin[0] = 0.5;
    char err[256];
    model = build_tree("massless tip", (const double[3]){0, 0, -9.81}, 2, defs, err, sizeof err);
    assert_non_null(model);
    mbd_work_new(model, mbd_solver_find("sparse"), &work);
    assert_int_equal(mbd_mass_matrix_inverse(model, work, (const double[3]){0.1, 0.2, 0.3}, Hinv),
                     MBD_ESINGULAR);
    assert_int_equal(mbd_work_failed_body(work), 1);
    mbd_work_free(work);
    mbd_model_free(model);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sparse_matches_dense),
        cmocka_unit_test(test_no_fill_outside_ancestors),
        cmocka_unit_test(test_inverse_against_lapack),
        cmocka_unit_test(test_branched_slides_by_hand),
        cmocka_unit_test(test_inverse_errors),
    };
    return cmocka_run_group_tests_name("sparse", tests, NULL, NULL);
}
