/* poisson_sweep.c: the Poisson-impulse sweep solver, one state at a time (the recurrence
 * and its steps: poisson_sweep_kernels.h). */
#include "internal.h"

#include <string.h>

#define MBD_LANES 1
#include "spatial/lane.h"
#include "solvers/momentum_kernels.h"
#include "solvers/poisson_sweep_kernels.h"
#include "spatial/lane_end.h"

/* The general 6x6 I^A_i of every body. */
static size_t sweep_scratch(const mbd_model *model) { return 36 * (size_t)model->nb; }

static int sweep_mom(const mbd_model *model, mbd_work *work, const double *p, const double *tau,
                     double *qd, double *pd)
{
    return sweep_solve(model, work, NULL, p, tau, qd, pd);
}

const mbd_solver mbd_solver_poisson_sweep = {
    .name = "poisson-sweep",
    .summary = "Poisson-impulse sweep (Ivanov 2017 sec. 3: explicit D^-1, 6x6 H_i), O(N); momentum form",
    .scratch_doubles = sweep_scratch,
    .solve_mom = sweep_mom,
    .forward_mom = sweep_solve,
    .lane_kernels = LANES_POISSON_SWEEP,
};
