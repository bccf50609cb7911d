# linbench plot: flash against standard: time and memory saved.
# Written by linbench plot; render with: gnuplot speedup_flash.gp (from any directory).
# Data: speedup_flash.plot.csv beside this script. Output: speedup_flash.png and speedup_flash.svg beside it.

here = '.'
p = 0
while (strstrt(ARG0[p+1:], '/') > 0) { p = p + strstrt(ARG0[p+1:], '/') }
if (p > 1) { here = ARG0[1:p-1] } else { if (p == 1) { here = '/' } }
if (!exists('linbench_out')) { linbench_out = here }
data = here.'/speedup_flash.plot.csv'
set datafile separator comma
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo noenhanced size 900,650 font ',11'
} else {
    set terminal png noenhanced size 900,650
}
set output linbench_out.'/speedup_flash.png'
set title 'flash against standard: time and memory saved'."\n".'NVIDIA H200, fp16, L=12 d=768 h=12 f=3072, layerwise/early' noenhanced
set xlabel 'n (sequence length)'
set ylabel 'speedup (x)'
set logscale xy 2
set grid
set key left top
set xrange [365.714:22937.6]
set xtics ('512' 512, '1024' 1024, '2048' 2048, '4096' 4096, '8192' 8192, '16384' 16384)
plot data using 1:2 with linespoints linewidth 2 pointtype 7 pointsize 0.8 title 'time saved', \
     data using 1:3 with linespoints linewidth 2 pointtype 5 pointsize 0.8 title 'memory saved', \
     data using 1:4 with linespoints linewidth 2 pointtype 9 pointsize 0.8 title 'energy saved'
set terminal svg noenhanced size 900,650 font 'sans,11'
set output linbench_out.'/speedup_flash.svg'
replot
set output
