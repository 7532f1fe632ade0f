/* poisson_ldlt.c: the Poisson-impulse block LDL^T solver, one state at a time (the
 * recurrence and its steps: poisson_ldlt_kernels.h). */
#include "internal.h"

#include <string.h>

#define MBD_LANES 1
#include "spatial/lane.h"
#include "solvers/momentum_kernels.h"
#include "solvers/poisson_ldlt_kernels.h"
#include "spatial/lane_end.h"

/* qd = H^-1 b: the right-hand side's parts of the two passes again, on the L_i and V_i of
 * the preceding solve. Overwrites work->u, phi and v. */
static void ldlt_inverse_times(const mbd_model *model, mbd_work *work, const double *b, double *x)
{
    for (int i = model->nb - 1; i >= 0; i--) {
        start_force_sum(model, work->phi, i);
        DISPATCH_JOINT(model->joint_type[i], ldlt_reduce_step, model, work, work->phi, b, i);
    }
    for (int i = 0; i < model->nb; i++) {
        const int parent = model->parent[i];
        DISPATCH_JOINT(model->joint_type[i], ldlt_rate_step, model, work,
                       work->v[parent < 0 ? i : parent], x, work->v[i], i);
    }
}

static int ldlt_mom(const mbd_model *model, mbd_work *work, const double *p, const double *tau,
                    double *qd, double *pd)
{
    return ldlt_solve(model, work, NULL, p, tau, qd, pd);
}

const mbd_solver mbd_solver_poisson_ldlt = {
    .name = "poisson-ldlt",
    .summary = "Poisson-impulse block LDL^T (Ivanov 2017 sec. 4: Cholesky of S^T I^A S, rank-n downdate), O(N); momentum form",
    .solve_mom = ldlt_mom,
    .forward_mom = ldlt_solve,
    .inverse_times = ldlt_inverse_times,
    .lane_kernels = LANES_POISSON_LDLT,
};
