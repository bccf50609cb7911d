# linbench plot: linbench / PyTorch, largest batch (above 1: linbench fits more).
# Written by linbench plot; render with: gnuplot versus_batch_ratio.gp (from any directory).
# Data: versus_batch_ratio.plot.csv beside this script. Output: versus_batch_ratio.png and versus_batch_ratio.svg beside it.

here = '.'
p = 0
while (strstrt(ARG0[p+1:], '/') > 0) { p = p + strstrt(ARG0[p+1:], '/') }
if (p > 1) { here = ARG0[1:p-1] } else { if (p == 1) { here = '/' } }
if (!exists('linbench_out')) { linbench_out = here }
data = here.'/versus_batch_ratio.plot.csv'
set datafile separator comma
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo noenhanced size 900,650 font ',11'
} else {
    set terminal png noenhanced size 900,650
}
set output linbench_out.'/versus_batch_ratio.png'
set title 'linbench / PyTorch, largest batch (above 1: linbench fits more)'."\n".'linbench train-16g against PyTorch 2.11.0+cu130 (bench/peer), NVIDIA H200' noenhanced
set xlabel 'n (sequence length)'
set ylabel 'linbench / peer, largest batch'
set logscale x
set logscale y 2
set grid
set key left top
set xrange [365.714:22937.6]
set xtics ('512' 512, '1024' 1024, '2048' 2048, '4096' 4096, '8192' 8192, '16384' 16384)
plot data using 1:2 with linespoints linewidth 2 linecolor rgb '#1f77b4' dashtype 1 pointtype 7 pointsize 0.9 title 'standard / torch-standard', \
     data using 1:3 with linespoints linewidth 2 linecolor rgb '#8f1a1b' dashtype 1 pointtype 5 pointsize 0.9 title 'linformer k=128 / torch-linformer k=128', \
     data using 1:4 with linespoints linewidth 2 linecolor rgb '#e67d7e' dashtype 2 pointtype 5 pointsize 0.9 title 'linformer k=256 / torch-linformer k=256', \
     data using 1:5 with linespoints linewidth 2 linecolor rgb '#1f77b4' dashtype 3 pointtype 3 pointsize 0.9 title 'standard / torch-sdpa-flash', \
     data using 1:6 with linespoints linewidth 2 linecolor rgb '#bcbd22' dashtype 3 pointtype 3 pointsize 0.9 title 'flash / torch-sdpa-flash', \
    1 with lines linewidth 1 linecolor rgb '#000000' dashtype 3 title 'equal'
set terminal svg noenhanced size 900,650 font 'sans,11'
set output linbench_out.'/versus_batch_ratio.svg'
replot
set output
