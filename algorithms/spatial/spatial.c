/* spatial.c: the spatial-algebra kernels too long to inline, and a vector norm. */
#include "spatial/spatial.h"

#include <float.h>
#include <math.h>

/* I-bar = Ic - m cx cx (the parallel-axis shift, cx the cross-product matrix of c), h = m c. */
void rigid_inertia(mbd_rigid *out, double m, const double c[3], const double Ic[9])
{
    const double cx[9] = {0, -c[2], c[1], c[2], 0, -c[0], -c[1], c[0], 0};
    double cxcx[9];
    mat3_mul(cxcx, cx, cx);
    for (int i = 0; i < 3; i++)
        for (int j = i; j < 3; j++)
            out->Ibar[SYM3(i, j)] = Ic[3 * i + j] - m * cxcx[3 * i + j];
    for (int k = 0; k < 3; k++)
        out->h[k] = m * c[k];
    out->m = m;
}

/* With c = h / m and C = c x, I = X^T diag(Ic, m 1) X for X = [1, 0; -C, 1] (the motion
 * from the origin to the centre of mass), so I^-1 = [J, -J C; C J, 1/m - C J C] with
 * J = Ic^-1 (Featherstone 2008, section 2.13), J by its adjugate, mirrored: exactly
 * symmetric. Positive definite: Ic's leading minors > 0, each beyond round-off. */
int rigid_inverse(double out[36], const mbd_rigid *I)
{
    const double m = I->m;
    if (!(m > 0.0))
        return -1;
    const double c[3] = {I->h[0] / m, I->h[1] / m, I->h[2] / m};
    const double C[9] = {0, -c[2], c[1], c[2], 0, -c[0], -c[1], c[0], 0};
    double CC[9], Ic[9], J[9], JC[9], CJC[9];
    mat3_mul(CC, C, C);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            Ic[3 * i + j] = I->Ibar[SYM3(i, j)] + m * CC[3 * i + j];
    /* the upper triangle of Ic's adjugate (symmetric as Ic) */
    const double adj[9] = {Ic[4] * Ic[8] - Ic[5] * Ic[7],
                           Ic[2] * Ic[7] - Ic[1] * Ic[8],
                           Ic[1] * Ic[5] - Ic[2] * Ic[4],
                           0,
                           Ic[0] * Ic[8] - Ic[2] * Ic[6],
                           Ic[2] * Ic[3] - Ic[0] * Ic[5],
                           0,
                           0,
                           Ic[0] * Ic[4] - Ic[1] * Ic[3]};
    /* positive definite beyond round-off, by the pivots of Ic = L D L^T (leading minors'
     * ratios): a zero eigenvalue (a rod's, a disc's) comes back from Ibar + m C C as some
     * 1e-17 of the trace, of either sign */
    const double det = Ic[0] * adj[0] + Ic[1] * adj[1] + Ic[2] * adj[2];
    const double tol = 64.0 * DBL_EPSILON * (Ic[0] + Ic[4] + Ic[8]);
    if (!(Ic[0] > tol && adj[8] > tol * Ic[0] && det > tol * adj[8] && isfinite(1.0 / det)))
        return -1;
    for (int i = 0; i < 3; i++)
        for (int j = i; j < 3; j++)
            J[3 * i + j] = J[3 * j + i] = adj[3 * i + j] / det;
    mat3_mul(JC, J, C);
    mat3_mul(CJC, C, JC);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            out[6 * i + j] = J[3 * i + j];
            out[6 * i + 3 + j] = -JC[3 * i + j];
            out[6 * (3 + i) + j] = -JC[3 * j + i]; /* C J = -(J C)^T */
            out[6 * (3 + i) + 3 + j] = (i == j) / m - CJC[i <= j ? 3 * i + j : 3 * j + i];
        }
    return 0;
}

double vector_norm(const double *x, int n)
{
    double sum = 0.0;
    for (int k = 0; k < n; k++)
        sum += x[k] * x[k];
    return sqrt(sum);
}
