/* solvers.c: the workspace, the solver table and the public entry points. */
#include "internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const mbd_solver *const solver_table[] = {
    &mbd_solver_dense,
    &mbd_solver_bodies,
    &mbd_solver_poisson_sweep,
    &mbd_solver_poisson_ldlt,
    &mbd_solver_sparse,
};

#define SOLVER_COUNT ((int)(sizeof solver_table / sizeof solver_table[0]))

const char *mbd_strerror(int status)
{
    switch (status) {
#define MBD_TEXT_ROW(name, value, text) case name: return text;
        MBD_STATUS_LIST(MBD_TEXT_ROW)
#undef MBD_TEXT_ROW
    }
    return "unknown status";
}

int mbd_solver_count(void) { return SOLVER_COUNT + plugin_solver_count(); }

const mbd_solver *mbd_solver_at(int index)
{
    return index >= 0 && index < SOLVER_COUNT ? solver_table[index]
                                              : plugin_solver_at(index - SOLVER_COUNT);
}

const mbd_solver *mbd_solver_find(const char *name)
{
    for (int k = 0; k < mbd_solver_count(); k++)
        if (strcmp(mbd_solver_at(k)->name, name) == 0)
            return mbd_solver_at(k);
    return NULL;
}

const char *mbd_solver_name(const mbd_solver *solver) { return solver->name; }
const char *mbd_solver_summary(const mbd_solver *solver) { return solver->summary; }

unsigned mbd_solver_formulations(const mbd_solver *solver)
{
    return (solver->solve_acc || solver->plugin ? MBD_ACCELERATION : 0u) |
           (solver->solve_mom ? MBD_MOMENTUM : 0u);
}

/* Points w's arrays into base (NULL: only measures); returns the block's bytes. */
static size_t work_layout(mbd_work *w, const mbd_model *m, size_t scratch, size_t loop_scratch,
                          char *base)
{
    carved_block block = {.base = base};
#define CARVE_WORK_ARRAY(field, count) CARVE_ARRAY(&block, w, field, count);
    MBD_WORK_ARRAYS(CARVE_WORK_ARRAY, m, scratch, loop_scratch)
#undef CARVE_WORK_ARRAY
    return block.used;
}

int mbd_work_new(const mbd_model *model, const mbd_solver *solver, mbd_work **out)
{
    if (out)
        *out = NULL;
    if (!out || !model)
        return MBD_EINVAL;
    mbd_work *work = calloc(1, sizeof *work);
    if (!work)
        return MBD_ENOMEM;
    const size_t scratch = solver && solver->scratch_doubles ? solver->scratch_doubles(model) : 0;
    const size_t loop_scratch = loops_scratch_doubles(model, solver);
    const size_t bytes = work_layout(work, model, scratch, loop_scratch, NULL);
    char *base = aligned_alloc(64, bytes);
    if (!base) {
        free(work);
        return MBD_ENOMEM;
    }
    memset(base, 0, bytes);
    work_layout(work, model, scratch, loop_scratch, base);
    constant_kinematics(model, work);
    work->block = base;
    work->model = model;
    work->solver = solver;
    work->failed_body = -1;
    if (solver && solver->plugin && !(work->plugin_work = solver->plugin->work_new(model))) {
        mbd_work_free(work);
        return MBD_ENOMEM;
    }
    *out = work;
    return MBD_OK;
}

void mbd_work_free(mbd_work *work)
{
    if (!work)
        return;
    if (work->plugin_work)
        work->solver->plugin->work_free(work->plugin_work);
    plugin_derivative_work_free(work);
    free(work->derivative_scratch);
    free(work->passive_scratch);
    free(work->block);
    free(work);
}

int mbd_work_failed_body(const mbd_work *work) { return work->failed_body; }

int mbd_work_friction_iterations(const mbd_work *work) { return work->friction_iterations; }

static int require_solver(const mbd_model *model, const mbd_work *work, mbd_formulation form)
{
    if (!work || work->model != model || !work->solver)
        return MBD_EINVAL;
    return mbd_solver_formulations(work->solver) & form ? MBD_OK : MBD_EUNSUPPORTED;
}

/* mbd_solve after require_solver; q not NULL: by the solver's forward_acc, after
 * start_kinematics(q). */
static int solve_acc(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
                     const double *tau, double *qdd)
{
    if (check_finite(qd, model->nv) || (tau && check_finite(tau, model->nv)))
        return MBD_ENONFINITE;
    work->failed_body = -1;
    const int status = q                    ? work->solver->forward_acc(model, work, q, qd, tau, qdd)
                       : model->has_friction ? friction_solve_acc(model, work, qd, tau, qdd)
                                             : work->solver->solve_acc(model, work, qd, tau, qdd);
    if (status == MBD_OK && check_finite(qdd, model->nv))
        return MBD_ENONFINITE;
    return status;
}

/* The solve phases have no q, which springs read: models with passive forces run the
 * forward calls, which add them. */
int mbd_solve(const mbd_model *model, mbd_work *work, const double *qd, const double *tau,
              double *qdd)
{
    const int status = require_solver(model, work, MBD_ACCELERATION);
    if (status == MBD_OK && (work->solver->plugin || model->has_passive))
        return MBD_EUNSUPPORTED; /* a plugin has no solve phase of its own */
    return status ? status : solve_acc(model, work, NULL, qd, tau, qdd);
}

/* mbd_solve_momentum after require_solver; q as in solve_acc (forward_mom). */
static int solve_mom(const mbd_model *model, mbd_work *work, const double *q, const double *p,
                     const double *tau, double *qd, double *pd)
{
    if (check_finite(p, model->nv) || (tau && check_finite(tau, model->nv)))
        return MBD_ENONFINITE;
    work->failed_body = -1;
    const int status = q                    ? work->solver->forward_mom(model, work, q, p, tau, qd, pd)
                       : model->has_friction ? friction_solve_mom(model, work, p, tau, qd, pd)
                                             : work->solver->solve_mom(model, work, p, tau, qd, pd);
    if (status == MBD_OK && (check_finite(qd, model->nv) || check_finite(pd, model->nv)))
        return MBD_ENONFINITE;
    return status;
}

int mbd_solve_momentum(const mbd_model *model, mbd_work *work, const double *p,
                       const double *tau, double *qd, double *pd)
{
    const int status = require_solver(model, work, MBD_MOMENTUM);
    if (status == MBD_OK && model->has_passive)
        return MBD_EUNSUPPORTED;
    return status ? status : solve_mom(model, work, NULL, p, tau, qd, pd);
}

int mbd_forward(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
                const double *tau, double *qdd)
{
    int status = require_solver(model, work, MBD_ACCELERATION);
    if (status)
        return status;
    if (model->has_passive) { /* tau + tau_p(q, qd), from the kinematics at q */
        status = mbd_kinematics(model, work, q);
        if (status == MBD_OK)
            status = passive_add(model, work, q, qd, tau, work->passive_tau);
        if (status)
            return status;
        tau = work->passive_tau;
    }
    if (work->solver->plugin)
        return plugin_forward(model, work, q, qd, tau, qdd);
    const int fused = work->solver->forward_acc && !model->has_friction && !model->has_passive;
    if (!model->has_passive)
        status = fused ? start_kinematics(model, work, q) : mbd_kinematics(model, work, q);
    return status ? status : solve_acc(model, work, fused ? q : NULL, qd, tau, qdd);
}

/* pd += tau_p(q, qd): pd = tau + (terms of q and qd alone), and qd = H^-1 p does not
 * depend on tau, so the passive forces join after the solve, at its qd. */
static int add_passive_rate(const mbd_model *model, mbd_work *work, const double *q,
                            const double *qd, double *pd)
{
    const int status = passive_add(model, work, q, qd, NULL, work->passive_tau);
    for (int k = 0; k < model->nv && status == MBD_OK; k++)
        pd[k] += work->passive_tau[k];
    return status;
}

int mbd_forward_momentum(const mbd_model *model, mbd_work *work, const double *q,
                         const double *p, const double *tau, double *qd, double *pd)
{
    int status = require_solver(model, work, MBD_MOMENTUM);
    if (status)
        return status;
    const int fused = work->solver->forward_mom && !model->has_friction && !model->has_passive;
    status = fused ? start_kinematics(model, work, q) : mbd_kinematics(model, work, q);
    if (status == MBD_OK)
        status = solve_mom(model, work, fused ? q : NULL, p, tau, qd, pd);
    return status == MBD_OK && model->has_passive ? add_passive_rate(model, work, q, qd, pd)
                                                  : status;
}

/* The common start of the entry points below: a workspace of this model, position
 * kinematics at q, and finite rates (each of the nv-vectors given may be NULL). */
static int start_state(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
                       const double *qdd)
{
    if (!work || work->model != model)
        return MBD_EINVAL;
    int status = mbd_kinematics(model, work, q);
    if (status)
        return status;
    if ((qd && check_finite(qd, model->nv)) || (qdd && check_finite(qdd, model->nv)))
        return MBD_ENONFINITE;
    return MBD_OK;
}

int mbd_inverse_dynamics(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
                const double *qdd, double *tau, double *reactions)
{
    int status = start_state(model, work, q, qd, qdd);
    if (status == MBD_OK && model->has_passive) /* before RNEA: it leaves work->f */
        status = passive_add(model, work, q, qd, NULL, work->passive_tau);
    if (status)
        return status;
    rnea(model, work, qd, qdd, 1, tau);
    if (model->has_friction) { /* the actuator supplies what friction takes */
        friction_forces(model, work, qd, work->jv);
        for (int k = 0; k < model->nv; k++)
            tau[k] -= work->jv[k];
    }
    for (int i = 0; model->armature && i < model->nb; i++)
        for (int k = model->v0[i]; k < model->v0[i] + model->joint[i].nv; k++)
            tau[k] += model->armature[i] * qdd[k];
    if (model->has_passive) /* the passive forces do part of the work */
        for (int k = 0; k < model->nv; k++)
            tau[k] -= work->passive_tau[k];
    if (model->gravcomp) /* what holds the compensated weight is not the joints' to carry */
        for (int i = 0; i < model->nb; i++)
            for (int r = 0; r < 6; r++)
                work->f[i][r] -= work->gravcomp_f[i][r];
    if (reactions) /* into the user's body frames: n = Q n', f = Q f' */
        for (int i = 0; i < model->nb; i++) {
            mat3_apply(reactions + 6 * i, model->user_rotation[i], work->f[i]);
            mat3_apply(reactions + 6 * i + 3, model->user_rotation[i], work->f[i] + 3);
        }
    return check_finite(tau, model->nv) ? MBD_ENONFINITE : MBD_OK; /* finite input can overflow */
}

int mbd_position_rates(const mbd_model *model, const double *q, const double *v, double *qdot)
{
    if (check_finite(q, model->nq) || check_finite(v, model->nv))
        return MBD_ENONFINITE;
    for (int i = 0; i < model->nb; i++)
        if (!joint_coordinates_valid(model->joint_type[i], q + model->q0[i]))
            return MBD_EINVAL;
    for (int i = 0; i < model->nb; i++)
        joint_position_rates(qdot + model->q0[i], &model->joint[i], q + model->q0[i],
                             v + model->v0[i]);
    return MBD_OK;
}

void mbd_neutral_positions(const mbd_model *model, double *q)
{
    memset(q, 0, (size_t)model->nq * sizeof *q);
    for (int i = 0; i < model->nb; i++)
        if (joint_has_quaternion(model->joint_type[i]))
            q[model->q0[i] + model->joint[i].nq - 4] = 1.0;
}

int mbd_normalize_positions(const mbd_model *model, double *q)
{
    for (int i = 0; i < model->nb; i++) {
        const mbd_joint *joint = &model->joint[i];
        if (!joint_has_quaternion(joint->type))
            continue;
        double *quat = q + model->q0[i] + joint->nq - 4;
        if (!joint_coordinates_valid(joint->type, q + model->q0[i]))
            return MBD_EINVAL;
        const double norm = sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] +
                                 quat[3] * quat[3]);
        for (int k = 0; k < 4; k++)
            quat[k] /= norm;
    }
    return MBD_OK;
}

int mbd_mass_matrix(const mbd_model *model, mbd_work *work, const double *q, double *H)
{
    int status = start_state(model, work, q, NULL, NULL);
    if (status)
        return status;
    const size_t nv = (size_t)model->nv;
    crba(model, work, H);
    for (size_t r = 0; r < nv; r++) /* mirror the lower triangle */
        for (size_t c = 0; c <= r; c++)
            H[c * nv + r] = H[r * nv + c];
    return check_finite(H, model->nv * model->nv) ? MBD_ENONFINITE : MBD_OK;
}

int mbd_mass_matrix_inverse(const mbd_model *model, mbd_work *work, const double *q, double *Hinv)
{
    int status = start_state(model, work, q, NULL, NULL);
    if (status)
        return status;
    work->failed_body = -1;
    status = mass_matrix_inverse(model, work, Hinv);
    return status == MBD_OK && check_finite(Hinv, model->nv * model->nv) ? MBD_ENONFINITE : status;
}

int mbd_momentum(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
                 double *p)
{
    int status = start_state(model, work, q, qd, NULL);
    if (status)
        return status;
    kinematics_velocity(model, work, qd);
    subtree_momenta(model, work, work->f);
    for (int i = 0; i < model->nb; i++) {
        subspace_dot(p + model->v0[i], model->joint_type[i], work->S + 6 * model->v0[i],
                     work->f[i]);
        if (!joint_has_armature(model, i))
            continue;
        for (int k = model->v0[i]; k < model->v0[i] + model->joint[i].nv; k++)
            p[k] += model->armature[i] * qd[k]; /* the rotor's: (H + diag(armature)) qd */
    }
    return check_finite(p, model->nv) ? MBD_ENONFINITE : MBD_OK;
}

/* T = 1/2 sum v^T I v. V = -sum m g . x_com, with g in body axes (g_i = E_i g_lambda) and
 * h_i = g . (origin of body i) carried down the tree: h_i = h_lambda + g_lambda . r_i. */
int mbd_energy(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
               double *kinetic, double *potential)
{
    int status = start_state(model, work, q, qd, NULL);
    if (status)
        return status;
    kinematics_velocity(model, work, qd);
    double T = 0.0, V = 0.0;
    for (int i = 0; i < model->nb; i++) {
        const int p = model->parent[i];
        const double *g_parent = p < 0 ? model->gravity : work->a[p] + 3;
        const double h_parent = p < 0 ? 0.0 : work->a[p][0];
        double Iv[6];
        rigid_inertia_apply(Iv, &model->inertia[i], work->v[i]);
        T += 0.5 * dot6(work->v[i], Iv);
        work->a[i][0] = h_parent + vec3_dot(g_parent, work->X[i].r);
        mat3_apply(work->a[i] + 3, work->X[i].E, g_parent);
        V -= model->inertia[i].m * work->a[i][0] + vec3_dot(work->a[i] + 3, model->inertia[i].h);
        if (model->gravcomp) /* the compensated weight's */
            V += model->gravcomp[i].m * work->a[i][0] + vec3_dot(work->a[i] + 3, model->gravcomp[i].h);
        for (int k = model->v0[i]; model->armature && k < model->v0[i] + model->joint[i].nv; k++)
            T += 0.5 * model->armature[i] * qd[k] * qd[k];
    }
    *kinetic = T;
    *potential = V + passive_potential(model, q);
    return isfinite(*kinetic) && isfinite(*potential) ? MBD_OK : MBD_ENONFINITE;
}
