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
 * These are the closed forms of Singh, Russell and Wensing ("Efficient Analytical
 * Derivatives of Rigid-Body Dynamics using Spatial Vector Algebra", RA-L 2022: w_k and
 * y_k are their Psi-dot and Psi-double-dot of the column, B their body-level Coriolis
 * matrix times 2).
 * The passes run first at qdd = 0 (rnea_derivatives_start: H and tau(qdd = 0), from which
 * the forward derivatives solve qdd with the factor they need anyway), then add what qdd
 * changes, a_i by S qdd along the path and F_i by the subtree's I da (rnea_derivatives_at). */
#include "internal.h"

#include <string.h>

/* A body's world quantities: X = (world -> body), I its inertia, IC the subtree's I^C, B
 * its B_i then the subtree's B^C (row-major), a its acceleration at qdd = 0 then at qdd, F
 * its f_i at qdd = 0, then the subtree's F at qdd = 0, then at qdd; da the change of a
 * that qdd makes and G that of the subtree's F (sum of I da). */
typedef struct {
    mbd_xform X;
    mbd_inertia I, IC;
    double B[36], v[6], a[6], F[6], da[6], G[6];
} world_body;

/* A velocity coordinate k's: its column s, w_k and y_k along delta_k, y_k along qd_k
 * (rate_y), I^C s and B^C^T s of its body, and d F / d delta_k, d F / d qd_k of its body's
 * subtree (the rows of the coordinates above). turn: a Cardan joint's first column's
 * d s / d q2 (else 0). */
typedef struct {
    double s[6], w[6], y[6], rate_y[6], Is[6], Bs[6], dF[6], rate_dF[6], turn[6];
} world_column;

/* out = X^-1 m for a motion m (body -> world): (E^T w; E^T v + r x E^T w). */
static void motion_to_world(double out[6], const mbd_xform *X, const double m[6])
{
    double rw[3];
    mat3_apply_t(out, X->E, m);
    mat3_apply_t(out + 3, X->E, m + 3);
    vec3_cross(rw, X->r, out);
    for (int r = 0; r < 3; r++)
        out[3 + r] += rw[r];
}

/* out = m x x for motions m and x */
static void cross_motion(double out[6], const double m[6], const double x[6])
{
    double t[3];
    vec3_cross(out, m, x);
    vec3_cross(out + 3, m, x + 3);
    vec3_cross(t, m + 3, x);
    for (int r = 0; r < 3; r++)
        out[3 + r] += t[r];
}

static void add_scaled(double out[6], const double x[6], double scale)
{
    for (int r = 0; r < 6; r++)
        out[r] += scale * x[r];
}

/* out = M x, or out = M^T x (transposed set), for a row-major 6 x 6 M */
static void matrix6_apply(double out[6], const double M[36], int transposed, const double x[6])
{
    for (int r = 0; r < 6; r++) {
        double sum = 0.0;
        for (int c = 0; c < 6; c++)
            sum += (transposed ? M[6 * c + r] : M[6 * r + c]) * x[c];
        out[r] = sum;
    }
}

/* B = the matrix of w -> I (w x v) + w x* h + v x* (I w), h = I v (= (n; f)): with
 * M = (v x*) I, I (w x v) = -I (v x) w = M^T w (I symmetric, (v x*) = -(v x)^T), and
 * w x* h = (w_0 x n + w_1 x f; w_0 x f) = G w, so B = M + M^T + G. */
static void coriolis_matrix(double B[36], const mbd_inertia *I, const double v[6],
                            const double h[6])
{
    double M[36];
    for (int c = 0; c < 6; c++) {
        double column[6], product[6];
        inertia_column(column, I, c);
        cross_force(product, v, column);
        for (int r = 0; r < 6; r++)
            M[6 * r + c] = product[r];
    }
    for (int r = 0; r < 6; r++)
        for (int c = 0; c < 6; c++)
            B[6 * r + c] = M[6 * r + c] + M[6 * c + r];
    const double *n = h, *f = h + 3;
    for (int k = 0; k < 3; k++) { /* (w x a)_k1 = -a_k2 w_k + ..., (w x a)_k2 = a_k1 w_k + ... */
        const int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
        B[6 * k1 + k] -= n[k2];
        B[6 * k2 + k] += n[k1];
        B[6 * k1 + 3 + k] -= f[k2];
        B[6 * k2 + 3 + k] += f[k1];
        B[6 * (3 + k1) + k] -= f[k2];
        B[6 * (3 + k2) + k] += f[k1];
    }
}

static void inertia_accumulate(mbd_inertia *sum, const mbd_inertia *I)
{
    for (int k = 0; k < 6; k++) {
        sum->A[k] += I->A[k];
        sum->C[k] += I->C[k];
    }
    for (int k = 0; k < 9; k++)
        sum->B[k] += I->B[k];
}

/* Body i's transform, columns s, v and a at qdd = 0 in the world, from its parent's (vp,
 * ap: the parent's v and a, or 0 and a_0 at a root). */
static void world_motion(const mbd_model *model, const mbd_work *work, const double *qd, int i,
                         const world_body *parent, const double *vp, const double *ap,
                         world_body *b, world_column *cols)
{
    const int v0 = model->v0[i], n = model->joint[i].nv;
    if (parent)
        xform_compose(&b->X, &work->X[i], &parent->X);
    else
        b->X = work->X[i];
    double vJ[6] = {0}, t[6];
    for (int k = 0; k < n; k++) {
        motion_to_world(cols[k].s, &b->X, work->S + 6 * (v0 + k));
        add_scaled(vJ, cols[k].s, qd[v0 + k]);
        memset(cols[k].turn, 0, sizeof cols[k].turn);
    }
    for (int r = 0; r < 6; r++)
        b->v[r] = vp[r] + vJ[r];
    cross_motion(t, b->v, vJ);
    for (int r = 0; r < 6; r++)
        b->a[r] = ap[r] + t[r];
    if (model->joint_type[i] == MBD_CARDAN) { /* c_J = qd1 qd2 d s_1 / d q2 */
        cross_motion(cols[0].turn, cols[0].s, cols[1].s);
        add_scaled(b->a, cols[0].turn, qd[v0] * qd[v0 + 1]);
    }
}

/* Body i's inertia, f and B in the world. */
static void world_force(const mbd_model *model, int i, world_body *b)
{
    static const mbd_inertia zero;
    mbd_inertia body;
    rigid_blocks(&body, &model->inertia[i]);
    inertia_add_congruence(&b->I, &zero, NULL, &b->X, &body, 0, 0);
    b->IC = b->I;
    double h[6], t[6];
    inertia_apply(h, &b->I, b->v);
    inertia_apply(b->F, &b->I, b->a);
    cross_force(t, b->v, h);
    add_scaled(b->F, t, 1.0);
    coriolis_matrix(b->B, &b->I, b->v, h);
}

/* w_k, y_k and rate_y_k of body i's columns (vp, ap as world_motion's). */
static void column_terms(const mbd_model *model, const double *qd, const double *qdd, int i,
                         const double *vp, const double *ap, const world_body *b,
                         world_column *cols)
{
    const int v0 = model->v0[i], n = model->joint[i].nv;
    double v_sum[6], t[6];
    for (int r = 0; r < 6; r++)
        v_sum[r] = b->v[r] + vp[r];
    for (int k = 0; k < n; k++) {
        world_column *c = &cols[k];
        cross_motion(c->w, vp, c->s); /* -s x v_lambda */
        cross_motion(c->rate_y, v_sum, c->s);
        cross_motion(c->y, ap, c->s);
    }
    if (model->joint_type[i] == MBD_CARDAN) { /* the turn of s_1 with q2 */
        const double *turn = cols[0].turn, *rate = qd + v0;
        world_column *c = &cols[1];
        add_scaled(c->w, turn, rate[0]);
        cross_motion(t, b->v, turn); /* y_2 += qdd1 turn + qd1 v x turn + qd1 qd2 turn x s_2 */
        add_scaled(c->y, t, rate[0]);
        add_scaled(c->y, turn, qdd[v0]);
        cross_motion(t, turn, c->s);
        add_scaled(c->y, t, rate[0] * rate[1]);
        add_scaled(cols[0].rate_y, turn, rate[1]);
        add_scaled(c->rate_y, turn, rate[0]);
    }
    for (int k = 0; k < n; k++) { /* y_k -= w_k x v_lambda */
        cross_motion(t, cols[k].w, vp);
        add_scaled(cols[k].y, t, -1.0);
    }
}

/* The first forward pass at body i: its motion, inertia and force at qdd = 0. */
static void world_forward(const mbd_model *model, const mbd_work *work, const double *qd,
                          const double a0[6], int i, world_body *bodies, world_column *cols)
{
    static const double rest[6];
    const int p = model->parent[i];
    const world_body *parent = p < 0 ? NULL : &bodies[p];
    const double *vp = parent ? parent->v : rest, *ap = parent ? parent->a : a0;
    world_motion(model, work, qd, i, parent, vp, ap, &bodies[i], cols);
    world_force(model, i, &bodies[i]);
}

/* The first backward pass at body i, its subtree's sums complete: its columns' I^C s and
 * tau at qdd = 0 (bias, if not NULL), then the sums join the parent's. */
static void subtree_sums(const mbd_model *model, int i, world_body *bodies, world_column *cols,
                         double *bias)
{
    world_body *b = &bodies[i];
    for (int k = 0; k < model->joint[i].nv; k++) {
        inertia_apply(cols[k].Is, &b->IC, cols[k].s);
        if (bias)
            bias[model->v0[i] + k] = dot6(cols[k].s, b->F);
    }
    const int p = model->parent[i];
    if (p < 0)
        return;
    world_body *parent = &bodies[p];
    inertia_accumulate(&parent->IC, &b->IC);
    for (int k = 0; k < 36; k++)
        parent->B[k] += b->B[k];
    add_scaled(parent->F, b->F, 1.0);
}

/* The second forward pass at body i: a at qdd (da = da_lambda + S qdd), I da, the
 * columns' terms. */
static void acceleration_change(const mbd_model *model, const double *qd, const double *qdd,
                                const double a0[6], int i, world_body *bodies,
                                world_column *cols)
{
    static const double rest[6];
    const int p = model->parent[i], v0 = model->v0[i];
    const world_body *parent = p < 0 ? NULL : &bodies[p];
    world_body *b = &bodies[i];
    memcpy(b->da, parent ? parent->da : rest, sizeof b->da);
    for (int k = 0; k < model->joint[i].nv; k++)
        add_scaled(b->da, cols[k].s, qdd[v0 + k]);
    add_scaled(b->a, b->da, 1.0);
    inertia_apply(b->G, &b->I, b->da);
    column_terms(model, qd, qdd, i, parent ? parent->v : rest, parent ? parent->a : a0, b, cols);
}

/* The second backward pass at body i: F at qdd, its columns' rows, G joins the parent's. */
static void world_backward(const mbd_model *model, int i, world_body *bodies, world_column *cols)
{
    world_body *b = &bodies[i];
    add_scaled(b->F, b->G, 1.0);
    for (int k = 0; k < model->joint[i].nv; k++) {
        world_column *c = &cols[k];
        double t[6];
        matrix6_apply(c->Bs, b->B, 1, c->s);
        cross_force(c->dF, c->s, b->F);
        inertia_apply(t, &b->IC, c->y);
        add_scaled(c->dF, t, 1.0);
        matrix6_apply(t, b->B, 0, c->w);
        add_scaled(c->dF, t, 1.0);
        inertia_apply(c->rate_dF, &b->IC, c->rate_y);
        matrix6_apply(t, b->B, 0, c->s);
        add_scaled(c->rate_dF, t, 1.0);
    }
    if (model->parent[i] >= 0)
        add_scaled(bodies[model->parent[i]].G, b->G, 1.0);
}

/* The entries of the pairs (m of body i, k of i or an ancestor) and (k, m). */
static void store_pairs(const mbd_model *model, const world_body *bodies,
                        const world_column *cols, int i, double *dq, double *dqd)
{
    const size_t nv = (size_t)model->nv;
    for (int m = model->v0[i]; m < model->v0[i] + model->joint[i].nv; m++) {
        const world_column *cm = &cols[m];
        for (int j = i; j >= 0; j = model->parent[j])
            for (int k = model->v0[j]; k < model->v0[j] + model->joint[j].nv; k++) {
                const world_column *ck = &cols[k];
                const size_t below = (size_t)m * nv + (size_t)k, above = (size_t)k * nv + (size_t)m;
                if (dq) {
                    dq[below] = dot6(cm->Is, ck->y) + dot6(cm->Bs, ck->w);
                    if (j != i)
                        dq[above] = dot6(ck->s, cm->dF);
                }
                if (dqd) {
                    dqd[below] = dot6(cm->Is, ck->rate_y) + dot6(cm->Bs, ck->s);
                    if (j != i)
                        dqd[above] = dot6(ck->s, cm->rate_dF);
                }
            }
    }
    if (dq && model->joint_type[i] == MBD_CARDAN) { /* s_1 turns with q2 */
        const int v0 = model->v0[i];
        dq[(size_t)v0 * nv + (size_t)v0 + 1] += dot6(cols[v0].turn, bodies[i].F);
    }
}

size_t rnea_derivatives_bytes(const mbd_model *model)
{
    return (size_t)model->nb * sizeof(world_body) + (size_t)model->nv * sizeof(world_column);
}

/* CRBA's H_mk = s_k . I^C_i s_m for the pairs (m of body i, k of i or an ancestor). */
static void store_mass_matrix(const mbd_model *model, const world_column *cols, int i, double *H)
{
    const size_t nv = (size_t)model->nv;
    for (int m = model->v0[i]; m < model->v0[i] + model->joint[i].nv; m++)
        for (int j = i; j >= 0; j = model->parent[j])
            for (int k = model->v0[j]; k < model->v0[j] + model->joint[j].nv; k++)
                H[(size_t)m * nv + (size_t)k] = H[(size_t)k * nv + (size_t)m] =
                    dot6(cols[m].Is, cols[k].s);
}

void rnea_derivatives_start(const mbd_model *model, const mbd_work *work, void *buffer,
                            const double *qd, double *H, double *bias)
{
    const int nb = model->nb;
    world_body *bodies = buffer;
    world_column *cols = (world_column *)(bodies + nb);
    const double a0[6] = {0, 0, 0, -model->gravity[0], -model->gravity[1], -model->gravity[2]};
    for (int i = 0; i < nb; i++)
        world_forward(model, work, qd, a0, i, bodies, cols + model->v0[i]);
    for (int i = nb - 1; i >= 0; i--)
        subtree_sums(model, i, bodies, cols + model->v0[i], bias);
    if (!H)
        return;
    memset(H, 0, (size_t)model->nv * (size_t)model->nv * sizeof *H);
    for (int i = 0; i < nb; i++)
        store_mass_matrix(model, cols, i, H);
}

void rnea_derivatives_at(const mbd_model *model, void *buffer, const double *qd,
                         const double *qdd, double *dtau_dq, double *dtau_dqd)
{
    const int nb = model->nb, nv = model->nv;
    world_body *bodies = buffer;
    world_column *cols = (world_column *)(bodies + nb);
    const double a0[6] = {0, 0, 0, -model->gravity[0], -model->gravity[1], -model->gravity[2]};
    for (int i = 0; i < nb; i++)
        acceleration_change(model, qd, qdd, a0, i, bodies, cols + model->v0[i]);
    for (int i = nb - 1; i >= 0; i--)
        world_backward(model, i, bodies, cols + model->v0[i]);
    const size_t size = (size_t)nv * (size_t)nv * sizeof(double);
    if (dtau_dq) /* the entries of bodies on no common path stay 0 */
        memset(dtau_dq, 0, size);
    if (dtau_dqd)
        memset(dtau_dqd, 0, size);
    for (int i = 0; i < nb; i++)
        store_pairs(model, bodies, cols, i, dtau_dq, dtau_dqd);
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
    void *buffer = derivative_scratch(work, rnea_derivatives_bytes(model));
    if (!buffer)
        return MBD_ENOMEM;
    rnea_derivatives_start(model, work, buffer, qd, NULL, NULL);
    rnea_derivatives_at(model, buffer, qd, qdd, dtau_dq, dtau_dqd);
    return MBD_OK;
}
