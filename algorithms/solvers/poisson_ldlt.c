/* poisson_ldlt.c: the Poisson-impulse block LDL^T solver, one state at a time (the
 * recurrence and its steps: poisson_ldlt_kernels.h). */
#include "internal.h"

#include <string.h>

#define MBD_LANES 1
#include "spatial/lane.h"
#include "solvers/momentum_kernels.h"
#include "solvers/poisson_ldlt_kernels.h"
#include "spatial/lane_end.h"

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
    .lane_kernels = LANES_POISSON_LDLT,
};
