/* test_gpu.c: the GPU batch (algorithms/gpu/). Here, on any machine: the embedded PTX has
 * each kernel's .entry and calls nothing outside itself; the kernels' C compiled for the
 * CPU (gpu_run_on_cpu: the code the GPU runs, thread by thread) against mbd_forward on
 * random models of every joint type and shape, K not a multiple of the thread count, tau
 * NULL, and a singular, a NaN and a zero-quaternion state among good ones; without a
 * driver, mbd_gpu_batch_new says "no GPU here". With MBD_TEST_GPU=1 (bench/gpu.sh, on a
 * GPU machine), the same comparisons through the GPU itself, from host arrays and from
 * arrays already on the GPU. */
#include "gpu/gpu.h"
#include "support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TOLERANCE 1e-12

static int on_gpu(void)
{
    const char *flag = getenv("MBD_TEST_GPU");
    return flag && strcmp(flag, "1") == 0;
}

typedef struct {
    int K, nq, nv;
    double *q, *qd, *tau, *qdd, *ref;
    int *status, *expect;
} gpu_states;

/* K random states; state 3 singular (slides of 1e200 at rest overflow the articulated
 * inertias, where the model has sliding joints), K - 2 with a NaN rate. */
static gpu_states states_new(const mbd_model *model, int K, uint64_t seed, int with_bad)
{
    gpu_states b = {.K = K, .nq = mbd_model_nq(model), .nv = mbd_model_nv(model)};
    const size_t nq = (size_t)K * b.nq, nv = (size_t)K * b.nv;
    b.q = malloc((nq + 4 * nv) * sizeof(double));
    b.status = malloc(2 * (size_t)K * sizeof(int));
    assert_non_null(b.q);
    assert_non_null(b.status);
    b.expect = b.status + K;
    b.qd = b.q + nq;
    b.tau = b.qd + nv;
    b.qdd = b.tau + nv;
    b.ref = b.qdd + nv;
    test_fill(&seed, b.q, (int)nq, -1.5, 1.5);
    test_fill(&seed, b.qd, (int)nv, -1.0, 1.0);
    test_fill(&seed, b.tau, (int)nv, -2.0, 2.0);
    if (with_bad && K > 5) {
        for (int j = 0; j < b.nq; j++)
            b.q[3 * b.nq + j] = j % 2 ? 1e200 : -1e200;
        memset(b.qd + 3 * b.nv, 0, (size_t)b.nv * sizeof *b.qd);
        b.qd[(K - 2) * b.nv] = NAN;
    }
    return b;
}

static void states_free(gpu_states *b)
{
    free(b->q);
    free(b->status);
}

/* Each state against mbd_forward: the same status, and where that is MBD_OK, qdd to
 * TOLERANCE relative. */
static void check_states(const mbd_model *model, gpu_states *b, int with_tau, const char *label)
{
    mbd_work *work;
    mbd_work_new(model, mbd_solver_find("bodies"), &work);
    assert_non_null(work);
    for (int k = 0; k < b->K; k++) {
        const double *tau = with_tau ? b->tau + (size_t)k * b->nv : NULL;
        double *ref = b->ref + (size_t)k * b->nv;
        b->expect[k] = mbd_forward(model, work, b->q + (size_t)k * b->nq,
                                   b->qd + (size_t)k * b->nv, tau, ref);
        if (b->status[k] != b->expect[k])
            fail_msg("%s: state %d of %d: status %d, mbd_forward's %d", label, k, b->K,
                     b->status[k], b->expect[k]);
        if (b->expect[k] == MBD_OK)
            assert_close(b->qdd + (size_t)k * b->nv, ref, b->nv, TOLERANCE, label);
    }
    mbd_work_free(work);
}

/* The kernel's C on the CPU, `threads` threads. */
static void run_on_cpu(const mbd_model *model, gpu_states *b, int with_tau, int threads)
{
    gpu_launch launch = {0};
    mbd_work *layout = gpu_layout(model, mbd_solver_find("bodies"), &launch);
    assert_non_null(layout);
    launch.works = calloc((size_t)threads, launch.work_bytes);
    assert_non_null(launch.works);
    launch.K = b->K;
    launch.q = b->q;
    launch.x = b->qd;
    launch.tau = with_tau ? b->tau : NULL;
    launch.y = b->qdd;
    launch.status = b->status;
    gpu_start_works_on_cpu(&launch, threads);
    gpu_run_on_cpu(GPU_KERNEL_bodies, &launch, threads);
    free(launch.works);
    mbd_work_free(layout);
}

/* On the GPU: from host arrays, then from arrays already in GPU memory. */
static void run_on_gpu(const mbd_model *model, gpu_states *b, int with_tau)
{
    mbd_gpu_batch *batch;
    const int rc = mbd_gpu_batch_new(model, mbd_solver_find("bodies"), &batch);
    if (rc)
        fail_msg("mbd_gpu_batch_new: %s (%s)", mbd_strerror(rc), mbd_gpu_why());
    const double *tau = with_tau ? b->tau : NULL;
    mbd_gpu_batch_forward(model, batch, b->K, b->q, b->qd, tau, b->qdd, b->status);
    check_states(model, b, with_tau, "gpu, host arrays");
    const size_t q_bytes = (size_t)b->K * b->nq * sizeof(double);
    const size_t v_bytes = (size_t)b->K * b->nv * sizeof(double);
    mbd_gpu_ptr q, qd, tau_gpu = 0, qdd, status;
    assert_int_equal(mbd_gpu_alloc(batch, q_bytes, &q), MBD_OK);
    assert_int_equal(mbd_gpu_alloc(batch, v_bytes, &qd), MBD_OK);
    assert_int_equal(mbd_gpu_alloc(batch, v_bytes, &qdd), MBD_OK);
    assert_int_equal(mbd_gpu_alloc(batch, (size_t)b->K * sizeof(int), &status), MBD_OK);
    if (with_tau) {
        assert_int_equal(mbd_gpu_alloc(batch, v_bytes, &tau_gpu), MBD_OK);
        assert_int_equal(mbd_gpu_copy_to(batch, tau_gpu, b->tau, v_bytes), MBD_OK);
    }
    assert_int_equal(mbd_gpu_copy_to(batch, q, b->q, q_bytes), MBD_OK);
    assert_int_equal(mbd_gpu_copy_to(batch, qd, b->qd, v_bytes), MBD_OK);
    memset(b->qdd, 0, v_bytes);
    assert_int_equal(mbd_gpu_batch_forward_on_gpu(model, batch, b->K, q, qd, tau_gpu, qdd, status),
                     MBD_OK);
    assert_int_equal(mbd_gpu_copy_from(batch, b->qdd, qdd, v_bytes), MBD_OK);
    assert_int_equal(mbd_gpu_copy_from(batch, b->status, status, (size_t)b->K * sizeof(int)), MBD_OK);
    check_states(model, b, with_tau, "gpu, GPU arrays");
    mbd_gpu_batch_free(batch);
}

static void run_and_check(const mbd_model *model, int K, uint64_t seed, int with_bad)
{
    for (int with_tau = 0; with_tau < 2; with_tau++) {
        gpu_states b = states_new(model, K, seed, with_bad);
        if (on_gpu())
            run_on_gpu(model, &b, with_tau);
        else {
            run_on_cpu(model, &b, with_tau, 5);
            check_states(model, &b, with_tau, "gpu kernel on the cpu");
        }
        states_free(&b);
    }
}

static void test_ptx_entries(void **state)
{
    (void)state;
    if (!mbd_gpu_ptx[0])
        skip(); /* built without clang */
    assert_non_null(strstr(mbd_gpu_ptx, ".target sm_80"));
#define CHECK_ENTRY(solver, entry) assert_non_null(strstr(mbd_gpu_ptx, ".visible .entry " #entry "("));
    CHECK_ENTRY(start, mbd_gpu_start_works)
    GPU_KERNEL_LIST(CHECK_ENTRY)
#undef CHECK_ENTRY
    assert_null(strstr(mbd_gpu_ptx, ".extern")); /* no libc or libm on the GPU */
}

static void test_random_models(void **state)
{
    (void)state;
    for (int type = -1; type < MBD_JOINT_TYPE_COUNT; type++)
        for (int shape = SHAPE_CHAIN; shape <= SHAPE_RANDOM; shape++) {
            mbd_model *model = random_model(40 + 3 * type + shape, 13, type, (tree_shape)shape);
            run_and_check(model, on_gpu() ? 1000 : 37, 5 + (uint64_t)type, 0);
            mbd_model_free(model);
        }
}

static void test_bad_states(void **state)
{
    (void)state;
    mbd_model *model = random_model(9, 7, MIXED_COORDINATE_JOINTS, SHAPE_CHAIN);
    gpu_states b = states_new(model, 41, 3, 1);
    if (on_gpu()) {
        run_on_gpu(model, &b, 1);
    } else {
        run_on_cpu(model, &b, 1, 4);
        check_states(model, &b, 1, "bad states");
    }
    assert_int_equal(b.status[3], MBD_ESINGULAR);
    assert_int_equal(b.status[b.K - 2], MBD_ENONFINITE);
    states_free(&b);
    mbd_model_free(model);
}

static void test_zero_quaternion(void **state)
{
    (void)state;
    mbd_model *model = random_model(12, 5, MBD_SPHERICAL, SHAPE_CHAIN);
    gpu_states b = states_new(model, 9, 4, 0);
    memset(b.q + 2 * b.nq, 0, 4 * sizeof(double));
    if (on_gpu())
        run_on_gpu(model, &b, 1);
    else {
        run_on_cpu(model, &b, 1, 2);
        check_states(model, &b, 1, "zero quaternion");
    }
    assert_int_equal(b.status[2], MBD_EINVAL);
    states_free(&b);
    mbd_model_free(model);
}

/* K past the GPU's workspaces (threads loop over states), on the benchmark's chain. */
static void test_long_chain(void **state)
{
    (void)state;
    mbd_model *model = load_model("chain:n=100,joint=revolute");
    run_and_check(model, on_gpu() ? 300001 : 301, 8, 0);
    mbd_model_free(model);
}

/* No driver: MBD_EUNSUPPORTED, "no GPU here", and nothing else changes. */
static void test_no_driver(void **state)
{
    (void)state;
    if (on_gpu())
        skip();
    setenv("MBD_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
    mbd_model *model = load_model("chain:n=4,joint=revolute");
    mbd_gpu_batch *batch = (mbd_gpu_batch *)1;
    assert_int_equal(mbd_gpu_batch_new(model, mbd_solver_find("bodies"), &batch), MBD_EUNSUPPORTED);
    assert_null(batch);
    assert_non_null(strstr(mbd_gpu_why(), "no GPU here"));
    assert_int_equal(mbd_gpu_batch_new(model, mbd_solver_find("dense"), &batch), MBD_EUNSUPPORTED);
    assert_int_equal(mbd_gpu_batch_new(NULL, mbd_solver_find("bodies"), &batch), MBD_EINVAL);
    mbd_model_free(model);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ptx_entries),     cmocka_unit_test(test_random_models),
        cmocka_unit_test(test_bad_states),      cmocka_unit_test(test_zero_quaternion),
        cmocka_unit_test(test_long_chain),      cmocka_unit_test(test_no_driver),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
