/* test_gpu.c: the GPU batch (algorithms/gpu/). Here, on any machine: the embedded PTX has
 * each kernel's .entry and calls nothing outside itself; each thread's workspace lies
 * wholly in its own block; every kernel's C compiled for the CPU (gpu_run_on_cpu: the code
 * the GPU runs, thread by thread, on blocks in global memory and as the stack entry)
 * against mbd_forward (mbd_forward_momentum for
 * poisson-ldlt) with the same solver on random models of every joint type and shape, K
 * not a multiple of the thread count, tau NULL, and a singular, a NaN and a
 * zero-quaternion state among good ones; without a driver, mbd_gpu_batch_new says "no GPU
 * here", and it refuses other solvers, friction and options out of range with a reason in
 * the caller's buffer. With MBD_TEST_GPU=1 (bench/gpu.sh, on a GPU machine), the same
 * comparisons through the GPU itself, from host arrays and from arrays already on the GPU,
 * with the options that bench/gpu.sh sets in the environment (gpu_env.h). */
#include "../bench/gpu/gpu_env.h"
#include "gpu/gpu.h"
#include "support.h"

#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TOLERANCE 1e-12

/* The GPU's kernels (gpu.h) and their solvers, whether a kernel runs its solver's momentum
 * form, and the most states a test gives it: dense's check on the CPU (LAPACK, O(N^3), and
 * cond(H) where 1e-12 does not hold: check_states) takes milliseconds a state at N = 100.
 * On the GPU the batch takes bodies' kernel from the options' inertia_slots (bench/gpu.sh
 * runs the test with each): the other's row is left out there (batch_takes). */
static const struct {
    const char *name;
    int kernel, momentum, max_k;
} gpu_solvers[] = {
    {"bodies", GPU_KERNEL_bodies, 0, INT_MAX},
    {"bodies", GPU_KERNEL_bodies_slots, 0, INT_MAX},
    {"poisson-ldlt", GPU_KERNEL_poisson_ldlt, 1, INT_MAX},
    {"dense", GPU_KERNEL_dense, 0, 1001},
};
#define GPU_SOLVERS ((int)(sizeof gpu_solvers / sizeof gpu_solvers[0]))

/* The GPU batches' options, from the environment (main). */
static mbd_gpu_options gpu_options;

static int on_gpu(void)
{
    const char *flag = getenv("MBD_TEST_GPU");
    return flag && strcmp(flag, "1") == 0;
}

/* Whether a batch of the row's solver runs the row's kernel (inertia_slots picks bodies'
 * kernel, gpu.c). */
static int batch_takes(int solver)
{
    const int slots = gpu_options.inertia_slots, kernel = gpu_solvers[solver].kernel;
    return !(kernel == GPU_KERNEL_bodies && slots) &&
           !(kernel == GPU_KERNEL_bodies_slots && !slots);
}

/* K states of one GPU solver: x is qd (p in the momentum form), y qdd (qd), z pd (the
 * momentum form's), ref and ref_z the CPU's y and z. */
typedef struct {
    int K, nq, nv, solver;
    double *q, *x, *tau, *y, *z, *ref, *ref_z;
    int *status, *expect;
} gpu_states;

/* Which bad states states_new puts among the good ones. */
enum {
    GOOD_STATES = 0,
    SINGULAR_AND_NAN = 1, /* state 3 singular (slides of 1e200 at rest overflow the
                             inertias, where the model has sliding joints), K - 2 with a
                             NaN rate */
    ZERO_QUATERNION = 2,  /* state 2's first four coordinates zero (a spherical chain's
                             first quaternion) */
};

/* K random states of the GPU solver `solver`, with the bad ones that `bad` asks for. */
static gpu_states states_new(const mbd_model *model, int solver, int K, uint64_t seed, int bad)
{
    gpu_states b = {.K = K, .nq = mbd_model_nq(model), .nv = mbd_model_nv(model), .solver = solver};
    const size_t nq = (size_t)K * b.nq, nv = (size_t)K * b.nv;
    b.q = malloc((nq + 6 * nv) * sizeof(double));
    b.status = malloc(2 * (size_t)K * sizeof(int));
    assert_non_null(b.q);
    assert_non_null(b.status);
    b.expect = b.status + K;
    b.x = b.q + nq;
    b.tau = b.x + nv;
    b.y = b.tau + nv;
    b.z = b.y + nv;
    b.ref = b.z + nv;
    b.ref_z = b.ref + nv;
    test_fill(&seed, b.q, (int)nq, -1.5, 1.5);
    test_fill(&seed, b.x, (int)nv, -1.0, 1.0);
    test_fill(&seed, b.tau, (int)nv, -2.0, 2.0);
    if (bad & ZERO_QUATERNION)
        memset(b.q + 2 * b.nq, 0, 4 * sizeof(double));
    if (bad & SINGULAR_AND_NAN) {
        for (int j = 0; j < b.nq; j++)
            b.q[3 * b.nq + j] = j % 2 ? 1e200 : -1e200;
        memset(b.x + 3 * b.nv, 0, (size_t)b.nv * sizeof *b.x);
        b.x[(K - 2) * b.nv] = NAN;
    }
    return b;
}

static void states_free(gpu_states *b)
{
    free(b->q);
    free(b->status);
}

/* Each state against the CPU's one-state call with the same solver: the same status, and
 * where that is MBD_OK, the results to TOLERANCE relative. */
static void check_states(const mbd_model *model, gpu_states *b, int with_tau, const char *label)
{
    mbd_work *work;
    mbd_work_new(model, mbd_solver_find(gpu_solvers[b->solver].name), &work);
    assert_non_null(work);
    for (int k = 0; k < b->K; k++) {
        const size_t at = (size_t)k * b->nv;
        const double *q = b->q + (size_t)k * b->nq, *tau = with_tau ? b->tau + at : NULL;
        b->expect[k] =
            gpu_solvers[b->solver].momentum
                ? mbd_forward_momentum(model, work, q, b->x + at, tau, b->ref + at, b->ref_z + at)
                : mbd_forward(model, work, q, b->x + at, tau, b->ref + at);
        if (b->status[k] != b->expect[k])
            fail_msg("%s, %s: state %d of %d: status %d, the CPU's %d", label,
                     gpu_solvers[b->solver].name, k, b->K, b->status[k], b->expect[k]);
        if (b->expect[k] != MBD_OK)
            continue;
        if (strcmp(gpu_solvers[b->solver].name, "dense") == 0 &&
            rel_error(b->y + at, b->ref + at, b->nv, 1e-300) > TOLERANCE) {
            /* two Cholesky factors of one H (the GPU's, OpenBLAS's) differ by about
             * eps cond(H): 1e-14 cond(H) as the CPU solvers' tests against dense */
            const double cond = condition_number(model, q);
            assert_close(b->y + at, b->ref + at, b->nv, 1e-14 * cond, label);
        } else
            assert_close(b->y + at, b->ref + at, b->nv, TOLERANCE, label);
        if (gpu_solvers[b->solver].momentum)
            assert_close(b->z + at, b->ref_z + at, b->nv, TOLERANCE, label);
    }
    mbd_work_free(work);
}

/* The launch of the states' solver on the host, `threads` workspace blocks (filled with
 * NaN, then started as the GPU starts them); free launch.works and the layout returned. */
static mbd_work *launch_on_host(const mbd_model *model, gpu_states *b, int with_tau, int threads,
                                gpu_launch *launch)
{
    memset(launch, 0, sizeof *launch);
    mbd_work *layout = gpu_layout(model, mbd_solver_find(gpu_solvers[b->solver].name), launch);
    assert_non_null(layout);
    launch->works = malloc((size_t)threads * launch->work_bytes);
    assert_non_null(launch->works);
    memset(launch->works, 0xff, (size_t)threads * launch->work_bytes); /* NaN, as the stack's */
    launch->K = b->K;
    launch->q = b->q;
    launch->x = b->x;
    launch->tau = with_tau ? b->tau : NULL;
    launch->y = b->y;
    launch->z = gpu_solvers[b->solver].momentum ? b->z : NULL;
    launch->status = b->status;
    gpu_start_works_on_cpu(launch, threads);
    return layout;
}

/* The kernel's C on the CPU, `threads` threads, on their blocks or, on_stack, as the
 * stack entry (each thread's block started anew at each launch). */
static void run_on_cpu(const mbd_model *model, gpu_states *b, int with_tau, int threads,
                       int on_stack)
{
    gpu_launch launch;
    mbd_work *layout = launch_on_host(model, b, with_tau, threads, &launch);
    double *stack = on_stack ? malloc(launch.work_bytes) : NULL;
    assert_true(!on_stack || stack);
    if (stack) /* NaN: what the entry leaves unstarted shows */
        memset(stack, 0xff, launch.work_bytes);
    gpu_run_on_cpu(gpu_solvers[b->solver].kernel, &launch, threads, stack);
    free(stack);
    free(launch.works);
    mbd_work_free(layout);
}

/* The batch's call on K states in GPU memory, copied there from b and back. */
static void run_on_gpu_arrays(const mbd_model *model, mbd_gpu_batch *batch, gpu_states *b,
                              int with_tau)
{
    const size_t q_bytes = (size_t)b->K * b->nq * sizeof(double);
    const size_t v_bytes = (size_t)b->K * b->nv * sizeof(double);
    const int momentum = gpu_solvers[b->solver].momentum;
    mbd_gpu_ptr q, x, tau = 0, y, z = 0, status;
    assert_int_equal(mbd_gpu_alloc(batch, q_bytes, &q), MBD_OK);
    assert_int_equal(mbd_gpu_alloc(batch, v_bytes, &x), MBD_OK);
    assert_int_equal(mbd_gpu_alloc(batch, v_bytes, &y), MBD_OK);
    assert_int_equal(mbd_gpu_alloc(batch, (size_t)b->K * sizeof(int), &status), MBD_OK);
    if (with_tau) {
        assert_int_equal(mbd_gpu_alloc(batch, v_bytes, &tau), MBD_OK);
        assert_int_equal(mbd_gpu_copy_to(batch, tau, b->tau, v_bytes), MBD_OK);
    }
    if (momentum)
        assert_int_equal(mbd_gpu_alloc(batch, v_bytes, &z), MBD_OK);
    assert_int_equal(mbd_gpu_copy_to(batch, q, b->q, q_bytes), MBD_OK);
    assert_int_equal(mbd_gpu_copy_to(batch, x, b->x, v_bytes), MBD_OK);
    memset(b->y, 0, 2 * v_bytes);
    assert_int_equal(
        momentum
            ? mbd_gpu_batch_forward_momentum_on_gpu(model, batch, b->K, q, x, tau, y, z, status)
            : mbd_gpu_batch_forward_on_gpu(model, batch, b->K, q, x, tau, y, status),
        MBD_OK);
    assert_int_equal(mbd_gpu_copy_from(batch, b->y, y, v_bytes), MBD_OK);
    if (momentum)
        assert_int_equal(mbd_gpu_copy_from(batch, b->z, z, v_bytes), MBD_OK);
    assert_int_equal(mbd_gpu_copy_from(batch, b->status, status, (size_t)b->K * sizeof(int)),
                     MBD_OK);
    const mbd_gpu_ptr arrays[] = {q, x, tau, y, z, status};
    for (size_t a = 0; a < sizeof arrays / sizeof *arrays; a++)
        mbd_gpu_release(batch, arrays[a]); /* 0: none */
}

/* On the GPU: from host arrays, then from arrays already in GPU memory; and the other
 * form refused. */
static void run_on_gpu(const mbd_model *model, gpu_states *b, int with_tau)
{
    mbd_gpu_batch *batch;
    char why[256];
    const int rc = mbd_gpu_batch_new(model, mbd_solver_find(gpu_solvers[b->solver].name),
                                     &gpu_options, &batch, why, sizeof why);
    if (rc)
        fail_msg("mbd_gpu_batch_new: %s (%s)", mbd_strerror(rc), why);
    assert_non_null(strstr(why, "GPU: "));
    assert_string_equal(mbd_gpu_batch_error(batch), "");
    const double *tau = with_tau ? b->tau : NULL;
    if (gpu_solvers[b->solver].momentum) {
        mbd_gpu_batch_forward_momentum(model, batch, b->K, b->q, b->x, tau, b->y, b->z, b->status);
        assert_int_equal(mbd_gpu_batch_forward(model, batch, 1, b->q, b->x, tau, b->y, NULL),
                         MBD_EUNSUPPORTED);
    } else {
        mbd_gpu_batch_forward(model, batch, b->K, b->q, b->x, tau, b->y, b->status);
        assert_int_equal(
            mbd_gpu_batch_forward_momentum(model, batch, 1, b->q, b->x, tau, b->y, b->z, NULL),
            MBD_EUNSUPPORTED);
    }
    check_states(model, b, with_tau, "gpu, host arrays");
    run_on_gpu_arrays(model, batch, b, with_tau);
    check_states(model, b, with_tau, "gpu, GPU arrays");
    mbd_gpu_batch_free(batch);
}

/* The states of every GPU solver, with the bad ones that `bad` asks for, on the GPU or,
 * by its kernels' C, on the CPU with `threads` threads, each against the CPU's solver. */
static void run_every_solver(const mbd_model *model, int K, uint64_t seed, int bad, int threads)
{
    for (int solver = 0; solver < GPU_SOLVERS; solver++)
        for (int with_tau = 0; with_tau < 2 && (!on_gpu() || batch_takes(solver)); with_tau++) {
            const int states = K < gpu_solvers[solver].max_k ? K : gpu_solvers[solver].max_k;
            gpu_states b = states_new(model, solver, states, seed, bad);
            if (on_gpu())
                run_on_gpu(model, &b, with_tau);
            else
                for (int on_stack = 0; on_stack < 2; on_stack++) {
                    run_on_cpu(model, &b, with_tau, threads, on_stack);
                    check_states(model, &b, with_tau,
                                 on_stack ? "stack entry on the cpu" : "gpu kernel on the cpu");
                }
            if (bad & SINGULAR_AND_NAN) {
                assert_int_not_equal(b.status[3], MBD_OK);
                assert_int_equal(b.status[states - 2], MBD_ENONFINITE);
            }
            if (bad & ZERO_QUATERNION)
                assert_int_equal(b.status[2], MBD_EINVAL);
            states_free(&b);
        }
}

static void test_ptx_entries(void **state)
{
    (void)state;
    if (!mbd_gpu_ptx[0])
        skip(); /* built without clang */
    assert_non_null(strstr(mbd_gpu_ptx, ".target sm_80"));
#define CHECK_ENTRY(entry) assert_non_null(strstr(mbd_gpu_ptx, ".visible .entry " #entry "("));
#define CHECK_ENTRIES(kernel, solvers, entry, local_entry)                                         \
    CHECK_ENTRY(entry) CHECK_ENTRY(local_entry)
    CHECK_ENTRY(mbd_gpu_start_works)
    GPU_KERNEL_LIST(CHECK_ENTRIES)
#undef CHECK_ENTRIES
#undef CHECK_ENTRY
    assert_null(strstr(mbd_gpu_ptx, ".extern"));     /* no libc or libm on the GPU */
    assert_int_equal(GPU_SOLVERS, GPU_KERNEL_COUNT); /* each kernel tested below */
}

/* The image that a batch loads: the fatbin where the build had ptxas (MBD_BUILD_FATBIN,
 * the Makefile's GPU_PTXAS) and clang, holding the cubins of sm_80 and sm_90 and the PTX
 * (its header as CUDA's fatbinary.h has it, 0xBA55ED50; each entry's kind, 1 PTX or 2 ELF,
 * and its architecture at offset 28, as the toolkit's fatbinary writes them), unless the
 * PTX is asked for; without the fatbin, the PTX (the driver's JIT). */
static void test_image_selected(void **state)
{
    (void)state;
    const size_t bytes = gpu_fatbin_bytes();
    assert_int_equal(bytes > 0, MBD_BUILD_FATBIN && mbd_gpu_ptx[0]);
    assert_ptr_equal(gpu_image(1), mbd_gpu_ptx);
    if (!bytes) {
        assert_ptr_equal(gpu_image(0), mbd_gpu_ptx);
        return;
    }
    assert_ptr_equal(gpu_image(0), mbd_gpu_fatbin);
    uint32_t magic;
    uint16_t version, header;
    uint64_t size;
    memcpy(&magic, mbd_gpu_fatbin, 4);
    memcpy(&version, mbd_gpu_fatbin + 4, 2);
    memcpy(&header, mbd_gpu_fatbin + 6, 2);
    memcpy(&size, mbd_gpu_fatbin + 8, 8);
    assert_int_equal(magic, 0xBA55ED50u);
    assert_int_equal(version, 1);
    assert_int_equal(header + size, bytes);
    int images = 0; /* bit 0: ELF sm_80, 1: ELF sm_90, 2: PTX */
    for (size_t at = header; at < bytes;) {
        uint16_t kind;
        uint32_t entry_header, arch;
        uint64_t payload;
        memcpy(&kind, mbd_gpu_fatbin + at, 2);
        memcpy(&entry_header, mbd_gpu_fatbin + at + 4, 4);
        memcpy(&payload, mbd_gpu_fatbin + at + 8, 8);
        memcpy(&arch, mbd_gpu_fatbin + at + 28, 4);
        images |= kind == 2 && arch == 80 ? 1 : kind == 2 && arch == 90 ? 2 : kind == 1 ? 4 : 8;
        at += entry_header + payload;
    }
    assert_int_equal(images, 7);
}

/* Each thread's workspace lies in its own block: every word of the layout's mbd_work that
 * points into the layout's block points, in a thread's, to the same offset in the thread's
 * block (a pointer missing from MBD_WORK_ARRAYS would still point into the layout's). */
static void test_thread_work_in_its_block(void **state)
{
    (void)state;
    mbd_model *model = random_model(3, 9, MIXED_JOINTS, SHAPE_RANDOM);
    for (int solver = 0; solver < GPU_SOLVERS; solver++) {
        gpu_launch launch = {0};
        mbd_work *layout = gpu_layout(model, mbd_solver_find(gpu_solvers[solver].name), &launch);
        assert_non_null(layout);
        launch.works = calloc(3, launch.work_bytes);
        assert_non_null(launch.works);
        mbd_work work;
        memset(&work, 0, sizeof work);
        gpu_thread_work_on_cpu(&work, &launch, 2);
        const uintptr_t from = (uintptr_t)layout->block;
        const uintptr_t to = (uintptr_t)launch.works + 2 * launch.work_bytes;
        uintptr_t words[sizeof(mbd_work) / sizeof(uintptr_t)], moved[sizeof words / sizeof *words];
        memcpy(words, layout, sizeof words);
        memcpy(moved, &work, sizeof moved);
        for (size_t k = 0; k < sizeof words / sizeof *words; k++)
            if (words[k] >= from && words[k] < from + launch.work_bytes)
                assert_int_equal(moved[k] - to, words[k] - from);
        assert_null(work.model);
        assert_null(work.solver);
        free(launch.works);
        mbd_work_free(layout);
    }
    mbd_model_free(model);
}

static void test_random_models(void **state)
{
    (void)state;
    for (int type = -1; type < MBD_JOINT_TYPE_COUNT; type++)
        for (int shape = SHAPE_CHAIN; shape <= SHAPE_RANDOM; shape++) {
            mbd_model *model = random_model(40 + 3 * type + shape, 13, type, (tree_shape)shape);
            run_every_solver(model, on_gpu() ? 1000 : 37, 5 + (uint64_t)type, GOOD_STATES, 5);
            mbd_model_free(model);
        }
}

static void test_bad_states(void **state)
{
    (void)state;
    mbd_model *model = random_model(9, 7, MIXED_COORDINATE_JOINTS, SHAPE_CHAIN);
    run_every_solver(model, 41, 3, SINGULAR_AND_NAN, 4);
    mbd_model_free(model);
}

static void test_zero_quaternion(void **state)
{
    (void)state;
    mbd_model *model = random_model(12, 5, MBD_SPHERICAL, SHAPE_CHAIN);
    run_every_solver(model, 9, 4, ZERO_QUATERNION, 2);
    mbd_model_free(model);
}

/* The model of random_model(seed, ...) with each body's passive forces set by `passive`
 * (its index and its joint type). */
static mbd_model *with_passive(uint64_t seed, int joints, void (*passive)(mbd_passive *, int, int))
{
    mbd_model *rigid = random_model(seed, 11, joints, SHAPE_RANDOM);
    const int nb = mbd_model_nbodies(rigid);
    mbd_body_def *bodies = calloc((size_t)nb, sizeof *bodies);
    assert_non_null(bodies);
    for (int i = 0; i < nb; i++) {
        bodies[i] = *mbd_model_body(rigid, i);
        passive(&bodies[i].passive, i, bodies[i].joint);
    }
    double gravity[3];
    char err[256];
    mbd_model_gravity(rigid, gravity);
    mbd_model *model = build_tree("passive", gravity, nb, bodies, err, sizeof err);
    assert_non_null(model);
    free(bodies);
    mbd_model_free(rigid);
    return model;
}

/* Rotors' armature on every joint, a free joint's a passive force on its translation too
 * (-a w x v: passive_kernels.h). */
static void rotors(mbd_passive *p, int i, int joint)
{
    (void)joint;
    p->armature = 0.05 * (1 + i % 4);
}

/* Dampers on every joint, springs on those without a quaternion (the GPU refuses the
 * others' rotation vectors: no libm there), and some armature. */
static void dampers_and_springs(mbd_passive *p, int i, int joint)
{
    p->damping = 0.1 * (1 + i % 3);
    p->armature = i % 2 ? 0.02 : 0.0;
    if (joint == MBD_SPHERICAL || joint == MBD_FREE)
        return;
    p->stiffness = 0.5 + i % 5;
    for (int k = 0; k < 7; k++)
        p->springref[k] = 0.1 * (k + 1) - 0.05 * i;
}

/* Armature (the kernels' pivots and their whole I^a: joint_kernels.h, add_armature) and
 * passive forces (added to tau, or in the momentum form to pd) on every joint type,
 * against the one-state solvers. */
static void test_armature_and_passive(void **state)
{
    (void)state;
    void (*const settings[])(mbd_passive *, int, int) = {rotors, dampers_and_springs};
    for (int m = 0; m < 2; m++) {
        mbd_model *model = with_passive(77 + (uint64_t)m, MIXED_JOINTS, settings[m]);
        run_every_solver(model, on_gpu() ? 1000 : 29, 6 + (uint64_t)m, GOOD_STATES, 5);
        run_every_solver(model, 23, 9 + (uint64_t)m, SINGULAR_AND_NAN, 3);
        mbd_model_free(model);
    }
}

/* K past the GPU's workspaces (threads loop over states), on the benchmark's chain. */
static void test_long_chain(void **state)
{
    (void)state;
    mbd_model *model = load_model("chain:n=100,joint=revolute");
    run_every_solver(model, on_gpu() ? 300001 : 301, 8, GOOD_STATES, 5);
    mbd_model_free(model);
}

/* Trees whose transforms are axial screws, twisted (the GPU benchmark's chain) and not
 * (a binary tree), where the bodies and poisson-ldlt kernels keep X as the lanes do. */
static void test_screw_trees(void **state)
{
    (void)state;
    const char *specs[] = {"tree:n=30,branching=1,skew=0.5,taper=0.9", "tree:n=15,branching=2"};
    for (int m = 0; m < 2; m++) {
        mbd_model *model = load_model(specs[m]);
        run_every_solver(model, on_gpu() ? 1000 : 19, 11 + (uint64_t)m, GOOD_STATES, 3);
        mbd_model_free(model);
    }
}

/* A batch of `model` and `solver` with options `options`: `status`, no batch, and a
 * reason that holds `expected`. */
static void refuse_options(const mbd_model *model, const char *solver,
                           const mbd_gpu_options *options, int status, const char *expected)
{
    mbd_gpu_batch *batch = (mbd_gpu_batch *)1;
    char why[256] = "";
    assert_int_equal(
        mbd_gpu_batch_new(model, mbd_solver_find(solver), options, &batch, why, sizeof why),
        status);
    assert_null(batch);
    if (!strstr(why, expected))
        fail_msg("\"%s\" does not say \"%s\"", why, expected);
}

/* An option out of its range: MBD_EINVAL, the reason naming the option and its value. */
static void refuse_option(const mbd_model *model, size_t option, int value, const char *expected)
{
    mbd_gpu_options options;
    mbd_gpu_default_options(&options);
    *(int *)((char *)&options + option) = value;
    refuse_options(model, "bodies", &options, MBD_EINVAL, expected);
}

/* gpu_options_from_env with environment variable `name` set to `text`: -1, and the reason
 * names the variable and its text; the variable's value before (bench/gpu.sh's) kept. */
static void refuse_setting(const char *name, const char *text)
{
    const char *value = getenv(name);
    char *kept = value ? strdup(value) : NULL, expected[64], why[256] = "";
    setenv(name, text, 1);
    mbd_gpu_options options;
    assert_int_equal(gpu_options_from_env(&options, why, sizeof why), -1);
    snprintf(expected, sizeof expected, "%s=%s", name, text);
    assert_non_null(strstr(why, expected));
    if (kept)
        setenv(name, kept, 1);
    else
        unsetenv(name);
    free(kept);
}

/* Springs on ball joints (their rotation vectors: atan2, which the GPU lacks). */
static void stiff_balls(mbd_passive *p, int i, int joint)
{
    (void)joint;
    p->stiffness = 1.0 + i;
}

/* Without a driver: MBD_EUNSUPPORTED and "no GPU here" for each GPU solver. Anywhere: the
 * solvers without a kernel (chosen by the row's gpu_kernels, not its name) and models with
 * friction or springs on quaternions refused, and options out of range (in the struct
 * and in the environment's text), each with its reason in the caller's buffer. */
static void test_refusals(void **state)
{
    (void)state;
    mbd_model *model = load_model("chain:n=4,joint=revolute");
    mbd_gpu_batch *batch = (mbd_gpu_batch *)1;
    char why[256];
    assert_int_equal(
        mbd_gpu_batch_new(model, mbd_solver_find("poisson-sweep"), NULL, &batch, why, sizeof why),
        MBD_EUNSUPPORTED);
    assert_null(batch);
    assert_non_null(strstr(why, "no GPU kernel for the solver poisson-sweep"));
    assert_int_equal(mbd_gpu_batch_new(model, mbd_solver_find("sparse"), NULL, &batch, NULL, 0),
                     MBD_EUNSUPPORTED);
    mbd_solver renamed = mbd_solver_sparse; /* sparse's row named bodies: no kernel still */
    renamed.name = "bodies";
    assert_int_equal(mbd_gpu_batch_new(model, &renamed, NULL, &batch, why, sizeof why),
                     MBD_EUNSUPPORTED);
    assert_non_null(strstr(why, "no GPU kernel for the solver bodies"));
    mbd_model *friction = load_model("chain:n=4,joint=revolute,friction=0.1");
    refuse_options(friction, "bodies", NULL, MBD_EUNSUPPORTED, "without friction, loops");
    mbd_model_free(friction);
    mbd_model *sprung = with_passive(5, MBD_SPHERICAL, stiff_balls);
    refuse_options(sprung, "bodies", NULL, MBD_EUNSUPPORTED, "springs on quaternions");
    mbd_model_free(sprung);
    refuse_option(model, offsetof(mbd_gpu_options, jit_level), 5, "jit_level 5");
    refuse_option(model, offsetof(mbd_gpu_options, jit_level), -1, "jit_level -1");
    refuse_option(model, offsetof(mbd_gpu_options, threads_per_sm), 100, "threads_per_sm 100");
    refuse_option(model, offsetof(mbd_gpu_options, threads_per_sm), 4096, "threads_per_sm 4096");
    refuse_setting("MBD_GPU_JIT_LEVEL", "four");
    refuse_setting("MBD_GPU_THREADS_PER_SM", "-128");
    refuse_setting("MBD_GPU_WORKSPACE", "shared");
    refuse_setting("MBD_GPU_INERTIA_SUMS", "shared");
    refuse_setting("MBD_GPU_IMAGE", "sass");
    assert_int_equal(
        mbd_gpu_batch_new(NULL, mbd_solver_find("bodies"), NULL, &batch, why, sizeof why),
        MBD_EINVAL);
    void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (driver)
        dlclose(driver);
    for (int solver = 0; solver < GPU_SOLVERS && !driver; solver++)
        refuse_options(model, gpu_solvers[solver].name, &gpu_options, MBD_EUNSUPPORTED,
                       "no GPU here");
    mbd_model_free(model);
}

int main(void)
{
    char why[256];
    if (gpu_options_from_env(&gpu_options, why, sizeof why)) {
        fprintf(stderr, "test_gpu: %s\n", why);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ptx_entries),
        cmocka_unit_test(test_image_selected),
        cmocka_unit_test(test_thread_work_in_its_block),
        cmocka_unit_test(test_random_models),
        cmocka_unit_test(test_bad_states),
        cmocka_unit_test(test_zero_quaternion),
        cmocka_unit_test(test_long_chain),
        cmocka_unit_test(test_screw_trees),
        cmocka_unit_test(test_armature_and_passive),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, make_temp_dir, remove_temp_dir);
}
