/* `linbench plot`: gnuplot scripts of a sweep (NAME.gp, its data NAME.plot.csv), and NAME.png and
 * NAME.svg where gnuplot is installed: Table 3's heatmaps (time_speedup, memory_speedup,
 * energy_speedup where measured); time_per_seq (energy_per_seq) against n, a line per model and k;
 * each other pair of speedups.csv, as heatmaps (time_speedup_MODEL[_vs_BASELINE] ...) or, for a
 * model without a k axis, speedup_MODEL against n; breakdown_MODEL per model of breakdown.csv.
 * A script finds its data and writes its images beside itself (ARG0), from any directory. */
#ifndef LB_PLOT_H
#define LB_PLOT_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include "reports/plot_figure.h"
#include "reports/sweep_dir.h"

/* Write the data files and scripts into out_dir (which must exist), naming them in *out (may be
 * NULL). LB_ERR_IO naming the file that could not be written. */
int lb_plot_write(const LbSweepDir *s, const char *out_dir, LbPlotList *out);

/* A sweep beside bench/peer's result, into out_dir: versus_time_per_seq (every model and k of
 * both sides, a peer's in its work's hue with open points, torch-sdpa-* near-black), and one line
 * per pair of the same work with the line of equality: versus_time_ratio, versus_batch_ratio and,
 * where some pair has energy on both sides, versus_energy_ratio (linbench / peer). */
int lb_plot_peer_write(const LbSweepDir *lin, const LbSweepDir *peer, const char *out_dir, LbPlotList *out);

/* breakdown.csv's figures, where s has one, into out_dir (reports/breakdown_plot.c). */
int lb_breakdown_plot_write(const LbSweepDir *s, const char *out_dir, LbPlotList *out);

#endif
