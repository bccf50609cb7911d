/* linbench predict: the roofline's forecast of a whole sweep on a GPU that is not here, written as a
 * sweep writes its directory, with meta.csv's source `predicted`. */
#ifndef LB_PREDICT_H
#define LB_PREDICT_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU) || defined(LB_LAYER_REPORTS)
#error "reports/ and attn/ may not include cmd/ headers"
#endif

#include "cmd/sweep/roofline.h"
#include "reports/grid.h"
#include "reports/settings.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A whole prediction into `dir` (exists, empty): raw.csv, speedups.csv, the grids, breakdown.csv
 * of predicted times and meta.csv (source predicted, the card and every parameter). *grid as a
 * sweep's (free with lb_grid_free); *sweep_s: what the sweep would take at its fewest passes
 * (a verification pass and min_passes timed ones per cell that fits). */
typedef struct LbPredictJob {
    const LbRunSettings *settings;
    const LbPredictCard *card;
    const LbPredictParams *params;
    const char *dir;
    const char *command_line;
} LbPredictJob;
int lb_predict_run(const LbPredictJob *job, LbGrid *grid, double *sweep_s);

#ifdef __cplusplus
}
#endif

#endif
