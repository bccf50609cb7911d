/* Model configuration: defaults, validation, names, and the FLOP count of METHOD.md. */
#include "attn/config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/attention.h"
#include "attn/base/status.h"

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
    if (c->k_schedule == LB_KSCHED_LIST && c->k_factors != c->layers)
        return LB_BAD("--k-schedule has %d factor%s for --layers %d: should be one factor per layer", c->k_factors,
                      c->k_factors == 1 ? "" : "s", c->layers);
    const LbModelDesc *m = lb_model_desc(c->kind);
    if (!m)
        return LB_BAD("--model %d is not a model: should be one of the model table's", (int)c->kind);
    return m->check ? m->check(c, msg, msg_size) : LB_OK;
#undef LB_BAD
}

int64_t lb_config_head_dim(const LbModelConfig *c) { return c->d_model / c->heads; }

int64_t lb_config_layer_k(const LbModelConfig *c, int layer)
{
    double f = 1.0;
    if (c->k_schedule == LB_KSCHED_HALVE && c->layers > 0) {
        const int third = (int)((int64_t)layer * 3 / c->layers); /* 0, 1, 2 */
        f = third == 0 ? 1.0 : third == 1 ? 0.5 : 0.25;
    } else if (c->k_schedule == LB_KSCHED_LIST && layer >= 0 && layer < c->k_factors) {
        f = c->k_factor[layer];
    }
    if (layer == 0 || f >= 1.0)
        return c->k;
    /* up to a multiple of the step, never above the cell's k */
    int64_t k = (int64_t)ceil((double)c->k * f - 1e-9);
    k = (k + LB_KSCHED_STEP - 1) / LB_KSCHED_STEP * LB_KSCHED_STEP;
    return k < c->k ? k : c->k;
}

int lb_kschedule_parse(const char *t, LbModelConfig *c, char *should, size_t size)
{
    if (strcmp(t, "uniform") == 0 || strcmp(t, "halve") == 0) {
        c->k_schedule = t[0] == 'u' ? LB_KSCHED_UNIFORM : LB_KSCHED_HALVE;
        c->k_factors = 0;
        return 0;
    }
    int count = 0;
    for (const char *p = t;;) {
        char *end = NULL;
        const double f = strtod(p, &end);
        if (end == p || !(f > 0.0 && f <= 1.0) || (*end != ',' && *end != '\0') || count == LB_LAYERS_MAX) {
            snprintf(should, size, "uniform, halve, or a comma list of one factor in (0, 1] per layer, up to %d",
                     LB_LAYERS_MAX);
            return -1;
        }
        c->k_factor[count++] = f;
        if (*end == '\0')
            break;
        p = end + 1;
    }
    c->k_schedule = LB_KSCHED_LIST;
    c->k_factors = count;
    return 0;
}

void lb_kschedule_text(const LbModelConfig *c, char *buf, size_t size)
{
    if (c->k_schedule != LB_KSCHED_LIST) {
        snprintf(buf, size, "%s", c->k_schedule == LB_KSCHED_HALVE ? "halve" : "uniform");
        return;
    }
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < c->k_factors && used < size; i++) {
        const int len = snprintf(buf + used, size - used, "%s%.15g", i ? "," : "", c->k_factor[i]);
        used += len > 0 ? (size_t)len : 0;
    }
}

/* Per layer per sequence, multiply-add = 2 (METHOD.md): the feed-forward block 2 n (2 d f), and
 * the model's attention block (attn/model_*.c). */
double lb_config_flops_per_seq(const LbModelConfig *c)
{
    const LbModelDesc *m = lb_model_desc(c->kind);
    const double n = (double)c->n, d = c->d_model, f = c->ffn;
    const double per_layer = 2 * n * (2 * d * f) + (m ? m->flops_per_layer(c) : 0.0);
    return per_layer * c->layers;
}

static const char *const dtype_names[] = {"fp16", "bf16", "fp32"};
static const char *const sharing_names[] = {"layerwise", "kv", "headwise", "none"};
static const char *const order_names[] = {"early", "late"};

const char *lb_dtype_name(LbDtype d) { return (unsigned)d < 3 ? dtype_names[d] : "?"; }

const char *lb_model_name(LbModelKind m)
{
    const LbModelDesc *d = lb_model_desc(m);
    return d ? d->name : "?";
}

int lb_model_has_k(LbModelKind m)
{
    const LbModelDesc *d = lb_model_desc(m);
    return d && d->k_meaning != NULL;
}

int lb_model_baseline(LbModelKind m)
{
    const LbModelDesc *d = lb_model_desc(m);
    return d ? d->baseline : 0;
}

const char *lb_model_k_meaning(LbModelKind m)
{
    const LbModelDesc *d = lb_model_desc(m);
    return d && d->k_meaning ? d->k_meaning : "";
}

const char *lb_model_k_range(LbModelKind m)
{
    const LbModelDesc *d = lb_model_desc(m);
    return d && d->k_meaning && d->k_range ? d->k_range : "";
}

/* Whether `flag` is a word of the space-separated `list`. */
static int listed(const char *list, const char *flag)
{
    const size_t len = strlen(flag);
    for (const char *p = list; p && *p;) {
        const size_t word = strcspn(p, " ");
        if (word == len && strncmp(p, flag, len) == 0)
            return 1;
        p += word + (p[word] == ' ');
    }
    return 0;
}

static int reads(const LbModelDesc *d, const char *flag)
{
    return strcmp(flag, "k") == 0 ? d->k_meaning != NULL : listed(d->own_flags, flag);
}

int lb_model_reads_flag(LbModelKind m, const char *flag)
{
    int owned = 0;
    for (int i = 0; i < LB_MODEL_COUNT; i++)
        owned |= reads(lb_model_desc((LbModelKind)i), flag);
    const LbModelDesc *d = lb_model_desc(m);
    return !owned ? -1 : d && reads(d, flag);
}

int lb_model_cell_exists(LbModelKind m, int64_t n, int64_t k)
{
    const LbModelDesc *d = lb_model_desc(m);
    if (!d)
        return 0;
    return d->cell_exists ? d->cell_exists(n, d->k_meaning ? k : 0) : 1;
}
const char *lb_model_skip_reason(LbModelKind m)
{
    const LbModelDesc *d = lb_model_desc(m);
    return d ? d->skip_reason : NULL;
}

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
    for (int m = 0; m < LB_MODEL_COUNT; m++) {
        const LbModelDesc *d = lb_model_desc((LbModelKind)m);
        if (d && strcmp(s, d->name) == 0) {
            *out = (LbModelKind)m;
            return 0;
        }
    }
    return -1;
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

void lb_model_cell_name(const char *name, LbModelKind model, int64_t n, int64_t k, char *buf, size_t size)
{
    if (lb_model_has_k(model))
        snprintf(buf, size, "%s n=%lld k=%lld", name, (long long)n, (long long)k);
    else
        snprintf(buf, size, "%s n=%lld", name, (long long)n);
}
