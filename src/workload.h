/* workload.h: what mbd-bench and `mbd recommend` time: random states of one model,
 * evaluated by one solver in one formulation, one call at a time or as an OpenMP batch.
 * Every input is drawn (and, for the momentum form, p = H(q) qd computed) before timing. */
#ifndef MBD_WORKLOAD_H
#define MBD_WORKLOAD_H

#include "mbd.h"

/* Distinct states that the one-call body cycles through, so that every call does not
 * see the very same input. */
#define WORKLOAD_CALL_STATES 16

/* A solver in one of its formulations: "dense", "dense-momentum", "bodies", ... The
 * suffix appears only when the solver offers both forms. A batch runs one state at a time
 * (lanes 1) or, in the "-simd" variants, W states in lockstep (lanes 0: the batch API's
 * choice from the CPU). */
typedef struct {
    const mbd_solver *solver;
    mbd_formulation form;
    int lanes;
    char name[48];
    const mbd_derivatives_method *derivatives; /* non-NULL: the derivatives of qdd by this
                                                  method (mbd_forward_derivatives), one call */
} workload_variant;

/* Every registered solver in every formulation it offers, in table order; returns how
 * many (at most max). */
int workload_variants(workload_variant *out, int max);
/* The same, then for batches the "-simd" variants of those with a lane form on this CPU
 * (mbd_solver_lanes > 1), such as "bodies-simd". */
int workload_batch_variants(workload_variant *out, int max);

/* Every method of the derivatives' table, named after it, on a workspace of bodies (the
 * solver the automatic method differentiates); returns how many (at most max). */
int workload_derivative_variants(workload_variant *out, int max);

/* Whether the variant solves models with loops: the acceleration form of a solver with a
 * constrained route (dense, bodies). */
int workload_variant_closes_loops(const workload_variant *variant);

typedef struct {
    const mbd_model *model;
    workload_variant variant;
    int nstates;
    double *q;         /* (nstates x nq) */
    double *v;         /* (nstates x nv) qd, or p for the momentum form */
    double *tau;       /* (nstates x nv) */
    double *out;       /* (nstates x nv) qdd, or qd for the momentum form */
    double *pd;        /* (nstates x nv) momentum form only */
    double *jacobians; /* (3 x nv x nv) a derivatives variant's dqdd/dq, dqdd/dqd, dqdd/dtau */
    mbd_work **works;  /* (nworks) one per thread */
    int nworks;
    int threads;      /* threads of the batch body, 1..nworks */
    mbd_batch *batch; /* nworks threads, the variant's lanes; NULL for a model with loops */
} workload;

/* Draws nstates states from seed and allocates nworks workspaces. Returns MBD_OK or a
 * status (the workload is then freed). */
int workload_init(workload *w, const mbd_model *model, const workload_variant *variant, int nstates,
                  int nworks, unsigned long seed);
void workload_free(workload *w);

/* Baumgarte's terms of a model with loops (alpha = beta = 10 /s, as mbd's default). */
static const mbd_baumgarte workload_baumgarte = {10.0, 10.0};

/* Evaluates state s with work: mbd_forward, mbd_forward_momentum, for a model with loops
 * mbd_forward_constrained, or a derivatives variant's mbd_forward_derivatives. */
int workload_eval(const workload *w, mbd_work *work, int s);

/* timing_body: iteration i evaluates state i mod nstates with works[0]. */
int workload_call_body(void *w, long iterations);
/* timing_body: each iteration evaluates all nstates states as one batch of the batch API
 * (mbd_batch_forward, mbd_batch_forward_momentum) on w->threads threads; a model with
 * loops (which the batch API does not close) by one-state calls over w->threads OpenMP
 * threads, schedule(static), one workspace per thread. */
int workload_batch_body(void *w, long iterations);

/* OpenBLAS's own controls (libopenblas provides them; its cblas.h would bring all of
 * CBLAS). Batches pin it to one thread so that their threads do not each spawn more. */
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
char *openblas_get_config(void);
int openblas_get_parallel(void); /* 0 sequential, 1 pthreads, 2 OpenMP */

#endif
