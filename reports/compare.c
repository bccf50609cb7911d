/* linbench compare's reports (see compare.h). */
#include "reports/compare.h"

#include <stdlib.h>
#include <string.h>

#include "attn/sizes.h"
#include "attn/status.h"
#include "reports/breakdown_plot.h"
#include "reports/csv_io.h"
#include "reports/paper_table3.h"
#include "reports/settings.h"
#include "reports/speedups.h"

/* The cell of g at (n, k); outside g's lists: EMPTY where g's model has no such cell (Linformer's
 * k >= n), else MISSING. */
static LbGridCell cell_at(const LbGrid *g, const LbGridCell *cells, int64_t n, int64_t k)
{
    long i = lb_grid_row(g, n), j = lb_grid_col(g, k);
    if (i < 0 || j < 0)
        return (LbGridCell){lb_model_cell_exists(g->model, n, k) ? LB_GRID_MISSING : LB_GRID_EMPTY, 0.0};
    return cells[(size_t)i * g->cols + (size_t)j];
}

static LbGridCell ratio_of(LbGridCell num, LbGridCell den)
{
    if (num.kind == LB_GRID_VALUE && den.kind == LB_GRID_VALUE)
        return den.value > 0 ? (LbGridCell){LB_GRID_VALUE, num.value / den.value}
                             : (LbGridCell){LB_GRID_ERROR, 0.0};
    LbGridCellKind order[4] = {LB_GRID_EMPTY, LB_GRID_ERROR, LB_GRID_OOM, LB_GRID_MISSING};
    for (int i = 0; i < 4; i++)
        if (num.kind == order[i] || den.kind == order[i])
            return (LbGridCell){order[i], 0.0};
    return (LbGridCell){LB_GRID_MISSING, 0.0};
}

int lb_compare_build(const LbGrid *first, const LbGrid *second, int second_over_first,
                     const int64_t *n, size_t nn, const int64_t *k, size_t nk, LbComparison *c)
{
    memset(c, 0, sizeof *c);
    LbModelKind model = first->model, base = first->baseline;
    int rc = lb_grid_alloc_pair(&c->first, model, base, n, nn, k, nk);
    if (rc == LB_OK)
        rc = lb_grid_alloc_pair(&c->second, model, base, n, nn, k, nk);
    if (rc == LB_OK)
        rc = lb_grid_alloc_pair(&c->ratio, model, base, n, nn, k, nk);
    if (rc != LB_OK) {
        lb_compare_free(c);
        return rc;
    }
    k = c->first.k; /* one column, k 0, for a model without a k axis */
    nk = c->first.cols;
    for (size_t i = 0; i < nn; i++) {
        for (size_t j = 0; j < nk; j++) {
            size_t at = i * nk + j;
            const LbGrid *src[2] = {first, second};
            LbGrid *dst[2] = {&c->first, &c->second};
            for (int s = 0; s < 2; s++) {
                dst[s]->time[at] = cell_at(src[s], src[s]->time, n[i], k[j]);
                dst[s]->memory[at] = cell_at(src[s], src[s]->memory, n[i], k[j]);
                dst[s]->energy[at] = cell_at(src[s], src[s]->energy, n[i], k[j]);
            }
            if (second_over_first) {
                c->ratio.time[at] = ratio_of(c->second.time[at], c->first.time[at]);
                c->ratio.memory[at] = ratio_of(c->second.memory[at], c->first.memory[at]);
                c->ratio.energy[at] = ratio_of(c->second.energy[at], c->first.energy[at]);
            } else {
                c->ratio.time[at] = ratio_of(c->first.time[at], c->second.time[at]);
                c->ratio.memory[at] = ratio_of(c->first.memory[at], c->second.memory[at]);
                c->ratio.energy[at] = ratio_of(c->first.energy[at], c->second.energy[at]);
            }
        }
    }
    return LB_OK;
}

void lb_compare_free(LbComparison *c)
{
    lb_grid_free(&c->first);
    lb_grid_free(&c->second);
    lb_grid_free(&c->ratio);
}

/* The header: the sweep's settings as the settings table reads them from meta.csv (a key missing
 * from an older meta.csv reads as what it meant then), beside what the sweep found (device name,
 * storage dtype, budget), which are not settings. */
void lb_compare_describe(FILE *out, const LbSweepDir *s)
{
    LbSettingView set[LB_SET_RECORDED];
    lb_settings_list(&s->meta, set, LB_SET_RECORDED);
    const char *v[LB_SET_RECORDED];
    for (size_t id = 0; id < LB_SET_RECORDED; id++)
        v[id] = *set[id].value ? set[id].value : "?";
    const char *dtype = v[LB_SET_DTYPE];
    const char *storage = lb_sweep_meta(s, "storage_dtype", dtype);
    char stored[48] = "";
    if (strcmp(storage, dtype) != 0)
        snprintf(stored, sizeof stored, " (stored as %s)", storage);
    char budget[48] = "?";
    const char *b = lb_sweep_meta(s, "memory_budget_bytes", NULL);
    long long bytes;
    if (b && lb_csv_parse_int64(b, &bytes) == 0 && bytes > 0)
        lb_format_size((uint64_t)bytes, budget, sizeof budget);
    char limited[48] = ""; /* the budget is the user's, not the device's */
    if (*set[LB_SET_MEM_LIMIT].value)
        snprintf(limited, sizeof limited, " (--%s)", lb_settings[LB_SET_MEM_LIMIT].flag);
    char schedule[96] = ""; /* only when the Linformer's k varies by layer: uniform is the paper's */
    if (strcmp(v[LB_SET_K_SCHEDULE], "uniform") != 0 && strcmp(v[LB_SET_K_SCHEDULE], "?") != 0)
        snprintf(schedule, sizeof schedule, ", k per layer %.60s", v[LB_SET_K_SCHEDULE]);
    fprintf(out,
             "%s (%s), %s%s, %s layers, d_model %s, %s heads, ffn %s, %s sharing, %s order%s, memory budget %s%s",
             lb_sweep_meta(s, "device_name", "unknown device"), v[LB_SET_DEVICE], dtype, stored,
             v[LB_SET_LAYERS], v[LB_SET_DMODEL], v[LB_SET_HEADS], v[LB_SET_FFN], v[LB_SET_SHARING],
             v[LB_SET_ORDER], schedule, budget, limited);
}

int lb_compare_devices_differ(const LbSweepDir *a, const LbSweepDir *b, char *buf, size_t size)
{
    const int pa = lb_meta_is_predicted(&a->meta), pb = lb_meta_is_predicted(&b->meta);
    const char *da = lb_settings_meta_value(&a->meta, LB_SET_DEVICE);
    const char *db = lb_settings_meta_value(&b->meta, LB_SET_DEVICE);
    const char *na = lb_sweep_meta(a, pa ? "predict_card" : "device_name", "unknown device");
    const char *nb = lb_sweep_meta(b, pb ? "predict_card" : "device_name", "unknown device");
    const int differ = strcmp(da ? da : "", db ? db : "") != 0 || (pa == pb && strcmp(na, nb) != 0);
    if (!differ)
        return 0;
    if (pa != pb)
        snprintf(buf, size, "measured on %s, predicted for %s", pa ? nb : na, pa ? na : nb);
    else
        snprintf(buf, size, "A ran on %s, B on %s", na, nb);
    return 1;
}

/* --- printing ---------------------------------------------------------------------------------- */

typedef enum CellStyle {
    STYLE_RATIO_X, /* a measured speedup: 3 significant digits and an x */
    STYLE_PAPER_X, /* the paper's own digits and an x ("1.5x", "3.0x", "14x") */
    STYLE_PLAIN    /* a ratio of ratios: 3 significant digits */
} CellStyle;

static void cell_string(const LbGridCell *c, CellStyle style, char *buf, size_t size)
{
    if (c->kind == LB_GRID_VALUE && style == STYLE_PAPER_X) /* one decimal below 10, as printed */
        snprintf(buf, size, c->value < 10 ? "%.1fx" : "%.0fx", c->value);
    else
        lb_grid_cell_text(c, style == STYLE_PLAIN ? "" : "x", buf, size);
}

/* rows x cols strings of 24 bytes in one block, plus a pointer array over them. */
typedef struct Strings {
    char (*text)[24];
    const char **ptr;
} Strings;

static int strings_alloc(Strings *s, size_t count)
{
    s->text = malloc((count ? count : 1) * sizeof *s->text);
    s->ptr = malloc((count ? count : 1) * sizeof *s->ptr);
    if (!s->text || !s->ptr) {
        free(s->text);
        free(s->ptr);
        return LB_FAIL(LB_ERR_NOMEM, "out of memory printing a comparison");
    }
    for (size_t i = 0; i < count; i++)
        s->ptr[i] = s->text[i];
    return LB_OK;
}

static void strings_free(Strings *s)
{
    free(s->text);
    free(s->ptr);
}

/* The two grids' titles ("Time saved (ms per sequence, standard / Linformer)"), the corner and
 * the column labels of a pair's tables: k, or the model's name where it has no k axis. */
typedef struct PairText {
    char grid_title[3][160];
    const char *corner;
    int has_k;
} PairText;

static void pair_text(const LbGrid *g, PairText *t)
{
    /* Table 3's titles as they always read; other pairs by their names. */
    int paper = g->model == LB_TABLE3_MODEL && g->baseline == LB_TABLE3_BASELINE;
    const char *m = paper ? "Linformer" : lb_model_name(g->model), *b = lb_model_name(g->baseline);
    snprintf(t->grid_title[0], sizeof t->grid_title[0], "Time saved (ms per sequence, %s / %s)", b, m);
    snprintf(t->grid_title[1], sizeof t->grid_title[1], "Memory saved (largest batch, %s / %s)", m, b);
    snprintf(t->grid_title[2], sizeof t->grid_title[2], "Energy saved (joules per sequence, %s / %s)", b, m);
    t->has_k = lb_model_has_k(g->model);
    t->corner = t->has_k ? "n \\ k" : "n";
}

static void col_label(const LbGrid *g, const PairText *t, size_t j, char *buf, size_t size)
{
    if (t->has_k)
        snprintf(buf, size, "%lld", (long long)g->k[j]);
    else
        snprintf(buf, size, "%s", lb_model_name(g->model));
}

/* The three blocks (first, second, ratio) of time and memory, then of energy where either side
 * measured it: all three blocks when energy_both, else the first's alone (the paper has none). */
static int print_tables(FILE *out, LbFormat fmt, const LbComparison *c, const char *const titles[3],
                        const CellStyle styles[3], int energy_both)
{
    const int has_energy = lb_grid_has_energy(&c->first) || lb_grid_has_energy(&c->second);
    PairText pt;
    pair_text(&c->first, &pt);
    const LbGrid *g = &c->first;
    size_t cells = g->rows * g->cols;
    Strings rl = {0}, cl = {0}, s[3] = {{0}};
    int rc = strings_alloc(&rl, g->rows);
    if (rc == LB_OK)
        rc = strings_alloc(&cl, g->cols);
    for (int b = 0; rc == LB_OK && b < 3; b++)
        rc = strings_alloc(&s[b], cells);
    if (rc != LB_OK)
        goto out;
    for (size_t i = 0; i < g->rows; i++)
        snprintf(rl.text[i], sizeof rl.text[i], "%lld", (long long)g->n[i]);
    for (size_t j = 0; j < g->cols; j++)
        col_label(g, &pt, j, cl.text[j], sizeof cl.text[j]);
    for (int grid = 0; grid < (has_energy ? 3 : 2); grid++) {
        const LbGrid *src[3] = {&c->first, &c->second, &c->ratio};
        for (int b = 0; b < 3; b++) {
            const LbGridCell *cc = grid == 0 ? src[b]->time : grid == 1 ? src[b]->memory : src[b]->energy;
            for (size_t x = 0; x < cells; x++)
                cell_string(&cc[x], styles[b], s[b].text[x], sizeof s[b].text[x]);
        }
        LbTableBlock blocks[3];
        for (int b = 0; b < 3; b++)
            blocks[b] = (LbTableBlock){titles[b], g->cols, cl.ptr, s[b].ptr};
        fprintf(out, fmt == LB_FORMAT_MD ? "### %s\n\n" : "%s\n", pt.grid_title[grid]);
        lb_table_print(out, fmt, pt.corner, g->rows, rl.ptr, blocks, grid < 2 || energy_both ? 3 : 1);
        if (fmt == LB_FORMAT_TEXT)
            fprintf(out, "\n");
    }
out:
    strings_free(&rl);
    strings_free(&cl);
    for (int b = 0; b < 3; b++)
        strings_free(&s[b]);
    return rc;
}

/* Long CSV: grid,n,k,<first>,<second>,<ratio>; one row per cell with k < n. */
static int print_csv(FILE *out, const LbComparison *c, const char *const names[3])
{
    const char *head[6] = {"grid", "n", "k", names[0], names[1], names[2]};
    LB_TRY(lb_csv_write_record(out, head, 6));
    const LbGrid *g = &c->first;
    const int has_energy = lb_grid_has_energy(&c->first) || lb_grid_has_energy(&c->second);
    static const char *const grid_names[3] = {"time", "memory", "energy"};
    for (int grid = 0; grid < (has_energy ? 3 : 2); grid++) {
        for (size_t i = 0; i < g->rows; i++) {
            for (size_t j = 0; j < g->cols; j++) {
                size_t at = i * g->cols + j;
                if (g->time[at].kind == LB_GRID_EMPTY)
                    continue;
                char f[6][32];
                const char *row[6] = {f[0], f[1], f[2], f[3], f[4], f[5]};
                snprintf(f[0], sizeof f[0], "%s", grid_names[grid]);
                snprintf(f[1], sizeof f[1], "%lld", (long long)g->n[i]);
                snprintf(f[2], sizeof f[2], "%lld", (long long)g->k[j]);
                const LbGrid *src[3] = {&c->first, &c->second, &c->ratio};
                for (int b = 0; b < 3; b++) {
                    const LbGridCell *cc = grid == 0 ? src[b]->time : grid == 1 ? src[b]->memory : src[b]->energy;
                    lb_grid_cell_csv(&cc[at], f[3 + b], sizeof f[0]);
                }
                LB_TRY(lb_csv_write_record(out, row, 6));
            }
        }
    }
    return LB_OK;
}

static void print_status(FILE *out, LbFormat fmt, const LbSweepDir *s, const char *label)
{
    const char *st = lb_sweep_meta(s, "status", NULL);
    if (st && strcmp(st, "complete") != 0)
        fprintf(out, fmt == LB_FORMAT_MD ? "- %s sweep status: %s (cells not measured show NA)\n"
                                         : "  %s sweep status: %s (cells not measured show NA)\n",
                label, st);
}

static void print_legend(FILE *out, LbFormat fmt, const LbComparison *c, const char *na)
{
    const char *dash = lb_grid_dash_meaning(lb_grid_dash_below_n(&c->first) || lb_grid_dash_below_n(&c->second));
    if (fmt == LB_FORMAT_MD)
        fprintf(out, "`-`: %s; `OOM`: out of memory at batch 1; `ERR`: the cell failed; `NA`: %s.\n", dash, na);
    else
        fprintf(out, "- : %s   OOM: out of memory at batch 1   ERR: the cell failed   NA: %s\n", dash, na);
}

/* Where the sweep has no energy: one line saying why (meta.csv's energy_note), so a reader does
 * not look for a grid that cannot be there. */
static void print_energy_note(FILE *out, LbFormat fmt, const LbSweepDir *s, const LbGrid *g)
{
    if (lb_grid_has_energy(g))
        return;
    const char *note = lb_sweep_meta(s, "energy_note", "");
    fprintf(out, fmt == LB_FORMAT_MD ? "\nEnergy per sequence: not measured (%s).\n" : "Energy per sequence: not measured (%s)\n",
            *note ? note : "a sweep from before linbench measured energy, or no cell of this grid has it");
}

/* The comparisons speedups.csv holds beyond Table 3 (every other model against standard, and
 * against chunked where measured) for the models measured in a or b (b may be NULL). */
static size_t other_pairs(const LbSweepDir *a, const LbSweepDir *b, LbSpeedupPair *pairs)
{
    int measured[LB_MODEL_COUNT], other[LB_MODEL_COUNT];
    /* A model list this linbench does not know still leaves the known ones and the rows' models. */
    (void)lb_models_measured(&a->meta, a->rows, a->count, measured);
    if (b) {
        (void)lb_models_measured(&b->meta, b->rows, b->count, other);
        for (int m = 0; m < LB_MODEL_COUNT; m++)
            measured[m] |= other[m];
    }
    LbSpeedupPair all[LB_SPEEDUP_PAIRS_MAX];
    size_t count = lb_speedup_pairs(measured, all), kept = 0;
    for (size_t p = 0; p < count; p++)
        if (!(all[p].model == a->grid.model && all[p].baseline == LB_TABLE3_BASELINE))
            pairs[kept++] = all[p];
    return kept;
}

static void print_others_heading(FILE *out, LbFormat fmt)
{
    fprintf(out, fmt == LB_FORMAT_MD ? "## Every other model (speedups.csv)\n\n" : "Every other model (speedups.csv)\n\n");
}

/* One pair's two grids side by side (a single sweep). */
static int print_pair(FILE *out, LbFormat fmt, const LbGrid *g)
{
    PairText pt;
    pair_text(g, &pt);
    size_t cells = g->rows * g->cols;
    Strings rl = {0}, cl = {0}, s[3] = {{0}};
    int rc = strings_alloc(&rl, g->rows);
    if (rc == LB_OK)
        rc = strings_alloc(&cl, g->cols);
    for (int b = 0; rc == LB_OK && b < 3; b++)
        rc = strings_alloc(&s[b], cells);
    if (rc == LB_OK) {
        for (size_t i = 0; i < g->rows; i++)
            snprintf(rl.text[i], sizeof rl.text[i], "%lld", (long long)g->n[i]);
        for (size_t j = 0; j < g->cols; j++)
            col_label(g, &pt, j, cl.text[j], sizeof cl.text[j]);
        for (size_t x = 0; x < cells; x++) {
            cell_string(&g->time[x], STYLE_RATIO_X, s[0].text[x], sizeof s[0].text[x]);
            cell_string(&g->memory[x], STYLE_RATIO_X, s[1].text[x], sizeof s[1].text[x]);
            cell_string(&g->energy[x], STYLE_RATIO_X, s[2].text[x], sizeof s[2].text[x]);
        }
        LbTableBlock blocks[3] = {{pt.grid_title[0], g->cols, cl.ptr, s[0].ptr},
                                  {pt.grid_title[1], g->cols, cl.ptr, s[1].ptr},
                                  {pt.grid_title[2], g->cols, cl.ptr, s[2].ptr}};
        const char *k_meaning = lb_model_k_meaning(g->model);
        fprintf(out, fmt == LB_FORMAT_MD ? "### %s against %s%s%s%s\n\n" : "%s against %s%s%s%s\n",
                lb_model_name(g->model), lb_model_name(g->baseline), pt.has_k ? " (k: " : "",
                pt.has_k ? k_meaning : "", pt.has_k ? ")" : "");
        lb_table_print(out, fmt, pt.corner, g->rows, rl.ptr, blocks, lb_grid_has_energy(g) ? 3 : 2);
        if (fmt == LB_FORMAT_TEXT)
            fprintf(out, "\n");
    }
    strings_free(&rl);
    strings_free(&cl);
    for (int b = 0; b < 3; b++)
        strings_free(&s[b]);
    return rc;
}

static int print_other_models(FILE *out, LbFormat fmt, const LbSweepDir *s)
{
    LbSpeedupPair pairs[LB_SPEEDUP_PAIRS_MAX];
    size_t count = other_pairs(s, NULL, pairs);
    if (count == 0)
        return LB_OK;
    fprintf(out, "\n");
    print_others_heading(out, fmt);
    for (size_t p = 0; p < count; p++) {
        LbGrid g;
        LB_TRY(lb_grid_pair_from_raw(s->rows, s->count, pairs[p].model, pairs[p].baseline, s->grid.n,
                                     s->grid.rows, s->grid.k, s->grid.cols, &g));
        int rc = print_pair(out, fmt, &g);
        lb_grid_free(&g);
        LB_TRY(rc);
    }
    return LB_OK;
}

int lb_compare_paper(FILE *out, const LbSweepDir *s, LbFormat fmt)
{
    LbGrid paper;
    LB_TRY(lb_paper_table3(&paper));
    LbComparison c;
    int rc = lb_compare_build(&s->grid, &paper, 0, s->grid.n, s->grid.rows, s->grid.k,
                              s->grid.cols, &c);
    lb_grid_free(&paper);
    if (rc != LB_OK)
        return rc;
    /* a prediction (linbench predict) says so wherever a sweep's says measured */
    const int predicted = lb_meta_is_predicted(&s->meta);
    if (fmt == LB_FORMAT_CSV) {
        static const char *const names[2][3] = {{"measured", "paper", "measured_over_paper"},
                                                {"predicted", "paper", "predicted_over_paper"}};
        rc = print_csv(out, &c, names[predicted]);
        lb_compare_free(&c);
        return rc;
    }
    const char *item = fmt == LB_FORMAT_MD ? "- " : "  ";
    fprintf(out, fmt == LB_FORMAT_MD ? "## linbench compare: %s against the Linformer paper, Table 3\n\n"
                                     : "linbench compare: %s against the Linformer paper, Table 3\n",
            s->dir);
    fprintf(out, predicted ? "%spredicted: " : "%smeasured: ", item);
    lb_compare_describe(out, s);
    fputc('\n', out);
    fprintf(out, "%spaper:    %s%s, Linformer with layerwise sharing; precision and model size not stated\n",
            item, predicted ? " " : "", LB_PAPER_DEVICE);
    print_status(out, fmt, s, predicted ? "predicted" : "measured");
    fprintf(out, "\n");
    static const char *const titles[2][3] = {{"measured", "paper", "measured / paper"},
                                             {"predicted", "paper", "predicted / paper"}};
    static const CellStyle styles[3] = {STYLE_RATIO_X, STYLE_PAPER_X, STYLE_PLAIN};
    rc = print_tables(out, fmt, &c, titles[predicted], styles, 0);
    print_legend(out, fmt, &c, predicted ? "not predicted, or not in the paper" : "not measured, or not in the paper");
    if (!predicted) /* a roofline has no energy model: nothing to explain */
        print_energy_note(out, fmt, s, &c.first);
    lb_compare_free(&c);
    if (rc == LB_OK)
        rc = print_other_models(out, fmt, s);
    if (rc == LB_OK) /* where the sweep ran with --breakdown */
        rc = lb_breakdown_compare(out, s, fmt);
    return rc;
}

/* Sorted union of two sorted unique lists (malloc'd). */
static int64_t *union_list(const int64_t *a, size_t na, const int64_t *b, size_t nb, size_t *count)
{
    int64_t *u = malloc((na + nb ? na + nb : 1) * sizeof *u);
    if (!u)
        return NULL;
    size_t i = 0, j = 0, o = 0;
    while (i < na || j < nb) {
        int64_t v = j >= nb || (i < na && a[i] <= b[j]) ? a[i] : b[j];
        if (i < na && a[i] == v)
            i++;
        if (j < nb && b[j] == v)
            j++;
        u[o++] = v;
    }
    *count = o;
    return u;
}

int lb_compare_sweeps(FILE *out, const LbSweepDir *a, const LbSweepDir *b, LbFormat fmt)
{
    size_t nn, nk;
    int64_t *n = union_list(a->grid.n, a->grid.rows, b->grid.n, b->grid.rows, &nn);
    int64_t *k = union_list(a->grid.k, a->grid.cols, b->grid.k, b->grid.cols, &nk);
    LbComparison c;
    int rc = n && k ? lb_compare_build(&a->grid, &b->grid, 1, n, nn, k, nk, &c)
                    : LB_FAIL(LB_ERR_NOMEM, "out of memory comparing two sweeps");
    free(n);
    free(k);
    if (rc != LB_OK)
        return rc;
    if (fmt == LB_FORMAT_CSV) {
        static const char *const names[3] = {"a", "b", "b_over_a"};
        rc = print_csv(out, &c, names);
        lb_compare_free(&c);
        return rc;
    }
    const char *item = fmt == LB_FORMAT_MD ? "- " : "  ";
    fprintf(out, fmt == LB_FORMAT_MD ? "## linbench compare: two sweeps\n\n" : "linbench compare: two sweeps\n");
    fprintf(out, "%sA: %s: ", item, a->dir);
    lb_compare_describe(out, a);
    fprintf(out, "\n%sB: %s: ", item, b->dir);
    lb_compare_describe(out, b);
    fputc('\n', out);
    char devices[512];
    if (lb_compare_devices_differ(a, b, devices, sizeof devices))
        fprintf(out, "%sdevices differ: %s: B / A compares the devices as well as the runs\n", item, devices);
    print_status(out, fmt, a, "A");
    print_status(out, fmt, b, "B");
    fprintf(out, "\n");
    static const char *const titles[3] = {"A", "B", "B / A"};
    static const CellStyle styles[3] = {STYLE_RATIO_X, STYLE_RATIO_X, STYLE_PLAIN};
    rc = print_tables(out, fmt, &c, titles, styles, 1);
    print_legend(out, fmt, &c, "not measured in that sweep");
    lb_compare_free(&c);
    if (rc != LB_OK)
        return rc;

    /* The other models' speedups, A, B and B / A, over the same union of n and k. */
    LbSpeedupPair pairs[LB_SPEEDUP_PAIRS_MAX];
    size_t count = other_pairs(a, b, pairs);
    n = union_list(a->grid.n, a->grid.rows, b->grid.n, b->grid.rows, &nn);
    k = union_list(a->grid.k, a->grid.cols, b->grid.k, b->grid.cols, &nk);
    if (!n || !k)
        rc = LB_FAIL(LB_ERR_NOMEM, "out of memory comparing two sweeps");
    if (count > 0 && rc == LB_OK) {
        fprintf(out, "\n");
        print_others_heading(out, fmt);
    }
    for (size_t p = 0; p < count && rc == LB_OK; p++) {
        LbGrid ga, gb;
        rc = lb_grid_pair_from_raw(a->rows, a->count, pairs[p].model, pairs[p].baseline, n, nn, k, nk, &ga);
        if (rc != LB_OK)
            break;
        rc = lb_grid_pair_from_raw(b->rows, b->count, pairs[p].model, pairs[p].baseline, n, nn, k, nk, &gb);
        if (rc == LB_OK) {
            rc = lb_compare_build(&ga, &gb, 1, n, nn, ga.k, ga.cols, &c);
            lb_grid_free(&gb);
        }
        lb_grid_free(&ga);
        if (rc != LB_OK)
            break;
        rc = print_tables(out, fmt, &c, titles, styles, 1);
        lb_compare_free(&c);
    }
    free(n);
    free(k);
    return rc;
}
