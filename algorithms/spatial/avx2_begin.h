/* avx2_begin.h: the functions that follow, to avx2_end.h, compiled for AVX2 and FMA
 * whatever the build's -march, so that one binary carries every lane width; their callers
 * run them only where the CPU has it (cpu_runs_lanes). No include guard: once per file. */
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC target("avx2,fma")
#endif
