/* The small test model, configured once for every test that needs one (tests/model, tests/reports,
 * tests/gpu): 2 layers, d_model 16, 4 heads, ffn 24, vocab 50, fp32; and every variant of every
 * model the table holds (attn/attention.h) on it. */
#ifndef LB_TESTS_LIB_MODEL_H
#define LB_TESTS_LIB_MODEL_H

#include <stdio.h>

#include "attn/attention.h"
#include "attn/config.h"

static inline LbModelConfig lb_test_model(int64_t n, int64_t k)
{
    LbModelConfig c = lb_config_default();
    c.layers = 2;
    c.d_model = 16;
    c.heads = 4;
    c.ffn = 24;
    c.vocab = 50;
    c.n = n;
    c.k = k;
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

static inline const char *lb_test_variant_name(const LbModelConfig *c, char *buf, size_t size)
{
    lb_model_describe(c, buf, size);
    return buf;
}

#endif
