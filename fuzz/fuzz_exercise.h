/* fuzz_exercise.h: what the model fuzz targets do with a model that loaded: every public
 * query and every solver at one deterministic state, with checks that abort (so that
 * libFuzzer records the input) when a documented promise is broken. */
#ifndef MBD_FUZZ_EXERCISE_H
#define MBD_FUZZ_EXERCISE_H

#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mbd.h"

/* Larger models are only built and described: the dense solver is O(n^3). */
#define FUZZ_SOLVE_MAX_NV 64

static inline void fuzz_require(int condition, const char *what)
{
    if (!condition) {
        fprintf(stderr, "fuzz: broken promise: %s\n", what);
        abort();
    }
}

/* A status any call may return: MBD_OK or one of the listed errors. */
static inline int fuzz_status_valid(int status)
{
    return status <= 0 && status >= MBD_EINCONSISTENT;
}

/* An error message: non-empty, one line. */
static inline void fuzz_check_message(const char *err)
{
    fuzz_require(err[0] != '\0', "empty error message");
    fuzz_require(strchr(err, '\n') == NULL, "error message of several lines");
}

/* The model file targets: each input goes into one temporary file PATH (made once, with
 * the suffix, under TMPDIR; removed at exit), which the loader then reads, so that the
 * file-size and nesting limits are on the path. */
static char fuzz_model_path[96];

static inline void fuzz_remove_model_file(void)
{
    if (fuzz_model_path[0])
        unlink(fuzz_model_path);
}

static inline void fuzz_make_model_file(const char *suffix)
{
    const char *dir = getenv("TMPDIR");
    snprintf(fuzz_model_path, sizeof fuzz_model_path, "%s/mbd-fuzz-XXXXXX%s",
             dir && *dir ? dir : "/tmp", suffix);
    const int fd = mkstemps(fuzz_model_path, (int)strlen(suffix));
    fuzz_require(fd >= 0, "mkstemps");
    close(fd);
    atexit(fuzz_remove_model_file);
}

static inline void fuzz_write_model_file(const uint8_t *data, size_t size)
{
    const int fd = open(fuzz_model_path, O_WRONLY | O_TRUNC);
    fuzz_require(fd >= 0, "open the temporary model file");
    for (size_t done = 0; done < size;) {
        const ssize_t n = write(fd, data + done, size - done);
        fuzz_require(n > 0, "write the temporary model file");
        done += (size_t)n;
    }
    close(fd);
}

/* A failed load's message: one line that starts with the file name. */
static inline void fuzz_check_load_message(const char *err)
{
    fuzz_check_message(err);
    fuzz_require(strncmp(err, fuzz_model_path, strlen(fuzz_model_path)) == 0,
                 "error message does not start with the file name");
}

static inline void fuzz_exercise_model(const mbd_model *model);

/* Loads the file with options and exercises what loads. */
static inline void fuzz_load_model_file(const mbd_load_options *options)
{
    char err[512] = "";
    mbd_model *model;
    mbd_model_load(fuzz_model_path, options, &model, err, sizeof err);
    if (!model) {
        fuzz_check_load_message(err);
        return;
    }
    fuzz_exercise_model(model);
    mbd_model_free(model);
}

/* Specs the spec target (and the corpus replay in tests/test_bad_input.c) passes over:
 * a '/' would name a file anywhere, and an item "n=..." over FUZZ_MAX_SPEC_BODIES (or too
 * long to read) is valid but only costs time. */
#define FUZZ_MAX_SPEC_BODIES 4000

/* Whether an item "n=..." of the spec asks for more than max_bodies bodies (or is too long
 * to read). */
static inline int fuzz_spec_too_large(const char *spec, long max_bodies)
{
    for (const char *item = strchr(spec, ':'); item; item = strchr(item + 1, ',')) {
        if (strncmp(item + 1, "n=", 2) != 0)
            continue;
        const char *digits = item + 3;
        while (*digits == '0')
            digits++;
        const size_t len = strspn(digits, "0123456789");
        if (len > 9 || (len > 0 && atol(digits) > max_bodies))
            return 1;
    }
    return 0;
}

static inline int fuzz_spec_skipped(const char *spec)
{
    return strchr(spec, '/') || fuzz_spec_too_large(spec, FUZZ_MAX_SPEC_BODIES);
}

/* A model with loops: the constrained solve (only dense and bodies have a route), the
 * violation, the rank and the loop wrenches. */
static inline void fuzz_exercise_loops(const mbd_model *model, mbd_work *work,
                                       const mbd_solver *solver, const double *q, const double *qd,
                                       const double *tau, double *qdd)
{
    const int m = mbd_model_nconstraints(model), nloops = mbd_model_nloops(model);
    double *buf = calloc((size_t)(3 * m + 6 * nloops), sizeof *buf);
    fuzz_require(buf != NULL, "allocation");
    double *lambda = buf, *phi = lambda + m, *phid = phi + m, *wrench = phid + m;
    const mbd_baumgarte stab = {10.0, 10.0};
    int status = mbd_forward_constrained(model, work, q, qd, tau, &stab, qdd, lambda);
    fuzz_require(fuzz_status_valid(status), "mbd_forward_constrained status");
    fuzz_require(mbd_solver_closes_loops(solver) || status == MBD_EUNSUPPORTED,
                 "a solver without a loop route solved a model with loops");
    for (int k = 0; status == MBD_OK && k < mbd_model_nv(model); k++)
        fuzz_require(isfinite(qdd[k]), "mbd_forward_constrained returned OK with a non-finite qdd");
    if (status == MBD_OK)
        fuzz_require(fuzz_status_valid(mbd_loop_wrenches(model, work, q, lambda, wrench)),
                     "mbd_loop_wrenches status");
    fuzz_require(fuzz_status_valid(mbd_constraint_violation(model, work, q, qd, phi, phid)),
                 "mbd_constraint_violation status");
    int rank = -1;
    status = mbd_constraint_rank(model, work, q, &rank);
    fuzz_require(fuzz_status_valid(status) && (status || (rank >= 0 && rank <= m)),
                 "mbd_constraint_rank");
    free(buf);
}

/* The batch of FUZZ_BATCH_STATES states (the state given, its velocities scaled by each
 * row) at the CPU's widest lanes, one thread, so that the lane kernels (batch_x4.c,
 * batch_x8.c) run on every model: whole lane groups and a tail. */
#define FUZZ_BATCH_STATES 9

static inline void fuzz_exercise_batch(const mbd_model *model, const mbd_solver *solver,
                                       const double *q, const double *qd, const double *tau)
{
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model), K = FUZZ_BATCH_STATES;
    mbd_batch *batch;
    const int created = mbd_batch_new(model, solver, 1, 0, &batch);
    fuzz_require(created == MBD_OK && batch != NULL, "mbd_batch_new");
    double *buf = malloc((size_t)K * (size_t)(nq + 4 * nv) * sizeof *buf);
    fuzz_require(buf != NULL, "allocation");
    double *qs = buf, *qds = qs + K * nq, *taus = qds + K * nv, *out = taus + K * nv;
    double *pd = out + K * nv;
    for (int k = 0; k < K; k++) {
        memcpy(qs + k * nq, q, (size_t)nq * sizeof *q);
        memcpy(taus + k * nv, tau, (size_t)nv * sizeof *tau);
        for (int j = 0; j < nv; j++)
            qds[k * nv + j] = qd[j] * (1.0 - 0.25 * k);
    }
    int status[FUZZ_BATCH_STATES];
    const unsigned forms = mbd_solver_formulations(solver);
    if (forms & MBD_ACCELERATION) {
        const int first = mbd_batch_forward(model, batch, K, qs, qds, taus, out, status);
        fuzz_require(fuzz_status_valid(first), "mbd_batch_forward status");
        for (int k = 0; k < K * nv; k++)
            fuzz_require(status[k / nv] != MBD_OK || isfinite(out[k]),
                         "mbd_batch_forward returned OK with a non-finite qdd");
    }
    if (forms & MBD_MOMENTUM) { /* the velocities serve as momenta */
        const int first =
            mbd_batch_forward_momentum(model, batch, K, qs, qds, taus, out, pd, status);
        fuzz_require(fuzz_status_valid(first), "mbd_batch_forward_momentum status");
        for (int k = 0; k < K * nv; k++)
            fuzz_require(status[k / nv] != MBD_OK || (isfinite(out[k]) && isfinite(pd[k])),
                         "mbd_batch_forward_momentum returned OK with a non-finite result");
    }
    free(buf);
    mbd_batch_free(batch);
}

static inline void fuzz_exercise_model(const mbd_model *model)
{
    const int nb = mbd_model_nbodies(model), nq = mbd_model_nq(model), nv = mbd_model_nv(model);
    fuzz_require(nb >= 1 && nq >= nb && nv >= nb, "model sizes");
    for (int i = 0; i < nb; i++) {
        const mbd_body_def *b = mbd_model_body(model, i);
        fuzz_require(b && b->name && b->parent >= -1 && b->parent < i, "body description");
    }
    for (int f = 0; f < mbd_model_nframes(model); f++) {
        const mbd_frame_def *fr = mbd_model_frame(model, f);
        fuzz_require(fr && fr->name && fr->body >= -1 && fr->body < nb, "frame description");
    }
    FILE *sink = fopen("/dev/null", "w");
    if (sink) {
        mbd_model_print(model, sink);
        fclose(sink);
    }
    if (nv > FUZZ_SOLVE_MAX_NV)
        return;
    double *buf = calloc((size_t)(nq + 9 * nv + 6 * nb + 2 * nv * nv), sizeof *buf);
    fuzz_require(buf != NULL, "allocation");
    double *q = buf, *qd = q + nq, *tau = qd + nv, *out = tau + nv, *pd = out + nv, *p = pd + nv;
    double *tau2 = p + nv, *qdd = tau2 + nv, *reactions = qdd + nv, *H = reactions + 6 * nb;
    double *C = H + nv * nv, *g = C + nv * nv, *Cqd = g + nv;
    for (int k = 0; k < nq; k++)
        q[k] = 0.3 * sin(1.0 + k);
    for (int k = 0; k < nv; k++) {
        qd[k] = 0.5 * cos(2.0 + k);
        tau[k] = 0.2 * sin(3.0 + k);
    }
    for (int s = 0; s < mbd_solver_count(); s++) {
        const mbd_solver *solver = mbd_solver_at(s);
        mbd_work *work;
        mbd_work_new(model, solver, &work);
        fuzz_require(work != NULL, "workspace");
        const unsigned forms = mbd_solver_formulations(solver);
        if (forms & MBD_ACCELERATION) {
            const int status = mbd_forward(model, work, q, qd, tau, out);
            fuzz_require(fuzz_status_valid(status), "mbd_forward status");
            for (int k = 0; status == MBD_OK && k < nv; k++)
                fuzz_require(isfinite(out[k]), "mbd_forward returned OK with a non-finite qdd");
        }
        if (forms & MBD_MOMENTUM) {
            int status = mbd_momentum(model, work, q, qd, p);
            fuzz_require(fuzz_status_valid(status), "mbd_momentum status");
            if (status == MBD_OK) {
                status = mbd_forward_momentum(model, work, q, p, tau, out, pd);
                fuzz_require(fuzz_status_valid(status), "mbd_forward_momentum status");
            }
        }
        if (mbd_model_nloops(model) > 0)
            fuzz_exercise_loops(model, work, solver, q, qd, tau, out);
        else
            fuzz_exercise_batch(model, solver, q, qd, tau);
        int status = mbd_inverse_dynamics(model, work, q, qd, qdd, tau2, reactions);
        fuzz_require(fuzz_status_valid(status), "mbd_inverse_dynamics status");
        status = mbd_mass_matrix(model, work, q, H);
        fuzz_require(fuzz_status_valid(status), "mbd_mass_matrix status");
        status = mbd_coefficients(model, work, q, qd, H, C, g, Cqd);
        fuzz_require(fuzz_status_valid(status), "mbd_coefficients status");
        status = mbd_mass_matrix_inverse(model, work, q, H); /* MBD_EINVAL but for sparse */
        fuzz_require(fuzz_status_valid(status), "mbd_mass_matrix_inverse status");
        for (int k = 0; status == MBD_OK && k < nv * nv; k++)
            fuzz_require(isfinite(H[k]),
                         "mbd_mass_matrix_inverse returned OK with a non-finite entry");
        double kinetic, potential;
        status = mbd_energy(model, work, q, qd, &kinetic, &potential);
        fuzz_require(fuzz_status_valid(status), "mbd_energy status");
        mbd_work_free(work);
    }
    free(buf);
}

#endif
