/* What every figure of linbench plot is written with (see plot_figure.h). */
#include "reports/plot_figure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn/base/status.h"
#include "reports/atomic_file.h"
#include "reports/csv_io.h"

void lb_gp_quote(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', f);
        if (*s != '\n' && *s != '\r')
            fputc(*s, f);
    }
    fputc('\'', f);
}

void lb_gp_preamble(FILE *f, const char *name, const char *what)
{
    fprintf(f,
            "# linbench plot: %s.\n"
            "# Written by linbench plot; render with: gnuplot %s.gp (from any directory).\n"
            "# Data: %s.plot.csv beside this script. Output: %s.png and %s.svg beside it.\n\n",
            what, name, name, name, name);
    fputs("here = '.'\n"
          "p = 0\n"
          "while (strstrt(ARG0[p+1:], '/') > 0) { p = p + strstrt(ARG0[p+1:], '/') }\n"
          "if (p > 1) { here = ARG0[1:p-1] } else { if (p == 1) { here = '/' } }\n"
          "if (!exists('linbench_out')) { linbench_out = here }\n",
          f);
    fprintf(f, "data = here.'/%s.plot.csv'\n", name);
    fputs("set datafile separator comma\n"
          "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
          "    set terminal pngcairo noenhanced size 900,650 font ',11'\n"
          "} else {\n"
          "    set terminal png noenhanced size 900,650\n"
          "}\n",
          f);
    fprintf(f, "set output linbench_out.'/%s.png'\n", name);
}

void lb_gp_title(FILE *f, const char *title, const char *subtitle)
{
    fputs("set title ", f);
    lb_gp_quote(f, title);
    fputs(".\"\\n\".", f);
    lb_gp_quote(f, subtitle);
    fputs(" noenhanced\n", f);
}

void lb_gp_svg(FILE *f, const char *name)
{
    fputs("set terminal svg noenhanced size 900,650 font 'sans,11'\n", f);
    fprintf(f, "set output linbench_out.'/%s.svg'\n", name);
    fputs("replot\nset output\n", f);
}

int lb_plot_write_file(const char *dir, const char *name, const char *ext, LbPlotWriteFn fn,
                       const LbSweepDir *s, const void *arg)
{
    char file[160];
    snprintf(file, sizeof file, "%.100s%s", name, ext);
    char *path = lb_path_join(dir, file);
    if (!path)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory");
    LbAtomicFile af;
    int rc = lb_atomic_open(&af, path);
    if (rc == LB_OK) {
        rc = fn(af.f, s, arg);
        if (rc == LB_OK && ferror(af.f))
            rc = LB_FAIL(LB_ERR_IO, "cannot write %s", path);
        if (rc == LB_OK)
            rc = lb_atomic_commit(&af);
        else
            lb_atomic_abort(&af);
    }
    free(path);
    return rc;
}

int lb_plot_write_wide(FILE *f, const int64_t *n, size_t nn, size_t columns, LbPlotColumnTitle title,
                       LbPlotColumnValue value, const void *arg)
{
    const size_t nf = columns + 1;
    char (*v)[96] = malloc(nf * sizeof *v);
    const char **row = malloc(nf * sizeof *row);
    int rc = LB_OK;
    if (!v || !row) {
        rc = LB_FAIL(LB_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (size_t c = 0; c < nf; c++)
        row[c] = v[c];
    snprintf(v[0], sizeof v[0], "n");
    for (size_t c = 0; c < columns; c++)
        title(c, v[c + 1], sizeof v[0], arg);
    rc = lb_csv_write_record(f, row, nf);
    for (size_t i = 0; rc == LB_OK && i < nn; i++) {
        snprintf(v[0], sizeof v[0], "%lld", (long long)n[i]);
        for (size_t c = 0; c < columns; c++) {
            const double x = value(c, n[i], arg);
            if (isnan(x))
                v[c + 1][0] = '\0';
            else
                snprintf(v[c + 1], sizeof v[0], "%.6g", x);
        }
        rc = lb_csv_write_record(f, row, nf);
    }
out:
    free(v);
    free(row);
    return rc;
}

void lb_plot_add_name(LbPlotList *out, const char *name)
{
    if (out && out->count < LB_PLOT_MAX)
        snprintf(out->name[out->count++], sizeof out->name[0], "%.63s", name);
}


void lb_gp_n_axis(FILE *f, const int64_t *n, size_t nn)
{
    fprintf(f, "set xrange [%.6g:%.6g]\nset xtics (", (double)n[0] / 1.4, (double)n[nn - 1] * 1.4);
    for (size_t i = 0; i < nn; i++)
        fprintf(f, "%s'%lld' %lld", i ? ", " : "", (long long)n[i], (long long)n[i]);
    fputs(")\n", f);
}

void lb_gp_empty(FILE *f, const char *label)
{
    fprintf(f, "unset logscale\nset label 1 '%s' at graph 0.5, graph 0.5 center\nplot [0:1][0:1] NaN notitle\n", label);
}

static int line_data(FILE *f, const LbSweepDir *s, const void *arg)
{
    (void)s;
    const LbLineFigure *fig = arg;
    return lb_plot_write_wide(f, fig->n, fig->nn, fig->lines, fig->column, fig->value, fig->arg);
}

static int line_script(FILE *f, const LbSweepDir *s, const void *arg)
{
    (void)s;
    const LbLineFigure *fig = arg;
    const size_t drawn = fig->drawn ? fig->drawn : fig->lines;
    lb_gp_preamble(f, fig->name, fig->what);
    lb_gp_title(f, fig->title, fig->subtitle);
    fprintf(f, "set xlabel 'n (sequence length)'\nset ylabel '%s'\n%sset grid\nset key left top\n", fig->ylabel,
            fig->logscale);
    int points = 0;
    for (size_t i = 0; i < fig->nn; i++)
        for (size_t l = 0; l < drawn; l++)
            points += !isnan(fig->value(l, fig->n[i], fig->arg));
    if (points == 0) {
        lb_gp_empty(f, fig->empty);
    } else {
        lb_gp_n_axis(f, fig->n, fig->nn);
        /* each line's colour, dash and title written out: gnuplot's own cycle repeats after eight */
        for (size_t l = 0; l < drawn; l++) {
            char with[192], title[192];
            fig->style(l, with, title, sizeof with, fig->arg);
            fprintf(f, "%s data using 1:%zu with %s title ", l ? ", \\\n    " : "plot", l + 2, with);
            lb_gp_quote(f, title);
        }
        fprintf(f, "%s\n", fig->after ? fig->after : "");
    }
    lb_gp_svg(f, fig->name);
    return LB_OK;
}

int lb_plot_line_figure(const char *dir, const LbLineFigure *fig, LbPlotList *out)
{
    LB_TRY(lb_plot_write_file(dir, fig->name, ".plot.csv", line_data, NULL, fig));
    LB_TRY(lb_plot_write_file(dir, fig->name, ".gp", line_script, NULL, fig));
    lb_plot_add_name(out, fig->name);
    return LB_OK;
}
