/* ensemble.c: K runs of classic RK4 in lockstep on the batch solver (mbd_simulate_ensemble).
 *
 * Each step's four stages are one mbd_batch_forward each, over the rows of the runs still
 * going (the active list, in run order): a run that fails leaves the list at the end of
 * its step, so it costs nothing afterwards and the others keep their rows' contents.
 * Every operation on a run's numbers is elementwise on that run alone, so a run's results
 * are those of the same run integrated by itself, whatever K or the thread count.
 *
 * The state is (q, v) with q' = G(q) v (mbd_position_rates), as in mbd_simulate's RK4
 * (algorithms/simulate/integrate.c): q0's quaternions are normalized once, the integrated ones are
 * left to drift (the motion does not depend on |quat|), and every report carries a copy
 * with unit quaternions.
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
    int K, nq, nv;
    double *q, *v;        /* (K nq, K nv) the runs' states, by run */
    double *q_unit;       /* (K nq) q with unit quaternions, as reported */
    double *qs, *vs;      /* (K nq, K nv) a stage's state, by active row */
    double *qdot, *a;     /* (K nq, K nv) its slope G(qs) vs and acceleration */
    double *dq, *dv;      /* (K nq, K nv) the step's weighted sum of stage slopes */
    int *active, nactive; /* the runs still going, in run order */
    int *stage_status;    /* (K) by active row */
    int *status;          /* (K) by run */
    double *t_failed;     /* (K) by run */
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
        (opt->lanes != 0 && opt->lanes != 1 && opt->lanes != 4 && opt->lanes != 8))
        return MBD_EINVAL;
    const int supported =
        mbd_model_nloops(model) == 0 && (mbd_solver_formulations(solver) & MBD_ACCELERATION);
    return supported ? MBD_OK : MBD_EUNSUPPORTED;
}

static int allocate(ensemble *e, const mbd_solver *solver, const mbd_ensemble_options *opt)
{
    const size_t K = (size_t)e->K, q_rows = K * (size_t)e->nq, v_rows = K * (size_t)e->nv;
    mbd_batch_new(e->model, solver, opt->threads, opt->lanes, &e->batch);
    /* one more double, so that K = 0 allocates too; zeroed, so that a failed run's rows
     * that a stage leaves unwritten (its position rates) are still numbers */
    e->q = calloc(1, (5 * q_rows + 4 * v_rows + K + 1) * sizeof *e->q + 3 * K * sizeof(int));
    if (!e->batch || !e->q)
        return MBD_ENOMEM;
    double *p = e->q + q_rows;
    double **q_slots[] = {&e->q_unit, &e->qs, &e->qdot, &e->dq};
    double **v_slots[] = {&e->v, &e->vs, &e->a, &e->dv};
    for (size_t s = 0; s < sizeof q_slots / sizeof *q_slots; s++, p += q_rows)
        *q_slots[s] = p;
    for (size_t s = 0; s < sizeof v_slots / sizeof *v_slots; s++, p += v_rows)
        *v_slots[s] = p;
    e->t_failed = p;
    e->active = (int *)(e->t_failed + K);
    e->stage_status = e->active + K;
    e->status = e->stage_status + K;
    return MBD_OK;
}

/* A zero quaternion is left as it is: the first stage's batch call fails its run with
 * MBD_EINVAL, as it fails any bad state. */
static void start(ensemble *e, const double *q0, const double *qd0)
{
    e->nactive = e->K;
    if (e->K == 0) /* q0 and qd0 may be NULL then */
        return;
    memcpy(e->q, q0, (size_t)e->K * (size_t)e->nq * sizeof *e->q);
    memcpy(e->v, qd0, (size_t)e->K * (size_t)e->nv * sizeof *e->v);
    for (int k = 0; k < e->K; k++) {
        (void)mbd_normalize_positions(e->model, e->q + (size_t)k * e->nq);
        e->active[k] = k;
        e->status[k] = MBD_OK;
        e->t_failed[k] = NAN;
    }
}

/* out = y + c slope, or y itself where there is no slope (a step's first stage). */
static void add_scaled(double *out, const double *y, double c, const double *slope, int n)
{
    for (int i = 0; i < n; i++)
        out[i] = slope ? y[i] + c * slope[i] : y[i];
}

/* sum = w slope, plus sum unless first. */
static void add_slope(double *sum, int first, double w, const double *slope, int n)
{
    for (int i = 0; i < n; i++)
        sum[i] = (first ? 0.0 : sum[i]) + w * slope[i];
}

/* Active row j's position rates G(qs) vs: vs itself where nq == nv (no quaternions, G = I,
 * which spares a pass per stage), else the row of qdot. */
static const double *position_rates(const ensemble *e, int j)
{
    return e->nq == e->nv ? e->vs + (size_t)j * e->nv : e->qdot + (size_t)j * e->nq;
}

/* One stage: its state y + c (previous stage's slope) (y itself when first), one batch
 * call for the acceleration, the position rates, and w times the slope added to the
 * step's sum. */
static void stage(ensemble *e, int first, double c, double w)
{
    const size_t nq = (size_t)e->nq, nv = (size_t)e->nv;
    for (int j = 0; j < e->nactive; j++) { /* qs first: it reads the previous stage's vs */
        const size_t run = (size_t)e->active[j];
        add_scaled(e->qs + j * nq, e->q + run * nq, c, first ? NULL : position_rates(e, j), e->nq);
        add_scaled(e->vs + j * nv, e->v + run * nv, c, first ? NULL : e->a + j * nv, e->nv);
    }
    mbd_batch_forward(e->model, e->batch, e->nactive, e->qs, e->vs, NULL, e->a, e->stage_status);
    for (int j = 0; j < e->nactive; j++) {
        int *status = &e->stage_status[j];
        if (*status == MBD_OK && e->nq != e->nv)
            *status =
                mbd_position_rates(e->model, e->qs + j * nq, e->vs + j * nv, e->qdot + j * nq);
        add_slope(e->dq + j * nq, first, w, position_rates(e, j), e->nq);
        add_slope(e->dv + j * nv, first, w, e->a + j * nv, e->nv);
        const int k = e->active[j];
        if (*status != MBD_OK && e->status[k] == MBD_OK)
            e->status[k] = *status;
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
    const size_t nq = (size_t)e->nq, nv = (size_t)e->nv;
    int kept = 0;
    for (int j = 0; j < e->nactive; j++) {
        const int k = e->active[j];
        if (e->status[k] != MBD_OK) {
            e->t_failed[k] = t;
            continue;
        }
        add_scaled(e->q + k * nq, e->q + k * nq, 1.0, e->dq + j * nq, e->nq);
        add_scaled(e->v + k * nv, e->v + k * nv, 1.0, e->dv + j * nv, e->nv);
        e->active[kept++] = k;
    }
    e->nactive = kept;
}

/* The runs' states at t, their quaternions scaled to unit length. */
static int report(ensemble *e, double t, long m, mbd_ensemble_callback callback, void *ctx)
{
    memcpy(e->q_unit, e->q, (size_t)e->K * (size_t)e->nq * sizeof *e->q);
    for (int k = 0; k < e->K; k++)
        (void)mbd_normalize_positions(e->model, e->q_unit + (size_t)k * e->nq);
    const mbd_ensemble_state state = {.t = t,
                                      .step = m,
                                      .K = e->K,
                                      .q = e->q_unit,
                                      .qd = e->v,
                                      .status = e->status,
                                      .t_failed = e->t_failed};
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
                          const double *qd0, mbd_ensemble_callback callback, void *ctx, int *status)
{
    ensemble e = {.model = model, .K = K};
    int rc = check_options(model, solver, options, K, q0, qd0);
    if (rc == MBD_OK) {
        e.nq = mbd_model_nq(model);
        e.nv = mbd_model_nv(model);
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
