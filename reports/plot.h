/* `linbench plot`: gnuplot scripts of a sweep, and their PNG and SVG where gnuplot is installed.
 *
 * Figures, each a script NAME.gp, its data NAME.plot.csv (written through libcsv) and, once
 * rendered, NAME.png and NAME.svg:
 *   time_speedup    heatmap of Table 3's time grid (Linformer against standard), n (rows)
 *                   against k (columns), value in each cell
 *   memory_speedup  the same for the memory grid
 *   time_per_seq    ms per sequence against n, log-log, one line per measured model without a
 *                   k axis ("standard", "chunked") and per model and k ("linformer k=128",
 *                   "performer k=128": every title names its model), from raw.csv's ok rows;
 *                   a hue per model, a shade and dash per k (reports/plot_style.h)
 * and, where some cell has its energy (the device had a counter: METHOD.md, "Energy"):
 *   energy_speedup  heatmap of Table 3's energy grid (joules per sequence, standard / Linformer)
 *   energy_per_seq  joules per sequence against n, the lines of time_per_seq
 * and for every other measured model (lb_models_measured) against standard, where standard was
 * measured (and against chunked and flash: MODEL_vs_BASELINE):
 *   time_speedup_MODEL, memory_speedup_MODEL   a heatmap pair, for a model with a k axis, and
 *                   energy_speedup_MODEL where that pair has energy
 *   speedup_MODEL   time and memory (and energy) saved against n, for a model without one
 * and, for a sweep run with --breakdown, breakdown_MODEL per model of breakdown.csv
 * (reports/breakdown_plot.h):
 * A script finds its data and writes its images beside itself (through ARG0), so
 * `gnuplot DIR/NAME.gp` works from any directory. It uses pngcairo where gnuplot has it, else
 * png. */
#ifndef LB_PLOT_H
#define LB_PLOT_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stddef.h>

#include "reports/plot_figure.h"
#include "reports/sweep_dir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Write the data files and scripts into out_dir (which must exist), naming them in *out (may be
 * NULL). LB_ERR_IO naming the file that could not be written. */
int lb_plot_write(const LbSweepDir *s, const char *out_dir, LbPlotList *out);

/* linbench plot LINBENCH_DIR PEER_DIR: a sweep and bench/peer's result (reports/peer_dir.h) in
 * the same figures, into out_dir:
 *   versus_time_per_seq  ms per sequence against n, log-log: every linbench model (and k) as in
 *                        time_per_seq, and every peer model (and k) in its work's hue and
 *                        shade with open points, a peer-only exact attention (torch-sdpa-*)
 *                        near-black
 *   versus_time_ratio    linbench / peer ms per sequence against n, one line per pair of the
 *                        same work (standard / torch-standard, standard / torch-sdpa-flash,
 *                        linformer k=128 / torch-linformer k=128), with the line of equality
 *   versus_batch_ratio   the same for the largest batch
 *   versus_energy_ratio  the same for J per sequence, only where some pair has energy on both
 *                        sides
 * Each with its data (NAME.plot.csv: n, then a column per line named by its title). */
int lb_plot_peer_write(const LbSweepDir *lin, const LbSweepDir *peer, const char *out_dir, LbPlotList *out);

/* The gnuplot executable on PATH into buf: 0, or -1 when there is none. */
int lb_plot_find_gnuplot(char *buf, size_t size);

/* Run `gnuplot script` (posix_spawn, no shell) and wait at most timeout_s seconds (a hung
 * gnuplot is killed); its NAME.png and NAME.svg are renamed into place beside the script, never
 * written through a link planted there. LB_OK, or LB_ERR_IO with gnuplot's exit status or the
 * time-out in the message. gnuplot's own messages go to our stderr. */
int lb_plot_render(const char *gnuplot, const char *script, int timeout_s);

#ifdef __cplusplus
}
#endif

#endif
