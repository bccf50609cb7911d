/* linbench compare end to end, on sweep directories made from rows: the CSV output checked cell
 * by cell against the rows and the paper's Table 3 (read from ../shared/paper when present,
 * independently of reports/), ratio = measured / paper; two sweeps with ratio B / A over the
 * union of their grids; the text and Markdown headers; and every kind of bad input: one line on
 * stderr, exit 2; an unwritable stdout: exit 1.
 * Usage: test_cli_compare PATH-TO-LINBENCH [PAPER-DIR] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "fixture.h"
#include "reports/paper_table3.h"
#include "tests/lib/check.h"
#include "tests/lib/spawn.h"

static char *bin;
static const char *scratch;

/* The paper's numbers from ../shared/paper when it is there (the source), else from the copy in
 * the binary. */
static void load_paper(ExPaper *p, const char *paper_dir)
{
    const char *names[2] = {"table3_time.csv", "table3_memory.csv"};
    const char *builtin[2] = {lb_paper_table3_time_csv, lb_paper_table3_memory_csv};
    for (int g = 0; g < 2; g++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", paper_dir ? paper_dir : "/nonexistent", names[g]);
        char *text = lb_slurp(path);
        int from_file = text && *text;
        lb_check(ex_paper_parse(p, g, from_file ? text : builtin[g]) == 0, "the paper's %s parses", names[g]);
        if (g == 0)
            printf("paper's numbers from %s\n", from_file ? path : "the copy in reports/paper_table3.c");
        free(text);
    }
}

static LbRun run(char *a1, char *a2, char *a3, char *a4)
{
    char *argv[] = {bin, "compare", a1, a2, a3, a4, NULL};
    return lb_run(argv);
}

/* A usage error: exit 2, nothing on stdout, one line on stderr holding `want`. */
static void check_usage(LbRun r, const char *want, const char *what)
{
    lb_check(r.code == 2, "%s: exit %d: should be 2 (stderr: %s)", what, r.code, r.err);
    lb_check(lb_lines(r.err) == 1 && strncmp(r.err, "linbench: ", 10) == 0 && strstr(r.err, want),
             "%s: stderr should be one line with \"%s\", got: %s", what, want, r.err);
    lb_check(r.out[0] == '\0', "%s: stdout should be empty, got: %s", what, r.out);
    lb_run_free(&r);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: test_cli_compare PATH-TO-LINBENCH [PAPER-DIR]\n");
        return 1;
    }
    bin = argv[1];
    scratch = lb_scratch_dir("cli-compare");
    ExPaper paper;
    load_paper(&paper, argc > 2 ? argv[2] : NULL);

    /* Sweep A: values, OOM on either side, an error, a cell never measured, an n the paper does
     * not have (256), an n with no rows (4096), and a cell measured twice (the last wins). */
    LbCellResult a_rows[] = {
        FX_STD(256, 90, 0.5),
        FX_LIN(256, 128, 120, 0.4),
        FX_LIN(512, 128, 10, 9.0),
        FX_STD(512, 40, 2.0),
        FX_LIN(512, 128, 68, 2.0 / 1.5),
        FX_LIN(512, 256, 60, 1.6),
        FX_STD(1024, 10, 8.0),
        FX_LIN(1024, 128, 30, 4.0),
        fx_row(LB_MODEL_LINFORMER, 1024, 256, 0, 0, LB_CELL_OOM),
        fx_row(LB_MODEL_LINFORMER, 1024, 512, 0, 0, LB_CELL_ERROR),
        fx_row(LB_MODEL_STANDARD, 2048, 0, 0, 0, LB_CELL_OOM),
        FX_LIN(2048, 128, 5, 3.0),
    };
    size_t a_count = sizeof a_rows / sizeof a_rows[0];
    char dir_a[4200], dir_b[4200];
    snprintf(dir_a, sizeof dir_a, "%s/a", scratch);
    snprintf(dir_b, sizeof dir_b, "%s/b", scratch);
    lb_check(fx_sweep_dir(dir_a, a_rows, a_count, "256,512,1024,2048,4096", "128,256,512",
                          "Tesla V100-SXM2-16GB") == 0,
             "made sweep A");

    /* Against the paper, CSV: every cell with k < n of A's grid (5 n x 3 k less the k >= n ones,
     * twice). */
    LbRun r = run(dir_a, "--format", "csv", NULL);
    lb_check(r.code == 0, "compare A --format csv: exit %d: %s", r.code, r.err);
    static const char *const paper_head[6] = {"grid", "n", "k", "measured", "paper", "measured_over_paper"};
    ExRows ra = {a_rows, a_count};
    size_t cells = ex_check_compare_csv(r.out, paper_head, ex_side_rows, &ra, ex_side_paper, &paper, 0);
    lb_check(cells == 2 * (1 + 2 + 3 + 3 + 3), "compare A: %zu cells: should be 24", cells);
    /* Spot checks of the rules themselves, readable on their own. */
    lb_check(strstr(r.out, "time,512,128,1.5,1.5,1\n") != NULL, "time (512, 128): 1.5 measured, 1.5 in the paper, ratio 1");
    lb_check(strstr(r.out, "memory,512,128,1.7,1.7,1\n") != NULL, "memory (512, 128): batch 68 / 40 = 1.7 against 1.7");
    lb_check(strstr(r.out, "time,2048,128,OOM,2.6,OOM\n") != NULL, "standard OOM shows OOM beside the paper's 2.6");
    lb_check(strstr(r.out, "time,256,128,1.25,NA,NA\n") != NULL, "n=256 is not in the paper: NA");
    lb_check(strstr(r.out, "time,4096,512,NA,2.8,NA\n") != NULL, "a cell not measured yet: NA");
    lb_run_free(&r);

    /* Text: the header says what ran, and that the budget came from --mem-limit. */
    r = run(dir_a, NULL, NULL, NULL);
    lb_check(r.code == 0, "compare A: exit %d: %s", r.code, r.err);
    lb_check(strstr(r.out, "Tesla V100-SXM2-16GB") && strstr(r.out, "fp16") &&
                 strstr(r.out, "12 layers, d_model 768, 12 heads, ffn 3072") &&
                 strstr(r.out, "layerwise sharing, early order") &&
                 strstr(r.out, "memory budget 16 GiB (--mem-limit)") && strstr(r.out, "16 GB Tesla V100") &&
                 strstr(r.out, "measured / paper"),
             "text header and titles:\n%s", r.out);
    lb_check(strstr(r.out, "1.50x") && strstr(r.out, "1.5x") && strstr(r.out, " OOM") && strstr(r.out, " ERR"),
             "text cells: measured 1.50x, paper 1.5x, OOM, ERR:\n%s", r.out);
    printf("%s", r.out);
    lb_run_free(&r);
    r = run("--format", "md", dir_a, NULL);
    lb_check(r.code == 0 && strstr(r.out, "| n \\ k | 128 | 256 | 512 |") && strstr(r.out, "**measured / paper**") &&
                 strstr(r.out, "| 512 | 1.50x | 1.25x | - |"),
             "markdown: exit %d:\n%s", r.code, r.out);
    lb_run_free(&r);

    /* Two sweeps: B has a different (512, 128), no n=256, and an n=8192 A lacks. */
    LbCellResult b_rows[] = {
        FX_STD(512, 40, 2.0),
        FX_LIN(512, 128, 34, 2.0 / 0.75),
        FX_LIN(512, 256, 60, 1.6),
        FX_STD(1024, 10, 8.0),
        FX_LIN(1024, 128, 30, 4.0),
        FX_LIN(1024, 256, 20, 5.0),
        FX_STD(8192, 1, 100.0),
        FX_LIN(8192, 128, 16, 20.0),
    };
    size_t b_count = sizeof b_rows / sizeof b_rows[0];
    lb_check(fx_sweep_dir(dir_b, b_rows, b_count, "512,1024,8192", "128,256", "NVIDIA H100 80GB HBM3") == 0,
             "made sweep B");
    r = run(dir_a, dir_b, "--format", "csv");
    lb_check(r.code == 0, "compare A B: exit %d: %s", r.code, r.err);
    static const char *const ab_head[6] = {"grid", "n", "k", "a", "b", "b_over_a"};
    ExRows rb = {b_rows, b_count};
    cells = ex_check_compare_csv(r.out, ab_head, ex_side_rows, &ra, ex_side_rows, &rb, 1);
    /* union: n 256..8192 (6), k 128..512 (3): cells with k < n = 1 + 2 + 3 * 4 = 15, twice */
    lb_check(cells == 30, "compare A B: %zu cells: should be 30", cells);
    lb_check(strstr(r.out, "time,512,128,1.5,0.75,0.5\n") != NULL, "B / A at (512, 128) is 0.5");
    lb_check(strstr(r.out, "time,8192,128,NA,5,NA\n") != NULL, "n=8192 only in B: NA in A and in the ratio");
    lb_run_free(&r);
    r = run(dir_a, dir_b, NULL, NULL);
    lb_check(r.code == 0 && strstr(r.out, "A: ") && strstr(r.out, "B: ") && strstr(r.out, "NVIDIA H100 80GB HBM3") &&
                 strstr(r.out, "B / A"),
             "compare A B text: exit %d:\n%s", r.code, r.out);
    /* A ran on a V100, B on an H100: B / A measures the devices too, and the header says so */
    lb_check(strstr(r.out, "devices differ: A ran on Tesla V100-SXM2-16GB, B on NVIDIA H100 80GB HBM3") != NULL,
             "compare A B text says the devices differ:\n%s", r.out);
    lb_run_free(&r);
    r = run(dir_a, dir_b, "--format", "csv");
    lb_check(r.code == 0 && lb_lines(r.err) == 1 && strstr(r.err, "linbench: note: devices differ") &&
                 strstr(r.err, "Tesla V100-SXM2-16GB") && strstr(r.err, "NVIDIA H100 80GB HBM3"),
             "compare A B csv: exit %d, one note on stderr that the devices differ: %s", r.code, r.err);
    lb_run_free(&r);
    r = run(dir_a, dir_a, NULL, NULL);
    lb_check(r.code == 0 && !strstr(r.out, "devices differ") && r.err[0] == '\0',
             "compare A A: exit %d, no word of devices differing: %s%s", r.code, r.err, r.out);
    lb_run_free(&r);

    /* Bad input: one line, exit 2, nothing on stdout. */
    check_usage(run(dir_a, "--format", "x", NULL), "invalid argument \"x\" for --format: should be text, md or csv", "--format x");
    check_usage(run(dir_a, "--format", NULL, NULL), "--format needs a value", "--format without a value");
    check_usage(run(dir_a, "--bogus", NULL, NULL), "unknown flag \"--bogus\"", "an unknown flag");
    check_usage(run(NULL, NULL, NULL, NULL), "compare needs a sweep directory", "no directory");
    check_usage(run(dir_a, dir_b, dir_a, NULL), "unexpected argument", "three directories");
    char empty[4200], no_meta[4200], bad_raw[4200], path[4300];
    snprintf(empty, sizeof empty, "%s/empty", scratch);
    mkdir(empty, 0755);
    check_usage(run(empty, NULL, NULL, NULL), "no raw.csv in it", "a directory without raw.csv");
    snprintf(no_meta, sizeof no_meta, "%s/nometa", scratch);
    fx_sweep_dir(no_meta, a_rows, 2, "256", "128", "x");
    snprintf(path, sizeof path, "%s/meta.csv", no_meta);
    remove(path);
    check_usage(run(no_meta, NULL, NULL, NULL), "no meta.csv in it", "a directory without meta.csv");
    snprintf(path, sizeof path, "%s/does-not-exist", scratch);
    check_usage(run(path, NULL, NULL, NULL), "No such file or directory", "a directory that does not exist");
    snprintf(bad_raw, sizeof bad_raw, "%s/badraw", scratch);
    fx_sweep_dir(bad_raw, a_rows, 2, "256", "128", "x");
    snprintf(path, sizeof path, "%s/raw.csv", bad_raw);
    FILE *f = fopen(path, "a");
    if (f) {
        fputs("standard,twelve,,,,fp16,1,1,1,1,1,1,1,1,1,5,,,,0,,,,,ok\n", f);
        fclose(f);
    }
    check_usage(run(bad_raw, NULL, NULL, NULL), "invalid n \"twelve\"", "a malformed raw.csv");

    /* Help lists every flag with its default. */
    r = run("--help", NULL, NULL, NULL);
    lb_check(r.code == 0 && strstr(r.out, "--format") && strstr(r.out, "(default text)") && strstr(r.out, "--help"),
             "--help: exit %d:\n%s", r.code, r.out);
    lb_run_free(&r);

    /* stdout that cannot be written: exit 1 and say so. */
    char *full_argv[] = {bin, "compare", dir_a, NULL};
    lb_child_stdout = "/dev/full";
    r = lb_run(full_argv);
    lb_child_stdout = NULL;
    lb_check(r.code == 1 && lb_lines(r.err) == 1 && strstr(r.err, "cannot write"),
             "stdout on /dev/full: exit %d: should be 1 with one line: %s", r.code, r.err);
    lb_run_free(&r);

    lb_test_cleanup(scratch);
    return lb_test_finish("test_cli_compare");
}
