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

/* out = E^T M E for the 3x3 block of the 6x6 I at (row, col). */
static void block_rotate_back(double *restrict out, const double *I, int row, int col,
                              const double *E)
{
    double M[9], ME[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            M[3 * i + j] = I[6 * (row + i) + col + j];
    mat3_mul(ME, M, E);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            out[3 * i + j] = E[i] * ME[j] + E[3 + i] * ME[3 + j] + E[6 + i] * ME[6 + j];
}

/* X^T I X with X = rot(E) xlt(r): first rotate the three 3x3 blocks of
 * I = [A B; B^T C] back into the parent axes, then shift by r:
 * A' = A + rx B^T + (rx B^T)^T - rx C rx,  B' = B + rx C,  C' = C. */
void inertia_add_congruence(double *restrict I_parent, const mbd_xform *X, const double *I)
{
    double A[9], B[9], C[9];
    block_rotate_back(A, I, 0, 0, X->E);
    block_rotate_back(B, I, 0, 3, X->E);
    block_rotate_back(C, I, 3, 3, X->E);

    const double *r = X->r;
    const double rx[9] = {0, -r[2], r[1], r[2], 0, -r[0], -r[1], r[0], 0};
    double rxC[9], rxCrx[9], rxBt[9];
    mat3_mul(rxC, rx, C);
    mat3_mul(rxCrx, rxC, rx);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            rxBt[3 * i + j] = vec3_dot(rx + 3 * i, B + 3 * j);
    for (int i = 0; i < 3; i++) /* upper triangles mirrored: the sum stays exactly symmetric */
        for (int j = 0; j < 3; j++) {
            const int u = i <= j ? 3 * i + j : 3 * j + i;
            const double b = B[3 * i + j] + rxC[3 * i + j];
            I_parent[6 * i + j] += A[u] + rxBt[3 * i + j] + rxBt[3 * j + i] - rxCrx[u];
            I_parent[6 * i + j + 3] += b;
            I_parent[6 * (j + 3) + i] += b;
            I_parent[6 * (i + 3) + j + 3] += C[u];
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

int small_cholesky(double *A, int n)
{
    for (int j = 0; j < n; j++) {
        double d = A[n * j + j];
        for (int k = 0; k < j; k++)
            d -= A[n * j + k] * A[n * j + k];
        if (!(d > 0.0) || !isfinite(d))
            return -1;
        const double ljj = sqrt(d);
        A[n * j + j] = ljj;
        for (int i = j + 1; i < n; i++) {
            double s = A[n * i + j];
            for (int k = 0; k < j; k++)
                s -= A[n * i + k] * A[n * j + k];
            A[n * i + j] = s / ljj;
        }
    }
    return 0;
}

void small_forward_subst(const double *L, int n, double *x)
{
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < i; k++)
            x[i] -= L[n * i + k] * x[k];
        x[i] /= L[n * i + i];
    }
}

void small_backward_subst(const double *L, int n, double *x)
{
    for (int i = n - 1; i >= 0; i--) {
        for (int k = i + 1; k < n; k++)
            x[i] -= L[n * k + i] * x[k];
        x[i] /= L[n * i + i];
    }
}

int small_spd_inverse(double *restrict out, const double *A, int n)
{
    double M[36];
    for (int k = 0; k < n * n; k++) {
        M[k] = A[k];
        out[k] = 0.0;
    }
    for (int k = 0; k < n; k++)
        out[n * k + k] = 1.0;
    for (int j = 0; j < n; j++) {
        const double pivot = M[n * j + j];
        if (!(pivot > 0.0) || !isfinite(pivot))
            return -1;
        for (int k = 0; k < n; k++) {
            M[n * j + k] /= pivot;
            out[n * j + k] /= pivot;
        }
        for (int i = 0; i < n; i++) {
            const double factor = M[n * i + j];
            if (i == j || factor == 0.0)
                continue;
            for (int k = 0; k < n; k++) {
                M[n * i + k] -= factor * M[n * j + k];
                out[n * i + k] -= factor * out[n * j + k];
            }
        }
    }
    return 0;
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
