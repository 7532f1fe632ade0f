/* ensemble.c: K runs of classic RK4 in lockstep on the batch solver (mbd_simulate_ensemble).
 *
 * Each step's four stages are one mbd_batch_forward each, over the rows of the runs still
 * going (the active list, in run order): a run that fails leaves the list at the end of
 * its step, so it costs nothing afterwards and the others keep their rows' contents.
 * Every operation on a run's numbers is elementwise on that run alone, so a run's results
 * are those of the same run integrated by itself, whatever K or the thread count.
 */
#include "mbd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* More steps than this would mean dt at the rounding level of t1. */
#define MAX_STEPS 1e15

typedef struct {
    const mbd_model *model;
    mbd_batch *batch;
    int K, n;
    double *q, *v;         /* (K n) the runs' states, by run */
    double *qs, *vs, *a;   /* (K n) a stage's state and acceleration, by active row */
    double *dq, *dv;       /* (K n) the step's weighted sum of stage slopes, by active row */
    int *active, nactive;  /* the runs still going, in run order */
    int *stage_status;     /* (K) by active row */
    int *status;           /* (K) by run */
    double *t_failed;      /* (K) by run */
} ensemble;

long mbd_ensemble_steps(const mbd_ensemble_options *options)
{
    return (long)ceil(options->t1 / options->dt * (1.0 - 1e-12));
}

static int check_options(const mbd_model *model, const mbd_solver *solver,
                         const mbd_ensemble_options *opt, int K, const double *q0,
                         const double *qd0)
{
    if (!model || !solver || !opt || K < 0 || (K > 0 && (!q0 || !qd0)) ||
        !(opt->t1 > 0.0 && isfinite(opt->t1)) || !(opt->dt > 0.0 && isfinite(opt->dt)) ||
        opt->t1 / opt->dt > MAX_STEPS || opt->report_every < 1 || opt->threads < 0 ||
        opt->lanes < 0)
        return MBD_EINVAL;
    const int supported = mbd_model_nq(model) == mbd_model_nv(model) &&
                          mbd_model_nloops(model) == 0 &&
                          (mbd_solver_formulations(solver) & MBD_ACCELERATION);
    return supported ? MBD_OK : MBD_EUNSUPPORTED;
}

static int allocate(ensemble *e, const mbd_solver *solver, const mbd_ensemble_options *opt)
{
    const size_t rows = (size_t)e->K * (size_t)e->n;
    e->batch = mbd_batch_new(e->model, solver, opt->threads, opt->lanes);
    /* one more double, so that K = 0 allocates too */
    e->q = malloc((7 * rows + (size_t)e->K + 1) * sizeof *e->q + 3 * (size_t)e->K * sizeof(int));
    if (!e->batch || !e->q)
        return MBD_ENOMEM;
    double *p = e->q;
    double **slots[] = {&e->v, &e->qs, &e->vs, &e->a, &e->dq, &e->dv};
    for (size_t s = 0; s < sizeof slots / sizeof *slots; s++)
        *slots[s] = p += rows;
    e->t_failed = p + rows;
    e->active = (int *)(e->t_failed + e->K);
    e->stage_status = e->active + e->K;
    e->status = e->stage_status + e->K;
    return MBD_OK;
}

static void start(ensemble *e, const double *q0, const double *qd0)
{
    const size_t rows = (size_t)e->K * (size_t)e->n;
    e->nactive = e->K;
    if (e->K == 0) /* q0 and qd0 may be NULL then */
        return;
    memcpy(e->q, q0, rows * sizeof *e->q);
    memcpy(e->v, qd0, rows * sizeof *e->v);
    for (int k = 0; k < e->K; k++) {
        e->active[k] = k;
        e->status[k] = MBD_OK;
        e->t_failed[k] = NAN;
    }
}

/* One stage: its state y + c (previous stage's slope) (y itself when first), one batch
 * call for the acceleration, and w times the slope added to the step's sum. */
static void stage(ensemble *e, int first, double c, double w)
{
    const int n = e->n;
    for (int j = 0; j < e->nactive; j++) {
        const size_t row = (size_t)j * n, run = (size_t)e->active[j] * n;
        for (int i = 0; i < n; i++) {
            e->qs[row + i] = first ? e->q[run + i] : e->q[run + i] + c * e->vs[row + i];
            e->vs[row + i] = first ? e->v[run + i] : e->v[run + i] + c * e->a[row + i];
        }
    }
    mbd_batch_forward(e->model, e->batch, e->nactive, e->qs, e->vs, NULL, e->a,
                      e->stage_status);
    for (int j = 0; j < e->nactive; j++) {
        const size_t row = (size_t)j * n;
        for (int i = 0; i < n; i++) {
            e->dq[row + i] = (first ? 0.0 : e->dq[row + i]) + w * e->vs[row + i];
            e->dv[row + i] = (first ? 0.0 : e->dv[row + i]) + w * e->a[row + i];
        }
        const int k = e->active[j];
        if (e->stage_status[j] != MBD_OK && e->status[k] == MBD_OK)
            e->status[k] = e->stage_status[j];
    }
}

/* One RK4 step of length h from t: the runs that failed in it keep their state and
 * leave the active list (the row buffers need no compaction: stage 1 refills them). */
static void step(ensemble *e, double t, double h)
{
    stage(e, 1, 0.0, h / 6.0);
    stage(e, 0, 0.5 * h, h / 3.0);
    stage(e, 0, 0.5 * h, h / 3.0);
    stage(e, 0, h, h / 6.0);
    int kept = 0;
    for (int j = 0; j < e->nactive; j++) {
        const int k = e->active[j];
        if (e->status[k] != MBD_OK) {
            e->t_failed[k] = t;
            continue;
        }
        const size_t row = (size_t)j * e->n, run = (size_t)k * e->n;
        for (int i = 0; i < e->n; i++) {
            e->q[run + i] += e->dq[row + i];
            e->v[run + i] += e->dv[row + i];
        }
        e->active[kept++] = k;
    }
    e->nactive = kept;
}

static int report(const ensemble *e, double t, long m, mbd_ensemble_callback callback,
                  void *ctx)
{
    const mbd_ensemble_state state = {.t = t, .step = m, .K = e->K, .q = e->q, .qd = e->v,
                                      .status = e->status, .t_failed = e->t_failed};
    return callback ? callback(&state, ctx) : MBD_OK;
}

static int run(ensemble *e, const mbd_ensemble_options *opt, mbd_ensemble_callback callback,
               void *ctx)
{
    const long steps = mbd_ensemble_steps(opt);
    int rc = report(e, 0.0, 0, callback, ctx);
    for (long m = 1; m <= steps && rc == MBD_OK; m++) {
        const double t0 = (double)(m - 1) * opt->dt;
        const double t = m == steps ? opt->t1 : (double)m * opt->dt;
        step(e, t0, m == steps ? opt->t1 - t0 : opt->dt);
        if (m % opt->report_every == 0 || m == steps)
            rc = report(e, t, m, callback, ctx);
    }
    return rc;
}

static int first_failure(const ensemble *e)
{
    for (int k = 0; k < e->K; k++)
        if (e->status[k] != MBD_OK)
            return e->status[k];
    return MBD_OK;
}

int mbd_simulate_ensemble(const mbd_model *model, const mbd_solver *solver,
                          const mbd_ensemble_options *options, int K, const double *q0,
                          const double *qd0, mbd_ensemble_callback callback, void *ctx,
                          int *status)
{
    ensemble e = {.model = model, .K = K};
    int rc = check_options(model, solver, options, K, q0, qd0);
    if (rc == MBD_OK) {
        e.n = mbd_model_nv(model);
        rc = allocate(&e, solver, options);
    }
    if (rc == MBD_OK) {
        start(&e, q0, qd0);
        rc = run(&e, options, callback, ctx);
        if (rc == MBD_OK)
            rc = first_failure(&e);
        if (status)
            memcpy(status, e.status, (size_t)K * sizeof *status);
    }
    mbd_batch_free(e.batch);
    free(e.q);
    return rc;
}
