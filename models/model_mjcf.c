/* model_mjcf.c: reads a MuJoCo MJCF model (root <mujoco>) with MuJoCo's own compiler, and
 * makes of it what MuJoCo's smooth dynamics make of it: qdd = qacc_smooth at the same qpos,
 * qvel and qfrc_applied = tau, with actuation disabled (tau stands for what the actuators
 * would apply).
 *
 * MJCF's meaning (default classes, childclass, <include>, compiler angle units and Euler
 * sequences, the ways to write an orientation, inertias from geoms) is whatever MuJoCo's
 * compiler makes of it, so mj_loadXML compiles the file and the model is built from the
 * compiled mjModel: body frames (body_pos, body_quat), masses, centres of mass and inertias
 * (body_ipos, body_iquat, body_inertia), joints with their anchors and axes, gravity, and
 * the smooth dynamics' passive elements: armature (dof_armature, with an actuator's
 * armature times gear^2 on its joint, as mj_fullM has it), joint damping (dof_damping, with
 * an actuator's damping times gear^2), joint stiffness about qpos_spring, gravcomp (but a
 * joint's share that actuatorgravcomp gives its actuators), and the stiffness, damping and
 * spring length of fixed tendons; <option>'s gravity and its spring, damper and gravity
 * flags.
 *
 * Joints: MuJoCo moves a body by its joints in order, each hinge or ball turning about its
 * anchor (jnt_pos) and each slide sliding along its axis, anchors and axes in the body's
 * frame as carried by the joints before. Each MuJoCo joint becomes one of our bodies, so
 * that the coordinates keep MuJoCo's order and joint names: the joints of a body but the
 * last move massless bodies, and the last carries the mass. Our body frames sit at the
 * joint's anchor: body k of a MuJoCo body is its frame after joint k shifted by anchor a_k
 * (the previous anchor for a slide, whose anchor does not matter), so that joint k's frame
 * is a_k - a_(k-1) from body k - 1, axes unchanged. A hinge or slide with a reference
 * position (ref: the XML pose is qpos = ref) has -ref folded into its frame, so that q is
 * qpos. A free joint (on a child of the world) keeps the world as its joint frame, so that
 * its q is MuJoCo's qpos. A body without joints is welded (MBD_FIXED) and merged by the
 * model builder.
 *
 * What is not part of the smooth dynamics (contacts, joint and tendon limits, friction
 * loss, equality constraints, actuators, sensors, tendons without passive forces) is
 * ignored and listed (mbd_model_left_out). What changes the smooth dynamics and is not
 * modelled is refused, every such element named in one message: polynomial or plastic
 * springs and dampers, tendon armature, spatial tendons with passive forces, fluid
 * forces, flexes, an actuator's armature or damping on another transmission than a 1-DOF
 * joint or a fixed tendon. MuJoCo's warnings go to stderr, named after the file. Built
 * without MuJoCo (MBD_WITH_MUJOCO undefined), the reader says so. */
#include <stdlib.h>
#include <string.h>

#include "models.h"

#ifdef MBD_WITH_MUJOCO

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include <mujoco/mujoco.h>

/* MuJoCo's compiler swaps the global error handlers while it runs and keeps the last model
 * in a global (for mj_saveLastXML), and its warnings go through a global hook: one
 * compilation at a time. */
static pthread_mutex_t compiler_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *warning_file; /* the file being compiled, for compiler_warning */

/* MuJoCo's warnings (printed to stdout by default, where a command's JSON goes) to stderr,
 * named after the file. */
static void compiler_warning(const char *message)
{
    fprintf(stderr, "%s: MuJoCo: %s\n", warning_file ? warning_file : "(MJCF)", message);
}

static void (*saved_warning)(const char *);

/* The compiler taken for path (the lock, its warnings ours) and given back. */
static void compiler_enter(const char *path)
{
    pthread_mutex_lock(&compiler_lock);
    saved_warning = mju_user_warning;
    warning_file = path;
    mju_user_warning = compiler_warning;
}

static void compiler_leave(void)
{
    mju_user_warning = saved_warning;
    warning_file = NULL;
    pthread_mutex_unlock(&compiler_lock);
}

/* A list of clauses joined by "; " (what is refused, what is left out). */
typedef struct {
    char text[MBD_ERROR_SIZE - 512]; /* room for the file's name and the rest of the line */
    size_t used;
    int count;
} clause_list;

static void add_clause(clause_list *list, const char *format, ...)
{
    if (list->used + 4 >= sizeof list->text) {
        list->count++;
        return;
    }
    if (list->count++ > 0)
        list->used +=
            (size_t)snprintf(list->text + list->used, sizeof list->text - list->used, "; ");
    va_list args;
    va_start(args, format);
    const int n = vsnprintf(list->text + list->used, sizeof list->text - list->used, format, args);
    va_end(args);
    list->used = n < 0 ? list->used : list->used + (size_t)n;
    if (list->used >= sizeof list->text)
        list->used = sizeof list->text - 1;
}

/* What the smooth dynamics take from the compiled model: per MuJoCo joint, its armature
 * and damping (actuators' included), and our body for it; per tendon, its damping. */
typedef struct {
    const char *file;
    const mjModel *m;
    int spring, damper, gravcomp; /* <option><flag>: which passive forces act */
    double *armature, *damping;   /* (njnt) */
    double *tendon_damping;       /* (ntendon) */
    clause_list refused, left_out;
    mjSpec *spec; /* the file parsed again for the classes of refusals */
    int spec_tried;
    char *err;
    size_t err_size;
} mjcf_reader;

/* "FILE: what" into the caller's err; the value is status. */
#define FAIL(r, status, format, ...)                                                               \
    (model_error((r)->err, (r)->err_size, "%s: " format, (r)->file, ##__VA_ARGS__), (status))

/* The name of object id of type, or "" for an unnamed one. */
static const char *name_of(const mjModel *m, int type, int id)
{
    const char *name = mj_id2name(m, type, id);
    return name ? name : "";
}

/* The default class of the element of type called name where the file's spec (parsed
 * again on the first refusal: mjModel keeps no classes) has it and it is not "main"; else
 * NULL. */
static const char *default_class(mjcf_reader *r, int type, const char *name)
{
    if (!name[0])
        return NULL;
    if (!r->spec_tried) {
        r->spec_tried = 1;
        compiler_enter(r->file);
        r->spec = mj_parseXML(r->file, NULL, NULL, 0);
        compiler_leave();
    }
    mjsElement *element = r->spec ? mjs_findElement(r->spec, type, name) : NULL;
    mjsDefault *def = element ? mjs_getDefault(element) : NULL;
    const char *name_of_class = def ? mjs_getString(mjs_getName(def->element)) : NULL;
    return name_of_class && name_of_class[0] && strcmp(name_of_class, "main") != 0 ? name_of_class
                                                                                   : NULL;
}

/* `<tag name="NAME" class="CLASS">` of object id of type, into out (the class where
 * default_class finds one). */
static const char *element_tag(mjcf_reader *r, const char *tag, int type, int id, char *out,
                               size_t size)
{
    const char *name = name_of(r->m, type, id), *class_name = default_class(r, type, name);
    if (class_name)
        snprintf(out, size, "<%s name=\"%.80s\" class=\"%.80s\">", tag, name, class_name);
    else
        snprintf(out, size, "<%s name=\"%.80s\">", tag, name);
    return out;
}

/* ---- the passive elements, and what is refused ---- */

static int nonzero(const mjtNum *x, int n)
{
    for (int k = 0; k < n; k++)
        if (x[k] != 0)
            return 1;
    return 0;
}

/* The joint's armature and damping: the same on each of its DOFs (one attribute). */
static void read_joint_passive(mjcf_reader *r, int j)
{
    const mjModel *m = r->m;
    const int dof = m->jnt_dofadr[j];
    char tag[256];
    r->armature[j] = m->dof_armature[dof];
    r->damping[j] = r->damper ? m->dof_damping[dof] : 0;
    if (r->spring && nonzero(m->jnt_stiffnesspoly + mjNPOLY * j, mjNPOLY))
        add_clause(&r->refused, "%s stiffnesspoly: nonlinear springs are not modelled",
                   element_tag(r, "joint", mjOBJ_JOINT, j, tag, sizeof tag));
    if (r->damper && nonzero(m->dof_dampingpoly + mjNPOLY * dof, mjNPOLY))
        add_clause(&r->refused, "%s dampingpoly: nonlinear dampers are not modelled",
                   element_tag(r, "joint", mjOBJ_JOINT, j, tag, sizeof tag));
    if (r->spring && m->jnt_springyield[j] != 0)
        add_clause(&r->refused, "%s springyield=\"%g\": plastic springs are not modelled",
                   element_tag(r, "joint", mjOBJ_JOINT, j, tag, sizeof tag), m->jnt_springyield[j]);
}

/* An actuator's armature and damping times gear^2 join its joint's (a 1-DOF joint) or its
 * fixed tendon's damping, as MuJoCo applies them whatever the actuation flag. */
static void read_actuator_passive(mjcf_reader *r, int a, const int *fixed_tendon)
{
    const mjModel *m = r->m;
    const double armature = m->actuator_armature[a];
    const double damping = r->damper ? m->actuator_damping[a] : 0;
    char tag[256];
    if (r->damper && nonzero(m->actuator_dampingpoly + mjNPOLY * a, mjNPOLY))
        add_clause(&r->refused, "%s dampingpoly: nonlinear dampers are not modelled",
                   element_tag(r, "actuator", mjOBJ_ACTUATOR, a, tag, sizeof tag));
    if (armature == 0 && damping == 0)
        return;
    const int type = m->actuator_trntype[a], id = m->actuator_trnid[2 * a];
    const double gear = m->actuator_gear[6 * m->actuator_outadr[a]];
    const int on_joint = (type == mjTRN_JOINT || type == mjTRN_JOINTINPARENT) &&
                         (m->jnt_type[id] == mjJNT_HINGE || m->jnt_type[id] == mjJNT_SLIDE);
    if (on_joint) {
        r->armature[id] += armature * gear * gear;
        r->damping[id] += damping * gear * gear;
    } else if (type == mjTRN_TENDON && fixed_tendon[id] && armature == 0) {
        r->tendon_damping[id] += damping * gear * gear;
    } else {
        const char *what = armature != 0 ? "armature" : "damping";
        add_clause(&r->refused,
                   "%s %s: an actuator's %s is modelled on a hinge, a slide or "
                   "(damping) a fixed tendon only",
                   element_tag(r, "actuator", mjOBJ_ACTUATOR, a, tag, sizeof tag), what, what);
    }
}

/* Whether tendon t is fixed (every object of its path a joint). */
static int tendon_is_fixed(const mjModel *m, int t)
{
    for (int w = m->tendon_adr[t]; w < m->tendon_adr[t] + m->tendon_num[t]; w++)
        if (m->wrap_type[w] != mjWRAP_JOINT)
            return 0;
    return 1;
}

/* A tendon's springs and dampers: refused where not modelled; one without is left out. */
static void check_tendon(mjcf_reader *r, int t, int fixed)
{
    const mjModel *m = r->m;
    const char *kind = fixed ? "fixed" : "spatial";
    char tag[256];
    if (m->tendon_armature[t] != 0)
        add_clause(&r->refused,
                   "%s armature=\"%g\": tendon armature (coef coef^T in H) is not "
                   "modelled",
                   element_tag(r, kind, mjOBJ_TENDON, t, tag, sizeof tag), m->tendon_armature[t]);
    if ((r->spring && (nonzero(m->tendon_stiffnesspoly + mjNPOLY * t, mjNPOLY) ||
                       m->tendon_springyield[t] != 0)) ||
        (r->damper && nonzero(m->tendon_dampingpoly + mjNPOLY * t, mjNPOLY)))
        add_clause(&r->refused,
                   "%s: nonlinear or plastic tendon springs and dampers are not "
                   "modelled",
                   element_tag(r, kind, mjOBJ_TENDON, t, tag, sizeof tag));
    const int passive = (r->spring && m->tendon_stiffness[t] != 0) || r->tendon_damping[t] != 0;
    if (passive && !fixed)
        add_clause(&r->refused,
                   "%s %s: a spatial tendon's passive forces are not modelled (fixed "
                   "tendons' are)",
                   element_tag(r, kind, mjOBJ_TENDON, t, tag, sizeof tag),
                   r->spring && m->tendon_stiffness[t] != 0 ? "stiffness" : "damping");
}

/* Fluid forces, flexes and free joints below the world's children, refused. */
static void check_model(mjcf_reader *r)
{
    const mjModel *m = r->m;
    if ((r->spring || r->damper) && (m->opt.density != 0 || m->opt.viscosity != 0))
        add_clause(&r->refused, "<option> %s=\"%g\": fluid forces are not modelled",
                   m->opt.density != 0 ? "density" : "viscosity",
                   m->opt.density != 0 ? m->opt.density : m->opt.viscosity);
    if (m->nflex > 0)
        add_clause(&r->refused, "<flex> \"%.80s\": deformable flexes are not modelled",
                   name_of(m, mjOBJ_FLEX, 0));
    for (int b = 1; b < m->nbody; b++) {
        const int j = m->body_jntadr[b];
        if (m->body_jntnum[b] > 0 && m->jnt_type[j] == mjJNT_FREE && m->body_parentid[b] != 0)
            add_clause(&r->refused,
                       "<body name=\"%.80s\">: a free joint on a body that is not a "
                       "child of the world is not supported",
                       name_of(m, mjOBJ_BODY, b));
    }
}

/* "N what" (what's plural unless N = 1) when N > 0. */
static void add_count(clause_list *list, int n, const char *one, const char *many)
{
    if (n > 0)
        add_clause(list, "%d %s", n, n == 1 ? one : many);
}

/* What the smooth dynamics leave out, counted. */
static void list_left_out(mjcf_reader *r, int passive_tendons)
{
    const mjModel *m = r->m;
    const int off = m->opt.disableflags;
    int colliding = 0, limited = 0, lossy = 0;
    for (int g = 0; g < m->ngeom; g++)
        colliding += m->geom_contype[g] != 0 || m->geom_conaffinity[g] != 0;
    for (int j = 0; j < m->njnt; j++)
        limited += m->jnt_limited[j] != 0;
    for (int t = 0; t < m->ntendon; t++)
        limited += m->tendon_limited[t] != 0;
    for (int d = 0; d < m->nv; d++)
        lossy += m->dof_frictionloss[d] != 0;
    for (int t = 0; t < m->ntendon; t++)
        lossy += m->tendon_frictionloss[t] != 0;
    if (!(off & (mjDSBL_CONSTRAINT | mjDSBL_CONTACT)))
        add_count(&r->left_out, colliding, "colliding geom (contacts)",
                  "colliding geoms (contacts)");
    if (!(off & (mjDSBL_CONSTRAINT | mjDSBL_LIMIT)))
        add_count(&r->left_out, limited, "joint or tendon limit", "joint and tendon limits");
    if (!(off & (mjDSBL_CONSTRAINT | mjDSBL_FRICTIONLOSS)))
        add_count(&r->left_out, lossy, "frictionloss", "frictionlosses");
    if (!(off & (mjDSBL_CONSTRAINT | mjDSBL_EQUALITY)))
        add_count(&r->left_out, (int)m->neq, "equality constraint", "equality constraints");
    add_count(&r->left_out, (int)m->nu, "actuator (tau is what it applies)",
              "actuators (tau is what they apply)");
    add_count(&r->left_out, (int)m->nsensor, "sensor", "sensors");
    add_count(&r->left_out, (int)m->ntendon - passive_tendons, "tendon without passive forces",
              "tendons without passive forces");
}

/* Reads and checks every passive element; the refused ones are listed in r->refused. */
static int read_passive(mjcf_reader *r, int *fixed_tendon, int *passive_tendons)
{
    const mjModel *m = r->m;
    r->armature = calloc((size_t)m->njnt + 1, sizeof *r->armature);
    r->damping = calloc((size_t)m->njnt + 1, sizeof *r->damping);
    r->tendon_damping = calloc((size_t)m->ntendon + 1, sizeof *r->tendon_damping);
    if (!r->armature || !r->damping || !r->tendon_damping)
        return -1;
    for (int j = 0; j < m->njnt; j++)
        read_joint_passive(r, j);
    for (int t = 0; t < m->ntendon; t++) {
        fixed_tendon[t] = tendon_is_fixed(m, t);
        r->tendon_damping[t] = r->damper ? m->tendon_damping[t] : 0;
    }
    for (int a = 0; a < m->nu; a++)
        read_actuator_passive(r, a, fixed_tendon);
    *passive_tendons = 0;
    for (int t = 0; t < m->ntendon; t++) {
        check_tendon(r, t, fixed_tendon[t]);
        *passive_tendons += (r->spring && m->tendon_stiffness[t] != 0) || r->tendon_damping[t] != 0;
    }
    check_model(r);
    list_left_out(r, *passive_tendons);
    return 0;
}

/* ---- bodies ---- */

/* Our bodies: one per joint, one for a body without joints; their names stored in names. */
typedef struct {
    mbd_body_def *defs;
    char **names;   /* (n) the bodies' names, each allocated */
    int *last;      /* (nbody) MuJoCo body -> our body carrying its mass, -1: the world */
    int *of_joint;  /* (njnt) MuJoCo joint -> our body */
    double *anchor; /* (nbody x 3) where our last body sits in MuJoCo's body frame */
    int n;
} mjcf_bodies;

static void rotation_of_quat(double R[3][3], const mjtNum quat[4]) { mju_quat2Mat(&R[0][0], quat); }

/* The joint of MuJoCo joint j on def, its passive elements with it; anchor: where the joint
 * turns, in the body frame. */
static void set_joint(const mjcf_reader *r, int j, mbd_body_def *def, double anchor[3])
{
    static const mbd_joint_type types[] = {[mjJNT_FREE] = MBD_FREE,
                                           [mjJNT_BALL] = MBD_SPHERICAL,
                                           [mjJNT_SLIDE] = MBD_PRISMATIC,
                                           [mjJNT_HINGE] = MBD_REVOLUTE};
    const mjModel *m = r->m;
    def->joint = types[m->jnt_type[j]];
    def->joint_name = mj_id2name(m, mjOBJ_JOINT, j);
    mju_copy3(def->axes[0], m->jnt_axis + 3 * j);
    if (m->jnt_type[j] == mjJNT_HINGE || m->jnt_type[j] == mjJNT_BALL)
        mju_copy3(anchor, m->jnt_pos + 3 * j);
    mbd_passive *p = &def->passive;
    p->armature = r->armature[j];
    p->damping = r->damping[j];
    p->stiffness = r->spring ? m->jnt_stiffness[j] : 0;
    p->actuator_gravcomp = m->jnt_actgravcomp[j];
    mju_copy(p->springref, m->qpos_spring + m->jnt_qposadr[j], mbd_joint_type_nq(def->joint));
}

/* A hinge's or slide's reference position folded into its frame: the XML pose is qpos =
 * ref, so the frame turns by -ref about the axis (a slide: moves by -ref along it), and
 * q = qpos. */
static void fold_reference(const mjModel *m, int j, mbd_body_def *def)
{
    const double ref = m->qpos0[m->jnt_qposadr[j]];
    if (ref == 0 || (m->jnt_type[j] != mjJNT_HINGE && m->jnt_type[j] != mjJNT_SLIDE))
        return;
    if (m->jnt_type[j] == mjJNT_SLIDE) {
        double shift[3], along[3];
        mju_scl3(along, m->jnt_axis + 3 * j, -ref);
        mju_mulMatVec(shift, &def->rotation[0][0], along, 3, 3);
        mju_addTo3(def->origin, shift);
        return;
    }
    double quat[4], turn[9], R[9];
    mju_axisAngle2Quat(quat, m->jnt_axis + 3 * j, -ref);
    mju_quat2Mat(turn, quat);
    mju_mulMatMat(R, &def->rotation[0][0], turn, 3, 3, 3);
    mju_copy(&def->rotation[0][0], R, 9);
}

/* MuJoCo body b's mass, centre of mass and inertia on def, its frame shifted by anchor;
 * its gravcomp. */
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
    int length =
        body ? snprintf(name, sizeof name, "%s", body) : snprintf(name, sizeof name, "body%d", b);
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
static int add_body(const mjcf_reader *r, int b, mjcf_bodies *out)
{
    const mjModel *m = r->m;
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
        def->name = out->names[out->n];
        if (njoints == 0) {
            def->joint = MBD_FIXED;
        } else {
            set_joint(r, joint, def, anchor);
            out->of_joint[joint] = out->n;
        }
        out->n++;
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
        if (njoints > 0)
            fold_reference(m, joint, def);
        mju_copy3(previous, anchor);
    }
    mbd_body_def *carrier = &out->defs[out->n - 1];
    set_mass(m, b, carrier, anchor);
    carrier->passive.gravcomp = r->gravcomp ? m->body_gravcomp[b] : 0;
    out->last[b] = out->n - 1;
    mju_copy3(out->anchor + 3 * b, anchor);
    return 0;
}

/* The fixed tendons with passive forces, on our bodies; tendons (ntendon) and the arrays
 * they point into (bodies, coef: nwrap) are the caller's. */
static int tendon_defs(const mjcf_reader *r, const int *fixed, const mjcf_bodies *bodies,
                       mbd_tendon_def *tendons, int *bodies_of, double *coef)
{
    const mjModel *m = r->m;
    int n = 0;
    for (int t = 0; t < m->ntendon; t++) {
        const double stiffness = r->spring ? m->tendon_stiffness[t] : 0;
        if (!fixed[t] || (stiffness == 0 && r->tendon_damping[t] == 0))
            continue;
        const int adr = m->tendon_adr[t];
        for (int w = adr; w < adr + m->tendon_num[t]; w++) {
            bodies_of[w] = bodies->of_joint[m->wrap_objid[w]];
            coef[w] = m->wrap_prm[w];
        }
        tendons[n++] = (mbd_tendon_def){
            .name = mj_id2name(m, mjOBJ_TENDON, t),
            .ncoef = m->tendon_num[t],
            .bodies = bodies_of + adr,
            .coef = coef + adr,
            .stiffness = stiffness,
            .damping = r->tendon_damping[t],
            .length_spring = {m->tendon_lengthspring[2 * t], m->tendon_lengthspring[2 * t + 1]}};
    }
    return n;
}

/* The model from our bodies and tendons; an mbd_status after a message. */
static int build_model(const mjcf_reader *r, const mjcf_bodies *bodies, const int *fixed,
                       mbd_model **model)
{
    const mjModel *m = r->m;
    const size_t nwrap = (size_t)m->nwrap + 1, ntendon = (size_t)m->ntendon + 1;
    mbd_tendon_def *tendons = calloc(ntendon, sizeof *tendons);
    int *bodies_of = calloc(nwrap, sizeof *bodies_of);
    double *coef = calloc(nwrap, sizeof *coef);
    int status;
    if (!tendons || !bodies_of || !coef) {
        status = FAIL(r, MBD_ENOMEM, "out of memory for %d tendons", (int)m->ntendon);
    } else {
        mbd_model_def def = {.name = m->names[0] ? m->names : r->file,
                             .nbodies = bodies->n,
                             .bodies = bodies->defs,
                             .tendons = tendons};
        def.ntendons = tendon_defs(r, fixed, bodies, tendons, bodies_of, coef);
        if (!(m->opt.disableflags & mjDSBL_GRAVITY))
            mju_copy3(def.gravity, m->opt.gravity);
        char reason[512]; /* names the body: 'bodies[i] ("name")...' */
        status = model_build_labelled(&def, r->file, NULL, model, reason, sizeof reason);
        if (status != MBD_OK)
            status = FAIL(r, status, "%s", reason);
        else if (r->left_out.count > 0 && model_set_left_out(*model, r->left_out.text) < 0)
            status = FAIL(r, MBD_ENOMEM, "out of memory");
        if (status != MBD_OK) {
            mbd_model_free(*model);
            *model = NULL;
        }
    }
    free(tendons), free(bodies_of), free(coef);
    return status;
}

/* The compiled model's bodies built into a model; an mbd_status after a message. */
static int build(const mjcf_reader *r, const int *fixed, mbd_model **model)
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
                          .of_joint = calloc((size_t)m->njnt + 1, sizeof *bodies.of_joint),
                          .anchor = calloc((size_t)m->nbody * 3, sizeof *bodies.anchor)};
    int status = bodies.defs && bodies.names && bodies.last && bodies.of_joint && bodies.anchor
                     ? MBD_OK
                     : MBD_ENOMEM;
    if (status == MBD_OK)
        bodies.last[0] = -1;
    for (int b = 1; b < m->nbody && status == MBD_OK; b++)
        if (add_body(r, b, &bodies) < 0)
            status = MBD_ENOMEM;
    if (status == MBD_ENOMEM)
        status = FAIL(r, status, "out of memory for %zu bodies", n);
    else
        status = build_model(r, &bodies, fixed, model);
    for (size_t k = 0; bodies.names && k < n; k++)
        free(bodies.names[k]);
    free(bodies.defs), free(bodies.names), free(bodies.last), free(bodies.of_joint);
    free(bodies.anchor);
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

/* The file compiled by MuJoCo (from text where not NULL: a file of that name in memory),
 * its warnings on stderr; NULL with the reason in reason. */
static mjModel *compile(const char *path, const char *text, char *reason, int reason_size)
{
    mjVFS vfs;
    mj_defaultVFS(&vfs);
    compiler_enter(path);
    mjModel *m = NULL;
    if (text && mj_addBufferVFS(&vfs, path, text, (int)strlen(text)) != 0)
        snprintf(reason, (size_t)reason_size, "cannot hold the text in memory");
    else
        m = mj_loadXML(path, text ? &vfs : NULL, reason, reason_size);
    compiler_leave();
    mj_deleteVFS(&vfs);
    return m;
}

/* The passive elements read, then the model built unless something is refused. */
static int read_compiled(mjcf_reader *r, mbd_model **model)
{
    const mjModel *m = r->m;
    const int off = m->opt.disableflags;
    r->spring = !(off & mjDSBL_SPRING);
    r->damper = !(off & mjDSBL_DAMPER);
    r->gravcomp = (r->spring || r->damper) && !(off & mjDSBL_GRAVITY);
    int *fixed = calloc((size_t)m->ntendon + 1, sizeof *fixed), passive_tendons;
    int status = fixed && read_passive(r, fixed, &passive_tendons) == 0 ? MBD_OK : MBD_ENOMEM;
    if (status == MBD_ENOMEM)
        status = FAIL(r, status, "out of memory");
    else if (r->refused.count > 0)
        status =
            FAIL(r, MBD_EUNSUPPORTED, "not modelled (%d): %s", r->refused.count, r->refused.text);
    else
        status = build(r, fixed, model);
    free(fixed), free(r->armature), free(r->damping), free(r->tendon_damping);
    if (r->spec)
        mj_deleteSpec(r->spec);
    return status;
}

int model_mjcf_load(const char *path, const char *text, mbd_model **model, char *err,
                    size_t err_size)
{
    char reason[1000] = "";
    mjModel *m = compile(path, text, reason, sizeof reason);
    /* A text is not parsed again for the classes of refusals (spec_tried). */
    mjcf_reader r = {
        .file = path, .m = m, .spec_tried = text != NULL, .err = err, .err_size = err_size};
    if (!m) {
        flatten(reason);
        return FAIL(&r, MBD_EPARSE, "MuJoCo's compiler: %s", reason);
    }
    const int status = read_compiled(&r, model);
    mj_deleteModel(m);
    return status;
}

int mbd_model_from_mujoco(const void *mujoco_model, const char *name, mbd_model **model, char *err,
                          size_t err_size)
{
    if (model)
        *model = NULL;
    if (!mujoco_model || !name || !model) {
        model_error(err, err_size, "model: no MuJoCo model given");
        return MBD_EINVAL;
    }
    mjcf_reader r = {
        .file = name, .m = mujoco_model, .spec_tried = 1, .err = err, .err_size = err_size};
    return read_compiled(&r, model);
}

const char *mbd_mujoco_version(void) { return mj_versionString(); }

#else

/* MBD_EUNSUPPORTED, saying that name is MuJoCo's and this build has no MuJoCo. */
static int no_mujoco(const char *name, char *err, size_t err_size)
{
    model_error(err, err_size,
                "%s: an MJCF model (root <mujoco>), which needs MuJoCo: this build has none "
                "(make installs MuJoCo from PyPI into .venv/ and links it)",
                name);
    return MBD_EUNSUPPORTED;
}

int model_mjcf_load(const char *path, const char *text, mbd_model **model, char *err,
                    size_t err_size)
{
    (void)text, (void)model;
    return no_mujoco(path, err, err_size);
}

int mbd_model_from_mujoco(const void *mujoco_model, const char *name, mbd_model **model, char *err,
                          size_t err_size)
{
    (void)mujoco_model;
    if (model)
        *model = NULL;
    return no_mujoco(name ? name : "model", err, err_size);
}

const char *mbd_mujoco_version(void) { return NULL; }

#endif
