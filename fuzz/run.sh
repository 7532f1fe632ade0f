#!/bin/sh
# fuzz/run.sh BUILD TARGET SECONDS [JOBS]: runs the libFuzzer binary BUILD/TARGET for SECONDS
# from the committed seeds fuzz/corpus/TARGET, on JOBS processes (default 1; more: libFuzzer's
# -fork, which merges what they find); new inputs go to BUILD/corpus/TARGET (the seeds stay
# as committed), a crash or hang to BUILD/artifacts/TARGET-*. Prints one line of figures,
# or the end of the log and exit status 1 on a crash, a hang or a leak.
set -u
build=$1 target=$2 seconds=$3 jobs=${4:-1}
case $target in
  fuzz_model_json) max_len=8192 ;;
  fuzz_model_urdf) max_len=16384 ;;
  fuzz_model_spec) max_len=256 ;;
  fuzz_cases) max_len=8192 ;;
  *) max_len=1024 ;;
esac
dict=
[ -f "fuzz/$target.dict" ] && dict="-dict=fuzz/$target.dict"
fork=
[ "$jobs" -gt 1 ] && fork="-fork=$jobs"
mkdir -p "$build/corpus/$target" "$build/artifacts"
log="$build/$target.log"
# -close_fd_mask=3: the loaders' error messages and the commands' output would flood the
# log (stdout goes to /dev/null); libFuzzer and the sanitizers still report on a duplicate
# of stderr.
if "$build/$target" $dict $fork -max_total_time="$seconds" -max_len="$max_len" -timeout=10 \
     -rss_limit_mb=2048 -close_fd_mask=3 -print_final_stats=1 \
     -artifact_prefix="$build/artifacts/$target-" \
     "$build/corpus/$target" "fuzz/corpus/$target" >"$log" 2>&1; then
  # The last status line, "#RUNS ... cov: N ft: N corp: N[/SIZE] ...", in either mode.
  figures=$(grep -E '^#[0-9]+.* cov: [0-9]+ .* corp: [0-9]+' "$log" | tail -n 1 |
            sed -E 's/^#([0-9]+).* cov: ([0-9]+) .* corp: ([0-9]+).*/\1 \2 \3/')
  set -- $figures
  echo "$target: ${1:-?} executions in $seconds s on $jobs process(es), coverage ${2:-?} edges," \
       "corpus ${3:-?} inputs, no crash"
else
  tail -n 60 "$log"
  echo "$target: FAILED (log $log; reproducer in $build/artifacts/)" >&2
  exit 1
fi
