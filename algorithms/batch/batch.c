/* batch.c: K states per call (mbd_batch_*): OpenMP threads over groups of W states, each
 * group solved in lockstep by the solver's lane form (batch_x4.c, batch_x8.c) where it
 * has one, else state by state by the one-state solver; one workspace per thread. States
 * that a lane group could not solve (non-finite, singular) are solved again one at a
 * time, so that each gets its own status and the others keep their lane results. */
#include "batch/batch.h"

#include <omp.h>
#include <stdlib.h>
#include <unistd.h>

struct mbd_batch {
    const mbd_model *model;
    const mbd_solver *solver;
    int threads;
    const mbd_lane_form *form; /* NULL: one state at a time (lanes 1) */
    mbd_work **works;          /* (threads) */
    void **lane_works;         /* (threads) the form's workspaces */
};

/* The lane form of this width that the CPU can run, or NULL. */
static const mbd_lane_form *lane_form_for_cpu(int lanes)
{
    if (!cpu_runs_lanes(lanes))
        return NULL;
    return lanes == 8 ? &mbd_lane_form_x8 : &mbd_lane_form_x4;
}

/* The formulation that the solver has a lane form for, or 0. */
static mbd_formulation lane_formulation(const mbd_solver *solver)
{
    return solver->lane_kernels == LANES_BODIES ? MBD_ACCELERATION
           : solver->lane_kernels != LANES_NONE ? MBD_MOMENTUM
                                                : 0;
}

/* The widest lane form that the CPU runs, or NULL. */
static const mbd_lane_form *widest_lane_form(void)
{
    const mbd_lane_form *form = lane_form_for_cpu(8);
    return form ? form : lane_form_for_cpu(4);
}

int mbd_solver_lanes(const mbd_solver *solver, mbd_formulation form)
{
    const mbd_lane_form *widest = widest_lane_form();
    return solver && widest && lane_formulation(solver) == form ? widest->lanes : 1;
}

/* Whether the lane kernels cover the solver and model: every joint type and armature, but
 * no friction (its iteration is one-state only) and no passive forces (tau_p(q, qd) is
 * one state's: mbd_forward adds it). */
static int has_lane_form(const mbd_model *model, const mbd_solver *solver)
{
    return !model->has_friction && !model->has_passive && lane_formulation(solver);
}

/* Sets batch->form from the request; -1 if the CPU cannot run a forced width. */
static int choose_lanes(mbd_batch *batch, int lanes)
{
    if (lanes == 1)
        return 0;
    const mbd_lane_form *form = lanes ? lane_form_for_cpu(lanes) : widest_lane_form();
    if (lanes && !form)
        return -1;
    if (form && has_lane_form(batch->model, batch->solver))
        batch->form = form;
    return 0;
}

/* The batch's workspaces, one (and one of the lane form) per thread; -1: no memory. */
static int batch_works_new(mbd_batch *batch)
{
    batch->works = calloc((size_t)batch->threads, sizeof *batch->works);
    batch->lane_works = calloc((size_t)batch->threads, sizeof *batch->lane_works);
    if (!batch->works || !batch->lane_works)
        return -1;
    for (int t = 0; t < batch->threads; t++)
        if (mbd_work_new(batch->model, batch->solver, &batch->works[t]) != MBD_OK ||
            (batch->form &&
             !(batch->lane_works[t] = batch->form->work_new(batch->model, batch->solver))))
            return -1;
    return 0;
}

int mbd_batch_new(const mbd_model *model, const mbd_solver *solver, int threads, int lanes,
                  mbd_batch **out)
{
    if (out)
        *out = NULL;
    if (!out || !model || !solver || threads < 0 ||
        (lanes != 0 && lanes != 1 && lanes != 4 && lanes != 8))
        return MBD_EINVAL;
    mbd_batch *batch = calloc(1, sizeof *batch);
    if (!batch)
        return MBD_ENOMEM;
    batch->model = model;
    batch->solver = solver;
    batch->threads = threads ? threads : omp_get_max_threads();
    if (choose_lanes(batch, lanes)) {
        free(batch);
        return MBD_EUNSUPPORTED;
    }
    if (batch_works_new(batch) < 0) {
        mbd_batch_free(batch);
        return MBD_ENOMEM;
    }
    *out = batch;
    return MBD_OK;
}

void mbd_batch_free(mbd_batch *batch)
{
    if (!batch)
        return;
    for (int t = 0; t < batch->threads; t++) {
        if (batch->works)
            mbd_work_free(batch->works[t]);
        if (batch->lane_works && batch->form)
            batch->form->work_free(batch->lane_works[t]);
    }
    free(batch->works);
    free(batch->lane_works);
    free(batch);
}

int mbd_batch_lanes(const mbd_batch *batch) { return batch->form ? batch->form->lanes : 1; }
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

/* Whether the batch runs this formulation (z: momentum) in lanes. */
static int in_lanes(const mbd_batch *batch, const double *z)
{
    return batch->form && lane_formulation(batch->solver) == (z ? MBD_MOMENTUM : MBD_ACCELERATION);
}

/* Where a group's states lie: k0 .. k0 + count - 1; next_count and ahead as
 * mbd_lane_form's. */
typedef struct {
    int k0, count, next_count, ahead;
} group_span;

/* The group's states, except those in skip, by the lane form; returns the mask of those
 * it could not solve (all of them without a lane form). */
static unsigned solve_lanes(const mbd_model *model, const mbd_batch *batch, void *lane_work,
                            group_span span, unsigned skip, const double *q, const double *x,
                            const double *tau, double *y, double *z)
{
    const size_t nq = (size_t)model->nq, nv = (size_t)model->nv, k = (size_t)span.k0;
    if (!in_lanes(batch, z))
        return ((1u << span.count) - 1) & ~skip;
    return batch->form->solve(model, lane_work, span.count, skip, q + k * nq, x + k * nv,
                              tau ? tau + k * nv : NULL, y + k * nv, z ? z + k * nv : NULL,
                              span.next_count, span.ahead);
}

/* One group of states into rc (count statuses): in lanes, then one at a time those that
 * the lanes could not solve. A state that fails alone too (singular, non-finite) is left
 * out of a second lane pass over the others, so that a state's result never depends on
 * which states share its group. */
static void solve_group(const mbd_model *model, const mbd_batch *batch, int thread, group_span span,
                        const double *q, const double *x, const double *tau, double *y, double *z,
                        int *rc)
{
    mbd_work *work = batch->works[thread];
    void *lane_work = batch->lane_works[thread];
    const int k0 = span.k0, count = span.count;
    const unsigned again = solve_lanes(model, batch, lane_work, span, 0, q, x, tau, y, z);
    unsigned failed = 0;
    for (int w = 0; w < count; w++) {
        rc[w] =
            again >> w & 1 ? solve_state(model, work, (size_t)(k0 + w), q, x, tau, y, z) : MBD_OK;
        failed |= (unsigned)(rc[w] != MBD_OK) << w;
    }
    if (!in_lanes(batch, z) || !(again & ~failed) || !failed)
        return;
    const group_span alone = {k0, count, 0, 0};
    const unsigned still = solve_lanes(model, batch, lane_work, alone, failed, q, x, tau, y, z);
    for (int w = 0; w < count; w++)
        if (still >> w & 1)
            rc[w] = solve_state(model, work, (size_t)(k0 + w), q, x, tau, y, z);
}

/* Whether the batch's rows (in and out) outgrow the L2 cache (sysconf's size, 1 MiB
 * where it gives none), so that the lane groups fetch the next group's rows while they
 * compute (prefetch_next): below that they come from L2 anyway, and the prefetches cost
 * 1-6% (N = 10, 1024 states). */
static int rows_outgrow_l2(const mbd_model *model, int K, const double *tau, const double *z)
{
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    const size_t per_state = (size_t)model->nq + (size_t)model->nv * (2u + !!tau + !!z);
    return (double)K * (double)per_state * sizeof(double) > (l2 > 0 ? (double)l2 : 1048576.0);
}

/* Groups of W states over the threads (a fixed grouping, so that results do not depend
 * on the thread count), each thread a run of consecutive groups, so that each group
 * knows the one it solves next. The first failed state is found by a min-reduction of
 * k * 32 - status (statuses lie in -31..0), so that its status comes with it. */
static int batch_run(const mbd_model *model, mbd_batch *batch, int K, const double *q,
                     const double *x, const double *tau, double *y, double *z, int *status)
{
    if (!batch || batch->model != model || K < 0 || (K > 0 && (!q || !x || !y)))
        return MBD_EINVAL;
    const int W = mbd_batch_lanes(batch), groups = (K + W - 1) / W;
    const int fetch_ahead = rows_outgrow_l2(model, K, tau, z);
    long long first_failure = (long long)K * 32;
#pragma omp parallel num_threads(batch->threads) reduction(min : first_failure)
    {
        const int thread = omp_get_thread_num(), threads = omp_get_num_threads();
        const int end = (int)((long long)groups * (thread + 1) / threads);
        for (int g = (int)((long long)groups * thread / threads); g < end; g++) {
            const int k0 = g * W, count = K - k0 < W ? K - k0 : W, left = K - k0 - count;
            const group_span span = {k0, count, g + 1 < end ? (left < W ? left : W) : 0,
                                     fetch_ahead ? left : 0};
            int rc[MBD_MAX_LANES];
            solve_group(model, batch, thread, span, q, x, tau, y, z, rc);
            for (int w = 0; w < count; w++) {
                const int k = k0 + w;
                if (status)
                    status[k] = rc[w];
                if (rc[w] && (long long)k * 32 - rc[w] < first_failure)
                    first_failure = (long long)k * 32 - rc[w];
            }
        }
    }
    return -(int)(first_failure % 32);
}

int mbd_batch_forward(const mbd_model *model, mbd_batch *batch, int K, const double *q,
                      const double *qd, const double *tau, double *qdd, int *status)
{
    return batch_run(model, batch, K, q, qd, tau, qdd, NULL, status);
}

int mbd_batch_forward_momentum(const mbd_model *model, mbd_batch *batch, int K, const double *q,
                               const double *p, const double *tau, double *qd, double *pd,
                               int *status)
{
    if (pd == NULL && K > 0)
        return MBD_EINVAL;
    return batch_run(model, batch, K, q, p, tau, qd, pd, status);
}
