# crossover.gp: chart 5, which solver is fastest at each N, and by how much: every
# variant's time per call over the fastest one's at the same family and N (1 = fastest).
# Three regimes: the O(N) sweeps, `sparse` (O(N d^2), d the tree depth) and `dense`
# (O(N^3)); each panel says its family's depth.
eval terminal(1500, 950)
set output out.".".ext
file = dat."/crossover.dat"

# one panel per family and one for the key
set multiplot layout 2, int(ceil((words(families) + 1) / 2.0)) title "Time relative to the fastest solver at each N (1 = fastest), one thread"
set logscale xy
set xlabel "bodies N"
set ylabel "T / T(fastest)"
set ytics (1, 1.5, 2, 3, 5, 10, 30, 100, 300, 1000)
# The depth d of a family's tree in bodies: a chain's is N, the binary autoTree's
# floor(log2 N) + 1 (breadth-first numbering).
depth(family) = family eq "autotree-binary" || family eq "autotree-binary-free" ? "d = ⌊log_2 N⌋ + 1" : "d = N"
do for [f = 1:words(families)] {
    family = word(families, f)
    set title sprintf("%s (%s)", family, depth(family))
    plot 1 dt 3 lc rgb "#777777" lw 1, \
         for [v = 1:nvariants] file using 2:(is(1, family) && is(3, word(variants, v)) ? $5 : NaN) \
             with linespoints lt v
}
unset title; unset border; unset tics; unset xlabel; unset ylabel; unset grid
unset logscale; set xrange [0:1]; set yrange [0:1]
set key center center box
plot for [v = 1:nvariants] 2 with linespoints lt v title word(variants, v)
unset multiplot
