/* gpu.h: what the host side (gpu.c) hands the GPU's kernels (gpu_kernels.c), which are
 * the same C compiled twice: for the GPU by clang into PTX (the Makefile embeds it in the
 * library as mbd_gpu_ptx) and for the CPU by the library's compiler, so that the tests run
 * the code that the GPU runs (gpu_run_on_cpu). */
#ifndef MBD_GPU_H
#define MBD_GPU_H

#include "batch/batch.h"

/* One launch's arguments, in GPU memory, read by every thread. */
typedef struct {
    mbd_model model;   /* its arrays in GPU memory (gpu.c: upload_model); the others NULL */
    mbd_work work;     /* a host workspace's layout: its arrays at their offsets from
                          work.block, each thread's at those from its own block */
    size_t work_bytes; /* one thread's block */
    char *works;       /* (threads x work_bytes) the threads' blocks */
    int K;
    const double *q, *x, *tau; /* (K x nq), (K x nv): the states (x: qd, or p in the
                            momentum form); tau may be NULL */
    double *y;                 /* (K x nv) qdd, or qd in the momentum form */
    double *z;                 /* (K x nv) pd in the momentum form, else NULL */
    int *status;               /* (K) each state's */
} gpu_launch;

/* The kernels: their names, the solvers' (gpu_kernels in the solver's row) that each
 * runs, their entry names in the PTX, on workspaces in global memory and on the threads'
 * stacks, one a line (the Makefile reads the entries). Each runs its solver's
 * acceleration form where it has one (bodies, dense), else its momentum form
 * (poisson-ldlt). bodies_slots is the bodies sweep with its inertia sums in shared slots
 * and D^-1 in registers, as the CPU's lanes keep them (mbd_gpu_options.inertia_slots):
 * 320 instead of 496 bytes per body and state to and from memory on the benchmark's
 * chain (bodies_kernels.h's `keep`; counted in bench/gpu/gpu_bench.c), a constant in each
 * entry. */
#define GPU_KERNEL_LIST(X)                                                                         \
    X(bodies, GPU_BODIES, mbd_gpu_bodies, mbd_gpu_bodies_local)                                    \
    X(bodies_slots, GPU_BODIES, mbd_gpu_bodies_slots, mbd_gpu_bodies_slots_local)                  \
    X(poisson_ldlt, GPU_POISSON_LDLT, mbd_gpu_poisson_ldlt, mbd_gpu_poisson_ldlt_local)            \
    X(dense, GPU_DENSE, mbd_gpu_dense, mbd_gpu_dense_local)
/* The largest workspace that the stack entries take (each thread's stack frame: the
 * driver keeps this much local memory for every thread the GPU can hold, 22 GB on an
 * H100 or H200): `bodies` and `poisson-ldlt` up to about 120 bodies, `dense` 65. */
#define GPU_LOCAL_BYTES (80 * 1024)
enum {
#define GPU_KERNEL_ENUM(kernel, solvers, entry, local_entry) GPU_KERNEL_##kernel,
    GPU_KERNEL_LIST(GPU_KERNEL_ENUM)
#undef GPU_KERNEL_ENUM
        GPU_KERNEL_COUNT
};

/* The PTX of gpu_kernels.c (NUL-terminated; empty where the build had no clang), and the
 * fatbin of the build's cubins for sm_80 and sm_90 with that PTX, from mbd_gpu_fatbin to
 * mbd_gpu_fatbin_end (none where the build had no ptxas; the Makefile makes both). */
extern const char mbd_gpu_ptx[];
extern const unsigned char mbd_gpu_fatbin[], mbd_gpu_fatbin_end[];

/* The image that a batch hands the driver: the fatbin where the build made one, whose
 * cubin for the GPU's architecture the driver loads as it is (its PTX where it has none),
 * unless ptx_asked (mbd_gpu_options.ptx); else the PTX, which the driver compiles. */
const void *gpu_image(int ptx_asked);
/* The fatbin's bytes (0: none). */
size_t gpu_fatbin_bytes(void);

/* Kernel `kernel` on the CPU, as `threads` GPU threads would run it (one after the other),
 * on a launch whose pointers are host memory: the tests' view of the GPU's code. Each
 * thread on its block in launch->works, or, local_block not NULL, as the stack entry,
 * on local_block (work_bytes) started anew. */
void gpu_run_on_cpu(int kernel, const gpu_launch *launch, int threads, double *local_block);
/* The entry mbd_gpu_start_works on the CPU: each of `threads` blocks started. */
void gpu_start_works_on_cpu(const gpu_launch *launch, int threads);
/* The workspace that thread `thread` runs on: launch->work moved onto its block. */
void gpu_thread_work_on_cpu(mbd_work *work, const gpu_launch *launch, int thread);

/* A workspace of the model and solver, whose layout launch->work takes (work_bytes its
 * block's size; its pointers to host objects NULL), and
 * launch->model = *model: the caller then points them at GPU memory (or leaves them on
 * the host for gpu_run_on_cpu). NULL: no memory. */
mbd_work *gpu_layout(const mbd_model *model, const mbd_solver *solver, gpu_launch *launch);

#endif
