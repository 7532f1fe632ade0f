/* solvers.h: the solver table's row (struct mbd_solver), the built-in and plugin solvers,
 * the workspace's layout, and the forward entry points' parts: the friction iteration
 * around a solver. What the floors above may call. Not installed. */
#ifndef MBD_SOLVERS_H
#define MBD_SOLVERS_H

#include "mbd_plugin.h"
#include "dynamics/dynamics.h"

typedef size_t (*mbd_scratch_fn)(const mbd_model *model);

/* One solve, in either formulation: what it is given and where its results go.
 *   MBD_ACCELERATION: in = qd, out = qdd (rate unused);
 *   MBD_MOMENTUM:     in = p,  out = qd,  rate = pd.
 * q NULL: after mbd_kinematics(q). q not NULL (SOLVER_TAKES_Q): after start_kinematics(q),
 * each body's X_i and S_i formed in the solve's first pass instead of in a pass of their
 * own (at N = 10 000 X then stays in L1 between the two). reactions (SOLVER_REACTIONS, the
 * acceleration form, q NULL): also the force parts of work->f = the reactions of RNEA at
 * qd and qdd, from the solve's own passes. */
typedef struct {
    mbd_formulation form;
    const double *q, *in, *tau; /* tau may be NULL: zero */
    double *out, *rate;
    int reactions;
} mbd_solve_call;
typedef int (*mbd_solve_fn)(const mbd_model *model, mbd_work *work, const mbd_solve_call *call);

/* x = H^-1 b at the kinematics and factorization that the solver's last solve left in
 * work: no velocity or gravity terms, O(its back substitution). base not NULL and the
 * solver SOLVER_INVERSE_REACTIONS: also the force parts of work->f = those of base + the
 * reactions of accelerations x alone (reaction_forces_plus_accelerations), from its passes. */
typedef void (*mbd_inverse_fn)(const mbd_model *model, mbd_work *work, const double *b, double *x,
                               const double (*base)[6]);

/* What a solver's two functions offer beyond the formulations, as data (the row's
 * features): forward.c, friction.c and constrained.c read them. */
typedef enum {
    SOLVER_TAKES_Q = 1u,           /* solve forms X_i and S_i from call->q */
    SOLVER_NEEDS_Q = 2u,           /* solve runs only with q, forming all it needs (a plugin) */
    SOLVER_REACTIONS = 4u,         /* solve gives the reactions when asked */
    SOLVER_INVERSE_REACTIONS = 8u, /* inverse gives them on a base */
} mbd_solver_feature;

/* The lane kernels that solve a solver's states W at a time (batch_lanes.h), if any: the
 * bodies sweep's in the acceleration form, the Poisson solvers' in the momentum form. */
typedef enum { LANES_NONE, LANES_BODIES, LANES_POISSON_LDLT, LANES_POISSON_SWEEP } mbd_lane_kernels;

/* How constrained forward dynamics (constrained.c) takes H^-1 from a solver, if it can: by
 * forming and factoring H, or by the bodies sweep's factorization, O(N) per column. */
typedef enum { LOOPS_NONE, LOOPS_DENSE, LOOPS_BODIES } mbd_loop_route;

/* The kernel that runs a solver's states on the GPU (gpu/gpu.h, GPU_KERNEL_LIST), if any:
 * its acceleration form where it has one, else its momentum form. */
typedef enum { GPU_NONE, GPU_BODIES, GPU_POISSON_LDLT, GPU_DENSE } mbd_gpu_kernels;

/* One row of the solver table: one function per capability, the formulations' and the
 * built-in and plugin solvers' differences in its data. */
struct mbd_solver {
    const char *name;
    const char *summary;
    unsigned forms;                 /* the mbd_formulation bits that solve offers */
    unsigned features;              /* mbd_solver_feature flags */
    mbd_scratch_fn scratch_doubles; /* may be NULL: no scratch */
    mbd_solve_fn solve;
    mbd_inverse_fn inverse;          /* may be NULL: friction re-solves in full */
    mbd_lane_kernels lane_kernels;   /* its lane forms (batch.c); LANES_NONE: one state only */
    mbd_loop_route loop_route;       /* LOOPS_NONE: it does not close loops */
    mbd_gpu_kernels gpu_kernels;     /* GPU_NONE: not on the GPU (gpu.c) */
    const mbd_plugin_solver *plugin; /* a plugin's solver (plugin.c), else NULL */
    const char *plugin_path;         /* its library's file */
};

/* The arrays carved from work->block, in their order, each as (field, element count) for
 * model m and the solver's scratch and loop_scratch doubles: the one list that lays out
 * the block (workspace.c) and moves it (the GPU's threads, gpu_kernels.c), so that a new
 * array is in both. */
/* clang-format off */
#define MBD_WORK_ARRAYS(ARRAY, m, scratch_doubles, loop_doubles)                                   \
    MBD_LANE_ARRAYS(ARRAY, m) ARRAY(mass_moments, (m)->nb) ARRAY(sin_q, (m)->nq)                   \
    ARRAY(cos_q, (m)->nq) ARRAY(scratch, scratch_doubles) ARRAY(jv, JV_COUNT * (m)->nv)            \
    ARRAY(loop_scratch, loop_doubles) ARRAY(friction_scratch, friction_scratch_doubles(m))       \
    ARRAY(passive_tau, (m)->has_passive ? 2 * (m)->nv : 0)                                         \
    ARRAY(rest_rates, (m)->has_passive ? (m)->nv : 0) ARRAY(gravcomp_f, (m)->gravcomp ? (m)->nb : 0)
/* clang-format on */

/* ---- friction (friction.c): the iteration around the work's solver ---- */

/* The solve phase of mbd_solve / mbd_solve_momentum for a model with friction, after
 * mbd_kinematics (call->q NULL): the work's solver inside the friction iteration. */
int friction_solve(const mbd_model *model, mbd_work *work, const mbd_solve_call *call);
/* The workspace doubles that the friction iteration needs beyond work->jv; 0 without
 * Coulomb friction. */
size_t friction_scratch_doubles(const mbd_model *model);

/* Whether a solver's constrained forward dynamics (constrained.c) forms and factors H. */
static inline int closes_loops_densely(const mbd_solver *solver)
{
    return solver && solver->loop_route == LOOPS_DENSE;
}

/* ---- solvers (one file each) ---- */
extern const mbd_solver mbd_solver_dense;
extern const mbd_solver mbd_solver_bodies;
extern const mbd_solver mbd_solver_poisson_sweep;
extern const mbd_solver mbd_solver_poisson_ldlt;
extern const mbd_solver mbd_solver_sparse;

/* ---- plugin solvers (plugin.c), after the built-in ones in the table ---- */

/* Appends a library's checked entries (plugins/load.c; the registry then owns them) to the
 * registry, and the methods of those with forward_derivatives to theirs, all or none;
 * path: the library's file. MBD_OK or MBD_ENOMEM. */
int plugin_register(const mbd_plugin_solver *entries, int count, const char *path);
int plugin_solver_count(void);
const mbd_solver *plugin_solver_at(int index);
/* The derivatives methods of plugin solvers with forward_derivatives, after the built-in
 * ones in their table; each named and summarized as its solver. */
int plugin_method_count(void);
const mbd_derivatives_method *plugin_method_at(int index);
/* mbd_forward_derivatives of a plugin's method, after the checks common to every method. */
int plugin_forward_derivatives(const mbd_model *model, mbd_work *work, const mbd_solver *solver,
                               const double *q, const double *qd, const double *tau,
                               double *dqdd_dq, double *dqdd_dqd, double *dqdd_dtau);
/* Frees the work that a plugin's derivatives method made for this work (if any). */
void plugin_derivative_work_free(mbd_work *work);

/* ---- one row of the derivatives methods' table (derivatives/), here as a plugin
 * registers one beside its solver's row (plugin.c) ---- */

/* dqdd/dq, dqdd/dqd, dqdd/dtau (each may be NULL) of a model without friction or loops,
 * after mbd_forward_derivatives has checked the arguments. */
typedef int (*mbd_derivatives_fn)(const mbd_model *model, mbd_work *work, const double *q,
                                  const double *qd, const double *tau, double *dqdd_dq,
                                  double *dqdd_dqd, double *dqdd_dtau);

struct mbd_derivatives_method {
    const char *name;
    const char *summary;
    mbd_derivatives_fn forward; /* a built-in method's, else NULL */
    const mbd_solver *plugin;   /* a plugin's method: the solver it differentiates */
};

#endif
