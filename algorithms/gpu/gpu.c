/* gpu.c: batches on an NVIDIA GPU (mbd_gpu_*), host side. The CUDA driver is loaded at run
 * time (dlopen of libcuda.so.1), its functions declared here with
 * their documented signatures and looked up under their versioned symbol names where the
 * driver has them (cuCtxCreate_v2, ...), so that neither the build nor a machine without
 * a GPU needs CUDA. The kernels are the PTX of gpu_kernels.c, built into the library
 * (mbd_gpu_ptx) and, where the build had ptxas, assembled for sm_80 and sm_90 beside it
 * (mbd_gpu_fatbin): the driver loads the cubin of its GPU, or compiles the PTX.
 *
 * A batch holds a context, the model's arrays in GPU memory (once), one workspace block
 * per GPU thread on its stack or, where it does not fit there, in global memory (as many
 * threads as fit in a share of the free memory, up to mbd_gpu_options.threads_per_sm per
 * multiprocessor; each thread takes every threads-th state),
 * and, for host arrays, GPU buffers for the states, grown as K needs. */
#include "gpu/gpu.h"

#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult; /* CUDA_SUCCESS 0 */
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
enum { CU_JIT_OPTIMIZATION_LEVEL = 7 }; /* a CUjit_option */

enum { CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16 };

/* name, symbol, parameters: the driver API functions the batch calls. */
#define CUDA_FUNCTIONS(X)                                                                          \
    X(cuInit, "cuInit", (unsigned flags))                                                          \
    X(cuGetErrorString, "cuGetErrorString", (CUresult error, const char **text))                   \
    X(cuDeviceGet, "cuDeviceGet", (CUdevice * device, int ordinal))                                \
    X(cuDeviceGetName, "cuDeviceGetName", (char *name, int length, CUdevice device))               \
    X(cuDeviceGetAttribute, "cuDeviceGetAttribute", (int *value, int attribute, CUdevice device))  \
    X(cuCtxCreate, "cuCtxCreate_v2", (CUcontext * context, unsigned flags, CUdevice device))       \
    X(cuCtxDestroy, "cuCtxDestroy_v2", (CUcontext context))                                        \
    X(cuCtxSetCurrent, "cuCtxSetCurrent", (CUcontext context))                                     \
    X(cuCtxSynchronize, "cuCtxSynchronize", (void))                                                \
    X(cuModuleLoadDataEx, "cuModuleLoadDataEx",                                                    \
      (CUmodule * module, const void *image, unsigned options, int *names, void **values))         \
    X(cuModuleUnload, "cuModuleUnload", (CUmodule module))                                         \
    X(cuModuleGetFunction, "cuModuleGetFunction",                                                  \
      (CUfunction * function, CUmodule module, const char *name))                                  \
    X(cuMemGetInfo, "cuMemGetInfo_v2", (size_t * free_bytes, size_t * total_bytes))                \
    X(cuMemAlloc, "cuMemAlloc_v2", (mbd_gpu_ptr * ptr, size_t bytes))                              \
    X(cuMemFree, "cuMemFree_v2", (mbd_gpu_ptr ptr))                                                \
    X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", (mbd_gpu_ptr to, const void *from, size_t bytes))           \
    X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", (void *to, mbd_gpu_ptr from, size_t bytes))                 \
    X(cuLaunchKernel, "cuLaunchKernel",                                                            \
      (CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,   \
       unsigned block_y, unsigned block_z, unsigned shared_bytes, CUstream stream,                 \
       void **parameters, void **extra))                                                           \
    X(cuEventCreate, "cuEventCreate", (CUevent * event, unsigned flags))                           \
    X(cuEventDestroy, "cuEventDestroy_v2", (CUevent event))                                        \
    X(cuEventRecord, "cuEventRecord", (CUevent event, CUstream stream))                            \
    X(cuEventSynchronize, "cuEventSynchronize", (CUevent event))                                   \
    X(cuEventElapsedTime, "cuEventElapsedTime", (float *ms, CUevent start, CUevent end))

static struct {
#define CUDA_POINTER(name, symbol, parameters) CUresult(*name) parameters;
    CUDA_FUNCTIONS(CUDA_POINTER)
#undef CUDA_POINTER
    CUdevice device;
    int multiprocessors;
    char device_name[128];
} cu;

/* The driver, loaded once per process: its status, and why it failed ("GPU: <device>"
 * where it did not), both set once and then only read. */
static int driver_status = MBD_EUNSUPPORTED;
static char driver_why[256];
static pthread_once_t driver_once = PTHREAD_ONCE_INIT;

/* The message into error (error_size bytes; NULL: none); returns status. */
static int say(char *error, size_t error_size, int status, const char *format, ...)
{
    if (error && error_size) {
        va_list args;
        va_start(args, format);
        vsnprintf(error, error_size, format, args);
        va_end(args);
    }
    return status;
}

/* The driver's text for rc ("" for none). */
static const char *driver_text(CUresult rc)
{
    const char *text = NULL;
    if (rc && cu.cuGetErrorString)
        cu.cuGetErrorString(rc, &text);
    return text ? text : "";
}

/* Why the GPU is not used, into error: what, and the driver's text for rc;
 * MBD_EUNSUPPORTED. */
static int no_gpu(char *error, size_t error_size, const char *what, CUresult rc)
{
    return say(error, error_size, MBD_EUNSUPPORTED, "no GPU here: %s%s%s", what, rc ? ": " : "",
               driver_text(rc));
}

static int load_driver(char *why, size_t why_size)
{
    if (!mbd_gpu_ptx[0])
        return no_gpu(why, why_size, "this build has no GPU kernels (no clang at build time)", 0);
    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!driver)
        return no_gpu(why, why_size, dlerror(), 0);
#define CUDA_LOOKUP(name, symbol, parameters)                                                      \
    if (!(*(void **)&cu.name = dlsym(driver, symbol)))                                             \
        return no_gpu(why, why_size, "the CUDA driver lacks " symbol, 0);
    CUDA_FUNCTIONS(CUDA_LOOKUP)
#undef CUDA_LOOKUP
    CUresult rc = cu.cuInit(0);
    if (rc)
        return no_gpu(why, why_size, "cuInit", rc);
    if ((rc = cu.cuDeviceGet(&cu.device, 0)))
        return no_gpu(why, why_size, "cuDeviceGet", rc);
    cu.cuDeviceGetName(cu.device_name, sizeof cu.device_name, cu.device);
    if ((rc = cu.cuDeviceGetAttribute(&cu.multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                      cu.device)))
        return no_gpu(why, why_size, "cuDeviceGetAttribute", rc);
    return say(why, why_size, MBD_OK, "GPU: %s", cu.device_name);
}

static void load_driver_once(void) { driver_status = load_driver(driver_why, sizeof driver_why); }

/* Threads per block; workspaces come in whole blocks. */
#define GPU_BLOCK 128
/* Resident threads per multiprocessor at most (sm_80 and sm_90): more would wait for a
 * slot anyway. */
#define GPU_MAX_THREADS_PER_SM 2048

/* The threads per multiprocessor that measured best for each placement (an H200 at
 * K >= 65 536, docs/gpu.md): in global memory a thread's workspace is one contiguous
 * block, so a warp's loads touch 32 cache lines, and with one block of threads resident
 * more of each stays in the L1 cache (128 threads 1.5x faster than 2048); on the stack
 * the hardware interleaves the warp's words, and 512 threads hide more of the memory's
 * latency (bodies at N = 100: 0.39-0.45 ns per body per state, 0.56-0.60 with 128). */
static int placement_threads_per_sm(int on_stack) { return on_stack ? 4 * GPU_BLOCK : GPU_BLOCK; }

struct mbd_gpu_batch {
    const mbd_model *model;
    mbd_gpu_options options;
    int kernel;
    int momentum;       /* the kernel runs the momentum form (its solver has no other) */
    int threads_per_sm; /* the workspaces per multiprocessor */
    int on_stack;       /* the kernel's stack entry runs (no blocks in launch.works) */
    char error[256];    /* why the last call failed in the driver, or "" */
    CUcontext context;
    CUmodule module;
    CUfunction function, start_works;
    mbd_work *layout;  /* host workspace whose layout the threads' blocks take */
    gpu_launch launch; /* its GPU-memory pointers; states set per call */
    int threads;       /* workspace blocks */
    mbd_gpu_ptr model_arrays, works, launch_on_gpu;
    mbd_gpu_ptr states; /* the host-array calls' buffers, for capacity states */
    int capacity;
    CUevent start, end;
    double kernel_seconds;
};

/* The kernel of the solver's row (its gpu_kernels), bodies' as the options keep its
 * inertia sums, or -1. */
static int kernel_of(const mbd_solver *solver, const mbd_gpu_options *options)
{
    if (solver->gpu_kernels == GPU_BODIES && options->inertia_slots)
        return GPU_KERNEL_bodies_slots;
#define GPU_SOLVER_KERNEL(kernel, solvers, entry, local_entry)                                     \
    if (solver->gpu_kernels != GPU_NONE && solver->gpu_kernels == (solvers))                       \
        return GPU_KERNEL_##kernel;
    GPU_KERNEL_LIST(GPU_SOLVER_KERNEL)
#undef GPU_SOLVER_KERNEL
    return -1;
}

mbd_work *gpu_layout(const mbd_model *model, const mbd_solver *solver, gpu_launch *launch)
{
    mbd_work *layout;
    if (mbd_work_new(model, solver, &layout) != MBD_OK)
        return NULL;
    launch->model = *model;
    launch->work = *layout;
    launch->work.model = NULL; /* host objects, which the kernels do not follow */
    launch->work.solver = NULL;
    launch->work.plugin_work = NULL;
    /* the block's size, 64-byte multiples: malloc knows it (mbd_work keeps no size) */
    launch->work_bytes = malloc_usable_size(layout->block) & ~(size_t)63;
    return layout;
}

/* The model's arrays that the kernels read, as (address of the pointer in m, entries):
 * of the bodies' definitions their passive forces alone (gpu_passive_add). */
/* clang-format off */
#define MODEL_ARRAYS(X, m)                                                                 \
    X(m->parent, m->nb) X(m->last_child, m->nb) X(m->sum_slot, m->nb)                      \
    X(m->motion_slot, m->nb) X(m->q0, m->nb) X(m->v0, m->nb) X(m->d0, m->nb)               \
    X(m->joint, m->nb) X(m->joint_type, m->nb) X(m->Xtree, m->nb) X(m->tree_form, m->nb)   \
    X(m->inertia, m->nb) X(m->armature, m->armature ? m->nb : 0)                         \
    X(m->free_body_inverse, m->free_body_inverse ? m->ndd : 0)                             \
    X(m->defs, m->has_passive ? m->nb : 0)
/* clang-format on */

/* The model's arrays into one GPU block, launch->model pointing there; the pointers the
 * kernels do not follow NULL. */
static int upload_model(mbd_gpu_batch *batch)
{
    mbd_model *m = &batch->launch.model;
    size_t bytes = 0;
#define ARRAY_BYTES(array, n) bytes += ((size_t)(n) * sizeof *(array) + 63) & ~(size_t)63;
    MODEL_ARRAYS(ARRAY_BYTES, m)
#undef ARRAY_BYTES
    char *staging = calloc(1, bytes);
    if (!staging || cu.cuMemAlloc(&batch->model_arrays, bytes)) {
        free(staging);
        return MBD_ENOMEM;
    }
    size_t at = 0;
#define ARRAY_STAGE(array, n)                                                                      \
    if (array) { /* an absent array (armature) stays NULL */                                       \
        const size_t size = (size_t)(n) * sizeof *(array);                                         \
        memcpy(staging + at, array, size);                                                         \
        *(void **)&(array) = (void *)(uintptr_t)(batch->model_arrays + at);                        \
        at += (size + 63) & ~(size_t)63;                                                           \
    }
    MODEL_ARRAYS(ARRAY_STAGE, m)
#undef ARRAY_STAGE
    m->name = m->source = NULL;
    m->gravcomp = NULL;
    m->tendons = NULL;
    if (!m->has_passive)
        m->defs = NULL;
    m->user_rotation = NULL;
    m->frames = NULL;
    m->loop_defs = NULL;
    m->loops = NULL;
    const int rc = cu.cuMemcpyHtoD(batch->model_arrays, staging, bytes);
    free(staging);
    return rc ? MBD_ENOMEM : MBD_OK;
}

/* Launches an entry on `threads` threads (whole blocks) with the batch's launch, which
 * it first copies to the GPU, and waits for it: MBD_OK, or MBD_EIO (batch->error says
 * why). */
static int launch_entry(mbd_gpu_batch *batch, CUfunction entry, int threads)
{
    CUresult rc = cu.cuMemcpyHtoD(batch->launch_on_gpu, &batch->launch, sizeof batch->launch);
    void *parameters[] = {&batch->launch_on_gpu};
    if (!rc)
        rc = cu.cuEventRecord(batch->start, NULL);
    if (!rc)
        rc = cu.cuLaunchKernel(entry, (unsigned)((threads + GPU_BLOCK - 1) / GPU_BLOCK), 1, 1,
                               GPU_BLOCK, 1, 1, 0, NULL, parameters, NULL);
    if (!rc)
        rc = cu.cuEventRecord(batch->end, NULL);
    if (!rc)
        rc = cu.cuEventSynchronize(batch->end);
    if (rc)
        return say(batch->error, sizeof batch->error, MBD_EIO, "a kernel failed: %s",
                   driver_text(rc));
    float ms = 0;
    cu.cuEventElapsedTime(&ms, batch->start, batch->end);
    batch->kernel_seconds = ms * 1e-3;
    return MBD_OK;
}

/* As many workspace blocks as fill the GPU, within a quarter of its free memory, each
 * started (gpu_start_work); or, for the stack entries, no blocks (each launch starts each
 * thread's own). */
static int allocate_works(mbd_gpu_batch *batch)
{
    gpu_launch *launch = &batch->launch;
    if (batch->on_stack) {
        batch->threads = cu.multiprocessors * batch->threads_per_sm;
        return cu.cuMemAlloc(&batch->launch_on_gpu, sizeof *launch) ? MBD_ENOMEM : MBD_OK;
    }
    size_t free_bytes = 0, total_bytes = 0;
    cu.cuMemGetInfo(&free_bytes, &total_bytes);
    const size_t per_block = GPU_BLOCK * launch->work_bytes;
    size_t blocks = (size_t)cu.multiprocessors * (size_t)batch->threads_per_sm / GPU_BLOCK;
    if (blocks * per_block > free_bytes / 4)
        blocks = free_bytes / 4 / per_block;
    if (blocks == 0)
        blocks = 1;
    batch->threads = (int)(blocks * GPU_BLOCK);
    if (cu.cuMemAlloc(&batch->works, blocks * per_block) ||
        cu.cuMemAlloc(&batch->launch_on_gpu, sizeof *launch))
        return MBD_ENOMEM;
    launch->works = (char *)(uintptr_t)batch->works;
    return launch_entry(batch, batch->start_works, batch->threads);
}

size_t gpu_fatbin_bytes(void)
{
    return (size_t)((uintptr_t)mbd_gpu_fatbin_end - (uintptr_t)mbd_gpu_fatbin);
}

const void *gpu_image(int ptx_asked)
{
    return gpu_fatbin_bytes() && !ptx_asked ? (const void *)mbd_gpu_fatbin
                                            : (const void *)mbd_gpu_ptx;
}

/* The batch's context, kernels, model and workspaces; why not in batch->error. */
static int open_batch(mbd_gpu_batch *batch, const mbd_solver *solver)
{
    char *const error = batch->error;
    CUresult rc = cu.cuCtxCreate(&batch->context, 0, cu.device);
    if (rc)
        return no_gpu(error, sizeof batch->error, "cuCtxCreate", rc);
    int jit_names[] = {CU_JIT_OPTIMIZATION_LEVEL};
    void *jit_values[] = {(void *)(uintptr_t)batch->options.jit_level};
    if ((rc = cu.cuModuleLoadDataEx(&batch->module, gpu_image(batch->options.ptx), 1, jit_names,
                                    jit_values)))
        return no_gpu(error, sizeof batch->error,
                      "cuModuleLoadDataEx (the driver could not load the kernels)", rc);
    if (!(batch->layout = gpu_layout(batch->model, solver, &batch->launch)))
        return say(error, sizeof batch->error, MBD_ENOMEM, "no memory for the workspace");
    batch->on_stack = !batch->options.global_works && batch->launch.work_bytes <= GPU_LOCAL_BYTES;
    batch->threads_per_sm = batch->options.threads_per_sm
                                ? batch->options.threads_per_sm
                                : placement_threads_per_sm(batch->on_stack);
    const char *const entries[][2] = {
#define GPU_ENTRY_NAMES(kernel, solvers, entry, local_entry) {#entry, #local_entry},
        GPU_KERNEL_LIST(GPU_ENTRY_NAMES)
#undef GPU_ENTRY_NAMES
    };
    const char *entry = entries[batch->kernel][batch->on_stack];
    if ((rc = cu.cuModuleGetFunction(&batch->function, batch->module, entry)) ||
        (rc = cu.cuModuleGetFunction(&batch->start_works, batch->module, "mbd_gpu_start_works")))
        return no_gpu(error, sizeof batch->error, "cuModuleGetFunction", rc);
    if (cu.cuEventCreate(&batch->start, 0) || cu.cuEventCreate(&batch->end, 0))
        return no_gpu(error, sizeof batch->error, "cuEventCreate", 0);
    int status = upload_model(batch);
    if (!status)
        status = allocate_works(batch);
    if (status == MBD_ENOMEM)
        say(error, sizeof batch->error, status, "no GPU memory for the model or workspaces");
    return status;
}

void mbd_gpu_default_options(mbd_gpu_options *options)
{
    /* level 4: the driver's own default (level 0's code is 2-9 times slower, docs/gpu.md) */
    *options = (mbd_gpu_options){.jit_level = 4};
}

/* MBD_OK, or MBD_EINVAL with the option out of range named in error. */
static int check_options(const mbd_gpu_options *options, char *error, size_t error_size)
{
    if (options->jit_level < 0 || options->jit_level > 4)
        return say(error, error_size, MBD_EINVAL, "GPU option jit_level %d: not 0 to 4",
                   options->jit_level);
    const int per_sm = options->threads_per_sm;
    if (per_sm && (per_sm < GPU_BLOCK || per_sm > GPU_MAX_THREADS_PER_SM || per_sm % GPU_BLOCK))
        return say(error, error_size, MBD_EINVAL,
                   "GPU option threads_per_sm %d: not 0 (the placement's) or one of %d, %d, ... %d",
                   per_sm, GPU_BLOCK, 2 * GPU_BLOCK, GPU_MAX_THREADS_PER_SM);
    return MBD_OK;
}

/* Passive forces that the GPU's kernels lack (they take dampers, springs on joints without
 * quaternions and free joints' armature: gpu_passive_add). */
static int passive_beyond_gpu(const mbd_model *model)
{
    int beyond = model->gravcomp != NULL;
    for (int t = 0; t < model->ntendons; t++)
        beyond |= model->tendons[t].stiffness != 0.0 || model->tendons[t].damping != 0.0;
    for (int i = 0; i < model->nb && model->has_passive; i++)
        beyond |=
            model->defs[i].passive.stiffness != 0.0 && joint_has_quaternion(model->joint_type[i]);
    return beyond;
}

int mbd_gpu_batch_new(const mbd_model *model, const mbd_solver *solver,
                      const mbd_gpu_options *options, mbd_gpu_batch **out, char *error,
                      size_t error_size)
{
    if (!out)
        return say(error, error_size, MBD_EINVAL, "no place for the batch (out is NULL)");
    *out = NULL;
    if (!model || !solver)
        return say(error, error_size, MBD_EINVAL, "a GPU batch needs a model and a solver");
    mbd_gpu_options defaults;
    mbd_gpu_default_options(&defaults);
    if (!options)
        options = &defaults;
    const int kernel = kernel_of(solver, options);
    if (kernel < 0)
        return say(error, error_size, MBD_EUNSUPPORTED, "no GPU kernel for the solver %s",
                   mbd_solver_name(solver));
    if (model->has_friction || model->nloops || passive_beyond_gpu(model))
        return say(error, error_size, MBD_EUNSUPPORTED,
                   "the GPU runs models without friction, loops, gravity compensation, "
                   "tendons' forces or springs on quaternions, not %s",
                   model->name ? model->name : "this model");
    const int checked = check_options(options, error, error_size);
    if (checked)
        return checked;
    pthread_once(&driver_once, load_driver_once);
    if (driver_status)
        return say(error, error_size, driver_status, "%s", driver_why);
    mbd_gpu_batch *batch = calloc(1, sizeof *batch);
    if (!batch)
        return say(error, error_size, MBD_ENOMEM, "no memory for a GPU batch");
    batch->model = model;
    batch->options = *options;
    batch->kernel = kernel;
    batch->momentum = !(mbd_solver_formulations(solver) & MBD_ACCELERATION);
    const int status = open_batch(batch, solver);
    say(error, error_size, status, "%s", status ? batch->error : driver_why);
    batch->error[0] = 0;
    if (status) {
        mbd_gpu_batch_free(batch);
        return status;
    }
    *out = batch;
    return MBD_OK;
}

void mbd_gpu_batch_free(mbd_gpu_batch *batch)
{
    if (!batch)
        return;
    if (batch->context) /* destroying the context frees its memory, module and events */
        cu.cuCtxDestroy(batch->context);
    mbd_work_free(batch->layout);
    free(batch);
}

const char *mbd_gpu_device(const mbd_gpu_batch *batch)
{
    (void)batch;
    return cu.device_name;
}

int mbd_gpu_batch_threads(const mbd_gpu_batch *batch) { return batch->threads; }

const char *mbd_gpu_batch_error(const mbd_gpu_batch *batch) { return batch->error; }

double mbd_gpu_batch_kernel_seconds(const mbd_gpu_batch *batch) { return batch->kernel_seconds; }

int mbd_gpu_alloc(mbd_gpu_batch *batch, size_t bytes, mbd_gpu_ptr *out)
{
    cu.cuCtxSetCurrent(batch->context);
    return cu.cuMemAlloc(out, bytes ? bytes : 1) ? MBD_ENOMEM : MBD_OK;
}

void mbd_gpu_release(mbd_gpu_batch *batch, mbd_gpu_ptr ptr)
{
    cu.cuCtxSetCurrent(batch->context);
    if (ptr)
        cu.cuMemFree(ptr);
}

int mbd_gpu_copy_to(mbd_gpu_batch *batch, mbd_gpu_ptr to, const void *from, size_t bytes)
{
    cu.cuCtxSetCurrent(batch->context);
    return bytes && cu.cuMemcpyHtoD(to, from, bytes) ? MBD_EIO : MBD_OK;
}

int mbd_gpu_copy_from(mbd_gpu_batch *batch, void *to, mbd_gpu_ptr from, size_t bytes)
{
    cu.cuCtxSetCurrent(batch->context);
    return bytes && cu.cuMemcpyDtoH(to, from, bytes) ? MBD_EIO : MBD_OK;
}

/* The batch's kernel on K states whose rows are in GPU memory: x, y as gpu_launch's, z
 * pd in the momentum form (0 otherwise). */
static int run_on_gpu(const mbd_model *model, mbd_gpu_batch *batch, int K, int momentum,
                      mbd_gpu_ptr q, mbd_gpu_ptr x, mbd_gpu_ptr tau, mbd_gpu_ptr y, mbd_gpu_ptr z,
                      mbd_gpu_ptr status)
{
    if (!batch || batch->model != model || K < 0 ||
        (K > 0 && (!q || !x || !y || (momentum && !z) || !status)))
        return MBD_EINVAL;
    if (momentum != batch->momentum)
        return MBD_EUNSUPPORTED;
    if (K == 0)
        return MBD_OK;
    cu.cuCtxSetCurrent(batch->context);
    gpu_launch *launch = &batch->launch;
    launch->K = K;
    launch->q = (const double *)(uintptr_t)q;
    launch->x = (const double *)(uintptr_t)x;
    launch->tau = (const double *)(uintptr_t)tau;
    launch->y = (double *)(uintptr_t)y;
    launch->z = (double *)(uintptr_t)z;
    launch->status = (int *)(uintptr_t)status;
    return launch_entry(batch, batch->function, K < batch->threads ? K : batch->threads);
}

/* The host-array calls' GPU buffers for K states: q, x, tau, y, z, status. */
static int reserve_states(mbd_gpu_batch *batch, int K, mbd_gpu_ptr at[6])
{
    const size_t nq = (size_t)batch->model->nq, nv = (size_t)batch->model->nv;
    if (K > batch->capacity) {
        if (batch->states)
            cu.cuMemFree(batch->states);
        batch->capacity = 0;
        if (cu.cuMemAlloc(&batch->states,
                          (size_t)K * ((nq + 4 * nv) * sizeof(double) + sizeof(int))))
            return MBD_ENOMEM;
        batch->capacity = K;
    }
    const size_t n = (size_t)batch->capacity;
    at[0] = batch->states;
    at[1] = at[0] + n * nq * sizeof(double);
    for (int k = 2; k < 6; k++)
        at[k] = at[k - 1] + n * nv * sizeof(double);
    return MBD_OK;
}

/* run_on_gpu from and to host arrays, through the batch's buffers; status may be NULL. */
static int run_from_host(const mbd_model *model, mbd_gpu_batch *batch, int K, int momentum,
                         const double *q, const double *x, const double *tau, double *y, double *z,
                         int *status)
{
    if (!batch || batch->model != model || K < 0 || (K > 0 && (!q || !x || !y || (momentum && !z))))
        return MBD_EINVAL;
    if (momentum != batch->momentum)
        return MBD_EUNSUPPORTED;
    if (K == 0)
        return MBD_OK;
    cu.cuCtxSetCurrent(batch->context);
    mbd_gpu_ptr at[6];
    if (reserve_states(batch, K, at))
        return MBD_ENOMEM;
    const size_t q_bytes = (size_t)K * (size_t)model->nq * sizeof(double);
    const size_t v_bytes = (size_t)K * (size_t)model->nv * sizeof(double);
    if (cu.cuMemcpyHtoD(at[0], q, q_bytes) || cu.cuMemcpyHtoD(at[1], x, v_bytes) ||
        (tau && cu.cuMemcpyHtoD(at[2], tau, v_bytes)))
        return MBD_EIO;
    int rc = run_on_gpu(model, batch, K, momentum, at[0], at[1], tau ? at[2] : 0, at[3],
                        momentum ? at[4] : 0, at[5]);
    if (rc)
        return rc;
    int *statuses = status ? status : malloc((size_t)K * sizeof *statuses);
    if (!statuses)
        return MBD_ENOMEM;
    if (cu.cuMemcpyDtoH(y, at[3], v_bytes) || (z && cu.cuMemcpyDtoH(z, at[4], v_bytes)) ||
        cu.cuMemcpyDtoH(statuses, at[5], (size_t)K * sizeof(int)))
        rc = MBD_EIO;
    for (int k = 0; k < K && !rc; k++) /* the first failed state's status */
        rc = statuses[k];
    if (!status)
        free(statuses);
    return rc;
}

int mbd_gpu_batch_forward_on_gpu(const mbd_model *model, mbd_gpu_batch *batch, int K, mbd_gpu_ptr q,
                                 mbd_gpu_ptr qd, mbd_gpu_ptr tau, mbd_gpu_ptr qdd,
                                 mbd_gpu_ptr status)
{
    return run_on_gpu(model, batch, K, 0, q, qd, tau, qdd, 0, status);
}

int mbd_gpu_batch_forward(const mbd_model *model, mbd_gpu_batch *batch, int K, const double *q,
                          const double *qd, const double *tau, double *qdd, int *status)
{
    return run_from_host(model, batch, K, 0, q, qd, tau, qdd, NULL, status);
}

int mbd_gpu_batch_forward_momentum_on_gpu(const mbd_model *model, mbd_gpu_batch *batch, int K,
                                          mbd_gpu_ptr q, mbd_gpu_ptr p, mbd_gpu_ptr tau,
                                          mbd_gpu_ptr qd, mbd_gpu_ptr pd, mbd_gpu_ptr status)
{
    return run_on_gpu(model, batch, K, 1, q, p, tau, qd, pd, status);
}

int mbd_gpu_batch_forward_momentum(const mbd_model *model, mbd_gpu_batch *batch, int K,
                                   const double *q, const double *p, const double *tau, double *qd,
                                   double *pd, int *status)
{
    return run_from_host(model, batch, K, 1, q, p, tau, qd, pd, status);
}
