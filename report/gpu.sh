#!/bin/bash
# report/gpu.sh [results/gpu-<device>.json ...]: report/gpu.md, the GPU section of the
# report, from the files bench/gpu.sh wrote on a GPU machine (default: every
# results/gpu-*.json). Per file: ns per body per state of the bodies sweep against K for
# each N (the kernel alone, with copies, the CPU batch on every core of the same machine),
# the smallest K at which the GPU is faster than that CPU batch, and the kernel's distance
# from the memory roofline; then, where the file has them, the solvers on the GPU ranked
# for each N by their best kernel time (each driver optimisation level that was timed).
set -eu
cd "$(dirname "$0")/.."
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(results/gpu-*.json)
out=report/gpu.md
# Bytes per body per state of the bodies kernel that a run timed: its file's
# context.bodies_bytes_per_body (counted in bench/gpu/gpu_bench.c), or for files written
# before it was there, 832 by the same count (X whole then: rows 0 and 1 of E out, row 2
# and r in, then all 12 in at each later pass, 36 doubles where the screw's take 15:
# 104 x 8).
bytes_of() { jq -r '.context.bodies_bytes_per_body // 832' "$1"; }

# A GPU's memory bandwidth in TB/s and FP64 rate in TFLOP/s without its tensor cores (the
# kernels use none), from NVIDIA's data sheets, or nothing for one not listed here (then no
# floor is given). peak DEVICE bandwidth|fp64
peak() {
    local peaks
    case $1 in
    *H200*) peaks="4.8 34" ;;
    *H100*PCIe*) peaks="2.0 26" ;;
    *H100*) peaks="3.35 34" ;;
    *A100*) peaks="2.0 9.7" ;;
    *) return 0 ;;
    esac
    set -- $peaks "$2"
    [ "$3" = bandwidth ] && echo "$1" || echo "$2"
}

# The FP64 floor of each solver's kernel at N = 100 on the GPU machine's device $1: the
# operations per body that report/flops.sh counted for the same solver and family on the
# CPU (results/dat/flops.dat, under Valgrind), at the device's FP64 rate, against the
# kernel's best time at N = 100 ($2: the rows file).
fp64_floor() {
    local rate flops=results/dat/flops.dat
    rate=$(peak "$1" fp64)
    [ -n "$rate" ] && [ -e "$flops" ] || return 0
    echo
    echo "The FP64 side at N = 100: operations per body from \`$flops\` (counted on the CPU's"
    echo "build, whose sine and cosine are libm's; the GPU's are polynomials), at $rate TFLOP/s:"
    echo
    awk -v rate="$rate" '
        FNR == NR { if ($1 == "autotree-chain" && $3 == 100) ops[$2] = $5; next }
        $2 == 100 && $1 ~ /^gpu_/ && $1 !~ /-copies/ {
            split(substr($1, 5), v, "/jit:")
            if (!(v[1] in best) || $4 < best[v[1]]) best[v[1]] = $4 }
        END { for (s in best) if (s in ops) {
                  floor = ops[s] / (rate * 1e12) * 1e9
                  printf "- %s: %.0f operations per body, a floor of %.3g ns; the kernel'"'"'s best, %.3g ns, is %.0f x it.\n",
                      s, ops[s], floor, best[s], best[s] / floor } }' "$flops" "$2" | sort
}

# The GPU kernels side by side in one table per directory, one column per file of it: the
# threads resident per multiprocessor (results/gpu-threads-per-sm-<device>/<threads>.json,
# each an mbd-gpu-bench run with MBD_GPU_THREADS_PER_SM set) and the workspaces' placement
# (results/gpu-placement-<device>/<placement>-<threads>.json, MBD_GPU_WORKSPACE too):
# ns per body per state of each kernel row.
columns() {
    local dir f
    for dir in results/gpu-threads-per-sm-*/ results/gpu-placement-*/; do
        [ -d "$dir" ] || continue
        echo
        case $dir in
        *threads-per-sm*)
            echo "### The kernels against the threads resident per multiprocessor (${dir%/})"
            echo
            echo "ns per body per state of the kernel alone (JIT level 4, workspaces in global"
            echo "memory), one column per \$MBD_GPU_THREADS_PER_SM:" ;;
        *)
            echo "### The kernels against the workspaces' placement (${dir%/})"
            echo
            echo "ns per body per state of the kernel alone (JIT level 4), one column per"
            echo "\$MBD_GPU_WORKSPACE and \$MBD_GPU_THREADS_PER_SM, from one run on one machine (\`dense\`"
            echo "at N = 100 does not fit on the stack and runs in global memory in every column):" ;;
        esac
        echo
        for f in $(printf '%s\n' "$dir"*.json | sort -V); do # columns by name
            jq -r --arg t "$(basename "$f" .json)" '.benchmarks[]
                | select(.run_type == "aggregate" and .aggregate_name == "median")
                | select(.run_name | test("^gpu_") and (test("-copies") | not))
                | [$t, .run_name, .ns_per_body] | @tsv' "$f"
        done | awk -F'\t' '
            { if (!($2 in seen)) order[++rows] = $2
              seen[$2]++
              if (!($1 in ts)) { ts[$1] = 1; tlist[++nt] = $1 }
              t[$2, $1] = $3 }
            END { printf "| kernel |"; for (i = 1; i <= nt; i++) printf " %s |", tlist[i]
                  printf "\n|---|"; for (i = 1; i <= nt; i++) printf "---:|"; print ""
                  for (r = 1; r <= rows; r++) {
                      if (seen[order[r]] < 2) continue # in one column only
                      printf "| %s |", order[r]
                      for (i = 1; i <= nt; i++)
                          printf " %s |", (order[r], tlist[i]) in t ? sprintf("%.3g", t[order[r], tlist[i]]) : ""
                      print ""
                  } }'
    done
}

# The CPU batch on one core against every core of a GPU machine (results/batch-*-cores.json,
# bench/gpu.sh's last step): t(1 thread) / t(T threads) for each variant, family and N.
scaling() {
    local f
    for f in results/batch-*-cores.json; do
        [ -e "$f" ] || continue
        echo
        echo "### The CPU batch on the cores of the GPU machine ($f: $(jq -r '.context.cpu_model' "$f"), K = 1024)"
        echo
        echo "Speed-up of T threads over one, per N and T (median times; the issue's target: >= 12 on 16):"
        echo
        jq -r '.benchmarks[] | select(.run_type == "aggregate" and .aggregate_name == "median")
               | (.run_name | capture("^batch_(?<v>[^/]*)/(?<f>[^/]*)/n:(?<n>[0-9]+)/k:[0-9]+/threads:(?<t>[0-9]+)")) as $m
               | [$m.v, $m.f, $m.n, $m.t, .real_time] | @tsv' "$f" |
            awk -F'\t' '
                { key = $1 "\t" $2; if (!(key in seen)) { seen[key] = 1; order[++rows] = key }
                  if (!($3 in ns)) { ns[$3] = 1; nlist[++nn] = $3 }
                  if ($4 > most) most = $4
                  if ($4 != 1 && !($4 in ts)) { ts[$4] = 1; tlist[++nt] = $4 }
                  t[key, $3, $4] = $5 }
                END { printf "| variant | family |"
                      for (i = 1; i <= nn; i++) for (j = 1; j <= nt; j++) printf " N = %s, %s |", nlist[i], tlist[j]
                      printf "\n|---|---|"; for (i = 1; i <= nn * nt; i++) printf "---:|"; print ""
                      for (r = 1; r <= rows; r++) {
                          split(order[r], vf, "\t"); printf "| %s | %s |", vf[1], vf[2]
                          for (i = 1; i <= nn; i++) for (j = 1; j <= nt; j++) {
                              one = order[r] SUBSEP nlist[i] SUBSEP 1; k = order[r] SUBSEP nlist[i] SUBSEP tlist[j]
                              if ((one in t) && (k in t)) { x = t[one] / t[k]; printf " %.1f |", x
                                                            if (tlist[j] == most) { cells++; met += x >= 12 } }
                              else printf " |"
                          }
                          print ""
                      }
                      printf "\n%d threads: >= 12 in %d of %d cells.\n", most, met, cells }'
    done
}
{
    echo "## GPU batches"
    echo
    echo "From \`bench/gpu.sh\` (\`mbd-gpu-bench\`): the bodies sweep on the GPU, one thread per state, its"
    echo "kernel alone (states already on the GPU) and with the copies in and out, beside the CPU"
    echo "batch (\`mbd_batch\`, lanes) on every core of the same machine; revolute chains"
    echo "(autotree-chain). ns per body per state, median of the repetitions; the GPU's rows at"
    echo "the driver's optimisation level 4 where the file has them (else level 0)."
    for f in "${files[@]}"; do
        [ -e "$f" ] || continue
        device=$(jq -r '.context.gpu_device' "$f")
        cores=$(jq -r '.context.cpu_batch_threads' "$f")
        bytes_per_body=$(bytes_of "$f")
        echo
        echo "### $device ($f; workspaces: $(jq -r '.context.gpu_workspace // "global"' "$f"), where they fit; CPU batch: $cores threads, $(jq -r '.context.cpu_model // "?"' "$f"))"
        echo
        echo "| N | K | GPU kernel | GPU with copies | CPU batch | kernel / CPU |"
        echo "|---:|---:|---:|---:|---:|---:|"
        # variant (with /jit:L for a GPU row of level L > 0), N, K, ns per body per state
        jq -r '.benchmarks[] | select(.run_type == "aggregate" and .aggregate_name == "median")
               | [(.run_name | capture("^(?<v>[^/]*)/[^/]*/n:(?<n>[0-9]+)/k:(?<k>[0-9]+)(/jit:(?<j>[0-9]+))?")) as $m
                  | $m.v + (if $m.j then "/jit:" + $m.j else "" end), $m.n, $m.k, .ns_per_body]
               | @tsv' "$f" > /tmp/gpu-report-rows.$$
        awk -F'\t' '{ print $2, $3 }' /tmp/gpu-report-rows.$$ | sort -u -n -k1,1 -k2,2 \
            > /tmp/gpu-report-keys.$$
        awk -F'\t' -v bytes="$bytes_per_body" -v bandwidth="$(peak "$device" bandwidth)" '
            FNR == NR { t[$2 " " $3, $1] = $4; next }
            { split($0, nk, " "); n = nk[1]; k = nk[2]; key = n " " k
              g = t[key, "gpu_bodies/jit:4"]; c = t[key, "gpu_bodies-copies/jit:4"]
              if (g == "") { g = t[key, "gpu_bodies"]; c = t[key, "gpu_bodies-copies"] }
              b = t[key, "batch_bodies"]
              printf "| %d | %d | %s | %s | %s | %s |\n", n, k, g == "" ? "" : sprintf("%.4g", g),
                  c == "" ? "" : sprintf("%.4g", c), b == "" ? "" : sprintf("%.4g", b),
                  g == "" || b == "" ? "" : sprintf("%.3g", g / b)
              if (g != "" && b != "" && g < b && !(n in wins)) wins[n] = k
              if (g != "" && (!(n in best) || g < best[n])) best[n] = g }
            END { print ""
                  for (n in best) {
                      printf "N = %d: the GPU kernel beats the CPU batch from K = %s; its best is %.4g ns per body per state",
                          n, n in wins ? wins[n] : "(never, within the Ks run)", best[n]
                      if (bandwidth) { floor = bytes / (bandwidth * 1e12) * 1e9
                                       printf ", %.2g x the memory floor of %d bytes per body per state at %s TB/s (%.3g ns)",
                                           best[n] / floor, bytes, bandwidth, floor }
                      print "."
                  } }' /tmp/gpu-report-rows.$$ /tmp/gpu-report-keys.$$
        # the solvers ranked for each N: each GPU kernel's best over K, and the CPU batch's
        # best for the same solver; only for files with more than the bodies sweep
        if cut -f1 /tmp/gpu-report-rows.$$ | grep -q '^gpu_\(poisson\|dense\)'; then
            echo
            echo "Solvers on the GPU, for each N ranked by the kernel's best time over K (JIT: the driver's"
            echo "optimisation level), beside the CPU batch's best for the same solver:"
            echo
            echo "| N | rank | solver | JIT | GPU kernel, best | at K | CPU batch, best | GPU / CPU |"
            echo "|---:|---:|---|---:|---:|---:|---:|---:|"
            # N, best, its K, solver, JIT level, the CPU batch's best; sorted, ranked
            awk -F'\t' '
                { v = $1; n = $2; k = $3; t = $4
                  if (v ~ /^batch_/) { s = substr(v, 7); if (!((n, s) in cpu) || t < cpu[n, s]) cpu[n, s] = t; next }
                  if (v !~ /^gpu_/ || v ~ /-copies/) next
                  if (!((n, v) in best) || t < best[n, v]) { best[n, v] = t; at[n, v] = k } }
                END { for (key in best) {
                          split(key, p, SUBSEP); split(substr(p[2], 5), sj, "/jit:")
                          c = (p[1], sj[1]) in cpu ? cpu[p[1], sj[1]] : ""
                          printf "%s\t%s\t%s\t%s\t%d\t%s\n", p[1], best[key], at[key], sj[1], sj[2], c } }' \
                /tmp/gpu-report-rows.$$ | sort -t"$(printf '\t')" -k1,1n -k2,2g |
                awk -F'\t' '{ rank[$1]++
                              printf "| %d | %d | %s | %d | %.4g | %d | %s | %s |\n", $1, rank[$1], $4, $5, $2, $3,
                                  $6 == "" ? "" : sprintf("%.4g", $6), $6 == "" ? "" : sprintf("%.3g", $2 / $6) }'
        fi
        fp64_floor "$device" /tmp/gpu-report-rows.$$
        rm -f /tmp/gpu-report-keys.$$ /tmp/gpu-report-rows.$$
    done
    columns
    scaling
    echo
    echo "The memory floor counts the workspace arrays that the sweep stores per body and reads"
    echo "back (bodies_kernels.h on the benchmark's revolute joints, counted in"
    echo "bench/gpu/gpu_bench.c: each run's count above); at K in the thousands a state's"
    echo "workspace (65 KB at N = 100) does not stay in the GPU's caches."
} > "$out"
echo "report/gpu.sh: $out"
