/* `linbench compare`: a sweep's two grids beside the paper's Table 3 with the ratio measured /
 * paper per cell, or two sweeps side by side with the ratio B / A.
 *
 * Cells are matched by (n, k) over the sweep's n and k (against the paper) or the union of both
 * sweeps' (two sweeps). A ratio is a number only where both sides are; otherwise it shows the
 * reason: "-" (k >= n), ERR, OOM, NA (not measured, or not in the paper), in that order.
 *
 * Formats: text (aligned tables, three blocks per grid: first, second, ratio), md (the same as
 * Markdown tables), csv (one row per cell with k < n:
 *   grid,n,k,measured,paper,measured_over_paper   or   grid,n,k,a,b,b_over_a
 * values %.6g, markers OOM / ERR / NA; energy rows too where either side measured energy). Text
 * and md open with what each side ran on. Energy (joules per sequence, baseline / model) follows
 * time and memory where a sweep measured it: against the paper the measured grid alone (the paper
 * has none) or a line with meta.csv's energy_note saying why not; two sweeps A, B and B / A.
 *
 * Text and md then show every other measured model (lb_speedup_pairs: each model against
 * standard, and against chunked where measured; what speedups.csv holds), one pair of grids per
 * comparison: n against k for a model with a k axis, one column for a model without; two
 * sweeps show A, B and B / A for each. The CSV output stays Table 3's only (its columns have no
 * model); the other models' numbers in CSV are the sweep's speedups.csv. */
#ifndef LB_COMPARE_H
#define LB_COMPARE_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stdio.h>

#include "reports/grid.h"
#include "reports/sweep_dir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The comparison of two grids of one (model, baseline) pair (first's) over given n and k: first,
 * second and ratio (second / first when second_over_first, else first / second). A model without
 * a k axis has one column whatever k says. */
typedef struct LbComparison {
    LbGrid first, second, ratio;
} LbComparison;

int lb_compare_build(const LbGrid *first, const LbGrid *second, int second_over_first,
                     const int64_t *n, size_t nn, const int64_t *k, size_t nk, LbComparison *c);
void lb_compare_free(LbComparison *c);

/* One line on what a sweep ran: device, dtype, model shape, sharing/order, memory budget. */
void lb_compare_describe(FILE *out, const LbSweepDir *s);

/* Whether two results ran on different devices, so that their ratios measure the devices as well:
 * two measured ones whose device or device_name differ, or a sweep on the CPU reference beside a
 * prediction (a prediction names its card as the datasheet does, not as the driver does, so a
 * GPU is not told from the card it was predicted for by name). 1 with "A ran on X, B on Y" (or
 * "measured on X, predicted for Y") in buf; 0. */
int lb_compare_devices_differ(const LbSweepDir *a, const LbSweepDir *b, char *buf, size_t size);

/* The reports. LB_OK, or a status from building the grids. */
int lb_compare_paper(FILE *out, const LbSweepDir *s, LbFormat fmt);
int lb_compare_sweeps(FILE *out, const LbSweepDir *a, const LbSweepDir *b, LbFormat fmt);

#ifdef __cplusplus
}
#endif

#endif
