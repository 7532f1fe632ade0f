/* gpu_kernels.c: the GPU's kernels, one thread per state, from the same kernel headers as
 * the one-state solvers and the CPU lanes (lane type double): the bodies sweep, the
 * Poisson-impulse block LDL^T, and dense (CRBA and RNEA as crba.c and rnea.c, then the
 * Cholesky of cholesky_kernels.h: LAPACK is the CPU's). The Makefile compiles this
 * file twice: by clang for the GPU (-x cuda --cuda-device-only -nocudainc -nocudalib:
 * C++, no CUDA toolkit, no libc on the device), into PTX that the library embeds, where
 * each GPU_ENTRY is a launchable .entry; and, as any library source, by the C compiler for
 * the CPU, where the entries are functions that gpu_run_on_cpu calls thread by thread, so
 * that the tests check the GPU's code against the CPU solvers.
 *
 * Each thread takes the states thread, thread + threads, ... (a grid-stride loop: the
 * launch has as many threads as workspaces fit, gpu.c) in its own workspace block, laid
 * out as the host's mbd_work (gpu_launch.work): a block in global memory (started once per
 * batch), or one on the thread's stack, started at each launch. The GPU interleaves the
 * stack (local memory) across a warp's threads word by word, so that their loads at one
 * offset fill whole cache lines, where 32 blocks in global memory take 32 lines. The libc
 * and libm headers come first, so that their functions stay host functions: a call to one
 * from the kernels does not compile for the GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MBD_GPU_C /* lane.h: the polynomial sine and cosine */
#ifdef __NVPTX__
#define restrict __restrict__   /* -x cuda is C++ */
#define memcpy __builtin_memcpy /* joints.c's and crba's (the GPU has no libc) */
#define memset __builtin_memset
#pragma clang force_cuda_host_device begin
#endif

#include "gpu/gpu.h"

#define MBD_LANES 1
#include "spatial/lane.h"
#include "solvers/bodies_kernels.h"
#include "solvers/momentum_kernels.h"
#include "solvers/poisson_ldlt_kernels.h"
#include "spatial/lane_end.h"
#include "dynamics/crba_kernels.h"
#include "dynamics/rnea_kernels.h"
#include "dynamics/cholesky_kernels.h"
#include "dynamics/passive_kernels.h"

#ifdef __NVPTX__
#include "dynamics/joints.c" /* joint_coordinates_valid: the library's own, for the GPU */
#endif

/* The workspace on the block at `base`: the layout of launch->work moved there. */
MBD_INLINE void gpu_work_at(mbd_work *work, const gpu_launch *launch, char *base)
{
    *work = launch->work;
    const char *layout = (const char *)launch->work.block;
#define GPU_REBASE(field, count)                                                                   \
    work->field = work->field                                                                      \
                      ? (__typeof__(work->field))(base + ((const char *)work->field - layout))     \
                      : NULL;
    MBD_WORK_ARRAYS(GPU_REBASE, &launch->model, 0, 0)
#undef GPU_REBASE
    work->block = base;
}

/* Thread `thread`'s block in launch->works. */
MBD_INLINE char *gpu_thread_block(const gpu_launch *launch, int thread)
{
    return launch->works + (size_t)thread * launch->work_bytes;
}

/* The workspace on the block at `base`, started: of the block a state's solve reads
 * before it writes only the constant kinematics (S's constant columns, X's fixed part),
 * which the thread forms from the model as mbd_work_new does: 96 bytes a revolute body,
 * not the whole block (650 at N = 100), since at K = 65 536 a thread solves about one
 * state and a copy of the block would move as many bytes as the state's solve. test_gpu
 * starts blocks filled with NaN. */
MBD_INLINE void gpu_start_work(mbd_work *work, const gpu_launch *launch, char *base)
{
    gpu_work_at(work, launch, base);
    constant_kinematics(&launch->model, work);
}

MBD_INLINE int gpu_all_finite(const double *x, int n)
{
    int bad = 0;
    for (int k = 0; k < n; k++)
        bad |= !__builtin_isfinite(x[k]);
    return !bad;
}

/* mbd_forward's checks and start_kinematics (kinematics.c) on the GPU: q finite, its
 * quaternions poses, then qd and tau finite; the same statuses in the same order. The
 * sines and cosines of the angles are body_kinematics' (lane_sincos: the polynomial). */
MBD_INLINE int gpu_start_state(const mbd_model *model, mbd_work *work, const double *q,
                               const double *x, const double *tau)
{
    if (!gpu_all_finite(q, model->nq))
        return MBD_ENONFINITE;
    for (int i = 0; i < model->nb; i++)
        if (!joint_coordinates_valid(model->joint_type[i], q + model->q0[i]))
            return MBD_EINVAL;
    if (!gpu_all_finite(x, model->nv) || (tau && !gpu_all_finite(tau, model->nv)))
        return MBD_ENONFINITE;
    work->failed_body = -1;
    work->gpu_q = q;
    work->gpu_qd = x;
    return MBD_OK;
}

/* tau + tau_p(q, qd) into out (tau NULL: tau_p alone), as passive_add (passive.c) for the
 * passive forces that the GPU takes (mbd_gpu_batch_new refuses gravity compensation,
 * tendons and springs on quaternions): the same statuses, the same sums. */
MBD_INLINE int gpu_passive_add(const mbd_model *model, const double *q, const double *qd,
                               const double *tau, double *out)
{
    if (!gpu_all_finite(qd, model->nv))
        return MBD_ENONFINITE;
    for (int k = 0; k < model->nv; k++)
        out[k] = 0.0;
    for (int i = 0; i < model->nb; i++) {
        const mbd_passive *p = &model->defs[i].passive;
        const int nv = model->joint[i].nv, v0 = model->v0[i];
        joint_damper(p, nv, qd + v0, out + v0);
        if (p->stiffness != 0.0)
            linear_spring(p, nv, q + model->q0[i], out + v0);
        if (model->joint_type[i] == MBD_FREE && joint_has_armature(model, i))
            free_armature_force(model->armature[i], qd + v0, out + v0);
    }
    for (int k = 0; k < model->nv && tau; k++)
        out[k] += tau[k];
    return gpu_all_finite(out, model->nv) ? MBD_OK : MBD_ENONFINITE;
}

/* The dense solver's acceleration form (dense.c): H by CRBA into scratch, the bias C
 * (RNEA with qdd = 0) after it, then qdd = H^-1 (tau - C) by H = L L^T, which lets a NaN
 * pivot through as the CPU's LAPACK does. */
MBD_INLINE int gpu_dense_solve(const mbd_model *model, mbd_work *work, const double *q,
                               const double *qd, const double *tau, double *qdd)
{
    const int nv = model->nv;
    double *H = work->scratch, *C = H + (size_t)nv * nv;
    tree_kinematics(model, work, q);
    for (int k = 0; k < nv; k++)
        qdd[k] = 0.0;
    rnea_passes(model, work, qd, qdd, 1, C);
    for (int k = 0; k < nv; k++)
        qdd[k] = (tau ? tau[k] : 0.0) - C[k];
    crba_lower(model, work, H);
    if (dense_cholesky(H, nv, 0) >= 0)
        return MBD_ESINGULAR;
    small_forward_subst(H, nv, qdd);
    small_backward_subst(H, nv, qdd);
    return MBD_OK;
}

/* State s of the launch by kernel `kernel`: mbd_forward with its solver (bodies, dense),
 * or mbd_forward_momentum (poisson-ldlt: x is p, y qd, z pd); the same statuses. Passive
 * forces as there: added to tau (in work->passive_tau), or in the momentum form to pd at
 * the solve's qd. */
MBD_INLINE int gpu_state(int kernel, const gpu_launch *launch, mbd_work *work, size_t s)
{
    const mbd_model *model = &launch->model;
    const size_t nq = (size_t)model->nq, nv = (size_t)model->nv;
    const double *q = launch->q + s * nq, *x = launch->x + s * nv;
    const double *tau = launch->tau ? launch->tau + s * nv : NULL;
    double *y = launch->y + s * nv, *z = launch->z ? launch->z + s * nv : NULL;
    int status = gpu_start_state(model, work, q, x, tau);
    if (status == MBD_OK && model->has_passive && !z) {
        status = gpu_passive_add(model, q, x, tau, work->passive_tau);
        tau = work->passive_tau;
    }
    if (status != MBD_OK)
        return status;
    status = kernel == GPU_KERNEL_bodies         ? bodies_sweep(model, work, q, x, tau, y, 1)
             : kernel == GPU_KERNEL_bodies_slots ? bodies_sweep(model, work, q, x, tau, y, 0)
             : kernel == GPU_KERNEL_poisson_ldlt ? ldlt_solve(model, work, q, x, tau, y, z)
                                                 : gpu_dense_solve(model, work, q, x, tau, y);
    if (status == MBD_OK && model->has_passive && z) {
        status = gpu_passive_add(model, q, y, NULL, work->passive_tau);
        for (int k = 0; k < model->nv && status == MBD_OK; k++)
            z[k] += work->passive_tau[k];
    }
    const int finite = gpu_all_finite(y, model->nv) && (!z || gpu_all_finite(z, model->nv));
    return status == MBD_OK && !finite ? MBD_ENONFINITE : status;
}

/* Thread `thread` of `threads` on its workspace: states thread, thread + threads, ... */
MBD_INLINE void gpu_thread_states(int kernel, const gpu_launch *launch, mbd_work *work, int thread,
                                  int threads)
{
    work->screw_transforms = kernel != GPU_KERNEL_dense; /* CRBA and RNEA read X whole */
    for (int s = thread; s < launch->K; s += threads)
        launch->status[s] = gpu_state(kernel, launch, work, (size_t)s);
}

/* The same on the thread's block in launch->works, started once per batch. */
MBD_INLINE void gpu_thread_states_global(int kernel, const gpu_launch *launch, int thread,
                                         int threads)
{
    mbd_work work;
    gpu_work_at(&work, launch, gpu_thread_block(launch, thread));
    gpu_thread_states(kernel, launch, &work, thread, threads);
}

/* The same on a block of the thread's own (on the GPU its stack, in local memory),
 * started first: a thread with no state returns at once. */
MBD_INLINE void gpu_thread_states_local(int kernel, const gpu_launch *launch, double *block,
                                        int thread, int threads)
{
    if (thread >= launch->K)
        return;
    mbd_work work;
    gpu_start_work(&work, launch, (char *)block);
    gpu_thread_states(kernel, launch, &work, thread, threads);
}

#ifdef __NVPTX__
#pragma clang force_cuda_host_device end

#define GPU_THREAD                                                                                 \
    (int)(__nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() +                         \
          __nvvm_read_ptx_sreg_tid_x())
#define GPU_THREADS (int)(__nvvm_read_ptx_sreg_nctaid_x() * __nvvm_read_ptx_sreg_ntid_x())

/* Launchable .entry points in the PTX: the blocks' start (once per batch, one thread per
 * block), and each solver's kernel on those blocks and on a block of each thread's stack. */
extern "C" __attribute__((global)) void mbd_gpu_start_works(const gpu_launch *launch)
{
    mbd_work work;
    gpu_start_work(&work, launch, gpu_thread_block(launch, GPU_THREAD));
}

#define GPU_ENTRY(kernel, solvers, entry, local_entry)                                             \
    extern "C" __attribute__((global)) void entry(const gpu_launch *launch)                        \
    {                                                                                              \
        gpu_thread_states_global(GPU_KERNEL_##kernel, launch, GPU_THREAD, GPU_THREADS);            \
    }                                                                                              \
    extern "C" __attribute__((global)) void local_entry(const gpu_launch *launch)                  \
    {                                                                                              \
        double block[GPU_LOCAL_BYTES / sizeof(double)] __attribute__((aligned(64)));               \
        gpu_thread_states_local(GPU_KERNEL_##kernel, launch, block, GPU_THREAD, GPU_THREADS);      \
    }
GPU_KERNEL_LIST(GPU_ENTRY)

#else

void gpu_start_works_on_cpu(const gpu_launch *launch, int threads)
{
    mbd_work work;
    for (int thread = 0; thread < threads; thread++)
        gpu_start_work(&work, launch, gpu_thread_block(launch, thread));
}

void gpu_thread_work_on_cpu(mbd_work *work, const gpu_launch *launch, int thread)
{
    gpu_work_at(work, launch, gpu_thread_block(launch, thread));
}

void gpu_run_on_cpu(int kernel, const gpu_launch *launch, int threads, double *local_block)
{
    for (int thread = 0; thread < threads; thread++)
        if (local_block)
            gpu_thread_states_local(kernel, launch, local_block, thread, threads);
        else
            gpu_thread_states_global(kernel, launch, thread, threads);
}

#endif
