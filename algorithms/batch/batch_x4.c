/* batch_x4.c: the lane forms of bodies, poisson-ldlt and poisson-sweep over 4 lanes
 * (AVX2 and FMA, avx2_begin.h), from the same kernel sources as the one-state solvers;
 * batch.c calls it only where the CPU has it (cpu_runs_lanes). */
#include "batch/batch.h"

#include <stdlib.h>
#include <string.h>

#include "spatial/avx2_begin.h"

#define MBD_LANES 4
#include "spatial/lane.h"
#include "spatial/spatial_kernels.h"
#include "dynamics/joint_kernels.h"
#include "solvers/bodies_kernels.h"
#include "solvers/momentum_kernels.h"
#include "solvers/poisson_ldlt_kernels.h"
#include "solvers/poisson_sweep_kernels.h"
#include "batch/batch_lanes.h"

#include "spatial/lane_end.h"

#include "spatial/avx2_end.h"
