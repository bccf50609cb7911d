/* What a comparison should say, worked out independently of reports/: the expected cell of a
 * sweep from its raw rows (METHOD.md's ratios and markers, the last row of a cell winning), the
 * paper's cell from its CSV files, and a check of `linbench compare --format csv` output cell by
 * cell against both. */
#ifndef LB_TESTS_EXPECT_H
#define LB_TESTS_EXPECT_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/measure/measure.h"
#include "reports/csv_io.h"
#include "reports/paper_table3.h"
#include "tests/lib/check.h"

/* A cell: a number (num, v), or a marker: "" (k >= n), "NA", "OOM", "ERR". */
typedef struct ExCell {
    int num;
    double v;
    char mark[4];
} ExCell;

/* The last row of cell (m, n, k), k counting only where m has a k axis; NULL when none. */
static inline const LbCellResult *ex_last(const LbCellResult *rows, size_t count, LbModelKind m, int64_t n,
                                          int64_t k)
{
    const LbCellResult *found = NULL;
    for (size_t i = 0; i < count; i++)
        if (rows[i].model == m && rows[i].n == n && (!lb_model_has_k(m) || rows[i].k == k))
            found = &rows[i];
    return found;
}

/* What a model m gains over a baseline b in a cell, from their rows: which 0 time (b's ms per
 * sequence over m's), 1 memory (m's batch over b's), 2 energy (b's J per sequence over m's, NA
 * unless both have one); ERR, then OOM, where either row says so, NA where either is missing. */
static inline ExCell ex_pair(const LbCellResult *b, const LbCellResult *m, int which)
{
    ExCell c = {0, 0.0, "NA"};
    if ((b && b->status == LB_CELL_ERROR) || (m && m->status == LB_CELL_ERROR))
        strcpy(c.mark, "ERR");
    else if ((b && b->status == LB_CELL_OOM) || (m && m->status == LB_CELL_OOM))
        strcpy(c.mark, "OOM");
    else if (b && m && (which < 2 || (b->energy_j_per_seq > 0 && m->energy_j_per_seq > 0))) {
        c.num = 1;
        c.v = which == 0   ? b->ms_per_seq / m->ms_per_seq
              : which == 1 ? (double)m->batch / (double)b->batch
                           : b->energy_j_per_seq / m->energy_j_per_seq;
    }
    return c;
}

/* Table 3's cell of a sweep: grid 0 = time, 1 = memory; "" where k >= n. */
static inline ExCell ex_measured(const LbCellResult *rows, size_t count, int grid, int64_t n,
                                 int64_t k)
{
    if (k >= n)
        return (ExCell){0, 0.0, ""};
    return ex_pair(ex_last(rows, count, LB_MODEL_STANDARD, n, 0), ex_last(rows, count, LB_MODEL_LINFORMER, n, k), grid);
}

/* The paper's grids: [grid][row][col] over n = 512 .. 65536 and k = 128 .. 2048. */
typedef struct ExPaper {
    double v[2][8][5]; /* NAN where the paper has "-" */
} ExPaper;

/* The paper's numbers from dir's table3_*.csv (the source, ../shared/paper) when there, else
 * from the copy in reports/paper_table3.c; parsed independently of reports/grid.c. */
static inline void ex_paper_load(ExPaper *p, const char *dir)
{
    static const char *const names[2] = {"table3_time.csv", "table3_memory.csv"};
    const char *builtin[2] = {lb_paper_table3_time_csv, lb_paper_table3_memory_csv};
    for (int g = 0; g < 2; g++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir ? dir : "/nonexistent", names[g]);
        char *text = lb_slurp(path);
        const char *csv = text && *text ? text : builtin[g];
        LbCsvTable t;
        int ok = lb_csv_parse_text(csv, strlen(csv), 0, "paper", &t) == 0 && t.rows == 9;
        for (size_t i = 1; ok && i < 9; i++) {
            ok = t.row[i].count == 6;
            for (size_t j = 0; ok && j < 5; j++)
                p->v[g][i - 1][j] = *t.row[i].fields[j + 1] ? strtod(t.row[i].fields[j + 1], NULL) : NAN;
        }
        lb_check(ok, "the paper's %s parses", names[g]);
        if (g == 0)
            printf("paper's numbers from %s\n", csv == text ? path : "the copy in reports/paper_table3.c");
        lb_csv_table_free(&t);
        free(text);
    }
}

static inline ExCell ex_paper(const ExPaper *p, int grid, int64_t n, int64_t k)
{
    ExCell c = {0, 0.0, ""};
    if (k >= n)
        return c;
    int i = 0, j = 0; /* n = 512 << i, k = 128 << j */
    while (i < 8 && ((int64_t)512 << i) != n)
        i++;
    while (j < 5 && ((int64_t)128 << j) != k)
        j++;
    if (i == 8 || j == 5 || isnan(p->v[grid][i][j])) {
        strcpy(c.mark, "NA");
        return c;
    }
    c.num = 1;
    c.v = p->v[grid][i][j];
    return c;
}

/* What a ratio cell shows when either side is not a number: "" first, then ERR, OOM, NA. */
static inline ExCell ex_ratio(ExCell num, ExCell den)
{
    ExCell c = {0, 0.0, ""};
    if (num.num && den.num) {
        c.num = 1;
        c.v = num.v / den.v;
        return c;
    }
    const char *order[4] = {"", "ERR", "OOM", "NA"};
    for (int i = 0; i < 4; i++) {
        if ((!num.num && strcmp(num.mark, order[i]) == 0) || (!den.num && strcmp(den.mark, order[i]) == 0)) {
            strcpy(c.mark, order[i]);
            return c;
        }
    }
    return c;
}

/* One CSV field against an expected cell: markers exactly, numbers to the 6 significant digits
 * written (%.6g: within 5e-6 relative; 1e-5 allowed). */
static inline int ex_field(const char *field, ExCell want, const char *what)
{
    if (!want.num)
        return lb_check(strcmp(field, want.mark) == 0, "%s: \"%s\": should be \"%s\"", what, field,
                        want.mark);
    double v;
    return lb_check(lb_csv_parse_double(field, &v) == 0 && fabs(v - want.v) <= 1e-5 * fabs(want.v),
                    "%s: \"%s\": should be %.6g", what, field, want.v);
}

/* One side of a comparison: a sweep's raw rows, or (paper set) the paper's table. */
typedef struct ExSide {
    const LbCellResult *rows;
    size_t count;
    const ExPaper *paper;
} ExSide;

static inline ExCell ex_side(const ExSide *s, int grid, int64_t n, int64_t k)
{
    return s->paper ? ex_paper(s->paper, grid, n, k) : ex_measured(s->rows, s->count, grid, n, k);
}

/* Check compare's CSV cell by cell: against the paper (second->paper) grid,n,k,measured,paper,
 * measured_over_paper, else grid,n,k,a,b,b_over_a. Returns the number of data rows seen. */
static inline size_t ex_check_compare_csv(const char *csv, const ExSide *first, const ExSide *second)
{
    static const char *const heads[2][6] = {{"grid", "n", "k", "a", "b", "b_over_a"},
                                            {"grid", "n", "k", "measured", "paper", "measured_over_paper"}};
    const char *const *header = heads[second->paper != NULL];
    LbCsvTable t;
    if (!lb_check(lb_csv_parse_text(csv, strlen(csv), 0, "compare output", &t) == 0,
                  "compare's CSV parses through libcsv"))
        return 0;
    int hdr = t.rows > 0 && t.row[0].count == 6;
    for (int c = 0; hdr && c < 6; c++)
        hdr = strcmp(t.row[0].fields[c], header[c]) == 0;
    lb_check(hdr, "compare's CSV header should be %s,%s,%s,%s,%s,%s", header[0], header[1], header[2],
             header[3], header[4], header[5]);
    for (size_t r = 1; r < t.rows; r++) {
        const LbCsvRow *row = &t.row[r];
        if (!lb_check(row->count == 6, "row %zu: %zu fields", r, row->count))
            continue;
        int grid = strcmp(row->fields[0], "time") == 0 ? 0 : strcmp(row->fields[0], "memory") == 0 ? 1 : -1;
        long long n, k;
        if (!lb_check(grid >= 0 && lb_csv_parse_int64(row->fields[1], &n) == 0 &&
                          lb_csv_parse_int64(row->fields[2], &k) == 0,
                      "row %zu: grid \"%s\", n \"%s\", k \"%s\"", r, row->fields[0], row->fields[1],
                      row->fields[2]))
            continue;
        lb_check(k < n, "row %zu: n=%lld k=%lld: cells with k >= n are left out", r, n, k);
        const ExCell a = ex_side(first, grid, n, k), b = ex_side(second, grid, n, k);
        const ExCell want[3] = {a, b, second->paper ? ex_ratio(a, b) : ex_ratio(b, a)};
        for (int c = 0; c < 3; c++) {
            char what[96];
            snprintf(what, sizeof what, "%s n=%lld k=%lld %s", row->fields[0], n, k, header[3 + c]);
            ex_field(row->fields[3 + c], want[c], what);
        }
    }
    size_t rows = t.rows ? t.rows - 1 : 0;
    lb_csv_table_free(&t);
    return rows;
}

#endif
