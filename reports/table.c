/* Text and Markdown tables (see table.h). */
#include "reports/table.h"

#include <stdlib.h>
#include <string.h>

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

void lb_table_print(FILE *out, LbFormat fmt, const char *corner, size_t rows,
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
