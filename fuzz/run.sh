#!/bin/sh
# fuzz/run.sh BUILD TARGET SECONDS: runs the libFuzzer binary BUILD/TARGET for SECONDS from
# the committed seeds fuzz/corpus/TARGET; new inputs go to BUILD/corpus/TARGET (the seeds
# stay as committed), a crash or hang to BUILD/artifacts/TARGET-*. Prints one line of
# figures, or the end of the log and exit status 1 on a crash, a hang or a leak.
set -u
build=$1 target=$2 seconds=$3
case $target in
  fuzz_model_json) max_len=8192 ;;
  fuzz_model_urdf) max_len=16384 ;;
  fuzz_model_spec) max_len=256 ;;
  fuzz_cases) max_len=8192 ;;
  *) max_len=1024 ;;
esac
dict=
[ -f "fuzz/$target.dict" ] && dict="-dict=fuzz/$target.dict"
mkdir -p "$build/corpus/$target" "$build/artifacts"
log="$build/$target.log"
# -close_fd_mask=2: the loaders' error messages would flood the log; libFuzzer and the
# sanitizers still report on a duplicate of stderr.
if "$build/$target" $dict -max_total_time="$seconds" -max_len="$max_len" -timeout=10 \
     -rss_limit_mb=2048 -close_fd_mask=2 -print_final_stats=1 \
     -artifact_prefix="$build/artifacts/$target-" \
     "$build/corpus/$target" "fuzz/corpus/$target" >"$log" 2>&1; then
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log")
  corpus=$(find "$build/corpus/$target" "fuzz/corpus/$target" -type f | wc -l)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  echo "$target: $runs executions in ${seconds} s, $cov, corpus $corpus files, peak RSS $rss MB, no crash"
else
  tail -n 60 "$log"
  echo "$target: FAILED (log $log; reproducer in $build/artifacts/)" >&2
  exit 1
fi
