/* poisson_ldlt.c: the Poisson-impulse block LDL^T solver, one state at a time (the
 * recurrence and its steps: poisson_ldlt_kernels.h). */
#include "internal.h"

#include <string.h>

#define MBD_LANES 1
#include "lane.h"
#include "momentum_kernels.h"
#include "poisson_ldlt_kernels.h"
#include "lane_end.h"

const mbd_solver mbd_solver_poisson_ldlt = {
    .name = "poisson-ldlt",
    .summary = "Poisson-impulse block LDL^T (Ivanov 2017 sec. 4: Cholesky of S^T I^A S, rank-n downdate), O(N); momentum form",
    .solve_mom = ldlt_mom,
};
