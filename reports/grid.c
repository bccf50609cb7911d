/* Table 3's grids and any pair's from raw rows, and a cell as text (see grid.h). */
#include "reports/grid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn/base/lists.h"
#include "attn/base/status.h"
#include "reports/csv_io.h"
#include "reports/settings.h"

int lb_grid_alloc_pair(LbGrid *g, LbModelKind model, LbModelKind baseline, const int64_t *n,
                       size_t nn, const int64_t *k, size_t nk)
{
    static const int64_t no_k = 0;
    if (!lb_model_has_k(model)) {
        k = &no_k;
        nk = 1;
    }
    memset(g, 0, sizeof *g);
    g->rows = nn;
    g->cols = nk;
    g->model = model;
    g->baseline = baseline;
    size_t cells = nn * nk;
    g->n = malloc((nn ? nn : 1) * sizeof *g->n);
    g->k = malloc((nk ? nk : 1) * sizeof *g->k);
    g->time = malloc((cells ? 3 * cells : 1) * sizeof *g->time); /* then memory, then energy */
    if (!g->n || !g->k || !g->time) {
        lb_grid_free(g);
        return LB_FAIL(LB_ERR_NOMEM, "out of memory for a %zu x %zu grid", nn, nk);
    }
    if (nn)
        memcpy(g->n, n, nn * sizeof *n);
    if (nk)
        memcpy(g->k, k, nk * sizeof *k);
    g->memory = g->time + cells;
    g->energy = g->memory + cells;
    for (size_t c = 0; c < 3 * cells; c++) {
        const size_t i = c % cells / nk, j = c % nk;
        g->time[c] = (LbGridCell){lb_model_cell_exists(model, n[i], k[j]) ? LB_GRID_MISSING : LB_GRID_EMPTY, 0.0};
    }
    return LB_OK;
}

void lb_grid_free(LbGrid *g)
{
    if (!g)
        return;
    free(g->n);
    free(g->k);
    free(g->time); /* memory and energy too */
    memset(g, 0, sizeof *g);
}

/* An error on either side beats an OOM, which beats a missing row: what the reader most needs
 * to know. */
void lb_grid_set_cell(LbGrid *g, size_t c, const LbCellResult *b, const LbCellResult *m)
{
    LbGridCellKind kind;
    if ((b && b->status == LB_CELL_ERROR) || (m && m->status == LB_CELL_ERROR))
        kind = LB_GRID_ERROR;
    else if ((b && b->status == LB_CELL_OOM) || (m && m->status == LB_CELL_OOM))
        kind = LB_GRID_OOM;
    else if (!b || !m)
        kind = LB_GRID_MISSING;
    else
        kind = LB_GRID_VALUE;
    g->time[c] = g->memory[c] = g->energy[c] = (LbGridCell){kind, 0.0};
    if (kind != LB_GRID_VALUE)
        return;
    /* An ok row with no time or no batch cannot give a ratio: show it as an error, not inf (nor
     * one that overflows to inf: the grid files would not read back); a side without an energy
     * counter (NaN, or a row from before the columns) was not measured. */
    if (b->ms_per_seq > 0 && m->ms_per_seq > 0 && isfinite(b->ms_per_seq / m->ms_per_seq))
        g->time[c].value = b->ms_per_seq / m->ms_per_seq;
    else
        g->time[c].kind = LB_GRID_ERROR;
    if (b->batch > 0 && m->batch > 0)
        g->memory[c].value = (double)m->batch / (double)b->batch;
    else
        g->memory[c].kind = LB_GRID_ERROR;
    if (g->time[c].kind == LB_GRID_ERROR)
        g->energy[c].kind = LB_GRID_ERROR;
    else if (b->energy_j_per_seq > 0 && m->energy_j_per_seq > 0 && isfinite(b->energy_j_per_seq / m->energy_j_per_seq))
        g->energy[c].value = b->energy_j_per_seq / m->energy_j_per_seq;
    else
        g->energy[c].kind = LB_GRID_MISSING;
}

/* The last row of model at (n, k) (k ignored where has_k is 0), or NULL: the last row of a cell wins. */
static const LbCellResult *last_row(const LbCellResult *rows, size_t count, LbModelKind m, int64_t n, int has_k,
                                    int64_t k)
{
    const LbCellResult *found = NULL;
    for (size_t i = 0; i < count; i++)
        if (rows[i].model == m && rows[i].n == n && (!has_k || rows[i].k == k))
            found = &rows[i];
    return found;
}

int lb_grid_pair_from_raw(const LbCellResult *rows, size_t count, LbModelKind model,
                          LbModelKind baseline, const int64_t *n, size_t nn, const int64_t *k,
                          size_t nk, LbGrid *g)
{
    memset(g, 0, sizeof *g);
    const int model_k = lb_model_has_k(model), base_k = lb_model_has_k(baseline);
    int64_t *own_n = malloc((count + 1) * sizeof *own_n), *own_k = malloc((count + 1) * sizeof *own_k);
    int rc = own_n && own_k ? LB_OK : LB_FAIL(LB_ERR_NOMEM, "out of memory building the grids");
    size_t cn = 0, ck = 0;
    for (size_t i = 0; rc == LB_OK && i < count; i++) { /* the lists not given: the rows' */
        if (rows[i].model == model || rows[i].model == baseline)
            own_n[cn++] = rows[i].n;
        if (rows[i].model == model && model_k)
            own_k[ck++] = rows[i].k;
    }
    if (rc == LB_OK && !n) {
        n = own_n;
        nn = lb_sort_unique_int64(own_n, cn);
    }
    if (rc == LB_OK && !k) {
        k = own_k;
        nk = lb_sort_unique_int64(own_k, ck);
    }
    if (rc == LB_OK)
        rc = lb_grid_alloc_pair(g, model, baseline, n, nn, k, nk);
    for (size_t c = 0; rc == LB_OK && c < g->rows * g->cols; c++) {
        if (g->time[c].kind == LB_GRID_EMPTY)
            continue;
        const int64_t cn_ = g->n[c / g->cols], ck_ = g->k[c % g->cols];
        const LbCellResult *m = last_row(rows, count, model, cn_, model_k, ck_);
        const LbCellResult *b = last_row(rows, count, baseline, cn_, base_k && model_k, ck_);
        lb_grid_set_cell(g, c, b, m);
    }
    free(own_n);
    free(own_k);
    return rc;
}

void lb_models_with_rows(const LbCellResult *rows, size_t count, int has[LB_MODEL_COUNT])
{
    for (int m = 0; m < LB_MODEL_COUNT; m++)
        has[m] = 0;
    for (size_t i = 0; i < count; i++)
        if ((unsigned)rows[i].model < LB_MODEL_COUNT)
            has[rows[i].model] = 1;
}

LbModelKind lb_table3_model(const LbCellResult *rows, size_t count)
{
    int has[LB_MODEL_COUNT];
    lb_models_with_rows(rows, count, has);
    if (has[LB_TABLE3_MODEL])
        return LB_TABLE3_MODEL;
    /* the general projections by --projection's names ("linformer-mean", ...), as the model table
     * knows them: the first with a row stands in */
    for (size_t p = 1; p < sizeof lb_projection_names / sizeof lb_projection_names[0]; p++) {
        char name[64];
        LbModelKind m;
        snprintf(name, sizeof name, "linformer-%s", lb_projection_names[p]);
        if (lb_model_parse(name, &m) == 0 && has[m])
            return m;
    }
    return LB_TABLE3_MODEL;
}

int lb_grid_from_raw(const LbCellResult *rows, size_t count, const int64_t *n, size_t nn,
                     const int64_t *k, size_t nk, LbGrid *g)
{
    return lb_grid_pair_from_raw(rows, count, lb_table3_model(rows, count), LB_TABLE3_BASELINE, n, nn, k, nk, g);
}

/* --- cells as text --- */

/* v with `digits` significant digits, trailing zeros kept ("2.00", "1.60") so a column of ratios
 * lines up by eye; from 10^(digits-1) up a whole number ("128", "1234"), never an exponent. */
static void lb_format_sig(double v, int digits, char *buf, size_t size)
{
    if (isfinite(v) && fabs(v) >= pow(10.0, digits - 1))
        snprintf(buf, size, "%.0f", v);
    else
        snprintf(buf, size, "%#.*g", digits, v);
}

/* What a cell that is no value shows, by kind: in a table, and in a CSV file (EMPTY differs). */
static const char *const kind_text[] = {[LB_GRID_EMPTY] = "-", [LB_GRID_MISSING] = "NA", [LB_GRID_OOM] = "OOM",
                                        [LB_GRID_ERROR] = "ERR"};

void lb_grid_cell_text(const LbGridCell *c, const char *suffix, char *buf, size_t size)
{
    if (c->kind != LB_GRID_VALUE) {
        snprintf(buf, size, "%s", kind_text[c->kind]);
        return;
    }
    char num[64];
    lb_format_sig(c->value, 3, num, sizeof num);
    snprintf(buf, size, "%s%s", num, suffix ? suffix : "");
}

void lb_grid_cell_csv(const LbGridCell *c, char *buf, size_t size)
{
    if (c->kind == LB_GRID_VALUE)
        snprintf(buf, size, "%.6g", c->value);
    else
        snprintf(buf, size, "%s", c->kind == LB_GRID_EMPTY ? "" : kind_text[c->kind]);
}

int lb_grid_cell_parse(const char *s, LbGridCell *c)
{
    *c = (LbGridCell){LB_GRID_VALUE, 0.0};
    if (s[0] == '\0') {
        c->kind = LB_GRID_EMPTY;
        return 0;
    }
    for (int k = LB_GRID_MISSING; k <= LB_GRID_ERROR; k++)
        if (k != LB_GRID_VALUE && strcmp(s, kind_text[k]) == 0) {
            c->kind = (LbGridCellKind)k;
            return 0;
        }
    return lb_csv_parse_double(s, &c->value) || !isfinite(c->value) ? -1 : 0;
}

int lb_grid_has_energy(const LbGrid *g)
{
    for (size_t c = 0; c < g->rows * g->cols; c++)
        if (g->energy[c].kind == LB_GRID_VALUE)
            return 1;
    return 0;
}

int lb_grid_dash_below_n(const LbGrid *g)
{
    for (size_t i = 0; i < g->rows; i++)
        for (size_t j = 0; j < g->cols; j++)
            if (g->time[i * g->cols + j].kind == LB_GRID_EMPTY && g->k[j] < g->n[i])
                return 1;
    return 0;
}

const char *lb_grid_dash_meaning(int below)
{
    return below ? "k >= n, or k does not divide n (pooling)" : "k >= n";
}

