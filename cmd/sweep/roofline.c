/* The roofline (see predict.h): the cards, and one cell's predicted batch and time. */
#include "cmd/sweep/predict.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/plan.h"
#include "attn/base/sizes.h"
#include "attn/base/status.h"

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
    const double rates[] = {g->fp16_tflops, g->bf16_tflops, g->tf32_tflops, g->fp32_tflops};
    static const char *const kinds[] = {"fp16 tensor", "bf16 tensor", "TF32 tensor", "fp32"};
    const int i = dtype == LB_DTYPE_FP16 ? 0 : dtype == LB_DTYPE_BF16 ? 1 : tf32 ? 2 : 3;
    const double rate = rates[i];
    const char *kind = kinds[i];
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

/* A rate from 1e-12 to 1e12, the whole text: beyond, a pass's time rounds to 0 or overflows and the
 * predicted raw.csv would not read back. */
static int rate(const char *s, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !(v >= 1e-12 && v <= 1e12))
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
        if (which < 0 || have[which]++ || (which == 0 && rate(eq + 1, &c->tflops)) ||
            (which == 1 && rate(eq + 1, &c->bandwidth_gb_s)) ||
            (which == 2 && (lb_parse_size(eq + 1, &c->memory_bytes) ||
                            c->memory_bytes < (uint64_t)lb_settings[LB_SET_MEM_LIMIT].min))) /* mem=16 is no 16 GB card */
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
    snprintf(should, size, "tflops=T,bw=B,mem=SIZE, each once (T in TFLOP/s and B in GB/s, each from 1e-12 to 1e12; SIZE as --mem-limit takes it: at least 1M, such as 24G)");
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
    snprintf(out->energy_why, sizeof out->energy_why, "predicted: no energy model");
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
    /* a training step's FLOPs are its counted calls', as a measured step's are; a forward pass
     * keeps the formula of METHOD.md's "Work counted" */
    const double flops = cfg->pass == LB_PASS_TRAIN ? b->flops : lb_config_flops_per_seq(cfg) * (double)batch;
    out->tflop_per_s = flops / s / 1e12;
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
