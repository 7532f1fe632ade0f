#!/usr/bin/env bash
# hyperfine.sh OUTDIR [--quick]: whole-process timings of `./mbd fd` with hyperfine, so
# that model loading and process start-up are seen next to one call: OUTDIR/hyperfine.json
# (hyperfine's --export-json) and OUTDIR/hyperfine.md (a Markdown table for the report).
set -euo pipefail
cd "$(dirname "$0")/.."

out=${1:?usage: bench/hyperfine.sh OUTDIR [--quick]}
if ! command -v hyperfine >/dev/null; then
    echo "hyperfine.sh: hyperfine is not installed (apt-get install hyperfine): whole-process timings skipped" >&2
    exit 0
fi
runs=(--warmup 3 --min-runs 20)
[ "${2:-}" = --quick ] && runs=(--warmup 1 --runs 5)

# One small and one large model, each with the dense baseline and two O(N) solvers.
commands=()
for model in chain:n=10,joint=cardan chain:n=300,joint=cardan; do
    for solver in dense bodies poisson-ldlt; do
        commands+=("./mbd fd $model --solver $solver")
    done
done

# Written beside the targets, synced, then renamed: a failed run leaves the old files.
hyperfine -N --style basic "${runs[@]}" --export-json "$out/.hyperfine.json.tmp" \
    --export-markdown "$out/.hyperfine.md.tmp" "${commands[@]}" >&2
sync "$out/.hyperfine.json.tmp" "$out/.hyperfine.md.tmp"
mv "$out/.hyperfine.json.tmp" "$out/hyperfine.json"
mv "$out/.hyperfine.md.tmp" "$out/hyperfine.md"
