/* internal.h: the model (model/model.h), workspace and solver-table layouts shared by the
 * library's files. Not installed; users see only include/mbd.h. */
#ifndef MBD_INTERNAL_H
#define MBD_INTERNAL_H

#include "mbd.h"
#include "mbd_plugin.h"
#include "spatial/spatial.h"
#include "spatial/joint_space.h"
#include "model/model.h"

/* Per-thread, per-state buffers; the only memory a solver writes. */
struct mbd_work {
    const mbd_model *model;
    const mbd_solver *solver;
    void *block;               /* the one allocation that the arrays below are carved from */
    int failed_body;           /* body whose joint block was singular in the last solve, or -1 */
    int screw_transforms;      /* the GPU's bodies and poisson-ldlt kernels: X as the lanes
                                  keep it (SCREW_TRANSFORMS, lane.h); else 0 */
    const double *gpu_q;       /* the GPU's kernels: the state's q, whose cos q and sin q
                                  the screw kernels form where they read them (SCREW_XFORM) */
    const double *gpu_qd;      /* and its qd, from which the bodies sweep forms c and p^A
                                  again (BIAS_FROM_VELOCITY, bodies_kernels.h) */
    mbd_xform *X;              /* (nb) X_i: parent -> body i, valid after mbd_kinematics */
    double *S;                 /* (nv x 6) motion subspace columns, dof j at 6 j */
    double *U;                 /* (nv x 6) U = I^A S */
    double *D;                 /* (ndd) per-joint nv x nv blocks */
    double *u;                 /* (nv) */
    double (*v)[6];            /* (nb) body velocities */
    union {                    /* (nb) by solver: */
        double (*c)[6];        /* bodies: the velocity-product accelerations c_i */
        double (*phi)[6];      /* Poisson solvers: phi_i of mu_i = I^A_i v_i + phi_i */
    };
    double (*a)[6];            /* (nb) accelerations */
    double (*f)[6];            /* (nb) forces, momenta */
    union {                    /* (nb) by pass: */
        double (*mass_moments)[6]; /* pd's subtree sums (h^C_i; m^C_i, 0, 0) (momentum_kernels.h) */
        double (*inverse_forces)[6]; /* bodies_inverse_times's p_i, apart from f's reactions */
    };
    mbd_inertia *IA;           /* (nb) articulated or composite inertias */
    double *sin_q, *cos_q;     /* (nq) of the coordinates angles_from to angles_to - 1,
                                  from start_kinematics (read where one is an angle) */
    double *scratch;           /* solver-specific, solver->scratch_doubles(model) */
    double *jv;                /* (JV_COUNT x nv) joint-space vectors of friction.c and
                                  coefficients.c, vector k at k nv */
    int friction_iterations;   /* of the last forward call's friction solve */
    double *loop_scratch;      /* loops_scratch_doubles(model, solver); models with loops */
    double *friction_scratch;  /* friction_scratch_doubles(model); models with Coulomb friction */
    double *passive_tau;       /* (2 nv) models with passive forces: tau + tau_p, then a
                                  vector that passive_derivatives writes and drops */
    double *rest_rates;        /* (nv) zero: qd and qdd of gravity compensation's RNEA */
    double (*gravcomp_f)[6];   /* (nb) models with gravity compensation: its RNEA's forces */
    void *plugin_work;         /* a plugin solver's work (its work_new), else NULL */
    const mbd_solver *derivative_plugin; /* the plugin solver whose derivatives method last */
    void *derivative_plugin_work;        /* ran on this work of another solver, its work */
    void *derivative_scratch;  /* the derivatives' per-call arrays (derivative_scratch) */
    size_t derivative_scratch_bytes;
    void *passive_scratch;     /* the passive forces' derivatives (derivatives.c) */
    size_t passive_scratch_bytes;
};

#define JV_COUNT 6

/* The per-state arrays that the lane-generic kernels read (spatial/lane.h: the bodies
 * sweep and the spatial and joint kernels it calls), in their order, each as (field,
 * entries of *field) for model m: the one list that every workspace of those kernels
 * carves first, one state's (MBD_WORK_ARRAYS), the lanes' (batch_lanes.h) and the dual
 * numbers' (automatic.cc), so that a new array is in each. */
#define MBD_LANE_ARRAYS(ARRAY, m)                                                                  \
    ARRAY(X, (m)->nb) ARRAY(IA, (m)->nb) ARRAY(S, 6 * (m)->nv) ARRAY(U, 6 * (m)->nv)               \
    ARRAY(D, (m)->ndd) ARRAY(u, (m)->nv) ARRAY(v, (m)->nb) ARRAY(c, (m)->nb) ARRAY(a, (m)->nb)     \
    ARRAY(f, (m)->nb)

/* The arrays carved from work->block, in their order, each as (field, element count) for
 * model m and the solver's scratch and loop_scratch doubles: the one list that lays out
 * the block (solvers.c) and moves it (the GPU's threads, gpu_kernels.c), so that a new
 * array is in both. */
#define MBD_WORK_ARRAYS(ARRAY, m, scratch_doubles, loop_doubles)                                   \
    MBD_LANE_ARRAYS(ARRAY, m) ARRAY(mass_moments, (m)->nb) ARRAY(sin_q, (m)->nq)                   \
    ARRAY(cos_q, (m)->nq) ARRAY(scratch, scratch_doubles) ARRAY(jv, JV_COUNT * (m)->nv)            \
    ARRAY(loop_scratch, loop_doubles) ARRAY(friction_scratch, friction_scratch_doubles(m))       \
    ARRAY(passive_tau, (m)->has_passive ? 2 * (m)->nv : 0)                                         \
    ARRAY(rest_rates, (m)->has_passive ? (m)->nv : 0) ARRAY(gravcomp_f, (m)->gravcomp ? (m)->nb : 0)

typedef size_t (*mbd_scratch_fn)(const mbd_model *model);
typedef int (*mbd_solve_acc_fn)(const mbd_model *model, mbd_work *work, const double *qd,
                                const double *tau, double *qdd);
typedef int (*mbd_solve_mom_fn)(const mbd_model *model, mbd_work *work, const double *p,
                                const double *tau, double *qd, double *pd);
typedef int (*mbd_forward_acc_fn)(const mbd_model *model, mbd_work *work, const double *q,
                                  const double *qd, const double *tau, double *qdd);
/* x = H^-1 b at the kinematics and factorization that the solver's last solve left in
 * work: no velocity or gravity terms, O(its back substitution). */
typedef void (*mbd_inverse_times_fn)(const mbd_model *model, mbd_work *work, const double *b,
                                     double *x);
/* x = H^-1 b as mbd_inverse_times_fn, and the force parts of work->f = those of base + the
 * reactions of accelerations x alone (reaction_forces_plus_accelerations), from its passes. */
typedef void (*mbd_inverse_reactions_fn)(const mbd_model *model, mbd_work *work,
                                         const double *b, double *x, const double (*base)[6]);
/* qdd as mbd_solve_acc_fn (tau not NULL), and the force parts of work->f = the reactions of
 * RNEA at qd and qdd, from the solve's own passes. */
typedef int (*mbd_solve_reactions_fn)(const mbd_model *model, mbd_work *work, const double *qd,
                                      const double *tau, double *qdd);
typedef int (*mbd_forward_mom_fn)(const mbd_model *model, mbd_work *work, const double *q,
                                  const double *p, const double *tau, double *qd, double *pd);

/* The lane kernels that solve a solver's states W at a time (batch_lanes.h), if any: the
 * bodies sweep's in the acceleration form, the Poisson solvers' in the momentum form. */
typedef enum { LANES_NONE, LANES_BODIES, LANES_POISSON_LDLT, LANES_POISSON_SWEEP } mbd_lane_kernels;

/* How constrained forward dynamics (loops.c) takes H^-1 from a solver, if it can: by
 * forming and factoring H, or by the bodies sweep's factorization, O(N) per column. */
typedef enum { LOOPS_NONE, LOOPS_DENSE, LOOPS_BODIES } mbd_loop_route;

/* The kernel that runs a solver's states on the GPU (gpu/gpu.h, GPU_KERNEL_LIST), if any:
 * its acceleration form where it has one, else its momentum form. */
typedef enum { GPU_NONE, GPU_BODIES, GPU_POISSON_LDLT, GPU_DENSE } mbd_gpu_kernels;

/* One row of the solver table. Each solve function runs after mbd_kinematics(q). */
struct mbd_solver {
    const char *name;
    const char *summary;
    mbd_scratch_fn scratch_doubles;  /* may be NULL: no scratch */
    mbd_solve_acc_fn solve_acc;      /* NULL if the acceleration form is not offered */
    mbd_solve_mom_fn solve_mom;      /* NULL if the momentum form is not offered */
    /* May be NULL: solve_acc and solve_mom with each body's X_i and S_i formed in their
     * first pass, after start_kinematics(q) (mbd_forward, mbd_forward_momentum), instead
     * of in a pass of their own: at N = 10 000 X then stays in L1 between the two. */
    mbd_forward_acc_fn forward_acc;
    mbd_forward_mom_fn forward_mom;
    mbd_inverse_times_fn inverse_times; /* may be NULL: friction re-solves in full */
    mbd_inverse_reactions_fn inverse_reactions; /* may be NULL: inverse_times, then RNEA's */
    mbd_solve_reactions_fn solve_reactions; /* may be NULL: solve_acc, then RNEA */
    mbd_lane_kernels lane_kernels;   /* its lane forms (batch.c); LANES_NONE: one state only */
    mbd_loop_route loop_route;       /* LOOPS_NONE: it does not close loops */
    mbd_gpu_kernels gpu_kernels;     /* GPU_NONE: not on the GPU (gpu.c) */
    const mbd_plugin_solver *plugin; /* a plugin's solver (plugin.c), else NULL */
    const char *plugin_path;         /* its library's file */
};

/* ---- workspace blocks: the one carver of the one-state workspace (solvers.c), the
 * lanes' (batch_lanes.h) and the loops' scratch (loops.c) ---- */

/* A block that buffers are carved from one after another, each at a multiple of 64 bytes
 * from the block's 64-byte-aligned start (its own cache lines): a layout function carves
 * every buffer once with base NULL, which only measures (used: the block's bytes), then
 * again over the allocation. */
typedef struct {
    char *base;
    size_t used;
} carved_block;

/* The next buffer of the block, of the given bytes (NULL while measuring). */
static inline void *carve(carved_block *block, size_t bytes)
{
    void *at = block->base ? block->base + block->used : NULL;
    block->used += (bytes + 63) & ~(size_t)63;
    return at;
}

/* work->field, `count` entries of its type, carved from the block: the ARRAY of the lists
 * above. */
#define CARVE_ARRAY(block, work, field, count)                                             \
    ((work)->field = (__typeof__((work)->field))carve(block, (size_t)(count) * sizeof *(work)->field))

/* ---- joints and joint-space blocks: the one-state kernels (see joint_kernels.h) ---- */
#define MBD_LANES 1
#include "spatial/lane.h"
#include "spatial/joint_kernels.h"
#include "spatial/lane_end.h"

/* ---- joints (joints.c) ---- */

/* Whether the joint's coordinates describe a pose: a quaternion must not be zero (nor so
 * small or large that |quat|^2 over- or underflows). */
int joint_coordinates_valid(mbd_joint_type type, const double *q);
/* qdot = G(q) v: the rates of the joint's nq position coordinates from its nv velocities
 * (v itself for joints with nq == nv). */
void joint_position_rates(double *qdot, const mbd_joint *joint, const double *q, const double *v);

/* ---- kinematics and the entry points' checks (kinematics.c) ---- */

int check_finite(const double *x, int n);
/* The Euclidean norm of x[0 .. n - 1]. */
double vector_norm(const double *x, int n);
/* mbd_kinematics before the bodies' X_i and S_i: q checked, its angles' sines and cosines
 * taken (work->sin_q, cos_q). */
int start_kinematics(const mbd_model *model, mbd_work *work, const double *q);
/* After mbd_kinematics: v_i for all bodies from qd. */
void kinematics_velocity(const mbd_model *model, mbd_work *work, const double *qd);

/* ---- the momentum passes (momentum.c) ---- */

/* mu_i: momentum of the subtree rooted at i (from work->v), into mu (nb x 6). */
void subtree_momenta(const mbd_model *model, mbd_work *work, double (*mu)[6]);
/* pd = Q + dT/dq for a solver that has qd = H^-1 p: body velocities, subtree momenta
 * (into work->f), the subtree masses, then pd_i body by body (momentum_kernels.h). */
void momentum_rates_from_qd(const mbd_model *model, mbd_work *work, const double *qd,
                            const double *tau, double *pd);

/* ---- RNEA (rnea.c) and CRBA (crba.c) ---- */

/* RNEA after mbd_kinematics; reactions in work->f. */
void rnea(const mbd_model *model, mbd_work *work, const double *qd, const double *qdd,
          int with_gravity, double *tau);
/* After mbd_kinematics: the force parts of work->f = those of base + the reactions of
 * accelerations qdd alone (no velocity or gravity), which RNEA's reactions are affine in;
 * the moment parts are left as they were. */
void reaction_forces_plus_accelerations(const mbd_model *model, mbd_work *work,
                                        const double *qdd, const double (*base)[6]);
/* CRBA after mbd_kinematics: the lower triangle of the row-major nv x nv H. */
void crba(const mbd_model *model, mbd_work *work, double *H);
/* The tree-sparse L^T D L factor of H (solvers/sparse.c; Featherstone, "Efficient
 * factorization of the joint-space inertia matrix for branched kinematic trees", IJRR
 * 2005). A multi-DOF joint is a chain of DOFs: lambda[k] is the parent DOF of k (k - 1
 * inside a joint, else the last DOF of the parent body's, -1 at a root). Row k, at
 * rows + adr[k], holds H_kj for j = k, lambda(k), lambda^2(k), ... (adr[k + 1] - adr[k] =
 * depth(k) + 1 entries), and after tree_factor_reduce D_k = H_kk first, then L_kj: H =
 * L^T D L with L unit lower triangular and no fill-in. */
typedef struct {
    size_t *adr;
    int *lambda;
    double *rows;
} tree_factor;
/* adr (nv + 1) and lambda (nv) of the model; adr[nv] is the rows' size, at most
 * nv (nv + 1) / 2. */
void tree_factor_index(const mbd_model *model, size_t *adr, int *lambda);
/* Factors the rows in place and on the way x = D^-1 L^-T x; MBD_OK, or the status of the
 * body whose pivot is not positive. */
int tree_factor_reduce(const mbd_model *model, mbd_work *work, const tree_factor *f, double *x);
/* x = L^-1 x: with tree_factor_reduce, x = H^-1 x. */
void tree_back_substitute(const mbd_model *model, const tree_factor *f, double *x);

/* The RNEA derivatives (rnea_derivatives.c) in two steps, in a buffer of
 * rnea_derivatives_bytes(model), after mbd_kinematics: _start at (q, qd) gives H in the
 * rows of the tree-sparse factor (its indexes filled) and bias = tau at qdd = 0 (nv), each
 * optional (NULL), so that qdd can be solved for with H; _at then gives dtau/dq and
 * dtau/dqd (nv x nv row-major or NULL) at qdd. */
size_t rnea_derivatives_bytes(const mbd_model *model);
void rnea_derivatives_start(const mbd_model *model, const mbd_work *work, void *buffer,
                            const double *qd, const tree_factor *H, double *bias);
void rnea_derivatives_at(const mbd_model *model, void *buffer, const double *qd,
                         const double *qdd, double *dtau_dq, double *dtau_dqd);

/* Records that body's joint-space block as singular; returns MBD_ESINGULAR. */
static inline int singular_joint(mbd_work *work, int body)
{
    work->failed_body = body;
    return MBD_ESINGULAR;
}

/* The body whose joint owns velocity coordinate dof. */
int body_of_dof(const mbd_model *model, int dof);

/* ---- passive forces (passive.c) ---- */

/* After mbd_kinematics, for a model with passive forces: out = tau + tau_p(q, qd) (tau may
 * be NULL: tau_p alone); work->gravcomp_f keeps gravity compensation's share of the joint
 * reactions. MBD_ENONFINITE for a non-finite qd or result. */
int passive_add(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
                const double *tau, double *out);
/* The springs' potential energy (joints and tendons) at q. */
double passive_potential(const mbd_model *model, const double *q);
/* After mbd_kinematics: d tau_p / dq (along q (+) v) and d tau_p / dqd, nv x nv each. */
int passive_derivatives(const mbd_model *model, mbd_work *work, const double *q,
                        const double *qd, double *dq, double *dqd);

/* ---- friction (friction.c) ---- */

/* The solve phase of mbd_solve / mbd_solve_momentum for a model with friction, after
 * mbd_kinematics: the work's solver inside the friction iteration. */
int friction_solve_acc(const mbd_model *model, mbd_work *work, const double *qd,
                       const double *tau, double *qdd);
int friction_solve_mom(const mbd_model *model, mbd_work *work, const double *p,
                       const double *tau, double *qd, double *pd);
/* The workspace doubles that the friction iteration needs beyond work->jv; 0 without
 * Coulomb friction. */
size_t friction_scratch_doubles(const mbd_model *model);
/* tau_f for every coordinate from qd and the joint reactions that rnea() left in work->f. */
void friction_forces(const mbd_model *model, const mbd_work *work, const double *qd,
                     double *tau_f);

/* ---- closed loops (loops.c) ---- */

/* The workspace doubles that constrained forward dynamics needs; 0 without loops. */
size_t loops_scratch_doubles(const mbd_model *model, const mbd_solver *solver);

/* After a bodies solve at the current kinematics: x = H^-1 b in O(N), reusing the
 * articulated inertias and joint blocks that solve left in work (no bias terms). */
void bodies_inverse_times(const mbd_model *model, mbd_work *work, const double *b, double *x);

/* ---- solvers (one file each) ---- */
/* Scratch of a solver, 64-byte aligned, sized by its scratch_doubles. */
extern const mbd_solver mbd_solver_dense;
extern const mbd_solver mbd_solver_bodies;
extern const mbd_solver mbd_solver_poisson_sweep;
extern const mbd_solver mbd_solver_poisson_ldlt;
extern const mbd_solver mbd_solver_sparse;

/* ---- plugin solvers (plugin.c), after the built-in ones in the table ---- */

int plugin_solver_count(void);
const mbd_solver *plugin_solver_at(int index);
/* mbd_forward of a plugin solver (any model; MBD_EUNSUPPORTED with friction). */
int plugin_forward(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
                   const double *tau, double *qdd);
/* The derivatives methods of plugin solvers with forward_derivatives, after the built-in
 * ones in their table; each named and summarized as its solver. */
int plugin_method_count(void);
const mbd_derivatives_method *plugin_method_at(int index);
/* mbd_forward_derivatives of a plugin's method, after the checks common to every method. */
int plugin_forward_derivatives(const mbd_model *model, mbd_work *work,
                               const mbd_solver *solver, const double *q, const double *qd,
                               const double *tau, double *dqdd_dq, double *dqdd_dqd,
                               double *dqdd_dtau);
/* Frees the work that a plugin's derivatives method made for this work (if any). */
void plugin_derivative_work_free(mbd_work *work);

/* ---- derivatives (derivatives/): one row of the methods' table ---- */

/* dqdd/dq, dqdd/dqd, dqdd/dtau (each may be NULL) of a model without friction or loops,
 * after mbd_forward_derivatives has checked the arguments. */
typedef int (*mbd_derivatives_fn)(const mbd_model *model, mbd_work *work, const double *q,
                                  const double *qd, const double *tau, double *dqdd_dq,
                                  double *dqdd_dqd, double *dqdd_dtau);

struct mbd_derivatives_method {
    const char *name;
    const char *summary;
    mbd_derivatives_fn forward;   /* a built-in method's, else NULL */
    const mbd_solver *plugin;     /* a plugin's method: the solver it differentiates */
};

extern const mbd_derivatives_method mbd_derivatives_analytic;
extern const mbd_derivatives_method mbd_derivatives_automatic;
extern const mbd_derivatives_method mbd_derivatives_finite_difference;

/* The workspace's block of at least bytes (64-byte aligned, contents undefined) for a
 * derivative call's arrays, allocated on first use and grown as needed, so that repeated
 * calls make no allocation; NULL if it cannot be had (the caller returns MBD_ENOMEM). */
void *derivative_scratch(mbd_work *work, size_t bytes);
/* After mbd_kinematics at (q, qd) of a model with passive forces: d tau_p / dq, then
 * d tau_p / dqd (passive_derivatives), then room for 2 nv x nv more, in a block that the
 * workspace keeps; NULL if it cannot be had. */
double *passive_jacobians(mbd_work *work, const double *q, const double *qd);
/* Hinv = H^-1 (nv x nv) after mbd_kinematics, from CRBA's H factored densely in L (nv x nv
 * scratch; derivatives/analytic.c). */
int inverse_by_factor(const mbd_model *model, mbd_work *work, double *L, double *Hinv);

/* ---- many states at once (batch.c; lane forms in batch_x4.c, batch_x8.c) ---- */

/* The lane form of the solvers of one width W: a group of count <= W states (rows as in
 * mbd_batch_forward) in lockstep, one per lane. solve runs the workspace's solver: bodies
 * (z NULL: x is qd, y qdd), poisson-ldlt or poisson-sweep (x is p, y qd, z pd) on the
 * states not in the mask skip whose inputs are finite (the others' lanes, and those past
 * count, compute a copy of a solved state, so that what a lane computes never depends on
 * its neighbours), writes their results, and returns the mask of those it could not
 * solve (a non-finite input or result; all of them at a singular joint block in any
 * lane): the caller solves those one at a time, which gives each its own status.
 * next_count: how many states after the group's the caller solves in its next call (0:
 * some other), which the bodies sweep starts within this one (bodies_lanes,
 * batch_lanes.h); ahead: how many states follow the group in the arrays (0: none to
 * fetch), whose rows it brings into the cache while it computes (prefetch_next, lane.h). */
typedef struct {
    int lanes;
    void *(*work_new)(const mbd_model *model, const mbd_solver *solver);
    void (*work_free)(void *work);
    unsigned (*solve)(const mbd_model *model, void *work, int count, unsigned skip,
                      const double *q, const double *x, const double *tau, double *y,
                      double *z, int next_count, int ahead);
} mbd_lane_form;
extern const mbd_lane_form mbd_lane_form_x4, mbd_lane_form_x8;
/* The CPU runs the lane form of this width (4: AVX2 and FMA, 8: AVX-512; cpu.c, the one
 * place that asks the CPU). */
int cpu_runs_lanes(int lanes);
/* s[k] = sin x[k], c[k] = cos x[k] for k < n, 4 at a time (lane_sincos; batch_x4.c): for
 * CPUs that run 4 lanes. */
void sincos_x4(const double *x, int n, double *s, double *c);
#define MBD_MAX_LANES 8

/* After mbd_kinematics: the full row-major H^-1, exactly symmetric, by the
 * articulated-body recursion in O(N^2) (minverse.c). */
int mass_matrix_inverse(const mbd_model *model, mbd_work *work, double *Hinv);

#endif
