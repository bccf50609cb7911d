/* breakdown.csv written atomically and read back through libcsv (see breakdown_csv.h). */
#define _POSIX_C_SOURCE 200809L

#include "reports/breakdown_csv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attn/base/paths.h"
#include "attn/base/status.h"
#include "reports/atomic_file.h"
#include "reports/csv_io.h"

#define LB_UNIT_TFLOPS "TFLOP/s"
#define LB_UNIT_GBS "GB/s"

/* achieved_unit: one of the two, empty exactly when achieved is. */
static const char *check_unit(const void *rec, const char *unit)
{
    if (strcmp(unit, LB_UNIT_TFLOPS) != 0 && strcmp(unit, LB_UNIT_GBS) != 0 && unit[0])
        return LB_UNIT_TFLOPS ", " LB_UNIT_GBS " or empty";
    return !unit[0] != isnan(((const LbBreakdownRecord *)rec)->achieved) ? "empty exactly when achieved is" : NULL;
}

#define AT(field) offsetof(LbBreakdownRecord, field)
/* finite: linbench writes a NaN empty and never an inf; strtod would read either from a hand edit */
#define NUMBER_OR_EMPTY LB_COL_REAL, LB_COL_NAN_EMPTY | LB_COL_FINITE, 1, 0, 0, 0, "a finite number or empty"

static const LbColumn columns[LB_BREAKDOWN_COLUMNS] = {
    {"model", AT(model), LB_COL_MODEL, 0, 1, 0, 0, 0, "a model of the table"},
    {"n", AT(n), LB_COL_I64, 0, 1, 1, 0, 0, "a positive integer"},
    {"k", AT(k), LB_COL_I64, LB_COL_ONLY_K, 1, 1, 0, 0, "a positive integer"},
    {"batch", AT(batch), LB_COL_I64, 0, 1, 1, 0, 0, "a positive integer"},
    {"op", AT(op), LB_COL_TEXT, LB_COL_WHOLE, 1, 0, 0, sizeof(((LbBreakdownRecord *)0)->op), "an operation name"},
    {"calls", AT(calls), LB_COL_I64, 0, 1, 0, 0, 0, "a count"},
    {"ms", AT(ms), LB_COL_REAL, LB_COL_FINITE, 1, 0, 0, 0, "a finite number"},
    {"share", AT(share), NUMBER_OR_EMPTY},
    {"flops", AT(flops), LB_COL_REAL, LB_COL_NONNEG | LB_COL_FINITE, 1, 0, 0, 0, "a finite number >= 0"},
    {"bytes", AT(bytes), LB_COL_REAL, LB_COL_NONNEG | LB_COL_FINITE, 1, 0, 0, 0, "a finite number >= 0"},
    {"achieved", AT(achieved), NUMBER_OR_EMPTY},
    {"achieved_unit", AT(achieved_unit), LB_COL_TEXT, LB_COL_CHECKED, 1, 0, 0,
     sizeof(((LbBreakdownRecord *)0)->achieved_unit), NULL},
    {"percent_of_limit", AT(percent_of_limit), NUMBER_OR_EMPTY},
};
#undef AT
#undef NUMBER_OR_EMPTY

_Static_assert(LB_BREAKDOWN_COLUMNS <= LB_RECORD_COLUMNS_MAX, "the codec holds every column");

static const LbRecordFile breakdown_file = {columns, LB_BREAKDOWN_COLUMNS, sizeof(LbBreakdownRecord),
                                            "empty for this model", check_unit};

/* The roofline of `flops` and `bytes`: the larger of FLOPs over the product rate and bytes over
 * the copy bandwidth (0 without a calibration), and whether FLOPs bound them (*by_flops; without
 * a calibration, whether there are any). Judged by FLOPs alone, the scores and P V products at
 * head width 64 look far from a limit they are close to. */
static double roofline_ms(double flops, double bytes, const LbCalibration *cal, int *by_flops)
{
    *by_flops = flops > 0;
    if (!cal || !(cal->tflop_per_s > 0) || !(cal->copy_gb_per_s > 0))
        return 0;
    const double flop_ms = flops / (cal->tflop_per_s * 1e12) * 1e3;
    const double byte_ms = bytes / (cal->copy_gb_per_s * 1e9) * 1e3;
    *by_flops = flops > 0 && flop_ms >= byte_ms;
    return flop_ms > byte_ms ? flop_ms : byte_ms;
}

/* The achieved rate in `ms` of FLOPs (by_flops) or bytes, and its percentage of the limit: the
 * roofline time `floor` over the measured time (empty without one). */
static void rate(LbBreakdownRecord *r, double floor, int by_flops)
{
    r->achieved = r->percent_of_limit = NAN;
    r->achieved_unit[0] = '\0';
    if (!(r->ms > 0))
        return;
    const double s = r->ms * 1e-3;
    if (by_flops) {
        r->achieved = r->flops / s / 1e12;
        snprintf(r->achieved_unit, sizeof r->achieved_unit, "%s", LB_UNIT_TFLOPS);
    } else if (r->bytes > 0) {
        r->achieved = r->bytes / s / 1e9;
        snprintf(r->achieved_unit, sizeof r->achieved_unit, "%s", LB_UNIT_GBS);
    } else {
        return;
    }
    if (floor > 0)
        r->percent_of_limit = 100.0 * floor / r->ms;
}

int lb_breakdown_records(LbModelKind model, int64_t n, int64_t k, const LbBreakdown *b, const LbCalibration *cal,
                         LbBreakdownRecord **out, size_t *count)
{
    *out = NULL;
    *count = 0;
    const size_t total = (size_t)b->count + 2;
    LbBreakdownRecord *r = calloc(total, sizeof *r);
    if (!r)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory for the breakdown's rows");
    for (size_t i = 0; i < total; i++) {
        r[i].model = model;
        r[i].n = n;
        r[i].k = lb_model_has_k(model) ? k : 0;
        r[i].batch = b->batch;
    }
    double pass_floor = 0;
    for (int i = 0; i < b->count; i++) {
        const LbBreakdownRow *row = &b->rows[i];
        LbBreakdownRecord *x = &r[i];
        snprintf(x->op, sizeof x->op, "%s", lb_op_role_name(row->role));
        x->calls = row->calls;
        x->ms = row->ms;
        x->share = row->share;
        x->flops = row->flops;
        x->bytes = row->bytes;
        int by_flops;
        const double floor = roofline_ms(x->flops, x->bytes, cal, &by_flops);
        rate(x, floor, by_flops);
        pass_floor += floor;
    }
    LbBreakdownRecord *ov = &r[b->count], *pass = &r[b->count + 1];
    snprintf(ov->op, sizeof ov->op, "overhead");
    ov->ms = b->pass_ms - b->ops_ms;
    ov->share = b->pass_ms > 0 ? ov->ms / b->pass_ms : NAN;
    ov->achieved = ov->percent_of_limit = NAN;
    snprintf(pass->op, sizeof pass->op, "pass");
    for (int i = 0; i < b->count; i++)
        pass->calls += b->rows[i].calls;
    pass->ms = b->pass_ms;
    pass->share = 1.0;
    pass->flops = b->flops;
    pass->bytes = b->bytes;
    /* the sum of its roles' floors, since they run one after another; quoted by its FLOP rate */
    rate(pass, pass_floor, pass->flops > 0);
    *out = r;
    *count = total;
    return LB_OK;
}

/* --- printing ------------------------------------------------------------------------------- */

void lb_breakdown_print(FILE *out, const LbBreakdownRecord *recs, size_t count)
{
    fprintf(out, "  %-12s %6s %10s %7s %18s %10s\n", "op", "calls", "ms", "share %", "achieved", "% of limit");
    for (size_t i = 0; i < count; i++) {
        const LbBreakdownRecord *r = &recs[i];
        char calls[24] = "-", achieved[40] = "-", limit[24] = "-";
        if (strcmp(r->op, "overhead") != 0)
            snprintf(calls, sizeof calls, "%lld", (long long)r->calls);
        if (!isnan(r->achieved))
            snprintf(achieved, sizeof achieved, "%.4g %s", r->achieved, r->achieved_unit);
        if (!isnan(r->percent_of_limit))
            snprintf(limit, sizeof limit, "%.1f", r->percent_of_limit);
        fprintf(out, "  %-12s %6s %10.4g %7.1f %18s %10s\n", r->op, calls, r->ms, 100 * r->share, achieved, limit);
    }
}

/* --- writing -------------------------------------------------------------------------------- */

typedef struct Records {
    const LbBreakdownRecord *recs;
    size_t count;
} Records;

static int write_all(FILE *f, const void *ctx)
{
    const Records *r = ctx;
    LB_TRY(lb_record_write(f, &breakdown_file, 1, NULL));
    for (size_t i = 0; i < r->count; i++)
        LB_TRY(lb_record_write(f, &breakdown_file, 1, &r->recs[i]));
    return LB_OK;
}

int lb_breakdown_write(const char *dir, const LbBreakdownRecord *recs, size_t count)
{
    const Records r = {recs, count};
    return lb_atomic_write(dir, LB_BREAKDOWN_FILE, write_all, &r);
}

/* --- reading -------------------------------------------------------------------------------- */

int lb_breakdown_read(const char *dir, int if_any, LbBreakdownRecord **out, size_t *count)
{
    *out = NULL;
    *count = 0;
    char *path = lb_path_join(dir, LB_BREAKDOWN_FILE);
    if (!path)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory");
    if (if_any && access(path, F_OK) != 0) {
        free(path);
        return LB_OK;
    }
    LbCsvTable t;
    void *recs = NULL;
    int rc = lb_csv_read_file(path, 0, &t);
    if (rc == LB_OK && (t.rows == 0 || t.row[0].count != LB_BREAKDOWN_COLUMNS))
        rc = LB_FAIL(LB_ERR_FORMAT, "%s: header should be %d columns starting model,n,k", path, LB_BREAKDOWN_COLUMNS);
    for (int c = 0; rc == LB_OK && c < LB_BREAKDOWN_COLUMNS; c++)
        if (strcmp(t.row[0].fields[c], columns[c].name) != 0)
            rc = LB_FAIL(LB_ERR_FORMAT, "%s: header column %d is \"%s\": should be %s", path, c + 1,
                         t.row[0].fields[c], columns[c].name);
    if (rc == LB_OK && (rc = lb_record_read_rows(&breakdown_file, 1, path, &t, NULL, NULL, &recs)) == LB_OK) {
        *out = recs;
        *count = t.rows - 1;
    }
    lb_csv_table_free(&t);
    free(path);
    return rc;
}

/* Only one process writes a directory (cmd/outdir.h's lock), so a read, a merge and a rewrite
 * lose no row. */
int lb_breakdown_add(const char *dir, const LbBreakdownRecord *recs, size_t count)
{
    LbBreakdownRecord *all = NULL;
    size_t n_old = 0, n = 0;
    LB_TRY(lb_breakdown_read(dir, 1, &all, &n_old));
    for (size_t i = 0; i < n_old; i++) { /* the rows of the other cells stay */
        int replaced = 0;
        for (size_t j = 0; j < count && !replaced; j++)
            replaced = all[i].model == recs[j].model && all[i].n == recs[j].n && all[i].k == recs[j].k;
        if (!replaced)
            all[n++] = all[i];
    }
    int rc = lb_breakdown_append(&all, &n, recs, count, "out of memory for the breakdown's rows");
    if (rc == LB_OK)
        rc = lb_breakdown_write(dir, all, n);
    free(all);
    return rc;
}

int lb_breakdown_measure(LbBackend *be, const LbModelConfig *cfg, int64_t batch, uint64_t seed,
                         const LbCalibration *cal, LbBreakdownRecord **out, size_t *count)
{
    LbBreakdown b;
    LB_TRY(lb_breakdown_cell(be, cfg, batch, seed, &b));
    return lb_breakdown_records(cfg->kind, cfg->n, cfg->k, &b, cal, out, count);
}

int lb_breakdown_append(LbBreakdownRecord **recs, size_t *count, const LbBreakdownRecord *more, size_t n,
                        const char *nomem)
{
    if (n == 0)
        return LB_OK;
    LbBreakdownRecord *grown = realloc(*recs, (*count + n) * sizeof *grown);
    if (!grown)
        return LB_FAIL(LB_ERR_NOMEM, "%s", nomem);
    memcpy(grown + *count, more, n * sizeof *grown);
    *recs = grown;
    *count += n;
    return LB_OK;
}
