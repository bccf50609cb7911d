/* linbench sweep end to end on the CPU reference: a tiny model over n 128..1024 and k 32..256
 * writes the four files; read back through libcsv, every value is positive and finite, each
 * memory speedup equals the batch ratio in raw.csv and each time speedup the ms-per-sequence
 * ratio; then every kind of bad input exits 2 with one line naming the flag and nothing written.
 * Usage: test_cli_sweep PATH-TO-LINBENCH */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports/grid.h"
#include "reports/raw.h"
#include "tests/cli/sweep_check.h"
#include "tests/lib/check.h"
#include "tests/lib/spawn.h"

static const char *bin;

#define TINY "--device", "cpu", "--layers", "2", "--d-model", "64", "--heads", "4", "--ffn", "128", \
             "--vocab", "1000", "--quiet"

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
    for (size_t i = 0; i < g.rows && i < 4; i++)
        lb_check(g.n[i] == want_n[i], "grid row %zu is n=%lld", i, (long long)want_n[i]);
    for (size_t j = 0; j < g.cols && j < 4; j++)
        lb_check(g.k[j] == want_k[j], "grid column %zu is k=%lld", j, (long long)want_k[j]);
    for (size_t i = 0; i < g.rows && i < 4; i++) {
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
    }
    lb_grid_free(&g);
    free(rows);
    const char *keys[] = {"linbench_version", "git_revision", "command_line", "start_time", "device_name",
                          "dtype", "layers", "d_model", "heads", "ffn", "sharing", "order"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char *v = sc_meta(dir, keys[i]);
        lb_check(v != NULL, "meta.csv has %s", keys[i]);
        free(v);
    }
    sc_check_meta(dir, "memory_budget_bytes", "33554432", "--mem-limit 32M");
    sc_check_meta(dir, "status", "complete", "the sweep");
    sc_check_meta(dir, "tool", "linbench", "the sweep"); /* bench/peer writes "peer" there */
}

/* argv: extra flags after "sweep"; expect exit 2, stderr of one line naming `flag`, no out dir. */
static void bad_input(const char *flag, char *const extra[], int extra_count)
{
    char out[512];
    snprintf(out, sizeof out, "%s/bad-%s", lb_scratch, flag + 2);
    char *argv[64], *base[] = {"--device", "cpu", "--out", out};
    lb_argv(argv, 64, bin, "sweep", base, 4, extra, extra_count);
    lb_run_refused(argv, flag);
    lb_check(!lb_exists(out), "%s: nothing written", flag);
}

#define BAD(flag, ...)                                                   \
    do {                                                                 \
        char *extra_[] = {__VA_ARGS__};                                  \
        bad_input(flag, extra_, (int)(sizeof extra_ / sizeof extra_[0])); \
    } while (0)

int main(int argc, char **argv)
{
    bin = lb_cli_start(argc, argv, "test_cli_sweep");
    const char *scratch = lb_scratch;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/tiny", scratch);

    char *sweep[] = {(char *)bin, "sweep", TINY, "--n", "128:1024", "--k", "32:256", "--mem-limit", "32M",
                     "--cell-time", "1", "--out", dir, NULL};
    LbRun r = lb_run(sweep);
    lb_check(r.code == 0, "tiny CPU sweep exits 0 (got %d): %s", r.code, r.err);
    lb_check(strstr(r.out, "time") && strstr(r.out, "memory") && strstr(r.out, "1024"),
             "the closing summary prints both grids");
    printf("%s", r.out);
    lb_run_free(&r);
    check_sweep_files(dir);

    /* Results are never silently overwritten: the same --out again is bad input... */
    char *again[] = {(char *)bin, "sweep", TINY, "--n", "128", "--k", "32", "--mem-limit", "32M", "--out", dir, NULL};
    lb_run_refused(again, "--out", "--force");
    check_sweep_files(dir); /* ...and left intact */

    /* Bad input: each gets exit 2, one line naming the flag, nothing computed or written. */
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
    char *cant[] = {(char *)bin, "sweep", "--device", "cpu", "--out", "/proc/linbench-cannot/x", NULL};
    lb_run_refused(cant, "--out");
    char file[512];
    snprintf(file, sizeof file, "%s/a-file", scratch);
    FILE *f = fopen(file, "w");
    if (f)
        fclose(f);
    char *onfile[] = {(char *)bin, "sweep", "--device", "cpu", "--out", file, NULL};
    lb_run_refused(onfile, "--out");

    /* Unknown command. */
    char *unknown[] = {(char *)bin, "frobnicate", NULL};
    lb_run_refused(unknown, "frobnicate");

    /* --force overwrites, explicitly. */
    char *force[] = {(char *)bin, "sweep", TINY, "--n", "128", "--k", "32", "--mem-limit", "16M", "--out", dir, "--force", NULL};
    lb_run_ok(force, "--force overwrites");
    LbCellResult *forced = NULL;
    size_t forced_count = 0;
    lb_check(sc_read_rows(dir, &forced, &forced_count) == 0 && forced_count == 2,
             "after --force raw.csv reads back with the new run only (%zu rows)", forced_count);
    free(forced);

    /* The default device is CUDA: without a GPU, one clear line and exit 1, nothing written. */
    char cuda_out[512];
    snprintf(cuda_out, sizeof cuda_out, "%s/cuda", scratch);
    char *cuda[] = {(char *)bin, "sweep", "--layers", "1", "--d-model", "64", "--heads", "4", "--ffn", "64", "--vocab", "100",
                    "--n", "256", "--k", "64", "--mem-limit", "64M", "--quiet", "--out", cuda_out, NULL};
    r = lb_run(cuda);
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
    char *top[] = {(char *)bin, "help", NULL};
    r = lb_run(top);
    lb_check(r.code == 0 && strstr(r.out, "sweep") && strstr(r.out, "run") && strstr(r.out, "info"), "help lists the commands");
    lb_run_free(&r);
    char *version[] = {(char *)bin, "--version", NULL};
    r = lb_run(version);
    lb_check(r.code == 0 && strncmp(r.out, "linbench ", 9) == 0 && strstr(r.out, "git"), "--version prints version and revision: %s", r.out);
    lb_run_free(&r);
    char *info[] = {(char *)bin, "info", NULL};
    r = lb_run(info);
    lb_check(r.code == 0 && (strstr(r.out, "no CUDA device") || strstr(r.out, "compute capability")), "info exits 0 and says what it sees");
    lb_run_free(&r);
    return lb_test_finish("test_cli_sweep");
}
