/* crba.c: the joint-space mass matrix H by the composite-rigid-body algorithm (its
 * recurrence: crba_kernels.h, which the GPU's dense kernel shares). */
#include "internal.h"

#include <string.h>

#include "dynamics/crba_kernels.h" /* after string.h: it calls memset and memcpy */

void crba(const mbd_model *model, mbd_work *work, double *H) { crba_lower(model, work, H); }
