/* friction.c: the friction iteration around the work's solver (the forces: dynamics/friction.c,
 * whose comment gives them), for every solver.
 *
 * The reactions depend on qdd, and qdd on tau_f: H qdd + C = tau + tau_f(f(qdd)).
 * Fixed-point iteration on the friction forces, x = G(x):
 *
 *   tau_f,0 = -b qd;   qdd_k = FD(tau + tau_f,k);   f_k = RNEA(q, qd, qdd_k);
 *   G(tau_f,k) = tau_f(qd, f_k),
 *
 * stopping when the change d_k = max |G(tau_f,k) - tau_f,k| is <= TOLERANCE (1 + max
 * |G(tau_f,k)|), or <= FLOOR_TOLERANCE (1 + max |G(tau_f,k)|) with d_k > d_k-1 / 2: the
 * rounding floor of the solve, which long chains with an ill-conditioned H reach above
 * TOLERANCE (a chain of 1000 links stalls near 1e-11 relative). The answer is qdd_k, whose
 * friction reproduces itself to that tolerance. The next iterate is Anderson's step from
 * G(tau_f,k) (anderson_step), which the plain step G(tau_f,k) becomes where the last steps
 * give it nothing to extrapolate from. The map is a contraction when friction couples
 * weakly; for large mu it may have no or several fixed points (Painleve), and after
 * MAX_ITERATIONS (or a non-finite step) the solve fails with MBD_EFRICTION, naming the body
 * whose joint's friction changed most. *
 * FD is the solver's own acceleration solve; a momentum-only solver gives
 * qdd = H^-1 (tau + tau_f - C qd - g) as the velocity qd = H^-1 p of its momentum solve
 * with p = tau + tau_f - RNEA(q, qd, 0). The first evaluation runs both in full (the
 * reactions from the solve's own passes where it has SOLVER_REACTIONS; in the momentum form
 * those of RNEA(q, qd, 0) plus those of qdd alone); a solver
 * with an inverse then takes each later one from it (friction_buffers), in O(its back
 * substitution + N) instead of a solve and an RNEA: only tau_f changes between them (a
 * solver with SOLVER_INVERSE_REACTIONS gives the reactions' change from the same passes).
 * Every call starts afresh from tau_f,0, so that its result does not depend on the calls
 * before it. Without Coulomb friction tau_f = -b qd needs no iteration. */
#include "solvers/solvers.h"

#include <math.h>
#include <string.h>

#define TOLERANCE 1e-12
#define FLOOR_TOLERANCE 1e-9
#define MAX_ITERATIONS 100
#define ANDERSON_DEPTH 3

/* The work->jv vectors. */
enum { JV_TOTAL, JV_FRICTION, JV_NEXT, JV_BIAS, JV_RHS, JV_ACCEL, JV_USED };
_Static_assert(JV_USED <= JV_COUNT, "work->jv holds JV_COUNT vectors");

static double *jv(const mbd_work *work, int k)
{
    return work->jv + (size_t)k * (size_t)work->model->nv;
}

static void viscous_forces(const mbd_model *model, const double *qd, double *tau_f)
{
    for (int i = 0; i < model->nb; i++)
        for (int k = 0; k < model->joint[i].nv; k++)
            tau_f[model->v0[i] + k] = -model->defs[i].friction.viscous * qd[model->v0[i] + k];
}

/* total = tau + tau_f (tau may be NULL). */
static void add_tau(const mbd_model *model, double *total, const double *tau, const double *tau_f)
{
    for (int k = 0; k < model->nv; k++)
        total[k] = (tau ? tau[k] : 0.0) + tau_f[k];
}

/* The friction scratch. The first evaluation, at tau_f,0 = -b qd: its qdd and reactions are
 * what the later ones of a solver with an inverse start from. Any later tau_f gives
 * qdd = qdd_0 + H^-1 (tau_f - tau_f,0) (H qdd + C = tau + tau_f is linear in tau_f), and
 * reaction forces f_0 plus those of the accelerations' change alone (affine in qdd). Each
 * coordinate's sliding factor (qd alone decides it), body and axis (the offset of a_k in
 * work->S); and the history of Anderson's step: the last map value g = G(x) and residual
 * r = G(x) - x, the differences of the last ANDERSON_DEPTH successive ones, and their Gram
 * matrix (each step changes one row and column of it). */
typedef struct {
    double (*forces)[6];
    double *qdd, *tau_f, *sliding;
    int *body, *axis;
    double *g, *r, *dg[ANDERSON_DEPTH], *dr[ANDERSON_DEPTH];
    double (*gram)[ANDERSON_DEPTH];
} friction_buffers;

/* Carves them from base (NULL: only measures); returns the bytes. */
static size_t layout(const mbd_model *model, double *base, friction_buffers *b)
{
    carved_block block = {.base = (char *)base};
    const size_t vector = (size_t)model->nv * sizeof(double);
    b->forces = carve(&block, (size_t)model->nb * sizeof *b->forces);
    double **vectors[] = {&b->qdd, &b->tau_f, &b->sliding, &b->g, &b->r};
    for (size_t k = 0; k < sizeof vectors / sizeof vectors[0]; k++)
        *vectors[k] = carve(&block, vector);
    b->body = carve(&block, (size_t)model->nv * sizeof *b->body);
    b->axis = carve(&block, (size_t)model->nv * sizeof *b->axis);
    b->gram = carve(&block, ANDERSON_DEPTH * sizeof *b->gram);
    for (int j = 0; j < ANDERSON_DEPTH; j++) {
        b->dg[j] = carve(&block, vector);
        b->dr[j] = carve(&block, vector);
    }
    return block.used;
}

size_t friction_scratch_doubles(const mbd_model *model)
{
    friction_buffers b;
    return model->has_coulomb ? layout(model, NULL, &b) / sizeof(double) : 0;
}

static friction_buffers buffers_of(const mbd_model *model, const mbd_work *work)
{
    friction_buffers b;
    layout(model, work->friction_scratch, &b);
    return b;
}

/* Each coordinate's sliding factor, body and axis, at the start of a call. */
static void start_coordinates(const mbd_model *model, const mbd_work *work, const double *qd,
                              const friction_buffers *b)
{
    for (int i = 0; i < model->nb; i++)
        for (int dof = model->v0[i]; dof < model->v0[i] + model->joint[i].nv; dof++) {
            b->sliding[dof] = friction_sliding_factor(model, i, dof, qd[dof]);
            b->body[dof] = i;
            b->axis[dof] = (int)(friction_axis(model, work, i, dof) - work->S);
        }
}

/* The stopping test's measures of a map value G(x): the largest change |G(x) - x| (NaN
 * counts as the largest), at coordinate worst, and the largest |G(x)|. */
typedef struct {
    double change, size;
    int worst;
} map_change;

/* next = G(x) = tau_f,0 - (sliding factor) N from the reactions in work->f, and in the same
 * pass (a scalar one either way) its change from x. */
static map_change coulomb_forces(const mbd_model *model, const mbd_work *work,
                                 const friction_buffers *b, const double *x, double *next)
{
    map_change c = {0.0, 0.0, 0};
    for (int dof = 0; dof < model->nv; dof++) {
        double g = b->tau_f[dof];
        if (b->sliding[dof] != 0.0)
            g -= b->sliding[dof] *
                 friction_normal(work->f[b->body[dof]] + 3, work->S + b->axis[dof]);
        next[dof] = g;
        const double step = fabs(g - x[dof]);
        if (!(step <= c.change))
            c.change = step, c.worst = dof;
        if (fabs(g) > c.size)
            c.size = fabs(g);
    }
    return c;
}

/* x = H^-1 b on the last solve's factorization (the solver's inverse), and the force parts
 * of work->f = those of base + the reactions of the accelerations x alone: from the same
 * passes where the solver has SOLVER_INVERSE_REACTIONS, else by their own. */
static void inverse_with_reactions(const mbd_model *model, mbd_work *work, const double *b,
                                   double *x, const double (*base)[6])
{
    work->solver->inverse(model, work, b, x, base);
    if (!(work->solver->features & SOLVER_INVERSE_REACTIONS))
        reaction_forces_plus_accelerations(model, work, x, base);
}

/* qdd = FD(total) and its reactions in work->f. The acceleration form: the solver's
 * acceleration solve, and its reactions from the solve itself where the solver has
 * SOLVER_REACTIONS, else by RNEA. The momentum form, after its momentum solve and with
 * JV_BIAS = RNEA(q, qd, 0), whose reactions work->f holds: qdd = H^-1 (total - bias) by
 * the solver's inverse on that solve's factorization, with the reactions as the bias's plus
 * those of qdd alone (RNEA's are affine in qdd); or else another momentum solve and RNEA. */
static int accelerations_and_reactions(const mbd_model *model, mbd_work *work, const double *qd,
                                       const double *total, double *qdd, int momentum_form)
{
    const mbd_solver *solver = work->solver;
    mbd_solve_call call = {.form = MBD_ACCELERATION, .in = qd, .tau = total, .out = qdd};
    if (!momentum_form && solver->features & SOLVER_REACTIONS) {
        call.reactions = 1;
        return solver->solve(model, work, &call);
    }
    if (momentum_form) {
        double *rhs = jv(work, JV_RHS);
        const double *bias = jv(work, JV_BIAS);
        for (int k = 0; k < model->nv; k++)
            rhs[k] = total[k] - bias[k];
        if (solver->inverse) {
            const friction_buffers b = buffers_of(model, work);
            memcpy(b.forces, work->f, (size_t)model->nb * sizeof *b.forces);
            inverse_with_reactions(model, work, rhs, qdd, (const double(*)[6])b.forces);
            return MBD_OK;
        }
        call = (mbd_solve_call){
            .form = MBD_MOMENTUM, .in = rhs, .out = qdd, .rate = jv(work, JV_TOTAL)};
    }
    const int status = solver->solve(model, work, &call);
    if (status == MBD_OK)
        rnea(model, work, qd, qdd, 1, jv(work, JV_TOTAL));
    return status;
}

/* qdd = FD(tau + tau_f) by the full solve, and its reactions in work->f; keeps both as the
 * first evaluation where the solver has an inverse. */
static int evaluate_in_full(const mbd_model *model, mbd_work *work, const double *qd,
                            const double *tau, const double *tau_f, double *qdd, int momentum_form)
{
    double *total = jv(work, JV_TOTAL);
    add_tau(model, total, tau, tau_f);
    const int status = accelerations_and_reactions(model, work, qd, total, qdd, momentum_form);
    if (status)
        return status;
    if (work->solver->inverse) {
        const friction_buffers b = buffers_of(model, work);
        memcpy(b.qdd, qdd, (size_t)model->nv * sizeof *qdd);
        memcpy(b.forces, work->f, (size_t)model->nb * sizeof *b.forces);
    }
    return MBD_OK;
}

/* The same from the first evaluation, O(the solver's back substitution + N). */
static void evaluate_from_first(const mbd_model *model, mbd_work *work, const double *tau_f,
                                double *qdd)
{
    const friction_buffers b = buffers_of(model, work);
    double *change = jv(work, JV_TOTAL), *step = jv(work, JV_RHS);
    for (int k = 0; k < model->nv; k++)
        change[k] = tau_f[k] - b.tau_f[k];
    inverse_with_reactions(model, work, change, step, (const double(*)[6])b.forces);
    for (int k = 0; k < model->nv; k++)
        qdd[k] = b.qdd[k] + step[k];
}

static double dot(const double *a, const double *b, int n)
{
    double sum = 0.0;
    for (int k = 0; k < n; k++)
        sum += a[k] * b[k];
    return sum;
}

/* Solves the m x m symmetric positive definite A gamma = b in place (Gaussian elimination
 * without pivoting); 0 when a pivot is not clearly positive. */
static int solve_small(int m, double A[ANDERSON_DEPTH][ANDERSON_DEPTH], double *b)
{
    for (int k = 0; k < m; k++) {
        if (!(A[k][k] > 1e-13 * A[0][0]))
            return 0;
        for (int i = k + 1; i < m; i++) {
            const double l = A[i][k] / A[k][k];
            for (int j = k; j < m; j++)
                A[i][j] -= l * A[k][j];
            b[i] -= l * b[k];
        }
    }
    for (int k = m - 1; k >= 0; k--) {
        for (int j = k + 1; j < m; j++)
            b[k] -= A[k][j] * b[j];
        b[k] /= A[k][k];
    }
    return 1;
}

/* x = the next iterate after iterate it, x, whose map value is g: Anderson's step (Anderson
 * 1965; Walker and Ni 2011), G(x) - sum_j gamma_j dG_j with gamma minimizing
 * |r - sum_j gamma_j dr_j|, over the last ANDERSON_DEPTH differences; G(x) itself when
 * there are none yet or they are nearly dependent. */
static void anderson_step(const mbd_model *model, const friction_buffers *h, int it, double *x,
                          const double *g)
{
    const int nv = model->nv, newest = (it - 2) % ANDERSON_DEPTH;
    const int m = it - 1 < ANDERSON_DEPTH ? it - 1 : ANDERSON_DEPTH;
    for (int k = 0; k < nv; k++) {
        const double r = g[k] - x[k];
        if (it > 1) {
            h->dg[newest][k] = g[k] - h->g[k];
            h->dr[newest][k] = r - h->r[k];
        }
        h->g[k] = g[k];
        h->r[k] = r;
    }
    double A[ANDERSON_DEPTH][ANDERSON_DEPTH], gamma[ANDERSON_DEPTH];
    for (int j = 0; j < m; j++)
        h->gram[newest][j] = h->gram[j][newest] = dot(h->dr[newest], h->dr[j], nv);
    for (int i = 0; i < m; i++) {
        gamma[i] = dot(h->dr[i], h->r, nv);
        for (int j = 0; j < m; j++)
            A[i][j] = h->gram[i][j];
    }
    memcpy(x, g, (size_t)nv * sizeof *x);
    if (m == 0 || !solve_small(m, A, gamma))
        return;
    for (int j = 0; j < m; j++)
        for (int k = 0; k < nv; k++)
            x[k] -= gamma[j] * h->dg[j][k];
}

/* The fixed point above: leaves tau_f in JV_FRICTION and qdd = FD(tau + tau_f). */
static int iterate(const mbd_model *model, mbd_work *work, const double *qd, const double *tau,
                   double *qdd, int momentum_form)
{
    double *tau_f = jv(work, JV_FRICTION), *next = jv(work, JV_NEXT);
    if (momentum_form) {
        double *zero = jv(work, JV_RHS);
        memset(zero, 0, (size_t)model->nv * sizeof *zero);
        rnea(model, work, qd, zero, 1, jv(work, JV_BIAS));
    }
    const friction_buffers b = buffers_of(model, work);
    viscous_forces(model, qd, b.tau_f);
    memcpy(tau_f, b.tau_f, (size_t)model->nv * sizeof *tau_f);
    start_coordinates(model, work, qd, &b);
    double previous = INFINITY;
    for (int it = 1;; it++) {
        if (it > 1 && work->solver->inverse)
            evaluate_from_first(model, work, tau_f, qdd);
        else {
            const int status = evaluate_in_full(model, work, qd, tau, tau_f, qdd, momentum_form);
            if (status)
                return status;
        }
        const map_change c = coulomb_forces(model, work, &b, tau_f, next);
        const double change = c.change, size = c.size;
        work->friction_iterations = it;
        if (change <= TOLERANCE * (1.0 + size) ||
            (change <= FLOOR_TOLERANCE * (1.0 + size) && change > 0.5 * previous))
            return MBD_OK;
        if (it == MAX_ITERATIONS || !isfinite(change)) {
            work->failed_body = body_of_dof(model, c.worst);
            return MBD_EFRICTION;
        }
        anderson_step(model, &b, it, tau_f, next);
        previous = change;
    }
}

/* Viscous friction alone needs no iteration: one solve at tau + tau_f, tau_f = -b qd. */
static int acceleration_form(const mbd_model *model, mbd_work *work, const mbd_solve_call *call)
{
    if (model->has_coulomb)
        return iterate(model, work, call->in, call->tau, call->out, 0);
    double *total = jv(work, JV_TOTAL), *tau_f = jv(work, JV_FRICTION);
    viscous_forces(model, call->in, tau_f);
    add_tau(model, total, call->tau, tau_f);
    const mbd_solve_call viscous = {
        .form = MBD_ACCELERATION, .in = call->in, .tau = total, .out = call->out};
    return work->solver->solve(model, work, &viscous);
}

/* qd = H^-1 p does not depend on tau: one solve gives it and pd for tau, then tau_f at qd,
 * which pd = tau + tau_f + (terms of q and p) takes as it is. */
static int momentum_form(const mbd_model *model, mbd_work *work, const mbd_solve_call *call)
{
    const double *qd = call->out;
    double *tau_f = jv(work, JV_FRICTION);
    int status = work->solver->solve(model, work, call);
    if (status == MBD_OK && model->has_coulomb)
        status = iterate(model, work, qd, call->tau, jv(work, JV_ACCEL), 1);
    else if (status == MBD_OK)
        viscous_forces(model, qd, tau_f);
    if (status)
        return status;
    for (int k = 0; k < model->nv; k++)
        call->rate[k] += tau_f[k];
    return MBD_OK;
}

int friction_solve(const mbd_model *model, mbd_work *work, const mbd_solve_call *call)
{
    work->friction_iterations = 0;
    return call->form == MBD_MOMENTUM ? momentum_form(model, work, call)
                                      : acceleration_form(model, work, call);
}
