/* spatial_kernels.h: the spatial-algebra kernels of spatial.h that the solvers' lane forms
 * use, written once over the lane type of lane.h (no include guard: included once per
 * width, between lane.h and lane_end.h). Conventions as in spatial.h. */

static inline void LANE_FN(vec3_cross)(lane *restrict out, const lane *a, const lane *b)
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

static inline lane LANE_FN(vec3_dot)(const lane *a, const lane *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* out = E a */
static inline void LANE_FN(mat3_apply)(lane *restrict out, const lane *E, const lane *a)
{
    out[0] = E[0] * a[0] + E[1] * a[1] + E[2] * a[2];
    out[1] = E[3] * a[0] + E[4] * a[1] + E[5] * a[2];
    out[2] = E[6] * a[0] + E[7] * a[1] + E[8] * a[2];
}

/* out = E^T a */
static inline void LANE_FN(mat3_apply_t)(lane *restrict out, const lane *E, const lane *a)
{
    out[0] = E[0] * a[0] + E[3] * a[1] + E[6] * a[2];
    out[1] = E[1] * a[0] + E[4] * a[1] + E[7] * a[2];
    out[2] = E[2] * a[0] + E[5] * a[1] + E[8] * a[2];
}

/* out = A B */
static inline void LANE_FN(mat3_mul)(lane *restrict out, const lane *A, const lane *B)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            out[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}

/* out = X m (motion, A -> B) */
static inline void LANE_FN(xform_motion)(lane *restrict out, const lane_xform *X, const lane *m)
{
    lane t[3];
    LANE_FN(vec3_cross)(t, X->r, m);
    t[0] = m[3] - t[0];
    t[1] = m[4] - t[1];
    t[2] = m[5] - t[2];
    LANE_FN(mat3_apply)(out, X->E, m);
    LANE_FN(mat3_apply)(out + 3, X->E, t);
}

/* out = X^T f (force, B -> A) */
static inline void LANE_FN(xform_force_t)(lane *restrict out, const lane_xform *X, const lane *f)
{
    lane n[3], rf[3];
    LANE_FN(mat3_apply_t)(n, X->E, f);
    LANE_FN(mat3_apply_t)(out + 3, X->E, f + 3);
    LANE_FN(vec3_cross)(rf, X->r, out + 3);
    out[0] = n[0] + rf[0];
    out[1] = n[1] + rf[1];
    out[2] = n[2] + rf[2];
}

/* out = m x* f (force cross product) */
static inline void LANE_FN(cross_force)(lane *restrict out, const lane *m, const lane *f)
{
    lane t[3];
    LANE_FN(vec3_cross)(out, m, f);
    LANE_FN(vec3_cross)(t, m + 3, f + 3);
    out[0] += t[0];
    out[1] += t[1];
    out[2] += t[2];
    LANE_FN(vec3_cross)(out + 3, m, f + 3);
}

/* Summed as a tree: the sweeps' last pass waits on this dot product at every body, and a
 * left-to-right sum is a chain of six dependent FMAs. */
static inline lane LANE_FN(dot6)(const lane *a, const lane *b)
{
    return (a[0] * b[0] + a[1] * b[1]) + (a[2] * b[2] + a[3] * b[3]) + (a[4] * b[4] + a[5] * b[5]);
}

/* out = S a for a symmetric 3x3 S */
MBD_INLINE void LANE_FN(sym3_apply)(lane *restrict out, const lane *S, const lane *a)
{
    out[0] = S[0] * a[0] + S[1] * a[1] + S[2] * a[2];
    out[1] = S[1] * a[0] + S[3] * a[1] + S[4] * a[2];
    out[2] = S[2] * a[0] + S[4] * a[1] + S[5] * a[2];
}

/* Column k of I (k < 3: rotational, else translational), as the 6-vector I e_k. */
MBD_INLINE void LANE_FN(inertia_column)(lane out[6], const lane_inertia *I, int k)
{
    for (int r = 0; r < 3; r++) {
        out[r] = k < 3 ? I->A[SYM3(r, k)] : I->B[3 * r + k - 3];
        out[3 + r] = k < 3 ? I->B[3 * k + r] : I->C[SYM3(r, k - 3)];
    }
}

/* I -= x y^T on the upper triangles and B: one term of a symmetric sum such as
 * U D^-1 U^T = sum_k U_k (U D^-1)_k^T, whose upper triangle is the sum of the terms'. */
MBD_INLINE void LANE_FN(inertia_sub_outer)(lane_inertia *I, const lane x[6], const lane y[6])
{
    for (int i = 0; i < 3; i++) {
        for (int j = i; j < 3; j++) {
            I->A[SYM3(i, j)] -= x[i] * y[j];
            I->C[SYM3(i, j)] -= x[3 + i] * y[3 + j];
        }
        for (int j = 0; j < 3; j++)
            I->B[3 * i + j] -= x[i] * y[3 + j];
    }
}

/* The sum of a[k] b[stride k] over the k < 6 in the bit mask support. With support a
 * compile-time constant (the kernels below are inlined into steps specialized per joint
 * type) the other terms cost nothing: x * 0.0 cannot be folded, a missing term can. */
MBD_INLINE lane LANE_FN(dot_over)(const lane *a, const lane *b, int stride, unsigned support)
{
    lane sum = LANE_FN(lane_splat)(0.0);
    int first = 1;
    for (int k = 0; k < 6; k++)
        if (support >> k & 1) {
            sum = first ? a[k] * b[stride * k] : sum + a[k] * b[stride * k];
            first = 0;
        }
    return sum;
}

/* The sum of a[k] b[k] over k = 0, 1, 2 not in the bit mask skip (of zero rows). */
MBD_INLINE lane LANE_FN(sum3_skipping)(const lane a[3], const lane b[3], unsigned skip)
{
    return LANE_FN(dot_over)(a, b, 1, 7u & ~skip);
}

/* out = I m (motion -> force) for an I whose rows and columns in the bit masks zero_a (of
 * A, with the rows of B) and zero_c (of C, with the columns of B) are zero, as in
 * inertia_add_congruence, and an m whose entries in the bit mask m_zero (bits 0-5) are
 * zero: their terms drop out. */
/* Row 3 + i of I m (row i of its force part), over the terms of m in the bit mask support. */
MBD_INLINE lane LANE_FN(inertia_force_row)(const lane_inertia *I, const lane *m, int i,
                                           unsigned support)
{
    const lane bottom[6] = {I->B[i],          I->B[3 + i],      I->B[6 + i],
                            I->C[SYM3(i, 0)], I->C[SYM3(i, 1)], I->C[SYM3(i, 2)]};
    return LANE_FN(dot_over)(bottom, m, 1, support);
}

MBD_INLINE void LANE_FN(inertia_apply_skipping)(lane *restrict out, const lane_inertia *I,
                                                const lane *m, unsigned zero_a, unsigned zero_c,
                                                unsigned m_zero)
{
    /* the terms of m that count: one sum of up to 6 products per row (two sums of 3 and
     * their sum take one operation more) */
    const unsigned support = 63u & ~(zero_a | zero_c << 3 | m_zero);
    for (int i = 0; i < 3; i++) {
        const lane top[6] = {I->A[SYM3(i, 0)], I->A[SYM3(i, 1)], I->A[SYM3(i, 2)],
                             I->B[3 * i],      I->B[3 * i + 1],  I->B[3 * i + 2]};
        out[i] = zero_a >> i & 1 ? LANE_FN(lane_splat)(0.0) : LANE_FN(dot_over)(top, m, 1, support);
        out[3 + i] = zero_c >> i & 1 ? LANE_FN(lane_splat)(0.0)
                                     : LANE_FN(inertia_force_row)(I, m, i, support);
    }
}

/* out = I m (motion -> force) */
MBD_INLINE void LANE_FN(inertia_apply)(lane *restrict out, const lane_inertia *I, const lane *m)
{
    LANE_FN(inertia_apply_skipping)(out, I, m, 0, 0, 0);
}

/* h = m c of a rigid body's inertia about its frame origin, in every lane */
MBD_INLINE void LANE_FN(rigid_first_moment)(lane h[3], const mbd_rigid *I)
{
    for (int k = 0; k < 3; k++)
        h[k] = LANE_FN(lane_splat)(I->h[k]);
}

/* The blocks of a rigid body's inertia, A = I-bar, B = h x, C = m 1, in every lane: where
 * a sum of inertias starts from one (its zeros are then known to the compiler). */
MBD_INLINE void LANE_FN(rigid_blocks)(lane_inertia *restrict out, const mbd_rigid *I)
{
    const lane zero = LANE_FN(lane_splat)(0.0), m = LANE_FN(lane_splat)(I->m);
    lane h[3];
    LANE_FN(rigid_first_moment)(h, I);
    for (int k = 0; k < 6; k++)
        out->A[k] = LANE_FN(lane_splat)(I->Ibar[k]);
    const lane B[9] = {zero, -h[2], h[1], h[2], zero, -h[0], -h[1], h[0], zero};
    const lane C[6] = {m, zero, zero, m, zero, m};
    for (int k = 0; k < 9; k++)
        out->B[k] = B[k];
    for (int k = 0; k < 6; k++)
        out->C[k] = C[k];
}

/* out = I m for a rigid body's inertia about its frame origin, whose blocks are A = I-bar,
 * B = h x with h = m c, and C = m 1 (rigid_inertia): (I-bar w + h x v; m v - h x w),
 * 24 multiplications instead of 36. I is the model's (doubles): in W lanes its entries
 * are broadcast where used, not read from W-lane copies. */
MBD_INLINE void LANE_FN(rigid_inertia_apply)(lane *restrict out, const mbd_rigid *I, const lane *m)
{
    lane A[6], h[3], hxv[3], hxw[3];
    for (int k = 0; k < 6; k++)
        A[k] = LANE_FN(lane_splat)(I->Ibar[k]);
    LANE_FN(rigid_first_moment)(h, I);
    LANE_FN(vec3_cross)(hxv, h, m + 3);
    LANE_FN(vec3_cross)(hxw, h, m);
    LANE_FN(sym3_apply)(out, A, m);
    for (int k = 0; k < 3; k++) {
        out[k] += hxv[k];
        out[3 + k] = I->m * m[3 + k] - hxw[k];
    }
}

/* out = v x* (I v) for a rigid inertia I: the bias force of a body moving at v = (w; v_o).
 * By the Jacobi identity, w x (h x v_o) - v_o x (h x w) = h x (w x v_o), so with
 * g = w x v_o it is (w x I-bar w + h x g; m g - w x (h x w)): 36 multiplications against
 * 45 for I v and then v x* (I v). */
MBD_INLINE void LANE_FN(rigid_bias_force)(lane *restrict out, const mbd_rigid *I, const lane *v)
{
    lane A[6], h[3], Iw[3], g[3], hxw[3], wxIw[3], hxg[3], wxhxw[3];
    for (int k = 0; k < 6; k++)
        A[k] = LANE_FN(lane_splat)(I->Ibar[k]);
    LANE_FN(rigid_first_moment)(h, I);
    LANE_FN(sym3_apply)(Iw, A, v);
    LANE_FN(vec3_cross)(g, v, v + 3);
    LANE_FN(vec3_cross)(hxw, h, v);
    LANE_FN(vec3_cross)(wxIw, v, Iw);
    LANE_FN(vec3_cross)(hxg, h, g);
    LANE_FN(vec3_cross)(wxhxw, v, hxw);
    for (int k = 0; k < 3; k++) {
        out[k] = wxIw[k] + hxg[k];
        out[3 + k] = I->m * g[k] - wxhxw[k];
    }
}

/* out = E^T S E for a symmetric S (upper triangles in and out) whose rows and columns in
 * the bit mask zero are zero */
MBD_INLINE void LANE_FN(sym3_rotate_back)(lane *restrict out, const lane *S, const lane *E,
                                          unsigned zero)
{
    lane T[3][3]; /* T^T = (S E)^T, row j: column j of S E; rows in zero are zero */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            const lane s[3] = {S[SYM3(i, 0)], S[SYM3(i, 1)], S[SYM3(i, 2)]};
            const lane e[3] = {E[j], E[3 + j], E[6 + j]};
            T[j][i] = zero >> i & 1 ? LANE_FN(lane_splat)(0.0) : LANE_FN(sum3_skipping)(s, e, zero);
        }
    for (int i = 0; i < 3; i++)
        for (int j = i; j < 3; j++) {
            const lane e[3] = {E[i], E[3 + i], E[6 + i]};
            out[SYM3(i, j)] = LANE_FN(sum3_skipping)(e, T[j], zero);
        }
}

/* out = E^T M E for a 3x3 M (row i at M + stride i) whose rows in the bit mask zero_rows
 * and columns in zero_cols are zero */
MBD_INLINE void LANE_FN(mat3_rotate_back)(lane *restrict out, const lane *M, int stride,
                                          const lane *E, unsigned zero_rows, unsigned zero_cols)
{
    lane T[3][3]; /* T^T = (M E)^T; rows of M E in zero_rows are zero */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            const lane e[3] = {E[j], E[3 + j], E[6 + j]};
            T[j][i] = zero_rows >> i & 1 ? LANE_FN(lane_splat)(0.0)
                                         : LANE_FN(sum3_skipping)(M + stride * i, e, zero_cols);
        }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            const lane e[3] = {E[i], E[3 + i], E[6 + i]};
            out[3 * i + j] = LANE_FN(sum3_skipping)(e, T[j], zero_rows);
        }
}

/* ---- the congruence X^T I X ----
 * One source, inertia_add_congruence below, serves every inertia sum of a tree transform
 * (add_congruence, joint_kernels.h: the bodies sweep, poisson-ldlt, CRBA, H^-1), one
 * state and W lanes. Its other forms are other algorithms for what their callers hold,
 * each kept because it is cheaper there:
 *   - one state where the build targets AVX2 and FMA: the same blocks as rows in 256-bit
 *     vectors (algorithms/README.md, step 34: 6-14% off bodies and poisson-ldlt); W lanes
 *     keep the scalar form, whose vectors already run across states;
 *   - inertia_add_screw_congruence (below): across an axial screw, turns of 2x2 blocks
 *     and a shift along x, about 50 multiplications against 150-200;
 *   - matrix_add_congruence (poisson_sweep_kernels.h): the sweep's H I^A, a general 6x6
 *     matrix, not symmetric; it turns its blocks with mat3_rotate_back and
 *     mat3_screw_turn from here;
 *   - rigid_to_root (root_frame.h: sparse.c, rnea_derivatives.c): a rigid body's ten
 *     parameters (m, h, I-bar) into the root frame, under half the multiplications of
 *     the blocks' form. */

/* x + entry k of block 0, 1 or 2 (A, B, C) of a sum's base: base's, or, base NULL, that of
 * the rigid body's blocks (rigid_blocks) where a sum starts from one, broadcast where added
 * and its zeros adding nothing: in W lanes no copy of the blocks goes through the stack. */
MBD_INLINE lane LANE_FN(plus_base)(lane x, const lane_inertia *base, const mbd_rigid *body,
                                   int block, int k)
{
    if (base)
        return (block == 0 ? base->A : block == 1 ? base->B : base->C)[k] + x;
    if (block == 0)
        return LANE_FN(lane_splat)(body->Ibar[k]) + x;
    if (block == 2)
        return k == 0 || k == 3 || k == 5 ? LANE_FN(lane_splat)(body->m) + x : x;
    const int i = k / 3, j = k % 3; /* B = h x: entry (i, j) is -h_l for j = i + 1 (mod 3) */
    if (i == j)
        return x;
    const lane h = LANE_FN(lane_splat)(body->h[3 - i - j]);
    return j == (i + 1) % 3 ? x - h : h + x;
}

/* out = base + X^T I X (base NULL: body's blocks, plus_base), I in child coordinates (base
 * may be out): about 200
 * multiplications, fewer where I has zero rows and columns. With X = rot(E) xlt(r), rotate
 * back into the parent axes, A1 = E^T A E, B1 = E^T B E, C1 = E^T C E, then shift by r
 * (rx = r x):
 *   A' = A1 + M + M^T - rx C1 rx with M = rx B1^T,  B' = B1 + rx C1,  C' = C1.
 * zero_a and zero_c are bit masks of the rows (and columns) of A and of C that are zero,
 * with the same rows and columns of B: the projected inertia I^a of a joint whose S has
 * unit columns (inertia_zero_subspace); compile-time constants where they are not 0. */
#if MBD_LANES == 1 && defined(__AVX2__) && defined(__FMA__)
/* One state, where the build targets AVX2 and FMA: each block's rows as 3-vectors in
 * 4-lane vectors (v4, spatial.h), E^T M E as two products of rows with broadcast entries
 * (18 vector multiply-adds per block, fewer by the zero rows) instead of about 45 scalar
 * ones, the shift's r x by lane permutations. 6-14% off `bodies` and `poisson-ldlt` on
 * general chains, within 3% either way on the autoTree families (algorithms/PERFORMANCE.md,
 * step 34). W lanes keep the scalar form below, vectors across states. */
typedef double v4_unaligned __attribute__((vector_size(32), aligned(8), may_alias));

/* Rows of E^T M E (e: E's rows) for M symmetric (upper triangle) or full (row-major),
 * whose rows in zero_rows and columns in zero_cols are zero. */
MBD_INLINE void v4_rotate_back(v4 out[3], const double *M, int symmetric, const double *E,
                               const v4 e[3], unsigned zero_rows, unsigned zero_cols)
{
    v4 ME[3];
    for (int i = 0; i < 3; i++) {
        ME[i] = (v4){0.0};
        for (int k = 0; k < 3; k++)
            if (!(zero_rows >> i & 1) && !(zero_cols >> k & 1))
                ME[i] += M[symmetric ? SYM3(i, k) : 3 * i + k] * e[k];
    }
    for (int i = 0; i < 3; i++) {
        out[i] = (v4){0.0};
        for (int k = 0; k < 3; k++)
            if (!(zero_rows >> k & 1))
                out[i] += E[3 * k + i] * ME[k];
    }
}

MBD_INLINE void inertia_add_congruence(mbd_inertia *out, const mbd_inertia *base,
                                       const mbd_rigid *body, const mbd_xform *X,
                                       const mbd_inertia *I, unsigned zero_a, unsigned zero_c)
{
    const double *E = X->E, *r = X->r;
    const v4 e[3] = {*(const v4_unaligned *)E, *(const v4_unaligned *)(E + 3),
                     *(const v4_unaligned *)(E + 6)}; /* lane 3: r[0], unused */
    const v4 r4 = v4_of(r);
    v4 C1[3], B1[3], A1[3];
    v4_rotate_back(C1, I->C, 1, E, e, zero_c, zero_c);
    v4_rotate_back(B1, I->B, 0, E, e, zero_a, zero_c);
    v4_rotate_back(A1, I->A, 1, E, e, zero_a, zero_a);
    const v4 K[3] = {/* rx C1, row by row */
                     r[1] * C1[2] - r[2] * C1[1], r[2] * C1[0] - r[0] * C1[2],
                     r[0] * C1[1] - r[1] * C1[0]};
    /* rows of C1, B' = B1 + K, P = M^T (row j: r x row j of B1) and A1 + P - rx C1 rx
     * (row i of -rx C1 rx: r x row i of K); A' = that + P^T, upper triangles only */
    double c[3][4], b[3][4], p[3][4], a[3][4];
    for (int i = 0; i < 3; i++) {
        const v4 P = cross4(&r4, &B1[i]);
        *(v4_unaligned *)c[i] = C1[i];
        *(v4_unaligned *)b[i] = B1[i] + K[i];
        *(v4_unaligned *)p[i] = P;
        *(v4_unaligned *)a[i] = A1[i] + P + cross4(&r4, &K[i]);
    }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            out->B[3 * i + j] = LANE_FN(plus_base)(b[i][j], base, body, 1, 3 * i + j);
            if (j >= i) {
                out->C[SYM3(i, j)] = LANE_FN(plus_base)(c[i][j], base, body, 2, SYM3(i, j));
                out->A[SYM3(i, j)] =
                    LANE_FN(plus_base)(a[i][j] + p[j][i], base, body, 0, SYM3(i, j));
            }
        }
}
#else
MBD_INLINE void LANE_FN(inertia_add_congruence)(lane_inertia *out, const lane_inertia *base,
                                                const mbd_rigid *body, const lane_xform *X,
                                                const lane_inertia *I, unsigned zero_a,
                                                unsigned zero_c)
{
    /* Each block is written as soon as it is known, so that few values are live at once
     * (in 8 lanes every one is a register of the 32): C, then B, then A. */
    const lane *E = X->E, *r = X->r;
    lane C1[6], K[9], B1[9];
    LANE_FN(sym3_rotate_back)(C1, I->C, E, zero_c);
    for (int s = 0; s < 6; s++)
        out->C[s] = LANE_FN(plus_base)(C1[s], base, body, 2, s);
    for (int j = 0; j < 3; j++) { /* K = rx C1: column j is r x (column j of C1) */
        const lane c[3] = {C1[SYM3(0, j)], C1[SYM3(1, j)], C1[SYM3(2, j)]};
        K[j] = r[1] * c[2] - r[2] * c[1];
        K[3 + j] = r[2] * c[0] - r[0] * c[2];
        K[6 + j] = r[0] * c[1] - r[1] * c[0];
    }
    LANE_FN(mat3_rotate_back)(B1, I->B, 3, E, zero_a, zero_c);
    for (int k = 0; k < 9; k++)
        out->B[k] = LANE_FN(plus_base)(B1[k] + K[k], base, body, 1, k);
    lane A1[6], M[9];
    for (int j = 0; j < 3; j++) { /* M = rx B1^T: column j is r x (row j of B1) */
        const lane *b = B1 + 3 * j;
        M[j] = r[1] * b[2] - r[2] * b[1];
        M[3 + j] = r[2] * b[0] - r[0] * b[2];
        M[6 + j] = r[0] * b[1] - r[1] * b[0];
    }
    LANE_FN(sym3_rotate_back)(A1, I->A, E, zero_a);
    for (int i = 0; i < 3; i++) {
        const lane *k = K + 3 * i; /* -rx C1 rx = K rx^T: entry (i, j) is (r x row i of K)_j */
        const lane n[3] = {r[1] * k[2] - r[2] * k[1], r[2] * k[0] - r[0] * k[2],
                           r[0] * k[1] - r[1] * k[0]};
        for (int j = i; j < 3; j++) {
            const int s = SYM3(i, j);
            out->A[s] =
                LANE_FN(plus_base)(A1[s] + M[3 * i + j] + M[3 * j + i] + n[j], base, body, 0, s);
        }
    }
}
#endif

/* ---- the congruence across an axial screw (TREE_OFFSET, TREE_SCREW in model/model.h) ----
 * A turn R about coordinate axis k, with (i, j, k) cyclic: R e_i = c e_i - s e_j,
 * R e_j = s e_i + c e_j (Featherstone's rotx, roty, rotz), touches rows and columns i and
 * j only. */

/* S <- R^T S R for a symmetric S (upper triangle), with cc = c^2 - s^2 and ss = 2 c s:
 * 6 multiplications, 10 unless S's row and column k are zero, 3 to 5 where those of i
 * or j are (bits of zero; gcc folds no product with a zero, since x could be NaN). */
MBD_INLINE void LANE_FN(sym3_turn)(lane S[6], int k, lane c, lane s, lane cc, lane ss,
                                   unsigned zero)
{
    const int i = (k + 1) % 3, j = (k + 2) % 3;
    const int zero_i = zero >> i & 1, zero_j = zero >> j & 1;
    if (zero_i != zero_j) { /* one nonzero index of the plane: S_nn and S_nk turn */
        const int n = zero_i ? j : i;
        const lane h = 0.5 * S[SYM3(n, n)], snk = S[SYM3(n, k)], hcc = h * cc;
        S[SYM3(i, i)] = zero_i ? h - hcc : h + hcc; /* S_nn c^2 or S_nn s^2 */
        S[SYM3(j, j)] = zero_i ? h + hcc : h - hcc;
        S[SYM3(i, j)] = zero_i ? -(h * ss) : h * ss;
        if (!(zero >> k & 1)) {
            S[SYM3(i, k)] = zero_i ? -s * snk : c * snk;
            S[SYM3(j, k)] = zero_i ? c * snk : s * snk;
        }
        return;
    }
    const lane mean = 0.5 * (S[SYM3(i, i)] + S[SYM3(j, j)]);
    const lane half = 0.5 * (S[SYM3(i, i)] - S[SYM3(j, j)]), sij = S[SYM3(i, j)];
    const lane d = half * cc - sij * ss;
    S[SYM3(i, i)] = mean + d;
    S[SYM3(j, j)] = mean - d;
    S[SYM3(i, j)] = half * ss + sij * cc;
    if (!(zero >> k & 1)) {
        const lane sik = S[SYM3(i, k)], sjk = S[SYM3(j, k)];
        S[SYM3(i, k)] = c * sik - s * sjk;
        S[SYM3(j, k)] = s * sik + c * sjk;
    }
}

/* M <- R^T M R for a 3x3 M (row-major) whose rows in the bit mask zero_rows are zero. */
MBD_INLINE void LANE_FN(mat3_turn)(lane M[9], int k, lane c, lane s, unsigned zero_rows)
{
    const int i = (k + 1) % 3, j = (k + 2) % 3;
    for (int row = 0; row < 3; row++) /* M R: columns i and j */
        if (!(zero_rows >> row & 1)) {
            const lane mi = M[3 * row + i], mj = M[3 * row + j];
            M[3 * row + i] = c * mi - s * mj;
            M[3 * row + j] = s * mi + c * mj;
        }
    for (int col = 0; col < 3; col++) { /* R^T (M R): rows i and j */
        const lane mi = M[3 * i + col], mj = M[3 * j + col];
        if (zero_rows >> j & 1 && !(zero_rows >> i & 1)) {
            M[3 * i + col] = c * mi;
            M[3 * j + col] = s * mi;
        } else if (zero_rows >> i & 1 && !(zero_rows >> j & 1)) {
            M[3 * i + col] = -s * mj;
            M[3 * j + col] = c * mj;
        } else {
            M[3 * i + col] = c * mi - s * mj;
            M[3 * j + col] = s * mi + c * mj;
        }
    }
}

/* The screw kernels below take X = rotz(q) rotx(alpha) xlt(a e_x) apart from X itself,
 * reading E[0] = cos q, E[3] = -sin q, row 2's E[7] = -sin alpha and E[8] = cos alpha,
 * and r[0] = a, nothing else: the batch's lanes form no more of a screw's X per call
 * (joint_kinematics), and the passes after the kinematics read no tree transform of the
 * model (at N = 10 000 its bytes came from memory in every pass). twisted: alpha != 0. */

/* M <- E^T M E for the rotation E of such an X: a turn about z, then one about x. M's rows
 * in the bit mask zero_rows are zero. */
MBD_INLINE void LANE_FN(mat3_screw_turn)(lane M[9], const lane_xform *X, int twisted,
                                         unsigned zero_rows)
{
    LANE_FN(mat3_turn)(M, 2, X->E[0], -X->E[3], zero_rows);
    if (twisted)
        LANE_FN(mat3_turn)(M, 0, X->E[8], -X->E[7], zero_after_turn(zero_rows, 2));
}

/* out = base + X^T I X for X = rotz(q) rotx(alpha) xlt(a e_x) (base NULL: body's blocks, as in
 * inertia_add_congruence): a revolute joint's turn
 * after an axial-screw tree transform. The blocks turn about z, then about x, then
 * shift along x (inertia_add_congruence with r = (a, 0, 0)):
 *   A' = A1 + M + M^T - rx C1 rx with M = rx B1^T,  B' = B1 + rx C1,  C' = C1,
 * about 50 multiplications (70 twisted) against 150-200. twice: a twisted screw's
 * (cos 2 alpha, sin 2 alpha) (mbd_joint), NULL where alpha = 0; zero_a, zero_c as in
 * inertia_add_congruence. */
MBD_INLINE void LANE_FN(inertia_add_screw_congruence)(lane_inertia *out, const lane_inertia *base,
                                                      const mbd_rigid *body, const lane_xform *X,
                                                      const double *twice, const lane_inertia *I,
                                                      unsigned zero_a, unsigned zero_c)
{
    lane_inertia T = *I;
    const lane c = X->E[0], s = -X->E[3], cc = c * c - s * s, ss = 2.0 * c * s;
    LANE_FN(sym3_turn)(T.A, 2, c, s, cc, ss, zero_a);
    LANE_FN(sym3_turn)(T.C, 2, c, s, cc, ss, zero_c);
    LANE_FN(mat3_screw_turn)(T.B, X, twice != NULL, zero_a);
    if (twice) {
        const lane ca = X->E[8], sa = -X->E[7];
        const lane cca = LANE_FN(lane_splat)(twice[0]), ssa = LANE_FN(lane_splat)(twice[1]);
        LANE_FN(sym3_turn)(T.A, 0, ca, sa, cca, ssa, zero_after_turn(zero_a, 2));
        LANE_FN(sym3_turn)(T.C, 0, ca, sa, cca, ssa, zero_after_turn(zero_c, 2));
    }
    const lane a = X->r[0], a2 = a * a;
    const lane *A1 = T.A, *B1 = T.B, *C1 = T.C;
    for (int k = 0; k < 6; k++)
        out->C[k] = LANE_FN(plus_base)(C1[k], base, body, 2, k);
    out->A[0] = LANE_FN(plus_base)(A1[0], base, body, 0, 0);
    out->A[1] = LANE_FN(plus_base)(A1[1] - a * B1[2], base, body, 0, 1);
    out->A[2] = LANE_FN(plus_base)(A1[2] + a * B1[1], base, body, 0, 2);
    out->A[3] = LANE_FN(plus_base)(A1[3] + (a2 * C1[5] - 2.0 * a * B1[5]), base, body, 0, 3);
    out->A[4] = LANE_FN(plus_base)(A1[4] + (a * (B1[4] - B1[8]) - a2 * C1[4]), base, body, 0, 4);
    out->A[5] = LANE_FN(plus_base)(A1[5] + (a2 * C1[3] + 2.0 * a * B1[7]), base, body, 0, 5);
    for (int j = 0; j < 3; j++) { /* rx C1: row 0 zero, row 1 -a (row 2 of C1), row 2 a (row 1) */
        out->B[j] = LANE_FN(plus_base)(B1[j], base, body, 1, j);
        out->B[3 + j] = LANE_FN(plus_base)(B1[3 + j] - a * C1[SYM3(2, j)], base, body, 1, 3 + j);
        out->B[6 + j] = LANE_FN(plus_base)(B1[6 + j] + a * C1[SYM3(1, j)], base, body, 1, 6 + j);
    }
}

/* v <- R v for a turn R about coordinate axis k (as above): components i and j only. */
MBD_INLINE void LANE_FN(vec3_turn)(lane v[3], int k, lane c, lane s)
{
    const int i = (k + 1) % 3, j = (k + 2) % 3;
    const lane vi = v[i], vj = v[j];
    v[i] = c * vi + s * vj;
    v[j] = c * vj - s * vi;
}

/* out = E v for the rotation E = rotz(q) rotx(alpha) of such an X: a turn about x, then
 * one about z (4 multiplications, 8 twisted); back set, E^T v: the turns back in the
 * reverse order. */
MBD_INLINE void LANE_FN(screw_rotate)(lane *restrict out, const lane_xform *X, int twisted,
                                      int back, const lane *v)
{
    for (int k = 0; k < 3; k++)
        out[k] = v[k];
    if (back) { /* E[3] and E[7] are -sin q and -sin alpha: the turns back */
        LANE_FN(vec3_turn)(out, 2, X->E[0], X->E[3]);
        if (twisted)
            LANE_FN(vec3_turn)(out, 0, X->E[8], X->E[7]);
        return;
    }
    if (twisted)
        LANE_FN(vec3_turn)(out, 0, X->E[8], -X->E[7]);
    LANE_FN(vec3_turn)(out, 2, X->E[0], -X->E[3]);
}

/* out = X m for X = rotz(q) rotx(alpha) xlt(a e_x) (as inertia_add_screw_congruence):
 * the shift along x (two products), then two turns, 10 multiplications (18 twisted)
 * against 24. */
MBD_INLINE void LANE_FN(screw_motion)(lane *restrict out, const lane_xform *X, int twisted,
                                      const lane *m)
{
    const lane a = X->r[0];
    const lane v[3] = {m[3], m[4] + a * m[2], m[5] - a * m[1]};
    LANE_FN(screw_rotate)(out, X, twisted, 0, m);
    LANE_FN(screw_rotate)(out + 3, X, twisted, 0, v);
}

/* out = X^T f for the same X: the turns back, then the shift (n + r x f). */
MBD_INLINE void LANE_FN(screw_force_t)(lane *restrict out, const lane_xform *X, int twisted,
                                       const lane *f)
{
    const lane a = X->r[0];
    LANE_FN(screw_rotate)(out, X, twisted, 1, f);
    LANE_FN(screw_rotate)(out + 3, X, twisted, 1, f + 3);
    out[1] -= a * out[5];
    out[2] += a * out[4];
}

/* Rotation matrix of the angle whose sine and cosine are s and c about unit axis a
 * (Rodrigues). */
static inline void LANE_FN(rotation_about)(lane *restrict out, const double a[3], lane s, lane c)
{
    const lane k = 1.0 - c;
    out[0] = c + k * a[0] * a[0];
    out[1] = k * a[0] * a[1] - s * a[2];
    out[2] = k * a[0] * a[2] + s * a[1];
    out[3] = k * a[1] * a[0] + s * a[2];
    out[4] = c + k * a[1] * a[1];
    out[5] = k * a[1] * a[2] - s * a[0];
    out[6] = k * a[2] * a[0] - s * a[1];
    out[7] = k * a[2] * a[1] + s * a[0];
    out[8] = c + k * a[2] * a[2];
}
