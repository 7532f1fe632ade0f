/* loops.c: closed kinematic loops by cut joints (Chang 2007): the tree's dynamics with the
 * cut joints' equations Phi(q) = 0 added by Lagrange multipliers, drift stabilized by
 * Baumgarte's terms:
 *
 *   [ H      Phi_q^T ] [ qdd     ]   [ tau - C                              ]
 *   [ Phi_q  0       ] [ -lambda ] = [ gamma - 2 alpha dPhi/dt - beta^2 Phi ],
 *   gamma = -(Phi_q qd)_q qd,
 *
 * solved by a solver through the Schur complement (solvers/constrained.c). Here: the
 * equations, their terms and the queries on them.
 *
 * Equations of one cut joint, world coordinates, frame a in body A, frame b in body B:
 *   3 point rows  Phi = x_a - x_b, x = p_body + R_body point;
 *   ndot rows     Phi = u . w, u fixed in A, w fixed in B (unit vectors).
 * With each body's spatial velocity (omega; v0) and q̈ = 0 acceleration (alpha; a0) about
 * the world origin:
 *   dx/dt = v0 + omega x x,   its q̈ = 0 rate  a0 + alpha x x + omega x (v0 + omega x x);
 *   d(u.w)/dt = (u x w).(omega_A - omega_B), its q̈ = 0 rate
 *               (u x w).(alpha_A - alpha_B) + ((omega_A x u) x w + u x (omega_B x w)).(omega_A - omega_B);
 * gamma is minus those rates. Column j of Phi_q (joint column s_j = (omega_j; v0_j) in world
 * coordinates) adds v0_j + omega_j x x and (u x w).omega_j for the dofs on A's path to the
 * root, and subtracts them for B's.
 *
 * Redundant equations make K singular. K = V diag(k) V^T (LAPACK dsyevd); eigenvalues at or
 * below RANK_TOL times the largest are dropped, so lambda = K^+ (rhs - Phi_q qdd0) is the
 * minimum-norm multiplier (qdd is unique all the same). A right-hand side with a part in
 * the dropped eigenspace larger than CONSISTENCY_TOL (constrained.c) of its size asks for
 * an acceleration that does not exist: MBD_EINCONSISTENT. */
#include "dynamics/dynamics.h"

#include <lapacke.h>
#include <math.h>
#include <string.h>

#define RANK_TOL 1e-10
#define PROJECTION_ITERATIONS 50

static size_t lwork_size(int m) { return 1 + 6 * (size_t)m + 2 * (size_t)m * (size_t)m; }
static size_t liwork_size(int m) { return 3 + 5 * (size_t)m; }

/* Points b's buffers into base (NULL: only measures; carve, dynamics.h); returns the
 * doubles used. */
static size_t layout(const mbd_model *model, int dense, double *base, loop_buffers *b)
{
    const size_t m = (size_t)model->nc, nv = (size_t)model->nv, nb = (size_t)model->nb;
    const size_t d = sizeof(double);
    carved_block block = {.base = (char *)base};
    b->J = carve(&block, m * nv * d);
    b->Y = carve(&block, m * nv * d);
    b->K = carve(&block, m * m * d);
    b->eig = carve(&block, m * d);
    b->lwork = carve(&block, lwork_size(model->nc) * d);
    b->iwork = carve(&block, liwork_size(model->nc) * sizeof *b->iwork);
    b->phi = carve(&block, m * d);
    b->phid = carve(&block, m * d);
    b->gamma = carve(&block, m * d);
    b->rhs = carve(&block, m * d);
    b->y = carve(&block, m * d);
    b->zero = carve(&block, nv * d);
    b->tau = carve(&block, nv * d);
    b->pose = carve(&block, 12 * nb * d);
    b->vel = carve(&block, 6 * nb * d);
    b->acc = carve(&block, 6 * nb * d);
    b->H = dense ? carve(&block, nv * nv * d) : NULL;
    return block.used / d;
}

size_t loops_scratch_doubles(const mbd_model *model, int dense)
{
    loop_buffers b;
    return model->nloops > 0 ? layout(model, dense, NULL, &b) : 0;
}

loop_buffers loops_buffers_of(const mbd_model *model, mbd_work *work, int dense)
{
    loop_buffers b;
    layout(model, dense, work->loop_scratch, &b);
    return b;
}

/* The world's pose (R = 1, p = 0) and its motion (none). */
static const double world_pose[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}, at_rest[6] = {0};

/* A motion vector m in body coordinates -> world coordinates about the world origin. */
static void motion_to_world(double out[6], const double *pose, const double m[6])
{
    double Rv[3], pxw[3];
    mat3_apply(out, pose, m);
    mat3_apply(Rv, pose, m + 3);
    vec3_cross(pxw, pose + 9, out);
    for (int k = 0; k < 3; k++)
        out[3 + k] = Rv[k] + pxw[k];
}

/* Poses of all bodies; with qd, their world velocities and q̈ = 0 accelerations too
 * (RNEA without gravity leaves them in body coordinates in work->v and work->a). */
static void world_kinematics(const mbd_model *model, mbd_work *work, loop_buffers *b,
                             const double *qd)
{
    if (qd)
        rnea(model, work, qd, b->zero, 0, b->tau);
    for (int i = 0; i < model->nb; i++) {
        const int p = model->parent[i];
        const double *parent = p < 0 ? world_pose : b->pose + 12 * p;
        double *pose = b->pose + 12 * i, Et[9], Rr[3];
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                Et[3 * r + c] = work->X[i].E[3 * c + r];
        mat3_mul(pose, parent, Et);
        mat3_apply(Rr, parent, work->X[i].r);
        for (int k = 0; k < 3; k++)
            pose[9 + k] = parent[9 + k] + Rr[k];
        if (qd) {
            motion_to_world(b->vel[i], pose, work->v[i]);
            motion_to_world(b->acc[i], pose, work->a[i]);
        }
    }
}

/* One end of a cut joint in world coordinates: its body's pose and motion (the world's
 * for body -1), the frame origin x, and the vectors fixed in the body. */
typedef struct {
    const double *pose, *vel, *acc;
    double x[3], e[3][3];
} loop_end;

static void end_of(loop_end *end, const loop_buffers *b, int body, const double *point,
                   const double (*vectors)[3], int ndot, int with_rates)
{
    end->pose = body < 0 ? world_pose : b->pose + 12 * body;
    end->vel = body < 0 || !with_rates ? at_rest : b->vel[body];
    end->acc = body < 0 || !with_rates ? at_rest : b->acc[body];
    mat3_apply(end->x, end->pose, point);
    for (int k = 0; k < 3; k++)
        end->x[k] += end->pose[9 + k];
    for (int k = 0; k < ndot; k++)
        mat3_apply(end->e[k], end->pose, vectors[k]);
}

/* Velocity v0 + omega x x and q̈ = 0 acceleration of the point x moving with end. */
static void point_rates(const loop_end *end, double v[3], double a[3])
{
    double wx[3], ax[3], wv[3];
    vec3_cross(wx, end->vel, end->x);
    for (int k = 0; k < 3; k++)
        v[k] = end->vel[3 + k] + wx[k];
    vec3_cross(ax, end->acc, end->x);
    vec3_cross(wv, end->vel, v);
    for (int k = 0; k < 3; k++)
        a[k] = end->acc[3 + k] + ax[k] + wv[k];
}

/* Adds sign times one end's part of the loop's rows of Phi_q: every dof on the path from
 * body to the root, its point x and the dot rows' normals n_k = u_k x w_k. */
static void add_jacobian(const mbd_model *model, const mbd_work *work, const loop_buffers *b,
                         const mbd_loop *loop, int body, const double x[3], const double (*n)[3],
                         double sign)
{
    const size_t nv = (size_t)model->nv;
    double *J = b->J + (size_t)loop->row0 * nv;
    for (int i = body; i >= 0; i = model->parent[i])
        for (int j = model->v0[i]; j < model->v0[i] + model->joint[i].nv; j++) {
            double s[6], wx[3];
            motion_to_world(s, b->pose + 12 * i, work->S + 6 * j);
            vec3_cross(wx, s, x);
            for (int r = 0; r < 3; r++)
                J[r * nv + j] += sign * (s[3 + r] + wx[r]);
            for (int k = 0; k < loop->ndot; k++)
                J[(3 + k) * nv + j] += sign * vec3_dot(n[k], s);
        }
}

/* One cut joint's Phi; with rates (world_kinematics had qd) dPhi/dt and gamma; with J its
 * rows of Phi_q (zeroed first). */
static void loop_terms(const mbd_model *model, const mbd_work *work, loop_buffers *b,
                       const mbd_loop *loop, int with_rates, int with_J)
{
    loop_end A, B;
    end_of(&A, b, loop->body_a, loop->point_a, loop->u, loop->ndot, with_rates);
    end_of(&B, b, loop->body_b, loop->point_b, loop->w, loop->ndot, with_rates);
    double n[3][3], dw[3];
    for (int k = 0; k < loop->ndot; k++)
        vec3_cross(n[k], A.e[k], B.e[k]);
    double *phi = b->phi + loop->row0, *phid = b->phid + loop->row0, *gamma = b->gamma + loop->row0;
    for (int r = 0; r < 3; r++)
        phi[r] = A.x[r] - B.x[r];
    for (int k = 0; k < loop->ndot; k++)
        phi[3 + k] = vec3_dot(A.e[k], B.e[k]);
    if (with_rates) {
        double vA[3], aA[3], vB[3], aB[3];
        point_rates(&A, vA, aA);
        point_rates(&B, vB, aB);
        for (int r = 0; r < 3; r++) {
            phid[r] = vA[r] - vB[r];
            gamma[r] = aB[r] - aA[r];
            dw[r] = A.vel[r] - B.vel[r];
        }
        for (int k = 0; k < loop->ndot; k++) {
            double wu[3], wuw[3], ww[3], uww[3], dalpha[3];
            vec3_cross(wu, A.vel, A.e[k]);
            vec3_cross(wuw, wu, B.e[k]);
            vec3_cross(ww, B.vel, B.e[k]);
            vec3_cross(uww, A.e[k], ww);
            for (int r = 0; r < 3; r++) {
                dalpha[r] = A.acc[r] - B.acc[r];
                wuw[r] += uww[r];
            }
            phid[3 + k] = vec3_dot(n[k], dw);
            gamma[3 + k] = -vec3_dot(n[k], dalpha) - vec3_dot(wuw, dw);
        }
    }
    if (with_J) {
        const size_t nv = (size_t)model->nv;
        memset(b->J + (size_t)loop->row0 * nv, 0, (size_t)(3 + loop->ndot) * nv * sizeof *b->J);
        add_jacobian(model, work, b, loop, loop->body_a, A.x, (const double(*)[3])n, 1.0);
        add_jacobian(model, work, b, loop, loop->body_b, B.x, (const double(*)[3])n, -1.0);
    }
}

int constraint_terms(const mbd_model *model, mbd_work *work, loop_buffers *b, const double *q,
                     const double *qd, int with_J)
{
    int status = mbd_kinematics(model, work, q);
    if (status)
        return status;
    if (qd && check_finite(qd, model->nv))
        return MBD_ENONFINITE;
    world_kinematics(model, work, b, qd);
    for (int l = 0; l < model->nloops; l++)
        loop_terms(model, work, b, &model->loops[l], qd != NULL, with_J);
    return MBD_OK;
}

int loops_pseudo_solve(const loop_buffers *b, int m, const double *s, double *out, double *residual)
{
    lapack_int info =
        LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, 'V', 'U', m, b->K, m, b->eig, b->lwork,
                            (lapack_int)lwork_size(m), b->iwork, (lapack_int)liwork_size(m));
    if (info != 0)
        return -1;
    const double cut = RANK_TOL * fmax(b->eig[m - 1], 0.0);
    double dropped = 0.0;
    int rank = 0;
    memset(out, 0, (size_t)m * sizeof *out);
    for (int i = 0; i < m; i++) {
        const double *v = b->K + (size_t)i * m;
        double c = 0.0;
        for (int k = 0; k < m; k++)
            c += v[k] * s[k];
        if (!(b->eig[i] > cut) || b->eig[i] <= 0.0) {
            dropped += c * c;
            continue;
        }
        rank++;
        for (int k = 0; k < m; k++)
            out[k] += v[k] * (c / b->eig[i]);
    }
    if (residual)
        *residual = sqrt(dropped);
    return rank;
}

void loops_gram(double *K, const double *A, const double *B, int m, int nv)
{
    for (int r = 0; r < m; r++)
        for (int c = 0; c < m; c++) {
            double t = 0.0;
            for (int j = 0; j < nv; j++)
                t += A[(size_t)r * nv + j] * B[(size_t)c * nv + j];
            K[(size_t)r * m + c] = t;
        }
    for (int r = 0; r < m; r++)
        for (int c = 0; c < r; c++)
            K[(size_t)r * m + c] = K[(size_t)c * m + r] =
                0.5 * (K[(size_t)r * m + c] + K[(size_t)c * m + r]);
}

void loops_times(double *y, const double *J, const double *x, int m, int nv)
{
    for (int r = 0; r < m; r++) {
        y[r] = 0.0;
        for (int j = 0; j < nv; j++)
            y[r] += J[(size_t)r * nv + j] * x[j];
    }
}

/* x += sign J^T y. */
static void add_transposed(double *x, const double *J, const double *y, int m, int nv, double sign)
{
    for (int r = 0; r < m; r++)
        for (int j = 0; j < nv; j++)
            x[j] += sign * J[(size_t)r * nv + j] * y[r];
}

/* The start of the queries below: the checks, then the terms at (q, qd) into b. */
static int query_terms(const mbd_model *model, mbd_work *work, loop_buffers *b, const double *q,
                       const double *qd, int with_J)
{
    if (!work || work->model != model)
        return MBD_EINVAL;
    *b = loops_buffers_of(model, work, 0);
    return constraint_terms(model, work, b, q, qd, with_J);
}

int mbd_constraint_violation(const mbd_model *model, mbd_work *work, const double *q,
                             const double *qd, double *phi, double *phid)
{
    if (phid && !qd)
        return MBD_EINVAL;
    loop_buffers b;
    int status = model->nloops ? query_terms(model, work, &b, q, phid ? qd : NULL, 0) : MBD_OK;
    if (status || model->nloops == 0)
        return status;
    if (phi)
        memcpy(phi, b.phi, (size_t)model->nc * sizeof *phi);
    if (phid)
        memcpy(phid, b.phid, (size_t)model->nc * sizeof *phid);
    return MBD_OK;
}

int mbd_constraint_jacobian(const mbd_model *model, mbd_work *work, const double *q,
                            const double *qd, double *J, double *gamma)
{
    if (gamma && !qd)
        return MBD_EINVAL;
    loop_buffers b;
    int status = model->nloops ? query_terms(model, work, &b, q, gamma ? qd : NULL, 1) : MBD_OK;
    if (status || model->nloops == 0)
        return status;
    memcpy(J, b.J, (size_t)model->nc * model->nv * sizeof *J);
    if (gamma)
        memcpy(gamma, b.gamma, (size_t)model->nc * sizeof *gamma);
    return MBD_OK;
}

/* Phi and Phi_q at q, and K = Phi_q Phi_q^T. */
static int constraint_gram(const mbd_model *model, mbd_work *work, loop_buffers *b, const double *q)
{
    int status = constraint_terms(model, work, b, q, NULL, 1);
    if (status == MBD_OK)
        loops_gram(b->K, b->J, b->J, model->nc, model->nv);
    return status;
}

int mbd_constraint_rank(const mbd_model *model, mbd_work *work, const double *q, int *rank)
{
    if (!work || work->model != model)
        return MBD_EINVAL;
    *rank = 0;
    if (model->nloops == 0)
        return MBD_OK;
    loop_buffers b = loops_buffers_of(model, work, 0);
    int status = constraint_gram(model, work, &b, q);
    if (status)
        return status;
    *rank = loops_pseudo_solve(&b, model->nc, b.phi, b.y, NULL);
    return *rank < 0 ? MBD_EINVAL : MBD_OK;
}

/* x -= Phi_q^T (Phi_q Phi_q^T)^+ s: the minimum-norm change of x that removes s = Phi_q dx
 * (b->K holds the Gram matrix). */
static int minimum_norm_step(const mbd_model *model, loop_buffers *b, const double *s, double *x)
{
    if (loops_pseudo_solve(b, model->nc, s, b->y, NULL) < 0)
        return MBD_EINVAL;
    add_transposed(x, b->J, b->y, model->nc, model->nv, -1.0);
    return MBD_OK;
}

int mbd_project_constraints(const mbd_model *model, mbd_work *work, double *q, double *qd,
                            double tol)
{
    if (!work || work->model != model || !(tol > 0.0) || model->nq != model->nv)
        return MBD_EINVAL;
    if (model->nloops == 0)
        return MBD_OK;
    loop_buffers b = loops_buffers_of(model, work, 0);
    int status = MBD_OK, iteration = 0;
    while (!(status = constraint_gram(model, work, &b, q)) && vector_norm(b.phi, model->nc) > tol) {
        if (++iteration > PROJECTION_ITERATIONS)
            return MBD_EINCONSISTENT;
        if ((status = minimum_norm_step(model, &b, b.phi, q)))
            return status;
    }
    if (status || !qd)
        return status;
    loops_times(b.rhs, b.J, qd, model->nc, model->nv);
    return minimum_norm_step(model, &b, b.rhs, qd);
}

int mbd_loop_wrenches(const mbd_model *model, mbd_work *work, const double *q, const double *lambda,
                      double *wrenches)
{
    if (check_finite(lambda, model->nc))
        return MBD_ENONFINITE;
    loop_buffers b;
    int status = model->nloops ? query_terms(model, work, &b, q, NULL, 0) : MBD_OK;
    for (int l = 0; status == MBD_OK && l < model->nloops; l++) {
        const mbd_loop *loop = &model->loops[l];
        const double *lam = lambda + loop->row0;
        loop_end A, B;
        end_of(&A, &b, loop->body_a, loop->point_a, loop->u, loop->ndot, 0);
        end_of(&B, &b, loop->body_b, loop->point_b, loop->w, loop->ndot, 0);
        double torque[3] = {0, 0, 0}, n[3], axes[9];
        for (int k = 0; k < loop->ndot; k++) {
            vec3_cross(n, A.e[k], B.e[k]);
            for (int r = 0; r < 3; r++)
                torque[r] += lam[3 + k] * n[r];
        }
        mat3_mul(axes, A.pose, loop->frame_a); /* frame a's axes in the world */
        mat3_apply_t(wrenches + 6 * l, axes, torque);
        mat3_apply_t(wrenches + 6 * l + 3, axes, lam);
    }
    return status;
}
