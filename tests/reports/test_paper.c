/* The paper's Table 3 kept in reports/paper_table3.c: byte for byte the CSV files of
 * ../shared/paper when that directory exists (skipped otherwise), and parsed into the grids
 * Table 3 shows: n 512 .. 65536, k 128 .. 2048, "-" exactly where k >= n, spot values.
 * Usage: test_paper [PAPER-DIR] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/paper_table3.h"
#include "tests/lib/check.h"

static void check_value(const LbGrid *g, const LbGridCell *cells, const char *what, int64_t n,
                        int64_t k, double want)
{
    long i = lb_grid_row(g, n), j = lb_grid_col(g, k);
    const LbGridCell *c = i >= 0 && j >= 0 ? &cells[(size_t)i * g->cols + (size_t)j] : NULL;
    lb_check(c && c->kind == LB_GRID_VALUE && c->value == want, "paper %s (%lld, %lld) should be %g",
             what, (long long)n, (long long)k, want);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : NULL;
    const char *names[2] = {"table3_time.csv", "table3_memory.csv"};
    const char *copies[2] = {lb_paper_table3_time_csv, lb_paper_table3_memory_csv};
    for (int i = 0; i < 2; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir ? dir : "/nonexistent", names[i]);
        char *text = lb_slurp(path);
        if (!text) {
            printf("%s not found: the byte-for-byte check is skipped\n", path);
            continue;
        }
        lb_check(strcmp(text, copies[i]) == 0, "reports/paper_table3.c's %s differs from %s", names[i], path);
        free(text);
    }

    LbGrid g;
    int rc = lb_paper_table3(&g);
    if (!lb_check(rc == 0, "the paper's table parses"))
        return lb_test_finish("test_paper");
    lb_check(g.rows == 8 && g.cols == 5, "shape %zu x %zu: should be 8 x 5", g.rows, g.cols);
    for (size_t i = 0; i < g.rows && i < 8; i++)
        lb_check(g.n[i] == (int64_t)512 << i, "n[%zu] = %lld", i, (long long)g.n[i]);
    for (size_t j = 0; j < g.cols && j < 5; j++)
        lb_check(g.k[j] == (int64_t)128 << j, "k[%zu] = %lld", j, (long long)g.k[j]);
    for (size_t i = 0; i < g.rows; i++)
        for (size_t j = 0; j < g.cols; j++) {
            int empty = g.k[j] >= g.n[i];
            lb_check((g.time[i * g.cols + j].kind == LB_GRID_EMPTY) == empty &&
                         (g.memory[i * g.cols + j].kind == LB_GRID_EMPTY) == empty &&
                         (empty || (g.time[i * g.cols + j].kind == LB_GRID_VALUE &&
                                    g.memory[i * g.cols + j].kind == LB_GRID_VALUE)),
                     "paper (%lld, %lld): empty exactly when k >= n, a value otherwise", (long long)g.n[i],
                     (long long)g.k[j]);
        }
    /* Corners and a middle cell of TABLE3.md, both grids. */
    check_value(&g, g.time, "time", 512, 128, 1.5);
    check_value(&g, g.time, "time", 65536, 2048, 7.9);
    check_value(&g, g.time, "time", 8192, 512, 4.4);
    check_value(&g, g.memory, "memory", 512, 128, 1.7);
    check_value(&g, g.memory, "memory", 65536, 128, 60);
    check_value(&g, g.memory, "memory", 16384, 2048, 8);
    lb_grid_free(&g);
    return lb_test_finish("test_paper");
}
