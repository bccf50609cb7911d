/* The standard Transformer's attention (the paper's baseline): the n x n score matrix of every
 * head materialised, softmax(Q K^T / sqrt(hd)) V. */
#include "attn/attention_impl.h"
#include "attn/status.h"

static int attention(LbPass *p, int layer, const LbLayerWeights *w, const void *x, void *y)
{
    (void)layer;
    void *qkv, *qh, *kh, *vh;
    LB_TRY(lb_qkv_heads(p, w, x, &qkv, &qh, &kh, &vh));
    LB_TRY(lb_attend(p, qh, kh, vh, p->n)); /* scores (B, h, n, n) */
    return lb_project_out(p, w, qh, qkv, y);
}

/* Q, K, V and output projections 2 n (4 d^2); scores and values 4 n^2 d. */
static double flops_per_layer(const LbModelConfig *c)
{
    const double n = (double)c->n, d = c->d_model;
    return 2 * n * (4 * d * d) + 4 * n * n * d;
}

static void variant(int i, LbModelConfig *c)
{
    (void)i;
    (void)c;
}

const LbModelDesc lb_model_standard = {
    .name = "standard",
    .attention = attention,
    .flops_per_layer = flops_per_layer,
    .variants = 1,
    .variant = variant,
};
