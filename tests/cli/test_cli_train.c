/* `--pass train` end to end: run and sweep measure a training step (attn/train.h), not a forward;
 * run --pass train --dump's gradients equal a CPU step's. CPU only: run --breakdown, Ctrl-C and
 * --resume, --pass bogus. Usage: test_cli_train PATH-TO-LINBENCH cpu|cuda (cuda: the emulated GPU). */
#include <math.h>
#include <stdlib.h>

#include "attn/attention.h"
#include "attn/base/status.h"
#include "attn/check.h"
#include "attn/ops.h"
#include "attn/plan.h"
#include "reports/csv_io.h"
#include "tests/cli/sweep_check.h"
#include "tests/lib/model.h"
#include "tests/reports/npy_read.h"

static const char *bin, *device;
/* linbench's argv: ARGV("run", "--device", (char *)device, SMALL) */
#define ARGV(...) LB_ARGV((char *)bin, __VA_ARGS__)
static LbPlanParams pp; /* the backend's plan parameters, fp16 as the runs below store it */

#define MODEL "--layers", "1", "--d-model", "32", "--heads", "2", "--ffn", "64", "--vocab", "100"
#define SMALL MODEL, "--cell-time", "1", "--no-check", "--pass", "train"

/* The model a row of MODEL measured, as a run gives it. */
static LbModelConfig config(LbModelKind kind, int64_t n, int64_t k, LbPassKind pass)
{
    LbModelConfig c = lb_test_shape(1, 32, 2, 64, 100, n, k);
    c.kind = kind;
    c.pass = pass;
    return c;
}

static double plan_total(const LbModelConfig *c, int64_t batch)
{
    LbPlan plan;
    return lb_plan_compute(c, &pp, batch, &plan) == LB_OK ? (double)plan.total : -1;
}

/* run --pass train of every model: a step measured, at the step's plan. */
static void check_runs(void)
{
    for (int m = 0; m < LB_MODEL_COUNT; m++) {
        const LbModelKind kind = (LbModelKind)m;
        const char *name = lb_model_name(kind);
        LbRun r = lb_run(ARGV("run", "--device", (char *)device, SMALL, "--mem-limit", "64M", "--max-batch", "2", "--n",
                              "32", "--model", (char *)name, lb_model_has_k(kind) ? "--k" : NULL, "8"));
        const double batch = lb_key_number(r.out, "batch"), planned = lb_key_number(r.out, "planned bytes");
        const LbModelConfig c = config(kind, 32, lb_model_has_k(kind) ? 8 : 0, LB_PASS_TRAIN);
        const char *tflop = strstr(r.out, "\nTFLOP/s: ");
        const char *paren = tflop ? strchr(tflop, '(') : NULL;
        const double gflop = paren ? strtod(paren + 1, NULL) : -1;
        const LbModelConfig fwd = config(kind, 32, c.k, LB_PASS_FORWARD);
        lb_check(r.code == 0 && strstr(r.out, "\npass: train\n") && strstr(r.out, "\nms per step: median ") &&
                     strstr(r.out, "GFLOP per sequence of a step x batch") && !strstr(r.out, "ms per forward"),
                 "run --pass train --model %s: exit %d, prints pass train, ms per step, a step's FLOPs:\n%s%s", name,
                 r.code, r.out, r.err);
        lb_check(batch >= 1 && batch <= 2 && planned == lb_key_number(r.out, "peak bytes") &&
                     planned == plan_total(&c, (int64_t)batch),
                 "run --pass train --model %s: batch %g, planned %g = peak %g = the step's plan %g", name, batch,
                 planned, lb_key_number(r.out, "peak bytes"), plan_total(&c, (int64_t)batch));
        lb_check(gflop > 2 * lb_config_flops_per_seq(&fwd) / 1e9,
                 "run --pass train --model %s: %g GFLOP per sequence, more than twice the forward's %g", name, gflop,
                 lb_config_flops_per_seq(&fwd) / 1e9);
        lb_run_free(&r);
    }
}

/* run --breakdown traces the pass it measures: a step's backward has rows of its own (that a
 * forward's has none: test_cli_sweep). */
static void check_breakdown(void)
{
    LbRun r = lb_run(ARGV("run", "--device", (char *)device, MODEL, "--cell-time", "1", "--no-check", "--max-batch", "1",
                          "--n", "32", "--breakdown", "--pass", "train"));
    lb_check(r.code == 0 && strstr(r.out, "\nbreakdown: one more step at batch 1") &&
                 lb_number_after(r.out, "\n  ffn_up ") > 0 && lb_number_after(r.out, "\n  ffn_up_backward ") > 0,
             "run --breakdown --pass train: exit %d, \"breakdown: one more step at batch 1\", ffn_up and "
             "ffn_up_backward rows with calls:\n%s%s", r.code, r.out, r.err);
    lb_run_free(&r);
}

/* dir's rows are steps: ok, peak = planned = the step's plan at the batch, the batch the step's
 * largest within the budget and max_batch (0: none), at most the forward's. Returns how many rows'
 * step batch is below the forward's. */
static int check_rows(const char *dir, size_t cells, int64_t max_batch, const char *what)
{
    char *budget_text = sc_meta(dir, "memory_budget_bytes");
    const size_t budget = budget_text ? strtoull(budget_text, NULL, 10) : 0;
    free(budget_text);
    LbCellResult *rows = NULL;
    size_t count = 0;
    int below = 0;
    const int read = sc_read_rows(dir, &rows, &count) == 0;
    if (!lb_check(read && count == cells, "%s: raw.csv holds %zu rows (%zu)", what, cells, count))
        return 0;
    for (size_t i = 0; i < count; i++) {
        const LbCellResult *r = &rows[i];
        const LbModelConfig c = config(r->model, r->n, r->k, LB_PASS_TRAIN), f = config(r->model, r->n, r->k, LB_PASS_FORWARD);
        const int64_t step = lb_plan_largest_batch(&c, &pp, budget, max_batch);
        const int64_t forward = lb_plan_largest_batch(&f, &pp, budget, max_batch);
        lb_check(r->status == LB_CELL_OK && r->peak_bytes == r->planned_bytes &&
                     (double)r->planned_bytes == plan_total(&c, r->batch) && r->batch == step && step <= forward,
                 "%s: %s n=%lld k=%lld: status %s, batch %lld (the step's plan %lld, the forward's %lld), planned %lld, "
                 "peak %lld, the step's plan %.0f",
                 what, lb_model_name(r->model), (long long)r->n, (long long)r->k, r->error, (long long)r->batch,
                 (long long)step, (long long)forward, (long long)r->planned_bytes, (long long)r->peak_bytes,
                 plan_total(&c, r->batch));
        below += step < forward;
    }
    free(rows);
    return below;
}

/* A sweep's files, as a forward sweep's: meta.csv pass train and complete, Table 3's grids with a
 * value in every cell where Linformer has one, the energy grid and speedups.csv. */
static void check_files(const char *dir, const char *what)
{
    sc_check_meta(dir, "pass", "train", what);
    sc_check_meta(dir, "status", "complete", what);
    sc_files_parse(dir, 1, what);
    LbGrid g;
    if (lb_check(lb_grids_read(dir, &g) == 0, "%s: the grids read back", what)) {
        int values = 0;
        for (size_t c = 0; c < g.rows * g.cols; c++) {
            lb_check(g.time[c].kind != LB_GRID_MISSING && g.memory[c].kind != LB_GRID_MISSING,
                     "%s: no NA in the grids (n %lld, k %lld)", what, (long long)g.n[c / g.cols],
                     (long long)g.k[c % g.cols]);
            values += g.time[c].kind == LB_GRID_VALUE && g.memory[c].kind == LB_GRID_VALUE;
        }
        lb_check(values > 0, "%s: the grids hold values", what);
        lb_grid_free(&g);
    }
    char *speedups = lb_slurp_in(dir, "speedups.csv");
    lb_check(speedups && lb_lines(speedups) > 1, "%s: speedups.csv has rows", what);
    free(speedups);
    lb_check(lb_exists_in(dir, "energy_speedup.csv"), "%s: energy_speedup.csv written", what);
}

/* breakdown.csv traces steps: each cell has an ffn_up_backward row as well as ffn_up's. */
static void check_breakdown_csv(const char *dir, size_t cells, const char *what)
{
    char path[600];
    snprintf(path, sizeof path, "%s/breakdown.csv", dir);
    LbCsvTable t;
    if (!lb_check(lb_csv_read_file(path, 1, &t) == 0 && t.rows > 0 && t.row[0].count > 5 &&
                      strcmp(t.row[0].fields[4], "op") == 0 && strcmp(t.row[0].fields[5], "calls") == 0,
                  "%s: breakdown.csv reads back, op and calls its 5th and 6th columns", what))
        return;
    size_t up = 0;
    for (size_t r = 1; r < t.rows; r++)
        if (t.row[r].count > 5 && strcmp(t.row[r].fields[4], "ffn_up_backward") == 0) {
            up++;
            lb_check(atoll(t.row[r].fields[5]) > 0, "%s: breakdown.csv %s n=%s: %s ffn_up_backward calls", what,
                     t.row[r].fields[0], t.row[r].fields[1], t.row[r].fields[5]);
        }
    lb_check(up == cells, "%s: breakdown.csv has an ffn_up_backward row for each of the %zu cells (%zu)", what, cells,
             up);
    lb_csv_table_free(&t);
}

/* A sweep (every model on the CPU; standard, linformer, flash on cuda): rows that are steps, the
 * files a forward sweep writes, a breakdown.csv of steps. */
static void check_sweep(const char *scratch)
{
    const int cpu = strcmp(device, "cpu") == 0;
    char dir[512], models[256] = "";
    snprintf(dir, sizeof dir, "%s/sweep", scratch);
    for (int m = 0; cpu && m < LB_MODEL_COUNT; m++)
        snprintf(models + strlen(models), sizeof models - strlen(models), "%s%s", m ? "," : "",
                 lb_model_name((LbModelKind)m));
    /* the emulator is slow: three models, one n, a capped batch; the CPU's budget fits a few
     * sequences of a step, so that steps and forwards have different batches */
    lb_run_ok(ARGV("sweep", "--device", (char *)device, SMALL, "-q", "--breakdown", "--out", dir, "--models",
                   cpu ? models : "standard,linformer,flash", "--n", cpu ? "32:64" : "64", "--k", cpu ? "8" : "16",
                   "--mem-limit", cpu ? "1M" : "40M", cpu ? NULL : "--max-batch", "2"),
              "sweep --pass train");
    size_t cells = cpu ? 0 : 3;
    for (int m = 0; cpu && m < LB_MODEL_COUNT; m++)
        for (int64_t n = 32; n <= 64; n *= 2)
            cells += lb_model_cell_exists((LbModelKind)m, n, 8) != 0;
    const int below = check_rows(dir, cells, cpu ? 0 : 2, "sweep --pass train");
    if (cpu)
        lb_check(below > 0, "sweep --pass train: some cell's step batch is below its forward's (%d)", below);
    check_files(dir, "sweep --pass train");
    check_breakdown_csv(dir, cells, "sweep --pass train");
}

/* Ctrl-C then --resume: the resumed cells are steps too. */
static void check_resume(const char *scratch)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/resumed", scratch);
    char *argv[] = {(char *)bin, "sweep", "--device", "cpu", SMALL, "-q", "--out", dir, "--n", "32:128", "--k",
                    "8:16", "--mem-limit", "1M", NULL};
    const int cells = 9; /* n 32, 64, 128: a standard and two Linformer cells each */
    LbRun r = sc_stop_after(argv, dir, SIGINT, 2, -1);
    const int kept = sc_rows(dir);
    lb_check(r.code == 130 && kept >= 2 && kept < cells, "Ctrl-C: exit %d, %d of %d cells kept: %s", r.code, kept,
             cells, r.err);
    lb_run_free(&r);
    lb_run_ok(ARGV("sweep", "--resume", dir, "-q"), "sweep --resume of a training sweep");
    check_rows(dir, (size_t)cells, 0, "Ctrl-C then --resume");
    sc_each_once(dir, (size_t)cells, "Ctrl-C then --resume");
    check_files(dir, "Ctrl-C then --resume");
}

/* index.csv's row named `name`, or -1. */
static long find_row(const LbCsvTable *t, const char *name)
{
    for (size_t i = 1; i < t->rows; i++)
        if (t->row[i].count == 4 && strcmp(t->row[i].fields[0], name) == 0)
            return (long)i;
    return -1;
}

/* The dumped array `name` against ref (count, shape rows x cols, cols 1 a vector; cols 0 (B, n, d)). */
static void against(LbBackend *cpu, const char *dir, const LbCsvTable *t, const char *name, const float *ref,
                    int64_t rows, int64_t cols, const char *what)
{
    const long i = find_row(t, name);
    if (!lb_check(i > 0, "%s: index.csv names %s", what, name))
        return;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, t->row[i].fields[1]);
    NpyFile f;
    if (!lb_check(npy_read(path, &f) == 0, "%s: %s reads back", what, path))
        return;
    const int64_t count = rows * (cols ? cols : 1);
    int64_t elems = 1;
    for (int d = 0; d < f.ndim; d++)
        elems *= f.shape[d];
    const int ndim = cols == 0 ? 3 : cols == 1 ? 1 : 2;
    const int shaped = strcmp(f.descr, "<f4") == 0 && f.ndim == ndim && elems == count &&
                       (ndim == 3 || (f.shape[0] == rows && (ndim == 1 || f.shape[1] == cols)));
    char label[200];
    snprintf(label, sizeof label, "%s: %s", what, name);
    if (lb_check(shaped && f.bytes == (size_t)count * 4, "%s: '%s' of %d dimensions, %lld elements, as its tensor's",
                 label, f.descr, f.ndim, (long long)elems))
        lb_check_against(cpu, "train", label, (const float *)f.data, ref, count);
    npy_free(&f);
}

static void check_model(LbBackend *cpu, const char *model)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/dump-%s", lb_scratch, model);
    if (!sc_run_says(ARGV("run", "--device", (char *)device, "--model", (char *)model, "--pass", "train", "--layers", "2",
                          "--d-model", "16", "--heads", "4", "--ffn", "24", "--vocab", "50", "--n", "32", "--k", "8",
                          "--dtype", "fp32", "--seed", "7", "--batch", "2", "--dump", dir),
                     0, "wrote the training step"))
        return;
    LbModelConfig cfg = lb_test_model(32, 8); /* the flags above */
    cfg.kind = strcmp(model, "performer") == 0 ? LB_MODEL_PERFORMER : LB_MODEL_LINFORMER;
    LbCheckGrads g;
    if (!lb_check(lb_check_train_step(cpu, cfg, 2, 7, &g) == LB_OK, "%s: the CPU's step ran: %s", model,
                  lb_error_where()))
        return;
    char path[700];
    snprintf(path, sizeof path, "%s/index.csv", dir);
    LbCsvTable t;
    if (lb_check(lb_csv_read_file(path, 0, &t) == 0, "%s: index.csv reads back", model)) {
        int trained = 0, listed = 0;
        against(cpu, dir, &t, "grad.output", g.dy, 2 * cfg.n * cfg.d_model, 0, model);
        for (int64_t i = 0; i < g.count; i++) {
            const LbTensorRef *ref = &g.refs[i];
            char name[64];
            snprintf(name, sizeof name, "grad.%s", ref->name);
            trained += !ref->fixed;
            if (ref->fixed)
                lb_check(find_row(&t, name) < 0, "%s: no %s, a fixed tensor's", model, name);
            else
                against(cpu, dir, &t, name, ref->ptr, ref->rows, ref->cols, model);
        }
        for (size_t i = 1; i < t.rows; i++)
            listed += strncmp(t.row[i].fields[0], "grad.", 5) == 0;
        lb_check(listed == trained + 1 && trained > 0 && (cfg.kind != LB_MODEL_PERFORMER || trained < g.count),
                 "%s: %d gradients in index.csv, one per trained tensor (%d of %lld) and grad.output", model, listed,
                 trained, (long long)g.count);
        lb_csv_table_free(&t);
    }
    lb_check_grads_free(&g);
    sc_check_meta(dir, "pass", "train", model);
}

/* A forward pass's dump holds no gradient and says pass forward. */
static void check_forward(void)
{
    char dir[512], path[700];
    snprintf(dir, sizeof dir, "%s/dump-forward", lb_scratch);
    lb_run_ok(ARGV("run", "--device", (char *)device, "--model", "linformer", "--layers", "1", "--d-model", "16", "--heads",
                   "2", "--ffn", "32", "--vocab", "100", "--n", "32", "--k", "8", "--dump", dir),
              "run --dump (forward)");
    snprintf(path, sizeof path, "%s/index.csv", dir);
    LbCsvTable t;
    if (lb_check(lb_csv_read_file(path, 0, &t) == 0, "forward: index.csv reads back")) {
        lb_check(t.rows > 3 && find_row(&t, "output") > 0 && find_row(&t, "grad.output") < 0,
                 "a forward dump lists output and no gradient");
        lb_csv_table_free(&t);
    }
}

/* run --pass train --dump for the Linformer (its own E and F) and Performer (fixed random
 * features), two layers, read back through libcsv and the tests' .npy reader against a CPU step
 * from the same settings and seed (lb_check_train_step): index.csv names grad.output (the upstream
 * gradient) and one grad.NAME per trained tensor, none for a fixed one; each file's shape is its
 * tensor's and its values are the CPU step's within the fp32 tolerance of a whole step; meta.csv
 * says pass train. A forward dump has no gradient. */
static void check_dumps(void)
{
    LbBackend *cpu = NULL;
    if (lb_check(lb_cpu_backend_open(LB_DTYPE_FP32, (size_t)1 << 30, &cpu) == LB_OK, "the CPU backend opens")) {
        check_model(cpu, "linformer");
        check_model(cpu, "performer");
        lb_backend_close(cpu);
    }
    check_forward();
}

int main(int argc, char **argv)
{
    bin = lb_cli_start(argc, argv, "test_cli_train");
    device = argc > 2 ? argv[2] : "cpu";
    const char *scratch = lb_scratch;
    if (strcmp(device, "cpu") == 0) {
        LbBackend *be = NULL;
        if (lb_cpu_backend_open(LB_DTYPE_FP16, 1 << 20, &be) != LB_OK)
            return 1;
        pp = (LbPlanParams){be->elem_bytes, be->alignment, be->workspace_bytes};
        lb_backend_close(be);
    } else {
        unsetenv("LB_EMU_MEMORY");
        pp = lb_plan_params_cuda(LB_DTYPE_FP16);
    }
    check_runs();
    check_sweep(scratch);
    check_dumps();
    if (strcmp(device, "cpu") == 0) {
        check_breakdown();
        check_resume(scratch);
        lb_run_refused(ARGV("run", "--device", "cpu", "--pass", "bogus"), "--pass", "forward or train");
        lb_run_refused(ARGV("sweep", "--device", "cpu", "--pass", "bogus"), "--pass", "forward or train");
    }
    return lb_test_finish("test_cli_train");
}
