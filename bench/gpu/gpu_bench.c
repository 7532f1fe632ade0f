/* gpu_bench.c: mbd-gpu-bench, the GPU's timings against the CPU batch on the same machine
 * (bench/gpu.sh runs it there). For each body count N of the revolute chain
 * autotree-chain and each K (1 to 2^20 states, as far as N K stays within --max-bodies):
 *
 *   gpu_bodies/autotree-chain/n:N/k:K            the kernel alone, states already on the GPU
 *   gpu_bodies-copies/autotree-chain/n:N/k:K     with the copies in and out (host arrays)
 *   batch_bodies/autotree-chain/n:N/k:K/threads:T the CPU batch (mbd_batch, T threads)
 *
 * Real time per call (the GPU calls return once the kernel is done); Google Benchmark's
 * schema with the counters bodies, ns_per_body (per state) and states_per_second, the
 * device in the context. The JSON, DIR/gpu-<device>.json, is written anew after each
 * measurement, so that a run cut short keeps what it measured. */
#include "../context.h"
#include "../harness.h"
#include "mbd.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FAMILY "autotree-chain"
#define FAMILY_SPEC "tree:n=%d,branching=1,skew=0.5"

typedef struct {
    const char *out_dir;
    int ns[8], nns;
    int cpu_threads, max_k;
    double max_bodies; /* N K at most */
    double budget;     /* seconds: no new measurement after */
    timing_options timing;
} gpu_bench_config;

typedef struct {
    const mbd_model *model;
    int K;
    mbd_gpu_batch *gpu;
    mbd_batch *cpu;
    const double *q, *qd, *tau;
    double *qdd;
    int *status;
    mbd_gpu_ptr on_gpu[5]; /* q, qd, tau, qdd, status */
} gpu_bench_work;

static int kernel_body(void *ctx, long iterations)
{
    gpu_bench_work *w = ctx;
    int rc = MBD_OK;
    for (long i = 0; i < iterations && !rc; i++)
        rc = mbd_gpu_batch_forward_on_gpu(w->model, w->gpu, w->K, w->on_gpu[0], w->on_gpu[1],
                                          w->on_gpu[2], w->on_gpu[3], w->on_gpu[4]);
    return rc;
}

static int copies_body(void *ctx, long iterations)
{
    gpu_bench_work *w = ctx;
    int rc = MBD_OK;
    for (long i = 0; i < iterations && !rc; i++)
        rc = mbd_gpu_batch_forward(w->model, w->gpu, w->K, w->q, w->qd, w->tau, w->qdd, w->status);
    return rc;
}

static int cpu_body(void *ctx, long iterations)
{
    gpu_bench_work *w = ctx;
    int rc = MBD_OK;
    for (long i = 0; i < iterations && !rc; i++)
        rc = mbd_batch_forward(w->model, w->cpu, w->K, w->q, w->qd, w->tau, w->qdd, w->status);
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

/* One measurement as a row named `name`; the JSON written anew. */
static void measure(gpu_bench_run *run, const char *name, timing_body body, gpu_bench_work *w,
                    int threads)
{
    if (bench_stop || now() - run->start > run->config->budget)
        return;
    timing_result result;
    const int rc = timing_measure(&run->config->timing, body, w, &result);
    if (rc) {
        fprintf(stderr, "mbd-gpu-bench: %s: %s (%s)\n", name, mbd_strerror(rc), mbd_gpu_why());
        return;
    }
    bench_key key = {.suite = SUITE_BATCH, .family = FAMILY, .n = mbd_model_nbodies(w->model),
                     .k = w->K, .threads = threads};
    snprintf(key.variant, sizeof key.variant, "%s", name);
    bench_record *record = bench_add(&run->results, &key, mbd_model_nbodies(w->model),
                                     mbd_model_nv(w->model), w->K, &result);
    if (!record)
        return;
    snprintf(record->name, sizeof record->name, "%s/%s/n:%d/k:%d", name, FAMILY, key.n, w->K);
    if (threads)
        snprintf(record->name + strlen(record->name), sizeof record->name - strlen(record->name),
                 "/threads:%d", threads);
    bench_print_record(stdout, record);
    fflush(stdout);
    bench_write_json(&run->results, run->context, run->path);
}

/* Random states for K of the model: q, qd, tau in [-1, 1). */
static double *random_states(const mbd_model *model, int K)
{
    const size_t n = (size_t)K * (size_t)(mbd_model_nq(model) + 3 * mbd_model_nv(model));
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
    const size_t sizes[5] = {(size_t)w->K * mbd_model_nq(w->model) * sizeof(double),
                             (size_t)w->K * mbd_model_nv(w->model) * sizeof(double),
                             (size_t)w->K * mbd_model_nv(w->model) * sizeof(double),
                             (size_t)w->K * mbd_model_nv(w->model) * sizeof(double),
                             (size_t)w->K * sizeof(int)};
    const void *from[3] = {w->q, w->qd, w->tau};
    for (int a = 0; a < 5; a++)
        if (mbd_gpu_alloc(w->gpu, sizes[a], &w->on_gpu[a]) ||
            (a < 3 && mbd_gpu_copy_to(w->gpu, w->on_gpu[a], from[a], sizes[a])))
            return MBD_ENOMEM;
    return MBD_OK;
}

static void release(gpu_bench_work *w)
{
    for (int a = 0; a < 5; a++)
        if (w->gpu && w->on_gpu[a])
            mbd_gpu_release(w->gpu, w->on_gpu[a]);
    memset(w->on_gpu, 0, sizeof w->on_gpu);
}

/* Every K of one N. */
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
    const mbd_solver *bodies = mbd_solver_find("bodies");
    gpu_bench_work w = {.model = model};
    double *states = random_states(model, max_k);
    w.qdd = malloc((size_t)max_k * mbd_model_nv(model) * sizeof *w.qdd);
    w.status = malloc((size_t)max_k * sizeof *w.status);
    mbd_batch_new(model, bodies, config->cpu_threads, 0, &w.cpu);
    const int gpu_rc = mbd_gpu_batch_new(model, bodies, &w.gpu);
    if (gpu_rc)
        fprintf(stderr, "mbd-gpu-bench: n %d: %s (%s)\n", n, mbd_strerror(gpu_rc), mbd_gpu_why());
    if (states && w.qdd && w.status && w.cpu) {
        w.q = states;
        w.qd = w.q + (size_t)max_k * mbd_model_nq(model);
        w.tau = w.qd + (size_t)max_k * mbd_model_nv(model);
        for (int K = 1; K <= max_k && !bench_stop; K *= 4) {
            w.K = K;
            if (w.gpu && upload(&w) == MBD_OK)
                measure(run, "gpu_bodies", kernel_body, &w, 0);
            release(&w);
            if (w.gpu)
                measure(run, "gpu_bodies-copies", copies_body, &w, 0);
            if ((double)K * n <= config->max_bodies / 4) /* the CPU is slower: fewer states */
                measure(run, "batch_bodies", cpu_body, &w, config->cpu_threads);
        }
    }
    mbd_gpu_batch_free(w.gpu);
    mbd_batch_free(w.cpu);
    free(states);
    free(w.qdd);
    free(w.status);
    mbd_model_free(model);
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
    "usage: mbd-gpu-bench [--out DIR] [--n 10,100,1000] [--max-k K] [--max-bodies NK]\n"
    "                     [--cpu-threads T] [--min-time S] [--repetitions R] [--budget S]\n";

static int parse(gpu_bench_config *config, int argc, char **argv)
{
    for (int a = 1; a < argc; a++) {
        const char *flag = argv[a], *value = a + 1 < argc ? argv[a + 1] : NULL;
        if (!value)
            return -1;
        a++;
        if (strcmp(flag, "--out") == 0)
            config->out_dir = value;
        else if (strcmp(flag, "--n") == 0) {
            config->nns = 0;
            for (char *end = (char *)value; *end && config->nns < 8; end += *end == ',')
                config->ns[config->nns++] = (int)strtol(end, &end, 10);
        } else if (strcmp(flag, "--max-k") == 0)
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
    return config->nns > 0 && config->max_k > 0 && config->cpu_threads > 0 &&
                   config->timing.repetitions >= 1 && config->timing.repetitions <= TIMING_MAX_REPETITIONS
               ? 0
               : -1;
}

int main(int argc, char **argv)
{
    gpu_bench_config config = {.out_dir = "results", .ns = {10, 100, 1000}, .nns = 3,
                               .cpu_threads = 16, .max_k = 1 << 20, .max_bodies = 1.1e8,
                               .budget = 150,
                               .timing = {.min_time = 0.05, .repetitions = 3, .max_total = 5,
                                          .cpu_clock = CLOCK_PROCESS_CPUTIME_ID}};
    if (parse(&config, argc, argv)) {
        fputs(usage, stderr);
        return 2;
    }
    gpu_bench_run run = {.config = &config, .start = now()};
    run.context = bench_context_collect(argv[0]);
    /* the device: a batch on a one-body model opens the driver */
    char err[256], slug[128];
    mbd_model *probe;
    mbd_model_load("chain:n=1,joint=revolute", NULL, &probe, err, sizeof err);
    mbd_gpu_batch *gpu = NULL;
    if (probe)
        mbd_gpu_batch_new(probe, mbd_solver_find("bodies"), &gpu);
    const char *device = gpu ? mbd_gpu_device(gpu) : "none";
    json_object_set_new(run.context, "gpu_device", json_string(device));
    json_object_set_new(run.context, "gpu_status", json_string(mbd_gpu_why()));
    json_object_set_new(run.context, "gpu_threads", json_integer(gpu ? mbd_gpu_batch_threads(gpu) : 0));
    json_object_set_new(run.context, "cpu_batch_threads", json_integer(config.cpu_threads));
    json_object_set_new(run.context, "family", json_string(FAMILY_SPEC));
    device_slug(slug, sizeof slug, device);
    snprintf(run.path, sizeof run.path, "%s/gpu-%s.json", config.out_dir, slug);
    fprintf(stderr, "mbd-gpu-bench: %s; writing %s\n", mbd_gpu_why(), run.path);
    mbd_gpu_batch_free(gpu);
    mbd_model_free(probe);
    bench_catch_signals();
    bench_print_header(stdout);
    for (int i = 0; i < config.nns && !bench_stop; i++)
        run_n(&run, config.ns[i]);
    json_object_set_new(run.context, "partial", json_boolean(bench_stop != 0));
    const int rc = bench_write_json(&run.results, run.context, run.path);
    bench_results_free(&run.results);
    json_decref(run.context);
    return rc;
}
