/* sweep --gpus end to end on three emulated GPUs (LB_EMU_DEVICES=3): --gpus all equals a one-GPU
 * sweep cell for cell, each row naming its GPU and host; the whole sweep SIGKILLed in the middle,
 * then --resume, measures every cell once; --breakdown calibrates each GPU; bad --gpus, GPUs of two
 * models, a --mem-limit above their room and --shard are refused (exit 2, nothing written).
 * Usage: test_cli_gpus PATH-TO-LINBENCH-ON-THE-EMULATOR */
#include <math.h>
#include <stdlib.h>

#include "attn/base/status.h"
#include "reports/breakdown_csv.h"
#include "tests/cli/emu_cli.h"
#include "tests/lib/check.h"
#include "tests/lib/spawn.h"

static const char *bin;

/* Tiny: the emulator is slow. Nine cells: n = 32, 64, 128, the standard model and k = 8, 16. */
#define TINY LB_EMU_TINY_MODEL, "--n", "32:128", "--k", "8,16", "--max-batch", "2", "--cell-time", "1", "--no-check"
#define CELLS 9

/* The one-GPU sweep into `one`, then --gpus all: the same cells, batches and bytes (not times). */
static void check_all(const char *scratch, const char *one)
{
    char dirn[512];
    snprintf(dirn, sizeof dirn, "%s/three", scratch);
    char *a1[] = {(char *)bin, "sweep", "--device", "cuda", TINY, "-q", "--out", (char *)one, NULL};
    lb_run_ok(a1, "one-GPU sweep");
    lb_check(sc_rows(one) == CELLS, "one-GPU sweep: %d rows: should be %d", sc_rows(one), CELLS);

    char *an[] = {(char *)bin, "sweep", "--device", "cuda", "--gpus", "all", TINY, "--out", dirn, NULL};
    LbRun r = lb_run(an);
    lb_check(r.code == 0, "--gpus all on 3 emulated GPUs: exit %d\n%s", r.code, r.err);
    lb_check(strstr(r.err, "[gpu 2]") != NULL, "progress lines name their GPU:\n%s", r.err);
    lb_run_free(&r);
    sc_same_rows(dirn, one, 1, "--gpus all against one GPU");
    LbCellResult *got = NULL;
    size_t n = 0;
    sc_read_rows(dirn, &got, &n);
    /* the three GPUs' UUIDs, told apart; every row on one of them, with the host */
    const char *uuids[3];
    int nu = 0;
    for (size_t i = 0; i < n; i++) {
        int known = 0;
        for (int u = 0; u < nu; u++)
            known |= strcmp(uuids[u], got[i].device_uuid) == 0;
        lb_check(strncmp(got[i].device_uuid, "GPU-", 4) == 0 && strlen(got[i].device_uuid) == 40 && got[i].host[0],
                 "row %zu: device_uuid \"%s\" host \"%s\": should be GPU-xxxxxxxx-... and a host name", i,
                 got[i].device_uuid, got[i].host);
        if (!known && nu < 3)
            uuids[nu++] = got[i].device_uuid;
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
    char *argv[] = {(char *)bin, "sweep", "--device", "cuda", "--gpus", "0,1", TINY, "--n", "32", "--k", "8", "--breakdown",
                    "--out", dir, NULL};
    LbRun r = lb_run(argv);
    lb_check(r.code == 0, "--gpus 0,1 --breakdown: exit %d\n%s", r.code, r.err);
    lb_check(strstr(r.err, "[gpu 0] calibration:") && strstr(r.err, "[gpu 1] calibration:"),
             "a calibration line per GPU:\n%s", r.err);
    lb_run_free(&r);
    const double tflops = sc_meta_number(dir, "calibration_tflop_per_s"), gbs = sc_meta_number(dir, "calibration_copy_gb_per_s");
    lb_check(tflops > 0 && gbs > 0, "meta.csv calibration_tflop_per_s %g, calibration_copy_gb_per_s %g", tflops, gbs);
    LbBreakdownRecord *recs = NULL;
    size_t count = 0, timed = 0, with_pct = 0;
    if (lb_check(lb_breakdown_read(dir, 0, &recs, &count) == LB_OK, "breakdown.csv reads back: %s", lb_error_message())) {
        for (size_t i = 0; i < count; i++) {
            if (recs[i].ms > 0 && strcmp(recs[i].op, "overhead") != 0 && (recs[i].flops > 0 || recs[i].bytes > 0)) {
                timed++;
                with_pct += isfinite(recs[i].percent_of_limit) && recs[i].percent_of_limit > 0;
            }
        }
        free(recs);
    }
    lb_check(timed > 0 && with_pct == timed, "%zu of %zu timed breakdown rows have percent_of_limit", with_pct, timed);
}

static void check_kill_resume(const char *scratch, const char *one)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/killed", scratch);
    char *argv[] = {(char *)bin, "sweep", "--device", "cuda", "--gpus", "0,1,2", TINY, "-q", "--out", dir, NULL};
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
    char *resume[] = {(char *)bin, "sweep", "--resume", dir, "--gpus", "all", "-q", NULL};
    lb_run_ok(resume, "--resume after the kill");
    sc_same_rows(dir, one, 1, "killed and resumed");
    sc_check_meta(dir, "status", "complete", "after the resume");
}

/* exit 2, one line on stderr containing `words`, no directory (flag and value: one more, or NULL) */
static void check_refused(const char *scratch, const char *tag, const char *gpus, const char *words, const char *flag,
                          const char *value)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/%s", scratch, tag);
    char *argv[] = {(char *)bin, "sweep",    "--device", "cuda",        "--gpus",       (char *)gpus, TINY,
                    "--out",     dir,        (char *)flag, (char *)value, NULL};
    lb_check_refusal(lb_run(argv), tag, words);
    lb_check(!lb_exists(dir), "%s: nothing written", tag);
}

int main(int argc, char **argv)
{
    bin = lb_emu_cli_start(argc, argv, "test_cli_gpus");
    const char *scratch = lb_scratch;
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
    return lb_test_finish("test_cli_gpus");
}
