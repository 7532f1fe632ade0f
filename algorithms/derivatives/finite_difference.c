/* finite_difference.c: the derivatives of qdd = FD(q, qd, tau) by central differences of the
 * bodies sweep, as a user would write them: column j of dqdd/dx is
 *   (FD(x + h_j e_j) - FD(x - h_j e_j)) / (2 h_j),  h_j = eps^(1/3) max(1, |x_j|),
 * the step that balances the truncation error (h^2) against the rounding (eps / h); q moves
 * along q (+) h e_j (mbd_integrate_positions). 2 nv bodies calls per matrix; the error is
 * about eps^(2/3) ~ 1e-11 relative on smooth problems. */
#include "derivatives/derivatives.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* The buffers of the differences, in the workspace's joint-space vectors (work->jv):
 * a moved q (nq <= 2 nv), a moved qd or tau, the two accelerations, the step delta. */
typedef struct {
    double *q, *x, *plus, *minus, *delta;
} difference_buffers;

static difference_buffers buffers_of(const mbd_model *model, mbd_work *work)
{
    double *jv = work->jv;
    const int nv = model->nv;
    return (difference_buffers){jv, jv + 2 * nv, jv + 3 * nv, jv + 4 * nv, jv + 5 * nv};
}

static int bodies_forward(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
                          const double *tau, double *qdd)
{
    const int status = start_kinematics(model, work, q);
    const mbd_solve_call call = {
        .form = MBD_ACCELERATION, .q = q, .in = qd, .tau = tau, .out = qdd};
    return status ? status : mbd_solver_bodies.solve(model, work, &call);
}

static double step_for(double x) { return cbrt(DBL_EPSILON) * fmax(1.0, fabs(x)); }

/* Column j of out (nv x nv, row-major) = (plus - minus) / (2 h). */
static void store_column(double *out, int nv, int j, const double *plus, const double *minus,
                         double h)
{
    for (int i = 0; i < nv; i++)
        out[(size_t)i * (size_t)nv + (size_t)j] = (plus[i] - minus[i]) / (2.0 * h);
}

/* dqdd/dq along q (+) h e_j; joints with a quaternion step by eps^(1/3) in their tangent. */
static int differentiate_q(const mbd_model *model, mbd_work *work, difference_buffers *b,
                           const double *q, const double *qd, const double *tau, double *out)
{
    const int nv = model->nv;
    memset(b->delta, 0, (size_t)nv * sizeof *b->delta);
    for (int i = 0; i < model->nb; i++)
        for (int k = 0; k < model->joint[i].nv; k++) {
            const int j = model->v0[i] + k;
            const int plain = !joint_has_quaternion(model->joint_type[i]);
            const double h = step_for(plain ? q[model->q0[i] + k] : 0.0);
            int status = MBD_OK;
            for (int side = 0; side < 2 && !status; side++) {
                b->delta[j] = side ? -h : h;
                status = mbd_integrate_positions(model, q, b->delta, b->q);
                if (!status)
                    status = bodies_forward(model, work, b->q, qd, tau, side ? b->minus : b->plus);
            }
            b->delta[j] = 0.0;
            if (status)
                return status;
            store_column(out, nv, j, b->plus, b->minus, h);
        }
    return MBD_OK;
}

/* dqdd/dx for x = qd (which 0) or tau (which 1), q fixed. */
static int differentiate_rates(const mbd_model *model, mbd_work *work, difference_buffers *b,
                               const double *q, const double *qd, const double *tau, int which,
                               double *out)
{
    const int nv = model->nv;
    const double *x = which ? tau : qd;
    if (x)
        memcpy(b->x, x, (size_t)nv * sizeof *b->x);
    else
        memset(b->x, 0, (size_t)nv * sizeof *b->x);
    for (int j = 0; j < nv; j++) {
        const double h = step_for(b->x[j]), x_j = b->x[j];
        int status = MBD_OK;
        for (int side = 0; side < 2 && !status; side++) {
            b->x[j] = side ? x_j - h : x_j + h;
            status = bodies_forward(model, work, q, which ? qd : b->x, which ? b->x : tau,
                                    side ? b->minus : b->plus);
        }
        b->x[j] = x_j;
        if (status)
            return status;
        store_column(out, nv, j, b->plus, b->minus, h);
    }
    return MBD_OK;
}

static int finite_difference_forward(const mbd_model *model, mbd_work *work, const double *q,
                                     const double *qd, const double *tau, double *dqdd_dq,
                                     double *dqdd_dqd, double *dqdd_dtau)
{
    difference_buffers b = buffers_of(model, work);
    int status = bodies_forward(model, work, q, qd, tau, b.plus); /* q checked once */
    if (!status && dqdd_dq)
        status = differentiate_q(model, work, &b, q, qd, tau, dqdd_dq);
    if (!status && dqdd_dqd)
        status = differentiate_rates(model, work, &b, q, qd, tau, 0, dqdd_dqd);
    if (!status && dqdd_dtau)
        status = differentiate_rates(model, work, &b, q, qd, tau, 1, dqdd_dtau);
    return status;
}

const mbd_derivatives_method mbd_derivatives_finite_difference = {
    .name = "finite-difference",
    .summary = "central differences of the bodies sweep, step eps^(1/3) max(1, |x|) per coordinate",
    .forward = finite_difference_forward,
};
