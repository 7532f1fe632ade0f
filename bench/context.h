/* context.h: the machine and build a run was made on, as Google Benchmark's "context". */
#ifndef MBD_BENCH_CONTEXT_H
#define MBD_BENCH_CONTEXT_H

#include <jansson.h>
#include <stdio.h>

/* date, host_name, executable, num_cpus, mhz_per_cpu, cpu_model, cpu_scaling_enabled,
 * caches, load_avg, library_build_type, compiler, compiler_version, compiler_flags,
 * git_commit, openblas_config, omp_max_threads, omp_wait_policy. The caller adds its
 * settings. */
json_t *bench_context_collect(const char *executable);

/* The human summary on stderr, in the manner of Google Benchmark's. */
void bench_context_print(const json_t *context, FILE *out);

#endif
