/* breakdown.csv (reports/breakdown_csv.h) in `linbench compare` (per model, each operation's share
 * of the pass by cell, with its batch and ms) and `linbench plot` (per model, breakdown_MODEL: a
 * stacked bar per cell, a segment per operation); nothing where the directory has none. */
#include "reports/compare.h"
#include "reports/plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn/base/status.h"
#include "reports/breakdown_csv.h"
#include "reports/csv_io.h"

/* --- one model's cells and ops ------------------------------------------------------------------ */

/* A cell's column: its (n, k), batch and the pass's ms. */
typedef struct Col {
    int64_t n, k, batch;
    double pass_ms;
} Col;

/* The ops in breakdown.csv's row order: the roles (attn/measure/breakdown.h) then overhead. */
#define OPS_MAX (LB_ROLE_COUNT + 1)

typedef struct ModelTable {
    LbModelKind model;
    int train; /* a training step's breakdown */
    size_t ncols;
    Col *cols;
    LbCellLabel *label;
    int nops;
    const char *op[OPS_MAX + 2]; /* then compare's two rows: batch and the pass's ms */
    double *v;                   /* [op * ncols + col] share; NaN where the cell has no row of that op */
} ModelTable;

static int col_cmp(const void *a, const void *b)
{
    const Col *x = a, *y = b;
    if (x->n != y->n)
        return x->n < y->n ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

static void table_free(ModelTable *t)
{
    free(t->cols);
    free(t->label);
    free(t->v);
    memset(t, 0, sizeof *t);
}

/* The model's table from the records: one column per cell (n ascending, then k), one row per op
 * any of its cells has, then batch and the pass's ms. LB_OK (ncols 0 when the model has no rows)
 * or LB_ERR_NOMEM. */
static int table_build(const LbBreakdownRecord *recs, size_t count, LbModelKind model, int train, ModelTable *t)
{
    memset(t, 0, sizeof *t);
    t->model = model;
    t->train = train;
    int present[OPS_MAX] = {0};
    t->cols = malloc((count + 1) * sizeof *t->cols);
    t->label = malloc((count + 1) * sizeof *t->label);
    t->v = malloc((OPS_MAX + 2) * (count + 1) * sizeof *t->v);
    if (!t->cols || !t->label || !t->v) {
        table_free(t);
        return LB_FAIL(LB_ERR_NOMEM, "out of memory reading the breakdown");
    }
    for (size_t i = 0; i < count; i++) {
        const LbBreakdownRecord *r = &recs[i];
        LbOpRole role;
        if (r->model != model)
            continue;
        if (strcmp(r->op, "overhead") == 0)
            present[LB_ROLE_COUNT] = 1;
        else if (lb_op_role_parse(r->op, &role) == 0)
            present[role] = 1;
        if (strcmp(r->op, "pass") == 0)
            t->cols[t->ncols++] = (Col){r->n, r->k, r->batch, r->ms};
    }
    qsort(t->cols, t->ncols, sizeof *t->cols, col_cmp);
    for (int r = 0; r < OPS_MAX; r++)
        if (present[r])
            t->op[t->nops++] = r < LB_ROLE_COUNT ? lb_op_role_name((LbOpRole)r) : "overhead";
    t->op[t->nops] = "batch";
    t->op[t->nops + 1] = train ? "step, ms" : "pass, ms";
    for (size_t c = 0; c < t->ncols; c++) {
        lb_cell_label(model, t->cols[c].n, t->cols[c].k, t->label[c]);
        for (int o = 0; o < t->nops; o++)
            t->v[(size_t)o * t->ncols + c] = NAN;
        t->v[(size_t)t->nops * t->ncols + c] = (double)t->cols[c].batch;
        t->v[((size_t)t->nops + 1) * t->ncols + c] = t->cols[c].pass_ms;
    }
    for (size_t i = 0; i < count; i++)
        for (int o = 0; o < t->nops && recs[i].model == model; o++)
            for (size_t c = 0; c < t->ncols && strcmp(t->op[o], recs[i].op) == 0; c++)
                if (t->cols[c].n == recs[i].n && t->cols[c].k == recs[i].k)
                    t->v[(size_t)o * t->ncols + c] = recs[i].share;
    return LB_OK;
}

/* --- compare ------------------------------------------------------------------------------------ */

int lb_breakdown_compare(FILE *out, const LbSweepDir *s, LbFormat fmt)
{
    if (fmt == LB_FORMAT_CSV)
        return LB_OK; /* the CSV output is the comparison's grid alone; breakdown.csv is CSV already */
    LbBreakdownRecord *recs;
    size_t count;
    LB_TRY(lb_breakdown_read(s->dir, 1, &recs, &count));
    if (count == 0)
        return LB_OK;
    fprintf(out, fmt == LB_FORMAT_MD ? "\n## Where the time goes (breakdown.csv)\n\nEach operation's share of the %s, %%; columns are n (n/k for a model with a k axis).\n"
                                     : "\nWhere the time goes (breakdown.csv): each operation's share of the %s, %%\n",
            lb_sweep_is_train(s) ? "training step" : "pass");
    int rc = LB_OK;
    for (int m = 0; m < LB_MODEL_COUNT && rc == LB_OK; m++) {
        ModelTable t;
        if ((rc = table_build(recs, count, (LbModelKind)m, lb_sweep_is_train(s), &t)) == LB_OK && t.ncols > 0) {
            const char *fmts[OPS_MAX + 2];
            for (int o = 0; o < t.nops; o++) {
                fmts[o] = "%.1f";
                for (size_t c = 0; c < t.ncols; c++)
                    t.v[(size_t)o * t.ncols + c] *= 100;
            }
            fmts[t.nops] = "%.0f";
            fmts[t.nops + 1] = "%.4g";
            lb_table_print_numbers(out, fmt, t.model, t.ncols, t.label, (size_t)t.nops + 2, t.op, t.v, fmts);
        }
        table_free(&t);
    }
    free(recs);
    return rc;
}

/* --- plot --------------------------------------------------------------------------------------- */

/* One cell per row: its label, then each op's share (0 where the cell has none). */
static int write_data(FILE *f, const void *arg)
{
    const ModelTable *t = arg;
    const char *head[OPS_MAX + 1];
    head[0] = lb_model_has_k(t->model) ? "n/k" : "n";
    for (int o = 0; o < t->nops; o++)
        head[o + 1] = t->op[o];
    LB_TRY(lb_csv_write_record(f, head, (size_t)t->nops + 1));
    char fields[OPS_MAX][40];
    const char *row[OPS_MAX + 1];
    for (size_t c = 0; c < t->ncols; c++) {
        row[0] = t->label[c];
        for (int o = 0; o < t->nops; o++) {
            const double v = t->v[(size_t)o * t->ncols + c];
            snprintf(fields[o], sizeof fields[0], "%.17g", isnan(v) ? 0.0 : v);
            row[o + 1] = fields[o];
        }
        LB_TRY(lb_csv_write_record(f, row, (size_t)t->nops + 1));
    }
    return LB_OK;
}

/* The stacked bars: a bar per cell, a segment per op, in the data's column order. */
static int write_script(FILE *f, const void *arg)
{
    const ModelTable *t = arg;
    /* one colour per op: gnuplot's own cycle repeats after 8 */
    static const char *const colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                                          "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#e7ba52",
                                          "#637939", "#843c39", "#7b4173", "#a55194", "#000000"};
    for (size_t i = 0; i < sizeof colours / sizeof colours[0]; i++)
        fprintf(f, "set linetype %zu lc rgb '%s'\n", i + 1, colours[i]);
    fprintf(f,
            "set style data histograms\n"
            "set style histogram rowstacked\n"
            "set style fill solid 0.85 border -1\n"
            "set boxwidth 0.75\n"
            "set key outside right top reverse Left noenhanced\n"
            "set yrange [0:1.05]\n"
            "set ylabel 'share of the %s'\n"
            "set xlabel '%s'\n"
            "set grid ytics\n"
            "plot for [i=2:%d] data using i:xtic(1) title columnheader(i) lt (i-1)\n",
            t->train ? "training step" : "pass", lb_model_has_k(t->model) ? "n/k" : "n", t->nops + 1);
    return LB_OK;
}

int lb_breakdown_plot_write(const LbSweepDir *s, const char *out_dir, LbPlotList *out)
{
    LbBreakdownRecord *recs;
    size_t count;
    LB_TRY(lb_breakdown_read(s->dir, 1, &recs, &count));
    int rc = LB_OK;
    for (int m = 0; m < LB_MODEL_COUNT && count && rc == LB_OK; m++) {
        ModelTable t;
        if ((rc = table_build(recs, count, (LbModelKind)m, lb_sweep_is_train(s), &t)) == LB_OK && t.ncols > 0) {
            const char *model = lb_model_name(t.model);
            char name[64], what[160], title[160];
            snprintf(name, sizeof name, "breakdown_%s", model);
            const int train = lb_sweep_is_train(s);
            snprintf(what, sizeof what, "where %s's %s spends its time, from breakdown.csv", model,
                     train ? "training step" : "forward pass");
            snprintf(title, sizeof title, "%sWhere the time goes: %s, each operation's share of the %s",
                     train ? "Training step: " : "", model, train ? "step" : "pass");
            const LbFigure fig = {name, what, title, lb_sweep_meta(s, "device_name", "?"), write_data, write_script, &t};
            rc = lb_plot_figure(out_dir, &fig, out);
        }
        table_free(&t);
    }
    free(recs);
    return rc;
}
