#!/usr/bin/env bash
# make_report.sh [--quick]: the benchmark sweep, the whole-process timings, the charts and
# report/README.md. `make report` runs it after building mbd and mbd-bench; --quick
# (make report QUICK=1) is a smoke run of well under a minute.
#
# Writes results/<host>-<date>.json and results/latest.json (Google Benchmark's schema),
# results/dat/*.dat (one table per chart, and flops.dat), results/hyperfine.{json,md},
# report/*.svg, report/*.png, report/loops.md, report/ensemble.md, report/README.md and
# report/index.html (report/page.sh), report/compare.html (this run against the one before);
# each
# file is written beside its target, synced and renamed, so it appears whole or not at all.
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
--quick) quick_robots=build/report/robots-quick.txt
         mkdir -p build/report
         grep -E '^(ur5-robot|go2|g1-29dof-rev-1-0|menagerie-panda|menagerie-g1|mbd-arm7) ' bench/robots.txt > "$quick_robots"
         sweep=(--n 1,5,10,20,50,100,1000 --phase-n 5,20,50 --batch-n 10,50 --scaling-n 300,1000 --min-time 0.005
                --repetitions 3 --derivatives-n 5,30 --robots "$quick_robots") ;;
"") sweep=() ;;
*) echo "usage: report/make_report.sh [--quick]" >&2; exit 2 ;;
esac

results=results
dat=$results/dat
mkdir -p "$dat" report

# The run before this one, kept for report/compare.html: what changed since.
before=$results/.before-this-run.json
cp "$results/latest.json" "$before" 2>/dev/null || before=

# Interleaved: a slow spell of a shared machine spreads over every measurement's
# repetitions instead of taking all of a few (bench/README.md).
./mbd-bench "${sweep[@]}" --interleave --json "$results/$(hostname)-$(date +%Y-%m-%d).json,$results/latest.json" \
    --dat "$dat"
report/flops.sh "$results"  # operations per body, counted under Valgrind: dat/flops.dat
bench/hyperfine.sh "$results" ${1:+--quick}
bench/mujoco.sh "$results" ${1:+--quick}  # MuJoCo as a peer: report/mujoco.*, bench/MUJOCO.md

# The distinct values of column col of the tables, in order of appearance (or numeric).
distinct() { local col=$1; shift; awk -v c="$col" '!/^#/ && NF && !seen[$c]++ { print $c }' "$@" | tr '\n' ' '; }
distinct_numbers() { distinct "$@" | tr ' ' '\n' | sort -n | tr '\n' ' '; }
has_rows() { grep -qv '^#' "$1"; }

variants=$(distinct 2 "$dat/percall.dat" "$dat/phases.dat" "$dat/batch.dat")
families=$(distinct 1 "$dat/percall.dat")
phase_ns=$(distinct_numbers 3 "$dat/phases.dat")
methods=$(distinct 2 "$dat/derivatives.dat")
deriv_families=$(distinct 1 "$dat/derivatives.dat")
dense_max_n=$(sed -n 's/^ *"dense_max_n": \([0-9]*\).*/\1/p' "$results/latest.json")

for chart in percall ratio phases batch crossover derivatives; do
    if ! has_rows "$dat/$chart.dat"; then
        echo "make_report.sh: $dat/$chart.dat is empty: no $chart chart" >&2
        continue
    fi
    for ext in svg png; do
        gnuplot -e "dat='$dat'; out='report/.$chart.tmp'; ext='$ext'; variants='$variants';
                    families='$families'; phase_ns='$phase_ns'; dense_max_n=$dense_max_n;
                    methods='$methods'; deriv_families='$deriv_families'" \
            report/common.gp "report/$chart.gp"
        sync "report/.$chart.tmp.$ext"
        mv "report/.$chart.tmp.$ext" "report/$chart.$ext"
    done
done

report/loops.sh "$results/latest.json"  # Chang 2007: |Phi| drift chart, cost of both routes
report/robots.sh "$dat"                  # the libraries on real robots: report/robots.*
report/ensemble.sh ${1:+--quick}        # ensembles over MPI ranks, report/ensemble.md

if [ -n "$before" ]; then
    ./mbd-bench compare "$before" "$results/latest.json" --html report/compare.html | tail -n 1 ||
        echo "make_report.sh: no comparison with the run before (above)" >&2
    rm -f "$before"
fi

report/readme.sh "$results" ${1:+--quick} > report/.README.md.tmp
sync report/.README.md.tmp
mv report/.README.md.tmp report/README.md
report/page.sh "$results"  # the same report as one interactive page, report/index.html
echo "make_report.sh: report/README.md, report/index.html, report/*.svg and report/*.png written" >&2
