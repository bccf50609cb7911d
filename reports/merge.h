/* The parts of a sharded sweep (their directories) put together into one result, for linbench
 * merge and sweep --gpus. Prints nothing. */
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

/* A cell of a sweep: (model, n), and k where the model has a k axis (0 otherwise). */
typedef struct LbSweepCell {
    LbModelKind model;
    int64_t n;
    int64_t k;
} LbSweepCell;

/* Every cell of the grid n x k of the models in `models` (bit 1u << kind) in the sweep's order (by
 * n, model, k), into a malloc'd array. LB_OK or LB_ERR_NOMEM. */
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
    size_t nmissing;    /* cells of the grid with no row, named in missing */
    char missing[512];
    const LbSweepDir *unfinished; /* the first part whose status is not complete, or NULL */
} LbMerge;

/* Read and check the parts: each a sweep's directory, given once, all of one sweep's settings, no
 * cell in two parts with different rows. LB_OK; LB_ERR_FORMAT with the refusal in
 * lb_error_message(); LB_ERR_IO or LB_ERR_NOMEM. lb_merge_free after either. */
int lb_merge_load(LbMerge *m, char *const *dirs, size_t count);
void lb_merge_free(LbMerge *m);

/* meta.csv of the merge: command_line, status, every key the parts agree on (first_wins: the first
 * part's, for parts of one run), each part's matmul_tuning where they differ, parts and part_N. */
int lb_merge_meta(const LbMerge *m, const char *command, const char *status, int first_wins, LbMeta *meta);

/* The merged result files into out (exists, locked), meta.csv last; the grids kept in *grid when
 * not NULL. */
int lb_merge_write(const LbMerge *m, const char *out, const LbMeta *meta, LbGrid *grid);

/* Each cell's row across the parts (a part's last for the cell), in the sweep's order. A cell in two
 * parts must have identical rows there. 0 with a malloc'd array; -1 with why; LB_ERR_NOMEM. */
int lb_merge_rows(const LbSweepDir *parts, size_t count, LbCellResult **rows, size_t *nrows,
                  char *why, size_t size);

/* The cells of the models with measured[m] that have no row in `rows`: *how_many, named in buf
 * ("standard n=64, linformer n=64 k=16, ...", cut with "..."). LB_OK or LB_ERR_NOMEM. */
int lb_merge_missing(const LbCellResult *rows, size_t count, const int64_t *n, size_t nn, const int64_t *k, size_t nk,
                     const int measured[LB_MODEL_COUNT], size_t *how_many, char *buf, size_t size);

#endif
