/* Text and Markdown tables (see table.h). */
#include "reports/table.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "attn/base/status.h"
#include "reports/grid.h"

/* One string of a table: line 0 holds the column labels (the corner first), line r + 1 row r; c
 * SIZE_MAX is the line's label. */
typedef struct Table {
    const char *corner;
    LbTableText fn;
    const void *ctx;
} Table;

static const char *text(const Table *t, size_t b, size_t line, size_t c, char buf[40])
{
    if (line == 0 && c == SIZE_MAX)
        return t->corner;
    t->fn(t->ctx, c == SIZE_MAX ? 0 : b, line ? line - 1 : SIZE_MAX, c, buf, 40);
    return buf;
}

static size_t max_len(size_t a, const char *s)
{
    size_t l = strlen(s);
    return l > a ? l : a;
}

static void print_md(FILE *out, const Table *t, size_t rows, size_t cols, const char *title, size_t b)
{
    char buf[40];
    if (title && title[0])
        fprintf(out, "**%s**\n\n", title);
    for (size_t line = 0; line <= rows; line++) {
        fprintf(out, "| %s |", text(t, b, line, SIZE_MAX, buf));
        for (size_t c = 0; c < cols; c++)
            fprintf(out, " %s |", text(t, b, line, c, buf));
        if (line == 0) {
            fprintf(out, "\n|---:|");
            for (size_t c = 0; c < cols; c++)
                fprintf(out, "---:|");
        }
        fprintf(out, "\n");
    }
    fprintf(out, "\n");
}

void lb_table_print_fn(FILE *out, LbFormat fmt, const char *corner, size_t rows, size_t cols,
                      const char *const *titles, size_t nblocks, LbTableText fn, const void *ctx)
{
    const Table t = {corner, fn, ctx};
    if (fmt == LB_FORMAT_MD) {
        for (size_t b = 0; b < nblocks; b++)
            print_md(out, &t, rows, cols, titles[b], b);
        return;
    }
    /* Text: one width for all the cells of a block, so its columns line up. */
    size_t w[LB_TABLE_BLOCKS] = {0}, label_w = 0; /* a block is cols x (w + 2) wide */
    nblocks = nblocks < LB_TABLE_BLOCKS ? nblocks : LB_TABLE_BLOCKS;
    char buf[40];
    int any_title = 0;
    for (size_t line = 0; line <= rows; line++)
        label_w = max_len(label_w, text(&t, 0, line, SIZE_MAX, buf));
    for (size_t b = 0; b < nblocks; b++) {
        for (size_t line = 0; line <= rows; line++)
            for (size_t c = 0; c < cols; c++)
                w[b] = max_len(w[b], text(&t, b, line, c, buf));
        /* A title wider than its columns widens them. */
        const size_t tw = titles[b] ? strlen(titles[b]) + 2 : 0;
        while (cols > 0 && cols * (w[b] + 2) < tw)
            w[b]++;
        any_title |= titles[b] && titles[b][0];
    }
    if (any_title) {
        fprintf(out, "%*s", (int)label_w, "");
        for (size_t b = 0; b < nblocks; b++) /* the last title unpadded */
            fprintf(out, "%s  %-*s", b ? " |" : "", b + 1 < nblocks ? (int)(cols * (w[b] + 2) - 2) : 0,
                    titles[b] ? titles[b] : "");
        fprintf(out, "\n");
    }
    for (size_t line = 0; line <= rows; line++) {
        fprintf(out, "%*s", (int)label_w, text(&t, 0, line, SIZE_MAX, buf));
        for (size_t b = 0; b < nblocks; b++) {
            if (b)
                fprintf(out, " |");
            for (size_t c = 0; c < cols; c++)
                fprintf(out, "  %*s", (int)w[b], text(&t, b, line, c, buf));
        }
        fprintf(out, "\n");
    }
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

static void grid_table(FILE *out, LbFormat fmt, const LbGrid *g, const char *const titles[3], const char *const *units)
{
    const GridText t = {g, units}; /* energy where the device had a counter (METHOD.md, "Energy") */
    lb_table_print_fn(out, fmt, lb_model_has_k(g->model) ? "n \\ k" : "n", g->rows, g->cols, titles,
                             lb_grid_has_energy(g) ? 3 : 2, grid_text, &t);
}

int lb_grid_print_table(FILE *out, LbFormat fmt, const LbGrid *g, const char *const titles[3], const char *const *units)
{
    grid_table(out, fmt, g, titles, units);
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
    grid_table(out, fmt, g, titles[fmt == LB_FORMAT_MD], NULL);
    if (fmt == LB_FORMAT_TEXT)
        fprintf(out, "time saved = ms per sequence, standard / Linformer; memory saved = largest batch, Linformer / standard%s\n",
                lb_grid_has_energy(g) ? "; energy saved = joules per sequence, standard / Linformer" : "");
    lb_table_print_legend(out, fmt, lb_grid_dash_meaning(lb_grid_dash_below_n(g)), "not measured");
}

void lb_table_print_legend(FILE *out, LbFormat fmt, const char *dash, const char *na)
{
    if (fmt == LB_FORMAT_MD)
        fprintf(out, "`-`: %s; `OOM`: out of memory at batch 1; `ERR`: the cell failed; `NA`: %s.\n", dash, na);
    else
        fprintf(out, "- : %s   OOM: out of memory at batch 1   ERR: the cell failed   NA: %s\n", dash, na);
}
