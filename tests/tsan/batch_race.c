/* batch_race: the OpenMP batch pattern of src/workload.c (one mbd_work per thread,
 * schedule(static), the model shared read-only) under ThreadSanitizer, built by
 * `make test-tsan` with clang, LLVM's libomp and its TSan annotations (libarcher, which
 * makes the runtime's own barriers and locks visible to TSan; libgomp is not instrumented).
 * Every solver, both formulations, 4 threads. With --shared-work all threads share ONE
 * workspace: a real race that TSan must report (the make target checks that it does, so a
 * silent checker cannot pass for a clean one). Then the batch API itself (mbd_batch_*,
 * with the SIMD lanes the CPU has) on 4 threads against 1. Exit 0: results identical to
 * 1 thread. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbd.h"

enum { NSTATES = 64, THREADS = 4 };

static int batch(const mbd_model *model, const mbd_solver *solver, int threads, int shared,
                 const double *q, const double *v, double *out, double *pd)
{
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
    const int momentum = !(mbd_solver_formulations(solver) & MBD_ACCELERATION);
    mbd_work *works[THREADS];
    for (int t = 0; t < threads; t++)
        if (shared && t > 0)
            works[t] = works[0];
        else
            mbd_work_new(model, solver, &works[t]);
    int worst = MBD_OK;
#pragma omp parallel num_threads(threads) reduction(min : worst)
    {
        mbd_work *work = works[omp_get_thread_num()];
#pragma omp for schedule(static)
        for (int s = 0; s < NSTATES; s++) {
            const double *qs = q + (size_t)s * nq, *vs = v + (size_t)s * nv;
            double *o = out + (size_t)s * nv, *p = pd + (size_t)s * nv;
            const int status = momentum ? mbd_forward_momentum(model, work, qs, vs, NULL, o, p)
                                        : mbd_forward(model, work, qs, vs, NULL, o);
            if (status < worst)
                worst = status;
        }
    }
    for (int t = 0; t < threads; t++)
        if (!shared || t == 0)
            mbd_work_free(works[t]);
    return worst;
}

/* The same states through the batch API (lanes 0: the lane forms where there are some). */
static int api_batch(const mbd_model *model, const mbd_solver *solver, int threads, const double *q,
                     const double *v, double *out, double *pd)
{
    mbd_batch *batch;
    mbd_batch_new(model, solver, threads, 0, &batch);
    if (!batch)
        return MBD_ENOMEM;
    const int status =
        mbd_solver_formulations(solver) & MBD_ACCELERATION
            ? mbd_batch_forward(model, batch, NSTATES, q, v, NULL, out, NULL)
            : mbd_batch_forward_momentum(model, batch, NSTATES, q, v, NULL, out, pd, NULL);
    mbd_batch_free(batch);
    return status;
}

int main(int argc, char **argv)
{
    const int shared = argc > 1 && strcmp(argv[1], "--shared-work") == 0;
    static const char *const specs[] = {"chain:n=30,joint=cardan",
                                        "tree:n=31,branching=2,skew=0.3"};
    int failures = 0;
    for (size_t m = 0; m < sizeof specs / sizeof specs[0]; m++) {
        char err[512];
        mbd_model *model;
        mbd_model_load(specs[m], NULL, &model, err, sizeof err);
        if (!model) {
            fprintf(stderr, "batch_race: %s\n", err);
            return 1;
        }
        const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
        double *q = malloc(sizeof(double) * NSTATES * (size_t)nq);
        double *v = malloc(sizeof(double) * NSTATES * (size_t)nv);
        double *buf = calloc(4 * NSTATES * (size_t)nv, sizeof(double));
        for (int k = 0; k < NSTATES * nq; k++)
            q[k] = sin(0.7 * k);
        for (int k = 0; k < NSTATES * nv; k++)
            v[k] = cos(1.3 * k);
        for (int k = 0; k < mbd_solver_count(); k++) {
            const mbd_solver *solver = mbd_solver_at(k);
            double *ref = buf, *got = buf + 2 * NSTATES * (size_t)nv;
            const size_t bytes = sizeof(double) * 2 * NSTATES * (size_t)nv;
            memset(buf, 0, 2 * bytes);
            const int s1 = batch(model, solver, 1, 0, q, v, ref, ref + NSTATES * (size_t)nv);
            const int s4 =
                batch(model, solver, THREADS, shared, q, v, got, got + NSTATES * (size_t)nv);
            int same = memcmp(ref, got, bytes) == 0;
            if (s1 != MBD_OK || s4 != MBD_OK || !same) {
                fprintf(stderr, "batch_race: %s, %s: status %d / %d, %s\n", specs[m],
                        mbd_solver_name(solver), s1, s4, same ? "identical" : "results differ");
                failures++;
            }
            if (shared)
                continue;
            const int a1 = api_batch(model, solver, 1, q, v, ref, ref + NSTATES * (size_t)nv);
            const int a4 = api_batch(model, solver, THREADS, q, v, got, got + NSTATES * (size_t)nv);
            same = memcmp(ref, got, bytes) == 0;
            if (a1 != MBD_OK || a4 != MBD_OK || !same) {
                fprintf(stderr, "batch_race: mbd_batch, %s, %s: status %d / %d, %s\n", specs[m],
                        mbd_solver_name(solver), a1, a4, same ? "identical" : "results differ");
                failures++;
            }
        }
        free(q);
        free(v);
        free(buf);
        mbd_model_free(model);
    }
    printf("batch_race: %d models x %d solvers, %d threads%s: %s\n",
           (int)(sizeof specs / sizeof specs[0]), mbd_solver_count(), THREADS,
           shared ? " sharing one workspace" : "", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
