/* `linbench compare`: two row sets paired on (model, n, k), per cell each side and a ratio. The
 * second set (none: the paper's Table 3; another sweep; the other --pass; bench/peer's result; a
 * prediction) chooses the mode, and the sweep is A whatever the order. CSV: README's compare
 * --format. */
#ifndef LB_COMPARE_H
#define LB_COMPARE_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stdio.h>

#include "reports/sweep_dir.h"
#include "reports/table.h"

/* Whether a and b can be compared (b NULL: against the paper). LB_OK, or LB_ERR_FORMAT saying why:
 * a peer's result alone or two of them; a peer of another model shape or storage type; a
 * prediction of another model (a setting of the work differs); a forward and a training result
 * that differ in more than the pass (the grid, the work, the device or its memory budget). */
int lb_compare_check(const LbSweepDir *a, const LbSweepDir *b);

/* Whether two results ran on different devices, so that their ratios measure the devices too:
 * 1 with "A ran on X, B on Y" (or "measured on X, predicted for Y") in buf; else 0. */
int lb_compare_devices_differ(const LbSweepDir *a, const LbSweepDir *b, char *buf, size_t size);

/* The report of a against b (NULL: the paper), either order. LB_OK or a status (LB_ERR_NOMEM,
 * LB_ERR_IO, a breakdown.csv that does not read). */
int lb_compare(FILE *out, const LbSweepDir *a, const LbSweepDir *b, LbFormat fmt);

/* breakdown.csv's tables, where s has one (text or md; nothing for csv): LB_OK, or the status of
 * reading it (reports/breakdown_plot.c). */
int lb_breakdown_compare(FILE *out, const LbSweepDir *s, LbFormat fmt);

#endif
