/* cpu.c: what the CPU runs, asked in this one place: the lane widths of lane.h (batch.c
 * chooses its lane form by it, kinematics.c its sines and cosines, the tests their
 * expectations). */
#include "spatial/spatial.h"

int cpu_runs_lanes(int lanes)
{
    __builtin_cpu_init();
    return lanes == 8   ? __builtin_cpu_supports("avx512f")
           : lanes == 4 ? __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
                        : 0;
}
