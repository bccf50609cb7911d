/* Measuring one cell (measure.h). The batch is probed by allocation only, never by a kernel fault. */
#define _POSIX_C_SOURCE 200809L

#include "attn/measure/measure.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attn/arena.h"
#include "attn/measure/breakdown.h"
#include "attn/measure/clock_events.h"
#include "attn/model.h"
#include "attn/plan.h"
#include "attn/train.h"
#include "attn/base/status.h"

LbTimingOptions lb_timing_defaults(void)
{
    return (LbTimingOptions){.min_passes = 5, .max_passes = 50, .cap_seconds = 10.0, .settle = 0.02};
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void lb_stats_summary(double *v, int count, double *median, double *min, double *max)
{
    qsort(v, (size_t)count, sizeof *v, cmp_double);
    *min = v[0];
    *max = v[count - 1];
    *median = count % 2 ? v[count / 2] : 0.5 * (v[count / 2 - 1] + v[count / 2]);
}

/* Settled when the interquartile range is within `settle` of the median. */
static int settled(const double *times, int count, double settle)
{
    double *v = malloc((size_t)count * sizeof *v);
    if (!v)
        return 1;
    memcpy(v, times, (size_t)count * sizeof *v);
    double med, lo, hi;
    lb_stats_summary(v, count, &med, &lo, &hi);
    double q1 = v[(count - 1) / 4], q3 = v[(3 * (count - 1) + 3) / 4];
    free(v);
    return med > 0 && (q3 - q1) / med <= settle;
}

static size_t plan_total(const LbModelConfig *cfg, const LbPlanParams *pp, int64_t B)
{
    LbPlan plan;
    return lb_plan_compute(cfg, pp, B, &plan) == LB_OK ? plan.total : SIZE_MAX;
}

/* Largest B in [1, B0] whose arena allocates, leaving that arena open in *a. 0 when none. */
static int64_t allocate_largest(LbBackend *be, const LbModelConfig *cfg, const LbPlanParams *pp,
                                int64_t B0, LbArena *a, int *rc)
{
    *rc = lb_arena_open(a, be, plan_total(cfg, pp, B0));
    if (*rc == LB_OK)
        return B0;
    if (*rc != LB_ERR_NOMEM)
        return 0;
    int64_t good = 0, bad = B0;
    while (bad - good > 1) {
        int64_t mid = good + (bad - good) / 2;
        LbArena probe;
        *rc = lb_arena_open(&probe, be, plan_total(cfg, pp, mid));
        if (*rc == LB_OK) {
            lb_arena_close(&probe);
            good = mid;
        } else if (*rc == LB_ERR_NOMEM) {
            bad = mid;
        } else {
            return 0;
        }
    }
    *rc = good ? lb_arena_open(a, be, plan_total(cfg, pp, good)) : LB_ERR_NOMEM;
    return *rc == LB_OK ? good : 0;
}

static void set_error(LbCellResult *out, int rc)
{
    out->status = LB_CELL_ERROR;
    snprintf(out->error, sizeof out->error, "%s", rc == LB_OK ? "unknown error" : lb_error_message());
}

/* Not even batch 1 fits the budget (or the device): the cell's OOM. */
static int oom(LbCellResult *out, const LbModelConfig *cfg, const LbPlanParams *pp)
{
    out->status = LB_CELL_OOM;
    out->planned_bytes = (int64_t)plan_total(cfg, pp, 1);
    snprintf(out->error, sizeof out->error, "OOM");
    return LB_OK;
}

/* CLOCK_MONOTONIC in seconds: the span the energy counter's two readings cover. */
static double host_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double lb_measure_flops_per_seq(const LbBackend *be, const LbModelConfig *cfg)
{
    if (cfg->pass != LB_PASS_TRAIN)
        return lb_config_flops_per_seq(cfg);
    const LbPlanParams pp = {be->elem_bytes, be->alignment, be->workspace_bytes};
    LbBreakdown b;
    if (lb_breakdown_count(cfg, &pp, 1, NULL, NULL, &b) != LB_OK) {
        lb_error_clear();
        return NAN;
    }
    return b.flops;
}

void lb_cell_result_init(LbCellResult *out, const LbModelConfig *cfg)
{
    memset(out, 0, sizeof *out);
    out->model = cfg->kind;
    out->n = cfg->n;
    out->k = lb_model_has_k(cfg->kind) ? cfg->k : 0;
    out->sharing = cfg->sharing;
    out->order = cfg->order;
    out->dtype = cfg->dtype;
    out->sm_clock_start_mhz = out->sm_clock_end_mhz = -1;
    out->power_w = out->energy_j_per_seq = NAN;
}

int lb_measure_cell(LbBackend *be, const LbModelConfig *cfg, size_t budget,
                    const LbTimingOptions *opt, uint64_t seed, const volatile sig_atomic_t *stop,
                    LbCellResult *out)
{
    lb_cell_result_init(out, cfg);

    const LbPlanParams pp = {be->elem_bytes, be->alignment, be->workspace_bytes};
    int64_t B = lb_plan_largest_batch(cfg, &pp, budget, opt->max_batch);
    if (B == 0)
        return oom(out, cfg, &pp);

    LbArena arena;
    LbOnePass pass = {0};
    double *times = NULL;
    int rc = LB_OK;
    for (;;) {
        if (stop && *stop)
            return LB_ERR_INTERRUPTED;
        B = allocate_largest(be, cfg, &pp, B, &arena, &rc);
        if (B == 0) {
            if (rc == LB_ERR_NOMEM)
                return oom(out, cfg, &pp);
            set_error(out, rc);
            return rc;
        }
        /* The arena holds exactly the plan: a NOMEM from inside it is a plan bug, not OOM. The
         * set-up's pass is the verification and warm-up: every product shape's first use, where the
         * CUDA backend times cuBLASLt's candidate algorithms, is here, so no timed pass times it. */
        rc = lb_one_pass_setup(&pass, cfg, be, &arena, B, seed);
        if (rc == LB_OK)
            break;
        if (rc == LB_ERR_NOMEM && !arena.overflowed && B > 1) {
            /* The device ran short outside the arena (a library's own allocation): step down. */
            lb_one_pass_release(&pass);
            lb_arena_close(&arena);
            B = B - 1 - (B - 1) / 8;
            continue;
        }
        if (arena.overflowed) {
            char cause[512];
            snprintf(cause, sizeof cause, "%s", lb_error_message());
            rc = LB_FAIL(LB_ERR_INVALID, "memory plan too small for %s n=%lld batch %lld: %s",
                         lb_model_name(cfg->kind), (long long)cfg->n, (long long)B, cause);
        }
        goto fail;
    }
    out->batch = B;
    out->planned_bytes = (int64_t)arena.capacity;

    times = malloc((size_t)opt->max_passes * sizeof *times);
    if (!times) {
        rc = LB_FAIL(LB_ERR_NOMEM, "out of host memory for timings");
        goto fail;
    }
    out->sm_clock_start_mhz = be->ops->sm_clock_mhz(be);
    double joules0 = 0, joules1 = 0;
    const int energy_rc = be->ops->energy_j(be, &joules0);
    if (energy_rc != LB_OK)
        snprintf(out->energy_why, sizeof out->energy_why, "%s", lb_error_message());
    const double host0 = host_seconds();
    double timed_ms = 0;
    int passes = 0;
    while (passes < opt->max_passes) {
        if (stop && *stop) {
            rc = LB_ERR_INTERRUPTED;
            goto fail;
        }
        double ms = 0;
        if ((rc = be->ops->timer_start(be)) != LB_OK || (rc = lb_one_pass_run(&pass)) != LB_OK ||
            (rc = be->ops->timer_stop(be, &ms)) != LB_OK)
            goto fail;
        times[passes++] = ms;
        uint64_t reasons = 0;
        if (be->ops->clock_events(be, &reasons) == LB_OK) {
            out->clock_events_known = 1;
            out->clock_events |= reasons;
        }
        timed_ms += ms;
        if (passes >= opt->min_passes &&
            (timed_ms >= opt->cap_seconds * 1000.0 || settled(times, passes, opt->settle)))
            break;
    }
    out->sm_clock_end_mhz = be->ops->sm_clock_mhz(be);
    const double host_s = host_seconds() - host0;
    if (energy_rc == LB_OK) {
        if (be->ops->energy_j(be, &joules1) != LB_OK)
            snprintf(out->energy_why, sizeof out->energy_why, "%s", lb_error_message());
        else if (!(joules1 > joules0) || !(host_s > 0))
            snprintf(out->energy_why, sizeof out->energy_why,
                     "the energy counter did not advance over the %.3g s of timed passes", host_s);
        else
            out->power_w = (joules1 - joules0) / host_s;
    }
    /* Flagged by the reasons, not by the clock's fall: a GPU under tensor-core load routinely holds
     * well below its boost clock without any fault. */
    out->slowdown = (out->clock_events & LB_CLOCK_EVENTS_SLOWDOWN) != 0;
    out->passes = passes;
    out->peak_bytes = (int64_t)arena.high_water;
    lb_stats_summary(times, passes, &out->median_ms, &out->min_ms, &out->max_ms);
    out->ms_per_seq = out->median_ms / (double)B;
    if (!isnan(out->power_w))
        out->energy_j_per_seq = out->power_w * out->median_ms / 1000.0 / (double)B;
    if (out->median_ms > 0) {
        double seconds = out->median_ms / 1000.0;
        out->tokens_per_s = (double)B * (double)cfg->n / seconds;
        out->tflop_per_s = lb_measure_flops_per_seq(be, cfg) * (double)B / seconds / 1e12;
    }
    out->status = LB_CELL_OK;
    snprintf(out->error, sizeof out->error, "ok");
fail:
    if (rc != LB_OK && rc != LB_ERR_INTERRUPTED)
        set_error(out, rc);
    free(times);
    lb_one_pass_release(&pass);
    lb_arena_close(&arena);
    return rc;
}
