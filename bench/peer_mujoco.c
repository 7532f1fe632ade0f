/* peer_mujoco.c: MuJoCo 2.2.2 (Debian's libmujoco) as a peer of the mbd solvers.
 *
 *   peer-mujoco check MODEL [--states K] [--seed S] [--direct] [--floating-base]
 *       for K random states: MuJoCo's qacc (mj_forward) against the qdd of every
 *       acceleration solver, and MuJoCo's H and bias forces against ours; exit 1 if they
 *       differ by more than 1e-10 (qdd: or than cond(H) allows; see the check section).
 *       --direct: MuJoCo reads MODEL's file itself (a URDF) instead of our MJCF export,
 *       with only rigid-body dynamics enabled (no joint limits, damping or contacts);
 *       --tolerance replaces 1e-10.
 *   peer-mujoco time [FAMILY=]MODEL... [--min-time S] [--repetitions R] [--dense-max-n N]
 *                    [--json FILE] [--dat FILE]
 *       per call, with bench/'s timing core: every solver variant, MuJoCo's forward-dynamics
 *       path and its factor + solve alone, on the same states, in the same run; Google
 *       Benchmark JSON and a .dat for report/mujoco.gp.
 *
 * Each MODEL is exported by mbd_export_mjcf into a temporary directory and loaded with
 * mj_loadXML. MuJoCo numbers bodies (and so coordinates) depth-first, ours by index: the
 * two are matched by body name and the order of the joints within the body. A free joint
 * (on a child of the world) differs in its coordinates too: see the free-joint section. */
#include "context.h"
#include "harness.h"

#include "../src/cli.h"
#include "../src/workload.h"

#include <dirent.h>
#include <float.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lapacke.h>
#include <mujoco/mujoco.h>

/* The names in messages, which go through src/cli.c's helpers: "mbd peer-mujoco check: ..." */
#define CHECK_CMD "peer-mujoco check"
#define TIME_CMD "peer-mujoco time"
#define CHECK_TOLERANCE 1e-10
#define MAX_VARIANTS 16
#define DEFAULT_SEED 20240601UL

/* ---- a model in MuJoCo ---- */

/* A free joint of ours: its body, first coordinate and velocity, and at the state last
 * set its rotation R (body -> world) and the shift a = R (w x v_O) (see below). */
typedef struct {
    int body, q0, v0;
    mjtNum R[9], shift[3];
} free_joint;

typedef struct {
    mjModel *m;
    mjData *d;
    int nq, nv;      /* ours, equal to MuJoCo's */
    int *qpos_of;    /* (nq) our coordinate k -> MuJoCo's qpos index */
    int *dof_of;     /* (nv) our velocity k -> MuJoCo's dof index */
    mjtNum *force;   /* (nv, MuJoCo's order) qfrc_applied - qfrc_bias */
    free_joint *free_joints;
    int nfree;
} peer;

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

/* MuJoCo's own reading of a model file (URDF), limited to what the export would carry:
 * the file's joint limits, damping, friction loss and contacts switched off. */
static mjModel *load_direct(const char *path, char *err, size_t err_size)
{
    char reason[1000] = "";
    mjModel *m = mj_loadXML(path, NULL, reason, sizeof reason);
    if (!m) {
        flatten(reason);
        snprintf(err, err_size, "mj_loadXML: %s", reason);
        return NULL;
    }
    m->opt.disableflags |= mjDSBL_LIMIT | mjDSBL_PASSIVE | mjDSBL_FRICTIONLOSS | mjDSBL_CONTACT;
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
    case MBD_REVOLUTE: types[0] = mjJNT_HINGE; return 1;
    case MBD_PRISMATIC: types[0] = mjJNT_SLIDE; return 1;
    case MBD_CYLINDRICAL: types[0] = mjJNT_HINGE, types[1] = mjJNT_SLIDE; return 2;
    case MBD_CARDAN: types[0] = types[1] = mjJNT_HINGE; return 2;
    case MBD_SPHERICAL: types[0] = mjJNT_BALL; return 1;
    case MBD_FREE: types[0] = mjJNT_FREE; return 1;
    default: return 0;
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

/* Fills qpos_of and dof_of body by body, checking that every joint is where it should be. */
static int map_coordinates(const mbd_model *model, peer *p, char *err, size_t err_size)
{
    int q = 0, v = 0;
    for (int i = 0; i < mbd_model_nbodies(model); i++) {
        const mbd_body_def *b = mbd_model_body(model, i);
        const int body = mj_name2id(p->m, mjOBJ_BODY, b->name);
        int types[2];
        const int njoints = expected_joints(b->joint, types);
        if (body < 0 || p->m->body_jntnum[body] != njoints) {
            snprintf(err, err_size, "body \"%s\": %s in MuJoCo's model", b->name,
                     body < 0 ? "missing" : "wrong number of joints");
            return -1;
        }
        if (b->joint == MBD_FREE)
            p->free_joints[p->nfree++] = (free_joint){.body = i, .q0 = q, .v0 = v};
        for (int j = 0; j < njoints; j++) {
            const int joint = p->m->body_jntadr[body] + j;
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

static void peer_close(peer *p)
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
static int peer_open(const mbd_model *model, const char *direct, peer *p, char *err,
                     size_t err_size)
{
    memset(p, 0, sizeof *p);
    p->nq = mbd_model_nq(model);
    p->nv = mbd_model_nv(model);
    if (!(p->m = direct ? load_direct(direct, err, err_size)
                        : export_and_load(model, err, err_size)))
        return -1;
    if (p->m->nq != p->nq || p->m->nv != p->nv) {
        snprintf(err, err_size, "MuJoCo has nq %d, nv %d; mbd has %d, %d", p->m->nq, p->m->nv,
                 p->nq, p->nv);
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
    if (map_coordinates(model, p, err, err_size) < 0) {
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
        mjtNum Q[9], frame_quat[4], Rq[9], wxv[3];
        mjtNum *qpos = p->d->qpos + p->qpos_of[fj->q0];
        memcpy(Q, b->rotation, sizeof Q);
        mju_mat2Quat(frame_quat, Q);
        mju_mulMatVec(qpos, Q, pos, 3, 3);
        mju_addTo3(qpos, b->origin);
        mju_mulQuat(qpos + 3, frame_quat, q + fj->q0 + 3);
        mju_quat2Mat(Rq, q + fj->q0 + 3);
        mju_mulMatMat(fj->R, Q, Rq, 3, 3, 3);
        mju_mulMatVec(p->d->qvel + p->dof_of[fj->v0 + 3], fj->R, vO, 3, 3);
        mju_mulMatVec(p->d->qfrc_applied + p->dof_of[fj->v0 + 3], fj->R, f, 3, 3);
        mju_cross(wxv, w, vO);
        mju_mulMatVec(fj->shift, fj->R, wxv, 3, 3);
    }
}

/* Our qdd from MuJoCo's acceleration in our order: v_O' = R^T (qacc_lin - a). */
static void free_joint_accelerations(const peer *p, double *qdd)
{
    for (int j = 0; j < p->nfree; j++) {
        const free_joint *fj = &p->free_joints[j];
        double *lin = qdd + fj->v0 + 3, d[3];
        mju_sub3(d, lin, fj->shift);
        mju_mulMatTVec(lin, fj->R, d, 3, 3);
    }
}

/* H = T^T H_mj T and C = T^T (C_mj + H_mj T' v), all in our order (nv x nv row-major H). */
static void free_joint_terms(const peer *p, double *H, double *C)
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

static void peer_set_state(peer *p, const mbd_model *model, const double *q, const double *qd,
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
static void peer_gather(const peer *p, const mjtNum *mujoco, double *ours)
{
    for (int k = 0; k < p->nv; k++)
        ours[k] = mujoco[p->dof_of[k]];
}

/* The stages of mj_forward that make qacc when nothing but rigid-body dynamics is enabled:
 * position kinematics, composite inertias and the sparse LDL' of M, velocity terms by RNE,
 * then qacc = M^-1 (qfrc_applied - qfrc_bias). */
static void peer_forward_path(peer *p)
{
    mjData *d = p->d;
    mj_kinematics(p->m, d);
    mj_comPos(p->m, d);
    mj_crb(p->m, d);
    mj_factorM(p->m, d);
    mj_comVel(p->m, d);
    mj_rne(p->m, d, 0, d->qfrc_bias);
    for (int k = 0; k < p->nv; k++)
        p->force[k] = d->qfrc_applied[k] - d->qfrc_bias[k];
    mj_solveM(p->m, d, d->qacc, p->force, 1);
}

/* ---- check ---- */

/* Two backward-stable solvers can promise each other a forward error of about
 * eps cond(H) only, and chains of hundreds of links reach cond(H) ~ 1e9. So the qdd of
 * each solver must agree with MuJoCo's qacc to max(CHECK_TOLERANCE, CONDITIONING_SLACK
 * cond(H)); and the two sides of the equations of motion, which no solve blurs, to
 * CHECK_TOLERANCE: H entry by entry relative to sqrt(H_ii H_jj) (a bound on |H_ij|), and
 * the bias forces C (velocity terms and gravity) in the same scaling, relative to the
 * largest force of the equation (C or tau; C vanishes in some states). Together they pin
 * down the dynamics: qdd = H^-1 (tau - C). */
#define CONDITIONING_SLACK (4 * DBL_EPSILON)

typedef struct {
    double forward[MAX_VARIANTS]; /* max ||qacc - qdd|| / ||qdd||, per variant */
    double mass;      /* max |H_mj - H|_ij / sqrt(H_ii H_jj) */
    double bias;      /* max ||D^-1/2 (C_mj - C)||_inf / max(||D^-1/2 C||_inf, ||D^-1/2 tau||_inf),
                         D = diag(H) */
    double path;      /* max relative difference of the staged path from mj_forward */
    double cond;      /* max cond_2(H) */
    int failed;       /* forward errors above their tolerance */
    double tolerance; /* CHECK_TOLERANCE unless --tolerance says otherwise */
} check_stats;

typedef struct {
    const mbd_model *model;
    peer *p;
    mbd_work *aux;   /* inverse dynamics and H */
    double *H;       /* nv x nv, ours */
    double *H_mj;    /* nv x nv, MuJoCo's, in its order */
    double *H_ours;  /* nv x nv, MuJoCo's in our coordinates */
    double *qacc, *path, *bias, *zero, *eig, *bias_mj; /* nv each; bias_mj ours, from MuJoCo */
} checker;

static void checker_free(checker *c)
{
    mbd_work_free(c->aux);
    free(c->H);
    free(c->qacc);
}

static int checker_init(checker *c, const mbd_model *model, peer *p)
{
    const size_t nv = (size_t)p->nv;
    *c = (checker){.model = model, .p = p};
    mbd_work_new(model, NULL, &c->aux);
    c->H = malloc(3 * nv * nv * sizeof *c->H);
    c->qacc = calloc(6 * nv, sizeof *c->qacc);
    if (!c->aux || !c->H || !c->qacc) {
        checker_free(c);
        return MBD_ENOMEM;
    }
    c->H_mj = c->H + nv * nv;
    c->H_ours = c->H_mj + nv * nv;
    c->path = c->qacc + nv;
    c->bias = c->path + nv;
    c->zero = c->bias + nv;
    c->eig = c->zero + nv;
    c->bias_mj = c->eig + nv;
    return MBD_OK;
}

static double relative_difference(const double *a, const double *b, int n)
{
    double diff = 0, norm = 0;
    for (int k = 0; k < n; k++) {
        diff += (a[k] - b[k]) * (a[k] - b[k]);
        norm += b[k] * b[k];
    }
    return sqrt(diff) / fmax(sqrt(norm), 1e-300);
}

/* MuJoCo's qacc by mj_forward into c->qacc (leaving its qM and qfrc_bias for this state),
 * then by the staged path into c->path. */
static void mujoco_qacc(checker *c, const double *q, const double *qd, const double *tau)
{
    peer_set_state(c->p, c->model, q, qd, tau);
    mj_forward(c->p->m, c->p->d);
    peer_gather(c->p, c->p->d->qacc, c->qacc);
    free_joint_accelerations(c->p, c->qacc);
    peer_forward_path(c->p);
    peer_gather(c->p, c->p->d->qacc, c->path);
    free_joint_accelerations(c->p, c->path);
}

/* H and C of both sides after mujoco_qacc, into stats; cond_2(H) of this state. */
static int compare_terms(checker *c, const double *q, const double *qd, const double *tau,
                         check_stats *stats, double *cond)
{
    const int nv = c->p->nv;
    const int *dof = c->p->dof_of;
    int status = mbd_mass_matrix(c->model, c->aux, q, c->H);
    if (status == MBD_OK)
        status = mbd_inverse_dynamics(c->model, c->aux, q, qd, c->zero, c->bias, NULL);
    if (status != MBD_OK)
        return status;
    mj_fullM(c->p->m, c->H_mj, c->p->d->qM);
    for (int i = 0; i < nv; i++)
        for (int j = 0; j < nv; j++)
            c->H_ours[(size_t)i * nv + j] = c->H_mj[(size_t)dof[i] * nv + dof[j]];
    peer_gather(c->p, c->p->d->qfrc_bias, c->bias_mj);
    free_joint_terms(c->p, c->H_ours, c->bias_mj);
    double mass = 0, bias_diff = 0, bias_size = 0;
    for (int i = 0; i < nv; i++) {
        const double hii = c->H[(size_t)i * nv + i];
        for (int j = 0; j < nv; j++) {
            const double diff = c->H_ours[(size_t)i * nv + j] - c->H[(size_t)i * nv + j];
            mass = fmax(mass, fabs(diff) / sqrt(hii * c->H[(size_t)j * nv + j]));
        }
        bias_diff = fmax(bias_diff, fabs(c->bias_mj[i] - c->bias[i]) / sqrt(hii));
        bias_size = fmax(bias_size, fmax(fabs(c->bias[i]), fabs(tau[i])) / sqrt(hii));
    }
    if (LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'L', nv, c->H, nv, c->eig) != 0)
        return MBD_ESINGULAR;
    stats->mass = fmax(stats->mass, mass);
    stats->bias = fmax(stats->bias, bias_diff / fmax(bias_size, 1e-300));
    *cond = c->eig[nv - 1] / c->eig[0];
    stats->cond = fmax(stats->cond, *cond);
    return MBD_OK;
}

/* Every state against every variant's workload (all drew the same states). */
static int check_states(checker *c, workload *ws, int nworkloads, check_stats *stats)
{
    const int nq = c->p->nq, nv = c->p->nv;
    for (int s = 0; s < ws[0].nstates; s++) {
        const double *q = ws[0].q + (size_t)s * nq, *qd = ws[0].v + (size_t)s * nv;
        const double *tau = ws[0].tau + (size_t)s * nv;
        mujoco_qacc(c, q, qd, tau);
        stats->path = fmax(stats->path, relative_difference(c->path, c->qacc, nv));
        double cond;
        int status = compare_terms(c, q, qd, tau, stats, &cond);
        for (int v = 0; v < nworkloads && status == MBD_OK; v++) {
            if ((status = workload_eval(&ws[v], ws[v].works[0], s)) != MBD_OK)
                break;
            const double error = relative_difference(c->qacc, ws[v].out + (size_t)s * nv, nv);
            stats->forward[v] = fmax(stats->forward[v], error);
            stats->failed += error > fmax(stats->tolerance, CONDITIONING_SLACK * cond);
        }
        if (status != MBD_OK)
            return status;
    }
    return MBD_OK;
}

static void print_check(const char *spec, const mbd_model *model, const workload *ws,
                        int nworkloads, const check_stats *stats)
{
    printf("%s: %d bodies, nv %d, %d states: forward error", spec, mbd_model_nbodies(model),
           mbd_model_nv(model), ws[0].nstates);
    for (int v = 0; v < nworkloads; v++)
        printf(" %s %.1e", ws[v].variant.name, stats->forward[v]);
    printf(" (cond(H) %.1e); H %.1e, C %.1e; staged path %.1e\n", stats->cond, stats->mass,
           stats->bias, stats->path);
    fflush(stdout); /* before a verdict on stderr */
}

/* The verdict on stderr, one line; returns the exit status. */
static int judge(const char *cmd, const char *spec, const check_stats *stats)
{
    const struct {
        const char *what;
        double error;
    } terms[] = {{"H", stats->mass}, {"C", stats->bias}, {"staged path", stats->path}};
    if (stats->failed) {
        fprintf(stderr,
                "mbd %s: %s: qdd differs by more than max(%.0e, 4 eps cond(H)) %d times\n",
                cmd, spec, stats->tolerance, stats->failed);
        return CLI_RUNTIME_ERROR;
    }
    for (size_t k = 0; k < sizeof terms / sizeof terms[0]; k++)
        if (!(terms[k].error <= stats->tolerance)) {
            fprintf(stderr, "mbd %s: %s: %s differs by %.2e, above %.0e\n", cmd, spec,
                    terms[k].what, terms[k].error, stats->tolerance);
            return CLI_RUNTIME_ERROR;
        }
    return 0;
}

/* One workload per acceleration variant, all from the same seed; returns how many. */
static int acceleration_workloads(const mbd_model *model, int nstates, unsigned long seed,
                                  workload *ws, int *status)
{
    workload_variant variants[MAX_VARIANTS];
    const int count = workload_variants(variants, MAX_VARIANTS);
    int n = 0;
    *status = MBD_OK;
    for (int k = 0; k < count && *status == MBD_OK; k++)
        if (variants[k].form == MBD_ACCELERATION &&
            (*status = workload_init(&ws[n], model, &variants[k], nstates, 1, seed)) == MBD_OK)
            n++;
    return n;
}

/* What `peer-mujoco check` was asked. */
typedef struct {
    const char *direct; /* --direct: the file MuJoCo reads itself, else NULL */
    double tolerance;
    int nstates;
    unsigned long seed;
} check_options;

static int run_check(const char *cmd, const mbd_model *model, const char *spec,
                     const check_options *options)
{
    peer p;
    char err[1024];
    if (peer_open(model, options->direct, &p, err, sizeof err) < 0) {
        fprintf(stderr, "mbd %s: %s: %s\n", cmd, spec, err);
        return CLI_RUNTIME_ERROR;
    }
    workload ws[MAX_VARIANTS];
    checker c;
    check_stats stats = {.tolerance = options->tolerance};
    int status;
    const int n = acceleration_workloads(model, options->nstates, options->seed, ws, &status);
    if (status == MBD_OK && (status = checker_init(&c, model, &p)) == MBD_OK) {
        status = check_states(&c, ws, n, &stats);
        checker_free(&c);
    }
    int rc = status != MBD_OK ? cli_fail(cmd, spec, status) : 0;
    if (!rc) {
        print_check(spec, model, ws, n, &stats);
        rc = judge(cmd, spec, &stats);
    }
    for (int v = 0; v < n; v++)
        workload_free(&ws[v]);
    peer_close(&p);
    return rc;
}

/* ---- time ---- */

#define MUJOCO_PATH "mujoco"
#define MUJOCO_FACTOR_SOLVE "mujoco-factor-solve"

/* What the MuJoCo timing bodies cycle through: the states of an mbd workload. */
typedef struct {
    peer *p;
    const workload *w;
} mujoco_timing;

static int time_forward_path(void *ctx, long iterations)
{
    const mujoco_timing *t = ctx;
    const int nq = t->p->nq, nv = t->p->nv;
    for (long i = 0; i < iterations; i++) {
        const size_t s = (size_t)(i % t->w->nstates);
        peer_set_state(t->p, t->w->model, t->w->q + s * nq, t->w->v + s * nv, t->w->tau + s * nv);
        peer_forward_path(t->p);
        timing_clobber();
    }
    return 0;
}

/* The factorization does not depend on the values (no pivoting): one state serves. */
static int time_factor_solve(void *ctx, long iterations)
{
    const mujoco_timing *t = ctx;
    for (long i = 0; i < iterations; i++) {
        mj_factorM(t->p->m, t->p->d);
        mj_solveM(t->p->m, t->p->d, t->p->d->qacc, t->p->force, 1);
        timing_clobber();
    }
    return 0;
}

typedef struct {
    timing_options options;
    int dense_max_n;
    bench_results results;
    char (*families)[64]; /* one per model: the records' keys point here */
} time_run;

/* The family a MODEL argument names: FAMILY=MODEL gives it; else the model's name without
 * its body count ("chain-cardan-50" -> "chain-cardan"). Returns the MODEL part. */
static const char *family_of(const char *arg, const mbd_model *model, char *out, size_t size)
{
    const size_t label = strcspn(arg, "=:/");
    if (arg[label] == '=') { /* a spec's first '=' comes after its ':' */
        snprintf(out, size, "%.*s", (int)label, arg);
        return arg + label + 1;
    }
    if (!model)
        return arg;
    char count[16];
    snprintf(count, sizeof count, "%d", mbd_model_nbodies(model));
    size_t used = 0;
    out[0] = '\0';
    for (const char *token = mbd_model_name(model); *token;) {
        const size_t len = strcspn(token, "-");
        if (!(len == strlen(count) && strncmp(token, count, len) == 0) && used + len + 2 < size)
            used += (size_t)snprintf(out + used, size - used, "%s%.*s", used ? "-" : "",
                                     (int)len, token);
        token += len + (token[len] == '-');
    }
    return arg;
}

static int add_record(time_run *run, bench_key *key, const char *variant,
                      const mbd_model *model, const timing_result *timing)
{
    snprintf(key->variant, sizeof key->variant, "%s", variant);
    bench_record *record = bench_add(&run->results, key, mbd_model_nbodies(model),
                                     mbd_model_nv(model), 0, timing);
    if (!record)
        return cli_fail(TIME_CMD, "results", MBD_ENOMEM);
    bench_print_record(stdout, record);
    return 0;
}

/* One variant of ours on the workload's states; keeps the first acceleration workload in
 * *states (every variant drew the same q, qd, tau from the same seed) for MuJoCo. */
static int time_variant(time_run *run, bench_key *key, const mbd_model *model,
                        const workload_variant *variant, workload *states)
{
    workload w;
    timing_result timing;
    int status = workload_init(&w, model, variant, WORKLOAD_CALL_STATES, 1, DEFAULT_SEED);
    if (status == MBD_OK)
        status = timing_measure(&run->options, workload_call_body, &w, &timing);
    int rc = status == MBD_OK ? add_record(run, key, variant->name, model, &timing)
                              : cli_fail(TIME_CMD, variant->name, status);
    if (!states->model && variant->form == MBD_ACCELERATION)
        *states = w;
    else if (w.model)
        workload_free(&w);
    return rc;
}

/* Our variants (dense only up to dense_max_n), then MuJoCo's path and factor + solve. */
static int time_model(time_run *run, const mbd_model *model, const char *family, peer *p)
{
    workload_variant variants[MAX_VARIANTS];
    const int count = workload_variants(variants, MAX_VARIANTS);
    const int n = mbd_model_nbodies(model);
    bench_key key = {.suite = SUITE_PERCALL, .family = family, .n = n, .threads = 1};
    workload states = {0};
    int rc = 0;
    for (int k = 0; k < count && !rc && !bench_stop; k++)
        if (strcmp(mbd_solver_name(variants[k].solver), "dense") != 0 || n <= run->dense_max_n)
            rc = time_variant(run, &key, model, &variants[k], &states);
    if (!rc && !states.model) /* MuJoCo's states come from an acceleration workload */
        rc = cli_fail(TIME_CMD, "no acceleration solver timed", MBD_EUNSUPPORTED);
    mujoco_timing t = {p, &states};
    timing_result timing;
    if (!rc && !bench_stop) {
        timing_measure(&run->options, time_forward_path, &t, &timing);
        rc = add_record(run, &key, MUJOCO_PATH, model, &timing);
    }
    if (!rc && !bench_stop) { /* the path left M and the force of a state behind */
        timing_measure(&run->options, time_factor_solve, &t, &timing);
        rc = add_record(run, &key, MUJOCO_FACTOR_SOLVE, model, &timing);
    }
    if (states.model)
        workload_free(&states);
    return rc;
}

/* " x", or " NaN" for a quantity not measured. */
static void put(FILE *out, double x)
{
    if (isfinite(x))
        fprintf(out, " %.6g", x);
    else
        fputs(" NaN", out);
}

static double median_ns(const bench_results *results, const bench_key *key, const char *variant)
{
    bench_key other = *key;
    snprintf(other.variant, sizeof other.variant, "%s", variant);
    const bench_record *record = bench_find(results, &other);
    return record ? 1e9 * bench_time_stat(record, STAT_MEDIAN) : NAN;
}

/* The rows of percall.dat (bench/dat.c) for our variants, each followed by MuJoCo's two
 * times on the same model, so that a chart or table divides within a row. */
static int write_dat(FILE *out, void *ctx)
{
    const bench_results *results = ctx;
    fprintf(out, "# family variant n bodies dofs median_ns cv mujoco_ns mujoco_factor_solve_ns\n");
    for (int k = 0; k < results->count; k++) {
        const bench_record *r = &results->records[k];
        if (strncmp(r->key.variant, MUJOCO_PATH, strlen(MUJOCO_PATH)) == 0)
            continue;
        fprintf(out, "%s %s %d %d %d %.6g %.4f", r->key.family, r->key.variant, r->key.n,
                r->bodies, r->dofs, 1e9 * bench_time_stat(r, STAT_MEDIAN),
                timing_statistic(STAT_CV, r->timing.real, r->timing.repetitions));
        put(out, median_ns(results, &r->key, MUJOCO_PATH));
        put(out, median_ns(results, &r->key, MUJOCO_FACTOR_SOLVE));
        fputc('\n', out);
    }
    return ferror(out);
}

/* Times every model argument; stops early (keeping what finished) on SIGINT/SIGTERM. */
static int time_models(time_run *run, const char **args, int nargs)
{
    int rc = 0;
    bench_print_header(stdout);
    for (int s = 0; s < nargs && !rc && !bench_stop; s++) {
        const char *spec = family_of(args[s], NULL, run->families[s], sizeof run->families[s]);
        mbd_model *model = cli_load_model(TIME_CMD, spec, NULL);
        peer p;
        char err[1024];
        if (!model)
            return CLI_USAGE_ERROR;
        if (spec == args[s])
            family_of(args[s], model, run->families[s], sizeof run->families[s]);
        if (peer_open(model, NULL, &p, err, sizeof err) < 0) {
            fprintf(stderr, "mbd %s: %s: %s\n", TIME_CMD, spec, err);
            rc = CLI_RUNTIME_ERROR;
        } else {
            rc = time_model(run, model, run->families[s], &p);
            peer_close(&p);
        }
        mbd_model_free(model);
    }
    return rc;
}

/* bench/context.c's context plus this run's settings. */
static json_t *run_context(const char *executable, const time_run *run, int blas_default)
{
    json_t *context = bench_context_collect(executable);
    json_object_update_new(context, json_pack(
        "{s:s, s:f, s:i, s:i, s:i, s:i, s:s}", "mujoco_version", mj_versionString(),
        "min_time", run->options.min_time, "repetitions", run->options.repetitions,
        "dense_max_n", run->dense_max_n, "openblas_threads", openblas_get_num_threads(),
        "openblas_threads_default", blas_default, "mujoco_note",
        "mujoco: mj_kinematics, mj_comPos, mj_crb, mj_factorM, mj_comVel, mj_rne, mj_solveM "
        "(what mj_forward does with only rigid-body dynamics enabled); mujoco-factor-solve: "
        "mj_factorM + mj_solveM alone"));
    return context;
}

static int run_time(time_run *run, const char **args, int nargs, const char *json_path,
                    const char *dat_path, const char *executable)
{
    const int blas_default = openblas_get_num_threads();
    openblas_set_num_threads(1); /* MuJoCo computes on one thread: so does dense here */
    json_t *context = run_context(executable, run, blas_default);
    bench_context_print(context, stderr);
    int rc = time_models(run, args, nargs);
    json_object_set_new(context, "partial", json_boolean(bench_stop));
    if ((!rc || bench_stop) && json_path)
        rc = bench_write_json(&run->results, context, json_path);
    if ((!rc || bench_stop) && dat_path)
        rc = cli_write_atomic(TIME_CMD, dat_path, write_dat, &run->results);
    json_decref(context);
    return rc ? rc : bench_stop ? 128 + bench_stop : 0;
}

/* ---- command line ---- */

static int usage(void)
{
    fprintf(stderr,
            "usage: peer-mujoco check MODEL [--states K] [--seed S] [--direct] [--floating-base]\n"
            "                         [--tolerance T]\n"
            "       peer-mujoco time [FAMILY=]MODEL... [--min-time S] [--repetitions R]\n"
            "                        [--dense-max-n N] [--json FILE] [--dat FILE]\n");
    return CLI_USAGE_ERROR;
}

static int main_check(int argc, char **argv)
{
    cli_flag flags[] = {{"--states", NULL, 0}, {"--seed", NULL, 0}, {"--tolerance", NULL, 0},
                        SWITCH("--direct"), CLI_FLOATING_BASE, {NULL, NULL, 0}};
    const char *spec[1];
    double states, seed, tolerance;
    int npos, rc = cli_parse(CHECK_CMD, argc, argv, 2, flags, spec, 1, &npos);
    if (!rc && npos != 1)
        return usage();
    if (rc || (rc = cli_number(CHECK_CMD, flags, "--states", 1, 1e6, 20, &states)) ||
        (rc = cli_number(CHECK_CMD, flags, "--seed", 0, 1e15, DEFAULT_SEED, &seed)) ||
        (rc = cli_number(CHECK_CMD, flags, "--tolerance", 1e-16, 1, CHECK_TOLERANCE, &tolerance)))
        return rc;
    mbd_model *model = cli_load_model(CHECK_CMD, spec[0], flags);
    if (!model)
        return CLI_USAGE_ERROR;
    const check_options options = {cli_get(flags, "--direct") ? spec[0] : NULL, tolerance,
                                   (int)states, (unsigned long)seed};
    rc = run_check(CHECK_CMD, model, spec[0], &options);
    mbd_model_free(model);
    return rc;
}

/* --min-time, --repetitions, --dense-max-n; times per thread: every timed call runs on one. */
static int time_options(const cli_flag *flags, time_run *run)
{
    double repetitions, dense_max_n;
    int rc = cli_number(TIME_CMD, flags, "--min-time", 1e-3, 60, 0.1, &run->options.min_time);
    if (!rc)
        rc = cli_number(TIME_CMD, flags, "--repetitions", 1, TIMING_MAX_REPETITIONS, 5,
                        &repetitions);
    if (!rc)
        rc = cli_number(TIME_CMD, flags, "--dense-max-n", 0, 1e6, 300, &dense_max_n);
    run->options.repetitions = rc ? 0 : (int)repetitions;
    run->options.cpu_clock = CLOCK_THREAD_CPUTIME_ID;
    run->dense_max_n = rc ? 0 : (int)dense_max_n;
    return rc;
}

static int main_time(int argc, char **argv)
{
    cli_flag flags[] = {{"--min-time", NULL, 0}, {"--repetitions", NULL, 0},
                        {"--dense-max-n", NULL, 0}, {"--json", NULL, 0},
                        {"--dat", NULL, 0},      {NULL, NULL, 0}};
    const char **args = malloc((size_t)argc * sizeof *args);
    time_run run = {0};
    int nargs = 0, rc = args ? cli_parse(TIME_CMD, argc, argv, 2, flags, args, argc, &nargs)
                             : cli_fail(TIME_CMD, "arguments", MBD_ENOMEM);
    if (!rc && nargs == 0)
        rc = usage();
    if (!rc)
        rc = time_options(flags, &run);
    if (!rc && !(run.families = calloc((size_t)nargs, sizeof *run.families)))
        rc = cli_fail(TIME_CMD, "arguments", MBD_ENOMEM);
    if (!rc)
        rc = run_time(&run, args, nargs, cli_get(flags, "--json"), cli_get(flags, "--dat"),
                      argv[0]);
    bench_results_free(&run.results);
    free(run.families);
    free(args);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage();
    bench_catch_signals();
    if (strcmp(argv[1], "check") == 0)
        return main_check(argc, argv);
    if (strcmp(argv[1], "time") == 0)
        return main_time(argc, argv);
    fprintf(stderr, "peer-mujoco: unknown mode '%.60s' (check or time)\n", argv[1]);
    return CLI_USAGE_ERROR;
}
