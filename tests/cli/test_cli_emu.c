/* `--device cuda` end to end on the emulated GPU (gpu/emu), suite gpu-emu: info names the device
 * as emulated; a tiny sweep completes; run --dump equals --device cpu's within the dtype's
 * tolerance (fp32 1e-5, fp16 1e-2 relative); hidden memory (LB_EMU_MEMORY_HIDDEN) and a cuBLAS
 * allocation failure (LB_EMU_BLAS_ALLOC) step the batch down to an ok cell; a --mem-limit past
 * free memory is exit 2; a budget too small to calibrate does not fail the sweep; meta.csv
 * records linear's tuning, and a resume with --no-autotune is refused.
 * Usage: test_cli_emu PATH-TO-LINBENCH-ON-THE-EMULATOR */
#include <math.h>
#include <stdlib.h>

#include "tests/cli/emu_cli.h"
#include "tests/lib/check.h"
#include "tests/lib/spawn.h"
#include "tests/reports/npy_read.h"

static const char *bin;

#define TINY LB_EMU_TINY_MODEL

static void check_info(void)
{
    char *argv[] = {(char *)bin, "info", NULL};
    LbRun r = lb_run(argv);
    lb_check(r.code == 0 && strstr(r.out, "EMULATED") && strstr(r.out, "emulated GPU"),
             "info on the emulator: exit %d, output:\n%s", r.code, r.out);
    /* the emulator has no clocks (nor has a GPU whose NVML cannot be loaded): unknown, never -1 */
    lb_check(!strstr(r.out, "-1") && strstr(r.out, "SM unknown now, unknown max; memory unknown"),
             "info says the clocks it cannot read are unknown:\n%s", r.out);
    lb_run_free(&r);
}

/* A --gpu the machine does not have (the emulator has one GPU) is bad input: exit 2, one line
 * naming --gpu and its range, nothing on stdout, no directory left. */
static void check_gpu_index(const char *scratch)
{
    char out[512];
    snprintf(out, sizeof out, "%s/gpu-5", scratch);
    char *run[] = {(char *)bin, "run", "--gpu", "5", TINY, "--n", "64", NULL};
    char *sweep[] = {(char *)bin, "sweep", "--gpu", "5", TINY, "--n", "64", "--k", "16", "-q", "--out", out, NULL};
    char *check[] = {(char *)bin, "check", "--gpu", "5", "--quick", NULL};
    char *info[] = {(char *)bin, "info", "--gpu", "5", NULL};
    char **cases[] = {run, sweep, check, info};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        lb_run_refused(cases[i], "for --gpu", "0 to 0");
    lb_check(!lb_exists(out), "sweep --gpu 5 leaves no directory");
}

static void check_sweep(const char *scratch)
{
    char out[512];
    snprintf(out, sizeof out, "%s/sweep", scratch);
    char *argv[] = {(char *)bin, "sweep", "--device", "cuda", TINY, "--n", "64:128", "--k", "16:32",
                    "--max-batch", "2", "--cell-time", "1", "-q", "--out", out, NULL};
    LbRun r = lb_run(argv);
    lb_check(r.code == 0, "sweep --device cuda on the emulator: exit %d\n%s", r.code, r.err);
    sc_check_meta_has(out, "device_name", "emulated", "sweep --device cuda on the emulator");
    sc_check_meta(out, "status", "complete", "sweep --device cuda on the emulator");
    sc_each_once(out, 6, "sweep --device cuda on the emulator");
    lb_run_free(&r);
}

static void check_autotune(const char *scratch)
{
    char on[512], off[512];
    snprintf(on, sizeof on, "%s/autotune-on", scratch);
    snprintf(off, sizeof off, "%s/autotune-off", scratch);
    setenv("LB_EMU_LT_SLOW_ALGO", "0", 1); /* the heuristic's first 5 ms slower a call */
#define AUTOTUNE_SWEEP(dir)                                                                              \
    (char *)bin, "sweep", "--device", "cuda", TINY, "--n", "64", "--models", "standard", "--max-batch", "1", \
        "--cell-time", "1", "--no-check", "-q", "--out", dir
    char *argv[] = {AUTOTUNE_SWEEP(on), NULL};
    lb_run_ok(argv, "sweep with autotuning");
    char *tuning = lb_emu_meta_value(on, "matmul_tuning");
    long long shapes = -1, kept = -1;
    sc_check_meta(on, "matmul_autotune", "on", "sweep with autotuning");
    lb_check(sscanf(tuning, "%lld shapes timed, %lld kept", &shapes, &kept) == 2 && shapes > 0 && kept == 0 &&
                 strstr(tuning, "emulated") && !strstr(tuning, " ms"),
             "meta.csv matmul_tuning \"%s\": shapes timed, none kept the slow first, no GPU time", tuning);
    free(tuning);

    char *before = lb_slurp_in(on, "meta.csv");
    char *resume[] = {(char *)bin, "sweep", "--resume", on, "--no-autotune", "-q", NULL};
    LbRun r = lb_run(resume);
    lb_check(r.code == 2 && strstr(r.err, "--no-autotune") && strstr(r.err, "matmul_autotune") && lb_lines(r.err) == 1,
             "--resume --no-autotune of a tuned sweep: exit 2, one line naming the flag and the key (%d): %s", r.code,
             r.err);
    lb_check(lb_same_text(before, lb_slurp_in(on, "meta.csv")), "and meta.csv is left as it was");
    lb_run_free(&r);

    char *argv_off[] = {AUTOTUNE_SWEEP(off), "--no-autotune", NULL};
#undef AUTOTUNE_SWEEP
    lb_run_ok(argv_off, "sweep --no-autotune");
    tuning = lb_emu_meta_value(off, "matmul_tuning");
    sc_check_meta(off, "matmul_autotune", "off", "sweep --no-autotune");
    lb_check(strncmp(tuning, "off", 3) == 0, "meta.csv matmul_tuning \"%s\" says off", tuning);
    free(tuning);
    unsetenv("LB_EMU_LT_SLOW_ALGO");
}

/* output.npy of run --dump on `device` with `dtype` into scratch/dump-<device>-<dtype>. */
static int dump(const char *scratch, const char *device, const char *dtype, NpyFile *f)
{
    char dir[512], file[600];
    snprintf(dir, sizeof dir, "%s/dump-%s-%s", scratch, device, dtype);
    char *argv[] = {(char *)bin, "run", "--device", (char *)device, "--dtype", (char *)dtype, TINY,
                    "--n", "64", "--k", "16", "--model", "linformer", "--batch", "2", "--dump", dir, NULL};
    LbRun r = lb_run(argv);
    const int code = r.code;
    if (code != 0)
        printf("run --dump on %s %s: exit %d\n%s", device, dtype, code, r.err);
    lb_run_free(&r);
    snprintf(file, sizeof file, "%s/output.npy", dir);
    return code == 0 ? npy_read(file, f) : -1;
}

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
    char *argv[] = {(char *)bin, "sweep", "--device", "cuda", TINY, "--n", "64", "--k", "16",
                    "--cell-time", "1", "--headroom", "0", "-q", "--out", out, NULL};
    LbRun r = lb_run(argv);
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
    LbRun r = lb_run(argv);
    lb_check(r.code == 0, "512 MiB emulated device: exit %d", r.code);
    sc_check_meta(out, "memory_budget_bytes", "268435456", "512 MiB emulated device");
    sc_check_meta(out, "memory_headroom_bytes", "268435456", "512 MiB emulated device");
    lb_run_free(&r);
    setenv("LB_EMU_MEMORY", "200M", 1);
    snprintf(out, sizeof out, "%s/headroom-small", scratch);
    r = lb_run(argv);
    unsetenv("LB_EMU_MEMORY");
    lb_check(r.code == 1 && strstr(r.err, "--headroom") && strchr(r.err, '\n') == strrchr(r.err, '\n'),
             "200 MiB free under a 256 MiB headroom: exit %d, stderr %s", r.code, r.err);
    lb_run_free(&r);
}

/* A --mem-limit above the 512 MiB device's free memory less the 256 MiB headroom is refused as
 * --device cpu refuses one above the host's memory: exit 2, one line naming --mem-limit and the
 * most it may be, nothing on stdout, no directory; capped in silence, meta.csv would record a
 * limit the sweep never had. */
static void check_mem_limit(const char *scratch)
{
    char out[512];
    snprintf(out, sizeof out, "%s/mem-limit-1G", scratch);
    char *run[] = {(char *)bin, "run", "--device", "cuda", TINY, "--n", "64", "--mem-limit", "1G", "--max-batch", "1",
                   "--cell-time", "1", "--no-check", NULL};
    char *sweep[] = {(char *)bin, "sweep", "--device", "cuda", TINY, "--n", "64", "--k", "16", "--mem-limit", "1G",
                     "--max-batch", "1", "--cell-time", "1", "--no-check", "-q", "--out", out, NULL};
    char **cases[] = {run, sweep};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        lb_run_refused(cases[i], "for --mem-limit: should be at most 256 MiB");
    lb_check(!lb_exists(out), "sweep --mem-limit 1G leaves no directory");
    /* within it: taken, and recorded as the budget */
    snprintf(out, sizeof out, "%s/mem-limit-64M", scratch); /* sweep's --out points at it */
    for (char **a = sweep; *a; a++)
        if (strcmp(*a, "1G") == 0)
            *a = "64M";
    LbRun r = lb_run(sweep);
    lb_check(r.code == 0, "sweep --mem-limit 64M: exit %d\n%s", r.code, r.err);
    sc_check_meta(out, "mem_limit", "67108864", "sweep --mem-limit 64M");
    sc_check_meta(out, "memory_budget_bytes", "67108864", "sweep --mem-limit 64M");
    lb_run_free(&r);
}

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

/* Issue 23's sweep: the calibration is skipped with its reason, never the sweep's failure. */
static void check_calibration_budget(const char *scratch)
{
    const char *limits[] = {"16M", "32M"};
    for (int i = 0; i < 2; i++) {
        char out[512];
        snprintf(out, sizeof out, "%s/budget-%s", scratch, limits[i]);
        char *argv[] = {(char *)bin, "sweep", "--device", "cuda", "--layers", "2", "--d-model", "64", "--heads", "4",
                        "--ffn", "128", "--vocab", "500", "--n", "64,128", "--k", "16,32", "--mem-limit",
                        (char *)limits[i], "--cell-time", "1", "--out", out, NULL};
        LbRun r = lb_run(argv);
        lb_check(r.code == 0 && !strstr(r.err, "reps must be") && !strstr(r.err, "caps at least"),
                 "sweep --mem-limit %s on the emulator: exit %d\n%s", limits[i], r.code, r.err);
        lb_run_free(&r);
        sc_check_meta(out, "calibration", "skipped", limits[i]);
        sc_check_meta(out, "calibration_tflop_per_s", "", limits[i]);
        sc_check_meta_has(out, "calibration_note", "budget", limits[i]);
        LbCellResult *rows = NULL;
        size_t count = 0;
        lb_check(sc_read_rows(out, &rows, &count) == 0 && count == 6, "--mem-limit %s: raw.csv parses, 6 rows (got %zu)",
                 limits[i], count);
        free(rows);
    }
}

int main(int argc, char **argv)
{
    bin = lb_emu_cli_start(argc, argv, "test_cli_emu");
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
    return lb_test_finish("test_cli_emu");
}
