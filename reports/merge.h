/* Putting the parts of a sharded sweep (their directories) together into one result, for
 * linbench merge and for sweep --gpus, whose parts are its GPUs' shards. Nothing here prints:
 * cmd/ words the refusals and picks the exit codes. */
#ifndef LB_MERGE_H
#define LB_MERGE_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stddef.h>

#include "attn/measure/measure.h"
#include "reports/grid.h"
#include "reports/meta.h"
#include "reports/sweep_dir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A cell of a sweep: (model, n), and k where the model has a k axis (0 otherwise). */
typedef struct LbSweepCell {
    LbModelKind model;
    int64_t n;
    int64_t k;
} LbSweepCell;

/* Every cell of the grid n x k of the models in `models` (bit 1u << kind), in the sweep's order:
 * for each n, each model in the table's order, each k where the model has a k axis and
 * lb_model_cell_exists; into a malloc'd array. LB_OK or LB_ERR_NOMEM. */
int lb_sweep_cells(unsigned models, const int64_t *n, size_t nn, const int64_t *k, size_t nk, LbSweepCell **cells,
                   size_t *count);
/* Whether r is a row of cell c. */
int lb_sweep_cell_is(const LbSweepCell *c, const LbCellResult *r);

typedef struct LbMerge {
    LbSweepDir *parts;
    size_t count;
    LbCellResult *rows; /* each cell once, in the sweep's order */
    size_t nrows;
    int measured[LB_MODEL_COUNT];
    size_t nmissing;    /* cells of the grid with no row, named (cut with "...") in missing */
    char missing[512];
    const LbSweepDir *unfinished; /* the first part whose status is not complete, or NULL */
} LbMerge;

/* Read and check the parts: each a sweep's directory, given once (by inode), all with the same
 * settings but the shard, device_name and linbench_version, no cell in two parts with different
 * rows. LB_OK; LB_ERR_FORMAT with the refusal in lb_error_message() (bad input); LB_ERR_IO or
 * LB_ERR_NOMEM. lb_merge_free after either. */
int lb_merge_load(LbMerge *m, char *const *dirs, size_t count);
void lb_merge_free(LbMerge *m);

/* meta.csv of the merge: command_line, status, every key the parts agree on (first_wins: the
 * first part's value of every key, for parts known to be one run's), matmul_tuning of all parts
 * ("part 1: ...; part 2: ...") where they differ, parts, and part_1, part_2 ... (the directories
 * as given). */
int lb_merge_meta(const LbMerge *m, const char *command, const char *status, int first_wins, LbMeta *meta);

/* raw.csv, the grids, speedups.csv, breakdown.csv (where a part has one) and meta.csv into out
 * (exists, locked), meta.csv last; the grids kept in *grid when not NULL (lb_grid_free). */
int lb_merge_write(const LbMerge *m, const char *out, const LbMeta *meta, LbGrid *grid);

/* Each cell's row across the parts (within a part, its last row for the cell, as the grids take
 * it), in the sweep's order: by n, then the models in the model table's order, then by k. A cell
 * is keyed by (model, n) and k where the model has a k axis. A cell in two parts must have
 * identical rows there (kept once). 0 with a malloc'd array; -1 with why naming the cell and the
 * two directories; LB_ERR_NOMEM. */
int lb_merge_rows(const LbSweepDir *parts, size_t count, LbCellResult **rows, size_t *nrows,
                  char *why, size_t size);

/* Cells of the sweep with no row in `rows` ("standard n=64, linformer n=64 k=16, ..."): the cells
 * (lb_sweep_cells) of every model with measured[m] (lb_models_measured); *how_many of them, named in
 * buf (cut with "..." past size). LB_OK or LB_ERR_NOMEM. */
int lb_merge_missing(const LbCellResult *rows, size_t count, const int64_t *n, size_t nn, const int64_t *k, size_t nk,
                     const int measured[LB_MODEL_COUNT], size_t *how_many, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
