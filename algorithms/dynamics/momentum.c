/* momentum.c: the momentum passes that the solvers with qd = H^-1 p share (dense.c,
 * sparse.c); the subtree momenta also give mbd_momentum its p = S^T mu (solvers.c):
 *
 *   leaves -> root:  mu_i = I_i v_i + sum_children X_j^T mu_j  (the subtree momenta),
 *                    (h^C_i, m^C_i) the subtree masses (subtree_mass_step)
 *   root -> leaves:  pd_i = tau_i + S_i^T f^B_i + (dv_i/dq_i)^T mu_i  (momentum_rate_step)
 * from v_i = X_i v_lambda + S_i qd_i (kinematics_velocity); O(N). The steps are
 * momentum_kernels.h's, which the Poisson solvers call within their own passes. */
#include "internal.h"

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
