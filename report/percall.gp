# percall.gp: chart 1, time per call against N, log-log, one panel per model family,
# every solver variant, with O(N) and O(N^3) guides.
eval terminal(1500, 950)
set output out.".".ext
file = dat."/percall.dat"

# one panel per family and one for the key
set multiplot layout 2, int(ceil((words(families) + 1) / 2.0)) title sprintf("Time per forward-dynamics call, one thread (median cpu time); dense (and sparse on chains) timed up to N = %d", dense_max_n)
set logscale xy
set format y "10^{%T}"
set xlabel "bodies N"
set ylabel "time per call [µs]"
do for [f = 1:words(families)] {
    family = word(families, f)
    set title family
    # The guides start half a decade below the panel's fastest point. stats skips points
    # outside the current ranges: free them from the previous panel's first.
    set autoscale xy
    stats file using (is(1, family) ? $3 : NaN):(is(1, family) ? $6 / 1e3 : NaN) nooutput
    x0 = STATS_min_x
    y0 = STATS_min_y / 3
    set xrange [x0 / 1.2 : STATS_max_x * 1.2]
    set yrange [y0 / 2 : STATS_max_y * 3]
    plot for [v = 1:nvariants] file \
             using 3:(is(1, family) && is(2, word(variants, v)) ? $6 / 1e3 : NaN) \
             with linespoints lt v, \
         y0 * (x / x0) dt 2 lc rgb "#777777" lw 1.5, \
         y0 * (x / x0)**3 dt 3 lc rgb "#777777" lw 1.5
}
# The last panel holds the key.
unset title; unset border; unset tics; unset xlabel; unset ylabel; unset grid
unset logscale; set xrange [0:1]; set yrange [0:1]
set key center center box
plot for [v = 1:nvariants] 2 with linespoints lt v title word(variants, v), \
     2 dt 2 lc rgb "#777777" lw 1.5 title "O(N) slope", \
     2 dt 3 lc rgb "#777777" lw 1.5 title "O(N^3) slope"
unset multiplot
