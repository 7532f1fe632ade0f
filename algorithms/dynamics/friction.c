/* friction.c: joint friction coupled to the joint reactions (Zhao and Gu), for every solver.
 *
 * Coordinate k of joint i has the unit axis a_k of its motion-subspace column S_k (the
 * angular part for a turning coordinate, the linear part for a sliding one) and the
 * reaction force f_i of the joint (the force part of the wrench that RNEA leaves in
 * work->f), both in body i's coordinates. With N_k = |f_i - (f_i . a_k) a_k|,
 *
 *   tau_f,k = -mu rho N_k tanh(qd_k / v_s) - b qd_k,   rho = r (turning) or 1 (sliding).
 *
 * The reactions depend on qdd, and qdd on tau_f: H qdd + C = tau + tau_f(f(qdd)).
 * Fixed-point iteration on the friction forces:
 *
 *   tau_f,0 = -b qd;   qdd_k = FD(tau + tau_f,k);   f_k = RNEA(q, qd, qdd_k);
 *   tau_f,k+1 = tau_f(qd, f_k),
 *
 * stopping when the change d_k = max |tau_f,k+1 - tau_f,k| is <= TOLERANCE (1 + max
 * |tau_f,k+1|), or <= FLOOR_TOLERANCE (1 + max |tau_f,k+1|) with d_k > d_k-1 / 2: the
 * rounding floor of the solve, which long chains with an ill-conditioned H reach above
 * TOLERANCE (a chain of 1000 links stalls near 1e-11 relative). The answer is qdd_k, whose
 * friction reproduces itself to that tolerance. The map is a contraction when friction
 * couples weakly; for large mu it may have no or several fixed points (Painleve), and
 * after MAX_ITERATIONS (or a non-finite step) the solve fails with MBD_EFRICTION, naming
 * the body whose joint's friction changed most.
 *
 * FD is the solver's own acceleration solve; a momentum-only solver gives
 * qdd = H^-1 (tau + tau_f - C qd - g) as the velocity qd = H^-1 p of its momentum solve
 * with p = tau + tau_f - RNEA(q, qd, 0). Without Coulomb friction tau_f = -b qd needs
 * no iteration. */
#include "internal.h"

#include <math.h>
#include <string.h>

#define TOLERANCE 1e-12
#define FLOOR_TOLERANCE 1e-9
#define MAX_ITERATIONS 100

/* The work->jv vectors. */
enum { JV_TOTAL, JV_FRICTION, JV_NEXT, JV_BIAS, JV_RHS, JV_ACCEL, JV_USED };
_Static_assert(JV_USED <= JV_COUNT, "work->jv holds JV_COUNT vectors");

static double *jv(const mbd_work *work, int k)
{
    return work->jv + (size_t)k * (size_t)work->model->nv;
}

/* Revolute and Cardan coordinates turn, prismatic ones slide; a cylindrical joint turns
 * (k = 0), then slides (k = 1). */
static int coordinate_turns(mbd_joint_type type, int k)
{
    return type == MBD_REVOLUTE || type == MBD_CARDAN || (type == MBD_CYLINDRICAL && k == 0);
}

void friction_forces(const mbd_model *model, const mbd_work *work, const double *qd,
                     double *tau_f)
{
    for (int i = 0; i < model->nb; i++) {
        const mbd_friction *fr = &model->defs[i].friction;
        const double *force = work->f[i] + 3;
        for (int k = 0; k < model->joint[i].nv; k++) {
            const int dof = model->v0[i] + k;
            const int turns = coordinate_turns(model->joint_type[i], k);
            tau_f[dof] = -fr->viscous * qd[dof];
            if (fr->coulomb == 0.0)
                continue;
            const double *axis = work->S + 6 * dof + (turns ? 0 : 3);
            const double along = vec3_dot(force, axis);
            double normal[3];
            for (int r = 0; r < 3; r++)
                normal[r] = force[r] - along * axis[r];
            const double N = sqrt(vec3_dot(normal, normal)), arm = turns ? fr->radius : 1.0;
            tau_f[dof] -= fr->coulomb * arm * N * tanh(qd[dof] / fr->smoothing);
        }
    }
}

static void viscous_forces(const mbd_model *model, const double *qd, double *tau_f)
{
    for (int i = 0; i < model->nb; i++)
        for (int k = 0; k < model->joint[i].nv; k++)
            tau_f[model->v0[i] + k] = -model->defs[i].friction.viscous * qd[model->v0[i] + k];
}

/* total = tau + tau_f (tau may be NULL). */
static void add_tau(const mbd_model *model, double *total, const double *tau, const double *tau_f)
{
    for (int k = 0; k < model->nv; k++)
        total[k] = (tau ? tau[k] : 0.0) + tau_f[k];
}

/* qdd = FD(total); pd_scratch is overwritten by a momentum-only solver. Such a solver
 * needs JV_BIAS = RNEA(q, qd, 0) first. */
static int accelerations(const mbd_model *model, mbd_work *work, const double *qd,
                         const double *total, double *qdd, double *pd_scratch)
{
    if (work->solver->solve_acc)
        return work->solver->solve_acc(model, work, qd, total, qdd);
    double *rhs = jv(work, JV_RHS);
    const double *bias = jv(work, JV_BIAS);
    for (int k = 0; k < model->nv; k++)
        rhs[k] = total[k] - bias[k];
    return work->solver->solve_mom(model, work, rhs, NULL, qdd, pd_scratch);
}

/* The fixed point above: leaves tau_f in JV_FRICTION and qdd = FD(tau + tau_f). */
static int iterate(const mbd_model *model, mbd_work *work, const double *qd, const double *tau,
                   double *qdd, double *pd_scratch)
{
    double *total = jv(work, JV_TOTAL), *tau_f = jv(work, JV_FRICTION), *next = jv(work, JV_NEXT);
    if (!work->solver->solve_acc) {
        double *zero = jv(work, JV_RHS);
        memset(zero, 0, (size_t)model->nv * sizeof *zero);
        rnea(model, work, qd, zero, 1, jv(work, JV_BIAS));
    }
    viscous_forces(model, qd, tau_f);
    double previous = INFINITY;
    for (int it = 1;; it++) {
        add_tau(model, total, tau, tau_f);
        const int status = accelerations(model, work, qd, total, qdd, pd_scratch);
        if (status)
            return status;
        rnea(model, work, qd, qdd, 1, next);
        friction_forces(model, work, qd, next);
        double change = 0.0, size = 0.0;
        int worst = 0;
        for (int k = 0; k < model->nv; k++) {
            const double step = fabs(next[k] - tau_f[k]);
            if (!(step <= change)) /* NaN counts as the worst */
                change = step, worst = k;
            size = fmax(size, fabs(next[k]));
        }
        work->friction_iterations = it;
        if (change <= TOLERANCE * (1.0 + size) ||
            (change <= FLOOR_TOLERANCE * (1.0 + size) && change > 0.5 * previous))
            return MBD_OK;
        if (it == MAX_ITERATIONS || !isfinite(change)) {
            work->failed_body = body_of_dof(model, worst);
            return MBD_EFRICTION;
        }
        memcpy(tau_f, next, (size_t)model->nv * sizeof *tau_f);
        previous = change;
    }
}

int friction_solve_acc(const mbd_model *model, mbd_work *work, const double *qd,
                       const double *tau, double *qdd)
{
    work->friction_iterations = 0;
    if (model->has_coulomb)
        return iterate(model, work, qd, tau, qdd, NULL);
    double *total = jv(work, JV_TOTAL), *tau_f = jv(work, JV_FRICTION);
    viscous_forces(model, qd, tau_f);
    add_tau(model, total, tau, tau_f);
    return work->solver->solve_acc(model, work, qd, total, qdd);
}

/* qd = H^-1 p does not depend on tau: one solve gives it, then tau_f at qd, then pd. */
int friction_solve_mom(const mbd_model *model, mbd_work *work, const double *p,
                       const double *tau, double *qd, double *pd)
{
    work->friction_iterations = 0;
    double *total = jv(work, JV_TOTAL), *tau_f = jv(work, JV_FRICTION);
    int status = work->solver->solve_mom(model, work, p, tau, qd, pd);
    if (status == MBD_OK && model->has_coulomb)
        status = iterate(model, work, qd, tau, jv(work, JV_ACCEL), pd);
    else if (status == MBD_OK)
        viscous_forces(model, qd, tau_f);
    if (status)
        return status;
    add_tau(model, total, tau, tau_f);
    return work->solver->solve_mom(model, work, p, total, qd, pd);
}
