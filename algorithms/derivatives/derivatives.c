/* derivatives.c: the derivatives of the forward dynamics qdd = FD(q, qd, tau), by the
 * methods of one table (each in a file of its own), and the positions step q (+) v that
 * the derivatives with respect to q are taken along. */
#include "derivatives/derivatives.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const mbd_derivatives_method *const method_table[] = {
    &mbd_derivatives_analytic,
    &mbd_derivatives_automatic,
    &mbd_derivatives_finite_difference,
};

#define METHOD_COUNT ((int)(sizeof method_table / sizeof method_table[0]))

int mbd_derivatives_method_count(void) { return METHOD_COUNT + plugin_method_count(); }

const mbd_derivatives_method *mbd_derivatives_method_at(int index)
{
    return index >= 0 && index < METHOD_COUNT ? method_table[index]
                                              : plugin_method_at(index - METHOD_COUNT);
}

const mbd_derivatives_method *mbd_derivatives_method_find(const char *name)
{
    const mbd_derivatives_method *method;
    for (int k = 0; name && (method = mbd_derivatives_method_at(k)); k++)
        if (strcmp(method->name, name) == 0)
            return method;
    return NULL;
}

/* The method's call: a built-in's function or the plugin's. */
static int method_forward(const mbd_derivatives_method *method, const mbd_model *model,
                          mbd_work *work, const double *q, const double *qd, const double *tau,
                          double *dqdd_dq, double *dqdd_dqd, double *dqdd_dtau)
{
    if (method->plugin)
        return plugin_forward_derivatives(model, work, method->plugin, q, qd, tau, dqdd_dq,
                                          dqdd_dqd, dqdd_dtau);
    return method->forward(model, work, q, qd, tau, dqdd_dq, dqdd_dqd, dqdd_dtau);
}

const char *mbd_derivatives_method_name(const mbd_derivatives_method *method)
{
    return method->name;
}

const char *mbd_derivatives_method_summary(const mbd_derivatives_method *method)
{
    return method->summary;
}

/* out += A B, all nv x nv row-major, B's row k over its span of nonzeros alone: B is a
 * passive forces' Jacobian, diagonal for joint damping and springs, nonzero on a tendon's
 * or a gravity-compensated subtree's joints, so that nv^2 multiplications replace nv^3 on
 * most models. Each entry sums over k in increasing order, as the plain product. */
static void add_product(double *out, const double *A, const double *B, size_t nv)
{
    for (size_t k = 0; k < nv; k++) {
        const double *restrict b = B + k * nv;
        size_t lo = 0, hi = nv;
        while (lo < hi && b[lo] == 0.0)
            lo++;
        while (hi > lo && b[hi - 1] == 0.0)
            hi--;
        for (size_t r = 0; lo < hi && r < nv; r++) {
            double *restrict row = out + r * nv;
            const double a = A[r * nv + k];
            for (size_t c = lo; c < hi; c++)
                row[c] += a * b[c];
        }
    }
}

/* The method at tau + tau_p(q, qd), then the chain rule through the passive forces:
 * dqdd/dx += H^-1 dtau_p/dx, with H^-1 = dqdd/dtau. */
static int with_passive_forces(const mbd_model *model, mbd_work *work, const double *q,
                               const double *qd, const double *tau,
                               const mbd_derivatives_method *method, double *dqdd_dq,
                               double *dqdd_dqd, double *dqdd_dtau)
{
    const size_t nv = (size_t)model->nv;
    int status = mbd_kinematics(model, work, q);
    double *J = status ? NULL : passive_jacobians(work, q, qd);
    if (!J)
        return status ? status : MBD_ENOMEM;
    double *Hinv = dqdd_dtau ? dqdd_dtau : J + 2 * nv * nv, *total = J + 3 * nv * nv;
    status = passive_add(model, work, q, qd, tau, total);
    if (status == MBD_OK)
        status = method_forward(method, model, work, q, qd, total, dqdd_dq, dqdd_dqd, Hinv);
    if (status == MBD_OK && dqdd_dq)
        add_product(dqdd_dq, Hinv, J, nv);
    if (status == MBD_OK && dqdd_dqd)
        add_product(dqdd_dqd, Hinv, J + nv * nv, nv);
    return status;
}

/* out = quat exp(w / 2) (quaternion product): the rotation quat followed by the turn w
 * about body axes, exp((0, w) / 2) = (cos(t / 2), sin(t / 2) w / t), t = |w| (sin(t / 2) / t
 * is accurate however small t > 0 is; 1/2 at t = 0). */
static void quaternion_step(double out[4], const double quat[4], const double w[3])
{
    const double t = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    const double s = t > 0.0 ? sin(0.5 * t) / t : 0.5;
    const double e[4] = {cos(0.5 * t), s * w[0], s * w[1], s * w[2]};
    const double a = quat[0], b = quat[1], c = quat[2], d = quat[3];
    out[0] = a * e[0] - b * e[1] - c * e[2] - d * e[3];
    out[1] = a * e[1] + b * e[0] + c * e[3] - d * e[2];
    out[2] = a * e[2] - b * e[3] + c * e[0] + d * e[1];
    out[3] = a * e[3] + b * e[2] - c * e[1] + d * e[0];
}

static void joint_integrate(double *out, const mbd_joint *joint, const double *q, const double *v)
{
    switch (joint->type) {
    case MBD_SPHERICAL:
        quaternion_step(out, q, v);
        break;
    case MBD_FREE: { /* p + R v_O, then the quaternion (out may be q) */
        double R[9], Rv[3];
        quaternion_rotation(R, q + 3);
        mat3_apply(Rv, R, v + 3);
        for (int k = 0; k < 3; k++)
            out[k] = q[k] + Rv[k];
        quaternion_step(out + 3, q + 3, v);
        break;
    }
    default:
        for (int k = 0; k < joint->nv; k++)
            out[k] = q[k] + v[k];
        break;
    }
}

int mbd_integrate_positions(const mbd_model *model, const double *q, const double *v, double *out)
{
    if (!model || !q || !v || !out)
        return MBD_EINVAL;
    for (int i = 0; i < model->nb; i++)
        if (!joint_coordinates_valid(model->joint_type[i], q + model->q0[i]))
            return MBD_EINVAL;
    for (int i = 0; i < model->nb; i++)
        joint_integrate(out + model->q0[i], &model->joint[i], q + model->q0[i], v + model->v0[i]);
    return MBD_OK;
}

int mbd_forward_derivatives(const mbd_model *model, mbd_work *work, const double *q,
                            const double *qd, const double *tau,
                            const mbd_derivatives_method *method, double *dqdd_dq, double *dqdd_dqd,
                            double *dqdd_dtau)
{
    if (!model || !work || work->model != model || !method || !q || !qd)
        return MBD_EINVAL;
    if (model->has_friction || model->nloops > 0)
        return MBD_EUNSUPPORTED;
    if (check_finite(qd, model->nv) || (tau && check_finite(tau, model->nv)))
        return MBD_ENONFINITE;
    work->failed_body = -1;
    if (model->has_passive)
        return with_passive_forces(model, work, q, qd, tau, method, dqdd_dq, dqdd_dqd, dqdd_dtau);
    return method_forward(method, model, work, q, qd, tau, dqdd_dq, dqdd_dqd, dqdd_dtau);
}
