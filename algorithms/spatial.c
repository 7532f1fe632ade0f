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

/* I-bar from the upper triangle of the top-left block, h from its top-right block h x,
 * m from the bottom-right block m 1. */
void rigid_from_matrix(mbd_rigid *out, const double *M)
{
    for (int i = 0; i < 3; i++)
        for (int j = i; j < 3; j++)
            out->Ibar[SYM3(i, j)] = M[6 * i + j];
    out->h[0] = M[6 * 2 + 4];
    out->h[1] = M[6 * 0 + 5];
    out->h[2] = M[6 * 1 + 3];
    out->m = M[6 * 3 + 3];
}
