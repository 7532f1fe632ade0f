/* batch.c: K states per call (mbd_batch_*): OpenMP threads over the states, one
 * workspace per thread, each state solved by the one-state solver. */
#include "internal.h"

#include <omp.h>
#include <stdlib.h>

struct mbd_batch {
    const mbd_model *model;
    const mbd_solver *solver;
    int threads, lanes;
    mbd_work **works; /* (threads) */
};

mbd_batch *mbd_batch_new(const mbd_model *model, const mbd_solver *solver, int threads,
                         int lanes)
{
    if (!model || !solver || threads < 0 || lanes < 0 || lanes > 1)
        return NULL;
    mbd_batch *batch = calloc(1, sizeof *batch);
    if (!batch)
        return NULL;
    batch->model = model;
    batch->solver = solver;
    batch->threads = threads ? threads : omp_get_max_threads();
    batch->lanes = 1;
    batch->works = calloc((size_t)batch->threads, sizeof *batch->works);
    if (!batch->works) {
        free(batch);
        return NULL;
    }
    for (int t = 0; t < batch->threads; t++)
        if (!(batch->works[t] = mbd_work_new(model, solver))) {
            mbd_batch_free(batch);
            return NULL;
        }
    return batch;
}

void mbd_batch_free(mbd_batch *batch)
{
    if (!batch)
        return;
    for (int t = 0; batch->works && t < batch->threads; t++)
        mbd_work_free(batch->works[t]);
    free(batch->works);
    free(batch);
}

int mbd_batch_lanes(const mbd_batch *batch) { return batch->lanes; }
int mbd_batch_threads(const mbd_batch *batch) { return batch->threads; }

/* One state's call on a thread's workspace: momentum form when z (pd) is given. */
static int solve_state(const mbd_model *model, mbd_work *work, size_t k, const double *q,
                       const double *x, const double *tau, double *y, double *z)
{
    const size_t nq = (size_t)model->nq, nv = (size_t)model->nv;
    const double *tau_k = tau ? tau + k * nv : NULL;
    return z ? mbd_forward_momentum(model, work, q + k * nq, x + k * nv, tau_k, y + k * nv,
                                    z + k * nv)
             : mbd_forward(model, work, q + k * nq, x + k * nv, tau_k, y + k * nv);
}

/* Rows of K states over the threads. The first failed state is found by a min-reduction
 * of k * 32 - status (statuses lie in -31..0), so that its status comes with it. */
static int batch_run(const mbd_model *model, mbd_batch *batch, int K, const double *q,
                     const double *x, const double *tau, double *y, double *z, int *status)
{
    if (!batch || batch->model != model || K < 0 || (K > 0 && (!q || !x || !y)))
        return MBD_EINVAL;
    long long first_failure = (long long)K * 32;
#pragma omp parallel num_threads(batch->threads) reduction(min : first_failure)
    {
        mbd_work *work = batch->works[omp_get_thread_num()];
#pragma omp for schedule(static)
        for (int k = 0; k < K; k++) {
            const int rc = solve_state(model, work, (size_t)k, q, x, tau, y, z);
            if (status)
                status[k] = rc;
            if (rc && (long long)k * 32 - rc < first_failure)
                first_failure = (long long)k * 32 - rc;
        }
    }
    return -(int)(first_failure % 32);
}

int mbd_batch_forward(const mbd_model *model, mbd_batch *batch, int K, const double *q,
                      const double *qd, const double *tau, double *qdd, int *status)
{
    return batch_run(model, batch, K, q, qd, tau, qdd, NULL, status);
}

int mbd_batch_forward_momentum(const mbd_model *model, mbd_batch *batch, int K,
                               const double *q, const double *p, const double *tau,
                               double *qd, double *pd, int *status)
{
    if (pd == NULL && K > 0)
        return MBD_EINVAL;
    return batch_run(model, batch, K, q, p, tau, qd, pd, status);
}
