/* Reliability: degenerate and extreme models (massless bodies, bad inertias, mass ratios of
 * 1e12, collinear Cardan axes, a 100 000-body chain on a small stack, a 10 000-wide tree),
 * NaN and Inf everywhere, the loader's limits, the fuzz corpora and every input a fuzzer
 * found as regression tests, bit-identical OpenMP batches (the race check of the batch
 * runner) and atomic writes that lose nothing on a full disk. */
#define _GNU_SOURCE /* mount, RLIMIT_FSIZE helpers */
#include "support.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../fuzz/fuzz_exercise.h"
#include "../src/cli.c" /* cli_write_atomic and the option parser, tested directly */

/* ---- helpers ---- */

/* temp_dir/name, in a static buffer of its own per slot (0..3). */
static const char *temp_path(int slot, const char *name)
{
    static char paths[4][256];
    snprintf(paths[slot], sizeof paths[slot], "%s/%s", temp_dir, name);
    return paths[slot];
}

static void write_text(const char *path, const char *text)
{
    FILE *file = fopen(path, "w");
    assert_non_null(file);
    fputs(text, file);
    assert_int_equal(fclose(file), 0);
}

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static mbd_body_def body_def(const char *name, int parent, mbd_joint_type joint, double mass)
{
    mbd_body_def b = {.name = name, .parent = parent, .joint = joint, .mass = mass};
    b.axes[0][2] = 1.0;
    b.axes[1][1] = 1.0;
    for (int k = 0; k < 3; k++) {
        b.rotation[k][k] = 1.0;
        b.inertia[k][k] = 0.1 * mass;
    }
    b.inertia[2][2] = 0.15 * mass;
    b.com[0] = 0.2;
    return b;
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
                            body_def("c", 1, MBD_PRISMATIC, 0.0), body_def("d", 2, MBD_REVOLUTE, 0.0)};
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
            assert_int_equal(mbd_inverse_dynamics(model, work, s.q, s.qd, s.tau, s.out, NULL), MBD_OK);
            assert_int_equal(mbd_momentum(model, work, s.q, s.qd, s.p), MBD_OK);
            assert_true(all_finite_values(s.out, s.nv) && all_finite_values(s.p, s.nv));
            mbd_work_free(work);
        }
        state_free(&s);
        mbd_model_free(model);
    }
    /* the singular block is not an artefact of the massless leaf's own joint type */
    mbd_body_def one[2] = {body_def("a", -1, MBD_CYLINDRICAL, 1.0), body_def("tip", 0, MBD_CARDAN, 0.0)};
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
        mbd_body_def defs[2] = {body_def("a", -1, MBD_REVOLUTE, 1.0), body_def("tip", 0, leaves[t], 1e-310)};
        defs[1].origin[0] = 0.3;
        mbd_model *model = build(2, defs);
        state_buf s = state_new(model, 7);
        for (int k = 0; k < 3; k++) {
            const mbd_solver *solver = mbd_solver_find(solvers[k]);
            mbd_work *work;
            mbd_work_new(model, solver, &work);
            const int status = mbd_solver_formulations(solver) & MBD_ACCELERATION
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

/* mbd fd on a model with a massless leaf: exit status 1 and a message saying "singular"
 * and naming the body; mbd info describes the model. */
static void test_massless_leaf_cli(void **state)
{
    (void)state;
    const char *path = temp_path(0, "massless-leaf.json");
    write_text(path,
               "{\"name\": \"massless-leaf\", \"bodies\": [\n"
               " {\"name\": \"arm\", \"parent\": \"world\", \"joint\": {\"type\": \"revolute\", \"axis\": [0, 0, 1]},\n"
               "  \"mass\": 1, \"com\": [0.5, 0, 0], \"inertia\": [[0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1]]},\n"
               " {\"name\": \"sensor\", \"parent\": \"arm\", \"joint\": {\"type\": \"revolute\", \"axis\": [0, 1, 0], \"origin\": [1, 0, 0]},\n"
               "  \"mass\": 0, \"com\": [0, 0, 0], \"inertia\": [[0, 0, 0], [0, 0, 0], [0, 0, 0]]}]}\n");
    char args[512];
    for (int k = 0; k < mbd_solver_count(); k++) {
        snprintf(args, sizeof args, "fd %s --solver %s --q 0.1,0.2 --qd 1,2", path,
                 mbd_solver_name(mbd_solver_at(k)));
        expect_mbd2(args, 1, "singular", "\"sensor\"");
        snprintf(args, sizeof args, "simulate %s --solver %s --integrator rk4 --t1 0.1 --dt 0.01",
                 path, mbd_solver_name(mbd_solver_at(k)));
        expect_mbd2(args, 1, "singular", "\"sensor\"");
    }
    snprintf(args, sizeof args, "info %s", path);
    expect_mbd(args, 0, "sensor");
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
static void check_mass_ratio_chain(const double *masses, int n, mbd_joint_type joint, const char *label)
{
    mbd_body_def *defs = calloc((size_t)n, sizeof *defs);
    char (*names)[16] = calloc((size_t)n, sizeof *names);
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
        {{1, 0, 0}, {2, 0, 0}},          /* parallel */
        {{1, 0, 0}, {-3, 0, 0}},         /* antiparallel */
        {{0, 1, 1}, {0, 1e-6, 1e-6}},    /* parallel, very different lengths */
        {{1, 0, 0}, {1, 1e-12, 0}},      /* within 1e-12 rad */
    };
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        memcpy(b.axes, pairs[k], sizeof b.axes);
        expect_build_error(1, &b, "bodies[0] (\"u\").joint.axes", "collinear");
    }
    /* through a file, the message names the file too */
    const char *path = temp_path(0, "collinear.json");
    write_text(path, "{\"bodies\": [{\"name\": \"u\", \"parent\": \"world\", \"joint\": {\"type\": \"cardan\", "
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
    int status;      /* first failing status, MBD_OK if all went well */
    const char *where;
    int finite;
    double seconds;  /* one acceleration solve (bodies), best of reps */
    long rss_kib;    /* resident memory added by model, workspaces and solves */
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
        run->finite = all_finite_values(qdd, nv) && all_finite_values(qd2, nv) && all_finite_values(pd, nv);
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
    const double memory_ratio = (double)large.rss_kib / (double)(small.rss_kib > 0 ? small.rss_kib : 1);
    print_message("chain 1e4: %.3g ms, +%ld KiB; chain 1e5: %.3g ms, +%ld KiB; ratios %.1f (time), %.1f (memory)\n",
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
        fprintf(file,
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
                        assert_int_equal(mbd_forward(model, work, s.q, s.qd, s.tau, s.out), MBD_ENONFINITE);
                    if (forms & MBD_MOMENTUM) /* qd stands in for p */
                        assert_int_equal(mbd_forward_momentum(model, work, s.q, s.qd, s.tau, s.out, s.out2),
                                         MBD_ENONFINITE);
                    if (which < 2) {
                        assert_int_equal(mbd_inverse_dynamics(model, work, s.q, s.qd, s.tau, s.out, NULL), MBD_ENONFINITE);
                        assert_int_equal(mbd_momentum(model, work, s.q, s.qd, s.p), MBD_ENONFINITE);
                        assert_int_equal(mbd_energy(model, work, s.q, s.qd, &T, &V), MBD_ENONFINITE);
                    } else { /* tau as qdd */
                        assert_int_equal(mbd_inverse_dynamics(model, work, s.q, s.qd, s.tau, s.out, NULL), MBD_ENONFINITE);
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
            assert_true(status == MBD_ENONFINITE ||
                        (status == MBD_OK && all_finite_values(out, 3) && all_finite_values(pd, 3)));
        }
        mbd_work_free(work);
    }
    mbd_model_free(model);
}

/* mbd fd: NaN, Inf or overflowing numbers in --q, --qd, --p, --tau: exit 2 naming the flag. */
static void test_nonfinite_cli(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"--q nan,0", "--q"},          {"--qd 0,inf", "--qd"},   {"--tau -inf,1", "--tau"},
        {"--q 1e999,0", "--q"},        {"--qd 0,-1e400", "--qd"}, {"--tau 0,NaN", "--tau"},
        {"--q '0,nan(0x1)'", "--q"},     {"--tau 0,infinity", "--tau"},
    };
    char args[256];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        snprintf(args, sizeof args, "fd chain:n=2,joint=revolute %s", cases[k][0]);
        expect_mbd(args, 2, cases[k][1]);
    }
    expect_mbd("fd chain:n=2,joint=revolute --solver poisson-ldlt --p 0,inf", 2, "--p");
    expect_mbd("fd chain:n=2,joint=revolute --q 0.1,0.2 --qd 1,2 --tau 3,4", 0, "qdd");
}

/* ---- limits of the loader ---- */

static void expect_load_error(const char *path, const char *fragment1, const char *fragment2)
{
    char err[512] = "";
    mbd_model *model;
    mbd_model_load(path, NULL, &model, err, sizeof err);
    if (model || !strstr(err, fragment1) || (fragment2 && !strstr(err, fragment2)) ||
        strchr(err, '\n')) {
        print_error("%s: expected one line with \"%s\" and \"%s\", got \"%s\"\n", path, fragment1,
                    fragment2 ? fragment2 : "", model ? "(loaded)" : err);
        mbd_model_free(model);
        fail();
    }
}

static void test_json_nesting_limit(void **state)
{
    (void)state;
    const char *path = temp_path(0, "nested.json");
    char text[200] = "{\"bodies\": ";
    for (int k = 0; k < 31; k++)
        strcat(text, "[");
    write_text(path, text); /* 32 levels: jansson reports the syntax error */
    expect_load_error(path, path, NULL);
    strcat(text, "[");
    write_text(path, text); /* 33 levels: our limit, with line and column */
    expect_load_error(path, ":1:43: arrays and objects nested deeper than 32 levels", NULL);
    /* brackets inside strings do not count */
    write_text(path, "{\"name\": \"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\\\"[[[[[[[[\", \"bodies\": 1}");
    expect_load_error(path, "bodies", "non-empty array");
}

static void test_limits_of_specs_and_builder(void **state)
{
    (void)state;
    expect_load_error("chain:n=1000001,joint=revolute", "1000000", "1000001");
    expect_load_error("tree:n=99999999999999999999999", "expected an integer", NULL);
    expect_load_error("tree:n=200,taper=1000", "leave the range of doubles", "b");
    expect_load_error("tree:n=200,taper=0.001", "leave the range of doubles", NULL);
    mbd_body_def b = body_def("a", -1, MBD_REVOLUTE, 1.0);
    char err[256] = "";
    const double gravity[3] = {0};
    assert_null(build_tree("big", gravity, 1000001, &b, err, sizeof err));
    assert_non_null(strstr(err, "1000001"));
}

/* A FIFO, a device or a directory named as a model: a clear error, and no wait for a
 * writer; a file whose size fstat does not know is read to its end. */
static void test_special_files(void **state)
{
    (void)state;
    const char *fifo = temp_path(0, "fifo.json");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    expect_load_error(fifo, fifo, "not a regular file");
    expect_load_error(temp_dir, temp_dir, "not a regular file");
    expect_load_error("/dev/null", "/dev/null", "not a regular file");
    unlink(fifo);
    /* fstat says 0 bytes, yet there is text: read all the same (a syntax error here) */
    expect_load_error("/proc/self/status", "/proc/self/status:1:", NULL);
}

/* ---- the fuzz corpora and the inputs the fuzzers found ---- */

/* Loads (and if it loads, solves) every file of a model file target's corpus with the
 * options given (the floating base for the URDF target, as it does too); returns the
 * number of files. */
static int replay_model_files(const char *target, int floating_options)
{
    char dir_path[128];
    snprintf(dir_path, sizeof dir_path, "fuzz/corpus/%s", target);
    DIR *dir = opendir(dir_path);
    assert_non_null(dir);
    int files = 0;
    for (struct dirent *e; (e = readdir(dir));) {
        if (e->d_name[0] == '.')
            continue;
        for (int floating = 0; floating < floating_options; floating++) {
            char path[512], err[512] = "";
            snprintf(path, sizeof path, "%s/%s", dir_path, e->d_name);
            const mbd_load_options options = {.floating_base = floating};
            mbd_model *model;
            mbd_model_load(path, &options, &model, err, sizeof err);
            if (model) {
                fuzz_exercise_model(model);
                mbd_model_free(model);
            } else {
                fuzz_check_message(err);
            }
        }
        files++;
    }
    closedir(dir);
    return files;
}

/* Every file of fuzz/corpus/fuzz_model_json and fuzz_model_urdf, and every line of every
 * file of fuzz/corpus/fuzz_model_spec, as the fuzz targets load them. */
static void test_fuzz_corpora_replay(void **state)
{
    (void)state;
    assert_true(replay_model_files("fuzz_model_urdf", 2) >= 2);
    int files = replay_model_files("fuzz_model_json", 1);
    DIR *dir = opendir("fuzz/corpus/fuzz_model_spec");
    assert_non_null(dir);
    for (struct dirent *e; (e = readdir(dir));) {
        if (e->d_name[0] == '.')
            continue;
        char path[512], err[512] = "";
        snprintf(path, sizeof path, "fuzz/corpus/fuzz_model_spec/%s", e->d_name);
        char *spec = read_text_file(path);
        assert_non_null(spec);
        spec[strcspn(spec, "\n")] = '\0';
        mbd_model *model = NULL;
        if (!fuzz_spec_skipped(spec))
            mbd_model_load(spec, NULL, &model, err, sizeof err);
        if (model) {
            fuzz_exercise_model(model);
            mbd_model_free(model);
        }
        free(spec);
        files++;
    }
    closedir(dir);
    assert_true(files >= 20);
}

/* Regression inputs: each must load with a one-line error naming fragment, or (fragment
 * NULL) load and solve. Every crash or hang a fuzzer finds goes here (none so far: see
 * README.md, Reliability); the cases below are the loader's edges found while writing the fuzz
 * targets. */
static void test_regression_inputs(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *fragment;
    } json_cases[] = {
        /* deeper than any model: refused before jansson's recursive parser runs */
        {"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", "nested deeper"},
        /* a massless body written with -0: accepted (as 0), then singular, not a crash */
        {"{\"bodies\":[{\"name\":\"a\",\"parent\":\"world\",\"joint\":{\"type\":\"revolute\",\"axis\":[0,0,1]},"
         "\"mass\":-0,\"com\":[0,0,0],\"inertia\":[[-0,0,0],[0,0,0],[0,0,-0]]}]}",
         NULL},
    };
    for (size_t k = 0; k < sizeof json_cases / sizeof json_cases[0]; k++) {
        const char *path = temp_path(2, "regression.json");
        write_text(path, json_cases[k].text);
        char err[512] = "";
        mbd_model *model;
        mbd_model_load(path, NULL, &model, err, sizeof err);
        if (model) {
            assert_null(json_cases[k].fragment);
            fuzz_exercise_model(model);
            mbd_model_free(model);
        } else {
            fuzz_check_message(err);
            assert_non_null(json_cases[k].fragment);
            assert_non_null(strstr(err, json_cases[k].fragment));
        }
    }
}

/* ---- the option parser ---- */

static void test_cli_parser_edges(void **state)
{
    (void)state;
    cli_flag flags[] = {{"--q", NULL, 0}, {"--t1", NULL, 0}, {"--quiet", NULL, 1}, {NULL, NULL, 0}};
    const char *pos[1];
    int npos;
    char *argv1[] = {"mbd", "fd", "m", "--q", "", "--t1", "1e-3", "--quiet", NULL};
    assert_int_equal(cli_parse("t", 8, argv1, 2, flags, pos, 1, &npos), 0);
    double v[2], t1;
    assert_int_equal(cli_vector("t", flags, "--q", 1, v), CLI_USAGE_ERROR); /* empty element */
    assert_int_equal(cli_number("t", flags, "--t1", 0, 1, 0.5, &t1), 0);
    assert_true(t1 == 1e-3);
    char long_number[200];
    memset(long_number, '1', sizeof long_number - 1);
    long_number[sizeof long_number - 1] = '\0';
    cli_flag flags2[] = {{"--q", NULL, 0}, {NULL, NULL, 0}};
    char *argv2[] = {"mbd", "fd", "--q", long_number, NULL};
    assert_int_equal(cli_parse("t", 4, argv2, 2, flags2, pos, 0, &npos), 0);
    assert_int_equal(cli_vector("t", flags2, "--q", 1, v), CLI_USAGE_ERROR); /* token too long */
    char many[] = "1,2,3,4,5,6,7,8,9";
    flags2[0].value = many;
    assert_int_equal(cli_vector("t", flags2, "--q", 2, v), CLI_USAGE_ERROR); /* too many */
    flags2[0].value = "0x1p-3,-0";
    assert_int_equal(cli_vector("t", flags2, "--q", 2, v), 0);
    assert_true(v[0] == 0.125 && v[1] == 0.0 && signbit(v[1]));
    flags2[0].value = "1,";
    assert_int_equal(cli_vector("t", flags2, "--q", 2, v), CLI_USAGE_ERROR); /* trailing comma */
    char *argv3[] = {"mbd", "fd", "--quiet", "--quiet", NULL};
    flags[2].value = NULL;
    assert_int_equal(cli_parse("t", 4, argv3, 2, flags, pos, 1, &npos), CLI_USAGE_ERROR);
}

/* ---- OpenMP batches: the race check of the batch runner ---- */

/* A batch of states evaluated with one thread and with 2, 3 and 4 threads (OpenMP, one
 * workspace per thread, schedule(static), the model shared read-only) gives bit-identical
 * results: no thread writes anything another reads. libgomp is not instrumented for
 * ThreadSanitizer; this is the equivalent check, and under ASan it also catches a
 * workspace overrun into a neighbour's. */
static void evaluate_batch(const mbd_model *model, const mbd_solver *solver, int threads,
                           int nstates, const double *q, const double *v, const double *tau,
                           double *out, double *pd, int *worst)
{
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
    const int momentum = !(mbd_solver_formulations(solver) & MBD_ACCELERATION);
    mbd_work **works = calloc((size_t)threads, sizeof *works);
    for (int t = 0; t < threads; t++)
        mbd_work_new(model, solver, &works[t]);
    int status_min = MBD_OK;
#pragma omp parallel num_threads(threads) reduction(min : status_min)
    {
        mbd_work *work = works[omp_get_thread_num()];
#pragma omp for schedule(static)
        for (int s = 0; s < nstates; s++) {
            const size_t iq = (size_t)s * (size_t)nq, iv = (size_t)s * (size_t)nv;
            const int status = momentum ? mbd_forward_momentum(model, work, q + iq, v + iv, tau + iv,
                                                               out + iv, pd + iv)
                                        : mbd_forward(model, work, q + iq, v + iv, tau + iv, out + iv);
            if (status < status_min)
                status_min = status;
        }
    }
    *worst = status_min;
    for (int t = 0; t < threads; t++)
        mbd_work_free(works[t]);
    free(works);
}

void openblas_set_num_threads(int num_threads); /* libopenblas's own control */

static void test_openmp_batch_bit_identical(void **state)
{
    (void)state;
    /* As the benchmark's batches do: one OpenBLAS thread per state. OpenBLAS threads a
     * factorization only outside an active parallel region, and its threaded dpotrf rounds
     * differently from the sequential one, which the 1-thread reference would see. */
    openblas_set_num_threads(1);
    static const char *const specs[] = {"chain:n=40,joint=cardan", "tree:n=63,branching=2,skew=0.3"};
    enum { NSTATES = 96 };
    for (size_t m = 0; m < sizeof specs / sizeof specs[0]; m++) {
        mbd_model *model = load_model(specs[m]);
        const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
        const size_t sq = (size_t)NSTATES * (size_t)nq, sv = (size_t)NSTATES * (size_t)nv;
        double *q = malloc(sizeof(double) * sq), *v = malloc(sizeof(double) * sv);
        double *tau = malloc(sizeof(double) * sv);
        double *ref = malloc(sizeof(double) * 2 * sv), *got = malloc(sizeof(double) * 2 * sv);
        uint64_t seed = 2024 + m;
        test_fill(&seed, q, (int)sq, -2.0, 2.0);
        test_fill(&seed, v, (int)sv, -1.0, 1.0);
        test_fill(&seed, tau, (int)sv, -1.0, 1.0);
        for (int k = 0; k < mbd_solver_count(); k++) {
            const mbd_solver *solver = mbd_solver_at(k);
            int worst;
            memset(ref, 0, sizeof(double) * 2 * sv);
            evaluate_batch(model, solver, 1, NSTATES, q, v, tau, ref, ref + sv, &worst);
            assert_int_equal(worst, MBD_OK);
            for (int threads = 2; threads <= 4; threads++) {
                memset(got, 0, sizeof(double) * 2 * sv);
                evaluate_batch(model, solver, threads, NSTATES, q, v, tau, got, got + sv, &worst);
                assert_int_equal(worst, MBD_OK);
                if (memcmp(ref, got, sizeof(double) * 2 * sv) != 0) {
                    print_error("%s, %s: %d threads differ from 1 thread\n", specs[m],
                                mbd_solver_name(solver), threads);
                    fail();
                }
            }
        }
        free(q);
        free(v);
        free(tau);
        free(ref);
        free(got);
        mbd_model_free(model);
    }
}

/* ---- atomic writes: nothing lost ---- */

typedef struct {
    size_t bytes;   /* how much to write */
    int fail_after; /* write_fn reports failure (after writing) if nonzero */
} payload;

static int write_payload(FILE *out, void *ctx)
{
    const payload *p = ctx;
    char line[64];
    memset(line, 'x', sizeof line - 1);
    line[sizeof line - 1] = '\n';
    for (size_t done = 0; done < p->bytes; done += sizeof line)
        if (fwrite(line, 1, sizeof line, out) != sizeof line)
            return -1;
    return p->fail_after ? -1 : 0;
}

/* Names in dir that start with prefix ("x.tmp."): temporary files left behind. */
static int count_prefixed(const char *dir_path, const char *prefix)
{
    DIR *dir = opendir(dir_path);
    assert_non_null(dir);
    int count = 0;
    for (struct dirent *e; (e = readdir(dir));)
        count += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(dir);
    return count;
}

/* Runs cli_write_atomic with stderr captured into message (size bytes). */
static int write_atomic_captured(const char *path, payload *p, char *message, size_t size)
{
    fflush(stderr);
    const int saved = dup(2);
    const char *capture = temp_path(3, "stderr.txt");
    FILE *file = fopen(capture, "w+");
    assert_non_null(file);
    dup2(fileno(file), 2);
    const int rc = cli_write_atomic("test", path, write_payload, p);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(file);
    const size_t n = fread(message, 1, size - 1, file);
    message[n] = '\0';
    fclose(file);
    return rc;
}

static void test_write_atomic_ok_and_failing_writer(void **state)
{
    (void)state;
    const char *path = temp_path(0, "result.txt");
    payload p = {.bytes = 1000};
    char message[512];
    assert_int_equal(write_atomic_captured(path, &p, message, sizeof message), 0);
    struct stat info;
    assert_int_equal(stat(path, &info), 0);
    assert_int_equal((int)info.st_size, 1024); /* 16 lines of 64 */
    assert_int_equal((int)(info.st_mode & 0777), 0644);
    write_text(path, "earlier result\n");
    p.fail_after = 1;
    assert_int_equal(write_atomic_captured(path, &p, message, sizeof message), CLI_RUNTIME_ERROR);
    assert_non_null(strstr(message, path));
    char *text = read_text_file(path);
    assert_string_equal(text, "earlier result\n");
    free(text);
    assert_int_equal(count_prefixed(temp_dir, "result.txt.tmp."), 0);
    /* a directory in the way: rename fails, the temporary file goes */
    const char *dir_path = temp_path(1, "a-directory");
    assert_int_equal(mkdir(dir_path, 0700), 0);
    p.fail_after = 0;
    assert_int_equal(write_atomic_captured(dir_path, &p, message, sizeof message), CLI_RUNTIME_ERROR);
    assert_non_null(strstr(message, "cannot rename"));
    assert_int_equal(count_prefixed(temp_dir, "a-directory.tmp."), 0);
    /* no such directory: mkstemp fails, with the reason */
    assert_int_equal(write_atomic_captured(temp_path(1, "no/such/dir/out.txt"), &p, message, sizeof message),
                     CLI_RUNTIME_ERROR);
    assert_non_null(strstr(message, "No such file or directory"));
}

/* The disk fills up (RLIMIT_FSIZE of 8 KiB in a child, SIGXFSZ ignored, so writes fail
 * with EFBIG): an error naming the reason, the earlier file intact, no temporary file. */
static void test_write_atomic_file_size_limit(void **state)
{
    (void)state;
    const char *path = temp_path(0, "limited.txt");
    write_text(path, "earlier result\n");
    const pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        signal(SIGXFSZ, SIG_IGN);
        const struct rlimit limit = {8192, 8192};
        setrlimit(RLIMIT_FSIZE, &limit);
        payload p = {.bytes = 1 << 20};
        char message[512];
        const int rc = write_atomic_captured(path, &p, message, sizeof message);
        _exit(rc == CLI_RUNTIME_ERROR && strstr(message, "File too large") ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char *text = read_text_file(path);
    assert_string_equal(text, "earlier result\n");
    free(text);
    assert_int_equal(count_prefixed(temp_dir, "limited.txt.tmp."), 0);
}

/* A real full disk: a 64 KiB tmpfs (needs root and permission to mount; skipped
 * otherwise). ENOSPC: an error, the earlier file intact, no temporary file. */
static void test_write_atomic_full_disk(void **state)
{
    (void)state;
    const char *mount_point = temp_path(1, "tiny-tmpfs");
    assert_int_equal(mkdir(mount_point, 0700), 0);
    if (mount("tmpfs", mount_point, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k") != 0) {
        print_message("full disk: cannot mount a tmpfs (%s); RLIMIT_FSIZE test only\n", strerror(errno));
        rmdir(mount_point);
        skip();
    }
    char path[300];
    snprintf(path, sizeof path, "%s/result.txt", mount_point);
    write_text(path, "earlier result\n");
    payload p = {.bytes = 1 << 20};
    char message[512];
    const int rc = write_atomic_captured(path, &p, message, sizeof message);
    char *text = read_text_file(path);
    const int leftovers = count_prefixed(mount_point, "result.txt.tmp.");
    umount(mount_point);
    rmdir(mount_point);
    assert_int_equal(rc, CLI_RUNTIME_ERROR);
    assert_non_null(strstr(message, "No space left on device"));
    assert_non_null(text);
    assert_string_equal(text, "earlier result\n");
    free(text);
    assert_int_equal(leftovers, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_massless_frame_equals_cardan),
        cmocka_unit_test(test_massless_leaf_and_subtree_singular),
        cmocka_unit_test(test_subnormal_joint_block_singular),
        cmocka_unit_test(test_massless_leaf_cli),
        cmocka_unit_test(test_mass_and_inertia_errors),
        cmocka_unit_test(test_mass_ratios),
        cmocka_unit_test(test_collinear_cardan_axes),
        cmocka_unit_test(test_chain_100000),
        cmocka_unit_test(test_wide_tree_10000),
        cmocka_unit_test(test_nonfinite_everywhere),
        cmocka_unit_test(test_overflowing_state),
        cmocka_unit_test(test_nonfinite_cli),
        cmocka_unit_test(test_json_nesting_limit),
        cmocka_unit_test(test_limits_of_specs_and_builder),
        cmocka_unit_test(test_special_files),
        cmocka_unit_test(test_fuzz_corpora_replay),
        cmocka_unit_test(test_regression_inputs),
        cmocka_unit_test(test_cli_parser_edges),
        cmocka_unit_test(test_openmp_batch_bit_identical),
        cmocka_unit_test(test_write_atomic_ok_and_failing_writer),
        cmocka_unit_test(test_write_atomic_file_size_limit),
        cmocka_unit_test(test_write_atomic_full_disk),
    };
    return cmocka_run_group_tests_name("reliability", tests, make_temp_dir, remove_temp_dir);
}
