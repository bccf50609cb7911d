/* `linbench check` end to end, and the quick check sweep and run do before measuring; under
 * LB_EMU_CORRUPT=OP (the emulated build's switch: OP writes one wrong element) check and sweep
 * fail naming OP (softmax, then layernorm, so the name comes from the failing op).
 * Usage: test_cli_check PATH-TO-LINBENCH cpu|cuda (cuda: the emulated GPU, suite gpu-emu). */
#include <math.h>
#include <stdlib.h>

#include "attn/attention.h"
#include "attn/base/sizes.h"
#include "reports/settings.h"
#include "tests/cli/sweep_check.h"

static const char *bin, *device;
/* linbench's argv: ARGV("check", "--device", device) */
#define ARGV(...) LB_ARGV((char *)bin, __VA_ARGS__)

#define TINY "--layers", "1", "--d-model", "32", "--heads", "2", "--ffn", "64", "--vocab", "100"

static const char *const ops[] = {"linear",      "bmm",         "softmax",      "layernorm",   "embed",
                                  "split_heads", "merge_heads", "fill_uniform", "fill_tokens", "copy",
                                  "gelu",        "favor_features", "divide_by_last", "flash_attention", "pool_seq",
                                  "depthwise_conv_seq", "add", "column_sums", "gelu_backward", "softmax_backward",
                                  "layernorm_backward", "embed_backward", "pool_seq_backward",
                                  "depthwise_conv_seq_backward", "favor_features_backward", "divide_by_last_backward",
                                  "flash_attention_backward", "flash_attention_lse",
                                  "forward"};
#define NOPS (int)(sizeof ops / sizeof ops[0])

typedef struct Rows {
    int total, failed;
    int op_ok[NOPS], op_failed[NOPS]; /* op_ok[NOPS - 1]: the forward rows */
} Rows;
/* The op rows of one dtype's full check: the full shapes of attn/check.c's table; on the CPU
 * backend those of the ops with a naive reference apart from its own (linear, bmm, softmax,
 * layernorm, gelu): the others would compare an op with itself. */
#define OP_ROWS 261
#define OP_ROWS_CPU 68
static int naive(const char *op)
{
    return !strcmp(op, "linear") || !strcmp(op, "bmm") || !strcmp(op, "softmax") || !strcmp(op, "layernorm") ||
           !strcmp(op, "gelu");
}

/* The rows of check's table: the lines after the "operation" header up to the blank line. */
static Rows parse_rows(const char *out)
{
    Rows r = {0};
    const char *p = strstr(out, "\noperation ");
    for (p = p ? strchr(p + 1, '\n') : NULL; p && p[1] && p[1] != '\n'; p = strchr(p + 1, '\n')) {
        const size_t len = strcspn(p + 1, "\n");
        char line[512], op[32] = "", dtype[16] = "";
        snprintf(line, sizeof line, "%.*s", (int)len, p + 1);
        if (sscanf(line, "%31s %15s", op, dtype) == 2) {
            const int ok = len >= 2 && strncmp(p + 1 + len - 2, "ok", 2) == 0 && !strstr(line, "FAIL");
            r.total++;
            r.failed += !ok;
            for (int i = 0; i < NOPS; i++)
                if (strcmp(op, ops[i]) == 0) {
                    r.op_ok[i] += ok;
                    r.op_failed[i] += !ok;
                }
        }
    }
    return r;
}

/* check passes, an ok row for every op after an environment block (cuda: and a forward of every
 * model variant in every dtype, and at --k-schedule halve). */
static void check_passes(void)
{
    LbRun r = lb_run(ARGV("check", "--device", (char *)device));
    Rows rows = parse_rows(r.out);
    lb_check(r.code == 0, "check --device %s: exit %d\n%s%s", device, r.code, r.out, r.err);
    lb_check(strstr(r.out, "environment") && strstr(r.out, "seed"), "check prints an environment block:\n%s", r.out);
    /* one dtype's op rows (attn/check.c's full list): fp32 on cpu, fp32, fp16 and bf16 on cuda */
    const int cuda = strcmp(device, "cuda") == 0, want = cuda ? 3 * OP_ROWS : OP_ROWS_CPU;
    lb_check(rows.total - rows.op_ok[NOPS - 1] == want && rows.failed == 0,
             "check --device %s: %d rows (%d forward), %d failed; want %d op rows", device, rows.total, rows.op_ok[NOPS - 1],
             rows.failed, want);
    for (int i = 0; i < NOPS - 1; i++)
        lb_check(cuda || naive(ops[i]) ? rows.op_ok[i] > 0 : rows.op_ok[i] + rows.op_failed[i] == 0,
                 "check --device %s: %d ok rows for %s", device, rows.op_ok[i], ops[i]);
    if (strcmp(device, "cuda") == 0) {
        /* every variant of every model in the table, and each model that reads --k-schedule
         * once more at halve, in fp32, fp16 and bf16 */
        int variants = 0, scheduled = 0;
        for (int m = 0; m < LB_MODEL_COUNT; m++) {
            variants += lb_model_desc((LbModelKind)m)->variants;
            scheduled += lb_model_reads_flag((LbModelKind)m, "k-schedule") == 1;
        }
        lb_check(rows.op_ok[NOPS - 1] == 3 * (variants + scheduled), "check --device cuda: %d ok forward rows, should be %d",
                 rows.op_ok[NOPS - 1], 3 * (variants + scheduled));
        int halve = 0;
        for (const char *p = strstr(r.out, "(halve) L 3"); p; p = strstr(p + 1, "(halve) L 3"))
            halve++;
        lb_check(scheduled > 0 && halve == 3 * scheduled, "check --device cuda: %d forward rows at --k-schedule halve, "
                 "should be %d", halve, 3 * scheduled);
        lb_check(strstr(r.out, "compute capability") && strstr(r.out, "native sm_90") && strstr(r.out, "persistence mode"),
                 "check's environment names the capability, the code it runs, persistence:\n%s", r.out);
        lb_check(strstr(r.out, "softmax        fp32") && strstr(r.out, "softmax        fp16") &&
                     strstr(r.out, "softmax        bf16"),
                 "check --device cuda has fp32, fp16 and bf16 rows");
    } else {
        lb_check(rows.op_ok[NOPS - 1] == 0, "check --device cpu has no forward rows (the CPU forward is the reference)");
        /* the CPU reference's budget, as --help and the README give it for --device cpu */
        char budget[64], want[256];
        lb_format_size(LB_CPU_DEFAULT_MEM, budget, sizeof budget);
        snprintf(want, sizeof want, "%s total, %s free (the CPU reference's budget)", budget, budget);
        lb_check(strstr(r.out, want) != NULL, "check --device cpu's memory line should say \"%s\":\n%.600s", want, r.out);
    }
    lb_run_free(&r);
}

/* LB_EMU_CORRUPT=op: exit 1, op named on stderr, every FAIL row among the ops is op's. */
static void check_corrupted(const char *op)
{
    setenv("LB_EMU_CORRUPT", op, 1);
    LbRun r = lb_run(ARGV("check", "--device", "cuda", "--dtype", "fp16", "--quick"));
    unsetenv("LB_EMU_CORRUPT");
    Rows rows = parse_rows(r.out);
    sc_expect(r, 1, -1, "check under LB_EMU_CORRUPT", op, "failed");
    for (int i = 0; i < NOPS - 1; i++) {
        const int corrupted = strcmp(ops[i], op) == 0;
        lb_check(corrupted ? rows.op_failed[i] > 0 : rows.op_failed[i] == 0, "LB_EMU_CORRUPT=%s: %d FAIL rows for %s",
                 op, rows.op_failed[i], ops[i]);
    }
}

/* A sweep's quick check: failing, nothing measured unless --no-check; meta.csv records the verdict. */
static void check_sweep(const char *scratch, const char *tag, const char *corrupt, int no_check)
{
    char out[512];
    snprintf(out, sizeof out, "%s/sweep-%s", scratch, tag);
    if (corrupt)
        setenv("LB_EMU_CORRUPT", corrupt, 1);
    LbRun r = lb_run(ARGV("sweep", "--device", (char *)device, TINY, "--n", "64", "--k", "16", "--max-batch", "2",
                          "--cell-time", "1", "-q", "--out", out, no_check ? "--no-check" : NULL));
    unsetenv("LB_EMU_CORRUPT");
    if (corrupt && !no_check) {
        sc_expect(r, 1, -1, tag, "nothing was measured", corrupt);
        lb_check(!lb_exists(out), "sweep %s leaves no result directory", tag);
        return;
    }
    sc_expect(r, 0, -1, tag);
    lb_check(sc_rows(out) == 2, "sweep %s measured both cells", tag);
    sc_check_meta(out, "check", no_check ? "skipped" : "passed", tag);
    if (no_check) {
        sc_check_meta(out, "check_max_rel_error", "", tag);
    } else {
        const double e = sc_meta_number(out, "check_max_rel_error");
        lb_check(e >= 0.0 && e < 3e-2, "sweep %s: check_max_rel_error %g", tag, e);
    }
}

/* A resume of sweep-TAG (no_check: under --no-check): meta.csv's check stays skipped where any
 * run's cells were measured without one, so that passed means every row's backend was checked. */
static void check_resumed(const char *scratch, const char *tag, int no_check)
{
    char out[512];
    snprintf(out, sizeof out, "%s/sweep-%s", scratch, tag);
    lb_run_ok(ARGV("sweep", "--resume", out, "-q", no_check ? "--no-check" : NULL), "resume of a sweep");
    sc_check_meta(out, "check", "skipped", no_check ? "resume with --no-check" : "resume");
}

/* run argv: exit 0 and a check line; the number of checks the line gives, or -1. */
static long run_checks(char *const argv[])
{
    LbRun r = lb_run(argv);
    const long checks = (long)lb_number_after(r.out, "check result: passed (");
    lb_check(r.code == 0 && checks >= 0, "%s prints its check: exit %d\n%s%s", lb_argv_text(argv), r.code, r.out, r.err);
    lb_run_free(&r);
    return checks;
}

static void check_run(void)
{
    const long uniform = run_checks(ARGV("run", "--device", (char *)device, TINY, "--n", "64", "--max-batch", "2",
                                         "--cell-time", "1"));
    if (strcmp(device, "cuda") != 0)
        return;
    /* A Linformer with a k per layer: the quick check runs a forward of layers of different k
     * for each model that reads --k-schedule, as the sweep would measure them. */
    const long halve = run_checks(ARGV("run", "--device", "cuda", "--model", "linformer", TINY, "--n", "64", "--k", "16",
                                       "--layers", "3", "--k-schedule", "halve", "--max-batch", "2", "--cell-time", "1"));
    int scheduled = 0;
    for (int m = 0; m < LB_MODEL_COUNT; m++)
        scheduled += lb_model_reads_flag((LbModelKind)m, "k-schedule") == 1;
    lb_check(halve == uniform + scheduled, "run --k-schedule halve: its quick check has %d forward more than %ld: %ld",
             scheduled, uniform, halve);
    /* A training run's quick check adds the standard model's and the Linformer's steps. */
    const long train = run_checks(ARGV("run", "--device", "cuda", "--pass", "train", TINY, "--n", "64", "--max-batch", "2",
                                       "--cell-time", "1"));
    lb_check(train == uniform + 2, "run --pass train: its quick check has 2 training steps more than %ld: %ld", uniform,
             train);
}

/* check --pass train: a train row per model (quick: 2) on cuda, ok; none on the CPU, whose step
 * is the reference. */
static void check_train(void)
{
    LbRun r = lb_run(ARGV("check", "--device", (char *)device, "--pass", "train", "--quick", "--dtype", "fp32"));
    int rows = 0;
    for (const char *p = strstr(r.out, "\ntrain "); p; p = strstr(p + 1, "\ntrain ")) {
        const char *end = strchr(p + 1, '\n');
        rows += end && end - p > 3 && strncmp(end - 2, "ok", 2) == 0;
    }
    const int want = strcmp(device, "cuda") == 0 ? 2 : 0;
    lb_check(r.code == 0 && rows == want, "check --pass train --quick on %s: exit %d, %d ok train rows, want %d\n%s%s",
             device, r.code, rows, want, r.out, r.err);
    lb_run_free(&r);
}

int main(int argc, char **argv)
{
    bin = lb_cli_start(argc, argv, "test_cli_check");
    device = argc > 2 && strcmp(argv[2], "cuda") == 0 ? "cuda" : "cpu";
    const char *scratch = lb_scratch;
    unsetenv("LB_EMU_CORRUPT");
    unsetenv("LB_EMU_MEMORY");
    check_passes();
    check_sweep(scratch, "checked", NULL, 0);
    check_sweep(scratch, "no-check", NULL, 1);
    check_resumed(scratch, "no-check", 0);
    check_resumed(scratch, "checked", 1);
    check_run();
    check_train();
    if (strcmp(device, "cuda") == 0) {
        check_corrupted("softmax");
        check_corrupted("layernorm");
        check_sweep(scratch, "corrupt", "softmax", 0);
        check_sweep(scratch, "corrupt-no-check", "softmax", 1);
    } else { /* (an unknown flag or an operand: test_cli_settings, for every command) */
        lb_run_refused(ARGV("check", "--dtype", "fp8"), "--dtype");
        lb_run_refused(ARGV("check", "--device", "tpu"), "--device");
    }
    return lb_test_finish("test_cli_check");
}
