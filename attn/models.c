/* The model table (attn/attention.h): one line per model, in LbModelKind order. */
#include <stdio.h>

#include "attn/attention.h"

extern const LbModelDesc lb_model_standard, lb_model_linformer, lb_model_chunked, lb_model_performer,
    lb_model_flash, lb_model_linformer_mean, lb_model_linformer_max, lb_model_linformer_conv;

static const LbModelDesc *const models[LB_MODEL_COUNT] = {
    [LB_MODEL_STANDARD] = &lb_model_standard,
    [LB_MODEL_LINFORMER] = &lb_model_linformer,
    [LB_MODEL_CHUNKED] = &lb_model_chunked,
    [LB_MODEL_PERFORMER] = &lb_model_performer,
    [LB_MODEL_FLASH] = &lb_model_flash,
    [LB_MODEL_LINFORMER_MEAN] = &lb_model_linformer_mean,
    [LB_MODEL_LINFORMER_MAX] = &lb_model_linformer_max,
    [LB_MODEL_LINFORMER_CONV] = &lb_model_linformer_conv,
};

const LbModelDesc *lb_model_desc(LbModelKind m) { return (unsigned)m < LB_MODEL_COUNT ? models[m] : NULL; }

LbModelConfig lb_model_variant(LbModelKind m, int i, LbModelConfig cfg)
{
    const LbModelDesc *d = lb_model_desc(m);
    cfg.kind = m;
    if (d && d->variant && i >= 0 && i < d->variants)
        d->variant(i, &cfg);
    return cfg;
}

void lb_model_describe(const LbModelConfig *cfg, char *buf, size_t size)
{
    const LbModelDesc *d = lb_model_desc(cfg->kind);
    if (d && d->describe)
        d->describe(cfg, buf, size);
    else
        snprintf(buf, size, "%s", d ? d->name : "?");
}
