/* What every figure of `linbench plot` is written with (the sweep's, the peer's and the
 * breakdown's figures sit above it): its files, each written whole or not at all, the list of
 * their names, and the gnuplot text their scripts share. */
#ifndef LB_REPORTS_PLOT_FIGURE_H
#define LB_REPORTS_PLOT_FIGURE_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stdint.h>
#include <stdio.h>

#include "reports/sweep_dir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The figures' names (NAME of NAME.gp), in the order they were written: Table 3's three heatmaps
 * and two per-sequence figures, three heatmaps per (model, baseline) pair at most, a breakdown per
 * model. */
#define LB_PLOT_MAX (5 + 3 * LB_MODEL_COUNT * LB_MODEL_COUNT + LB_MODEL_COUNT)
typedef struct LbPlotList {
    size_t count;
    char name[LB_PLOT_MAX][64];
} LbPlotList;

/* name added to out (NULL: nothing). */
void lb_plot_add_name(LbPlotList *out, const char *name);

/* Writes one file of a figure into f; arg is the figure's own. LB_OK or an error status. */
typedef int (*LbPlotWriteFn)(FILE *f, const LbSweepDir *s, const void *arg);

/* DIR/NAME.EXT written by fn, atomically (reports/atomic_file.h). LB_OK, LB_ERR_NOMEM, fn's
 * status, or LB_ERR_IO naming the file that could not be written. */
int lb_plot_write_file(const char *dir, const char *name, const char *ext, LbPlotWriteFn fn,
                       const LbSweepDir *s, const void *arg);

/* A figure's lines as one wide table, through libcsv: header `n` and each line's title, then one
 * row per n with each line's value (%.6g), empty where value gives NaN. title(c) names line c
 * (at most 95 bytes kept); value(c, n) is its value at n. */
typedef void (*LbPlotColumnTitle)(size_t column, char *buf, size_t size, const void *arg);
typedef double (*LbPlotColumnValue)(size_t column, int64_t n, const void *arg);
int lb_plot_write_wide(FILE *f, const int64_t *n, size_t nn, size_t columns, LbPlotColumnTitle title,
                       LbPlotColumnValue value, const void *arg);

/* s as a gnuplot single-quoted string: only ' needs escaping there, doubled; newlines dropped. */
void lb_gp_quote(FILE *f, const char *s);

/* The opening of script NAME.gp ("# linbench plot: WHAT."): where it lives (from ARG0, so the data
 * and images sit beside it whatever the current directory), its data file NAME.plot.csv and its
 * PNG output NAME.png. */
void lb_gp_preamble(FILE *f, const char *name, const char *what);

/* A two-line title: title, then subtitle below it, both quoted. */
void lb_gp_title(FILE *f, const char *title, const char *subtitle);

/* Render the plot set up above once more, as NAME.svg. */
void lb_gp_svg(FILE *f, const char *name);

/* A figure of lines against n: NAME.plot.csv (lb_plot_write_wide: n, a column per line) and
 * NAME.gp, whose plot command draws the first `drawn` lines (0: all), each titled and styled by
 * style(): "linespoints linewidth 2 ..." in with, its key title in title. Where no drawn line has
 * a point the figure says `empty` instead; `after` ends the plot command (NULL: nothing). */
typedef struct LbLineFigure {
    const char *name, *what, *title, *subtitle, *ylabel, *logscale, *empty, *after;
    const int64_t *n;
    size_t nn, lines, drawn;
    LbPlotColumnTitle column;
    LbPlotColumnValue value;
    void (*style)(size_t line, char *with, char *title, size_t size, const void *arg);
    const void *arg;
} LbLineFigure;
int lb_plot_line_figure(const char *dir, const LbLineFigure *fig, LbPlotList *out);

/* The n axis of a figure against n: its range and a tic per n (nn > 0). */
void lb_gp_n_axis(FILE *f, const int64_t *n, size_t nn);

/* A figure without a point: the label in its middle instead. */
void lb_gp_empty(FILE *f, const char *label);

#ifdef __cplusplus
}
#endif

#endif
