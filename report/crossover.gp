# crossover.gp: chart 5, which solver is fastest at each N, and by how much: every
# variant's time per call over the fastest one's at the same family and N (1 = fastest).
eval terminal(1500, 950)
set output out.".".ext
file = dat."/crossover.dat"

# one panel per family and one for the key
set multiplot layout 2, int(ceil((words(families) + 1) / 2.0)) title "Time relative to the fastest solver at each N (1 = fastest), one thread"
set logscale xy
set xlabel "bodies N"
set ylabel "T / T(fastest)"
set ytics (1, 1.5, 2, 3, 5, 10, 30, 100, 300, 1000)
do for [f = 1:words(families)] {
    family = word(families, f)
    set title family
    plot 1 dt 3 lc rgb "#777777" lw 1, \
         for [v = 1:nvariants] file using 2:(is(1, family) && is(3, word(variants, v)) ? $5 : NaN) \
             with linespoints lt v
}
unset title; unset border; unset tics; unset xlabel; unset ylabel; unset grid
unset logscale; set xrange [0:1]; set yrange [0:1]
set key center center box
plot for [v = 1:nvariants] 2 with linespoints lt v title word(variants, v)
unset multiplot
