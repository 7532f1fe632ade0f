/* automatic.cc: the derivatives of qdd = FD(q, qd, tau) by forward-mode dual numbers
 * through the bodies sweep's own source: bodies_kernels.h and the spatial and joint
 * kernels it calls are compiled once more here with the lane type a dual number
 * (dual.h), so that one sweep gives qdd and its derivatives along DUAL_TANGENTS
 * directions, exact to round-off, with no second implementation of the recursion.
 * The directions are the columns of the matrices asked for: q along q (+) delta e_j
 * (tangent G(q) e_j, joint_position_rates), qd along e_j; ceil(k nv / T) sweeps for k of
 * the two. qdd is affine in tau, so dqdd/dtau = H^-1 needs no direction (its nv would
 * cost nv / T sweeps of O(N T) each): H from CRBA factored densely gives it, as analytic's
 * (inverse_by_factor), and beyond 100 coordinates, where that O(N^3) costs more, the
 * O(N^2) articulated-body inverse (dynamics/minverse.c). The articulated inertias (I^a,
 * D^-1, U D^-1), which q alone decides, are formed only where a sweep moves them and once:
 * the first sweep, the one that moves the most bodies along q, forms every body's, and
 * their tangents and those of X and S are then set to zero (forget_tangents), so that
 * every sweep after takes them from the workspace wherever none of its directions moves
 * them (mark_known): a sweep along qd forms neither them nor X and S, one along q_j on a
 * chain none of the bodies after j. C++ for its operators alone: no exceptions, no
 * run-time type information, no C++ library, so that libmbd.a links as C. */
#define restrict __restrict

#include <math.h>
#include <string.h>

extern "C" {
#include "derivatives/derivatives.h"
}

#define MBD_LANES MBD_LANES_DUAL
#include "spatial/lane.h"
#include "derivatives/dual.h"
#include "spatial/spatial_kernels.h"
#include "dynamics/joint_kernels.h"
#include "solvers/bodies_kernels.h"
#include "spatial/lane_end.h"

/* dqdd/dtau from H factored densely up to this many coordinates, from the articulated-body
 * inverse beyond (revolute chain, after the sweeps, time of the dense inverse against the
 * other: 0.65 at N = 30, 0.4 at N = 60, 1.0 at N = 100, 1.6 at N = 150). */
#define DENSE_INVERSE_MAX_NV 100

/* The dual workspace and the sweep's inputs and output, in the workspace's derivative
 * block (derivative_scratch: most workspaces never take derivatives): T + 1 doubles per
 * double of the sweep's arrays, at N = 30 about 290 KiB. Nothing zeroes it: the sweep
 * writes each entry before it reads it (the constant ones with constant_kinematics). */
typedef struct {
    mbd_dual_work work;
    mbd_dual *q, *qd, *tau, *qdd;
    unsigned char *moved, *known; /* (nb) mark_known */
    double *L;                    /* (nv x nv) inverse_by_factor's */
    int formed;                   /* a sweep at this q has formed every body's */
} dual_sweep;

/* Points the arrays into base (NULL: only measures; carve, dynamics.h); returns the
 * block's bytes. */
static size_t lay_out(dual_sweep *sweep, char *base, const mbd_model *model)
{
    const size_t nb = (size_t)model->nb, nq = (size_t)model->nq, nv = (size_t)model->nv;
    carved_block block = {base, 0};
#define CARVE_DUAL_ARRAY(field, count) CARVE_ARRAY(&block, &sweep->work, field, count);
    MBD_LANE_ARRAYS(CARVE_DUAL_ARRAY, model)
#undef CARVE_DUAL_ARRAY
    CARVE_ARRAY(&block, sweep, q, nq);
    CARVE_ARRAY(&block, sweep, qd, nv);
    CARVE_ARRAY(&block, sweep, tau, nv);
    CARVE_ARRAY(&block, sweep, qdd, nv);
    CARVE_ARRAY(&block, sweep, moved, nb);
    CARVE_ARRAY(&block, sweep, known, nb);
    CARVE_ARRAY(&block, sweep, L, nv <= DENSE_INVERSE_MAX_NV ? nv * nv : 0);
    sweep->work.known = sweep->known;
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
static void seed(dual_sweep *sweep, const mbd_model *model, const double *q, direction_kind kind,
                 int j, int k)
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
static void set_values(dual_sweep *sweep, const mbd_model *model, const double *q, const double *qd,
                       const double *tau)
{
    for (int r = 0; r < model->nq; r++)
        sweep->q[r] = mbd_dual(q[r]);
    for (int j = 0; j < model->nv; j++) {
        sweep->qd[j] = mbd_dual(qd[j]);
        sweep->tau[j] = mbd_dual(tau ? tau[j] : 0.0);
    }
}

/* The bodies that the directions first .. end - 1 move along q (sweep->moved): those whose
 * subtree, joint included, one of them moves; bodies follow their parents, so one backward
 * pass finds them. Returns their number. */
static int mark_moved(dual_sweep *sweep, const mbd_model *model, const asked_matrices *asked,
                      int first, int end)
{
    unsigned char *moved = sweep->moved;
    memset(moved, 0, (size_t)model->nb);
    for (int d = first; d < end; d++)
        if (asked->kind[d / model->nv] == ALONG_Q)
            moved[body_of_dof(model, d % model->nv)] = 1;
    int count = 0;
    for (int i = model->nb - 1; i >= 0; i--) {
        if (model->parent[i] >= 0)
            moved[model->parent[i]] |= moved[i];
        count += moved[i];
    }
    return count;
}

/* The bodies whose I^a, D^-1 and U D^-1 the sweep of the directions first .. end - 1 takes
 * from the sweeps before (known): all those it does not move, once a sweep has formed them
 * (their tangents are then zero: forget_tangents). A sweep along qd alone moves none; one
 * along q_j on a chain none after body j. Returns whether every body is known: X and S are
 * then an earlier sweep's as well. */
static int mark_known(dual_sweep *sweep, const mbd_model *model, const asked_matrices *asked,
                      int first, int end)
{
    mark_moved(sweep, model, asked, first, end);
    int all_known = 1;
    for (int i = 0; i < model->nb; i++) {
        sweep->known[i] = sweep->formed && !sweep->moved[i];
        all_known &= sweep->known[i];
    }
    return all_known;
}

static void keep_values(mbd_dual *x, int n)
{
    for (int k = 0; k < n; k++)
        x[k] = mbd_dual(dual_value(x[k]));
}

/* The tangents of what the sweep formed along q (the moved bodies' X, S, I^a, D^-1 and
 * U D^-1) set to zero: their values are those at q, with no tangent, as the sweeps after
 * take them. Cheaper than forming them once more with zero tangents. */
static void forget_tangents(dual_sweep *sweep, const mbd_model *model)
{
    mbd_dual_work *work = &sweep->work;
    for (int i = 0; i < model->nb; i++) {
        if (!sweep->moved[i])
            continue;
        const int v0 = model->v0[i], n = model->joint[i].nv;
        mbd_dual_inertia *IA = &work->IA[i];
        keep_values(work->X[i].E, 9);
        keep_values(work->X[i].r, 3);
        keep_values(IA->A, 6);
        keep_values(IA->B, 9);
        keep_values(IA->C, 6);
        keep_values(work->S + 6 * v0, 6 * n);
        keep_values(work->U + 6 * v0, 6 * n);
        keep_values(work->D + model->d0[i], n * n);
    }
}

/* The end of the directions of the sweep that starts at first. */
static int sweep_end(const asked_matrices *asked, const mbd_model *model, int first)
{
    const int directions = asked->count * model->nv;
    return first + DUAL_TANGENTS < directions ? first + DUAL_TANGENTS : directions;
}

/* One sweep for the directions first .. first + T - 1 (those below the end): seeded,
 * swept, and qdd's tangents out into their columns; more: sweeps follow, which take what
 * this one formed. */
static int sweep_directions(dual_sweep *sweep, const mbd_model *model, const double *q,
                            const double *qd, const double *tau, const asked_matrices *asked,
                            int first, int more)
{
    const int nv = model->nv, last = sweep_end(asked, model, first);
    set_values(sweep, model, q, qd, tau);
    for (int d = first; d < last; d++)
        seed(sweep, model, q, asked->kind[d / nv], d % nv, d - first);
    const int all_known = mark_known(sweep, model, asked, first, last);
    const int status = bodies_sweep_dual(model, &sweep->work, all_known ? NULL : sweep->q,
                                         sweep->qd, sweep->tau, sweep->qdd, 1);
    if (status != MBD_OK)
        return status;
    if (more)
        forget_tangents(sweep, model);
    sweep->formed = 1;
    for (int d = first; d < last; d++) {
        double *column = asked->out[d / nv] + d % nv;
        for (int i = 0; i < nv; i++)
            column[(size_t)i * (size_t)nv] = dual_tangent(&sweep->qdd[i], d - first);
    }
    return MBD_OK;
}

/* The dual sweeps for the asked matrices' directions, T at a time; first the one that
 * moves the most bodies, since the first sweep forms every body's I^a anyway and the
 * others form only those they move. */
static int sweep_all(dual_sweep *sweep, const mbd_model *model, mbd_work *work, const double *q,
                     const double *qd, const double *tau, const asked_matrices *asked)
{
    sweep->formed = 0; /* nothing formed yet at this q */
    sweep->work.failed_body = -1;
    constant_kinematics_dual(model, &sweep->work);
    const int sweeps = (asked->count * model->nv + DUAL_TANGENTS - 1) / DUAL_TANGENTS;
    int start = 0, most = -1; /* the sweep that moves the most bodies */
    for (int k = 0; k < sweeps; k++) {
        const int first = k * DUAL_TANGENTS;
        const int moved = mark_moved(sweep, model, asked, first, sweep_end(asked, model, first));
        if (moved > most)
            most = moved, start = k;
    }
    int status = MBD_OK;
    for (int k = 0; k < sweeps && status == MBD_OK; k++) { /* start, then the others in order */
        const int first = DUAL_TANGENTS * (k == 0 ? start : k <= start ? k - 1 : k);
        status = sweep_directions(sweep, model, q, qd, tau, asked, first, k + 1 < sweeps);
    }
    work->failed_body = sweep->work.failed_body;
    return status;
}

static int automatic_forward(const mbd_model *model, mbd_work *work, const double *q,
                             const double *qd, const double *tau, double *dqdd_dq, double *dqdd_dqd,
                             double *dqdd_dtau)
{
    /* a solver whose kernels are not the bodies sweep's has no dual form */
    if (!work->solver || work->solver->lane_kernels != LANES_BODIES)
        return MBD_EUNSUPPORTED;
    /* q checked; the transforms too where the articulated-body inverse needs them */
    int status = dqdd_dtau ? mbd_kinematics(model, work, q) : start_kinematics(model, work, q);
    if (status != MBD_OK)
        return status;
    asked_matrices asked = {};
    ask(&asked, dqdd_dqd, ALONG_QD);
    ask(&asked, dqdd_dq, ALONG_Q);
    dual_sweep sweep;
    char *block = (char *)derivative_scratch(work, lay_out(&sweep, NULL, model));
    if (!block)
        return MBD_ENOMEM;
    lay_out(&sweep, block, model);
    if (asked.count > 0)
        status = sweep_all(&sweep, model, work, q, qd, tau, &asked);
    if (status == MBD_OK && dqdd_dtau)
        status = model->nv <= DENSE_INVERSE_MAX_NV
                     ? inverse_by_factor(model, work, sweep.L, dqdd_dtau)
                     : mass_matrix_inverse(model, work, dqdd_dtau);
    return status;
}

const mbd_derivatives_method mbd_derivatives_automatic = {
    .name = "automatic",
    .summary = "forward-mode dual numbers through the bodies sweep's own kernels along q and qd, "
               "15 directions a sweep; H^-1 from CRBA's H factored densely (the articulated-body "
               "inverse beyond 100 coordinates)",
    .forward = automatic_forward,
};
