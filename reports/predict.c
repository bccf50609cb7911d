/* linbench predict's computation and its result directory (see predict.h). */
#define _POSIX_C_SOURCE 200809L

#include "reports/predict.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attn/plan.h"
#include "attn/sizes.h"
#include "attn/status.h"
#include "reports/breakdown.h"
#include "reports/sweep_engine.h"

LbPredictParams lb_predict_defaults(void)
{
    const LbPredictParams p = {LB_PREDICT_PRODUCT_EFFICIENCY, LB_PREDICT_COPY_EFFICIENCY, LB_PREDICT_LAUNCH_US};
    return p;
}

const LbGpuSpec *lb_gpu_spec_find(const char *name)
{
    for (size_t i = 0; name && i < lb_gpu_spec_count; i++)
        if (strcmp(lb_gpu_specs[i].name, name) == 0)
            return &lb_gpu_specs[i];
    return NULL;
}

const LbGpuSpec *lb_gpu_spec_for_device(const char *cuda_name)
{
    for (size_t i = 0; cuda_name && i < lb_gpu_spec_count; i++)
        if (lb_gpu_specs[i].cuda_name && strcmp(lb_gpu_specs[i].cuda_name, cuda_name) == 0)
            return &lb_gpu_specs[i];
    return NULL;
}

void lb_gpu_spec_names(char *buf, size_t size)
{
    size_t used = 0;
    if (size)
        buf[0] = '\0';
    for (size_t i = 0; i < lb_gpu_spec_count && used < size; i++) {
        int len = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", lb_gpu_specs[i].name);
        used += len > 0 ? (size_t)len : 0;
    }
}

int lb_predict_card_from_spec(const LbGpuSpec *g, LbDtype dtype, int tf32, LbPredictCard *c, char *why,
                              size_t size)
{
    memset(c, 0, sizeof *c);
    double rate = 0;
    const char *kind = "";
    if (dtype == LB_DTYPE_FP16) {
        rate = g->fp16_tflops;
        kind = "fp16 tensor";
    } else if (dtype == LB_DTYPE_BF16) {
        rate = g->bf16_tflops;
        kind = "bf16 tensor";
    } else if (tf32) {
        rate = g->tf32_tflops;
        kind = "TF32 tensor";
    } else {
        rate = g->fp32_tflops;
        kind = "fp32";
    }
    if (!(rate > 0)) {
        snprintf(why, size, "the %s has no %s products in its datasheet", g->label, kind);
        return -1;
    }
    snprintf(c->name, sizeof c->name, "%s", g->name);
    snprintf(c->label, sizeof c->label, "%s", g->label);
    c->tflops = rate;
    snprintf(c->rate_kind, sizeof c->rate_kind, "%s", kind);
    c->bandwidth_gb_s = g->bandwidth_gb_s;
    c->memory_bytes = (uint64_t)(g->memory_gib * 1073741824.0);
    snprintf(c->source, sizeof c->source, "%s", g->source);
    return 0;
}

/* A positive finite number, the whole text. */
static int positive(const char *s, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v) || !(v > 0))
        return -1;
    *out = v;
    return 0;
}

int lb_predict_card_parse(const char *text, LbPredictCard *c, char *should, size_t size)
{
    memset(c, 0, sizeof *c);
    int have[3] = {0, 0, 0};
    for (const char *p = text; *p;) {
        const size_t len = strcspn(p, ",");
        char field[128], *eq;
        if (len == 0 || len >= sizeof field)
            goto bad;
        memcpy(field, p, len);
        field[len] = '\0';
        p += len + (p[len] == ',');
        if (!(eq = strchr(field, '=')))
            goto bad;
        *eq = '\0';
        const int which = strcmp(field, "tflops") == 0 ? 0 : strcmp(field, "bw") == 0 ? 1 : strcmp(field, "mem") == 0 ? 2 : -1;
        if (which < 0 || have[which]++ || (which == 0 && positive(eq + 1, &c->tflops)) ||
            (which == 1 && positive(eq + 1, &c->bandwidth_gb_s)) ||
            (which == 2 && (lb_parse_size(eq + 1, &c->memory_bytes) || c->memory_bytes == 0)))
            goto bad;
    }
    if (!have[0] || !have[1] || !have[2])
        goto bad;
    char mem[32];
    lb_format_size(c->memory_bytes, mem, sizeof mem);
    snprintf(c->name, sizeof c->name, "spec");
    snprintf(c->label, sizeof c->label, "card of --spec %.6g TFLOP/s, %.6g GB/s, %s", c->tflops, c->bandwidth_gb_s, mem);
    snprintf(c->rate_kind, sizeof c->rate_kind, "--spec");
    snprintf(c->source, sizeof c->source, "--spec");
    return 0;
bad:
    snprintf(should, size, "tflops=T,bw=B,mem=SIZE, each once and positive (T in TFLOP/s, B in GB/s, SIZE as --mem-limit takes it)");
    return -1;
}

typedef struct CostCtx {
    const LbPredictCard *card;
    const LbPredictParams *params;
} CostCtx;

/* One call's time, ms. */
static double call_cost(void *ctx, double flops, double bytes)
{
    const LbPredictCard *c = ((const CostCtx *)ctx)->card;
    const LbPredictParams *p = ((const CostCtx *)ctx)->params;
    const double flop_ms = flops / (c->tflops * 1e12 * p->product_efficiency) * 1e3;
    const double byte_ms = bytes / (c->bandwidth_gb_s * 1e9 * p->copy_efficiency) * 1e3;
    return (flop_ms > byte_ms ? flop_ms : byte_ms) + p->launch_us * 1e-3;
}

int lb_predict_cell(const LbModelConfig *cfg, const LbPredictCard *c, const LbPredictParams *p, uint64_t budget,
                    int64_t max_batch, LbCellResult *out, LbBreakdown *bd)
{
    lb_cell_result_init(out, cfg);
    snprintf(out->energy_why, sizeof out->energy_why, "%s", LB_PREDICT_ENERGY_WHY);
    /* the sweep's own plan, with the parameters the CUDA backend opens with */
    const LbPlanParams pp = lb_plan_params_cuda(cfg->dtype);
    const int64_t batch = lb_plan_largest_batch(cfg, &pp, (size_t)budget, max_batch);
    LbPlan plan;
    if (batch == 0) {
        out->status = LB_CELL_OOM;
        snprintf(out->error, sizeof out->error, "OOM");
        if (lb_plan_compute(cfg, &pp, 1, &plan) == LB_OK) /* what one sequence would need */
            out->planned_bytes = (int64_t)plan.total;
        return LB_OK;
    }
    LB_TRY(lb_plan_compute(cfg, &pp, batch, &plan));
    LbBreakdown local, *b = bd ? bd : &local;
    const CostCtx ctx = {c, p};
    LB_TRY(lb_breakdown_count(cfg, &pp, batch, call_cost, (void *)&ctx, b));
    const double ms = b->pass_ms, s = ms * 1e-3;
    out->batch = batch;
    out->planned_bytes = out->peak_bytes = (int64_t)plan.total; /* the plan is the arena's high-water mark */
    out->median_ms = out->min_ms = out->max_ms = ms;
    out->ms_per_seq = ms / (double)batch;
    out->tokens_per_s = (double)batch * (double)cfg->n / s;
    out->tflop_per_s = lb_config_flops_per_seq(cfg) * (double)batch / s / 1e12;
    out->passes = 0; /* none ran */
    out->status = LB_CELL_OK;
    snprintf(out->error, sizeof out->error, "ok");
    return LB_OK;
}

uint64_t lb_predict_budget(const LbRunSettings *s, const LbPredictCard *c)
{
    const uint64_t headroom = lb_run_settings_headroom(s, c->memory_bytes);
    uint64_t budget = c->memory_bytes > headroom ? c->memory_bytes - headroom : 0;
    if (s->mem_limit && s->mem_limit < budget)
        budget = s->mem_limit;
    return budget;
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) * 1e-9;
}

int lb_predict_run(const LbPredictJob *job, LbGrid *grid, double *sweep_s)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const LbRunSettings *s = job->settings;
    const LbPredictCard *card = job->card;
    const uint64_t budget = lb_predict_budget(s, card);
    LbSweepCell *cells = NULL;
    LbCellResult *rows = NULL;
    LbBreakdownRecord *recs = NULL;
    size_t ncells = 0, nrecs = 0;
    LbMeta extra;
    memset(&extra, 0, sizeof extra);
    *sweep_s = 0;
    int rc = lb_sweep_cells(s, &cells, &ncells);
    if (rc == LB_OK && !(rows = calloc(ncells ? ncells : 1, sizeof *rows)))
        rc = LB_FAIL(LB_ERR_NOMEM, "out of memory predicting %zu cells", ncells);
    /* breakdown.csv's percent_of_limit: the predicted time against the datasheet's roofline */
    LbCalibration nominal;
    memset(&nominal, 0, sizeof nominal);
    nominal.tflop_per_s = card->tflops;
    nominal.copy_gb_per_s = card->bandwidth_gb_s;
    for (size_t i = 0; rc == LB_OK && i < ncells; i++) {
        const LbModelConfig cfg = lb_sweep_cell_config(s, &cells[i]);
        LbBreakdown bd;
        rc = lb_predict_cell(&cfg, card, job->params, budget, s->timing.max_batch, &rows[i], &bd);
        if (rc != LB_OK || rows[i].status != LB_CELL_OK)
            continue;
        *sweep_s += (1.0 + s->timing.min_passes) * rows[i].median_ms * 1e-3;
        LbBreakdownRecord *cell_recs = NULL;
        size_t cell_count = 0;
        rc = lb_breakdown_records(cfg.kind, cfg.n, cfg.k, &bd, &nominal, &cell_recs, &cell_count);
        if (rc != LB_OK)
            break;
        LbBreakdownRecord *grown = realloc(recs, (nrecs + cell_count) * sizeof *recs);
        if (!grown) {
            free(cell_recs);
            rc = LB_FAIL(LB_ERR_NOMEM, "out of memory for the predicted breakdown");
            break;
        }
        recs = grown;
        memcpy(recs + nrecs, cell_recs, cell_count * sizeof *recs);
        nrecs += cell_count;
        free(cell_recs);
    }
    const double predict_s = seconds_since(&t0);
    /* meta.csv: what this is (source predicted), the card, and every parameter of the formula */
#define PUT(key, ...)                                    \
    do {                                                 \
        if (rc == LB_OK)                                 \
            rc = lb_meta_set(&extra, key, __VA_ARGS__);  \
    } while (0)
    PUT(LB_META_SOURCE, "%s", LB_SOURCE_PREDICTED);
    PUT("predict_gpu", "%s", card->name);
    PUT("predict_card", "%s", card->label);
    PUT("predict_card_source", "%s", card->source);
    PUT("predict_rate", "%s", card->rate_kind);
    PUT("predict_product_tflop_per_s", "%.6g", card->tflops);
    PUT("predict_bandwidth_gb_per_s", "%.6g", card->bandwidth_gb_s);
    PUT("predict_memory_bytes", "%llu", (unsigned long long)card->memory_bytes);
    PUT("predict_product_efficiency", "%.6g", job->params->product_efficiency);
    PUT("predict_copy_efficiency", "%.6g", job->params->copy_efficiency);
    PUT("predict_launch_us", "%.6g", job->params->launch_us);
    PUT("predict_formula", "%s",
        "ms of a pass = sum over its calls of max(flops / (product_tflop_per_s x product_efficiency), bytes / (bandwidth_gb_per_s x copy_efficiency)) + launch_us");
    PUT("predict_sweep_seconds", "%.6g", *sweep_s);
    PUT("predict_wall_ms", "%.6g", predict_s * 1e3);
#undef PUT
    if (rc == LB_OK) {
        LbSweepDevice dev;
        lb_sweep_device_describe(NULL, &dev); /* nothing known but what the card says */
        dev.info.total_bytes = (int64_t)card->memory_bytes;
        snprintf(dev.info.name, sizeof dev.info.name, "predicted: %.80s (roofline, not a measurement)", card->label);
        dev.storage = s->model.dtype;
        const LbSweepJob sj = {
            s, job->dir, 0, NULL, job->command_line, budget, {0, 0, 0.0, 0}, NULL, NULL,
            NULL, "predicted: nothing was measured",
        };
        rc = lb_sweep_write_rows(&sj, &dev, rows, ncells, &extra, grid);
        if (rc == LB_OK && nrecs > 0 && (rc = lb_breakdown_write(job->dir, recs, nrecs)) != LB_OK)
            lb_grid_free(grid);
    }
    lb_meta_free(&extra);
    free(cells);
    free(rows);
    free(recs);
    return rc;
}
