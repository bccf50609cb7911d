/* linbench plot LINBENCH_DIR PEER_DIR: a linbench sweep and bench/peer's result in the same
 * figures (see plot.h, lb_plot_peer_write). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn/base/lists.h"
#include "attn/base/status.h"
#include "reports/plot.h"
#include "reports/plot_figure.h"
#include "reports/plot_style.h"
#include "reports/speedups.h"

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

typedef struct Figure {
    const LbSweepDir *lin;
    const LbSweepDir *peer;
    const int64_t *n;
    size_t nn;
    Line *line;
    size_t count;
    int what; /* 0 ms per sequence of each side, 1 linbench / peer ms per sequence, 2 linbench / peer batch,
               * 3 linbench / peer J per sequence */
    const char *name, *title, *ylabel;
} Figure;

/* The figure's value for line l at n, or NaN where a side has no ok row. */
static double value_at(const Figure *f, const Line *l, int64_t n)
{
    const LbCellResult *a = lb_result_row(f->lin, 0, l->model, n, l->k);
    const LbCellResult *b = l->peer ? lb_result_row(f->peer, l->variant, l->peer->work, n, l->k) : NULL;
    const int a_ok = a && a->status == LB_CELL_OK && a->ms_per_seq > 0 && a->batch > 0;
    const int b_ok = b && b->status == LB_CELL_OK && b->ms_per_seq > 0 && b->batch > 0;
    switch (f->what) {
    case 0:
        if (l->peer)
            return b_ok ? b->ms_per_seq : NAN;
        return a_ok ? a->ms_per_seq : NAN;
    case 1: return a_ok && b_ok ? a->ms_per_seq / b->ms_per_seq : NAN;
    case 2: return a_ok && b_ok ? (double)a->batch / (double)b->batch : NAN;
    default: /* a side without an energy counter has NaN there */
        return a_ok && b_ok && a->energy_j_per_seq > 0 && b->energy_j_per_seq > 0
                   ? a->energy_j_per_seq / b->energy_j_per_seq
                   : NAN;
    }
}

static void column_title(size_t c, char *buf, size_t size, const void *arg)
{
    snprintf(buf, size, "%s", ((const Figure *)arg)->line[c].title);
}

static double column_value(size_t c, int64_t n, const void *arg)
{
    const Figure *f = arg;
    return value_at(f, &f->line[c], n);
}

static void line_style(size_t c, char *with, char *title, size_t size, const void *arg)
{
    const Figure *f = arg;
    const Line *l = &f->line[c];
    snprintf(with, size, "linespoints linewidth %d linecolor rgb '#%06x' dashtype %d pointtype %d pointsize 0.9",
             l->peer && f->what == 0 ? 1 : 2, l->style.rgb, l->style.dashtype, l->style.pointtype);
    snprintf(title, size, "%s", l->title);
}

/* The figure's data and script, its name added to out. */
static int write_figure(const char *dir, const Figure *f, const char *sub, LbPlotList *out)
{
    const LbLineFigure fig = {f->name, f->title, f->title, sub, f->ylabel,
                              f->what ? "set logscale x\nset logscale y 2\n" : "set logscale x\nset logscale y\n",
                              "no cell measured on both sides",
                              f->what ? ", \\\n    1 with lines linewidth 1 linecolor rgb '#000000' dashtype 3 title 'equal'" : NULL,
                              f->n, f->nn, f->count, 0, column_title, column_value, line_style, f};
    return lb_plot_line_figure(dir, &fig, out);
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

static void title_of(const Line *l, int ratio, char *buf, size_t size)
{
    char lin[64], peer[96];
    const int has_k = lb_model_has_k(l->model);
    if (has_k)
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
    Figure time = {lin, peer, n, nn, line, count, 0, "versus_time_per_seq",
                   "Time per sequence, linbench and PyTorch (each at its batch)", "ms per sequence"};
    const char *device = lb_meta_get(&lin->meta, "device_name"), *torch = lb_meta_get(&peer->meta, "torch_version");
    char sub[256];
    snprintf(sub, sizeof sub, "linbench %s against PyTorch %s (bench/peer), %s", lin->dir, torch ? torch : "?",
             device ? device : "?");
    if (rc == LB_OK)
        rc = write_figure(out_dir, &time, sub, out);

    /* linbench / peer: one line per pair of the same work (lb_peer_same_work) and k, in the
     * linbench model's hue; against a peer-only exact attention dotted, with its point */
    count = 0;
    for (size_t v = 0; rc == LB_OK && v < peer->nvariants; v++)
        for (int m = 0; m < LB_MODEL_COUNT; m++)
            if (measured[m] && lb_peer_same_work(&peer->variants[v], (LbModelKind)m))
                count = add_lines(line, count, (LbModelKind)m, &peer->variants[v], v, k, nk, 1);
    Figure ratios[3] = {
        {lin, peer, n, nn, line, count, 1, "versus_time_ratio",
         "linbench / PyTorch, ms per sequence (below 1: linbench is faster)", "linbench / peer, ms per sequence"},
        {lin, peer, n, nn, line, count, 2, "versus_batch_ratio",
         "linbench / PyTorch, largest batch (above 1: linbench fits more)", "linbench / peer, largest batch"},
        {lin, peer, n, nn, line, count, 3, "versus_energy_ratio",
         "linbench / PyTorch, J per sequence (below 1: linbench spends less)", "linbench / peer, J per sequence"},
    };
    /* the energy figure only where some pair has energy on both sides */
    int figures = 2;
    for (size_t i = 0; i < nn && figures == 2; i++)
        for (size_t c = 0; c < count && figures == 2; c++)
            figures += !isnan(value_at(&ratios[2], &line[c], n[i]));
    for (int r = 0; r < figures && rc == LB_OK; r++)
        rc = write_figure(out_dir, &ratios[r], sub, out);
    free(n);
    free(k);
    free(line);
    return rc;
}
