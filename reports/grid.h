/* Table 3's grids (METHOD.md, "Ratios") from raw.csv rows, and any model's against a baseline:
 *   time speedup(n, k)   = ms_per_seq(standard, n) / ms_per_seq(linformer, n, k)
 *   memory speedup(n, k) = batch(linformer, n, k) / batch(standard, n)
 *   energy speedup(n, k) = energy_j_per_seq(standard, n) / energy_j_per_seq(linformer, n, k)
 * A cell is EMPTY where the model has none (Linformer's k >= n), else ERROR when either side
 * failed, OOM when either ran out of memory at batch 1, MISSING (NA) when either has no row (or,
 * for energy, no counter), VALUE otherwise. Files: NAME_speedup.csv, header `n,k=128,...`, a row
 * per n, values %.6g, EMPTY an empty field. */
#ifndef LB_GRID_H
#define LB_GRID_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "attn/measure/measure.h"
#include "reports/table.h"

typedef enum {
    LB_GRID_EMPTY,
    LB_GRID_MISSING,
    LB_GRID_VALUE,
    LB_GRID_OOM,
    LB_GRID_ERROR
} LbGridCellKind;

typedef struct {
    LbGridCellKind kind;
    double value;
} LbGridCell;

/* The pair Table 3 compares, which the grid files and heatmaps hold; every other is in speedups.csv. */
#define LB_TABLE3_MODEL LB_MODEL_LINFORMER
#define LB_TABLE3_BASELINE LB_MODEL_STANDARD

/* cell (i, j) for n[i], k[j] at [i * cols + j]; a model without a k axis has one column, k 0. */
typedef struct LbGrid {
    size_t rows, cols;
    int64_t *n;
    int64_t *k;
    LbGridCell *time, *memory, *energy; /* one allocation, at time */
    LbModelKind model, baseline; /* the ratios are model against baseline (Table 3: linformer, standard) */
} LbGrid;

/* has[m]: whether model m has a row. */
void lb_models_with_rows(const LbCellResult *rows, size_t count, int has[LB_MODEL_COUNT]);
/* Table 3's Linformer: the linear one where it has rows, else the first general projection with
 * rows (--projection measured it in the linear one's place). */
LbModelKind lb_table3_model(const LbCellResult *rows, size_t count);

/* Table 3's grids (lb_table3_model against standard) from raw rows. n/k NULL: the rows' (sorted
 * unique; k from the Linformer rows). Of a (model, n, k) that appears twice, the last row wins. */
int lb_grid_from_raw(const LbCellResult *rows, size_t count, const int64_t *n, size_t nn,
                     const int64_t *k, size_t nk, LbGrid *g);
/* The same for `model` against `baseline` (model != baseline):
 *   time = ms_per_seq(baseline) / ms_per_seq(model), memory = batch(model) / batch(baseline).
 * n NULL: the n of both models' rows; k NULL: the k of the model's rows. A model without a k
 * axis gets one column (k 0) whatever k says; a baseline with a k axis is matched at the same k. */
int lb_grid_pair_from_raw(const LbCellResult *rows, size_t count, LbModelKind model,
                          LbModelKind baseline, const int64_t *n, size_t nn, const int64_t *k,
                          size_t nk, LbGrid *g);
/* Cell c's three ratios from the baseline's row and the model's (either may be NULL), or its kind
 * as above (ERROR too where a time or batch is not positive; energy MISSING where a side has none). */
void lb_grid_set_cell(LbGrid *g, size_t c, const LbCellResult *baseline, const LbCellResult *model);
/* Whether any cell of g->energy holds a value (the device had an energy counter). */
int lb_grid_has_energy(const LbGrid *g);
/* Whether g has a "-" (no such cell) where k < n: a pooling model's k that does not divide n. */
int lb_grid_dash_below_n(const LbGrid *g);
/* The legend's words for "-": "k >= n", and where `below` (lb_grid_dash_below_n) the pooling case. */
const char *lb_grid_dash_meaning(int below);
/* A grid of model against baseline of the given shape (without a k axis one column, k 0), every
 * cell MISSING (EMPTY where the model has no such cell). */
int lb_grid_alloc_pair(LbGrid *g, LbModelKind model, LbModelKind baseline, const int64_t *n,
                       size_t nn, const int64_t *k, size_t nk);
void lb_grid_free(LbGrid *g);

/* --- files (grid_files.c) --- */
#define LB_ENERGY_SPEEDUP_FILE "energy_speedup.csv"
/* time_, memory_ and energy_speedup.csv in dir, each written atomically. */
int lb_grids_write(const char *dir, const LbGrid *g);
/* One grid (q: 0 time, 1 memory, 2 energy) as its file holds it; q -1: every grid, in one table
 * with a leading `grid` column (energy where some cell has it). */
int lb_grid_write_csv(FILE *f, const LbGrid *g, int q);
/* The time and memory grids from CSV text (the paper's table), with the same n and k; every
 * energy cell NA (EMPTY where time is). `what` names them in messages. */
int lb_grids_parse(const char *time_csv, size_t time_len, const char *memory_csv,
                   size_t memory_len, const char *what, LbGrid *g);
/* The grid files of dir (energy_speedup.csv where there is one, else every energy cell NA). */
int lb_grids_read(const char *dir, LbGrid *g);

/* A cell as a table shows it ("1.52x", "-", "OOM", "ERR", "NA"), with `suffix` after a value. */
void lb_grid_cell_text(const LbGridCell *c, const char *suffix, char *buf, size_t size);
/* A cell as the CSV files hold it ("1.52345", "", "OOM", "ERR", "NA"). */
void lb_grid_cell_csv(const LbGridCell *c, char *buf, size_t size);
/* A CSV field back into a cell: 0, or -1 when it is none of the above. */
int lb_grid_cell_parse(const char *s, LbGridCell *c);

/* --- printing (table.c) --- */
/* Table 3's grids as aligned tables (text), Markdown tables, or CSV (lb_grid_write_csv, q -1). */
void lb_grid_print(FILE *out, const LbGrid *g, LbFormat fmt);
/* g's time, memory and energy (where it has some) side by side under titles; columns k, or for
 * a model without a k axis one column named units[block] (NULL: the model's name). */
int lb_grid_print_table(FILE *out, LbFormat fmt, const LbGrid *g, const char *const titles[3],
                        const char *const *units);

#endif
