/* What every figure of `linbench plot` is written with (the sweep's, the peer's and the
 * breakdown's figures sit above it): its files, each written whole or not at all, the list of
 * their names, the gnuplot text their scripts share, their lines' styles, and gnuplot's run. */
#ifndef LB_REPORTS_PLOT_FIGURE_H
#define LB_REPORTS_PLOT_FIGURE_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stdint.h>
#include <stdio.h>

#include "reports/atomic_file.h"
#include "reports/sweep_dir.h"

/* The first line of every script linbench plot writes begins so: --force knows its figures by it. */
#define LB_PLOT_MARK "# linbench plot: "

/* The figures' names (NAME of NAME.gp), in the order they were written: Table 3's three heatmaps
 * and two per-sequence figures, three heatmaps per (model, baseline) pair at most, a breakdown per
 * model. */
#define LB_PLOT_MAX (5 + 3 * LB_MODEL_COUNT * LB_MODEL_COUNT + LB_MODEL_COUNT)
typedef struct LbPlotList {
    size_t count;
    char name[LB_PLOT_MAX][64];
} LbPlotList;

/* Figure NAME: NAME.plot.csv written by data, and NAME.gp: its opening ("# linbench plot: WHAT.";
 * where it lives, from ARG0, so its data and images sit beside it whatever the current directory;
 * output NAME.png), title over subtitle, the body, then the plot once more as NAME.svg. Each file
 * is written whole or not at all (reports/atomic_file.h); NAME is added to out (may be NULL).
 * LB_OK, LB_ERR_NOMEM, a writer's status, or LB_ERR_IO naming the file. */
typedef struct LbFigure {
    const char *name, *what, *title, *subtitle;
    LbAtomicWriter data, body; /* each called with arg, the figure's own */
    const void *arg;
} LbFigure;
int lb_plot_figure(const char *dir, const LbFigure *fig, LbPlotList *out);

/* s as a gnuplot single-quoted string: only ' needs escaping there, doubled; newlines dropped. */
void lb_gp_quote(FILE *f, const char *s);

/* One line of a figure against n: its data column's header, its key title, its style
 * ("linespoints ..."). */
typedef struct LbLine {
    char column[96], title[192], with[192];
} LbLine;

/* A figure of lines against n: NAME.plot.csv (header n and each line's column; a row per n with
 * each line's value[line * nn + i], %.6g, empty where NaN) and NAME.gp, whose plot command draws
 * the first `drawn` lines (0: all). Where no drawn line has a point the figure says `empty`
 * instead; `after` ends the plot command (NULL: nothing). */
typedef struct LbLineFigure {
    const char *name, *what, *title, *subtitle, *ylabel, *logscale, *empty, *after;
    const int64_t *n;
    size_t nn, lines, drawn;
    const LbLine *line;
    const double *value;
} LbLineFigure;
int lb_plot_line_figure(const char *dir, const LbLineFigure *fig, LbPlotList *out);

/* How a figure of several models tells its lines apart, written out per line (gnuplot's own cycle
 * repeats after eight): a hue per model, and within it a shade (darker to lighter as k grows) and
 * a dash per k; a point shape per model for print in grey. */
typedef struct LbLineStyle {
    unsigned rgb;  /* 0xRRGGBB */
    int dashtype;  /* 1 (solid) for the first k, then 2, 3, ... */
    int pointtype; /* one per model */
} LbLineStyle;

/* The style of line `index` (0 .. count - 1, in k order) of model m's `count` lines. */
LbLineStyle lb_plot_line_style(LbModelKind m, int index, int count);

/* Run `gnuplot script` (posix_spawn, no shell) and wait at most timeout_s seconds (a hung
 * gnuplot is killed); its NAME.png and NAME.svg are renamed into place beside the script, never
 * written through a link planted there. LB_OK, or LB_ERR_IO with gnuplot's exit status or the
 * time-out in the message. gnuplot's own messages go to our stderr. */
int lb_plot_render(const char *gnuplot, const char *script, int timeout_s);

#endif
