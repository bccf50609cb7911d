# linbench plot: Energy saved: joules per sequence, flash / linformer.
# Written by linbench plot; render with: gnuplot energy_speedup_linformer_vs_flash.gp (from any directory).
# Data: energy_speedup_linformer_vs_flash.plot.csv beside this script. Output: energy_speedup_linformer_vs_flash.png and energy_speedup_linformer_vs_flash.svg beside it.

here = '.'
p = 0
while (strstrt(ARG0[p+1:], '/') > 0) { p = p + strstrt(ARG0[p+1:], '/') }
if (p > 1) { here = ARG0[1:p-1] } else { if (p == 1) { here = '/' } }
if (!exists('linbench_out')) { linbench_out = here }
data = here.'/energy_speedup_linformer_vs_flash.plot.csv'
set datafile separator comma
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo noenhanced size 900,650 font ',11'
} else {
    set terminal png noenhanced size 900,650
}
set output linbench_out.'/energy_speedup_linformer_vs_flash.png'
set title 'Energy saved: joules per sequence, flash / linformer'."\n".'NVIDIA H200, fp16, L=12 d=768 h=12 f=3072, layerwise/early' noenhanced
set xlabel 'k (projected length)'
set ylabel 'n (sequence length)'
set xrange [-0.5:1.5]
set yrange [-0.5:5.5]
set xtics ('128' 0, '256' 1)
set ytics ('512' 0, '1024' 1, '2048' 2, '4096' 3, '8192' 4, '16384' 5)
set tics scale 0
set logscale cb 2
set cbrange [1.02299:6.06634]
set cblabel 'speedup (x)'
set cbtics ('1.02' 1.02299, '1.6' 1.59637, '2.49' 2.49114, '3.89' 3.88743, '6.07' 6.06634)
set palette defined (0 '#fff7bc', 0.5 '#fec44f', 1 '#ec7014')
unset key
plot data skip 1 using 1:2:(0.5):(0.5):3 with boxxyerror fillstyle solid 1.0 noborder fillcolor palette, \
     data skip 1 using 1:2:4 with labels
set terminal svg noenhanced size 900,650 font 'sans,11'
set output linbench_out.'/energy_speedup_linformer_vs_flash.svg'
replot
set output
