/* spatial.c: the spatial-algebra kernels too long to inline, and a vector norm. */
#include "spatial/spatial.h"

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

double vector_norm(const double *x, int n)
{
    double sum = 0.0;
    for (int k = 0; k < n; k++)
        sum += x[k] * x[k];
    return sqrt(sum);
}
