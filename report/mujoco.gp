# mujoco.gp: our time per forward-dynamics call over MuJoCo 2.2.2's, against N, log-log,
# one panel per model family of mujoco.dat (bench/mujoco.sh writes it with
# `peer-mujoco time`), every solver variant, and MuJoCo's factorM + solveM alone for scale.
# Run as `gnuplot common.gp mujoco.gp` with dat, out, ext and variants set (common.gp).
eval terminal(1500, 950)
set output out.".".ext
file = dat."/mujoco.dat"
# columns: 1 family, 2 variant, 3 n, 6 median_ns, 8 mujoco_ns, 9 mujoco_factor_solve_ns
mujoco_families = system("awk '!/^#/ && NF && !seen[$1]++ { print $1 }' ".file)
nfamilies = words(mujoco_families)

set multiplot layout 2, int(ceil((nfamilies + 1) / 2.0)) \
    title "Time per call over MuJoCo 2.2.2's forward-dynamics path (kinematics ... solveM), one thread; below 1: faster than MuJoCo"
set logscale xy
set format y "%g"
set xlabel "bodies N"
set ylabel "our time / MuJoCo's"
do for [f = 1:nfamilies] {
    family = word(mujoco_families, f)
    set title family
    plot for [v = 1:nvariants] file \
             using 3:(is(1, family) && is(2, word(variants, v)) ? $6 / $8 : NaN) \
             with linespoints lt v, \
         file using 3:(is(1, family) ? $9 / $8 : NaN) \
             with lines dt 3 lc rgb "#777777" lw 1.5, \
         1 dt 2 lc rgb "#000000" lw 1
}
# The last panel holds the key.
unset title; unset border; unset tics; unset xlabel; unset ylabel; unset grid
unset logscale; set xrange [0:1]; set yrange [0:1]
set key center center box
plot for [v = 1:nvariants] 2 with linespoints lt v title word(variants, v), \
     2 dt 3 lc rgb "#777777" lw 1.5 title "MuJoCo's factorM + solveM alone", \
     2 dt 2 lc rgb "#000000" lw 1 title "MuJoCo's whole path"
unset multiplot
