#!/usr/bin/env bash
# flops.sh RESULTS_DIR [N]: the double-precision operations per body of every variant that
# RESULTS_DIR/dat/percall.dat timed at N (default 100), on every frictionless family, into
# RESULTS_DIR/dat/flops.dat ("family variant n flops_per_call flops_per_body").
#
# How they are counted: report/flops.c runs one random state of the family's model through
# the variant, built statically at -O2 for baseline x86-64 without vectorization
# (build-flops/), so that each operation of the source is one instruction. Valgrind's
# callgrind counts how often each instruction executes in the second call of each pair
# (the first, setup and loading stay out); every executed add, subtract, multiply, divide
# and square root counts 1 per double (2 or 4 for SSE or AVX packed forms), a fused
# multiply-add 2, whether in our code, libm (sin, cos) or OpenBLAS (the dense solver's
# dpotrf). One Valgrind process counts every pair, one dump each.
set -euo pipefail
cd "$(dirname "$0")/.."

results=${1:?usage: report/flops.sh RESULTS_DIR [N]}
n=${2:-100}
dat=$results/dat
build=build-flops
driver=$build/flops
multiarch=$(gcc -print-multiarch)

# MUJOCO_FOUND=no: the driver links statically, and Debian ships MuJoCo as a shared library
# only (the MJCF reader then says it was built without MuJoCo; the driver reads no MJCF).
make -s BUILD=$build OPT="-O2 -march=x86-64 -fno-tree-vectorize -fno-tree-slp-vectorize" \
    MUJOCO_FOUND=no $build/libmbd.a >&2
gcc -O2 -static -Iinclude report/flops.c $build/libmbd.a -ljansson \
    $(pkg-config --static --libs libxml-2.0) -lstdc++ -llapacke \
    "/usr/lib/$multiarch/openblas-pthread/libopenblas.a" -lgfortran -lquadmath -lm -fopenmp \
    -lpthread -o "$driver" 2> >(grep -v -e 'statically linked applications' -e ': in function' >&2)
# Valgrind 3.19 gives up on some of gcc 12's DWARF 5 in this binary ("possibly corrupted
# debuginfo"); the counts need no debug information: instruction addresses and symbols.
strip --strip-debug "$driver"
# The arithmetic instructions of the binary, for flops.awk.
objdump -d --no-show-raw-insn "$driver" |
    grep -E $'\t(v?(add|sub|mul|div|sqrt)[sp]d|vfn?m(add|sub)[0-9]+[sp]d) ' > "$build/flops.dis"

# The pairs (family, variant) that the run timed at N, frictionless families and the
# library's own solvers only (a plugin's are not in the driver).
builtin=$(env -u MBD_PLUGINS "${MBD:-./mbd}" solvers | awk '{ printf "%s%s", sep, $1; sep = "|" }')
pairs=$(awk -v n="$n" -v builtin="^($builtin)(-momentum)?$" \
            '!/^#/ && $3 == n && $1 !~ /-friction$/ && $2 ~ builtin { print $1, $2 }' "$dat/percall.dat")
args=()
while read -r family variant; do
    [ -n "$family" ] || continue
    spec=$(jq -r --arg f "$family" '.context.families[$f]' "$results/latest.json")
    args+=("${spec//%d/$n}" "$variant")
done <<< "$pairs"
echo "flops.sh: counting $((${#args[@]} / 2)) calls under Valgrind" >&2
rm -f "$build"/callgrind.out*
OPENBLAS_NUM_THREADS=1 valgrind -q --tool=callgrind --dump-instr=yes \
    --callgrind-out-file="$build/callgrind.out" "$driver" "${args[@]}" >&2

tmp=$dat/.flops.dat.tmp
dumps=()
for ((d = 1; d <= ${#args[@]} / 2; d++)); do dumps+=("$build/callgrind.out.$d"); done
echo "# family variant n flops_per_call flops_per_body" > "$tmp"
paste -d ' ' <(echo "$pairs") <(gawk -f report/flops.awk "$build/flops.dis" "${dumps[@]}") |
    awk -v n="$n" '{ printf "%s %s %d %s %.1f\n", $1, $2, n, $3, $3 / n }' >> "$tmp"
sync "$tmp"
mv "$tmp" "$dat/flops.dat"
