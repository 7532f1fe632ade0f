/* machine.c: the machine's FP64 and memory rates, measured as the benchmarks are (the
 * timing core's iteration growth, the median of the repetitions), so that the report's
 * targets can be ratios to them rather than absolute times. */
#include "machine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* gcc would turn copy's loop into a call of memcpy, whose non-temporal stores on large
 * arrays are not what STREAM's compiled loop does. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-tree-loop-distribute-patterns")
#endif

/* The widest SIMD vector of doubles that the build targets. */
#if defined(__AVX512F__)
#define LANES 8
#elif defined(__AVX__)
#define LANES 4
#else
#define LANES 2 /* SSE2: every x86-64 */
#endif
typedef double lanes_t __attribute__((vector_size(LANES * sizeof(double))));

/* Independent multiply-add chains: at least latency × units (4 cycles × 2 FMA units on
 * current x86 cores) keep every unit busy; 12 and the two constants fit AVX2's 16
 * registers. */
#define FMA_CHAINS 12
#define FMA_STEPS 256 /* per chain and iteration */
/* Independent sums of the load kernel: as many as the adds in flight. */
#define LOAD_SUMS 8
#define EACH_SUM(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

#define FMA_STEP(a) a = a * m + c;
#define EACH_CHAIN(X) X(a0) X(a1) X(a2) X(a3) X(a4) X(a5) X(a6) X(a7) X(a8) X(a9) X(a10) X(a11)

/* a = a m + c on FMA_CHAINS chains of T (double or lanes_t): 2 flops a lane each, fused
 * where the target has FMA (-ffp-contract=fast); m < 1 keeps a finite and normal. Each
 * chain starts elsewhere (the compiler would merge equal ones), and their sum goes to
 * sink, so that none is dropped. */
#define FMA_KERNEL(name, T)                                                                        \
    static int name(void *sink, long iterations)                                                   \
    {                                                                                              \
        const T m = (T){0} + 0.999999, c = (T){0} + 1e-3;                                          \
        T a0 = c, a1 = 2 * c, a2 = 3 * c, a3 = 4 * c, a4 = 5 * c, a5 = 6 * c, a6 = 7 * c,          \
          a7 = 8 * c, a8 = 9 * c, a9 = 10 * c, a10 = 11 * c, a11 = 12 * c;                         \
        for (long i = 0; i < iterations; i++)                                                      \
            for (int s = 0; s < FMA_STEPS; s++) {                                                  \
                EACH_CHAIN(FMA_STEP)                                                               \
            }                                                                                      \
        const T sum = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;                 \
        memcpy(sink, &sum, sizeof sum);                                                            \
        return 0;                                                                                  \
    }
FMA_KERNEL(fma_scalar, double)
FMA_KERNEL(fma_lanes, lanes_t)

/* STREAM's arrays (McCalpin 1995), each far bigger than the last-level cache. */
typedef struct {
    double *a, *b, *c;
    long n;
    int threads;
} stream_arrays;

static int copy_body(void *ctx, long iterations)
{
    const stream_arrays *s = ctx;
    double *restrict c = s->c;
    const double *restrict a = s->a;
    for (long i = 0; i < iterations; i++) {
#pragma omp parallel for schedule(static) num_threads(s->threads)
        for (long j = 0; j < s->n; j++)
            c[j] = a[j];
        timing_clobber();
    }
    return 0;
}

static int triad_body(void *ctx, long iterations)
{
    const stream_arrays *s = ctx;
    double *restrict a = s->a;
    const double *restrict b = s->b, *restrict c = s->c, scalar = 3.0;
    for (long i = 0; i < iterations; i++) {
#pragma omp parallel for schedule(static) num_threads(s->threads)
        for (long j = 0; j < s->n; j++)
            a[j] = b[j] + scalar * c[j];
        timing_clobber();
    }
    return 0;
}

/* An array that stays in one cache level, summed in SIMD vectors. */
typedef struct {
    const lanes_t *x;
    long vectors; /* a multiple of LOAD_SUMS */
    double sink[LANES];
} load_array;

#define LOAD_DECLARE(k) lanes_t s##k = {0};
#define LOAD_ADD(k) s##k += l->x[j + k];
static int load_body(void *ctx, long iterations)
{
    load_array *l = ctx;
    EACH_SUM(LOAD_DECLARE)
    for (long i = 0; i < iterations; i++) {
        for (long j = 0; j < l->vectors; j += LOAD_SUMS) {
            EACH_SUM(LOAD_ADD)
        }
        timing_clobber();
    }
    const lanes_t sum = s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7;
    memcpy(l->sink, &sum, sizeof sum);
    return 0;
}

/* One kernel to time: work units (flops or bytes) per iteration of body on ctx. */
typedef struct {
    const char *name, *label;
    timing_body body;
    void *ctx;
    int threads, lanes;
    double work;
    int flops; /* work counts flops (else bytes) */
    long elements;
} machine_kernel;

/* Times the kernel; its entry of the context, and a line on stderr. */
static json_t *measure_kernel(const timing_options *options, const machine_kernel *k, double ghz)
{
    timing_options o = *options;
    o.cpu_clock = k->threads == 1 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_PROCESS_CPUTIME_ID;
    timing_result t;
    if (timing_measure(&o, k->body, k->ctx, &t) != 0)
        return NULL;
    /* as the benchmarks: cpu time on one thread, real time (throughput) on several */
    const double *quoted = k->threads == 1 ? t.cpu : t.real;
    const double seconds = timing_statistic(STAT_MEDIAN, quoted, t.repetitions);
    const double rate = k->work / seconds / 1e9;
    fprintf(stderr, "machine: %-28s %8.2f %s", k->label, rate, k->flops ? "GFLOP/s" : "GB/s");
    if (k->flops && ghz > 0)
        fprintf(stderr, " (%.1f flops per cycle at %.2f GHz)", rate / ghz, ghz);
    fprintf(stderr, ", cv %.3f\n", timing_statistic(STAT_CV, quoted, t.repetitions));
    json_t *entry =
        json_pack("{s:i, s:f, s:f, s:f, s:i}", "threads", k->threads, k->flops ? "flops" : "bytes",
                  k->work, "seconds", seconds, k->flops ? "gflops" : "gbytes_per_second", rate,
                  "repetitions", t.repetitions);
    if (k->lanes)
        json_object_set_new(entry, "lanes", json_integer(k->lanes));
    if (k->elements)
        json_object_set_new(entry, "elements", json_integer(k->elements));
    return entry;
}

/* The size of the cache of level and type ("Data", "Unified"), summed over its instances
 * where total; fallback where the context has none. */
static double cache_bytes(const json_t *caches, int level, int total, double fallback)
{
    size_t index;
    json_t *cache;
    double bytes = 0;
    json_array_foreach(caches, index, cache)
    {
        const char *type = json_string_value(json_object_get(cache, "type"));
        if (json_integer_value(json_object_get(cache, "level")) != level || !type ||
            !strcmp(type, "Instruction"))
            continue;
        const double size = (double)json_integer_value(json_object_get(cache, "size"));
        const double sharing = (double)json_integer_value(json_object_get(cache, "num_sharing"));
        bytes = total && sharing > 0 ? size * ceil((double)sysconf(_SC_NPROCESSORS_ONLN) / sharing)
                                     : size;
    }
    return bytes > 0 ? bytes : fallback;
}

static int last_cache_level(const json_t *caches)
{
    size_t index;
    json_t *cache;
    int level = 0;
    json_array_foreach(caches, index, cache)
    {
        const int l = (int)json_integer_value(json_object_get(cache, "level"));
        level = l > level ? l : level;
    }
    return level;
}

/* STREAM's rule: each array at least 4 times all last-level caches together; at most a
 * sixteenth of the memory, which a machine with more cache than that cannot fill. */
static long stream_elements(const json_t *caches)
{
    const double llc = cache_bytes(caches, last_cache_level(caches), 1, 32 << 20);
    const double memory = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    double bytes = 4 * llc;
    if (memory > 0 && bytes > memory / 16)
        bytes = memory / 16;
    return (long)(bytes / sizeof(double)) / 64 * 64;
}

/* Half a cache of the level, whole SIMD vectors, a multiple of LOAD_SUMS of them. */
static long load_vectors(const json_t *caches, int level, double fallback)
{
    const long vectors = (long)(cache_bytes(caches, level, 0, fallback) / 2 / sizeof(lanes_t));
    return vectors / LOAD_SUMS * LOAD_SUMS;
}

static void add(json_t *machine, const timing_options *options, const machine_kernel *k, double ghz,
                int *failed)
{
    json_t *entry = measure_kernel(options, k, ghz);
    if (entry)
        json_object_set_new(machine, k->name, entry);
    else
        *failed = 1;
}

static int measure_memory(json_t *machine, const timing_options *options, const json_t *caches,
                          int all)
{
    const long n = stream_elements(caches);
    stream_arrays s = {aligned_alloc(64, (size_t)n * sizeof(double)),
                       aligned_alloc(64, (size_t)n * sizeof(double)),
                       aligned_alloc(64, (size_t)n * sizeof(double)), n, 1};
    if (!s.a || !s.b || !s.c) {
        fprintf(stderr, "machine: no memory for STREAM's 3 arrays of %ld doubles: no bandwidth\n",
                n);
        free(s.a), free(s.b), free(s.c);
        return 1;
    }
    /* first touched by the threads that will stream them (schedule(static) as there) */
#pragma omp parallel for schedule(static) num_threads(all)
    for (long j = 0; j < n; j++)
        s.a[j] = 1.0, s.b[j] = 2.0, s.c[j] = 0.5;
    stream_arrays one = s, every = s;
    every.threads = all;
    char label_copy[64], label_triad[64];
    snprintf(label_copy, sizeof label_copy, "copy, %d threads", all);
    snprintf(label_triad, sizeof label_triad, "triad, %d threads", all);
    const machine_kernel kernels[] = {
        {"copy", "copy, 1 thread", copy_body, &one, 1, 0, (double)n * MACHINE_COPY_BYTES, 0, n},
        {"triad", "triad, 1 thread", triad_body, &one, 1, 0, (double)n * MACHINE_TRIAD_BYTES, 0, n},
        {"copy_all_threads", label_copy, copy_body, &every, all, 0, (double)n * MACHINE_COPY_BYTES,
         0, n},
        {"triad_all_threads", label_triad, triad_body, &every, all, 0,
         (double)n * MACHINE_TRIAD_BYTES, 0, n},
    };
    int failed = 0;
    for (size_t k = 0; k < sizeof kernels / sizeof *kernels; k++)
        add(machine, options, &kernels[k], 0, &failed);
    free(s.a), free(s.b), free(s.c);
    return failed;
}

static int measure_loads(json_t *machine, const timing_options *options, const json_t *caches)
{
    const long l1 = load_vectors(caches, 1, 32 << 10), l2 = load_vectors(caches, 2, 512 << 10);
    lanes_t *x = aligned_alloc(64, (size_t)l2 * sizeof *x);
    if (!x) {
        fprintf(stderr, "machine: no memory for the load kernel\n");
        return 1;
    }
    for (long j = 0; j < l2; j++)
        x[j] = (lanes_t){0} + 1.0;
    load_array in_l1 = {x, l1, {0}}, in_l2 = {x, l2, {0}};
    const double bytes = sizeof *x;
    const machine_kernel kernels[] = {
        {"l1_load", "L1-resident loads, 1 thread", load_body, &in_l1, 1, LANES, bytes * l1, 0,
         l1 * LANES},
        {"l2_load", "L2-resident loads, 1 thread", load_body, &in_l2, 1, LANES, bytes * l2, 0,
         l2 * LANES},
    };
    int failed = 0;
    for (size_t k = 0; k < sizeof kernels / sizeof *kernels; k++)
        add(machine, options, &kernels[k], 0, &failed);
    free(x);
    return failed;
}

int bench_machine_measure(const timing_options *options, const json_t *caches, int all_threads,
                          json_t *context)
{
    const double ghz = (double)json_integer_value(json_object_get(context, "mhz_per_cpu")) / 1000;
    json_t *machine = json_object();
    double sink[LANES];
    const double per_lane = 2.0 * FMA_CHAINS * FMA_STEPS;
    char label[64];
    snprintf(label, sizeof label, "FP64 FMA, 1 thread, %d lanes", LANES);
    const machine_kernel peaks[] = {
        {"fp64_scalar", "FP64 FMA, 1 thread, scalar", fma_scalar, sink, 1, 1, per_lane, 1, 0},
        {"fp64_simd", label, fma_lanes, sink, 1, LANES, per_lane * LANES, 1, 0},
    };
    int failed = 0;
    for (size_t k = 0; k < sizeof peaks / sizeof *peaks; k++)
        add(machine, options, &peaks[k], ghz, &failed);
    failed |= measure_loads(machine, options, caches);
    failed |= measure_memory(machine, options, caches, all_threads);
    json_object_set_new(context, "machine", machine);
    return failed;
}
