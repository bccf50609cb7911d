/* Text and Markdown tables (see table.h). */
#include "reports/table.h"

#include <stdlib.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "attn/base/status.h"
#include "reports/grid.h"

/* A table's strings, as lb_table_print_fn asked them of its fn: per block, cols labels then rows
 * x cols cells; after the blocks, the row labels. */
typedef struct Table {
    const char *corner;
    size_t rows, cols, nblocks;
    const char *const *titles;
    char (*text)[40];
} Table;

static const char *label(const Table *t, size_t b, size_t c) { return t->text[b * (t->rows + 1) * t->cols + c]; }
static const char *row_label(const Table *t, size_t r) { return t->text[t->nblocks * (t->rows + 1) * t->cols + r]; }

static const char *cell(const Table *t, size_t b, size_t r, size_t c)
{
    return t->text[b * (t->rows + 1) * t->cols + t->cols + r * t->cols + c];
}

static size_t max_len(size_t a, const char *s)
{
    size_t l = strlen(s);
    return l > a ? l : a;
}

static void print_md(FILE *out, const Table *t, size_t b)
{
    if (t->titles[b] && t->titles[b][0])
        fprintf(out, "**%s**\n\n", t->titles[b]);
    fprintf(out, "| %s |", t->corner);
    for (size_t c = 0; c < t->cols; c++)
        fprintf(out, " %s |", label(t, b, c));
    fprintf(out, "\n|---:|");
    for (size_t c = 0; c < t->cols; c++)
        fprintf(out, "---:|");
    fprintf(out, "\n");
    for (size_t r = 0; r < t->rows; r++) {
        fprintf(out, "| %s |", row_label(t, r));
        for (size_t c = 0; c < t->cols; c++)
            fprintf(out, " %s |", cell(t, b, r, c));
        fprintf(out, "\n");
    }
    fprintf(out, "\n");
}

static void table_print(FILE *out, LbFormat fmt, const Table *t)
{
    const size_t rows = t->rows, cols = t->cols, nblocks = t->nblocks;
    if (fmt == LB_FORMAT_MD) {
        for (size_t i = 0; i < nblocks; i++)
            print_md(out, t, i);
        return;
    }
    /* Text: one width for all the cells of a block, so its columns line up. */
    size_t label_w = strlen(t->corner);
    for (size_t r = 0; r < rows; r++)
        label_w = max_len(label_w, row_label(t, r));
    size_t *w = calloc(nblocks ? nblocks : 1, sizeof *w); /* a block is cols x (w + 2) wide */
    if (!w)
        return;
    for (size_t i = 0; i < nblocks; i++) {
        for (size_t c = 0; c < cols; c++) {
            w[i] = max_len(w[i], label(t, i, c));
            for (size_t r = 0; r < rows; r++)
                w[i] = max_len(w[i], cell(t, i, r, c));
        }
        /* A title wider than its columns widens them. */
        const size_t tw = t->titles[i] ? strlen(t->titles[i]) + 2 : 0;
        while (cols > 0 && cols * (w[i] + 2) < tw)
            w[i]++;
    }
    int any_title = 0;
    for (size_t i = 0; i < nblocks; i++)
        any_title |= t->titles[i] && t->titles[i][0];
    if (any_title) {
        fprintf(out, "%*s", (int)label_w, "");
        for (size_t i = 0; i < nblocks; i++) {
            const char *title = t->titles[i] ? t->titles[i] : "";
            if (i + 1 < nblocks)
                fprintf(out, "%s  %-*s", i ? " |" : "", (int)(cols * (w[i] + 2) - 2), title);
            else
                fprintf(out, "%s  %s", i ? " |" : "", title);
        }
        fprintf(out, "\n");
    }
    /* line 0 the column labels, line r + 1 row r */
    for (size_t line = 0; line <= rows; line++) {
        fprintf(out, "%*s", (int)label_w, line ? row_label(t, line - 1) : t->corner);
        for (size_t i = 0; i < nblocks; i++) {
            if (i)
                fprintf(out, " |");
            for (size_t c = 0; c < cols; c++)
                fprintf(out, "  %*s", (int)w[i], line ? cell(t, i, line - 1, c) : label(t, i, c));
        }
        fprintf(out, "\n");
    }
    free(w);
}

int lb_table_print_fn(FILE *out, LbFormat fmt, const char *corner, size_t rows, size_t cols,
                      const char *const *titles, size_t nblocks, LbTableText fn, const void *ctx)
{
    const size_t per = cols + rows * cols, count = nblocks * per + rows;
    Table t = {corner, rows, cols, nblocks, titles, malloc((count ? count : 1) * sizeof *t.text)};
    if (!t.text)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory printing a table");
    for (size_t b = 0; b < nblocks; b++) {
        for (size_t c = 0; c < cols; c++)
            fn(ctx, b, SIZE_MAX, c, t.text[b * per + c], sizeof t.text[0]);
        for (size_t r = 0; r < rows; r++)
            for (size_t c = 0; c < cols; c++)
                fn(ctx, b, r, c, t.text[b * per + cols + r * cols + c], sizeof t.text[0]);
    }
    for (size_t r = 0; r < rows; r++)
        fn(ctx, 0, r, SIZE_MAX, t.text[nblocks * per + r], sizeof t.text[0]);
    table_print(out, fmt, &t);
    free(t.text);
    return LB_OK;
}

void lb_cell_label(LbModelKind m, int64_t n, int64_t k, LbCellLabel buf)
{
    if (lb_model_has_k(m))
        snprintf(buf, sizeof(LbCellLabel), "%lld/%lld", (long long)n, (long long)k);
    else
        snprintf(buf, sizeof(LbCellLabel), "%lld", (long long)n);
}

void lb_table_print_numbers(FILE *out, LbFormat fmt, LbModelKind m, size_t cols, const LbCellLabel *col_labels,
                            size_t rows, const char *const *row_labels, const double *v, const char *const *fmts)
{
    const int md = fmt == LB_FORMAT_MD;
    fprintf(out, md ? "\n### %s\n\n| op |" : "\n%s\n  %-12s", lb_model_name(m), lb_model_has_k(m) ? "n/k" : "n");
    for (size_t c = 0; c < cols; c++)
        fprintf(out, md ? " %s |" : " %10s", col_labels[c]);
    if (md) {
        fputs("\n|---|", out);
        for (size_t c = 0; c < cols; c++)
            fputs("---:|", out);
    }
    fputc('\n', out);
    for (size_t r = 0; r < rows; r++) {
        fprintf(out, md ? "| %s |" : "  %-12s", row_labels[r]);
        for (size_t c = 0; c < cols; c++) {
            char num[48] = "-";
            if (!isnan(v[r * cols + c]))
                snprintf(num, sizeof num, fmts[r], v[r * cols + c]);
            fprintf(out, md ? " %s |" : " %10s", num);
        }
        fputc('\n', out);
    }
}

/* --- grids -------------------------------------------------------------------------------------- */

typedef struct GridText {
    const LbGrid *g;
    const char *const *units;
} GridText;

static void grid_text(const void *ctx, size_t b, size_t r, size_t c, char *buf, size_t size)
{
    const GridText *t = ctx;
    const LbGrid *g = t->g;
    if (c == SIZE_MAX)
        snprintf(buf, size, "%lld", (long long)g->n[r]);
    else if (r == SIZE_MAX && lb_model_has_k(g->model))
        snprintf(buf, size, "%lld", (long long)g->k[c]);
    else if (r == SIZE_MAX)
        snprintf(buf, size, "%s", t->units ? t->units[b] : lb_model_name(g->model));
    else
        lb_grid_cell_text(&(b == 0 ? g->time : b == 1 ? g->memory : g->energy)[r * g->cols + c], "x", buf, size);
}

static int grid_table(FILE *out, LbFormat fmt, const LbGrid *g, const char *const titles[3], const char *const *units)
{
    const GridText t = {g, units}; /* energy where the device had a counter (METHOD.md, "Energy") */
    return lb_table_print_fn(out, fmt, lb_model_has_k(g->model) ? "n \\ k" : "n", g->rows, g->cols, titles,
                             lb_grid_has_energy(g) ? 3 : 2, grid_text, &t);
}

int lb_grid_print_table(FILE *out, LbFormat fmt, const LbGrid *g, const char *const titles[3], const char *const *units)
{
    LB_TRY(grid_table(out, fmt, g, titles, units));
    if (fmt == LB_FORMAT_TEXT)
        fputc('\n', out);
    return LB_OK;
}

void lb_grid_print(FILE *out, const LbGrid *g, LbFormat fmt)
{
    if (fmt == LB_FORMAT_CSV) {
        lb_grid_write_csv(out, g, -1);
        return;
    }
    static const char *const titles[2][3] = {
        {"time saved", "memory saved", "energy saved"},
        {"Time saved (ms per sequence, standard / Linformer)", "Memory saved (largest batch, Linformer / standard)",
         "Energy saved (joules per sequence, standard / Linformer)"}};
    if (grid_table(out, fmt, g, titles[fmt == LB_FORMAT_MD], NULL) != LB_OK)
        return;
    const char *dash = lb_grid_dash_meaning(lb_grid_dash_below_n(g));
    if (fmt == LB_FORMAT_TEXT)
        fprintf(out,
                "time saved = ms per sequence, standard / Linformer; memory saved = largest batch, Linformer / standard%s\n"
                "- : %s   OOM: out of memory at batch 1   ERR: the cell failed   NA: not measured\n",
                lb_grid_has_energy(g) ? "; energy saved = joules per sequence, standard / Linformer" : "", dash);
    else
        fprintf(out, "`-`: %s; `OOM`: out of memory at batch 1; `ERR`: the cell failed; `NA`: not measured.\n", dash);
}
