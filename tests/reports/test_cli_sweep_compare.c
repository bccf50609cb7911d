/* A real sweep on the CPU reference, then compare on it: linbench sweep --device cpu on a small
 * model (n 512..2048, k 128..512, --mem-limit 64M), and `linbench compare DIR --format csv`
 * checked cell by cell: measured against raw.csv read back through libcsv (time = ms per
 * sequence ratio, memory = batch ratio, OOM / ERR / NA by METHOD.md), paper against Table 3,
 * ratio = measured / paper. Then the sweep against itself: B / A is 1 wherever both measured.
 * Usage: test_cli_sweep_compare PATH-TO-LINBENCH [PAPER-DIR] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "reports/raw.h"
#include "tests/lib/check.h"
#include "tests/lib/spawn.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: test_cli_sweep_compare PATH-TO-LINBENCH [PAPER-DIR]\n");
        return 1;
    }
    char *bin = argv[1];
    const char *scratch = lb_scratch_dir("cli-sweep-compare");
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/sweep", scratch);

    ExPaper paper;
    ex_paper_load(&paper, argc > 2 ? argv[2] : NULL);

    char *sweep[] = {bin, "sweep", "--device", "cpu", "--layers", "2", "--d-model", "64", "--heads", "4",
                     "--ffn", "128", "--vocab", "1000", "--n", "512:2048", "--k", "128:512",
                     "--mem-limit", "64M", "--cell-time", "1", "--out", dir, "--quiet", NULL};
    LbRun r = lb_run(sweep);
    lb_check(r.code == 0, "sweep: exit %d: %s", r.code, r.err);
    printf("%s", r.out);
    lb_run_free(&r);

    char raw[4400];
    snprintf(raw, sizeof raw, "%s/raw.csv", dir);
    LbCellResult *rows = NULL;
    size_t count = 0;
    if (!lb_check(lb_raw_read(raw, &rows, &count) == 0 && count == 3 + 2 + 3 + 3,
                  "raw.csv reads back with 11 rows (3 standard, 8 Linformer), got %zu", count))
        return lb_test_finish("test_cli_sweep_compare");

    char *cmp[] = {bin, "compare", dir, "--format", "csv", NULL};
    r = lb_run(cmp);
    lb_check(r.code == 0, "compare --format csv: exit %d: %s", r.code, r.err);
    static const char *const head[6] = {"grid", "n", "k", "measured", "paper", "measured_over_paper"};
    ExRows rs = {rows, count};
    size_t cells = ex_check_compare_csv(r.out, head, ex_side_rows, &rs, ex_side_paper, &paper, 0);
    lb_check(cells == 2 * 8, "compare: %zu cells: should be 16 (8 with k < n, twice)", cells);
    lb_run_free(&r);

    char *text[] = {bin, "compare", dir, NULL};
    r = lb_run(text);
    lb_check(r.code == 0 && strstr(r.out, "(cpu)") && strstr(r.out, "2 layers, d_model 64, 4 heads, ffn 128") &&
                 strstr(r.out, "memory budget 64 MiB (--mem-limit)"),
             "compare text header: exit %d:\n%s", r.code, r.out);
    printf("%s", r.out);
    lb_run_free(&r);

    char *self[] = {bin, "compare", dir, dir, "--format", "csv", NULL};
    r = lb_run(self);
    lb_check(r.code == 0, "compare DIR DIR: exit %d: %s", r.code, r.err);
    static const char *const ab[6] = {"grid", "n", "k", "a", "b", "b_over_a"};
    cells = ex_check_compare_csv(r.out, ab, ex_side_rows, &rs, ex_side_rows, &rs, 1);
    lb_check(cells == 16, "compare DIR DIR: %zu cells: should be 16", cells);
    lb_run_free(&r);
    free(rows);
    lb_test_cleanup(scratch);
    return lb_test_finish("test_cli_sweep_compare");
}
