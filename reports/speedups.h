/* speedups.csv: every measured model against the baselines, beside Table 3's two grids
 * (METHOD.md, "Files a sweep writes"). Columns model,baseline,n,k,time_speedup,memory_speedup,
 * energy_speedup, the ratios as the grids take them (reports/grid.h), each written with the
 * fewest of 15 to 17 digits that read back to the same double, or OOM, ERR, NA. Baselines in the
 * model table's rank (standard, chunked, flash), each where measured, against every other model
 * measured but the baselines ranked before it (standard against flash is flash against standard
 * upside down); k empty for a model without a k axis; cells a model does not have left out. */
#ifndef LB_SPEEDUPS_H
#define LB_SPEEDUPS_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stddef.h>
#include <stdint.h>

#include "attn/measure/measure.h"
#include "reports/grid.h"
#include "reports/meta.h"

#define LB_SPEEDUPS_FILE "speedups.csv"
#define LB_SPEEDUPS_COLUMNS 7

/* One (model, baseline) comparison. */
typedef struct LbSpeedupPair {
    LbModelKind model, baseline;
} LbSpeedupPair;

#define LB_SPEEDUP_PAIRS_MAX (LB_MODEL_COUNT * LB_MODEL_COUNT)

/* The comparisons speedups.csv holds when the models with measured[m] != 0 were measured, in the
 * file's order (baseline, then model). Returns how many (at most LB_SPEEDUP_PAIRS_MAX). */
size_t lb_speedup_pairs(const int measured[LB_MODEL_COUNT], LbSpeedupPair *pairs);

/* Which models a sweep measured: meta.csv's `models` (a comma list of model names) where it has
 * one, else the paper's two (what every sweep measured before --models); plus any model with a
 * row. meta may be NULL. 0, or -1 when `models` names a model the table does not know. */
int lb_models_measured(const LbMeta *meta, const LbCellResult *rows, size_t count,
                       int measured[LB_MODEL_COUNT]);

/* DIR/speedups.csv from raw rows, written atomically (reports/atomic_file.h). n/k: the sweep's
 * lists (NULL: the rows'); measured: lb_models_measured's (NULL: the models with a row). A model
 * with a k axis gets a row per (n, k) where lb_model_cell_exists, the others one per n. */
int lb_speedups_write(const char *dir, const LbCellResult *rows, size_t count, const int64_t *n,
                      size_t nn, const int64_t *k, size_t nk, const int *measured);

/* lb_speedups_write, then the grids from the same rows (lb_grid_from_raw, lb_grids_write): every
 * table of a result directory. The grids kept in *out when out is not NULL and all is written. */
int lb_tables_write(const char *dir, const LbCellResult *rows, size_t count, const int64_t *n, size_t nn,
                    const int64_t *k, size_t nk, const int *measured, LbGrid *out);

#endif
