/* passive.c: the passive forces tau_p(q, qd) that every forward call adds to tau (MuJoCo's
 * qfrc_passive without fluid forces), and their derivatives:
 *
 *   joint j:   tau_j = -d_j qd_j - k_j (q_j - qref_j)      (a quaternion: -k_j r_j, with
 *              r_j = log(qref_j^-1 quat_j) its rotation vector in body axes; a free joint's
 *              position: -k_j E_j^T (p_j - pref_j), E_j its rotation)
 *   gravcomp:  tau = RNEA(q, 0, 0) of the inertias gravcomp_i I_i: the weight they hold up
 *              (but on joints whose actuators apply it, actuator_gravcomp)
 *   tendon t:  tau += coef_t F_t,  F_t = -k_t (L_t - the nearer end of its rest range)
 *                                       - d_t Ldot_t,  L_t = coef_t . q,  Ldot_t = coef_t . qd
 *   free joint's armature a on its translation (a point mass at the body origin, as
 *   MuJoCo's armature on the world-frame velocity): tau_v = -a w x v_O, what the body-axes
 *   velocities' diagonal a leaves out of a (v_O' + w x v_O)
 *
 * d/dq is taken along q (+) v (mbd_integrate_positions): a rotation vector moves by the
 * inverse right Jacobian of SO(3), J_r^-1(r) = 1 + [r]/2 + (1/t^2 - (1 + cos t) /
 * (2 t sin t)) [r]^2 with t = |r| ([r] the cross-product matrix), and a free joint's force
 * in body axes turns with the body: d(E^T f)/dw = [E^T f]. */
#include "dynamics/dynamics.h"
#include "dynamics/passive_kernels.h"

#include <math.h>
#include <string.h>

/* r = log(ref^-1 quat) (w, x, y, z order), the shorter way round. */
static void rotation_vector(double r[3], const double quat[4], const double ref[4])
{
    const double w = ref[0] * quat[0] + ref[1] * quat[1] + ref[2] * quat[2] + ref[3] * quat[3];
    double v[3] = {ref[0] * quat[1] - ref[1] * quat[0] - ref[2] * quat[3] + ref[3] * quat[2],
                   ref[0] * quat[2] + ref[1] * quat[3] - ref[2] * quat[0] - ref[3] * quat[1],
                   ref[0] * quat[3] - ref[1] * quat[2] + ref[2] * quat[1] - ref[3] * quat[0]};
    const double sign = w < 0.0 ? -1.0 : 1.0, s = sqrt(vec3_dot(v, v));
    const double scale = s > 0.0 ? 2.0 * atan2(s, sign * w) / s : 2.0 / (sign * w);
    for (int k = 0; k < 3; k++)
        r[k] = sign * scale * v[k];
}

/* J_r^-1(r), row-major, times -k into J (an nv x nv block at stride nv). */
static void add_inverse_right_jacobian(double *J, size_t nv, const double r[3], double k)
{
    const double t2 = vec3_dot(r, r), t = sqrt(t2);
    const double c =
        t > 1e-4 ? 1.0 / t2 - (1.0 + cos(t)) / (2.0 * t * sin(t)) : 1.0 / 12.0 + t2 / 720.0;
    const double cross[9] = {0, -r[2], r[1], r[2], 0, -r[0], -r[1], r[0], 0};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            double square = 0.0;
            for (int m = 0; m < 3; m++)
                square += cross[3 * a + m] * cross[3 * m + b];
            J[(size_t)a * nv + (size_t)b] -= k * ((a == b) + 0.5 * cross[3 * a + b] + c * square);
        }
}

/* The spring of joint i into tau (its velocities); with dq, its derivative along v. */
static void joint_spring(const mbd_model *model, int i, const double *q, double *tau, double *dq)
{
    const mbd_passive *p = &model->defs[i].passive;
    const mbd_joint *joint = &model->joint[i];
    const int q0 = model->q0[i], v0 = model->v0[i];
    const size_t nv = (size_t)model->nv;
    double *J = dq ? dq + (size_t)v0 * nv + (size_t)v0 : NULL;
    if (!joint_has_quaternion(joint->type)) {
        linear_spring(p, joint->nv, q + q0, tau + v0);
        for (int k = 0; k < joint->nv && J; k++)
            J[(size_t)k * nv + (size_t)k] -= p->stiffness;
        return;
    }
    const int free_joint = joint->type == MBD_FREE, quat = free_joint ? 3 : 0;
    double r[3];
    rotation_vector(r, q + q0 + quat, p->springref + quat);
    for (int k = 0; k < 3; k++)
        tau[v0 + k] -= p->stiffness * r[k];
    if (J)
        add_inverse_right_jacobian(J, nv, r, p->stiffness);
    if (!free_joint)
        return;
    double E[9], f[3], force[3];
    quaternion_rotation(E, q + q0 + 3);
    for (int k = 0; k < 3; k++)
        f[k] = -p->stiffness * (q[q0 + k] - p->springref[k]);
    mat3_apply_t(force, E, f);
    for (int k = 0; k < 3; k++)
        tau[v0 + 3 + k] += force[k];
    if (!J)
        return;
    const double turn[9] = {0, -force[2], force[1], force[2], 0, -force[0], -force[1], force[0], 0};
    for (int a = 0; a < 3; a++) {
        J[(size_t)(3 + a) * nv + (size_t)(3 + a)] -= p->stiffness;
        for (int b = 0; b < 3; b++)
            J[(size_t)(3 + a) * nv + (size_t)b] += turn[3 * a + b];
    }
}

/* sum coef_k x_k over the tendon's joints (x: q, at their first coordinates, or qd). */
static double tendon_sum(const mbd_tendon_def *tendon, const double *x, const int *first)
{
    double sum = 0.0;
    for (int k = 0; k < tendon->ncoef; k++)
        sum += tendon->coef[k] * x[first[tendon->bodies[k]]];
    return sum;
}

/* How far the tendon's length at q lies beyond its rest range (0 within it). */
static double tendon_stretch(const mbd_model *model, const mbd_tendon_def *tendon, const double *q)
{
    const double length = tendon_sum(tendon, q, model->q0);
    const double below = length - tendon->length_spring[0];
    const double above = length - tendon->length_spring[1];
    return below < 0.0 ? below : above > 0.0 ? above : 0.0;
}

/* A free joint's armature's velocity term into tau (see the top); its derivative into dqd,
 * d(-a w x v)/dw = a [v], d/dv = -a [w]. */
static void free_armature(const mbd_model *model, int i, const double *qd, double *tau, double *dqd)
{
    const double a = model->armature[i], *w = qd + model->v0[i], *v = w + 3;
    free_armature_force(a, w, tau + model->v0[i]);
    if (!dqd)
        return;
    const size_t nv = (size_t)model->nv, row = (size_t)model->v0[i] + 3;
    const double vx[9] = {0, -v[2], v[1], v[2], 0, -v[0], -v[1], v[0], 0};
    const double wx[9] = {0, -w[2], w[1], w[2], 0, -w[0], -w[1], w[0], 0};
    for (size_t r = 0; r < 3; r++)
        for (size_t c = 0; c < 3; c++) {
            dqd[(row + r) * nv + row - 3 + c] += a * vx[3 * r + c];
            dqd[(row + r) * nv + row + c] -= a * wx[3 * r + c];
        }
}

/* The tendons' forces into tau; their derivatives into dq and dqd where given. */
static void tendon_forces(const mbd_model *model, const double *q, const double *qd, double *tau,
                          double *dq, double *dqd)
{
    const size_t nv = (size_t)model->nv;
    for (int t = 0; t < model->ntendons; t++) {
        const mbd_tendon_def *tendon = &model->tendons[t];
        const double stretch = tendon_stretch(model, tendon, q);
        const double force =
            -tendon->stiffness * stretch - tendon->damping * tendon_sum(tendon, qd, model->v0);
        const double spring = stretch != 0.0 ? tendon->stiffness : 0.0;
        for (int a = 0; a < tendon->ncoef; a++) {
            const size_t row = (size_t)model->v0[tendon->bodies[a]];
            tau[row] += tendon->coef[a] * force;
            for (int b = 0; b < tendon->ncoef; b++) {
                const size_t col = (size_t)model->v0[tendon->bodies[b]];
                const double cc = tendon->coef[a] * tendon->coef[b];
                if (dq)
                    dq[row * nv + col] -= spring * cc;
                if (dqd)
                    dqd[row * nv + col] -= tendon->damping * cc;
            }
        }
    }
}

/* The model whose inertias are the compensated shares (for RNEA and its derivatives). */
static mbd_model gravcomp_model(const mbd_model *model)
{
    mbd_model held = *model;
    held.inertia = model->gravcomp;
    held.free_body_inverse = NULL; /* the model's inertias', not these */
    return held;
}

/* The rows (of width columns) of the joints whose share of gravity compensation their
 * actuators apply (actuator_gravcomp: in tau, not tau_p) set to zero. */
static void drop_actuators_gravcomp(const mbd_model *model, double *rows, int width)
{
    for (int i = 0; i < model->nb; i++)
        if (model->defs[i].passive.actuator_gravcomp)
            memset(rows + (size_t)model->v0[i] * (size_t)width, 0,
                   (size_t)model->joint[i].nv * (size_t)width * sizeof *rows);
}

int passive_add(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
                const double *tau, double *out)
{
    if (check_finite(qd, model->nv))
        return MBD_ENONFINITE;
    const int nv = model->nv;
    if (model->gravcomp) { /* first: RNEA writes out's bodies' forces into work->f */
        const mbd_model held = gravcomp_model(model);
        rnea_at_rest(&held, work, out);
        memcpy(work->gravcomp_f, work->f, (size_t)model->nb * sizeof *work->f);
        drop_actuators_gravcomp(model, out, 1);
    } else {
        memset(out, 0, (size_t)nv * sizeof *out);
    }
    for (int i = 0; i < model->nb; i++) {
        const mbd_passive *p = &model->defs[i].passive;
        joint_damper(p, model->joint[i].nv, qd + model->v0[i], out + model->v0[i]);
        if (p->stiffness != 0.0)
            joint_spring(model, i, q, out, NULL);
        if (model->joint_type[i] == MBD_FREE && joint_has_armature(model, i))
            free_armature(model, i, qd, out, NULL);
    }
    tendon_forces(model, q, qd, out, NULL, NULL);
    if (tau)
        for (int k = 0; k < nv; k++)
            out[k] += tau[k];
    return check_finite(out, nv) ? MBD_ENONFINITE : MBD_OK;
}

int passive_derivatives(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
                        double *dq, double *dqd)
{
    const size_t nv = (size_t)model->nv;
    memset(dq, 0, nv * nv * sizeof *dq);
    memset(dqd, 0, nv * nv * sizeof *dqd);
    if (model->gravcomp) {
        const mbd_model held = gravcomp_model(model);
        void *buffer = derivative_scratch(work, rnea_derivatives_bytes(model));
        if (!buffer)
            return MBD_ENOMEM;
        rnea_derivatives_start(&held, work, buffer, work->rest_rates, NULL, NULL);
        rnea_derivatives_at(&held, buffer, work->rest_rates, work->rest_rates, dq, NULL, nv);
        drop_actuators_gravcomp(model, dq, model->nv);
    }
    for (int i = 0; i < model->nb; i++) {
        const mbd_passive *p = &model->defs[i].passive;
        const size_t v0 = (size_t)model->v0[i];
        for (size_t k = v0; k < v0 + (size_t)model->joint[i].nv; k++)
            dqd[k * nv + k] -= p->damping;
        if (p->stiffness != 0.0)
            joint_spring(model, i, q, work->passive_tau + nv, dq); /* its forces: unused */
        if (model->joint_type[i] == MBD_FREE && joint_has_armature(model, i))
            free_armature(model, i, qd, work->passive_tau + nv, dqd);
    }
    tendon_forces(model, q, qd, work->passive_tau + nv, dq, dqd);
    return MBD_OK;
}

double passive_potential(const mbd_model *model, const double *q)
{
    double V = 0.0;
    for (int i = 0; i < model->nb; i++) {
        const mbd_passive *p = &model->defs[i].passive;
        const mbd_joint *joint = &model->joint[i];
        const double *qi = q + model->q0[i];
        if (p->stiffness == 0.0)
            continue;
        const int quat = joint->type == MBD_FREE ? 3 : joint->type == MBD_SPHERICAL ? 0 : -1;
        double squares = 0.0, r[3];
        for (int k = 0; k < (quat < 0 ? joint->nv : quat); k++)
            squares += (qi[k] - p->springref[k]) * (qi[k] - p->springref[k]);
        if (quat >= 0) {
            rotation_vector(r, qi + quat, p->springref + quat);
            squares += vec3_dot(r, r);
        }
        V += 0.5 * p->stiffness * squares;
    }
    for (int t = 0; t < model->ntendons; t++) {
        const double stretch = tendon_stretch(model, &model->tendons[t], q);
        V += 0.5 * model->tendons[t].stiffness * stretch * stretch;
    }
    return V;
}

int mbd_passive_forces(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
                       double *tau_p)
{
    if (!model || !work || work->model != model || !q || !qd || !tau_p)
        return MBD_EINVAL;
    if (!model->has_passive) {
        const int status = check_finite(qd, model->nv) ? MBD_ENONFINITE : MBD_OK;
        memset(tau_p, 0, (size_t)model->nv * sizeof *tau_p);
        return status ? status : start_kinematics(model, work, q);
    }
    const int status = mbd_kinematics(model, work, q);
    return status ? status : passive_add(model, work, q, qd, NULL, tau_p);
}
