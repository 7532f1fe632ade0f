/* automatic.cc: the derivatives of qdd = FD(q, qd, tau) by forward-mode dual numbers
 * through the bodies sweep's own source: bodies_kernels.h and the spatial and joint
 * kernels it calls are compiled once more here with the lane type a dual number
 * (dual.h), so that one sweep gives qdd and its derivatives along DUAL_TANGENTS
 * directions, exact to round-off, with no second implementation of the recursion.
 * The directions are the columns of the matrices asked for: q along q (+) delta e_j
 * (tangent G(q) e_j, joint_position_rates), qd along e_j; ceil(k nv / T) sweeps for k of
 * the two. qdd is affine in tau, so dqdd/dtau = H^-1 needs no direction: the
 * articulated-body inverse (dynamics/minverse.c) gives it in O(N^2), where its nv
 * directions would cost nv / T sweeps of O(N T) each. The sweeps go along qd first: the
 * articulated inertias (I^a, D^-1, U D^-1), which q alone decides, have no tangent there,
 * and the sweeps after take them from the workspace wherever none of their directions
 * moves them (mark_known): the second sweep along qd forms neither them nor X and S, one
 * along q_j on a chain none of the bodies after j. C++ for its operators alone: no
 * exceptions, no run-time type information, no C++ library, so that libmbd.a links as C. */
#define restrict __restrict

#include <math.h>
#include <string.h>

extern "C" {
#include "internal.h"
}

#define MBD_LANES MBD_LANES_DUAL
#include "spatial/lane.h"
#include "derivatives/dual.h"
#include "spatial/spatial_kernels.h"
#include "spatial/joint_kernels.h"
#include "solvers/bodies_kernels.h"
#include "spatial/lane_end.h"

/* The dual workspace and the sweep's inputs and output, in the workspace's derivative
 * block (derivative_scratch: most workspaces never take derivatives): T + 1 doubles per
 * double of the sweep's arrays, at N = 30 about 290 KiB. Nothing zeroes it: the sweep
 * writes each entry before it reads it (the constant ones with constant_kinematics). */
typedef struct {
    mbd_dual_work work;
    mbd_dual *q, *qd, *tau, *qdd;
    unsigned char *known, *clean; /* (nb) mark_known */
} dual_sweep;

/* Points the arrays into base (NULL: only measures; carve, internal.h); returns the
 * block's bytes. */
static size_t lay_out(dual_sweep *sweep, char *base, const mbd_model *model)
{
    const size_t nb = (size_t)model->nb, nq = (size_t)model->nq, nv = (size_t)model->nv;
    const size_t d = sizeof(mbd_dual);
    mbd_dual_work *work = &sweep->work;
    carved_block block = {base, 0};
    work->X = (mbd_dual_xform *)carve(&block, nb * sizeof(mbd_dual_xform));
    work->IA = (mbd_dual_inertia *)carve(&block, nb * sizeof(mbd_dual_inertia));
    work->S = (mbd_dual *)carve(&block, 6 * nv * d);
    work->U = (mbd_dual *)carve(&block, 6 * nv * d);
    work->D = (mbd_dual *)carve(&block, (size_t)model->ndd * d);
    work->u = (mbd_dual *)carve(&block, nv * d);
    work->v = (mbd_dual(*)[6])carve(&block, 6 * nb * d);
    work->c = (mbd_dual(*)[6])carve(&block, 6 * nb * d);
    work->a = (mbd_dual(*)[6])carve(&block, 6 * nb * d);
    work->f = (mbd_dual(*)[6])carve(&block, 6 * nb * d);
    sweep->q = (mbd_dual *)carve(&block, nq * d);
    sweep->qd = (mbd_dual *)carve(&block, nv * d);
    sweep->tau = (mbd_dual *)carve(&block, nv * d);
    sweep->qdd = (mbd_dual *)carve(&block, nv * d);
    sweep->known = (unsigned char *)carve(&block, nb);
    sweep->clean = (unsigned char *)carve(&block, nb);
    work->known = sweep->known;
    return block.used;
}

/* The matrices swept for, in the order dq, dqd (NULL ones left out): direction
 * d = b nv + j of the sweeps is column j of matrix b. */
typedef enum { ALONG_Q, ALONG_QD } direction_kind;

typedef struct {
    double *out[2];
    direction_kind kind[2];
    int count;
} asked_matrices;

static void ask(asked_matrices *asked, double *out, direction_kind kind)
{
    if (out) {
        asked->out[asked->count] = out;
        asked->kind[asked->count++] = kind;
    }
}

/* Tangent k of the inputs: the direction of column j of a matrix of the given kind. q
 * moves along G(q) e_j, only in the joint's coordinates. */
static void seed(dual_sweep *sweep, const mbd_model *model, const double *q,
                 direction_kind kind, int j, int k)
{
    if (kind == ALONG_QD) {
        dual_set_tangent(&sweep->qd[j], k, 1.0);
    } else {
        const int i = body_of_dof(model, j), q0 = model->q0[i];
        const mbd_joint *joint = &model->joint[i];
        double unit[MBD_MAX_JOINT_DOF] = {0}, rate[MBD_MAX_JOINT_DOF + 1];
        unit[j - model->v0[i]] = 1.0;
        joint_position_rates(rate, joint, q + q0, unit);
        for (int r = 0; r < joint->nq; r++)
            dual_set_tangent(&sweep->q[q0 + r], k, rate[r]);
    }
}

/* The inputs' values, with no tangent. */
static void set_values(dual_sweep *sweep, const mbd_model *model, const double *q,
                       const double *qd, const double *tau)
{
    for (int r = 0; r < model->nq; r++)
        sweep->q[r] = mbd_dual(q[r]);
    for (int j = 0; j < model->nv; j++) {
        sweep->qd[j] = mbd_dual(qd[j]);
        sweep->tau[j] = mbd_dual(tau ? tau[j] : 0.0);
    }
}

/* The bodies whose I^a, D^-1 and U D^-1 the sweep of the directions first .. end - 1 takes
 * from the sweeps before (known): those whose subtree, joint included, no direction of the
 * sweep moves along q, and that were last formed so too (clean): all of them have no
 * tangent then. A sweep along qd alone moves none; one along q_j on a chain none after
 * body j. Bodies follow their parents, so one backward pass finds the moved subtrees.
 * Returns whether every body is known: X and S are then an earlier sweep's as well. */
static int mark_known(dual_sweep *sweep, const mbd_model *model, const asked_matrices *asked,
                      int first, int end)
{
    unsigned char *moved = sweep->known; /* first moved, then known */
    memset(moved, 0, (size_t)model->nb);
    for (int d = first; d < end; d++)
        if (asked->kind[d / model->nv] == ALONG_Q)
            moved[body_of_dof(model, d % model->nv)] = 1;
    int all_known = 1;
    for (int i = model->nb - 1; i >= 0; i--) {
        if (model->parent[i] >= 0)
            moved[model->parent[i]] |= moved[i];
        const int unmoved = !moved[i];
        sweep->known[i] = sweep->clean[i] && unmoved;
        sweep->clean[i] = unmoved;
        all_known &= sweep->known[i];
    }
    return all_known;
}

/* One sweep for the directions first .. first + T - 1 (those below the end): seeded,
 * swept, and qdd's tangents out into their columns. */
static int sweep_directions(dual_sweep *sweep, const mbd_model *model, const double *q,
                            const double *qd, const double *tau, const asked_matrices *asked,
                            int first)
{
    const int nv = model->nv, end = asked->count * nv;
    const int last = first + DUAL_TANGENTS < end ? first + DUAL_TANGENTS : end;
    set_values(sweep, model, q, qd, tau);
    for (int d = first; d < last; d++)
        seed(sweep, model, q, asked->kind[d / nv], d % nv, d - first);
    const int all_known = mark_known(sweep, model, asked, first, last);
    const int status = bodies_sweep_dual(model, &sweep->work, all_known ? NULL : sweep->q,
                                         sweep->qd, sweep->tau, sweep->qdd);
    if (status != MBD_OK)
        return status;
    for (int d = first; d < last; d++) {
        double *column = asked->out[d / nv] + d % nv;
        for (int i = 0; i < nv; i++)
            column[(size_t)i * (size_t)nv] = dual_tangent(&sweep->qdd[i], d - first);
    }
    return MBD_OK;
}

/* The dual sweeps for the asked matrices' directions, T at a time. */
static int sweep_all(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
                     const double *tau, const asked_matrices *asked)
{
    dual_sweep sweep;
    const size_t bytes = lay_out(&sweep, NULL, model);
    char *block = (char *)derivative_scratch(work, bytes);
    if (!block)
        return MBD_ENOMEM;
    lay_out(&sweep, block, model);
    memset(sweep.clean, 0, (size_t)model->nb); /* nothing formed yet at this q */
    sweep.work.failed_body = -1;
    constant_kinematics_dual(model, &sweep.work);
    int status = MBD_OK;
    for (int first = 0; first < asked->count * model->nv && status == MBD_OK;
         first += DUAL_TANGENTS)
        status = sweep_directions(&sweep, model, q, qd, tau, asked, first);
    work->failed_body = sweep.work.failed_body;
    return status;
}

static int automatic_forward(const mbd_model *model, mbd_work *work, const double *q,
                             const double *qd, const double *tau, double *dqdd_dq,
                             double *dqdd_dqd, double *dqdd_dtau)
{
    /* a solver whose kernels are not the bodies sweep's has no dual form */
    if (!work->solver || work->solver->lane_kernels != LANES_BODIES)
        return MBD_EUNSUPPORTED;
    /* q checked; the transforms too where the articulated-body inverse needs them */
    int status = dqdd_dtau ? mbd_kinematics(model, work, q) : start_kinematics(model, work, q);
    if (status != MBD_OK)
        return status;
    asked_matrices asked = {}; /* along qd first: what they form along q alone, the rest take */
    ask(&asked, dqdd_dqd, ALONG_QD);
    ask(&asked, dqdd_dq, ALONG_Q);
    if (asked.count > 0)
        status = sweep_all(model, work, q, qd, tau, &asked);
    if (status == MBD_OK && dqdd_dtau)
        status = mass_matrix_inverse(model, work, dqdd_dtau);
    return status;
}

const mbd_derivatives_method mbd_derivatives_automatic = {
    .name = "automatic",
    .summary = "forward-mode dual numbers through the bodies sweep's own kernels along q and qd, "
               "15 directions a sweep; H^-1 by the articulated-body inverse",
    .forward = automatic_forward,
};
