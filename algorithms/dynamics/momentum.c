/* momentum.c: the momentum passes that the solvers with qd = H^-1 p share (dense.c,
 * sparse.c); the subtree momenta also give mbd_momentum its p = S^T mu (below, with
 * mbd_energy):
 *
 *   leaves -> root:  mu_i = I_i v_i + sum_children X_j^T mu_j  (the subtree momenta),
 *                    (h^C_i, m^C_i) the subtree masses (subtree_mass_step)
 *   root -> leaves:  pd_i = tau_i + S_i^T f^B_i + (dv_i/dq_i)^T mu_i  (momentum_rate_step)
 * from v_i = X_i v_lambda + S_i qd_i (kinematics_velocity); O(N). The steps are
 * momentum_kernels.h's, which the Poisson solvers call within their own passes. */
#include "dynamics/dynamics.h"

#include <math.h>
#include <string.h>

#define MBD_LANES 1
#include "spatial/lane.h"
#include "solvers/momentum_kernels.h"
#include "spatial/lane_end.h"

/* mu_i = I_i v_i + sum_children X_j^T mu_j: the momentum of the subtree rooted at i. */
void subtree_momenta(const mbd_model *model, mbd_work *work, double (*mu)[6])
{
    for (int i = 0; i < model->nb; i++)
        rigid_inertia_apply(mu[i], &model->inertia[i], work->v[i]);
    for (int i = model->nb - 1; i >= 0; i--) {
        const int p = model->parent[i];
        if (p >= 0) {
            double t[6];
            xform_force_t(t, &work->X[i], mu[i]);
            for (int r = 0; r < 6; r++)
                mu[p][r] += t[r];
        }
    }
}

void momentum_rates_from_qd(const mbd_model *model, mbd_work *work, const double *qd,
                            const double *tau, double *pd)
{
    kinematics_velocity(model, work, qd);
    subtree_momenta(model, work, work->f);
    for (int i = model->nb - 1; i >= 0; i--)
        DISPATCH_JOINT(model->joint_type[i], subtree_mass_step, model, work, i);
    for (int i = 0; i < model->nb; i++)
        DISPATCH_JOINT(model->joint_type[i], momentum_rate_step, model, work, work->f[i],
                       work->v[i], model->parent[i] < 0 ? NULL : work->a[model->parent[i]],
                       work->a[i], qd, tau, pd, i);
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
            V += model->gravcomp[i].m * work->a[i][0] +
                 vec3_dot(work->a[i] + 3, model->gravcomp[i].h);
        for (int k = model->v0[i]; model->armature && k < model->v0[i] + model->joint[i].nv; k++)
            T += 0.5 * model->armature[i] * qd[k] * qd[k];
    }
    *kinetic = T;
    *potential = V + passive_potential(model, q);
    return isfinite(*kinetic) && isfinite(*potential) ? MBD_OK : MBD_ENONFINITE;
}
