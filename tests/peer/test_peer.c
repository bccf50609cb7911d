/* bench/peer's linbench-peer end to end on the CPU, one case each (LB_TEST_CASE=NAME runs one):
 * sweep, resume, train. Usage: test_peer PATH-TO-LINBENCH SOURCE_DIR FIND_PYTHON (exit 77 without torch). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attn/base/status.h"
#include "reports/csv_io.h"
#include "reports/sweep_dir.h"
#include "tests/cli/sweep_check.h"
#include "tests/lib/cases.h"
#include "tests/lib/check.h"
#include "tests/lib/spawn.h"
#include "tests/peer/peer_test.h"

/* The model both cases run, on both sides. */
#define PEER_MODEL "--device", "cpu", "--dtype", "fp32", "--layers", "1", "--d-model", "32", "--heads", "2", "--ffn", "64", \
                   "--vocab", "100", "--mem-limit", "8M", "--cell-time", "1"

/* bench/peer end to end on the CPU: a tiny linbench sweep, the peer's sweep of the same grid at
 * its own batches and at linbench's (--batch-from), each read back through libcsv and by
 * `linbench compare` (cell by cell against both raw.csv files) and `linbench plot`; the peer's
 * bad input (one line, exit 2, nothing written); energy through powercap files of the test's own. */
#define TINY PEER_MODEL, "--n", "64,128", "--k", "16"

/* The peer's bad input: exit 2, one line on stderr naming `want`, nothing on stdout, no --out. */
static void check_bad_input(char **args, const char *out, const char *want, const char *what)
{
    LbRun r = lb_peer_run(args);
    lb_check(r.code == 2, "%s: exit %d: should be 2 (stderr: %s)", what, r.code, r.err);
    lb_check(lb_lines(r.err) == 1 && strncmp(r.err, "linbench-peer: ", 15) == 0 && strstr(r.err, want),
          "%s: stderr should be one line with \"%s\": %s", what, want, r.err);
    lb_check(r.out[0] == '\0', "%s: nothing on stdout: %s", what, r.out);
    lb_check(!out || !lb_exists(out), "%s: %s not created", what, out ? out : "");
    lb_run_free(&r);
}

/* scratch/name into path (4200 bytes). */
static char *in_scratch(char path[4200], const char *name)
{
    snprintf(path, 4200, "%s/%s", scratch, name);
    return path;
}

/* No energy counter on either side, whatever this machine has: a zone without files. */
static void no_energy_counter(void)
{
    char zone[4200];
    lb_check(mkdir(in_scratch(zone, "zone-empty"), 0755) == 0 || errno == EEXIST, "mkdir %s", zone);
    setenv("LB_POWERCAP_ZONE", zone, 1);
}

/* `linbench compare LIN PEER --format csv` read back into t: whether it exited 0 and parsed. */
static int compare_csv(const char *lin, const char *peer, LbCsvTable *t)
{
    LbRun r = lb_run(LB_ARGV(bin, "compare", (char *)lin, (char *)peer, "--format", "csv"));
    const int ok = lb_check(r.code == 0, "compare %s %s: exit %d (%s)", lin, peer, r.code, r.err) &&
                   lb_check(lb_csv_parse_text(r.out, strlen(r.out), 0, "compare", t) == LB_OK, "compare's CSV parses");
    lb_run_free(&r);
    return ok;
}

/* The last row of (model, n, k) of variant v, found here rather than by linbench's lookup, which
 * builds the very comparison this test checks. */
static const LbCellResult *row_at(const LbSweepDir *s, size_t v, LbModelKind m, int64_t n, int64_t k)
{
    const LbCellResult *found = NULL;
    for (size_t i = 0; i < s->count; i++)
        if ((!s->variant || s->variant[i] == v) && s->rows[i].model == m && s->rows[i].n == n &&
            (!lb_model_has_k(m) || s->rows[i].k == k))
            found = &s->rows[i];
    return found;
}

/* A peer's result read back: the three models at both n (torch-linformer at k 16), every row ok
 * with its numbers, its peak within `budget`; with `lin`, each at linbench's batch of the same
 * work; with `energy`, every row's power and J per sequence (mean power x median ms / batch),
 * else none and meta.csv's note naming the counter's file. */
static void check_peer_dir(const char *dir, const LbSweepDir *lin, long long budget, int energy)
{
    LbSweepDir p;
    if (!lb_check(lb_result_load(dir, &p) == LB_OK, "%s reads back as a peer's result: %s", dir, lb_error_message()))
        return;
    lb_check(p.count == 6 && p.nvariants == 3, "%s: 6 rows of 3 models (%zu, %zu)", dir, p.count, p.nvariants);
    static const char *const names[3] = {"torch-standard", "torch-linformer", "torch-sdpa-flash"};
    for (size_t v = 0; v < p.nvariants && v < 3; v++)
        lb_check(strcmp(p.variants[v].name, names[v]) == 0, "%s: model %zu is %s (%s)", dir, v, names[v],
              p.variants[v].name);
    for (size_t i = 0; i < p.count; i++) {
        const LbCellResult *r = &p.rows[i];
        const LbPeerModel *pm = &p.variants[p.variant[i]];
        lb_check(r->status == LB_CELL_OK && r->batch >= 1 && r->passes >= 5 && r->ms_per_seq > 0 &&
                  fabs(r->ms_per_seq * (double)r->batch - r->median_ms) <= 1e-9 * r->median_ms &&
                  r->min_ms <= r->median_ms && r->median_ms <= r->max_ms && r->tflop_per_s > 0,
              "%s: %s n=%lld: ok, batch %lld, %d passes, ms per sequence the median over the batch", dir, pm->name,
              (long long)r->n, (long long)r->batch, r->passes);
        lb_check(r->dtype == LB_DTYPE_FP32 && (lb_model_has_k(r->model) ? r->k == 16 : r->k == 0),
              "%s: %s n=%lld: fp32, k as its model has one", dir, pm->name, (long long)r->n);
        lb_check(r->peak_bytes > 0 && r->peak_bytes <= budget && r->planned_bytes == 0,
              "%s: %s n=%lld: peak %lld bytes within the budget of %lld, no plan", dir, pm->name, (long long)r->n,
              (long long)r->peak_bytes, budget);
        if (energy)
            lb_check(r->power_w > 0 && fabs(r->energy_j_per_seq - r->power_w * r->median_ms / 1000.0 /
                                                                       (double)r->batch) <= 1e-9 * r->energy_j_per_seq,
                     "%s: %s n=%lld: %.6g W, %.6g J per sequence = W x median ms / batch", dir, pm->name,
                     (long long)r->n, r->power_w, r->energy_j_per_seq);
        else
            lb_check(isnan(r->power_w) && isnan(r->energy_j_per_seq), "%s: %s n=%lld: no energy (%g W, %g J)", dir,
                     pm->name, (long long)r->n, r->power_w, r->energy_j_per_seq);
        if (lin) {
            const LbCellResult *l = row_at(lin, 0, pm->work, r->n, r->k);
            lb_check(l && l->batch == r->batch, "%s: %s n=%lld runs linbench's batch %lld (%lld)", dir, pm->name,
                  (long long)r->n, l ? (long long)l->batch : -1LL, (long long)r->batch);
        }
    }
    char b[32];
    snprintf(b, sizeof b, "%lld", budget);
    const char *const keys[][2] = {{"tool", "peer"},        {"timer", "perf_counter"}, {"device", "cpu"},
                                   {"dtype", "fp32"},       {"storage_dtype", "fp32"}, {"d_model", "32"},
                                   {"memory_budget_bytes", b}, {"status", "complete"},
                                   {"n_list", "64,128"},    {"sdpa", "flash"}};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *v = lb_meta_get(&p.meta, keys[i][0]);
        lb_check(v && strcmp(v, keys[i][1]) == 0, "%s/meta.csv: %s is %s (%s)", dir, keys[i][0], keys[i][1],
              v ? v : "absent");
    }
    const char *tv = lb_meta_get(&p.meta, "torch_version");
    lb_check(tv && *tv, "%s/meta.csv: torch_version %s", dir, tv ? tv : "absent");
    const char *e = lb_meta_get(&p.meta, "energy"), *note = lb_meta_get(&p.meta, "energy_note");
    lb_check(e && strcmp(e, energy ? "measured" : "none") == 0 && note &&
                 (energy ? note[0] == '\0' : strstr(note, "no energy counter") && strstr(note, "energy_uj") != NULL),
             "%s/meta.csv: energy %s (%s), energy_note %s", dir, energy ? "measured" : "none", e ? e : "absent",
             note ? note : "absent");
    lb_sweep_dir_free(&p);
}

/* compare LIN PEER --format csv: every cell's nine numbers from the two raw.csv files (the three of
 * energy NA where a side has none). */
static void check_compare_sweep(const char *lin_dir, const char *peer_dir, int same_batch)
{
    LbSweepDir lin;
    LbSweepDir p;
    LbCsvTable t;
    if (!compare_csv(lin_dir, peer_dir, &t) || lb_sweep_dir_load(lin_dir, &lin) != LB_OK ||
        lb_result_load(peer_dir, &p) != LB_OK)
        return;
    int rows = 0;
    for (size_t i = 1; i < t.rows; i++) {
        char **f = t.row[i].fields;
        LbModelKind m;
        size_t v = 0;
        while (v < p.nvariants && strcmp(p.variants[v].name, f[2]) != 0)
            v++;
        if (!lb_check(t.row[i].count == 14 && lb_model_parse(f[1], &m) == 0 && v < p.nvariants, "row %zu names both",
                   i))
            continue;
        const int64_t n = atoll(f[3]), k = f[4][0] ? atoll(f[4]) : 0;
        const LbCellResult *a = row_at(&lin, 0, m, n, k);
        const LbCellResult *b = row_at(&p, v, p.variants[v].work, n, k);
        if (!lb_check(a && b, "%s/%s n=%lld: both sides have the cell", f[1], f[2], (long long)n))
            continue;
        const double want[6] = {a->ms_per_seq, b->ms_per_seq, a->ms_per_seq / b->ms_per_seq,
                                (double)a->batch, (double)b->batch, (double)a->batch / (double)b->batch};
        for (int c = 0; c < 6; c++)
            lb_check(fabs(atof(f[5 + c]) - want[c]) <= 1e-5 * fabs(want[c]), "%s/%s n=%lld k=%lld: %s %s, rows say %.6g",
                  f[1], f[2], (long long)n, (long long)k, t.row[0].fields[5 + c], f[5 + c], want[c]);
        const double joules[3] = {a->energy_j_per_seq, b->energy_j_per_seq,
                                  a->energy_j_per_seq / b->energy_j_per_seq};
        for (int c = 0; c < 3; c++) {
            const char *got = f[11 + c], *head = t.row[0].fields[11 + c];
            if (isnan(joules[c]))
                lb_check(strcmp(got, "NA") == 0, "%s/%s n=%lld: %s NA (%s)", f[1], f[2], (long long)n, head, got);
            else
                lb_check(fabs(atof(got) - joules[c]) <= 1e-5 * joules[c], "%s/%s n=%lld: %s %s, rows say %.6g", f[1],
                         f[2], (long long)n, head, got, joules[c]);
        }
        if (same_batch && strcmp(f[0], "same_work") == 0)
            lb_check(strcmp(f[10], "1") == 0, "%s/%s n=%lld: the same batch on both sides (%s)", f[1], f[2],
                  (long long)n, f[10]);
        rows++;
    }
    /* same work: standard with torch-standard and torch-sdpa-flash (2 n each), linformer with
     * torch-linformer (2); against torch-sdpa-flash: linformer (2) */
    lb_check(rows == 8, "compare: 8 cells compared (%d)", rows);
    lb_csv_table_free(&t);
    lb_sweep_dir_free(&lin);
    lb_sweep_dir_free(&p);
}

/* A powercap zone at dir whose counter a child process advances (2 mJ every 2 ms, written whole
 * and renamed in, so a reader never sees half a number) until stop_counter: the pid. */
static pid_t start_counter(const char *dir)
{
    char path[4300], tmp[4300];
    snprintf(path, sizeof path, "%s/max_energy_range_uj", dir);
    FILE *f = fopen(path, "w");
    if (!f || fputs("262143328850\n", f) < 0 || fclose(f) != 0)
        return -1;
    const pid_t pid = fork();
    if (pid != 0)
        return pid;
    snprintf(path, sizeof path, "%s/energy_uj", dir);
    snprintf(tmp, sizeof tmp, "%s/energy_uj.tmp", dir);
    for (unsigned long long uj = 1000;; uj += 2000) {
        FILE *e = fopen(tmp, "w");
        if (!e || fprintf(e, "%llu\n", uj) < 0 || fclose(e) != 0 || rename(tmp, path) != 0)
            _exit(1);
        usleep(2000);
    }
}

static void stop_counter(pid_t pid)
{
    if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
}

/* Energy on both sides: each ok row's J per sequence, the peer's energy_speedup.csv the ratio of
 * its rows, and compare's energy columns (check_compare_sweep). */
static void check_energy(void)
{
    char zone[4200], lin[4200], own[4200], plots[4200], grid[4300], data[4400];
    in_scratch(lin, "lin-energy");
    in_scratch(own, "peer-energy");
    if (!lb_check(mkdir(in_scratch(zone, "zone-advancing"), 0755) == 0, "mkdir %s", zone))
        return;
    const pid_t counter = start_counter(zone);
    if (!lb_check(counter > 0, "the counter's process starts"))
        return;
    setenv("LB_POWERCAP_ZONE", zone, 1);
    usleep(50000); /* its first number written */
    lb_run_ok(LB_ARGV(bin, "sweep", TINY, "--models", "standard,linformer", "-q", "--out", lin), "linbench sweep, energy");
    lb_peer_ok(LB_ARGV("sweep", TINY, "-q", "--out", own), "peer sweep, energy");
    stop_counter(counter);
    check_peer_dir(own, NULL, 8 << 20, 1);
    check_compare_sweep(lin, own, 0);
    LbRun r = lb_run(LB_ARGV(bin, "compare", lin, own));
    lb_check(r.code == 0 && strstr(r.out, "J per sequence\n") && strstr(r.out, "energy saved") &&
                 !strstr(r.out, "energy: none"),
             "compare LIN PEER with energy on both sides: J per sequence for the same work, energy saved against "
             "torch-sdpa-flash:\n%s",
             r.out);
    lb_run_free(&r);
    r = lb_run(LB_ARGV(bin, "plot", lin, own, "--out", in_scratch(plots, "plots-energy"), "--no-render"));
    lb_check(r.code == 0 && strstr(r.out, "versus_energy_ratio.gp"), "plot LIN PEER with energy: exit %d (%s%s)",
             r.code, r.out, r.err);
    lb_run_free(&r);
    /* standard / torch-standard at n = 64: the rows' J per sequence */
    LbSweepDir l;
    LbSweepDir p;
    LbCsvTable t;
    if (!lb_check(lb_sweep_dir_load(lin, &l) == LB_OK && lb_result_load(own, &p) == LB_OK, "both read back"))
        return;
    snprintf(data, sizeof data, "%s/versus_energy_ratio.plot.csv", plots);
    const LbCellResult *a = row_at(&l, 0, LB_MODEL_STANDARD, 64, 0);
    const LbCellResult *b = row_at(&p, 0, p.variants[0].work, 64, 0);
    if (lb_check(a && b && lb_csv_read_file(data, 1, &t) == LB_OK && t.rows == 3 &&
                     strcmp(t.row[1].fields[0], "64") == 0,
                 "%s: n 64 and 128", data)) {
        int col = -1;
        for (size_t c = 0; c < t.row[0].count; c++)
            if (strcmp(t.row[0].fields[c], "standard / torch-standard") == 0)
                col = (int)c;
        const double want = a->energy_j_per_seq / b->energy_j_per_seq;
        lb_check(col > 0 && fabs(atof(t.row[1].fields[col]) - want) <= 1e-5 * want,
                 "%s: standard / torch-standard at n=64 %s, the rows' %.6g", data,
                 col > 0 ? t.row[1].fields[col] : "(no column)", want);
        lb_csv_table_free(&t);
    }

    snprintf(grid, sizeof grid, "%s/energy_speedup.csv", own);
    if (lb_check(lb_csv_read_file(grid, 1, &t) == LB_OK && t.rows == 3 && t.row[0].count == 2 &&
                     strcmp(t.row[0].fields[1], "k=16") == 0,
                 "%s: n rows 64 and 128, one column k=16", grid)) {
        for (size_t i = 1; i < t.rows; i++) {
            const int64_t n = atoll(t.row[i].fields[0]);
            const LbCellResult *std = row_at(&p, 0, p.variants[0].work, n, 0);
            const LbCellResult *lf = row_at(&p, 1, p.variants[1].work, n, 16);
            const double want = std && lf ? std->energy_j_per_seq / lf->energy_j_per_seq : NAN;
            lb_check(fabs(atof(t.row[i].fields[1]) - want) <= 1e-5 * want,
                     "%s n=%lld: %s, torch-standard's J per sequence / torch-linformer's %.6g", grid, (long long)n,
                     t.row[i].fields[1], want);
        }
        lb_csv_table_free(&t);
    }
    lb_sweep_dir_free(&l);
    lb_sweep_dir_free(&p);
}

static void test_sweep(void)
{
    char lin[4200], own[4200], same[4200], other[4200], plots[4200];
    no_energy_counter();
    lb_run_ok(LB_ARGV(bin, "sweep", TINY, "--models", "standard,linformer", "-q", "--out", in_scratch(lin, "lin")),
              "linbench sweep");
    LbRun r = lb_peer_run(LB_ARGV("sweep", TINY, "--out", in_scratch(own, "peer")));
    lb_check(r.code == 0 && strstr(r.out, "torch-sdpa-flash n=128: batch") && strstr(r.out, "linbench compare"),
          "peer sweep: exit %d, a line per cell, how to compare (%s%s)", r.code, r.out, r.err);
    lb_run_free(&r);
    check_peer_dir(own, NULL, 8 << 20, 0);

    LbSweepDir l;
    if (lb_check(lb_sweep_dir_load(lin, &l) == LB_OK, "linbench's sweep reads back")) {
        lb_peer_ok(LB_ARGV("sweep", "--batch-from", lin, "--out", in_scratch(same, "peer-same-batch"), "-q"),
                   "peer sweep --batch-from");
        /* linbench's batches whatever its budget: the peer's is the CPU's default */
        check_peer_dir(same, &l, 512 << 20, 0);
        lb_sweep_dir_free(&l);
    }
    check_compare_sweep(lin, own, 0);
    check_compare_sweep(lin, same, 1);
    r = lb_run(LB_ARGV(bin, "compare", same, lin));
    lb_check(r.code == 0 && strstr(r.out, "batch: the peer ran linbench's batches (--batch-from") &&
              strstr(r.out, "differ (linbench / peer): memory budget 8 MiB / 512 MiB\n"),
          "compare PEER LIN: the header says whose batches and that only the budgets differ:\n%s", r.out);
    lb_run_free(&r);
    check_energy();
    no_energy_counter();
    r = lb_run(LB_ARGV(bin, "plot", lin, own, "--out", in_scratch(plots, "plots"), "--no-render"));
    lb_check(r.code == 0 && strstr(r.out, "versus_time_ratio.gp") && !strstr(r.out, "versus_energy_ratio"),
             "plot LIN PEER, no energy: exit %d, no energy figure (%s%s)", r.code, r.out, r.err);
    lb_run_free(&r);

    /* Bad input: one line, exit 2, nothing written. */
    in_scratch(other, "refused");
    check_bad_input(LB_ARGV("sweep", TINY, "--sdpa", "turbo", "--out", other), other,
                    "invalid argument \"turbo\" for --sdpa", "an unknown backend");
    check_bad_input(LB_ARGV("sweep", TINY, "--sdpa", "cudnn", "--out", other), other, "has no cudnn kernel",
                    "a backend the CPU lacks");
    check_bad_input(LB_ARGV("sweep", "--device", "cpu", "--n", "64", "--k", "64,128", "--out", other), other,
                    "no k < n", "k >= n");
    check_bad_input(LB_ARGV("sweep", "--device", "cpu", "--layers", "1", "--mem-limit", "100T", "--out", other), other,
                    "--mem-limit", "a budget beyond this machine's memory");
    check_bad_input(LB_ARGV("sweep", "--batch-from", lin, "--d-model", "64", "--out", other), other,
                    "its d_model is 32 and --d-model is 64", "--batch-from another model");
    check_bad_input(LB_ARGV("sweep", "--batch-from", own, "--out", other), other, "a peer result",
                    "--batch-from a peer's result");
    check_bad_input(LB_ARGV("sweep", TINY, "--out", own), NULL, "it holds results", "an --out holding results");
    check_bad_input(LB_ARGV("sweep", "--heads", "5", "--device", "cpu", "--out", other), other, "--heads",
                    "heads that do not divide d_model");

    lb_test_cleanup(scratch);
    return;
}

/* linbench-peer sweep --resume on the CPU: a peer sweep killed by SIGKILL then resumed measures
 * every cell once (the first rows kept byte for byte), with meta.csv, the grids and compare whole;
 * a partial last row is dropped; a resume with another setting, of a directory in use, or whose
 * lock is a symbolic link is refused. */
/* n 64 and 128, k 8 and 16: per n torch-standard, torch-linformer twice, torch-sdpa-flash */
#define RESUME_MODEL PEER_MODEL, "--k", "8,16"
#define RESUME_CELLS 8

static LbRun resume(const char *dir, const char *flag, const char *value)
{
    return lb_peer_run(LB_ARGV("sweep", "--resume", (char *)dir, "-q", (char *)flag, (char *)value));
}

/* dir's rows: every cell of the grid once, each ok; its grids numbers in every k < n cell. */
static void check_each_once(const char *dir, const char *what)
{
    LbSweepDir p;
    if (!lb_check(lb_result_load(dir, &p) == LB_OK, "%s: %s reads back as a peer's result: %s", what, dir,
                  lb_error_message()))
        return;
    lb_check(p.count == RESUME_CELLS, "%s: %d rows, one per cell (%zu)", what, RESUME_CELLS, p.count);
    for (size_t i = 0; i < p.count; i++) {
        lb_check(p.rows[i].status == LB_CELL_OK && p.rows[i].batch >= 1, "%s: row %zu ok", what, i + 1);
        for (size_t j = 0; j < i; j++)
            lb_check(!(p.variant[i] == p.variant[j] && p.rows[i].n == p.rows[j].n && p.rows[i].k == p.rows[j].k),
                     "%s: %s n=%lld k=%lld measured once (rows %zu and %zu)", what, p.variants[p.variant[i]].name,
                     (long long)p.rows[i].n, (long long)p.rows[i].k, j + 1, i + 1);
    }
    lb_sweep_dir_free(&p);
    char path[4400];
    snprintf(path, sizeof path, "%s/time_speedup.csv", dir);
    LbCsvTable t;
    if (lb_check(lb_csv_read_file(path, 1, &t) == LB_OK && t.rows == 3 && t.row[0].count == 3,
                 "%s: time_speedup.csv, n 64 and 128 by k 8 and 16", what)) {
        for (size_t r = 1; r < t.rows; r++)
            for (size_t c = 1; c < t.row[r].count; c++)
                lb_check(atof(t.row[r].fields[c]) > 0, "%s: time_speedup.csv n=%s %s: a number (%s)", what,
                         t.row[r].fields[0], t.row[0].fields[c], t.row[r].fields[c]);
        lb_csv_table_free(&t);
    }
    sc_check_meta(dir, "status", "complete", what);
}

/* `linbench compare LIN dir --format csv`: every pair of the same work and every model against
 * the peer's exact attention, each with numbers on both sides. */
static void check_compare_resume(const char *lin, const char *dir)
{
    LbCsvTable t;
    if (compare_csv(lin, dir, &t)) {
        /* standard with torch-standard and torch-sdpa-flash (2 n each), linformer with
         * torch-linformer (4 cells), linformer against torch-sdpa-flash (4) */
        lb_check(t.rows == 1 + 12, "compare: 12 cells (%zu)", t.rows - 1);
        for (size_t i = 1; i < t.rows; i++)
            lb_check(t.row[i].count == 14 && atof(t.row[i].fields[5]) > 0 && atof(t.row[i].fields[6]) > 0,
                     "compare row %zu: ms per sequence on both sides (%s, %s)", i,
                     t.row[i].count > 6 ? t.row[i].fields[5] : "", t.row[i].count > 6 ? t.row[i].fields[6] : "");
        lb_csv_table_free(&t);
    }
}

/* Start the sweep, SIGKILL it once raw.csv has a row: the killed run's raw.csv. */
static char *killed_mid_grid(const char *dir)
{
    pid_t pid = lb_peer_start(LB_ARGV("sweep", RESUME_MODEL, "--n", "64,128", "-q", "--out", (char *)dir));
    struct timespec pause = {0, 20 * 1000 * 1000};
    for (int i = 0; i < 15000 && sc_rows(dir) < 1; i++) { /* 5 minutes at most */
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            lb_check(0, "the sweep ended (status %d) before its first row could be killed", status);
            LbRun r = lb_wait(pid); /* its captures */
            lb_run_free(&r);
            return NULL;
        }
        nanosleep(&pause, NULL);
    }
    kill(pid, SIGKILL);
    LbRun r = lb_wait(pid);
    lb_check(r.code == 128 + SIGKILL, "kill -9 ends the peer sweep (%d: %s)", r.code, r.err);
    lb_run_free(&r);
    const int kept = sc_rows(dir);
    lb_check(kept >= 1 && kept < RESUME_CELLS, "killed mid-grid: %d of %d rows on disk", kept, RESUME_CELLS);
    sc_check_meta(dir, "status", "running", "the killed run");
    return lb_slurp_in(dir, "raw.csv");
}

/* A flag that differs from meta.csv: refused in one line naming it, exit 2, nothing written. */
static void check_refused_resume(const char *dir, const char *flag, const char *value, int code, const char *want,
                          const char *what)
{
    char *raw = lb_slurp_in(dir, "raw.csv"), *meta = lb_slurp_in(dir, "meta.csv");
    LbRun r = resume(dir, flag, value);
    lb_check(r.code == code && lb_lines(r.err) == 1 && strncmp(r.err, "linbench-peer: ", 15) == 0 &&
                 strstr(r.err, want),
             "%s: exit %d (should be %d), one line with \"%s\": %s", what, r.code, code, want, r.err);
    lb_check(lb_same_text(raw, lb_slurp_in(dir, "raw.csv")) & lb_same_text(meta, lb_slurp_in(dir, "meta.csv")),
             "%s: raw.csv and meta.csv as they were", what);
    lb_run_free(&r);
}

/* Another process holding the lock, and a lock file that is a symbolic link: refused. */
static void check_lock(const char *dir)
{
    char lock[4400], target[4400];
    snprintf(lock, sizeof lock, "%s/.linbench.lock", dir);
    int fd = open(lock, O_RDWR | O_CLOEXEC);
    if (lb_check(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0, "the test takes %s", lock)) {
        check_refused_resume(dir, NULL, NULL, 1, "is in use by another", "--resume of a directory another process holds");
        close(fd);
    }
    snprintf(target, sizeof target, "%s/elsewhere", scratch);
    if (lb_check(unlink(lock) == 0 && symlink(target, lock) == 0, "%s made a symbolic link", lock)) {
        check_refused_resume(dir, NULL, NULL, 2, ".linbench.lock is a symbolic link", "--resume with a symbolic-link lock");
        lb_check(!lb_exists(target), "the link's target not created");
        unlink(lock);
    }
}

static void test_resume(void)
{
    scratch = lb_scratch_dir("peer-resume");

    char lin[4200], dir[4200];
    no_energy_counter();
    in_scratch(dir, "peer");
    lb_run_ok(LB_ARGV(bin, "sweep", RESUME_MODEL, "--n", "64,128", "--models", "standard,linformer", "-q", "--out",
                      in_scratch(lin, "lin")),
              "linbench sweep");

    /* Killed mid-grid, then resumed: each cell once, the killed run's rows kept as they were. */
    char *before = killed_mid_grid(dir);
    char *command = sc_meta(dir, "command_line"), *start = sc_meta(dir, "start_time");
    check_refused_resume(dir, "--seed", "2", 2, "--seed 2 differs from the resumed run's \"1\"", "--resume --seed 2");
    check_refused_resume(dir, "--n", "64", 2, "--n 64 differs from the resumed run's \"64,128\"", "--resume --n 64");
    check_lock(dir);
    LbRun r = resume(dir, "--n", "64:128"); /* a flag that agrees with meta.csv is fine */
    lb_check(r.code == 0, "resume after kill -9: exit %d (%s)", r.code, r.err);
    lb_run_free(&r);
    char *after = lb_slurp_in(dir, "raw.csv");
    lb_check(before && after && strncmp(before, after, strlen(before)) == 0,
             "the killed run's rows are kept as they were, the resume's after them");
    check_each_once(dir, "kill -9 then --resume");
    lb_check(lb_same_text(command, sc_meta(dir, "command_line")) & lb_same_text(start, sc_meta(dir, "start_time")),
             "meta.csv keeps the first run's command line and start time");
    sc_check_meta_has(dir, "resume_1_command", "--resume", "meta.csv adds the resume's command");
    char *when = sc_meta(dir, "resume_1_time");
    lb_check(when && when[0], "meta.csv adds the resume's time");
    free(when);
    check_compare_resume(lin, dir);
    free(before);

    /* A row cut in the middle: dropped, and its cell measured again. */
    char path[4400];
    snprintf(path, sizeof path, "%s/raw.csv", dir);
    char *last = after ? strrchr(after, '\n') : NULL;
    if (!lb_check(last && last != after, "raw.csv has rows to cut")) {
        free(after);
        return;
    }
    *last = '\0';
    char *cut = strrchr(after, '\n') + 1;
    const size_t whole = (size_t)(cut - after);
    cut[strlen(cut) / 2] = '\0';
    FILE *f = fopen(path, "w");
    lb_check(f && fputs(after, f) >= 0 && fclose(f) == 0, "%s rewritten with half its last row", path);
    r = resume(dir, NULL, NULL);
    lb_check(r.code == 0, "resume after a partial last row: exit %d (%s)", r.code, r.err);
    lb_run_free(&r);
    char *again = lb_slurp_in(dir, "raw.csv");
    lb_check(again && strncmp(again, after, whole) == 0, "the whole rows before the partial one are kept");
    check_each_once(dir, "a partial last row then --resume");
    sc_check_meta_has(dir, "resume_2_command", "--resume", "meta.csv adds the second resume");
    free(again);
    free(after);

    lb_test_cleanup(scratch);
    return;
}

/* The peer's training step on the CPU (--pass train), on a model whose token embedding (vocab
 * 20000) outweighs a batch's activations: a sweep of the three models at n = 64 that completes,
 * meta.csv pass train; at batch 1 the step's peak holds the weights and every gradient, twice the
 * weights, where a forward's holds them once (what the batch search counts); compare against a
 * linbench forward sweep says the passes differ; --batch-from a forward sweep, an unknown pass
 * and a resume with the other pass refused. */
#define TRAIN_MODEL "--device", "cpu", "--dtype", "fp32", "--layers", "1", "--d-model", "32", "--heads", "2", "--ffn", \
                    "64", "--vocab", "20000", "--mem-limit", "8M", "--cell-time", "1", "--n", "64", "-q"
/* fp32 weights: embeddings, their LayerNorm, the layer's products 4 d^2 + 2 d f and its 9 d + f
 * biases and gains */
#define TRAIN_WEIGHT_BYTES (4LL * (20000 * 32 + 64 * 32 + 2 * 32 + 4 * 32 * 32 + 2 * 32 * 64 + 9 * 32 + 64))

/* The peer's sweep `args` into dir (its --out): its result read back (or NULL, said). */
static LbSweepDir *peer_sweep(char **args, const char *dir, LbSweepDir *into)
{
    const int ok = lb_peer_ok(args, "peer sweep") &&
                   lb_check(lb_result_load(dir, into) == LB_OK, "%s reads back: %s", dir, lb_error_message());
    return ok ? into : NULL;
}

static void test_train(void)
{
    scratch = lb_scratch_dir("peer-train");
    char lin[4200], own[4200], one[4200], other[4200];
    no_energy_counter();
    in_scratch(own, "train");
    in_scratch(other, "refused");
    lb_run_ok(LB_ARGV(bin, "sweep", TRAIN_MODEL, "--models", "standard", "--out", in_scratch(lin, "lin")),
              "linbench sweep");

    LbSweepDir o, p;
    if (peer_sweep(LB_ARGV("sweep", TRAIN_MODEL, "--models", "torch-standard", "--max-batch", "1", "--pass", "train",
                           "--out", in_scratch(one, "train-1")),
                   one, &o)) {
        lb_check(o.count == 1 && o.rows[0].batch == 1 && o.rows[0].peak_bytes >= 2 * TRAIN_WEIGHT_BYTES,
                 "the step's peak at batch 1, %lld bytes, holds the weights and their gradients, 2 x %lld",
                 o.count ? (long long)o.rows[0].peak_bytes : -1LL, TRAIN_WEIGHT_BYTES);
        lb_sweep_dir_free(&o);
    }
    if (peer_sweep(LB_ARGV("sweep", TRAIN_MODEL, "--k", "16", "--pass", "train", "--out", own), own, &p)) {
        lb_check(p.count == 3, "3 training rows (%zu)", p.count);
        for (size_t i = 0; i < p.count; i++) {
            const LbCellResult *t = &p.rows[i];
            lb_check(t->status == LB_CELL_OK && t->batch >= 1 && t->passes >= 5 && t->median_ms > 0 &&
                         t->peak_bytes >= 2 * TRAIN_WEIGHT_BYTES && t->peak_bytes <= 8 << 20,
                     "%s n=64: ok, batch %lld, %d passes, peak %lld within 8 MiB", p.variants[p.variant[i]].name,
                     (long long)t->batch, t->passes, (long long)t->peak_bytes);
        }
        lb_sweep_dir_free(&p);
    }
    sc_check_meta(own, "pass", "train", "the training sweep");
    sc_check_meta(own, "status", "complete", "the training sweep");
    LbRun r = lb_run(LB_ARGV(bin, "compare", lin, own));
    lb_check(r.code == 0 && strstr(r.out, "differ (linbench / peer): pass forward / train"),
             "compare LIN(forward) PEER(train): says the passes differ:\n%s%s", r.out, r.err);
    lb_run_free(&r);

    check_bad_input(LB_ARGV("sweep", TRAIN_MODEL, "--pass", "backward", "--out", other), other,
                    "invalid argument \"backward\" for --pass: should be forward or train", "--pass backward");
    check_bad_input(LB_ARGV("sweep", "--batch-from", lin, "--pass", "train", "--out", other), other,
                    "its pass is forward and --pass is train", "--pass train --batch-from a forward sweep");
    check_refused_resume(own, "--pass", "forward", 2, "--pass forward differs from the resumed run's \"train\"",
                         "--resume --pass forward of a training sweep");
    lb_test_cleanup(scratch);
}

int main(int argc, char **argv)
{
    static const LbTestCase cases[] = {{"sweep", test_sweep}, {"resume", test_resume}, {"train", test_train}};
    const int started = lb_peer_test_start(argc, argv, "test_peer");
    if (started >= 0)
        return started;
    const int code = LB_TEST_CASES("test_peer", cases);
    free(python);
    return code;
}
