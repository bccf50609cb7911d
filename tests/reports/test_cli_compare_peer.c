/* linbench compare and plot of a linbench sweep beside bench/peer's result, on directories made
 * by hand (so this part is tested where PyTorch is absent): the peer's model names parsed
 * (reports/peer_dir.h); `compare --format csv` checked cell by cell against the rows, worked out
 * here (linbench / peer per cell of every pair of the same work, and every linbench model
 * against torch-sdpa-*), in either order of the directories; the text and Markdown reports'
 * pairs, header and the line on what differs; a pair of other sharing refused with one line; a
 * peer of another model shape or storage type, an unknown peer model, a peer's result alone or
 * two of them refused (one line, exit 2); `plot LIN PEER` writing the versus_* figures with the
 * rows' values.
 * Usage: test_cli_compare_peer PATH-TO-LINBENCH */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "reports/csv_io.h"
#include "reports/peer_dir.h"
#include "tests/lib/check.h"
#include "tests/lib/spawn.h"

static char *bin;
static const char *scratch;

/* --- the peer's names --------------------------------------------------------------------- */

static void check_names(void)
{
    char should[256];
    LbPeerModel m;
    lb_check(lb_peer_model_parse("torch-standard", &m, should, sizeof should) == 0 && m.work == LB_MODEL_STANDARD &&
              !m.exact_baseline && !m.compiled && !m.backend[0],
          "torch-standard: the standard model's work, no baseline, eager");
    lb_check(lb_peer_model_parse("torch-linformer-compiled", &m, should, sizeof should) == 0 &&
              m.work == LB_MODEL_LINFORMER && m.compiled && !m.exact_baseline,
          "torch-linformer-compiled: Linformer's work, compiled");
    lb_check(lb_peer_model_parse("torch-sdpa-math", &m, should, sizeof should) == 0 && m.work == LB_MODEL_STANDARD &&
              m.exact_baseline && strcmp(m.backend, "math") == 0 && !m.compiled,
          "torch-sdpa-math: exact attention, the standard model's work, backend math");
    lb_check(lb_peer_model_parse("torch-sdpa-flash-compiled", &m, should, sizeof should) == 0 && m.compiled &&
              strcmp(m.backend, "flash") == 0,
          "torch-sdpa-flash-compiled");
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

/* raw.csv's columns before the energy columns: the layout bench/peer writes (lbpeer/resultdir.py). */
#define PEER_COLUMNS 23
static const char *const peer_columns[PEER_COLUMNS] = {
    "model", "n", "k", "sharing", "order", "dtype", "batch", "planned_bytes", "peak_bytes", "median_ms",
    "min_ms", "max_ms", "ms_per_seq", "tokens_per_s", "tflop_per_s", "passes", "sm_clock_start_mhz",
    "sm_clock_end_mhz", "clock_events", "slowdown", "device_uuid", "host", "status",
};

/* dir/raw.csv in linbench's 23 columns as bench/peer writes them, through libcsv. */
static int write_peer_raw(const char *dir, const PeerRow *rows, size_t count)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/raw.csv", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int rc = lb_csv_write_record(f, peer_columns, PEER_COLUMNS);
    for (size_t i = 0; rc == LB_OK && i < count; i++) {
        const PeerRow *r = &rows[i];
        const int ok = strcmp(r->status, "ok") == 0;
        char v[PEER_COLUMNS][64];
        const char *fs[PEER_COLUMNS];
        for (int c = 0; c < PEER_COLUMNS; c++) {
            v[c][0] = '\0';
            fs[c] = v[c];
        }
        snprintf(v[0], 64, "%s", r->model);
        snprintf(v[1], 64, "%lld", (long long)r->n);
        if (r->k) {
            snprintf(v[2], 64, "%lld", (long long)r->k);
            snprintf(v[3], 64, "layerwise");
            snprintf(v[4], 64, "early");
        }
        snprintf(v[5], 64, "fp16");
        snprintf(v[6], 64, "%lld", (long long)(ok ? r->batch : 0));
        snprintf(v[7], 64, "0");
        snprintf(v[8], 64, "%d", ok ? 1 << 20 : 0);
        if (ok) {
            lb_csv_format_double(r->ms_per_seq * (double)r->batch, v[9], 64);
            lb_csv_format_double(r->ms_per_seq * (double)r->batch, v[10], 64);
            lb_csv_format_double(r->ms_per_seq * (double)r->batch, v[11], 64);
            lb_csv_format_double(r->ms_per_seq, v[12], 64);
            snprintf(v[13], 64, "1000");
            snprintf(v[14], 64, "1");
            snprintf(v[15], 64, "5");
        }
        snprintf(v[19], 64, "0");
        snprintf(v[21], 64, "peerhost");
        snprintf(v[22], 64, "%s", r->status);
        rc = lb_csv_write_record(f, fs, PEER_COLUMNS);
    }
    return fclose(f) == 0 && rc == LB_OK ? 0 : -1;
}

/* Read dir/meta.csv, set key to value (NULL: leave it), write it back. */
static void set_meta(const char *dir, const char *key, const char *value)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/meta.csv", dir);
    LbMeta m;
    memset(&m, 0, sizeof m);
    lb_check(lb_meta_read(path, &m) == LB_OK, "%s reads", path);
    lb_meta_set(&m, key, "%s", value);
    lb_check(lb_meta_write(path, &m) == LB_OK, "%s writes", path);
    lb_meta_free(&m);
}

/* The peer's directory: its rows, fixture's meta (the linbench fixture's settings) made a peer's. */
static void make_peer(const char *dir, const PeerRow *rows, size_t count)
{
    lb_check(fx_sweep_dir(dir, NULL, 0, "256,512,1024", "128,256", "NVIDIA H100 80GB HBM3") == 0, "%s made", dir);
    lb_check(write_peer_raw(dir, rows, count) == 0, "%s/raw.csv written", dir);
    set_meta(dir, "tool", "peer");
    set_meta(dir, "models", "torch-standard,torch-linformer,torch-sdpa");
    set_meta(dir, "vocab", "50265");
    set_meta(dir, "torch_version", "2.99.0");
    set_meta(dir, "sdpa", "flash");
    set_meta(dir, "compile", "0");
    set_meta(dir, "timer", "cuda_events");
}

/* --- expectations, worked out from the rows ------------------------------------------------- */

typedef struct Side {
    int kind; /* 0 missing, 1 ok, 2 OOM, 3 ERR */
    double ms;
    int64_t batch;
} Side;

static Side lin_side(const LbCellResult *rows, size_t count, LbModelKind m, int64_t n, int64_t k)
{
    Side s = {0, 0, 0};
    for (size_t i = 0; i < count; i++)
        if (rows[i].model == m && rows[i].n == n && (m == LB_MODEL_STANDARD || rows[i].k == k)) {
            s.kind = rows[i].status == LB_CELL_OK ? 1 : rows[i].status == LB_CELL_OOM ? 2 : 3;
            s.ms = rows[i].ms_per_seq;
            s.batch = rows[i].batch;
        }
    return s;
}

static Side peer_side(const PeerRow *rows, size_t count, const char *model, int64_t n, int64_t k)
{
    Side s = {0, 0, 0};
    for (size_t i = 0; i < count; i++)
        if (strcmp(rows[i].model, model) == 0 && rows[i].n == n && rows[i].k == k) {
            s.kind = strcmp(rows[i].status, "ok") == 0 ? 1 : strcmp(rows[i].status, "OOM") == 0 ? 2 : 3;
            s.ms = rows[i].ms_per_seq;
            s.batch = rows[i].batch;
        }
    return s;
}

/* A field as compare's CSV writes it: %.6g, or the marker both sides make (ERR before OOM
 * before NA). */
static void expect_field(Side a, Side b, int ratio, double value, char *buf, size_t size)
{
    if (!ratio) {
        const Side *s = &a;
        if (s->kind == 1)
            snprintf(buf, size, "%.6g", value);
        else
            snprintf(buf, size, "%s", s->kind == 0 ? "NA" : s->kind == 2 ? "OOM" : "ERR");
        return;
    }
    if (a.kind == 3 || b.kind == 3)
        snprintf(buf, size, "ERR");
    else if (a.kind == 2 || b.kind == 2)
        snprintf(buf, size, "OOM");
    else if (a.kind == 0 || b.kind == 0)
        snprintf(buf, size, "NA");
    else
        snprintf(buf, size, "%.6g", value);
}

/* Every row of compare's CSV against the rows; and the set of pairs and cells. */
static void check_csv(const char *out, const LbCellResult *lin, size_t nlin, const PeerRow *peer, size_t npeer,
                      int linformer_pair, const char *what)
{
    LbCsvTable t;
    lb_check(lb_csv_parse_text(out, strlen(out), 0, "compare's CSV", &t) == LB_OK && t.rows > 0, "%s: CSV parses", what);
    if (t.rows == 0)
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
        Side a = lin_side(lin, nlin, m, n, k);
        Side b = peer_side(peer, npeer, pm, n, lb_model_has_k(m) && !sdpa ? k : 0);
        char want[6][32];
        expect_field(a, b, 0, a.ms, want[0], 32);
        expect_field(b, a, 0, b.ms, want[1], 32);
        expect_field(a, b, 1, a.ms / b.ms, want[2], 32);
        expect_field(a, b, 0, (double)a.batch, want[3], 32);
        expect_field(b, a, 0, (double)b.batch, want[4], 32);
        expect_field(a, b, 1, (double)a.batch / (double)b.batch, want[5], 32);
        for (int c = 0; c < 6; c++)
            lb_check(strcmp(f[5 + c], want[c]) == 0, "%s: %s/%s n=%lld k=%lld column %s is %s: should be %s", what, f[1],
                  pm, (long long)n, (long long)k, t.row[0].fields[5 + c], f[5 + c], want[c]);
        /* Neither side has energy (the fixture's rows none, the peer's raw.csv from before the
         * columns): NA where the cell is ok, else its marker. */
        char joules[3][32];
        expect_field(a, b, 0, NAN, joules[0], 32);
        expect_field(b, a, 0, NAN, joules[1], 32);
        expect_field(a, b, 1, NAN, joules[2], 32);
        for (int c = 0; c < 3; c++) {
            if (strcmp(joules[c], "nan") == 0)
                snprintf(joules[c], 32, "NA");
            lb_check(strcmp(f[11 + c], joules[c]) == 0, "%s: %s/%s n=%lld k=%lld column %s is %s: should be %s", what,
                     f[1], pm, (long long)n, (long long)k, t.row[0].fields[11 + c], f[11 + c], joules[c]);
        }
    }
    /* 3 n for each model without k; linformer: (256,128), (512,128), (512,256), (1024,128), (1024,256) */
    lb_check(pairs[0] == 3 && pairs[2] == 3, "%s: standard against torch-standard and torch-sdpa-flash at every n (%d, %d)",
          what, pairs[0], pairs[2]);
    lb_check(pairs[1] == (linformer_pair ? 5 : 0), "%s: linformer against torch-linformer at every (n, k < n): %d", what,
          pairs[1]);
    lb_check(pairs[3] == 5, "%s: linformer against torch-sdpa-flash at every (n, k < n): %d", what, pairs[3]);
    /* chunked, exact attention too, is the same work as torch-sdpa-flash (never torch-standard's, a
     * model of its own) */
    lb_check(pairs[4] == 3, "%s: chunked against torch-sdpa-flash, the same work, at every n: %d", what, pairs[4]);
    lb_csv_table_free(&t);
}

static LbRun compare(const char *a, const char *b, const char *fmt)
{
    char *argv[] = {bin, "compare", (char *)a, (char *)b, fmt ? "--format" : NULL, (char *)fmt, NULL};
    return lb_run(argv);
}

static void check_usage(LbRun r, const char *want, const char *what)
{
    lb_check(r.code == 2, "%s: exit %d: should be 2 (stderr: %s)", what, r.code, r.err);
    lb_check(lb_lines(r.err) == 1 && strncmp(r.err, "linbench: ", 10) == 0 && strstr(r.err, want),
          "%s: stderr should be one line with \"%s\", got: %s", what, want, r.err);
    lb_check(r.out[0] == '\0', "%s: stdout should be empty, got: %s", what, r.out);
    lb_run_free(&r);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: test_cli_compare_peer PATH-TO-LINBENCH\n");
        return 1;
    }
    bin = argv[1];
    scratch = lb_scratch_dir("cli-compare-peer");
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
    snprintf(peer_dir, sizeof peer_dir, "%s/peer", scratch);
    lb_check(fx_sweep_dir(lin_dir, lin, nlin, "256,512,1024", "128,256", "NVIDIA H100 80GB HBM3") == 0, "linbench's made");
    set_meta(lin_dir, "vocab", "50265");
    make_peer(peer_dir, peer, npeer);

    /* The CSV, cell by cell, in both orders of the directories (the same bytes). */
    LbRun r = compare(lin_dir, peer_dir, "csv");
    lb_check(r.code == 0, "compare LIN PEER --format csv: exit %d (%s)", r.code, r.err);
    check_csv(r.out, lin, nlin, peer, npeer, 1, "LIN PEER");
    LbRun back = compare(peer_dir, lin_dir, "csv");
    lb_check(back.code == 0 && strcmp(back.out, r.out) == 0, "compare PEER LIN prints what compare LIN PEER prints");
    lb_run_free(&back);
    lb_run_free(&r);

    /* Text: what ran, each pair, the section against the baseline, the legend. */
    r = compare(lin_dir, peer_dir, NULL);
    lb_check(r.code == 0 && r.err[0] == '\0', "compare LIN PEER: exit %d, stderr %s", r.code, r.err);
    static const char *const text[] = {
        "linbench compare: linbench against PyTorch (bench/peer), cell by cell",
        "PyTorch 2.99.0, eager, SDPA flash, timer cuda_events",
        "same: device, dtype, model shape, sharing, order and memory budget",
        "batch: each side its own largest within its memory budget",
        "standard against torch-standard\nms per sequence",
        "linformer against torch-linformer (k: projected length)",
        "standard against torch-sdpa-flash\nms per sequence",
        "chunked against torch-sdpa-flash\nms per sequence",
        "Against the peer's exact attention",
        "linformer against torch-sdpa-flash (k: projected length)",
        "NA: not measured on that side",
        "peer energy: none (written before energy was measured)",
    };
    for (size_t i = 0; i < sizeof text / sizeof text[0]; i++)
        lb_check(strstr(r.out, text[i]) != NULL, "the text report says \"%s\"", text[i]);
    /* linformer 512/128: linbench 1.33 ms, the peer 1.00, 1.33; batch 68 and 60, 1.13 */
    lb_check(strstr(r.out, "1.33") && strstr(r.out, "0.909"), "the text shows 1.33 ms and 0.5 / 0.55 = 0.909");
    lb_run_free(&r);
    r = compare(lin_dir, peer_dir, "md");
    lb_check(r.code == 0 && strstr(r.out, "## linbench compare: linbench against PyTorch") &&
              strstr(r.out, "### linformer against torch-linformer") && strstr(r.out, "| n \\ k |"),
          "the Markdown report: headings and tables");
    lb_run_free(&r);

    /* What differs is said: the GPU, the dtype asked, the budget. */
    snprintf(other, sizeof other, "%s/peer-a100", scratch);
    make_peer(other, peer, npeer);
    set_meta(other, "device_name", "NVIDIA A100-SXM4-80GB");
    set_meta(other, "memory_budget_bytes", "1073741824");
    r = compare(lin_dir, other, NULL);
    lb_check(r.code == 0 &&
              strstr(r.out, "differ (linbench / peer): device_name NVIDIA H100 80GB HBM3 / NVIDIA A100-SXM4-80GB; "
                            "memory budget 16 GiB / 1 GiB"),
          "the header names the devices and budgets that differ:\n%s", r.out);
    lb_run_free(&r);

    /* Another sharing: the Linformer pair is refused, the rest compared. */
    snprintf(other, sizeof other, "%s/peer-kv", scratch);
    make_peer(other, peer, npeer);
    set_meta(other, "sharing", "kv");
    r = compare(lin_dir, other, NULL);
    lb_check(r.code == 0 &&
              strstr(r.out, "linformer against torch-linformer: not compared: linbench ran --sharing layerwise, the "
                            "peer kv: not the same work") &&
              strstr(r.out, "differ (linbench / peer): sharing layerwise / kv"),
          "another sharing: the pair refused in one line, the difference said:\n%s", r.out);
    lb_run_free(&r);
    r = compare(lin_dir, other, "csv");
    lb_check(r.code == 0, "another sharing, csv: exit %d", r.code);
    check_csv(r.out, lin, nlin, peer, npeer, 0, "another sharing");
    lb_run_free(&r);

    /* Not the same work at all, or not a peer's result: one line, exit 2. */
    snprintf(other, sizeof other, "%s/peer-wide", scratch);
    make_peer(other, peer, npeer);
    set_meta(other, "d_model", "1024");
    check_usage(compare(lin_dir, other, NULL), "not the same work", "a peer of another d_model");
    check_usage(compare(other, lin_dir, "csv"), "d_model 768", "a peer of another d_model, first");
    snprintf(other, sizeof other, "%s/peer-fp32", scratch);
    make_peer(other, peer, npeer);
    set_meta(other, "storage_dtype", "fp32");
    check_usage(compare(lin_dir, other, NULL), "stored fp16", "a peer of another storage type");
    snprintf(other, sizeof other, "%s/peer-name", scratch);
    static const PeerRow odd[] = {{"torch-sdpa-turbo", 256, 0, 10, 1.0, "ok"}};
    make_peer(other, odd, 1);
    check_usage(compare(lin_dir, other, NULL), "torch-sdpa-turbo", "an unknown peer model");
    check_usage(compare(peer_dir, NULL, NULL), "result of bench/peer", "a peer's result alone");
    check_usage(compare(peer_dir, peer_dir, NULL), "both directories are results of bench/peer", "two peers");

    /* plot LIN PEER: the three figures, their data the rows' values. */
    char plots[4200];
    snprintf(plots, sizeof plots, "%s/plots", scratch);
    char *pargv[] = {bin, "plot", peer_dir, lin_dir, "--out", plots, "--no-render", NULL};
    r = lb_run(pargv);
    lb_check(r.code == 0 && strstr(r.out, "versus_time_per_seq.gp") && strstr(r.out, "versus_batch_ratio.gp"),
          "plot PEER LIN: exit %d, the scripts named (%s%s)", r.code, r.out, r.err);
    lb_run_free(&r);
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
    snprintf(path, sizeof path, "%s/versus_time_per_seq.gp", plots);
    char *gp = lb_slurp(path);
    lb_check(gp && strstr(gp, "title 'torch-sdpa-flash'") && strstr(gp, "title 'linformer k=256'") &&
              strstr(gp, "title 'torch-linformer k=128'"),
          "versus_time_per_seq.gp: a line per model and k of each side");
    free(gp);
    char *p2[] = {bin, "plot", peer_dir, "--no-render", NULL};
    check_usage(lb_run(p2), "result of bench/peer", "plot of a peer's result alone");
    char *p3[] = {bin, "plot", lin_dir, lin_dir, "--no-render", NULL};
    check_usage(lb_run(p3), "a second directory should be a result of bench/peer", "plot of two sweeps");

    lb_test_cleanup(scratch);
    return lb_test_finish("test_cli_compare_peer");
}
