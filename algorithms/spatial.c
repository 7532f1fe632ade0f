/* spatial.c: the spatial-algebra kernels too long to inline. */
#include "spatial.h"

#include <math.h>

/* [Ic - m cx cx, m cx; -m cx, m 1] with cx the cross-product matrix of c. */
void spatial_inertia(double *restrict out, double m, const double c[3], const double Ic[9])
{
    const double cx[9] = {0, -c[2], c[1], c[2], 0, -c[0], -c[1], c[0], 0};
    double cxcx[9];
    mat3_mul(cxcx, cx, cx);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            out[6 * i + j] = Ic[3 * i + j] - m * cxcx[3 * i + j];
            out[6 * i + j + 3] = m * cx[3 * i + j];
            out[6 * (i + 3) + j] = -m * cx[3 * i + j];
            out[6 * (i + 3) + j + 3] = (i == j) ? m : 0.0;
        }
}

/* out = E^T S E for a symmetric S (upper triangles in and out) */
static inline void sym3_rotate_back(double *restrict out, const double *S, const double *E)
{
    double T[9]; /* S E */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            T[3 * i + j] = S[SYM3(i, 0)] * E[j] + S[SYM3(i, 1)] * E[3 + j] + S[SYM3(i, 2)] * E[6 + j];
    for (int i = 0; i < 3; i++)
        for (int j = i; j < 3; j++)
            out[SYM3(i, j)] = E[i] * T[j] + E[3 + i] * T[3 + j] + E[6 + i] * T[6 + j];
}

/* X^T I X with X = rot(E) xlt(r). Rotate back into the parent axes, A1 = E^T A E,
 * B1 = E^T B E, C1 = E^T C E, then shift by r (rx = r x):
 *   A' = A1 + M + M^T - rx C1 rx with M = rx B1^T,  B' = B1 + rx C1,  C' = C1. */
void inertia_add_congruence(mbd_inertia *restrict I_parent, const mbd_xform *X,
                            const mbd_inertia *I)
{
    const double *E = X->E, *r = X->r;
    double A1[6], C1[6], BE[9], B1[9], K[9], M[9];
    sym3_rotate_back(A1, I->A, E);
    sym3_rotate_back(C1, I->C, E);
    mat3_mul(BE, I->B, E);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            B1[3 * i + j] = E[i] * BE[j] + E[3 + i] * BE[3 + j] + E[6 + i] * BE[6 + j];
    for (int j = 0; j < 3; j++) { /* K = rx C1: column j is r x (column j of C1) */
        const double c[3] = {C1[SYM3(0, j)], C1[SYM3(1, j)], C1[SYM3(2, j)]};
        K[j] = r[1] * c[2] - r[2] * c[1];
        K[3 + j] = r[2] * c[0] - r[0] * c[2];
        K[6 + j] = r[0] * c[1] - r[1] * c[0];
    }
    for (int j = 0; j < 3; j++) { /* M = rx B1^T: column j is r x (row j of B1) */
        const double *b = B1 + 3 * j;
        M[j] = r[1] * b[2] - r[2] * b[1];
        M[3 + j] = r[2] * b[0] - r[0] * b[2];
        M[6 + j] = r[0] * b[1] - r[1] * b[0];
    }
    for (int i = 0; i < 3; i++) {
        const double *k = K + 3 * i; /* -rx C1 rx = K rx^T: entry (i, j) is (r x row i of K)_j */
        const double n[3] = {r[1] * k[2] - r[2] * k[1], r[2] * k[0] - r[0] * k[2],
                             r[0] * k[1] - r[1] * k[0]};
        for (int j = i; j < 3; j++) {
            I_parent->A[SYM3(i, j)] += A1[SYM3(i, j)] + M[3 * i + j] + M[3 * j + i] + n[j];
            I_parent->C[SYM3(i, j)] += C1[SYM3(i, j)];
        }
        for (int j = 0; j < 3; j++)
            I_parent->B[3 * i + j] += B1[3 * i + j] + K[3 * i + j];
    }
}

void inertia_from_matrix(mbd_inertia *out, const double *M)
{
    for (int i = 0; i < 3; i++) {
        for (int j = i; j < 3; j++) {
            out->A[SYM3(i, j)] = M[6 * i + j];
            out->C[SYM3(i, j)] = M[6 * (i + 3) + j + 3];
        }
        for (int j = 0; j < 3; j++)
            out->B[3 * i + j] = M[6 * i + j + 3];
    }
}

void inertia_to_matrix(double *out, const mbd_inertia *I)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            out[6 * i + j] = I->A[SYM3(i, j)];
            out[6 * i + j + 3] = I->B[3 * i + j];
            out[6 * (i + 3) + j] = I->B[3 * j + i];
            out[6 * (i + 3) + j + 3] = I->C[SYM3(i, j)];
        }
}

void rotation_about(double *restrict out, const double a[3], double q)
{
    const double s = sin(q), c = cos(q), k = 1.0 - c;
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

/* out = E^T M E for the 3x3 block M of the 6x6 I at (row, col). */
static inline void block_rotate_back(double *restrict out, const double *I, int row, int col,
                                     const double *E)
{
    double T[9]; /* M E */
    for (int i = 0; i < 3; i++) {
        const double *m = I + 6 * (row + i) + col;
        for (int j = 0; j < 3; j++)
            T[3 * i + j] = m[0] * E[j] + m[1] * E[3 + j] + m[2] * E[6 + j];
    }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            out[3 * i + j] = E[i] * T[j] + E[3 + i] * T[3 + j] + E[6 + i] * T[6 + j];
}

/* General M = [A B; C D]: A' = A - B rx + rx C - rx D rx, B' = B + rx D, C' = C - D rx. */
void matrix_add_congruence(double *restrict M_parent, const mbd_xform *X, const double *M)
{
    double A[9], B[9], C[9], D[9];
    block_rotate_back(A, M, 0, 0, X->E);
    block_rotate_back(B, M, 0, 3, X->E);
    block_rotate_back(C, M, 3, 0, X->E);
    block_rotate_back(D, M, 3, 3, X->E);
    const double *r = X->r;
    const double rx[9] = {0, -r[2], r[1], r[2], 0, -r[0], -r[1], r[0], 0};
    double Brx[9], rxC[9], rxD[9], rxDrx[9], Drx[9];
    mat3_mul(Brx, B, rx);
    mat3_mul(rxC, rx, C);
    mat3_mul(rxD, rx, D);
    mat3_mul(rxDrx, rxD, rx);
    mat3_mul(Drx, D, rx);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            const int k = 3 * i + j;
            M_parent[6 * i + j] += A[k] - Brx[k] + rxC[k] - rxDrx[k];
            M_parent[6 * i + j + 3] += B[k] + rxD[k];
            M_parent[6 * (i + 3) + j] += C[k] - Drx[k];
            M_parent[6 * (i + 3) + j + 3] += D[k];
        }
}
