# linbench plot: Memory saved: largest batch, Linformer / standard.
# Written by linbench plot; render with: gnuplot memory_speedup.gp (from any directory).
# Data: memory_speedup.plot.csv beside this script. Output: memory_speedup.png and memory_speedup.svg beside it.

here = '.'
p = 0
while (strstrt(ARG0[p+1:], '/') > 0) { p = p + strstrt(ARG0[p+1:], '/') }
if (p > 1) { here = ARG0[1:p-1] } else { if (p == 1) { here = '/' } }
if (!exists('linbench_out')) { linbench_out = here }
data = here.'/memory_speedup.plot.csv'
set datafile separator comma
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo noenhanced size 900,650 font ',11'
} else {
    set terminal png noenhanced size 900,650
}
set output linbench_out.'/memory_speedup.png'
set title 'Training step: Memory saved: largest batch, Linformer / standard'."\n".'NVIDIA H200, fp16, L=12 d=768 h=12 f=3072, layerwise/early' noenhanced
set xlabel 'k (projected length)'
set ylabel 'n (sequence length)'
set xrange [-0.5:1.5]
set yrange [-0.5:5.5]
set xtics ('128' 0, '256' 1)
set ytics ('512' 0, '1024' 1, '2048' 2, '4096' 3, '8192' 4, '16384' 5)
set tics scale 0
set logscale cb 2
set cbrange [1.23529:6]
set cblabel 'speedup (x)'
set cbtics ('1.24' 1.23529, '1.83' 1.83386, '2.72' 2.72246, '4.04' 4.04163, '6' 6)
set palette defined (0 '#fff7bc', 0.5 '#fec44f', 1 '#ec7014')
unset key
plot data skip 1 using 1:2:(0.5):(0.5):3 with boxxyerror fillstyle solid 1.0 noborder fillcolor palette, \
     data skip 1 using 1:2:4 with labels
set terminal svg noenhanced size 900,650 font 'sans,11'
set output linbench_out.'/memory_speedup.svg'
replot
set output
