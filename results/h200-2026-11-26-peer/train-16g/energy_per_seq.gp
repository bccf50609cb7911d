# linbench plot: energy per sequence against n, each model and k.
# Written by linbench plot; render with: gnuplot energy_per_seq.gp (from any directory).
# Data: energy_per_seq.plot.csv beside this script. Output: energy_per_seq.png and energy_per_seq.svg beside it.

here = '.'
p = 0
while (strstrt(ARG0[p+1:], '/') > 0) { p = p + strstrt(ARG0[p+1:], '/') }
if (p > 1) { here = ARG0[1:p-1] } else { if (p == 1) { here = '/' } }
if (!exists('linbench_out')) { linbench_out = here }
data = here.'/energy_per_seq.plot.csv'
set datafile separator comma
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo noenhanced size 900,650 font ',11'
} else {
    set terminal png noenhanced size 900,650
}
set output linbench_out.'/energy_per_seq.png'
set title 'Training step: Energy per sequence (mean power over the timed training steps x median training step / batch)'."\n".'NVIDIA H200, fp16, L=12 d=768 h=12 f=3072, layerwise/early' noenhanced
set xlabel 'n (sequence length)'
set ylabel 'joules per sequence'
set logscale xy
set grid
set key left top
set xrange [365.714:22937.6]
set xtics ('512' 512, '1024' 1024, '2048' 2048, '4096' 4096, '8192' 8192, '16384' 16384)
plot data using 1:2 with linespoints linewidth 2 linecolor rgb '#1f77b4' dashtype 1 pointtype 7 pointsize 0.9 title 'standard', \
     data using 1:3 with linespoints linewidth 2 linecolor rgb '#8f1a1b' dashtype 1 pointtype 5 pointsize 0.9 title 'linformer k=128', \
     data using 1:4 with linespoints linewidth 2 linecolor rgb '#e67d7e' dashtype 2 pointtype 5 pointsize 0.9 title 'linformer k=256', \
     data using 1:5 with linespoints linewidth 2 linecolor rgb '#bcbd22' dashtype 1 pointtype 11 pointsize 0.9 title 'flash'
set terminal svg noenhanced size 900,650 font 'sans,11'
set output linbench_out.'/energy_per_seq.svg'
replot
set output
