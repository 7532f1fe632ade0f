/* sincos_x4.c: the one-state kinematics' sines and cosines 4 at a time (AVX2 and FMA,
 * avx2_begin.h); kinematics.c calls it only where the CPU has it (cpu_runs_lanes). */
#include <string.h>

#include "dynamics/dynamics.h"

#include "spatial/avx2_begin.h"

#define MBD_LANES 4
#include "spatial/lane.h"

/* The one-state kinematics' sines and cosines, all coordinates in one pass (kinematics.c).
 * 4 lanes, not 8, though the CPU may have them: with 512-bit vectors in a one-state call
 * the whole call ran 3% slower (the core's AVX-512 clock), with 256-bit ones 7% faster
 * than a libm call per angle. */
void sincos_x4(const double *x, int n, double *s, double *c)
{
    typedef LANE_FN(row_chunk) chunk;
    lane sin_x, cos_x;
    int j = 0;
    for (; j + MBD_LANES <= n; j += MBD_LANES) {
        LANE_FN(lane_sincos)(*(const chunk *)(x + j), &sin_x, &cos_x);
        *(chunk *)(s + j) = sin_x;
        *(chunk *)(c + j) = cos_x;
    }
    if (j < n) { /* the last n - j, the other lanes zeros */
        const size_t bytes = (size_t)(n - j) * sizeof(double);
        lane tail = LANE_FN(lane_splat)(0.0);
        memcpy(&tail, x + j, bytes);
        LANE_FN(lane_sincos)(tail, &sin_x, &cos_x);
        memcpy(s + j, &sin_x, bytes);
        memcpy(c + j, &cos_x, bytes);
    }
}
#include "spatial/lane_end.h"

#include "spatial/avx2_end.h"
