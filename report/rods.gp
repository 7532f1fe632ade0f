# rods.gp: the charts of Yudintsev's rod chain (rods.sh runs it with -e "dir='...'").
#   dir/dense.csv: t, b1.q..b10.q, b1.qd..b10.qd, kinetic, potential, total (dense, adams)
#   dir/drift-NAME.dat: t and (E(t) - E(0)) / |E(0)| for NAME = dense, bodies, momentum
# Writes report/rods-angles.png and .svg, report/rods-energy.png.

set datafile separator ","
set grid back lc rgb "#dddddd"
set key outside right top
set xlabel "t [s]"
set xrange [0:10]

# Ten rods: a colour-blind-safe cycle (Okabe-Ito), solid for rods 1-5, dashed for 6-10.
array colour[5] = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00"]
do for [k = 1:10] {
    dash = k <= 5 ? 1 : 2
    set linetype k lw 1.5 lc rgb colour[(k - 1) % 5 + 1] dashtype dash
}
angles_plot = "plot for [k = 1:10] dir.'/dense.csv' skip 1 using 1:(column(k + 1)) " . \
              "with lines lt k title sprintf('φ_{%d}', k)"

set title "Ten rods released from φ_1 = −1 rad (Yudintsev's example): joint angles, CVODE Adams"
set ylabel "joint angle φ_k [rad]"
set terminal pngcairo size 1100,600 enhanced font "DejaVu Sans,11" background rgb "white"
set output "report/rods-angles.png"
eval angles_plot
set terminal svg size 1100,600 dynamic enhanced font "DejaVu Sans,12" background rgb "white"
set output "report/rods-angles.svg"
eval angles_plot

set datafile separator whitespace
set title "Energy drift (E(t) − E(0)) / |E(0)|, CVODE Adams at rtol = atol = 1e-10"
set ylabel "relative energy drift"
set format y "%.1e"
set key inside left bottom box opaque
set terminal pngcairo size 1100,500 enhanced font "DejaVu Sans,11" background rgb "white"
set output "report/rods-energy.png"
plot dir."/drift-dense.dat" using 1:2 with lines lw 1.5 lc rgb "#0072B2" title "dense (CRBA + Cholesky)", \
     dir."/drift-bodies.dat" using 1:2 with lines lw 1.5 lc rgb "#D55E00" title "bodies (separate bodies)", \
     dir."/drift-momentum.dat" using 1:2 with lines lw 1.5 lc rgb "#009E73" title "poisson-ldlt (momentum form)"
