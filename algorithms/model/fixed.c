/* fixed.c: fixed joints, merged away before the solvers see the model.
 *
 * A body joined to its parent by MBD_FIXED is rigidly part of its nearest moving ancestor
 * (its carrier; -1: the world). Its pose in the carrier is the product of the fixed joints'
 * transforms on the way; its mass, centre of mass and inertia are added to the carrier's
 * by the parallel-axis theorem about the combined centre of mass (no cancellation about a
 * distant origin); its moving children hang from the carrier with their joint placement
 * composed with that pose; it stays as a named frame. What is fixed to the world adds
 * nothing to the dynamics. */
#include <stdlib.h>
#include <string.h>

#include "model/parts.h"

/* x_carrier = origin + R x_body */
typedef struct {
    int carrier;
    double origin[3], R[9];
} placement;

/* D(d) = |d|^2 1 - d d^T: the inertia of a unit point mass at d about the origin. */
static void add_point_inertia(double I[9], double mass, const double d[3])
{
    const double d2 = vec3_dot(d, d);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            I[3 * r + c] += mass * ((r == c) * d2 - d[r] * d[c]);
}

/* Adds a part (mass, com and inertia about its com, all in the carrier's frame) to the
 * body (mass, com, inertia about the com), which keeps the sum exactly symmetric. */
static void add_part(mbd_body_def *body, double mass, const double com[3], const double I[9])
{
    const double total = body->mass + mass;
    if (total == 0.0)
        return; /* massless parts: nothing to add (their inertias are zero) */
    double com_new[3], d_body[3], d_part[3], sum[9];
    for (int k = 0; k < 3; k++) {
        com_new[k] = (body->mass * body->com[k] + mass * com[k]) / total;
        d_body[k] = body->com[k] - com_new[k];
        d_part[k] = com[k] - com_new[k];
    }
    for (int k = 0; k < 9; k++)
        sum[k] = (&body->inertia[0][0])[k] + I[k];
    add_point_inertia(sum, body->mass, d_body);
    add_point_inertia(sum, mass, d_part);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            body->inertia[r][c] = 0.5 * (sum[3 * r + c] + sum[3 * c + r]);
    body->mass = total;
    memcpy(body->com, com_new, sizeof com_new);
}

/* The fixed body's mass properties turned into its carrier's frame by p, added to it. */
static void merge_mass(mbd_body_def *carrier, const mbd_body_def *part, const placement *p)
{
    double com[3], RI[9], I[9];
    mat3_apply(com, p->R, part->com);
    for (int k = 0; k < 3; k++)
        com[k] += p->origin[k];
    mat3_mul(RI, p->R, &part->inertia[0][0]);
    for (int r = 0; r < 3; r++) /* R I R^T */
        for (int c = 0; c < 3; c++)
            I[3 * r + c] = RI[3 * r] * p->R[3 * c] + RI[3 * r + 1] * p->R[3 * c + 1] +
                           RI[3 * r + 2] * p->R[3 * c + 2];
    add_part(carrier, part->mass, com, I);
}

/* The joint placement of a body whose parent sits at p in its carrier. */
static void compose(placement *out, const placement *p, const mbd_body_def *b)
{
    double shifted[3];
    mat3_apply(shifted, p->R, b->origin);
    for (int k = 0; k < 3; k++)
        out->origin[k] = p->origin[k] + shifted[k];
    mat3_mul(out->R, p->R, &b->rotation[0][0]);
    out->carrier = p->carrier;
}

int model_merge_fixed(const mbd_body_def *bodies, int n, mbd_body_def *moving, int *from,
                      mbd_frame_def *frames, int *nmoving, int *nframes)
{
    placement *at = malloc((size_t)n * sizeof *at); /* each body's frame in its carrier */
    if (!at)
        return -1;
    static const placement world = {-1, {0, 0, 0}, {1, 0, 0, 0, 1, 0, 0, 0, 1}};
    int nm = 0, nf = 0;
    for (int i = 0; i < n; i++) {
        const mbd_body_def *b = &bodies[i];
        const placement *parent = b->parent < 0 ? &world : &at[b->parent];
        if (b->joint != MBD_FIXED) {
            mbd_body_def *m = &moving[nm];
            *m = *b;
            m->parent = parent->carrier;
            placement joint;
            compose(&joint, parent, b);
            memcpy(m->origin, joint.origin, sizeof m->origin);
            memcpy(&m->rotation[0][0], joint.R, sizeof joint.R);
            at[i] = (placement){nm, {0, 0, 0}, {1, 0, 0, 0, 1, 0, 0, 0, 1}};
            from[nm++] = i;
            continue;
        }
        compose(&at[i], parent, b);
        frames[nf] =
            (mbd_frame_def){.name = b->name, .joint_name = b->joint_name, .body = at[i].carrier};
        memcpy(frames[nf].origin, at[i].origin, sizeof frames[nf].origin);
        memcpy(&frames[nf].rotation[0][0], at[i].R, sizeof at[i].R);
        nf++;
        if (at[i].carrier >= 0) /* an ancestor: already in moving */
            merge_mass(&moving[at[i].carrier], b, &at[i]);
    }
    free(at);
    *nmoving = nm;
    *nframes = nf;
    return 0;
}
