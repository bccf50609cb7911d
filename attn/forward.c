/* The standard and Linformer forward passes of METHOD.md, written once against the ops table.
 *
 * Each encoder layer is post-LayerNorm:
 *   y = Attention(x);  x = LN(x + y);  y = W2 GELU(W1 x + b1) + b2;  x = LN(x + y)
 * Attention temporaries and FFN temporaries are allocated above a mark and released after their
 * phase; attn/plan.c counts the same allocations in the same order. Shapes in comments are
 * (batch, ...) row-major; B = batch, h = heads, hd = d / h. */
#include "attn/forward.h"

#include <math.h>

#include "attn/status.h"

typedef struct Pass {
    const LbModel *m;
    LbArena *a;
    LbBackend *be;
    const LbOps *ops;
    int64_t B, n, k, d, h, hd, f;
} Pass;

/* p advanced by `elems` storage elements: the forward passes only ever compute addresses. */
static void *at(const Pass *p, const void *base, int64_t elems)
{
    return (char *)base + elems * (int64_t)p->be->elem_bytes;
}

static int alloc(Pass *p, int64_t elems, const char *what, void **out)
{
    return lb_arena_alloc(p->a, (size_t)elems * p->be->elem_bytes, what, out);
}

/* C_i = op(A_i) op(B_i) over a batch: the row-major LbBmm with its trans flags. */
static int bmm(Pass *p, int ta, int tb, int64_t m, int64_t n, int64_t kd, float alpha, const void *a,
               int64_t lda, int64_t sa, const void *b, int64_t ldb, int64_t sb, void *c, int64_t ldc,
               int64_t sc, int64_t batch)
{
    LbBmm q = {ta, tb, m, n, kd, alpha, a, lda, sa, b, ldb, sb, c, ldc, sc, batch};
    return p->ops->bmm(p->be, &q);
}

/* out (B, len, d) = E (len, n) X_b (n, d) for every b, where X_b rows have stride ld_x and
 * batch stride n * ld_x: the length compression by a projection shared over the batch. */
static int compress(Pass *p, const void *E, const void *x, int64_t ld_x, int64_t width, void *out)
{
    return bmm(p, 0, 0, p->k, width, p->n, 1.0f, E, p->n, 0, x, ld_x, p->n * ld_x, out, width,
               p->k * width, p->B);
}

/* Given q, k, v in head-major order (B, h, rows, hd) with n query rows and kv_len key rows:
 * s = softmax(q k^T / sqrt(hd)) (B, h, n, kv_len), then o = s v written over q. The 1/sqrt(hd)
 * is the product's alpha, applied to the fp32 accumulator before the scores are rounded to the
 * storage type: fp16 scores then overflow only at sqrt(hd) = 8 times larger logits than if the
 * scale waited for the softmax, at no cost. */
static int attend(Pass *p, void *qh, const void *kh, const void *vh, int64_t kv_len)
{
    void *s;
    LB_TRY(alloc(p, p->B * p->h * p->n * kv_len, "attention scores", &s));
    const int64_t bh = p->B * p->h;
    LB_TRY(bmm(p, 0, 1, p->n, kv_len, p->hd, 1.0f / sqrtf((float)p->hd), qh, p->hd, p->n * p->hd, kh,
               p->hd, kv_len * p->hd, s, kv_len, p->n * kv_len, bh));
    LB_TRY(p->ops->softmax(p->be, s, bh * p->n, kv_len, 1.0f));
    return bmm(p, 0, 0, p->n, p->hd, kv_len, 1.0f, s, kv_len, p->n * kv_len, vh, p->hd, kv_len * p->hd,
               qh, p->hd, p->n * p->hd, bh);
}

/* The attention output projection: merge heads (B, h, n, hd) -> (B, n, d) into `tmp`, then
 * y = tmp W_O^T + b_O. */
static int project_out(Pass *p, const LbLayerWeights *w, const void *oh, void *tmp, void *y)
{
    LB_TRY(p->ops->merge_heads(p->be, oh, tmp, p->B, p->n, p->h, p->hd));
    return p->ops->linear(p->be, tmp, w->w_o, w->b_o, y, p->B * p->n, p->d, p->d, 0);
}

/* Standard attention with the n x n score matrix materialised (the paper's baseline). */
static int attention_standard(Pass *p, const LbLayerWeights *w, const void *x, void *y)
{
    const int64_t rows = p->B * p->n, d = p->d;
    void *qkv, *qh, *kh, *vh;
    LB_TRY(alloc(p, rows * 3 * d, "Q/K/V", &qkv));                      /* (B, n, 3d) */
    LB_TRY(p->ops->linear(p->be, x, w->w_qkv, w->b_qkv, qkv, rows, d, 3 * d, 0));
    LB_TRY(alloc(p, rows * d, "Q heads", &qh));                         /* (B, h, n, hd) */
    LB_TRY(alloc(p, rows * d, "K heads", &kh));
    LB_TRY(alloc(p, rows * d, "V heads", &vh));
    LB_TRY(p->ops->split_heads(p->be, qkv, 3 * d, qh, p->B, p->n, p->h, p->hd));
    LB_TRY(p->ops->split_heads(p->be, at(p, qkv, d), 3 * d, kh, p->B, p->n, p->h, p->hd));
    LB_TRY(p->ops->split_heads(p->be, at(p, qkv, 2 * d), 3 * d, vh, p->B, p->n, p->h, p->hd));
    LB_TRY(attend(p, qh, kh, vh, p->n));
    return project_out(p, w, qh, qkv, y);
}

/* Linformer, early order (fairseq): K' = (E X) W_K + b_K, V' = (F X) W_V + b_V; with E = F
 * (layerwise, kv) X is compressed once and K', V' come from one fused product. */
static int attention_early(Pass *p, int layer, const LbLayerWeights *w, const void *x, void *y)
{
    const int64_t rows = p->B * p->n, ck = p->B * p->k, d = p->d;
    const int separate = lb_config_separate_kv_projection(&p->m->cfg);
    void *E = lb_model_projection(p->m, layer, 0, 0);
    void *q, *qh, *kh, *vh, *kc, *vc;
    int64_t ld_kv;
    if (!separate) {
        void *xc, *kv;
        LB_TRY(alloc(p, ck * d, "compressed X", &xc));                  /* (B, k, d) */
        LB_TRY(compress(p, E, x, d, d, xc));
        LB_TRY(alloc(p, rows * d, "Q", &q));                            /* (B, n, d) */
        LB_TRY(p->ops->linear(p->be, x, w->w_qkv, w->b_qkv, q, rows, d, d, 0));
        LB_TRY(alloc(p, ck * 2 * d, "K'/V'", &kv));                     /* (B, k, 2d) */
        LB_TRY(p->ops->linear(p->be, xc, at(p, w->w_qkv, d * d), at(p, w->b_qkv, d), kv, ck, d, 2 * d, 0));
        kc = kv;
        vc = at(p, kv, d);
        ld_kv = 2 * d;
    } else {
        void *F = lb_model_projection(p->m, layer, 0, 1), *xe, *xf;
        LB_TRY(alloc(p, ck * d, "E X", &xe));                           /* (B, k, d) */
        LB_TRY(compress(p, E, x, d, d, xe));
        LB_TRY(alloc(p, ck * d, "F X", &xf));
        LB_TRY(compress(p, F, x, d, d, xf));
        LB_TRY(alloc(p, rows * d, "Q", &q));
        LB_TRY(p->ops->linear(p->be, x, w->w_qkv, w->b_qkv, q, rows, d, d, 0));
        LB_TRY(alloc(p, ck * d, "K'", &kc));                            /* (B, k, d) */
        LB_TRY(p->ops->linear(p->be, xe, at(p, w->w_qkv, d * d), at(p, w->b_qkv, d), kc, ck, d, d, 0));
        LB_TRY(alloc(p, ck * d, "V'", &vc));
        LB_TRY(p->ops->linear(p->be, xf, at(p, w->w_qkv, 2 * d * d), at(p, w->b_qkv, 2 * d), vc, ck, d, d, 0));
        ld_kv = d;
    }
    LB_TRY(alloc(p, rows * d, "Q heads", &qh));                         /* (B, h, n, hd) */
    LB_TRY(p->ops->split_heads(p->be, q, d, qh, p->B, p->n, p->h, p->hd));
    LB_TRY(alloc(p, ck * d, "K' heads", &kh));                          /* (B, h, k, hd) */
    LB_TRY(alloc(p, ck * d, "V' heads", &vh));
    LB_TRY(p->ops->split_heads(p->be, kc, ld_kv, kh, p->B, p->k, p->h, p->hd));
    LB_TRY(p->ops->split_heads(p->be, vc, ld_kv, vh, p->B, p->k, p->h, p->hd));
    LB_TRY(attend(p, qh, kh, vh, p->k));
    return project_out(p, w, qh, q, y);
}

/* Linformer, late order (the paper's figure): K' = E (X W_K + b_K), V' = F (X W_V + b_V).
 * Shared E (layerwise, kv) compresses K and V in one product; headwise compresses each; none
 * compresses every head with its own E_i, F_i. */
static int attention_late(Pass *p, int layer, const LbLayerWeights *w, const void *x, void *y)
{
    const int64_t rows = p->B * p->n, ck = p->B * p->k, d = p->d, n = p->n, k = p->k;
    const LbSharing sharing = p->m->cfg.sharing;
    void *qkv, *qh, *kh, *vh;
    LB_TRY(alloc(p, rows * 3 * d, "Q/K/V", &qkv));                      /* (B, n, 3d) */
    LB_TRY(p->ops->linear(p->be, x, w->w_qkv, w->b_qkv, qkv, rows, d, 3 * d, 0));
    if (sharing == LB_SHARE_LAYERWISE || sharing == LB_SHARE_KV) {
        void *kv;
        LB_TRY(alloc(p, ck * 2 * d, "K'/V'", &kv));                     /* (B, k, 2d) */
        LB_TRY(compress(p, lb_model_projection(p->m, layer, 0, 0), at(p, qkv, d), 3 * d, 2 * d, kv));
        LB_TRY(alloc(p, rows * d, "Q heads", &qh));
        LB_TRY(p->ops->split_heads(p->be, qkv, 3 * d, qh, p->B, n, p->h, p->hd));
        LB_TRY(alloc(p, ck * d, "K' heads", &kh));                      /* (B, h, k, hd) */
        LB_TRY(alloc(p, ck * d, "V' heads", &vh));
        LB_TRY(p->ops->split_heads(p->be, kv, 2 * d, kh, p->B, k, p->h, p->hd));
        LB_TRY(p->ops->split_heads(p->be, at(p, kv, d), 2 * d, vh, p->B, k, p->h, p->hd));
    } else if (sharing == LB_SHARE_HEADWISE) {
        void *kc, *vc;
        LB_TRY(alloc(p, ck * d, "K'", &kc));                            /* (B, k, d) */
        LB_TRY(compress(p, lb_model_projection(p->m, layer, 0, 0), at(p, qkv, d), 3 * d, d, kc));
        LB_TRY(alloc(p, ck * d, "V'", &vc));
        LB_TRY(compress(p, lb_model_projection(p->m, layer, 0, 1), at(p, qkv, 2 * d), 3 * d, d, vc));
        LB_TRY(alloc(p, rows * d, "Q heads", &qh));
        LB_TRY(p->ops->split_heads(p->be, qkv, 3 * d, qh, p->B, n, p->h, p->hd));
        LB_TRY(alloc(p, ck * d, "K' heads", &kh));
        LB_TRY(alloc(p, ck * d, "V' heads", &vh));
        LB_TRY(p->ops->split_heads(p->be, kc, d, kh, p->B, k, p->h, p->hd));
        LB_TRY(p->ops->split_heads(p->be, vc, d, vh, p->B, k, p->h, p->hd));
    } else {
        void *kf, *vf;
        LB_TRY(alloc(p, rows * d, "Q heads", &qh));                     /* (B, h, n, hd) */
        LB_TRY(alloc(p, rows * d, "K heads", &kf));
        LB_TRY(alloc(p, rows * d, "V heads", &vf));
        LB_TRY(p->ops->split_heads(p->be, qkv, 3 * d, qh, p->B, n, p->h, p->hd));
        LB_TRY(p->ops->split_heads(p->be, at(p, qkv, d), 3 * d, kf, p->B, n, p->h, p->hd));
        LB_TRY(p->ops->split_heads(p->be, at(p, qkv, 2 * d), 3 * d, vf, p->B, n, p->h, p->hd));
        LB_TRY(alloc(p, ck * d, "K' heads", &kh));                      /* (B, h, k, hd) */
        LB_TRY(alloc(p, ck * d, "V' heads", &vh));
        /* Per head i, over the batch: K'_bi (k, hd) = E_i (k, n) K_bi (n, hd). */
        const int64_t hs_full = p->h * n * p->hd, hs_comp = p->h * k * p->hd;
        for (int64_t i = 0; i < p->h; i++) {
            void *Ei = lb_model_projection(p->m, layer, (int)i, 0);
            void *Fi = lb_model_projection(p->m, layer, (int)i, 1);
            LB_TRY(bmm(p, 0, 0, k, p->hd, n, 1.0f, Ei, n, 0, at(p, kf, i * n * p->hd), p->hd, hs_full,
                       at(p, kh, i * k * p->hd), p->hd, hs_comp, p->B));
            LB_TRY(bmm(p, 0, 0, k, p->hd, n, 1.0f, Fi, n, 0, at(p, vf, i * n * p->hd), p->hd, hs_full,
                       at(p, vh, i * k * p->hd), p->hd, hs_comp, p->B));
        }
    }
    LB_TRY(attend(p, qh, kh, vh, k));
    return project_out(p, w, qh, qkv, y);
}

static int attention(Pass *p, int layer, const LbLayerWeights *w, const void *x, void *y)
{
    if (p->m->cfg.kind == LB_MODEL_STANDARD)
        return attention_standard(p, w, x, y);
    if (p->m->cfg.order == LB_ORDER_EARLY)
        return attention_early(p, layer, w, x, y);
    return attention_late(p, layer, w, x, y);
}

/* y = W2 GELU(W1 x + b1) + b2 with the hidden (B, n, f) as the phase's only temporary. */
static int feed_forward(Pass *p, const LbLayerWeights *w, const void *x, void *y)
{
    const int64_t rows = p->B * p->n;
    void *hidden;
    LB_TRY(alloc(p, rows * p->f, "FFN hidden", &hidden));
    LB_TRY(p->ops->linear(p->be, x, w->w_ff1, w->b_ff1, hidden, rows, p->d, p->f, 1));
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

int lb_forward(const LbModel *m, LbArena *a, LbInputs *in)
{
    const LbModelConfig *c = &m->cfg;
    Pass p = {m, a, m->be, m->be->ops, in->batch, c->n, c->k, c->d_model, c->heads,
              lb_config_head_dim(c), c->ffn};
    const int64_t rows = p.B * p.n;
    const size_t mark = lb_arena_mark(a);
    int rc;
    LB_TRY(p.ops->embed(p.be, in->ids, m->tok_emb, m->pos_emb, in->x, p.B, p.n, p.d));
    LB_TRY(p.ops->layernorm(p.be, in->x, NULL, m->emb_ln_g, m->emb_ln_b, rows, p.d, LB_LAYERNORM_EPS));
    for (int l = 0; l < c->layers; l++) {
        const LbLayerWeights *w = &m->layers[l];
        rc = attention(&p, l, w, in->x, in->y);
        lb_arena_reset(a, mark);
        LB_TRY(rc);
        LB_TRY(p.ops->layernorm(p.be, in->x, in->y, w->ln1_g, w->ln1_b, rows, p.d, LB_LAYERNORM_EPS));
        rc = feed_forward(&p, w, in->x, in->y);
        lb_arena_reset(a, mark);
        LB_TRY(rc);
        LB_TRY(p.ops->layernorm(p.be, in->x, in->y, w->ln2_g, w->ln2_b, rows, p.d, LB_LAYERNORM_EPS));
    }
    return LB_OK;
}
