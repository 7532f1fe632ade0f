# ratio.gp: chart 2, Fig. 3 of Ivanov 2017 again: T(poisson-sweep) / T(poisson-ldlt) against N,
# for 2-DOF Cardan chains (the paper's case) and 1-DOF revolute chains, with the paper's
# 1.3-1.4 band shaded.
eval terminal(1000, 620)
set output out.".".ext
file = dat."/ratio.dat"

stats file using 2 nooutput
set xrange [0 : STATS_max * 1.05]
set yrange [* < 0.8 : 1.6 < *]
set title "Poisson-impulse sweep over block LDL^T (Ivanov 2017, Fig. 3): time ratio, one thread"
set xlabel "bodies N"
set ylabel "T(poisson-sweep) / T(poisson-ldlt)"
set bmargin 7
set key at screen 0.5, 0.02 center bottom horizontal maxrows 2 box
set object 1 rect from graph 0, first 1.3 to graph 1, first 1.4 fc rgb "#F0C987" fs solid 0.5 noborder behind
set label 1 "Ivanov 2017: 1.3–1.4" at graph 0.98, first 1.35 right front
plot 1 dt 3 lc rgb "#777777" lw 1 title "equal time", \
     file using 2:(is(1, "chain-cardan") ? $3 : NaN) with linespoints lt 3 title "Cardan chain (2-DOF): solve phase", \
     file using 2:(is(1, "chain-cardan") ? $4 : NaN) with linespoints lt 3 dt 2 title "Cardan chain: whole call (with kinematics)", \
     file using 2:(is(1, "chain-revolute") ? $3 : NaN) with linespoints lt 1 title "revolute chain (1-DOF): solve phase", \
     file using 2:(is(1, "chain-revolute") ? $4 : NaN) with linespoints lt 1 dt 2 title "revolute chain: whole call"
