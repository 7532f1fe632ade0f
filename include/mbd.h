/* mbd.h: the public interface of mbdbench.
 *
 * Forward and inverse dynamics of tree-structured rigid multibody systems in joint
 * coordinates. A model (mbd_model) is built once, validated once and then read-only: any
 * number of threads may share it. Every per-state buffer lives in a workspace (mbd_work),
 * allocated once per thread and solver; no solver call allocates.
 *
 * Conventions: spatial vectors in body coordinates, motion (w; v_O), force (n_O; f).
 * Generalized coordinates are ordered by body, then by the joint's own order.
 * Every function that can fail returns an int status: MBD_OK or a negative mbd_status.
 */
#ifndef MBD_H
#define MBD_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One list yields both the enum and the messages of mbd_strerror(). */
#define MBD_STATUS_LIST(X)                                                     \
    X(MBD_OK, 0, "success")                                                    \
    X(MBD_ENOMEM, -1, "out of memory")                                         \
    X(MBD_EIO, -2, "cannot read or write file")                                \
    X(MBD_EPARSE, -3, "malformed model")                                       \
    X(MBD_EINVAL, -4, "invalid argument")                                      \
    X(MBD_ENONFINITE, -5, "NaN or Inf in input or result")                     \
    X(MBD_ESINGULAR, -6, "singular joint-space inertia")                       \
    X(MBD_EUNSUPPORTED, -7, "formulation not supported by this solver")        \
    X(MBD_ELIMIT, -8, "model exceeds a size limit")

typedef enum {
#define MBD_ENUM_ROW(name, value, text) name = value,
    MBD_STATUS_LIST(MBD_ENUM_ROW)
#undef MBD_ENUM_ROW
} mbd_status;

const char *mbd_strerror(int status);

/* ---- model ---------------------------------------------------------------------- */

typedef enum {
    MBD_REVOLUTE,    /* 1 DOF: rotation about axis */
    MBD_PRISMATIC,   /* 1 DOF: slide along axis */
    MBD_CYLINDRICAL, /* 2 DOF: rotation about axis, then slide along it */
    MBD_CARDAN,      /* 2 DOF: R = Rot(a1, q1) Rot(a2, q2) */
    MBD_JOINT_TYPE_COUNT
} mbd_joint_type;

typedef struct mbd_model mbd_model;

/* Description of one body, as a model file gives it. */
typedef struct {
    const char *name;
    int parent;              /* index of an earlier body, or -1 for the world */
    mbd_joint_type joint;
    double axes[2][3];       /* axis (revolute, prismatic, cylindrical) or Cardan axes */
    double origin[3];        /* joint frame origin in the parent frame */
    double rotation[3][3];   /* x_parent = origin + rotation x_joint */
    double mass;
    double com[3];           /* centre of mass in the body frame */
    double inertia[3][3];    /* about the centre of mass, body axes */
} mbd_body_def;

/* Builds a model from body descriptions. On failure returns NULL and writes one line
 * naming the body, field and value into err (if err_size > 0). */
mbd_model *mbd_model_build(const char *name, const double gravity[3], int nbodies,
                           const mbd_body_def *bodies, char *err, size_t err_size);

/* Loads a model file (JSON) or a generator spec such as "chain:n=10,joint=cardan"
 * (see mbd_generators_help). On failure returns NULL with a message naming the
 * file, field and value in err. */
mbd_model *mbd_model_load(const char *path_or_spec, char *err, size_t err_size);

/* One line per generator, for --help. */
const char *mbd_generators_help(void);

void mbd_model_free(mbd_model *model);

const char *mbd_model_name(const mbd_model *model);
int mbd_model_nbodies(const mbd_model *model);
int mbd_model_nq(const mbd_model *model);
int mbd_model_nv(const mbd_model *model);
/* Body description as stored (names and pointers stay valid while the model lives). */
const mbd_body_def *mbd_model_body(const mbd_model *model, int body);
void mbd_model_gravity(const mbd_model *model, double gravity[3]);
const char *mbd_joint_type_name(mbd_joint_type type);
int mbd_joint_type_nv(mbd_joint_type type);
/* Writes a human-readable summary: bodies, joints, DOFs, parameters. */
void mbd_model_print(const mbd_model *model, FILE *out);

/* ---- solvers -------------------------------------------------------------------- */

typedef enum {
    MBD_ACCELERATION = 1, /* state (q, qd): computes qdd */
    MBD_MOMENTUM = 2      /* state (q, p), p = H(q) qd: computes (qd, pd) */
} mbd_formulation;

typedef struct mbd_solver mbd_solver;
typedef struct mbd_work mbd_work;

int mbd_solver_count(void);
const mbd_solver *mbd_solver_at(int index);
const mbd_solver *mbd_solver_find(const char *name);
const char *mbd_solver_name(const mbd_solver *solver);
const char *mbd_solver_summary(const mbd_solver *solver);
/* Bitmask of mbd_formulation values that the solver implements. */
unsigned mbd_solver_formulations(const mbd_solver *solver);

/* A workspace for one thread running one solver on one model. */
mbd_work *mbd_work_new(const mbd_model *model, const mbd_solver *solver);
void mbd_work_free(mbd_work *work);

/* Acceleration form: qdd = H^-1 (tau - C). tau may be NULL (zero). */
int mbd_forward(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
                const double *tau, double *qdd);

/* Momentum form: from (q, p) the rates qd = H^-1 p and pd = Q + dT/dq. */
int mbd_forward_momentum(const mbd_model *model, mbd_work *work, const double *q,
                         const double *p, const double *tau, double *qd, double *pd);

/* The two phases of mbd_forward / mbd_forward_momentum, for timing them apart:
 * position kinematics (transforms and motion subspaces), then the solve. */
int mbd_kinematics(const mbd_model *model, mbd_work *work, const double *q);
int mbd_solve(const mbd_model *model, mbd_work *work, const double *qd, const double *tau,
              double *qdd);
int mbd_solve_momentum(const mbd_model *model, mbd_work *work, const double *p,
                       const double *tau, double *qd, double *pd);

/* ---- dynamics quantities -------------------------------------------------------- */

/* Inverse dynamics (RNEA): tau, and if reactions != NULL the wrench (n; f) that each joint
 * transmits from parent to child, in the child body frame about its origin (nbodies x 6). */
int mbd_inverse(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
                const double *qdd, double *tau, double *reactions);

/* Joint-space inertia matrix H (nv x nv, row-major, full) by CRBA. */
int mbd_mass_matrix(const mbd_model *model, mbd_work *work, const double *q, double *H);

/* p = H(q) qd by one O(N) pass, without forming H. */
int mbd_momentum(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
                 double *p);

/* Kinetic and potential energy (potential zero at the world origin). */
int mbd_energy(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
               double *kinetic, double *potential);

#ifdef __cplusplus
}
#endif
#endif
