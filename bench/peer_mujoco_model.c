/* peer_mujoco_model.c: one of our models in MuJoCo, for build/peer-mujoco (see
 * peer_mujoco.c). Each model is exported by mbd_export_mjcf into a temporary directory and
 * loaded with mj_loadXML. MuJoCo numbers bodies (and so coordinates) depth-first, ours by
 * index: the two are matched by body name and the order of the joints within the body. A
 * free joint (on a child of the world) differs in its coordinates too: see the free-joint
 * section. */
#include "peer_mujoco.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Removes the exported files and their directory. */
static void remove_directory(const char *dir)
{
    DIR *listing = opendir(dir);
    for (struct dirent *e; listing && (e = readdir(listing));) {
        char path[4096];
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path)
            unlink(path);
    }
    if (listing)
        closedir(listing);
    rmdir(dir);
}

/* mj_loadXML's messages span lines; ours are one line. */
static void flatten(char *text)
{
    for (char *c = text; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
}

/* MuJoCo's own reading of a model file (URDF or MJCF), its smooth dynamics as mbd reads
 * them: joint limits, friction loss, contacts and actuation switched off, and the passive
 * forces too where ours has none (a URDF's <dynamics>, which our reader leaves out). */
static mjModel *load_direct(const char *path, int passive, char *err, size_t err_size)
{
    char reason[1000] = "";
    mjModel *m = mj_loadXML(path, NULL, reason, sizeof reason);
    if (!m) {
        flatten(reason);
        snprintf(err, err_size, "mj_loadXML: %s", reason);
        return NULL;
    }
    m->opt.disableflags |= mjDSBL_LIMIT | mjDSBL_FRICTIONLOSS | mjDSBL_CONTACT | mjDSBL_ACTUATION;
    if (!passive)
        m->opt.disableflags |= mjDSBL_SPRING | mjDSBL_DAMPER;
    return m;
}

static mjModel *export_and_load(const mbd_model *model, char *err, size_t err_size)
{
    char dir[] = "/tmp/peer-mujoco-XXXXXX", path[sizeof dir + 16], reason[1000] = "";
    if (!mkdtemp(dir)) {
        snprintf(err, err_size, "cannot make a temporary directory: %s", strerror(errno));
        return NULL;
    }
    snprintf(path, sizeof path, "%s/model.xml", dir);
    mjModel *m = NULL;
    if (mbd_export_mjcf(model, path, reason, sizeof reason) != MBD_OK) {
        snprintf(err, err_size, "export: %s", reason);
    } else if (!(m = mj_loadXML(path, NULL, reason, sizeof reason))) {
        flatten(reason);
        snprintf(err, err_size, "mj_loadXML: %s", reason);
    }
    remove_directory(dir);
    return m;
}

/* MuJoCo's joints of one of our bodies, as its export writes them. */
static int expected_joints(mbd_joint_type type, int types[2])
{
    switch (type) {
    case MBD_REVOLUTE:
        types[0] = mjJNT_HINGE;
        return 1;
    case MBD_PRISMATIC:
        types[0] = mjJNT_SLIDE;
        return 1;
    case MBD_CYLINDRICAL:
        types[0] = mjJNT_HINGE, types[1] = mjJNT_SLIDE;
        return 2;
    case MBD_CARDAN:
        types[0] = types[1] = mjJNT_HINGE;
        return 2;
    case MBD_SPHERICAL:
        types[0] = mjJNT_BALL;
        return 1;
    case MBD_FREE:
        types[0] = mjJNT_FREE;
        return 1;
    default:
        return 0;
    }
}

/* Our coordinates k of one MuJoCo joint at qpos adr and dof dof_adr: in the same order,
 * but for a free joint whose velocities are (w; v_O) against MuJoCo's (v; w). */
static void map_joint(peer *p, mbd_joint_type type, int q, int v, int adr, int dof_adr)
{
    for (int k = 0; k < mbd_joint_type_nq(type); k++)
        p->qpos_of[q + k] = adr + k;
    for (int k = 0; k < mbd_joint_type_nv(type); k++)
        p->dof_of[v + k] = dof_adr + (type == MBD_FREE ? (k + 3) % 6 : k);
}

/* MuJoCo's first joint of our body i, found by the body's name as the export writes it,
 * or (by_joint_name) by the joint's name, which a file MuJoCo reads itself gives each of
 * our joints; an unnamed one (an MJCF <freejoint/>) by its place, since our bodies of an
 * MJCF file are its joints in MuJoCo's order. -1 after a message unless it has njoints
 * joints there. */
static int first_joint(const mbd_model *model, int i, const peer *p, int by_joint_name, int njoints,
                       char *err, size_t err_size)
{
    const mbd_body_def *b = mbd_model_body(model, i);
    if (by_joint_name) {
        const int named = b->joint_name != NULL;
        const int joint = named            ? mj_name2id(p->m, mjOBJ_JOINT, b->joint_name)
                          : i < p->m->njnt ? i
                                           : -1;
        if (joint < 0 || njoints != 1)
            snprintf(err, err_size, "joint \"%s\": %s in MuJoCo's model",
                     mbd_model_joint_name(model, i), joint < 0 ? "missing" : "not one joint");
        return njoints == 1 ? joint : -1;
    }
    const int body = mj_name2id(p->m, mjOBJ_BODY, b->name);
    if (body < 0 || p->m->body_jntnum[body] != njoints) {
        snprintf(err, err_size, "body \"%s\": %s in MuJoCo's model", b->name,
                 body < 0 ? "missing" : "wrong number of joints");
        return -1;
    }
    return p->m->body_jntadr[body];
}

/* Fills qpos_of and dof_of body by body, checking that every joint is where it should be. */
static int map_coordinates(const mbd_model *model, peer *p, int by_joint_name, char *err,
                           size_t err_size)
{
    int q = 0, v = 0;
    for (int i = 0; i < mbd_model_nbodies(model); i++) {
        const mbd_body_def *b = mbd_model_body(model, i);
        int types[2];
        const int njoints = expected_joints(b->joint, types);
        const int first = first_joint(model, i, p, by_joint_name, njoints, err, err_size);
        if (first < 0)
            return -1;
        if (b->joint == MBD_FREE)
            p->free_joints[p->nfree++] = (free_joint){.body = i, .q0 = q, .v0 = v};
        for (int j = 0; j < njoints; j++) {
            const int joint = first + j;
            if (p->m->jnt_type[joint] != types[j]) {
                snprintf(err, err_size, "body \"%s\": joint %d has the wrong type", b->name, j);
                return -1;
            }
            const mbd_joint_type type = njoints == 1 ? b->joint : MBD_REVOLUTE; /* 1 DOF each */
            map_joint(p, type, q, v, p->m->jnt_qposadr[joint], p->m->jnt_dofadr[joint]);
            q += mbd_joint_type_nq(type);
            v += mbd_joint_type_nv(type);
        }
    }
    return 0;
}

void peer_close(peer *p)
{
    if (p->d)
        mj_deleteData(p->d);
    if (p->m)
        mj_deleteModel(p->m);
    free(p->qpos_of);
    free(p->force);
    free(p->free_joints);
    memset(p, 0, sizeof *p);
}

/* direct: the file MuJoCo reads itself, or NULL: our export of model. */
int peer_open(const mbd_model *model, const char *direct, peer *p, char *err, size_t err_size)
{
    memset(p, 0, sizeof *p);
    p->nq = mbd_model_nq(model);
    p->nv = mbd_model_nv(model);
    p->passive = mbd_model_has_passive(model);
    if (!(p->m = direct ? load_direct(direct, p->passive, err, err_size)
                        : export_and_load(model, err, err_size)))
        return -1;
    if (p->m->nq != p->nq || p->m->nv != p->nv) {
        snprintf(err, err_size, "MuJoCo has nq %d, nv %d; mbd has %d, %d", (int)p->m->nq,
                 (int)p->m->nv, p->nq, p->nv);
        peer_close(p);
        return -1;
    }
    p->d = mj_makeData(p->m);
    p->qpos_of = malloc(((size_t)p->nq + (size_t)p->nv) * sizeof *p->qpos_of);
    p->force = malloc((size_t)p->nv * sizeof *p->force);
    p->free_joints = malloc((size_t)mbd_model_nbodies(model) * sizeof *p->free_joints);
    if (!p->d || !p->qpos_of || !p->force || !p->free_joints) {
        snprintf(err, err_size, "out of memory");
        peer_close(p);
        return -1;
    }
    p->dof_of = p->qpos_of + p->nq;
    if (map_coordinates(model, p, direct != NULL, err, err_size) < 0) {
        peer_close(p);
        return -1;
    }
    return 0;
}

/* ---- free joints ----
 * Ours: q = (p, quat) in the joint frame (origin o, rotation Q), v = (w; v_O) and
 * tau = (n; f) in body coordinates. MuJoCo's: qpos = the world pose (o + Q p, Q quat),
 * qvel = (R v_O; w) with R = Q R(quat) (body -> world), qfrc = (R f; n). With the dofs
 * reordered by dof_of, qvel = T v for T = diag(1, R) on the block, so that H = T^T H_mj T,
 * qfrc = T^-T tau, qdd = T^-1 (qacc - T' v) with T' v = (0; a), a = R (w x v_O), and the
 * bias C = T^T (C_mj + H_mj T' v). */

/* The free joints' qpos, qvel and qfrc_applied from ours; keeps R and a for the rest. */
static void set_free_joints(peer *p, const mbd_model *model, const double *q, const double *qd,
                            const double *tau)
{
    for (int j = 0; j < p->nfree; j++) {
        free_joint *fj = &p->free_joints[j];
        const mbd_body_def *b = mbd_model_body(model, fj->body);
        const double *pos = q + fj->q0, *w = qd + fj->v0, *vO = w + 3, *f = tau + fj->v0 + 3;
        mjtNum Q[9], frame_quat[4], quat[4], Rq[9], wxv[3];
        mjtNum *qpos = p->d->qpos + p->qpos_of[fj->q0];
        memcpy(Q, b->rotation, sizeof Q);
        mju_mat2Quat(frame_quat, Q);
        mju_mulMatVec(qpos, Q, pos, 3, 3);
        mju_addTo3(qpos, b->origin);
        mju_copy4(quat, q + fj->q0 + 3);
        mju_normalize4(quat); /* ours: any non-zero quaternion, as quat / |quat| */
        mju_mulQuat(qpos + 3, frame_quat, quat);
        mju_quat2Mat(Rq, quat);
        mju_mulMatMat(fj->R, Q, Rq, 3, 3, 3);
        mju_mulMatVec(p->d->qvel + p->dof_of[fj->v0 + 3], fj->R, vO, 3, 3);
        mju_mulMatVec(p->d->qfrc_applied + p->dof_of[fj->v0 + 3], fj->R, f, 3, 3);
        mju_cross(wxv, w, vO);
        mju_mulMatVec(fj->shift, fj->R, wxv, 3, 3);
    }
}

/* Our qdd from MuJoCo's acceleration in our order: v_O' = R^T (qacc_lin - a). */
void free_joint_accelerations(const peer *p, double *qdd)
{
    for (int j = 0; j < p->nfree; j++) {
        const free_joint *fj = &p->free_joints[j];
        double *lin = qdd + fj->v0 + 3, d[3];
        mju_sub3(d, lin, fj->shift);
        mju_mulMatTVec(lin, fj->R, d, 3, 3);
    }
}

/* H = T^T H_mj T and C = T^T (C_mj + H_mj T' v), all in our order (nv x nv row-major H). */
void free_joint_terms(const peer *p, double *H, double *C)
{
    const int nv = p->nv;
    for (int j = 0; j < p->nfree; j++) {
        const free_joint *fj = &p->free_joints[j];
        const int lin = fj->v0 + 3;
        for (int i = 0; i < nv; i++) /* C += H_mj T' v: column block lin times a */
            for (int k = 0; k < 3; k++)
                C[i] += H[(size_t)i * nv + lin + k] * fj->shift[k];
        double t[3];
        for (int i = 0; i < nv; i++) { /* columns lin..lin+2 times R */
            double *row = H + (size_t)i * nv + lin;
            mju_mulMatTVec(t, fj->R, row, 3, 3);
            mju_copy3(row, t);
        }
        for (int c = 0; c < nv; c++) { /* rows lin..lin+2 times R^T */
            double col[3];
            for (int k = 0; k < 3; k++)
                col[k] = H[(size_t)(lin + k) * nv + c];
            mju_mulMatTVec(t, fj->R, col, 3, 3);
            for (int k = 0; k < 3; k++)
                H[(size_t)(lin + k) * nv + c] = t[k];
        }
        mju_mulMatTVec(t, fj->R, C + lin, 3, 3);
        mju_copy3(C + lin, t);
    }
}

void peer_set_state(peer *p, const mbd_model *model, const double *q, const double *qd,
                    const double *tau)
{
    for (int k = 0; k < p->nq; k++)
        p->d->qpos[p->qpos_of[k]] = q[k];
    for (int k = 0; k < p->nv; k++) {
        p->d->qvel[p->dof_of[k]] = qd[k];
        p->d->qfrc_applied[p->dof_of[k]] = tau[k];
    }
    set_free_joints(p, model, q, qd, tau);
}

/* A MuJoCo dof vector in our coordinate order. */
void peer_gather(const peer *p, const mjtNum *mujoco, double *ours)
{
    for (int k = 0; k < p->nv; k++)
        ours[k] = mujoco[p->dof_of[k]];
}

/* The stages of mj_forward that make qacc when nothing but rigid-body dynamics is enabled:
 * position kinematics, composite inertias and the sparse LDL' of M, velocity terms by RNE,
 * then qacc = M^-1 (qfrc_applied - qfrc_bias). A model with passive forces (armature
 * alone needs none of this) takes mj_forward's whole position and velocity stages, which
 * make the tendons, transmissions and qfrc_passive that they need: qacc_smooth =
 * M^-1 (qfrc_applied + qfrc_passive - qfrc_bias). */
void peer_forward_path(peer *p)
{
    mjData *d = p->d;
    if (p->passive) {
        mj_fwdPosition(p->m, d);
        mj_fwdVelocity(p->m, d);
    } else {
        mj_kinematics(p->m, d);
        mj_comPos(p->m, d);
        mj_crb(p->m, d);
        mj_factorM(p->m, d);
        mj_comVel(p->m, d);
        mj_rne(p->m, d, 0, d->qfrc_bias);
    }
    for (int k = 0; k < p->nv; k++)
        p->force[k] =
            d->qfrc_applied[k] + (p->passive ? d->qfrc_passive[k] : 0.0) - d->qfrc_bias[k];
    mj_solveM(p->m, d, d->qacc, p->force, 1);
}
