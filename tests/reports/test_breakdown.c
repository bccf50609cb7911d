/* breakdown.csv (reports/breakdown_csv.c): a real CPU breakdown of each model turned into records
 * against a calibration, written, read back through libcsv and compared field by field (numbers
 * exactly); the achieved rates and percentages recomputed here from the formula; the overhead
 * and pass rows; lb_breakdown_add replacing a cell's rows and keeping the others; no temporary
 * file left; a file with another header, a short row or a bad field refused with LB_ERR_FORMAT
 * naming the line. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attn/measure/breakdown.h"
#include "attn/measure/calibrate.h"
#include "attn/ops.h"
#include "attn/base/status.h"
#include "reports/breakdown_csv.h"
#include "tests/lib/check.h"
#include "tests/reports/fixture.h"
#include "tests/lib/model.h"

static int same_double(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

static int same(const LbBreakdownRecord *a, const LbBreakdownRecord *b)
{
    return a->model == b->model && a->n == b->n && a->k == b->k && a->batch == b->batch && !strcmp(a->op, b->op) &&
           a->calls == b->calls && same_double(a->ms, b->ms) && same_double(a->share, b->share) &&
           same_double(a->flops, b->flops) && same_double(a->bytes, b->bytes) &&
           same_double(a->achieved, b->achieved) && !strcmp(a->achieved_unit, b->achieved_unit) &&
           same_double(a->percent_of_limit, b->percent_of_limit);
}

/* dir's breakdown.csv reads back as `want` rotated left by `shift` (a cell added again comes
 * last), every field exactly. */
static void read_back(const char *dir, const LbBreakdownRecord *want, size_t count, size_t shift, const char *what)
{
    LbBreakdownRecord *back = NULL;
    size_t n = 0;
    if (lb_check(lb_breakdown_read(dir, 0, &back, &n) == LB_OK && n == count, "%s: %zu records (%s), want %zu", what, n,
                 lb_error_message(), count))
        for (size_t i = 0; i < n; i++)
            lb_check(same(&back[i], &want[(i + shift) % count]), "%s: record %zu (%s %s) differs", what, i,
                     lb_model_name(back[i].model), back[i].op);
    free(back);
}

int main(void)
{
    lb_test_init("test_breakdown_csv");
    char dir[] = "/tmp/lb_test_breakdown_XXXXXX";
    if (!lb_check(mkdtemp(dir) != NULL, "mkdtemp"))
        return lb_test_finish("test_breakdown_csv");

    LbBackend *be = NULL;
    lb_check(lb_cpu_backend_open(LB_DTYPE_FP16, (size_t)64 << 20, &be) == LB_OK, "open: %s", lb_error_message());
    /* A calibration with figures of its own, so the percentages are checked against known limits. */
    LbCalibration cal;
    memset(&cal, 0, sizeof cal);
    cal.copy_gb_per_s = 1.0 + (double)lb_test_randint(1, 1000) * 0.01;
    /* A balance of 2.5 to 3.2 FLOPs per byte: the tiny model's linears (3.5 to 5 FLOPs per byte
     * at the CPU backend's 4-byte elements) are then bound by their FLOPs and its scores and P V
     * (head width 4: 1.6) by their bytes, so both sides of the roofline are checked. */
    cal.tflop_per_s = cal.copy_gb_per_s * 1e9 * (2.5 + (double)lb_test_randint(0, 1000) * 0.7e-3) / 1e12;
    int flops_bound = 0, bytes_bound = 0;

    LbBreakdownRecord *all = NULL;
    size_t n_all = 0;
    const LbModelKind models[] = {LB_MODEL_STANDARD, LB_MODEL_LINFORMER};
    for (int mi = 0; mi < 2; mi++) {
        LbModelConfig c = lb_test_model(32, 8);
        c.kind = models[mi];
        c.dtype = LB_DTYPE_FP16; /* the backend's */
        LbBreakdown b;
        if (!lb_check(lb_breakdown_cell(be, &c, 2, 5, &b) == LB_OK, "breakdown %s: %s", lb_model_name(c.kind),
                      lb_error_message()))
            continue;
        LbBreakdownRecord *r;
        size_t count;
        if (!lb_check(lb_breakdown_records(c.kind, c.n, c.k, &b, &cal, &r, &count) == LB_OK, "records"))
            continue;
        lb_check(count == (size_t)b.count + 2, "%zu records for %d rows", count, b.count);
        double pass_floor = 0;
        for (size_t i = 0; i < count; i++) {
            const LbBreakdownRecord *x = &r[i];
            lb_check(x->model == c.kind && x->n == 32 && x->k == (c.kind == LB_MODEL_LINFORMER ? 8 : 0) && x->batch == 2,
                     "%s: cell fields", x->op);
            if (!strcmp(x->op, "overhead")) {
                lb_check(x->ms == b.pass_ms - b.ops_ms && isnan(x->achieved) && !x->achieved_unit[0], "overhead row");
                continue;
            }
            /* The roofline (docs/METHOD.md, "Breakdown"): bounded by whichever of FLOPs over the
             * product rate and bytes over the copy bandwidth takes longer. */
            const double flop_ms = x->flops / (cal.tflop_per_s * 1e12) * 1e3;
            const double byte_ms = x->bytes / (cal.copy_gb_per_s * 1e9) * 1e3;
            const double floor = flop_ms > byte_ms ? flop_ms : byte_ms;
            if (strcmp(x->op, "pass") != 0)
                pass_floor += floor;
            const int product = strcmp(x->op, "pass") == 0 ? x->flops > 0 : x->flops > 0 && flop_ms >= byte_ms;
            if (x->flops > 0 && x->bytes > 0 && strcmp(x->op, "pass") != 0)
                *(flop_ms >= byte_ms ? &flops_bound : &bytes_bound) += 1;
            const double want = product ? x->flops / (x->ms * 1e-3) / 1e12 : x->bytes / (x->ms * 1e-3) / 1e9;
            const double want_pct = 100 * (strcmp(x->op, "pass") == 0 ? pass_floor : floor) / x->ms;
            if (x->ms > 0)
                lb_check(x->achieved == want && !strcmp(x->achieved_unit, product ? "TFLOP/s" : "GB/s") &&
                             fabs(x->percent_of_limit - want_pct) <= 1e-12 * want_pct,
                         "%s: achieved %g %s (%g%%), want %g (%g%%)", x->op, x->achieved, x->achieved_unit,
                         x->percent_of_limit, want, want_pct);
        }
        const LbBreakdownRecord *pass = &r[count - 1];
        lb_check(!strcmp(pass->op, "pass") && pass->ms == b.pass_ms && pass->share == 1.0 && pass->flops == b.flops,
                 "pass row: %s %g ms", pass->op, pass->ms);
        lb_check(lb_breakdown_add(dir, r, count) == LB_OK, "add %s: %s", lb_model_name(c.kind), lb_error_message());
        all = realloc(all, (n_all + count) * sizeof *all);
        memcpy(all + n_all, r, count * sizeof *r);
        n_all += count;
        free(r);
    }
    lb_backend_close(be);
    lb_check(flops_bound > 0 && bytes_bound > 0, "products bound by FLOPs %d, by bytes %d: both sides wanted",
             flops_bound, bytes_bound);

    read_back(dir, all, n_all, 0, "read back");
    lb_check(fx_count_files(dir, NULL) == 1, "%d files in the directory, want breakdown.csv alone", fx_count_files(dir, NULL));

    /* Adding the standard cell again replaces its rows: the Linformer rows stay, standard's come last. */
    size_t n_std = 0;
    while (n_std < n_all && all[n_std].model == LB_MODEL_STANDARD)
        n_std++;
    for (size_t i = 0; i < n_std; i++)
        all[i].ms += 1.0;
    lb_check(lb_breakdown_add(dir, all, n_std) == LB_OK, "add again: %s", lb_error_message());
    read_back(dir, all, n_all, n_std, "after replacing a cell");

    LbBreakdownRecord *back = NULL;
    size_t n_back = 0;
    /* Files linbench did not write this way. */
#define HEADER "model,n,k,batch,op,calls,ms,share,flops,bytes,achieved,achieved_unit,percent_of_limit\n"
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"model,n,k,batch,op,calls,ms,share,flops,bytes,achieved,unit,percent_of_limit\n", "header column 12"},
        {HEADER "standard,512,,8,qkv,12,1.5,0.2,1e9,2e6,0.6,TFLOP/s\n", "line 2: 12 fields"},
        {HEADER "standard,512,128,8,qkv,12,1.5,0.2,1e9,2e6,0.6,TFLOP/s,50\n", "line 2: invalid k"},
        {HEADER "linformer,512,128,8,qkv,12,fast,0.2,1e9,2e6,0.6,TFLOP/s,50\n", "line 2: invalid ms \"fast\""},
        {HEADER "linformer,512,128,8,qkv,12,1.5,0.2,1e9,2e6,,TFLOP/s,50\n", "line 2: invalid achieved_unit"},
        /* hand edits strtod reads: an inf share showed as "inf" %, a nan one as no row */
        {HEADER "linformer,512,128,8,qkv,12,1.5,inf,1e9,2e6,0.6,TFLOP/s,50\n", "line 2: invalid share \"inf\""},
        {HEADER "linformer,512,128,8,qkv,12,1.5,nan,1e9,2e6,0.6,TFLOP/s,50\n", "line 2: invalid share \"nan\""},
        {HEADER "linformer,512,128,8,qkv,12,-inf,0.2,1e9,2e6,0.6,TFLOP/s,50\n", "line 2: invalid ms \"-inf\""},
        {HEADER "linformer,512,128,8,qkv,12,1.5,0.2,inf,2e6,0.6,TFLOP/s,50\n", "line 2: invalid flops \"inf\""},
        {HEADER "linformer,512,128,8,qkv,12,1.5,0.2,1e9,2e6,0.6,TFLOP/s,NaN\n", "line 2: invalid percent_of_limit \"NaN\""},
    };
#undef HEADER
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, LB_BREAKDOWN_FILE);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fx_write(path, "w", bad[i].text);
        int rc = lb_breakdown_read(dir, 0, &back, &n_back);
        lb_check(rc == LB_ERR_FORMAT && strstr(lb_error_message(), bad[i].want) != NULL,
                 "bad file %zu: %s \"%s\", want FORMAT naming \"%s\"", i, lb_status_name(rc), lb_error_message(),
                 bad[i].want);
    }
    unlink(path);
    lb_check(lb_breakdown_read(dir, 0, &back, &n_back) == LB_ERR_IO, "a missing file is LB_ERR_IO");
    rmdir(dir);
    free(all);
    return lb_test_finish("test_breakdown_csv");
}
