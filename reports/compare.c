/* linbench compare (see compare.h): the two row sets paired on (model, n, k) once, each mode's
 * columns, ratio and notes from the Mode table. */
#define _POSIX_C_SOURCE 200809L

#include "reports/compare.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attn/base/lists.h"
#include "attn/base/sizes.h"
#include "attn/base/status.h"
#include "reports/breakdown_csv.h"
#include "reports/csv_io.h"
#include "reports/paper_table3.h"
#include "reports/settings.h"
#include "reports/speedups.h"

typedef enum { MODE_PAPER, MODE_PREDICTED_PAPER, MODE_SWEEPS, MODE_PEER, MODE_PREDICTED, MODE_PASSES } ModeId;
enum { Q_TIME, Q_MEMORY, Q_ENERGY, Q_COUNT };

/* How a value prints in text: a speedup (3 digits and an x), the paper's own digits, a plain ratio
 * (3 digits, trailing zeros kept), a whole number, %.4g, %.3g. */
typedef enum { ST_X, ST_PAPER, ST_PLAIN, ST_INT, ST_G4, ST_G3 } Style;

typedef struct Mode {
    const char *title;    /* after "linbench compare: " (and the directory, against the paper) */
    int own;              /* each side's own values (ms, batch, J), not its speedups */
    int b_over_a;         /* the ratio is B / A, else A / B */
    const char *block[3]; /* a side-by-side table's block titles: A, B, ratio; the sides' labels */
    Style style[Q_COUNT][3];
    const char *csv[3];   /* paper, sweeps: the CSV's names of A, B and the ratio */
    const char *na;       /* the legend's NA */
    const char *statuses; /* after a side's label where its run did not complete; NULL: not said */
    const char *devices;  /* what the ratio compares where the devices differ; NULL: not said */
} Mode;

static const Mode modes[] = {
    [MODE_PAPER] = {" against the Linformer paper, Table 3", 0, 0, {"measured", "paper", "measured / paper"},
                    {{ST_X, ST_PAPER, ST_PLAIN}, {ST_X, ST_PAPER, ST_PLAIN}, {ST_X, ST_PAPER, ST_PLAIN}},
                    {"measured", "paper", "measured_over_paper"}, "not measured, or not in the paper", " sweep", NULL},
    [MODE_PREDICTED_PAPER] = {" against the Linformer paper, Table 3", 0, 0, {"predicted", "paper", "predicted / paper"},
                              {{ST_X, ST_PAPER, ST_PLAIN}, {ST_X, ST_PAPER, ST_PLAIN}, {ST_X, ST_PAPER, ST_PLAIN}},
                              {"predicted", "paper", "predicted_over_paper"}, "not predicted, or not in the paper", " sweep", NULL},
    [MODE_SWEEPS] = {"two sweeps", 0, 1, {"A", "B", "B / A"},
                     {{ST_X, ST_X, ST_PLAIN}, {ST_X, ST_X, ST_PLAIN}, {ST_X, ST_X, ST_PLAIN}},
                     {"a", "b", "b_over_a"}, "not measured in that sweep", " sweep",
                     "B / A compares the devices as well as the runs"},
    [MODE_PEER] = {"linbench against PyTorch (bench/peer), cell by cell", 1, 0, {"linbench", "peer", "linbench / peer"},
                   {{ST_PLAIN, ST_PLAIN, ST_PLAIN}, {ST_INT, ST_INT, ST_PLAIN}, {ST_PLAIN, ST_PLAIN, ST_PLAIN}},
                   {NULL}, "not measured on that side", "", NULL},
    [MODE_PREDICTED] = {"a sweep against its prediction", 1, 0, {"measured", "predicted", "ratio"},
                        {{ST_G4, ST_G4, ST_G3}, {ST_INT, ST_INT, ST_G3}, {ST_G4, ST_G4, ST_G3}},
                        {NULL}, "not in that directory", NULL,
                        "measured / predicted compares the devices as well as the model"},
    [MODE_PASSES] = {"a training step against the forward pass", 1, 1, {"forward", "train", "train / forward"},
                     {{ST_G4, ST_G4, ST_G3}, {ST_INT, ST_INT, ST_G3}, {ST_G4, ST_G4, ST_G3}},
                     {NULL}, "not in that directory", " sweep", NULL},
};
/* The peer's tables, by quantity: title and the column label of a model without a k axis. */
static const char *const own_title[Q_COUNT] = {"ms per sequence", "largest batch", "J per sequence"};
static const char *const own_unit[Q_COUNT] = {"ms", "batch", "J"};

/* --- cells ------------------------------------------------------------------------------------- */

/* num / den, or the marker that wins: "-", then ERR, OOM, NA. */
static LbGridCell ratio_of(LbGridCell num, LbGridCell den)
{
    if (num.kind == LB_GRID_VALUE && den.kind == LB_GRID_VALUE)
        return den.value > 0 ? (LbGridCell){LB_GRID_VALUE, num.value / den.value} : (LbGridCell){LB_GRID_ERROR, 0.0};
    static const LbGridCellKind order[4] = {LB_GRID_EMPTY, LB_GRID_ERROR, LB_GRID_OOM, LB_GRID_MISSING};
    for (int i = 0; i < 4; i++)
        if (num.kind == order[i] || den.kind == order[i])
            return (LbGridCell){order[i], 0.0};
    return (LbGridCell){LB_GRID_MISSING, 0.0};
}

/* A row's own value: ms per sequence, batch or J per sequence (NA without an energy counter). */
static LbGridCell own_cell(const LbCellResult *r, int q)
{
    if (!r)
        return (LbGridCell){LB_GRID_MISSING, 0.0};
    if (r->status != LB_CELL_OK)
        return (LbGridCell){r->status == LB_CELL_OOM ? LB_GRID_OOM : LB_GRID_ERROR, 0.0};
    const double v = q == Q_TIME ? r->ms_per_seq : q == Q_MEMORY ? (double)r->batch : r->energy_j_per_seq;
    return v > 0 || q != Q_ENERGY ? (LbGridCell){LB_GRID_VALUE, v} : (LbGridCell){LB_GRID_MISSING, 0.0};
}

/* One cell of a pairing: where it is, and its values [quantity][A, B, ratio]. */
typedef struct PairCell {
    LbModelKind model;
    int64_t n, k; /* k 0 for a model without a k axis */
    LbGridCell v[Q_COUNT][3];
} PairCell;

/* One pairing of the two sets: a grid of rows (n) by columns (k), or, where by_cell, one row per
 * cell (predicted and passes). */
typedef struct Pair {
    const Mode *mode;
    LbModelKind model, baseline;
    const LbPeerModel *peer; /* peer mode: B's variant */
    size_t rows, cols;
    int by_cell;
    PairCell *cell;
    int energy; /* some cell has energy on either side */
    int alone;  /* A alone, no B nor ratio: a training step, which the paper never timed */
} Pair;

/* The rows and columns of a pairing's grids: the union of both sides' n and of their k. */
typedef struct Axes {
    int64_t *n, *k;
    size_t nn, nk;
} Axes;

static void pair_free(Pair *p)
{
    free(p->cell);
    p->cell = NULL;
}

/* A grid of model's cells over n and k (one column, k 0, without a k axis), every value NA, or "-"
 * where the model has no such cell. */
static int pair_alloc(Pair *p, const Mode *mode, LbModelKind model, const Axes *ax)
{
    const int has_k = lb_model_has_k(model);
    *p = (Pair){.mode = mode, .model = model, .rows = ax->nn, .cols = has_k ? ax->nk : 1};
    p->cell = calloc(p->rows * p->cols + 1, sizeof *p->cell);
    if (!p->cell)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory comparing two results");
    for (size_t c = 0; c < p->rows * p->cols; c++) {
        PairCell *x = &p->cell[c];
        *x = (PairCell){model, ax->n[c / p->cols], has_k ? ax->k[c % p->cols] : 0, {{{0}}}};
        const LbGridCellKind kind = lb_model_cell_exists(model, x->n, x->k) ? LB_GRID_MISSING : LB_GRID_EMPTY;
        for (int q = 0; q < Q_COUNT; q++)
            for (int s = 0; s < 3; s++)
                x->v[q][s] = (LbGridCell){kind, 0.0};
    }
    return LB_OK;
}

/* A's and B's own values of a cell, and the ratios. */
static void fill_own(PairCell *x, const LbCellResult *ra, const LbCellResult *rb)
{
    for (int q = 0; q < Q_COUNT; q++) {
        x->v[q][0] = own_cell(ra, q);
        x->v[q][1] = own_cell(rb, q);
    }
}

static void fill_ratios(Pair *p)
{
    for (size_t c = 0; c < p->rows * p->cols; c++)
        for (int q = 0; q < Q_COUNT; q++) {
            LbGridCell *v = p->cell[c].v[q];
            v[2] = p->mode->b_over_a ? ratio_of(v[1], v[0]) : ratio_of(v[0], v[1]);
            p->energy |= q == Q_ENERGY && (v[0].kind == LB_GRID_VALUE || v[1].kind == LB_GRID_VALUE);
        }
}

/* The paper's Table 3 on the cells of a (NA where the paper has no such cell; all of them where a
 * is a training step, which the paper never timed). */
static int paper_grid(const LbGrid *a, int train, LbGrid *g)
{
    LbGrid t;
    LB_TRY(lb_paper_table3(&t));
    int rc = lb_grid_alloc_pair(g, a->model, a->baseline, a->n, a->rows, a->k, a->cols);
    for (size_t c = 0; rc == LB_OK && !train && c < g->rows * g->cols; c++)
        for (size_t i = 0; i < t.rows * t.cols && g->time[c].kind != LB_GRID_EMPTY; i++)
            if (t.n[i / t.cols] == g->n[c / g->cols] && t.k[i % t.cols] == g->k[c % g->cols] &&
                t.time[i].kind == LB_GRID_VALUE) {
                g->time[c] = t.time[i];
                g->memory[c] = t.memory[i];
            }
    lb_grid_free(&t);
    return rc;
}

/* Speedup modes: model against baseline within each side, over n and k; b NULL: the paper. */
static int pair_speedups(Pair *p, const Mode *mode, const LbSweepDir *a, const LbSweepDir *b, LbModelKind model,
                         LbModelKind baseline, const Axes *x)
{
    LbGrid g[2] = {0};
    LB_TRY(lb_grid_pair_from_raw(a->rows, a->count, model, baseline, x->n, x->nn, x->k, x->nk, &g[0]));
    int rc = b ? lb_grid_pair_from_raw(b->rows, b->count, model, baseline, x->n, x->nn, x->k, x->nk, &g[1])
               : paper_grid(&g[0], lb_sweep_is_train(a), &g[1]);
    if (rc == LB_OK)
        rc = pair_alloc(p, mode, model, x);
    if (rc == LB_OK) {
        p->baseline = baseline;
        for (size_t c = 0; c < p->rows * p->cols; c++)
            for (int s = 0; s < 2; s++) {
                p->cell[c].v[Q_TIME][s] = g[s].time[c];
                p->cell[c].v[Q_MEMORY][s] = g[s].memory[c];
                p->cell[c].v[Q_ENERGY][s] = g[s].energy[c];
            }
        fill_ratios(p);
    }
    lb_grid_free(&g[0]);
    lb_grid_free(&g[1]);
    return rc;
}

/* Peer mode: linbench's model against B's variant v, each side's own values. */
static int pair_peer(Pair *p, const LbSweepDir *a, const LbSweepDir *b, size_t v, LbModelKind model, const Axes *ax)
{
    LB_TRY(pair_alloc(p, &modes[MODE_PEER], model, ax));
    p->peer = &b->variants[v];
    for (size_t c = 0; c < p->rows * p->cols; c++) {
        PairCell *x = &p->cell[c];
        if (x->v[Q_TIME][0].kind != LB_GRID_EMPTY)
            fill_own(x, lb_result_row(a, 0, model, x->n, x->k), lb_result_row(b, v, p->peer->work, x->n, x->k));
    }
    fill_ratios(p);
    return LB_OK;
}

/* Predicted and passes: one row per cell, B's cells first, then those only A has. */
static int pair_cells(Pair *p, const Mode *mode, const LbSweepDir *a, const LbSweepDir *b)
{
    *p = (Pair){.mode = mode, .cols = 1, .by_cell = 1};
    p->cell = calloc(a->count + b->count + 1, sizeof *p->cell);
    if (!p->cell)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory comparing two results");
    const LbSweepDir *src[2] = {b, a};
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < src[s]->count; i++) {
            const LbCellResult *r = &src[s]->rows[i];
            const int64_t k = lb_model_has_k(r->model) ? r->k : 0;
            size_t j = 0;
            while (j < p->rows && !(p->cell[j].model == r->model && p->cell[j].n == r->n && p->cell[j].k == k))
                j++;
            if (j < p->rows)
                continue;
            PairCell *x = &p->cell[p->rows++];
            *x = (PairCell){r->model, r->n, k, {{{0}}}};
            fill_own(x, lb_result_row(a, 0, r->model, r->n, k), lb_result_row(b, 0, r->model, r->n, k));
        }
    fill_ratios(p);
    return LB_OK;
}

/* --- printing ---------------------------------------------------------------------------------- */

static void value_text(LbGridCell c, Style st, char *buf, size_t size)
{
    if (c.kind == LB_GRID_VALUE && st == ST_PAPER) /* one decimal below 10, as the paper prints */
        snprintf(buf, size, c.value < 10 ? "%.1fx" : "%.0fx", c.value);
    else if (c.kind == LB_GRID_VALUE && st == ST_INT)
        snprintf(buf, size, "%.0f", c.value);
    else if (c.kind == LB_GRID_VALUE && (st == ST_G4 || st == ST_G3))
        snprintf(buf, size, st == ST_G4 ? "%.4g" : "%.3g", c.value);
    else
        lb_grid_cell_text(&c, st == ST_X ? "x" : "", buf, size);
}

/* The strings of a pair's table: blocks A, B, ratio of quantity q; by cell, one block per quantity
 * (largest batch, ms per sequence), its columns A, B, ratio. */
typedef struct PairTable {
    const Pair *p;
    int q;
} PairTable;

static void pair_text(const void *ctx, size_t b, size_t r, size_t c, char *buf, size_t size)
{
    const PairTable *t = ctx;
    const Pair *p = t->p;
    const int q = p->by_cell ? (int)(b == 0 ? Q_MEMORY : Q_TIME) : t->q, side = p->by_cell ? (int)c : (int)b;
    if (c == SIZE_MAX && p->by_cell) {
        LbCellLabel cell;
        lb_cell_label(p->cell[r].model, p->cell[r].n, p->cell[r].k, cell);
        snprintf(buf, size, "%s %s", lb_model_name(p->cell[r].model), cell);
    } else if (c == SIZE_MAX) {
        snprintf(buf, size, "%lld", (long long)p->cell[r * p->cols].n);
    } else if (r == SIZE_MAX && p->by_cell) {
        snprintf(buf, size, "%s", p->mode->block[c]);
    } else if (r == SIZE_MAX && lb_model_has_k(p->model)) {
        snprintf(buf, size, "%lld", (long long)p->cell[c].k);
    } else if (r == SIZE_MAX) {
        snprintf(buf, size, "%s", !p->mode->own ? lb_model_name(p->model) : side == 2 ? "ratio" : own_unit[q]);
    } else {
        value_text(p->cell[p->by_cell ? r : r * p->cols + c].v[q][side], p->mode->style[q][side], buf, size);
    }
}

/* "Time saved (ms per sequence, standard / Linformer)": Table 3's pair as it always read. */
static void speedup_title(LbModelKind model, LbModelKind baseline, int q, char *buf, size_t size)
{
    const int paper = model == LB_TABLE3_MODEL && baseline == LB_TABLE3_BASELINE;
    const char *m = paper ? "Linformer" : lb_model_name(model), *b = lb_model_name(baseline);
    static const char *const what[Q_COUNT] = {"Time saved (ms per sequence", "Memory saved (largest batch",
                                              "Energy saved (joules per sequence"};
    snprintf(buf, size, "%s, %s / %s)", what[q], q == Q_MEMORY ? m : b, q == Q_MEMORY ? b : m);
}

static void pair_heading(FILE *out, LbFormat fmt, LbModelKind m, const char *against)
{
    const int has_k = lb_model_has_k(m);
    fprintf(out, fmt == LB_FORMAT_MD ? "### %s against %s%s%s%s\n\n" : "%s against %s%s%s%s\n", lb_model_name(m),
            against, has_k ? " (k: " : "", has_k ? lb_model_k_meaning(m) : "", has_k ? ")" : "");
}

/* A pair's tables, one per quantity, each its A, B and ratio side by side (A alone where the pair
 * is). energy_both 0: the energy table shows A alone (the paper has none). */
static void print_pair(FILE *out, LbFormat fmt, const Pair *p, int energy_both)
{
    if (p->peer)
        pair_heading(out, fmt, p->model, p->peer->name);
    for (int q = 0; q < (p->energy ? Q_COUNT : Q_ENERGY); q++) {
        char title[160];
        speedup_title(p->model, p->baseline, q, title, sizeof title);
        fprintf(out, fmt == LB_FORMAT_TEXT ? "%s\n" : p->mode->own ? "**%s**\n\n" : "### %s\n\n",
                p->mode->own ? own_title[q] : title);
        const PairTable t = {p, q};
        lb_table_print_fn(out, fmt, lb_model_has_k(p->model) ? "n \\ k" : "n", p->rows, p->cols, p->mode->block,
                          !p->alone && (q < Q_ENERGY || energy_both) ? 3 : 1, pair_text, &t);
        if (fmt == LB_FORMAT_TEXT)
            fputc('\n', out);
    }
}

/* A CSV row: the keys, the cell's n and k (empty without a k axis), then the fields. */
static int csv_row(FILE *out, const char *const *keys, size_t nkeys, const PairCell *x, char (*f)[40], size_t nf)
{
    char n[24], k[24] = "";
    const char *row[16];
    size_t o = 0;
    for (size_t i = 0; i < nkeys; i++)
        row[o++] = keys[i];
    snprintf(n, sizeof n, "%lld", (long long)x->n);
    if (lb_model_has_k(x->model))
        snprintf(k, sizeof k, "%lld", (long long)x->k);
    row[o++] = n;
    row[o++] = k;
    for (size_t i = 0; i < nf; i++)
        row[o++] = f[i];
    return lb_csv_write_record(out, row, o);
}

/* A row per cell the model has. Paper and sweeps (keys NULL): a header, then a row per quantity and
 * cell, grid,n,k,A,B,ratio (grid,n,k,A where A is alone). Peer: the keys, n, k, then A, B and ratio
 * of each quantity. */
static int print_csv(FILE *out, const Pair *p, const char *const *keys, size_t nkeys)
{
    static const char *const grid[Q_COUNT] = {"time", "memory", "energy"};
    const size_t sides = p->alone ? 1 : 3;
    const char *head[6] = {"grid", "n", "k", p->mode->csv[0], p->mode->csv[1], p->mode->csv[2]};
    if (!keys)
        LB_TRY(lb_csv_write_record(out, head, 3 + sides));
    for (int q = 0; q < (keys ? 1 : p->energy ? Q_COUNT : Q_ENERGY); q++)
        for (size_t c = 0; c < p->rows * p->cols; c++) {
            const PairCell *x = &p->cell[c];
            if (x->v[Q_TIME][0].kind == LB_GRID_EMPTY)
                continue;
            char f[Q_COUNT * 3][40];
            size_t o = 0;
            for (int y = keys ? 0 : q; y < (keys ? Q_COUNT : q + 1); y++) /* the peer's every quantity */
                for (size_t side = 0; side < (keys ? 3 : sides); side++)
                    lb_grid_cell_csv(&x->v[y][side], f[o++], sizeof f[0]);
            LB_TRY(csv_row(out, keys ? keys : &grid[q], keys ? nkeys : 1, x, f, o));
        }
    return LB_OK;
}

/* --- headers ------------------------------------------------------------------------------------ */

static const char *setting(const LbMeta *m, LbSettingId id)
{
    const char *v = lb_settings_meta_value(m, id);
    return v ? v : "";
}

/* What each side stored: storage_dtype, or dtype where a meta.csv has none. */
static const char *storage(const LbMeta *m)
{
    const char *v = lb_meta_get(m, "storage_dtype");
    return v && *v ? v : setting(m, LB_SET_DTYPE);
}

static void format_budget(const LbMeta *m, char *buf, size_t size)
{
    const char *b = lb_meta_get(m, "memory_budget_bytes");
    long long bytes;
    snprintf(buf, size, "?");
    if (b && lb_csv_parse_int64(b, &bytes) == 0 && bytes > 0)
        lb_format_size((uint64_t)bytes, buf, size);
}

/* One line on what a result ran: device, a training step, dtype, model shape, sharing/order, memory
 * budget. */
static void describe(FILE *out, const LbSweepDir *s)
{
    const char *v[LB_SET_RECORDED];
    for (size_t id = 0; id < LB_SET_RECORDED; id++) {
        const char *x = lb_settings_meta_value(&s->meta, (LbSettingId)id);
        v[id] = x && *x ? x : "?";
    }
    const char *dtype = v[LB_SET_DTYPE], *stored = lb_sweep_meta(s, "storage_dtype", dtype);
    char budget[48];
    format_budget(&s->meta, budget, sizeof budget);
    const int schedule = strcmp(v[LB_SET_K_SCHEDULE], "uniform") != 0 && strcmp(v[LB_SET_K_SCHEDULE], "?") != 0;
    const int limited = strcmp(v[LB_SET_MEM_LIMIT], "?") != 0; /* "?": empty, no --mem-limit */
    fprintf(out, "%s (%s), %s%s%s%s%s, %s layers, d_model %s, %s heads, ffn %s, %s sharing, %s order%s%.60s, memory budget %s%s%s%s",
            lb_sweep_meta(s, "device_name", "unknown device"), v[LB_SET_DEVICE], lb_sweep_is_train(s) ? "training step, " : "", dtype,
            strcmp(stored, dtype) ? " (stored as " : "", strcmp(stored, dtype) ? stored : "", strcmp(stored, dtype) ? ")" : "",
            v[LB_SET_LAYERS], v[LB_SET_DMODEL], v[LB_SET_HEADS], v[LB_SET_FFN], v[LB_SET_SHARING], v[LB_SET_ORDER],
            schedule ? ", k per layer " : "", schedule ? v[LB_SET_K_SCHEDULE] : "", budget,
            limited ? " (--" : "", limited ? lb_settings[LB_SET_MEM_LIMIT].flag : "",
            limited ? ")" : "");
}

int lb_compare_devices_differ(const LbSweepDir *a, const LbSweepDir *b, char *buf, size_t size)
{
    const int pa = a->kind == LB_RESULT_PREDICTED, pb = b->kind == LB_RESULT_PREDICTED;
    const char *na = lb_sweep_meta(a, pa ? "predict_card" : "device_name", "unknown device");
    const char *nb = lb_sweep_meta(b, pb ? "predict_card" : "device_name", "unknown device");
    if (strcmp(setting(&a->meta, LB_SET_DEVICE), setting(&b->meta, LB_SET_DEVICE)) == 0 &&
        (pa != pb || strcmp(na, nb) == 0))
        return 0;
    if (pa != pb)
        snprintf(buf, size, "measured on %s, predicted for %s", pa ? nb : na, pa ? na : nb);
    else
        snprintf(buf, size, "A ran on %s, B on %s", na, nb);
    return 1;
}

/* A line for each of the sides a, b (b may be NULL) whose run did not complete. */
static void print_statuses(FILE *out, const char *item, const Mode *m, const LbSweepDir *a, const LbSweepDir *b)
{
    const LbSweepDir *side[2] = {a, b};
    for (int s = 0; s < 2 && side[s]; s++) {
        const char *st = lb_sweep_meta(side[s], "status", NULL);
        if (st && strcmp(st, "complete") != 0)
            fprintf(out, "%s%s%s status: %s (cells not measured show NA)\n", item, m->block[s], m->statuses, st);
    }
}

/* The peer's header lines: its PyTorch (ending B's line), what differs between the runs, the
 * batches, each side's energy. */
static void print_peer_notes(FILE *out, const char *item, const LbSweepDir *lin, const LbSweepDir *peer)
{
    const LbMeta *m[2] = {&lin->meta, &peer->meta};
    const char *compiled = lb_meta_get(m[1], "compile"), *sdpa = lb_meta_get(m[1], "sdpa");
    fprintf(out, "; PyTorch %s, %s%s%s, timer %s\n", lb_sweep_meta(peer, "torch_version", "?"),
            compiled && strcmp(compiled, "1") == 0 ? "torch.compile" : "eager", sdpa && *sdpa ? ", SDPA " : "",
            sdpa && *sdpa ? sdpa : "", lb_sweep_meta(peer, "timer", "?"));
    const char *diff[8][3];
    int nd = 0;
    const char *dev[2] = {setting(m[0], LB_SET_DEVICE), setting(m[1], LB_SET_DEVICE)};
    const char *host[2] = {"", ""};
    const LbSweepDir *side[2] = {lin, peer};
    for (int s = 0; s < 2; s++) /* one CPU or two: the rows' hosts say */
        for (size_t i = 0; i < side[s]->count && !*host[s]; i++)
            host[s] = side[s]->rows[i].host;
    const char *name[2] = {lb_sweep_meta(lin, "device_name", "?"), lb_sweep_meta(peer, "device_name", "?")};
    if (strcmp(dev[0], dev[1]) != 0)
        diff[nd][0] = "device", diff[nd][1] = dev[0], diff[nd++][2] = dev[1];
    else if (strcmp(dev[0], "cpu") == 0 && *host[0] && *host[1] && strcmp(host[0], host[1]) != 0)
        diff[nd][0] = "host", diff[nd][1] = host[0], diff[nd++][2] = host[1];
    else if (strcmp(dev[0], "cpu") != 0 && strcmp(name[0], name[1]) != 0)
        diff[nd][0] = "device_name", diff[nd][1] = name[0], diff[nd++][2] = name[1];
    static const LbSettingId ids[] = {LB_SET_PASS, LB_SET_DTYPE, LB_SET_TF32, LB_SET_SHARING, LB_SET_ORDER};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        if (strcmp(setting(m[0], ids[i]), setting(m[1], ids[i])) != 0)
            diff[nd][0] = lb_settings[ids[i]].key, diff[nd][1] = setting(m[0], ids[i]), diff[nd++][2] = setting(m[1], ids[i]);
    char budget[2][48];
    format_budget(m[0], budget[0], sizeof budget[0]);
    format_budget(m[1], budget[1], sizeof budget[1]);
    if (strcmp(budget[0], budget[1]) != 0)
        diff[nd][0] = "memory budget", diff[nd][1] = budget[0], diff[nd++][2] = budget[1];
    if (nd == 0)
        fprintf(out, "%ssame: device, dtype, model shape, sharing, order and memory budget\n", item);
    else
        fprintf(out, "%sdiffer (linbench / peer): ", item);
    for (int i = 0; i < nd; i++)
        fprintf(out, "%s%s %s / %s%s", i ? "; " : "", diff[i][0], diff[i][1], diff[i][2], i + 1 == nd ? "\n" : "");
    const char *from = lb_meta_get(m[1], "batch_from");
    if (from && *from)
        fprintf(out, "%sbatch: the peer ran linbench's batches (--batch-from %s)\n", item, from);
    else
        fprintf(out, "%sbatch: each side its own largest within its memory budget\n", item);
    print_statuses(out, item, &modes[MODE_PEER], lin, peer);
    const char *const *label = modes[MODE_PEER].block;
    for (int s = 0; s < 2; s++) { /* why a side's J per sequence reads NA */
        const char *energy = lb_meta_get(m[s], "energy"), *note = lb_meta_get(m[s], "energy_note");
        if (!energy)
            fprintf(out, "%s%s energy: none (written before energy was measured)\n", item, label[s]);
        else if (*energy && strcmp(energy, "measured") != 0)
            fprintf(out, "%s%s energy: %s%s%s%s\n", item, label[s], energy, note && *note ? " (" : "",
                    note && *note ? note : "", note && *note ? ")" : "");
    }
}

/* A report's header: its title, a line for each side (against the paper, the paper's own), the
 * mode's notes, then a blank line. */
static void print_head(FILE *out, LbFormat fmt, const Mode *m, const LbSweepDir *a, const LbSweepDir *b)
{
    const char *item = fmt == LB_FORMAT_MD ? "- " : "  ";
    fprintf(out, fmt == LB_FORMAT_MD ? "## linbench compare: %s%s\n\n" : "linbench compare: %s%s\n", b ? "" : a->dir, m->title);
    const int w = (int)(strlen(m->block[0]) > strlen(m->block[1]) ? strlen(m->block[0]) : strlen(m->block[1]));
    const LbSweepDir *side[2] = {a, b};
    for (int s = 0; s < 2; s++) { /* each label padded to the longer */
        fprintf(out, "%s%s%s:%*s", s ? "\n" : "", item, m->block[s], 1 + w - (int)strlen(m->block[s]), "");
        if (b)
            fprintf(out, "%s: ", side[s]->dir);
        if (side[s])
            describe(out, side[s]);
    }
    if (!b && lb_sweep_is_train(a))
        fprintf(out, "none: the paper has no training table (its Table 3 times inference), so no ratio to it");
    else if (!b)
        fprintf(out, "%s, Linformer with layerwise sharing; precision and model size not stated", LB_PAPER_DEVICE);
    if (m == &modes[MODE_PEER]) {
        print_peer_notes(out, item, a, b); /* the peer's meta.csv holds linbench's keys */
        fputc('\n', out);
        return;
    }
    fputc('\n', out);
    char devices[512];
    if (m->devices && lb_compare_devices_differ(a, b, devices, sizeof devices))
        fprintf(out, "%sdevices differ: %s: %s\n", item, devices, m->devices);
    if (m == &modes[MODE_PREDICTED])
        fprintf(out, "%sroofline:  %s x %s of the rate, %s GB/s x %s, %s us per kernel\n", item,
                lb_sweep_meta(b, "predict_product_tflop_per_s", "?"), lb_sweep_meta(b, "predict_product_efficiency", "?"),
                lb_sweep_meta(b, "predict_bandwidth_gb_per_s", "?"), lb_sweep_meta(b, "predict_copy_efficiency", "?"),
                lb_sweep_meta(b, "predict_launch_us", "?"));
    if (m->statuses)
        print_statuses(out, item, m, a, b);
    fputc('\n', out);
}

/* --- the reports -------------------------------------------------------------------------------- */

static int dash_below_n(const Pair *p)
{
    for (size_t c = 0; c < p->rows * p->cols; c++)
        if (p->cell[c].v[Q_TIME][0].kind == LB_GRID_EMPTY && p->cell[c].k < p->cell[c].n)
            return 1;
    return 0;
}

/* Sorted union of two lists (malloc'd). */
static int64_t *union_of(const int64_t *a, size_t na, const int64_t *b, size_t nb, size_t *count)
{
    int64_t *u = malloc((na + nb + 1) * sizeof *u);
    if (u) {
        memcpy(u, a, na * sizeof *a);
        memcpy(u + na, b, nb * sizeof *b);
        *count = lb_sort_unique_int64(u, na + nb);
    }
    return u;
}

/* The pairs speedups.csv holds beyond Table 3's, for the models measured in a or b (b may be NULL),
 * under their heading where there is one. */
static size_t other_pairs(FILE *out, LbFormat fmt, const LbSweepDir *a, const LbSweepDir *b, LbSpeedupPair *pairs)
{
    int measured[LB_MODEL_COUNT], other[LB_MODEL_COUNT];
    (void)lb_models_measured(&a->meta, a->rows, a->count, measured); /* an unknown name leaves the known */
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
    if (kept > 0)
        fprintf(out, fmt == LB_FORMAT_MD ? "\n## Every other model (speedups.csv)\n\n" : "\nEvery other model (speedups.csv)\n\n");
    return kept;
}

/* Table 3's pair within each side over the union of both grids, then every other pair that
 * speedups.csv holds. b NULL: against the paper (a training step alone: the paper times inference
 * only), the other pairs as a's own grids, then breakdown.csv's tables. */
static int compare_speedups(FILE *out, const LbSweepDir *a, const LbSweepDir *b, const Axes *ax, LbFormat fmt)
{
    const int predicted = a->kind == LB_RESULT_PREDICTED, train = !b && lb_sweep_is_train(a);
    Mode mode = modes[b ? MODE_SWEEPS : predicted ? MODE_PREDICTED_PAPER : MODE_PAPER];
    if (train) {
        mode.title = " in the layout of the Linformer paper's Table 3";
        mode.na = predicted ? "not predicted" : "not measured";
    }
    Pair p = {0};
    int rc = pair_speedups(&p, &mode, a, b, a->grid.model, LB_TABLE3_BASELINE, ax);
    p.alone = train;
    if (rc == LB_OK && fmt == LB_FORMAT_CSV) {
        rc = print_csv(out, &p, NULL, 0);
    } else if (rc == LB_OK) {
        print_head(out, fmt, &mode, a, b);
        print_pair(out, fmt, &p, b != NULL);
        lb_table_print_legend(out, fmt, lb_grid_dash_meaning(dash_below_n(&p)), mode.na);
        if (!b && !predicted && !lb_grid_has_energy(&a->grid)) { /* a roofline has no energy model: nothing to explain */
            const char *note = lb_sweep_meta(a, "energy_note", "");
            fprintf(out, fmt == LB_FORMAT_MD ? "\nEnergy per sequence: not measured (%s).\n" : "Energy per sequence: not measured (%s)\n",
                    *note ? note : "a sweep from before linbench measured energy, or no cell of this grid has it");
        }
        LbSpeedupPair pairs[LB_SPEEDUP_PAIRS_MAX];
        const size_t np = other_pairs(out, fmt, a, b, pairs);
        for (size_t i = 0; i < np && rc == LB_OK; i++) {
            Pair o = {0};
            LbGrid g = {0};
            if (b && (rc = pair_speedups(&o, &mode, a, b, pairs[i].model, pairs[i].baseline, ax)) == LB_OK)
                print_pair(out, fmt, &o, 1);
            if (!b && (rc = lb_grid_pair_from_raw(a->rows, a->count, pairs[i].model, pairs[i].baseline, ax->n, ax->nn,
                                                  ax->k, ax->nk, &g)) == LB_OK) {
                char titles[Q_COUNT][160];
                for (int q = 0; q < Q_COUNT; q++)
                    speedup_title(g.model, g.baseline, q, titles[q], sizeof titles[q]);
                pair_heading(out, fmt, g.model, lb_model_name(g.baseline));
                rc = lb_grid_print_table(out, fmt, &g, (const char *const[3]){titles[0], titles[1], titles[2]}, NULL);
            }
            pair_free(&o);
            lb_grid_free(&g);
        }
        if (!b && rc == LB_OK)
            rc = lb_breakdown_compare(out, a, fmt); /* where the sweep ran with --breakdown */
    }
    pair_free(&p);
    return rc;
}

/* Whether linbench's model and the peer ran it with the same settings of its own (sharing, order
 * where the model reads them): 1, or 0 with the refusal in why. */
static int same_settings(const LbSweepDir *lin, const LbSweepDir *peer, LbModelKind m, char *why, size_t size)
{
    static const LbSettingId own[] = {LB_SET_SHARING, LB_SET_ORDER};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
        const char *flag = lb_settings[own[i]].flag, *a = setting(&lin->meta, own[i]), *b = setting(&peer->meta, own[i]);
        if (lb_model_reads_flag(m, flag) == 1 && strcmp(a, b) != 0) {
            snprintf(why, size, "linbench ran --%s %s, the peer %s: not the same work", flag, a, b);
            return 0;
        }
    }
    return 1;
}

/* Against a peer-only exact attention: time and energy saved = the peer's / linbench's, memory
 * saved = linbench's batch / the peer's, as Table 3 sets Linformer against standard. */
static int print_saved(FILE *out, LbFormat fmt, const LbSweepDir *lin, const LbSweepDir *peer, size_t v,
                       const Pair *p, const Axes *ax)
{
    LbGrid g;
    LB_TRY(lb_grid_alloc_pair(&g, p->model, p->peer->work, ax->n, ax->nn, ax->k, ax->nk));
    for (size_t c = 0; c < g.rows * g.cols; c++) {
        if (g.time[c].kind == LB_GRID_EMPTY)
            continue;
        const int64_t n = g.n[c / g.cols], k = g.k[c % g.cols];
        const LbCellResult *a = lb_result_row(lin, 0, p->model, n, k), *b = lb_result_row(peer, v, p->peer->work, n, k);
        lb_grid_set_cell(&g, c, b, a);
    }
    static const char *const titles[3] = {"time saved", "memory saved", "energy saved"};
    static const char *const units[3] = {"time", "memory", "energy"};
    pair_heading(out, fmt, p->model, p->peer->name);
    const int rc = lb_grid_print_table(out, fmt, &g, titles, units);
    lb_grid_free(&g);
    return rc;
}

static int compare_peer(FILE *out, const LbSweepDir *lin, const LbSweepDir *peer, const Axes *ax, LbFormat fmt)
{
    int measured[LB_MODEL_COUNT];
    (void)lb_models_measured(&lin->meta, lin->rows, lin->count, measured);
    static const char *const head[14] = {"comparison", "linbench_model", "peer_model", "n", "k",
                                         "linbench_ms_per_seq", "peer_ms_per_seq", "linbench_over_peer_time",
                                         "linbench_batch", "peer_batch", "linbench_over_peer_batch",
                                         "linbench_j_per_seq", "peer_j_per_seq", "linbench_over_peer_energy"};
    const int csv = fmt == LB_FORMAT_CSV, md = fmt == LB_FORMAT_MD;
    int rc = csv ? lb_csv_write_record(out, head, 14) : LB_OK;
    if (!csv)
        print_head(out, fmt, &modes[MODE_PEER], lin, peer);
    int any = 0, baselines = 0;
    for (size_t v = 0; v < peer->nvariants; v++)
        baselines += peer->variants[v].exact_baseline;
    for (int pass = 0; pass < 2 && rc == LB_OK; pass++) { /* the same work, then against the exact baseline */
        if (pass == 0 && !csv)
            fprintf(out, md ? "## The same work: linbench / peer\n\n"
                            : "The same work: linbench / peer (time below 1: linbench is faster; batch above 1: linbench fits more)\n\n");
        if (pass == 1 && !csv && baselines == 0)
            break;
        if (pass == 1 && !csv)
            fprintf(out, "%sAgainst the peer's exact attention\n%s = the peer's ms per sequence / linbench's; memory saved = "
                         "linbench's largest batch / the peer's (as Table 3 sets Linformer against standard)%s\n\n",
                    md ? "## " : "", md ? "\nTime saved" : "time saved", md ? "." : "");
        for (size_t v = 0; v < peer->nvariants && rc == LB_OK; v++) {
            const LbPeerModel *pm = &peer->variants[v];
            for (int m = 0; m < LB_MODEL_COUNT && rc == LB_OK; m++) {
                const int same = lb_peer_same_work(pm, (LbModelKind)m);
                if (!measured[m] || (pass == 0 ? !same : !pm->exact_baseline) || (pass == 1 && same && csv))
                    continue; /* a pair of both kinds is written once in CSV, as the same work */
                char why[160];
                if (same && !same_settings(lin, peer, (LbModelKind)m, why, sizeof why)) {
                    if (!csv)
                        fprintf(out, "%s against %s: not compared: %s\n\n", lb_model_name((LbModelKind)m), pm->name, why);
                    continue;
                }
                Pair p;
                if ((rc = pair_peer(&p, lin, peer, v, (LbModelKind)m, ax)) != LB_OK)
                    break;
                any = 1;
                const char *keys[3] = {pass == 0 ? "same_work" : "baseline", lb_model_name(p.model), pm->name};
                if (csv || pass == 1)
                    rc = csv ? print_csv(out, &p, keys, 3) : print_saved(out, fmt, lin, peer, v, &p, ax);
                else
                    print_pair(out, fmt, &p, 1);
                pair_free(&p);
            }
        }
    }
    if (rc == LB_OK && !csv) {
        if (!any)
            fprintf(out, "No pair to compare: the peer ran no model of the work linbench measured.\n");
        lb_table_print_legend(out, fmt, "no such cell (k >= n)", modes[MODE_PEER].na);
    }
    return rc;
}

/* The records of both sides' breakdown.csv, measured first. */
typedef struct Ops {
    LbBreakdownRecord *r[2];
    size_t count[2];
} Ops;

/* Side s's record of op in cell x, or NULL. */
static const LbBreakdownRecord *find_op(const Ops *o, int s, const PairCell *x, const char *op)
{
    for (size_t i = 0; i < o->count[s]; i++) {
        const LbBreakdownRecord *r = &o->r[s][i];
        if (r->model == x->model && r->n == x->n && (!lb_model_has_k(x->model) || r->k == x->k) &&
            strcmp(r->op, op) == 0)
            return r;
    }
    return NULL;
}

/* op in cell x: measured, predicted and their ratio of the batch (v[0..2]) and of ms per sequence,
 * an op's ms over its batch (v[3..5]); NaN where a side lacks it. */
static void op_values(const Ops *o, const PairCell *x, const char *op, double v[6])
{
    for (int s = 0; s < 2; s++) {
        const LbBreakdownRecord *r = find_op(o, s, x, op);
        v[s] = r ? (double)r->batch : NAN;
        v[3 + s] = r && r->batch > 0 ? r->ms / (double)r->batch : NAN;
    }
    v[2] = v[1] > 0 ? v[0] / v[1] : NAN;
    v[5] = v[4] > 0 ? v[3] / v[4] : NAN;
}

/* Whether cell x is of model m and both sides' breakdown.csv hold its pass. */
static int both_have_pass(const Ops *o, const PairCell *x, int m)
{
    double pass[6];
    op_values(o, x, "pass", pass);
    return x->model == (LbModelKind)m && !isnan(pass[0]) && !isnan(pass[1]);
}

/* Per model: each op's measured / predicted ms per sequence, one column per cell both hold. */
static int print_ops(FILE *out, LbFormat fmt, const Pair *p, const Ops *o)
{
    LbCellLabel *label = malloc((p->rows + 1) * sizeof *label);
    double *v = malloc(((size_t)LB_ROLE_COUNT + 1) * (p->rows + 1) * sizeof *v);
    int rc = label && v ? LB_OK : LB_FAIL(LB_ERR_NOMEM, "out of memory comparing a sweep with its prediction");
    for (int m = 0, any = 0; m < LB_MODEL_COUNT && rc == LB_OK; m++) {
        size_t nc = 0;
        for (size_t r = 0; r < p->rows; r++)
            if (both_have_pass(o, &p->cell[r], m))
                lb_cell_label(p->cell[r].model, p->cell[r].n, p->cell[r].k, label[nc++]);
        if (nc == 0)
            continue;
        if (!any++)
            fprintf(out, fmt == LB_FORMAT_MD ? "\n## Per operation (breakdown.csv): measured / predicted ms per sequence\n"
                                             : "\nPer operation (breakdown.csv): measured / predicted ms per sequence; far above the pass's\nratio: that operation runs far from its roofline on this card\n");
        const char *ops[LB_ROLE_COUNT + 1], *fmts[LB_ROLE_COUNT + 1];
        size_t nops = 0;
        for (int r = 0; r <= LB_ROLE_COUNT; r++) { /* the roles in order, then pass; those either side has */
            const char *op = r < LB_ROLE_COUNT ? lb_op_role_name((LbOpRole)r) : "pass";
            int present = 0;
            for (size_t i = 0, c = 0; i < p->rows; i++) {
                double x[6];
                if (!both_have_pass(o, &p->cell[i], m))
                    continue;
                op_values(o, &p->cell[i], op, x);
                present |= !isnan(x[0]) || !isnan(x[1]);
                v[nops * nc + c++] = x[5];
            }
            fmts[nops] = "%.3g";
            ops[nops] = op;
            nops += present;
        }
        lb_table_print_numbers(out, fmt, (LbModelKind)m, nc, label, nops, ops, v, fmts);
    }
    free(label);
    free(v);
    return rc;
}

/* Predicted and passes, CSV: model,n,k,op, then A's, B's and the ratio of the batch and of ms per
 * sequence, A and B named by the mode ("measured_batch"). Per cell its pass (raw.csv's), then each
 * op of breakdown.csv either side has. */
static int print_cells_csv(FILE *out, const Pair *p, const Ops *o)
{
    char f[4][40];
    for (int i = 0; i < 4; i++)
        snprintf(f[i], sizeof f[i], "%s_%s", p->mode->block[i % 2], i < 2 ? "batch" : "ms_per_seq");
    const char *head[10] = {"model", "n", "k", "op", f[0], f[1], "batch_ratio", f[2], f[3], "time_ratio"};
    LB_TRY(lb_csv_write_record(out, head, 10));
    for (size_t r = 0; r < p->rows; r++) {
        const PairCell *x = &p->cell[r];
        const char *model = lb_model_name(x->model);
        for (int role = -1; role < LB_ROLE_COUNT; role++) {
            char row[7][40] = {{0}};
            double v[6];
            snprintf(row[0], sizeof row[0], "%s", role < 0 ? "pass" : lb_op_role_name((LbOpRole)role));
            for (int i = 0; i < 6 && role < 0; i++) {
                const LbGridCell *c = &x->v[i < 3 ? Q_MEMORY : Q_TIME][i % 3];
                v[i] = c->kind == LB_GRID_VALUE ? c->value : NAN;
            }
            if (role >= 0)
                op_values(o, x, row[0], v);
            if (role >= 0 && isnan(v[0]) && isnan(v[1]))
                continue;
            for (int i = 0; i < 6; i++)
                if (isfinite(v[i]))
                    lb_csv_format_double(v[i], row[1 + i], sizeof row[0]);
            LB_TRY(csv_row(out, &model, 1, x, row, 7));
        }
    }
    return LB_OK;
}

/* Predicted and passes: a row per cell; a prediction's header says its roofline, and with
 * breakdown.csv on both sides each operation's ratio follows. */
static int compare_cells(FILE *out, const LbSweepDir *a, const LbSweepDir *b, LbFormat fmt, ModeId id)
{
    const int predicted = id == MODE_PREDICTED;
    Pair p;
    Ops o = {{NULL, NULL}, {0, 0}};
    LB_TRY(pair_cells(&p, &modes[id], a, b));
    int rc = LB_OK;
    for (int s = 0; s < 2 && predicted && rc == LB_OK; s++)
        rc = lb_breakdown_read((s ? b : a)->dir, 1, &o.r[s], &o.count[s]);
    if (rc == LB_OK && fmt == LB_FORMAT_CSV) {
        rc = print_cells_csv(out, &p, &o);
    } else if (rc == LB_OK) {
        static const char *const legend[2][2] = { /* passes, predicted; text, md */
            {"train / forward: how many times a forward pass the step costs (ms per sequence) and fits (largest batch)\nOOM: out of memory at batch 1   ERR: the cell failed   NA: %s\n",
             "\ntrain / forward: how many times a forward pass the step costs (ms per sequence) and fits (largest batch). `OOM`: out of memory at batch 1; `ERR`: the cell failed; `NA`: %s.\n"},
            {"ratio: measured / predicted; a time ratio above 1 is slower than the roofline says\nOOM: out of memory at batch 1   ERR: the cell failed   NA: %s\n",
             "\nratio: measured / predicted; a time ratio above 1 is slower than the roofline says. `OOM`: out of memory at batch 1; `NA`: %s.\n"}};
        static const char *const titles[2] = {"largest batch", "ms per sequence"};
        const PairTable t = {&p, -1};
        print_head(out, fmt, p.mode, a, b);
        lb_table_print_fn(out, fmt, "cell", p.rows, 3, titles, 2, pair_text, &t);
        fprintf(out, legend[predicted][fmt == LB_FORMAT_MD], p.mode->na);
        if (rc == LB_OK && o.count[0] > 0 && o.count[1] > 0)
            rc = print_ops(out, fmt, &p, &o);
    }
    pair_free(&p);
    free(o.r[0]);
    free(o.r[1]);
    return rc;
}

/* Whether b, not a, is the sweep (a peer's result or a prediction beside it): compare sets the
 * sweep as A whatever the order. */
static int sweep_second(const LbSweepDir *a, const LbSweepDir *b)
{
    return a->kind == LB_RESULT_PEER || (a->kind == LB_RESULT_PREDICTED && b->kind == LB_RESULT_SWEEP);
}

/* The first of ids, then where name_too the device's name, on which a and b differ, refused as
 * "LEAD: A ran KEY X and B VERBKEY Y: TAIL"; LB_OK where none does. */
static int refuse_difference(const LbSweepDir *a, const LbSweepDir *b, const LbSettingId *ids, size_t count,
                             int name_too, const char *lead, const char *verb, const char *tail)
{
    const int i = lb_settings_first_difference(&a->meta, &b->meta, ids, count);
    const char *key = i >= 0 ? lb_settings[ids[i]].key : "device_name";
    const char *x = i >= 0 ? setting(&a->meta, ids[i]) : lb_sweep_meta(a, key, "");
    const char *y = i >= 0 ? setting(&b->meta, ids[i]) : lb_sweep_meta(b, key, "");
    if (i < 0 && (!name_too || strcmp(x, y) == 0))
        return LB_OK;
    return LB_FAIL(LB_ERR_FORMAT, "%s: %s ran %s %s and %s %s%s %s: %s", lead, a->dir, key, x, b->dir, verb, key, y, tail);
}

int lb_compare_check(const LbSweepDir *a, const LbSweepDir *b)
{
    if (!b && a->kind == LB_RESULT_PEER)
        return LB_FAIL(LB_ERR_FORMAT,
                       "%s is a result of bench/peer (meta.csv's %s is %s), not of linbench sweep: set it beside a linbench sweep with linbench compare (or plot) LINBENCH_DIR %s",
                       a->dir, LB_META_TOOL, LB_TOOL_PEER, a->dir);
    if (!b)
        return LB_OK;
    if (a->kind == LB_RESULT_PEER && b->kind == LB_RESULT_PEER)
        return LB_FAIL(LB_ERR_FORMAT, "both directories are results of bench/peer: should be a linbench sweep and a peer's result");
    if (sweep_second(a, b))
        return lb_compare_check(b, a);
    static const LbSettingId work[] = {LB_SET_LAYERS, LB_SET_DMODEL, LB_SET_HEADS, LB_SET_FFN, LB_SET_VOCAB, /* the shape */
                                       LB_SET_DTYPE,  LB_SET_TF32,   LB_SET_SHARING, LB_SET_ORDER, LB_SET_CHUNK,
                                       LB_SET_K_SCHEDULE, LB_SET_PASS};
    static const LbSettingId same[] = {LB_SET_N,     LB_SET_K,     LB_SET_MODELS,  LB_SET_LAYERS,    LB_SET_DMODEL,
                                       LB_SET_HEADS, LB_SET_FFN,   LB_SET_VOCAB,   LB_SET_DTYPE,     LB_SET_TF32,
                                       LB_SET_SHARING, LB_SET_ORDER, LB_SET_CHUNK, LB_SET_K_SCHEDULE, LB_SET_DEVICE,
                                       LB_SET_MEM_LIMIT, LB_SET_MAX_BATCH, LB_SET_HEADROOM, LB_SET_AUTOTUNE};
    if (b->kind == LB_RESULT_PEER && strcmp(storage(&a->meta), storage(&b->meta)) != 0)
        return LB_FAIL(LB_ERR_FORMAT, "not the same work: %s stored %s and %s %s: compare needs both sides to run one model",
                       a->dir, storage(&a->meta), b->dir, storage(&b->meta));
    if (b->kind == LB_RESULT_PEER)
        return refuse_difference(a, b, work, 5, 0, "not the same work", "", "compare needs both sides to run one model");
    if (a->kind != b->kind)
        return refuse_difference(a, b, work, sizeof work / sizeof work[0], 0, "not the same work", "predicted ",
                                 "compare needs the prediction of the sweep's own model (linbench predict with the sweep's flags)");
    if (lb_sweep_is_train(a) != lb_sweep_is_train(b)) /* train / forward measures the pass alone when nothing else differs */
        return refuse_difference(a, b, same, sizeof same / sizeof same[0], 1, "not the same sweep but for the pass",
                                 "", "compare sets a training step beside a forward pass only where nothing else differs (sweep --pass train with the forward sweep's flags)");
    return LB_OK;
}

int lb_compare(FILE *out, const LbSweepDir *a, const LbSweepDir *b, LbFormat fmt)
{
    if (b && sweep_second(a, b))
        return lb_compare(out, b, a, fmt);
    if (b && b->kind != LB_RESULT_PEER && a->kind != b->kind)
        return compare_cells(out, a, b, fmt, MODE_PREDICTED);
    if (b && b->kind != LB_RESULT_PEER && lb_sweep_is_train(a) != lb_sweep_is_train(b)) /* the forward pass is A */
        return compare_cells(out, lb_sweep_is_train(a) ? b : a, lb_sweep_is_train(a) ? a : b, fmt, MODE_PASSES);
    Axes ax = {0};
    ax.n = union_of(a->grid.n, a->grid.rows, b ? b->grid.n : a->grid.n, b ? b->grid.rows : 0, &ax.nn);
    ax.k = union_of(a->grid.k, a->grid.cols, b ? b->grid.k : a->grid.k, b ? b->grid.cols : 0, &ax.nk);
    const int rc = !ax.n || !ax.k ? LB_FAIL(LB_ERR_NOMEM, "out of memory comparing two results")
                   : b && b->kind == LB_RESULT_PEER ? compare_peer(out, a, b, &ax, fmt)
                                                    : compare_speedups(out, a, b, &ax, fmt);
    free(ax.n);
    free(ax.k);
    return rc;
}
