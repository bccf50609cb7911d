/* The standard Transformer's attention (the paper's baseline): the n x n score matrix of every
 * head materialised, softmax(Q K^T / sqrt(hd)) V. The heads are read in place from the fused
 * Q/K/V output and written in place into the (B, n, d) output: no head permutes. */
#include "attn/attention_impl.h"
#include "attn/base/status.h"

static int attention(LbPass *p, int layer, const LbLayerWeights *w, const void *x, void *y)
{
    (void)layer;
    const int64_t d = p->d;
    void *qkv, *o;
    LB_TRY(lb_qkv(p, w, x, &qkv));                                     /* (B, n, 3d) */
    LB_TRY(lb_pass_alloc(p, p->B * p->n * d, "attention output", &o)); /* (B, n, d) */
    LB_TRY(lb_attend(p, qkv, 3 * d, lb_pass_at(p, qkv, d), lb_pass_at(p, qkv, 2 * d), 3 * d, p->n, o));
    return lb_project(p, w, o, y);
}

const LbModelDesc lb_model_standard = {
    .name = "standard",
    .attention = attention,
    .flops_per_layer = lb_exact_attention_flops,
    .variants = 1,
    .baseline = 1,
};
