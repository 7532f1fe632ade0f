# common.gp: what every chart shares. make_report.sh runs `gnuplot common.gp CHART.gp`
# with these variables set (-e):
#   dat       directory of the .dat tables        out   output file, no extension
#   ext       "svg" or "png"                      variants  solver variants, table order
#   families  model families of percall.dat       dense_max_n  dense's largest N

# The output at w x h pixels, in the format ext asks for.
terminal(w, h) = ext eq "svg" \
    ? sprintf("set terminal svg size %d,%d dynamic enhanced font 'DejaVu Sans,12' background rgb 'white'", w, h) \
    : sprintf("set terminal pngcairo size %d,%d enhanced font 'DejaVu Sans,10' background rgb 'white'", w, h)

# One colour per solver variant, the same in every chart (Okabe-Ito, colour-blind safe).
set linetype 1 lc rgb "#0072B2" lw 2 pt 7 ps 0.8
set linetype 2 lc rgb "#56B4E9" lw 2 pt 5 ps 0.8
set linetype 3 lc rgb "#D55E00" lw 2 pt 9 ps 0.9
set linetype 4 lc rgb "#009E73" lw 2 pt 11 ps 0.9
set linetype 5 lc rgb "#CC79A7" lw 2 pt 13 ps 0.9
set linetype 6 lc rgb "#E69F00" lw 2 pt 3 ps 0.9
set linetype 7 lc rgb "#000000" lw 2 pt 1 ps 0.9
set linetype cycle 7

# Rows of a table whose first columns match, else NaN (gnuplot skips those points).
is(col, value) = strcol(col) eq value
nvariants = words(variants)

set grid back lc rgb "#dddddd"
set datafile missing "NaN"
set key noautotitle
