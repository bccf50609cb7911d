/* The training step (train.h) on the encoder of attn/encoder.c. Each layer's forward keeps its
 * tensors (LbKept) above an arena mark, each in a buffer of its own (LayerNorm works in place: the
 * copies keep its inputs for the backward); the backward runs the layers last first, releasing
 * each back to its mark. The gradient flows in two (B, n, d) buffers below every layer's: g,
 * inside a layer, and dx, the gradient of the layer's input (the next layer's dout). */
#include "attn/train.h"

#include <stdlib.h>
#include <string.h>

#include "attn/attention_impl.h"
#include "attn/base/status.h"

/* What one layer's backward reads, kept from its forward. */
typedef struct LbKept {
    size_t mark;              /* the arena before the layer's forward */
    const void *x0;           /* (B, n, d): its input, the previous layer's output */
    void *ya, *x1, *yf, *out; /* (B, n, d): attention output, LN1(x0 + ya), W2 h + b2, LN2(x1 + yf) */
    void *z, *h;              /* (B, n, f): W1 x1 + b1, GELU(z) */
    void *keep[LB_KEEP_MAX];  /* the attention's own (attention.h) */
} LbKept;

int lb_train_alloc(const LbModel *m, LbArena *a, int64_t batch, LbTrain *t)
{
    memset(t, 0, sizeof *t);
    /* The gradients laid out by the model's own build, without the workspace the model holds; the
     * values it draws are overwritten by the step. */
    LbBackend view = *m->be;
    view.workspace_bytes = 0;
    LB_TRY(lb_model_build(&t->grads, &m->cfg, &view, a, 0));
    t->grads.be = m->be;
    const int rc = lb_arena_alloc(a, (size_t)(batch * m->cfg.n * m->cfg.d_model) * m->be->elem_bytes,
                                  "upstream gradient", &t->dy);
    if (rc != LB_OK)
        lb_train_release(t);
    return rc;
}

int lb_train_setup(LbModel *m, LbInputs *in, LbTrain *t, const LbModelConfig *cfg, LbBackend *be, LbArena *a,
                   int64_t batch, uint64_t seed)
{
    LB_TRY(lb_forward_setup(m, in, cfg, be, a, batch, seed));
    int rc = lb_train_alloc(m, a, batch, t);
    const int64_t count = batch * cfg->n * cfg->d_model;
    if (rc == LB_OK && (rc = be->ops->fill_uniform(be, t->dy, count, seed ^ LB_GRAD_SEED_MIX, -1.0f, 1.0f)) != LB_OK)
        lb_train_release(t);
    if (rc != LB_OK)
        lb_model_release(m);
    return rc;
}

void lb_train_release(LbTrain *t) { lb_model_release(&t->grads); }

/* dst = src, (B, n, d) each. */
static int copy_rows(LbPass *p, void *dst, const void *src)
{
    return p->ops->copy(p->be, dst, src, (size_t)(p->B * p->n * p->d) * p->be->elem_bytes);
}

/* layernorm_backward on (B n, d) rows with its scratch from the arena, released after. */
static int norm_backward(LbPass *p, const void *x, const void *r, const void *gamma, const void *dy, void *dv,
                         void *dgamma, void *dbeta)
{
    const int64_t rows = p->B * p->n;
    const size_t mark = lb_arena_mark(p->a);
    void *scratch;
    lb_pass_role(p, LB_ROLE_LAYERNORM);
    int rc = lb_arena_alloc(p->a, lb_layernorm_backward_scratch_bytes(rows, p->d), "LayerNorm gradient scratch",
                            &scratch);
    if (rc == LB_OK)
        rc = p->ops->layernorm_backward(p->be, x, r, gamma, dy, dv, dgamma, dbeta, rows, p->d, LB_LAYERNORM_EPS,
                                        scratch);
    lb_arena_reset(p->a, mark);
    return rc;
}

/* Layer l's forward from x0, keeping into k; its output in `out` when `last`, else in a new buffer
 * (a flag, not a NULL out: in the plan's counting arena every pointer is NULL). */
static int layer_forward(LbPass *p, const LbModelDesc *desc, int l, const void *x0, int last, void *out, LbKept *k)
{
    const LbLayerWeights *w = &p->m->layers[l];
    const int64_t rows = p->B * p->n, d = p->d, f = p->f;
    k->mark = lb_arena_mark(p->a);
    k->x0 = x0;
    LB_TRY(lb_pass_alloc(p, rows * d, "attention output", &k->ya));
    p->keep = k->keep;
    lb_pass_role(p, LB_ROLE_UNLABELLED); /* until the model labels its calls */
    const int rc = desc->attention(p, l, w, x0, k->ya);
    p->keep = NULL;
    LB_TRY(rc);
    LB_TRY(lb_pass_alloc(p, rows * d, "attention LayerNorm output", &k->x1));
    LB_TRY(lb_pass_alloc(p, rows * f, "FFN up projection", &k->z));
    LB_TRY(lb_pass_alloc(p, rows * f, "FFN hidden", &k->h));
    LB_TRY(lb_pass_alloc(p, rows * d, "FFN output", &k->yf));
    k->out = out;
    if (!last)
        LB_TRY(lb_pass_alloc(p, rows * d, "layer output", &k->out));
    lb_pass_role(p, LB_ROLE_LAYERNORM);
    LB_TRY(copy_rows(p, k->x1, x0));
    LB_TRY(p->ops->layernorm(p->be, k->x1, k->ya, w->ln1_g, w->ln1_b, rows, d, LB_LAYERNORM_EPS));
    lb_pass_role(p, LB_ROLE_FFN_UP);
    LB_TRY(p->ops->linear(p->be, k->x1, w->w_ff1, w->b_ff1, k->z, rows, d, f, 0));
    lb_pass_role(p, LB_ROLE_GELU);
    LB_TRY(p->ops->copy(p->be, k->h, k->z, (size_t)(rows * f) * p->be->elem_bytes));
    LB_TRY(p->ops->gelu(p->be, k->h, rows, f));
    lb_pass_role(p, LB_ROLE_FFN_DOWN);
    LB_TRY(p->ops->linear(p->be, k->h, w->w_ff2, w->b_ff2, k->yf, rows, f, d, 0));
    lb_pass_role(p, LB_ROLE_LAYERNORM);
    LB_TRY(copy_rows(p, k->out, k->x1));
    return p->ops->layernorm(p->be, k->out, k->yf, w->ln2_g, w->ln2_b, rows, d, LB_LAYERNORM_EPS);
}

/* Layer l's backward from dout, the gradient of its output: dx becomes the gradient of its input
 * x0 and g is overwritten. dout is read first, so dx may be dout itself; g may not. */
static int layer_backward(LbPass *p, const LbModelDesc *desc, int l, const LbKept *k, const void *dout, void *g,
                          void *dx)
{
    const LbLayerWeights *w = &p->m->layers[l];
    LbLayerWeights *gw = &p->grads->layers[l];
    const int64_t rows = p->B * p->n, d = p->d, f = p->f;
    /* LayerNorm's input is x1 + yf: one gradient for both */
    LB_TRY(norm_backward(p, k->x1, k->yf, w->ln2_g, dout, g, gw->ln2_g, gw->ln2_b));
    void *dh; /* (B, n, f) */
    LB_TRY(lb_pass_alloc(p, rows * f, "FFN hidden gradient", &dh));
    lb_pass_role(p, LB_ROLE_FFN_DOWN);
    LB_TRY(lb_linear_backward(p, k->h, w->w_ff2, g, dh, gw->w_ff2, gw->b_ff2, rows, f, d, 0));
    lb_pass_role(p, LB_ROLE_GELU);
    LB_TRY(p->ops->gelu_backward(p->be, k->z, dh, rows, f));
    lb_pass_role(p, LB_ROLE_FFN_UP); /* the residual's gradient in g gets the FFN's share: x1's whole */
    LB_TRY(lb_linear_backward(p, k->x1, w->w_ff1, dh, g, gw->w_ff1, gw->b_ff1, rows, d, f, 1));
    LB_TRY(norm_backward(p, k->x0, k->ya, w->ln1_g, g, g, gw->ln1_g, gw->ln1_b));
    lb_pass_role(p, LB_ROLE_LAYERNORM); /* x0's gradient: the residual's share, then the attention's */
    LB_TRY(copy_rows(p, dx, g));
    lb_pass_role(p, LB_ROLE_UNLABELLED);
    return desc->attention_backward(p, l, w, k->keep, k->x0, g, dx, gw);
}

/* Every gradient the attentions add to (a projection shared by layers) starts at 0. */
static int zero_own(LbPass *p, LbModel *grads)
{
    for (int64_t i = 0; i < grads->own_count; i++)
        LB_TRY(p->ops->fill_uniform(p->be, grads->own[i].ptr, grads->own[i].rows * grads->own[i].cols, 0, 0.0f,
                                    0.0f));
    return LB_OK;
}

static int step(LbPass *p, const LbModelDesc *desc, LbInputs *in, const void *dy, LbKept *kept)
{
    const LbModel *m = p->m;
    LbModel *gm = p->grads;
    const int64_t rows = p->B * p->n;
    const int layers = m->cfg.layers;
    void *g, *dx, *x;
    LB_TRY(lb_pass_alloc(p, rows * p->d, "gradient", &g));
    LB_TRY(lb_pass_alloc(p, rows * p->d, "input gradient", &dx));
    LB_TRY(lb_pass_alloc(p, rows * p->d, "embedding output", &x));
    /* in->y keeps the embedding before its LayerNorm; the last layer's output goes to in->x */
    lb_pass_role(p, LB_ROLE_EMBED);
    LB_TRY(p->ops->embed(p->be, in->ids, m->tok_emb, m->pos_emb, in->y, p->B, p->n, p->d));
    lb_pass_role(p, LB_ROLE_LAYERNORM);
    LB_TRY(copy_rows(p, x, in->y));
    LB_TRY(p->ops->layernorm(p->be, x, NULL, m->emb_ln_g, m->emb_ln_b, rows, p->d, LB_LAYERNORM_EPS));
    for (int l = 0; l < layers; l++)
        LB_TRY(layer_forward(p, desc, l, l ? kept[l - 1].out : x, l == layers - 1, in->x, &kept[l]));

    lb_pass_role(p, LB_ROLE_UNLABELLED);
    p->backward = 1; /* the roles from here on are the backward's */
    LB_TRY(zero_own(p, gm));
    for (int l = layers - 1; l >= 0; l--) {
        const int rc = layer_backward(p, desc, l, &kept[l], l == layers - 1 ? dy : dx, g, dx);
        lb_arena_reset(p->a, kept[l].mark);
        LB_TRY(rc);
    }
    LB_TRY(norm_backward(p, in->y, NULL, m->emb_ln_g, dx, dx, gm->emb_ln_g, gm->emb_ln_b));
    void *scratch;
    LB_TRY(lb_arena_alloc(p->a, lb_embed_backward_scratch_bytes(p->B, p->n, m->cfg.vocab), "embedding gradient scratch",
                          &scratch));
    lb_pass_role(p, LB_ROLE_EMBED);
    return p->ops->embed_backward(p->be, in->ids, dx, gm->tok_emb, gm->pos_emb, p->B, p->n, p->d, m->cfg.vocab,
                                  scratch);
}

int lb_train_step_observed(const LbModel *m, LbArena *a, LbInputs *in, LbTrain *t, LbPassObserver *obs)
{
    LbBackend *be = obs ? obs->be : m->be;
    const LbModelConfig *c = &m->cfg;
    const LbModelDesc *desc = lb_model_desc(c->kind);
    if (!desc || !desc->attention_backward)
        return LB_FAIL(LB_ERR_INVALID, "model %s has no backward pass: it cannot train", lb_model_name(c->kind));
    LbKept *kept = calloc((size_t)c->layers, sizeof *kept);
    if (!kept)
        return LB_FAIL(LB_ERR_NOMEM, "out of host memory for the training step's tables");
    LbPass p = {m, a, be, be->ops, in->batch, c->n, c->k, c->d_model, c->heads, lb_config_head_dim(c), c->ffn, obs,
                NULL, &t->grads, 0};
    const size_t mark = lb_arena_mark(a);
    const int rc = step(&p, desc, in, t->dy, kept);
    lb_arena_reset(a, mark);
    lb_pass_role(&p, LB_ROLE_UNLABELLED);
    free(kept);
    return rc;
}

int lb_train_step(const LbModel *m, LbArena *a, LbInputs *in, LbTrain *t)
{
    return lb_train_step_observed(m, a, in, t, NULL);
}

int lb_one_pass_setup(LbOnePass *p, const LbModelConfig *cfg, LbBackend *be, LbArena *a, int64_t batch, uint64_t seed)
{
    p->arena = a;
    p->step = cfg->pass == LB_PASS_TRAIN;
    int rc = p->step ? lb_train_setup(&p->model, &p->in, &p->train, cfg, be, a, batch, seed)
                     : lb_forward_setup(&p->model, &p->in, cfg, be, a, batch, seed);
    p->built = rc == LB_OK;
    if (rc == LB_OK && (rc = lb_one_pass_run(p)) == LB_OK)
        rc = be->ops->sync(be);
    return rc;
}

int lb_one_pass_run(LbOnePass *p)
{
    return p->step ? lb_train_step(&p->model, p->arena, &p->in, &p->train) : lb_forward(&p->model, p->arena, &p->in);
}

void lb_one_pass_release(LbOnePass *p)
{
    if (!p->built)
        return;
    if (p->step)
        lb_train_release(&p->train);
    lb_model_release(&p->model);
    p->built = 0;
}
