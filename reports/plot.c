/* gnuplot scripts and data of a sweep, alone or beside bench/peer's result (see plot.h). */
#include "reports/plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn/base/lists.h"
#include "attn/base/status.h"
#include "reports/csv_io.h"
#include "reports/settings.h"
#include "reports/speedups.h"

/* A run setting of the sweep through the settings table (which knows what a key missing from an
 * older meta.csv means), or "?" when it has no value. */
static const char *setting(const LbSweepDir *s, LbSettingId id)
{
    const char *v = lb_settings_meta_value(&s->meta, id);
    return v && *v ? v : "?";
}

/* One line on what ran, for the titles (malloc'd: meta.csv values are as long as they are). The
 * dtype says what was stored when that differs from what was asked (the CPU reference stores
 * fp32 whatever --dtype says). */
static char *subtitle(const LbSweepDir *s)
{
    const char *dtype = setting(s, LB_SET_DTYPE);
    const char *storage = lb_sweep_meta(s, "storage_dtype", dtype);
    const int same = strcmp(storage, dtype) == 0;
    char *buf = NULL;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    fprintf(f, "%s, %s%s%s, L=%s d=%s h=%s f=%s, %s/%s", lb_sweep_meta(s, "device_name", "?"), dtype,
            same ? "" : " stored as ", same ? "" : storage, setting(s, LB_SET_LAYERS), setting(s, LB_SET_DMODEL),
            setting(s, LB_SET_HEADS), setting(s, LB_SET_FFN), setting(s, LB_SET_SHARING), setting(s, LB_SET_ORDER));
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* What a figure's title starts with: a prediction is never drawn as if measured, nor a training
 * step as the forward pass that the paper's Table 3 times. */
static const char *predicted(const LbSweepDir *s)
{
    const int p = s->kind == LB_RESULT_PREDICTED, t = lb_sweep_is_train(s);
    return p && t ? "Predicted, not measured: training step: " : p ? "Predicted, not measured: " : t ? "Training step: " : "";
}

typedef struct HeatArg {
    char name[64];
    char title[160];
    const LbGrid *grid;
    const LbGridCell *cells;
} HeatArg;

/* Heatmap data: k_index,n_index,value,label,n,k per cell; value NaN where there is no number
 * (the box is left blank, the label says why). */
static int heat_data_fn(FILE *f, const void *arg)
{
    const HeatArg *h = arg;
    const LbGrid *g = h->grid;
    const LbGridCell *cells = h->cells;
    static const char *const head[6] = {"k_index", "n_index", "value", "label", "n", "k"};
    LB_TRY(lb_csv_write_record(f, head, 6));
    for (size_t i = 0; i < g->rows; i++) {
        for (size_t j = 0; j < g->cols; j++) {
            const LbGridCell *c = &cells[i * g->cols + j];
            char v[6][32];
            const char *row[6] = {v[0], v[1], v[2], v[3], v[4], v[5]};
            snprintf(v[0], sizeof v[0], "%zu", j);
            snprintf(v[1], sizeof v[1], "%zu", i);
            if (c->kind == LB_GRID_VALUE)
                snprintf(v[2], sizeof v[2], "%.6g", c->value);
            else
                snprintf(v[2], sizeof v[2], "NaN");
            lb_grid_cell_text(c, "x", v[3], sizeof v[3]);
            snprintf(v[4], sizeof v[4], "%lld", (long long)g->n[i]);
            snprintf(v[5], sizeof v[5], "%lld", (long long)g->k[j]);
            LB_TRY(lb_csv_write_record(f, row, 6));
        }
    }
    return LB_OK;
}

static int heat_body(FILE *f, const void *arg)
{
    const HeatArg *h = arg;
    const LbGrid *g = h->grid;
    /* The colour scale spans the values present (log, so 0.5x and 2x sit evenly about 1x). */
    double lo = INFINITY, hi = -INFINITY;
    for (size_t c = 0; c < g->rows * g->cols; c++) {
        if (h->cells[c].kind != LB_GRID_VALUE)
            continue;
        lo = fmin(lo, h->cells[c].value);
        hi = fmax(hi, h->cells[c].value);
    }
    if (!(lo <= hi)) {
        lo = 1.0;
        hi = 2.0;
    } else if (hi <= lo * 1.01) {
        lo /= 1.5;
        hi *= 1.5;
    }
    fputs("set xlabel ", f);
    char xlabel[96];
    snprintf(xlabel, sizeof xlabel, "k (%s)", lb_model_k_meaning(g->model));
    lb_gp_quote(f, xlabel);
    fprintf(f, "\nset ylabel 'n (sequence length)'\n");
    fprintf(f, "set xrange [-0.5:%zu.5]\nset yrange [-0.5:%zu.5]\n", g->cols ? g->cols - 1 : 0,
            g->rows ? g->rows - 1 : 0);
    fputs("set xtics (", f);
    for (size_t j = 0; j < g->cols; j++)
        fprintf(f, "%s'%lld' %zu", j ? ", " : "", (long long)g->k[j], j);
    fputs(")\nset ytics (", f);
    for (size_t i = 0; i < g->rows; i++)
        fprintf(f, "%s'%lld' %zu", i ? ", " : "", (long long)g->n[i], i);
    fputs(")\nset tics scale 0\n", f);
    fprintf(f, "set logscale cb 2\nset cbrange [%.6g:%.6g]\nset cblabel 'speedup (x)'\n", lo, hi);
    /* Five ticks evenly spaced on the log scale: gnuplot's own put one or none on a short range. */
    fputs("set cbtics (", f);
    for (int t = 0; t < 5; t++)
        fprintf(f, "%s'%.3g' %.6g", t ? ", " : "", lo * pow(hi / lo, t / 4.0), lo * pow(hi / lo, t / 4.0));
    fputs(")\n", f);
    fputs("set palette defined (0 '#fff7bc', 0.5 '#fec44f', 1 '#ec7014')\n"
          "unset key\n",
          f);
    if (g->rows == 0 || g->cols == 0) {
        fputs("set label 1 'no cell to show' at graph 0.5, graph 0.5 center\n"
              "plot NaN notitle\n",
              f);
    } else {
        fputs("plot data skip 1 using 1:2:(0.5):(0.5):3 with boxxyerror fillstyle solid 1.0 noborder fillcolor palette, \\\n"
              "     data skip 1 using 1:2:4 with labels\n",
              f);
    }
    return LB_OK;
}

/* What a figure without a single point says instead, from its cells' states: a sweep whose every
 * cell ran out of memory has measured them all, and "not measured yet" would send its reader
 * waiting. */
static const char *empty_label(size_t oom, size_t failed, size_t pending)
{
    if (oom + failed == 0)
        return "no cell measured yet";
    if (pending)
        return "no cell measured yet: those done ran out of memory or failed";
    if (!failed)
        return "every cell ran out of memory (OOM at batch 1)";
    if (!oom)
        return "every cell failed (ERR): raw.csv's status says why";
    return "no cell measured: each ran out of memory or failed";
}

/* Whether any ok row has its energy (the device had a counter). */
static int rows_have_energy(const LbSweepDir *s)
{
    for (size_t r = 0; r < s->count; r++)
        if (s->rows[r].status == LB_CELL_OK && s->rows[r].energy_j_per_seq > 0)
            return 1;
    return 0;
}

/* --- lines of models against n ------------------------------------------------------------------ */

/* A peer-only exact attention's lines: near-black, apart from every model's hue. */
#define BASELINE_RGB 0x333333u
#define BASELINE_POINT 3 /* an asterisk */

/* One line: linbench's model at k (peer NULL), or a peer variant at k; for a ratio line both. */
typedef struct Line {
    LbModelKind model; /* linbench's model; for a peer line, its variant's work */
    int64_t k;
    const LbPeerModel *peer;
    size_t variant;
    LbLineStyle style;
    char title[192];
} Line;

/* What a figure's lines show: each side's own ms or J per sequence, or linbench / peer. */
enum { V_TIME, V_TIME_RATIO, V_BATCH_RATIO, V_ENERGY_RATIO, V_ENERGY };

typedef struct Figure {
    LbLineFigure fig; /* its lines and values filled by write_lines */
    const LbSweepDir *lin, *peer;
    const Line *line;
    int what;
} Figure;

/* The figure's value for line l at n, or NaN where a side has no ok row (or no energy). */
static double value_at(const Figure *f, const Line *l, int64_t n)
{
    const LbCellResult *a = lb_result_row(f->lin, 0, l->model, n, l->k);
    const LbCellResult *b = l->peer ? lb_result_row(f->peer, l->variant, l->peer->work, n, l->k) : NULL;
    const LbCellResult *own = l->peer ? b : a;
    if (f->what == V_TIME || f->what == V_ENERGY) {
        const double x = !own ? NAN : f->what == V_ENERGY ? own->energy_j_per_seq : own->ms_per_seq;
        return own && own->status == LB_CELL_OK && x > 0 ? x : NAN;
    }
    const int a_ok = a && a->status == LB_CELL_OK && a->ms_per_seq > 0 && a->batch > 0;
    const int b_ok = b && b->status == LB_CELL_OK && b->ms_per_seq > 0 && b->batch > 0;
    if (!a_ok || !b_ok)
        return NAN;
    if (f->what == V_TIME_RATIO)
        return a->ms_per_seq / b->ms_per_seq;
    if (f->what == V_BATCH_RATIO)
        return (double)a->batch / (double)b->batch;
    return a->energy_j_per_seq > 0 && b->energy_j_per_seq > 0 ? a->energy_j_per_seq / b->energy_j_per_seq : NAN;
}

/* The figure's lines from f->line (each titled and styled as its model) and their values, written;
 * its name added to out. */
static int write_lines(const char *dir, Figure *f, LbPlotList *out)
{
    const size_t count = f->fig.lines, nn = f->fig.nn;
    LbLine *lines = malloc((count + 1) * sizeof *lines);
    double *v = malloc((count * nn + 1) * sizeof *v);
    int rc = lines && v ? LB_OK : LB_FAIL(LB_ERR_NOMEM, "out of memory");
    for (size_t c = 0; rc == LB_OK && c < count; c++) {
        const Line *l = &f->line[c];
        snprintf(lines[c].column, sizeof lines[c].column, "%.95s", l->title);
        snprintf(lines[c].title, sizeof lines[c].title, "%s", l->title);
        snprintf(lines[c].with, sizeof lines[c].with,
                 "linespoints linewidth %d linecolor rgb '#%06x' dashtype %d pointtype %d pointsize 0.9",
                 l->peer && f->what == V_TIME ? 1 : 2, l->style.rgb, l->style.dashtype, l->style.pointtype);
        for (size_t i = 0; i < nn; i++)
            v[c * nn + i] = value_at(f, l, f->fig.n[i]);
    }
    if (rc == LB_OK) {
        f->fig.line = lines;
        f->fig.value = v;
        rc = lb_plot_line_figure(dir, &f->fig, out);
    }
    free(lines);
    free(v);
    return rc;
}

/* The style of a peer variant's line: its work's hue and shade at this k, open points and its
 * own dash; a peer-only exact attention near-black. */
static LbLineStyle peer_style(const LbPeerModel *pm, int index, int count)
{
    LbLineStyle s = lb_plot_line_style(pm->work, index, count);
    if (pm->exact_baseline) {
        s.rgb = BASELINE_RGB;
        s.pointtype = BASELINE_POINT;
        return s;
    }
    s.pointtype -= 1; /* gnuplot's open circle, square, triangle, diamond: one below the filled */
    s.dashtype = 1 + (s.dashtype % 5);
    return s;
}

/* A line's title: every line names its model ("linformer k=128"), since in a figure of several
 * "k=128" alone could be any of them. */
static void title_of(const Line *l, int ratio, char *buf, size_t size)
{
    char lin[64], peer[96];
    if (lb_model_has_k(l->model))
        snprintf(lin, sizeof lin, "%s k=%lld", lb_model_name(l->model), (long long)l->k);
    else
        snprintf(lin, sizeof lin, "%s", lb_model_name(l->model));
    if (l->peer && lb_model_has_k(l->peer->work))
        snprintf(peer, sizeof peer, "%s k=%lld", l->peer->name, (long long)l->k);
    else if (l->peer)
        snprintf(peer, sizeof peer, "%s", l->peer->name);
    if (ratio)
        snprintf(buf, size, "%s / %s", lin, peer);
    else
        snprintf(buf, size, "%s", l->peer ? peer : lin);
}

/* The lines of model at each k of the figure (one without a k axis), appended at line[count]: a
 * side's own (pm NULL: linbench's; else the peer variant v doing model's work), or with ratio set
 * linbench's model over the peer's variant, in the model's hue, dotted against a peer-only
 * exact attention. Returns the new count. */
static size_t add_lines(Line *line, size_t count, LbModelKind model, const LbPeerModel *pm, size_t v,
                        const int64_t *k, size_t nk, int ratio)
{
    const size_t cols = lb_model_has_k(model) ? nk : 1;
    for (size_t j = 0; j < cols; j++) {
        Line *l = &line[count++];
        *l = (Line){.model = model, .k = lb_model_has_k(model) ? k[j] : 0, .peer = pm, .variant = v};
        l->style = pm && !ratio ? peer_style(pm, (int)j, (int)cols) : lb_plot_line_style(model, (int)j, (int)cols);
        if (ratio && pm->exact_baseline) {
            l->style.dashtype = 3;
            l->style.pointtype = BASELINE_POINT;
        }
        title_of(l, ratio, l->title, sizeof l->title);
    }
    return count;
}

/* time_per_seq (energy_per_seq): a line per measured model and k of the sweep. */
static int time_figure(const char *dir, const LbSweepDir *s, const Line *line, size_t count, int energy,
                       const char *sub, LbPlotList *out)
{
    size_t oom = 0, failed = 0, pending = 0;
    for (size_t i = 0; i < s->grid.rows; i++)
        for (size_t c = 0; c < count; c++) {
            const LbCellResult *r = lb_result_row(s, 0, line[c].model, s->grid.n[i], line[c].k);
            oom += r && r->status == LB_CELL_OOM;
            failed += r && r->status != LB_CELL_OK && r->status != LB_CELL_OOM;
            pending += !r;
        }
    char title[256];
    const char *timed = lb_sweep_is_train(s) ? "training step" : "forward pass";
    if (energy)
        snprintf(title, sizeof title, "%sEnergy per sequence (mean power over the timed %ss x median %s / batch)",
                 predicted(s), timed, timed);
    else
        snprintf(title, sizeof title, "%sTime per sequence (median %s / batch, each model at its largest batch)",
                 predicted(s), timed);
    Figure f = {{energy ? "energy_per_seq" : "time_per_seq",
                 energy ? "energy per sequence against n, each model and k" : "time per sequence against n, each model and k",
                 title, sub, energy ? "joules per sequence" : "ms per sequence", "set logscale xy\n",
                 empty_label(oom, failed, pending), NULL, s->grid.n, s->grid.rows, count, 0, NULL, NULL},
                s, NULL, line, energy ? V_ENERGY : V_TIME};
    return write_lines(dir, &f, out);
}

/* g's time and memory heatmaps, and energy's where it has a value: TIME_speedup SUFFIX, titled
 * "Time saved: ms per sequence, BASELINE / MODEL" (memory the other way round). */
static int write_heatmaps(const LbSweepDir *s, const char *out_dir, const LbGrid *g, const char *suffix,
                          const char *model, const char *baseline, const char *sub, LbPlotList *out)
{
    static const char *const what[3][2] = {{"time", "Time saved: ms per sequence"},
                                           {"memory", "Memory saved: largest batch"},
                                           {"energy", "Energy saved: joules per sequence"}};
    for (int h = 0; h < (lb_grid_has_energy(g) ? 3 : 2); h++) {
        HeatArg heat = {.grid = g, .cells = h == 0 ? g->time : h == 1 ? g->memory : g->energy};
        snprintf(heat.name, sizeof heat.name, "%s_speedup%s", what[h][0], suffix);
        snprintf(heat.title, sizeof heat.title, "%s, %s / %s", what[h][1], h == 1 ? model : baseline,
                 h == 1 ? baseline : model);
        char full[256];
        snprintf(full, sizeof full, "%s%s", predicted(s), heat.title);
        const LbFigure fig = {heat.name, heat.title, full, sub, heat_data_fn, heat_body, &heat};
        LB_TRY(lb_plot_figure(out_dir, &fig, out));
    }
    return LB_OK;
}

/* model against baseline: a heatmap pair for a model with a k axis, a line figure otherwise; named
 * for the model alone against the paper's standard (time_speedup_MODEL), MODEL_vs_BASELINE
 * against the other exact baselines (chunked, flash). */
static int write_model_figures(const LbSweepDir *s, const char *out_dir, LbModelKind model, LbModelKind baseline,
                               const char *sub, LbPlotList *out)
{
    LbGrid g;
    LB_TRY(lb_grid_pair_from_raw(s->rows, s->count, model, baseline, s->grid.n, s->grid.rows, s->grid.k,
                                 s->grid.cols, &g));
    const char *b = lb_model_name(baseline);
    char m[48]; /* two model names of the table: short */
    if (baseline == LB_TABLE3_BASELINE)
        snprintf(m, sizeof m, "_%s", lb_model_name(model));
    else
        snprintf(m, sizeof m, "_%s_vs_%s", lb_model_name(model), b);
    const char *name = lb_model_name(model);
    int rc;
    if (lb_model_has_k(model)) {
        rc = write_heatmaps(s, out_dir, &g, m, name, b, sub, out);
    } else {
        size_t oom = 0, failed = 0, pending = 0;
        for (size_t c = 0; c < g.rows * g.cols; c++) {
            oom += g.time[c].kind == LB_GRID_OOM;
            failed += g.time[c].kind == LB_GRID_ERROR;
            pending += g.time[c].kind == LB_GRID_MISSING;
        }
        /* time, memory (and energy) saved against n */
        static const char *const saved[3] = {"time", "memory", "energy"};
        static const int point[3] = {7, 5, 9};
        LbLine lines[3];
        double *v = malloc((3 * g.rows + 1) * sizeof *v);
        for (int c = 0; c < 3 && v; c++) {
            snprintf(lines[c].column, sizeof lines[c].column, "%s_speedup", saved[c]);
            snprintf(lines[c].title, sizeof lines[c].title, "%s saved", saved[c]);
            snprintf(lines[c].with, sizeof lines[c].with, "linespoints linewidth 2 pointtype %d pointsize 0.8", point[c]);
            for (size_t i = 0; i < g.rows; i++) {
                const LbGridCell *cell = &(c == 0 ? g.time : c == 1 ? g.memory : g.energy)[i * g.cols];
                v[(size_t)c * g.rows + i] = cell->kind == LB_GRID_VALUE ? cell->value : NAN;
            }
        }
        char fname[64], title[256], full[300];
        snprintf(fname, sizeof fname, "speedup%s", m);
        snprintf(title, sizeof title, "%s against %s: time and memory saved", name, b);
        snprintf(full, sizeof full, "%s%s", predicted(s), title);
        const LbLineFigure fig = {fname, title, full, sub, "speedup (x)", "set logscale xy 2\n",
                                  empty_label(oom, failed, pending), NULL, g.n, g.rows, 3, lb_grid_has_energy(&g) ? 3 : 2,
                                  lines, v};
        rc = v ? lb_plot_line_figure(out_dir, &fig, out) : LB_FAIL(LB_ERR_NOMEM, "out of memory");
        free(v);
    }
    lb_grid_free(&g);
    return rc;
}

int lb_plot_write(const LbSweepDir *s, const char *out_dir, LbPlotList *out)
{
    if (out)
        out->count = 0;
    int measured[LB_MODEL_COUNT];
    /* A model list this linbench does not know still leaves the known ones and the rows' models. */
    (void)lb_models_measured(&s->meta, s->rows, s->count, measured);
    char *sub = subtitle(s);
    Line *line = malloc(((size_t)LB_MODEL_COUNT * (s->grid.cols + 1)) * sizeof *line);
    int rc = line && sub ? LB_OK : LB_FAIL(LB_ERR_NOMEM, "out of memory");
    if (rc == LB_OK)
        rc = write_heatmaps(s, out_dir, &s->grid, "", "Linformer", "standard", sub, out);
    size_t count = 0;
    for (int m = 0; m < LB_MODEL_COUNT && rc == LB_OK; m++)
        if (measured[m])
            count = add_lines(line, count, (LbModelKind)m, NULL, 0, s->grid.k, s->grid.cols, 0);
    for (int energy = 0; energy < 1 + rows_have_energy(s) && rc == LB_OK; energy++) /* in joules where there is a counter */
        rc = time_figure(out_dir, s, line, count, energy, sub, out);

    /* Table 3's heatmaps above are Linformer's against standard; every other pair speedups.csv
     * holds (each model against each exact baseline measured: standard, chunked, flash) here. */
    LbSpeedupPair pairs[LB_SPEEDUP_PAIRS_MAX];
    const size_t np = lb_speedup_pairs(measured, pairs);
    for (size_t p = 0; p < np && rc == LB_OK; p++)
        if (!(pairs[p].model == s->grid.model && pairs[p].baseline == LB_TABLE3_BASELINE))
            rc = write_model_figures(s, out_dir, pairs[p].model, pairs[p].baseline, sub, out);
    free(line);
    free(sub);
    return rc == LB_OK ? lb_breakdown_plot_write(s, out_dir, out) : rc; /* where the sweep ran with --breakdown */
}

int lb_plot_peer_write(const LbSweepDir *lin, const LbSweepDir *peer, const char *out_dir, LbPlotList *out)
{
    if (out)
        out->count = 0;
    int measured[LB_MODEL_COUNT];
    (void)lb_models_measured(&lin->meta, lin->rows, lin->count, measured);
    /* n: both sides' rows; k: linbench's grid and the peer's rows */
    const size_t most = lin->count + peer->count + lin->grid.cols + 1;
    int64_t *n = malloc(most * sizeof *n), *k = malloc(most * sizeof *k);
    Line *line = malloc((size_t)LB_MODEL_COUNT * (peer->nvariants + 1) * most * sizeof *line);
    int rc = n && k && line ? LB_OK : LB_FAIL(LB_ERR_NOMEM, "out of memory");
    size_t nn = 0, nk = 0;
    for (size_t i = 0; rc == LB_OK && i < lin->count; i++)
        n[nn++] = lin->rows[i].n;
    for (size_t i = 0; rc == LB_OK && i < peer->count; i++) {
        n[nn++] = peer->rows[i].n;
        if (lb_model_has_k(peer->rows[i].model))
            k[nk++] = peer->rows[i].k;
    }
    for (size_t j = 0; rc == LB_OK && j < lin->grid.cols; j++)
        k[nk++] = lin->grid.k[j];
    if (rc == LB_OK) {
        nn = lb_sort_unique_int64(n, nn);
        nk = lb_sort_unique_int64(k, nk);
    }

    /* time per sequence: every linbench model and k, then every peer variant and k */
    size_t count = 0;
    for (int m = 0; rc == LB_OK && m < LB_MODEL_COUNT; m++)
        if (measured[m])
            count = add_lines(line, count, (LbModelKind)m, NULL, 0, k, nk, 0);
    for (size_t v = 0; rc == LB_OK && v < peer->nvariants; v++)
        count = add_lines(line, count, peer->variants[v].work, &peer->variants[v], v, k, nk, 0);
    const char *device = lb_meta_get(&lin->meta, "device_name"), *torch = lb_meta_get(&peer->meta, "torch_version");
    char sub[256];
    snprintf(sub, sizeof sub, "linbench %s against PyTorch %s (bench/peer), %s", lin->dir, torch ? torch : "?",
             device ? device : "?");
    const char *what = "Time per sequence, linbench and PyTorch (each at its batch)";
    Figure time = {{"versus_time_per_seq", what, what, sub, "ms per sequence", "set logscale x\nset logscale y\n",
                    "no cell measured on both sides", NULL, n, nn, count, 0, NULL, NULL},
                   lin, peer, line, V_TIME};
    if (rc == LB_OK)
        rc = write_lines(out_dir, &time, out);

    /* linbench / peer: one line per pair of the same work (lb_peer_same_work) and k, in the
     * linbench model's hue; against a peer-only exact attention dotted, with its point */
    count = 0;
    for (size_t v = 0; rc == LB_OK && v < peer->nvariants; v++)
        for (int m = 0; m < LB_MODEL_COUNT; m++)
            if (measured[m] && lb_peer_same_work(&peer->variants[v], (LbModelKind)m))
                count = add_lines(line, count, (LbModelKind)m, &peer->variants[v], v, k, nk, 1);
    static const char *const ratio[3][3] = { /* name, title, what the y axis shows */
        {"versus_time_ratio", "linbench / PyTorch, ms per sequence (below 1: linbench is faster)", "ms per sequence"},
        {"versus_batch_ratio", "linbench / PyTorch, largest batch (above 1: linbench fits more)", "largest batch"},
        {"versus_energy_ratio", "linbench / PyTorch, J per sequence (below 1: linbench spends less)", "J per sequence"},
    };
    for (int r = 0; r < 3 && rc == LB_OK; r++) {
        char ylabel[64];
        snprintf(ylabel, sizeof ylabel, "linbench / peer, %s", ratio[r][2]);
        Figure f = {{ratio[r][0], ratio[r][1], ratio[r][1], sub, ylabel, "set logscale x\nset logscale y 2\n",
                     "no cell measured on both sides",
                     ", \\\n    1 with lines linewidth 1 linecolor rgb '#000000' dashtype 3 title 'equal'", n, nn, count, 0,
                     NULL, NULL},
                    lin, peer, line, V_TIME_RATIO + r};
        int points = r < 2; /* the energy figure only where some pair has energy on both sides */
        for (size_t i = 0; i < nn && !points; i++)
            for (size_t c = 0; c < count && !points; c++)
                points = !isnan(value_at(&f, &line[c], n[i]));
        if (points)
            rc = write_lines(out_dir, &f, out);
    }
    free(n);
    free(k);
    free(line);
    return rc;
}
