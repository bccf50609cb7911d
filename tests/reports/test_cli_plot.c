/* linbench plot end to end, on sweep directories made from rows: scripts and data without gnuplot
 * and with --no-render, an empty figure's label, bad input; a sweep of every model (its figures,
 * time_per_seq's lines told apart by hue, shade and dash, and their data); a training step's
 * titles; with gnuplot on PATH, the images (each PNG decoded, each SVG whole) and their data.
 * Usage: test_cli_plot PATH-TO-LINBENCH */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attn/base/paths.h"
#include "expect.h"
#include "fixture.h"
#include "png_check.h"
#include "reports/csv_io.h"

static char *bin;
static const char *scratch;
static const char *const paper_figures[3] = {"time_speedup", "memory_speedup", "time_per_seq"};

static void check_scripts_only(const char *dir, LbRun r, const char *what)
{
    lb_check(r.code == 0, "%s: exit %d: %s", what, r.code, r.err);
    lb_check(lb_lines(r.out) == 1 && strstr(r.out, "render with: gnuplot "), "%s: one line on how to render:\n%s",
             what, r.out);
    for (int i = 0; i < 3; i++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s.gp", dir, paper_figures[i]);
        lb_check(lb_exists(path) && strstr(r.out, path), "%s: %s written and named in the line", what, path);
        snprintf(path, sizeof path, "%s/%s.plot.csv", dir, paper_figures[i]);
        lb_check(lb_exists(path), "%s: %s written", what, path);
        snprintf(path, sizeof path, "%s/%s.png", dir, paper_figures[i]);
        lb_check(!lb_exists(path), "%s: %s should not be rendered", what, path);
    }
    lb_run_free(&r);
}

/* Scripts without images, the figure without a point, bad input. */
static void check_scripts(void)
{
    LbCellResult rows[] = {FX_STD(512, 40, 2.0), FX_LIN(512, 128, 68, 1.25), FX_LIN(512, 256, 60, 1.6)};
    char dir[4200], other[4200];
    snprintf(dir, sizeof dir, "%s/sweep", scratch);
    lb_check(fx_sweep_dir(dir, rows, 3, "512", "128,256", "Tesla V100-SXM2-16GB") == 0, "made a sweep directory");

    /* No gnuplot on PATH. */
    char *av[] = {bin, "plot", dir, NULL};
    lb_child_path = "/nonexistent-linbench-test";
    LbRun r = lb_run(av);
    lb_child_path = NULL;
    lb_check(strstr(r.out, "gnuplot is not on PATH") != NULL, "without gnuplot, says so: %s", r.out);
    check_scripts_only(dir, r, "no gnuplot");

    /* --no-render, into another directory. */
    snprintf(other, sizeof other, "%s/scripts", scratch);
    check_scripts_only(other, lb_run(LB_ARGV(bin, "plot", "--no-render", "-o", other, dir)), "--no-render --out");

    /* A figure without a point says why: every cell out of memory is not "not measured yet". */
    LbCellResult oom[] = {fx_row(LB_MODEL_STANDARD, 512, 0, 0, 0, LB_CELL_OOM),
                          fx_row(LB_MODEL_LINFORMER, 512, 128, 0, 0, LB_CELL_OOM),
                          fx_row(LB_MODEL_LINFORMER, 512, 256, 0, 0, LB_CELL_OOM)};
    static const struct {
        const char *name;
        size_t rows;
        const char *label;
    } empty[] = {{"all-oom", 3, "'every cell ran out of memory (OOM at batch 1)'"},
                 {"some-oom", 1, "'no cell measured yet: those done ran out of memory or failed'"},
                 {"none-yet", 0, "'no cell measured yet'"}};
    for (size_t i = 0; i < sizeof empty / sizeof empty[0]; i++) {
        char edir[4300];
        snprintf(edir, sizeof edir, "%s/%s", scratch, empty[i].name);
        lb_check(fx_sweep_dir(edir, oom, empty[i].rows, "512", "128,256", "Tesla V100-SXM2-16GB") == 0, "made %s", edir);
        lb_run_ok(LB_ARGV(bin, "plot", "--no-render", edir), empty[i].name);
        char *script = lb_slurp_in(edir, "time_per_seq.gp");
        lb_check(script && strstr(script, empty[i].label), "%s: time_per_seq.gp's label should be %s:\n%s", empty[i].name,
                 empty[i].label, script ? script : "(none)");
        free(script);
    }

    /* Bad input. */
    lb_check_refusal(lb_run(LB_ARGV(bin, "plot")), "no directory", "plot needs a sweep directory");
    lb_check_refusal(lb_run(LB_ARGV(bin, "plot", (char *)scratch)), "a directory without raw.csv", "no raw.csv in it");
    char file[4400];
    snprintf(file, sizeof file, "%s/raw.csv", dir);
    lb_check_refusal(lb_run(LB_ARGV(bin, "plot", dir, "--out", file)), "--out naming a file",
                     "for --out: not a directory");

    /* An --out that cannot be created: a runtime failure, exit 1. */
    r = lb_run(LB_ARGV(bin, "plot", "--no-render", dir, "--out", "/proc/linbench-test/figures"));
    lb_check(r.code == 1 && lb_lines(r.err) == 1 && strstr(r.err, "/proc/linbench-test"),
             "unwritable --out: exit %d: should be 1 with one line: %s", r.code, r.err);
    lb_run_free(&r);

    fx_says(lb_run(LB_ARGV(bin, "plot", "--help")), "--help lists every flag with its default", "--out", "--no-render",
            "default");
}

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

/* The lines of the script's plot command, one a text line: "[plot] data using 1:C with ...
 * linecolor rgb '#RRGGBB' dashtype D ... title 'T'", each but the last ending in ", \". Returns the
 * count, -1 when a line lacks a field. */
static int parse_lines(const char *gp, PlotLine *out, int max)
{
    const char *p = strstr(gp, "\nplot data using ");
    int count = 0;
    for (int more = p != NULL; more && count < max; count++) {
        const char *end = strchr(++p, '\n');
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s", end ? (int)(end - p) : (int)strlen(p), p);
        PlotLine *l = &out[count];
        memset(l, 0, sizeof *l);
        const char *seg = strstr(buf, "data using 1:"), *rgb = strstr(buf, "linecolor rgb '#"),
                   *dt = strstr(buf, "dashtype "), *t = strstr(buf, "title '");
        if (!seg || sscanf(seg, "data using 1:%d", &l->column) != 1 || !rgb ||
            sscanf(rgb, "linecolor rgb '#%6x'", &l->rgb) != 1 || !dt || sscanf(dt, "dashtype %d", &l->dashtype) != 1 || !t)
            return -1;
        const char *q = strchr(t + 7, '\'');
        snprintf(l->title, sizeof l->title, "%.*s", q ? (int)(q - (t + 7)) : 0, t + 7);
        more = end && end[-1] == '\\';
        p = end;
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

/* DIR/PREFIX MODEL.gp written and named in plot's listing. */
static void check_written(const char *dir, const char *listed, const char *prefix, const char *model)
{
    char name[96];
    snprintf(name, sizeof name, "%s%s.gp", prefix, model);
    lb_check(lb_exists_in(dir, name) && strstr(listed, name), "plot wrote and named %s: %s", name, listed);
}

/* A sweep of every model: the figures per pair, and time_per_seq's lines and data. */
static void check_models(void)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/models", scratch);
    LbCellResult rows[FX_ALL_MAX];
    fx_all_models_dir(dir, rows);
    LbRun r = lb_run(LB_ARGV(bin, "plot", dir, "--no-render"));
    lb_check(r.code == 0, "plot: exit %d: %s", r.code, r.err);

    char path[4400];
    char *gp = lb_slurp_in(dir, "time_per_seq.gp");
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

    for (int i = 0; i < 3; i++)
        check_written(dir, r.out, paper_figures[i], "");
    for (int m = 0; m < LB_MODEL_COUNT; m++) {
        const char *mn = lb_model_name((LbModelKind)m);
        if (m == LB_MODEL_STANDARD || m == LB_MODEL_LINFORMER)
            continue;
        check_written(dir, r.out, lb_model_has_k((LbModelKind)m) ? "time_speedup_" : "speedup_", mn);
        if (lb_model_has_k((LbModelKind)m))
            check_written(dir, r.out, "memory_speedup_", mn);
    }
    lb_run_free(&r);

    /* The data's columns are the lines, in order, under the same titles, the paper's two first;
     * their values each line's model and k at n = 512 (ms 1 + m + 0.1j + 0.5i). */
    snprintf(path, sizeof path, "%s/time_per_seq.plot.csv", dir);
    LbCsvTable t;
    if (lb_check(lb_csv_read_file(path, 0, &t) == LB_OK && t.rows == 4, "time_per_seq.plot.csv: header and 3 n")) {
        lb_check(t.row[0].count == (size_t)want + 1, "time_per_seq.plot.csv: %zu columns: should be %d", t.row[0].count,
                 want + 1);
        lb_check(strcmp(t.row[0].fields[1], "standard") == 0 && strcmp(t.row[0].fields[2], "linformer k=32") == 0,
                 "the paper's two first, each column naming its model");
        for (int i = 0; i < nl && (size_t)i + 1 < t.row[0].count; i++)
            lb_check(line[i].column == i + 2 && strcmp(line[i].title, t.row[0].fields[i + 1]) == 0,
                     "line %d draws column %d titled \"%s\": the data's column %d is \"%s\"", i, line[i].column,
                     line[i].title, i + 2, t.row[0].fields[i + 1]);
        for (size_t c = 1; c < t.row[0].count && c < t.row[2].count; c++) {
            const int m = title_model(t.row[0].fields[c]);
            const char *kk = strstr(t.row[0].fields[c], " k=");
            const int j = kk ? (int)(log2(atof(kk + 3)) - 5) : 0;
            double v = 0, want = 1.0 + m + 0.1 * j + 0.5;
            lb_check(lb_csv_parse_double(t.row[2].fields[c], &v) == 0 && fabs(v - want) <= 1e-5 * want,
                     "time_per_seq n=512 %s: \"%s\": should be %.6g", t.row[0].fields[c], t.row[2].fields[c], want);
        }
        lb_csv_table_free(&t);
    }
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* The test's own look along PATH, so that a broken lookup in linbench cannot skip the render. */
static int gnuplot_on_path(void)
{
    const char *path = getenv("PATH");
    char buf[4200];
    while (path && *path) {
        size_t len = strcspn(path, ":");
        snprintf(buf, sizeof buf, "%.*s/gnuplot", (int)len, path);
        if (len && access(buf, X_OK) == 0)
            return 1;
        path += len + (path[len] == ':');
    }
    return 0;
}

/* Rendered by gnuplot, where it is on PATH. */
static void check_render(void)
{
    char gnuplot[4200];
    if (!gnuplot_on_path()) {
        printf("test_cli_plot: gnuplot is not on PATH: rendering not tested (skipped)\n");
        return;
    }
    lb_check(lb_find_on_path("gnuplot", gnuplot, sizeof gnuplot) == 0, "linbench finds the gnuplot on PATH");
    LbCellResult rows[] = {FX_STD(512, 40, 2.0), FX_LIN(512, 128, 68, 1.25), FX_LIN(512, 256, 60, 1.6),
                           FX_STD(1024, 10, 8.0), FX_LIN(1024, 128, 30, 4.0),
                           fx_row(LB_MODEL_LINFORMER, 1024, 256, 0, 0, LB_CELL_OOM),
                           fx_row(LB_MODEL_LINFORMER, 1024, 512, 0, 0, LB_CELL_ERROR),
                           fx_row(LB_MODEL_STANDARD, 2048, 0, 0, 0, LB_CELL_OOM), FX_LIN(2048, 128, 5, 3.0),
                           FX_LIN(2048, 256, 4, 4.5)};
    size_t count = sizeof rows / sizeof rows[0];
    char dir[4200], out[4200];
    snprintf(dir, sizeof dir, "%s/render", scratch);
    snprintf(out, sizeof out, "%s/figures", scratch); /* created by plot */
    lb_check(fx_sweep_dir(dir, rows, count, "512,1024,2048,4096", "128,256,512", "Tesla V100-SXM2-16GB") == 0,
             "made a sweep directory");

    char *av[] = {bin, "plot", dir, "--out", out, NULL};
    LbRun r = lb_run(av);
    lb_check(lb_lines(r.out) == 3, "plot says what it wrote in 3 lines:\n%s", r.out);
    fx_says(r, "plot says what it wrote", "time_speedup.png", "memory_speedup.svg", "time_per_seq.png");

    static const struct {
        const char *ext;
        long more_than; /* bytes */
    } files[] = {{".gp", 0}, {".plot.csv", 0}, {".png", 1000}, {".svg", 1000}};
    for (int i = 0; i < 3; i++) {
        char path[4400];
        for (int e = 0; e < 4; e++) {
            snprintf(path, sizeof path, "%s/%s%s", out, paper_figures[i], files[e].ext);
            lb_check(file_size(path) > files[e].more_than, "%s: size %ld", path, file_size(path));
        }
        uint32_t w, h;
        snprintf(path, sizeof path, "%s/%s.png", out, paper_figures[i]);
        if (png_check(path, &w, &h))
            lb_check(w == 900 && h == 650, "%s: %ux%u: should be 900x650", path, w, h);
        snprintf(path, sizeof path, "%s/%s.svg", out, paper_figures[i]);
        char *svg = lb_slurp(path);
        lb_check(svg && strstr(svg, "<svg") && strstr(svg, "</svg>"), "%s: a whole SVG document", path);
        if (i < 2) /* the heatmaps print their values */
            lb_check(svg && strstr(svg, "OOM") && strstr(svg, "ERR"), "%s: cell labels OOM and ERR drawn", path);
        free(svg);
    }

    /* A plot killed mid-render left its directory: the next render removes it, with the half image
     * inside, and leaves a live plot's (this process stands in for one) alone. */
    pid_t gone = fork();
    if (gone == 0)
        _exit(0);
    waitpid(gone, NULL, 0);
    char dead[4400], live[4400], half[4500];
    snprintf(dead, sizeof dead, "%s/.render.%ld.a1b2c3", out, (long)gone);
    snprintf(live, sizeof live, "%s/.render.%ld.d4e5f6", out, (long)getpid());
    snprintf(half, sizeof half, "%s/time_speedup.png", dead);
    lb_check(mkdir(dead, 0700) == 0 && mkdir(live, 0700) == 0, "planted two render directories");
    FILE *f = fopen(half, "w");
    if (f)
        fclose(f);
    lb_run_ok(av, "plot again");
    lb_check(!lb_exists(dead), "%s: a dead plot's render directory removed", dead);
    lb_check(lb_exists(live) && rmdir(live) == 0, "%s: a live plot's render directory kept", live);

    /* What gnuplot drew, through libcsv: ms per sequence per n, standard and each k. */
    char path[4400];
    snprintf(path, sizeof path, "%s/time_per_seq.plot.csv", out);
    LbCsvTable t;
    if (lb_check(lb_csv_read_file(path, 0, &t) == 0 && t.rows == 5 && t.row[0].count == 5,
                 "time_per_seq.plot.csv: header and 4 rows of n,standard,linformer k=128,linformer k=256,linformer k=512")) {
        const int64_t ns[4] = {512, 1024, 2048, 4096}, ks[3] = {128, 256, 512};
        lb_check(strcmp(t.row[0].fields[0], "n") == 0 && strcmp(t.row[0].fields[1], "standard") == 0 &&
                     strcmp(t.row[0].fields[2], "linformer k=128") == 0 && strcmp(t.row[0].fields[4], "linformer k=512") == 0,
                 "time_per_seq.plot.csv header");
        for (int i = 0; i < 4; i++) {
            for (int c = 1; c < 5; c++) {
                const LbCellResult *rr = c == 1 ? ex_last(rows, count, LB_MODEL_STANDARD, ns[i], 0)
                                                : ex_last(rows, count, LB_MODEL_LINFORMER, ns[i], ks[c - 2]);
                const char *s = t.row[i + 1].fields[c];
                double v;
                if (rr && rr->status == LB_CELL_OK)
                    lb_check(lb_csv_parse_double(s, &v) == 0 && fabs(v - rr->ms_per_seq) <= 1e-5 * rr->ms_per_seq,
                             "n=%lld column %d: \"%s\": should be %g", (long long)ns[i], c, s, rr->ms_per_seq);
                else
                    lb_check(s[0] == '\0', "n=%lld column %d: \"%s\": should be empty (no ok row)", (long long)ns[i], c, s);
            }
        }
    }
    lb_csv_table_free(&t);
    snprintf(path, sizeof path, "%s/time_speedup.plot.csv", out);
    if (lb_check(lb_csv_read_file(path, 0, &t) == 0 && t.rows == 13, "time_speedup.plot.csv: 12 cells")) {
        /* k_index,n_index,value,label,n,k: row for (512, 128) is the first */
        lb_check(strcmp(t.row[1].fields[3], "1.60x") == 0 && strcmp(t.row[1].fields[2], "1.6") == 0,
                 "(512, 128): value \"%s\", label \"%s\"", t.row[1].fields[2], t.row[1].fields[3]);
    }
    lb_csv_table_free(&t);
}

/* A training step's figures (a prediction: it has a breakdown.csv too) say training step where
 * a forward sweep's say forward pass, and no script names the paper; the forward's unchanged. */
static void check_training(void)
{
    static const char *const names[] = {"time_speedup", "memory_speedup", "time_per_seq", "breakdown_standard",
                                        "breakdown_linformer"};
    static const char *const says[] = {"training step: Time saved", "training step: Memory saved", "median training step / batch",
                                       "share of the training step", "share of the training step"};
    for (int train = 0; train < 2; train++) {
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/predict-%s", scratch, train ? "train" : "forward");
        lb_run_ok(LB_ARGV(bin, "predict", "--spec", "tflops=10,bw=500,mem=2G", "--layers", "1", "--d-model", "64",
                          "--heads", "4", "--ffn", "128", "--vocab", "100", "--n", "128,256", "--k", "32", "-q",
                          "--pass", train ? "train" : "forward", "--out", dir), "predict a small grid");
        lb_run_ok(LB_ARGV(bin, "plot", "--no-render", dir), "plot the prediction");
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            char file[80];
            snprintf(file, sizeof file, "%s.gp", names[i]);
            char *gp = lb_slurp_in(dir, file);
            if (train)
                lb_check(gp && strstr(gp, says[i]) && !strstr(gp, "forward pass") && !strstr(gp, "paper") &&
                             !strstr(gp, "Table 3"),
                         "train %s says '%s', never forward pass nor the paper:\n%s", file, says[i], gp ? gp : "(none)");
            else
                lb_check(gp && !strstr(gp, "raining step"), "forward %s never says training step", file);
            free(gp);
        }
    }
}

int main(int argc, char **argv)
{
    bin = lb_cli_start(argc, argv, "test_cli_plot");
    scratch = lb_scratch;
    check_scripts();
    check_models();
    check_training();
    check_render();
    lb_test_cleanup(scratch);
    return lb_test_finish("test_cli_plot");
}
