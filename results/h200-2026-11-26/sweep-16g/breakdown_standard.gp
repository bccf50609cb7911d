# linbench plot: where standard's forward pass spends its time, from breakdown.csv.
# Written by linbench plot; render with: gnuplot breakdown_standard.gp (from any directory).
# Data: breakdown_standard.plot.csv beside this script. Output: breakdown_standard.png and breakdown_standard.svg beside it.

here = '.'
p = 0
while (strstrt(ARG0[p+1:], '/') > 0) { p = p + strstrt(ARG0[p+1:], '/') }
if (p > 1) { here = ARG0[1:p-1] } else { if (p == 1) { here = '/' } }
if (!exists('linbench_out')) { linbench_out = here }
data = here.'/breakdown_standard.plot.csv'
set datafile separator comma
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo noenhanced size 900,650 font ',11'
} else {
    set terminal png noenhanced size 900,650
}
set output linbench_out.'/breakdown_standard.png'
set title 'Where the time goes: standard, each operation''s share of the pass'."\n".'NVIDIA H200' noenhanced
set linetype 1 lc rgb '#1f77b4'
set linetype 2 lc rgb '#ff7f0e'
set linetype 3 lc rgb '#2ca02c'
set linetype 4 lc rgb '#d62728'
set linetype 5 lc rgb '#9467bd'
set linetype 6 lc rgb '#8c564b'
set linetype 7 lc rgb '#e377c2'
set linetype 8 lc rgb '#7f7f7f'
set linetype 9 lc rgb '#bcbd22'
set linetype 10 lc rgb '#17becf'
set linetype 11 lc rgb '#393b79'
set linetype 12 lc rgb '#e7ba52'
set linetype 13 lc rgb '#637939'
set linetype 14 lc rgb '#843c39'
set linetype 15 lc rgb '#7b4173'
set linetype 16 lc rgb '#a55194'
set linetype 17 lc rgb '#000000'
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.75
set key outside right top reverse Left noenhanced
set yrange [0:1.05]
set ylabel 'share of the pass'
set xlabel 'n'
set grid ytics
plot for [i=2:12] data using i:xtic(1) title columnheader(i) lt (i-1)
set terminal svg noenhanced size 900,650 font 'sans,11'
set output linbench_out.'/breakdown_standard.svg'
replot
set output
