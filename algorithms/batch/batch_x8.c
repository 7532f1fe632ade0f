/* batch_x8.c: the lane forms of bodies, poisson-ldlt and poisson-sweep over 8 lanes
 * (AVX-512 (F) and FMA), from the same kernel sources as the one-state solvers. Compiled
 * for that target by the pragma below whatever the build's -march, so that one binary
 * carries every width; batch.c calls it only where the CPU has it (cpu_runs_lanes). */
#include "batch/batch.h"

#include <stdlib.h>
#include <string.h>

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,fma"))), apply_to = function)
#else
#pragma GCC target("avx512f,fma")
#endif

#define MBD_LANES 8
#include "spatial/lane.h"
#include "spatial/spatial_kernels.h"
#include "dynamics/joint_kernels.h"
#include "solvers/bodies_kernels.h"
#include "solvers/momentum_kernels.h"
#include "solvers/poisson_ldlt_kernels.h"
#include "solvers/poisson_sweep_kernels.h"
#include "batch/batch_lanes.h"
#include "spatial/lane_end.h"

#if defined(__clang__)
#pragma clang attribute pop
#endif
