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
    return (LbModelConfig){.kind = LB_MODEL_STANDARD, .layers = 12, .d_model = 768, .heads = 12, .ffn = 3072,
                           .vocab = 50265, .n = 512, .k = 128, .chunk = LB_CHUNK_DEFAULT,
                           .sharing = LB_SHARE_LAYERWISE, .order = LB_ORDER_EARLY, .dtype = LB_DTYPE_FP16};
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
    if (c->pass != LB_PASS_FORWARD && c->pass != LB_PASS_TRAIN)
        return LB_BAD("--pass %d is not a pass: should be forward or train", (int)c->pass);
    if (c->pass == LB_PASS_TRAIN && !m->attention_backward)
        return LB_BAD("--pass train: model %s has no backward pass yet, so it cannot train: should be --pass forward",
                      m->name);
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

/* The table's entry for m; for a kind outside the table, an entry with no name that has no cell. */
static int no_cell(int64_t n, int64_t k)
{
    (void)n;
    (void)k;
    return 0;
}

static const LbModelDesc *desc(LbModelKind m)
{
    static const LbModelDesc none = {.name = "?", .cell_exists = no_cell};
    const LbModelDesc *d = lb_model_desc(m);
    return d ? d : &none;
}

const char *lb_model_name(LbModelKind m) { return desc(m)->name; }
int lb_model_has_k(LbModelKind m) { return desc(m)->k_meaning != NULL; }
int lb_model_baseline(LbModelKind m) { return desc(m)->baseline; }
const char *lb_model_k_meaning(LbModelKind m) { return lb_model_has_k(m) ? desc(m)->k_meaning : ""; }

const char *lb_model_k_range(LbModelKind m)
{
    return lb_model_has_k(m) && desc(m)->k_range ? desc(m)->k_range : "";
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
        owned |= reads(desc((LbModelKind)i), flag);
    return !owned ? -1 : reads(desc(m), flag);
}

int lb_model_cell_exists(LbModelKind m, int64_t n, int64_t k)
{
    const LbModelDesc *d = desc(m);
    return d->cell_exists ? d->cell_exists(n, d->k_meaning ? k : 0) : 1;
}

const char *lb_model_skip_reason(LbModelKind m) { return desc(m)->skip_reason; }

int lb_model_parse(const char *s, LbModelKind *out)
{
    for (int m = 0; m < LB_MODEL_COUNT; m++) {
        if (strcmp(s, desc((LbModelKind)m)->name) == 0) {
            *out = (LbModelKind)m;
            return 0;
        }
    }
    return -1;
}

/* Index of s in names[count], or -1. */
static int name_index(const char *s, const char *const *names, int count)
{
    for (int i = 0; i < count; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

/* An enum's name ("?" outside it) and parser (0, or -1 leaving *out alone), from its names. */
#define LB_ENUM_NAMES(Type, name_fn, parse_fn, ...)                                  \
    static const char *const name_fn##_table[] = {__VA_ARGS__};                      \
    enum { name_fn##_count = sizeof name_fn##_table / sizeof name_fn##_table[0] };   \
    const char *name_fn(Type v)                                                      \
    {                                                                                \
        return (unsigned)v < name_fn##_count ? name_fn##_table[v] : "?";             \
    }                                                                                \
    int parse_fn(const char *s, Type *out)                                           \
    {                                                                                \
        const int i = name_index(s, name_fn##_table, name_fn##_count);               \
        if (i >= 0)                                                                  \
            *out = (Type)i;                                                          \
        return i < 0 ? -1 : 0;                                                       \
    }

LB_ENUM_NAMES(LbDtype, lb_dtype_name, lb_dtype_parse, "fp16", "bf16", "fp32")
LB_ENUM_NAMES(LbSharing, lb_sharing_name, lb_sharing_parse, "layerwise", "kv", "headwise", "none")
LB_ENUM_NAMES(LbOrder, lb_order_name, lb_order_parse, "early", "late")

void lb_model_cell_name(const char *name, LbModelKind model, int64_t n, int64_t k, char *buf, size_t size)
{
    if (lb_model_has_k(model))
        snprintf(buf, size, "%s n=%lld k=%lld", name, (long long)n, (long long)k);
    else
        snprintf(buf, size, "%s n=%lld", name, (long long)n);
}
