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

/* T = M E for the 3x3 block M of the 6x6 I at (row, col). */
static inline void block_times(double *restrict T, const double *I, int row, int col, const double *E)
{
    for (int i = 0; i < 3; i++) {
        const double *m = I + 6 * (row + i) + col;
        for (int j = 0; j < 3; j++)
            T[3 * i + j] = m[0] * E[j] + m[1] * E[3 + j] + m[2] * E[6 + j];
    }
}

/* (E^T T)[i][j] */
static inline double rotated_entry(const double *E, const double *T, int i, int j)
{
    return E[i] * T[j] + E[3 + i] * T[3 + j] + E[6 + i] * T[6 + j];
}

/* X^T I X with X = rot(E) xlt(r), I = [A B; B^T C] symmetric. Rotate back into the parent
 * axes, A1 = E^T A E, B1 = E^T B E, C1 = E^T C E, then shift by r:
 *   A' = A1 + rx B1^T + (rx B1^T)^T - rx C1 rx,  B' = B1 + rx C1,  C' = C1,
 * Only upper triangles of the symmetric blocks are formed; the sum stays exactly symmetric. */
void inertia_add_congruence(double *restrict I_parent, const mbd_xform *X, const double *I)
{
    const double *E = X->E, *r = X->r;
    double T[9], A1[9], B1[9], C1[9];
    block_times(T, I, 0, 0, E);
    for (int i = 0; i < 3; i++)
        for (int j = i; j < 3; j++)
            A1[3 * i + j] = rotated_entry(E, T, i, j);
    block_times(T, I, 3, 3, E);
    for (int i = 0; i < 3; i++)
        for (int j = i; j < 3; j++)
            C1[3 * i + j] = rotated_entry(E, T, i, j);
    for (int i = 1; i < 3; i++)
        for (int j = 0; j < i; j++)
            C1[3 * i + j] = C1[3 * j + i];
    block_times(T, I, 0, 3, E);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            B1[3 * i + j] = rotated_entry(E, T, i, j);

    double K[9], M[9], N[9];
    for (int j = 0; j < 3; j++) { /* K = rx C1: column j is r x (column j of C1) */
        K[j] = r[1] * C1[6 + j] - r[2] * C1[3 + j];
        K[3 + j] = r[2] * C1[j] - r[0] * C1[6 + j];
        K[6 + j] = r[0] * C1[3 + j] - r[1] * C1[j];
    }
    for (int j = 0; j < 3; j++) { /* M = rx B1^T: column j is r x (row j of B1) */
        const double *b = B1 + 3 * j;
        M[j] = r[1] * b[2] - r[2] * b[1];
        M[3 + j] = r[2] * b[0] - r[0] * b[2];
        M[6 + j] = r[0] * b[1] - r[1] * b[0];
    }
    for (int j = 0; j < 3; j++) { /* N = -rx C1 rx = rx K^T: column j is r x (row j of K) */
        const double *k = K + 3 * j;
        N[j] = r[1] * k[2] - r[2] * k[1];
        N[3 + j] = r[2] * k[0] - r[0] * k[2];
        N[6 + j] = r[0] * k[1] - r[1] * k[0];
    }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            const int u = i <= j ? 3 * i + j : 3 * j + i, l = i <= j ? 3 * j + i : 3 * i + j;
            const double b = B1[3 * i + j] + K[3 * i + j];
            I_parent[6 * i + j] += A1[u] + M[u] + M[l] + N[u];
            I_parent[6 * i + j + 3] += b;
            I_parent[6 * (j + 3) + i] += b;
            I_parent[6 * (i + 3) + j + 3] += C1[u];
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
    double T[9];
    block_times(T, I, row, col, E);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            out[3 * i + j] = rotated_entry(E, T, i, j);
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
