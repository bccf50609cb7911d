/* linbench predict end to end (issue 22): the roofline's time of a hand-worked cell; the batches of
 * the sweep's own plan under the sweep's own headroom, and equal to a real CPU sweep's under the
 * same budget; the files read back through libcsv and round-tripped through compare and plot;
 * the Linformer's --k-schedule and --projection honoured; OOM cells for a card too small; and bad
 * input: one line on stderr, exit 2, nothing written.
 * Usage: test_cli_predict PATH-TO-LINBENCH */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/plan.h"
#include "cmd/calibration.h"
#include "reports/breakdown_csv.h"
#include "reports/meta.h"
#include "reports/raw.h"
#include "reports/settings.h"
#include "tests/cli/sweep_check.h"
#include "tests/reports/fixture.h"

static char *bin;
static const char *scratch;

static LbCellResult *read_rows(const char *dir, size_t *count)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", scratch, dir);
    LbCellResult *rows = NULL;
    lb_check(sc_read_rows(path, &rows, count) == 0, "%s/raw.csv reads back", dir);
    return rows;
}

/* The hand-worked cell. standard, L = 1, d = 8, h = 1 (head width 8), f = 16, n = 4, B = 1
 * (--max-batch 1), fp16 (e = 2 bytes). Its calls, FLOPs (2 m n k per product) and bytes (every
 * operand read once, every result written once, METHOD.md "Bytes moved"):
 *   embed      (2 B n d + n d) e + 4 B n = (64 + 32) 2 + 16          = 208 B
 *   layernorm  (2 rows d + 2 d) e = (64 + 16) 2                      = 160 B
 *   qkv        4 x 8 -> 24, bias: 2*4*8*24 = 1536 FLOPs; (32 + 192 + 24 + 96) 2 = 688 B
 *   scores     Q K^T, m 4 n 4 k 8: 256 FLOPs; (32 + 32 + 16) 2       = 160 B
 *   softmax    2 x 16 elements x 2                                   = 64 B
 *   pv         P V, m 4 n 8 k 4: 256 FLOPs; (16 + 32 + 32) 2         = 160 B
 *   out_proj   4 x 8 -> 8, bias: 512 FLOPs; (32 + 64 + 8 + 32) 2     = 272 B
 *   layernorm  with residual (3 rows d + 2 d) e = (96 + 16) 2        = 224 B
 *   ffn_up     4 x 8 -> 16, bias: 1024 FLOPs; (32 + 128 + 16 + 64) 2 = 480 B
 *   gelu       2 x 64 x 2                                            = 256 B
 *   ffn_down   4 x 16 -> 8, bias: 1024 FLOPs; (64 + 128 + 8 + 32) 2  = 464 B
 *   layernorm  with residual                                         = 224 B
 * The card: --spec tflops=1e-7 (1e5 FLOP/s), bw=1e-4 (1e5 B/s), product efficiency 0.5, copy
 * efficiency 0.8, 1000 us per kernel. Products are bound by their FLOPs (ms = FLOPs / 5e4 x 1e3:
 * 30.72 + 5.12 + 5.12 + 10.24 + 20.48 + 20.48 = 92.16 ms; each one's bytes would take less: qkv
 * 688 / 8e4 = 8.6 ms < 30.72), the rest by their bytes (ms = bytes / 8e4 x 1e3: 2.6 + 2.0 + 0.8 +
 * 2.8 + 3.2 + 2.8 = 14.2 ms), plus 12 calls x 1 ms: 118.36 ms. FLOPs per sequence 4608. */
static void hand_worked_cell(void)
{
    char out[4200];
    snprintf(out, sizeof out, "%s/hand", scratch);
    lb_run_ok(LB_ARGV(bin, "predict", "--spec", "tflops=1e-7,bw=1e-4,mem=64M", "--headroom", "0", "--max-batch", "1",
                      "--models", "standard", "--n", "4", "--layers", "1", "--d-model", "8", "--heads", "1", "--ffn",
                      "16", "--vocab", "10", "--product-efficiency", "0.5", "--copy-efficiency", "0.8", "--launch-us",
                      "1000", "--out", out), "predict on the hand-worked cell");
    size_t count = 0;
    LbCellResult *rows = read_rows("hand", &count);
    lb_check(count == 1, "one cell, %zu rows", count);
    if (count == 1) {
        const LbCellResult *c = &rows[0];
        lb_check(c->status == LB_CELL_OK && c->batch == 1, "ok at batch 1 (status %d, batch %lld)", (int)c->status,
                 (long long)c->batch);
        lb_check(fabs(c->median_ms - 118.36) < 1e-9 * 118.36, "median_ms %.12g: should be 118.36 by hand", c->median_ms);
        lb_check(c->min_ms == c->median_ms && c->max_ms == c->median_ms, "min and max are the prediction");
        lb_check(fabs(c->ms_per_seq - 118.36) < 1e-9 * 118.36, "ms_per_seq %.12g", c->ms_per_seq);
        const double tflops = 4608.0 / 0.11836 / 1e12;
        lb_check(fabs(c->tflop_per_s - tflops) < 1e-9 * tflops, "tflop_per_s %.12g: should be %.12g", c->tflop_per_s,
                 tflops);
        lb_check(c->passes == 0, "no passes ran (%d)", c->passes);
    }
    free(rows);
    /* breakdown.csv: the same time per operation, summing to the pass */
    LbBreakdownRecord *recs = NULL;
    size_t nrec = 0;
    lb_check(lb_breakdown_read(out, 0, &recs, &nrec) == 0, "breakdown.csv reads back");
    static const struct {
        const char *op;
        double ms;
        int calls;
    } want[] = {{"embed", 2.6 + 1, 1},      {"layernorm", 2.0 + 2.8 + 2.8 + 3, 3}, {"qkv", 30.72 + 1, 1},
                {"scores", 5.12 + 1, 1},    {"softmax", 0.8 + 1, 1},               {"pv", 5.12 + 1, 1},
                {"out_proj", 10.24 + 1, 1}, {"ffn_up", 20.48 + 1, 1},              {"gelu", 3.2 + 1, 1},
                {"ffn_down", 20.48 + 1, 1}, {"pass", 118.36, 12}};
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
        int seen = 0;
        for (size_t i = 0; i < nrec; i++)
            if (strcmp(recs[i].op, want[w].op) == 0) {
                seen = 1;
                lb_check(fabs(recs[i].ms - want[w].ms) < 1e-9 * want[w].ms && recs[i].calls == want[w].calls,
                         "breakdown %s: %.12g ms in %lld calls: should be %.12g in %d", want[w].op, recs[i].ms,
                         (long long)recs[i].calls, want[w].ms, want[w].calls);
            }
        lb_check(seen, "breakdown.csv has %s", want[w].op);
    }
    free(recs);
}

/* The batches: the plan's (CUDA's parameters) under the card's memory less the sweep's headroom;
 * and a real CPU sweep's under the same budget. The CPU reference stores fp32 and carves no
 * library workspace, so with --dtype fp32 its plan is CUDA's less the 32 MiB workspace exactly
 * (every allocation 256-byte aligned on both): a CPU budget of X matches a card of X + 32 MiB
 * after the headroom. 312M - 256M (the headroom's floor) - 32M = 24M. */
static void same_batches_as_a_sweep(void)
{
#define MODEL "--layers", "2", "--d-model", "64", "--heads", "4", "--ffn", "128", "--vocab", "1000", "--n", "128,256", \
              "--k", "32,64", "--dtype", "fp32"
    char pred[4200], swp[4200];
    snprintf(pred, sizeof pred, "%s/plan", scratch);
    snprintf(swp, sizeof swp, "%s/cpu", scratch);
    lb_run_ok(LB_ARGV(bin, "predict", MODEL, "--spec", "tflops=10,bw=500,mem=312M", "--out", pred), "predict for 312M");
    lb_run_ok(LB_ARGV(bin, "sweep", MODEL, "--device", "cpu", "--mem-limit", "24M", "--cell-time", "1", "--no-check",
                      "--breakdown", "-q", "--out", swp),
              "the CPU sweep at 24M");
#undef MODEL

    size_t np = 0, ns = 0;
    LbCellResult *p = read_rows("plan", &np), *s = read_rows("cpu", &ns);
    lb_check(np == 6 && ns == 6, "6 cells each (%zu predicted, %zu swept)", np, ns);
    /* the sweep's own headroom function and plan, in this process */
    LbRunSettings set;
    lb_check(lb_run_settings_init(&set) == 0, "settings");
    const uint64_t mem = (uint64_t)312 << 20, budget = mem - lb_run_settings_headroom(&set, mem);
    lb_check(budget == (uint64_t)56 << 20, "the headroom of a 312 MiB card is 256 MiB (budget %llu)",
             (unsigned long long)budget);
    const LbPlanParams cuda = lb_plan_params_cuda(LB_DTYPE_FP32);
    for (size_t i = 0; i < np; i++) {
        const LbCellResult *a = &p[i], *b = sc_find(s, ns, a->model, a->n, a->k);
        LbModelConfig cfg = set.model;
        cfg.layers = 2, cfg.d_model = 64, cfg.heads = 4, cfg.ffn = 128, cfg.vocab = 1000, cfg.dtype = LB_DTYPE_FP32;
        cfg.kind = a->model, cfg.n = a->n, cfg.k = a->k;
        const int64_t plan = lb_plan_largest_batch(&cfg, &cuda, (size_t)budget, 0);
        lb_check(a->batch == plan && a->batch > 1, "%s n=%lld k=%lld: predicted batch %lld, the plan's %lld",
                 lb_model_name(a->model), (long long)a->n, (long long)a->k, (long long)a->batch, (long long)plan);
        lb_check(b && b->batch == a->batch, "%s n=%lld k=%lld: the CPU sweep's batch %lld, predicted %lld",
                 lb_model_name(a->model), (long long)a->n, (long long)a->k, b ? (long long)b->batch : -1LL,
                 (long long)a->batch);
        lb_check(b && b->planned_bytes + (int64_t)LB_CUDA_WORKSPACE_BYTES == a->planned_bytes,
                 "planned bytes: the sweep's + the workspace (%lld + 32 MiB vs %lld)", b ? (long long)b->planned_bytes : -1LL,
                 (long long)a->planned_bytes);
    }
    lb_run_settings_free(&set);
    free(p);
    free(s);

    /* The predicted pass is counted, not run: its FLOPs and bytes per operation must be what the
     * CPU sweep's --breakdown counted on a real pass at the same batch (fp32 stores 4 bytes on
     * both backends). */
    LbBreakdownRecord *bp = NULL, *bs = NULL;
    size_t nbp = 0, nbs = 0;
    lb_check(lb_breakdown_read(pred, 0, &bp, &nbp) == 0 && lb_breakdown_read(swp, 0, &bs, &nbs) == 0,
             "both breakdown.csv read back");
    lb_check(nbp == nbs && nbp > 6 * 10, "as many breakdown rows (%zu predicted, %zu measured)", nbp, nbs);
    size_t matched = 0;
    for (size_t i = 0; i < nbp; i++) {
        if (strcmp(bp[i].op, "overhead") == 0)
            continue;
        for (size_t j = 0; j < nbs; j++)
            if (bs[j].model == bp[i].model && bs[j].n == bp[i].n && bs[j].k == bp[i].k && strcmp(bs[j].op, bp[i].op) == 0) {
                matched++;
                lb_check(bs[j].calls == bp[i].calls && bs[j].flops == bp[i].flops && bs[j].bytes == bp[i].bytes,
                         "%s n=%lld k=%lld %s: predicted %lld calls, %.17g FLOPs, %.17g bytes; measured %lld, %.17g, %.17g",
                         lb_model_name(bp[i].model), (long long)bp[i].n, (long long)bp[i].k, bp[i].op,
                         (long long)bp[i].calls, bp[i].flops, bp[i].bytes, (long long)bs[j].calls, bs[j].flops,
                         bs[j].bytes);
            }
    }
    lb_check(matched + 6 == nbp, "every predicted row but overhead has its measured row (%zu of %zu)", matched, nbp);
    free(bp);
    free(bs);

    /* compare MEASURED PREDICTED: per cell, measured / predicted batch = 1 here */
    LbRun r = lb_run(LB_ARGV(bin, "compare", swp, pred, "--format", "csv"));
    /* the sweep ran on the CPU reference, the prediction is of a GPU: said, not refused */
    lb_check(lb_lines(r.err) == 1 && strstr(r.err, "linbench: note: devices differ: measured on CPU reference"),
             "compare CPU PREDICTED --format csv: one note that the devices differ: %s", r.err);
    fx_says(r, "compare CPU PREDICTED --format csv: a pass row per cell, batch ratio 1 where the batches agree",
            "^model,n,k,op,measured_batch,predicted_batch,batch_ratio,", "\nstandard,128,,pass,", "\nlinformer,256,64,pass,",
            ",1,");
    fx_says(lb_run(LB_ARGV(bin, "compare", pred, swp)), "compare PREDICTED MEASURED (either order)",
            "a sweep against its prediction", "largest batch", "devices differ: measured on CPU reference");

    /* A prediction of another model is not this sweep's: refused, the setting named, nothing on
     * stdout. */
    char wide[4200];
    snprintf(wide, sizeof wide, "%s/plan-wide", scratch);
    lb_run_ok(LB_ARGV(bin, "predict", "--layers", "2", "--d-model", "128", "--heads", "4", "--ffn", "128", "--vocab",
                      "1000", "--n", "128,256", "--k", "32,64", "--dtype", "fp32", "--spec",
                      "tflops=10,bw=500,mem=312M", "--out", wide), "predict of a wider model");
    lb_run_refused(LB_ARGV(bin, "compare", swp, wide), "not the same work", "d_model 64", "d_model 128");
}

/* Read back as a sweep: meta.csv says predicted; compare against the paper and plot label it. */
static void round_trip(void)
{
    char dir[4200], path[4300];
    snprintf(dir, sizeof dir, "%s/plan", scratch);
    snprintf(path, sizeof path, "%s/meta.csv", dir);
    LbMeta m;
    memset(&m, 0, sizeof m);
    lb_check(lb_meta_read(path, &m) == 0, "meta.csv reads back");
    lb_check(lb_meta_is_predicted(&m), "meta.csv's source is predicted");
    const char *name = lb_meta_get(&m, "device_name");
    lb_check(name && strstr(name, "predicted") && strstr(name, "not a measurement"), "device_name says so: %s",
             name ? name : "(none)");
    static const char *const keys[] = {"predict_product_tflop_per_s", "predict_bandwidth_gb_per_s", "predict_memory_bytes",
                                       "predict_product_efficiency", "predict_copy_efficiency", "predict_launch_us",
                                       "predict_sweep_seconds", "predict_wall_ms", "memory_budget_bytes"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        lb_check(lb_meta_get(&m, keys[i]) && *lb_meta_get(&m, keys[i]), "meta.csv records %s", keys[i]);
    lb_check(strcmp(lb_meta_get(&m, "predict_product_efficiency"), "0.66") == 0, "the default product efficiency");
    lb_meta_free(&m);

    fx_says(lb_run(LB_ARGV(bin, "compare", dir, "--format", "csv")), "compare PREDICTED: the paper beside a column named predicted",
            "^grid,n,k,predicted,paper,predicted_over_paper\n");
    fx_says(lb_run(LB_ARGV(bin, "compare", dir)), "compare's text says predicted", "  predicted: ", "predicted / paper");
    lb_run_ok(LB_ARGV(bin, "plot", dir), "plot PREDICTED");
    char *gp = lb_slurp_in(dir, "time_speedup.gp");
    lb_check(gp && strstr(gp, "Predicted, not measured"), "the plot's title says predicted");
    free(gp);
    /* a sweep never resumes a prediction */
    char *resume[] = {bin, "sweep", "--resume", dir, NULL};
    lb_run_refused(resume, "predict");
    /* predict into it again: refused, offering the flag predict has (--force), not --resume */
    LbRun r = lb_run(LB_ARGV(bin, "predict", "--gpu", "a10", "--out", dir));
    lb_check(r.code == 2 && lb_lines(r.err) == 1 && strstr(r.err, "--force") && !strstr(r.err, "--resume"),
             "predict into PREDICTED: exit 2, --force offered, no --resume (%d): %s", r.code, r.err);
    lb_run_free(&r);
}

/* The Linformer's flags a sweep takes, predict takes and its roofline honours: --k-schedule halve
 * (k, k/2, k/4 on the layers' thirds) predicts less time for the linformer cell than uniform, the
 * standard cell unchanged, and meta.csv records it; --projection mean predicts linformer-mean in
 * linformer's place. */
static void model_flags(void)
{
    static const char *const how[][2] = {{"--k-schedule", "uniform"}, {"--k-schedule", "halve"}, {"--projection", "mean"}};
    LbCellResult *rows[3] = {NULL, NULL, NULL};
    size_t count[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++) {
        char out[4200], dir[32];
        snprintf(dir, sizeof dir, "model-flags-%d", i);
        snprintf(out, sizeof out, "%s/%s", scratch, dir);
        lb_run_ok(LB_ARGV(bin, "predict", "--spec", "tflops=100,bw=1000,mem=16G", "--layers", "3", "--d-model", "64",
                          "--heads", "4", "--ffn", "128", "--vocab", "100", "--n", "1024", "--k", "256", "--max-batch",
                          "1", "-q", (char *)how[i][0], (char *)how[i][1], "--out", out), how[i][1]);
        rows[i] = read_rows(dir, &count[i]);
    }
    LbModelKind mean;
    const LbCellResult *su = sc_find(rows[0], count[0], LB_MODEL_STANDARD, 1024, 0),
                       *sh = sc_find(rows[1], count[1], LB_MODEL_STANDARD, 1024, 0),
                       *lu = sc_find(rows[0], count[0], LB_MODEL_LINFORMER, 1024, 256),
                       *lh = sc_find(rows[1], count[1], LB_MODEL_LINFORMER, 1024, 256);
    if (lb_check(su && sh && lu && lh, "uniform and halve: a standard and a linformer cell each")) {
        /* the plan's peak is the first layer's, whose k halve keeps (and layerwise sharing sizes
         * the one projection by it): no less memory, but less time */
        lb_check(lh->planned_bytes <= lu->planned_bytes && lh->median_ms < lu->median_ms,
                 "--k-schedule halve: linformer plans no more memory (%lld <= %lld) and predicts less time (%g < %g ms)",
                 (long long)lh->planned_bytes, (long long)lu->planned_bytes, lh->median_ms, lu->median_ms);
        lb_check(sh->planned_bytes == su->planned_bytes && sh->median_ms == su->median_ms,
                 "--k-schedule halve leaves standard as it was");
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/model-flags-1", scratch);
    sc_check_meta(path, "k_schedule", "halve", "--k-schedule halve");
    if (lb_check(lb_model_parse("linformer-mean", &mean) == 0, "the model table has linformer-mean"))
        lb_check(count[2] == 2 && sc_find(rows[2], count[2], mean, 1024, 256) &&
                     !sc_find(rows[2], count[2], LB_MODEL_LINFORMER, 1024, 256),
                 "--projection mean: linformer-mean predicted in linformer's place (%zu rows)", count[2]);
    for (int i = 0; i < 3; i++)
        free(rows[i]);
}

/* --pass train predicts the training step: meta.csv says so and the directory holds what a
 * forward prediction's does; per cell the step costs more than the pass and fits no larger a
 * batch (the backward's products on top of the forward's, every activation it needs kept); and
 * compare sets the two beside each other, train / forward per cell. */
static void training_step(void)
{
    static const char *const dirs[2] = {"pass-forward", "pass-train"};
    LbCellResult *rows[2];
    size_t count[2];
    char out[2][4200];
    for (int i = 0; i < 2; i++) {
        snprintf(out[i], sizeof out[i], "%s/%s", scratch, dirs[i]);
        lb_run_ok(LB_ARGV(bin, "predict", "--gpu", "h100-sxm", "--models", "standard,linformer,flash,performer", "--n",
                          "512,4096,16384", "--k", "128,256", "-q", "--pass", i ? "train" : "forward", "--out", out[i]),
                  dirs[i]);
        rows[i] = read_rows(dirs[i], &count[i]);
        sc_check_meta(out[i], "pass", i ? "train" : "forward", dirs[i]);
    }
    static const char *const files[] = {"raw.csv", "time_speedup.csv", "memory_speedup.csv", "speedups.csv",
                                        "breakdown.csv", "meta.csv"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++)
        lb_check(lb_exists_in(out[0], files[f]) && lb_exists_in(out[1], files[f]), "both predictions wrote %s", files[f]);
    lb_check(count[0] == count[1] && count[0] == 3 * (2 + 2 + 1 + 1), "as many cells (%zu, %zu)", count[0], count[1]);
    size_t fit = 0;
    for (size_t i = 0; i < count[1]; i++) {
        const LbCellResult *t = &rows[1][i], *f = sc_find(rows[0], count[0], t->model, t->n, t->k);
        const char *m = lb_model_name(t->model);
        if (!lb_check(f != NULL, "%s n=%lld k=%lld: in both", m, (long long)t->n, (long long)t->k))
            continue;
        lb_check(t->batch <= f->batch, "%s n=%lld k=%lld: the step's batch %lld, at most the forward's %lld", m,
                 (long long)t->n, (long long)t->k, (long long)t->batch, (long long)f->batch);
        if (t->status != LB_CELL_OK)
            continue;
        fit++;
        lb_check(f->status == LB_CELL_OK && t->ms_per_seq > f->ms_per_seq,
                 "%s n=%lld k=%lld: the step's %.4g ms per sequence, more than the forward's %.4g", m, (long long)t->n,
                 (long long)t->k, t->ms_per_seq, f->ms_per_seq);
        /* raw.csv's TFLOP/s counts the step's own FLOPs: the backward's products are about twice
         * the forward's */
        const double step_flops = t->tflop_per_s * t->ms_per_seq, pass_flops = f->tflop_per_s * f->ms_per_seq;
        lb_check(step_flops > 2 * pass_flops, "%s n=%lld k=%lld: the step's FLOPs per sequence %.4g, more than twice the forward's %.4g",
                 m, (long long)t->n, (long long)t->k, step_flops * 1e9, pass_flops * 1e9);
    }
    lb_check(fit >= count[1] / 2, "the step fits on the H100 in most cells (%zu of %zu)", fit, count[1]);

    const LbCellResult *f = sc_find(rows[0], count[0], LB_MODEL_LINFORMER, 4096, 128),
                       *t = sc_find(rows[1], count[1], LB_MODEL_LINFORMER, 4096, 128);
    char want[256] = "";
    if (lb_check(f && t, "linformer (4096, 128) in both predictions"))
        snprintf(want, sizeof want, "\nlinformer,4096,128,pass,%lld,%lld,", (long long)f->batch, (long long)t->batch);
    /* either order: forward is A; linformer (4096, 128): the forward's batch, then the step's */
    fx_says(lb_run(LB_ARGV(bin, "compare", out[1], out[0], "--format", "csv")), "compare TRAIN FORWARD --format csv",
            "^model,n,k,op,forward_batch,train_batch,batch_ratio,forward_ms_per_seq,train_ms_per_seq,time_ratio\n", want);
    fx_says(lb_run(LB_ARGV(bin, "compare", out[1])), "compare TRAIN: no paper, and the breakdown's shares are of the step",
            "no training table", "share of the training step", "!share of the pass");
    for (int i = 0; i < 2; i++)
        free(rows[i]);
}

/* A card with less memory than one sequence needs: OOM cells, as a sweep writes them. */
static void too_small(void)
{
    char out[4200];
    snprintf(out, sizeof out, "%s/small", scratch);
    lb_run_ok(LB_ARGV(bin, "predict", "--spec", "tflops=100,bw=1000,mem=300M", "--n", "16384", "--k", "128", "--out",
                      out), "predict on a small card");
    size_t count = 0;
    LbCellResult *rows = read_rows("small", &count);
    lb_check(count == 2, "two cells (%zu)", count);
    for (size_t i = 0; i < count; i++)
        lb_check(rows[i].status == LB_CELL_OOM && rows[i].batch == 0, "%s: OOM at batch 0", lb_model_name(rows[i].model));
    free(rows);
}

/* Bad input: exit 2, one line naming the flag, nothing on stdout, no directory. */
static void bad_input(void)
{
    static const struct {
        const char *a, *b, *c, *d, *want; /* c, d: NULL for --gpu h100-sxm */
    } cases[] = {
        {"--gpu", "v99", "--n", "512", "v100-16gb, v100-32gb, a100-40gb"},
        {"--spec", "tflops=10,bw=100", "--n", "512", "--spec"},
        {"--spec", "tflops=0,bw=100,mem=16G", "--n", "512", "--spec"},
        {"--spec", "tflops=10,bw=-1,mem=16G", "--n", "512", "--spec"},
        {"--spec", "tflops=10,bw=100,mem=0", "--n", "512", "--spec"},
        {"--spec", "tflops=10,tflops=10,bw=100,mem=16G", "--n", "512", "--spec"},
        {"--product-efficiency", "0", NULL, NULL, "--product-efficiency"},
        {"--copy-efficiency", "1.5", NULL, NULL, "--copy-efficiency"},
        {"--launch-us", "-1", NULL, NULL, "--launch-us"},
        {"--mem-limit", "100G", NULL, NULL, "for --mem-limit: should be at most"}, /* the H100 SXM has 80 GB */
        {"--n", "512", "--layers", "1", "h100-sxm"}, /* no card: the names listed */
        {"--gpu", "v100-16gb", "--dtype", "bf16", "bf16"}, /* the V100 has no bf16 rate */
    };
    char out[4200];
    snprintf(out, sizeof out, "%s/bad", scratch);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lb_run_refused(LB_ARGV(bin, "predict", (char *)cases[i].a, (char *)cases[i].b, "--out", out,
                               cases[i].c ? (char *)cases[i].c : "--gpu", cases[i].c ? (char *)cases[i].d : "h100-sxm"),
                       cases[i].want);
        lb_check(!lb_exists(out), "%s %s: nothing written", cases[i].a, cases[i].b);
    }
}

/* What sweep prints beside its calibration on a card of the table, and nothing on another card. */
static void card_limits_line(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    LbCalibration cal;
    memset(&cal, 0, sizeof cal);
    cal.tflop_per_s = 754.463;
    cal.copy_gb_per_s = 2906.66;
    lb_print_card_limits(f, "", "NVIDIA H100 80GB HBM3", LB_DTYPE_FP16, 0, &cal);
    lb_print_card_limits(f, "", "linbench emulated GPU (on the CPU; not a GPU measurement)", LB_DTYPE_FP16, 0, &cal);
    lb_print_card_limits(f, "", "Tesla V100-SXM2-16GB", LB_DTYPE_BF16, 0, NULL); /* no bf16 rate: nothing */
    fclose(f);
    /* 989.5 x 0.66 = 653.07; 3350 x 0.83 = 2780.5; 754.463 / 989.5 = 76%; 2906.66 / 3350 = 87% */
    static const char want[] = "predicted limit (linbench predict --gpu h100-sxm): 653.1 TFLOP/s (fp16 tensor 989.5 x 0.66), "
                               "2780 GB/s (3350 x 0.83); measured 754.5 TFLOP/s (76% of the datasheet), 2907 GB/s (87%)\n";
    lb_check(text && strcmp(text, want) == 0, "the card's limits, one line for the H100 only:\n%s", text ? text : "(none)");
    free(text);
}

int main(int argc, char **argv)
{
    bin = lb_cli_start(argc, argv, "test_cli_predict");
    scratch = lb_scratch;
    hand_worked_cell();
    same_batches_as_a_sweep();
    round_trip();
    model_flags();
    training_step();
    too_small();
    bad_input();
    card_limits_line();
    return lb_test_finish("test_cli_predict");
}
