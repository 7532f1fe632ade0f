/* bodies.c: the separate-bodies solver, one state at a time (the recurrence and its steps:
 * bodies_kernels.h), and H^-1 b from its last two passes for closed loops. */
#include "solvers/solvers.h"

#define MBD_LANES 1
#include "spatial/lane.h"
#include "solvers/bodies_kernels.h"
#include "spatial/lane_end.h"

/* The backward pass of H^-1 b: the bias forces' part alone, with no velocity, gravity or
 * bias (p^A = 0, c = 0, tau = b), on the W and D^-1 of the preceding solve; p_i in
 * work->inverse_forces, D_i^-1 u_i in work->u. */
static void inverse_bias_pass(const mbd_model *model, mbd_work *work, const double *b)
{
    for (int i = model->nb - 1; i >= 0; i--)
        DISPATCH_JOINT(model->joint_type[i], bias_force_step, model, work, work->inverse_forces,
                       work->D + model->d0[i], b, 1, i);
}

/* The force part of I m, where the rows and columns zero_a of I's A block and zero_c of
 * its C block are zero (I^a's along the joint's unit columns: inertia_zero_subspace). */
MBD_INLINE void inertia_force_part(double out[3], const mbd_inertia *I, const double *m,
                                   unsigned zero_a, unsigned zero_c)
{
    const unsigned support = 63u & ~(zero_a | zero_c << 3);
    for (int r = 0; r < 3; r++)
        out[r] = zero_c >> r & 1 ? 0.0 : inertia_force_row(I, m, r, support);
}

/* The force part of f_i = base_i + I^A_i a_i + p^A_i (RBDA section 7.3), the force across
 * joint i, from the last pass's a_i and the bias forces p: p^A_i, and where c is not NULL
 * (the sweep's c_i) p^A_i + I^a_i c_i below a root, as the backward pass leaves them in
 * work->f, so that I^a_i (a_i - c_i) is added (base NULL: zero; p may be work->f). At a root work->IA holds I^A_i;
 * elsewhere the sweep left I^a_i = I^A_i - U_i D_i^-1 U_i^T there, and with
 * qdd_i = D_i^-1 (u_i - U_i^T X_i a_lambda), I^A_i a_i = I^a_i a_i + U_i D_i^-1 u_i
 * (I^a_i S_i = 0; with a rotor's armature, I^a_i (a_i - S_i qdd_i), joint_has_armature),
 * u_i = b_i - S_i^T p^A_i. U_i D_i^-1 = X_i^-T W_i: its force part is E_i times W_i's. */
MBD_INLINE void reaction_force_step(const mbd_model *model, mbd_work *work, const double *b,
                                    const double *qdd, const double (*bias)[6],
                                    const double (*c)[6], const double (*base)[6], int i,
                                    const mbd_joint_type type)
{
    const int v0 = model->v0[i], n = joint_dofs(type), rotor = joint_has_armature(model, i);
    const double *a = motion_of(model, work->a, i), *p = bias[i];
    double *f = work->f[i] + 3, inertial[3], turned[3] = {0.0, 0.0, 0.0};
    if (model->parent[i] >= 0) {
        double transmitted[3] = {0.0, 0.0, 0.0};
        for (int k = 0; k < n; k++) {
            const double u = b[v0 + k] - column_dot(type, work->S + 6 * v0, k, p);
            for (int r = 0; r < 3; r++)
                transmitted[r] += work->U[6 * (v0 + k) + 3 + r] * u;
        }
        body_rotate(turned, model, work, i, type, 0, transmitted);
        double relative[6];
        for (int r = 0; r < 6; r++)
            relative[r] = c && !rotor && !(bias_zero_rows(type) >> r & 1) ? a[r] - c[i][r] : a[r];
        if (rotor) { /* p holds p^A alone (articulated_step) */
            for (int k = 0; k < n; k++)
                column_add(relative, type, work->S + 6 * v0, k, -qdd[v0 + k]);
            inertia_force_part(inertial, &work->IA[i], relative, 0, 0);
        } else {
            inertia_force_part(inertial, &work->IA[i], relative, zero_rows(type, 0),
                               zero_rows(type, 1));
        }
    } else
        inertia_force_part(inertial, &work->IA[i], a, 0, 0);
    for (int r = 0; r < 3; r++)
        f[r] = (base ? base[i][3 + r] : 0.0) + p[3 + r] + turned[r] + inertial[r];
}

/* x = H^-1 b: the last two passes again, on the X of the preceding solve; base not NULL:
 * also the force parts of work->f = those of base + the reactions of the accelerations x
 * alone (reaction_forces_plus_accelerations), from the last pass. Overwrites work->u, a and
 * inverse_forces. */
static void bodies_inverse(const mbd_model *model, mbd_work *work, const double *b, double *x,
                           const double (*base)[6])
{
    const double zero[6] = {0};
    inverse_bias_pass(model, work, b);
    for (int i = 0; i < model->nb; i++) {
        DISPATCH_JOINT(model->joint_type[i], acceleration_step, model, work, zero, NULL, x, i);
        if (base)
            DISPATCH_JOINT(model->joint_type[i], reaction_force_step, model, work, b, x,
                           (const double(*)[6])work->inverse_forces, NULL, base, i);
    }
}

/* The sweep, and the force parts of work->f = the reactions (those of RNEA at its qdd), from
 * its last pass and the bias forces that the backward pass left in work->f. */
static int bodies_acc_reactions(const mbd_model *model, mbd_work *work, const double *qd,
                                const double *tau, double *qdd)
{
    bodies_velocity_pass(model, work, NULL, qd);
    const int status = bodies_articulated_pass(model, work, tau, 1);
    if (status)
        return status;
    double a0[6] = {0.0, 0.0, 0.0};
    for (int r = 3; r < 6; r++)
        a0[r] = -model->gravity[r - 3];
    const double(*c)[6] = (const double(*)[6])work->c;
    for (int i = 0; i < model->nb; i++) {
        DISPATCH_JOINT(model->joint_type[i], acceleration_step, model, work, a0, c, qdd, i);
        DISPATCH_JOINT(model->joint_type[i], reaction_force_step, model, work, tau, qdd,
                       (const double(*)[6])work->f, c, NULL, i);
    }
    return MBD_OK;
}

/* The acceleration form only; the reactions at the kinematics of mbd_kinematics alone. */
static int bodies_solve_call(const mbd_model *model, mbd_work *work, const mbd_solve_call *call)
{
    return call->reactions ? bodies_acc_reactions(model, work, call->in, call->tau, call->out)
                           : bodies_sweep(model, work, call->q, call->in, call->tau, call->out, 1);
}

const mbd_solver mbd_solver_bodies = {
    .name = "bodies",
    .summary = "separate-bodies sweep (Vereshchagin 1974, articulated-body recursion), O(N)",
    .forms = MBD_ACCELERATION,
    .features = SOLVER_TAKES_Q | SOLVER_REACTIONS | SOLVER_INVERSE_REACTIONS,
    .solve = bodies_solve_call,
    .inverse = bodies_inverse,
    .lane_kernels = LANES_BODIES,
    .loop_route = LOOPS_BODIES,
    .gpu_kernels = GPU_BODIES,
};
