/* gpu_env.h: the GPU batch's options (mbd_gpu_options) from the environment variables
 * that bench/gpu.sh sets, read here at the outermost layer (mbd-gpu-bench, test_gpu): the
 * library takes its options from the caller. */
#ifndef MBD_GPU_ENV_H
#define MBD_GPU_ENV_H

#include "mbd.h"

#include <stddef.h>

/* mbd_gpu_default_options, then each of these that is set (docs/gpu.md measures them):
 *   MBD_GPU_JIT_LEVEL       jit_level, an integer
 *   MBD_GPU_IMAGE           cubin (the default) or ptx
 *   MBD_GPU_WORKSPACE       stack (the default) or global
 *   MBD_GPU_THREADS_PER_SM  threads_per_sm, an integer
 *   MBD_GPU_INERTIA_SUMS    body (the default) or slots
 * 0, or -1 with error naming the variable and its text where that is none of these
 * (mbd_gpu_batch_new checks the integers' ranges). */
int gpu_options_from_env(mbd_gpu_options *options, char *error, size_t error_size);

#endif
