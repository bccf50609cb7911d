/* `--device cuda` end to end on the emulated GPU (gpu/emu), suite gpu-emu: info, a sweep, run
 * --dump against --device cpu's, the memory budget and its refusals, autotuning; then sweep --gpus
 * on three emulated GPUs (cells, a kill and a resume, --breakdown, the refusals).
 * Usage: test_cli_emu PATH-TO-LINBENCH-ON-THE-EMULATOR */
#include <math.h>
#include <stdlib.h>

#include "attn/base/status.h"
#include "reports/breakdown_csv.h"
#include "tests/cli/sweep_check.h"
#include "tests/reports/npy_read.h"

static const char *bin;
/* linbench's argv: ARGV("sweep", TINY, "--out", dir) */
#define ARGV(...) LB_ARGV((char *)bin, __VA_ARGS__)

/* The emulator is slow: one layer, d_model 32, 2 heads, ffn 64, vocab 100. */
#define TINY "--layers", "1", "--d-model", "32", "--heads", "2", "--ffn", "64", "--vocab", "100"

static void check_info(void)
{
    LbRun r = lb_run(ARGV("info"));
    /* the emulator has no clocks (nor has a GPU whose NVML cannot be loaded): unknown, never -1 */
    lb_check(!strstr(r.out, "-1") && strstr(r.out, "SM unknown now, unknown max; memory unknown"),
             "info says the clocks it cannot read are unknown:\n%s", r.out);
    sc_says(r, 0, "info on the emulator", "EMULATED", "emulated GPU");
}

/* A --gpu the machine does not have (the emulator has one GPU) is bad input: exit 2, one line
 * naming --gpu and its range, nothing on stdout, no directory left. */
static void check_gpu_index(const char *scratch)
{
    char out[512];
    snprintf(out, sizeof out, "%s/gpu-5", scratch);
    lb_run_refused(ARGV("run", "--gpu", "5", TINY, "--n", "64"), "for --gpu", "0 to 0");
    lb_run_refused(ARGV("sweep", "--gpu", "5", TINY, "--n", "64", "--k", "16", "-q", "--out", out), "for --gpu", "0 to 0");
    lb_run_refused(ARGV("check", "--gpu", "5", "--quick"), "for --gpu", "0 to 0");
    lb_run_refused(ARGV("info", "--gpu", "5"), "for --gpu", "0 to 0");
    lb_check(!lb_exists(out), "sweep --gpu 5 leaves no directory");
}

static void check_sweep(const char *scratch)
{
    char out[512];
    snprintf(out, sizeof out, "%s/sweep", scratch);
    lb_run_ok(ARGV("sweep", "--device", "cuda", TINY, "--n", "64:128", "--k", "16:32", "--max-batch", "2", "--cell-time",
                   "1", "-q", "--out", out), "sweep --device cuda on the emulator");
    sc_check_meta_has(out, "device_name", "emulated", "sweep --device cuda on the emulator");
    sc_check_meta(out, "status", "complete", "sweep --device cuda on the emulator");
    sc_each_once(out, 6, "sweep --device cuda on the emulator");
}

/* meta.csv records linear's tuning, and a resume with --no-autotune is refused. */
static void check_autotune(const char *scratch)
{
    char on[512], off[512];
    snprintf(on, sizeof on, "%s/autotune-on", scratch);
    snprintf(off, sizeof off, "%s/autotune-off", scratch);
    setenv("LB_EMU_LT_SLOW_ALGO", "0", 1); /* the heuristic's first 5 ms slower a call */
#define AUTOTUNE_SWEEP(dir)                                                                              \
    (char *)bin, "sweep", "--device", "cuda", TINY, "--n", "64", "--models", "standard", "--max-batch", "1", \
        "--cell-time", "1", "--no-check", "-q", "--out", dir
    lb_run_ok(LB_ARGV(AUTOTUNE_SWEEP(on)), "sweep with autotuning");
    char *tuning = sc_meta(on, "matmul_tuning");
    long long shapes = -1, kept = -1;
    sc_check_meta(on, "matmul_autotune", "on", "sweep with autotuning");
    lb_check(tuning && sscanf(tuning, "%lld shapes timed, %lld kept", &shapes, &kept) == 2 && shapes > 0 && kept == 0 &&
                 strstr(tuning, "emulated") && !strstr(tuning, " ms"),
             "meta.csv matmul_tuning \"%s\": shapes timed, none kept the slow first, no GPU time", tuning ? tuning : "");
    free(tuning);

    char *before = lb_slurp_in(on, "meta.csv");
    sc_run_expect(ARGV("sweep", "--resume", on, "--no-autotune", "-q"), 2, 1, "--no-autotune", "matmul_autotune");
    lb_check(lb_same_text(before, lb_slurp_in(on, "meta.csv")), "and meta.csv is left as it was");

    char *argv_off[] = {AUTOTUNE_SWEEP(off), "--no-autotune", NULL};
#undef AUTOTUNE_SWEEP
    lb_run_ok(argv_off, "sweep --no-autotune");
    tuning = sc_meta(off, "matmul_tuning");
    sc_check_meta(off, "matmul_autotune", "off", "sweep --no-autotune");
    lb_check(tuning && strncmp(tuning, "off", 3) == 0, "meta.csv matmul_tuning \"%s\" says off", tuning ? tuning : "");
    free(tuning);
    unsetenv("LB_EMU_LT_SLOW_ALGO");
}

/* output.npy of run --dump on `device` with `dtype` into scratch/dump-<device>-<dtype>. */
static int dump(const char *scratch, const char *device, const char *dtype, NpyFile *f)
{
    char dir[512], file[600];
    snprintf(dir, sizeof dir, "%s/dump-%s-%s", scratch, device, dtype);
    snprintf(file, sizeof file, "%s/output.npy", dir);
    return lb_run_ok(ARGV("run", "--device", (char *)device, "--dtype", (char *)dtype, TINY, "--n", "64", "--k", "16",
                          "--model", "linformer", "--batch", "2", "--dump", dir),
                     "run --dump") ? npy_read(file, f) : -1;
}

/* run --dump equals --device cpu's within the dtype's relative tolerance. */
static void check_dump(const char *scratch)
{
    NpyFile cpu;
    if (!lb_check(dump(scratch, "cpu", "fp32", &cpu) == 0, "run --dump on the CPU"))
        return;
    const char *dtypes[] = {"fp32", "fp16", "bf16"};
    const double tol[] = {1e-5, 1e-2, 3e-2};
    for (int d = 0; d < 3; d++) {
        NpyFile gpu;
        if (!lb_check(dump(scratch, "cuda", dtypes[d], &gpu) == 0, "run --dump on the emulated GPU (%s)", dtypes[d]))
            continue;
        int same_shape = gpu.bytes == cpu.bytes && gpu.ndim == cpu.ndim && strcmp(gpu.descr, cpu.descr) == 0;
        double num = 0.0, den = 0.0;
        const float *a = (const float *)gpu.data, *b = (const float *)cpu.data;
        for (size_t i = 0; same_shape && i < cpu.bytes / 4; i++) {
            num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
            den += (double)b[i] * b[i];
        }
        const double rel = den > 0.0 ? sqrt(num / den) : INFINITY;
        printf("  dump %s: emulated GPU against the CPU, rel err %.3e (limit %.0e)\n", dtypes[d], rel, tol[d]);
        lb_check(same_shape && rel <= tol[d], "dump %s: shapes %s, relative error %.3e above %.0e", dtypes[d],
                 same_shape ? "equal" : "differ", rel, tol[d]);
        npy_free(&gpu);
    }
    npy_free(&cpu);
}

/* One standard cell at n = 64 under the environment set by the caller; its batch, or -1. */
static long long one_cell_batch(const char *scratch, const char *tag)
{
    char out[512];
    snprintf(out, sizeof out, "%s/oom-%s", scratch, tag);
    LbRun r = lb_run(ARGV("sweep", "--device", "cuda", TINY, "--n", "64", "--k", "16", "--cell-time", "1", "--headroom",
                          "0", "-q", "--out", out));
    LbCellResult *rows = NULL;
    size_t count = 0;
    const int read = sc_read_rows(out, &rows, &count) == 0 && count >= 1;
    const long long b = r.code == 0 && read && rows[0].status == LB_CELL_OK ? rows[0].batch : -1;
    printf("  %s: exit %d, standard n=64 at batch %lld\n%s", tag, r.code, b, b < 0 ? r.err : "");
    free(rows);
    lb_run_free(&r);
    return b;
}

/* The budget keeps the larger of 256 MiB and 1% of the device outside it (--headroom changes it);
 * a device with no more free memory than that says so in one line. */
static void check_headroom(const char *scratch)
{
    char out[512];
    snprintf(out, sizeof out, "%s/headroom", scratch);
    char *argv[] = {(char *)bin, "sweep", "--device", "cuda", TINY, "--n", "64", "--k", "16", "--max-batch", "1",
                    "--cell-time", "1", "-q", "--out", out, NULL};
    lb_run_ok(argv, "512 MiB emulated device");
    sc_check_meta(out, "memory_budget_bytes", "268435456", "512 MiB emulated device");
    sc_check_meta(out, "memory_headroom_bytes", "268435456", "512 MiB emulated device");
    setenv("LB_EMU_MEMORY", "200M", 1);
    snprintf(out, sizeof out, "%s/headroom-small", scratch);
    sc_expect(lb_run(argv), 1, 1, "200 MiB free under a 256 MiB headroom", "--headroom");
    unsetenv("LB_EMU_MEMORY");
}

/* A --mem-limit above the 512 MiB device's free memory less the 256 MiB headroom is refused as
 * --device cpu refuses one above the host's memory: exit 2, one line naming --mem-limit and the
 * most it may be, nothing on stdout, no directory; capped in silence, meta.csv would record a
 * limit the sweep never had. */
static void check_mem_limit(const char *scratch)
{
    char out[512];
    snprintf(out, sizeof out, "%s/mem-limit-1G", scratch);
#define SWEEP(limit)                                                                                                   \
    ARGV("sweep", "--device", "cuda", TINY, "--n", "64", "--k", "16", "--mem-limit", limit, "--max-batch", "1",          \
         "--cell-time", "1", "--no-check", "-q", "--out", out)
    lb_run_refused(ARGV("run", "--device", "cuda", TINY, "--n", "64", "--mem-limit", "1G", "--max-batch", "1", "--cell-time",
                        "1", "--no-check"),
                   "for --mem-limit: should be at most 256 MiB");
    lb_run_refused(SWEEP("1G"), "for --mem-limit: should be at most 256 MiB");
    lb_check(!lb_exists(out), "sweep --mem-limit 1G leaves no directory");
    /* within it: taken, and recorded as the budget */
    snprintf(out, sizeof out, "%s/mem-limit-64M", scratch);
    lb_run_ok(SWEEP("64M"), "sweep --mem-limit 64M");
#undef SWEEP
    sc_check_meta(out, "mem_limit", "67108864", "sweep --mem-limit 64M");
    sc_check_meta(out, "memory_budget_bytes", "67108864", "sweep --mem-limit 64M");
}

/* Hidden memory (LB_EMU_MEMORY_HIDDEN) and a cuBLAS allocation failure (LB_EMU_BLAS_ALLOC) step
 * the batch down to an ok cell. */
static void check_step_down(const char *scratch)
{
    /* 40 MiB: the 32 MiB cuBLAS workspace and about 8 MiB of model and activations. */
    setenv("LB_EMU_MEMORY", "40M", 1);
    const long long full = one_cell_batch(scratch, "all-memory");
    setenv("LB_EMU_MEMORY_HIDDEN", "2M", 1);
    const long long hidden = one_cell_batch(scratch, "hidden-2M");
    unsetenv("LB_EMU_MEMORY_HIDDEN");
    setenv("LB_EMU_BLAS_ALLOC", "1M", 1);
    const long long blas = one_cell_batch(scratch, "cublas-alloc-1M");
    unsetenv("LB_EMU_BLAS_ALLOC");
    unsetenv("LB_EMU_MEMORY");
    lb_check(full > 1, "the cell with all memory: batch %lld", full);
    lb_check(hidden > 0 && hidden < full, "memory cudaMalloc cannot have: batch %lld, want 0 < it < %lld", hidden, full);
    lb_check(blas > 0 && blas < full, "cuBLAS short of memory: batch %lld, want 0 < it < %lld", blas, full);
}

/* A budget too small to calibrate in: the calibration is skipped with its reason, never the sweep's
 * failure. */
static void check_calibration_budget(const char *scratch)
{
    const char *limits[] = {"16M", "32M"};
    for (int i = 0; i < 2; i++) {
        char out[512];
        snprintf(out, sizeof out, "%s/budget-%s", scratch, limits[i]);
        LbRun r = lb_run(ARGV("sweep", "--device", "cuda", "--layers", "2", "--d-model", "64", "--heads", "4", "--ffn",
                              "128", "--vocab", "500", "--n", "64,128", "--k", "16,32", "--mem-limit", (char *)limits[i],
                              "--cell-time", "1", "--out", out));
        lb_check(r.code == 0 && !strstr(r.err, "reps must be") && !strstr(r.err, "caps at least"),
                 "sweep --mem-limit %s on the emulator: exit %d\n%s", limits[i], r.code, r.err);
        lb_run_free(&r);
        sc_check_meta(out, "calibration", "skipped", limits[i]);
        sc_check_meta(out, "calibration_tflop_per_s", "", limits[i]);
        sc_check_meta_has(out, "calibration_note", "budget", limits[i]);
        lb_check(sc_rows(out) == 6, "--mem-limit %s: 6 rows (got %d)", limits[i], sc_rows(out));
        sc_files_parse(out, 1, limits[i]);
    }
}

/* sweep --gpus on three emulated GPUs (LB_EMU_DEVICES=3): nine cells, n = 32, 64, 128, the standard
 * model and k = 8, 16. */
#define GRID TINY, "--n", "32:128", "--k", "8,16", "--max-batch", "2", "--cell-time", "1", "--no-check"
#define CELLS 9

/* The one-GPU sweep into `one`, then --gpus all: the same cells, batches and bytes (not times). */
static void check_all(const char *scratch, const char *one)
{
    char dirn[512];
    snprintf(dirn, sizeof dirn, "%s/three", scratch);
    lb_run_ok(ARGV("sweep", "--device", "cuda", GRID, "-q", "--out", (char *)one), "one-GPU sweep");
    lb_check(sc_rows(one) == CELLS, "one-GPU sweep: %d rows: should be %d", sc_rows(one), CELLS);

    /* the progress lines name their GPU */
    sc_run_expect(ARGV("sweep", "--device", "cuda", "--gpus", "all", GRID, "--out", dirn), 0, -1, "[gpu 2]");
    sc_same_rows(dirn, one, 1, "--gpus all against one GPU");
    LbCellResult *got = NULL;
    size_t n = 0;
    sc_read_rows(dirn, &got, &n);
    /* the three GPUs' UUIDs, told apart; every row on one of them, with the host */
    int nu = 0;
    for (size_t i = 0; i < n; i++) {
        int known = 0;
        for (size_t j = 0; j < i; j++)
            known |= strcmp(got[j].device_uuid, got[i].device_uuid) == 0;
        nu += !known;
        lb_check(strncmp(got[i].device_uuid, "GPU-", 4) == 0 && strlen(got[i].device_uuid) == 40 && got[i].host[0],
                 "row %zu: device_uuid \"%s\" host \"%s\": should be GPU-xxxxxxxx-... and a host name", i,
                 got[i].device_uuid, got[i].host);
    }
    lb_check(nu >= 2, "%d distinct GPUs measured %zu cells: should be several", nu, n);
    free(got);
    sc_check_meta(dirn, "status", "complete", "--gpus all");
    sc_check_meta(dirn, "gpu_count", "3", "--gpus all");
    sc_check_meta_has(dirn, "matmul_tuning", "shapes timed", "--gpus all");
}

/* --breakdown on several GPUs: each shard calibrates its own GPU (one line each on stderr), meta.csv
 * records the first's, and every merged breakdown row that took time has its percentage of the
 * limit. */
static void check_breakdown(const char *scratch)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/breakdown", scratch);
    /* two GPUs and two cells: an emulated calibration takes some 15 s of CPU */
    sc_run_expect(ARGV("sweep", "--device", "cuda", "--gpus", "0,1", GRID, "--n", "32", "--k", "8", "--breakdown", "--out",
                       dir), 0, -1, "[gpu 0] calibration:", "[gpu 1] calibration:");
    const double tflops = sc_meta_number(dir, "calibration_tflop_per_s"), gbs = sc_meta_number(dir, "calibration_copy_gb_per_s");
    lb_check(tflops > 0 && gbs > 0, "meta.csv calibration_tflop_per_s %g, calibration_copy_gb_per_s %g", tflops, gbs);
    LbBreakdownRecord *recs = NULL;
    size_t count = 0, timed = 0, with_pct = 0;
    if (lb_check(lb_breakdown_read(dir, 0, &recs, &count) == LB_OK, "breakdown.csv reads back: %s", lb_error_message())) {
        for (size_t i = 0; i < count; i++)
            if (recs[i].ms > 0 && strcmp(recs[i].op, "overhead") != 0 && (recs[i].flops > 0 || recs[i].bytes > 0)) {
                timed++;
                with_pct += isfinite(recs[i].percent_of_limit) && recs[i].percent_of_limit > 0;
            }
        free(recs);
    }
    lb_check(timed > 0 && with_pct == timed, "%zu of %zu timed breakdown rows have percent_of_limit", with_pct, timed);
}

/* The whole --gpus sweep SIGKILLed in the middle, then --resume: every cell once. */
static void check_kill_resume(const char *scratch, const char *one)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/killed", scratch);
    char *argv[] = {(char *)bin, "sweep", "--device", "cuda", "--gpus", "0,1,2", GRID, "-q", "--out", dir, NULL};
    lb_child_group = 1; /* its shards join it, so one kill reaches the whole sweep */
    pid_t pid = lb_start_tagged(argv, "-kill");
    lb_child_group = 0;
    /* until some rows but not all are written in the shards, then SIGKILL to every process */
    int rows = 0;
    for (int i = 0; i < 600 && rows < 2; i++) {
        usleep(20 * 1000);
        rows = 0;
        for (int s = 0; s < 3; s++) {
            char part[600];
            snprintf(part, sizeof part, "%s/shard-%d", dir, s);
            rows += sc_rows(part);
        }
    }
    kill(-pid, SIGKILL);
    LbRun killed = lb_wait_tagged(pid, "-kill");
    lb_run_free(&killed);
    usleep(200 * 1000); /* the shards, reparented, are reaped by init */
    printf("  killed with %d of %d rows written\n", rows, CELLS);
    lb_check(rows >= 2 && rows < CELLS, "the kill came after %d rows: should be in the middle (2 to %d)", rows, CELLS - 1);
    lb_run_ok(ARGV("sweep", "--resume", dir, "--gpus", "all", "-q"), "--resume after the kill");
    sc_same_rows(dir, one, 1, "killed and resumed");
    sc_check_meta(dir, "status", "complete", "after the resume");
}

/* exit 2, one line on stderr containing `words`, no directory (flag and value: one more, or NULL) */
static void check_refused(const char *scratch, const char *tag, const char *gpus, const char *words, const char *flag,
                          const char *value)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/%s", scratch, tag);
    lb_check_refusal(lb_run(ARGV("sweep", "--device", "cuda", "--gpus", (char *)gpus, GRID, "--out", dir, (char *)flag,
                                 (char *)value)), tag, words);
    lb_check(!lb_exists(dir), "%s: nothing written", tag);
}

int main(int argc, char **argv)
{
    bin = lb_cli_start(argc, argv, "test_cli_emu");
    /* one emulated device with the default memory, of one model, whatever the caller's environment */
    unsetenv("LB_EMU_MEMORY");
    unsetenv("LB_EMU_DEVICES");
    unsetenv("LB_EMU_OTHER_MODEL");
    const char *scratch = lb_scratch;
    check_info();
    check_gpu_index(scratch);
    check_sweep(scratch);
    check_dump(scratch);
    check_headroom(scratch);
    check_mem_limit(scratch);
    check_step_down(scratch);
    check_calibration_budget(scratch);
    check_autotune(scratch);
    setenv("LB_EMU_DEVICES", "3", 1);
    char one[512];
    snprintf(one, sizeof one, "%s/one", scratch);
    check_all(scratch, one);
    check_kill_resume(scratch, one);
    check_breakdown(scratch);
    check_refused(scratch, "missing", "0,5", "no GPU 5", NULL, NULL);
    /* 512 MiB devices less the 256 MiB headroom: a 1 GiB limit is refused, not capped */
    check_refused(scratch, "mem-limit", "all", "for --mem-limit: should be at most 256 MiB", "--mem-limit", "1G");
    check_refused(scratch, "shard", "all", "--shard and --gpus cannot be used together", "--shard", "0/2");
    setenv("LB_EMU_OTHER_MODEL", "2", 1);
    check_refused(scratch, "two-models", "all", "one model", NULL, NULL);
    unsetenv("LB_EMU_OTHER_MODEL");
    return lb_test_finish("test_cli_emu");
}
