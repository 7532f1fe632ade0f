/* workload.c: random states, one evaluation, and the one-call and batch timing bodies. */
#include "workload.h"

#include "timing.h"

#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int workload_variants(workload_variant *out, int max)
{
    static const mbd_formulation forms[] = {MBD_ACCELERATION, MBD_MOMENTUM};
    int count = 0;
    for (int k = 0; k < mbd_solver_count(); k++) {
        const mbd_solver *solver = mbd_solver_at(k);
        const unsigned offered = mbd_solver_formulations(solver);
        for (int f = 0; f < 2 && count < max; f++) {
            if (!(offered & forms[f]))
                continue;
            workload_variant *v = &out[count++];
            v->solver = solver;
            v->form = forms[f];
            v->lanes = 1;
            v->derivatives = NULL;
            const int both = offered == (MBD_ACCELERATION | MBD_MOMENTUM);
            snprintf(v->name, sizeof v->name, "%s%s", mbd_solver_name(solver),
                     both && forms[f] == MBD_MOMENTUM ? "-momentum" : "");
        }
    }
    return count;
}

int workload_batch_variants(workload_variant *out, int max)
{
    const int count = workload_variants(out, max);
    int total = count;
    for (int k = 0; k < count && total < max; k++)
        if (mbd_solver_lanes(out[k].solver, out[k].form) > 1) {
            const workload_variant one_state = out[k];
            workload_variant *simd = &out[total++];
            *simd = one_state;
            simd->lanes = 0;
            snprintf(simd->name, sizeof simd->name, "%.40s-simd", one_state.name);
        }
    return total;
}

int workload_derivative_variants(workload_variant *out, int max)
{
    int count = 0;
    for (int k = 0; k < mbd_derivatives_method_count() && count < max; k++) {
        const mbd_derivatives_method *method = mbd_derivatives_method_at(k);
        out[count++] =
            (workload_variant){mbd_solver_find("bodies"), MBD_ACCELERATION, 1, "", method};
        snprintf(out[count - 1].name, sizeof out->name, "%s", mbd_derivatives_method_name(method));
    }
    return count;
}

/* splitmix64: a fixed seed gives the same states on every machine. */
static double uniform_pm1(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return 2.0 * (double)(z >> 11) * 0x1.0p-53 - 1.0;
}

static void fill_uniform(double *x, size_t n, uint64_t *state)
{
    for (size_t k = 0; k < n; k++)
        x[k] = uniform_pm1(state);
}

/* A model with loops is timed on its constraints: each q shrunk to a fiftieth (near q = 0,
 * where the loop models close) and projected, with its qd. Far off them a rank-deficient
 * Phi_q can make Baumgarte's terms ask for an acceleration that does not exist. */
static int project_states(workload *w)
{
    const size_t nq = (size_t)mbd_model_nq(w->model), nv = (size_t)mbd_model_nv(w->model);
    int status = MBD_OK;
    for (int s = 0; s < w->nstates && status == MBD_OK; s++) {
        double *q = w->q + (size_t)s * nq;
        for (size_t k = 0; k < nq; k++)
            q[k] *= 0.02;
        status = mbd_project_constraints(w->model, w->works[0], q, w->v + (size_t)s * nv, 1e-10);
    }
    return status;
}

/* The momentum form starts from p = H(q) qd of the drawn qd, so that both forms see the
 * same motion. */
static int convert_to_momenta(workload *w)
{
    const int nq = mbd_model_nq(w->model), nv = mbd_model_nv(w->model);
    double *qd = malloc((size_t)nv * sizeof *qd);
    int status = qd ? MBD_OK : MBD_ENOMEM;
    for (int s = 0; s < w->nstates && status == MBD_OK; s++) {
        double *v = w->v + (size_t)s * nv;
        memcpy(qd, v, (size_t)nv * sizeof *qd);
        status = mbd_momentum(w->model, w->works[0], w->q + (size_t)s * nq, qd, v);
    }
    free(qd);
    return status;
}

int workload_variant_closes_loops(const workload_variant *variant)
{
    return variant->form == MBD_ACCELERATION && mbd_solver_closes_loops(variant->solver);
}

static int allocate(workload *w)
{
    const size_t nq = (size_t)mbd_model_nq(w->model), nv = (size_t)mbd_model_nv(w->model);
    const size_t ns = (size_t)w->nstates;
    w->q = malloc(ns * (nq + 4 * nv) * sizeof(double));
    w->works = calloc((size_t)w->nworks, sizeof *w->works);
    if (!w->q || !w->works)
        return MBD_ENOMEM;
    w->v = w->q + ns * nq;
    w->tau = w->v + ns * nv;
    w->out = w->tau + ns * nv;
    w->pd = w->out + ns * nv;
    if (w->variant.derivatives && !(w->jacobians = malloc(3 * nv * nv * sizeof(double))))
        return MBD_ENOMEM;
    for (int t = 0; t < w->nworks; t++)
        if (mbd_work_new(w->model, w->variant.solver, &w->works[t]) != MBD_OK)
            return MBD_ENOMEM;
    if (mbd_model_nloops(w->model) == 0 && mbd_batch_new(w->model, w->variant.solver, w->nworks,
                                                         w->variant.lanes, &w->batch) != MBD_OK)
        return MBD_ENOMEM;
    return MBD_OK;
}

int workload_init(workload *w, const mbd_model *model, const workload_variant *variant, int nstates,
                  int nworks, unsigned long seed)
{
    memset(w, 0, sizeof *w);
    w->model = model;
    w->variant = *variant;
    w->nstates = nstates;
    w->nworks = nworks;
    w->threads = 1;
    int status = allocate(w);
    if (status == MBD_OK) {
        const size_t ns = (size_t)nstates;
        uint64_t rng = seed;
        fill_uniform(w->q, ns * (size_t)mbd_model_nq(model), &rng);
        fill_uniform(w->v, ns * (size_t)mbd_model_nv(model), &rng);
        fill_uniform(w->tau, ns * (size_t)mbd_model_nv(model), &rng);
        for (size_t k = 0; k < ns && status == MBD_OK; k++) /* unit quaternions, as MuJoCo's */
            status = mbd_normalize_positions(model, w->q + k * (size_t)mbd_model_nq(model));
        if (status == MBD_OK && mbd_model_nloops(model) > 0)
            status = project_states(w);
        if (status == MBD_OK && variant->form == MBD_MOMENTUM)
            status = convert_to_momenta(w);
    }
    if (status != MBD_OK)
        workload_free(w);
    return status;
}

void workload_free(workload *w)
{
    for (int t = 0; w->works && t < w->nworks; t++)
        mbd_work_free(w->works[t]);
    mbd_batch_free(w->batch);
    free(w->works);
    free(w->q);
    free(w->jacobians);
    memset(w, 0, sizeof *w);
}

int workload_eval(const workload *w, mbd_work *work, int s)
{
    const size_t nq = (size_t)mbd_model_nq(w->model), nv = (size_t)mbd_model_nv(w->model);
    const double *q = w->q + s * nq, *v = w->v + s * nv, *tau = w->tau + s * nv;
    double *out = w->out + s * nv, *d = w->jacobians;
    if (w->variant.derivatives)
        return mbd_forward_derivatives(w->model, work, q, v, tau, w->variant.derivatives, d,
                                       d + nv * nv, d + 2 * nv * nv);
    if (w->variant.form == MBD_MOMENTUM)
        return mbd_forward_momentum(w->model, work, q, v, tau, out, w->pd + s * nv);
    if (mbd_model_nloops(w->model) > 0)
        return mbd_forward_constrained(w->model, work, q, v, tau, &workload_baumgarte, out, NULL);
    return mbd_forward(w->model, work, q, v, tau, out);
}

int workload_call_body(void *ctx, long iterations)
{
    const workload *w = ctx;
    for (long i = 0; i < iterations; i++) {
        int status = workload_eval(w, w->works[0], (int)(i % w->nstates));
        if (status)
            return status;
        timing_clobber(); /* the outputs count as read: the call cannot be dropped */
    }
    return MBD_OK;
}

/* All states once; the least (most negative) status wins. */
static int batch_once(const workload *w)
{
    if (w->batch) {
        int status = w->variant.form == MBD_MOMENTUM
                         ? mbd_batch_forward_momentum(w->model, w->batch, w->nstates, w->q, w->v,
                                                      w->tau, w->out, w->pd, NULL)
                         : mbd_batch_forward(w->model, w->batch, w->nstates, w->q, w->v, w->tau,
                                             w->out, NULL);
        timing_clobber();
        return status;
    }
    int worst = MBD_OK;
#pragma omp parallel num_threads(w->threads) reduction(min : worst)
    {
        mbd_work *work = w->works[omp_get_thread_num()];
#pragma omp for schedule(static)
        for (int s = 0; s < w->nstates; s++) {
            int status = workload_eval(w, work, s);
            if (status < worst)
                worst = status;
        }
    }
    timing_clobber();
    return worst;
}

int workload_batch_body(void *ctx, long iterations)
{
    const workload *w = ctx;
    for (long i = 0; i < iterations; i++) {
        int status = batch_once(w);
        if (status)
            return status;
    }
    return MBD_OK;
}
