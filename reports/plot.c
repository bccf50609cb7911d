/* gnuplot scripts and data of a sweep, and rendering them (see plot.h). */
#include "reports/plot.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attn/status.h"
#include "reports/atomic_file.h"
#include "reports/csv_io.h"

extern char **environ;

const char *const lb_plot_names[LB_PLOT_COUNT] = {"time_speedup", "memory_speedup", "time_per_seq"};

/* --- gnuplot text ------------------------------------------------------------------------------ */

/* s as a gnuplot single-quoted string: only ' needs escaping there, doubled. */
static void gp_quote(FILE *f, const char *s)
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

/* The opening every script shares: where it lives (from ARG0, so the data and images sit
 * beside it whatever the current directory) and the data file. */
static void gp_preamble(FILE *f, const char *name, const char *what)
{
    fprintf(f,
            "# linbench plot: %s.\n"
            "# Written by linbench plot; render with: gnuplot %s.gp (from any directory).\n"
            "# Data: %s.plot.csv beside this script. Output: %s.png and %s.svg beside it.\n\n",
            what, name, name, name, name);
    fputs("here = '.'\n"
          "p = 0\n"
          "while (strstrt(ARG0[p+1:], '/') > 0) { p = p + strstrt(ARG0[p+1:], '/') }\n"
          "if (p > 1) { here = ARG0[1:p-1] } else { if (p == 1) { here = '/' } }\n",
          f);
    fprintf(f, "data = here.'/%s.plot.csv'\n", name);
    fputs("set datafile separator comma\n"
          "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
          "    set terminal pngcairo noenhanced size 900,650 font ',11'\n"
          "} else {\n"
          "    set terminal png noenhanced size 900,650\n"
          "}\n",
          f);
    fprintf(f, "set output here.'/%s.png'\n", name);
}

/* Render the plot set up above once more as SVG. */
static void gp_svg(FILE *f, const char *name)
{
    fputs("set terminal svg noenhanced size 900,650 font 'sans,11'\n", f);
    fprintf(f, "set output here.'/%s.svg'\n", name);
    fputs("replot\nset output\n", f);
}

/* One line on what ran, for the titles (malloc'd: meta.csv values are as long as they are). The
 * dtype says what was stored when that differs from what was asked (the CPU reference stores
 * fp32 whatever --dtype says). */
static char *subtitle(const LbSweepDir *s)
{
    const char *dtype = lb_sweep_meta(s, "dtype", "?");
    const char *storage = lb_sweep_meta(s, "storage_dtype", dtype);
    int same = strcmp(storage, dtype) == 0;
    const char *fmt = "%s, %s%s%s, L=%s d=%s h=%s f=%s, %s/%s";
    const char *args[10] = {lb_sweep_meta(s, "device_name", "?"), dtype, same ? "" : " stored as ",
                            same ? "" : storage, lb_sweep_meta(s, "layers", "?"),
                            lb_sweep_meta(s, "d_model", "?"), lb_sweep_meta(s, "heads", "?"),
                            lb_sweep_meta(s, "ffn", "?"), lb_sweep_meta(s, "sharing", "?"),
                            lb_sweep_meta(s, "order", "?")};
    int len = snprintf(NULL, 0, fmt, args[0], args[1], args[2], args[3], args[4], args[5], args[6],
                       args[7], args[8], args[9]);
    char *buf = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (buf)
        snprintf(buf, (size_t)len + 1, fmt, args[0], args[1], args[2], args[3], args[4], args[5],
                 args[6], args[7], args[8], args[9]);
    return buf;
}

static int gp_title(FILE *f, const char *title, const LbSweepDir *s)
{
    char *sub = subtitle(s);
    if (!sub)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory writing a plot title");
    fputs("set title ", f);
    gp_quote(f, title);
    fputs(".\"\\n\".", f);
    gp_quote(f, sub);
    fputs(" noenhanced\n", f);
    free(sub);
    return LB_OK;
}

/* --- files ------------------------------------------------------------------------------------- */

typedef int (*WriteFn)(FILE *f, const LbSweepDir *s, const void *arg);

static int write_file(const char *dir, const char *name, const char *ext, WriteFn fn,
                      const LbSweepDir *s, const void *arg)
{
    char file[64];
    snprintf(file, sizeof file, "%s%s", name, ext);
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

/* Heatmap data: k_index,n_index,value,label,n,k per cell; value NaN where there is no number
 * (the box is left blank, the label says why). */
static int heat_data(FILE *f, const LbSweepDir *s, const void *arg)
{
    const LbGridCell *cells = arg;
    const LbGrid *g = &s->grid;
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

typedef struct HeatArg {
    const char *name, *title;
    const LbGridCell *cells;
} HeatArg;

static int heat_data_fn(FILE *f, const LbSweepDir *s, const void *arg)
{
    return heat_data(f, s, ((const HeatArg *)arg)->cells);
}

static int heat_script(FILE *f, const LbSweepDir *s, const void *arg)
{
    const HeatArg *h = arg;
    const LbGrid *g = &s->grid;
    gp_preamble(f, h->name, h->title);
    LB_TRY(gp_title(f, h->title, s));
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
    fprintf(f, "set xlabel 'k (projected length)'\nset ylabel 'n (sequence length)'\n");
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
    gp_svg(f, h->name);
    return LB_OK;
}

/* The last ok row of each (model, n, k): ms per sequence, or NaN. */
static double ms_per_seq(const LbSweepDir *s, LbModelKind model, int64_t n, int64_t k)
{
    double v = NAN;
    for (size_t r = 0; r < s->count; r++) {
        const LbCellResult *c = &s->rows[r];
        if (c->model != model || c->n != n || (model == LB_MODEL_LINFORMER && c->k != k))
            continue;
        v = c->status == LB_CELL_OK && c->ms_per_seq > 0 ? c->ms_per_seq : NAN;
    }
    return v;
}

/* Wide data: n,standard,k=128,...; empty where there is no ok measurement. */
static int time_data(FILE *f, const LbSweepDir *s, const void *arg)
{
    (void)arg;
    const LbGrid *g = &s->grid;
    size_t nf = g->cols + 2;
    char (*v)[32] = malloc(nf * sizeof *v);
    const char **row = malloc(nf * sizeof *row);
    int rc = LB_OK;
    if (!v || !row) {
        rc = LB_FAIL(LB_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (size_t c = 0; c < nf; c++)
        row[c] = v[c];
    snprintf(v[0], sizeof v[0], "n");
    snprintf(v[1], sizeof v[1], "standard");
    for (size_t j = 0; j < g->cols; j++)
        snprintf(v[j + 2], sizeof v[0], "k=%lld", (long long)g->k[j]);
    rc = lb_csv_write_record(f, row, nf);
    for (size_t i = 0; rc == LB_OK && i < g->rows; i++) {
        snprintf(v[0], sizeof v[0], "%lld", (long long)g->n[i]);
        for (size_t c = 1; c < nf; c++) {
            double ms = c == 1 ? ms_per_seq(s, LB_MODEL_STANDARD, g->n[i], 0)
                               : ms_per_seq(s, LB_MODEL_LINFORMER, g->n[i], g->k[c - 2]);
            if (isnan(ms))
                v[c][0] = '\0';
            else
                snprintf(v[c], sizeof v[c], "%.6g", ms);
        }
        rc = lb_csv_write_record(f, row, nf);
    }
out:
    free(v);
    free(row);
    return rc;
}

static int time_script(FILE *f, const LbSweepDir *s, const void *arg)
{
    (void)arg;
    const LbGrid *g = &s->grid;
    const char *name = "time_per_seq";
    gp_preamble(f, name, "time per sequence against n, standard and Linformer");
    LB_TRY(gp_title(f, "Time per sequence (median forward pass / batch, each model at its largest batch)", s));
    int points = 0;
    for (size_t i = 0; i < g->rows; i++) {
        points += !isnan(ms_per_seq(s, LB_MODEL_STANDARD, g->n[i], 0));
        for (size_t j = 0; j < g->cols; j++)
            points += !isnan(ms_per_seq(s, LB_MODEL_LINFORMER, g->n[i], g->k[j]));
    }
    fputs("set xlabel 'n (sequence length)'\nset ylabel 'ms per sequence'\n"
          "set logscale xy\nset grid\nset key left top\n",
          f);
    if (points == 0) {
        fputs("unset logscale\nset label 1 'no cell measured yet' at graph 0.5, graph 0.5 center\n"
              "plot [0:1][0:1] NaN notitle\n",
              f);
    } else {
        fprintf(f, "set xrange [%.6g:%.6g]\n", (double)g->n[0] / 1.4,
                (double)g->n[g->rows - 1] * 1.4);
        fputs("set xtics (", f);
        for (size_t i = 0; i < g->rows; i++)
            fprintf(f, "%s'%lld' %lld", i ? ", " : "", (long long)g->n[i], (long long)g->n[i]);
        fputs(")\n", f);
        fprintf(f, "plot for [c=2:%zu] data using 1:c with linespoints linewidth 2 pointtype 7 pointsize 0.8 title columnheader(c)\n",
                g->cols + 2);
    }
    gp_svg(f, name);
    return LB_OK;
}

int lb_plot_write(const LbSweepDir *s, const char *out_dir)
{
    HeatArg heat[2] = {
        {"time_speedup", "Time saved: ms per sequence, standard / Linformer", s->grid.time},
        {"memory_speedup", "Memory saved: largest batch, Linformer / standard", s->grid.memory},
    };
    for (int h = 0; h < 2; h++) {
        LB_TRY(write_file(out_dir, heat[h].name, ".plot.csv", heat_data_fn, s, &heat[h]));
        LB_TRY(write_file(out_dir, heat[h].name, ".gp", heat_script, s, &heat[h]));
    }
    LB_TRY(write_file(out_dir, "time_per_seq", ".plot.csv", time_data, s, NULL));
    return write_file(out_dir, "time_per_seq", ".gp", time_script, s, NULL);
}

/* --- running gnuplot --------------------------------------------------------------------------- */

int lb_plot_find_gnuplot(char *buf, size_t size)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        return -1;
    const char *p = path;
    while (*p) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        /* An empty PATH entry means the current directory. */
        int n = len ? snprintf(buf, size, "%.*s/gnuplot", (int)len, p) : snprintf(buf, size, "./gnuplot");
        struct stat st;
        if (n > 0 && (size_t)n < size && stat(buf, &st) == 0 && S_ISREG(st.st_mode) &&
            access(buf, X_OK) == 0)
            return 0;
        if (!end)
            break;
        p = end + 1;
    }
    return -1;
}

int lb_plot_render(const char *gnuplot, const char *script, int timeout_s)
{
    char *argv[3] = {(char *)"gnuplot", (char *)script, NULL};
    pid_t pid;
    /* Its own process group, so a time-out ends gnuplot and anything it started. */
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    int err = posix_spawn(&pid, gnuplot, NULL, &attr, argv, environ);
    posix_spawnattr_destroy(&attr);
    if (err != 0)
        return LB_FAIL(LB_ERR_IO, "cannot run %s: %s", gnuplot, strerror(err));
    struct timespec start, now, pause = {0, 10 * 1000 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &start);
    int status;
    for (;;) {
        pid_t got = waitpid(pid, &status, WNOHANG);
        if (got == pid)
            break;
        if (got < 0 && errno != EINTR)
            return LB_FAIL(LB_ERR_IO, "cannot wait for gnuplot: %s", strerror(errno));
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec + 1e-9 * (double)(now.tv_nsec - start.tv_nsec) >= timeout_s) {
            kill(-pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
            return LB_FAIL(LB_ERR_IO, "gnuplot %s did not finish within %d s (--render-timeout): stopped it",
                           script, timeout_s);
        }
        nanosleep(&pause, NULL);
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return LB_OK;
    if (WIFEXITED(status))
        return LB_FAIL(LB_ERR_IO, "gnuplot %s failed (exit status %d)", script, WEXITSTATUS(status));
    return LB_FAIL(LB_ERR_IO, "gnuplot %s was killed by signal %d", script, WTERMSIG(status));
}
