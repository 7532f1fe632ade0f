/* scratch.c: the blocks that a workspace grows on first use, beside its one block: the
 * derivative calls' arrays and the passive forces' Jacobians. */
#include "dynamics/dynamics.h"

#include <stdlib.h>

/* *block of at least bytes, grown as needed (its size in *size). */
static void *grown_block(void **block, size_t *size, size_t bytes)
{
    if (bytes > *size) {
        const size_t rounded = (bytes + 63) / 64 * 64; /* aligned_alloc's size: a multiple */
        void *grown = aligned_alloc(64, rounded);
        if (!grown)
            return NULL;
        free(*block);
        *block = grown;
        *size = rounded;
    }
    return *block;
}

void *derivative_scratch(mbd_work *work, size_t bytes)
{
    return grown_block(&work->derivative_scratch, &work->derivative_scratch_bytes, bytes);
}

double *passive_jacobians(mbd_work *work, const double *q, const double *qd)
{
    const mbd_model *model = work->model;
    const size_t nv = (size_t)model->nv;
    double *J = grown_block(&work->passive_scratch, &work->passive_scratch_bytes,
                            (3 * nv * nv + nv) * sizeof *J);
    return J && passive_derivatives(model, work, q, qd, J, J + nv * nv) == MBD_OK ? J : NULL;
}
