# robots.gp: ns per forward call on every robot of the robots suite, one mark per library
# and solver (robots.sh writes the rows: index, robot, nv, variant, ns; the robots in order
# of nv). Variables: file (those rows), variants, nrobots.
eval terminal(1600, 700)
set output out.".".ext
set title "Forward dynamics on real robots: one call, one thread (median cpu time)"
set logscale y
set ylabel "ns per call"
set xrange [0:nrobots + 1]
set xtics rotate by 60 right font ",8" nomirror
set bmargin 11
set key outside right top
plot for [v = 1:nvariants] file using 1:(is(4, word(variants, v)) ? $5 : NaN):xtic(2) \
         with points lt v title word(variants, v)
