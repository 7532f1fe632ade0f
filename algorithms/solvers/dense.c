/* dense.c: the dense baseline. H by CRBA, C by RNEA with qdd = 0, then LAPACK's
 * Cholesky: H = R^T R (dpotrf), qdd = H^-1 (tau - C) (dpotrs), as dense_factor and
 * dense_solve (dynamics/crba.c) do for the loops' dense route too. O(N^2) to build H,
 * O(N^3) to factor it. The momentum form reuses the factor: qd = H^-1 p, and pd from the
 * subtree momenta (momentum_rates). */
#include "solvers/solvers.h"

#include <string.h>

static size_t dense_scratch(const mbd_model *model)
{
    return (size_t)model->nv * (size_t)model->nv + (size_t)model->nv;
}

static int dense_acc(const mbd_model *model, mbd_work *work, const double *qd, const double *tau,
                     double *qdd)
{
    const int nv = model->nv;
    double *C = work->scratch + (size_t)nv * nv;
    memset(qdd, 0, (size_t)nv * sizeof *qdd);
    rnea(model, work, qd, qdd, 1, C);
    for (int k = 0; k < nv; k++)
        qdd[k] = (tau ? tau[k] : 0.0) - C[k];
    int status = dense_factor(model, work, work->scratch);
    return status ? status : dense_solve(model, work->scratch, 1, qdd);
}

static int dense_mom(const mbd_model *model, mbd_work *work, const double *p, const double *tau,
                     double *qd, double *pd)
{
    int status = dense_factor(model, work, work->scratch);
    if (status)
        return status;
    memcpy(qd, p, (size_t)model->nv * sizeof *qd);
    status = dense_solve(model, work->scratch, 1, qd);
    if (status)
        return status;
    momentum_rates_from_qd(model, work, qd, tau, pd);
    return MBD_OK;
}

static int dense_solve_call(const mbd_model *model, mbd_work *work, const mbd_solve_call *call)
{
    return call->form == MBD_MOMENTUM
               ? dense_mom(model, work, call->in, call->tau, call->out, call->rate)
               : dense_acc(model, work, call->in, call->tau, call->out);
}

/* The factor that either form left in scratch; dpotrs cannot fail on it. No reactions: base
 * unused. */
static void dense_inverse(const mbd_model *model, mbd_work *work, const double *b, double *x,
                          const double (*base)[6])
{
    (void)base;
    memcpy(x, b, (size_t)model->nv * sizeof *x);
    dense_solve(model, work->scratch, 1, x);
}

const mbd_solver mbd_solver_dense = {
    .name = "dense",
    .summary = "CRBA mass matrix + LAPACK Cholesky (dpotrf/dpotrs), O(N^3); both formulations",
    .scratch_doubles = dense_scratch,
    .forms = MBD_ACCELERATION | MBD_MOMENTUM,
    .solve = dense_solve_call,
    .inverse = dense_inverse,
    .loop_route = LOOPS_DENSE,
    .gpu_kernels = GPU_DENSE,
};
