/* The two grids from raw rows (METHOD.md, "Ratios"): shape as asked, EMPTY where k >= n, the
 * time ratio of ms per sequence and the memory ratio of batches, OOM / ERR / NA cells, the last
 * of two rows for a cell winning, and the CSV files read back through libcsv; and the paper's
 * Table 3 as reports/ holds it.
 * Usage: test_grid [PAPER-DIR] */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/base/status.h"
#include "reports/csv_io.h"
#include "reports/grid.h"
#include "reports/paper_table3.h"
#include "tests/lib/check.h"
#include "tests/reports/fixture.h"

static const LbGridCell *at(const LbGrid *g, const LbGridCell *cells, int64_t n, int64_t k)
{
    for (size_t c = 0; c < g->rows * g->cols; c++)
        if (g->n[c / g->cols] == n && g->k[c % g->cols] == k)
            return &cells[c];
    return NULL;
}

static void check_value(const LbGrid *g, const LbGridCell *cells, const char *what, int64_t n,
                        int64_t k, double want)
{
    const LbGridCell *c = at(g, cells, n, k);
    lb_check(c && c->kind == LB_GRID_VALUE && c->value == want,
             "%s(%lld, %lld) = kind %d value %.17g: should be %.17g", what, (long long)n, (long long)k,
             c ? (int)c->kind : -1, c ? c->value : NAN, want);
}

static void check_kind(const LbGrid *g, const char *what, int64_t n, int64_t k, LbGridCellKind want)
{
    const LbGridCell *t = at(g, g->time, n, k), *m = at(g, g->memory, n, k);
    lb_check(t && m && t->kind == want && m->kind == want,
             "%s cell (%lld, %lld): kinds %d / %d: should be %d", what, (long long)n, (long long)k,
             t ? (int)t->kind : -1, m ? (int)m->kind : -1, (int)want);
}

/* g's lists are n (its rows) and k (its columns). */
static int same_lists(const LbGrid *g, const int64_t *n, size_t rows, const int64_t *k, size_t cols)
{
    int same = g->rows == rows && g->cols == cols;
    for (size_t i = 0; same && i < rows; i++)
        same = g->n[i] == n[i];
    for (size_t j = 0; same && j < cols; j++)
        same = g->k[j] == k[j];
    return same;
}

/* What lb_grid_print writes in format f (malloc'd), its length in *len. */
static char *printed(const LbGrid *g, LbFormat f, size_t *len)
{
    char *text = NULL;
    FILE *mem = open_memstream(&text, len);
    lb_grid_print(mem, g, f);
    fclose(mem);
    return text;
}

/* Both grids EMPTY exactly where k >= n; where all_values, a value in every other cell. */
static void check_empty(const LbGrid *g, const char *what, int all_values)
{
    for (size_t c = 0; c < g->rows * g->cols; c++) {
        const long long n = g->n[c / g->cols], k = g->k[c % g->cols];
        const LbGridCellKind t = g->time[c].kind, m = g->memory[c].kind;
        lb_check((t == LB_GRID_EMPTY) == (k >= n) && (m == LB_GRID_EMPTY) == (k >= n) &&
                     (k >= n || !all_values || (t == LB_GRID_VALUE && m == LB_GRID_VALUE)),
                 "%s (%lld, %lld): kinds %d / %d: EMPTY exactly when k >= n%s", what, n, k, (int)t, (int)m,
                 all_values ? ", a value otherwise" : "");
    }
}

/* The paper's Table 3 kept in reports/paper_table3.c: byte for byte the CSV files of
 * ../shared/paper when that directory exists (skipped otherwise), and parsed into the grids
 * Table 3 shows: n 512 .. 65536, k 128 .. 2048, "-" exactly where k >= n, spot values. */
static void check_paper(const char *dir)
{
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
        return;
    static const int64_t n[] = {512, 1024, 2048, 4096, 8192, 16384, 32768, 65536}, k[] = {128, 256, 512, 1024, 2048};
    lb_check(same_lists(&g, n, 8, k, 5), "shape %zu x %zu: should be n 512 .. 65536 by k 128 .. 2048", g.rows, g.cols);
    check_empty(&g, "paper", 1);
    /* Corners and a middle cell of TABLE3.md, both grids. */
    check_value(&g, g.time, "paper time", 512, 128, 1.5);
    check_value(&g, g.time, "paper time", 65536, 2048, 7.9);
    check_value(&g, g.time, "paper time", 8192, 512, 4.4);
    check_value(&g, g.memory, "paper memory", 512, 128, 1.7);
    check_value(&g, g.memory, "paper memory", 65536, 128, 60);
    check_value(&g, g.memory, "paper memory", 16384, 2048, 8);
    lb_grid_free(&g);
}

int main(int argc, char **argv)
{
    check_paper(argc > 1 ? argv[1] : NULL);
    LbCellResult rows[] = {
        FX_LIN(512, 128, 10, 9.0), /* replaced by the later row for the same cell */
        FX_STD(512, 40, 2.0),
        FX_LIN(512, 128, 70, 1.25),
        FX_LIN(512, 256, 60, 1.6),
        FX_STD(1024, 12, 8.0),
        FX_LIN(1024, 128, 36, 4.0),
        fx_row(LB_MODEL_LINFORMER, 1024, 512, 0, 0, LB_CELL_ERROR),
        /* (1024, 256) never measured */
        fx_row(LB_MODEL_STANDARD, 2048, 0, 0, 0, LB_CELL_OOM),
        FX_LIN(2048, 128, 20, 3.0),
        FX_LIN(2048, 1024, 6, 5.0),
        FX_STD(4096, 2, 50.0),
        fx_row(LB_MODEL_LINFORMER, 4096, 256, 0, 0, LB_CELL_OOM),
        FX_LIN(4096, 128, 11, 10.0),
        FX_LIN(99, 7, 1, 1.0), /* outside the asked lists: ignored */
    };
    size_t count = sizeof rows / sizeof rows[0];
    const int64_t n[] = {512, 1024, 2048, 4096, 8192};
    const int64_t k[] = {128, 256, 512, 1024};
    LbGrid g;
    int rc = lb_grid_from_raw(rows, count, n, 5, k, 4, &g);
    lb_check(rc == LB_OK, "lb_grid_from_raw = %d: %s", rc, lb_error_message());
    if (rc != LB_OK)
        return lb_test_finish("test_grid");
    lb_check(same_lists(&g, n, 5, k, 4), "shape %zu x %zu: should be the 5 n by the 4 k asked", g.rows, g.cols);

    check_empty(&g, "grid", 0);

    /* Values: time = standard / Linformer ms per sequence; memory = Linformer / standard batch. */
    check_value(&g, g.time, "time", 512, 128, 2.0 / 1.25); /* the later (512, 128) row */
    check_value(&g, g.memory, "memory", 512, 128, 70.0 / 40.0);
    check_value(&g, g.time, "time", 512, 256, 2.0 / 1.6);
    check_value(&g, g.memory, "memory", 512, 256, 60.0 / 40.0);
    check_value(&g, g.time, "time", 1024, 128, 8.0 / 4.0);
    check_value(&g, g.memory, "memory", 1024, 128, 36.0 / 12.0);
    check_value(&g, g.time, "time", 4096, 128, 50.0 / 10.0);
    check_value(&g, g.memory, "memory", 4096, 128, 11.0 / 2.0);

    check_kind(&g, "error on the Linformer side", 1024, 512, LB_GRID_ERROR);
    check_kind(&g, "never measured", 1024, 256, LB_GRID_MISSING);
    check_kind(&g, "standard OOM", 2048, 128, LB_GRID_OOM);
    check_kind(&g, "standard OOM", 2048, 1024, LB_GRID_OOM);
    check_kind(&g, "standard OOM, Linformer not measured", 2048, 256, LB_GRID_OOM);
    check_kind(&g, "Linformer OOM", 4096, 256, LB_GRID_OOM);
    check_kind(&g, "Linformer not measured", 4096, 512, LB_GRID_MISSING);
    check_kind(&g, "no rows at all", 8192, 128, LB_GRID_MISSING);

    /* Lists taken from the rows when not given: sorted, unique, k from Linformer rows only. */
    LbGrid h;
    rc = lb_grid_from_raw(rows, count, NULL, 0, NULL, 0, &h);
    const int64_t hn[] = {99, 512, 1024, 2048, 4096}, hk[] = {7, 128, 256, 512, 1024};
    if (lb_check(rc == LB_OK && same_lists(&h, hn, 5, hk, 5),
                 "lists from rows: %zu x %zu: should be n 99..4096 by k 7..1024, sorted and unique", h.rows, h.cols))
        check_kind(&h, "99 has no standard row", 99, 7, LB_GRID_MISSING);
    lb_grid_free(&h);

    /* The CSV files (their text: test_speedups), back into a grid. */
    char *dir = lb_test_tempdir("grid");
    rc = lb_grids_write(dir, &g);
    lb_check(rc == LB_OK, "lb_grids_write = %d: %s", rc, lb_error_message());
    LbGrid back;
    rc = lb_grids_read(dir, &back);
    if (lb_check(rc == LB_OK && same_lists(&back, g.n, g.rows, g.k, g.cols), "lb_grids_read = %d (%s): the lists as written",
                 rc, lb_error_message())) {
        int same = 1;
        for (size_t c = 0; c < g.rows * g.cols; c++)
            same &= back.time[c].kind == g.time[c].kind && back.memory[c].kind == g.memory[c].kind &&
                    fabs(back.time[c].value - g.time[c].value) <= 1e-5 * fabs(g.time[c].value) &&
                    fabs(back.memory[c].value - g.memory[c].value) <= 1e-5 * fabs(g.memory[c].value);
        lb_check(same, "grids read back differ from the ones written");
    }
    lb_grid_free(&back);

    /* A sweep from before the energy grid has no energy_speedup.csv: read without it. A memory
     * grid over other n than the time grid's is refused, and so is a directory without one. */
    char path[4200], text_in[8192] = "";
    snprintf(path, sizeof path, "%s/%s", dir, LB_ENERGY_SPEEDUP_FILE);
    remove(path);
    rc = lb_grids_read(dir, &back);
    lb_check(rc == LB_OK && !lb_grid_has_energy(&back), "without %s: read, no energy (rc %d: %s)",
             LB_ENERGY_SPEEDUP_FILE, rc, lb_error_message());
    lb_grid_free(&back);
    snprintf(path, sizeof path, "%s/memory_speedup.csv", dir);
    FILE *f = fopen(path, "r");
    const size_t got = f ? fread(text_in, 1, sizeof text_in - 1, f) : 0;
    if (f)
        fclose(f);
    text_in[got] = '\0';
    char *row = strstr(text_in, "\n512,");
    if (lb_check(row != NULL, "memory_speedup.csv has a row for n = 512:\n%s", text_in)) {
        row[3] = '3'; /* n = 513 */
        f = fopen(path, "w");
        lb_check(f && fputs(text_in, f) >= 0 && fclose(f) == 0, "%s rewritten", path);
        rc = lb_grids_read(dir, &back);
        lb_check(rc == LB_ERR_FORMAT && strstr(lb_error_message(), "differ"),
                 "a memory grid over n = 513 where the time grid has 512: refused (rc %d: %s)", rc, lb_error_message());
        lb_grid_free(&back);
    }
    remove(path);
    rc = lb_grids_read(dir, &back);
    lb_check(rc != LB_OK, "without memory_speedup.csv: refused (rc %d)", rc);
    lb_grid_free(&back);

    /* Tables: 3 significant digits and an x; - for EMPTY; the CSV table parses. */
    size_t len = 0;
    char *text = printed(&g, LB_FORMAT_TEXT, &len);
    lb_check(text && strstr(text, "1.60x") && strstr(text, "1.75x") && strstr(text, "5.50x") && strstr(text, "2.00x") &&
                 strstr(text, "OOM") && strstr(text, "ERR") && strstr(text, "NA") && strstr(text, "  -"),
             "text table:\n%s", text ? text : "(none)");
    printf("%s", text);
    free(text);
    text = printed(&g, LB_FORMAT_MD, &len);
    lb_check(text && strstr(text, "| n \\ k | 128 | 256 | 512 | 1024 |") && strstr(text, "| 512 | 1.60x | 1.25x | - | - |"),
             "markdown table:\n%s", text ? text : "(none)");
    free(text);
    text = printed(&g, LB_FORMAT_CSV, &len);
    LbCsvTable t;
    rc = lb_csv_parse_text(text, len, 0, "printed CSV", &t);
    lb_check(rc == LB_OK && t.rows == 11 && t.row[0].count == 6 && strcmp(t.row[0].fields[0], "grid") == 0 &&
                 strcmp(t.row[1].fields[0], "time") == 0 && strcmp(t.row[6].fields[0], "memory") == 0,
             "printed CSV: %zu records:\n%s", t.rows, text);
    lb_csv_table_free(&t);
    free(text);

    /* Cells as tables show them: 3 significant digits, never an exponent. */
    const struct {
        double value;
        const char *want, *or_want;
    } texts[] = {{14.1234, "14.1x", NULL}, {2.0, "2.00x", NULL}, {128.4, "128x", NULL}, {1234.5, "1234x", "1235x"}};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        char cell[32];
        const LbGridCell v = {LB_GRID_VALUE, texts[i].value};
        lb_grid_cell_text(&v, "x", cell, sizeof cell);
        lb_check(strcmp(cell, texts[i].want) == 0 || (texts[i].or_want && strcmp(cell, texts[i].or_want) == 0),
                 "%g as \"%s\": should be %s", texts[i].value, cell, texts[i].want);
    }

    lb_grid_free(&g);

    /* Table 3's Linformer: the linear one wherever it has rows, even beside a projection's; the
     * projection measured in its place (--projection) where it has none; the linear one where no
     * Linformer has rows. */
    {
        LbCellResult mix[] = {FX_STD(512, 10, 2.0), fx_row(LB_MODEL_LINFORMER_MEAN, 512, 128, 20, 0.5, LB_CELL_OK),
                              FX_LIN(512, 128, 30, 1.0), fx_row(LB_MODEL_LINFORMER_CONV, 512, 128, 40, 0.25, LB_CELL_OK)};
        const int64_t n1[] = {512}, k1[] = {128};
        lb_check(lb_table3_model(mix, 4) == LB_MODEL_LINFORMER, "linear and mean rows: Table 3 is the linear one");
        lb_check(lb_table3_model(mix + 3, 1) == LB_MODEL_LINFORMER_CONV, "conv rows alone: Table 3 is conv's");
        lb_check(lb_table3_model(mix, 1) == LB_MODEL_LINFORMER, "standard alone: Table 3 is the linear one's (NA)");
        LbCellResult mean_only[] = {mix[0], mix[1], mix[3]};
        LbGrid t3;
        if (lb_check(lb_grid_from_raw(mean_only, 3, n1, 1, k1, 1, &t3) == LB_OK, "Table 3 of a --projection sweep")) {
            lb_check(t3.model == LB_MODEL_LINFORMER_MEAN && t3.time[0].kind == LB_GRID_VALUE &&
                         t3.time[0].value == 4.0 && t3.memory[0].value == 2.0,
                     "mean measured in linear's place: Table 3 is %s, time %g, memory %g: should be "
                     "linformer-mean, 4, 2",
                     lb_model_name(t3.model), t3.time[0].value, t3.memory[0].value);
            lb_check(!lb_grid_dash_below_n(&t3), "k 128 divides n 512: no pooling dash");
            lb_grid_free(&t3);
        }
        /* k 96 does not divide n 512: a "-" below n, which the legend explains */
        const int64_t k2[] = {96};
        LbCellResult mean96[] = {mix[0], fx_row(LB_MODEL_LINFORMER_MEAN, 512, 96, 20, 0.5, LB_CELL_OK)};
        if (lb_check(lb_grid_from_raw(mean96, 2, n1, 1, k2, 1, &t3) == LB_OK, "Table 3 of mean at k 96")) {
            lb_check(t3.time[0].kind == LB_GRID_EMPTY && lb_grid_dash_below_n(&t3) &&
                         strstr(lb_grid_dash_meaning(1), "does not divide") && !strstr(lb_grid_dash_meaning(0), "divide"),
                     "mean at n 512, k 96: no such cell, and the legend says why");
            lb_grid_free(&t3);
        }
    }
    /* Times that each read as a number but whose ratio overflows (a hand-edited 1e307): ERR, as a
     * zero time is, never an inf that lb_grids_read refuses once written. */
    {
        LbCellResult huge[] = {FX_STD(512, 10, 1e307), FX_LIN(512, 128, 20, 1e-3)};
        const int64_t n1[] = {512}, k1[] = {128};
        LbGrid hg;
        if (lb_check(lb_grid_from_raw(huge, 2, n1, 1, k1, 1, &hg) == LB_OK, "grid of an overflowing ratio")) {
            lb_check(hg.time[0].kind == LB_GRID_ERROR && hg.memory[0].kind == LB_GRID_VALUE,
                     "time 1e307 / 1e-3 ms per sequence: kind %d value %g: should be ERR (%d)", (int)hg.time[0].kind,
                     hg.time[0].value, (int)LB_GRID_ERROR);
            lb_grid_free(&hg);
        }
    }
    lb_test_cleanup(dir);
    return lb_test_finish("test_grid");
}
