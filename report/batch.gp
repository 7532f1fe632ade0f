# batch.gp: chart 4, OpenMP batches of K states: throughput and parallel efficiency
# T1 / (p Tp) against threads, per model family; colour = solver, point = N.
eval terminal(1500, 950)
set output out.".".ext
file = dat."/batch.dat"

stats file using 5 nooutput
max_threads = STATS_max
batch_families = "chain-cardan autotree-chain"
batch_ns = system("awk '!/^#/ {print $3}' ".file." | sort -nu | tr '\\n' ' '")
set xrange [0.8 : max_threads + 0.2]
set xtics 1
set xlabel "threads p"
set key outside right font ",9"
set multiplot layout 2, 2 title "OpenMP batch: K states per batch, one workspace per thread, schedule(static); OpenBLAS pinned to 1 thread"
do for [family in batch_families] {
    set title family.": throughput"
    set ylabel "states per second"
    set logscale y
    set format y "10^{%T}"
    set yrange [*:*]
    plot for [v = 1:nvariants] for [j = 1:words(batch_ns)] file \
        using 5:(is(1, family) && is(2, word(variants, v)) && $3 == word(batch_ns, j) ? $7 : NaN) \
        with linespoints lt v pt 4 + 2 * j title sprintf("%s N=%s", word(variants, v), word(batch_ns, j))
    set title family.": parallel efficiency T_1 / (p T_p)"
    set ylabel "efficiency"
    unset logscale y
    set format y "%g"
    set yrange [0 : 1.15]
    plot for [v = 1:nvariants] for [j = 1:words(batch_ns)] file \
        using 5:(is(1, family) && is(2, word(variants, v)) && $3 == word(batch_ns, j) ? $8 : NaN) \
        with linespoints lt v pt 4 + 2 * j, \
        0.9 dt 2 lc rgb "#CC0000" lw 1.5 title "target 90%"
}
unset multiplot
