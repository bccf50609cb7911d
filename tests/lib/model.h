/* The small test model, configured once for every test that needs one (tests/model, tests/reports,
 * tests/gpu): 2 layers, d_model 16, 4 heads, ffn 24, vocab 50, fp32; and every variant of every
 * model the table holds (attn/attention.h) on it. */
#ifndef LB_TESTS_LIB_MODEL_H
#define LB_TESTS_LIB_MODEL_H

#include <stdio.h>

#include "attn/attention.h"
#include "attn/config.h"
#include "attn/pass_observer.h"

/* The default configuration with a small encoder of this shape (the dtype left as the default's):
 * for tests that want a model of their own size (tests/cli, tests/gpu). */
static inline LbModelConfig lb_test_shape(int layers, int d_model, int heads, int ffn, int vocab, int64_t n,
                                          int64_t k)
{
    LbModelConfig c = lb_config_default();
    c.layers = layers;
    c.d_model = d_model;
    c.heads = heads;
    c.ffn = ffn;
    c.vocab = vocab;
    c.n = n;
    c.k = k;
    return c;
}

static inline LbModelConfig lb_test_model(int64_t n, int64_t k)
{
    LbModelConfig c = lb_test_shape(2, 16, 4, 24, 50, n, k);
    c.dtype = LB_DTYPE_FP32;
    return c;
}

/* The gradient checks' tiny model of `kind`: 2 layers, d 8, 2 heads, f 16, vocab 16, fp32. */
static inline LbModelConfig lb_test_tiny(LbModelKind kind, int64_t n, int64_t k)
{
    LbModelConfig c = lb_test_shape(2, 8, 2, 16, 16, n, k);
    c.kind = kind;
    c.dtype = LB_DTYPE_FP32;
    return c;
}

/* Every variant of every model of the table (attn/attention.h), in table order: standard, then
 * Linformer with each sharing level and order (none only with late), then the rest. */
static inline int lb_test_variant_count(void)
{
    int count = 0;
    for (int m = 0; m < LB_MODEL_COUNT; m++)
        count += lb_model_desc((LbModelKind)m)->variants;
    return count;
}
#define LB_TEST_VARIANTS lb_test_variant_count()

static inline LbModelConfig lb_test_variant(int i, int64_t n, int64_t k)
{
    int m = 0;
    while (m + 1 < LB_MODEL_COUNT && i >= lb_model_desc((LbModelKind)m)->variants)
        i -= lb_model_desc((LbModelKind)m++)->variants;
    return lb_model_variant((LbModelKind)m, i, lb_test_model(n, k));
}

/* The Linformer with any of its projections (linear, mean, max, conv): keys and values
 * compressed to k rows before softmax attention. */
static inline int lb_test_is_linformer(LbModelKind m)
{
    return m == LB_MODEL_LINFORMER || m == LB_MODEL_LINFORMER_MEAN || m == LB_MODEL_LINFORMER_MAX ||
           m == LB_MODEL_LINFORMER_CONV;
}

/* The roles a model's pass shows, into roles (LB_ROLE_COUNT); their count, 0 for a model not
 * listed here yet. The encoder's, then: softmax attention's scores, softmax and P V (and the
 * Linformer's compression); the Performer's head permutes, feature maps, K'^T [V 1], Q'(K'^T [V 1])
 * and D^-1; flash's one op. */
static inline int lb_test_roles(LbModelKind m, LbOpRole *roles)
{
    static const LbOpRole encoder[] = {LB_ROLE_EMBED, LB_ROLE_LAYERNORM, LB_ROLE_QKV, LB_ROLE_OUT_PROJ,
                                       LB_ROLE_FFN_UP, LB_ROLE_GELU, LB_ROLE_FFN_DOWN};
    static const LbOpRole performer[] = {LB_ROLE_PERMUTE, LB_ROLE_FEATURE_MAP, LB_ROLE_KV_STATE, LB_ROLE_PV,
                                         LB_ROLE_NORMALISE};
    static const LbOpRole softmax[] = {LB_ROLE_SCORES, LB_ROLE_SOFTMAX, LB_ROLE_PV, LB_ROLE_COMPRESS};
    static const LbOpRole flash[] = {LB_ROLE_ATTENTION};
    const LbOpRole *own = softmax;
    int n = 0, count = lb_test_is_linformer(m) ? 4 : 3;
    if (m == LB_MODEL_PERFORMER)
        own = performer, count = 5;
    else if (m == LB_MODEL_FLASH)
        own = flash, count = 1;
    else if (m != LB_MODEL_STANDARD && m != LB_MODEL_CHUNKED && !lb_test_is_linformer(m))
        return 0;
    for (size_t i = 0; i < sizeof encoder / sizeof encoder[0]; i++)
        roles[n++] = encoder[i];
    for (int i = 0; i < count; i++)
        roles[n++] = own[i];
    return n;
}

static inline const char *lb_test_variant_name(const LbModelConfig *c, char *buf, size_t size)
{
    lb_model_describe(c, buf, size);
    return buf;
}

#endif
