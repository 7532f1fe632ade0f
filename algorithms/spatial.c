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
