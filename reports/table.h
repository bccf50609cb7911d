/* Aligned text and Markdown tables of strings: the grids, the comparison with the paper and the
 * sweep's summary all print through here so they look alike. */
#ifndef LB_TABLE_H
#define LB_TABLE_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "attn/config.h"

typedef enum LbFormat { LB_FORMAT_TEXT, LB_FORMAT_MD, LB_FORMAT_CSV } LbFormat;

/* Text: blocks side by side, right-aligned, separated by " | ", each title over its block;
 * Markdown: one table per block under its title in bold (CSV is each report's own). Every string
 * comes from fn(ctx, block, row, col, buf, size): row SIZE_MAX asks for a
 * column label of that block, col SIZE_MAX for a row label (block 0). All blocks share cols; at
 * most LB_TABLE_BLOCKS blocks. */
#define LB_TABLE_BLOCKS 3
typedef void (*LbTableText)(const void *ctx, size_t block, size_t row, size_t col, char *buf, size_t size);
void lb_table_print_fn(FILE *out, LbFormat fmt, const char *corner, size_t rows, size_t cols,
                      const char *const *titles, size_t nblocks, LbTableText fn, const void *ctx);

/* A cell's label: n, or n/k for a model with a k axis. */
typedef char LbCellLabel[48];
void lb_cell_label(LbModelKind m, int64_t n, int64_t k, LbCellLabel buf);

/* Rows of numbers by model m's cells, as compare prints breakdown.csv: "\nMODEL\n" (md
 * "\n### MODEL\n\n") then text columns of 10, md a pipe table; v[r * cols + c] in row r's printf
 * format fmts[r], NaN as "-". */
void lb_table_print_numbers(FILE *out, LbFormat fmt, LbModelKind m, size_t cols, const LbCellLabel *col_labels,
                            size_t rows, const char *const *row_labels, const double *v, const char *const *fmts);

/* The legend under a grid: what "-" and NA mean there, and OOM and ERR. */
void lb_table_print_legend(FILE *out, LbFormat fmt, const char *dash, const char *na);

#endif
