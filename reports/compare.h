/* `linbench compare`: two row sets paired on (model, n, k), per cell each side and a ratio.
 *
 * What the second set is chooses the mode (reports/sweep_dir.h's kind):
 *   paper      one sweep (or prediction) against the paper's Table 3, itself a row set: both
 *              sides' speedups (time saved, memory saved) and measured / paper, over the sweep's
 *              n and k; then the sweep's other models (speedups.csv's pairs) and breakdown.csv. A
 *              training step (--pass train) shows its own speedups alone: the paper has no training
 *              table.
 *   sweeps     two sweeps' speedups and B / A over the union of their n and k, for Table 3's pair
 *              and every other pair either measured.
 *   passes     two sweeps (or two predictions) alike but for --pass: per cell each side's largest
 *              batch and ms per sequence, and train / forward; the forward pass is A.
 *   peer       a sweep against bench/peer's result: each linbench model against each peer model
 *              of the same work (lb_peer_same_work), both sides' ms per sequence, largest batch
 *              (and J per sequence) and linbench / peer; then every model's time, memory (and
 *              energy) saved against a peer-only exact attention (torch-sdpa-*).
 *   predicted  a sweep against linbench predict's forecast of it: per cell the largest batch and
 *              ms per sequence measured, predicted and measured / predicted; with breakdown.csv in
 *              both, each operation's measured / predicted ms per sequence.
 * Either side may come first on the command line; the sweep is A. Markers: "-" no such cell
 * (k >= n), ERR, OOM, NA (not measured), in that order of precedence. CSV: a row per cell in the
 * mode's columns (README's compare --format); predicted: model,n,k,op,measured_batch,
 * predicted_batch,batch_ratio,measured_ms_per_seq,predicted_ms_per_seq,time_ratio; passes the same
 * with forward_ and train_ (op: pass). */
#ifndef LB_COMPARE_H
#define LB_COMPARE_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stdio.h>

#include "reports/sweep_dir.h"
#include "reports/table.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif

#endif
