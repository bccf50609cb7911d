/* linbench run: one cell (one model, one n, one k) measured as the sweep measures it, printed as
 * key: value lines; or with --dump, one forward pass (with --pass train, one step and its
 * gradients) written out as .npy files so a user can check linbench against their own framework. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/arena.h"
#include "attn/measure/breakdown.h"
#include "attn/measure/clock_events.h"
#include "attn/measure/measure.h"
#include "attn/model.h"
#include "attn/plan.h"
#include "attn/train.h"
#include "attn/base/sizes.h"
#include "attn/base/status.h"
#include "cmd/calibration.h"
#include "cmd/check.h"
#include "cmd/commands.h"
#include "cmd/options.h"
#include "cmd/outdir.h"
#include "reports/breakdown_csv.h"
#include "reports/dump.h"

static int dump(const LbRunSettings *o, LbBackend *be, uint64_t budget, int64_t batch, const char *dir)
{
    const LbPlanParams pp = {be->elem_bytes, be->alignment, be->workspace_bytes};
    LbPlan plan;
    int rc = lb_plan_compute(&o->model, &pp, batch, &plan);
    if (rc != LB_OK || plan.total > budget) {
        char need[32], have[32];
        lb_format_size(rc == LB_OK ? plan.total : 0, need, sizeof need);
        lb_format_size(budget, have, sizeof have);
        fprintf(stderr, "linbench: out of memory: batch %lld needs %s and the budget is %s\n", (long long)batch, need, have);
        return LB_EXIT_FAILURE;
    }
    LbArena arena;
    LbOnePass p = {0};
    const int step = o->model.pass == LB_PASS_TRAIN;
    if ((rc = lb_arena_open(&arena, be, plan.total)) != LB_OK)
        return lb_runtime_error(rc);
    /* The same model, inputs and seeds as the measured pass of this cell (attn/measure/measure.c). */
    rc = lb_one_pass_setup(&p, &o->model, be, &arena, batch, o->seed);
    if (rc == LB_OK)
        rc = lb_dump_write(dir, &p.model, &p.in, step ? &p.train : NULL, o);
    lb_one_pass_release(&p);
    lb_arena_close(&arena);
    if (rc != LB_OK)
        return lb_runtime_error(rc);
    printf("wrote the %s of %s n=%lld batch %lld to %s (index.csv lists the files, meta.csv the settings)\n",
           step ? "training step" : "forward pass", lb_model_name(o->model.kind), (long long)o->model.n,
           (long long)batch, dir);
    return LB_EXIT_OK;
}

/* --dump DIR is "a new or empty directory": the dump's names (output.npy, ids.npy ...) are the
 * ones a user's own framework writes, so a file already there is refused, not overwritten. Run with
 * DIR locked (the lock file is ours). 0, or LB_EXIT_USAGE after one line. */
static int dump_dir_empty(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0; /* the write probe just succeeded: the dump's own writes will say what is wrong */
    struct dirent *e;
    char held[256] = "";
    while (!held[0] && (e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 && strcmp(e->d_name, ".linbench.lock") != 0)
            snprintf(held, sizeof held, "%s", e->d_name);
    closedir(d);
    if (!held[0])
        return 0;
    return lb_usage_error("invalid argument \"%s\" for --dump: should be a new or empty directory, and it holds %s", dir,
                          held);
}

static void print_result(const LbRunSettings *o, const LbBackend *be, const LbCellResult *r, uint64_t budget)
{
    const int step = o->model.pass == LB_PASS_TRAIN;
    char b[32];
    lb_format_size(budget, b, sizeof b);
    printf("model: %s\nn: %lld\n", lb_model_name(r->model), (long long)r->n);
    if (lb_model_has_k(r->model))
        printf("k: %lld\n", (long long)r->k);
    /* the settings only some models read, as the model table lists them */
    if (lb_model_reads_flag(r->model, "sharing") == 1)
        printf("sharing: %s\n", lb_sharing_name(r->sharing));
    if (lb_model_reads_flag(r->model, "order") == 1)
        printf("order: %s\n", lb_order_name(r->order));
    if (lb_model_reads_flag(r->model, "k-schedule") == 1) {
        char sched[LB_LAYERS_MAX * 24];
        lb_kschedule_text(&o->model, sched, sizeof sched);
        printf("k schedule: %s (k per layer:", sched);
        for (int l = 0; l < o->model.layers; l++)
            printf("%s%lld", l ? "," : " ", (long long)lb_config_layer_k(&o->model, l));
        printf(")\n");
    }
    if (lb_model_reads_flag(r->model, "chunk") == 1)
        printf("chunk: %lld\n", (long long)o->model.chunk);
    printf("dtype: %s\npass: %s\nmemory budget: %s\nstatus: %s\n", lb_dtype_name(r->dtype),
           step ? "train" : "forward", b,
           r->status == LB_CELL_OK ? "ok" : r->error);
    if (r->status != LB_CELL_OK)
        return;
    printf("batch: %lld\nplanned bytes: %lld\npeak bytes: %lld\n", (long long)r->batch,
           (long long)r->planned_bytes, (long long)r->peak_bytes);
    printf("ms per %s: median %.4g, min %.4g, max %.4g over %d passes\n", step ? "step" : "forward", r->median_ms,
           r->min_ms, r->max_ms, r->passes);
    printf("ms per sequence: %.4g\ntokens per second: %.4g\n", r->ms_per_seq, r->tokens_per_s);
    printf("TFLOP/s: %.4g (%.4g GFLOP per sequence%s x batch / median time)\n", r->tflop_per_s,
           lb_measure_flops_per_seq(be, &o->model) / 1e9, step ? " of a step" : "");
    if (r->sm_clock_start_mhz > 0)
        printf("SM clock: %d -> %d MHz\n", r->sm_clock_start_mhz, r->sm_clock_end_mhz);
    char events[256];
    if (r->clock_events_known && lb_clock_events_text(r->clock_events, events, sizeof events) == 0)
        printf("clock events: %s%s\n", events, r->slowdown ? " (slowed: thermal or hardware slowdown)" : "");
    if (!isnan(r->energy_j_per_seq))
        printf("energy per sequence: %.4g J (mean power %.4g W over the timed passes)\n", r->energy_j_per_seq,
               r->power_w);
    else
        printf("energy per sequence: unknown (%s)\n", r->energy_why);
}

/* --breakdown: one traced pass at the measured batch (attn/measure/breakdown.h), printed as breakdown.csv's
 * rows would be, its percentages against cal (NULL: none). */
static int print_breakdown(const LbRunSettings *o, LbBackend *be, const LbCellResult *r, const LbCalibration *cal)
{
    LbBreakdownRecord *recs = NULL;
    size_t count = 0;
    const int rc = lb_breakdown_measure(be, &o->model, r->batch, o->seed, cal, &recs, &count);
    if (rc != LB_OK)
        return lb_runtime_error(rc);
    printf("breakdown: one more %s at batch %lld, every operation timed (docs/METHOD.md, \"Breakdown\")%s\n",
           o->model.pass == LB_PASS_TRAIN ? "step" : "pass", (long long)r->batch,
           cal ? "" : "; no calibration, so no percentages");
    lb_breakdown_print(stdout, recs, count);
    free(recs);
    return LB_EXIT_OK;
}

int lb_cmd_run(LbRunSettings *o, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    int rc;
    const char *dump_dir = o->cmd.dump;
    /* a model without a k axis has k 0, as its raw.csv row says */
    if (!lb_model_has_k(o->model.kind))
        o->model.k = 0;
    char msg[256];
    if (lb_run_settings_finish(o, msg, sizeof msg) != 0 || lb_config_check(&o->model, msg, sizeof msg) != LB_OK)
        return lb_usage_error("%s", msg);
    if ((rc = lb_options_check_host_memory(o)) != 0)
        return rc;
    lb_options_note_unread(o->given, 1u << o->model.kind);
    if (dump_dir && o->breakdown)
        return lb_usage_error("--breakdown times the operations of a measured cell and --dump writes one untimed "
                              "pass: give one of them");
    /* a measured run finds its own largest batch: --batch there would be dropped without a word */
    if (!dump_dir && (o->given >> LB_OPT_BATCH & 1))
        return lb_usage_error("--batch is the batch of the pass --dump writes, and a measured run takes its largest "
                              "batch: should be used with --dump DIR (--max-batch N caps a measured run's batch)");
    if (dump_dir && (rc = lb_outdir_prepare(dump_dir, 0, "--dump", 0)) != 0)
        return rc;
    if (dump_dir && (rc = dump_dir_empty(dump_dir)) != 0) {
        lb_outdir_abandon(); /* our lock file; the directory and what it held stay */
        return rc;
    }

    LbBackend *be = NULL;
    uint64_t budget = 0;
    if ((rc = lb_options_open_backend(o, &be, &budget)) != 0)
        goto out;
    /* A backend that gets its arithmetic wrong is not measured (linbench check --quick). */
    LbCheckResult check = {0};
    if (!o->cmd.no_check && (rc = lb_quick_check(be, &o->model, &check)) != 0)
        goto out;
    /* --breakdown's percentages: this device's limits, measured as a sweep measures them (even
     * under --no-check, as in a sweep) */
    LbCalibration calibration;
    char calibration_note[512] = "";
    int calibrated = 0;
    if (o->breakdown && (rc = lb_sweep_calibrate(be, budget, 0, &calibration, &calibrated, calibration_note,
                                                 sizeof calibration_note)) != 0)
        goto out;
    if (dump_dir) {
        rc = dump(o, be, budget, o->cmd.batch, dump_dir);
    } else {
        LbCellResult r;
        int mrc = lb_measure_cell(be, &o->model, budget, &o->timing, o->seed, NULL, &r);
        if (mrc != LB_OK) {
            rc = lb_runtime_error(mrc);
        } else {
            print_result(o, be, &r, budget);
            if (check.ran)
                printf("check result: passed (%zu checks, largest relative error %.3g)\n", check.checks, check.max_rel_error);
            else
                printf("check result: skipped (--no-check)\n");
            rc = r.status == LB_CELL_OK ? LB_EXIT_OK : LB_EXIT_FAILURE;
            if (rc == LB_EXIT_OK && o->breakdown)
                rc = print_breakdown(o, be, &r, calibrated ? &calibration : NULL);
        }
    }
out:
    if (rc != 0 && dump_dir)
        lb_outdir_abandon(); /* a dump that did not run leaves no empty folder */
    lb_backend_close(be);
    return rc;
}
