/* linbench compare end to end, on directories made from rows (so this runs where PyTorch is
 * absent) and on one small CPU sweep: against the paper, the CSV checked cell by cell against the
 * rows and Table 3 (read from ../shared/paper when present, independently of reports/); two
 * sweeps, B / A over the union of their grids; the headers; a sweep of every model; a sweep
 * beside bench/peer's result (the peer's names, the CSV cell by cell in either order, what
 * differs, refusals, plot LIN PEER); a training step alone and beside its forward pass; bad
 * input: one line, exit 2; an unwritable stdout: exit 1.
 * Usage: test_cli_compare PATH-TO-LINBENCH [PAPER-DIR] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "fixture.h"
#include "reports/csv_io.h"
#include "reports/peer_dir.h"
#include "reports/speedups.h"
#include "tests/cli/sweep_check.h"

static char *bin;
static const char *scratch;

static LbRun run(char *a1, char *a2, char *a3, char *a4)
{
    return lb_run(LB_ARGV(bin, "compare", a1, a2, a3, a4));
}

/* --- the peer's names --------------------------------------------------------------------- */

static void check_names(void)
{
    char should[256];
    LbPeerModel m;
    static const struct {
        const char *name;
        LbModelKind work;
        int exact_baseline, compiled;
        const char *backend;
    } good[] = {{"torch-standard", LB_MODEL_STANDARD, 0, 0, ""},
                {"torch-linformer-compiled", LB_MODEL_LINFORMER, 0, 1, ""},
                {"torch-sdpa-math", LB_MODEL_STANDARD, 1, 0, "math"},
                {"torch-sdpa-flash-compiled", LB_MODEL_STANDARD, 1, 1, "flash"}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        lb_check(lb_peer_model_parse(good[i].name, &m, should, sizeof should) == 0 && m.work == good[i].work &&
                     !m.exact_baseline == !good[i].exact_baseline && !m.compiled == !good[i].compiled &&
                     strcmp(m.backend, good[i].backend) == 0,
                 "%s: the work of %s, exact baseline %d, compiled %d, backend \"%s\"", good[i].name,
                 lb_model_name(good[i].work), good[i].exact_baseline, good[i].compiled, good[i].backend);
    static const char *const bad[] = {"standard", "torch-", "torch-sdpa", "torch-sdpa-fast", "torch-standard-flash",
                                      "torch-standard-compiled-x", "torch-foo", "torch-sdpa-compiled",
                                      "pytorch-standard", "torch-standard-compiled-compiled"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        lb_check(lb_peer_model_parse(bad[i], &m, should, sizeof should) != 0 && strstr(should, "torch-NAME"),
              "%s is refused, saying what a name is (%s)", bad[i], should);
}

/* --- directories ---------------------------------------------------------------------------- */

typedef struct PeerRow {
    const char *model;
    int64_t n, k; /* k 0: none */
    int64_t batch;
    double ms_per_seq;
    const char *status; /* "ok", "OOM" or a message */
} PeerRow;

/* dir/raw.csv as bench/peer writes it (lbpeer/resultdir.py): linbench's columns before the energy
 * columns. */
static int write_peer_raw(const char *dir, const PeerRow *rows, size_t count)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/raw.csv", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "model,n,k,sharing,order,dtype,batch,planned_bytes,peak_bytes,median_ms,min_ms,max_ms,ms_per_seq,"
               "tokens_per_s,tflop_per_s,passes,sm_clock_start_mhz,sm_clock_end_mhz,clock_events,slowdown,device_uuid,"
               "host,status\n");
    for (size_t i = 0; i < count; i++) {
        const PeerRow *r = &rows[i];
        const int ok = strcmp(r->status, "ok") == 0;
        char k[64] = ",,", ms[40] = "", per_seq[40] = "";
        if (r->k)
            snprintf(k, sizeof k, "%lld,layerwise,early", (long long)r->k);
        if (ok) {
            lb_csv_format_double(r->ms_per_seq * (double)r->batch, ms, sizeof ms);
            lb_csv_format_double(r->ms_per_seq, per_seq, sizeof per_seq);
        }
        fprintf(f, "%s,%lld,%s,fp16,%lld,0,%d,%s,%s,%s,%s,%s,%s,%s,,,,0,,peerhost,%s\n", r->model, (long long)r->n, k,
                (long long)(ok ? r->batch : 0), ok ? 1 << 20 : 0, ms, ms, ms, per_seq, ok ? "1000" : "", ok ? "1" : "",
                ok ? "5" : "", r->status);
    }
    return fclose(f) == 0 ? 0 : -1;
}

/* scratch/NAME into dir (4200 bytes), the peer's directory: its rows, fixture's meta (the
 * linbench fixture's settings) made a peer's, then key set to value where key is given. */
static void make_peer(char *dir, const char *name, const PeerRow *rows, size_t count, const char *key, const char *value)
{
    static const char *const meta[][2] = {{"tool", "peer"}, {"models", "torch-standard,torch-linformer,torch-sdpa"},
                                          {"vocab", "50265"}, {"torch_version", "2.99.0"}, {"sdpa", "flash"},
                                          {"compile", "0"}, {"timer", "cuda_events"}};
    snprintf(dir, 4200, "%s/%s", scratch, name);
    lb_check(fx_sweep_dir(dir, NULL, 0, "256,512,1024", "128,256", "NVIDIA H100 80GB HBM3") == 0, "%s made", dir);
    lb_check(write_peer_raw(dir, rows, count) == 0, "%s/raw.csv written", dir);
    for (size_t i = 0; i < sizeof meta / sizeof meta[0]; i++)
        fx_set_meta(dir, meta[i][0], meta[i][1]);
    if (key)
        fx_set_meta(dir, key, value);
}

/* --- expectations, worked out from the rows ------------------------------------------------- */

/* One side's own value of a cell (q: 0 ms per sequence, 1 batch, 2 J per sequence, which neither
 * side has here: the fixture's rows none, the peer's raw.csv from before the columns), as
 * compare's CSV writes it: a number, or NA (no row, no energy), OOM, ERR. */
static ExCell own(const LbCellResult *r, int q)
{
    ExCell x = {0, 0.0, "NA"};
    if (r && r->status != LB_CELL_OK)
        snprintf(x.mark, sizeof x.mark, "%s", r->status == LB_CELL_OOM ? "OOM" : "ERR");
    else if (r && q < 2)
        x = (ExCell){1, q == 0 ? r->ms_per_seq : (double)r->batch, ""};
    return x;
}

static ExCell peer_side(const PeerRow *rows, size_t count, const char *model, int64_t n, int64_t k, int q)
{
    const PeerRow *f = NULL;
    for (size_t i = 0; i < count; i++)
        if (strcmp(rows[i].model, model) == 0 && rows[i].n == n && rows[i].k == k)
            f = &rows[i];
    const LbCellStatus status = !f || strcmp(f->status, "ok") == 0 ? LB_CELL_OK
                                : strcmp(f->status, "OOM") == 0  ? LB_CELL_OOM
                                                                 : LB_CELL_ERROR;
    const LbCellResult r = {.status = status, .batch = f ? f->batch : 0, .ms_per_seq = f ? f->ms_per_seq : 0};
    return own(f ? &r : NULL, q);
}

/* compare LIN PEER --format csv: every row against the rows, the set of pairs and cells; PEER LIN
 * prints the same bytes. */
static void check_csv(char *lin_dir, char *peer_dir, const LbCellResult *lin, size_t nlin, const PeerRow *peer,
                      size_t npeer, int linformer_pair, const char *what)
{
    LbRun r = run(lin_dir, peer_dir, "--format", "csv"), back = run(peer_dir, lin_dir, "--format", "csv");
    lb_check(r.code == 0 && back.code == 0 && strcmp(back.out, r.out) == 0,
             "%s: compare PEER LIN --format csv prints what LIN PEER prints (exit %d, %d): %s", what, r.code, back.code, r.err);
    LbCsvTable t;
    const int parsed = lb_csv_parse_text(r.out, strlen(r.out), 0, "compare's CSV", &t) == LB_OK && t.rows > 0;
    lb_run_free(&r);
    lb_run_free(&back);
    if (!lb_check(parsed, "%s: CSV parses", what))
        return;
    lb_check(t.row[0].count == 14 && strcmp(t.row[0].fields[0], "comparison") == 0 &&
              strcmp(t.row[0].fields[10], "linbench_over_peer_batch") == 0 &&
              strcmp(t.row[0].fields[13], "linbench_over_peer_energy") == 0,
          "%s: the header", what);
    int pairs[5] = {0, 0, 0, 0, 0}; /* std/torch-standard, lin/torch-linformer, std/sdpa, lin/sdpa baseline,
                                      * chunked/sdpa */
    for (size_t r = 1; r < t.rows; r++) {
        char **f = t.row[r].fields;
        if (!lb_check(t.row[r].count == 14, "%s: row %zu has 14 fields (%zu)", what, r, t.row[r].count))
            continue;
        LbModelKind m;
        lb_check(lb_model_parse(f[1], &m) == 0, "%s: a linbench model %s", what, f[1]);
        const int64_t n = atoll(f[3]), k = f[4][0] ? atoll(f[4]) : 0;
        const int baseline = strcmp(f[0], "baseline") == 0;
        lb_check(baseline || strcmp(f[0], "same_work") == 0, "%s: comparison %s", what, f[0]);
        const char *pm = f[2];
        const int sdpa = strcmp(pm, "torch-sdpa-flash") == 0;
        if (!baseline && m == LB_MODEL_STANDARD)
            pairs[sdpa ? 2 : 0]++;
        else if (!baseline && m == LB_MODEL_CHUNKED)
            pairs[4]++;
        else if (!baseline && m == LB_MODEL_LINFORMER)
            pairs[1]++;
        else if (baseline && m == LB_MODEL_LINFORMER)
            pairs[3]++;
        lb_check(!baseline || sdpa, "%s: only torch-sdpa is a baseline (%s)", what, pm);
        lb_check(baseline || (sdpa && lb_model_baseline(m) != 0) ||
                  (strncmp(pm, "torch-", 6) == 0 && strcmp(pm + 6, lb_model_name(m)) == 0),
              "%s: same work pairs %s with %s", what, f[1], pm);
        lb_check(k < n || !k, "%s: no cell with k >= n (%lld, %lld)", what, (long long)n, (long long)k);
        for (int q = 0; q < 3; q++) { /* linbench's, the peer's, linbench / peer */
            const ExCell x = own(ex_last(lin, nlin, m, n, k), q);
            const ExCell y = peer_side(peer, npeer, pm, n, lb_model_has_k(m) && !sdpa ? k : 0, q);
            const ExCell want[3] = {x, y, ex_ratio(x, y)};
            for (int s = 0; s < 3; s++) {
                char label[160];
                snprintf(label, sizeof label, "%s: %s/%s n=%lld k=%lld column %s", what, f[1], pm, (long long)n,
                         (long long)k, t.row[0].fields[5 + 3 * q + s]);
                ex_field(f[5 + 3 * q + s], want[s], label);
            }
        }
    }
    /* Every cell: 3 n for each model without k; linformer (256,128), (512,128), (512,256), (1024,128),
     * (1024,256). chunked, exact attention too, is the same work as torch-sdpa-flash (never
     * torch-standard's, a model of its own). */
    static const char *const pair_name[5] = {"standard against torch-standard", "linformer against torch-linformer",
                                             "standard against torch-sdpa-flash", "linformer against torch-sdpa-flash",
                                             "chunked against torch-sdpa-flash, the same work,"};
    const int want[5] = {3, linformer_pair ? 5 : 0, 3, 5, 3};
    for (int i = 0; i < 5; i++)
        lb_check(pairs[i] == want[i], "%s: %s at every cell: %d rows, should be %d", what, pair_name[i], pairs[i], want[i]);
    lb_csv_table_free(&t);
}

/* A sweep of every model: compare keeps Table 3 and adds each other pair (speedups.csv's), for one
 * sweep and for two; with only the paper's two models nothing is added. */
static void check_models(void)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/models", scratch);
    LbCellResult rows[FX_ALL_MAX];
    fx_all_models_dir(dir, rows);
    int all[LB_MODEL_COUNT];
    for (int m = 0; m < LB_MODEL_COUNT; m++)
        all[m] = 1;
    LbSpeedupPair pairs[LB_SPEEDUP_PAIRS_MAX];
    size_t np = lb_speedup_pairs(all, pairs);

    /* One sweep: Table 3 and every other pair under its heading; two: B / A for every pair. */
    LbRun one = run(dir, NULL, NULL, NULL), two = run(dir, dir, NULL, NULL);
    lb_check(one.code == 0 && two.code == 0, "compare DIR, DIR DIR: exit %d, %d: %s%s", one.code, two.code, one.err, two.err);
    lb_check(strstr(one.out, "Time saved (ms per sequence, standard / Linformer)") != NULL, "compare keeps Table 3:\n%s", one.out);
    int others = 0;
    for (size_t p = 0; p < np; p++) {
        const int table3 = pairs[p].model == LB_MODEL_LINFORMER && pairs[p].baseline == LB_MODEL_STANDARD;
        const char *m = lb_model_name(pairs[p].model), *b = lb_model_name(pairs[p].baseline);
        char against[128], saved[160];
        snprintf(against, sizeof against, "%s against %s", m, b);
        snprintf(saved, sizeof saved, "Time saved (ms per sequence, %s / %s)", b, table3 ? "Linformer" : m);
        others += !table3;
        lb_check(table3 || strstr(one.out, against) != NULL, "compare shows \"%s\":\n%s", against, one.out);
        lb_check(strstr(two.out, saved) != NULL, "compare A B shows \"%s\"", saved);
    }
    lb_check((strstr(one.out, "Every other model") != NULL) == (others > 0), "the other models' section %s:\n%s",
             others ? "shown" : "absent with only the paper's two", one.out);
    lb_run_free(&one);
    lb_run_free(&two);
}

/* Beside bench/peer's result: the CSV cell by cell in either order, the text and Markdown reports,
 * what differs said, a pair of other sharing refused, other work refused, plot LIN PEER. */
static void check_peer(void)
{
    check_names();

    LbCellResult lin[] = {
        FX_STD(256, 90, 0.5),
        FX_STD(512, 40, 2.0),
        fx_row(LB_MODEL_STANDARD, 1024, 0, 0, 0, LB_CELL_OOM),
        FX_LIN(256, 128, 120, 0.4),
        FX_LIN(512, 128, 68, 4.0 / 3.0),
        FX_LIN(512, 256, 60, 1.6),
        FX_LIN(1024, 128, 30, 4.0),
        fx_row(LB_MODEL_LINFORMER, 1024, 256, 0, 0, LB_CELL_ERROR),
        fx_row(LB_MODEL_CHUNKED, 256, 0, 95, 0.52, LB_CELL_OK),
        fx_row(LB_MODEL_CHUNKED, 512, 0, 50, 2.1, LB_CELL_OK),
    };
    const size_t nlin = sizeof lin / sizeof lin[0];
    static const PeerRow peer[] = {
        {"torch-standard", 256, 0, 80, 0.55, "ok"},
        {"torch-linformer", 256, 128, 100, 0.5, "ok"},
        {"torch-sdpa-flash", 256, 0, 200, 0.25, "ok"},
        {"torch-standard", 512, 0, 30, 2.5, "ok"},
        {"torch-linformer", 512, 128, 60, 1.0, "ok"},
        {"torch-linformer", 512, 256, 0, 0, "CUDA error: an illegal memory access"},
        {"torch-sdpa-flash", 512, 0, 100, 1.0, "ok"},
        {"torch-standard", 1024, 0, 0, 0, "OOM"},
        {"torch-linformer", 1024, 256, 20, 3.0, "ok"},
        {"torch-sdpa-flash", 1024, 0, 25, 4.0, "ok"},
    };
    const size_t npeer = sizeof peer / sizeof peer[0];
    char lin_dir[4200], peer_dir[4200], other[4200];
    snprintf(lin_dir, sizeof lin_dir, "%s/lin", scratch);
    lb_check(fx_sweep_dir(lin_dir, lin, nlin, "256,512,1024", "128,256", "NVIDIA H100 80GB HBM3") == 0, "linbench's made");
    fx_set_meta(lin_dir, "vocab", "50265");
    make_peer(peer_dir, "peer", peer, npeer, NULL, NULL);

    check_csv(lin_dir, peer_dir, lin, nlin, peer, npeer, 1, "LIN PEER");

    /* Text: what ran, each pair, the section against the baseline, the legend; linformer 512/128:
     * linbench 1.33 ms, the peer 1.00; standard 256: 0.5 / 0.55 = 0.909. */
    fx_says_quiet(run(lin_dir, peer_dir, NULL, NULL), "compare LIN PEER",
                  "linbench compare: linbench against PyTorch (bench/peer), cell by cell",
                  "PyTorch 2.99.0, eager, SDPA flash, timer cuda_events",
                  "same: device, dtype, model shape, sharing, order and memory budget",
                  "batch: each side its own largest within its memory budget", "standard against torch-standard\nms per sequence",
                  "linformer against torch-linformer (k: projected length)", "standard against torch-sdpa-flash\nms per sequence",
                  "chunked against torch-sdpa-flash\nms per sequence", "Against the peer's exact attention",
                  "linformer against torch-sdpa-flash (k: projected length)", "NA: not measured on that side",
                  "peer energy: none (written before energy was measured)", "1.33", "0.909");
    fx_says(run(lin_dir, peer_dir, "--format", "md"), "the Markdown report: headings and tables",
            "## linbench compare: linbench against PyTorch", "### linformer against torch-linformer", "| n \\ k |");

    /* What differs is said: the GPU, the dtype asked, the budget. */
    make_peer(other, "peer-a100", peer, npeer, "device_name", "NVIDIA A100-SXM4-80GB");
    fx_set_meta(other, "memory_budget_bytes", "1073741824");
    fx_says(run(lin_dir, other, NULL, NULL), "the header names the devices and budgets that differ",
            "differ (linbench / peer): device_name NVIDIA H100 80GB HBM3 / NVIDIA A100-SXM4-80GB; memory budget 16 GiB / 1 GiB");

    /* Another sharing: the Linformer pair is refused, the rest compared. */
    make_peer(other, "peer-kv", peer, npeer, "sharing", "kv");
    fx_says(run(lin_dir, other, NULL, NULL), "another sharing: the pair refused in one line, the difference said",
            "linformer against torch-linformer: not compared: linbench ran --sharing layerwise, the peer kv: not the same work",
            "differ (linbench / peer): sharing layerwise / kv");
    check_csv(lin_dir, other, lin, nlin, peer, npeer, 0, "another sharing");

    /* Not the same work at all, or not a peer's result: one line, exit 2. */
    make_peer(other, "peer-wide", peer, npeer, "d_model", "1024");
    lb_check_refusal(run(lin_dir, other, NULL, NULL), "a peer of another d_model", "not the same work");
    lb_check_refusal(run(other, lin_dir, "--format", "csv"), "a peer of another d_model, first", "d_model 768");
    make_peer(other, "peer-fp32", peer, npeer, "storage_dtype", "fp32");
    lb_check_refusal(run(lin_dir, other, NULL, NULL), "a peer of another storage type", "stored fp16");
    static const PeerRow odd[] = {{"torch-sdpa-turbo", 256, 0, 10, 1.0, "ok"}};
    make_peer(other, "peer-name", odd, 1, NULL, NULL);
    lb_check_refusal(run(lin_dir, other, NULL, NULL), "an unknown peer model", "torch-sdpa-turbo");
    lb_check_refusal(run(peer_dir, NULL, NULL, NULL), "a peer's result alone", "result of bench/peer");
    lb_check_refusal(run(peer_dir, peer_dir, NULL, NULL), "two peers", "both directories are results of bench/peer");

    /* plot LIN PEER: the three figures, their data the rows' values. */
    char plots[4200];
    snprintf(plots, sizeof plots, "%s/plots", scratch);
    fx_says(lb_run(LB_ARGV(bin, "plot", peer_dir, lin_dir, "--out", plots, "--no-render")),
            "plot PEER LIN: the scripts named", "versus_time_per_seq.gp", "versus_batch_ratio.gp");
    char path[4400];
    snprintf(path, sizeof path, "%s/versus_time_ratio.plot.csv", plots);
    LbCsvTable t;
    if (lb_check(lb_csv_read_file(path, 0, &t) == LB_OK && t.rows == 4, "versus_time_ratio.plot.csv: header and 3 n")) {
        int col = -1, sdpa = -1, chunked = 0;
        for (size_t c = 0; c < t.row[0].count; c++) {
            if (strcmp(t.row[0].fields[c], "linformer k=128 / torch-linformer k=128") == 0)
                col = (int)c;
            if (strcmp(t.row[0].fields[c], "standard / torch-sdpa-flash") == 0)
                sdpa = (int)c;
            chunked += strcmp(t.row[0].fields[c], "chunked / torch-sdpa-flash") == 0;
        }
        lb_check(chunked == 1, "a line for chunked against torch-sdpa-flash, exact attention both");
        lb_check(col > 0 && sdpa > 0, "its columns name both sides of each pair");
        if (col > 0 && sdpa > 0) {
            lb_check(fabs(atof(t.row[2].fields[col]) - (4.0 / 3.0) / 1.0) < 1e-5, "linformer k=128 at n=512: 1.33333 (%s)",
                  t.row[2].fields[col]);
            lb_check(t.row[3].fields[col][0] == '\0', "n=1024 k=128: no peer row, no point");
            lb_check(fabs(atof(t.row[1].fields[sdpa]) - 2.0) < 1e-6, "standard / sdpa at n=256: 0.5 / 0.25 = 2 (%s)",
                  t.row[1].fields[sdpa]);
        }
        lb_csv_table_free(&t);
    }
    char *gp = lb_slurp_in(plots, "versus_time_per_seq.gp");
    lb_check(gp && strstr(gp, "title 'torch-sdpa-flash'") && strstr(gp, "title 'linformer k=256'") &&
              strstr(gp, "title 'torch-linformer k=128'"),
          "versus_time_per_seq.gp: a line per model and k of each side");
    free(gp);
    lb_check_refusal(lb_run(LB_ARGV(bin, "plot", peer_dir, "--no-render")), "plot of a peer's result alone",
                     "result of bench/peer");
    lb_check_refusal(lb_run(LB_ARGV(bin, "plot", lin_dir, lin_dir, "--no-render")), "plot of two sweeps",
                     "a second directory should be a result of bench/peer");

}

/* --- the training step ------------------------------------------------------------------- */

/* A training directory alone: Table 3's layout says in one line that the paper has no training
 * table and shows the step's own speedups without paper nor ratio columns. Beside a forward
 * directory of the same sweep otherwise (either order): per cell both batches and ms per
 * sequence and train / forward. Anything else differing: refused in one line. */
static void check_passes(void)
{
    LbCellResult fwd[] = {FX_STD(512, 40, 2.0), FX_LIN(512, 128, 80, 1.0), FX_STD(1024, 10, 8.0),
                          FX_LIN(1024, 128, 40, 2.0)};
    LbCellResult train[] = {FX_STD(512, 10, 6.0), FX_LIN(512, 128, 32, 2.5),
                            fx_row(LB_MODEL_STANDARD, 1024, 0, 0, 0, LB_CELL_OOM), FX_LIN(1024, 128, 8, 7.0)};
    char dir_f[4200], dir_t[4200], other[4200];
    snprintf(dir_f, sizeof dir_f, "%s/pass-forward", scratch);
    snprintf(dir_t, sizeof dir_t, "%s/pass-train", scratch);
    snprintf(other, sizeof other, "%s/pass-train-wide", scratch);
    lb_check(fx_sweep_dir(dir_f, fwd, 4, "512,1024", "128", "NVIDIA H100 80GB HBM3") == 0 &&
                 fx_sweep_dir(dir_t, train, 4, "512,1024", "128", "NVIDIA H100 80GB HBM3") == 0 &&
                 fx_sweep_dir(other, train, 4, "512,1024", "128", "NVIDIA H100 80GB HBM3") == 0,
             "made a forward and two training directories");
    fx_set_meta(dir_t, "pass", "train");
    fx_set_meta(other, "pass", "train");

    fx_says(run(dir_t, "--format", "csv", NULL), "compare TRAIN --format csv: A's column alone, the step's own speedups",
            "^grid,n,k,measured\n", "\ntime,512,128,2.4\n", "\nmemory,512,128,3.2\n", "!paper");
    LbRun r = run(dir_t, NULL, NULL, NULL);
    const char *once = strstr(r.out, "the paper has no training table");
    lb_check(once && !strstr(once + 31, "no training table"), "compare TRAIN: one line says the paper has no training table");
    fx_says(r, "compare TRAIN: no paper column", "!measured / paper", "!" LB_PAPER_DEVICE, "training step, fp16", "2.40x");

    for (int order = 0; order < 2; order++)
        fx_says_quiet(run(order ? dir_t : dir_f, order ? dir_f : dir_t, "--format", "csv"),
                      order ? "compare TRAIN FORWARD --format csv" : "compare FORWARD TRAIN --format csv",
                      "^model,n,k,op,forward_batch,train_batch,batch_ratio,forward_ms_per_seq,train_ms_per_seq,time_ratio\n",
                      "\nstandard,512,,pass,40,10,0.25,2,6,3\n", "\nlinformer,1024,128,pass,40,8,0.2,2,7,3.5\n",
                      "\nstandard,1024,,pass,10,,,8,,\n");
    fx_says(run(dir_t, dir_f, NULL, NULL), "compare TRAIN FORWARD: the text table", "a training step against the forward pass",
            "train / forward", "linformer 1024/128", " OOM");

    fx_set_meta(other, "d_model", "1024");
    lb_check_refusal(run(dir_f, other, NULL, NULL), "a training directory of another model", "not the same sweep but for the pass",
                     "d_model 768", "d_model 1024");
    fx_set_meta(other, "d_model", "768");
    fx_set_meta(other, "n_list", "512,1024,2048");
    lb_check_refusal(run(other, dir_f, NULL, NULL), "a training directory of another grid", "not the same sweep but for the pass",
                     "n_list 512,1024,2048");
    fx_set_meta(other, "n_list", "512,1024");
    fx_set_meta(other, "device_name", "NVIDIA A100-SXM4-80GB");
    lb_check_refusal(run(dir_f, other, NULL, NULL), "a training directory of another device", "device_name",
                     "NVIDIA A100-SXM4-80GB");
}

/* compare on a sweep the engine wrote (not a fixture): its rows against the paper cell by cell, the
 * header read from a real meta.csv, and DIR against itself at ratio 1. */
static void check_real_sweep(const ExPaper *paper)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/sweep", scratch);
    lb_run_ok(LB_ARGV(bin, "sweep", "--device", "cpu", "--layers", "2", "--d-model", "64", "--heads", "4", "--ffn",
                      "128", "--vocab", "1000", "--n", "512:1024", "--k", "128:256", "--mem-limit", "64M",
                      "--cell-time", "1", "--out", dir, "--quiet"), "sweep");
    LbCellResult *rows = NULL;
    size_t count = 0;
    if (!lb_check(sc_read_rows(dir, &rows, &count) == 0 && count == 2 + 4,
                  "raw.csv reads back with 6 rows (2 standard, 4 Linformer), got %zu", count))
        return;
    const ExSide rs = {rows, count, NULL}, against[2] = {{NULL, 0, paper}, rs};
    for (int two = 0; two < 2; two++) { /* the paper, then DIR against itself: 4 cells with k < n, twice */
        LbRun r = run(dir, two ? dir : "--format", two ? "--format" : "csv", two ? "csv" : NULL);
        lb_check(ex_check_compare_csv(r.out, &rs, &against[two]) == 2 * 4, "compare %s: 8 cells", two ? "DIR DIR" : "DIR");
        fx_says(r, "compare --format csv");
    }
    fx_says(run(dir, NULL, NULL, NULL), "compare text header from a real meta.csv", "(cpu)",
            "2 layers, d_model 64, 4 heads, ffn 128", "memory budget 64 MiB (--mem-limit)");
    free(rows);
}

int main(int argc, char **argv)
{
    bin = lb_cli_start(argc, argv, "test_cli_compare");
    scratch = lb_scratch;
    ExPaper paper;
    ex_paper_load(&paper, argc > 2 ? argv[2] : NULL);

    /* Sweep A: values, OOM on either side, an error, a cell never measured, an n the paper does
     * not have (256), an n with no rows (4096), and a cell measured twice (the last wins). */
    LbCellResult a_rows[] = {
        FX_STD(256, 90, 0.5),
        FX_LIN(256, 128, 120, 0.4),
        FX_LIN(512, 128, 10, 9.0),
        FX_STD(512, 40, 2.0),
        FX_LIN(512, 128, 68, 2.0 / 1.5),
        FX_LIN(512, 256, 60, 1.6),
        FX_STD(1024, 10, 8.0),
        FX_LIN(1024, 128, 30, 4.0),
        fx_row(LB_MODEL_LINFORMER, 1024, 256, 0, 0, LB_CELL_OOM),
        fx_row(LB_MODEL_LINFORMER, 1024, 512, 0, 0, LB_CELL_ERROR),
        fx_row(LB_MODEL_STANDARD, 2048, 0, 0, 0, LB_CELL_OOM),
        FX_LIN(2048, 128, 5, 3.0),
    };
    size_t a_count = sizeof a_rows / sizeof a_rows[0];
    char dir_a[4200], dir_b[4200];
    snprintf(dir_a, sizeof dir_a, "%s/a", scratch);
    snprintf(dir_b, sizeof dir_b, "%s/b", scratch);
    lb_check(fx_sweep_dir(dir_a, a_rows, a_count, "256,512,1024,2048,4096", "128,256,512",
                          "Tesla V100-SXM2-16GB") == 0,
             "made sweep A");

    /* Against the paper, CSV: every cell with k < n of A's grid (5 n x 3 k less the k >= n ones,
     * twice). */
    LbRun r = run(dir_a, "--format", "csv", NULL);
    const ExSide ra = {a_rows, a_count, NULL}, against_paper = {NULL, 0, &paper};
    size_t cells = ex_check_compare_csv(r.out, &ra, &against_paper);
    lb_check(cells == 2 * (1 + 2 + 3 + 3 + 3), "compare A: %zu cells: should be 24", cells);
    /* Spot checks of the rules themselves, readable on their own: 1.5 measured and in the paper;
     * batch 68 / 40 = 1.7 against 1.7; standard OOM beside the paper's 2.6; n=256 is not in the
     * paper; a cell not measured yet. */
    fx_says(r, "compare A --format csv", "time,512,128,1.5,1.5,1\n", "memory,512,128,1.7,1.7,1\n",
            "time,2048,128,OOM,2.6,OOM\n", "time,256,128,1.25,NA,NA\n", "time,4096,512,NA,2.8,NA\n");

    /* Text: the header says what ran, and that the budget came from --mem-limit; the cells:
     * measured 1.50x, paper 1.5x, OOM, ERR. */
    fx_says(run(dir_a, NULL, NULL, NULL), "compare A: text header, titles and cells", "Tesla V100-SXM2-16GB", "fp16",
            "12 layers, d_model 768, 12 heads, ffn 3072", "layerwise sharing, early order",
            "memory budget 16 GiB (--mem-limit)", "16 GB Tesla V100", "measured / paper", "1.50x", "1.5x", " OOM", " ERR");
    fx_says(run("--format", "md", dir_a, NULL), "markdown", "| n \\ k | 128 | 256 | 512 |", "**measured / paper**",
            "| 512 | 1.50x | 1.25x | - |");

    /* Two sweeps: B has a different (512, 128), no n=256, and an n=8192 A lacks. */
    LbCellResult b_rows[] = {
        FX_STD(512, 40, 2.0),
        FX_LIN(512, 128, 34, 2.0 / 0.75),
        FX_LIN(512, 256, 60, 1.6),
        FX_STD(1024, 10, 8.0),
        FX_LIN(1024, 128, 30, 4.0),
        FX_LIN(1024, 256, 20, 5.0),
        FX_STD(8192, 1, 100.0),
        FX_LIN(8192, 128, 16, 20.0),
    };
    size_t b_count = sizeof b_rows / sizeof b_rows[0];
    lb_check(fx_sweep_dir(dir_b, b_rows, b_count, "512,1024,8192", "128,256", "NVIDIA H100 80GB HBM3") == 0,
             "made sweep B");
    r = run(dir_a, dir_b, "--format", "csv");
    const ExSide rb = {b_rows, b_count, NULL};
    cells = ex_check_compare_csv(r.out, &ra, &rb);
    /* union: n 256..8192 (6), k 128..512 (3): cells with k < n = 1 + 2 + 3 * 4 = 15, twice */
    lb_check(cells == 30, "compare A B: %zu cells: should be 30", cells);
    /* A ran on a V100, B on an H100: B / A measures the devices too, and a note says so */
    lb_check(lb_lines(r.err) == 1 && strstr(r.err, "linbench: note: devices differ") &&
                 strstr(r.err, "Tesla V100-SXM2-16GB") && strstr(r.err, "NVIDIA H100 80GB HBM3"),
             "compare A B csv: one note on stderr that the devices differ: %s", r.err);
    /* B / A at (512, 128) is 0.5; n=8192 only in B: NA in A and in the ratio */
    fx_says(r, "compare A B --format csv", "time,512,128,1.5,0.75,0.5\n", "time,8192,128,NA,5,NA\n");
    fx_says(run(dir_a, dir_b, NULL, NULL), "compare A B text", "A: ", "B: ", "NVIDIA H100 80GB HBM3", "B / A",
            "devices differ: A ran on Tesla V100-SXM2-16GB, B on NVIDIA H100 80GB HBM3");
    fx_says_quiet(run(dir_a, dir_a, NULL, NULL), "compare A A: no word of devices differing", "!devices differ");

    /* Bad input: one line, exit 2, nothing on stdout. */
    lb_check_refusal(run(dir_a, "--format", "x", NULL), "--format x", "invalid argument \"x\" for --format: should be text, md or csv");
    lb_check_refusal(run(NULL, NULL, NULL, NULL), "no directory", "compare needs a sweep directory");
    lb_check_refusal(run(dir_a, dir_b, dir_a, NULL), "three directories", "unexpected argument");
    static const struct {
        const char *dir, *says;
    } bad[] = {{"empty", "no raw.csv in it"}, {"nometa", "no meta.csv in it"},
               {"does-not-exist", "No such file or directory"}, {"badraw", "invalid n \"twelve\""}};
    char path[4300];
    snprintf(path, sizeof path, "%s/empty", scratch);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/nometa", scratch);
    fx_sweep_dir(path, a_rows, 2, "256", "128", "x");
    remove(strcat(path, "/meta.csv"));
    snprintf(path, sizeof path, "%s/badraw", scratch);
    fx_sweep_dir(path, a_rows, 2, "256", "128", "x");
    fx_write(strcat(path, "/raw.csv"), "a", "standard,twelve,,,,fp16,1,1,1,1,1,1,1,1,1,5,,,,0,,,,,ok\n");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", scratch, bad[i].dir);
        lb_check_refusal(run(path, NULL, NULL, NULL), bad[i].dir, bad[i].says);
    }

    fx_says(run("--help", NULL, NULL, NULL), "--help lists every flag with its default", "--format", "(default text)", "--help");

    /* stdout that cannot be written: exit 1 and say so. */
    lb_child_stdout = "/dev/full";
    r = run(dir_a, NULL, NULL, NULL);
    lb_child_stdout = NULL;
    lb_check(r.code == 1 && lb_lines(r.err) == 1 && strstr(r.err, "cannot write"),
             "stdout on /dev/full: exit %d: should be 1 with one line: %s", r.code, r.err);
    lb_run_free(&r);

    check_models();
    check_passes();
    check_real_sweep(&paper);
    check_peer();
    lb_test_cleanup(scratch);
    return lb_test_finish("test_cli_compare");
}
