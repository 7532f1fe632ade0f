/* analytic.c: the derivatives of qdd = FD(q, qd, tau) from those of the inverse dynamics
 * (Carpentier and Mansard, "Analytical Derivatives of Rigid Body Dynamics Algorithms", RSS
 * 2018): ID(q, qd, FD(q, qd, tau)) = tau for all x, so
 *   dqdd/dx = -H^-1 dtau/dx (x = q, qd) at qdd = FD(q, qd, tau),  dqdd/dtau = H^-1,
 * with qdd from the bodies sweep, dtau/dx by the O(N d) RNEA derivatives
 * (dynamics/rnea_derivatives.c) and H^-1 by the O(N^2) articulated-body inverse
 * (dynamics/minverse.c); the products are O(N^3), 2 nv^3 multiplications, a few
 * microseconds at N = 30. dtau/dx is formed in the output that its product replaces,
 * column by column, and H^-1 in dqdd/dtau's (allocated only when that is not asked for).
 * The ABA-derivative form (Singh, Russell and Wensing, "Efficient Analytical Derivatives of
 * Rigid-Body Dynamics using Spatial Vector Algebra", RA-L 2022) is not implemented. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* D = -Hinv D in place, column by column through column (nv doubles). */
static void times_minus_inverse(const double *Hinv, int nv, double *D, double *column)
{
    const size_t n = (size_t)nv;
    for (size_t j = 0; j < n; j++) {
        for (size_t r = 0; r < n; r++)
            column[r] = D[r * n + j];
        for (size_t r = 0; r < n; r++) {
            double sum = 0.0;
            for (size_t c = 0; c < n; c++)
                sum += Hinv[r * n + c] * column[c];
            D[r * n + j] = -sum;
        }
    }
}

static int analytic_forward(const mbd_model *model, mbd_work *work, const double *q,
                            const double *qd, const double *tau, double *dqdd_dq,
                            double *dqdd_dqd, double *dqdd_dtau)
{
    const int nv = model->nv;
    double *qdd = work->jv, *column = work->jv + nv;
    int status = start_kinematics(model, work, q);
    if (!status) /* also forms X_i and S_i */
        status = mbd_solver_bodies.forward_acc(model, work, q, qd, tau, qdd);
    if (status)
        return status;
    const int products = dqdd_dq || dqdd_dqd;
    double *Hinv = dqdd_dtau;
    if (!Hinv && products && !(Hinv = malloc((size_t)nv * (size_t)nv * sizeof *Hinv)))
        return MBD_ENOMEM;
    if (Hinv)
        status = mass_matrix_inverse(model, work, Hinv);
    if (!status && products)
        status = rnea_derivatives(model, work, qd, qdd, dqdd_dq, dqdd_dqd);
    if (!status && dqdd_dq)
        times_minus_inverse(Hinv, nv, dqdd_dq, column);
    if (!status && dqdd_dqd)
        times_minus_inverse(Hinv, nv, dqdd_dqd, column);
    if (Hinv != dqdd_dtau)
        free(Hinv);
    return status;
}

const mbd_derivatives_method mbd_derivatives_analytic = {
    .name = "analytic",
    .summary = "RNEA derivatives (Carpentier-Mansard), times -H^-1 by the articulated-body inverse",
    .forward = analytic_forward,
};
