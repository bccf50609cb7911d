/* What every figure of linbench plot is written with, and rendered with (see plot_figure.h). */
#include "reports/plot_figure.h"

#include <dirent.h>
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

#include "attn/base/paths.h"
#include "attn/base/status.h"
#include "reports/atomic_file.h"
#include "reports/csv_io.h"

extern char **environ;

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

static void gp_preamble(FILE *f, const char *name, const char *what)
{
    fprintf(f,
            LB_PLOT_MARK "%s.\n"
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

/* DIR/NAME.EXT written by fn, atomically. */
static int write_file(const char *dir, const char *name, const char *ext, LbAtomicWriter fn, const void *arg)
{
    char file[160];
    snprintf(file, sizeof file, "%.100s%s", name, ext);
    return lb_atomic_write(dir, file, fn, arg);
}

static int script(FILE *f, const void *arg)
{
    const LbFigure *fig = arg;
    gp_preamble(f, fig->name, fig->what);
    fputs("set title ", f);
    lb_gp_quote(f, fig->title);
    fputs(".\"\\n\".", f);
    lb_gp_quote(f, fig->subtitle);
    fputs(" noenhanced\n", f);
    LB_TRY(fig->body(f, fig->arg));
    fprintf(f, "set terminal svg noenhanced size 900,650 font 'sans,11'\nset output linbench_out.'/%s.svg'\nreplot\nset output\n",
            fig->name);
    return LB_OK;
}

int lb_plot_figure(const char *dir, const LbFigure *fig, LbPlotList *out)
{
    LB_TRY(write_file(dir, fig->name, ".plot.csv", fig->data, fig->arg));
    LB_TRY(write_file(dir, fig->name, ".gp", script, fig));
    if (out && out->count < LB_PLOT_MAX)
        snprintf(out->name[out->count++], sizeof out->name[0], "%.63s", fig->name);
    return LB_OK;
}

static int line_data(FILE *f, const void *arg)
{
    const LbLineFigure *fig = arg;
    const size_t nf = fig->lines + 1;
    char (*v)[32] = malloc(nf * sizeof *v);
    const char **row = malloc(nf * sizeof *row);
    int rc = v && row ? LB_OK : LB_FAIL(LB_ERR_NOMEM, "out of memory");
    if (rc == LB_OK) {
        row[0] = "n";
        for (size_t c = 0; c < fig->lines; c++)
            row[c + 1] = fig->line[c].column;
        rc = lb_csv_write_record(f, row, nf);
    }
    for (size_t c = 0; rc == LB_OK && c < nf; c++)
        row[c] = v[c];
    for (size_t i = 0; rc == LB_OK && i < fig->nn; i++) {
        snprintf(v[0], sizeof v[0], "%lld", (long long)fig->n[i]);
        for (size_t c = 0; c < fig->lines; c++) {
            const double x = fig->value[c * fig->nn + i];
            if (isnan(x))
                v[c + 1][0] = '\0';
            else
                snprintf(v[c + 1], sizeof v[0], "%.6g", x);
        }
        rc = lb_csv_write_record(f, row, nf);
    }
    free(v);
    free(row);
    return rc;
}

static int line_body(FILE *f, const void *arg)
{
    const LbLineFigure *fig = arg;
    const size_t drawn = fig->drawn ? fig->drawn : fig->lines;
    fprintf(f, "set xlabel 'n (sequence length)'\nset ylabel '%s'\n%sset grid\nset key left top\n", fig->ylabel,
            fig->logscale);
    int points = 0;
    for (size_t i = 0; i < drawn * fig->nn; i++)
        points += !isnan(fig->value[i]);
    if (points == 0) { /* the label in its middle instead */
        fprintf(f, "unset logscale\nset label 1 '%s' at graph 0.5, graph 0.5 center\nplot [0:1][0:1] NaN notitle\n", fig->empty);
    } else {
        fprintf(f, "set xrange [%.6g:%.6g]\nset xtics (", (double)fig->n[0] / 1.4, (double)fig->n[fig->nn - 1] * 1.4);
        for (size_t i = 0; i < fig->nn; i++)
            fprintf(f, "%s'%lld' %lld", i ? ", " : "", (long long)fig->n[i], (long long)fig->n[i]);
        fputs(")\n", f);
        /* each line's colour, dash and title written out: gnuplot's own cycle repeats after eight */
        for (size_t l = 0; l < drawn; l++) {
            fprintf(f, "%s data using 1:%zu with %s title ", l ? ", \\\n    " : "plot", l + 2, fig->line[l].with);
            lb_gp_quote(f, fig->line[l].title);
        }
        fprintf(f, "%s\n", fig->after ? fig->after : "");
    }
    return LB_OK;
}

int lb_plot_line_figure(const char *dir, const LbLineFigure *fig, LbPlotList *out)
{
    const LbFigure f = {fig->name, fig->what, fig->title, fig->subtitle, line_data, line_body, fig};
    return lb_plot_figure(dir, &f, out);
}

/* --- line styles -------------------------------------------------------------------------------- */

/* The hues are of Tableau's palette, in the model table's order, the first six picked so any two
 * are at least 40 degrees apart (HSV): blue, red, green, purple, olive, pink; the Linformer's
 * general projections then take the gaps between them: orange (30 degrees, half way between red
 * and olive), indigo (between blue and purple) and teal (between green and blue), so any two of
 * the nine are at least 30 degrees apart (tests/reports/test_cli_plot.c). A shade mixes the hue
 * with black or white, which keeps the hue itself. */
static const unsigned model_hue[] = {0x1f77b4, 0xd62728, 0x2ca02c, 0x9467bd, 0xbcbd22, 0xe377c2,
                                     0xff8000, 0x3c44c8, 0x17be8a};
_Static_assert(sizeof model_hue / sizeof model_hue[0] >= LB_MODEL_COUNT,
               "a new model needs its hue in reports/plot_figure.c");
static const int model_point[] = {7, 5, 9, 13, 11, 15, 4, 6, 8}; /* circle, square, triangles, diamond, ... */
_Static_assert(sizeof model_point / sizeof model_point[0] >= LB_MODEL_COUNT,
               "a new model needs its point type in reports/plot_figure.c");

/* The darkest and lightest shades: mixed a third with black, two fifths with white; lighter than
 * that a line fades into the white page. */
#define LB_SHADE_DARK 0.33
#define LB_SHADE_LIGHT 0.40
#define LB_DASH_TYPES 5 /* gnuplot's distinct dash types: solid, dashed, dotted, dash-dot, dash-dot-dot */

static unsigned shade(unsigned rgb, double t)
{
    unsigned out = 0;
    for (int shift = 16; shift >= 0; shift -= 8) {
        const double c = (double)(rgb >> shift & 255);
        const double v = t < 0 ? c * (1 + t) : c + (255 - c) * t;
        out |= (unsigned)(v + 0.5) << shift;
    }
    return out;
}

LbLineStyle lb_plot_line_style(LbModelKind m, int index, int count)
{
    const int i = (unsigned)m < LB_MODEL_COUNT ? (int)m : 0;
    LbLineStyle s;
    const double t = count > 1 ? -LB_SHADE_DARK + (LB_SHADE_DARK + LB_SHADE_LIGHT) * index / (count - 1) : 0;
    s.rgb = shade(model_hue[i], t);
    s.dashtype = 1 + index % LB_DASH_TYPES;
    s.pointtype = model_point[i];
    return s;
}

/* --- running gnuplot --------------------------------------------------------------------------- */

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
    /* gnuplot reads an argument that starts with '-' as an option ("unrecognized option"), so a
     * relative script path like -figs/time_speedup.gp goes as ./-figs/time_speedup.gp */
    char dashed[4200];
    const int dash = script[0] == '-';
    if (dash && snprintf(dashed, sizeof dashed, "./%s", script) >= (int)sizeof dashed)
        return LB_FAIL(LB_ERR_IO, "cannot render %s: its path is too long", script);
    char *argv[5] = {(char *)"gnuplot", (char *)"-e", define, dash ? dashed : (char *)script, NULL};
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

/* A plot killed while gnuplot ran leaves its .render.PID.XXXXXX directory behind; the next render
 * in that directory removes those of processes that no longer exist (never a live one's: two plots
 * may share a directory), with the images half-written inside. */
static void remove_dead_renders(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char *end;
        const long pid = strncmp(e->d_name, ".render.", 8) == 0 ? strtol(e->d_name + 8, &end, 10) : 0;
        if (pid <= 0 || *end != '.' || (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
            continue;
        char path[4400], inner[4700];
        if (lb_path_join_buf(path, sizeof path, dir, e->d_name) != 0)
            continue;
        DIR *r = opendir(path);
        for (struct dirent *f; r && (f = readdir(r)) != NULL;)
            if (strcmp(f->d_name, ".") != 0 && strcmp(f->d_name, "..") != 0) {
                if (lb_path_join_buf(inner, sizeof inner, path, f->d_name) == 0)
                    unlink(inner); /* a file or a link, never followed; anything else keeps the directory */
            }
        if (r)
            closedir(r);
        rmdir(path);
    }
    closedir(d);
}

/* gnuplot opens its outputs as they are named, links and all, so it writes them into a directory
 * of ours, and they are renamed over the names beside the script: a rename replaces whatever is
 * planted at a name instead of writing through it. */
int lb_plot_render(const char *gnuplot, const char *script, int timeout_s)
{
    const char *slash = strrchr(script, '/'), *base = slash ? slash + 1 : script;
    const size_t base_len = strlen(base) > 3 ? strlen(base) - 3 : strlen(base); /* NAME of NAME.gp */
    char dir[4096], tmp[4096], from[4200], to[4200];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - script) : 1, slash ? script : ".");
    if (snprintf(tmp, sizeof tmp, "%s/.render.%ld.XXXXXX", dir, (long)getpid()) >= (int)sizeof tmp)
        return LB_FAIL(LB_ERR_IO, "cannot render %s: its path is too long", script);
    remove_dead_renders(dir);
    if (!mkdtemp(tmp))
        return LB_FAIL(LB_ERR_IO, "cannot render %s: cannot make a directory beside it: %s", script, strerror(errno));
    int rc = run_gnuplot(gnuplot, script, tmp, timeout_s);
    static const char *const ext[] = {".png", ".svg"};
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        snprintf(from, sizeof from, "%s/%.*s%s", tmp, (int)base_len, base, ext[i]);
        snprintf(to, sizeof to, "%s/%.*s%s", dir, (int)base_len, base, ext[i]);
        if (rc == LB_OK && rename(from, to) != 0)
            rc = LB_FAIL(LB_ERR_IO, "cannot write %s: %s", to, strerror(errno));
        unlink(from); /* what gnuplot wrote when it failed, or after a failed rename */
    }
    if (rmdir(tmp) != 0 && rc == LB_OK) /* gnuplot wrote something unexpected: leave it be */
        rc = LB_FAIL(LB_ERR_IO, "cannot remove %s after rendering %s: %s", tmp, script, strerror(errno));
    return rc;
}
