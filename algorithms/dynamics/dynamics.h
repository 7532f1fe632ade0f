/* dynamics.h: one state's passes: the workspace that they write (struct mbd_work),
 * kinematics, RNEA, CRBA and its dense factor, the tree-sparse factor, the momentum
 * passes, H^-1, the passive and friction forces and the loops' equations, and the entry
 * points that run one of them at a state. What the floors above may call; none of it
 * calls a solver. Not installed; users see only include/mbd.h. */
#ifndef MBD_DYNAMICS_H
#define MBD_DYNAMICS_H

#include "mbd.h"
#include "spatial/spatial.h"
#include "spatial/joint_space.h"
#include "model/model.h"

/* Per-thread, per-state buffers; the only memory a solver writes. */
struct mbd_work {
    const mbd_model *model;
    const mbd_solver *solver;
    void *block;          /* the one allocation that the arrays below are carved from */
    int failed_body;      /* body whose joint block was singular in the last solve, or -1 */
    int screw_transforms; /* the GPU's bodies and poisson-ldlt kernels: X as the lanes
                             keep it (SCREW_TRANSFORMS, lane.h); else 0 */
    const double *gpu_q;  /* the GPU's kernels: the state's q, whose cos q and sin q
                             the screw kernels form where they read them (SCREW_XFORM) */
    const double *gpu_qd; /* and its qd, from which the bodies sweep forms c and p^A
                             again (BIAS_FROM_VELOCITY, bodies_kernels.h) */
    mbd_xform *X;         /* (nb) X_i: parent -> body i, valid after mbd_kinematics */
    double *S;            /* (nv x 6) motion subspace columns, dof j at 6 j */
    double *U;            /* (nv x 6) U = I^A S */
    double *D;            /* (ndd) per-joint nv x nv blocks */
    double *u;            /* (nv) */
    double (*v)[6];       /* (nb) body velocities */
    union {               /* (nb) by solver: */
        double (*c)[6];   /* bodies: the velocity-product accelerations c_i */
        double (*phi)[6]; /* Poisson solvers: phi_i of mu_i = I^A_i v_i + phi_i */
    };
    double (*a)[6];                /* (nb) accelerations */
    double (*f)[6];                /* (nb) forces, momenta */
    union {                        /* (nb) by pass: */
        double (*mass_moments)[6]; /* pd's subtree sums (h^C_i; m^C_i, 0, 0) (momentum_kernels.h) */
        double (*inverse_forces)[6]; /* bodies_inverse's p_i, apart from f's reactions */
    };
    mbd_inertia *IA;          /* (nb) articulated or composite inertias */
    double *sin_q, *cos_q;    /* (nq) of the coordinates angles_from to angles_to - 1,
                                 from start_kinematics (read where one is an angle) */
    double *scratch;          /* solver-specific, solver->scratch_doubles(model) */
    double *jv;               /* (JV_COUNT x nv) joint-space vectors of the friction
                                 iteration and coefficients.c, vector k at k nv */
    int friction_iterations;  /* of the last forward call's friction solve */
    double *loop_scratch;     /* loops_scratch_doubles(model, solver); models with loops */
    double *friction_scratch; /* friction_scratch_doubles(model); models with Coulomb friction */
    double *passive_tau;      /* (2 nv) models with passive forces: tau + tau_p, then a
                                 vector that passive_derivatives writes and drops */
    double *rest_rates;       /* (nv) zero: qd and qdd of gravity compensation's RNEA */
    double (*gravcomp_f)[6];  /* (nb) models with gravity compensation: its RNEA's forces */
    void *plugin_work;        /* a plugin solver's work (its work_new), else NULL */
    const mbd_solver *derivative_plugin; /* the plugin solver whose derivatives method last */
    void *derivative_plugin_work;        /* ran on this work of another solver, its work */
    void *derivative_scratch;            /* the derivatives' per-call arrays (derivative_scratch) */
    size_t derivative_scratch_bytes;
    void *derivative_index; /* the analytic method's index of the tree, made once (analytic.c) */
    void *passive_scratch;  /* the passive forces' derivatives (derivatives.c) */
    size_t passive_scratch_bytes;
};

#define JV_COUNT 6

/* ---- workspace blocks: the one carver of the one-state workspace (solvers/workspace.c),
 * the lanes' (batch_lanes.h) and the loops' and friction's scratch ---- */

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
 * of arrays (MBD_LANE_ARRAYS, MBD_WORK_ARRAYS in solvers.h). */
#define CARVE_ARRAY(block, work, field, count)                                                     \
    ((work)->field =                                                                               \
         (__typeof__((work)->field))carve(block, (size_t)(count) * sizeof *(work)->field))

/* The per-state arrays that the lane-generic kernels read (spatial/lane.h: the bodies
 * sweep and the spatial and joint kernels it calls), in their order, each as (field,
 * entries of *field) for model m: the one list that every workspace of those kernels
 * carves first, one state's (MBD_WORK_ARRAYS), the lanes' (batch_lanes.h) and the dual
 * numbers' (automatic.cc), so that a new array is in each. */
/* clang-format off */
#define MBD_LANE_ARRAYS(ARRAY, m)                                                                  \
    ARRAY(X, (m)->nb) ARRAY(IA, (m)->nb) ARRAY(S, 6 * (m)->nv) ARRAY(U, 6 * (m)->nv)               \
    ARRAY(D, (m)->ndd) ARRAY(u, (m)->nv) ARRAY(v, (m)->nb) ARRAY(c, (m)->nb) ARRAY(a, (m)->nb)     \
    ARRAY(f, (m)->nb)
/* clang-format on */

/* ---- joints and joint-space blocks: the one-state kernels (see joint_kernels.h) ---- */
#define MBD_LANES 1
#include "spatial/lane.h"
#include "dynamics/joint_kernels.h"
#include "spatial/lane_end.h"

/* ---- joints (joints.c) ---- */

/* Whether the joint's coordinates describe a pose: a quaternion must not be zero (nor so
 * small or large that |quat|^2 over- or underflows). */
int joint_coordinates_valid(mbd_joint_type type, const double *q);
/* qdot = G(q) v: the rates of the joint's nq position coordinates from its nv velocities
 * (v itself for joints with nq == nv). */
void joint_position_rates(double *qdot, const mbd_joint *joint, const double *q, const double *v);

/* ---- kinematics (kinematics.c) ---- */

/* mbd_kinematics before the bodies' X_i and S_i: q checked, its angles' sines and cosines
 * taken (work->sin_q, cos_q). */
int start_kinematics(const mbd_model *model, mbd_work *work, const double *q);
/* The common start of the entry points of one state (inverse.c): a workspace of this
 * model, position kinematics at q, and finite rates (each of the nv-vectors given may be
 * NULL). */
int start_state(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
                const double *qdd);
/* s[k] = sin x[k], c[k] = cos x[k] for k < n, 4 at a time (lane_sincos; sincos_x4.c): for
 * CPUs that run 4 lanes. */
void sincos_x4(const double *x, int n, double *s, double *c);
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
/* rnea at qd = qdd = 0, with gravity: the velocity terms' work left out (the linear
 * parts of work->a alone). */
void rnea_at_rest(const mbd_model *model, mbd_work *work, double *tau);
/* After mbd_kinematics: the force parts of work->f = those of base + the reactions of
 * accelerations qdd alone (no velocity or gravity), which RNEA's reactions are affine in;
 * the moment parts are left as they were. */
void reaction_forces_plus_accelerations(const mbd_model *model, mbd_work *work, const double *qdd,
                                        const double (*base)[6]);
/* CRBA after mbd_kinematics: the lower triangle of the row-major nv x nv H. */
void crba(const mbd_model *model, mbd_work *work, double *H);
/* The tree-sparse L^T D L factor of H (tree_factor.c; Featherstone, "Efficient
 * factorization of the joint-space inertia matrix for branched kinematic trees", IJRR
 * 2005). A multi-DOF joint is a chain of DOFs: lambda[k] is the parent DOF of k (k - 1
 * inside a joint, else the last DOF of the parent body's, -1 at a root). Row k, at
 * rows + adr[k], holds H_kj for j = k, lambda(k), lambda^2(k), ... (adr[k + 1] - adr[k] =
 * depth(k) + 1 entries), and after tree_factor_reduce D_k = H_kk first, then L_kj: H =
 * L^T D L with L unit lower triangular and no fill-in. chain[adr[k] + m] = lambda^m(k), the
 * DOF of each entry (the loops take it there instead of walking lambda, whose loads wait on
 * one another). */
typedef struct {
    size_t *adr;
    int *lambda, *chain;
    double *rows;
} tree_factor;
/* adr (nv + 1) and lambda (nv) of the model; adr[nv] is the rows' size, at most
 * nv (nv + 1) / 2. */
void tree_factor_index(const mbd_model *model, size_t *adr, int *lambda);
/* chain (adr[nv] entries) from adr and lambda. */
void tree_factor_chains(int nv, const size_t *adr, const int *lambda, int *chain);
/* Factors the rows in place and on the way x = D^-1 L^-T x; MBD_OK, or the status of the
 * body whose pivot is not positive. */
int tree_factor_reduce(const mbd_model *model, mbd_work *work, const tree_factor *f, double *x);
/* x = L^-1 x: with tree_factor_reduce, x = H^-1 x. */
void tree_back_substitute(const mbd_model *model, const tree_factor *f, double *x);

/* The RNEA derivatives (rnea_derivatives.c) in two steps, in a buffer of
 * rnea_derivatives_bytes(model), after mbd_kinematics: _start at (q, qd) gives H in the
 * rows of the tree-sparse factor (whose indexes the caller filled) and bias = tau at qdd =
 * 0 (nv), each optional (NULL), so that qdd can be solved for with H; _at then gives
 * dtau/dq and dtau/dqd (nv x nv, rows `stride` apart, or NULL) at qdd, writing the
 * entries of pairs on a common path alone (the others, zero, the caller's). */
size_t rnea_derivatives_bytes(const mbd_model *model);
void rnea_derivatives_start(const mbd_model *model, const mbd_work *work, void *buffer,
                            const double *qd, const tree_factor *H, double *bias);
void rnea_derivatives_at(const mbd_model *model, void *buffer, const double *qd, const double *qdd,
                         double *dtau_dq, double *dtau_dqd, size_t stride);

/* Records that body's joint-space block as singular; returns MBD_ESINGULAR. */
static inline int singular_joint(mbd_work *work, int body)
{
    work->failed_body = body;
    return MBD_ESINGULAR;
}

/* The body whose joint owns velocity coordinate dof. */
int body_of_dof(const mbd_model *model, int dof);

/* H by CRBA into the column-major upper triangle of H (nv x nv), factored in place by
 * LAPACK's Cholesky, H = R^T R (dpotrf): the dense solver's and the loops' dense route's
 * (crba.c). MBD_OK, or the status of the body whose pivot is not positive. */
int dense_factor(const mbd_model *model, mbd_work *work, double *H);
/* x = H^-1 x for columns right-hand sides of nv (column-major) from dense_factor's R
 * (dpotrs); MBD_EINVAL if LAPACK refuses. */
int dense_solve(const mbd_model *model, const double *R, int columns, double *x);

/* ---- passive forces (passive.c) ---- */

/* After mbd_kinematics, for a model with passive forces: out = tau + tau_p(q, qd) (tau may
 * be NULL: tau_p alone); work->gravcomp_f keeps gravity compensation's share of the joint
 * reactions. MBD_ENONFINITE for a non-finite qd or result. */
int passive_add(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
                const double *tau, double *out);
/* The springs' potential energy (joints and tendons) at q. */
double passive_potential(const mbd_model *model, const double *q);
/* After mbd_kinematics: d tau_p / dq (along q (+) v) and d tau_p / dqd, nv x nv each. */
int passive_derivatives(const mbd_model *model, mbd_work *work, const double *q, const double *qd,
                        double *dq, double *dqd);

/* ---- friction forces (friction.c) ---- */

/* tau_f for every coordinate from qd and the joint reactions that rnea() left in work->f. */
void friction_forces(const mbd_model *model, const mbd_work *work, const double *qd, double *tau_f);
/* mu rho tanh(qd / v_s) of coordinate dof of joint i: what multiplies N in tau_f. */
double friction_sliding_factor(const mbd_model *model, int i, int dof, double qd);
/* The unit axis a of coordinate dof of joint i in work->S. */
const double *friction_axis(const mbd_model *model, const mbd_work *work, int i, int dof);
/* N = |f - (f . a) a| of a force f and a unit axis a. */
double friction_normal(const double *force, const double *axis);

/* ---- closed loops' equations (loops.c) ---- */

/* The loop scratch, carved from work->loop_scratch (loops_buffers_of). */
typedef struct {
    double *J;           /* m x nv, row-major: Phi_q */
    double *Y;           /* m columns of nv: H^-1 Phi_q^T */
    double *K;           /* m x m; its eigenvectors after loops_pseudo_solve */
    double *eig, *lwork; /* dsyevd's eigenvalues (m) and workspace */
    int *iwork;
    double *phi, *phid, *gamma, *rhs, *y; /* m each */
    double *zero, *tau;                   /* nv each */
    double *pose;                /* nb x 12: R (world <- body, row-major), then the origin p */
    double (*vel)[6], (*acc)[6]; /* nb: world coordinates, about the world origin */
    double *H;                   /* nv x nv, dense route only */
} loop_buffers;

/* The workspace doubles of the loops' buffers, with H (dense) or without; 0 without
 * loops. */
size_t loops_scratch_doubles(const mbd_model *model, int dense);
/* The buffers in work->loop_scratch. */
loop_buffers loops_buffers_of(const mbd_model *model, mbd_work *work, int dense);
/* Kinematics at q, then Phi (and with qd dPhi/dt and gamma; with_J Phi_q) of every loop. */
int constraint_terms(const mbd_model *model, mbd_work *work, loop_buffers *b, const double *q,
                     const double *qd, int with_J);
/* out = K^+ s for the symmetric positive semidefinite m x m K in b->K (overwritten by its
 * eigenvectors): eigenvalues at or below RANK_TOL of the largest are dropped. Returns the
 * rank, or -1; *residual (may be NULL) is the size of the part of s in the dropped
 * eigenspace. */
int loops_pseudo_solve(const loop_buffers *b, int m, const double *s, double *out,
                       double *residual);
/* K = A B^T for two m x nv row-major blocks, made exactly symmetric. */
void loops_gram(double *K, const double *A, const double *B, int m, int nv);
/* y = J x, J m x nv row-major. */
void loops_times(double *y, const double *J, const double *x, int m, int nv);

/* The workspace's block of at least bytes (64-byte aligned, contents undefined) for a
 * derivative call's arrays, allocated on first use and grown as needed, so that repeated
 * calls make no allocation; NULL if it cannot be had (the caller returns MBD_ENOMEM). */
void *derivative_scratch(mbd_work *work, size_t bytes);
/* After mbd_kinematics at (q, qd) of a model with passive forces: d tau_p / dq, then
 * d tau_p / dqd (passive_derivatives), then room for 2 nv x nv more, in a block that the
 * workspace keeps; NULL if it cannot be had. */
double *passive_jacobians(mbd_work *work, const double *q, const double *qd);
/* After mbd_kinematics: the full row-major H^-1, exactly symmetric, by the
 * articulated-body recursion in O(N^2) (minverse.c). */
int mass_matrix_inverse(const mbd_model *model, mbd_work *work, double *Hinv);

#endif
