/* mbd.h: the public interface of mbdbench.
 *
 * Forward and inverse dynamics of tree-structured rigid multibody systems in joint
 * coordinates. A model (mbd_model) is built once, validated once and then read-only: any
 * number of threads may share it. Every per-state buffer lives in a workspace (mbd_work),
 * allocated once per thread and solver; no solver call allocates.
 *
 * Threads: a built mbd_model is immutable and may be shared by any number of threads, as
 * may the solver table (mbd_solver) and every function that takes no handle. An mbd_work,
 * an mbd_batch and an mbd_gpu_batch each serve one thread at a time: two threads calling
 * with the same one at once race (an mbd_batch spreads each of its calls over OpenMP
 * threads of its own; give each calling thread its own batch).
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
#define MBD_STATUS_LIST(X)                                                                         \
    X(MBD_OK, 0, "success")                                                                        \
    X(MBD_ENOMEM, -1, "out of memory")                                                             \
    X(MBD_EIO, -2, "cannot read or write file")                                                    \
    X(MBD_EPARSE, -3, "malformed model")                                                           \
    X(MBD_EINVAL, -4, "invalid argument")                                                          \
    X(MBD_ENONFINITE, -5, "NaN or Inf in input or result")                                         \
    X(MBD_ESINGULAR, -6, "singular joint-space inertia")                                           \
    X(MBD_EUNSUPPORTED, -7, "formulation not supported by this solver")                            \
    X(MBD_ELIMIT, -8, "model exceeds a size limit")                                                \
    X(MBD_EINTEGRATE, -9, "time integration failed (step too small or too many steps)")            \
    X(MBD_EFRICTION, -10, "friction iteration did not converge")                                   \
    X(MBD_EINCONSISTENT, -11, "inconsistent loop constraints (no acceleration satisfies them)")

typedef enum {
#define MBD_ENUM_ROW(name, value, text) name = value,
    MBD_STATUS_LIST(MBD_ENUM_ROW)
#undef MBD_ENUM_ROW
} mbd_status;

const char *mbd_strerror(int status);

/* ---- model ---------------------------------------------------------------------- */

typedef enum {
    MBD_REVOLUTE,         /* 1 DOF: rotation about axis */
    MBD_PRISMATIC,        /* 1 DOF: slide along axis */
    MBD_CYLINDRICAL,      /* 2 DOF: rotation about axis, then slide along it */
    MBD_CARDAN,           /* 2 DOF: R = Rot(a1, q1) Rot(a2, q2) */
    MBD_SPHERICAL,        /* 3 DOF, nq 4: q the unit quaternion (w, x, y, z) of R; v the angular
                             velocity relative to the joint frame, in the body frame */
    MBD_FREE,             /* 6 DOF, nq 7: q the body origin's position in the joint frame (the
                             parent frame unless the joint has an origin or rotation), then the
                             quaternion; v the body's spatial velocity relative to the joint frame
                             (w; v_O) in body coordinates, qdd its derivative in those coordinates,
                             tau the spatial force (n_O; f) on the body in them */
    MBD_JOINT_TYPE_COUNT, /* the solvers' joint types end here */
    MBD_FIXED             /* model input only: no coordinates; mbd_model_build merges the body
                             into its parent (a named frame), so no built model has one */
} mbd_joint_type;

typedef struct mbd_model mbd_model;

/* Joint friction coupled to the joint reaction (all >= 0, default 0). For each coordinate
 * of the joint, with N the magnitude of the joint's reaction force perpendicular to that
 * coordinate's axis: a sliding coordinate feels -coulomb N tanh(qd / smoothing) -
 * viscous qd, a turning one -coulomb radius N tanh(qd / smoothing) - viscous qd. */
typedef struct {
    double coulomb;   /* mu */
    double radius;    /* pin radius r of turning coordinates */
    double viscous;   /* b */
    double smoothing; /* v_s: > 0 when coulomb > 0 */
} mbd_friction;

/* A joint's rotor and passive elements, and its body's gravity compensation, as MuJoCo's
 * attributes of the same names mean them (all default 0). armature adds to H's diagonal at
 * each of the joint's velocities (H + diag(armature): the mass matrix of every call). The
 * passive forces tau_p(q, qd) add to tau in every forward call (and come off inverse
 * dynamics' tau): a damper -damping qd on each velocity; a spring -stiffness (q - springref)
 * on each coordinate, a quaternion by its rotation vector from springref's (a free joint:
 * its position in the joint frame, the force in body axes); gravcomp times the body's
 * weight pushing up at its centre of mass. A free joint's armature on its translation is
 * that of a point mass at the body origin (MuJoCo's, on the world-frame velocity): besides
 * the diagonal, tau_p has its -armature w x v_O. */
typedef struct {
    double armature;
    double damping;
    double stiffness;
    double springref[7]; /* the joint's coordinates (nq) at rest; a zero quaternion: 1 */
    double gravcomp;
    int actuator_gravcomp; /* the joint's share of gravity compensation is its actuator's,
                              in tau (MuJoCo's actuatorgravcomp), not a passive force */
} mbd_passive;

/* Description of one body, as a model file gives it. */
typedef struct {
    const char *name;
    int parent; /* index of an earlier body, or -1 for the world */
    mbd_joint_type joint;
    double axes[2][3];     /* axis (revolute, prismatic, cylindrical) or Cardan axes */
    double origin[3];      /* joint frame origin in the parent frame */
    double rotation[3][3]; /* x_parent = origin + rotation x_joint */
    double mass;
    double com[3];          /* centre of mass in the body frame */
    double inertia[3][3];   /* about the centre of mass, body axes */
    mbd_friction friction;  /* of the joint; all zero: frictionless */
    const char *joint_name; /* NULL: the joint is named after the body */
    mbd_passive passive;    /* of the joint and body; all zero: none */
} mbd_body_def;

/* A frame fixed in a body: what a body joined by an MBD_FIXED joint becomes (a sensor, a
 * flange). x_body = origin + rotation x_frame. */
typedef struct {
    const char *name;       /* the merged body's */
    const char *joint_name; /* its fixed joint's */
    int body;               /* the moving body it is fixed in, or -1: the world */
    double origin[3];
    double rotation[3][3];
} mbd_frame_def;

/* A cut joint closing a kinematic loop: frame a is fixed in body_a, frame b in body_b
 * (or the world, -1); x_body = origin + rotation x_frame. spherical: the two origins
 * coincide (3 equations); revolute: also frame a's axis (in frame a) stays parallel to the
 * same axis in frame b (5); weld: the frames coincide (6). */
typedef enum {
    MBD_LOOP_SPHERICAL,
    MBD_LOOP_REVOLUTE,
    MBD_LOOP_WELD,
    MBD_LOOP_TYPE_COUNT
} mbd_loop_type;

typedef struct {
    const char *name;
    mbd_loop_type type;
    int body_a, body_b; /* body indices; body_b may be -1 (the world) */
    double origin_a[3], rotation_a[3][3];
    double origin_b[3], rotation_b[3][3];
    double axis[3]; /* revolute: in frame a (and frame b); else unused */
} mbd_loop_def;

/* A fixed tendon (MuJoCo's <fixed>): the length L = sum coef_k q_k over 1-DOF joints (by
 * body index), pulled by a spring towards [length_spring[0], length_spring[1]] (no force
 * between them) and a damper, -stiffness (L - the nearer end) - damping Ldot, which acts on
 * each q_k with its coef_k. */
typedef struct {
    const char *name;
    int ncoef;
    const int *bodies;  /* (ncoef) bodies whose joint (revolute or prismatic) it sums */
    const double *coef; /* (ncoef) */
    double stiffness, damping;
    double length_spring[2];
} mbd_tendon_def;

/* A model's description: the bodies (parents first), the cut joints that close loops
 * among them (nloops 0, loops NULL: a tree) and the fixed tendons (ntendons 0: none). A
 * loop's body_a and body_b and a tendon's bodies index bodies. */
typedef struct {
    const char *name;
    double gravity[3];
    int nbodies;
    const mbd_body_def *bodies;
    int nloops;
    const mbd_loop_def *loops;
    int ntendons;
    const mbd_tendon_def *tendons;
} mbd_model_def;

/* Builds a model from its description. A body whose joint is MBD_FIXED is merged into
 * its nearest moving ancestor (or the world): masses, centres of mass and inertias are
 * combined exactly, its children hang from that ancestor, and it stays as a named frame;
 * only the moving bodies that result need physical inertias. A loop frame in a merged
 * body moves to the body that carries it (mbd_model_loop gives the loops so placed). A
 * model with loops cannot have joint friction or spherical or free joints
 * (MBD_EUNSUPPORTED).
 * Returns MBD_OK, MBD_EINVAL (NULL def or model), MBD_EPARSE (an invalid description),
 * MBD_ELIMIT, MBD_EUNSUPPORTED or MBD_ENOMEM; on failure *model is NULL and err (if
 * err_size > 0) holds one line naming the body or loop, field and value. */
int mbd_model_build(const mbd_model_def *def, mbd_model **model, char *err, size_t err_size);

/* Options of mbd_model_load; NULL or all zero: the defaults. */
typedef struct {
    int floating_base; /* URDF: the root link moves freely (a free joint) instead of being
                          fixed to the world */
} mbd_load_options;

/* Bytes of err that hold any message of mbd_model_load whole (an MJCF file's refusal
 * names every element refused). */
#define MBD_ERROR_SIZE 4096

/* Loads a model file or a generator spec such as "chain:n=10,joint=cardan" (see
 * mbd_generators_help). A file whose first non-blank character is '<' is read as MJCF
 * when its root element is <mujoco> (compiled by MuJoCo's compiler; MBD_EUNSUPPORTED in a
 * build without MuJoCo, or for what the dynamics do not model), else as URDF (the formats:
 * models/README.md in the sources); any other as JSON. options may be NULL.
 * Returns MBD_OK, MBD_EIO (a file that cannot be read), MBD_ELIMIT, MBD_ENOMEM, or a
 * status of mbd_model_build (MBD_EPARSE for a malformed file or spec); on failure *model
 * is NULL and err holds one line naming the file, field and value. */
int mbd_model_load(const char *path_or_spec, const mbd_load_options *options, mbd_model **model,
                   char *err, size_t err_size);

/* Loads a model from the text of a model file (NUL-terminated), told apart as
 * mbd_model_load tells files: JSON, URDF, or MJCF (compiled by MuJoCo from memory: its
 * relative file names, meshes and <include>s, resolve against the current directory).
 * name stands for the file in messages and names the model where the text does not.
 * Returns a status as mbd_model_load's. */
int mbd_model_load_text(const char *text, const char *name, const mbd_load_options *options,
                        mbd_model **model, char *err, size_t err_size);

/* Builds a model from a MuJoCo model already compiled: mujoco_model is a const mjModel *
 * of the MuJoCo this build links (mbd_mujoco_version; another version's structures differ),
 * read as an MJCF file's compiled model is (the same refusals, q = qpos). name stands for
 * the file in messages and names the model where MuJoCo's does not.
 * Returns a status as mbd_model_load's (MBD_EUNSUPPORTED in a build without MuJoCo). */
int mbd_model_from_mujoco(const void *mujoco_model, const char *name, mbd_model **model, char *err,
                          size_t err_size);

/* What the model file describes that the dynamics leave out (an MJCF model's contacts,
 * limits, equality constraints, actuators, ...), as "; "-separated counts, or NULL. */
const char *mbd_model_left_out(const mbd_model *model);
/* The version of MuJoCo that this build compiles MJCF models with, or NULL without one. */
const char *mbd_mujoco_version(void);
/* This library's version: the commit it was built from (git describe), or "unknown". */
const char *mbd_version(void);

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
/* The frames left by merged fixed joints, in the order of the bodies given. */
int mbd_model_nframes(const mbd_model *model);
const mbd_frame_def *mbd_model_frame(const mbd_model *model, int frame);
/* The name of the joint of a body (its joint_name, else the body's name). */
const char *mbd_model_joint_name(const mbd_model *model, int body);
/* Whether any joint has Coulomb or viscous friction. */
int mbd_model_has_friction(const mbd_model *model);
/* Whether any joint has armature, any body or tendon passive forces (mbd_passive). */
int mbd_model_has_passive(const mbd_model *model);
/* The fixed tendons, in the order given (their bodies those of the built model). */
int mbd_model_ntendons(const mbd_model *model);
const mbd_tendon_def *mbd_model_tendon(const mbd_model *model, int tendon);
const char *mbd_joint_type_name(mbd_joint_type type);
int mbd_joint_type_nv(mbd_joint_type type);
/* Position coordinates of a joint type: nv except spherical (4) and free (7). */
int mbd_joint_type_nq(mbd_joint_type type);
/* Writes a human-readable summary: bodies, joints, DOFs, parameters. */
void mbd_model_print(const mbd_model *model, FILE *out);

/* ---- closed loops --------------------------------------------------------------- */

int mbd_model_nloops(const mbd_model *model);
const mbd_loop_def *mbd_model_loop(const mbd_model *model, int loop);
/* m: the number of constraint equations, the length of Phi and lambda. */
int mbd_model_nconstraints(const mbd_model *model);
const char *mbd_loop_type_name(mbd_loop_type type);
int mbd_loop_type_nconstraints(mbd_loop_type type);

/* ---- export --------------------------------------------------------------------- */

/* Writes the model (a tree: MBD_EUNSUPPORTED for a model with loops, or with a free joint
 * on a body that is not a child of the world) as a MuJoCo MJCF file for comparison:
 * body names kept, hinge and slide joints (cylindrical = hinge + slide, Cardan = two
 * hinges on one body), spherical = ball, free = free (MuJoCo's free-joint qpos is the
 * body's world pose, its qvel (R v_O; w): the linear velocity in world coordinates
 * first), principal inertias, gravity, and the passive elements (mbd_passive) under
 * MJCF's names: armature, damping, stiffness and springref on the joints, gravcomp,
 * fixed tendons; nothing else (no contacts, joint friction or limits). MuJoCo orders
 * coordinates depth-first: match them by body name. Subtrees nested deeper than the XML
 * parser allows go into <include> files PATH-without-.xml.partK.xml beside PATH. All
 * files are written atomically. On failure returns a negative mbd_status with one line in
 * err naming the file and the problem. */
int mbd_export_mjcf(const mbd_model *model, const char *path, char *err, size_t err_size);

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

/* A workspace for one thread running one solver on one model (solver NULL: for the calls
 * that need none, such as mbd_constraint_rank).
 * Returns MBD_OK, MBD_EINVAL (NULL model or work) or MBD_ENOMEM; on failure *work is NULL. */
int mbd_work_new(const mbd_model *model, const mbd_solver *solver, mbd_work **work);
void mbd_work_free(mbd_work *work);

/* After MBD_ESINGULAR: the body whose joint-space block D_i (or, for the dense solver,
 * whose first coordinate's pivot) was not positive definite; after MBD_EFRICTION: the
 * body whose joint's friction changed most in the last iteration; otherwise -1. */
int mbd_work_failed_body(const mbd_work *work);

/* Iterations of the friction solve (one evaluation of tau_f each) in the last forward call: 0 for a
 * model without Coulomb friction (viscous friction needs no iteration). */
int mbd_work_friction_iterations(const mbd_work *work);

/* Friction (mbd_friction) in the forward calls below and mbd_inverse_dynamics: the joint
 * reactions depend on qdd and the friction on the reactions. For a model with Coulomb friction every
 * solver's forward call iterates on the friction forces tau_f:
 * qdd_k = FD(tau + tau_f,k), reactions by RNEA at qdd_k, G_k = tau_f from them, until
 * max |G_k - tau_f,k| <= 1e-12 (1 + max |G_k|) (or <= 1e-9 (...) where it stops falling:
 * the solve's rounding floor), tau_f,k+1 by Anderson's step (Anderson 1965) from G_k, each
 * call from tau_f,0 = -b qd, at most 100 iterations; otherwise
 * MBD_EFRICTION (the equations may have no or several solutions: Painleve's
 * paradox). Models without friction take the frictionless path unchanged.
 *
 * Acceleration form: qdd = H^-1 (tau + tau_f - C). tau may be NULL (zero). On a model with
 * loops this and the momentum form solve the open tree (the cut joints ignored): see
 * mbd_forward_constrained. */
int mbd_forward(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
                const double *tau, double *qdd);

/* Momentum form: from (q, p) the rates qd = H^-1 p and pd = Q + dT/dq. */
int mbd_forward_momentum(const mbd_model *model, mbd_work *work, const double *q, const double *p,
                         const double *tau, double *qd, double *pd);

/* The two phases of mbd_forward / mbd_forward_momentum, for timing them apart:
 * position kinematics (transforms and motion subspaces), then the solve. */
int mbd_kinematics(const mbd_model *model, mbd_work *work, const double *q);
int mbd_solve(const mbd_model *model, mbd_work *work, const double *qd, const double *tau,
              double *qdd);
int mbd_solve_momentum(const mbd_model *model, mbd_work *work, const double *p, const double *tau,
                       double *qd, double *pd);

/* ---- many states at once -------------------------------------------------------- */

/* A batch workspace: one solver on one model for K states per call, spread over OpenMP
 * threads, each thread running W states in lockstep (one per SIMD lane) where the solver
 * has a lane form, one state at a time otherwise. Made once; the calls allocate nothing.
 * threads: 0 means omp_get_max_threads(). lanes: 0 chooses W from the CPU at run time (8
 * with AVX-512, 4 with AVX2, else 1); 1 forces the one-state loop; 4 or 8 force that
 * width. A solver or model without a lane form (see mbd_solver_lanes) runs the one-state
 * loop whatever lanes asks, and mbd_batch_lanes says 1.
 * Returns MBD_OK, MBD_EINVAL (NULL model or batch, threads < 0, lanes not 0, 1, 4 or 8),
 * MBD_EUNSUPPORTED (lanes 4 or 8 on a CPU that cannot run that width) or MBD_ENOMEM; on
 * failure *batch is NULL. */
typedef struct mbd_batch mbd_batch;
int mbd_batch_new(const mbd_model *model, const mbd_solver *solver, int threads, int lanes,
                  mbd_batch **batch);
void mbd_batch_free(mbd_batch *batch);
/* The W and thread count that the batch runs with. */
int mbd_batch_lanes(const mbd_batch *batch);
int mbd_batch_threads(const mbd_batch *batch);
/* The W that lanes 0 chooses for this solver's form on this CPU: 8, 4, or 1 where the
 * solver has no lane form for it (bodies has one for the acceleration form, poisson-ldlt
 * and poisson-sweep for the momentum form; every joint type). A model with friction runs
 * the one-state loop whatever this says. */
int mbd_solver_lanes(const mbd_solver *solver, mbd_formulation form);

/* K states as rows: state k's q at q + k nq, its qd, tau and qdd at k nv (tau may be NULL:
 * zero). Any K >= 0, any alignment. Each state's result is mbd_forward's for it (to
 * round-off) and does not depend on K, its row, the thread count or the other states (a
 * failed one included), bit for bit; status (K entries, may be NULL) receives each state's
 * mbd_status. Returns MBD_OK when every state
 * succeeded, else the status of the first failed state (lowest k). */
int mbd_batch_forward(const mbd_model *model, mbd_batch *batch, int K, const double *q,
                      const double *qd, const double *tau, double *qdd, int *status);
/* The momentum form over K states: rows of p, tau (nv), results qd, pd (nv). */
int mbd_batch_forward_momentum(const mbd_model *model, mbd_batch *batch, int K, const double *q,
                               const double *p, const double *tau, double *qd, double *pd,
                               int *status);

/* ---- many states on a GPU ------------------------------------------------------- */

/* The batch's forward dynamics on an NVIDIA GPU, one GPU thread per state, by the same
 * kernel source as the CPU solvers (built into the library as PTX; no CUDA toolkit is
 * needed to build, and the driver compiles the PTX for its GPU). The CUDA driver
 * (libcuda.so.1) is loaded at run time: without it or without a GPU, mbd_gpu_batch_new
 * returns MBD_EUNSUPPORTED and says why in `error`. Solvers: bodies and dense
 * (acceleration form), poisson-ldlt (momentum form); models without friction or loops
 * (else MBD_EUNSUPPORTED, and `error` says why). Angles beyond 1e5 rad lose digits in the
 * GPU's sine and cosine. Experimental (docs/gpu.md says where it stands and measures each
 * option). */
typedef struct mbd_gpu_batch mbd_gpu_batch;
typedef unsigned long long mbd_gpu_ptr; /* an address in GPU memory */
/* How a GPU batch runs; mbd_gpu_default_options fills the defaults. */
typedef struct {
    int jit_level;      /* the driver's optimisation level for the PTX, 0 to 4 (default 4) */
    int ptx;            /* nonzero: the driver compiles the PTX; 0 (default): the build's
                           cubin for the GPU's architecture where it made one */
    int global_works;   /* nonzero: each thread's workspace in global memory; 0 (default):
                           on its stack where it fits, else in global memory */
    int threads_per_sm; /* workspaces per multiprocessor, 128 to 2048 in steps of 128; 0
                           (default): 512 on the stack, 128 in global memory */
    int inertia_slots;  /* bodies: nonzero: its inertia sums in shared slots, D^-1 in
                           registers; 0 (default): per body in the workspace */
} mbd_gpu_options;
void mbd_gpu_default_options(mbd_gpu_options *options);
/* options NULL: the defaults; one out of range: MBD_EINVAL, `error` names it. error (may
 * be NULL) receives "GPU: <device>", or the reason for a status other than MBD_OK. */
int mbd_gpu_batch_new(const mbd_model *model, const mbd_solver *solver,
                      const mbd_gpu_options *options, mbd_gpu_batch **out, char *error,
                      size_t error_size);
void mbd_gpu_batch_free(mbd_gpu_batch *batch);
/* Why a call on the batch last failed in the driver ("" where none has). */
const char *mbd_gpu_batch_error(const mbd_gpu_batch *batch);
const char *mbd_gpu_device(const mbd_gpu_batch *batch);
/* The GPU threads that a call runs at most (each takes every threads-th state). */
int mbd_gpu_batch_threads(const mbd_gpu_batch *batch);
/* As mbd_batch_forward, from and to host arrays (copied in and out each call); a state's
 * result is mbd_forward's to round-off. */
int mbd_gpu_batch_forward(const mbd_model *model, mbd_gpu_batch *batch, int K, const double *q,
                          const double *qd, const double *tau, double *qdd, int *status);
/* The same on arrays in GPU memory (mbd_gpu_alloc; tau may be 0), nothing copied:
 * MBD_OK once the kernel has run, each state's status left in status (K ints). */
int mbd_gpu_batch_forward_on_gpu(const mbd_model *model, mbd_gpu_batch *batch, int K, mbd_gpu_ptr q,
                                 mbd_gpu_ptr qd, mbd_gpu_ptr tau, mbd_gpu_ptr qdd,
                                 mbd_gpu_ptr status);
/* The momentum form (mbd_batch_forward_momentum) on a poisson-ldlt batch, from host
 * arrays and from arrays in GPU memory; a state's results are mbd_forward_momentum's to
 * round-off. Each form on a batch of the other's solver: MBD_EUNSUPPORTED. */
int mbd_gpu_batch_forward_momentum(const mbd_model *model, mbd_gpu_batch *batch, int K,
                                   const double *q, const double *p, const double *tau, double *qd,
                                   double *pd, int *status);
int mbd_gpu_batch_forward_momentum_on_gpu(const mbd_model *model, mbd_gpu_batch *batch, int K,
                                          mbd_gpu_ptr q, mbd_gpu_ptr p, mbd_gpu_ptr tau,
                                          mbd_gpu_ptr qd, mbd_gpu_ptr pd, mbd_gpu_ptr status);
/* The last call's kernel time (GPU events), seconds. */
double mbd_gpu_batch_kernel_seconds(const mbd_gpu_batch *batch);
/* GPU memory in the batch's context, and copies to and from it. */
int mbd_gpu_alloc(mbd_gpu_batch *batch, size_t bytes, mbd_gpu_ptr *out);
void mbd_gpu_release(mbd_gpu_batch *batch, mbd_gpu_ptr ptr);
int mbd_gpu_copy_to(mbd_gpu_batch *batch, mbd_gpu_ptr to, const void *from, size_t bytes);
int mbd_gpu_copy_from(mbd_gpu_batch *batch, void *to, mbd_gpu_ptr from, size_t bytes);

/* ---- forward dynamics with closed loops ----------------------------------------- */

/* Baumgarte's stabilization: Phi_q qdd = gamma - 2 alpha dPhi/dt - beta^2 Phi (1/s). */
typedef struct {
    double alpha, beta;
} mbd_baumgarte;

/* Forward dynamics of a model with loops (Lagrange multipliers, acceleration form):
 *     [ H    Phi_q^T ] [ qdd     ]   [ tau - C                                ]
 *     [ Phi_q  0     ] [ -lambda ] = [ gamma - 2 alpha dPhi/dt - beta^2 Phi ],
 * gamma = -(Phi_q qd)_q qd. The workspace's solver picks the route: "dense" (CRBA,
 * Cholesky of H, Schur complement K = Phi_q H^-1 Phi_q^T) or "bodies" (the O(N) sweep, and
 * H^-1 Phi_q^T column by column in O(N) each); others give MBD_EUNSUPPORTED. K is
 * factored by its eigendecomposition: redundant equations (eigenvalues below 1e-10 of the
 * largest) are dropped, and lambda is the minimum-norm multiplier. When the right-hand
 * side has a component that no acceleration can meet, MBD_EINCONSISTENT. lambda (m) may
 * be NULL; stab NULL means alpha = beta = 0. A model without loops gives mbd_forward's qdd. */
int mbd_forward_constrained(const mbd_model *model, mbd_work *work, const double *q,
                            const double *qd, const double *tau, const mbd_baumgarte *stab,
                            double *qdd, double *lambda);

/* Whether the solver has a constrained route ("dense", "bodies"). */
int mbd_solver_closes_loops(const mbd_solver *solver);

/* Phi(q) and dPhi/dt = Phi_q qd (m each; either may be NULL; qd may be NULL if phid is). */
int mbd_constraint_violation(const mbd_model *model, mbd_work *work, const double *q,
                             const double *qd, double *phi, double *phid);

/* Phi_q (m x nv, row-major) and, if qd and gamma are given, gamma = -(Phi_q qd)_q qd. */
int mbd_constraint_jacobian(const mbd_model *model, mbd_work *work, const double *q,
                            const double *qd, double *J, double *gamma);

/* The numerical rank of Phi_q at q (relative tolerance 1e-10): the model has
 * nv - rank degrees of freedom there. */
int mbd_constraint_rank(const mbd_model *model, mbd_work *work, const double *q, int *rank);

/* The wrench (n; f) that each cut joint's body b exerts on body a, at q with the
 * multipliers lambda: about frame a's origin, in frame a's axes (nloops x 6). */
int mbd_loop_wrenches(const mbd_model *model, mbd_work *work, const double *q, const double *lambda,
                      double *wrenches);

/* Gauss-Newton projection onto the constraint manifold: q <- q - Phi_q^+ Phi until
 * |Phi| <= tol (at most 50 iterations), then qd <- qd - Phi_q^+ Phi_q qd (qd may be NULL).
 * Needs nq == nv. MBD_EINCONSISTENT if it does not converge. */
int mbd_project_constraints(const mbd_model *model, mbd_work *work, double *q, double *qd,
                            double tol);

/* ---- dynamics quantities -------------------------------------------------------- */

/* tau_p(q, qd): the passive forces (springs, dampers, gravity compensation, tendons) that
 * every forward call adds to tau; zero for a model without them. Any workspace of the
 * model. */
int mbd_passive_forces(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
                       double *tau_p);

/* Inverse dynamics (RNEA): tau, and if reactions != NULL the wrench (n; f) that each joint
 * transmits from parent to child, in the child body frame about its origin (nbodies x 6).
 * With friction, tau is the actuator force: what the joint transmits along its axes
 * (S^T f) minus the friction that the reactions and qd give, so that mbd_forward(tau)
 * returns qdd again. No iteration: the reactions follow from qdd directly. */
int mbd_inverse_dynamics(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
                         const double *qdd, double *tau, double *reactions);

/* qdot = G(q) v: the rates of the nq position coordinates from the nv velocities (qdot = v
 * for every joint but spherical and free ones, whose quaternion moves as 1/2 quat (0, w)
 * and a free joint's position as R(quat) v_O). MBD_EINVAL for a zero quaternion. */
int mbd_position_rates(const mbd_model *model, const double *q, const double *v, double *qdot);

/* The neutral pose: every coordinate 0 but the quaternions' w = 1 (the joint frames). */
void mbd_neutral_positions(const mbd_model *model, double *q);

/* Scales every quaternion in q to unit length (MBD_EINVAL for a zero quaternion). The
 * solvers accept any non-zero quaternion and use quat / |quat|. */
int mbd_normalize_positions(const mbd_model *model, double *q);

/* Joint-space inertia matrix H (nv x nv, row-major, full) by CRBA. */
int mbd_mass_matrix(const mbd_model *model, mbd_work *work, const double *q, double *H);

/* H^-1 (nv x nv, row-major, full, exactly symmetric) in O(N^2) by the articulated-body
 * recursion (Pinocchio's computeMinverse), without forming H. Any workspace of the model
 * will do. MBD_ESINGULAR names the body as the solvers do (mbd_work_failed_body). */
int mbd_mass_matrix_inverse(const mbd_model *model, mbd_work *work, const double *q, double *Hinv);

/* p = H(q) qd by one O(N) pass, without forming H. */
int mbd_momentum(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
                 double *p);

/* The coefficients of H(q) qdd + C(q, qd) qd + g(q) = tau (rigid bodies only, no
 * friction): H (nv x nv), the Coriolis matrix C (nv x nv) of the Christoffel symbols of H,
 * C_ij = sum_k 1/2 (dH_ij/dq_k + dH_ik/dq_j - dH_jk/dq_i) qd_k, so that dH/dt - 2 C is
 * skew-symmetric, g (nv: gravity's, less the passive forces tau_p(q, qd) of a model with
 * them, whose dampers make it depend on qd) and C qd (nv); row-major, none NULL. O(N^2) (2 nv RNEA passes;
 * by polarization of RNEA's velocity terms). MBD_EUNSUPPORTED for models with spherical
 * or free joints: their velocities are not the derivatives of coordinates, so the Christoffel
 * symbols of H in q are not defined for them (H is mbd_mass_matrix's). */
int mbd_coefficients(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
                     double *H, double *C, double *g, double *Cqd);

/* Kinetic and potential energy (potential zero at the world origin). */
int mbd_energy(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
               double *kinetic, double *potential);

/* ---- derivatives of the dynamics ---------------------------------------------- */

/* q (+) v: the positions reached from q along the velocity v in unit time, in place
 * (out may be q). q + v for every joint but spherical and free ones: a spherical joint's
 * quaternion becomes quat exp(v / 2) (v its angular velocity in body coordinates), a free
 * joint's position p + R(quat) v_O and its quaternion as a spherical joint's. The
 * derivatives below with respect to q are along these steps: d/d delta of f(q (+) delta)
 * at delta = 0, delta in R^nv (Pinocchio's convention). MBD_EINVAL for a zero quaternion. */
int mbd_integrate_positions(const mbd_model *model, const double *q, const double *v, double *out);

/* A method of differentiating the forward dynamics qdd = FD(q, qd, tau), a row of one table
 * as the solvers are: "analytic", "automatic", "finite-difference", then those of plugin
 * solvers with forward_derivatives (mbd_plugin.h), each named as its solver. */
typedef struct mbd_derivatives_method mbd_derivatives_method;
int mbd_derivatives_method_count(void);
const mbd_derivatives_method *mbd_derivatives_method_at(int index);
const mbd_derivatives_method *mbd_derivatives_method_find(const char *name);
const char *mbd_derivatives_method_name(const mbd_derivatives_method *method);
const char *mbd_derivatives_method_summary(const mbd_derivatives_method *method);

/* dqdd/dq, dqdd/dqd and dqdd/dtau (= H^-1) at (q, qd, tau) by the method: nv x nv each,
 * row-major (row i: qdd_i; column j: the tangent coordinate delta_j of q (+) delta, qd_j
 * or tau_j). Any output may be NULL; tau may be NULL (zero). "automatic" differentiates the
 * solver that the workspace was made for (MBD_EUNSUPPORTED if it has no dual form); the
 * other methods take any workspace of the model (a plugin's method, in a workspace of
 * another solver, makes its plugin's work there on first use: MBD_ENOMEM if it cannot). Models with friction or loops:
 * MBD_EUNSUPPORTED. Otherwise as mbd_forward: MBD_EINVAL, MBD_ENONFINITE, MBD_ESINGULAR. */
int mbd_forward_derivatives(const mbd_model *model, mbd_work *work, const double *q,
                            const double *qd, const double *tau,
                            const mbd_derivatives_method *method, double *dqdd_dq, double *dqdd_dqd,
                            double *dqdd_dtau);

/* dtau/dq and dtau/dqd of the inverse dynamics tau = ID(q, qd, qdd) (rigid bodies; dtau/dqdd
 * is H, mbd_mass_matrix's): nv x nv each, row-major, q's columns along q (+) delta as
 * above; either output may be NULL. Any workspace of the model. Models with friction or
 * loops: MBD_EUNSUPPORTED. O(N d) (d the depth of the tree) in O(N) buffers that the
 * workspace allocates on its first derivative call and keeps (MBD_ENOMEM if it cannot).
 * The "analytic" method of mbd_forward_derivatives is -H^-1 times these, solved in its
 * outputs' rows laid side by side, with the factor of H (by rows and by columns) more in
 * that block, and an index of the tree's factor that the workspace makes once: at most
 * about 4.75 nv^2 doubles. */
int mbd_inverse_dynamics_derivatives(const mbd_model *model, mbd_work *work, const double *q,
                                     const double *qd, const double *qdd, double *dtau_dq,
                                     double *dtau_dqd);

/* ---- time integration (SUNDIALS ARKODE and CVODE) ------------------------------- */

typedef enum {
    MBD_RK4,    /* classic 4th-order Runge-Kutta, fixed step dt (ARKODE ARKStep) */
    MBD_DOPRI5, /* Dormand-Prince 5(4), adaptive (ARKODE ERKStep) */
    MBD_ADAMS,  /* variable-order Adams-Moulton, adaptive (CVODE), as MATLAB's ode113 */
    MBD_INTEGRATOR_COUNT
} mbd_integrator;

/* "rk4", "dopri5", "adams". */
const char *mbd_integrator_name(mbd_integrator integrator);
/* The integrator called name, or -1. */
int mbd_integrator_find(const char *name);

typedef struct {
    mbd_formulation formulation; /* acceleration: state (q, qd); momentum: state (q, p) */
    mbd_integrator integrator;
    double t1;               /* integrate over [0, t1] */
    double dt;               /* rk4's step */
    double rtol, atol;       /* dopri5's and adams' error tolerances */
    double sample;           /* > 0: report t = 0, sample, 2 sample, ..., t1 exactly, from the
                                integrator's dense output (the steps do not depend on it);
                                0: report t = 0 and every step the integrator takes */
    mbd_baumgarte baumgarte; /* models with loops: stabilization (zero: none) */
} mbd_sim_options;

/* One reported state; the pointers are valid during the callback only. */
typedef struct {
    double t;
    const double *q;  /* nq */
    const double *qd; /* nv; in the momentum formulation the solver's qd = H^-1 p */
    const double *p;  /* nv; momentum formulation only, else NULL */
    double kinetic, potential;
    double phi_norm, phid_norm; /* models with loops: |Phi| and |dPhi/dt| (2-norms), else 0 */
} mbd_sim_state;

/* Receives each reported state (may be NULL); a nonzero return stops mbd_simulate, which
 * returns it. */
typedef int (*mbd_sim_callback)(const mbd_sim_state *state, void *ctx);

typedef struct {
    long steps;          /* accepted steps */
    long rejected;       /* rejected attempts: error-test (and adams' convergence) failures */
    long rhs_evals;      /* right-hand-side evaluations, by the integrator's own counter */
    long reported;       /* states passed to the callback */
    double t;            /* time reached: t1, or where the run stopped */
    double energy_drift; /* max |E(t) - E(0)| / max(|E(0)|, max T(t)) over reported states */
    int failed_body;     /* after MBD_ESINGULAR or MBD_EFRICTION: mbd_work_failed_body, else -1 */
    double max_phi_norm; /* models with loops: max |Phi| over reported states, else 0 */
} mbd_sim_stats;

/* Integrates the free motion (tau = 0) from (q0, qd0) at t = 0 to options->t1 with one
 * workspace of solver; the momentum formulation starts from p0 = H(q0) qd0. The state is
 * (q, qd) or (q, p) with q' = G(q) qd (mbd_position_rates); q0's quaternions are
 * normalized first, and every reported q has unit quaternions (the solvers use quat / |quat|, so the drift of |quat| changes nothing else).
 * A model with loops runs mbd_forward_constrained with options->baumgarte
 * (acceleration formulation only). Allocates nothing per step. Returns MBD_OK, MBD_EINVAL
 * (bad options; a zero quaternion), MBD_EUNSUPPORTED (formulation not offered by solver, or a model
 * with loops in the momentum formulation or with another solver than dense or bodies), the
 * solver's status
 * if a right-hand side fails (MBD_ESINGULAR, MBD_ENONFINITE, ...), MBD_EINTEGRATE if the
 * integrator gives up, or the callback's nonzero return. stats may be NULL; otherwise it
 * is filled whatever the outcome. */
int mbd_simulate(const mbd_model *model, const mbd_solver *solver, const mbd_sim_options *options,
                 const double *q0, const double *qd0, mbd_sim_callback callback, void *ctx,
                 mbd_sim_stats *stats);

/* ---- reference data (mbd cases; docs/reference-data.md) ------------------------- */

/* A reference-data file: random states of one model and what the dense reference computes
 * at each (qdd, H, C qd + g, joint reactions; the derivatives of qdd by analytic, in files
 * that have them), with the model's coordinate map. */
#define MBD_CASES_SCHEMA 1
typedef struct mbd_cases mbd_cases;

/* Reads and checks a reference-data file. Returns MBD_OK, MBD_EIO, MBD_ELIMIT, MBD_ENOMEM
 * or MBD_EPARSE; on failure *cases is NULL and err holds one line naming the file, the case
 * and the field, such as "f.json: cases[3].qdd: expected an array of 6 finite numbers". */
int mbd_cases_read(const char *path, mbd_cases **cases, char *err, size_t err_size);
void mbd_cases_free(mbd_cases *cases);
int mbd_cases_count(const mbd_cases *cases);
/* The model's file or generator spec as the file records it. */
const char *mbd_cases_model(const mbd_cases *cases);

/* Loads the file's model (a relative path from the working directory, else from the
 * file's directory; its floating base as recorded) and checks that its coordinates are
 * the file's "joints": MBD_EINVAL with the joint and field named if they are not, else a
 * status of mbd_model_load. */
int mbd_cases_load_model(const mbd_cases *cases, mbd_model **model, char *err, size_t err_size);

/* The largest disagreement of a replay with the file: per case and quantity, the max norm
 * of the difference over max(1, max norm of the file's value). */
typedef struct {
    double error;
    int case_index;    /* -1: no case compared */
    const char *field; /* "qdd", "qd" (momentum form: H^-1 p), "H", "bias", "reactions",
                        * "dqdd_dq", "dqdd_dqd", "dqdd_dtau" (a file with derivatives) */
    int index;         /* the component, row-major (H: row nv + column; reactions: 6 body + k) */
    double value, reference;
} mbd_cases_worst;

/* Replays every case on model (mbd_cases_load_model's): qdd by mbd_forward with solver
 * where it offers the acceleration form, qd from p = H qd by mbd_forward_momentum where it
 * offers the momentum form, then the reference's own: qdd (dense), H (mbd_mass_matrix),
 * bias and reactions (mbd_inverse_dynamics); where the file has derivatives, those of
 * mbd_forward_derivatives by the solver's own method (a plugin solver's of its name), else
 * by analytic, the method that wrote them. Returns MBD_OK with the worst disagreement, or
 * the first failed case's status (MBD_ENONFINITE for a NaN answer) with err naming the case
 * and the call. */
int mbd_cases_replay(const mbd_cases *cases, const mbd_model *model, const mbd_solver *solver,
                     mbd_cases_worst *worst, char *err, size_t err_size);

/* ---- ensembles ------------------------------------------------------------------ */

/* K runs of the free motion (tau = 0, acceleration formulation), each from its own
 * (q0, qd0), by classic RK4 with one fixed step dt on a batch (mbd_batch_new(model,
 * solver, threads, lanes)): each stage is one batch call over the runs still going. Steps
 * m = 1..M, M = ceil(t1 / dt); t_m = m dt, the last step shortened to end at t1. */
typedef struct {
    double t1, dt;
    long report_every;  /* report t = 0, every this many steps (>= 1) and t1 */
    int threads, lanes; /* the batch's */
} mbd_ensemble_options;

/* All K runs at one report time: rows of q (nq) and qd (nv). A failed run holds the last
 * state it reached, at t_failed[k]; status[k] != MBD_OK says so. */
typedef struct {
    double t;
    long step;
    int K;
    const double *q, *qd;
    const int *status;
    const double *t_failed;
} mbd_ensemble_state;

/* A nonzero return stops mbd_simulate_ensemble, which returns it. */
typedef int (*mbd_ensemble_callback)(const mbd_ensemble_state *state, void *ctx);

/* The number of steps M for t1 and dt (options as above). */
long mbd_ensemble_steps(const mbd_ensemble_options *options);

/* Integrates the K runs (q0: rows of nq, qd0: rows of nv). The state is (q, qd) with
 * q' = G(q) qd (mbd_position_rates); as in mbd_simulate, q0's quaternions are normalized
 * first and every reported q has unit quaternions (a zero quaternion fails its run with
 * MBD_EINVAL). MBD_EUNSUPPORTED unless the model has no loops (the batch solves the open
 * tree) and the solver offers the acceleration formulation. A run whose right-hand side
 * fails (MBD_ESINGULAR, MBD_ENONFINITE, ...) stops there, with its status, while the others
 * go on; a run's results do not depend on the other runs, K or the thread count.
 * Allocates once; nothing per step. status (K, may be NULL) receives each run's outcome.
 * Returns MBD_OK when every run reached t1, MBD_EINVAL or MBD_ENOMEM, the callback's
 * nonzero return, or else the status of the first failed run (lowest k). */
int mbd_simulate_ensemble(const mbd_model *model, const mbd_solver *solver,
                          const mbd_ensemble_options *options, int K, const double *q0,
                          const double *qd0, mbd_ensemble_callback callback, void *ctx,
                          int *status);

#ifdef __cplusplus
}
#endif
#endif
