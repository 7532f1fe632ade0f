#!/bin/sh
# robots.sh [DAT_DIR]: the libraries side by side on real robots, from the robots and
# robot-derivatives suites of mbd-bench (DAT_DIR/robots.dat, robot_derivatives.dat; default
# results/dat): the chart report/robots.{svg,png} and report/robots.md, which
# report/readme.sh embeds. make_report.sh runs it after the sweep.
set -eu
cd "$(dirname "$0")/.."
dat=${1:-results/dat}
if ! grep -qv '^#' "$dat/robots.dat" 2>/dev/null; then
    echo "robots.sh: $dat/robots.dat has no rows: no robots section" >&2
    rm -f report/robots.md
    exit 0
fi
tables="$dat/robots.dat"
[ ! -f "$dat/robot_derivatives.dat" ] || tables="$tables $dat/robot_derivatives.dat"
robots() { awk -v section="$1" -f report/robots.awk $tables; }

rows=build/report/robots.rows
mkdir -p build/report
robots chart > "$rows"
variants=$(awk '!seen[$4]++ { print $4 }' "$rows" | tr '\n' ' ')
nrobots=$(awk 'END { print $1 }' "$rows")
for ext in svg png; do
    gnuplot -e "file='$rows'; out='report/.robots.tmp'; ext='$ext'; variants='$variants'; nrobots=$nrobots" \
        report/common.gp report/robots.gp
    mv "report/.robots.tmp.$ext" "report/robots.$ext"
done

{
    cat <<MD
## 8. Libraries on robots

![Forward dynamics on real robots](robots.png)

[SVG](robots.svg) · data: \`$dat/robots.dat\`, \`$dat/robot_derivatives.dat\`

The \`robots\` suite of mbd-bench: every robot of bench/robots.txt that loads (the URDFs of
example-robot-data, Pinocchio's robots, with legged, humanoid and flying ones on a floating
base; Menagerie's robots in MJCF; the project's own), one forward call of every solver and
plugin on one thread, at the same 16 random states, the repetitions interleaved with every
other measurement of the run. Plugins: \`pinocchio-aba\` and \`pinocchio-crba\` (Pinocchio,
built from the pin package with this build's flags), \`mujoco-smooth\` (MuJoCo's smooth
dynamics) and \`mujoco-forward\` (its whole \`mj_forward\`, for reference); docs/plugins.md. Each library's fastest call as a multiple of the fastest of
all (1.00× is the winner), with the solver that made it:

$(robots table)

The \`robot-derivatives\` suite: ∂q̈/∂q, ∂q̈/∂q̇ and ∂q̈/∂τ by every method of
\`mbd derivatives\` (a plugin's derivatives under its own name), each as its time, a
multiple of one \`bodies\` forward call on the robot, and of \`analytic\`'s time:

$(robots derivatives)

Their targets are in the table of targets above.
MD
} > report/.robots.md.tmp
mv report/.robots.md.tmp report/robots.md
