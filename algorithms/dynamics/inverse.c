/* inverse.c: the entry points of one state's quantities: the inverse dynamics tau (RNEA
 * with friction, armature and passive forces), the mass matrix H (CRBA) and H^-1. */
#include "dynamics/dynamics.h"

int start_state(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
                const double *qdd)
{
    if (!work || work->model != model)
        return MBD_EINVAL;
    int status = mbd_kinematics(model, work, q);
    if (status)
        return status;
    if ((qd && check_finite(qd, model->nv)) || (qdd && check_finite(qdd, model->nv)))
        return MBD_ENONFINITE;
    return MBD_OK;
}

int mbd_inverse_dynamics(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
                         const double *qdd, double *tau, double *reactions)
{
    int status = start_state(model, work, q, qd, qdd);
    if (status == MBD_OK && model->has_passive) /* before RNEA: it leaves work->f */
        status = passive_add(model, work, q, qd, NULL, work->passive_tau);
    if (status)
        return status;
    rnea(model, work, qd, qdd, 1, tau);
    if (model->has_friction) { /* the actuator supplies what friction takes */
        friction_forces(model, work, qd, work->jv);
        for (int k = 0; k < model->nv; k++)
            tau[k] -= work->jv[k];
    }
    for (int i = 0; model->armature && i < model->nb; i++)
        for (int k = model->v0[i]; k < model->v0[i] + model->joint[i].nv; k++)
            tau[k] += model->armature[i] * qdd[k];
    if (model->has_passive) /* the passive forces do part of the work */
        for (int k = 0; k < model->nv; k++)
            tau[k] -= work->passive_tau[k];
    if (model->gravcomp) /* what holds the compensated weight is not the joints' to carry */
        for (int i = 0; i < model->nb; i++)
            for (int r = 0; r < 6; r++)
                work->f[i][r] -= work->gravcomp_f[i][r];
    if (reactions) /* into the user's body frames: n = Q n', f = Q f' */
        for (int i = 0; i < model->nb; i++) {
            mat3_apply(reactions + 6 * i, model->user_rotation[i], work->f[i]);
            mat3_apply(reactions + 6 * i + 3, model->user_rotation[i], work->f[i] + 3);
        }
    return check_finite(tau, model->nv) ? MBD_ENONFINITE : MBD_OK; /* finite input can overflow */
}

int mbd_mass_matrix(const mbd_model *model, mbd_work *work, const double *q, double *H)
{
    int status = start_state(model, work, q, NULL, NULL);
    if (status)
        return status;
    const size_t nv = (size_t)model->nv;
    crba(model, work, H);
    for (size_t r = 0; r < nv; r++) /* mirror the lower triangle */
        for (size_t c = 0; c <= r; c++)
            H[c * nv + r] = H[r * nv + c];
    return check_finite(H, model->nv * model->nv) ? MBD_ENONFINITE : MBD_OK;
}

int mbd_mass_matrix_inverse(const mbd_model *model, mbd_work *work, const double *q, double *Hinv)
{
    int status = start_state(model, work, q, NULL, NULL);
    if (status)
        return status;
    work->failed_body = -1;
    status = mass_matrix_inverse(model, work, Hinv);
    return status == MBD_OK && check_finite(Hinv, model->nv * model->nv) ? MBD_ENONFINITE : status;
}
