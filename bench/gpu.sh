#!/bin/bash
# bench/gpu.sh: the GPU batch on a GPU machine that has a CUDA driver and nothing else
# (no compiler, no CUDA toolkit, no network). Two modes:
#
#   bench/gpu.sh --pack BUILD   (here, by `make gpu-bundle`) packs BUILD/mbd-gpu-bench,
#       BUILD/tests/test_gpu, BUILD/mbd-bench, this script, and every library they load
#       with the loader itself, into BUILD/mbd-gpu.tar.xz;
#   mbd-gpu/gpu.sh [--quick] [OUT]   (there, in the unpacked bundle) runs, each step logged
#       and under its own time limit, a failed step not stopping the next: the device
#       (nvidia-smi, lscpu), the check (test_gpu with MBD_TEST_GPU=1: every kernel against
#       its CPU solver to 1e-12 relative, every joint type, K not a multiple of the block)
#       with the build's cubins and with the PTX through the driver's JIT at level 4
#       (MBD_GPU_IMAGE, MBD_GPU_JIT_LEVEL, docs/gpu.md) and, if
#       both fail, at level 0 and at 4 under compute-sanitizer, with the workspaces on the
#       threads' stacks where they fit (the default) and in global memory
#       (MBD_GPU_WORKSPACE), and bodies' inertia sums in slots (MBD_GPU_INERTIA_SUMS);
#       then the timings (mbd-gpu-bench: each solver's GPU kernel
#       alone and with copies at the level that passed, rows ending /jit:4 at level 4, and
#       the CPU batch on every core, against K, N = 10, 100, 1000), which write
#       OUT/gpu-<device>.json (default OUT: ./results) after each measurement, and bodies
#       with its inertia sums in slots at large K into OUT/slots/, the PTX's code against
#       the cubins' (OUT/ptx/), and perf stat of the CPU batch on 1 and all threads where
#       the machine has perf (OUT/perf-batch-*.json, the counts in the log). Without
#       --quick, then: the same with the workspaces in global memory into OUT/global/, the
#       stack at 128 and 2048 threads per multiprocessor (OUT/stack-THREADS/), and the CPU batch
#       suite on one core, half the cores and all of them (mbd-bench --suite batch) into
#       OUT/batch-<cores>-cores.json. About 8 minutes (H200); --quick about 5.
#
# The binaries start through the carried loader, so that the machine's own libc plays no
# part: lib/ld-linux-x86-64.so.2 --library-path lib bin/... The CUDA driver is the
# machine's (dlopen of libcuda.so.1 from the search path below or its ld.so.cache).
set -u

pack() {
    local build=$1 stage
    stage=$build/bundle/mbd-gpu
    rm -rf "$build/bundle" && mkdir -p "$stage/bin" "$stage/lib" || exit 1
    cp "$build/mbd-gpu-bench" "$build/tests/test_gpu" "$build/mbd-bench" "$stage/bin/" || exit 1
    cp "$(dirname "$0")/gpu.sh" "$stage/" || exit 1
    # every library either binary loads, and the loader, as files (symbolic links resolved)
    ldd "$stage"/bin/* |
        awk '/=> \// { print $3 } /^\t\/.*ld-linux/ { print $1 }' | sort -u |
        while read -r lib; do cp -L "$lib" "$stage/lib/" || exit 1; done || exit 1
    [ -e "$stage/lib/ld-linux-x86-64.so.2" ] || { echo "gpu.sh: no loader found by ldd" >&2; exit 1; }
    # the stubs that libcuda.so.1 still names (libc has them since glibc 2.34): ours, so that
    # the machine's, of another glibc, do not load beside our libc
    local libc_dir
    libc_dir=$(dirname "$(readlink -f "$(ldd "$stage/bin/test_gpu" | awk '/libc.so.6/ { print $3 }')")")
    for stub in libdl.so.2 libpthread.so.0 librt.so.1; do
        cp -L "$libc_dir/$stub" "$stage/lib/" || exit 1
    done
    tar -cf - -C "$build/bundle" mbd-gpu | xz -T0 -3 > "$build/mbd-gpu.tar.xz" || exit 1
    echo "gpu.sh: $build/mbd-gpu.tar.xz ($(du -h "$build/mbd-gpu.tar.xz" | cut -f1)); on the GPU machine:"
    echo "  tar -xJf mbd-gpu.tar.xz && mbd-gpu/gpu.sh OUT_DIR"
}

if [ "${1:-}" = --pack ]; then
    pack "${2:?usage: gpu.sh --pack BUILD}"
    exit
fi

here=$(cd "$(dirname "$0")" && pwd)
quick=
[ "${1:-}" = --quick ] && { quick=1; shift; }
out=${1:-$PWD/results}
mkdir -p "$out" || exit 1
exec > >(tee -a "$out/gpu.log") 2>&1

# step NAME SECONDS COMMAND...: logs its start, end, exit status (also left in step_rc)
# and time
step() {
    local name=$1 limit=$2 start
    shift 2
    start=$(date +%s)
    echo "== $(date -u +%T) $name (limit ${limit}s)"
    timeout -k 5 "$limit" "$@"
    step_rc=$?
    echo "== $(date -u +%T) $name: exit $step_rc after $(($(date +%s) - start))s$([ $step_rc -eq 124 ] && echo ' (timed out)')"
    return 0
}

# The carried loader ignores LD_LIBRARY_PATH, where such a machine may keep libcuda.so.1:
# the search path names it, after our own libraries.
libs="$here/lib:${LD_LIBRARY_PATH:-}:/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu"

step "machine" 15 bash -c 'uname -a; nproc; lscpu; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1 || true'
test_gpu=("$here/lib/ld-linux-x86-64.so.2" --library-path "$libs" "$here/bin/test_gpu")
# the check: every test of test_gpu through the GPU (cmocka prints each), with the build's
# cubins (the default, where the build had ptxas) and with the PTX through the driver's
# JIT at optimisation level 4 (MBD_GPU_IMAGE=ptx: a build without the toolkit), the
# workspaces on the threads' stacks where they fit (the default) and in global memory; if
# both fail, the PTX at level 0 (docs/gpu.md), and level 4 under compute-sanitizer where
# the machine has it (a fault's address and source line)
step "check: GPU kernels against the CPU solvers, the build's cubins" 100 \
    env MBD_TEST_GPU=1 "${test_gpu[@]}"
cubin_rc=$step_rc
step "check: the same from the PTX, JIT level 4" 100 \
    env MBD_TEST_GPU=1 MBD_GPU_IMAGE=ptx MBD_GPU_JIT_LEVEL=4 "${test_gpu[@]}"
image=cubin levels=4
[ "$cubin_rc" -ne 0 ] && image=ptx
if [ "$cubin_rc" -ne 0 ] && [ "$step_rc" -ne 0 ]; then
    levels=0
    step "check: the PTX at JIT level 0" 100 \
        env MBD_TEST_GPU=1 MBD_GPU_IMAGE=ptx MBD_GPU_JIT_LEVEL=0 "${test_gpu[@]}"
    sanitizer=$(command -v compute-sanitizer ||
        ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
    [ -n "$sanitizer" ] && step "check: JIT level 4 under compute-sanitizer" 60 \
        env MBD_TEST_GPU=1 MBD_GPU_IMAGE=ptx MBD_GPU_JIT_LEVEL=4 "$sanitizer" --print-limit 5 "${test_gpu[@]}"
fi
export MBD_GPU_IMAGE=$image
step "check: the workspaces in global memory" 100 \
    env MBD_TEST_GPU=1 MBD_GPU_JIT_LEVEL=$levels MBD_GPU_WORKSPACE=global "${test_gpu[@]}"
step "check: bodies' inertia sums in slots" 100 \
    env MBD_TEST_GPU=1 MBD_GPU_JIT_LEVEL=$levels MBD_GPU_INERTIA_SUMS=slots "${test_gpu[@]}"
# the timings: JSON after each measurement, so that a cut-short run keeps its rows
gpu_bench=("$here/lib/ld-linux-x86-64.so.2" --library-path "$libs" "$here/bin/mbd-gpu-bench"
    --min-time 0.02 --jit-levels "$levels")
step "timings: mbd-gpu-bench, $image, JIT level $levels" 110 \
    "${gpu_bench[@]}" --out "$out" --cpu-threads "$(nproc)" --budget 90
# bodies with its inertia sums in slots (gpu.h): its large-K rows, beside the default's
mkdir -p "$out/slots"
step "timings: bodies' inertia sums in slots" 35 env MBD_GPU_INERTIA_SUMS=slots \
    "${gpu_bench[@]}" --out "$out/slots" --n 10,100 --min-k 65536 --cpu-threads 0 --budget 25
# the build's cubins against the driver's code from the PTX: N = 100 at large K
if [ "$image" = cubin ]; then
    mkdir -p "$out/ptx"
    step "timings: the PTX through the driver's JIT" 35 env MBD_GPU_IMAGE=ptx \
        "${gpu_bench[@]}" --out "$out/ptx" --n 100 --min-k 65536 --cpu-threads 0 --budget 25
fi
# the CPU batch's scaling (docs/gpu.md: 16 threads 3.0-13.8x one): cycles per second of
# task clock (each thread's clock) and cache misses on 1 thread and on all, where the
# machine has perf
if command -v perf > /dev/null; then
    for threads in 1 "$(nproc)"; do
        step "perf stat: the CPU batch of bodies on $threads threads" 60 \
            perf stat -e task-clock,cycles,instructions,cache-references,cache-misses,context-switches,cpu-migrations \
            "$here/lib/ld-linux-x86-64.so.2" --library-path "$libs" "$here/bin/mbd-bench" --suite batch \
            --batch-n 50 --filter "^batch_bodies.*/autotree-chain/" --threads "$threads" --repetitions 1 --json "$out/perf-batch-$threads.json"
    done
fi
[ "$quick" ] && { ls -la "$out"; exit 0; }
# the workspaces in global memory (N <= 100: beyond, the stack's do not fit)
mkdir -p "$out/global"
step "timings: the workspaces in global memory" 75 env MBD_GPU_WORKSPACE=global \
    "${gpu_bench[@]}" --out "$out/global" --n 10,100 --min-k 1024 --cpu-threads 0 --budget 60
# the threads per multiprocessor on the stack (its default, 512, above): large-K rows
for threads in 128 2048; do
    mkdir -p "$out/stack-$threads"
    step "timings: the stack, $threads threads per multiprocessor" 25 \
        env MBD_GPU_THREADS_PER_SM=$threads "${gpu_bench[@]}" --out "$out/stack-$threads" \
        --n 100 --min-k 65536 --cpu-threads 0 --budget 15
done
# the CPU batch of every solver on one core, half the cores and all of them (the report's
# scaling target; half: where hardware threads share cores, lscpu above says)
step "timings: the CPU batch on 1, $(($(nproc) / 2)) and $(nproc) cores" 120 \
    "$here/lib/ld-linux-x86-64.so.2" --library-path "$libs" "$here/bin/mbd-bench" --suite batch \
    --threads "1,$(($(nproc) / 2)),$(nproc)" --repetitions 3 --json "$out/batch-$(nproc)-cores.json"
ls -la "$out"
