/* rnea_derivatives.c: dtau/dq and dtau/dqd of the inverse dynamics (Carpentier and Mansard,
 * "Analytical Derivatives of Rigid Body Dynamics Algorithms", RSS 2018), in world
 * coordinates (the roots' parent frame), every vector about the world origin.
 *
 *   root -> leaves:  s_k = X_i^-1 S_k (body i's columns),  v_i = v_lambda + S qd,
 *                    a_i = a_lambda + S qdd + v_i x S qd + c_J  (a_0 = -a_g),
 *                    f_i = I_i a_i + v_i x* I_i v_i
 *   leaves -> root:  F_i = sum of f over the subtree of i,  tau_k = s_k . F_i
 * The tangent delta_k of joint j moves the subtree of j rigidly by the twist s_k: a world
 * vector fixed in one of its bodies turns by s_k x, and what is left of the change is
 *   d v_i = s_k x v_i + w_k,              w_k = -s_k x v_lambda(j),
 *   d a_i = s_k x a_i + y_k + w_k x v_i,  y_k = -s_k x a_lambda(j) - w_k x v_lambda(j)
 * for every body i of the subtree (a Cardan joint's first column turns with its second
 * coordinate: more terms below). Since f_i is covariant, d f_i = s_k x* f_i + I_i y_k +
 * B_i w_k with B_i w = I_i (w x v_i) + w x* I_i v_i + v_i x* I_i w, and the turn of s_m
 * cancels s_k x* F where both move. With I^C and B^C the sums of I and B over a subtree:
 *   dtau_m/ddelta_k = s_m . (I^C_i y_k + B^C_i w_k)                  (m of body i below j)
 *   dtau_m/ddelta_k = s_m . (s_k x* F_j + I^C_j y_k + B^C_j w_k)      (m above j)
 * and along qd_k the same with w_k = s_k, y_k = (v_j + v_lambda(j)) x s_k, no s_k x* F_j.
 * World coordinates make I^C and B^C plain sums and each pair (m, k) on a path two dot
 * products (s_m^T I^C and s_m^T B^C formed once per m): O(N) 6 x 6 work and O(N d) dot
 * products, d the depth; in body frames every pair would carry a vector along the path.
 * The world quantities are those of the tree-sparse solver (root_frame.h: 3-vectors in
 * 4-lane vectors, inertias by their ten parameters), and B is kept as two structured
 * parts (inertia_rate, below).
 * These are the closed forms of Singh, Russell and Wensing ("Efficient Analytical
 * Derivatives of Rigid-Body Dynamics using Spatial Vector Algebra", RA-L 2022: w_k and
 * y_k are their Psi-dot and Psi-double-dot of the column, B their body-level Coriolis
 * matrix times 2).
 * The passes run first at qdd = 0 (rnea_derivatives_start: H and tau(qdd = 0), from which
 * the forward derivatives solve qdd with the factor they need anyway), then add what qdd
 * changes, a_i by S qdd along the path and F_i by the subtree's I da (rnea_derivatives_at). */
#include "dynamics/dynamics.h"

#include <stdint.h>
#include <string.h>

#include "spatial/root_frame.h"

#pragma GCC diagnostic ignored "-Wpsabi" /* v4 (root_frame.h): always inlined */

/* B's symmetric part, M + M^T with M = (v x*) I (for a body, I about the world origin as
 * (I-bar, h, m): rigid4), is the rate of change of I, and has the form
 *   [K, D x; -D x, 0],  K = w x I-bar - I-bar w x - (h u^T + u h^T) + 2 (u . h) 1,
 *                       D = w x h + m u   ((w; u) the body's velocity);
 * B's other part is G w = w x* (I v), skew-symmetric: B = S + G and B^T = S - G. Both are
 * linear in what they are built from, so a subtree's B^C is S^C + G(its momentum):
 * 15 numbers a body to sum (K's 6, D, the momentum) instead of 36, and B^T s, B s share
 * S s and G s. */
typedef struct {
    v4 K[3], D; /* K by rows (symmetric) */
} inertia_rate;

/* A body's world quantities: X = (world -> body), I its inertia, IC the subtree's I^C,
 * S and momentum its B's parts (I-rate's and I v), then the subtree's, a its
 * acceleration at qdd = 0 then at qdd, F its f_i at qdd = 0, then the subtree's F at
 * qdd = 0, then at qdd; da the change of a that qdd makes and G that of the subtree's F
 * (sum of I da). */
typedef struct {
    xform4 X;
    rigid4 I, IC;
    inertia_rate S;
    spatial4 momentum, v, a, F, da, G;
} world_body;

/* A velocity coordinate k's: its column s, w_k and y_k along delta_k, y_k along qd_k
 * (rate_y), I^C s and B^C^T s of its body, and d F / d delta_k, d F / d qd_k of its body's
 * subtree (the rows of the coordinates above). turn: a Cardan joint's first column's
 * d s / d q2 (else 0). */
typedef struct {
    spatial4 s, w, y, rate_y, Is, Bs, dF, rate_dF, turn;
} world_column;

/* Zero: the motion of a root's parent at rest, and where sums start. */
static const spatial4 no_motion;

/* The buffer's bodies and columns, 32-byte aligned for the v4 (rnea_derivatives_bytes
 * leaves room). */
static world_body *bodies_of(void *buffer)
{
    return (world_body *)(((uintptr_t)buffer + 31) & ~(uintptr_t)31);
}

/* S of a body of inertia I moving at v (above). */
static void rate_of_inertia(inertia_rate *out, const rigid4 *I, const spatial4 *v)
{
    const v4 w = v->w, u = v->v, h = I->h;
    const double uh = 2.0 * dot4(&u, &h);
    const v4 rows_wI[3] = {/* rows of (w x) I-bar */
                           w[1] * I->I[2] - w[2] * I->I[1], w[2] * I->I[0] - w[0] * I->I[2],
                           w[0] * I->I[1] - w[1] * I->I[0]};
    for (int r = 0; r < 3; r++) { /* row r of (w x) I-bar + its column r, - h_r v - v_r h */
        out->K[r] = rows_wI[r] + cross4(&w, &I->I[r]) - h[r] * u - u[r] * h;
        out->K[r][r] += uh;
    }
    out->D = cross4(&w, &h) + I->m * u;
}

/* S x = (K x_w + D x x_v; x_w x D) */
static spatial4 rate_apply(const inertia_rate *S, const spatial4 *x)
{
    const v4 K = x->w[0] * S->K[0] + x->w[1] * S->K[1] + x->w[2] * S->K[2];
    return (spatial4){K + cross4(&S->D, &x->v), cross4(&x->w, &S->D)};
}

static void rate_add(inertia_rate *sum, const inertia_rate *S)
{
    for (int r = 0; r < 3; r++)
        sum->K[r] += S->K[r];
    sum->D += S->D;
}

/* Body i's transform, columns s, v and a at qdd = 0 in the world, from its parent's (vp,
 * ap: the parent's v and a, or 0 and a_0 at a root). */
static void world_motion(const mbd_model *model, const mbd_work *work, const double *qd, int i,
                         const world_body *parent, const spatial4 *vp, const spatial4 *ap,
                         world_body *b, world_column *cols)
{
    const int v0 = model->v0[i], n = model->joint[i].nv;
    const mbd_joint_type type = model->joint_type[i];
    compose4(&b->X, &work->X[i], parent ? &parent->X : &xform4_identity);
    spatial4 vJ = no_motion;
    for (int k = 0; k < n; k++) {
        column_to_root(&cols[k].s, &b->X, type, work->S + 6 * v0, k);
        spatial_add_scaled(&vJ, &cols[k].s, qd[v0 + k]);
        cols[k].turn = no_motion;
    }
    b->v = *vp;
    spatial_add_to(&b->v, &vJ);
    b->a = motion_cross(&b->v, &vJ);
    spatial_add_to(&b->a, ap);
    if (type == MBD_CARDAN) { /* c_J = qd1 qd2 d s_1 / d q2 */
        cols[0].turn = motion_cross(&cols[0].s, &cols[1].s);
        spatial_add_scaled(&b->a, &cols[0].turn, qd[v0] * qd[v0 + 1]);
    }
}

/* Body i's inertia, f and B's parts in the world. */
static void world_force(const mbd_model *model, int i, world_body *b)
{
    rigid4 body;
    rigid4_of(&body, &model->inertia[i]);
    rigid_to_root(&b->I, &b->X, &body);
    b->IC = b->I;
    b->momentum = rigid_apply(&b->I, &b->v);
    b->F = rigid_apply(&b->I, &b->a);
    const spatial4 bias = force_cross(&b->v, &b->momentum);
    spatial_add_to(&b->F, &bias);
    rate_of_inertia(&b->S, &b->I, &b->v);
}

/* w_k, y_k and rate_y_k of body i's columns (vp, ap as world_motion's). */
static void column_terms(const mbd_model *model, const double *qd, const double *qdd, int i,
                         const spatial4 *vp, const spatial4 *ap, const world_body *b,
                         world_column *cols)
{
    const int v0 = model->v0[i], n = model->joint[i].nv;
    spatial4 v_sum = b->v;
    spatial_add_to(&v_sum, vp);
    for (int k = 0; k < n; k++) {
        world_column *c = &cols[k];
        c->w = motion_cross(vp, &c->s); /* -s x v_lambda */
        c->rate_y = motion_cross(&v_sum, &c->s);
        c->y = motion_cross(ap, &c->s);
    }
    if (model->joint_type[i] == MBD_CARDAN) { /* the turn of s_1 with q2 */
        const spatial4 *turn = &cols[0].turn;
        const double *rate = qd + v0;
        world_column *c = &cols[1];
        const spatial4 v_turn = motion_cross(&b->v, turn), turn_s = motion_cross(turn, &c->s);
        spatial_add_scaled(&c->w, turn, rate[0]);
        /* y_2 += qdd1 turn + qd1 v x turn + qd1 qd2 turn x s_2 */
        spatial_add_scaled(&c->y, &v_turn, rate[0]);
        spatial_add_scaled(&c->y, turn, qdd[v0]);
        spatial_add_scaled(&c->y, &turn_s, rate[0] * rate[1]);
        spatial_add_scaled(&cols[0].rate_y, turn, rate[1]);
        spatial_add_scaled(&c->rate_y, turn, rate[0]);
    }
    for (int k = 0; k < n; k++) { /* y_k -= w_k x v_lambda */
        const spatial4 t = motion_cross(&cols[k].w, vp);
        spatial_add_scaled(&cols[k].y, &t, -1.0);
    }
}

/* The first forward pass at body i: its motion, inertia and force at qdd = 0. */
static void world_forward(const mbd_model *model, const mbd_work *work, const double *qd,
                          const spatial4 *a0, int i, world_body *bodies, world_column *cols)
{
    const int p = model->parent[i];
    const world_body *parent = p < 0 ? NULL : &bodies[p];
    world_motion(model, work, qd, i, parent, parent ? &parent->v : &no_motion,
                 parent ? &parent->a : a0, &bodies[i], cols);
    world_force(model, i, &bodies[i]);
}

/* The first backward pass at body i, its subtree's sums complete: its columns' I^C s and
 * tau at qdd = 0 (bias, if not NULL), then the sums join the parent's. */
static void subtree_sums(const mbd_model *model, int i, world_body *bodies, world_column *cols,
                         double *bias)
{
    world_body *b = &bodies[i];
    for (int k = 0; k < model->joint[i].nv; k++) {
        cols[k].Is = rigid_apply(&b->IC, &cols[k].s);
        if (bias)
            bias[model->v0[i] + k] = dot_spatial(&cols[k].s, &b->F);
    }
    const int p = model->parent[i];
    if (p < 0)
        return;
    world_body *parent = &bodies[p];
    rigid_add(&parent->IC, &b->IC);
    rate_add(&parent->S, &b->S);
    spatial_add_to(&parent->momentum, &b->momentum);
    spatial_add_to(&parent->F, &b->F);
}

/* The second forward pass at body i: a at qdd (da = da_lambda + S qdd), I da, the
 * columns' terms. */
static void acceleration_change(const mbd_model *model, const double *qd, const double *qdd,
                                const spatial4 *a0, int i, world_body *bodies, world_column *cols)
{
    const int p = model->parent[i], v0 = model->v0[i];
    const world_body *parent = p < 0 ? NULL : &bodies[p];
    world_body *b = &bodies[i];
    b->da = parent ? parent->da : no_motion;
    for (int k = 0; k < model->joint[i].nv; k++)
        spatial_add_scaled(&b->da, &cols[k].s, qdd[v0 + k]);
    spatial_add_to(&b->a, &b->da);
    b->G = rigid_apply(&b->I, &b->da);
    column_terms(model, qd, qdd, i, parent ? &parent->v : &no_motion, parent ? &parent->a : a0, b,
                 cols);
}

/* The second backward pass at body i: F at qdd, its columns' rows, G joins the parent's.
 * With B^C = S + G (above): B^T s = S s - G s, B s = S s + G s, B w = S w + G w. */
static void world_backward(const mbd_model *model, int i, world_body *bodies, world_column *cols)
{
    world_body *b = &bodies[i];
    spatial_add_to(&b->F, &b->G);
    for (int k = 0; k < model->joint[i].nv; k++) {
        world_column *c = &cols[k];
        const spatial4 Ss = rate_apply(&b->S, &c->s), Gs = force_cross(&c->s, &b->momentum);
        const spatial4 Sw = rate_apply(&b->S, &c->w), Gw = force_cross(&c->w, &b->momentum);
        const spatial4 ICy = rigid_apply(&b->IC, &c->y);
        c->Bs = Ss;
        spatial_add_scaled(&c->Bs, &Gs, -1.0);
        c->dF = force_cross(&c->s, &b->F);
        spatial_add_to(&c->dF, &ICy);
        spatial_add_to(&c->dF, &Sw);
        spatial_add_to(&c->dF, &Gw);
        c->rate_dF = rigid_apply(&b->IC, &c->rate_y);
        spatial_add_to(&c->rate_dF, &Ss);
        spatial_add_to(&c->rate_dF, &Gs);
    }
    if (model->parent[i] >= 0)
        spatial_add_to(&bodies[model->parent[i]].G, &b->G);
}

/* a . b + c . d, in one horizontal sum */
static double dot_two(const spatial4 *a, const spatial4 *b, const spatial4 *c, const spatial4 *d)
{
    const v4 p = a->w * b->w + a->v * b->v + c->w * d->w + c->v * d->v;
    return (p[0] + p[2]) + p[1];
}

/* The entries of the pairs (m of body i, k of i or an ancestor) and (k, m). */
static void store_pairs(const mbd_model *model, const world_body *bodies, const world_column *cols,
                        int i, double *dq, double *dqd, size_t stride)
{
    for (int m = model->v0[i]; m < model->v0[i] + model->joint[i].nv; m++) {
        /* m's vectors in registers: the stores below could alias them in memory */
        const spatial4 Is = cols[m].Is, Bs = cols[m].Bs, dF = cols[m].dF, rate_dF = cols[m].rate_dF;
        for (int j = i; j >= 0; j = model->parent[j])
            for (int k = model->v0[j]; k < model->v0[j] + model->joint[j].nv; k++) {
                const world_column *ck = &cols[k];
                const double below_q = dot_two(&Is, &ck->y, &Bs, &ck->w),
                             below_qd = dot_two(&Is, &ck->rate_y, &Bs, &ck->s),
                             above_q = dot_spatial(&ck->s, &dF),
                             above_qd = dot_spatial(&ck->s, &rate_dF);
                const size_t below = (size_t)m * stride + (size_t)k,
                             above = (size_t)k * stride + (size_t)m;
                if (dq) {
                    dq[below] = below_q;
                    if (j != i)
                        dq[above] = above_q;
                }
                if (dqd) {
                    dqd[below] = below_qd;
                    if (j != i)
                        dqd[above] = above_qd;
                }
            }
    }
    if (dq && model->joint_type[i] == MBD_CARDAN) { /* s_1 turns with q2 */
        const int v0 = model->v0[i];
        dq[(size_t)v0 * stride + (size_t)v0 + 1] += dot_spatial(&cols[v0].turn, &bodies[i].F);
    }
}

size_t rnea_derivatives_bytes(const mbd_model *model)
{
    return (size_t)model->nb * sizeof(world_body) + (size_t)model->nv * sizeof(world_column) + 31;
}

/* CRBA's H_mk = s_k . I^C_i s_m (+ armature at k = m) for m of body i and k = m, lambda(m),
 * lambda^2(m), ...: row m of the tree-sparse H. */
static void store_mass_matrix(const mbd_model *model, const world_column *cols, int i,
                              const tree_factor *H)
{
    for (int m = model->v0[i]; m < model->v0[i] + model->joint[i].nv; m++) {
        double *restrict row = H->rows + H->adr[m];
        const int *chain = H->chain + H->adr[m], len = (int)(H->adr[m + 1] - H->adr[m]);
        for (int t = 0; t < len; t++)
            row[t] = dot_spatial(&cols[m].Is, &cols[chain[t]].s);
        if (joint_has_armature(model, i))
            row[0] += model->armature[i];
    }
}

/* a_0 = -a_g in the world */
static spatial4 rest_acceleration(const mbd_model *model)
{
    const double a0[6] = {0, 0, 0, -model->gravity[0], -model->gravity[1], -model->gravity[2]};
    return spatial4_of(a0);
}

void rnea_derivatives_start(const mbd_model *model, const mbd_work *work, void *buffer,
                            const double *qd, const tree_factor *H, double *bias)
{
    const int nb = model->nb;
    world_body *bodies = bodies_of(buffer);
    world_column *cols = (world_column *)(bodies + nb);
    const spatial4 a0 = rest_acceleration(model);
    for (int i = 0; i < nb; i++)
        world_forward(model, work, qd, &a0, i, bodies, cols + model->v0[i]);
    for (int i = nb - 1; i >= 0; i--)
        subtree_sums(model, i, bodies, cols + model->v0[i], bias);
    for (int i = 0; H && i < nb; i++)
        store_mass_matrix(model, cols, i, H);
}

void rnea_derivatives_at(const mbd_model *model, void *buffer, const double *qd, const double *qdd,
                         double *dtau_dq, double *dtau_dqd, size_t stride)
{
    const int nb = model->nb;
    world_body *bodies = bodies_of(buffer);
    world_column *cols = (world_column *)(bodies + nb);
    const spatial4 a0 = rest_acceleration(model);
    for (int i = 0; i < nb; i++)
        acceleration_change(model, qd, qdd, &a0, i, bodies, cols + model->v0[i]);
    for (int i = nb - 1; i >= 0; i--)
        world_backward(model, i, bodies, cols + model->v0[i]);
    for (int i = 0; i < nb; i++)
        store_pairs(model, bodies, cols, i, dtau_dq, dtau_dqd, stride);
}

int mbd_inverse_dynamics_derivatives(const mbd_model *model, mbd_work *work, const double *q,
                                     const double *qd, const double *qdd, double *dtau_dq,
                                     double *dtau_dqd)
{
    if (!model || !work || work->model != model || !q || !qd || !qdd)
        return MBD_EINVAL;
    if (model->has_friction || model->nloops > 0)
        return MBD_EUNSUPPORTED;
    const int status = mbd_kinematics(model, work, q);
    if (status)
        return status;
    if (check_finite(qd, model->nv) || check_finite(qdd, model->nv))
        return MBD_ENONFINITE;
    if (!dtau_dq && !dtau_dqd)
        return MBD_OK;
    const double *J = model->has_passive ? passive_jacobians(work, q, qd) : NULL;
    void *buffer = derivative_scratch(work, rnea_derivatives_bytes(model));
    if (!buffer || (model->has_passive && !J))
        return MBD_ENOMEM;
    const size_t block = (size_t)model->nv * (size_t)model->nv;
    if (dtau_dq)
        memset(dtau_dq, 0, block * sizeof *dtau_dq);
    if (dtau_dqd)
        memset(dtau_dqd, 0, block * sizeof *dtau_dqd);
    rnea_derivatives_start(model, work, buffer, qd, NULL, NULL);
    rnea_derivatives_at(model, buffer, qd, qdd, dtau_dq, dtau_dqd, (size_t)model->nv);
    for (size_t k = 0; J && k < block; k++) { /* tau = RNEA + armature qdd - tau_p */
        if (dtau_dq)
            dtau_dq[k] -= J[k];
        if (dtau_dqd)
            dtau_dqd[k] -= J[block + k];
    }
    return MBD_OK;
}
