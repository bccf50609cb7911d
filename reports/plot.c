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

#include "attn/base/status.h"
#include "reports/breakdown_plot.h"
#include "reports/csv_io.h"
#include "reports/plot_figure.h"
#include "reports/plot_style.h"
#include "reports/settings.h"
#include "reports/speedups.h"

extern char **environ;

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
    int same = strcmp(storage, dtype) == 0;
    const char *fmt = "%s, %s%s%s, L=%s d=%s h=%s f=%s, %s/%s";
    const char *args[10] = {lb_sweep_meta(s, "device_name", "?"), dtype, same ? "" : " stored as ",
                            same ? "" : storage, setting(s, LB_SET_LAYERS), setting(s, LB_SET_DMODEL),
                            setting(s, LB_SET_HEADS), setting(s, LB_SET_FFN), setting(s, LB_SET_SHARING),
                            setting(s, LB_SET_ORDER)};
    int len = snprintf(NULL, 0, fmt, args[0], args[1], args[2], args[3], args[4], args[5], args[6],
                       args[7], args[8], args[9]);
    char *buf = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (buf)
        snprintf(buf, (size_t)len + 1, fmt, args[0], args[1], args[2], args[3], args[4], args[5],
                 args[6], args[7], args[8], args[9]);
    return buf;
}

/* A figure's title over the line on what ran; a prediction is never drawn as if measured. */
static int gp_title(FILE *f, const char *title, const LbSweepDir *s)
{
    char *sub = subtitle(s), full[256];
    if (!sub)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory writing a plot title");
    snprintf(full, sizeof full, "%s%s", s->kind == LB_RESULT_PREDICTED ? "Predicted, not measured: " : "", title);
    lb_gp_title(f, full, sub);
    free(sub);
    return LB_OK;
}

typedef struct HeatArg {
    char name[64];
    char title[160];
    const LbGrid *grid;
    const LbGridCell *cells;
} HeatArg;

/* Heatmap data: k_index,n_index,value,label,n,k per cell; value NaN where there is no number
 * (the box is left blank, the label says why). */
static int heat_data_fn(FILE *f, const LbSweepDir *s, const void *arg)
{
    (void)s;
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

static int heat_script(FILE *f, const LbSweepDir *s, const void *arg)
{
    const HeatArg *h = arg;
    const LbGrid *g = h->grid;
    lb_gp_preamble(f, h->name, h->title);
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
    lb_gp_svg(f, h->name);
    return LB_OK;
}

/* The last row of (model, n, k): ms per sequence (energy 0) or joules per sequence (energy 1)
 * where it is ok, else NaN. */
static double per_seq(const LbSweepDir *s, LbModelKind model, int64_t n, int64_t k, int energy)
{
    const LbCellResult *r = lb_result_row(s, 0, model, n, k);
    const double x = !r ? NAN : energy ? r->energy_j_per_seq : r->ms_per_seq;
    return r && r->status == LB_CELL_OK && x > 0 ? x : NAN;
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

/* The state of a cell's last row: 'o' ok, 'm' out of memory, 'e' failed, 0 none. */
static char cell_state(const LbSweepDir *s, LbModelKind model, int64_t n, int64_t k)
{
    const LbCellResult *r = lb_result_row(s, 0, model, n, k);
    return !r ? 0 : r->status == LB_CELL_OK ? 'o' : r->status == LB_CELL_OOM ? 'm' : 'e';
}

/* Whether any ok row has its energy (the device had a counter). */
static int rows_have_energy(const LbSweepDir *s)
{
    for (size_t r = 0; r < s->count; r++)
        if (s->rows[r].status == LB_CELL_OK && s->rows[r].energy_j_per_seq > 0)
            return 1;
    return 0;
}

/* The per-sequence figures' lines: one per measured model without a k axis, one per model and k
 * with; in joules per sequence where energy is set. */
typedef struct TimeLine {
    LbModelKind model;
    int64_t k;
    LbLineStyle style; /* the model's hue, the k's shade and dash (reports/plot_style.h) */
} TimeLine;

typedef struct TimeArg {
    const LbSweepDir *s;
    size_t count;
    TimeLine *line;
    int energy;
} TimeArg;

/* A line's title and data column: every line names its model ("linformer k=128"), since in a
 * figure of several "k=128" alone could be any of them. */
static void time_title(size_t c, char *buf, size_t size, const void *arg)
{
    const TimeLine *l = &((const TimeArg *)arg)->line[c];
    if (!lb_model_has_k(l->model))
        snprintf(buf, size, "%s", lb_model_name(l->model));
    else
        snprintf(buf, size, "%s k=%lld", lb_model_name(l->model), (long long)l->k);
}

static double time_value(size_t c, int64_t n, const void *arg)
{
    const TimeArg *t = arg;
    return per_seq(t->s, t->line[c].model, n, t->line[c].k, t->energy);
}

static void time_style(size_t c, char *with, char *title, size_t size, const void *arg)
{
    const LbLineStyle *st = &((const TimeArg *)arg)->line[c].style;
    snprintf(with, size, "linespoints linewidth 2 linecolor rgb '#%06x' dashtype %d pointtype %d pointsize 0.9", st->rgb,
             st->dashtype, st->pointtype);
    time_title(c, title, size, arg);
}

static int time_figure(const char *dir, const TimeArg *t, const char *sub, LbPlotList *out)
{
    const LbSweepDir *s = t->s;
    size_t oom = 0, failed = 0, pending = 0;
    for (size_t i = 0; i < s->grid.rows; i++)
        for (size_t c = 0; c < t->count; c++) {
            const char st = cell_state(s, t->line[c].model, s->grid.n[i], t->line[c].k);
            oom += st == 'm';
            failed += st == 'e';
            pending += st == 0;
        }
    char title[256];
    snprintf(title, sizeof title, "%s%s", s->kind == LB_RESULT_PREDICTED ? "Predicted, not measured: " : "",
             t->energy ? "Energy per sequence (mean power over the timed passes x median pass / batch)"
                       : "Time per sequence (median forward pass / batch, each model at its largest batch)");
    const LbLineFigure fig = {t->energy ? "energy_per_seq" : "time_per_seq",
                              t->energy ? "energy per sequence against n, each model and k"
                                        : "time per sequence against n, each model and k",
                              title, sub, t->energy ? "joules per sequence" : "ms per sequence", "set logscale xy\n",
                              empty_label(oom, failed, pending), NULL, s->grid.n, s->grid.rows, t->count, 0,
                              time_title, time_value, time_style, t};
    return lb_plot_line_figure(dir, &fig, out);
}

/* A model without a k axis against a baseline: time, memory (and energy) saved against n. */
static const char *const saved[3] = {"time", "memory", "energy"};

static void saved_column(size_t c, char *buf, size_t size, const void *arg)
{
    (void)arg;
    snprintf(buf, size, "%s_speedup", saved[c]);
}

static double saved_value(size_t c, int64_t n, const void *arg)
{
    const LbGrid *g = arg;
    const LbGridCell *cell = &(c == 0 ? g->time : c == 1 ? g->memory : g->energy)[lb_grid_row(g, n) * (long)g->cols];
    return cell->kind == LB_GRID_VALUE ? cell->value : NAN;
}

static void saved_style(size_t c, char *with, char *title, size_t size, const void *arg)
{
    (void)arg;
    static const int point[3] = {7, 5, 9};
    snprintf(with, size, "linespoints linewidth 2 pointtype %d pointsize 0.8", point[c]);
    snprintf(title, size, "%s saved", saved[c]);
}

/* Time and memory heatmaps, and energy's (heat[2]) where the grid has a value of it. */
static int write_heat_pair(const LbSweepDir *s, const char *out_dir, HeatArg heat[3], LbPlotList *out)
{
    for (int h = 0; h < (lb_grid_has_energy(heat[0].grid) ? 3 : 2); h++) {
        LB_TRY(lb_plot_write_file(out_dir, heat[h].name, ".plot.csv", heat_data_fn, s, &heat[h]));
        LB_TRY(lb_plot_write_file(out_dir, heat[h].name, ".gp", heat_script, s, &heat[h]));
        lb_plot_add_name(out, heat[h].name);
    }
    return LB_OK;
}

/* A figure of one model against standard: a heatmap pair for a model with a k axis, a line
 * figure for one without. */
/* model against baseline: a heatmap pair for a model with a k axis, a line figure otherwise; named
 * for the model alone against the paper's standard (time_speedup_MODEL), MODEL_vs_BASELINE
 * against the other exact baselines (chunked, flash). */
static int write_model_figures(const LbSweepDir *s, const char *out_dir, LbModelKind model, LbModelKind baseline,
                               LbPlotList *out)
{
    LbGrid g;
    LB_TRY(lb_grid_pair_from_raw(s->rows, s->count, model, baseline, s->grid.n, s->grid.rows, s->grid.k,
                                 s->grid.cols, &g));
    const char *b = lb_model_name(baseline);
    char m[48]; /* two model names of the table: short */
    if (baseline == LB_TABLE3_BASELINE)
        snprintf(m, sizeof m, "%s", lb_model_name(model));
    else
        snprintf(m, sizeof m, "%s_vs_%s", lb_model_name(model), b);
    const char *name = lb_model_name(model);
    int rc;
    if (lb_model_has_k(model)) {
        HeatArg heat[3] = {{{0}, {0}, &g, g.time}, {{0}, {0}, &g, g.memory}, {{0}, {0}, &g, g.energy}};
        snprintf(heat[0].name, sizeof heat[0].name, "time_speedup_%s", m);
        snprintf(heat[0].title, sizeof heat[0].title, "Time saved: ms per sequence, %s / %s", b, name);
        snprintf(heat[1].name, sizeof heat[1].name, "memory_speedup_%s", m);
        snprintf(heat[1].title, sizeof heat[1].title, "Memory saved: largest batch, %s / %s", name, b);
        snprintf(heat[2].name, sizeof heat[2].name, "energy_speedup_%s", m);
        snprintf(heat[2].title, sizeof heat[2].title, "Energy saved: joules per sequence, %s / %s", b, name);
        rc = write_heat_pair(s, out_dir, heat, out);
    } else {
        size_t oom = 0, failed = 0, pending = 0;
        for (size_t c = 0; c < g.rows * g.cols; c++) {
            oom += g.time[c].kind == LB_GRID_OOM;
            failed += g.time[c].kind == LB_GRID_ERROR;
            pending += g.time[c].kind == LB_GRID_MISSING;
        }
        char fname[64], title[256], full[300];
        snprintf(fname, sizeof fname, "speedup_%s", m);
        snprintf(title, sizeof title, "%s against %s: time and memory saved", name, b);
        snprintf(full, sizeof full, "%s%s", s->kind == LB_RESULT_PREDICTED ? "Predicted, not measured: " : "", title);
        char *sub = subtitle(s);
        const LbLineFigure fig = {fname, title, full, sub ? sub : "?", "speedup (x)", "set logscale xy 2\n",
                                  empty_label(oom, failed, pending), NULL, g.n, g.rows, 3, lb_grid_has_energy(&g) ? 3 : 2,
                                  saved_column, saved_value, saved_style, &g};
        rc = sub ? lb_plot_line_figure(out_dir, &fig, out) : LB_FAIL(LB_ERR_NOMEM, "out of memory writing a plot title");
        free(sub);
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

    HeatArg heat[3] = {
        {"time_speedup", "Time saved: ms per sequence, standard / Linformer", &s->grid, s->grid.time},
        {"memory_speedup", "Memory saved: largest batch, Linformer / standard", &s->grid, s->grid.memory},
        {"energy_speedup", "Energy saved: joules per sequence, standard / Linformer", &s->grid, s->grid.energy},
    };
    LB_TRY(write_heat_pair(s, out_dir, heat, out));

    TimeArg t = {s, 0, NULL, 0};
    t.line = malloc(((size_t)LB_MODEL_COUNT * (s->grid.cols + 1)) * sizeof *t.line);
    char *sub = subtitle(s);
    int rc = t.line && sub ? LB_OK : LB_FAIL(LB_ERR_NOMEM, "out of memory");
    for (int m = 0; m < LB_MODEL_COUNT && rc == LB_OK; m++) {
        const size_t nk = lb_model_has_k((LbModelKind)m) ? s->grid.cols : 1;
        for (size_t j = 0; j < nk && measured[m]; j++)
            t.line[t.count++] = (TimeLine){(LbModelKind)m, lb_model_has_k((LbModelKind)m) ? s->grid.k[j] : 0,
                                           lb_plot_line_style((LbModelKind)m, (int)j, (int)nk)};
    }
    if (rc == LB_OK)
        rc = time_figure(out_dir, &t, sub, out);
    if (rc == LB_OK && rows_have_energy(s)) { /* the same lines in joules, where there is a counter */
        t.energy = 1;
        rc = time_figure(out_dir, &t, sub, out);
    }
    free(t.line);
    free(sub);
    LB_TRY(rc);

    /* Table 3's heatmaps above are Linformer's against standard; every other pair speedups.csv
     * holds (each model against each exact baseline measured: standard, chunked, flash) here. */
    LbSpeedupPair pairs[LB_SPEEDUP_PAIRS_MAX];
    const size_t np = lb_speedup_pairs(measured, pairs);
    for (size_t p = 0; p < np; p++) {
        if (pairs[p].model == s->grid.model && pairs[p].baseline == LB_TABLE3_BASELINE)
            continue;
        LB_TRY(write_model_figures(s, out_dir, pairs[p].model, pairs[p].baseline, out));
    }
    return lb_breakdown_plot_write(s, out_dir, out); /* where the sweep ran with --breakdown */
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

/* Run gnuplot on script with its images going to out_dir, waiting at most timeout_s seconds. */
static int run_gnuplot(const char *gnuplot, const char *script, const char *out_dir, int timeout_s)
{
    char define[4200];
    size_t used = (size_t)snprintf(define, sizeof define, "linbench_out='");
    for (const char *c = out_dir; *c && used + 3 < sizeof define; c++) {
        if (*c == '\'')
            define[used++] = '\'';
        define[used++] = *c;
    }
    define[used++] = '\'';
    define[used] = '\0';
    char *argv[5] = {(char *)"gnuplot", (char *)"-e", define, (char *)script, NULL};
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

/* gnuplot opens its outputs as they are named, links and all, so it writes them into a directory
 * of ours, and they are renamed over the names beside the script: a rename replaces whatever is
 * planted at a name instead of writing through it. */
int lb_plot_render(const char *gnuplot, const char *script, int timeout_s)
{
    const char *slash = strrchr(script, '/');
    const size_t dir_len = slash ? (size_t)(slash - script) : 1;
    const char *base = slash ? slash + 1 : script;
    const size_t base_len = strlen(base) > 3 ? strlen(base) - 3 : strlen(base); /* NAME of NAME.gp */
    char tmp[4096], from[4200], to[4200];
    if (snprintf(tmp, sizeof tmp, "%.*s/.render.XXXXXX", (int)dir_len, slash ? script : ".") >= (int)sizeof tmp)
        return LB_FAIL(LB_ERR_IO, "cannot render %s: its path is too long", script);
    if (!mkdtemp(tmp))
        return LB_FAIL(LB_ERR_IO, "cannot render %s: cannot make a directory beside it: %s", script, strerror(errno));
    int rc = run_gnuplot(gnuplot, script, tmp, timeout_s);
    static const char *const ext[] = {".png", ".svg"};
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        snprintf(from, sizeof from, "%s/%.*s%s", tmp, (int)base_len, base, ext[i]);
        snprintf(to, sizeof to, "%.*s/%.*s%s", (int)dir_len, slash ? script : ".", (int)base_len, base, ext[i]);
        if (rc == LB_OK && rename(from, to) != 0)
            rc = LB_FAIL(LB_ERR_IO, "cannot write %s: %s", to, strerror(errno));
        unlink(from); /* what gnuplot wrote when it failed, or after a failed rename */
    }
    if (rmdir(tmp) != 0 && rc == LB_OK) /* gnuplot wrote something unexpected: leave it be */
        rc = LB_FAIL(LB_ERR_IO, "cannot remove %s after rendering %s: %s", tmp, script, strerror(errno));
    return rc;
}
