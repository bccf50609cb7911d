/* Table 3's two grids from raw rows, their CSV files and their tables (see grid.h). */
#include "reports/grid.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attn/lists.h"
#include "attn/status.h"
#include "reports/atomic_file.h"
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
    g->time = malloc((cells ? cells : 1) * sizeof *g->time);
    g->memory = malloc((cells ? cells : 1) * sizeof *g->memory);
    g->energy = malloc((cells ? cells : 1) * sizeof *g->energy);
    if (!g->n || !g->k || !g->time || !g->memory || !g->energy) {
        lb_grid_free(g);
        return LB_FAIL(LB_ERR_NOMEM, "out of memory for a %zu x %zu grid", nn, nk);
    }
    if (nn)
        memcpy(g->n, n, nn * sizeof *n);
    if (nk)
        memcpy(g->k, k, nk * sizeof *k);
    for (size_t i = 0; i < nn; i++) {
        for (size_t j = 0; j < nk; j++) {
            LbGridCellKind kind = lb_model_cell_exists(model, n[i], k[j]) ? LB_GRID_MISSING : LB_GRID_EMPTY;
            g->time[i * nk + j] = (LbGridCell){kind, 0.0};
            g->memory[i * nk + j] = (LbGridCell){kind, 0.0};
            g->energy[i * nk + j] = (LbGridCell){kind, 0.0};
        }
    }
    return LB_OK;
}

int lb_grid_alloc(LbGrid *g, const int64_t *n, size_t nn, const int64_t *k, size_t nk)
{
    return lb_grid_alloc_pair(g, LB_TABLE3_MODEL, LB_TABLE3_BASELINE, n, nn, k, nk);
}

void lb_grid_free(LbGrid *g)
{
    if (!g)
        return;
    free(g->n);
    free(g->k);
    free(g->time);
    free(g->memory);
    free(g->energy);
    memset(g, 0, sizeof *g);
}

long lb_grid_row(const LbGrid *g, int64_t n)
{
    for (size_t i = 0; i < g->rows; i++)
        if (g->n[i] == n)
            return (long)i;
    return -1;
}

long lb_grid_col(const LbGrid *g, int64_t k)
{
    for (size_t j = 0; j < g->cols; j++)
        if (g->k[j] == k)
            return (long)j;
    return -1;
}

/* An error on either side beats an OOM, which beats a missing row: what the reader most needs
 * to know. */
void lb_grid_ratio_cell(const LbCellResult *b, const LbCellResult *m, LbGridCell *t, LbGridCell *mem)
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
    *t = (LbGridCell){kind, 0.0};
    *mem = (LbGridCell){kind, 0.0};
    if (kind != LB_GRID_VALUE)
        return;
    /* An ok row with no time or no batch cannot give a ratio: show it as an error, not inf. */
    if (b->ms_per_seq > 0 && m->ms_per_seq > 0)
        t->value = b->ms_per_seq / m->ms_per_seq;
    else
        t->kind = LB_GRID_ERROR;
    if (b->batch > 0 && m->batch > 0)
        mem->value = (double)m->batch / (double)b->batch;
    else
        mem->kind = LB_GRID_ERROR;
}

void lb_grid_energy_cell(const LbCellResult *b, const LbCellResult *m, LbGridCell *e)
{
    LbGridCell unused;
    lb_grid_ratio_cell(b, m, e, &unused);
    if (e->kind != LB_GRID_VALUE)
        return;
    /* a side without an energy counter (NaN, or a row from before the columns): not measured */
    if (b->energy_j_per_seq > 0 && m->energy_j_per_seq > 0)
        e->value = b->energy_j_per_seq / m->energy_j_per_seq;
    else
        *e = (LbGridCell){LB_GRID_MISSING, 0.0};
}

int lb_grid_pair_from_raw(const LbCellResult *rows, size_t count, LbModelKind model,
                          LbModelKind baseline, const int64_t *n, size_t nn, const int64_t *k,
                          size_t nk, LbGrid *g)
{
    memset(g, 0, sizeof *g);
    int64_t *own_n = NULL, *own_k = NULL;
    const LbCellResult **base_row = NULL, **model_row = NULL;
    int model_k = lb_model_has_k(model), base_k = lb_model_has_k(baseline);
    int rc = LB_OK;
    if (!n || !k) {
        own_n = malloc((count ? count : 1) * sizeof *own_n);
        own_k = malloc((count ? count : 1) * sizeof *own_k);
        if (!own_n || !own_k) {
            rc = LB_FAIL(LB_ERR_NOMEM, "out of memory building the grids");
            goto out;
        }
        size_t cn = 0, ck = 0;
        for (size_t i = 0; i < count; i++) {
            if (rows[i].model != model && rows[i].model != baseline)
                continue;
            own_n[cn++] = rows[i].n;
            if (rows[i].model == model && model_k)
                own_k[ck++] = rows[i].k;
        }
        if (!n) {
            n = own_n;
            nn = lb_sort_unique_int64(own_n, cn);
        }
        if (!k) {
            k = own_k;
            nk = lb_sort_unique_int64(own_k, ck);
        }
    }
    rc = lb_grid_alloc_pair(g, model, baseline, n, nn, k, nk);
    if (rc != LB_OK)
        goto out;
    nk = g->cols;
    base_row = calloc(nn * nk > 0 ? nn * nk : 1, sizeof *base_row);
    model_row = calloc(nn * nk > 0 ? nn * nk : 1, sizeof *model_row);
    if (!base_row || !model_row) {
        rc = LB_FAIL(LB_ERR_NOMEM, "out of memory building the grids");
        lb_grid_free(g);
        goto out;
    }
    for (size_t r = 0; r < count; r++) { /* in file order, so the last row of a cell wins */
        const LbCellResult *row = &rows[r];
        if (row->model != model && row->model != baseline)
            continue;
        long i = lb_grid_row(g, row->n);
        if (i < 0)
            continue;
        for (size_t j = 0; j < nk; j++) {
            size_t c = (size_t)i * nk + j;
            if (row->model == model && (!model_k || row->k == g->k[j]))
                model_row[c] = row;
            else if (row->model == baseline && (!base_k || (model_k && row->k == g->k[j])))
                base_row[c] = row;
        }
    }
    for (size_t c = 0; c < nn * nk; c++) {
        if (g->time[c].kind == LB_GRID_EMPTY)
            continue;
    {
        lb_grid_ratio_cell(base_row[c], model_row[c], &g->time[c], &g->memory[c]);
        lb_grid_energy_cell(base_row[c], model_row[c], &g->energy[c]);
    }
    }
out:
    free(own_n);
    free(own_k);
    free(base_row);
    free(model_row);
    return rc;
}

LbModelKind lb_table3_model(const LbCellResult *rows, size_t count)
{
    int has[LB_MODEL_COUNT] = {0};
    for (size_t i = 0; i < count; i++)
        if ((unsigned)rows[i].model < LB_MODEL_COUNT)
            has[rows[i].model] = 1;
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

/* --- cells as text ----------------------------------------------------------------------------- */

void lb_format_sig(double v, int digits, char *buf, size_t size)
{
    /* Trailing zeros kept ("2.00", "1.60") so a column of ratios lines up by eye; no exponent
     * and no trailing point from 10^(digits-1) up ("128", "1234"). */
    if (isfinite(v) && fabs(v) >= pow(10.0, digits - 1))
        snprintf(buf, size, "%.0f", v);
    else
        snprintf(buf, size, "%#.*g", digits, v);
}

void lb_grid_cell_text(const LbGridCell *c, const char *suffix, char *buf, size_t size)
{
    switch (c->kind) {
    case LB_GRID_EMPTY: snprintf(buf, size, "-"); return;
    case LB_GRID_MISSING: snprintf(buf, size, "NA"); return;
    case LB_GRID_OOM: snprintf(buf, size, "OOM"); return;
    case LB_GRID_ERROR: snprintf(buf, size, "ERR"); return;
    case LB_GRID_VALUE: break;
    }
    char num[64];
    lb_format_sig(c->value, 3, num, sizeof num);
    snprintf(buf, size, "%s%s", num, suffix ? suffix : "");
}

void lb_grid_cell_csv(const LbGridCell *c, char *buf, size_t size)
{
    switch (c->kind) {
    case LB_GRID_EMPTY: snprintf(buf, size, "%s", ""); return;
    case LB_GRID_MISSING: snprintf(buf, size, "NA"); return;
    case LB_GRID_OOM: snprintf(buf, size, "OOM"); return;
    case LB_GRID_ERROR: snprintf(buf, size, "ERR"); return;
    case LB_GRID_VALUE: snprintf(buf, size, "%.6g", c->value); return;
    }
}

int lb_grid_cell_parse(const char *s, LbGridCell *c)
{
    *c = (LbGridCell){LB_GRID_VALUE, 0.0};
    if (s[0] == '\0')
        c->kind = LB_GRID_EMPTY;
    else if (strcmp(s, "NA") == 0)
        c->kind = LB_GRID_MISSING;
    else if (strcmp(s, "OOM") == 0)
        c->kind = LB_GRID_OOM;
    else if (strcmp(s, "ERR") == 0)
        c->kind = LB_GRID_ERROR;
    else if (lb_csv_parse_double(s, &c->value) || !isfinite(c->value))
        return -1;
    return 0;
}

/* --- files -------------------------------------------------------------------------------------- */

/* The header and rows of one grid (cells = g->time or g->memory), `lead` fields first. */
static int write_grid(FILE *f, const LbGrid *g, const LbGridCell *cells, const char *lead)
{
    size_t nf = g->cols + 1 + (lead ? 1 : 0);
    char (*buf)[64] = malloc(nf * sizeof *buf);
    const char **fields = malloc(nf * sizeof *fields);
    int rc = LB_OK;
    if (!buf || !fields) {
        rc = LB_FAIL(LB_ERR_NOMEM, "out of memory writing a grid");
        goto out;
    }
    for (size_t i = 0; i < nf; i++)
        fields[i] = buf[i];
    for (size_t i = 0; i < g->rows; i++) {
        size_t o = 0;
        if (lead)
            snprintf(buf[o++], sizeof buf[0], "%s", lead);
        snprintf(buf[o++], sizeof buf[0], "%lld", (long long)g->n[i]);
        for (size_t j = 0; j < g->cols; j++)
            lb_grid_cell_csv(&cells[i * g->cols + j], buf[o++], sizeof buf[0]);
        rc = lb_csv_write_record(f, fields, nf);
        if (rc != LB_OK)
            goto out;
    }
out:
    free(buf);
    free(fields);
    return rc;
}

static int write_header(FILE *f, const LbGrid *g, const char *lead)
{
    size_t nf = g->cols + 1 + (lead ? 1 : 0);
    char (*buf)[32] = malloc(nf * sizeof *buf);
    const char **fields = malloc(nf * sizeof *fields);
    int rc = LB_OK;
    if (!buf || !fields) {
        rc = LB_FAIL(LB_ERR_NOMEM, "out of memory writing a grid");
        goto out;
    }
    size_t o = 0;
    if (lead)
        snprintf(buf[o++], sizeof buf[0], "%s", lead);
    snprintf(buf[o++], sizeof buf[0], "n");
    for (size_t j = 0; j < g->cols; j++)
        snprintf(buf[o++], sizeof buf[0], "k=%lld", (long long)g->k[j]);
    for (size_t i = 0; i < nf; i++)
        fields[i] = buf[i];
    rc = lb_csv_write_record(f, fields, nf);
out:
    free(buf);
    free(fields);
    return rc;
}

static int write_grid_file(const char *dir, const char *name, const LbGrid *g,
                           const LbGridCell *cells)
{
    char *path = lb_path_join(dir, name);
    if (!path)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory");
    LbAtomicFile af;
    int rc = lb_atomic_open(&af, path);
    if (rc == LB_OK) {
        rc = write_header(af.f, g, NULL);
        if (rc == LB_OK)
            rc = write_grid(af.f, g, cells, NULL);
        if (rc == LB_OK) {
            rc = lb_atomic_commit(&af);
        } else {
            lb_atomic_abort(&af);
            lb_error_clear();
            rc = LB_FAIL(LB_ERR_IO, "cannot write %s", path);
        }
    }
    free(path);
    return rc;
}

/* time_speedup.csv last: a reader (lb_grids_read) that finds it finds the other two, even in a
 * directory whose first write a kill -9 cut between two renames. */
int lb_grids_write(const char *dir, const LbGrid *g)
{
    LB_TRY(write_grid_file(dir, "memory_speedup.csv", g, g->memory));
    LB_TRY(write_grid_file(dir, LB_ENERGY_SPEEDUP_FILE, g, g->energy));
    return write_grid_file(dir, "time_speedup.csv", g, g->time);
}

int lb_grid_has_energy(const LbGrid *g)
{
    for (size_t c = 0; c < g->rows * g->cols; c++)
        if (g->energy[c].kind == LB_GRID_VALUE)
            return 1;
    return 0;
}

/* One grid CSV into n, k and cells (malloc'd). */
static int parse_grid(const char *text, size_t len, const char *what, int64_t **n, size_t *nn,
                      int64_t **k, size_t *nk, LbGridCell **cells)
{
    *n = *k = NULL;
    *cells = NULL;
    LbCsvTable t;
    LB_TRY(lb_csv_parse_text(text, len, 0, what, &t));
    int rc = LB_OK;
    if (t.rows == 0 || t.row[0].count < 1 || strcmp(t.row[0].fields[0], "n") != 0) {
        rc = LB_FAIL(LB_ERR_FORMAT, "%s: header should be n,k=...,k=...", what);
        goto out;
    }
    *nk = t.row[0].count - 1;
    *nn = t.rows - 1;
    *n = malloc((*nn ? *nn : 1) * sizeof **n);
    *k = malloc((*nk ? *nk : 1) * sizeof **k);
    *cells = malloc((*nn * *nk > 0 ? *nn * *nk : 1) * sizeof **cells);
    if (!*n || !*k || !*cells) {
        rc = LB_FAIL(LB_ERR_NOMEM, "out of memory reading %s", what);
        goto out;
    }
    for (size_t j = 0; j < *nk; j++) {
        const char *h = t.row[0].fields[j + 1];
        long long v;
        if (strncmp(h, "k=", 2) != 0 || lb_csv_parse_int64(h + 2, &v) || v < 1) {
            rc = LB_FAIL(LB_ERR_FORMAT, "%s: column %zu is \"%s\": should be k=<positive integer>",
                         what, j + 2, h);
            goto out;
        }
        (*k)[j] = v;
    }
    for (size_t i = 0; i < *nn; i++) {
        const LbCsvRow *r = &t.row[i + 1];
        long long v;
        if (r->count != *nk + 1) {
            rc = LB_FAIL(LB_ERR_FORMAT, "%s line %zu: %zu fields: should be %zu", what,
                         t.line[i + 1], r->count, *nk + 1);
            goto out;
        }
        if (lb_csv_parse_int64(r->fields[0], &v) || v < 1) {
            rc = LB_FAIL(LB_ERR_FORMAT, "%s line %zu: n \"%s\": should be a positive integer",
                         what, t.line[i + 1], r->fields[0]);
            goto out;
        }
        (*n)[i] = v;
        for (size_t j = 0; j < *nk; j++) {
            if (lb_grid_cell_parse(r->fields[j + 1], &(*cells)[i * *nk + j])) {
                rc = LB_FAIL(LB_ERR_FORMAT,
                             "%s line %zu: \"%s\": should be a number, empty, NA, OOM or ERR",
                             what, t.line[i + 1], r->fields[j + 1]);
                goto out;
            }
        }
    }
out:
    lb_csv_table_free(&t);
    if (rc != LB_OK) {
        free(*n);
        free(*k);
        free(*cells);
        *n = *k = NULL;
        *cells = NULL;
    }
    return rc;
}

int lb_grids_parse(const char *time_csv, size_t time_len, const char *memory_csv,
                   size_t memory_len, const char *what, LbGrid *g)
{
    memset(g, 0, sizeof *g);
    int64_t *tn, *tk, *mn, *mk;
    size_t tnn, tnk, mnn, mnk;
    LbGridCell *tc, *mc;
    LB_TRY(parse_grid(time_csv, time_len, what, &tn, &tnn, &tk, &tnk, &tc));
    int rc = parse_grid(memory_csv, memory_len, what, &mn, &mnn, &mk, &mnk, &mc);
    if (rc != LB_OK) {
        free(tn);
        free(tk);
        free(tc);
        return rc;
    }
    if (tnn != mnn || tnk != mnk || memcmp(tn, mn, tnn * sizeof *tn) != 0 ||
        memcmp(tk, mk, tnk * sizeof *tk) != 0) {
        rc = LB_FAIL(LB_ERR_FORMAT, "%s: the time and memory grids have different n or k", what);
    } else {
        g->rows = tnn;
        g->cols = tnk;
        g->model = LB_TABLE3_MODEL; /* the files hold Table 3's grids */
        g->baseline = LB_TABLE3_BASELINE;
        g->n = tn;
        g->k = tk;
        g->time = tc;
        g->memory = mc;
        /* the paper's table and older sweeps have no energy: not measured (lb_grids_read reads
         * energy_speedup.csv where there is one) */
        g->energy = malloc((tnn * tnk > 0 ? tnn * tnk : 1) * sizeof *g->energy);
        if (!g->energy) {
            rc = LB_FAIL(LB_ERR_NOMEM, "out of memory reading %s", what);
        } else {
            for (size_t c = 0; c < tnn * tnk; c++)
                g->energy[c] = (LbGridCell){tc[c].kind == LB_GRID_EMPTY ? LB_GRID_EMPTY : LB_GRID_MISSING, 0.0};
        }
        tn = tk = NULL;
        tc = NULL;
        mc = NULL;
        if (rc != LB_OK)
            lb_grid_free(g);
    }
    free(tn);
    free(tk);
    free(tc);
    free(mn);
    free(mk);
    free(mc);
    return rc;
}

static int slurp(const char *dir, const char *name, char **text, size_t *len)
{
    char *path = lb_path_join(dir, name);
    if (!path)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory");
    FILE *f = fopen(path, "rb");
    if (!f) {
        int rc = LB_FAIL(LB_ERR_IO, "cannot open %s: %s", path, strerror(errno));
        free(path);
        return rc;
    }
    size_t cap = 4096;
    *len = 0;
    *text = malloc(cap);
    int rc = LB_OK;
    while (*text) {
        size_t got = fread(*text + *len, 1, cap - *len, f);
        *len += got;
        if (*len < cap)
            break;
        cap *= 2;
        char *t = realloc(*text, cap);
        if (!t) {
            free(*text);
            *text = NULL;
        } else {
            *text = t;
        }
    }
    if (!*text)
        rc = LB_FAIL(LB_ERR_NOMEM, "out of memory reading %s", path);
    else if (ferror(f))
        rc = LB_FAIL(LB_ERR_IO, "cannot read %s", path);
    fclose(f);
    free(path);
    return rc;
}

int lb_grids_read(const char *dir, LbGrid *g)
{
    memset(g, 0, sizeof *g);
    char *tt = NULL, *mt = NULL;
    size_t tl = 0, ml = 0;
    int rc = slurp(dir, "time_speedup.csv", &tt, &tl);
    if (rc == LB_OK)
        rc = slurp(dir, "memory_speedup.csv", &mt, &ml);
    if (rc == LB_OK) {
        char *what = lb_path_join(dir, "time_speedup.csv / memory_speedup.csv");
        rc = lb_grids_parse(tt, tl, mt, ml, what ? what : dir, g);
        free(what);
    }
    free(tt);
    free(mt);
    /* energy_speedup.csv where the sweep wrote one (older sweeps did not): the same n and k */
    char *epath = rc == LB_OK ? lb_path_join(dir, LB_ENERGY_SPEEDUP_FILE) : NULL;
    struct stat st;
    if (epath && stat(epath, &st) == 0) {
        char *et = NULL;
        size_t el = 0, enn = 0, enk = 0;
        int64_t *en = NULL, *ek = NULL;
        LbGridCell *ec = NULL;
        rc = slurp(dir, LB_ENERGY_SPEEDUP_FILE, &et, &el);
        if (rc == LB_OK)
            rc = parse_grid(et, el, epath, &en, &enn, &ek, &enk, &ec);
        if (rc == LB_OK && (enn != g->rows || enk != g->cols || memcmp(en, g->n, enn * sizeof *en) != 0 ||
                            memcmp(ek, g->k, enk * sizeof *ek) != 0))
            rc = LB_FAIL(LB_ERR_FORMAT, "%s: n or k differ from time_speedup.csv's", epath);
        if (rc == LB_OK)
            memcpy(g->energy, ec, enn * enk * sizeof *ec);
        else
            lb_grid_free(g);
        free(et);
        free(en);
        free(ek);
        free(ec);
    }
    free(epath);
    return rc;
}

/* --- printing ----------------------------------------------------------------------------------- */

/* Labels and cell strings for a table; freed by free_strings. */
static char **grid_strings(const LbGrid *g, const LbGridCell *cells)
{
    size_t count = g->rows * g->cols;
    char **s = calloc(count ? count : 1, sizeof *s);
    if (!s)
        return NULL;
    for (size_t c = 0; c < count; c++) {
        s[c] = malloc(32);
        if (!s[c])
            continue; /* prints empty */
        lb_grid_cell_text(&cells[c], "x", s[c], 32);
    }
    return s;
}

static char **int_labels(const int64_t *v, size_t count)
{
    char **s = calloc(count ? count : 1, sizeof *s);
    if (!s)
        return NULL;
    for (size_t i = 0; i < count; i++) {
        s[i] = malloc(24);
        if (s[i])
            snprintf(s[i], 24, "%lld", (long long)v[i]);
    }
    return s;
}

static void free_strings(char **s, size_t count)
{
    if (!s)
        return;
    for (size_t i = 0; i < count; i++)
        free(s[i]);
    free(s);
}

static void print_csv(FILE *out, const LbGrid *g)
{
    if (write_header(out, g, "grid") == LB_OK && write_grid(out, g, g->time, "time") == LB_OK &&
        write_grid(out, g, g->memory, "memory") == LB_OK && lb_grid_has_energy(g))
        write_grid(out, g, g->energy, "energy");
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

void lb_grid_print(FILE *out, const LbGrid *g, LbFormat fmt)
{
    if (fmt == LB_FORMAT_CSV) {
        print_csv(out, g);
        return;
    }
    char **rl = int_labels(g->n, g->rows), **cl = int_labels(g->k, g->cols);
    char **ts = grid_strings(g, g->time), **ms = grid_strings(g, g->memory), **es = grid_strings(g, g->energy);
    /* energy beside them where the device had a counter (METHOD.md, "Energy") */
    const int energy = lb_grid_has_energy(g);
    if (rl && cl && ts && ms && es) {
        LbTableBlock b[3] = {
            {"time saved", g->cols, (const char *const *)cl, (const char *const *)ts},
            {"memory saved", g->cols, (const char *const *)cl, (const char *const *)ms},
            {"energy saved", g->cols, (const char *const *)cl, (const char *const *)es},
        };
        if (fmt == LB_FORMAT_MD) {
            b[0].title = "Time saved (ms per sequence, standard / Linformer)";
            b[1].title = "Memory saved (largest batch, Linformer / standard)";
            b[2].title = "Energy saved (joules per sequence, standard / Linformer)";
        }
        lb_table_print(out, fmt, "n \\ k", g->rows, (const char *const *)rl, b, energy ? 3 : 2);
        if (fmt == LB_FORMAT_TEXT)
            fprintf(out,
                    "time saved = ms per sequence, standard / Linformer; memory saved = largest batch, Linformer / standard%s\n"
                    "- : %s   OOM: out of memory at batch 1   ERR: the cell failed   NA: not measured\n",
                    energy ? "; energy saved = joules per sequence, standard / Linformer" : "",
                    lb_grid_dash_meaning(lb_grid_dash_below_n(g)));
        else
            fprintf(out,
                    "`-`: %s; `OOM`: out of memory at batch 1; `ERR`: the cell failed; `NA`: not measured.\n",
                    lb_grid_dash_meaning(lb_grid_dash_below_n(g)));
    }
    free_strings(rl, g->rows);
    free_strings(cl, g->cols);
    free_strings(ts, g->rows * g->cols);
    free_strings(ms, g->rows * g->cols);
    free_strings(es, g->rows * g->cols);
}
