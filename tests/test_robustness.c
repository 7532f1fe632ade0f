/* Numerical robustness: degenerate and extreme models (massless bodies, masses and inertias
 * that are not a body, mass ratios of 1e12, collinear Cardan axes, a 100 000-body chain on a
 * small stack, a 10 000-wide tree) and NaN and Inf everywhere: a clear status or error,
 * never a crash or a garbage result. */
#include "support.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers ---- */

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static mbd_model *build(int n, const mbd_body_def *bodies)
{
    static const double gravity[3] = {0.5, -1.0, -9.81};
    char err[512] = "";
    mbd_model *model = build_tree("test", gravity, n, bodies, err, sizeof err);
    if (!model)
        print_error("build: %s\n", err);
    assert_non_null(model);
    return model;
}

static void expect_build_error(int n, const mbd_body_def *bodies, const char *fragment1,
                               const char *fragment2)
{
    static const double gravity[3] = {0, 0, -9.81};
    char err[512] = "";
    mbd_model *model = build_tree("test", gravity, n, bodies, err, sizeof err);
    if (model || !strstr(err, fragment1) || (fragment2 && !strstr(err, fragment2))) {
        print_error("expected an error with \"%s\" and \"%s\", got \"%s\"\n", fragment1,
                    fragment2 ? fragment2 : "", model ? "(model built)" : err);
        mbd_model_free(model);
        fail();
    }
}

static int all_finite_values(const double *x, int n)
{
    for (int k = 0; k < n; k++)
        if (!isfinite(x[k]))
            return 0;
    return 1;
}

/* ---- massless bodies ---- */

/* A massless intermediate frame turning about z, carrying a body that turns about y at the
 * same point, is a Cardan joint (z, y): both give the same accelerations. */
static void test_massless_frame_equals_cardan(void **state)
{
    (void)state;
    mbd_body_def pair[3] = {body_def("base", -1, MBD_PRISMATIC, 2.0),
                            body_def("frame", 0, MBD_REVOLUTE, 0.0),
                            body_def("arm", 1, MBD_REVOLUTE, 1.5)};
    pair[0].axes[0][0] = 1.0; /* slides along (1, 0, 1) */
    memset(pair[1].inertia, 0, sizeof pair[1].inertia);
    pair[1].origin[0] = 0.4;
    memset(pair[2].axes, 0, sizeof pair[2].axes);
    pair[2].axes[0][1] = 1.0;
    pair[2].inertia[0][1] = pair[2].inertia[1][0] = 0.01;
    mbd_body_def cardan[2] = {pair[0], pair[2]};
    cardan[1].parent = 0;
    cardan[1].joint = MBD_CARDAN;
    cardan[1].origin[0] = 0.4;
    memset(cardan[1].axes, 0, sizeof cardan[1].axes);
    cardan[1].axes[0][2] = 1.0;
    cardan[1].axes[1][1] = 1.0;
    mbd_model *with_frame = build(3, pair), *with_cardan = build(2, cardan);
    assert_int_equal(mbd_model_nv(with_frame), 3);
    assert_int_equal(mbd_model_nv(with_cardan), 3);
    const double q[3] = {0.3, 0.7, -0.4}, qd[3] = {0.5, -1.2, 0.8}, tau[3] = {0.1, 0.2, -0.3};
    for (int s = 0; s < mbd_solver_count(); s++) {
        const mbd_solver *solver = mbd_solver_at(s);
        mbd_work *wf, *wc;
        mbd_work_new(with_frame, solver, &wf);
        mbd_work_new(with_cardan, solver, &wc);
        double a[3], b[3], pa[3], pb[3], pda[3], pdb[3];
        if (mbd_solver_formulations(solver) & MBD_ACCELERATION) {
            assert_int_equal(mbd_forward(with_frame, wf, q, qd, tau, a), MBD_OK);
            assert_int_equal(mbd_forward(with_cardan, wc, q, qd, tau, b), MBD_OK);
            assert_close(a, b, 3, 1e-12, mbd_solver_name(solver));
        }
        if (mbd_solver_formulations(solver) & MBD_MOMENTUM) {
            assert_int_equal(mbd_momentum(with_frame, wf, q, qd, pa), MBD_OK);
            assert_int_equal(mbd_momentum(with_cardan, wc, q, qd, pb), MBD_OK);
            assert_close(pa, pb, 3, 1e-12, "p");
            assert_int_equal(mbd_forward_momentum(with_frame, wf, q, pa, tau, a, pda), MBD_OK);
            assert_int_equal(mbd_forward_momentum(with_cardan, wc, q, pb, tau, b, pdb), MBD_OK);
            assert_close(a, qd, 3, 1e-12, mbd_solver_name(solver));
            assert_close(pda, pdb, 3, 1e-12, mbd_solver_name(solver));
        }
        mbd_work_free(wf);
        mbd_work_free(wc);
    }
    mbd_model_free(with_frame);
    mbd_model_free(with_cardan);
}

/* A massless leaf, or a massless subtree, has a zero joint block D_i: every solver says
 * MBD_ESINGULAR (never a NaN result), inverse dynamics and p = H qd still work. */
static void test_massless_leaf_and_subtree_singular(void **state)
{
    (void)state;
    mbd_body_def defs[4] = {body_def("a", -1, MBD_REVOLUTE, 1.0), body_def("b", 0, MBD_CARDAN, 2.0),
                            body_def("c", 1, MBD_PRISMATIC, 0.0),
                            body_def("d", 2, MBD_REVOLUTE, 0.0)};
    defs[1].origin[0] = defs[2].origin[1] = defs[3].origin[2] = 0.3;
    for (int i = 2; i < 4; i++)
        memset(defs[i].inertia, 0, sizeof defs[i].inertia);
    for (int n = 3; n <= 4; n++) { /* massless leaf c; massless subtree c-d */
        mbd_model *model = build(n, defs);
        state_buf s = state_new(model, (uint64_t)n);
        for (int k = 0; k < mbd_solver_count(); k++) {
            const mbd_solver *solver = mbd_solver_at(k);
            mbd_work *work;
            mbd_work_new(model, solver, &work);
            if (mbd_solver_formulations(solver) & MBD_ACCELERATION) {
                assert_int_equal(mbd_forward(model, work, s.q, s.qd, s.tau, s.out), MBD_ESINGULAR);
                const int body = mbd_work_failed_body(work); /* in the massless part */
                assert_true(body >= 2 && body < n);
            }
            if (mbd_solver_formulations(solver) & MBD_MOMENTUM) {
                assert_int_equal(mbd_forward_momentum(model, work, s.q, s.qd, s.tau, s.out, s.out2),
                                 MBD_ESINGULAR);
                const int body = mbd_work_failed_body(work);
                assert_true(body >= 2 && body < n);
            }
            assert_int_equal(mbd_inverse_dynamics(model, work, s.q, s.qd, s.tau, s.out, NULL),
                             MBD_OK);
            assert_int_equal(mbd_momentum(model, work, s.q, s.qd, s.p), MBD_OK);
            assert_true(all_finite_values(s.out, s.nv) && all_finite_values(s.p, s.nv));
            mbd_work_free(work);
        }
        /* and every derivative method, each matrix's route alone (dqdd/dtau: H's factor) */
        mbd_work *work;
        mbd_work_new(model, mbd_solver_find("bodies"), &work);
        double *matrix = calloc((size_t)s.nv * (size_t)s.nv, sizeof *matrix);
        assert_non_null(matrix);
        for (int k = 0; k < mbd_derivatives_method_count(); k++)
            for (int asked = 0; asked < 3; asked++) {
                assert_int_equal(mbd_forward_derivatives(
                                     model, work, s.q, s.qd, s.tau, mbd_derivatives_method_at(k),
                                     asked == 0 ? matrix : NULL, asked == 1 ? matrix : NULL,
                                     asked == 2 ? matrix : NULL),
                                 MBD_ESINGULAR);
                const int body = mbd_work_failed_body(work);
                assert_true(body >= 2 && body < n);
            }
        free(matrix);
        mbd_work_free(work);
        state_free(&s);
        mbd_model_free(model);
    }
    /* the singular block is not an artefact of the massless leaf's own joint type */
    mbd_body_def one[2] = {body_def("a", -1, MBD_CYLINDRICAL, 1.0),
                           body_def("tip", 0, MBD_CARDAN, 0.0)};
    memset(one[1].inertia, 0, sizeof one[1].inertia);
    mbd_model *model = build(2, one);
    mbd_work *work;
    mbd_work_new(model, mbd_solver_find("bodies"), &work);
    const double q[4] = {0}, qd[4] = {0};
    double qdd[4];
    assert_int_equal(mbd_forward(model, work, q, qd, NULL, qdd), MBD_ESINGULAR);
    assert_int_equal(mbd_work_failed_body(work), 1);
    /* a later good solve on the same workspace clears it */
    mbd_model_free(model);
    one[1] = body_def("tip", 0, MBD_CARDAN, 1.0);
    model = build(2, one);
    mbd_work_free(work);
    mbd_work_new(model, mbd_solver_find("bodies"), &work);
    assert_int_equal(mbd_forward(model, work, q, qd, NULL, qdd), MBD_OK);
    assert_int_equal(mbd_work_failed_body(work), -1);
    mbd_work_free(work);
    mbd_model_free(model);
}

/* A leaf so light that its joint block is subnormal: its reciprocal overflows, so the
 * O(N) solvers call the block singular (MBD_ESINGULAR, the leaf named) rather than
 * return infinities, for 1-DOF (closed form) and 2-DOF (Cholesky and closed form)
 * blocks alike. */
static void test_subnormal_joint_block_singular(void **state)
{
    (void)state;
    static const char *const solvers[] = {"bodies", "poisson-sweep", "poisson-ldlt"};
    const mbd_joint_type leaves[] = {MBD_REVOLUTE, MBD_CYLINDRICAL};
    for (int t = 0; t < 2; t++) {
        mbd_body_def defs[2] = {body_def("a", -1, MBD_REVOLUTE, 1.0),
                                body_def("tip", 0, leaves[t], 1e-310)};
        defs[1].origin[0] = 0.3;
        mbd_model *model = build(2, defs);
        state_buf s = state_new(model, 7);
        for (int k = 0; k < 3; k++) {
            const mbd_solver *solver = mbd_solver_find(solvers[k]);
            mbd_work *work;
            mbd_work_new(model, solver, &work);
            const int status =
                mbd_solver_formulations(solver) & MBD_ACCELERATION
                    ? mbd_forward(model, work, s.q, s.qd, s.tau, s.out)
                    : mbd_forward_momentum(model, work, s.q, s.qd, s.tau, s.out, s.out2);
            assert_int_equal(status, MBD_ESINGULAR);
            assert_int_equal(mbd_work_failed_body(work), 1);
            mbd_work_free(work);
        }
        state_free(&s);
        mbd_model_free(model);
    }
}

/* Masses and inertias that are not a body: clear errors naming the body and the field. */
static void test_mass_and_inertia_errors(void **state)
{
    (void)state;
    mbd_body_def b[2] = {body_def("a", -1, MBD_REVOLUTE, 1.0), body_def("b", 0, MBD_REVOLUTE, 1.0)};
    b[1].mass = 0.0; /* zero mass with an inertia */
    expect_build_error(2, b, "bodies[1] (\"b\").mass", "massless");
    b[1].mass = -1.0;
    expect_build_error(2, b, "bodies[1] (\"b\").mass", "got -1");
    b[1].mass = -0.0 * 1.0 - 1e-300;
    expect_build_error(2, b, "bodies[1] (\"b\").mass", "got -1e-300");
    b[1] = body_def("b", 0, MBD_REVOLUTE, 1.0);
    memset(b[1].inertia, 0, sizeof b[1].inertia); /* a point mass: rejected */
    expect_build_error(2, b, "bodies[1] (\"b\").inertia", "positive definite");
    b[1].inertia[0][0] = b[1].inertia[1][1] = 1.0;
    b[1].inertia[2][2] = -1.0;
    expect_build_error(2, b, "bodies[1] (\"b\").inertia", "positive definite");
    b[1].inertia[2][2] = 3.0; /* 1 + 1 < 3 */
    expect_build_error(2, b, "bodies[1] (\"b\").inertia", "triangle inequality");
    b[1] = body_def("b", 0, MBD_REVOLUTE, 0.0);
    memset(b[1].inertia, 0, sizeof b[1].inertia);
    b[1].inertia[0][1] = 1e-300; /* massless needs all nine zero */
    expect_build_error(2, b, "bodies[1] (\"b\").mass", "inertia must be all zero");
    b[1].inertia[0][1] = 0.0;
    b[1].com[1] = NAN;
    expect_build_error(2, b, "bodies[1] (\"b\").com", "nan");
    b[1].com[1] = 0.0;
    mbd_model *model = build(2, b); /* and now it is a valid massless body */
    assert_true(mbd_model_body(model, 1)->mass == 0.0);
    mbd_model_free(model);
}

/* ---- extreme mass ratios ---- */

/* A chain whose masses (and inertias with them) run from 1e-6 to 1e6, in either direction,
 * and one alternating between the two: every solver agrees with the dense one to
 * 1e-14 cond(H), the forward error bound of a backward-stable solve. */
static void check_mass_ratio_chain(const double *masses, int n, mbd_joint_type joint,
                                   const char *label)
{
    mbd_body_def *defs = calloc((size_t)n, sizeof *defs);
    char(*names)[16] = calloc((size_t)n, sizeof *names);
    for (int i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "m%d", i);
        defs[i] = body_def(names[i], i - 1, joint, masses[i]);
        defs[i].origin[0] = i > 0 ? 0.3 : 0.0;
        defs[i].axes[0][0] = 0.3 * (i % 3);
        defs[i].axes[0][1] = 0.2 * (i % 2);
    }
    mbd_model *model = build(n, defs);
    state_buf s = state_new(model, 99);
    const double cond = condition_number(model, s.q);
    const double tol = fmax(1e-12, 1e-14 * cond);
    for (int k = 0; k < mbd_solver_count(); k++) {
        const mbd_solver *solver = mbd_solver_at(k);
        char what[128];
        snprintf(what, sizeof what, "%s, %s, cond(H) %.1e", label, mbd_solver_name(solver), cond);
        check_against_dense_at(model, solver, &s, tol, what);
    }
    state_free(&s);
    mbd_model_free(model);
    free(names);
    free(defs);
}

static void test_mass_ratios(void **state)
{
    (void)state;
    enum { N = 13 };
    double rising[N], falling[N], alternating[N];
    for (int i = 0; i < N; i++) {
        rising[i] = pow(10.0, -6.0 + i);
        falling[N - 1 - i] = rising[i];
        alternating[i] = i % 2 ? 1e-6 : 1e6;
    }
    for (int joint = 0; joint < MBD_JOINT_TYPE_COUNT; joint++) {
        check_mass_ratio_chain(rising, N, (mbd_joint_type)joint, "1e-6 .. 1e6");
        check_mass_ratio_chain(falling, N, (mbd_joint_type)joint, "1e6 .. 1e-6");
        check_mass_ratio_chain(alternating, N, (mbd_joint_type)joint, "alternating 1e6, 1e-6");
    }
}

/* ---- Cardan axes ---- */

static void test_collinear_cardan_axes(void **state)
{
    (void)state;
    mbd_body_def b = body_def("u", -1, MBD_CARDAN, 1.0);
    static const double pairs[][2][3] = {
        {{1, 0, 0}, {2, 0, 0}},       /* parallel */
        {{1, 0, 0}, {-3, 0, 0}},      /* antiparallel */
        {{0, 1, 1}, {0, 1e-6, 1e-6}}, /* parallel, very different lengths */
        {{1, 0, 0}, {1, 1e-12, 0}},   /* within 1e-12 rad */
    };
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        memcpy(b.axes, pairs[k], sizeof b.axes);
        expect_build_error(1, &b, "bodies[0] (\"u\").joint.axes", "collinear");
    }
    /* through a file, the message names the file too */
    const char *path = temp_path(0, "collinear.json");
    write_text(
        path,
        "{\"bodies\": [{\"name\": \"u\", \"parent\": \"world\", \"joint\": {\"type\": \"cardan\", "
        "\"axes\": [[0, 0, 1], [0, 0, -1]]}, \"mass\": 1, \"com\": [0, 0, 0], "
        "\"inertia\": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}]}");
    char err[512] = "";
    mbd_model *refused;
    assert_int_equal(mbd_model_load(path, NULL, &refused, err, sizeof err), MBD_EPARSE);
    assert_null(refused);
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, "collinear"));
    char args[300];
    snprintf(args, sizeof args, "fd %s", path);
    expect_mbd(args, 2, "collinear");
    /* nearly collinear (1e-6 rad) is a valid, ill-conditioned joint: finite or a clear error */
    const double near[2][3] = {{1, 0, 0}, {1, 1e-6, 0}};
    memcpy(b.axes, near, sizeof b.axes);
    mbd_model *model = build(1, &b);
    const double q[2] = {0.1, 0.2}, qd[2] = {0.3, -0.1};
    for (int k = 0; k < mbd_solver_count(); k++) {
        mbd_work *work;
        mbd_work_new(model, mbd_solver_at(k), &work);
        double out[2], pd[2];
        const int status = mbd_solver_formulations(mbd_solver_at(k)) & MBD_ACCELERATION
                               ? mbd_forward(model, work, q, qd, NULL, out)
                               : mbd_forward_momentum(model, work, q, qd, NULL, out, pd);
        assert_true(status == MBD_ESINGULAR || (status == MBD_OK && all_finite_values(out, 2)));
        mbd_work_free(work);
    }
    mbd_model_free(model);
}

/* ---- very long chains and very wide trees ---- */

typedef struct {
    const char *spec;
    int status; /* first failing status, MBD_OK if all went well */
    const char *where;
    int finite;
    double seconds; /* one acceleration solve (bodies), best of reps */
    long rss_kib;   /* resident memory added by model, workspaces and solves */
    int reps;
} chain_run;

static long resident_kib(void)
{
    long pages = 0, resident = 0;
    FILE *statm = fopen("/proc/self/statm", "r");
    if (statm) {
        if (fscanf(statm, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        fclose(statm);
    }
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Loads the spec and runs bodies (acceleration) and poisson-ldlt (momentum) on it, inside
 * a thread whose stack is far too small for any recursion over the bodies. No cmocka
 * assertion here: a failure longjmps, which must not cross threads. */
static void *chain_thread(void *arg)
{
    chain_run *run = arg;
    const long rss0 = resident_kib();
    char err[512];
    mbd_model *model;
    mbd_model_load(run->spec, NULL, &model, err, sizeof err);
    run->status = MBD_OK;
    run->finite = 0;
    if (!model) {
        run->status = MBD_EPARSE;
        run->where = "load";
        return NULL;
    }
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
    double *buf = calloc((size_t)nq + 5 * (size_t)nv, sizeof *buf);
    double *q = buf, *qd = q + nq, *qdd = qd + nv, *p = qdd + nv, *qd2 = p + nv, *pd = qd2 + nv;
    for (int k = 0; k < nq; k++)
        q[k] = 0.2 * sin(0.37 * k);
    for (int k = 0; k < nv; k++)
        qd[k] = 0.1 * cos(0.71 * k);
    mbd_work *bw;
    mbd_work_new(model, mbd_solver_find("bodies"), &bw);
    mbd_work *lw;
    mbd_work_new(model, mbd_solver_find("poisson-ldlt"), &lw);
    if (!buf || !bw || !lw) {
        run->status = MBD_ENOMEM;
        run->where = "allocation";
    }
    run->seconds = INFINITY;
    for (int r = 0; r < run->reps && run->status == MBD_OK; r++) {
        const double t0 = seconds_now();
        run->status = mbd_forward(model, bw, q, qd, NULL, qdd);
        run->seconds = fmin(run->seconds, seconds_now() - t0);
        run->where = "bodies";
    }
    if (run->status == MBD_OK && (run->status = mbd_momentum(model, lw, q, qd, p)) != MBD_OK)
        run->where = "mbd_momentum";
    if (run->status == MBD_OK &&
        (run->status = mbd_forward_momentum(model, lw, q, p, NULL, qd2, pd)) != MBD_OK)
        run->where = "poisson-ldlt";
    if (run->status == MBD_OK)
        run->finite =
            all_finite_values(qdd, nv) && all_finite_values(qd2, nv) && all_finite_values(pd, nv);
    run->rss_kib = resident_kib() - rss0;
    mbd_work_free(bw);
    mbd_work_free(lw);
    free(buf);
    mbd_model_free(model);
    return NULL;
}

static void run_on_small_stack(chain_run *run, size_t stack_bytes)
{
    pthread_attr_t attr;
    pthread_t thread;
    assert_int_equal(pthread_attr_init(&attr), 0);
    assert_int_equal(pthread_attr_setstacksize(&attr, stack_bytes), 0);
    assert_int_equal(pthread_create(&thread, &attr, chain_thread, run), 0);
    assert_int_equal(pthread_join(thread, NULL), 0);
    pthread_attr_destroy(&attr);
    if (run->status != MBD_OK || !run->finite) {
        print_error("%s: %s: %s, finite %d\n", run->spec, run->where ? run->where : "",
                    mbd_strerror(run->status), run->finite);
        fail();
    }
}

/* 100 000 revolute bodies in a chain: loads and solves on a 256 KiB stack (no recursion
 * over the bodies anywhere), in time and memory linear in N: against 10 000 bodies, the
 * ratios stay far below the quadratic 100 (loosely < 30, for noisy machines). */
static void test_chain_100000(void **state)
{
    (void)state;
    chain_run small = {.spec = "chain:n=10000,joint=revolute", .reps = 20};
    chain_run large = {.spec = "chain:n=100000,joint=revolute", .reps = 3};
    run_on_small_stack(&small, 256 * 1024);
    run_on_small_stack(&large, 256 * 1024);
    const double time_ratio = large.seconds / small.seconds;
    const double memory_ratio =
        (double)large.rss_kib / (double)(small.rss_kib > 0 ? small.rss_kib : 1);
    print_message(
        "chain 1e4: %.3g ms, +%ld KiB; chain 1e5: %.3g ms, +%ld KiB; ratios %.1f (time), %.1f (memory)\n",
        1e3 * small.seconds, small.rss_kib, 1e3 * large.seconds, large.rss_kib, time_ratio,
        memory_ratio);
    /* Time is the benchmark's to judge (mbd-bench's scaling suite checks t(10000) /
     * t(1000) in the report); here, memory linear in N and a 256 KiB stack suffice. */
    assert_true(large.rss_kib < 30L * (small.rss_kib > 4096 ? small.rss_kib : 4096));
}

/* Depth 1, width 10 000: every body a child of the world, as a JSON file (the loader at
 * scale) run on a small stack; each body then moves on its own, so each qdd equals that of
 * a one-body model of the same body. */
static void test_wide_tree_10000(void **state)
{
    (void)state;
    enum { WIDTH = 10000 };
    const char *path = temp_path(1, "wide-10000.json");
    FILE *file = fopen(path, "w");
    assert_non_null(file);
    fputs("{\"name\": \"wide\", \"gravity\": [0.3, -9.81, 0.2], \"bodies\": [\n", file);
    for (int i = 0; i < WIDTH; i++) {
        const double a = 0.001 * i;
        fprintf(
            file,
            "%s{\"name\": \"w%d\", \"parent\": \"world\", \"joint\": {\"type\": \"%s\", \"%s\": %s, "
            "\"origin\": [%.17g, 0, 0]}, \"mass\": %.17g, \"com\": [0.1, 0.05, 0], "
            "\"inertia\": [[0.1, 0, 0], [0, 0.12, 0.01], [0, 0.01, 0.15]]}\n",
            i ? "," : "", i, i % 2 ? "cardan" : "revolute", i % 2 ? "axes" : "axis",
            i % 2 ? "[[1, 0, 0], [0, 0.6, 0.8]]" : "[0, 0.6, 0.8]", a, 1.0 + 0.5 * sin(i));
    }
    fputs("]}\n", file);
    assert_int_equal(fclose(file), 0);
    chain_run run = {.spec = path, .reps = 2};
    run_on_small_stack(&run, 256 * 1024);

    mbd_model *model = load_model(path);
    assert_int_equal(mbd_model_nbodies(model), WIDTH);
    state_buf s = state_new(model, 5);
    mbd_work *work;
    mbd_work_new(model, mbd_solver_find("bodies"), &work);
    assert_int_equal(mbd_forward(model, work, s.q, s.qd, s.tau, s.out), MBD_OK);
    mbd_work *lw;
    mbd_work_new(model, mbd_solver_find("poisson-sweep"), &lw);
    assert_int_equal(mbd_momentum(model, lw, s.q, s.qd, s.p), MBD_OK);
    assert_int_equal(mbd_forward_momentum(model, lw, s.q, s.p, s.tau, s.ref, s.ref2), MBD_OK);
    assert_close(s.ref, s.qd, s.nv, 1e-12, "poisson-sweep round trip, wide tree");
    double gravity[3];
    mbd_model_gravity(model, gravity);
    for (int i = 0; i < WIDTH; i += 997) { /* a sample of bodies, each alone */
        mbd_body_def one = *mbd_model_body(model, i);
        char err[256];
        mbd_model *alone = build_tree("one", gravity, 1, &one, err, sizeof err);
        assert_non_null(alone);
        mbd_work *dense;
        mbd_work_new(alone, mbd_solver_find("dense"), &dense);
        const int v0 = (i / 2) * 3 + (i % 2); /* revolute (1) and Cardan (2) alternate */
        double qdd[2];
        assert_int_equal(mbd_forward(alone, dense, s.q + v0, s.qd + v0, s.tau + v0, qdd), MBD_OK);
        assert_close(s.out + v0, qdd, mbd_model_nv(alone), 1e-12, "wide tree body alone");
        mbd_work_free(dense);
        mbd_model_free(alone);
    }
    mbd_work_free(work);
    mbd_work_free(lw);
    state_free(&s);
    mbd_model_free(model);
}

/* ---- NaN and Inf ---- */

/* Every entry point, every solver, NaN, +Inf and -Inf at the first, a middle and the last
 * place of q, qd (p) and tau: MBD_ENONFINITE, never a crash or a garbage result. */
static void test_nonfinite_everywhere(void **state)
{
    (void)state;
    static const double bad[3] = {NAN, INFINITY, -INFINITY};
    mbd_model *model = load_model("chain:n=5,joint=cylindrical");
    state_buf s = state_new(model, 11);
    double *H = malloc(sizeof(double) * (size_t)s.nv * (size_t)s.nv), T, V;
    double *inputs[3] = {s.q, s.qd, s.tau};
    const int sizes[3] = {s.nq, s.nv, s.nv};
    for (int k = 0; k < mbd_solver_count(); k++) {
        const mbd_solver *solver = mbd_solver_at(k);
        const unsigned forms = mbd_solver_formulations(solver);
        mbd_work *work;
        mbd_work_new(model, solver, &work);
        for (int which = 0; which < 3; which++)
            for (int b = 0; b < 3; b++) {
                const int at[3] = {0, sizes[which] / 2, sizes[which] - 1};
                for (int a = 0; a < 3; a++) {
                    double *x = inputs[which] + at[a];
                    const double saved = *x;
                    *x = bad[b];
                    if (forms & MBD_ACCELERATION)
                        assert_int_equal(mbd_forward(model, work, s.q, s.qd, s.tau, s.out),
                                         MBD_ENONFINITE);
                    if (forms & MBD_MOMENTUM) /* qd stands in for p */
                        assert_int_equal(
                            mbd_forward_momentum(model, work, s.q, s.qd, s.tau, s.out, s.out2),
                            MBD_ENONFINITE);
                    if (which < 2) {
                        assert_int_equal(
                            mbd_inverse_dynamics(model, work, s.q, s.qd, s.tau, s.out, NULL),
                            MBD_ENONFINITE);
                        assert_int_equal(mbd_momentum(model, work, s.q, s.qd, s.p), MBD_ENONFINITE);
                        assert_int_equal(mbd_energy(model, work, s.q, s.qd, &T, &V),
                                         MBD_ENONFINITE);
                    } else { /* tau as qdd */
                        assert_int_equal(
                            mbd_inverse_dynamics(model, work, s.q, s.qd, s.tau, s.out, NULL),
                            MBD_ENONFINITE);
                    }
                    if (which == 0) {
                        assert_int_equal(mbd_mass_matrix(model, work, s.q, H), MBD_ENONFINITE);
                        assert_int_equal(mbd_kinematics(model, work, s.q), MBD_ENONFINITE);
                    }
                    *x = saved;
                }
            }
        /* and the same work still solves a clean state afterwards */
        if (forms & MBD_ACCELERATION)
            assert_int_equal(mbd_forward(model, work, s.q, s.qd, s.tau, s.out), MBD_OK);
        mbd_work_free(work);
    }
    free(H);
    state_free(&s);
    mbd_model_free(model);
}

/* A finite state whose result overflows (a huge velocity) is MBD_ENONFINITE too. */
static void test_overflowing_state(void **state)
{
    (void)state;
    mbd_model *model = load_model("chain:n=3,joint=revolute");
    const double q[3] = {0.1, 0.2, 0.3}, qd[3] = {1e200, -1e200, 1e200};
    double out[3], pd[3];
    for (int k = 0; k < mbd_solver_count(); k++) {
        const mbd_solver *solver = mbd_solver_at(k);
        mbd_work *work;
        mbd_work_new(model, solver, &work);
        if (mbd_solver_formulations(solver) & MBD_ACCELERATION)
            assert_int_equal(mbd_forward(model, work, q, qd, NULL, out), MBD_ENONFINITE);
        if (mbd_solver_formulations(solver) & MBD_MOMENTUM) {
            const int status = mbd_forward_momentum(model, work, q, qd, NULL, out, pd);
            assert_true(
                status == MBD_ENONFINITE ||
                (status == MBD_OK && all_finite_values(out, 3) && all_finite_values(pd, 3)));
        }
        mbd_work_free(work);
    }
    mbd_model_free(model);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_massless_frame_equals_cardan),
        cmocka_unit_test(test_massless_leaf_and_subtree_singular),
        cmocka_unit_test(test_subnormal_joint_block_singular),
        cmocka_unit_test(test_mass_and_inertia_errors),
        cmocka_unit_test(test_mass_ratios),
        cmocka_unit_test(test_collinear_cardan_axes),
        cmocka_unit_test(test_chain_100000),
        cmocka_unit_test(test_wide_tree_10000),
        cmocka_unit_test(test_nonfinite_everywhere),
        cmocka_unit_test(test_overflowing_state),
    };
    return cmocka_run_group_tests_name("robustness", tests, make_temp_dir, remove_temp_dir);
}
