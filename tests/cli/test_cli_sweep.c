/* linbench sweep end to end on the CPU reference: its four files read back through libcsv, bad
 * input, --breakdown and the calibration (check_breakdown), and --resume (check_resume).
 * Usage: test_cli_sweep PATH-TO-LINBENCH */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attn/config.h"
#include "attn/measure/breakdown.h"
#include "reports/breakdown_csv.h"
#include "reports/csv_io.h"
#include "tests/cli/sweep_check.h"
#include "tests/lib/model.h"
#include "tests/reports/fixture.h"

static const char *bin;
/* linbench's argv: ARGV("sweep", TINY, "--out", dir) */
#define ARGV(...) LB_ARGV((char *)bin, __VA_ARGS__)

#define TINY "--device", "cpu", "--layers", "2", "--d-model", "64", "--heads", "4", "--ffn", "128", \
             "--vocab", "1000", "--quiet"

/* Every value positive and finite; each memory speedup the batch ratio in raw.csv, each time
 * speedup the ms-per-sequence ratio. */
static void check_sweep_files(const char *dir)
{
    const char *files[] = {"raw.csv", "time_speedup.csv", "memory_speedup.csv", "meta.csv"};
    for (int i = 0; i < 4; i++)
        lb_check(lb_exists_in(dir, files[i]), "sweep wrote %s", files[i]);
    LbCellResult *rows = NULL;
    size_t count = 0;
    if (!lb_check(sc_read_rows(dir, &rows, &count) == 0, "raw.csv reads back through libcsv"))
        return;
    /* 4 standard cells and, for k < n, 2 + 3 + 4 + 4 Linformer cells. */
    lb_check(count == 17, "raw.csv has 17 rows (got %zu)", count);
    for (size_t i = 0; i < count; i++) {
        const LbCellResult *r = &rows[i];
        int finite = isfinite(r->median_ms) && isfinite(r->ms_per_seq) && isfinite(r->tflop_per_s) && isfinite(r->tokens_per_s);
        lb_check(r->status == LB_CELL_OK && r->batch > 0 && r->median_ms > 0 && r->ms_per_seq > 0 &&
                     r->tokens_per_s > 0 && r->tflop_per_s > 0 && r->passes >= 5 && r->peak_bytes > 0 &&
                     r->peak_bytes == r->planned_bytes && finite,
                 "row %zu (%s n=%lld k=%lld): ok, positive, finite, >= 5 passes, peak = plan", i,
                 lb_model_name(r->model), (long long)r->n, (long long)r->k);
        lb_check(r->dtype == LB_DTYPE_FP16, "row %zu records the requested dtype", i);
    }
    LbGrid g;
    if (!lb_check(lb_grids_read(dir, &g) == 0, "the grids read back through libcsv")) {
        free(rows);
        return;
    }
    lb_check(g.rows == 4 && g.cols == 4, "grid shape 4 x 4 (got %zu x %zu)", g.rows, g.cols);
    const int64_t want_n[] = {128, 256, 512, 1024}, want_k[] = {32, 64, 128, 256};
    for (size_t i = 0; i < g.rows && i < g.cols && i < 4; i++)
        lb_check(g.n[i] == want_n[i] && g.k[i] == want_k[i], "grid row %zu is n=%lld, column %zu k=%lld", i,
                 (long long)want_n[i], i, (long long)want_k[i]);
    for (size_t i = 0; i < g.rows && i < 4; i++)
        for (size_t j = 0; j < g.cols && j < 4; j++) {
            const LbGridCell *t = &g.time[i * g.cols + j], *m = &g.memory[i * g.cols + j];
            if (g.k[j] >= g.n[i]) {
                lb_check(t->kind == LB_GRID_EMPTY && m->kind == LB_GRID_EMPTY, "n=%lld k=%lld empty (k >= n)",
                         (long long)g.n[i], (long long)g.k[j]);
                continue;
            }
            const LbCellResult *s = sc_find(rows, count, LB_MODEL_STANDARD, g.n[i], 0);
            const LbCellResult *l = sc_find(rows, count, LB_MODEL_LINFORMER, g.n[i], g.k[j]);
            if (!lb_check(s && l && t->kind == LB_GRID_VALUE && m->kind == LB_GRID_VALUE,
                          "n=%lld k=%lld has values", (long long)g.n[i], (long long)g.k[j]))
                continue;
            double mem = (double)l->batch / (double)s->batch, time = s->ms_per_seq / l->ms_per_seq;
            lb_check(fabs(m->value - mem) <= 1e-3 * mem, "n=%lld k=%lld memory speedup %g = batch ratio %lld/%lld",
                     (long long)g.n[i], (long long)g.k[j], m->value, (long long)l->batch, (long long)s->batch);
            lb_check(fabs(t->value - time) <= 1e-3 * time, "n=%lld k=%lld time speedup %g = ms/seq ratio %g",
                     (long long)g.n[i], (long long)g.k[j], t->value, time);
            lb_check(m->value >= 1.0, "n=%lld k=%lld: Linformer fits at least the standard batch", (long long)g.n[i], (long long)g.k[j]);
        }
    lb_grid_free(&g);
    free(rows);
    const char *keys[] = {"linbench_version", "git_revision", "command_line", "start_time", "device_name",
                          "dtype", "layers", "d_model", "heads", "ffn", "sharing", "order"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        sc_check_meta_has(dir, keys[i], "", "the sweep"); /* it has the key */
    sc_check_meta(dir, "memory_budget_bytes", "33554432", "--mem-limit 32M");
    sc_check_meta(dir, "status", "complete", "the sweep");
    sc_check_meta(dir, "tool", "linbench", "the sweep"); /* bench/peer writes "peer" there */
}

/* sweep --device cpu --out bad_out and the flags given: exit 2, stderr of one line naming `flag`, no
 * bad_out. */
static char bad_out[512];
#define BAD(flag, ...) bad_input(flag, ARGV("sweep", "--device", "cpu", "--out", bad_out, __VA_ARGS__))

static void bad_input(const char *flag, char *const argv[])
{
    lb_run_refused(argv, flag);
    lb_check(!lb_exists(bad_out), "%s: nothing written", flag);
}

/* --breakdown's model, and one cell per model on the CPU, unchecked */
#define SMALL "--layers", "1", "--d-model", "32", "--heads", "2", "--ffn", "64", "--vocab", "100"
#define CELL "--device", "cpu", SMALL, "--n", "64", "--k", "16", "--max-batch", "2", "--cell-time", "1", "--no-check"

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
    sc_run_says(ARGV("compare", (char *)dir), 0, "Where the time goes", "feature_map", "compress");

    char plots[4200];
    snprintf(plots, sizeof plots, "%s/plots", scratch);
    mkdir(plots, 0755);
    lb_run_ok(ARGV("plot", (char *)dir, "--out", plots, "--no-render"), "plot");
    for (int m = 0; m < LB_MODEL_COUNT; m++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/breakdown_%s.gp", plots, lb_model_name((LbModelKind)m));
        char *gp = lb_slurp(path);
        lb_check(gp && strstr(gp, "rowstacked") && strstr(gp, "columnheader"), "%s is a stacked-bar script", path);
        free(gp);
        snprintf(path, sizeof path, "%s/breakdown_%s.plot.csv", plots, lb_model_name((LbModelKind)m));
        LbCsvTable t = {0};
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
    LbRun r = lb_run(ARGV("sweep", "--device", "cpu", SMALL, "--n", "64", "--k", "16", "--max-batch", "2", "--cell-time",
                          "1", "--mem-limit", "1M", "--out", dir));
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
        const char *name = lb_model_name((LbModelKind)m);
        LbRun r = lb_run(ARGV("run", CELL, "--model", (char *)name, "--breakdown"));
        const char *table = strstr(r.out, "\nbreakdown: one more pass at batch ");
        lb_check(r.code == 0 && table && strstr(r.err, "calibration: "), "run --model %s --breakdown: exit %d\n%s%s", name,
                 r.code, r.out, r.err);
        LbOpRole roles[LB_ROLE_COUNT];
        const int n = lb_test_roles((LbModelKind)m, roles);
        for (int i = 0; table && i < n; i++) {
            char row[64];
            snprintf(row, sizeof row, "\n  %-12s ", lb_op_role_name(roles[i]));
            lb_check(strstr(table, row) != NULL, "run --model %s --breakdown prints a row for %s:\n%s", name,
                     lb_op_role_name(roles[i]), table);
        }
        lb_check(table && !strstr(table, "\n  ffn_up_backward "),
                 "run --model %s --breakdown: a forward has no ffn_up_backward row (a step's has: test_cli_train)", name);
        /* the pass row: its calls, ms, 100.0 %, its rate and a percentage of the limit */
        const char *pass = table ? strstr(table, "\n  pass ") : NULL;
        lb_check(pass && strstr(pass, " 100.0 ") && strstr(pass, "TFLOP/s") && !strstr(pass, " -\n"),
                 "run --model %s --breakdown: a pass row with its percentage of the limit:\n%s", name,
                 table ? table : r.out);
        lb_run_free(&r);
    }
    char dump[4200];
    snprintf(dump, sizeof dump, "%s/dump", scratch);
    lb_run_refused(ARGV("run", "--device", "cpu", SMALL, "--n", "64", "--breakdown", "--dump", dump), "--breakdown");
    lb_check(!lb_exists(dump), "run --dump --breakdown: nothing written");
}

/* sweep --breakdown and calibration, then compare and plot reading them: meta.csv's calibration
 * keys; breakdown.csv with every operation of each model, a `pass` row of share 1 and shares
 * summing to 1 within the overhead; compare's share table and plot's scripts; without
 * --breakdown: no file, empty keys, a resume with it refused, --force clearing it; and a
 * --mem-limit 1M budget that calibrates within itself with a note. */
static void check_breakdown(const char *scratch)
{
    char with[4200], without[4200];
    snprintf(with, sizeof with, "%s/with", scratch);
    snprintf(without, sizeof without, "%s/without", scratch);

    sc_run_expect(ARGV("sweep", CELL, "--breakdown", "--out", with, "--models",
                       "standard,linformer,chunked,performer,flash,linformer-mean,linformer-max,linformer-conv"),
                  0, -1, "calibration: ", "TFLOP/s (fp32 product ", "GB/s copy");
    lb_check(sc_rows(with) == LB_MODEL_COUNT, "a cell of every model measured");
    sc_check_meta(with, "breakdown", "1", "sweep --breakdown");
    const double tflops = sc_meta_number(with, "calibration_tflop_per_s"), gbs = sc_meta_number(with, "calibration_copy_gb_per_s");
    const double dim = sc_meta_number(with, "calibration_product_dim"), bytes = sc_meta_number(with, "calibration_copy_bytes");
    lb_check(tflops > 0 && tflops < 1e3 && gbs > 0 && gbs < 1e5 && dim >= 256 && bytes >= (1 << 20),
             "meta.csv calibration: %g TFLOP/s, %g GB/s, product %g, copy %g bytes", tflops, gbs, dim, bytes);
    check_breakdown_csv(with);
    check_reports(with, scratch);

    /* Without --breakdown and with --no-check: no calibration, no breakdown.csv. */
    LbRun r = lb_run(ARGV("sweep", CELL, "-q", "--out", without));
    lb_check(r.code == 0 && !strstr(r.err, "calibration:"), "sweep without --breakdown: exit %d\n%s", r.code, r.err);
    lb_run_free(&r);
    lb_check(!lb_exists_in(without, LB_BREAKDOWN_FILE), "without --breakdown: no breakdown.csv");
    sc_check_meta(without, "breakdown", "0", "without --breakdown");
    sc_check_meta(without, "calibration_tflop_per_s", "", "without --breakdown");
    sc_check_meta(without, "calibration", "skipped", "without --breakdown");
    sc_check_meta_has(without, "calibration_note", "--no-check", "without --breakdown");
    lb_run_refused(ARGV("sweep", "--resume", without, "--breakdown"), "--breakdown");

    /* --force over the first directory: its breakdown.csv is a result file and goes. */
    lb_run_ok(ARGV("sweep", CELL, "-q", "--force", "--out", with), "--force over a --breakdown sweep");
    lb_check(!lb_exists_in(with, LB_BREAKDOWN_FILE), "--force clears breakdown.csv");
    check_small_budget(scratch);
    check_run_breakdown(scratch);
}

#define GRID "--device", "cpu", "--layers", "1", "--d-model", "32", "--heads", "2", "--ffn", "64", \
             "--vocab", "500", "--n", "64:512", "--k", "16:64", "--mem-limit", "8M", "--cell-time", "1", "--quiet"
#define CELLS 15 /* n 64, 128, 256, 512: 4 standard + 2 + 3 + 3 + 3 Linformer */

/* A sweep of GRID into dir, stopped with `sig` once it has written `after` rows. */
static LbRun interrupted(const char *dir, int sig, int after)
{
    return sc_stop_after(ARGV("sweep", GRID, "--out", (char *)dir), dir, sig, after, -1);
}

static LbRun resume(const char *dir, const char *flag, const char *value)
{
    return lb_run(ARGV("sweep", "--resume", (char *)dir, "--quiet", (char *)flag, (char *)value));
}

/* A resume with a setting that contradicts meta.csv: exit 2, one line naming the flag. */
static void refused(const char *dir, const char *flag, const char *value)
{
    lb_check_refusal(resume(dir, flag, value), flag, flag);
}

/* The reproduction: a sweep with --max-batch 2 --cell-time 1 cut to its first 4 rows,
 * then resumed with no flags, runs its cells with the same cap and time, keeps the grids the
 * uninterrupted run has, and keeps the first command line; --resume refuses another k list and
 * another version's directory, naming both versions. */
#define CAPPED "--device", "cpu", "--layers", "1", "--d-model", "16", "--heads", "2", "--ffn", "32", "--vocab", "100", \
               "--n", "32:256", "--k", "8:16", "--mem-limit", "8M", "--max-batch", "2", "--cell-time", "1", "-q"

/* path cut to its first `lines` lines. */
static void keep_lines(const char *path, int lines)
{
    char *s = lb_slurp(path), *p = s;
    for (int i = 0; p && i < lines && (p = strchr(p, '\n')) != NULL; i++)
        p++;
    if (p && truncate(path, p - s) != 0)
        perror(path);
    free(s);
}

static void resume_keeps_settings(const char *scratch)
{
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/capped", scratch);
    lb_run_ok(ARGV("sweep", CAPPED, "--out", dir), "capped sweep");
    char *command = sc_meta(dir, "command_line");
    snprintf(path, sizeof path, "%s/raw.csv", dir);
    keep_lines(path, 5);
    sc_expect(resume(dir, NULL, NULL), 0, -1, "resume of the capped sweep");
    sc_check_meta(dir, "max_batch", "2", "the resumed sweep");
    sc_check_meta(dir, "cell_time_s", "1", "the resumed sweep");
    LbCellResult *rows = NULL;
    size_t count = 0;
    if (lb_check(sc_read_rows(dir, &rows, &count) == 0 && count == 12, "12 cells after the resume (%zu)", count))
        for (size_t i = 0; i < count; i++)
            lb_check(rows[i].batch <= 2, "row %zu: the resumed cells keep the cap (batch %lld)", i, (long long)rows[i].batch);
    free(rows);
    LbGrid g;
    if (lb_check(lb_grids_read(dir, &g) == 0, "grids after the resume")) {
        for (size_t c = 0; c < g.rows * g.cols; c++)
            if (g.memory[c].kind == LB_GRID_VALUE)
                lb_check(g.memory[c].value == 1.0, "memory speedup %g: 1.00x, as uninterrupted (both capped at 2)", g.memory[c].value);
        lb_grid_free(&g);
    }
    lb_check(command != NULL, "the first run records its command line");
    sc_check_meta(dir, "command_line", command ? command : "", "the first command line is kept");
    sc_check_meta_has(dir, "resume_1_command", "--resume", "the resume's command is appended");
    char *when = sc_meta(dir, "resume_1_time");
    lb_check(when && when[0], "the resume's time is appended");
    free(command);
    free(when);

    /* --k 4 would rewrite both grids without the measured columns: refused. */
    char *grid_before = lb_slurp_in(dir, "time_speedup.csv");
    refused(dir, "--k", "4");
    refused(dir, "--cell-time", "10");
    refused(dir, "--max-batch", "64");
    lb_check(lb_same_text(grid_before, lb_slurp_in(dir, "time_speedup.csv")), "refused resumes leave the grid as it was");

    /* Another version's directory: refused, naming both versions. */
    LbRun r = lb_run(ARGV("--version"));
    char mine[64] = "";
    sscanf(r.out, "linbench %63s", mine);
    lb_check(r.code == 0 && strncmp(r.out, "linbench ", 9) == 0 && mine[0] && strstr(r.out, "git"),
             "--version prints version and revision: %s", r.out);
    lb_run_free(&r);
    fx_set_meta(dir, "linbench_version", "0.0.1-old");
    char *meta_before = lb_slurp_in(dir, "meta.csv");
    sc_expect(resume(dir, NULL, NULL), 2, 1, "--resume of another version's directory", "0.0.1-old", mine);
    lb_check(lb_same_text(meta_before, lb_slurp_in(dir, "meta.csv")), "and meta.csv is not overwritten");
}

/* A copy of the first row of dir/raw.csv for `model`, its field `field` (1 n, 2 k) set to value,
 * appended to the file. */
static void append_changed(const char *dir, const char *model, int field, const char *value)
{
    char path[600], prefix[64];
    snprintf(path, sizeof path, "%s/raw.csv", dir);
    snprintf(prefix, sizeof prefix, "\n%s,", model);
    char *s = lb_slurp(path), *row = s ? strstr(s, prefix) : NULL;
    if (!row)
        return;
    row++;
    *strchr(row, '\n') = '\0';
    char *at = row;
    for (int i = 0; i < field; i++)
        at = strchr(at, ',') + 1;
    FILE *f = fopen(path, "a");
    if (f) {
        fprintf(f, "%.*s%s%s\n", (int)(at - row), row, value, strchr(at, ','));
        fclose(f);
    }
    free(s);
}

/* raw.csv rows the resumed settings did not produce (an n or a k not in meta.csv's lists) are
 * not kept by a resume: exit 2, one line naming the file, the line and the setting, nothing
 * changed; compare still reads the directory and says so in a note. */
static void resume_refuses_foreign_rows(const char *scratch)
{
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/foreign", scratch);
    snprintf(path, sizeof path, "%s/raw.csv", dir);
    lb_run_ok(ARGV("sweep", CAPPED, "--out", dir), "sweep to add rows to");
    static const struct {
        const char *model;
        int field;
        const char *value, *words;
    } cases[] = {{"standard", 1, "48", "n 48 is not in meta.csv's n_list (32,64,128,256)"},
                 {"linformer", 2, "12", "k 12 is not in meta.csv's k_list (8,16)"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        keep_lines(path, 4);
        append_changed(dir, cases[i].model, cases[i].field, cases[i].value); /* line 5 */
        char where[700];
        snprintf(where, sizeof where, "%s line 5: %s", path, cases[i].words);
        char *before = lb_slurp(path);
        sc_expect(resume(dir, NULL, NULL), 2, 1, "--resume of a raw.csv with a row of another n or k", where);
        lb_check(lb_same_text(before, lb_slurp(path)), "the refused resume left raw.csv as it was");
        sc_run_expect(ARGV("compare", dir), 0, 1, "linbench: note: ", where);
    }
    keep_lines(path, 4); /* without them the resume goes on */
    sc_expect(resume(dir, NULL, NULL), 0, -1, "the resume of its own rows");
    lb_check(sc_rows(dir) == 12, "the resume of its own rows leaves 12 rows (%d)", sc_rows(dir));
}

/* sweep --resume: a sweep stopped by Ctrl-C (exit 130, finished cells kept, grids written) or by
 * kill -9 (at most the cell in progress lost), then resumed, ends with the same set of cells, each
 * once, as an uninterrupted run; --resume refuses settings that contradict meta.csv, and raw.csv
 * rows they did not produce (exit 2). */
static void check_resume(const char *scratch)
{
    char full[512], ctrlc[512], killed[512];
    snprintf(full, sizeof full, "%s/full", scratch);
    snprintf(ctrlc, sizeof ctrlc, "%s/ctrlc", scratch);
    snprintf(killed, sizeof killed, "%s/killed", scratch);

    lb_run_ok(ARGV("sweep", GRID, "--out", full), "uninterrupted sweep");
    sc_each_once(full, CELLS, "uninterrupted");

    /* Ctrl-C: exit 130, the finished cells and the grids on disk, a hint to resume. */
    sc_expect(interrupted(ctrlc, SIGINT, 3), 130, -1, "Ctrl-C says how to resume", "--resume");
    int kept = sc_rows(ctrlc);
    lb_check(kept >= 3 && kept < CELLS, "Ctrl-C kept the finished cells (%d)", kept);
    lb_check(lb_exists_in(ctrlc, "time_speedup.csv"), "Ctrl-C still wrote the grids");
    sc_check_meta(ctrlc, "status", "interrupted", "Ctrl-C");

    /* Settings that contradict meta.csv are refused before anything runs. */
    refused(ctrlc, "--dtype", "fp32");
    refused(ctrlc, "--layers", "3");
    refused(ctrlc, "--mem-limit", "16M");
    lb_check(sc_rows(ctrlc) == kept, "refused resumes measured nothing");
    sc_expect(resume(scratch, NULL, NULL), 2, -1, "--resume on a directory without a sweep", "--resume");

    /* Resume finishes the rest: the same cells as the uninterrupted run, each once. */
    sc_expect(resume(ctrlc, "--d-model", "32"), 0, -1, "resume after Ctrl-C"); /* a flag that agrees with meta.csv */
    sc_each_once(ctrlc, CELLS, "Ctrl-C then --resume");

    /* kill -9: at most the cell in progress is lost. */
    sc_expect(interrupted(killed, SIGKILL, 2), 128 + SIGKILL, -1, "kill -9 ends the sweep");
    lb_check(sc_rows(killed) >= 2, "kill -9 kept the finished cells (%d)", sc_rows(killed));
    sc_expect(resume(killed, NULL, NULL), 0, -1, "resume after kill -9");
    sc_each_once(killed, CELLS, "kill -9 then --resume");

    /* A mangled meta.csv is refused. */
    fx_set_meta(killed, "layers", "many");
    LbRun r = resume(killed, NULL, NULL);
    lb_check(!strstr(r.err, "--layers"), "--resume with an unreadable meta.csv value: not a flag never given: %s", r.err);
    sc_expect(r, 2, 1, "--resume with an unreadable meta.csv value", "--resume", "meta.csv", "layers");

    resume_keeps_settings(scratch);
    resume_refuses_foreign_rows(scratch);
}

int main(int argc, char **argv)
{
    bin = lb_cli_start(argc, argv, "test_cli_sweep");
    const char *scratch = lb_scratch;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/tiny", scratch);

    LbRun r = lb_run(ARGV("sweep", TINY, "--n", "128:1024", "--k", "32:256", "--mem-limit", "32M", "--cell-time", "1",
                          "--out", dir));
    lb_check(r.code == 0, "tiny CPU sweep exits 0 (got %d): %s", r.code, r.err);
    lb_check(strstr(r.out, "time") && strstr(r.out, "memory") && strstr(r.out, "1024"),
             "the closing summary prints both grids");
    printf("%s", r.out);
    lb_run_free(&r);
    check_sweep_files(dir);

    /* Results are never silently overwritten: the same --out again is bad input... */
    lb_run_refused(ARGV("sweep", TINY, "--n", "128", "--k", "32", "--mem-limit", "32M", "--out", dir), "--out", "--force");
    check_sweep_files(dir); /* ...and left intact */

    /* Bad input: each gets exit 2, one line naming the flag, nothing computed or written. */
    snprintf(bad_out, sizeof bad_out, "%s/bad", scratch);
    static const char *const bad[][2] = {
        {"--layers", "x"},         {"--heads", "0"},           {"--d-model", "-64"},     {"--ffn", "12abc"},
        {"--n", "1"},              {"--n", "4194304"},         {"--n", "1024:512"},      {"--k", "0"},
        {"--sharing", "diagonal"}, {"--order", "middle"},      {"--dtype", "fp8"},       {"--device", "tpu"},
        {"--mem-limit", "12Q"},    {"--mem-limit", "0"},       {"--mem-limit", "-1G"},   {"--seed", "-3"},
        {"--format", "pdf"},       {"--cell-time", "0"},       {"--projection", "pool"}, {"--k-schedule", "1,1.5"},
        {"--k-schedule", "1,0"},   {"--k-schedule", "double"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        BAD(bad[i][0], (char *)bad[i][0], (char *)bad[i][1]);
    BAD("--d-model", "--d-model", "64", "--heads", "5");
    BAD("--sharing", "--sharing", "none", "--order", "early");
    BAD("--layers", "--layers");
    /* the Linformer's k per layer */
    BAD("--k-schedule", "--layers", "2", "--k-schedule", "1,0.5,0.25");
    BAD("--k-schedule", "--layers", "2", "--models", "linformer-mean", "--n", "64", "--k", "32", "--k-schedule",
        "1,0.75");
    BAD("--k", "--models", "standard,linformer-conv", "--n", "64", "--k", "128");

    /* An --out that cannot be created or written. */
    lb_run_refused(ARGV("sweep", "--device", "cpu", "--out", "/proc/linbench-cannot/x"), "--out");
    char file[600];
    snprintf(file, sizeof file, "%s/raw.csv", dir); /* a file */
    lb_run_refused(ARGV("sweep", "--device", "cpu", "--out", file), "--out");

    /* --force overwrites, explicitly. */
    lb_run_ok(ARGV("sweep", TINY, "--n", "128", "--k", "32", "--mem-limit", "16M", "--out", dir, "--force"),
              "--force overwrites");
    sc_each_once(dir, 2, "after --force, the new run only");

    /* The default device is CUDA: without a GPU, one clear line and exit 1, nothing written. */
    char cuda_out[512];
    snprintf(cuda_out, sizeof cuda_out, "%s/cuda", scratch);
    r = lb_run(ARGV("sweep", "--layers", "1", "--d-model", "64", "--heads", "4", "--ffn", "64", "--vocab", "100", "--n",
                    "256", "--k", "64", "--mem-limit", "64M", "--quiet", "--out", cuda_out));
    if (r.code == 0) {
        printf("(a CUDA device is present: the no-GPU message was not exercised)\n");
        lb_check(1, "CUDA sweep ran");
    } else {
        lb_check(r.code == 1 && strstr(r.err, "no CUDA device") && strstr(r.err, "--device cpu") && lb_lines(r.err) == 1,
                 "no GPU: one line, exit 1, suggests --device cpu (exit %d): %s", r.code, r.err);
        lb_check(!lb_exists(cuda_out), "no GPU: nothing written");
    }
    lb_run_free(&r);

    /* help, --version, info (sweep --help lists every flag of the table: test_cli_settings). */
    sc_run_says(ARGV("help"), 0, "sweep", "run", "info");
    r = lb_run(ARGV("info"));
    lb_check(r.code == 0 && (strstr(r.out, "no CUDA device") || strstr(r.out, "compute capability")), "info exits 0 and says what it sees");
    lb_run_free(&r);
    check_breakdown(scratch);
    check_resume(scratch);
    return lb_test_finish("test_cli_sweep");
}
