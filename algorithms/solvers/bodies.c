/* bodies.c: the separate-bodies solver, one state at a time (the recurrence and its steps:
 * bodies_kernels.h), and H^-1 b from its last two passes for closed loops. */
#include "internal.h"

#include <string.h>

#define MBD_LANES 1
#include "spatial/lane.h"
#include "solvers/bodies_kernels.h"
#include "spatial/lane_end.h"

/* x = H^-1 b: the last two passes again, with no velocity, gravity or bias (p^A = 0,
 * c = 0, tau = b), on the W, D^-1 and X of the preceding solve. Overwrites work->u, a and
 * inverse_forces. */
void bodies_inverse_times(const mbd_model *model, mbd_work *work, const double *b, double *x)
{
    const double zero[6] = {0};
    memset(work->inverse_forces, 0, (size_t)model->nb * sizeof *work->inverse_forces);
    for (int i = model->nb - 1; i >= 0; i--)
        DISPATCH_JOINT(model->joint_type[i], bias_force_step, model, work, work->inverse_forces,
                       work->D + model->d0[i], b, i);
    for (int i = 0; i < model->nb; i++)
        DISPATCH_JOINT(model->joint_type[i], acceleration_step, model, work, zero, NULL, x, i);
}

static int bodies_acc(const mbd_model *model, mbd_work *work, const double *qd, const double *tau,
                      double *qdd)
{
    return bodies_sweep(model, work, NULL, qd, tau, qdd);
}

static int bodies_forward(const mbd_model *model, mbd_work *work, const double *q,
                          const double *qd, const double *tau, double *qdd)
{
    return bodies_sweep(model, work, q, qd, tau, qdd);
}

const mbd_solver mbd_solver_bodies = {
    .name = "bodies",
    .summary = "separate-bodies sweep (Vereshchagin 1974, articulated-body recursion), O(N)",
    .solve_acc = bodies_acc,
    .forward_acc = bodies_forward,
    .inverse_times = bodies_inverse_times,
    .lane_kernels = LANES_BODIES,
    .loop_route = LOOPS_BODIES,
};
