/* breakdown.csv written atomically and read back through libcsv (see breakdown_csv.h). */
#define _POSIX_C_SOURCE 200809L

#include "reports/breakdown_csv.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "attn/base/paths.h"
#include "attn/base/status.h"
#include "reports/atomic_file.h"
#include "reports/csv_io.h"

static const char *const columns[LB_BREAKDOWN_COLUMNS] = {
    "model", "n", "k", "batch", "op", "calls", "ms", "share", "flops", "bytes", "achieved", "achieved_unit",
    "percent_of_limit"};

#define LB_UNIT_TFLOPS "TFLOP/s"
#define LB_UNIT_GBS "GB/s"

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

static void fmt_double(double v, char *buf, size_t size)
{
    if (isnan(v))
        buf[0] = '\0';
    else
        lb_csv_format_double(v, buf, size);
}

typedef struct Records {
    const LbBreakdownRecord *recs;
    size_t count;
} Records;

static int write_all(FILE *f, const void *ctx)
{
    const LbBreakdownRecord *recs = ((const Records *)ctx)->recs;
    const size_t count = ((const Records *)ctx)->count;
    LB_TRY(lb_csv_write_record(f, columns, LB_BREAKDOWN_COLUMNS));
    for (size_t i = 0; i < count; i++) {
        const LbBreakdownRecord *r = &recs[i];
        char v[LB_BREAKDOWN_COLUMNS][40];
        const char *field[LB_BREAKDOWN_COLUMNS];
        for (int c = 0; c < LB_BREAKDOWN_COLUMNS; c++)
            field[c] = v[c];
        field[0] = lb_model_name(r->model);
        snprintf(v[1], sizeof v[1], "%lld", (long long)r->n);
        if (lb_model_has_k(r->model))
            snprintf(v[2], sizeof v[2], "%lld", (long long)r->k);
        else
            v[2][0] = '\0';
        snprintf(v[3], sizeof v[3], "%lld", (long long)r->batch);
        field[4] = r->op;
        snprintf(v[5], sizeof v[5], "%lld", (long long)r->calls);
        fmt_double(r->ms, v[6], sizeof v[6]);
        fmt_double(r->share, v[7], sizeof v[7]);
        fmt_double(r->flops, v[8], sizeof v[8]);
        fmt_double(r->bytes, v[9], sizeof v[9]);
        fmt_double(r->achieved, v[10], sizeof v[10]);
        field[11] = r->achieved_unit;
        fmt_double(r->percent_of_limit, v[12], sizeof v[12]);
        LB_TRY(lb_csv_write_record(f, field, LB_BREAKDOWN_COLUMNS));
    }
    return LB_OK;
}

int lb_breakdown_write(const char *dir, const LbBreakdownRecord *recs, size_t count)
{
    const Records r = {recs, count};
    return lb_atomic_write(dir, LB_BREAKDOWN_FILE, write_all, &r);
}

/* --- reading -------------------------------------------------------------------------------- */

/* A number field: empty reads as NaN where `empty_ok`. */
static int parse_double(const char *s, int empty_ok, double *out)
{
    if (!*s && empty_ok) {
        *out = NAN;
        return 0;
    }
    return lb_csv_parse_double(s, out);
}

static int parse_row(const char *path, size_t line, const LbCsvRow *row, LbBreakdownRecord *r)
{
    char *const *f = row->fields;
    long long v;
    int bad = 0;
    const char *want = NULL;
    memset(r, 0, sizeof *r);
#define LB_BAD(col, what)      \
    do {                       \
        bad = (col);           \
        want = (what);         \
        goto fail;             \
    } while (0)
    if (lb_model_parse(f[0], &r->model) != 0)
        LB_BAD(0, "a model of the table");
    if (lb_csv_parse_int64(f[1], &v) != 0 || v < 1)
        LB_BAD(1, "a positive integer");
    r->n = v;
    if (lb_model_has_k(r->model)) {
        if (lb_csv_parse_int64(f[2], &v) != 0 || v < 1)
            LB_BAD(2, "a positive integer");
        r->k = v;
    } else if (f[2][0]) {
        LB_BAD(2, "empty for this model");
    }
    if (lb_csv_parse_int64(f[3], &v) != 0 || v < 1)
        LB_BAD(3, "a positive integer");
    r->batch = v;
    if (!f[4][0] || strlen(f[4]) >= sizeof r->op)
        LB_BAD(4, "an operation name");
    snprintf(r->op, sizeof r->op, "%s", f[4]);
    if (lb_csv_parse_int64(f[5], &v) != 0 || v < 0)
        LB_BAD(5, "a count");
    r->calls = v;
    if (parse_double(f[6], 0, &r->ms) != 0)
        LB_BAD(6, "a number");
    if (parse_double(f[7], 1, &r->share) != 0)
        LB_BAD(7, "a number or empty");
    if (parse_double(f[8], 0, &r->flops) != 0 || r->flops < 0)
        LB_BAD(8, "a number >= 0");
    if (parse_double(f[9], 0, &r->bytes) != 0 || r->bytes < 0)
        LB_BAD(9, "a number >= 0");
    if (parse_double(f[10], 1, &r->achieved) != 0)
        LB_BAD(10, "a number or empty");
    if (strcmp(f[11], LB_UNIT_TFLOPS) != 0 && strcmp(f[11], LB_UNIT_GBS) != 0 && f[11][0])
        LB_BAD(11, LB_UNIT_TFLOPS ", " LB_UNIT_GBS " or empty");
    if (!f[11][0] != isnan(r->achieved))
        LB_BAD(11, "empty exactly when achieved is");
    snprintf(r->achieved_unit, sizeof r->achieved_unit, "%s", f[11]);
    if (parse_double(f[12], 1, &r->percent_of_limit) != 0)
        LB_BAD(12, "a number or empty");
#undef LB_BAD
    return LB_OK;
fail:
    return LB_FAIL(LB_ERR_FORMAT, "%s line %zu: invalid %s \"%s\": should be %s", path, line,
                   columns[bad], f[bad], want);
}

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
    memset(&t, 0, sizeof t);
    LbBreakdownRecord *r = NULL;
    int rc = lb_csv_read_file(path, 0, &t);
    if (rc != LB_OK)
        goto done;
    if (t.rows == 0 || t.row[0].count != LB_BREAKDOWN_COLUMNS) {
        rc = LB_FAIL(LB_ERR_FORMAT, "%s: header should be %d columns starting model,n,k", path, LB_BREAKDOWN_COLUMNS);
        goto done;
    }
    for (int c = 0; c < LB_BREAKDOWN_COLUMNS; c++)
        if (strcmp(t.row[0].fields[c], columns[c]) != 0) {
            rc = LB_FAIL(LB_ERR_FORMAT, "%s: header column %d is \"%s\": should be %s", path, c + 1,
                         t.row[0].fields[c], columns[c]);
            goto done;
        }
    r = calloc(t.rows > 1 ? t.rows - 1 : 1, sizeof *r);
    if (!r) {
        rc = LB_FAIL(LB_ERR_NOMEM, "out of memory reading %s", path);
        goto done;
    }
    for (size_t i = 1; i < t.rows; i++) {
        if (t.row[i].count != LB_BREAKDOWN_COLUMNS) {
            rc = LB_FAIL(LB_ERR_FORMAT, "%s line %zu: %zu fields: should be %d", path, t.line[i], t.row[i].count,
                         LB_BREAKDOWN_COLUMNS);
            goto done;
        }
        if ((rc = parse_row(path, t.line[i], &t.row[i], &r[i - 1])) != LB_OK)
            goto done;
    }
    *out = r;
    *count = t.rows - 1;
    r = NULL;
done:
    free(r);
    lb_csv_table_free(&t);
    free(path);
    return rc;
}

/* The read-modify-write of lb_breakdown_add under an exclusive flock of DIR/.breakdown.lock, so
 * that the worker processes of sweep --gpus, each adding its cells, never lose each other's rows
 * (the atomic rename alone keeps the file whole, not both writers' rows). */
static int add_locked(const char *dir, const LbBreakdownRecord *recs, size_t count)
{
    LbBreakdownRecord *old = NULL;
    size_t n_old = 0;
    LB_TRY(lb_breakdown_read(dir, 1, &old, &n_old));
    LbBreakdownRecord *all = malloc((n_old + count + 1) * sizeof *all);
    if (!all) {
        free(old);
        return LB_FAIL(LB_ERR_NOMEM, "out of memory for the breakdown's rows");
    }
    size_t n = 0;
    for (size_t i = 0; i < n_old; i++) {
        int replaced = 0;
        for (size_t j = 0; j < count && !replaced; j++)
            replaced = old[i].model == recs[j].model && old[i].n == recs[j].n && old[i].k == recs[j].k;
        if (!replaced)
            all[n++] = old[i];
    }
    memcpy(all + n, recs, count * sizeof *recs);
    n += count;
    int rc = lb_breakdown_write(dir, all, n);
    free(all);
    free(old);
    return rc;
}

int lb_breakdown_add(const char *dir, const LbBreakdownRecord *recs, size_t count)
{
    char *lock_path = lb_path_join(dir, ".breakdown.lock");
    if (!lock_path)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory");
    const int fd = lb_open_plain(lock_path, O_RDWR | O_CREAT, 0644);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) {
        int rc = LB_FAIL(LB_ERR_IO, "cannot lock %s: %s", lock_path, lb_open_plain_strerror(errno));
        if (fd >= 0)
            close(fd);
        free(lock_path);
        return rc;
    }
    free(lock_path);
    const int rc = add_locked(dir, recs, count);
    close(fd); /* releases the lock */
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
