/* mujoco_plugin.c: MuJoCo (Todorov, Erez and Tassa, "MuJoCo: A physics engine for
 * model-based control", 2012; the mujoco wheel of PyPI, its libmujoco.so) as two solver
 * plugins (include/mbd_plugin.h, docs/plugins.md), so that mbd and mbd-bench run
 * and time it on the same models and states as our own solvers:
 *
 *   mujoco-smooth   MuJoCo's smooth forward dynamics and nothing else: mj_kinematics,
 *                   mj_comPos, mj_crb, mj_factorM, mj_comVel, mj_rne, mj_solveM
 *                   (peer_forward_path): its qacc_smooth
 *   mujoco-forward  mj_forward, MuJoCo's whole pipeline (its collision, constraint, sensor
 *                   and actuation stages find nothing to do here), timed beside it
 *
 * Each work exports the mbd_model to MJCF and loads it (peer_open, shared with
 * build/peer-mujoco: bench/peer_mujoco_model.c), so every model mbd reads maps; a model
 * with loops is exported as its open tree, which every mbd_forward solves. The passive
 * forces come inside tau (mbd_forward adds them before it calls a plugin), so MuJoCo gets
 * the armature alone, which stays in M. */
#include "mbd_plugin.h"

#include "../../peer_mujoco.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    peer p;
    double *tau; /* (nv) tau with the free joints' armature term taken out (see below) */
    int refused; /* MBD_OK, or the status of every call on a model MuJoCo cannot take */
} mujoco_work;

static void mujoco_work_free(void *opaque)
{
    mujoco_work *w = opaque;
    if (!w)
        return;
    peer_close(&w->p);
    free(w->tau);
    free(w);
}

/* What MuJoCo is given of the model: its open tree (the export takes trees), its bodies'
 * armature alone of the passive elements (the passive forces come inside tau), and a
 * placeholder mass and inertia on a massless body (MuJoCo's compiler refuses moving bodies
 * without mass, such as those between the joints of an MJCF body with several), which
 * massless_to_zero takes out of the compiled model. */
static int exported_copy(const mbd_model *model, mbd_model **copy, char *err, size_t err_size)
{
    const int nb = mbd_model_nbodies(model);
    mbd_body_def *bodies = malloc((size_t)nb * sizeof *bodies);
    if (!bodies)
        return MBD_ENOMEM;
    for (int i = 0; i < nb; i++) {
        mbd_body_def *b = &bodies[i];
        *b = *mbd_model_body(model, i);
        b->passive = (mbd_passive){.armature = b->passive.armature};
        if (b->mass == 0.0) {
            b->mass = 1.0;
            for (int k = 0; k < 3; k++)
                b->inertia[k][k] = 1.0;
        }
    }
    mbd_model_def def = {.name = mbd_model_name(model), .nbodies = nb, .bodies = bodies};
    mbd_model_gravity(model, def.gravity);
    const int status = mbd_model_build(&def, copy, err, err_size);
    free(bodies);
    return status;
}

/* The placeholders of exported_copy zeroed in MuJoCo's model, whose dynamics take massless
 * bodies (their children's mass makes M positive definite, as in ours), and the constants
 * that depend on them computed again. */
static void massless_to_zero(const mbd_model *model, peer *p)
{
    for (int i = 0; i < mbd_model_nbodies(model); i++) {
        const mbd_body_def *b = mbd_model_body(model, i);
        if (b->mass == 0.0) {
            const int body = mj_name2id(p->m, mjOBJ_BODY, b->name); /* peer_open found it */
            p->m->body_mass[body] = 0.0;
            mju_zero3(p->m->body_inertia + 3 * body);
        }
    }
    mj_setConst(p->m, p->d);
}

/* MuJoCo's model of the mbd_model; NULL (the ABI's out of memory) when memory runs out. A
 * model MuJoCo cannot take (a free joint below another body: its free joints are the
 * world's children's) gives a work whose calls return MBD_EUNSUPPORTED, after a line on
 * stderr, the plugin's only way to say why. */
static void *mujoco_work_new(const mbd_model *model)
{
    char err[1024] = "out of memory";
    mujoco_work *w = calloc(1, sizeof *w);
    mbd_model *copy = NULL;
    if (!w)
        return NULL;
    int status = exported_copy(model, &copy, err, sizeof err);
    if (status == MBD_OK && peer_open(copy, NULL, &w->p, err, sizeof err) < 0)
        status = MBD_EUNSUPPORTED;
    mbd_model_free(copy);
    if (status == MBD_OK && !(w->tau = malloc((size_t)w->p.nv * sizeof *w->tau)))
        status = MBD_ENOMEM;
    if (status != MBD_OK) {
        fprintf(stderr, "mujoco plugin: %s: %s\n", mbd_model_name(model), err);
        peer_close(&w->p);
        if (status == MBD_ENOMEM) {
            mujoco_work_free(w);
            return NULL;
        }
        w->refused = status;
        return w;
    }
    w->p.passive = 0; /* armature alone, in M: the staged path needs no passive stage */
    w->p.m->opt.disableflags |= mjDSBL_AUTORESET; /* a NaN is mbd_forward's to report */
    massless_to_zero(model, &w->p);
    return w;
}

/* mbd's passive forces carry a free joint's armature term -armature w x v_O (the point
 * mass of MuJoCo's armature on the world-frame velocity, mbd.h), which MuJoCo's own
 * dynamics make from its armature: tau gets it back, so that it counts once. */
static const double *without_free_armature(mujoco_work *w, const mbd_model *model, const double *qd,
                                           const double *tau)
{
    const int nv = w->p.nv;
    if (tau)
        memcpy(w->tau, tau, (size_t)nv * sizeof *w->tau);
    else
        memset(w->tau, 0, (size_t)nv * sizeof *w->tau);
    for (int j = 0; j < w->p.nfree; j++) {
        const free_joint *fj = &w->p.free_joints[j];
        const double armature = mbd_model_body(model, fj->body)->passive.armature;
        double wxv[3];
        mju_cross(wxv, qd + fj->v0, qd + fj->v0 + 3);
        mju_addToScl3(w->tau + fj->v0 + 3, wxv, armature);
    }
    return w->tau;
}

/* qdd from MuJoCo's qacc after run's stages at mbd's state. */
static int forward_by(void (*run)(peer *p), const mbd_model *model, mujoco_work *w, const double *q,
                      const double *qd, const double *tau, double *qdd)
{
    if (w->refused)
        return w->refused;
    peer_set_state(&w->p, model, q, qd, without_free_armature(w, model, qd, tau));
    run(&w->p);
    peer_gather(&w->p, w->p.d->qacc, qdd);
    free_joint_accelerations(&w->p, qdd);
    return MBD_OK;
}

static void full_pipeline(peer *p) { mj_forward(p->m, p->d); }

static int forward_smooth(const mbd_model *model, void *work, const double *q, const double *qd,
                          const double *tau, double *qdd)
{
    return forward_by(peer_forward_path, model, work, q, qd, tau, qdd);
}

static int forward_full(const mbd_model *model, void *work, const double *q, const double *qd,
                        const double *tau, double *qdd)
{
    return forward_by(full_pipeline, model, work, q, qd, tau, qdd);
}

/* No derivatives entry: MuJoCo's are by finite differences (mjd_transitionFD), which the
 * finite-difference method already gives. */
static const mbd_plugin_solver solvers[] = {
    {.abi = MBD_PLUGIN_ABI,
     .name = "mujoco-smooth",
     .summary =
         "plugin: MuJoCo's smooth dynamics alone: kinematics, CRB, sparse LDL', RNE, solve (qacc_smooth)",
     .work_new = mujoco_work_new,
     .work_free = mujoco_work_free,
     .forward = forward_smooth},
    {.abi = MBD_PLUGIN_ABI,
     .name = "mujoco-forward",
     .summary =
         "plugin: mj_forward, MuJoCo's full pipeline (collision, constraints, sensors: none here)",
     .work_new = mujoco_work_new,
     .work_free = mujoco_work_free,
     .forward = forward_full},
};

const mbd_plugin_solver *mbd_plugin_solvers(int *count)
{
    *count = (int)(sizeof solvers / sizeof solvers[0]);
    return solvers;
}
