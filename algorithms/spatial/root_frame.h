/* root_frame.h: spatial quantities of one state in a single frame shared by every body of a
 * tree (its root's, or the world's), where a parent and its child share coordinates and
 * no pass transforms vectors from body to body: the transforms X0_i = X_i X0_lambda(i),
 * motions and columns of S carried out of body coordinates, and rigid inertias by their
 * ten parameters (X0^T I X0 in under half the multiplications of the blocks' form).
 * 3-vectors live in the first three lanes of a v4 (spatial.h), the fourth lane 0. Used by
 * the tree-sparse solver (solvers/sparse.c) and the RNEA derivatives
 * (dynamics/rnea_derivatives.c). */
#ifndef MBD_ROOT_FRAME_H
#define MBD_ROOT_FRAME_H

#include "spatial/joint_space.h"
#include "spatial/spatial.h"

/* No call passes a v4 by value (the helpers take pointers; always inlined), so the note on
 * the ABI of 32-byte vectors that compilers give for targets without AVX does not apply,
 * and is not printed (gcc prints it for a parameter whatever the pragma says). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

/* A motion (w; v) or force (n; f) vector. */
typedef struct {
    v4 w, v;
} spatial4;

/* X = (E, r), E by rows, as mbd_xform. */
typedef struct {
    v4 E[3], r;
} xform4;

/* A rigid-body inertia by its 10 parameters: I-bar about the frame origin (symmetric, by
 * rows), h = m c and the mass. A composite inertia is one too. */
typedef struct {
    v4 I[3], h;
    double m;
} rigid4;

/* X = 1: a root's frame as the frame of the whole tree. */
static const xform4 xform4_identity = {.E = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}}};

/* The 10 parameters of a body's inertia (the model's mbd_rigid) as a rigid4. */
MBD_INLINE void rigid4_of(rigid4 *out, const mbd_rigid *I)
{
    for (int r = 0; r < 3; r++)
        out->I[r] = (v4){I->Ibar[SYM3(r, 0)], I->Ibar[SYM3(r, 1)], I->Ibar[SYM3(r, 2)], 0.0};
    out->h = v4_of(I->h);
    out->m = I->m;
}

MBD_INLINE double dot4(const v4 *a, const v4 *b)
{
    const v4 p = *a * *b;
    return (p[0] + p[2]) + p[1];
}

MBD_INLINE double dot_spatial(const spatial4 *a, const spatial4 *b)
{
    const v4 p = a->w * b->w + a->v * b->v;
    return (p[0] + p[2]) + p[1];
}

/* E^T x = sum_c x_c (row c of E) */
MBD_INLINE v4 rotate_back(const v4 E[3], const double *x)
{
    return x[0] * E[0] + x[1] * E[1] + x[2] * E[2];
}

/* out = X P: first P (root -> parent), then X (parent -> body), as xform_compose. */
MBD_INLINE void compose4(xform4 *restrict out, const mbd_xform *X, const xform4 *P)
{
    for (int r = 0; r < 3; r++)
        out->E[r] = rotate_back(P->E, X->E + 3 * r);
    out->r = P->r + rotate_back(P->E, X->r);
}

/* m in root coordinates from body coordinates, X0 = root -> body: (E^T w; E^T v + r x E^T w). */
MBD_INLINE void motion_to_root(spatial4 *out, const xform4 *X0, const double *m)
{
    out->w = rotate_back(X0->E, m);
    out->v = rotate_back(X0->E, m + 3) + cross4(&X0->r, &out->w);
}

/* Column col of S in root coordinates; a unit column e_k is row k of E (rotational: and
 * its moment r x). */
MBD_INLINE void column_to_root(spatial4 *out, const xform4 *X0, mbd_joint_type type,
                               const double *S, int col)
{
    const int k = unit_column(type, col);
    const v4 zero = {0};
    if (k < 0)
        motion_to_root(out, X0, S + 6 * col);
    else if (k < 3)
        *out = (spatial4){X0->E[k], cross4(&X0->r, &X0->E[k])};
    else
        *out = (spatial4){zero, X0->E[k - 3]};
}

/* out = X^T I X (RBDA §2.13) on the ten parameters of a rigid inertia (the forms of the
 * congruence: spatial_kernels.h): with h' = E^T h, h_p = h' + m r and
 * I-bar_p = E^T I-bar E - h' r^T - r h_p^T + (r.h' + r.h_p) 1. */
MBD_INLINE void rigid_to_root(rigid4 *restrict out, const xform4 *X, const rigid4 *I)
{
    const v4 r = X->r, hr = rotate_back(X->E, (const double *)&I->h);
    v4 T[3]; /* I-bar E */
    for (int a = 0; a < 3; a++)
        T[a] = rotate_back(X->E, (const double *)&I->I[a]);
    out->m = I->m;
    out->h = hr + I->m * r;
    const v4 h_sum = hr + out->h;
    const double trace_term = dot4(&r, &h_sum);
    for (int a = 0; a < 3; a++) {
        const double Ea[3] = {X->E[0][a], X->E[1][a], X->E[2][a]};
        v4 row = rotate_back(T, Ea) - hr[a] * r - r[a] * out->h;
        row[a] += trace_term;
        out->I[a] = row;
    }
}

/* f = I s = (I-bar w + h x v; m v - h x w) */
MBD_INLINE spatial4 rigid_apply(const rigid4 *I, const spatial4 *s)
{
    return (spatial4){rotate_back(I->I, (const double *)&s->w) + cross4(&I->h, &s->v),
                      I->m * s->v - cross4(&I->h, &s->w)};
}

MBD_INLINE void rigid_add(rigid4 *restrict sum, const rigid4 *I)
{
    for (int r = 0; r < 3; r++)
        sum->I[r] += I->I[r];
    sum->h += I->h;
    sum->m += I->m;
}

/* m x x for motions m and x: (w x x_w; w x x_v + v x x_w) */
MBD_INLINE spatial4 motion_cross(const spatial4 *m, const spatial4 *x)
{
    return (spatial4){cross4(&m->w, &x->w), cross4(&m->w, &x->v) + cross4(&m->v, &x->w)};
}

/* m x* f for a motion m and a force f: (w x n + v x f; w x f) */
MBD_INLINE spatial4 force_cross(const spatial4 *m, const spatial4 *f)
{
    return (spatial4){cross4(&m->w, &f->w) + cross4(&m->v, &f->v), cross4(&m->w, &f->v)};
}

/* sum += x */
MBD_INLINE void spatial_add_to(spatial4 *restrict sum, const spatial4 *x)
{
    sum->w += x->w;
    sum->v += x->v;
}

/* sum += scale x */
MBD_INLINE void spatial_add_scaled(spatial4 *restrict sum, const spatial4 *x, double scale)
{
    sum->w += scale * x->w;
    sum->v += scale * x->v;
}

/* A spatial vector of 6 doubles as a spatial4. */
MBD_INLINE spatial4 spatial4_of(const double *x) { return (spatial4){v4_of(x), v4_of(x + 3)}; }

#pragma GCC diagnostic pop

#endif
