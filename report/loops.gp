# loops.gp: |Phi| of the four-bar over 10 s with and without Baumgarte's stabilization
# (loops.sh runs it with -e "dir='...'; col=N", N the phi_norm column of dir/NAME.csv).
# Writes report/loops-drift.png and .svg.

set datafile separator ","
set grid back lc rgb "#dddddd"
set key inside right bottom box opaque
set xlabel "t [s]"
set xrange [0:10]
set ylabel "|Φ| [m]"
set logscale y
set format y "10^{%L}"
set title "Four-bar crank–rocker: constraint violation |Φ|, Dormand–Prince at rtol 1e-8"
drift_plot = "plot dir.'/free.csv' skip 1 using 1:(column(col) > 0 ? column(col) : 1/0) with lines lw 1.5 lc rgb '#D55E00' title 'no stabilization', " . \
             "dir.'/stabilized.csv' skip 1 using 1:(column(col) > 0 ? column(col) : 1/0) with lines lw 1.5 lc rgb '#0072B2' title 'Baumgarte α = β = 10 /s', " . \
             "dir.'/stiff.csv' skip 1 using 1:(column(col) > 0 ? column(col) : 1/0) with lines lw 1.5 lc rgb '#009E73' title 'Baumgarte α = β = 50 /s'"
set terminal pngcairo size 1100,500 enhanced font "DejaVu Sans,11" background rgb "white"
set output "report/loops-drift.png"
eval drift_plot
set terminal svg size 1100,500 dynamic enhanced font "DejaVu Sans,12" background rgb "white"
set output "report/loops-drift.svg"
eval drift_plot
