/* model_mjcf.c: reads a MuJoCo MJCF model (root <mujoco>) with MuJoCo's own compiler.
 *
 * MJCF's meaning (default classes, childclass, <include>, compiler angle units and Euler
 * sequences, the ways to write an orientation, inertias from geoms) is whatever MuJoCo's
 * compiler makes of it, so mj_loadXML compiles the file and the model is built from the
 * compiled mjModel: body frames (body_pos, body_quat), masses, centres of mass and inertias
 * (body_ipos, body_iquat, body_inertia), joints with their anchors and axes, gravity.
 *
 * Joints: MuJoCo moves a body by its joints in order, each hinge or ball turning about its
 * anchor (jnt_pos) and each slide sliding along its axis, anchors and axes in the body's
 * frame as carried by the joints before. Each MuJoCo joint becomes one of our bodies, so
 * that the coordinates keep MuJoCo's order and joint names: the joints of a body but the
 * last move massless bodies, and the last carries the mass. Our body frames sit at the
 * joint's anchor: body k of a MuJoCo body is its frame after joint k shifted by anchor a_k
 * (the previous anchor for a slide, whose anchor does not matter), so that joint k's frame
 * is a_k - a_(k-1) from body k - 1, axes unchanged. A free joint (on a child of the world)
 * keeps the world as its joint frame, so that its q is MuJoCo's qpos. A body without joints
 * is welded (MBD_FIXED) and merged by the model builder.
 *
 * What forward dynamics here does not model is refused, naming the element and attribute:
 * armature, damping, stiffness, friction loss, a hinge or slide reference position other
 * than 0 (ref), tendons, equality constraints and fluid forces (<option density
 * viscosity>). Contacts, actuators, sensors, limits and visuals lie outside forward
 * dynamics and are ignored. Built without MuJoCo (MBD_WITH_MUJOCO undefined), the reader
 * says so. */
#include <stdlib.h>
#include <string.h>

#include "models.h"

#ifdef MBD_WITH_MUJOCO

#include <pthread.h>
#include <stdio.h>

#include <mujoco/mujoco.h>

/* MuJoCo 2.x's compiler swaps the global error handlers while it runs and keeps the last
 * model in a global (for mj_saveLastXML): one compilation at a time. */
static pthread_mutex_t compiler_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct {
    const char *file;
    const mjModel *m;
    char *err;
    size_t err_size;
} mjcf_reader;

/* "FILE: what" into the caller's err; the value is status. */
#define FAIL(r, status, format, ...)                                                       \
    (model_error((r)->err, (r)->err_size, "%s: " format, (r)->file, ##__VA_ARGS__), (status))

/* The name of object id of type, or "" for an unnamed one. */
static const char *name_of(const mjModel *m, int type, int id)
{
    const char *name = mj_id2name(m, type, id);
    return name ? name : "";
}

/* ---- what is refused ---- */

/* Refuses a joint attribute that is not zero in the compiled model. */
static int refuse_joint(const mjcf_reader *r, int joint, const char *attribute, double value,
                        const char *why)
{
    return FAIL(r, MBD_EUNSUPPORTED, "<joint name=\"%.80s\"> %s=\"%g\": %s",
                name_of(r->m, mjOBJ_JOINT, joint), attribute, value, why);
}

/* Armature, damping, stiffness, friction loss and ref, joint by joint; the passive forces
 * only where MuJoCo applies them. */
static int check_joints(const mjcf_reader *r)
{
    const mjModel *m = r->m;
    const int passive = !(m->opt.disableflags & mjDSBL_PASSIVE);
    for (int j = 0; j < m->njnt; j++) {
        const int dof = m->jnt_dofadr[j], qpos = m->jnt_qposadr[j];
        const int scalar = m->jnt_type[j] == mjJNT_HINGE || m->jnt_type[j] == mjJNT_SLIDE;
        if (m->dof_armature[dof] != 0)
            return refuse_joint(r, j, "armature", m->dof_armature[dof],
                                "rotor inertia is not modelled (it would add to H's diagonal)");
        if (passive && m->dof_damping[dof] != 0)
            return refuse_joint(r, j, "damping", m->dof_damping[dof],
                                "joint damping is not modelled");
        if (passive && m->jnt_stiffness[j] != 0)
            return refuse_joint(r, j, "stiffness", m->jnt_stiffness[j],
                                "joint springs are not modelled");
        if (m->dof_frictionloss[dof] != 0)
            return refuse_joint(r, j, "frictionloss", m->dof_frictionloss[dof],
                                "dry friction is not modelled");
        if (scalar && m->qpos0[qpos] != 0)
            return refuse_joint(r, j, "ref", m->qpos0[qpos],
                                "a reference position other than 0 is not supported (q would "
                                "be qpos - ref; a hinge's in radians)");
    }
    return MBD_OK;
}

/* Tendons, equality constraints and fluid forces. */
static int check_model(const mjcf_reader *r)
{
    const mjModel *m = r->m;
    if (m->ntendon > 0)
        return FAIL(r, MBD_EUNSUPPORTED, "<tendon> \"%.80s\": tendons are not supported",
                    name_of(m, mjOBJ_TENDON, 0));
    if (m->neq > 0)
        return FAIL(r, MBD_EUNSUPPORTED,
                    "<equality> \"%.80s\": equality constraints are not supported",
                    name_of(m, mjOBJ_EQUALITY, 0));
    if (!(m->opt.disableflags & mjDSBL_PASSIVE) && (m->opt.density != 0 || m->opt.viscosity != 0))
        return FAIL(r, MBD_EUNSUPPORTED,
                    "<option> %s=\"%g\": fluid forces are not modelled",
                    m->opt.density != 0 ? "density" : "viscosity",
                    m->opt.density != 0 ? m->opt.density : m->opt.viscosity);
    for (int b = 1; b < m->nbody; b++) {
        const int j = m->body_jntadr[b];
        if (m->body_jntnum[b] > 0 && m->jnt_type[j] == mjJNT_FREE && m->body_parentid[b] != 0)
            return FAIL(r, MBD_EUNSUPPORTED,
                        "<body name=\"%.80s\">: a free joint on a body that is not a child of "
                        "the world is not supported", name_of(m, mjOBJ_BODY, b));
    }
    return check_joints(r);
}

/* ---- bodies ---- */

/* Our bodies: one per joint, one for a body without joints; their names stored in names. */
typedef struct {
    mbd_body_def *defs;
    char **names;   /* (n) the bodies' names, each allocated */
    int *last;      /* (nbody) MuJoCo body -> our body carrying its mass, -1: the world */
    double *anchor; /* (nbody x 3) where our last body sits in MuJoCo's body frame */
    int n;
} mjcf_bodies;

static void rotation_of_quat(double R[3][3], const mjtNum quat[4])
{
    mju_quat2Mat(&R[0][0], quat);
}

/* The joint of MuJoCo joint j on def; anchor: where the joint turns, in the body frame. */
static void set_joint(const mjModel *m, int j, mbd_body_def *def, double anchor[3])
{
    static const mbd_joint_type types[] = {[mjJNT_FREE] = MBD_FREE, [mjJNT_BALL] = MBD_SPHERICAL,
                                           [mjJNT_SLIDE] = MBD_PRISMATIC,
                                           [mjJNT_HINGE] = MBD_REVOLUTE};
    def->joint = types[m->jnt_type[j]];
    def->joint_name = mj_id2name(m, mjOBJ_JOINT, j);
    mju_copy3(def->axes[0], m->jnt_axis + 3 * j);
    if (m->jnt_type[j] == mjJNT_HINGE || m->jnt_type[j] == mjJNT_BALL)
        mju_copy3(anchor, m->jnt_pos + 3 * j);
}

/* MuJoCo body b's mass, centre of mass and inertia on def, its frame shifted by anchor. */
static void set_mass(const mjModel *m, int b, mbd_body_def *def, const double anchor[3])
{
    double R[3][3];
    rotation_of_quat(R, m->body_iquat + 4 * b);
    def->mass = m->body_mass[b];
    mju_sub3(def->com, m->body_ipos + 3 * b, anchor);
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) {
            double sum = 0.0;
            for (int a = 0; a < 3; a++)
                sum += R[i][a] * m->body_inertia[3 * b + a] * R[k][a];
            def->inertia[i][k] = sum;
        }
    for (int i = 0; i < 3; i++) /* exactly symmetric */
        for (int k = 0; k < i; k++)
            def->inertia[i][k] = def->inertia[k][i];
}

/* Our body's name: MuJoCo body b's, "body<b>" if unnamed; "BODY/JOINT" for a massless one
 * that a joint of a body with several moves. */
static char *body_name(const mjModel *m, int b, int joint, int massless)
{
    char name[200];
    const char *body = mj_id2name(m, mjOBJ_BODY, b);
    int length = body ? snprintf(name, sizeof name, "%s", body)
                      : snprintf(name, sizeof name, "body%d", b);
    if (massless && length < (int)sizeof name) {
        const char *jn = mj_id2name(m, mjOBJ_JOINT, joint);
        if (jn)
            snprintf(name + length, sizeof name - (size_t)length, "/%s", jn);
        else
            snprintf(name + length, sizeof name - (size_t)length, "/joint%d", joint);
    }
    return strdup(name);
}

/* Our bodies of MuJoCo body b (see the top of the file); -1 when out of memory. */
static int add_body(const mjModel *m, int b, mjcf_bodies *out)
{
    const int parent = out->last[m->body_parentid[b]];
    const double *parent_anchor = out->anchor + 3 * m->body_parentid[b];
    const int njoints = m->body_jntnum[b], nours = njoints > 0 ? njoints : 1;
    double anchor[3] = {0, 0, 0}, previous[3] = {0, 0, 0};
    for (int k = 0; k < nours; k++) {
        mbd_body_def *def = &out->defs[out->n];
        const int joint = m->body_jntadr[b] + k;
        def->parent = k == 0 ? parent : out->n - 1;
        if (!(out->names[out->n] = body_name(m, b, joint, k < njoints - 1)))
            return -1;
        def->name = out->names[out->n++];
        if (njoints == 0)
            def->joint = MBD_FIXED;
        else
            set_joint(m, joint, def, anchor);
        if (def->joint == MBD_FREE) { /* the world frame: q is MuJoCo's qpos */
            def->rotation[0][0] = def->rotation[1][1] = def->rotation[2][2] = 1.0;
        } else if (k == 0) { /* body_pos - parent anchor + R(body_quat) anchor */
            rotation_of_quat(def->rotation, m->body_quat + 4 * b);
            mju_mulMatVec(def->origin, &def->rotation[0][0], anchor, 3, 3);
            mju_addTo3(def->origin, m->body_pos + 3 * b);
            mju_subFrom3(def->origin, parent_anchor);
        } else {
            def->rotation[0][0] = def->rotation[1][1] = def->rotation[2][2] = 1.0;
            mju_sub3(def->origin, anchor, previous);
        }
        mju_copy3(previous, anchor);
    }
    set_mass(m, b, &out->defs[out->n - 1], anchor);
    out->last[b] = out->n - 1;
    mju_copy3(out->anchor + 3 * b, anchor);
    return 0;
}

/* The compiled model's bodies built into a model; an mbd_status after a message. */
static int build(const mjcf_reader *r, mbd_model **model)
{
    const mjModel *m = r->m;
    size_t n = 0;
    for (int b = 1; b < m->nbody; b++)
        n += m->body_jntnum[b] > 0 ? (size_t)m->body_jntnum[b] : 1;
    if (n == 0 || m->nv == 0)
        return FAIL(r, MBD_EPARSE, "<worldbody>: no joint moves");
    mjcf_bodies bodies = {.defs = calloc(n, sizeof *bodies.defs),
                          .names = calloc(n, sizeof *bodies.names),
                          .last = malloc((size_t)m->nbody * sizeof *bodies.last),
                          .anchor = calloc((size_t)m->nbody * 3, sizeof *bodies.anchor)};
    int status = bodies.defs && bodies.names && bodies.last && bodies.anchor ? MBD_OK
                                                                           : MBD_ENOMEM;
    if (status == MBD_OK)
        bodies.last[0] = -1;
    for (int b = 1; b < m->nbody && status == MBD_OK; b++)
        if (add_body(m, b, &bodies) < 0)
            status = MBD_ENOMEM;
    if (status == MBD_ENOMEM) {
        status = FAIL(r, status, "out of memory for %zu bodies", n);
    } else {
        mbd_model_def def = {.name = m->names[0] ? m->names : r->file, .nbodies = (int)n,
                             .bodies = bodies.defs};
        if (!(m->opt.disableflags & mjDSBL_GRAVITY))
            mju_copy3(def.gravity, m->opt.gravity);
        char reason[512]; /* names the body: 'bodies[i] ("name")...' */
        status = model_build_labelled(&def, r->file, NULL, model, reason, sizeof reason);
        if (status != MBD_OK)
            status = FAIL(r, status, "%s", reason);
    }
    for (size_t k = 0; bodies.names && k < n; k++)
        free(bodies.names[k]);
    free(bodies.defs), free(bodies.names), free(bodies.last), free(bodies.anchor);
    return status;
}

/* mj_loadXML's messages span lines; ours are one line, with no trailing blanks. */
static void flatten(char *text)
{
    for (char *c = text; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    for (size_t n = strlen(text); n > 0 && text[n - 1] == ' '; n--)
        text[n - 1] = '\0';
}

int model_mjcf_load(const char *path, mbd_model **model, char *err, size_t err_size)
{
    char reason[1000] = "";
    pthread_mutex_lock(&compiler_lock);
    mjModel *m = mj_loadXML(path, NULL, reason, sizeof reason);
    pthread_mutex_unlock(&compiler_lock);
    mjcf_reader r = {.file = path, .m = m, .err = err, .err_size = err_size};
    if (!m) {
        flatten(reason);
        return FAIL(&r, MBD_EPARSE, "MuJoCo's compiler: %s", reason);
    }
    int status = check_model(&r);
    if (status == MBD_OK)
        status = build(&r, model);
    mj_deleteModel(m);
    return status;
}

#else

int model_mjcf_load(const char *path, mbd_model **model, char *err, size_t err_size)
{
    (void)model;
    model_error(err, err_size,
                "%s: an MJCF model (root <mujoco>), which needs MuJoCo: this build has none "
                "(install libmujoco-dev and rebuild)",
                path);
    return MBD_EUNSUPPORTED;
}

#endif
