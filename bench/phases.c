/* phases.c: a classic RK4 step on y = (q, qd) or (q, p), and its phases timed apart.
 *
 *   K_s = f(Y_s),  Y_0 = y0,  Y_1 = y0 + h/2 K_0,  Y_2 = y0 + h/2 K_1,  Y_3 = y0 + h K_2,
 *   y1 = y0 + h/6 (K_0 + 2 K_1 + 2 K_2 + K_3),
 *
 * with f = mbd_kinematics(q), then mbd_solve (dq/dt = qd, dqd/dt = qdd) or
 * mbd_solve_momentum (dq/dt = qd, dp/dt = pd). Every step starts again from y0, so the
 * timed motion cannot drift or blow up however many steps are run. */
#include "phases.h"

#include <stdlib.h>
#include <string.h>

#define RK4_STEP 1e-3

typedef struct {
    const workload *w;
    int n;         /* nq = nv */
    double *y0;    /* (2n) */
    double *Y[4];  /* (2n each) stage states; Y[0] = y0 */
    double *K[4];  /* (2n each) stage derivatives */
    double *y1;    /* (2n) */
    double *block; /* the one allocation */
} rk4;

const char *rk4_phase_name(rk4_phase phase)
{
    static const char *const names[PHASE_COUNT] = {"integrator", "kinematics", "solve", "step"};
    return names[phase];
}

static int rk4_init(rk4 *r, const workload *w)
{
    const int n = mbd_model_nq(w->model);
    const size_t len = 2 * (size_t)n;
    r->w = w;
    r->n = n;
    r->block = malloc(9 * len * sizeof(double));
    if (!r->block)
        return MBD_ENOMEM;
    r->y0 = r->Y[0] = r->block;
    for (int s = 1; s < 4; s++)
        r->Y[s] = r->block + s * len;
    for (int s = 0; s < 4; s++)
        r->K[s] = r->block + (4 + s) * len;
    r->y1 = r->block + 8 * len;
    memcpy(r->y0, w->q, (size_t)n * sizeof(double));
    memcpy(r->y0 + n, w->v, (size_t)n * sizeof(double));
    return MBD_OK;
}

/* Y_s = y0 + c_s h K_{s-1} */
static void stage_state(const rk4 *r, int s)
{
    const double ch = (s == 3 ? 1.0 : 0.5) * RK4_STEP;
    for (int i = 0; i < 2 * r->n; i++)
        r->Y[s][i] = r->y0[i] + ch * r->K[s - 1][i];
}

static void final_update(const rk4 *r)
{
    const double h6 = RK4_STEP / 6;
    for (int i = 0; i < 2 * r->n; i++)
        r->y1[i] = r->y0[i] + h6 * (r->K[0][i] + 2 * r->K[1][i] + 2 * r->K[2][i] + r->K[3][i]);
}

static int kinematics_stage(const rk4 *r, int s)
{
    return mbd_kinematics(r->w->model, r->w->works[0], r->Y[s]);
}

/* After kinematics: K_s from the stage's qd or p. The acceleration form's dq/dt = qd is
 * a copy, counted here as part of the right-hand side. */
static int solve_stage(const rk4 *r, int s)
{
    const workload *w = r->w;
    const double *v = r->Y[s] + r->n;
    double *dq = r->K[s], *dv = r->K[s] + r->n;
    if (w->variant.form == MBD_MOMENTUM)
        return mbd_solve_momentum(w->model, w->works[0], v, w->tau, dq, dv);
    memcpy(dq, v, (size_t)r->n * sizeof *dq);
    return mbd_solve(w->model, w->works[0], v, w->tau, dv);
}

/* One step from y0 into y1. Without evaluate the stage derivatives of the previous step
 * stay in K: what remains is the integrator's own work. */
static int rk4_step(const rk4 *r, int evaluate)
{
    for (int s = 0; s < 4; s++) {
        if (s > 0)
            stage_state(r, s);
        int status = evaluate ? kinematics_stage(r, s) : MBD_OK;
        if (status == MBD_OK && evaluate)
            status = solve_stage(r, s);
        if (status)
            return status;
    }
    final_update(r);
    return MBD_OK;
}

/* A step's worth of one phase. The solve phase reuses the kinematics of the last stage
 * for every stage: a solve's cost does not depend on the values of q. */
static int phase_once(const rk4 *r, rk4_phase phase)
{
    int status = MBD_OK;
    switch (phase) {
    case PHASE_INTEGRATOR:
        return rk4_step(r, 0);
    case PHASE_STEP:
        return rk4_step(r, 1);
    case PHASE_KINEMATICS:
        for (int s = 0; s < 4 && status == MBD_OK; s++)
            status = kinematics_stage(r, s);
        return status;
    case PHASE_SOLVE:
        for (int s = 0; s < 4 && status == MBD_OK; s++)
            status = solve_stage(r, s);
        return status;
    case PHASE_COUNT:
        break;
    }
    return MBD_EINVAL;
}

typedef struct {
    const rk4 *r;
    rk4_phase phase;
} phase_ctx;

static int phase_body(void *ctx, long iterations)
{
    const phase_ctx *c = ctx;
    for (long i = 0; i < iterations; i++) {
        int status = phase_once(c->r, c->phase);
        if (status)
            return status;
        timing_clobber();
    }
    return MBD_OK;
}

int rk4_measure(const workload *w, rk4_phase phase, const timing_options *options, timing_step step,
                timing_result *result)
{
    if (mbd_model_nq(w->model) != mbd_model_nv(w->model))
        return MBD_EUNSUPPORTED;
    rk4 r;
    int status = rk4_init(&r, w);
    if (status == MBD_OK) /* a real step first: every phase then sees real stage data */
        status = rk4_step(&r, 1);
    phase_ctx ctx = {&r, phase};
    if (status == MBD_OK)
        status = step(options, phase_body, &ctx, result);
    free(r.block);
    return status;
}
