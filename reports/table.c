/* Text and Markdown tables (see table.h). */
#include "reports/table.h"

#include <stdlib.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "attn/base/status.h"
#include "reports/grid.h"

/* One block: rows x cols strings sharing the row labels with the blocks beside it. */
typedef struct LbTableBlock {
    const char *title;
    size_t cols;
    const char *const *col_labels; /* cols */
    const char *const *cells;      /* rows * cols, row-major; a NULL cell prints empty */
} LbTableBlock;

int lb_format_parse(const char *s, LbFormat *out)
{
    if (strcmp(s, "text") == 0)
        *out = LB_FORMAT_TEXT;
    else if (strcmp(s, "md") == 0)
        *out = LB_FORMAT_MD;
    else if (strcmp(s, "csv") == 0)
        *out = LB_FORMAT_CSV;
    else
        return -1;
    return 0;
}

static const char *cell(const LbTableBlock *b, size_t r, size_t c)
{
    const char *s = b->cells[r * b->cols + c];
    return s ? s : "";
}

static size_t max_len(size_t a, const char *s)
{
    size_t l = strlen(s);
    return l > a ? l : a;
}

static void print_md(FILE *out, const char *corner, size_t rows, const char *const *row_labels,
                     const LbTableBlock *b)
{
    if (b->title && b->title[0])
        fprintf(out, "**%s**\n\n", b->title);
    fprintf(out, "| %s |", corner);
    for (size_t c = 0; c < b->cols; c++)
        fprintf(out, " %s |", b->col_labels[c]);
    fprintf(out, "\n|---:|");
    for (size_t c = 0; c < b->cols; c++)
        fprintf(out, "---:|");
    fprintf(out, "\n");
    for (size_t r = 0; r < rows; r++) {
        fprintf(out, "| %s |", row_labels[r]);
        for (size_t c = 0; c < b->cols; c++)
            fprintf(out, " %s |", cell(b, r, c));
        fprintf(out, "\n");
    }
    fprintf(out, "\n");
}

static void table_print(FILE *out, LbFormat fmt, const char *corner, size_t rows,
                    const char *const *row_labels, const LbTableBlock *blocks, size_t nblocks)
{
    if (fmt == LB_FORMAT_MD) {
        for (size_t i = 0; i < nblocks; i++)
            print_md(out, corner, rows, row_labels, &blocks[i]);
        return;
    }
    /* Text: one width for all the cells of a block, so its columns line up. */
    size_t label_w = strlen(corner);
    for (size_t r = 0; r < rows; r++)
        label_w = max_len(label_w, row_labels[r]);
    size_t *w = calloc(nblocks ? nblocks : 1, sizeof *w);
    size_t *block_w = calloc(nblocks ? nblocks : 1, sizeof *block_w);
    if (!w || !block_w) {
        free(w);
        free(block_w);
        return;
    }
    for (size_t i = 0; i < nblocks; i++) {
        const LbTableBlock *b = &blocks[i];
        for (size_t c = 0; c < b->cols; c++) {
            w[i] = max_len(w[i], b->col_labels[c]);
            for (size_t r = 0; r < rows; r++)
                w[i] = max_len(w[i], cell(b, r, c));
        }
        block_w[i] = b->cols * (w[i] + 2);
        /* A title wider than its columns widens them. */
        size_t tw = b->title ? strlen(b->title) + 2 : 0;
        while (b->cols > 0 && block_w[i] < tw) {
            w[i]++;
            block_w[i] = b->cols * (w[i] + 2);
        }
    }
    int any_title = 0;
    for (size_t i = 0; i < nblocks; i++)
        any_title |= blocks[i].title && blocks[i].title[0];
    if (any_title) {
        fprintf(out, "%*s", (int)label_w, "");
        for (size_t i = 0; i < nblocks; i++) {
            const char *t = blocks[i].title ? blocks[i].title : "";
            if (i + 1 < nblocks)
                fprintf(out, "%s  %-*s", i ? " |" : "", (int)(block_w[i] - 2), t);
            else
                fprintf(out, "%s  %s", i ? " |" : "", t);
        }
        fprintf(out, "\n");
    }
    fprintf(out, "%*s", (int)label_w, corner);
    for (size_t i = 0; i < nblocks; i++) {
        if (i)
            fprintf(out, " |");
        for (size_t c = 0; c < blocks[i].cols; c++)
            fprintf(out, "  %*s", (int)w[i], blocks[i].col_labels[c]);
    }
    fprintf(out, "\n");
    for (size_t r = 0; r < rows; r++) {
        fprintf(out, "%*s", (int)label_w, row_labels[r]);
        for (size_t i = 0; i < nblocks; i++) {
            if (i)
                fprintf(out, " |");
            for (size_t c = 0; c < blocks[i].cols; c++)
                fprintf(out, "  %*s", (int)w[i], cell(&blocks[i], r, c));
        }
        fprintf(out, "\n");
    }
    free(w);
    free(block_w);
}

int lb_table_print_fn(FILE *out, LbFormat fmt, const char *corner, size_t rows, size_t cols,
                      const char *const *titles, size_t nblocks, LbTableText fn, const void *ctx)
{
    /* per block: cols labels, then rows * cols cells; then the row labels */
    const size_t per = cols + rows * cols, count = nblocks * per + rows;
    char(*text)[40] = malloc((count ? count : 1) * sizeof *text);
    const char **ptr = malloc((count ? count : 1) * sizeof *ptr);
    LbTableBlock *blocks = malloc((nblocks ? nblocks : 1) * sizeof *blocks);
    if (!text || !ptr || !blocks) {
        free(text);
        free(ptr);
        free(blocks);
        return LB_FAIL(LB_ERR_NOMEM, "out of memory printing a table");
    }
    for (size_t i = 0; i < count; i++)
        ptr[i] = text[i];
    for (size_t b = 0; b < nblocks; b++) {
        for (size_t c = 0; c < cols; c++)
            fn(ctx, b, SIZE_MAX, c, text[b * per + c], sizeof text[0]);
        for (size_t r = 0; r < rows; r++)
            for (size_t c = 0; c < cols; c++)
                fn(ctx, b, r, c, text[b * per + cols + r * cols + c], sizeof text[0]);
        blocks[b] = (LbTableBlock){titles[b], cols, ptr + b * per, ptr + b * per + cols};
    }
    for (size_t r = 0; r < rows; r++)
        fn(ctx, 0, r, SIZE_MAX, text[nblocks * per + r], sizeof text[0]);
    table_print(out, fmt, corner, rows, ptr + nblocks * per, blocks, nblocks);
    free(text);
    free(ptr);
    free(blocks);
    return LB_OK;
}

void lb_table_print_numbers(FILE *out, LbFormat fmt, const char *heading, const char *corner, size_t cols,
                            const char *const *col_labels, size_t rows, const char *const *row_labels,
                            const double *v, const char *const *fmts)
{
    const int md = fmt == LB_FORMAT_MD;
    fprintf(out, md ? "\n### %s\n\n| op |" : "\n%s\n  %-12s", heading, corner);
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

int lb_grid_print_table(FILE *out, LbFormat fmt, const LbGrid *g, const char *const titles[3], const char *const *units)
{
    const GridText t = {g, units};
    LB_TRY(lb_table_print_fn(out, fmt, lb_model_has_k(g->model) ? "n \\ k" : "n", g->rows, g->cols, titles,
                             lb_grid_has_energy(g) ? 3 : 2, grid_text, &t));
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
    const GridText t = {g, NULL};
    const int energy = lb_grid_has_energy(g); /* where the device had a counter (METHOD.md, "Energy") */
    if (lb_table_print_fn(out, fmt, "n \\ k", g->rows, g->cols, titles[fmt == LB_FORMAT_MD], energy ? 3 : 2,
                          grid_text, &t) != LB_OK)
        return;
    const char *dash = lb_grid_dash_meaning(lb_grid_dash_below_n(g));
    if (fmt == LB_FORMAT_TEXT)
        fprintf(out,
                "time saved = ms per sequence, standard / Linformer; memory saved = largest batch, Linformer / standard%s\n"
                "- : %s   OOM: out of memory at batch 1   ERR: the cell failed   NA: not measured\n",
                energy ? "; energy saved = joules per sequence, standard / Linformer" : "", dash);
    else
        fprintf(out, "`-`: %s; `OOM`: out of memory at batch 1; `ERR`: the cell failed; `NA`: not measured.\n", dash);
}
