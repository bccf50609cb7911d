/* The encoder of METHOD.md, written once against the ops table for every attention model. Each
 * layer is post-LayerNorm: y = Attention(x); x = LN(x + y); y = W2 GELU(W1 x + b1) + b2;
 * x = LN(x + y). Each phase's temporaries sit above an arena mark released after it. */
#include "attn/forward.h"

#include "attn/attention_impl.h"
#include "attn/base/status.h"

/* y = W2 GELU(W1 x + b1) + b2 with the hidden (B, n, f) as the phase's only temporary. */
static int feed_forward(LbPass *p, const LbLayerWeights *w, const void *x, void *y)
{
    const int64_t rows = p->B * p->n;
    void *hidden;
    LB_TRY(lb_pass_alloc(p, rows * p->f, "FFN hidden", &hidden));
    lb_pass_role(p, LB_ROLE_FFN_UP); /* a breakdown times its GELU pass apart (attn/measure/breakdown.c) */
    LB_TRY(p->ops->linear(p->be, x, w->w_ff1, w->b_ff1, hidden, rows, p->d, p->f, 1));
    lb_pass_role(p, LB_ROLE_FFN_DOWN);
    return p->ops->linear(p->be, hidden, w->w_ff2, w->b_ff2, y, rows, p->f, p->d, 0);
}

int lb_inputs_alloc(const LbModel *m, LbArena *a, int64_t batch, LbInputs *in)
{
    const int64_t tokens = batch * m->cfg.n;
    const size_t hidden = (size_t)(tokens * m->cfg.d_model) * m->be->elem_bytes;
    in->batch = batch;
    LB_TRY(lb_arena_alloc(a, (size_t)tokens * sizeof(int32_t), "token ids", (void **)&in->ids));
    LB_TRY(lb_arena_alloc(a, hidden, "hidden state", &in->x));
    return lb_arena_alloc(a, hidden, "sub-layer output", &in->y);
}

int lb_inputs_fill(const LbModel *m, LbInputs *in, uint64_t seed)
{
    return m->be->ops->fill_tokens(m->be, in->ids, in->batch * m->cfg.n, seed, m->cfg.vocab);
}

int lb_forward_setup(LbModel *m, LbInputs *in, const LbModelConfig *cfg, LbBackend *be, LbArena *a, int64_t batch,
                     uint64_t seed)
{
    LB_TRY(lb_model_build(m, cfg, be, a, seed));
    int rc = lb_inputs_alloc(m, a, batch, in);
    if (rc == LB_OK)
        rc = lb_inputs_fill(m, in, seed ^ LB_INPUT_SEED_MIX);
    if (rc != LB_OK)
        lb_model_release(m);
    return rc;
}

/* The pass on the model's backend, or on the observer's and labelled for it. */
int lb_forward_observed(const LbModel *m, LbArena *a, LbInputs *in, LbPassObserver *obs)
{
    LbBackend *be = obs ? obs->be : m->be;
    const LbModelConfig *c = &m->cfg;
    const LbModelDesc *desc = lb_model_desc(c->kind);
    if (!desc)
        return LB_FAIL(LB_ERR_INVALID, "unknown model kind %d", (int)c->kind);
    LbPass p = {m, a, be, be->ops, in->batch, c->n, c->k, c->d_model, c->heads,
                lb_config_head_dim(c), c->ffn, obs, NULL, NULL, 0};
    const int64_t rows = p.B * p.n;
    const size_t mark = lb_arena_mark(a);
    int rc;
    lb_pass_role(&p, LB_ROLE_EMBED);
    LB_TRY(p.ops->embed(p.be, in->ids, m->tok_emb, m->pos_emb, in->x, p.B, p.n, p.d));
    lb_pass_role(&p, LB_ROLE_LAYERNORM);
    LB_TRY(p.ops->layernorm(p.be, in->x, NULL, m->emb_ln_g, m->emb_ln_b, rows, p.d, LB_LAYERNORM_EPS));
    for (int l = 0; l < c->layers; l++) {
        const LbLayerWeights *w = &m->layers[l];
        lb_pass_role(&p, LB_ROLE_UNLABELLED); /* until the model labels its calls */
        rc = desc->attention(&p, l, w, in->x, in->y);
        lb_arena_reset(a, mark);
        LB_TRY(rc);
        lb_pass_role(&p, LB_ROLE_LAYERNORM);
        LB_TRY(p.ops->layernorm(p.be, in->x, in->y, w->ln1_g, w->ln1_b, rows, p.d, LB_LAYERNORM_EPS));
        rc = feed_forward(&p, w, in->x, in->y);
        lb_arena_reset(a, mark);
        LB_TRY(rc);
        lb_pass_role(&p, LB_ROLE_LAYERNORM);
        LB_TRY(p.ops->layernorm(p.be, in->x, in->y, w->ln2_g, w->ln2_b, rows, p.d, LB_LAYERNORM_EPS));
    }
    return LB_OK;
}

int lb_forward(const LbModel *m, LbArena *a, LbInputs *in) { return lb_forward_observed(m, a, in, NULL); }
