# batch.gp: chart 4, batches of K states (the batch API, mbd_batch_*): throughput and
# parallel efficiency T1 / (p Tp) against threads, per model family; colour = solver,
# point = N; dashed: the solver's SIMD form ("-simd", W states in lockstep per thread)
# beside its one-state loop (solid, same colour).
eval terminal(1500, 950)
set output out.".".ext
file = dat."/batch.dat"

stats file using 5 nooutput
max_threads = STATS_max
batch_families = "chain-cardan autotree-chain"
# A "-simd" variant takes its solver's colour (the linetype of the variant without the
# suffix) and a dashed line.
simd(v) = strstrt(v, "-simd") > 0
base(v) = simd(v) ? v[1:strstrt(v, "-simd") - 1] : v
position(w, i) = i > nvariants ? i : word(variants, i) eq w ? i : position(w, i + 1)
colour(v) = position(base(v), 1)
batch_ns = system("awk '!/^#/ {print $3}' ".file." | sort -nu | tr '\\n' ' '")
set xrange [0.8 : max_threads + 0.2]
set xtics 1
set xlabel "threads p"
set key outside right font ",9"
set multiplot layout 2, 2 title "Batches of K states (mbd\\_batch): OpenMP threads over groups of W states; solid: one state at a time (W = 1), dashed: SIMD lanes; OpenBLAS pinned to 1 thread"
do for [family in batch_families] {
    set title family.": throughput"
    set ylabel "states per second"
    set logscale y
    set format y "10^{%T}"
    set yrange [*:*]
    plot for [v = 1:nvariants] for [j = 1:words(batch_ns)] file \
        using 5:(is(1, family) && is(2, word(variants, v)) && $3 == word(batch_ns, j) ? $7 : NaN) \
        with linespoints lt colour(word(variants, v)) dt 1 + simd(word(variants, v)) pt 4 + 2 * j \
        title sprintf("%s N=%s", word(variants, v), word(batch_ns, j))
    set title family.": parallel efficiency T_1 / (p T_p)"
    set ylabel "efficiency"
    unset logscale y
    set format y "%g"
    set yrange [0 : 1.15]
    plot for [v = 1:nvariants] for [j = 1:words(batch_ns)] file \
        using 5:(is(1, family) && is(2, word(variants, v)) && $3 == word(batch_ns, j) ? $8 : NaN) \
        with linespoints lt colour(word(variants, v)) dt 1 + simd(word(variants, v)) pt 4 + 2 * j, \
        0.9 dt 2 lc rgb "#CC0000" lw 1.5 title "target 90%"
}
unset multiplot
