/* linbench plot without gnuplot (PATH holds none) and with --no-render: the scripts and their
 * data are written, no image, and one line says how to render them; bad input exits 2 with one
 * line; an --out that cannot be created exits 1. Runs whether or not gnuplot is installed.
 * Usage: test_cli_plot_scripts PATH-TO-LINBENCH */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fixture.h"
#include "tests/lib/check.h"
#include "tests/lib/spawn.h"

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void check_scripts_only(const char *dir, LbRun r, const char *what)
{
    lb_check(r.code == 0, "%s: exit %d: %s", what, r.code, r.err);
    lb_check(lb_lines(r.out) == 1 && strstr(r.out, "render with: gnuplot "), "%s: one line on how to render:\n%s",
             what, r.out);
    const char *names[3] = {"time_speedup", "memory_speedup", "time_per_seq"};
    for (int i = 0; i < 3; i++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s.gp", dir, names[i]);
        lb_check(exists(path) && strstr(r.out, path), "%s: %s written and named in the line", what, path);
        snprintf(path, sizeof path, "%s/%s.plot.csv", dir, names[i]);
        lb_check(exists(path), "%s: %s written", what, path);
        snprintf(path, sizeof path, "%s/%s.png", dir, names[i]);
        lb_check(!exists(path), "%s: %s should not be rendered", what, path);
    }
    lb_run_free(&r);
}

static void check_usage(LbRun r, const char *want, const char *what)
{
    lb_check(r.code == 2, "%s: exit %d: should be 2 (stderr: %s)", what, r.code, r.err);
    lb_check(lb_lines(r.err) == 1 && strstr(r.err, want), "%s: one line with \"%s\", got: %s", what, want, r.err);
    lb_run_free(&r);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: test_cli_plot_scripts PATH-TO-LINBENCH\n");
        return 1;
    }
    char *bin = argv[1];
    const char *scratch = lb_scratch_dir("cli-plot-scripts");
    LbCellResult rows[] = {FX_STD(512, 40, 2.0), FX_LIN(512, 128, 68, 1.25), FX_LIN(512, 256, 60, 1.6)};
    char dir[4200], other[4200];
    snprintf(dir, sizeof dir, "%s/sweep", scratch);
    lb_check(fx_sweep_dir(dir, rows, 3, "512", "128,256", "Tesla V100-SXM2-16GB") == 0, "made a sweep directory");

    /* No gnuplot on PATH. */
    char *av[] = {bin, "plot", dir, NULL};
    char *env[] = {"PATH=/nonexistent-linbench-test", NULL};
    lb_child_env = env;
    LbRun r = lb_run(av);
    lb_child_env = NULL;
    lb_check(strstr(r.out, "gnuplot is not on PATH") != NULL, "without gnuplot, says so: %s", r.out);
    check_scripts_only(dir, r, "no gnuplot");

    /* --no-render, into another directory. */
    snprintf(other, sizeof other, "%s/scripts", scratch);
    char *av2[] = {bin, "plot", "--no-render", "-o", other, dir, NULL};
    check_scripts_only(other, lb_run(av2), "--no-render --out");

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
        char edir[4300], gp[4400];
        snprintf(edir, sizeof edir, "%s/%s", scratch, empty[i].name);
        lb_check(fx_sweep_dir(edir, oom, empty[i].rows, "512", "128,256", "Tesla V100-SXM2-16GB") == 0, "made %s", edir);
        char *ev[] = {bin, "plot", "--no-render", edir, NULL};
        r = lb_run(ev);
        lb_check(r.code == 0, "plot %s: exit %d: %s", empty[i].name, r.code, r.err);
        lb_run_free(&r);
        snprintf(gp, sizeof gp, "%s/time_per_seq.gp", edir);
        char *script = lb_slurp(gp);
        lb_check(script && strstr(script, empty[i].label), "%s: time_per_seq.gp's label should be %s:\n%s", empty[i].name,
                 empty[i].label, script ? script : "(none)");
        free(script);
    }

    /* Bad input. */
    char *b1[] = {bin, "plot", NULL};
    check_usage(lb_run(b1), "plot needs a sweep directory", "no directory");
    char *b2[] = {bin, "plot", (char *)scratch, NULL};
    check_usage(lb_run(b2), "no raw.csv in it", "a directory without raw.csv");
    char *b3[] = {bin, "plot", dir, "--colour", NULL};
    check_usage(lb_run(b3), "unknown flag \"--colour\"", "an unknown flag");
    char file[4400];
    snprintf(file, sizeof file, "%s/raw.csv", dir);
    char *b4[] = {bin, "plot", dir, "--out", file, NULL};
    check_usage(lb_run(b4), "for --out: not a directory", "--out naming a file");
    char *b5[] = {bin, "plot", dir, "--out", NULL};
    check_usage(lb_run(b5), "--out needs a value", "--out without a value");

    /* An --out that cannot be created: a runtime failure, exit 1. */
    char *b6[] = {bin, "plot", "--no-render", dir, "--out", "/proc/linbench-test/figures", NULL};
    r = lb_run(b6);
    lb_check(r.code == 1 && lb_lines(r.err) == 1 && strstr(r.err, "/proc/linbench-test"),
             "unwritable --out: exit %d: should be 1 with one line: %s", r.code, r.err);
    lb_run_free(&r);

    char *h[] = {bin, "plot", "--help", NULL};
    r = lb_run(h);
    lb_check(r.code == 0 && strstr(r.out, "--out") && strstr(r.out, "--no-render") && strstr(r.out, "default"),
             "--help lists every flag with its default:\n%s", r.out);
    lb_run_free(&r);
    lb_test_cleanup(scratch);
    return lb_test_finish("test_cli_plot_scripts");
}
