/* poisson_ldlt.c: the Poisson-impulse block LDL^T solver, one state at a time (the
 * recurrence and its steps: poisson_ldlt_kernels.h). */
#include "solvers/solvers.h"

#include <string.h>

#define MBD_LANES 1
#include "spatial/lane.h"
#include "solvers/momentum_kernels.h"
#include "solvers/poisson_ldlt_kernels.h"
#include "spatial/lane_end.h"

/* qd = H^-1 b: the right-hand side's parts of the two passes again, on the L_i and V_i of
 * the preceding solve. Overwrites work->u, phi and v. base not NULL: also the force parts of
 * work->f = those of base + the reactions of the accelerations x alone.
 * With b a generalized force and no velocity or gravity terms, the passes solve the impulse
 * problem H x = b: x plays qd, the body motions v_i = X_i v_lambda + S_i x_i are the
 * accelerations a_i of x, and the subtree momentum mu_i = I^A_i v_i + phi_i is
 * sum_{j in subtree(i)} X_ji^T I_j a_j, the force that RNEA's backward pass carries across
 * joint i, f_i = I_i a_i + sum_children X_c^T f_c, without its bias terms. Its force
 * part: three rows of I^A_i v_i. */
static void ldlt_inverse(const mbd_model *model, mbd_work *work, const double *b, double *x,
                         const double (*base)[6])
{
    for (int i = model->nb - 1; i >= 0; i--) {
        start_force_sum(model, work->phi, i);
        DISPATCH_JOINT(model->joint_type[i], ldlt_reduce_step, model, work, work->phi, b, i);
    }
    for (int i = 0; i < model->nb; i++) {
        const int parent = model->parent[i];
        DISPATCH_JOINT(model->joint_type[i], ldlt_rate_step, model, work,
                       work->v[parent < 0 ? i : parent], x, work->v[i], i);
        if (base)
            for (int r = 0; r < 3; r++)
                work->f[i][3 + r] = base[i][3 + r] + work->phi[i][3 + r] +
                                    inertia_force_row(&work->IA[i], work->v[i], r, 63u);
    }
}

/* The momentum form only. */
static int ldlt_solve_call(const mbd_model *model, mbd_work *work, const mbd_solve_call *call)
{
    return ldlt_solve(model, work, call->q, call->in, call->tau, call->out, call->rate);
}

const mbd_solver mbd_solver_poisson_ldlt = {
    .name = "poisson-ldlt",
    .summary =
        "Poisson-impulse block LDL^T (Ivanov 2017 sec. 4: Cholesky of S^T I^A S, rank-n downdate), O(N); momentum form",
    .forms = MBD_MOMENTUM,
    .features = SOLVER_TAKES_Q | SOLVER_INVERSE_REACTIONS,
    .solve = ldlt_solve_call,
    .inverse = ldlt_inverse,
    .lane_kernels = LANES_POISSON_LDLT,
    .gpu_kernels = GPU_POISSON_LDLT,
};
