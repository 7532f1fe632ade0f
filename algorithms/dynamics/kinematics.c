/* kinematics.c: position and velocity kinematics, and the passes that several solvers
 * share: RNEA (inverse dynamics with joint reactions), CRBA, p = H qd in O(N), the
 * momentum rates pd = Q + dT/dq, gravity and energy. */
#include "internal.h"

#include <math.h>
#include <string.h>

#define MBD_LANES 1
#include "spatial/lane.h"
#include "solvers/momentum_kernels.h"
#include "spatial/lane_end.h"

/* No early exit: inputs are normally finite, and the loop then vectorizes. */
int check_finite(const double *x, int n)
{
    int bad = 0;
    for (int k = 0; k < n; k++)
        bad |= !isfinite(x[k]);
    return bad ? MBD_ENONFINITE : MBD_OK;
}

double vector_norm(const double *x, int n)
{
    double sum = 0.0;
    for (int k = 0; k < n; k++)
        sum += x[k] * x[k];
    return sqrt(sum);
}

/* s[k] = sin q[k], c[k] = cos q[k] for n coordinates (the angles' are read), 4 in a
 * 256-bit vector where the CPU has AVX2 and FMA: 7% off a call on a 10-body revolute
 * chain, against a libm call per angle. */
static void coordinate_sincos(const double *q, int n, double *s, double *c)
{
    if (cpu_runs_lanes(4))
        sincos_x4(q, n, s, c);
    else
        for (int k = 0; k < n; k++)
            lane_sincos(q[k], s + k, c + k);
}

int start_kinematics(const mbd_model *model, mbd_work *work, const double *q)
{
    if (check_finite(q, model->nq))
        return MBD_ENONFINITE;
    for (int i = 0; i < model->nb; i++)
        if (!joint_coordinates_valid(model->joint_type[i], q + model->q0[i]))
            return MBD_EINVAL;
    const int from = model->angles_from, n = model->angles_to - from;
    coordinate_sincos(q + from, n, work->sin_q + from, work->cos_q + from);
    return MBD_OK;
}

/* X_i = X_J(q_i) X_T(i) and S_i(q_i) for every body. */
int mbd_kinematics(const mbd_model *model, mbd_work *work, const double *q)
{
    const int status = start_kinematics(model, work, q);
    if (status == MBD_OK)
        tree_kinematics(model, work, q);
    return status;
}

int body_of_dof(const mbd_model *model, int dof)
{
    int lo = 0, hi = model->nb - 1; /* v0 is increasing: the last body with v0 <= dof */
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (model->v0[mid] <= dof)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* v_i = X_i v_lambda + S_i qd_i */
void kinematics_velocity(const mbd_model *model, mbd_work *work, const double *qd)
{
    for (int i = 0; i < model->nb; i++) {
        const int p = model->parent[i];
        DISPATCH_JOINT(model->joint_type[i], body_velocity, work->v[i], model, work,
                       p < 0 ? NULL : work->v[p], qd, i);
    }
}

/* Forward: v_i, a_i = X_i a_lambda + S qdd + c_J + v_i x S qd, f_i = I a + v x* I v. */
MBD_INLINE void rnea_forward_step(const mbd_model *model, mbd_work *work, const double *qd,
                                  const double *qdd, const double *a0, int i,
                                  const mbd_joint_type type)
{
    const int p = model->parent[i], v0 = model->v0[i];
    double *v = work->v[i], *a = work->a[i], *f = work->f[i], c[6], vxIv[6];
    body_velocity(v, model, work, p < 0 ? NULL : work->v[p], qd, i, type);
    velocity_product(c, v, model, work, qd, i, type);
    xform_motion(a, &work->X[i], p < 0 ? a0 : work->a[p]);
    for (int r = 0; r < 6; r++)
        a[r] += c[r];
    for (int k = 0; k < joint_dofs(type); k++)
        column_add(a, type, work->S + 6 * v0, k, qdd[v0 + k]);
    rigid_inertia_apply(f, &model->inertia[i], a);
    rigid_bias_force(vxIv, &model->inertia[i], v);
    for (int r = 0; r < 6; r++)
        f[r] += vxIv[r];
}

/* Backward: tau_i = S^T f_i, f_lambda += X^T f_i. */
MBD_INLINE void rnea_backward_step(const mbd_model *model, mbd_work *work, double *tau, int i,
                                   const mbd_joint_type type)
{
    const int p = model->parent[i];
    subspace_dot(tau + model->v0[i], type, work->S + 6 * model->v0[i], work->f[i]);
    if (p >= 0) {
        double fp[6];
        xform_force_t(fp, &work->X[i], work->f[i]);
        for (int r = 0; r < 6; r++)
            work->f[p][r] += fp[r];
    }
}

/* Gravity enters as a_0 = -a_g. */
void rnea(const mbd_model *model, mbd_work *work, const double *qd, const double *qdd,
          int with_gravity, double *tau)
{
    const double g = with_gravity ? 1.0 : 0.0;
    const double a0[6] = {0, 0, 0, -g * model->gravity[0], -g * model->gravity[1],
                          -g * model->gravity[2]};
    for (int i = 0; i < model->nb; i++)
        DISPATCH_JOINT(model->joint_type[i], rnea_forward_step, model, work, qd, qdd, a0, i);
    for (int i = model->nb - 1; i >= 0; i--)
        DISPATCH_JOINT(model->joint_type[i], rnea_backward_step, model, work, tau, i);
}

/* I^C_i = I_i + sum_children X^T I^C_j X; H_ii = S_i^T I^C_i S_i; then F = I^C_i S_i is
 * carried towards the root: H_{lambda,i} = S_lambda^T (X^T F). Sets the lower triangle
 * of the row-major H (the upper triangle of the same array read column-major). */
void crba(const mbd_model *model, mbd_work *work, double *H)
{
    const int nv = model->nv;
    memset(H, 0, (size_t)nv * (size_t)nv * sizeof *H); /* entries of unrelated bodies stay 0 */
    for (int i = model->nb - 1; i >= 0; i--) {
        const int ni = model->joint[i].nv, vi = model->v0[i];
        start_inertia_sum(model, work, i, 0);
        double F[MBD_MAX_JOINT_DOF][6], Ft[6];
        const mbd_joint_type type = model->joint_type[i];
        for (int k = 0; k < ni; k++)
            inertia_times_column(F[k], &work->IA[i], type, work->S + 6 * vi, k);
        for (int k = 0; k < ni; k++)
            subspace_dot(H + (size_t)(vi + k) * nv + vi, type, work->S + 6 * vi, F[k]);
        for (int j = i; model->parent[j] >= 0; j = model->parent[j]) {
            const int p = model->parent[j];
            for (int k = 0; k < ni; k++) {
                xform_force_t(Ft, &work->X[j], F[k]);
                memcpy(F[k], Ft, sizeof Ft);
                subspace_dot(H + (size_t)(vi + k) * nv + model->v0[p], model->joint_type[p],
                             work->S + 6 * model->v0[p], F[k]);
            }
        }
        if (model->parent[i] >= 0)
            carry_inertia(model, work, i, &work->IA[i], 0, 0, 0);
    }
}

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
