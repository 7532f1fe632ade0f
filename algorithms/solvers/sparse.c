/* sparse.c: CRBA with the tree-sparse L^T D L factorization (Featherstone, RBDA §6.5;
 * IJRR 2005), which never touches the zeros that branching leaves in H.
 *
 * Multi-DOF joints are expanded into a chain of DOFs (the standard trick), so that the
 * tree is one of DOFs: lambda(k), the parent of DOF k, is k - 1 inside a joint, else the
 * last DOF of the parent body's joint (-1 at the root). H_kj != 0 only if j = k or one of
 * j, k is an ancestor of the other, and the factor keeps that pattern (no fill-in).
 *
 * Storage (lambda-indexed, lower triangle by rows): row k holds H_{k,j} for
 * j = k, lambda(k), lambda^2(k), ..., depth(k) + 1 entries, so row i = lambda^m(k) lines up
 * with row k shifted by m and every inner loop below runs over contiguous memory.
 *
 * H and C are formed in one frame per tree, that of its root body (MuJoCo's method, with
 * the root's origin rather than a centre of mass): X0_i = X_i X0_lambda(i), X0_root = 1,
 * takes motion from the root frame to body i. There a parent and its child share
 * coordinates, so that no pass transforms vectors from body to body:
 *   forward:    S^0_k = X0_i^-1 S_k,  I^0_i = X0_i^T I_i X0_i,  and for C (RNEA with
 *               qdd = 0 and gravity as a_root = -X_root a_g):
 *               v_i = v_lambda + S^0 qd_i,  a_i = a_lambda + v_i x S^0 qd_i + X0_i^-1 c_J,
 *               f_i = I^0_i a_i + v_i x* I^0_i v_i.
 *   backward:   for each DOF k of body i:  F = I^C_i S^0_k,  H_kl = S^0_l . F for
 *               l = k, lambda(k), ...,  C_k = S^0_k . f_i;  then
 *               I^C_lambda += I^C_i,  f_lambda += f_i  (I^C_i = I^0_i + its children's).
 *   factor:     for k = n-1 .. 0:  for i = lambda(k), lambda^2(k), ...:
 *                   a = H_ki / H_kk;  H_ij -= a H_kj for j = i, lambda(i), ...;  H_ki = a
 *               giving H = L^T D L, D = diag(H_kk), L unit lower with L_ki = H_ki; in the
 *               same loop L^T y = b (y_i -= L_ki y_k) and z_k = y_k / H_kk. Two sibling
 *               DOFs k, k - 1 go together: one sweep over their shared ancestors' rows.
 *   solve:      L x = z (k = 0 .. n-1: x_k -= L_ki x_i).
 * The factorization costs O(sum_k depth(k)^2) = O(N d^2), d the depth of the DOF tree;
 * the passes and the solve O(N d). The factor and its solve are dynamics/tree_factor.c's,
 * which the derivatives share. The momentum form is qd = H^-1 p, then pd from the
 * subtree momenta as in dense.c. */
#include "solvers/solvers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spatial/root_frame.h"

/* The passes keep 3-vectors in 4-lane vectors (root_frame.h). No call passes a v4 (the
 * helpers are static and always inlined), so the note on the ABI of 32-byte vectors that
 * compilers give for targets without AVX does not apply. */
#pragma GCC diagnostic ignored "-Wpsabi"

/* Per body in the root frame: X0, I^C, and v, a, f of the bias pass. */
typedef struct {
    xform4 X0;
    rigid4 IC;
    spatial4 v, a, f;
} root_frame_body;

/* The scratch: per body its root-frame quantities and own inertia, per DOF its column of
 * S in the root frame (all 32-byte aligned, as they come first), then the row addresses
 * (nv + 1) and lambda (nv ints), one nv vector, the factor's rows and their chains. */
typedef struct {
    root_frame_body *body;
    rigid4 *inertia;
    spatial4 *S0;
    double *vec;
    tree_factor H;
} sparse_layout;

#define DOUBLES(type) (sizeof(type) / sizeof(double))

static size_t vector_doubles(const mbd_model *model)
{
    return (DOUBLES(root_frame_body) + DOUBLES(rigid4)) * (size_t)model->nb +
           DOUBLES(spatial4) * (size_t)model->nv;
}

static size_t index_doubles(size_t nv)
{
    return ((nv + 1) * sizeof(size_t) + nv * sizeof(int) + sizeof(double) - 1) / sizeof(double);
}

/* The factor's size, sum over DOFs k of depth(k) + 1, from the number of DOFs above each
 * body; (size_t)-1 / 64, so that mbd_work_new fails, if that cannot be counted. */
static size_t factor_size(const mbd_model *model)
{
    int *above = malloc((size_t)model->nb * sizeof *above);
    if (!above)
        return (size_t)-1 / 64;
    size_t total = 0;
    for (int i = 0; i < model->nb; i++) {
        const int p = model->parent[i], n = model->joint[i].nv;
        above[i] = p < 0 ? 0 : above[p] + model->joint[p].nv;
        total += (size_t)n * (size_t)above[i] + (size_t)n * (size_t)(n + 1) / 2;
    }
    free(above);
    return total;
}

static size_t sparse_scratch(const mbd_model *model)
{
    const size_t nv = (size_t)model->nv, entries = factor_size(model);
    return vector_doubles(model) + index_doubles(nv) + nv + entries +
           (entries * sizeof(int) + sizeof(double) - 1) / sizeof(double);
}

/* lambda, the row addresses, the chains and the bodies' inertias depend on the model only:
 * they are filled on the first call (the scratch starts zeroed, and the last row address is
 * the factor's size, not 0, once they are). */
static void fill_model_part(const mbd_model *model, sparse_layout *s)
{
    tree_factor_index(model, s->H.adr, s->H.lambda);
    s->H.chain = (int *)(s->H.rows + s->H.adr[model->nv]);
    tree_factor_chains(model->nv, s->H.adr, s->H.lambda, s->H.chain);
    for (int i = 0; i < model->nb; i++)
        rigid4_of(&s->inertia[i], &model->inertia[i]);
}

/* Carves the scratch. */
static sparse_layout layout(const mbd_model *model, mbd_work *work)
{
    const size_t nv = (size_t)model->nv;
    sparse_layout s = {.body = (root_frame_body *)work->scratch};
    s.inertia = (rigid4 *)(s.body + model->nb);
    s.S0 = (spatial4 *)(s.inertia + model->nb);
    s.H.adr = (size_t *)(s.S0 + nv);
    s.H.lambda = (int *)(s.H.adr + nv + 1);
    s.vec = (double *)s.H.adr + index_doubles(nv);
    s.H.rows = s.vec + nv;
    if (s.H.adr[nv] == 0)
        fill_model_part(model, &s);
    s.H.chain = (int *)(s.H.rows + s.H.adr[nv]);
    return s;
}

/* v_i, a_i and f_i of the bias pass in root coordinates; S0 = body i's columns there. */
MBD_INLINE void bias_forward(const mbd_model *model, mbd_work *work, const sparse_layout *s,
                             const double *qd, int i, const mbd_joint_type type)
{
    const int p = model->parent[i], v0 = model->v0[i];
    root_frame_body *b = &s->body[i];
    spatial4 vJ = {{0}, {0}}, Iv;
    for (int k = 0; k < joint_dofs(type); k++)
        spatial_add_scaled(&vJ, &s->S0[v0 + k], qd[v0 + k]);
    if (p < 0) {
        const double a_g[6] = {0, 0, 0, -model->gravity[0], -model->gravity[1], -model->gravity[2]};
        double a[6];
        xform_motion(a, &work->X[i], a_g);
        b->v = vJ;
        b->a = spatial4_of(a);
    } else {
        b->v = s->body[p].v;
        spatial_add_to(&b->v, &vJ);
        b->a = s->body[p].a;
    }
    const spatial4 v_vJ = motion_cross(&b->v, &vJ);
    spatial_add_to(&b->a, &v_vJ);
    if (type == MBD_CARDAN) {
        double cJ[6];
        spatial4 cJ0;
        joint_bias(cJ, &model->joint[i], work->S + 6 * v0, qd + v0);
        motion_to_root(&cJ0, &b->X0, cJ);
        spatial_add_to(&b->a, &cJ0);
    }
    b->f = rigid_apply(&b->IC, &b->a);
    Iv = rigid_apply(&b->IC, &b->v);
    const spatial4 bias = force_cross(&b->v, &Iv); /* v x* I v */
    spatial_add_to(&b->f, &bias);
}

/* X0_i, body i's columns S0 and inertia I^0_i (the start of I^C_i), and with qd the bias
 * pass's v_i, a_i, f_i. */
MBD_INLINE void forward_step(const mbd_model *model, mbd_work *work, const sparse_layout *s,
                             const double *qd, int i, const mbd_joint_type type)
{
    const int p = model->parent[i], v0 = model->v0[i];
    root_frame_body *b = &s->body[i];
    if (p < 0)
        b->X0 = xform4_identity;
    else
        compose4(&b->X0, &work->X[i], &s->body[p].X0);
    for (int k = 0; k < joint_dofs(type); k++)
        column_to_root(&s->S0[v0 + k], &b->X0, type, work->S + 6 * v0, k);
    rigid_to_root(&b->IC, &b->X0, &s->inertia[i]);
    if (qd)
        bias_forward(model, work, s, qd, i, type);
}

/* Body i's rows of H and, with C, its entries of C; then I^C_i and f_i to the parent. */
static void backward_step(const mbd_model *model, const sparse_layout *s, double *C, int i)
{
    const int p = model->parent[i];
    const root_frame_body *b = &s->body[i];
    for (int k = model->v0[i]; k < model->v0[i] + model->joint[i].nv; k++) {
        double *restrict row = s->H.rows + s->H.adr[k];
        const int *chain = s->H.chain + s->H.adr[k], len = (int)(s->H.adr[k + 1] - s->H.adr[k]);
        const spatial4 F = rigid_apply(&b->IC, &s->S0[k]);
        for (int t = 0; t < len; t++)
            row[t] = dot_spatial(&s->S0[chain[t]], &F);
        if (joint_has_armature(model, i)) /* H_kk of H + diag(armature) */
            row[0] += model->armature[i];
        if (C)
            C[k] = dot_spatial(&s->S0[k], &b->f);
    }
    if (p < 0)
        return;
    rigid_add(&s->body[p].IC, &b->IC);
    if (C) {
        s->body[p].f.w += b->f.w;
        s->body[p].f.v += b->f.v;
    }
}

/* H into the rows and, with qd, C = RNEA(q, qd, 0) with gravity into C. */
static void mass_matrix_and_bias(const mbd_model *model, mbd_work *work, const sparse_layout *s,
                                 const double *qd, double *C)
{
    for (int i = 0; i < model->nb; i++)
        DISPATCH_JOINT(model->joint_type[i], forward_step, model, work, s, qd, i);
    for (int i = model->nb - 1; i >= 0; i--)
        backward_step(model, s, C, i);
}

/* x = D^-1 L^-T x with the factor that tree_factor_reduce left in the rows. */
static void reduce(const mbd_model *model, const tree_factor *f, double *x)
{
    for (int k = model->nv - 1; k >= 0; k--) {
        const double *L = f->rows + f->adr[k];
        const int len = (int)(f->adr[k + 1] - f->adr[k]);
        const double xk = x[k];
        const int *up = f->chain + f->adr[k];
        for (int m = 1; m < len; m++)
            x[up[m]] -= L[m] * xk;
        x[k] = xk * (1.0 / L[0]);
    }
}

/* No reactions: base unused. */
static void sparse_inverse(const mbd_model *model, mbd_work *work, const double *b, double *x,
                           const double (*base)[6])
{
    (void)base;
    const sparse_layout s = layout(model, work);
    memcpy(x, b, (size_t)model->nv * sizeof *x);
    reduce(model, &s.H, x);
    tree_back_substitute(model, &s.H, x);
}

static int sparse_acc(const mbd_model *model, mbd_work *work, const double *qd, const double *tau,
                      double *qdd)
{
    const sparse_layout s = layout(model, work);
    mass_matrix_and_bias(model, work, &s, qd, s.vec);
    for (int k = 0; k < model->nv; k++)
        qdd[k] = (tau ? tau[k] : 0.0) - s.vec[k];
    int status = tree_factor_reduce(model, work, &s.H, qdd);
    if (status)
        return status;
    tree_back_substitute(model, &s.H, qdd);
    return MBD_OK;
}

static int sparse_mom(const mbd_model *model, mbd_work *work, const double *p, const double *tau,
                      double *qd, double *pd)
{
    const sparse_layout s = layout(model, work);
    mass_matrix_and_bias(model, work, &s, NULL, NULL);
    memcpy(qd, p, (size_t)model->nv * sizeof *qd);
    int status = tree_factor_reduce(model, work, &s.H, qd);
    if (status)
        return status;
    tree_back_substitute(model, &s.H, qd);
    momentum_rates_from_qd(model, work, qd, tau, pd);
    return MBD_OK;
}

static int sparse_solve_call(const mbd_model *model, mbd_work *work, const mbd_solve_call *call)
{
    return call->form == MBD_MOMENTUM
               ? sparse_mom(model, work, call->in, call->tau, call->out, call->rate)
               : sparse_acc(model, work, call->in, call->tau, call->out);
}

const mbd_solver mbd_solver_sparse = {
    .name = "sparse",
    .summary =
        "CRBA + tree-sparse L^T D L (Featherstone 2005), O(N d^2), d = tree depth; both formulations",
    .scratch_doubles = sparse_scratch,
    .forms = MBD_ACCELERATION | MBD_MOMENTUM,
    .solve = sparse_solve_call,
    .inverse = sparse_inverse,
};
