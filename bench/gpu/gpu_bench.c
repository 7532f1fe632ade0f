/* gpu_bench.c: mbd-gpu-bench, the GPU's timings against the CPU batch on the same machine
 * (bench/gpu.sh runs it there). For each body count N of the revolute chain
 * autotree-chain, each solver S with a GPU kernel (bodies, poisson-ldlt in its momentum
 * form, dense) and each K (--min-k, 4 times that, ... up to 2^20 states, as far as K times
 * the solver's cost, N or N^2 for dense, stays within --max-bodies):
 *
 *   gpu_S/autotree-chain/n:N/k:K            the kernel alone, states already on the GPU
 *   gpu_S-copies/autotree-chain/n:N/k:K     with the copies in and out (host arrays)
 *   batch_S/autotree-chain/n:N/k:K/threads:T the CPU batch (mbd_batch, T threads)
 *
 * the GPU's rows once per driver optimisation level of --jit-levels (default 4; its
 * jit_level), those of a level L other than 0 with /jit:L at the end. The GPU's other
 * options come from the environment variables that bench/gpu.sh sets (gpu_env.h).
 *
 * Real time per call (the GPU calls return once the kernel is done); Google Benchmark's
 * schema with the counters bodies, ns_per_body (per state) and states_per_second, the
 * device in the context. The JSON, DIR/gpu-<device>.json, is written anew after each
 * measurement, so that a run cut short keeps what it measured. */
#include "../context.h"
#include "../harness.h"
#include "gpu_env.h"
#include "mbd.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FAMILY "autotree-chain"
#define FAMILY_SPEC "tree:n=%d,branching=1,skew=0.5"

/* Up to 8 comma-separated integers. */
typedef struct {
    int at[8], count;
} int_list;

typedef struct {
    const char *out_dir;
    int_list ns, jit_levels;
    int cpu_threads, min_k, max_k; /* cpu_threads 0: no CPU rows */
    double max_bodies;             /* N K at most */
    double budget;                 /* seconds: no new measurement after */
    timing_options timing;
    mbd_gpu_options gpu; /* jit_level set per batch */
} gpu_bench_config;

/* The solvers with a GPU kernel; momentum: the kernel runs that form (x is p, y qd, z
 * pd); cost_power: a state's work grows as N^cost_power on the chain (dense: CRBA's N^2,
 * and its Cholesky's N^3 / 6 flops, which the GPU's threads run at FP64 rate). */
static const struct {
    const char *name;
    int momentum, cost_power;
} gpu_solvers[] = {{"bodies", 0, 1}, {"poisson-ldlt", 1, 1}, {"dense", 0, 2}};
#define GPU_SOLVERS ((int)(sizeof gpu_solvers / sizeof gpu_solvers[0]))

typedef struct {
    const mbd_model *model;
    int K, momentum;
    mbd_gpu_batch *gpu;
    mbd_batch *cpu;
    const double *q, *x, *tau;
    double *y, *z;
    int *status;
    mbd_gpu_ptr on_gpu[6]; /* q, x, tau, y, z, status */
} gpu_bench_work;

static int kernel_body(void *ctx, long iterations)
{
    gpu_bench_work *w = ctx;
    const mbd_gpu_ptr *a = w->on_gpu;
    int rc = MBD_OK;
    for (long i = 0; i < iterations && !rc; i++)
        rc = w->momentum ? mbd_gpu_batch_forward_momentum_on_gpu(w->model, w->gpu, w->K, a[0], a[1],
                                                                 a[2], a[3], a[4], a[5])
                         : mbd_gpu_batch_forward_on_gpu(w->model, w->gpu, w->K, a[0], a[1], a[2],
                                                        a[3], a[5]);
    return rc;
}

static int copies_body(void *ctx, long iterations)
{
    gpu_bench_work *w = ctx;
    int rc = MBD_OK;
    for (long i = 0; i < iterations && !rc; i++)
        rc = w->momentum ? mbd_gpu_batch_forward_momentum(w->model, w->gpu, w->K, w->q, w->x,
                                                          w->tau, w->y, w->z, w->status)
                         : mbd_gpu_batch_forward(w->model, w->gpu, w->K, w->q, w->x, w->tau, w->y,
                                                 w->status);
    return rc;
}

static int cpu_body(void *ctx, long iterations)
{
    gpu_bench_work *w = ctx;
    int rc = MBD_OK;
    for (long i = 0; i < iterations && !rc; i++)
        rc = w->momentum
                 ? mbd_batch_forward_momentum(w->model, w->cpu, w->K, w->q, w->x, w->tau, w->y,
                                              w->z, w->status)
                 : mbd_batch_forward(w->model, w->cpu, w->K, w->q, w->x, w->tau, w->y, w->status);
    timing_clobber();
    return rc;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct {
    bench_results results;
    json_t *context;
    char path[512];
    double start;
    const gpu_bench_config *config;
} gpu_bench_run;

/* One measurement as a row named `name` (its /threads:T, or /jit:L for a GPU row of
 * level L > 0, at the end); the JSON written anew. */
static void measure(gpu_bench_run *run, const char *name, timing_body body, gpu_bench_work *w,
                    int threads, int jit_level)
{
    if (bench_stop || now() - run->start > run->config->budget)
        return;
    timing_result result;
    const int rc = timing_measure(&run->config->timing, body, w, &result);
    if (rc) {
        fprintf(stderr, "mbd-gpu-bench: %s: %s (%s)\n", name, mbd_strerror(rc),
                body != cpu_body && w->gpu ? mbd_gpu_batch_error(w->gpu) : "the CPU batch");
        return;
    }
    bench_key key = {.suite = SUITE_BATCH,
                     .family = FAMILY,
                     .n = mbd_model_nbodies(w->model),
                     .k = w->K,
                     .threads = threads};
    snprintf(key.variant, sizeof key.variant, "%s", name);
    if (jit_level)
        snprintf(key.variant + strlen(key.variant), sizeof key.variant - strlen(key.variant),
                 "/jit:%d", jit_level);
    bench_record *record = bench_add(&run->results, &key, mbd_model_nbodies(w->model),
                                     mbd_model_nv(w->model), w->K, &result);
    if (!record)
        return;
    snprintf(record->name, sizeof record->name, "%s/%s/n:%d/k:%d", name, FAMILY, key.n, w->K);
    if (threads || jit_level)
        snprintf(record->name + strlen(record->name), sizeof record->name - strlen(record->name),
                 threads ? "/threads:%d" : "/jit:%d", threads ? threads : jit_level);
    bench_print_record(stdout, record);
    fflush(stdout);
    bench_write_json(&run->results, run->context, run->path);
}

/* Random states for K of the model: q, x, tau in [-1, 1), then y and z. */
static double *random_states(const mbd_model *model, int K)
{
    const size_t n = (size_t)K * (size_t)(mbd_model_nq(model) + 5 * mbd_model_nv(model));
    double *x = malloc(n * sizeof *x);
    uint64_t s = 0x9e3779b97f4a7c15u;
    for (size_t i = 0; x && i < n; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        x[i] = (double)(s >> 11) * 0x1p-52 - 1.0;
    }
    return x;
}

static int upload(gpu_bench_work *w)
{
    const size_t nv_bytes = (size_t)w->K * mbd_model_nv(w->model) * sizeof(double);
    const size_t sizes[6] = {(size_t)w->K * mbd_model_nq(w->model) * sizeof(double),
                             nv_bytes,
                             nv_bytes,
                             nv_bytes,
                             nv_bytes,
                             (size_t)w->K * sizeof(int)};
    const void *from[3] = {w->q, w->x, w->tau};
    for (int a = 0; a < 6; a++)
        if (mbd_gpu_alloc(w->gpu, sizes[a], &w->on_gpu[a]) ||
            (a < 3 && mbd_gpu_copy_to(w->gpu, w->on_gpu[a], from[a], sizes[a])))
            return MBD_ENOMEM;
    return MBD_OK;
}

static void release(gpu_bench_work *w)
{
    for (int a = 0; a < 6; a++)
        if (w->gpu && w->on_gpu[a])
            mbd_gpu_release(w->gpu, w->on_gpu[a]);
    memset(w->on_gpu, 0, sizeof w->on_gpu);
}

/* A GPU batch of the model and solver with the options at the driver's optimisation level
 * `level`, or NULL (said on stderr). */
static mbd_gpu_batch *gpu_batch_at(const mbd_model *model, const mbd_solver *solver,
                                   mbd_gpu_options options, int level)
{
    options.jit_level = level;
    mbd_gpu_batch *gpu = NULL;
    char why[256];
    const int rc = mbd_gpu_batch_new(model, solver, &options, &gpu, why, sizeof why);
    if (rc)
        fprintf(stderr, "mbd-gpu-bench: %s, n %d, level %d: %s (%s)\n", mbd_solver_name(solver),
                mbd_model_nbodies(model), level, mbd_strerror(rc), why);
    return gpu;
}

/* Every K of one solver on one model, the GPU at each level, the CPU batch once. */
static void run_solver(gpu_bench_run *run, gpu_bench_work *w, int solver, int max_k)
{
    const gpu_bench_config *config = run->config;
    const mbd_solver *row = mbd_solver_find(gpu_solvers[solver].name);
    const int n = mbd_model_nbodies(w->model);
    const double cost = pow(n, gpu_solvers[solver].cost_power);
    char gpu_name[64], copies_name[64], cpu_name[64];
    snprintf(gpu_name, sizeof gpu_name, "gpu_%s", gpu_solvers[solver].name);
    snprintf(copies_name, sizeof copies_name, "gpu_%s-copies", gpu_solvers[solver].name);
    snprintf(cpu_name, sizeof cpu_name, "batch_%s", gpu_solvers[solver].name);
    w->momentum = gpu_solvers[solver].momentum;
    mbd_gpu_batch *gpus[8] = {NULL};
    for (int l = 0; l < config->jit_levels.count; l++)
        gpus[l] = gpu_batch_at(w->model, row, config->gpu, config->jit_levels.at[l]);
    if (!config->cpu_threads ||
        mbd_batch_new(w->model, row, config->cpu_threads, 0, &w->cpu) == MBD_OK)
        for (int K = config->min_k; K <= max_k && K * cost <= config->max_bodies && !bench_stop;
             K *= 4) {
            w->K = K;
            for (int l = 0; l < config->jit_levels.count; l++) {
                if (!(w->gpu = gpus[l]))
                    continue;
                if (upload(w) == MBD_OK)
                    measure(run, gpu_name, kernel_body, w, 0, config->jit_levels.at[l]);
                release(w);
                measure(run, copies_name, copies_body, w, 0, config->jit_levels.at[l]);
            }
            if (config->cpu_threads && K * cost <= config->max_bodies / 4) /* slower: fewer */
                measure(run, cpu_name, cpu_body, w, config->cpu_threads, 0);
        }
    for (int l = 0; l < config->jit_levels.count; l++)
        mbd_gpu_batch_free(gpus[l]);
    mbd_batch_free(w->cpu);
    w->gpu = NULL;
    w->cpu = NULL;
}

/* Every solver and K of one N. */
static void run_n(gpu_bench_run *run, int n)
{
    const gpu_bench_config *config = run->config;
    char spec[128], err[512];
    snprintf(spec, sizeof spec, FAMILY_SPEC, n);
    mbd_model *model;
    if (mbd_model_load(spec, NULL, &model, err, sizeof err) != MBD_OK) {
        fprintf(stderr, "mbd-gpu-bench: %s\n", err);
        return;
    }
    int max_k = config->max_k;
    while (max_k > 1 && (double)max_k * n > config->max_bodies)
        max_k /= 2;
    gpu_bench_work w = {.model = model};
    double *states = random_states(model, max_k);
    w.status = malloc((size_t)max_k * sizeof *w.status);
    if (states && w.status) {
        const size_t nv = (size_t)max_k * mbd_model_nv(model);
        w.q = states;
        w.x = w.q + (size_t)max_k * mbd_model_nq(model);
        w.tau = w.x + nv;
        w.y = (double *)w.tau + nv;
        w.z = w.y + nv;
        for (int solver = 0; solver < GPU_SOLVERS && !bench_stop; solver++)
            run_solver(run, &w, solver, max_k);
    }
    free(states);
    free(w.status);
    mbd_model_free(model);
}

/* Bytes per body and state that the bodies kernel moves to and from memory on FAMILY's
 * revolute joints (twisted axial screws) when its workspace does not stay in cache (K in
 * the thousands: 65 KB per state at N = 100), counted from bodies_kernels.h pass by pass
 * (docs/gpu.md, "The bytes budget"), in doubles: an entry crosses once for each pass that
 * reads it and once for each that writes it (one body's step and the next one's, which
 * reads its parent's or child's sums, share the cache; v, a, the bias forces' sums and,
 * in slots, the inertia sums stay there). X_i is formed where it is read, cos q and sin q
 * from q, the screw's constants from the model (SCREW_XFORM, joint_kernels.h), and c and
 * p^A from v and qd (BIAS_FROM_VELOCITY, bodies_kernels.h); then
 *   root -> leaves: v out (6);
 *   leaves -> root: q, qd and v in (8), U D^-1 and u out (7), I^a (21) and D^-1 (1)
 *                   out, kept for the reactions;
 *   root -> leaves: q, qd and v in (8), U D^-1 and u in (7),
 * and q, qd, tau in and qdd out (4): 62 x 8 = 496; with the inertia sums in slots
 * (inertia_slots: neither I^a nor D^-1 out) 40 x 8 = 320. S's unit column
 * is not read. A thread also writes 96 bytes a body once per launch (gpu_start_work). The
 * context carries the count for report/gpu.sh's memory floor. */
static int bodies_bytes_per_body(const mbd_gpu_options *options)
{
    return options->inertia_slots ? 320 : 496;
}

/* The device name as a file name: letters and digits, the rest '-'. */
static void device_slug(char *out, size_t size, const char *device)
{
    size_t k = 0;
    for (; device[k] && k + 1 < size; k++)
        out[k] = isalnum((unsigned char)device[k]) ? (char)tolower((unsigned char)device[k]) : '-';
    out[k] = 0;
}

static const char usage[] =
    "usage: mbd-gpu-bench [--out DIR] [--n 10,100,1000] [--min-k K] [--max-k K]\n"
    "                     [--max-bodies NK] [--cpu-threads T (0: no CPU rows)] [--min-time S]\n"
    "                     [--repetitions R] [--budget S]\n"
    "                     [--jit-levels 0,4]\n";

/* Up to 8 integers from "a,b,c" into list; -1 if the text is not that. */
static int parse_list(int_list *list, const char *text)
{
    list->count = 0;
    for (const char *at = text; list->count < 8; at++) {
        char *end;
        list->at[list->count++] = (int)strtol(at, &end, 10);
        if (end == at || (*end && *end != ','))
            return -1;
        if (!*(at = end))
            return 0;
    }
    return -1;
}

static int parse(gpu_bench_config *config, int argc, char **argv)
{
    for (int a = 1; a < argc; a++) {
        const char *flag = argv[a], *value = a + 1 < argc ? argv[a + 1] : NULL;
        if (!value)
            return -1;
        a++;
        if (strcmp(flag, "--out") == 0)
            config->out_dir = value;
        else if (strcmp(flag, "--n") == 0 || strcmp(flag, "--jit-levels") == 0) {
            if (parse_list(flag[2] == 'n' ? &config->ns : &config->jit_levels, value))
                return -1;
        } else if (strcmp(flag, "--min-k") == 0)
            config->min_k = atoi(value);
        else if (strcmp(flag, "--max-k") == 0)
            config->max_k = atoi(value);
        else if (strcmp(flag, "--max-bodies") == 0)
            config->max_bodies = atof(value);
        else if (strcmp(flag, "--cpu-threads") == 0)
            config->cpu_threads = atoi(value);
        else if (strcmp(flag, "--min-time") == 0)
            config->timing.min_time = atof(value);
        else if (strcmp(flag, "--repetitions") == 0)
            config->timing.repetitions = atoi(value);
        else if (strcmp(flag, "--budget") == 0)
            config->budget = atof(value);
        else
            return -1;
    }
    for (int l = 0; l < config->jit_levels.count; l++)
        if (config->jit_levels.at[l] < 0 || config->jit_levels.at[l] > 4)
            return -1;
    return config->ns.count > 0 && config->min_k > 0 && config->max_k > 0 &&
                   config->cpu_threads >= 0 && config->timing.repetitions >= 1 &&
                   config->timing.repetitions <= TIMING_MAX_REPETITIONS
               ? 0
               : -1;
}

int main(int argc, char **argv)
{
    gpu_bench_config config = {.out_dir = "results",
                               .ns = {{10, 100, 1000}, 3},
                               .jit_levels = {{4}, 1},
                               .cpu_threads = 16,
                               .min_k = 1,
                               .max_k = 1 << 20,
                               .max_bodies = 1.1e8,
                               .budget = 150,
                               .timing = {.min_time = 0.05,
                                          .repetitions = 3,
                                          .max_total = 5,
                                          .cpu_clock = CLOCK_PROCESS_CPUTIME_ID}};
    char err[256], slug[128];
    if (gpu_options_from_env(&config.gpu, err, sizeof err)) {
        fprintf(stderr, "mbd-gpu-bench: %s\n", err);
        return 2;
    }
    if (parse(&config, argc, argv)) {
        fputs(usage, stderr);
        return 2;
    }
    gpu_bench_run run = {.config = &config, .start = now()};
    run.context = bench_context_collect(argv[0]);
    /* the device: a batch on a one-body model opens the driver */
    char why[256] = "no model to open the GPU with";
    mbd_model *probe;
    mbd_model_load("chain:n=1,joint=revolute", NULL, &probe, err, sizeof err);
    mbd_gpu_batch *gpu = NULL;
    if (probe)
        mbd_gpu_batch_new(probe, mbd_solver_find("bodies"), &config.gpu, &gpu, why, sizeof why);
    const char *device = gpu ? mbd_gpu_device(gpu) : "none";
    json_object_set_new(run.context, "gpu_device", json_string(device));
    json_object_set_new(run.context, "gpu_status", json_string(why));
    json_object_set_new(run.context, "gpu_threads",
                        json_integer(gpu ? mbd_gpu_batch_threads(gpu) : 0));
    json_object_set_new(run.context, "cpu_batch_threads", json_integer(config.cpu_threads));
    json_object_set_new(run.context, "gpu_workspace",
                        json_string(config.gpu.global_works ? "global" : "stack"));
    json_object_set_new(run.context, "family", json_string(FAMILY_SPEC));
    json_object_set_new(run.context, "bodies_bytes_per_body",
                        json_integer(bodies_bytes_per_body(&config.gpu)));
    json_t *levels = json_array();
    for (int l = 0; l < config.jit_levels.count; l++)
        json_array_append_new(levels, json_integer(config.jit_levels.at[l]));
    json_object_set_new(run.context, "gpu_jit_levels", levels);
    device_slug(slug, sizeof slug, device);
    snprintf(run.path, sizeof run.path, "%s/gpu-%s.json", config.out_dir, slug);
    fprintf(stderr, "mbd-gpu-bench: %s; writing %s\n", why, run.path);
    mbd_gpu_batch_free(gpu);
    mbd_model_free(probe);
    bench_catch_signals();
    bench_print_header(stdout);
    for (int i = 0; i < config.ns.count && !bench_stop; i++)
        run_n(&run, config.ns.at[i]);
    json_object_set_new(run.context, "partial", json_boolean(bench_stop != 0));
    const int rc = bench_write_json(&run.results, run.context, run.path);
    bench_results_free(&run.results);
    json_decref(run.context);
    return rc;
}
