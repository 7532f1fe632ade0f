/* passive_elements.c: the model's armature, gravity compensation and fixed tendons from
 * the description (mbd_passive, mbd_tendon_def), as the solvers and dynamics/passive.c
 * read them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/parts.h"

/* Per body, or NULL where every joint has none. */
static int fill_armature(mbd_model *m)
{
    int any = 0;
    for (int i = 0; i < m->nb; i++)
        any |= m->defs[i].passive.armature != 0.0;
    if (!any)
        return 0;
    if (!(m->armature = malloc((size_t)m->nb * sizeof *m->armature)))
        return -1;
    for (int i = 0; i < m->nb; i++)
        m->armature[i] = m->defs[i].passive.armature;
    return 0;
}

/* The compensated share of each moving body: the bodies given, their mass properties scaled
 * by gravcomp, merged as fixed.c merges the bodies (so that a fixed body's share joins its
 * carrier's exactly), then turned into the solvers' frames as frames.c turns the inertias
 * (only m and h = m c enter a weight). NULL where no body has any. */
static int fill_gravcomp(mbd_model *m, const mbd_model_def *def)
{
    const int n = def->nbodies;
    int any = 0;
    for (int k = 0; k < n; k++)
        any |= def->bodies[k].passive.gravcomp != 0.0;
    if (!any)
        return 0;
    mbd_body_def *scaled = malloc((size_t)n * sizeof *scaled);
    mbd_body_def *moving = malloc((size_t)n * sizeof *moving);
    mbd_frame_def *frames = malloc((size_t)n * sizeof *frames);
    int *from = malloc((size_t)n * sizeof *from), nmoving, nframes;
    m->gravcomp = malloc((size_t)m->nb * sizeof *m->gravcomp);
    int status = scaled && moving && frames && from && m->gravcomp ? 0 : -1;
    for (int k = 0; k < n && status == 0; k++) {
        const double share = def->bodies[k].passive.gravcomp;
        scaled[k] = def->bodies[k];
        scaled[k].mass *= share;
        for (int e = 0; e < 9; e++)
            (&scaled[k].inertia[0][0])[e] *= share;
    }
    if (status == 0)
        status = model_merge_fixed(scaled, n, moving, from, frames, &nmoving, &nframes);
    static const double no_inertia[9] = {0};
    for (int i = 0; i < m->nb && status == 0; i++) {
        double com[3];
        mat3_apply_t(com, m->user_rotation[i], moving[i].com);
        rigid_inertia(&m->gravcomp[i], moving[i].mass, com, no_inertia);
    }
    free(scaled), free(moving), free(frames), free(from);
    return status;
}

/* own_tendons with body_of: a body given -> the model's. */
static int own_tendons_mapped(mbd_model *m, const mbd_model_def *def, const int *body_of)
{
    if (!(m->tendons = calloc((size_t)def->ntendons, sizeof *m->tendons)))
        return -1;
    m->ntendons = def->ntendons;
    for (int t = 0; t < def->ntendons; t++) {
        const mbd_tendon_def *given = &def->tendons[t];
        mbd_tendon_def *own = &m->tendons[t];
        const size_t n = (size_t)given->ncoef;
        int *bodies = malloc(n * sizeof *bodies);
        double *coef = malloc(n * sizeof *coef);
        *own = *given;
        own->name = given->name ? strdup(given->name) : NULL;
        own->bodies = bodies, own->coef = coef;
        if (!bodies || !coef || (given->name && !own->name))
            return -1;
        for (size_t k = 0; k < n; k++)
            bodies[k] = body_of[given->bodies[k]];
        memcpy(coef, given->coef, n * sizeof *coef);
    }
    return 0;
}

/* The tendons given, their arrays owned and their bodies those of the model (from: the
 * model's body k -> the body given; a tendon's bodies move, checked). */
static int own_tendons(mbd_model *m, const mbd_model_def *def, const int *from)
{
    if (def->ntendons == 0)
        return 0;
    int *body_of = malloc((size_t)def->nbodies * sizeof *body_of);
    if (body_of)
        for (int k = 0; k < m->nb; k++)
            body_of[from[k]] = k;
    const int status = body_of ? own_tendons_mapped(m, def, body_of) : -1;
    free(body_of);
    return status;
}

/* A quaternion joint's rest orientation as a unit quaternion; none given (zero): 1. */
static void unit_rest_orientation(mbd_body_def *b)
{
    if (b->joint != MBD_SPHERICAL && b->joint != MBD_FREE)
        return;
    double *quat = b->passive.springref + (b->joint == MBD_FREE ? 3 : 0);
    const double norm =
        sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3]);
    if (norm == 0.0)
        quat[0] = 1.0;
    else
        for (int k = 0; k < 4; k++)
            quat[k] /= norm;
}

int fill_passive(mbd_model *m, const mbd_model_def *def, const int *from)
{
    if (fill_armature(m) < 0 || fill_gravcomp(m, def) < 0 || own_tendons(m, def, from) < 0)
        return -1;
    for (int i = 0; i < m->nb; i++) {
        mbd_passive *p = &m->defs[i].passive;
        unit_rest_orientation(&m->defs[i]);
        m->has_passive |= p->damping != 0.0 || p->stiffness != 0.0;
        m->has_passive |= m->joint_type[i] == MBD_FREE && p->armature != 0.0; /* free_armature */
    }
    for (int t = 0; t < m->ntendons; t++)
        m->has_passive |= m->tendons[t].stiffness != 0.0 || m->tendons[t].damping != 0.0;
    m->has_passive |= m->gravcomp != NULL;
    return 0;
}

void free_passive(mbd_model *m)
{
    for (int t = 0; t < m->ntendons; t++) {
        free((char *)m->tendons[t].name);
        free((int *)m->tendons[t].bodies);
        free((double *)m->tendons[t].coef);
    }
    free(m->tendons);
    free(m->armature);
    free(m->gravcomp);
}
