#!/bin/sh
# mujoco.sh [RESULTS_DIR [--quick]]: the MuJoCo comparison of the report (bench/MUJOCO.md).
# Times every model family at each N with build/peer-mujoco, our solvers and MuJoCo (the
# wheel pinned in python/requirements.txt; the version it reports names the section) in
# the same run, and writes RESULTS_DIR/mujoco.json (Google Benchmark's schema),
# RESULTS_DIR/dat/mujoco.dat, report/mujoco.svg and .png (report/mujoco.gp) and the
# report's section report/mujoco.md; each file appears whole or not at all. RESULTS_DIR
# defaults to results; --quick is a smoke run of a few seconds. report/make_report.sh
# runs it.
set -eu
cd "$(dirname "$0")/.."

results=${1:-results}
dat=$results/dat
if [ "${2:-}" = --quick ]; then
    ns="10 100"
    timing="--min-time 0.005 --repetitions 3"
else
    ns="10 30 100 300"  # MuJoCo factors a chain in O(N^3): 1.5 s a call at 2000 dofs
    timing="--min-time 0.05 --repetitions 5"
fi
# FAMILY=SPEC, the harness's family names (bench/suite.c) where it has the family.
families="autotree-chain=tree:n=%d,branching=1,skew=0.5
          autotree-binary=tree:n=%d,branching=2,skew=0.5
          autotree-binary-free=tree:n=%d,branching=2,skew=0.5,base=free
          chain-revolute=chain:n=%d,joint=revolute chain-prismatic=chain:n=%d,joint=prismatic
          chain-cylindrical=chain:n=%d,joint=cylindrical chain-cardan=chain:n=%d,joint=cardan
          rods=rods:n=%d"

models=""
for family in $families; do
    for n in $ns; do
        # shellcheck disable=SC2059 # the family is the format: its %d takes N
        models="$models $(printf "$family" "$n")"
    done
done

mkdir -p "$dat" report
# shellcheck disable=SC2086 # one argument per model and timing flag
# the peer of the build that make names (PEER_MUJOCO: BUILD=... builds it elsewhere)
"${PEER_MUJOCO:-build/peer-mujoco}" time $models $timing --json "$results/mujoco.json" --dat "$dat/mujoco.dat"

variants=$(awk '!/^#/ && NF && !seen[$2]++ { print $2 }' "$dat/mujoco.dat" | tr '\n' ' ')
for ext in svg png; do
    gnuplot -e "dat='$dat'; out='report/.mujoco.tmp'; ext='$ext'; variants='$variants'" \
        report/common.gp report/mujoco.gp
    mv "report/.mujoco.tmp.$ext" "report/mujoco.$ext"
done

# The report's section (report/readme.sh takes in every report/*.md): the chart and a table
# of, per family and N, MuJoCo's two times and each of our variants' time as a multiple of
# MuJoCo's path (- where a variant was not timed, as dense above N = 300).
table() {
    awk -v variants="$variants" '
        function time(ns) {
            if (ns < 1e6) return sprintf("%.1f µs", ns / 1e3)
            return ns < 1e9 ? sprintf("%.2f ms", ns / 1e6) : sprintf("%.2f s", ns / 1e9)
        }
        BEGIN { nv = split(variants, name, " ") }
        /^#/ || !NF { next }
        {
            key = $1 " " $3
            if (!(key in seen)) { seen[key] = 1; order[++rows] = key; dofs[key] = $5
                                  path[key] = $8; factor[key] = $9 }
            ratio[key, $2] = $6 / $8
        }
        END {
            printf "| family | N | dofs | MuJoCo path | MuJoCo factorM + solveM |"
            for (v = 1; v <= nv; v++) printf " %s |", name[v]
            printf "\n|---|---:|---:|---:|---:|"
            for (v = 1; v <= nv; v++) printf "---:|"
            printf "\n"
            for (r = 1; r <= rows; r++) {
                key = order[r]; split(key, part, " ")
                printf "| %s | %d | %d | %s | %s |", part[1], part[2], dofs[key], time(path[key]),
                       time(factor[key])
                for (v = 1; v <= nv; v++)
                    if ((key, name[v]) in ratio) printf " %.3g |", ratio[key, name[v]]
                    else printf " - |"
                printf "\n"
            }
        }
    ' "$dat/mujoco.dat"
}
version=$(sed -n 's/.*"mujoco_version": *"\([^"]*\)".*/\1/p' "$results/mujoco.json" | head -n 1)
{
    echo "## Against MuJoCo $version"
    echo
    echo "![Our time per call over MuJoCo's](mujoco.png)"
    echo
    echo "[SVG](mujoco.svg) · data: \`$dat/mujoco.dat\`, \`$results/mujoco.json\`"
    echo
    echo "MuJoCo $version (composite rigid bodies, then a tree-sparse LDLᵀ factorization of the"
    cat <<'TEXT'
mass matrix) runs the same models, exported by `mbd export mjcf`, on
the same states in the same run, one thread each. Its time is that of mj_kinematics,
mj_comPos, mj_crb, mj_factorM, mj_comVel, mj_rne and mj_solveM, which is mj_forward with only
rigid-body dynamics enabled. Below, MuJoCo's median times and each of our variants' median
time as a multiple of MuJoCo's (below 1: faster than MuJoCo). How the models are matched
and how closely the two agree: [bench/MUJOCO.md](../bench/MUJOCO.md).

TEXT
    table
} > report/.mujoco.md.tmp
mv report/.mujoco.md.tmp report/mujoco.md
echo "mujoco.sh: $results/mujoco.json, $dat/mujoco.dat, report/mujoco.md, .svg and .png written" >&2
