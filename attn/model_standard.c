/* The standard Transformer's attention (the paper's baseline): the n x n score matrix of every
 * head materialised, softmax(Q K^T / sqrt(hd)) V. The heads are read in place from the fused
 * Q/K/V output and written in place into the (B, n, d) output: no head permutes. */
#include "attn/attention_impl.h"
#include "attn/base/status.h"

static int attention(LbPass *p, int layer, const LbLayerWeights *w, const void *x, void *y)
{
    (void)layer;
    const int64_t d = p->d;
    void *qkv, *o, *s;
    LB_TRY(lb_qkv(p, w, x, &qkv));                                                  /* (B, n, 3d) */
    LB_TRY(lb_pass_alloc(p, p->B * p->n * d, "attention output", &o));              /* (B, n, d) */
    LB_TRY(lb_pass_alloc(p, p->B * p->h * p->n * p->n, "attention scores", &s));    /* (B, h, n, n) */
    LB_TRY(lb_attend_rows(p, qkv, 3 * d, lb_pass_at(p, qkv, d), lb_pass_at(p, qkv, 2 * d), 3 * d, p->n, p->n, 0,
                          p->n, s, o));
    if (p->keep) {
        p->keep[0] = qkv;
        p->keep[1] = s;
        p->keep[2] = o;
    }
    return lb_project(p, w, o, y);
}

/* From the kept probabilities: the n x n buffer twice at its peak (P and its gradient). */
static int attention_backward(LbPass *p, int layer, const LbLayerWeights *w, void *const *keep, const void *x,
                              const void *dy, void *dx, LbLayerWeights *gw)
{
    (void)layer;
    return lb_exact_attention_backward(p, w, x, keep[0], keep[2], keep[1], 0, dy, dx, gw);
}

const LbModelDesc lb_model_standard = {
    .name = "standard",
    .attention = attention,
    .attention_backward = attention_backward,
    .flops_per_layer = lb_exact_attention_flops,
    .variants = 1,
    .baseline = 1,
};
