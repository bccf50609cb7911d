/* sweep --breakdown and calibration end to end on the CPU, then compare and plot reading them:
 * meta.csv's calibration keys; breakdown.csv with every operation of each model, a `pass` row of
 * share 1 and shares summing to 1 within the overhead; compare's share table and plot's scripts;
 * without --breakdown: no file, empty keys, a resume with it refused, --force clearing it; and a
 * --mem-limit 1M budget that calibrates within itself with a note. */
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "attn/measure/breakdown.h"
#include "attn/config.h"
#include "reports/breakdown_csv.h"
#include "reports/csv_io.h"
#include "tests/cli/sweep_check.h"
#include "tests/lib/check.h"
#include "tests/lib/model.h"
#include "tests/lib/spawn.h"

static const char *bin;

#define TINY "--layers", "1", "--d-model", "32", "--heads", "2", "--ffn", "64", "--vocab", "100"
/* one cell per model on the CPU, unchecked */
#define CELL "--device", "cpu", TINY, "--n", "64", "--k", "16", "--max-batch", "2", "--cell-time", "1", "--no-check"

static void check_breakdown_csv(const char *dir)
{
    LbBreakdownRecord *recs = NULL;
    size_t count = 0;
    if (!lb_check(lb_breakdown_read(dir, 0, &recs, &count) == LB_OK, "breakdown.csv reads back: %s", lb_error_message()))
        return;
    for (int m = 0; m < LB_MODEL_COUNT; m++) {
        const LbModelKind kind = (LbModelKind)m;
        LbOpRole want[LB_ROLE_COUNT];
        const int nw = lb_test_roles(kind, want);
        int seen[LB_ROLE_COUNT] = {0}, passes = 0, overheads = 0;
        double roles = 0, overhead = 0, pass_ms = 0;
        for (size_t i = 0; i < count; i++) {
            const LbBreakdownRecord *r = &recs[i];
            if (r->model != kind)
                continue;
            lb_check(r->n == 64 && r->k == (lb_model_has_k(kind) ? 16 : 0) && r->batch >= 1 && r->batch <= 2,
                     "%s: cell n %lld k %lld batch %lld", lb_model_name(kind), (long long)r->n, (long long)r->k,
                     (long long)r->batch);
            LbOpRole role;
            if (strcmp(r->op, "pass") == 0) {
                passes++;
                pass_ms = r->ms;
                lb_check(r->share == 1.0 && r->ms > 0, "%s: pass share %g, %g ms", lb_model_name(kind), r->share, r->ms);
            } else if (strcmp(r->op, "overhead") == 0) {
                overheads++;
                overhead = r->share;
            } else if (lb_check(lb_op_role_parse(r->op, &role) == 0 && role != LB_ROLE_UNLABELLED, "%s: op %s",
                                lb_model_name(kind), r->op)) {
                seen[role]++;
                roles += r->share;
                lb_check(r->calls > 0 && r->ms >= 0 && r->bytes > 0, "%s %s: %lld calls, %g ms, %g bytes",
                         lb_model_name(kind), r->op, (long long)r->calls, r->ms, r->bytes);
                lb_check(r->ms == 0 || (isfinite(r->percent_of_limit) && r->percent_of_limit > 0),
                         "%s %s: %g%% of the calibrated limit", lb_model_name(kind), r->op, r->percent_of_limit);
            }
        }
        lb_check(passes == 1 && overheads == 1, "%s: %d pass and %d overhead rows, want 1 each", lb_model_name(kind),
                 passes, overheads);
        for (int i = 0; i < nw; i++)
            lb_check(seen[want[i]] == 1, "%s: %d rows of %s, want 1", lb_model_name(kind), seen[want[i]],
                     lb_op_role_name(want[i]));
        lb_check(pass_ms > 0 && fabs(1 - roles) <= LB_BREAKDOWN_OVERHEAD + LB_BREAKDOWN_SLACK_MS / pass_ms,
                 "%s: the roles' shares sum to %.6f of a %.4f ms pass: outside %g + %g ms", lb_model_name(kind), roles,
                 pass_ms, LB_BREAKDOWN_OVERHEAD, LB_BREAKDOWN_SLACK_MS);
        lb_check(fabs(roles + overhead - 1) <= 1e-9, "%s: roles %.17g + overhead %.17g, want 1", lb_model_name(kind),
                 roles, overhead);
    }
    free(recs);
}

static void check_reports(const char *dir, const char *scratch)
{
    char *c[] = {(char *)bin, "compare", (char *)dir, NULL};
    LbRun r = lb_run(c);
    lb_check(r.code == 0 && strstr(r.out, "Where the time goes") && strstr(r.out, "feature_map") &&
                 strstr(r.out, "compress"),
             "compare shows the breakdown: exit %d\n%s%s", r.code, r.out, r.err);
    lb_run_free(&r);

    char plots[4200];
    snprintf(plots, sizeof plots, "%s/plots", scratch);
    mkdir(plots, 0755);
    char *p[] = {(char *)bin, "plot", (char *)dir, "--out", plots, "--no-render", NULL};
    lb_run_ok(p, "plot");
    for (int m = 0; m < LB_MODEL_COUNT; m++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/breakdown_%s.gp", plots, lb_model_name((LbModelKind)m));
        char *gp = lb_slurp(path);
        lb_check(gp && strstr(gp, "rowstacked") && strstr(gp, "columnheader"), "%s is a stacked-bar script", path);
        free(gp);
        snprintf(path, sizeof path, "%s/breakdown_%s.plot.csv", plots, lb_model_name((LbModelKind)m));
        LbCsvTable t;
        memset(&t, 0, sizeof t);
        if (lb_check(lb_csv_read_file(path, 0, &t) == LB_OK, "%s parses: %s", path, lb_error_message())) {
            /* a header of the cell and each op, one bar whose segments sum to 1 less the overhead's rounding */
            int ok = t.rows == 2 && t.row[0].count >= 10 && t.row[1].count == t.row[0].count; /* flash: 8 roles */
            double sum = 0;
            for (size_t j = 1; ok && j < t.row[1].count; j++) {
                double v;
                ok = lb_csv_parse_double(t.row[1].fields[j], &v) == 0 && v >= -1e-3;
                sum += v;
            }
            lb_check(ok && fabs(sum - 1) <= 1e-9, "%s: %zu rows, segments sum to %.17g", path, t.rows, sum);
        }
        lb_csv_table_free(&t);
    }
}

/* Calibration never fails a sweep whose cells fit: under 1 MiB both cells (221 KB and 139 KB
 * planned at batch 2) run, and the calibration shrinks to the budget. */
static void check_small_budget(const char *scratch)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/budget-1M", scratch);
    char *a[] = {(char *)bin, "sweep", "--device", "cpu", TINY, "--n", "64", "--k", "16", "--max-batch", "2",
                 "--cell-time", "1", "--mem-limit", "1M", "--out", dir, NULL};
    LbRun r = lb_run(a);
    lb_check(r.code == 0 && !strstr(r.err, "reps must be") && strstr(r.err, "calibration: "),
             "sweep --mem-limit 1M: exit %d\n%s", r.code, r.err);
    lb_run_free(&r);
    lb_check(sc_rows(dir) == 2 && sc_files_parse(dir, 1, "budget-1M"), "two cells measured under 1 MiB");
    const double bytes = sc_meta_number(dir, "calibration_copy_bytes"), dim = sc_meta_number(dir, "calibration_product_dim");
    sc_check_meta(dir, "calibration", "measured", "under 1 MiB");
    sc_check_meta_has(dir, "calibration_note", "budget", "under 1 MiB");
    lb_check(bytes > 0 && bytes <= (1 << 19) && dim > 0, "meta.csv under 1 MiB: copy %g bytes, product %g", bytes, dim);
}

/* run --breakdown: after the cell's result, one table row per role the model's pass must show,
 * then overhead and pass, with percentages (run calibrates first, even under --no-check, as a
 * sweep does); with --dump it is refused (exit 2, one line naming the flag). */
static void check_run_breakdown(const char *scratch)
{
    for (int m = 0; m < LB_MODEL_COUNT; m++) {
        char *a[] = {(char *)bin, "run", CELL, "--model", (char *)lb_model_name((LbModelKind)m), "--breakdown", NULL};
        LbRun r = lb_run(a);
        const char *table = strstr(r.out, "\nbreakdown: one more pass at batch ");
        lb_check(r.code == 0 && table && strstr(r.err, "calibration: "), "run --model %s --breakdown: exit %d\n%s%s",
                 lb_model_name((LbModelKind)m), r.code, r.out, r.err);
        LbOpRole roles[LB_ROLE_COUNT];
        const int n = lb_test_roles((LbModelKind)m, roles);
        for (int i = 0; table && i < n; i++) {
            char row[64];
            snprintf(row, sizeof row, "\n  %-12s ", lb_op_role_name(roles[i]));
            lb_check(strstr(table, row) != NULL, "run --model %s --breakdown prints a row for %s:\n%s",
                     lb_model_name((LbModelKind)m), lb_op_role_name(roles[i]), table);
        }
        lb_check(table && !strstr(table, "\n  ffn_up_backward "), "run --model %s --breakdown: a forward has no "
                 "ffn_up_backward row (a step's has: test_cli_train)", lb_model_name((LbModelKind)m));
        /* the pass row: its calls, ms, 100.0 %, its rate and a percentage of the limit */
        const char *pass = table ? strstr(table, "\n  pass ") : NULL;
        lb_check(pass && strstr(pass, " 100.0 ") && strstr(pass, "TFLOP/s") && !strstr(pass, " -\n"),
                 "run --model %s --breakdown: a pass row with its percentage of the limit:\n%s",
                 lb_model_name((LbModelKind)m), table ? table : r.out);
        lb_run_free(&r);
    }
    char dump[4200];
    snprintf(dump, sizeof dump, "%s/dump", scratch);
    char *d[] = {(char *)bin, "run", "--device", "cpu", TINY, "--n", "64", "--breakdown", "--dump", dump, NULL};
    lb_run_refused(d, "--breakdown");
    lb_check(!lb_exists(dump), "run --dump --breakdown: nothing written");
}

int main(int argc, char **argv)
{
    bin = lb_cli_start(argc, argv, "test_cli_breakdown");
    const char *scratch = lb_scratch;
    char with[4200], without[4200];
    snprintf(with, sizeof with, "%s/with", scratch);
    snprintf(without, sizeof without, "%s/without", scratch);

    char *a[] = {(char *)bin, "sweep", CELL, "--breakdown", "--out", with, "--models",
                 "standard,linformer,chunked,performer,flash,linformer-mean,linformer-max,linformer-conv", NULL};
    LbRun r = lb_run(a);
    lb_check(r.code == 0, "sweep --breakdown: exit %d\n%s", r.code, r.err);
    lb_check(strstr(r.err, "calibration: ") && strstr(r.err, "TFLOP/s (fp32 product ") && strstr(r.err, "GB/s copy"),
             "sweep prints its calibration line:\n%s", r.err);
    lb_run_free(&r);
    lb_check(sc_rows(with) == LB_MODEL_COUNT, "a cell of every model measured");
    sc_check_meta(with, "breakdown", "1", "sweep --breakdown");
    const double tflops = sc_meta_number(with, "calibration_tflop_per_s"), gbs = sc_meta_number(with, "calibration_copy_gb_per_s");
    const double dim = sc_meta_number(with, "calibration_product_dim"), bytes = sc_meta_number(with, "calibration_copy_bytes");
    lb_check(tflops > 0 && tflops < 1e3 && gbs > 0 && gbs < 1e5 && dim >= 256 && bytes >= (1 << 20),
             "meta.csv calibration: %g TFLOP/s, %g GB/s, product %g, copy %g bytes", tflops, gbs, dim, bytes);
    check_breakdown_csv(with);
    check_reports(with, scratch);

    /* Without --breakdown and with --no-check: no calibration, no breakdown.csv. */
    char *c[] = {(char *)bin, "sweep", CELL, "-q", "--out", without, NULL};
    r = lb_run(c);
    lb_check(r.code == 0 && !strstr(r.err, "calibration:"), "sweep without --breakdown: exit %d\n%s", r.code, r.err);
    lb_run_free(&r);
    lb_check(!lb_exists_in(without, LB_BREAKDOWN_FILE), "without --breakdown: no breakdown.csv");
    sc_check_meta(without, "breakdown", "0", "without --breakdown");
    sc_check_meta(without, "calibration_tflop_per_s", "", "without --breakdown");
    sc_check_meta(without, "calibration", "skipped", "without --breakdown");
    sc_check_meta_has(without, "calibration_note", "--no-check", "without --breakdown");
    char *d[] = {(char *)bin, "sweep", "--resume", without, "--breakdown", NULL};
    lb_run_refused(d, "--breakdown");

    /* --force over the first directory: its breakdown.csv is a result file and goes. */
    char *e[] = {(char *)bin, "sweep", CELL, "-q", "--force", "--out", with, NULL};
    r = lb_run(e);
    lb_check(r.code == 0 && !lb_exists_in(with, LB_BREAKDOWN_FILE), "--force clears breakdown.csv: exit %d\n%s", r.code,
             r.err);
    lb_run_free(&r);
    check_small_budget(scratch);
    check_run_breakdown(scratch);
    return lb_test_finish("test_cli_breakdown");
}
