/* Linformer's attention (Wang et al., 2020): keys and values compressed along the sequence by
 * (k, n) projections E and F before softmax attention, so the scores are (n, k) per head.
 * Which projections exist depends on the sharing level, and where they apply on the order
 * (attn/config.h, METHOD.md). Its own weights are the projections, "proj0", "proj1"... */
#include <math.h>
#include <stdio.h>

#include "attn/attention_impl.h"
#include "attn/status.h"

/* Number of distinct E (and F) matrices of shape (k, n) the sharing level needs. */
static int64_t projection_count(const LbModelConfig *c)
{
    switch (c->sharing) {
    case LB_SHARE_LAYERWISE: return 1;
    case LB_SHARE_KV: return c->layers;
    case LB_SHARE_HEADWISE: return 2 * (int64_t)c->layers;
    case LB_SHARE_NONE: return 2 * (int64_t)c->layers * c->heads;
    }
    return 0;
}

/* Whether keys and values are compressed by different matrices (headwise, none). */
static int separate_kv(const LbModelConfig *c) { return c->sharing == LB_SHARE_HEADWISE || c->sharing == LB_SHARE_NONE; }

/* E (which = 0) or F (which = 1) for `layer` and `head`, indexing the own tensors in allocation
 * order: layerwise [E]; kv [E_l]; headwise [E_l, F_l] per layer; none [E_lh, F_lh] per layer, head. */
static void *projection(const LbModel *m, int layer, int head, int which)
{
    const LbModelConfig *c = &m->cfg;
    int64_t i = 0;
    switch (c->sharing) {
    case LB_SHARE_LAYERWISE: i = 0; break;
    case LB_SHARE_KV: i = layer; break;
    case LB_SHARE_HEADWISE: i = 2 * (int64_t)layer + which; break;
    case LB_SHARE_NONE: i = 2 * ((int64_t)layer * c->heads + head) + which; break;
    }
    return m->own[i].ptr;
}

/* E and F: U(-1/sqrt(n), 1/sqrt(n)) keeps E X at the scale of X. */
static int build(LbBuilder *b)
{
    const LbModelConfig *c = &b->m->cfg;
    const float s = 1.0f / sqrtf((float)c->n);
    const int64_t count = projection_count(c);
    for (int64_t i = 0; i < count; i++) {
        char name[32];
        void *p;
        snprintf(name, sizeof name, "proj%lld", (long long)i);
        LB_TRY(lb_builder_own_uniform(b, name, c->k, c->n, -s, s, &p));
    }
    return LB_OK;
}

/* out (B, k, width) = E (k, n) X_b (n, width) for every b, where X_b rows have stride ld_x and
 * batch stride n * ld_x: the length compression by a projection shared over the batch. */
static int compress(LbPass *p, const void *E, const void *x, int64_t ld_x, int64_t width, void *out)
{
    lb_pass_role(p, LB_ROLE_COMPRESS);
    return lb_pass_bmm(p, 0, 0, p->k, width, p->n, 1.0f, E, p->n, 0, x, ld_x, p->n * ld_x, out, width,
                       p->k * width, p->B);
}

/* Early order (fairseq): K' = (E X) W_K + b_K, V' = (F X) W_V + b_V; with E = F (layerwise, kv)
 * X is compressed once and K', V' come from one fused product. Q, K', V' are read by head in
 * place, and the attention output written over Q (B, n, d), whose rows the scores consumed. */
static int attention_early(LbPass *p, int layer, const LbLayerWeights *w, const void *x, void *y)
{
    const int64_t rows = p->B * p->n, ck = p->B * p->k, d = p->d;
    void *E = projection(p->m, layer, 0, 0);
    void *q, *kc, *vc;
    int64_t ld_kv;
    if (!separate_kv(&p->m->cfg)) {
        void *xc, *kv;
        LB_TRY(lb_pass_alloc(p, ck * d, "compressed X", &xc));              /* (B, k, d) */
        LB_TRY(compress(p, E, x, d, d, xc));
        LB_TRY(lb_pass_alloc(p, rows * d, "Q", &q));                        /* (B, n, d) */
        lb_pass_role(p, LB_ROLE_QKV);
        LB_TRY(p->ops->linear(p->be, x, w->w_qkv, w->b_qkv, q, rows, d, d, 0));
        LB_TRY(lb_pass_alloc(p, ck * 2 * d, "K'/V'", &kv));                 /* (B, k, 2d) */
        LB_TRY(p->ops->linear(p->be, xc, lb_pass_at(p, w->w_qkv, d * d), lb_pass_at(p, w->b_qkv, d), kv, ck, d,
                              2 * d, 0));
        kc = kv;
        vc = lb_pass_at(p, kv, d);
        ld_kv = 2 * d;
    } else {
        void *F = projection(p->m, layer, 0, 1), *xe, *xf;
        LB_TRY(lb_pass_alloc(p, ck * d, "E X", &xe));                       /* (B, k, d) */
        LB_TRY(compress(p, E, x, d, d, xe));
        LB_TRY(lb_pass_alloc(p, ck * d, "F X", &xf));
        LB_TRY(compress(p, F, x, d, d, xf));
        LB_TRY(lb_pass_alloc(p, rows * d, "Q", &q));
        lb_pass_role(p, LB_ROLE_QKV);
        LB_TRY(p->ops->linear(p->be, x, w->w_qkv, w->b_qkv, q, rows, d, d, 0));
        LB_TRY(lb_pass_alloc(p, ck * d, "K'", &kc));                        /* (B, k, d) */
        LB_TRY(p->ops->linear(p->be, xe, lb_pass_at(p, w->w_qkv, d * d), lb_pass_at(p, w->b_qkv, d), kc, ck, d, d,
                              0));
        LB_TRY(lb_pass_alloc(p, ck * d, "V'", &vc));
        LB_TRY(p->ops->linear(p->be, xf, lb_pass_at(p, w->w_qkv, 2 * d * d), lb_pass_at(p, w->b_qkv, 2 * d), vc,
                              ck, d, d, 0));
        ld_kv = d;
    }
    LB_TRY(lb_attend(p, q, d, kc, vc, ld_kv, p->k, q));                     /* scores (B, h, n, k) */
    return lb_project(p, w, q, y);
}

/* Late order (the paper's figure): K' = E (X W_K + b_K), V' = F (X W_V + b_V). Shared E
 * (layerwise, kv) compresses K and V in one product; headwise compresses each; none compresses
 * every head with its own E_i, F_i. Every product reads its heads in place from the fused Q/K/V
 * output or the compressed K', V', and the attention output goes to its own (B, n, d). */
static int attention_late(LbPass *p, int layer, const LbLayerWeights *w, const void *x, void *y)
{
    const int64_t rows = p->B * p->n, ck = p->B * p->k, d = p->d, n = p->n, k = p->k;
    const LbSharing sharing = p->m->cfg.sharing;
    void *qkv, *o, *kc, *vc;
    int64_t ld_kv = d;
    LB_TRY(lb_qkv(p, w, x, &qkv));                                         /* (B, n, 3d) */
    LB_TRY(lb_pass_alloc(p, rows * d, "attention output", &o));            /* (B, n, d) */
    if (sharing == LB_SHARE_NONE) {
        LB_TRY(lb_pass_alloc(p, ck * d, "K'", &kc));                        /* (B, k, d) */
        LB_TRY(lb_pass_alloc(p, ck * d, "V'", &vc));
        /* Per head i, over the batch: K'_bi (k, hd) = E_i (k, n) K_bi (n, hd), K_bi read in place
         * (columns d + i hd of Q/K/V) and K'_bi written in place (columns i hd of K'). */
        lb_pass_role(p, LB_ROLE_COMPRESS);
        for (int64_t i = 0; i < p->h; i++) {
            void *Ei = projection(p->m, layer, (int)i, 0);
            void *Fi = projection(p->m, layer, (int)i, 1);
            LB_TRY(lb_pass_bmm(p, 0, 0, k, p->hd, n, 1.0f, Ei, n, 0, lb_pass_at(p, qkv, d + i * p->hd), 3 * d,
                               n * 3 * d, lb_pass_at(p, kc, i * p->hd), d, k * d, p->B));
            LB_TRY(lb_pass_bmm(p, 0, 0, k, p->hd, n, 1.0f, Fi, n, 0, lb_pass_at(p, qkv, 2 * d + i * p->hd), 3 * d,
                               n * 3 * d, lb_pass_at(p, vc, i * p->hd), d, k * d, p->B));
        }
    } else if (sharing == LB_SHARE_LAYERWISE || sharing == LB_SHARE_KV) {
        void *kv;
        LB_TRY(lb_pass_alloc(p, ck * 2 * d, "K'/V'", &kv));                 /* (B, k, 2d) */
        LB_TRY(compress(p, projection(p->m, layer, 0, 0), lb_pass_at(p, qkv, d), 3 * d, 2 * d, kv));
        kc = kv;
        vc = lb_pass_at(p, kv, d);
        ld_kv = 2 * d;
    } else { /* headwise */
        LB_TRY(lb_pass_alloc(p, ck * d, "K'", &kc));                        /* (B, k, d) */
        LB_TRY(compress(p, projection(p->m, layer, 0, 0), lb_pass_at(p, qkv, d), 3 * d, d, kc));
        LB_TRY(lb_pass_alloc(p, ck * d, "V'", &vc));
        LB_TRY(compress(p, projection(p->m, layer, 0, 1), lb_pass_at(p, qkv, 2 * d), 3 * d, d, vc));
    }
    LB_TRY(lb_attend(p, qkv, 3 * d, kc, vc, ld_kv, k, o));                  /* scores (B, h, n, k) */
    return lb_project(p, w, o, y);
}

static int attention(LbPass *p, int layer, const LbLayerWeights *w, const void *x, void *y)
{
    return p->m->cfg.order == LB_ORDER_EARLY ? attention_early(p, layer, w, x, y) : attention_late(p, layer, w, x, y);
}

static int check(const LbModelConfig *c, char *msg, size_t msg_size)
{
    if (c->k < LB_K_MIN || c->k > c->n) {
        snprintf(msg, msg_size, "--k %lld is out of range for n %lld: should be %d to n", (long long)c->k,
                 (long long)c->n, LB_K_MIN);
        return LB_ERR_INVALID;
    }
    if (c->sharing == LB_SHARE_NONE && c->order == LB_ORDER_EARLY) {
        snprintf(msg, msg_size, "--sharing none cannot run with --order early: per-head projections need --order late");
        return LB_ERR_INVALID;
    }
    return LB_OK;
}

/* No compression otherwise: the grid's EMPTY cells. */
static int cell_exists(int64_t n, int64_t k) { return k < n; }

/* Attention 4 n k d plus the projections and the compression: late order, Q/K/V/O on n rows
 * 2 n (4 d^2) and K, V each compressed 4 n k d; early order, Q and O on n rows 2 n (2 d^2), K and
 * V on k rows 2 k (2 d^2), and X compressed once 2 n k d (E = F) or twice 4 n k d. */
static double flops_per_layer(const LbModelConfig *c)
{
    const double n = (double)c->n, k = (double)c->k, d = c->d_model;
    if (c->order == LB_ORDER_EARLY) {
        const double compress_flops = separate_kv(c) ? 4 * n * k * d : 2 * n * k * d;
        return 2 * n * (2 * d * d) + 2 * k * (2 * d * d) + 4 * n * k * d + compress_flops;
    }
    return 2 * n * (4 * d * d) + 4 * n * k * d + 4 * n * k * d;
}

/* Every sharing level in both orders, none only with late. */
static void variant(int i, LbModelConfig *c)
{
    static const LbSharing s[] = {LB_SHARE_LAYERWISE, LB_SHARE_LAYERWISE, LB_SHARE_KV, LB_SHARE_KV,
                                  LB_SHARE_HEADWISE,  LB_SHARE_HEADWISE,  LB_SHARE_NONE};
    static const LbOrder o[] = {LB_ORDER_EARLY, LB_ORDER_LATE, LB_ORDER_EARLY, LB_ORDER_LATE,
                                LB_ORDER_EARLY, LB_ORDER_LATE, LB_ORDER_LATE};
    c->sharing = s[i];
    c->order = o[i];
}

static void describe(const LbModelConfig *c, char *buf, size_t size)
{
    snprintf(buf, size, "linformer %s/%s k %lld", lb_sharing_name(c->sharing), lb_order_name(c->order),
             (long long)c->k);
}

const LbModelDesc lb_model_linformer = {
    .name = "linformer",
    .k_meaning = "projected length",
    .k_range = "1 to n",
    .own_flags = "sharing order",
    .cell_exists = cell_exists,
    .check = check,
    .build = build,
    .attention = attention,
    .flops_per_layer = flops_per_layer,
    .variants = 7,
    .variant = variant,
    .describe = describe,
};
