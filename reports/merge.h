/* linbench merge: the parts of a sharded sweep (their directories read back) put together into
 * one result. The checks and the rows here; cmd/cmd_merge.c prints and picks exit codes. */
#ifndef LB_MERGE_H
#define LB_MERGE_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stddef.h>

#include "attn/measure.h"
#include "reports/sweep_dir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every key in `keys` (absent reads as "") and device_name must hold the same value in every
 * part. 0, or -1 with one line in why naming the key, both values and both directories. */
int lb_merge_check_settings(const LbSweepDir *parts, size_t count, const char *const *keys,
                            size_t nkeys, char *why, size_t size);

/* Each cell's row across the parts (within a part, its last row for the cell, as the grids take
 * it), in the sweep's order: by n, then the models in the model table's order, then by k. A
 * cell is keyed by (model, n) and k where the model has a k axis. A cell in two
 * parts must have identical rows there (kept once). 0 with a malloc'd array; -1 with why naming
 * the cell and the two directories; LB_ERR_NOMEM. */
int lb_merge_rows(const LbSweepDir *parts, size_t count, LbCellResult **rows, size_t *nrows,
                  char *why, size_t size);

/* Cells of the sweep with no row in `rows` ("standard n=64, linformer n=64 k=16, ..."): every
 * model with measured[m] (lb_models_measured) at every n, and every k where it has a k axis and
 * lb_model_cell_exists; written into buf (cut with "..." past size); returns how many. */
size_t lb_merge_missing(const LbCellResult *rows, size_t count, const int64_t *n, size_t nn,
                        const int64_t *k, size_t nk, const int measured[LB_MODEL_COUNT], char *buf,
                        size_t size);

#ifdef __cplusplus
}
#endif

#endif
