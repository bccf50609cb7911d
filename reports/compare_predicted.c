/* A sweep against its prediction (see compare_predicted.h). */
#define _POSIX_C_SOURCE 200809L

#include "reports/compare_predicted.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn/status.h"
#include "reports/breakdown.h"
#include "reports/compare.h"
#include "reports/csv_io.h"
#include "reports/settings.h"

static int same_cell(const LbCellResult *a, LbModelKind model, int64_t n, int64_t k)
{
    return a->model == model && a->n == n && (!lb_model_has_k(model) || a->k == k);
}

static const LbCellResult *find_row(const LbSweepDir *s, LbModelKind model, int64_t n, int64_t k)
{
    for (size_t i = 0; i < s->count; i++)
        if (same_cell(&s->rows[i], model, n, k) && s->rows[i].status != LB_CELL_ERROR)
            return &s->rows[i];
    for (size_t i = 0; i < s->count; i++) /* a failed cell, if that is all there is */
        if (same_cell(&s->rows[i], model, n, k))
            return &s->rows[i];
    return NULL;
}

/* A row's word where it has no number: OOM, ERR; NA for no row. */
static const char *missing(const LbCellResult *r)
{
    return !r ? "NA" : r->status == LB_CELL_OOM ? "OOM" : r->status == LB_CELL_ERROR ? "ERR" : NULL;
}

static void cell_label(LbModelKind model, int64_t n, int64_t k, char *buf, size_t size)
{
    if (lb_model_has_k(model))
        snprintf(buf, size, "%s %lld/%lld", lb_model_name(model), (long long)n, (long long)k);
    else
        snprintf(buf, size, "%s %lld", lb_model_name(model), (long long)n);
}

/* The cells to show: the prediction's, then those only the sweep has. */
typedef struct Cell {
    LbModelKind model;
    int64_t n, k;
} Cell;

static int list_cells(const LbSweepDir *m, const LbSweepDir *p, Cell **out, size_t *count)
{
    Cell *c = malloc((m->count + p->count + 1) * sizeof *c);
    if (!c)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory comparing a sweep with its prediction");
    size_t n = 0;
    const LbSweepDir *src[2] = {p, m};
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < src[s]->count; i++) {
            const LbCellResult *r = &src[s]->rows[i];
            int seen = 0;
            for (size_t j = 0; j < n && !seen; j++)
                seen = c[j].model == r->model && c[j].n == r->n && (!lb_model_has_k(r->model) || c[j].k == r->k);
            if (!seen)
                c[n++] = (Cell){r->model, r->n, lb_model_has_k(r->model) ? r->k : 0};
        }
    *out = c;
    *count = n;
    return LB_OK;
}

static void number(char *buf, size_t size, double v, const char *fmt)
{
    if (isfinite(v))
        snprintf(buf, size, fmt, v);
    else
        snprintf(buf, size, "NA");
}

/* The pass's table: a row per cell, two blocks (batch, ms per sequence) of measured, predicted and
 * measured / predicted. */
static int print_cells(FILE *out, LbFormat fmt, const LbSweepDir *m, const LbSweepDir *p, const Cell *cells,
                       size_t count)
{
    /* count row labels, then count x 3 batch cells, then count x 3 time cells */
    const size_t total = count * 7;
    char(*text)[24] = malloc((total + 1) * sizeof *text);
    const char **ptr = malloc((total + 1) * sizeof *ptr);
    if (!text || !ptr) {
        free(text);
        free(ptr);
        return LB_FAIL(LB_ERR_NOMEM, "out of memory comparing a sweep with its prediction");
    }
    for (size_t i = 0; i < total; i++)
        ptr[i] = text[i];
    char(*btext)[24] = text + count, (*ttext)[24] = text + 4 * count;
    for (size_t i = 0; i < count; i++) {
        cell_label(cells[i].model, cells[i].n, cells[i].k, text[i], sizeof text[i]);
        const LbCellResult *a = find_row(m, cells[i].model, cells[i].n, cells[i].k);
        const LbCellResult *b = find_row(p, cells[i].model, cells[i].n, cells[i].k);
        const char *ma = missing(a), *mb = missing(b);
        char *bm = btext[i * 3], *bp = btext[i * 3 + 1], *br = btext[i * 3 + 2];
        char *tm = ttext[i * 3], *tp = ttext[i * 3 + 1], *tr = ttext[i * 3 + 2];
        const size_t z = sizeof text[0];
        snprintf(bm, z, "NA");
        snprintf(bp, z, "NA");
        if (a)
            snprintf(bm, z, "%lld", (long long)a->batch);
        if (b)
            snprintf(bp, z, "%lld", (long long)b->batch);
        if (a && b && b->batch > 0)
            number(br, z, (double)a->batch / (double)b->batch, "%.3g");
        else
            snprintf(br, z, "%s", ma ? ma : mb ? mb : "NA");
        snprintf(tm, z, "%s", ma ? ma : "");
        if (!ma)
            number(tm, z, a->ms_per_seq, "%.4g");
        snprintf(tp, z, "%s", mb ? mb : "");
        if (!mb)
            number(tp, z, b->ms_per_seq, "%.4g");
        if (!ma && !mb && b->ms_per_seq > 0)
            number(tr, z, a->ms_per_seq / b->ms_per_seq, "%.3g");
        else
            snprintf(tr, z, "%s", ma ? ma : mb ? mb : "NA");
    }
    static const char *const cols[3] = {"measured", "predicted", "ratio"};
    const LbTableBlock blocks[2] = {{"largest batch", 3, cols, ptr + count}, {"ms per sequence", 3, cols, ptr + 4 * count}};
    lb_table_print(out, fmt, "cell", count, ptr, blocks, 2);
    free(text);
    free(ptr);
    return LB_OK;
}

static const LbBreakdownRecord *find_op(const LbBreakdownRecord *r, size_t count, const Cell *c, const char *op)
{
    for (size_t i = 0; i < count; i++)
        if (r[i].model == c->model && r[i].n == c->n && (!lb_model_has_k(c->model) || r[i].k == c->k) &&
            strcmp(r[i].op, op) == 0)
            return &r[i];
    return NULL;
}

/* measured / predicted ms per sequence of one op of one cell; NaN where either side lacks it */
static double op_ratio(const LbBreakdownRecord *a, const LbBreakdownRecord *b)
{
    if (!a || !b || a->batch <= 0 || b->batch <= 0 || !(b->ms > 0))
        return NAN;
    return (a->ms / (double)a->batch) / (b->ms / (double)b->batch);
}

/* Per model: each op's measured / predicted ms per sequence, one column per cell both hold. */
static int print_ops(FILE *out, LbFormat fmt, const LbBreakdownRecord *ma, size_t na, const LbBreakdownRecord *pa,
                     size_t np, const Cell *cells, size_t count)
{
    const int md = fmt == LB_FORMAT_MD;
    int any = 0;
    for (int m = 0; m < LB_MODEL_COUNT; m++) {
        Cell *cols = malloc((count + 1) * sizeof *cols);
        if (!cols)
            return LB_FAIL(LB_ERR_NOMEM, "out of memory comparing a sweep with its prediction");
        size_t ncols = 0;
        for (size_t i = 0; i < count; i++)
            if (cells[i].model == (LbModelKind)m && find_op(ma, na, &cells[i], "pass") && find_op(pa, np, &cells[i], "pass"))
                cols[ncols++] = cells[i];
        if (ncols == 0) {
            free(cols);
            continue;
        }
        if (!any)
            fprintf(out, md ? "\n## Per operation (breakdown.csv): measured / predicted ms per sequence\n"
                            : "\nPer operation (breakdown.csv): measured / predicted ms per sequence; far above the pass's\nratio: that operation runs far from its roofline on this card\n");
        any = 1;
        fprintf(out, md ? "\n### %s\n\n| op |" : "\n%s\n  %-12s", lb_model_name((LbModelKind)m),
                lb_model_has_k((LbModelKind)m) ? "n/k" : "n");
        for (size_t c = 0; c < ncols; c++) {
            char label[48];
            if (lb_model_has_k((LbModelKind)m))
                snprintf(label, sizeof label, "%lld/%lld", (long long)cols[c].n, (long long)cols[c].k);
            else
                snprintf(label, sizeof label, "%lld", (long long)cols[c].n);
            fprintf(out, md ? " %s |" : " %10s", label);
        }
        fputc('\n', out);
        if (md) {
            fputs("|---|", out);
            for (size_t c = 0; c < ncols; c++)
                fputs("---:|", out);
            fputc('\n', out);
        }
        /* the ops in the role order the measured file holds them, then pass */
        for (int r = 0; r <= LB_ROLE_COUNT; r++) {
            const char *op = r < LB_ROLE_COUNT ? lb_op_role_name((LbOpRole)r) : "pass";
            int present = 0;
            for (size_t c = 0; c < ncols && !present; c++)
                present = find_op(ma, na, &cols[c], op) || find_op(pa, np, &cols[c], op);
            if (!present)
                continue;
            fprintf(out, md ? "| %s |" : "  %-12s", op);
            for (size_t c = 0; c < ncols; c++) {
                const double v = op_ratio(find_op(ma, na, &cols[c], op), find_op(pa, np, &cols[c], op));
                if (isnan(v))
                    fprintf(out, md ? " - |" : " %10s", "-");
                else
                    fprintf(out, md ? " %.3g |" : " %10.3g", v);
            }
            fputc('\n', out);
        }
        free(cols);
    }
    return LB_OK;
}

static void csv_num(char *buf, size_t size, double v)
{
    if (isfinite(v))
        lb_csv_format_double(v, buf, size);
    else
        buf[0] = '\0';
}

static int print_csv(FILE *out, const LbSweepDir *m, const LbSweepDir *p, const Cell *cells, size_t count,
                     const LbBreakdownRecord *ma, size_t na, const LbBreakdownRecord *pa, size_t np)
{
    static const char *const head[10] = {"model", "n", "k", "op", "measured_batch", "predicted_batch",
                                         "batch_ratio", "measured_ms_per_seq", "predicted_ms_per_seq", "time_ratio"};
    LB_TRY(lb_csv_write_record(out, head, 10));
    for (size_t i = 0; i < count; i++) {
        char f[10][40];
        const char *row[10];
        for (int x = 0; x < 10; x++) {
            f[x][0] = '\0';
            row[x] = f[x];
        }
        snprintf(f[0], sizeof f[0], "%s", lb_model_name(cells[i].model));
        snprintf(f[1], sizeof f[1], "%lld", (long long)cells[i].n);
        if (lb_model_has_k(cells[i].model))
            snprintf(f[2], sizeof f[2], "%lld", (long long)cells[i].k);
        snprintf(f[3], sizeof f[3], "pass");
        const LbCellResult *a = find_row(m, cells[i].model, cells[i].n, cells[i].k);
        const LbCellResult *b = find_row(p, cells[i].model, cells[i].n, cells[i].k);
        if (a)
            snprintf(f[4], sizeof f[4], "%lld", (long long)a->batch);
        if (b)
            snprintf(f[5], sizeof f[5], "%lld", (long long)b->batch);
        if (a && b && b->batch > 0)
            csv_num(f[6], sizeof f[6], (double)a->batch / (double)b->batch);
        const int ok_a = a && a->status == LB_CELL_OK, ok_b = b && b->status == LB_CELL_OK;
        if (ok_a)
            csv_num(f[7], sizeof f[7], a->ms_per_seq);
        if (ok_b)
            csv_num(f[8], sizeof f[8], b->ms_per_seq);
        if (ok_a && ok_b && b->ms_per_seq > 0)
            csv_num(f[9], sizeof f[9], a->ms_per_seq / b->ms_per_seq);
        LB_TRY(lb_csv_write_record(out, row, 10));
        for (int r = 0; r < LB_ROLE_COUNT; r++) {
            const char *op = lb_op_role_name((LbOpRole)r);
            const LbBreakdownRecord *x = find_op(ma, na, &cells[i], op), *y = find_op(pa, np, &cells[i], op);
            if (!x && !y)
                continue;
            for (int c = 3; c < 10; c++)
                f[c][0] = '\0';
            snprintf(f[3], sizeof f[3], "%s", op);
            if (x)
                snprintf(f[4], sizeof f[4], "%lld", (long long)x->batch);
            if (y)
                snprintf(f[5], sizeof f[5], "%lld", (long long)y->batch);
            if (x && y && y->batch > 0)
                csv_num(f[6], sizeof f[6], (double)x->batch / (double)y->batch);
            if (x && x->batch > 0)
                csv_num(f[7], sizeof f[7], x->ms / (double)x->batch);
            if (y && y->batch > 0)
                csv_num(f[8], sizeof f[8], y->ms / (double)y->batch);
            csv_num(f[9], sizeof f[9], op_ratio(x, y));
            LB_TRY(lb_csv_write_record(out, row, 10));
        }
    }
    return LB_OK;
}

int lb_compare_predicted_check(const LbSweepDir *measured, const LbSweepDir *predicted)
{
    static const LbSettingId work[] = {LB_SET_LAYERS,  LB_SET_DMODEL, LB_SET_HEADS, LB_SET_FFN,
                                       LB_SET_VOCAB,   LB_SET_DTYPE,  LB_SET_TF32,  LB_SET_SHARING,
                                       LB_SET_ORDER,   LB_SET_CHUNK,  LB_SET_K_SCHEDULE};
    const int i = lb_settings_first_difference(&measured->meta, &predicted->meta, work, sizeof work / sizeof work[0]);
    if (i < 0)
        return LB_OK;
    const char *a = lb_settings_meta_value(&measured->meta, work[i]);
    const char *b = lb_settings_meta_value(&predicted->meta, work[i]);
    return LB_FAIL(LB_ERR_FORMAT,
                   "not the same work: %s ran %s %s and %s predicted %s %s: compare needs the prediction of the "
                   "sweep's own model (linbench predict with the sweep's flags)",
                   measured->dir, lb_settings[work[i]].key, a ? a : "", predicted->dir, lb_settings[work[i]].key,
                   b ? b : "");
}

int lb_compare_predicted(FILE *out, const LbSweepDir *measured, const LbSweepDir *predicted, LbFormat fmt)
{
    Cell *cells = NULL;
    size_t count = 0, na = 0, np = 0;
    LbBreakdownRecord *ma = NULL, *pa = NULL;
    int rc = list_cells(measured, predicted, &cells, &count);
    if (rc == LB_OK)
        rc = lb_breakdown_read_if_any(measured->dir, &ma, &na);
    if (rc == LB_OK)
        rc = lb_breakdown_read_if_any(predicted->dir, &pa, &np);
    if (rc != LB_OK)
        goto out;
    if (fmt == LB_FORMAT_CSV) {
        rc = print_csv(out, measured, predicted, cells, count, ma, na, pa, np);
        goto out;
    }
    const char *item = fmt == LB_FORMAT_MD ? "- " : "  ";
    fprintf(out, fmt == LB_FORMAT_MD ? "## linbench compare: a sweep against its prediction\n\n"
                                     : "linbench compare: a sweep against its prediction\n");
    fprintf(out, "%smeasured:  %s: ", item, measured->dir);
    lb_compare_describe(out, measured);
    fprintf(out, "\n%spredicted: %s: ", item, predicted->dir);
    lb_compare_describe(out, predicted);
    char devices[512];
    if (lb_compare_devices_differ(measured, predicted, devices, sizeof devices))
        fprintf(out, "\n%sdevices differ: %s: measured / predicted compares the devices as well as the model", item,
                devices);
    fprintf(out, "\n%sroofline:  %s x %s of the rate, %s GB/s x %s, %s us per kernel\n\n", item,
            lb_sweep_meta(predicted, "predict_product_tflop_per_s", "?"),
            lb_sweep_meta(predicted, "predict_product_efficiency", "?"),
            lb_sweep_meta(predicted, "predict_bandwidth_gb_per_s", "?"),
            lb_sweep_meta(predicted, "predict_copy_efficiency", "?"), lb_sweep_meta(predicted, "predict_launch_us", "?"));
    rc = print_cells(out, fmt, measured, predicted, cells, count);
    if (rc == LB_OK)
        fprintf(out, fmt == LB_FORMAT_MD ? "\nratio: measured / predicted; a time ratio above 1 is slower than the roofline says. `OOM`: out of memory at batch 1; `NA`: not in that directory.\n"
                                         : "ratio: measured / predicted; a time ratio above 1 is slower than the roofline says\nOOM: out of memory at batch 1   ERR: the cell failed   NA: not in that directory\n");
    if (rc == LB_OK && na > 0 && np > 0)
        rc = print_ops(out, fmt, ma, na, pa, np, cells, count);
out:
    free(cells);
    free(ma);
    free(pa);
    return rc;
}
