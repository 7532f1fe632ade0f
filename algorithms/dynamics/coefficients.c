/* coefficients.c: the coefficients of H(q) qdd + C(q, qd) qd + g(q) = tau (Telegin 2021).
 *
 * H by CRBA (with armature); g = RNEA(q, 0, 0) with gravity, less the passive forces
 * tau_p(q, qd) where the model has any (springs, dampers, gravity compensation). The velocity terms h(qd) = RNEA(q, qd, 0)
 * without gravity are a quadratic form in qd,
 *
 *   h_i(qd) = sum_jk c_ijk qd_j qd_k,   c_ijk = 1/2 (dH_ij/dq_k + dH_ik/dq_j - dH_jk/dq_i),
 *
 * and the Christoffel symbols c_ijk are symmetric in j, k, so h alone fixes their bilinear
 * form B_i(x, y) = sum_jk c_ijk x_j y_k by polarization, B(x, y) = (h(x + y) - h(x - y)) / 4:
 * an identity of quadratic forms, exact up to rounding (no derivative is approximated).
 * Column j of the Christoffel Coriolis matrix C_ij = sum_k c_ijk qd_k is then
 *
 *   C e_j = B(s e_j, qd) / s = (h(qd + s e_j) - h(qd - s e_j)) / (4 s),
 *
 * with s = max_k |qd_k|, so that the two terms are of the size of h(qd): 2 nv RNEA passes,
 * O(N^2). C(q, 0) = 0 exactly. C qd is the product of the C returned, so that it checks C. */
#include "dynamics/dynamics.h"

#include <math.h>
#include <string.h>

int mbd_coefficients(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
                     double *H, double *C, double *g, double *Cqd)
{
    int status = mbd_mass_matrix(model, work, q, H); /* checks work and q, sets kinematics */
    if (status)
        return status;
    const int nv = model->nv;
    if (check_finite(qd, nv))
        return MBD_ENONFINITE;
    if (model->nq != model->nv) /* Christoffel symbols need qd = dq/dt, not body velocities */
        return MBD_EUNSUPPORTED;
    double *zero = work->jv, *x = zero + nv, *plus = x + nv, *minus = plus + nv;
    memset(zero, 0, (size_t)nv * sizeof *zero);
    if (model->has_passive) { /* g takes the passive forces: -tau_p(q, qd) */
        status = passive_add(model, work, q, qd, NULL, work->passive_tau);
        if (status)
            return status;
    }
    rnea(model, work, zero, zero, 1, g);
    for (int k = 0; model->has_passive && k < nv; k++)
        g[k] -= work->passive_tau[k];
    double s = 0.0;
    for (int k = 0; k < nv; k++)
        s = fmax(s, fabs(qd[k]));
    memcpy(x, qd, (size_t)nv * sizeof *x);
    memset(C, 0, (size_t)nv * (size_t)nv * sizeof *C);
    for (int j = 0; j < nv && s > 0.0; j++) {
        x[j] = qd[j] + s;
        rnea(model, work, x, zero, 0, plus);
        x[j] = qd[j] - s;
        rnea(model, work, x, zero, 0, minus);
        x[j] = qd[j];
        for (int i = 0; i < nv; i++)
            C[(size_t)i * nv + j] = (plus[i] - minus[i]) / (4.0 * s);
    }
    for (int i = 0; i < nv; i++) {
        Cqd[i] = 0.0;
        for (int j = 0; j < nv; j++)
            Cqd[i] += C[(size_t)i * nv + j] * qd[j];
    }
    return MBD_OK;
}
