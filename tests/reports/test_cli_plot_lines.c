/* linbench plot's figure of several models (time_per_seq) read from its gnuplot script: on a
 * sweep of every model of the table with four k (the sweep that issue 23 found unreadable:
 * gnuplot's own colours repeat after eight lines, and the Linformer's lines said only "k=32"),
 *   - every line names its model in its title, and the k where the model has one;
 *   - every line has its colour and dash written out (never gnuplot's cycle);
 *   - lines of one model share a hue (within 8 degrees), lines of two models differ by 30 or
 *     more, so a model reads as one colour family;
 *   - lines of one model differ from each other in shade or dash (each k tells apart);
 *   - one line per column of time_per_seq.plot.csv, the same titles in the same order.
 * Usage: test_cli_plot_lines PATH-TO-LINBENCH */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "reports/csv_io.h"
#include "tests/lib/check.h"
#include "tests/lib/spawn.h"

#define MAX_LINES 64

typedef struct PlotLine {
    int column;    /* the data column it draws */
    char title[96];
    unsigned rgb;  /* 0xRRGGBB */
    int dashtype;
} PlotLine;

/* Hue in degrees of 0xRRGGBB (HSV), or -1 for a grey, which has none. */
static double hue(unsigned rgb)
{
    const double r = (rgb >> 16 & 255) / 255.0, g = (rgb >> 8 & 255) / 255.0, b = (rgb & 255) / 255.0;
    const double hi = fmax(r, fmax(g, b)), lo = fmin(r, fmin(g, b)), c = hi - lo;
    if (c < 1e-9)
        return -1;
    double h = hi == r ? fmod((g - b) / c, 6.0) : hi == g ? (b - r) / c + 2 : (r - g) / c + 4;
    h *= 60;
    return h < 0 ? h + 360 : h;
}

static double hue_distance(double a, double b)
{
    const double d = fabs(a - b);
    return d > 180 ? 360 - d : d;
}

/* The lines of the script's plot command: "data using 1:C with ... linecolor rgb '#RRGGBB'
 * dashtype D ... title 'T'", separated by ", \". Returns the count, -1 when a line lacks a field. */
static int parse_lines(const char *gp, PlotLine *out, int max)
{
    const char *p = strstr(gp, "\nplot data using ");
    int count = 0;
    while (p && count < max) {
        const char *seg = strstr(p, "data using 1:");
        if (!seg)
            break;
        const char *next = strstr(seg + 1, "data using 1:");
        const char *end = strchr(seg, '\n');
        /* a segment ends where the next begins (a continued line) or at the command's last line */
        const char *stop = next ? next : end ? end : seg + strlen(seg);
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s", (int)(stop - seg), seg);
        PlotLine *l = &out[count];
        memset(l, 0, sizeof *l);
        const char *rgb = strstr(buf, "linecolor rgb '#"), *dt = strstr(buf, "dashtype "), *t = strstr(buf, "title '");
        if (sscanf(buf, "data using 1:%d", &l->column) != 1 || !rgb || sscanf(rgb, "linecolor rgb '#%6x'", &l->rgb) != 1 ||
            !dt || sscanf(dt, "dashtype %d", &l->dashtype) != 1 || !t)
            return -1;
        const char *q = strchr(t + 7, '\'');
        snprintf(l->title, sizeof l->title, "%.*s", q ? (int)(q - (t + 7)) : 0, t + 7);
        count++;
        /* the plot command ends at a line that does not end in a backslash */
        if (!next || (end && end < next && end[-1] != '\\'))
            break;
        p = next;
    }
    return count;
}

/* The model a line's title names first (its whole first word), or -1. */
static int title_model(const char *title)
{
    for (int m = 0; m < LB_MODEL_COUNT; m++) {
        const char *name = lb_model_name((LbModelKind)m);
        const size_t len = strlen(name);
        if (strncmp(title, name, len) == 0 && (title[len] == '\0' || title[len] == ' '))
            return m;
    }
    return -1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: test_cli_plot_lines PATH-TO-LINBENCH\n");
        return 1;
    }
    char *exe = argv[1];
    const char *scratch = lb_scratch_dir("cli-plot-lines");
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/sweep", scratch);

    /* Every model at n = 256, 512, 1024 and k = 32, 64, 128, 256 (a Linformer cell only where
     * k < n): 1 + 4 + 1 + 4 lines for the four models of today's table. */
    const int64_t ns[3] = {256, 512, 1024}, ks[4] = {32, 64, 128, 256};
    LbCellResult rows[3 * 4 * LB_MODEL_COUNT];
    size_t count = 0;
    for (int m = 0; m < LB_MODEL_COUNT; m++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < (lb_model_has_k((LbModelKind)m) ? 4 : 1); j++)
                if (m != LB_MODEL_LINFORMER || ks[j] < ns[i])
                    rows[count++] = fx_row((LbModelKind)m, ns[i], ks[j], 8, 1.0 + m + 0.1 * j + 0.5 * i, LB_CELL_OK);
    lb_check(fx_sweep_dir(dir, rows, count, "256,512,1024", "32,64,128,256", "Tesla V100-SXM2-16GB") == 0,
             "made a sweep directory");
    char list[512] = "", meta_path[4300];
    for (int m = 0; m < LB_MODEL_COUNT; m++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", m ? "," : "", lb_model_name((LbModelKind)m));
    snprintf(meta_path, sizeof meta_path, "%s/meta.csv", dir);
    LbMeta meta = {0};
    lb_check(lb_meta_read(meta_path, &meta) == LB_OK && lb_meta_set(&meta, "models", "%s", list) == LB_OK &&
                 lb_meta_write(meta_path, &meta) == LB_OK,
             "meta.csv's models set to %s", list);
    lb_meta_free(&meta);

    char *plot[] = {exe, "plot", dir, "--no-render", NULL};
    LbRun r = lb_run(plot);
    lb_check(r.code == 0, "plot: exit %d: %s", r.code, r.err);
    lb_run_free(&r);

    char path[4400];
    snprintf(path, sizeof path, "%s/time_per_seq.gp", dir);
    char *gp = lb_slurp(path);
    PlotLine line[MAX_LINES];
    int want = 0;
    for (int m = 0; m < LB_MODEL_COUNT; m++)
        want += lb_model_has_k((LbModelKind)m) ? 4 : 1;
    const int nl = gp ? parse_lines(gp, line, MAX_LINES) : -1;
    lb_check(nl == want, "time_per_seq.gp: %d lines with colour, dash and title: should be %d\n%s", nl, want,
             gp ? gp : "(no script)");
    free(gp);

    int model[MAX_LINES];
    for (int i = 0; i < nl; i++) {
        model[i] = title_model(line[i].title);
        lb_check(model[i] >= 0, "line %d's title \"%s\" names no model", i, line[i].title);
        if (model[i] >= 0 && lb_model_has_k((LbModelKind)model[i]))
            lb_check(strstr(line[i].title, " k=") != NULL, "line %d's title \"%s\" has no k", i, line[i].title);
        lb_check(hue(line[i].rgb) >= 0, "line %d (%s): #%06x is a grey: no hue to tell its model by", i, line[i].title,
                 line[i].rgb);
    }
    for (int i = 0; i < nl; i++)
        for (int j = i + 1; j < nl; j++) {
            if (model[i] < 0 || model[j] < 0)
                continue;
            const double d = hue_distance(hue(line[i].rgb), hue(line[j].rgb));
            if (model[i] == model[j]) {
                lb_check(d <= 8, "%s (#%06x) and %s (#%06x): one model, hues %.0f degrees apart", line[i].title,
                         line[i].rgb, line[j].title, line[j].rgb, d);
                lb_check(line[i].rgb != line[j].rgb || line[i].dashtype != line[j].dashtype,
                         "%s and %s: same colour #%06x and dash %d", line[i].title, line[j].title, line[i].rgb,
                         line[i].dashtype);
            } else {
                lb_check(d >= 30, "%s (#%06x) and %s (#%06x): two models, hues only %.0f degrees apart", line[i].title,
                         line[i].rgb, line[j].title, line[j].rgb, d);
            }
        }

    /* The data's columns are the lines, in order, under the same titles. */
    snprintf(path, sizeof path, "%s/time_per_seq.plot.csv", dir);
    LbCsvTable t;
    memset(&t, 0, sizeof t);
    if (lb_check(lb_csv_read_file(path, 0, &t) == LB_OK && t.rows >= 1, "time_per_seq.plot.csv parses")) {
        lb_check(t.row[0].count == (size_t)want + 1, "time_per_seq.plot.csv: %zu columns: should be %d", t.row[0].count,
                 want + 1);
        for (int i = 0; i < nl && (size_t)i + 1 < t.row[0].count; i++)
            lb_check(line[i].column == i + 2 && strcmp(line[i].title, t.row[0].fields[i + 1]) == 0,
                     "line %d draws column %d titled \"%s\": the data's column %d is \"%s\"", i, line[i].column,
                     line[i].title, i + 2, t.row[0].fields[i + 1]);
    }
    lb_csv_table_free(&t);

    lb_test_cleanup(scratch);
    return lb_test_finish("test_cli_plot_lines");
}
