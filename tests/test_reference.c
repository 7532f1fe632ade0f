/* Known answers from an independent implementation (the JSON files in tests/reference/): the mass
 * matrix, inverse dynamics with joint reactions, and forward dynamics of every solver in
 * every formulation it offers. These pin down frames, signs and coordinate order. */
#include "support.h"

#include <jansson.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct {
    json_t *root;
    mbd_model *model;
} reference;

static const char *const reference_files[] = {
    "tests/reference/revolute-prismatic-tree.json",
    "tests/reference/mixed-tree.json",
    "tests/reference/cardan-tree.json",
};

/* The file's "model" member, written out alone and loaded like any model file. */
static mbd_model *load_embedded_model(json_t *root)
{
    char path[] = "/tmp/mbd-reference-XXXXXX.json";
    int fd = mkstemps(path, 5);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(json_dump_file(json_object_get(root, "model"), path, 0), 0);
    mbd_model *model = load_model(path);
    unlink(path);
    return model;
}

static void read_array(json_t *array, double *out, int n)
{
    assert_non_null(array);
    assert_int_equal((int)json_array_size(array), n);
    for (int k = 0; k < n; k++)
        out[k] = json_number_value(json_array_get(array, (size_t)k));
}

/* A nested array of rows, flattened row by row. */
static void read_rows(json_t *rows, double *out, int nrows, int ncols)
{
    assert_int_equal((int)json_array_size(rows), nrows);
    for (int r = 0; r < nrows; r++)
        read_array(json_array_get(rows, (size_t)r), out + (size_t)r * ncols, ncols);
}

static int setup(void **state)
{
    const char *file = reference_files[(intptr_t)*state];
    reference *ref = calloc(1, sizeof *ref);
    json_error_t error;
    ref->root = json_load_file(file, 0, &error);
    if (!ref->root) {
        print_error("%s: %s\n", file, error.text);
        return -1;
    }
    ref->model = load_embedded_model(ref->root);
    *state = ref;
    return 0;
}

static int teardown(void **state)
{
    reference *ref = *state;
    mbd_model_free(ref->model);
    json_decref(ref->root);
    free(ref);
    return 0;
}

typedef struct {
    double *q, *qd, *qdd, *tau, *reactions, *H, *p, *pd, *out, *out2;
} case_buffers;

static void for_each_case(const reference *ref,
                          void (*check)(const reference *, json_t *, case_buffers *))
{
    const int nq = mbd_model_nq(ref->model), nv = mbd_model_nv(ref->model);
    const int nb = mbd_model_nbodies(ref->model);
    double *mem = calloc((size_t)(nq + 9 * nv + 6 * nb + nv * nv), sizeof(double));
    case_buffers b = {.q = mem,
                      .qd = mem + nq,
                      .qdd = mem + nq + nv,
                      .tau = mem + nq + 2 * nv,
                      .reactions = mem + nq + 3 * nv};
    b.H = b.reactions + 6 * nb;
    b.p = b.H + nv * nv;
    b.pd = b.p + nv;
    b.out = b.pd + nv;
    b.out2 = b.out + nv;
    json_t *cases = json_object_get(ref->root, "cases");
    assert_true(json_array_size(cases) > 0);
    for (size_t k = 0; k < json_array_size(cases); k++) {
        json_t *c = json_array_get(cases, k);
        read_array(json_object_get(c, "q"), b.q, nq);
        read_array(json_object_get(c, "qd"), b.qd, nv);
        check(ref, c, &b);
    }
    free(mem);
}

static void check_mass_matrix(const reference *ref, json_t *c, case_buffers *b)
{
    const int nv = mbd_model_nv(ref->model);
    double *H = malloc(sizeof(double) * (size_t)nv * nv);
    mbd_work *work;
    mbd_work_new(ref->model, NULL, &work);
    read_rows(json_object_get(c, "H"), H, nv, nv);
    assert_int_equal(mbd_mass_matrix(ref->model, work, b->q, b->H), MBD_OK);
    assert_close(b->H, H, nv * nv, 1e-12, "H");
    mbd_work_free(work);
    free(H);
}

static void check_inverse(const reference *ref, json_t *c, case_buffers *b)
{
    const int nv = mbd_model_nv(ref->model), nb = mbd_model_nbodies(ref->model);
    json_t *inv = json_object_get(c, "inverse");
    double *reactions = malloc(sizeof(double) * 6 * (size_t)nb);
    read_array(json_object_get(inv, "qdd"), b->qdd, nv);
    read_array(json_object_get(inv, "tau"), b->tau, nv);
    read_rows(json_object_get(inv, "reactions"), reactions, nb, 6);
    mbd_work *work;
    mbd_work_new(ref->model, NULL, &work);
    assert_int_equal(
        mbd_inverse_dynamics(ref->model, work, b->q, b->qd, b->qdd, b->out, b->reactions), MBD_OK);
    assert_close(b->out, b->tau, nv, 1e-12, "tau");
    assert_close(b->reactions, reactions, 6 * nb, 1e-12, "reactions");
    mbd_work_free(work);
    free(reactions);
}

static void check_forward(const reference *ref, json_t *c, case_buffers *b)
{
    const int nv = mbd_model_nv(ref->model);
    json_t *fwd = json_object_get(c, "forward");
    read_array(json_object_get(fwd, "tau"), b->tau, nv);
    read_array(json_object_get(fwd, "qdd"), b->qdd, nv);
    read_array(json_object_get(fwd, "p"), b->p, nv);
    read_array(json_object_get(fwd, "pd"), b->pd, nv);
    for (int k = 0; k < mbd_solver_count(); k++) {
        const mbd_solver *solver = mbd_solver_at(k);
        const unsigned forms = mbd_solver_formulations(solver);
        mbd_work *work;
        mbd_work_new(ref->model, solver, &work);
        if (forms & MBD_ACCELERATION) {
            assert_int_equal(mbd_forward(ref->model, work, b->q, b->qd, b->tau, b->out), MBD_OK);
            assert_close(b->out, b->qdd, nv, 1e-10, mbd_solver_name(solver));
        }
        if (forms & MBD_MOMENTUM) {
            assert_int_equal(
                mbd_forward_momentum(ref->model, work, b->q, b->p, b->tau, b->out, b->out2),
                MBD_OK);
            assert_close(b->out, b->qd, nv, 1e-10, mbd_solver_name(solver));
            assert_close(b->out2, b->pd, nv, 1e-7, mbd_solver_name(solver)); /* pd: FD reference */
        }
        mbd_work_free(work);
    }
}

static void check_momentum(const reference *ref, json_t *c, case_buffers *b)
{
    const int nv = mbd_model_nv(ref->model);
    read_array(json_object_get(json_object_get(c, "forward"), "p"), b->p, nv);
    mbd_work *work;
    mbd_work_new(ref->model, NULL, &work);
    assert_int_equal(mbd_momentum(ref->model, work, b->q, b->qd, b->out), MBD_OK);
    assert_close(b->out, b->p, nv, 1e-12, "p");
    mbd_work_free(work);
}

static void test_mass_matrix(void **state) { for_each_case(*state, check_mass_matrix); }
static void test_inverse(void **state) { for_each_case(*state, check_inverse); }
static void test_forward(void **state) { for_each_case(*state, check_forward); }
static void test_momentum(void **state) { for_each_case(*state, check_momentum); }

#define FOR_FILE(test, k)                                                                          \
    cmocka_unit_test_prestate_setup_teardown(test, setup, teardown, (void *)(intptr_t)(k))
#define ALL_CHECKS(k)                                                                              \
    FOR_FILE(test_mass_matrix, k), FOR_FILE(test_inverse, k), FOR_FILE(test_momentum, k),          \
        FOR_FILE(test_forward, k)

int main(void)
{
    const struct CMUnitTest tests[] = {ALL_CHECKS(0), ALL_CHECKS(1), ALL_CHECKS(2)};
    return cmocka_run_group_tests_name("reference", tests, NULL, NULL);
}
