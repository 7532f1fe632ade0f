# derivatives.gp: the cost of the derivatives of q̈ (mbd derivatives) against N as a multiple
# of one `bodies` forward call on the same model, one panel per family, one line per method
# (derivatives.dat; methods and deriv_families from make_report.sh). arm7 is one point.
eval terminal(1500, 950)
set output out.".".ext
file = dat."/derivatives.dat"

set multiplot layout 2, int(ceil((words(deriv_families) + 1) / 2.0)) title "Derivatives of q̈: time per call over one bodies forward call on the same model, one thread"
set logscale xy
set xlabel "bodies N"
set ylabel "T / T(bodies forward)"
do for [f = 1:words(deriv_families)] {
    family = word(deriv_families, f)
    set title family
    plot for [m = 1:words(methods)] file using 3:(is(1, family) && is(2, word(methods, m)) ? $9 : NaN) \
             with linespoints lt m
}
unset title; unset border; unset tics; unset xlabel; unset ylabel; unset grid
unset logscale; set xrange [0:1]; set yrange [0:1]
set key center center box
plot for [m = 1:words(methods)] 2 with linespoints lt m title word(methods, m)
unset multiplot
