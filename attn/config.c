/* Model configuration: defaults, validation, names, and the FLOP count of METHOD.md. */
#include "attn/config.h"

#include <stdio.h>
#include <string.h>

#include "attn/status.h"

LbModelConfig lb_config_default(void)
{
    LbModelConfig c;
    memset(&c, 0, sizeof c);
    c.kind = LB_MODEL_STANDARD;
    c.layers = 12;
    c.d_model = 768;
    c.heads = 12;
    c.ffn = 3072;
    c.vocab = 50265;
    c.n = 512;
    c.k = 128;
    c.chunk = LB_CHUNK_DEFAULT;
    c.sharing = LB_SHARE_LAYERWISE;
    c.order = LB_ORDER_EARLY;
    c.dtype = LB_DTYPE_FP16;
    return c;
}

int lb_config_check(const LbModelConfig *c, char *msg, size_t msg_size)
{
#define LB_BAD(...) (snprintf(msg, msg_size, __VA_ARGS__), LB_ERR_INVALID)
    if (c->layers < 1 || c->layers > LB_LAYERS_MAX)
        return LB_BAD("--layers %d is out of range: should be 1 to %d", c->layers, LB_LAYERS_MAX);
    if (c->d_model < 1 || c->d_model > LB_DMODEL_MAX)
        return LB_BAD("--d-model %d is out of range: should be 1 to %d", c->d_model, LB_DMODEL_MAX);
    if (c->heads < 1 || c->heads > LB_HEADS_MAX)
        return LB_BAD("--heads %d is out of range: should be 1 to %d", c->heads, LB_HEADS_MAX);
    if (c->d_model % c->heads != 0)
        return LB_BAD("--d-model %d is not divisible by --heads %d: should be a multiple of the head count",
                      c->d_model, c->heads);
    if (c->ffn < 1 || c->ffn > LB_FFN_MAX)
        return LB_BAD("--ffn %d is out of range: should be 1 to %d", c->ffn, LB_FFN_MAX);
    if (c->vocab < 1 || c->vocab > LB_VOCAB_MAX)
        return LB_BAD("--vocab %d is out of range: should be 1 to %d", c->vocab, LB_VOCAB_MAX);
    if (c->n < LB_N_MIN || c->n > LB_N_MAX)
        return LB_BAD("--n %lld is out of range: should be %d to %d", (long long)c->n, LB_N_MIN, LB_N_MAX);
    if (c->kind == LB_MODEL_LINFORMER) {
        if (c->k < LB_K_MIN || c->k > c->n)
            return LB_BAD("--k %lld is out of range for n %lld: should be %d to n", (long long)c->k,
                          (long long)c->n, LB_K_MIN);
        if (c->sharing == LB_SHARE_NONE && c->order == LB_ORDER_EARLY)
            return LB_BAD("--sharing none cannot run with --order early: per-head projections need --order late");
    }
    return LB_OK;
#undef LB_BAD
}

int64_t lb_config_head_dim(const LbModelConfig *c) { return c->d_model / c->heads; }

int64_t lb_config_projection_count(const LbModelConfig *c)
{
    if (c->kind != LB_MODEL_LINFORMER)
        return 0;
    switch (c->sharing) {
    case LB_SHARE_LAYERWISE: return 1;
    case LB_SHARE_KV: return c->layers;
    case LB_SHARE_HEADWISE: return 2 * (int64_t)c->layers;
    case LB_SHARE_NONE: return 2 * (int64_t)c->layers * c->heads;
    }
    return 0;
}

int lb_config_separate_kv_projection(const LbModelConfig *c)
{
    return c->sharing == LB_SHARE_HEADWISE || c->sharing == LB_SHARE_NONE;
}

/* Per layer per sequence, multiply-add = 2 (METHOD.md):
 *   linear layers 2 n (4 d^2 + 2 d f); early order: keys and values on k rows instead of n;
 *   standard attention 4 n^2 d; Linformer attention 4 n k d plus the compression: 4 n k d
 *   (keys and values each compressed), or 2 n k d when early order compresses X once. */
double lb_config_flops_per_seq(const LbModelConfig *c)
{
    double n = (double)c->n, k = (double)c->k, d = c->d_model, f = c->ffn;
    double per_layer;
    if (c->kind == LB_MODEL_STANDARD) {
        per_layer = 2 * n * (4 * d * d + 2 * d * f) + 4 * n * n * d;
    } else if (c->order == LB_ORDER_EARLY) {
        double compress = lb_config_separate_kv_projection(c) ? 4 * n * k * d : 2 * n * k * d;
        per_layer = 2 * n * (2 * d * d + 2 * d * f) + 2 * k * (2 * d * d) + 4 * n * k * d + compress;
    } else {
        per_layer = 2 * n * (4 * d * d + 2 * d * f) + 4 * n * k * d + 4 * n * k * d;
    }
    return per_layer * c->layers;
}

static const char *const dtype_names[] = {"fp16", "bf16", "fp32"};
static const char *const model_names[] = {"standard", "linformer"};
static const char *const sharing_names[] = {"layerwise", "kv", "headwise", "none"};
static const char *const order_names[] = {"early", "late"};

const char *lb_dtype_name(LbDtype d) { return (unsigned)d < 3 ? dtype_names[d] : "?"; }
const char *lb_model_name(LbModelKind m) { return (unsigned)m < LB_MODEL_COUNT ? model_names[m] : "?"; }
int lb_model_has_k(LbModelKind m) { return m == LB_MODEL_LINFORMER; }
const char *lb_model_k_meaning(LbModelKind m) { return m == LB_MODEL_LINFORMER ? "projected length" : ""; }
int lb_model_cell_exists(LbModelKind m, int64_t n, int64_t k) { return m != LB_MODEL_LINFORMER || k < n; }
const char *lb_sharing_name(LbSharing s) { return (unsigned)s < 4 ? sharing_names[s] : "?"; }
const char *lb_order_name(LbOrder o) { return (unsigned)o < 2 ? order_names[o] : "?"; }

static int parse_name(const char *s, const char *const *names, int count, int *out)
{
    for (int i = 0; i < count; i++) {
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return 0;
        }
    }
    return -1;
}

int lb_dtype_parse(const char *s, LbDtype *out)
{
    int v;
    if (parse_name(s, dtype_names, 3, &v))
        return -1;
    *out = (LbDtype)v;
    return 0;
}

int lb_model_parse(const char *s, LbModelKind *out)
{
    int v;
    if (parse_name(s, model_names, LB_MODEL_COUNT, &v))
        return -1;
    *out = (LbModelKind)v;
    return 0;
}

int lb_sharing_parse(const char *s, LbSharing *out)
{
    int v;
    if (parse_name(s, sharing_names, 4, &v))
        return -1;
    *out = (LbSharing)v;
    return 0;
}

int lb_order_parse(const char *s, LbOrder *out)
{
    int v;
    if (parse_name(s, order_names, 2, &v))
        return -1;
    *out = (LbOrder)v;
    return 0;
}
