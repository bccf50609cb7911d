# linbench plot: Time saved: ms per sequence, standard / Linformer.
# Written by linbench plot; render with: gnuplot time_speedup.gp (from any directory).
# Data: time_speedup.plot.csv beside this script. Output: time_speedup.png and time_speedup.svg beside it.

here = '.'
p = 0
while (strstrt(ARG0[p+1:], '/') > 0) { p = p + strstrt(ARG0[p+1:], '/') }
if (p > 1) { here = ARG0[1:p-1] } else { if (p == 1) { here = '/' } }
data = here.'/time_speedup.plot.csv'
set datafile separator comma
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo noenhanced size 900,650 font ',11'
} else {
    set terminal png noenhanced size 900,650
}
set output here.'/time_speedup.png'
set title 'Time saved: ms per sequence, standard / Linformer'."\n".'NVIDIA H100 80GB HBM3, fp16, L=12 d=768 h=12 f=3072, layerwise/early' noenhanced
set xlabel 'k (projected length)'
set ylabel 'n (sequence length)'
set xrange [-0.5:4.5]
set yrange [-0.5:7.5]
set xtics ('128' 0, '256' 1, '512' 2, '1024' 3, '2048' 4)
set ytics ('512' 0, '1024' 1, '2048' 2, '4096' 3, '8192' 4, '16384' 5, '32768' 6, '65536' 7)
set tics scale 0
set logscale cb 2
set cbrange [1.2337:35.9258]
set cblabel 'speedup (x)'
set cbtics ('1.23' 1.2337, '2.87' 2.86588, '6.66' 6.65744, '15.5' 15.4652, '35.9' 35.9258)
set palette defined (0 '#fff7bc', 0.5 '#fec44f', 1 '#ec7014')
unset key
plot data skip 1 using 1:2:(0.5):(0.5):3 with boxxyerror fillstyle solid 1.0 noborder fillcolor palette, \
     data skip 1 using 1:2:4 with labels
set terminal svg noenhanced size 900,650 font 'sans,11'
set output here.'/time_speedup.svg'
replot
set output
