# phases.gp: chart 3, Figs. 1-2 of Ivanov 2017 again: one RK4 step split into the integrator's
# own updates, kinematics and the solve, per solver and N; stacked bars, absolute (top)
# and as shares of the step (bottom). Needs phase_ns, the body counts of phases.dat.
eval terminal(1500, 1000)
set output out.".".ext
file = dat."/phases.dat"

nn = words(phase_ns)
variant_index(v) = sum [j = 1:nvariants] (word(variants, j) eq v ? j : 0)
n_index(n) = sum [j = 1:nn] (word(phase_ns, j) + 0 == n ? j : 0)
# Bars of one variant side by side, one gap between variants.
bar_x(family) = is(1, family) ? (variant_index(strcol(2)) - 1) * (nn + 1) + n_index($3) : NaN
integrator_colour = "#E69F00"; kinematics_colour = "#56B4E9"; solve_colour = "#0072B2"

set style fill solid 0.9 border rgb "#333333"
set boxwidth 0.8
set xrange [0 : nvariants * (nn + 1)]
set xtics scale 0 font ",8" ()
do for [v = 1:nvariants] {
    do for [j = 1:nn] {
        set xtics add (word(phase_ns, j) (v - 1) * (nn + 1) + j)
    }
}
set bmargin 5
set multiplot layout 2, 2 title "One classic RK4 step (4 right-hand sides), split as Ivanov 2017 Figs. 1-2; bars per solver over N = ".phase_ns
do for [row = 1:2] {
    do for [f in "chain-cardan chain-revolute"] {
        unset label
        do for [v = 1:nvariants] {
            set label v word(variants, v) at first (v - 1) * (nn + 1) + (nn + 1) / 2.0, graph -0.11 center
        }
        if (row == 1) {
            set title f." : time per step"
            set ylabel "µs per RK4 step"
            set yrange [0:*]
            set key inside top right box opaque
        } else {
            set title f." : share of the step"
            set ylabel "% of the step"
            set yrange [0:100]
            set key off
        }
        if (row == 1) {
            plot file using (bar_x(f)):(($4 + $5 + $6) / 1e3) with boxes lc rgb solve_colour title "solve", \
                 file using (bar_x(f)):(($4 + $5) / 1e3) with boxes lc rgb kinematics_colour title "kinematics", \
                 file using (bar_x(f)):($4 / 1e3) with boxes lc rgb integrator_colour title "integrator", \
                 file using (bar_x(f)):($7 / 1e3) with points pt 2 ps 0.7 lc rgb "#000000" title "whole step, timed as one"
        } else {
            plot file using (bar_x(f)):(100) with boxes lc rgb solve_colour, \
                 file using (bar_x(f)):(100 * ($4 + $5) / ($4 + $5 + $6)) with boxes lc rgb kinematics_colour, \
                 file using (bar_x(f)):(100 * $4 / ($4 + $5 + $6)) with boxes lc rgb integrator_colour
        }
    }
}
unset multiplot
