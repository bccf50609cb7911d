/* Small model configurations shared by the tests of tests/model/: every variant the forward pass
 * has (standard; Linformer with each sharing level and both orders, none only with late). */
#ifndef LB_TESTS_MODELS_H
#define LB_TESTS_MODELS_H

#include <stdio.h>

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

/* Variant i of LB_TEST_VARIANTS: 0 standard, then the 7 Linformer sharing/order pairs. */
#define LB_TEST_VARIANTS 8
static inline LbModelConfig lb_test_variant(int i, int64_t n, int64_t k)
{
    LbModelConfig c = lb_test_model(n, k);
    if (i == 0)
        return c;
    c.kind = LB_MODEL_LINFORMER;
    static const LbSharing s[] = {LB_SHARE_LAYERWISE, LB_SHARE_LAYERWISE, LB_SHARE_KV, LB_SHARE_KV,
                                  LB_SHARE_HEADWISE, LB_SHARE_HEADWISE, LB_SHARE_NONE};
    static const LbOrder o[] = {LB_ORDER_EARLY, LB_ORDER_LATE, LB_ORDER_EARLY, LB_ORDER_LATE,
                                LB_ORDER_EARLY, LB_ORDER_LATE, LB_ORDER_LATE};
    c.sharing = s[i - 1];
    c.order = o[i - 1];
    return c;
}

static inline const char *lb_test_variant_name(const LbModelConfig *c, char *buf, size_t size)
{
    if (c->kind == LB_MODEL_STANDARD)
        snprintf(buf, size, "standard");
    else
        snprintf(buf, size, "linformer/%s/%s", lb_sharing_name(c->sharing), lb_order_name(c->order));
    return buf;
}

#endif
