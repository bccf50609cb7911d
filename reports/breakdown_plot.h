/* breakdown.csv (reports/breakdown_csv.h) shown by `linbench compare` and `linbench plot`, for a sweep
 * that ran with --breakdown; both do nothing where the directory has no breakdown.csv.
 *
 * compare: per model, a table of each operation's share of the pass (%), one column per cell
 *   (n, or n/k for a model with a k axis), and the pass's ms.
 * plot: per model, breakdown_MODEL.gp and breakdown_MODEL.plot.csv (+ .png/.svg once rendered):
 *   a stacked bar per cell (n, or n/k), one segment per operation, the bar's height its share of
 *   the pass (1 less the overhead's rounding). */
#ifndef LB_REPORTS_BREAKDOWN_PLOT_H
#define LB_REPORTS_BREAKDOWN_PLOT_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stdio.h>

#include "reports/plot_figure.h"
#include "reports/sweep_dir.h"
#include "reports/table.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Print the tables (text or md; nothing for csv). LB_OK, or the status of reading breakdown.csv. */
int lb_breakdown_compare(FILE *out, const LbSweepDir *s, LbFormat fmt);

/* Write the figures into out_dir, adding their names to *out (may be NULL). */
int lb_breakdown_plot_write(const LbSweepDir *s, const char *out_dir, LbPlotList *out);

#ifdef __cplusplus
}
#endif

#endif
