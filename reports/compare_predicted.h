/* `linbench compare MEASURED PREDICTED`: a sweep against linbench predict's forecast of it, cell by
 * cell, so a user sees where their card runs far from the roofline (METHOD.md, "Predicting").
 *
 * Per cell (the prediction's cells in the sweep's order, then any only the sweep has): the largest
 * batch measured and predicted and measured / predicted; ms per sequence measured and predicted
 * and measured / predicted (above 1: slower than the roofline says). With breakdown.csv in both
 * directories, per model a table of each operation's measured / predicted ms per sequence (its
 * ms over its cell's batch), one column per cell both hold: an operation far above the pass's
 * ratio is the one running far from its roofline on this card.
 *
 * Formats: text, md; csv one row per cell and operation:
 *   model,n,k,op,measured_batch,predicted_batch,batch_ratio,measured_ms_per_seq,predicted_ms_per_seq,time_ratio
 * op `pass` for the cell's row from raw.csv (every cell), a role's name for a breakdown row; an
 * empty field where a side has no value (OOM, not measured). */
#ifndef LB_COMPARE_PREDICTED_H
#define LB_COMPARE_PREDICTED_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stdio.h>

#include "reports/sweep_dir.h"
#include "reports/table.h"

#ifdef __cplusplus
extern "C" {
#endif

/* LB_OK where the prediction is of the sweep's own work (model shape, dtype, TF32 and every
 * model's own setting as meta.csv records them), else LB_ERR_FORMAT saying which setting differs:
 * per-cell ratios of two different models would read as the card's distance from its roofline. */
int lb_compare_predicted_check(const LbSweepDir *measured, const LbSweepDir *predicted);

int lb_compare_predicted(FILE *out, const LbSweepDir *measured, const LbSweepDir *predicted, LbFormat fmt);

#ifdef __cplusplus
}
#endif

#endif
