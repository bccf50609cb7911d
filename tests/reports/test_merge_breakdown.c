/* merge's breakdown.csv: a cell in two parts, measured alike (a part given twice under two names, a
 * merged directory beside one of its parts), is one row in raw.csv and must be one set of
 * operations in breakdown.csv too, not each operation twice (compare then showed the cell twice).
 * The cell given twice has no TFLOP/s (NaN, as a training step's row): raw.csv must read it back
 * and two NaNs must count as alike. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attn/base/status.h"
#include "reports/breakdown_csv.h"
#include "reports/merge.h"
#include "tests/lib/check.h"
#include "tests/reports/fixture.h"

/* Two operations of one cell, as a sweep's --breakdown writes them. */
static void cell_ops(LbModelKind model, int64_t n, int64_t k, LbBreakdownRecord out[2])
{
    static const char *const ops[2] = {"qkv", "pass"};
    for (int i = 0; i < 2; i++) {
        memset(&out[i], 0, sizeof out[i]);
        out[i].model = model;
        out[i].n = n;
        out[i].k = k;
        out[i].batch = 8;
        snprintf(out[i].op, sizeof out[i].op, "%s", ops[i]);
        out[i].calls = 1;
        out[i].ms = i ? 2.0 : 0.5;
        out[i].share = out[i].ms / 2.0;
        out[i].achieved = out[i].percent_of_limit = NAN;
    }
}

/* A part with rows and breakdown of `nrows` cells. */
static void make_part(const char *dir, const LbCellResult *rows, size_t nrows)
{
    lb_check(fx_sweep_dir(dir, rows, nrows, "512,1024", "128", "NVIDIA H100 80GB HBM3") == 0, "part %s made", dir);
    LbBreakdownRecord recs[8];
    for (size_t i = 0; i < nrows; i++)
        cell_ops(rows[i].model, rows[i].n, rows[i].k, recs + 2 * i);
    lb_check(lb_breakdown_write(dir, recs, 2 * nrows) == LB_OK, "%s's breakdown.csv: %s", dir, lb_error_message());
}

int main(void)
{
    lb_test_init("test_merge_breakdown");
    char *scratch = lb_test_tempdir("merge_breakdown");
    char a[4200], b[4200], out[4200];
    snprintf(a, sizeof a, "%s/a", scratch);
    snprintf(b, sizeof b, "%s/b", scratch);
    snprintf(out, sizeof out, "%s/out", scratch);

    /* a: n 512; b: n 512 again, alike, and n 1024 */
    LbCellResult rows[4] = {FX_STD(512, 10, 2.0), FX_LIN(512, 128, 20, 1.0), FX_STD(1024, 5, 8.0),
                            FX_LIN(1024, 128, 12, 3.0)};
    rows[1].tflop_per_s = NAN;
    make_part(a, rows, 2);
    make_part(b, rows, 4);

    LbMerge m;
    LbMeta meta = {0};
    char *dirs[2] = {a, b};
    int rc = lb_merge_load(&m, dirs, 2);
    if (lb_check(rc == LB_OK && m.nrows == 4, "parts alike in their n 512 cells merge: rc %d (%s), %zu rows: should be 4",
                 rc, lb_error_message(), m.nrows)) {
        mkdir(out, 0755);
        rc = lb_merge_meta(&m, "test", "complete", 0, &meta);
        if (rc == LB_OK)
            rc = lb_merge_write(&m, out, &meta, NULL);
        LbBreakdownRecord *recs = NULL;
        size_t count = 0;
        if (rc == LB_OK)
            rc = lb_breakdown_read(out, 0, &recs, &count);
        lb_check(rc == LB_OK && count == 8, "merged breakdown.csv: rc %d (%s), %zu rows: should be 8, 2 per cell", rc,
                 lb_error_message(), count);
        for (size_t i = 0; i < count; i++)
            for (size_t j = i + 1; j < count; j++)
                lb_check(!(recs[i].model == recs[j].model && recs[i].n == recs[j].n && recs[i].k == recs[j].k &&
                           strcmp(recs[i].op, recs[j].op) == 0),
                         "%s n=%lld op %s twice, rows %zu and %zu", lb_model_name(recs[i].model), (long long)recs[i].n,
                         recs[i].op, i + 1, j + 1);
        free(recs);
    }
    lb_merge_free(&m);
    lb_meta_free(&meta);
    lb_test_cleanup(scratch);
    return lb_test_finish("test_merge_breakdown");
}
