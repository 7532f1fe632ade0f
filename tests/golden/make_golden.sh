#!/bin/sh
# Regenerates tests/golden/NAME.csv for every case of tests/golden/cases.txt with the dense
# solver (acceleration form) and dopri5 at rtol = atol = 1e-13. Cross-checked when made:
# dopri5 at 1e-14 and rk4 at dt = 2.5e-5 agree with these files to 7e-11 (relative, max
# norm); CVODE's Adams at 1e-12 only to 4e-10 (chain5), hence dopri5. Needs ./mbd (make).
set -eu
cd "$(dirname "$0")/../.."
MBD=${MBD:-./mbd}
grep -v '^#' tests/golden/cases.txt | while read -r name model q0 qd0 t1 sample; do
    [ -n "$name" ] || continue
    "$MBD" simulate "$model" --solver dense --formulation acceleration --integrator dopri5 \
        --rtol 1e-13 --atol 1e-13 --q0 "$q0" --qd0 "$qd0" --t1 "$t1" --sample "$sample" \
        --out "tests/golden/$name.csv"
done
