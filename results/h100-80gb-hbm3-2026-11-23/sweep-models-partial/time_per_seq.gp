# linbench plot: time per sequence against n, each model and k.
# Written by linbench plot; render with: gnuplot time_per_seq.gp (from any directory).
# Data: time_per_seq.plot.csv beside this script. Output: time_per_seq.png and time_per_seq.svg beside it.

here = '.'
p = 0
while (strstrt(ARG0[p+1:], '/') > 0) { p = p + strstrt(ARG0[p+1:], '/') }
if (p > 1) { here = ARG0[1:p-1] } else { if (p == 1) { here = '/' } }
data = here.'/time_per_seq.plot.csv'
set datafile separator comma
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo noenhanced size 900,650 font ',11'
} else {
    set terminal png noenhanced size 900,650
}
set output here.'/time_per_seq.png'
set title 'Time per sequence (median forward pass / batch, each model at its largest batch)'."\n".'NVIDIA H100 80GB HBM3, fp16, L=12 d=768 h=12 f=3072, layerwise/early' noenhanced
set xlabel 'n (sequence length)'
set ylabel 'ms per sequence'
set logscale xy
set grid
set key left top
set xrange [365.714:91750.4]
set xtics ('512' 512, '1024' 1024, '2048' 2048, '4096' 4096, '8192' 8192, '16384' 16384, '32768' 32768, '65536' 65536)
plot for [c=2:7] data using 1:c with linespoints linewidth 2 pointtype 7 pointsize 0.8 title columnheader(c)
set terminal svg noenhanced size 900,650 font 'sans,11'
set output here.'/time_per_seq.svg'
replot
set output
