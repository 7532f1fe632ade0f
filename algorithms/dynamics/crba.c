/* crba.c: the joint-space mass matrix H by the composite-rigid-body algorithm (its
 * recurrence: crba_kernels.h, which the GPU's dense kernel shares), and H factored by
 * LAPACK's Cholesky, the one dense factorization of the dense solver and the loops' dense
 * route. The _work LAPACKE calls allocate nothing. */
#include "dynamics/dynamics.h"

#include <lapacke.h>
#include <string.h>

#include "dynamics/crba_kernels.h" /* after string.h: it calls memset and memcpy */

void crba(const mbd_model *model, mbd_work *work, double *H) { crba_lower(model, work, H); }

int dense_factor(const mbd_model *model, mbd_work *work, double *H)
{
    crba(model, work, H);
    lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'U', model->nv, H, model->nv);
    return info == 0 ? MBD_OK : singular_joint(work, body_of_dof(model, (int)info - 1));
}

int dense_solve(const mbd_model *model, const double *R, int columns, double *x)
{
    lapack_int info =
        LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'U', model->nv, columns, R, model->nv, x, model->nv);
    return info == 0 ? MBD_OK : MBD_EINVAL;
}
