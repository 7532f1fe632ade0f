/* machine.h: the machine's own rates, which the report's targets are ratios to: the
 * one-thread FP64 peak (fused multiply-adds, scalar and at the widest SIMD the build
 * targets), the memory bandwidth (STREAM's copy and triad, one thread and all threads) and
 * the L1- and L2-resident load rates. */
#ifndef MBD_BENCH_MACHINE_H
#define MBD_BENCH_MACHINE_H

#include "../src/timing.h"

#include <jansson.h>

/* Bytes that STREAM counts per element (McCalpin 1995): a read and a write for copy
 * (c = a), two reads and a write for triad (a = b + s c); write-allocate traffic is not
 * counted. */
#define MACHINE_COPY_BYTES (2 * (int)sizeof(double))
#define MACHINE_TRIAD_BYTES (3 * (int)sizeof(double))

/* Measures every rate with options' min_time and repetitions (the median is quoted: the
 * thread's cpu time on one thread, real time on all), printing each on stderr as it
 * comes, and sets context's "machine" to {kernel: {threads, lanes, elements, flops or
 * bytes per iteration, seconds, gflops or gbytes_per_second}}; caches is the context's
 * "caches" array, which sizes the arrays, and all_threads the threads of the all-thread
 * kernels (the last of --threads: all cores by default, as the batch suite's). Returns 0, or 1 after a message where a kernel could
 * not run (its entry is then absent). */
int bench_machine_measure(const timing_options *options, const json_t *caches, int all_threads,
                          json_t *context);

#endif
