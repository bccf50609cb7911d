/* `linbench plot`: gnuplot scripts of a sweep (NAME.gp, its data NAME.plot.csv through libcsv),
 * and their NAME.png and NAME.svg where gnuplot is installed:
 *   time_speedup, memory_speedup (energy_speedup where measured)  Table 3's heatmaps, n by k
 *   time_per_seq (energy_per_seq)  per sequence against n, log-log, a line per model and k, a hue
 *                  per model, a shade and dash per k (reports/plot_figure.h)
 *   time_speedup_MODEL, memory_speedup_MODEL (energy_...)  every other pair speedups.csv holds,
 *                  for a model with a k axis (MODEL_vs_BASELINE against chunked and flash)
 *   speedup_MODEL  time, memory (and energy) saved against n, for a model without one
 *   breakdown_MODEL  per model of breakdown.csv (reports/breakdown_plot.c)
 * A script finds its data and writes its images beside itself (ARG0), so `gnuplot DIR/NAME.gp`
 * works from any directory; pngcairo where gnuplot has it, else png. */
#ifndef LB_PLOT_H
#define LB_PLOT_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include "reports/plot_figure.h"
#include "reports/sweep_dir.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif

#endif
