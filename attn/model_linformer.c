/* Linformer's attention (Wang et al., 2020): keys and values compressed along the sequence from n
 * to k positions, so the scores are (n, k) per head. Four models of the table, one per projection
 * (METHOD.md "General projections"): linformer (learned E, F (k, n): "proj0"...), linformer-mean
 * and linformer-max (pooling over windows of w = n / k), linformer-conv (depthwise convolution,
 * kernel and stride w: "conv0"... (w, channels), tap-major). */
#include <math.h>
#include <stdio.h>

#include "attn/attention_impl.h"
#include "attn/base/status.h"

typedef enum Projection { PROJ_LINEAR, PROJ_MEAN, PROJ_MAX, PROJ_CONV } Projection;

static Projection projection_kind(const LbModelConfig *c)
{
    switch (c->kind) {
    case LB_MODEL_LINFORMER_MEAN: return PROJ_MEAN;
    case LB_MODEL_LINFORMER_MAX: return PROJ_MAX;
    case LB_MODEL_LINFORMER_CONV: return PROJ_CONV;
    default: return PROJ_LINEAR;
    }
}

static int pooled(const LbModelConfig *c)
{
    const Projection p = projection_kind(c);
    return p == PROJ_MEAN || p == PROJ_MAX;
}

/* The sharing level the compression runs: pooling has no weights to share, so it runs as
 * layerwise (keys and values pooled together, X pooled once in the early order). */
static LbSharing sharing_of(const LbModelConfig *c) { return pooled(c) ? LB_SHARE_LAYERWISE : c->sharing; }

/* Whether keys and values are compressed by different weights (headwise, none). */
static int separate_kv(const LbModelConfig *c)
{
    const LbSharing s = sharing_of(c);
    return s == LB_SHARE_HEADWISE || s == LB_SHARE_NONE;
}

/* The smallest projected length of any layer (--k-schedule): a shared kernel needs the widest
 * window's n / (this) taps; each layer reads its first n / k_l, as it reads E's first k_l rows. */
static int64_t min_layer_k(const LbModelConfig *c)
{
    int64_t k = c->k;
    for (int l = 0; l < c->layers; l++) {
        const int64_t kl = lb_config_layer_k(c, l);
        k = kl < k ? kl : k;
    }
    return k;
}

/* Index among the own tensors, in allocation order, of E (which = 0) or F (which = 1), or their
 * kernels, for `layer` and `head`: layerwise [E]; kv [E_l]; headwise [E_l, F_l] per layer; none
 * [E_lh, F_lh] per layer, head. */
static int64_t projection_index(const LbModelConfig *c, int layer, int head, int which)
{
    switch (c->sharing) {
    case LB_SHARE_LAYERWISE: return 0;
    case LB_SHARE_KV: return layer;
    case LB_SHARE_HEADWISE: return 2 * (int64_t)layer + which;
    case LB_SHARE_NONE: return 2 * ((int64_t)layer * c->heads + head) + which;
    }
    return 0;
}

/* Number of distinct E (and F) matrices, or convolution kernels: one past the last's index. */
static int64_t projection_count(const LbModelConfig *c)
{
    return pooled(c) ? 0 : projection_index(c, c->layers - 1, c->heads - 1, 1) + 1;
}

static void *projection(const LbModel *m, int layer, int head, int which)
{
    return pooled(&m->cfg) ? NULL : m->own[projection_index(&m->cfg, layer, head, which)].ptr;
}

/* E and F: U(-1/sqrt(n), 1/sqrt(n)) keeps E X at the scale of X; a convolution's kernels the same
 * rule on their taps (the widest window). Per head (sharing none) a kernel has the head's
 * channels, otherwise d. */
static int build(LbBuilder *b)
{
    const LbModelConfig *c = &b->m->cfg;
    const int64_t count = projection_count(c);
    const int conv = projection_kind(c) == PROJ_CONV;
    const int64_t taps = c->n / min_layer_k(c);
    const int64_t channels = c->sharing == LB_SHARE_NONE ? lb_config_head_dim(c) : c->d_model;
    const int64_t rows = conv ? taps : c->k, cols = conv ? channels : c->n;
    const float s = 1.0f / sqrtf((float)(conv ? taps : c->n));
    for (int64_t i = 0; i < count; i++) {
        char name[32];
        snprintf(name, sizeof name, "%s%lld", conv ? "conv" : "proj", (long long)i);
        LB_TRY(lb_builder_own_uniform(b, name, rows, cols, -s, s));
    }
    return LB_OK;
}

/* out (B, k, ld_out) = x (B, n, ld_x) compressed to k rows, `width` columns, in place on strided
 * rows: E (k, n) X_b (E's first k rows); windows of n / k pooled; or windows convolved with W
 * (taps, channels), width a multiple of the channels (K and V together under one W). */
static int compress(LbPass *p, int64_t k, const void *E, const void *x, int64_t ld_x, int64_t width, void *out,
                    int64_t ld_out)
{
    const LbModelConfig *c = &p->m->cfg;
    lb_pass_role(p, LB_ROLE_COMPRESS);
    switch (projection_kind(c)) {
    case PROJ_MEAN:
    case PROJ_MAX:
        return p->ops->pool_seq(p->be, x, ld_x, out, ld_out, p->B, p->n, k, width,
                                projection_kind(c) == PROJ_MAX ? LB_POOL_MAX : LB_POOL_MEAN);
    case PROJ_CONV: {
        const int64_t channels = c->sharing == LB_SHARE_NONE ? p->hd : p->d;
        for (int64_t off = 0; off < width; off += channels)
            LB_TRY(p->ops->depthwise_conv_seq(p->be, lb_pass_at(p, x, off), ld_x, E, lb_pass_at(p, out, off), ld_out,
                                              p->B, p->n, k, channels));
        return LB_OK;
    }
    case PROJ_LINEAR: break;
    }
    return lb_pass_bmm(p, 0, 0, k, width, p->n, 1.0f, E, p->n, 0, x, ld_x, p->n * ld_x, out, ld_out, k * ld_out, p->B);
}

/* What the forward keeps for the backward (p->keep, attention.h): Q (late: the fused Q/K/V),
 * X compressed by E and by F (early), K' and V', the probabilities and the attention output. */
enum { KEEP_Q, KEEP_XE, KEEP_XF, KEEP_KC, KEEP_VC, KEEP_P, KEEP_O };

static void keep(LbPass *p, int slot, void *t)
{
    if (p->keep)
        p->keep[slot] = t;
}

/* lb_attend_rows over all n rows, the probabilities kept. */
static int attend(LbPass *p, const void *q, int64_t ldq, const void *kc, const void *vc, int64_t ldkv, int64_t k,
                  void *o)
{
    void *s;
    LB_TRY(lb_pass_alloc(p, p->B * p->h * p->n * k, "attention scores", &s)); /* (B, h, n, k) */
    keep(p, KEEP_P, s);
    return lb_attend_rows(p, q, ldq, kc, vc, ldkv, p->n, k, 0, p->n, s, o);
}

/* Early order (fairseq): K' = (E X) W_K + b_K, V' = (F X) W_V + b_V; with E = F, X is compressed
 * once and K', V' come from one fused product. The output goes over Q, whose rows the scores
 * consumed, except in a training step, whose backward needs Q. */
static int attention_early(LbPass *p, int layer, const LbLayerWeights *w, const void *x, void *y)
{
    const int64_t k = lb_config_layer_k(&p->m->cfg, layer);
    const int64_t rows = p->B * p->n, ck = p->B * k, d = p->d;
    const int fused = !separate_kv(&p->m->cfg);
    void *xe, *xf = NULL, *q, *kc, *vc, *o;
    LB_TRY(lb_pass_alloc(p, ck * d, fused ? "compressed X" : "E X", &xe));   /* (B, k, d) */
    LB_TRY(compress(p, k, projection(p->m, layer, 0, 0), x, d, d, xe, d));
    if (!fused) {
        LB_TRY(lb_pass_alloc(p, ck * d, "F X", &xf));
        LB_TRY(compress(p, k, projection(p->m, layer, 0, 1), x, d, d, xf, d));
    }
    LB_TRY(lb_pass_alloc(p, rows * d, "Q", &q));                             /* (B, n, d) */
    lb_pass_role(p, LB_ROLE_QKV);
    LB_TRY(p->ops->linear(p->be, x, w->w_qkv, w->b_qkv, q, rows, d, d, 0));
    const void *wk = lb_pass_at(p, w->w_qkv, d * d), *bk = lb_pass_at(p, w->b_qkv, d);
    if (fused) { /* K' and V' side by side, (B, k, 2d), from one product */
        LB_TRY(lb_pass_alloc(p, ck * 2 * d, "K'/V'", &kc));
        LB_TRY(p->ops->linear(p->be, xe, wk, bk, kc, ck, d, 2 * d, 0));
        vc = lb_pass_at(p, kc, d);
    } else {
        LB_TRY(lb_pass_alloc(p, ck * d, "K'", &kc));                         /* (B, k, d) */
        LB_TRY(p->ops->linear(p->be, xe, wk, bk, kc, ck, d, d, 0));
        LB_TRY(lb_pass_alloc(p, ck * d, "V'", &vc));
        LB_TRY(p->ops->linear(p->be, xf, lb_pass_at(p, w->w_qkv, 2 * d * d), lb_pass_at(p, w->b_qkv, 2 * d), vc,
                              ck, d, d, 0));
    }
    o = q;
    if (p->keep)
        LB_TRY(lb_pass_alloc(p, rows * d, "attention output", &o));
    keep(p, KEEP_Q, q), keep(p, KEEP_XE, xe), keep(p, KEEP_XF, xf), keep(p, KEEP_KC, kc), keep(p, KEEP_VC, vc);
    keep(p, KEEP_O, o);
    LB_TRY(attend(p, q, d, kc, vc, fused ? 2 * d : d, k, o));               /* scores (B, h, n, k) */
    return lb_project(p, w, o, y);
}

/* Late order (the paper's figure): K' = E (X W_K + b_K), V' = F (X W_V + b_V); shared E compresses
 * K and V in one call, headwise each, none every head with its own E_i, F_i. */
static int attention_late(LbPass *p, int layer, const LbLayerWeights *w, const void *x, void *y)
{
    const int64_t k = lb_config_layer_k(&p->m->cfg, layer);
    const int64_t rows = p->B * p->n, ck = p->B * k, d = p->d;
    const LbSharing sharing = sharing_of(&p->m->cfg);
    void *qkv, *o, *kc, *vc;
    int64_t ld_kv = d;
    LB_TRY(lb_qkv(p, w, x, &qkv));                                         /* (B, n, 3d) */
    LB_TRY(lb_pass_alloc(p, rows * d, "attention output", &o));            /* (B, n, d) */
    if (!separate_kv(&p->m->cfg)) {
        void *kv;
        LB_TRY(lb_pass_alloc(p, ck * 2 * d, "K'/V'", &kv));                 /* (B, k, 2d) */
        LB_TRY(compress(p, k, projection(p->m, layer, 0, 0), lb_pass_at(p, qkv, d), 3 * d, 2 * d, kv, 2 * d));
        kc = kv;
        vc = lb_pass_at(p, kv, d);
        ld_kv = 2 * d;
    } else {
        /* Headwise: K and V each over all d columns. None: per head i, over the batch, K'_bi (k, hd)
         * = E_i (k, n) K_bi (n, hd), K_bi read in place (columns d + i hd of Q/K/V) and K'_bi
         * written in place (columns i hd of K'). */
        const int64_t parts = sharing == LB_SHARE_NONE ? p->h : 1, width = d / parts;
        LB_TRY(lb_pass_alloc(p, ck * d, "K'", &kc));                        /* (B, k, d) */
        LB_TRY(lb_pass_alloc(p, ck * d, "V'", &vc));
        for (int64_t i = 0; i < parts; i++) {
            LB_TRY(compress(p, k, projection(p->m, layer, (int)i, 0), lb_pass_at(p, qkv, d + i * width), 3 * d, width,
                            lb_pass_at(p, kc, i * width), d));
            LB_TRY(compress(p, k, projection(p->m, layer, (int)i, 1), lb_pass_at(p, qkv, 2 * d + i * width), 3 * d,
                            width, lb_pass_at(p, vc, i * width), d));
        }
    }
    keep(p, KEEP_Q, qkv), keep(p, KEEP_KC, kc), keep(p, KEEP_VC, vc), keep(p, KEEP_O, o);
    LB_TRY(attend(p, qkv, 3 * d, kc, vc, ld_kv, k, o));                    /* scores (B, h, n, k) */
    return lb_project(p, w, o, y);
}

static int attention(LbPass *p, int layer, const LbLayerWeights *w, const void *x, void *y)
{
    return p->m->cfg.order == LB_ORDER_EARLY ? attention_early(p, layer, w, x, y) : attention_late(p, layer, w, x, y);
}

/* --- the training step's backward ------------------------------------------------------------ */

/* compress's backward from dout (B, k, ld_out), its output's gradient: x's gradient into dx, laid
 * out as x, written, or added when `accumulate` (x's rows then `width` wide); the gradient of the
 * projection's weights that ran (E's first k rows, a kernel's first n / k taps) added to their
 * tensor in p->grads, which every layer, head, K and V sharing them adds to. */
static int compress_backward(LbPass *p, int layer, int head, int which, int64_t k, const void *x, int64_t ld_x,
                             int64_t width, const void *dout, int64_t ld_out, void *dx, int accumulate)
{
    const LbModelConfig *c = &p->m->cfg;
    const Projection kind = projection_kind(c);
    const void *E = projection(p->m, layer, head, which);
    void *dE = projection(p->grads, layer, head, which), *out = dx;
    lb_pass_role(p, LB_ROLE_COMPRESS);
    if (kind == PROJ_LINEAR) {
        LbBmm g = {.trans_a = 1, .m = p->n, .n = width, .kdim = k, .alpha = 1.0f, .a = E, .lda = p->n, .b = dout,
                   .ldb = ld_out, .stride_b = k * ld_out, .c = dx, .ldc = ld_x, .stride_c = p->n * ld_x,
                   .batch = p->B, .beta = accumulate ? 1.0f : 0.0f};
        LB_TRY(p->ops->bmm(p->be, &g)); /* dX_b (n, width) = E^T dout_b */
        g = (LbBmm){.trans_b = 1, .m = k, .n = p->n, .kdim = width, .alpha = 1.0f, .a = dout, .lda = ld_out,
                    .stride_a = k * ld_out, .b = x, .ldb = ld_x, .stride_b = p->n * ld_x, .c = dE, .ldc = p->n,
                    .batch = p->B, .beta = 1.0f};
        return p->ops->bmm(p->be, &g); /* dE (k, n) += sum over b of dout_b X_b^T */
    }
    const int64_t count = p->B * p->n * ld_x;
    if (accumulate)
        LB_TRY(lb_pass_alloc(p, count, "compressed input gradient", &out));
    if (kind == PROJ_CONV) {
        const int64_t channels = c->sharing == LB_SHARE_NONE ? p->hd : p->d, taps = p->n / k;
        const size_t bytes = lb_depthwise_conv_seq_backward_scratch_bytes(p->n, k, channels);
        void *dw, *scratch = NULL;
        LB_TRY(lb_pass_alloc(p, taps * channels, "convolution kernel gradient", &dw)); /* (taps, channels) */
        if (bytes)
            LB_TRY(lb_arena_alloc(p->a, bytes, "convolution kernel partial sums", &scratch));
        for (int64_t off = 0; off < width; off += channels) {
            LB_TRY(p->ops->depthwise_conv_seq_backward(p->be, lb_pass_at(p, x, off), ld_x, E, lb_pass_at(p, dout, off),
                                                       ld_out, lb_pass_at(p, out, off), dw, p->B, p->n, k, channels,
                                                       scratch));
            LB_TRY(p->ops->add(p->be, dw, dE, taps * channels));
        }
    } else {
        LB_TRY(p->ops->pool_seq_backward(p->be, x, ld_x, dout, ld_out, out, p->B, p->n, k, width,
                                         kind == PROJ_MAX ? LB_POOL_MAX : LB_POOL_MEAN));
    }
    return accumulate ? p->ops->add(p->be, out, dx, count) : LB_OK;
}

/* What both orders' backward start with: the output projection's gradient, then the attention's
 * (lb_attend_rows_backward over all n rows, P (B, h, n, k) kept) into dq, laid out as the kept Q
 * (ldq), and into dK' and dV', side by side (B, k, 2d) when fused, else dK' then dV' (B, k, d). */
static int attend_backward(LbPass *p, const LbLayerWeights *w, void *const *kept, int64_t k, int fused, int64_t ldq,
                           const void *dy, void *dq, void **dkc, void **dvc, LbLayerWeights *gw)
{
    const int64_t ck = p->B * k, d = p->d;
    void *d_o, *ds;
    LB_TRY(lb_pass_alloc(p, p->B * p->n * d, "attention output gradient", &d_o)); /* (B, n, d) */
    LB_TRY(lb_pass_alloc(p, ck * 2 * d, "K'/V' gradient", dkc));
    *dvc = lb_pass_at(p, *dkc, fused ? d : ck * d);
    LB_TRY(lb_pass_alloc(p, p->B * p->h * p->n * k, "attention score gradient", &ds)); /* (B, h, n, k) */
    LB_TRY(lb_project_backward(p, w, kept[KEEP_O], dy, d_o, gw));
    return lb_attend_rows_backward(p, kept[KEEP_Q], ldq, kept[KEEP_KC], kept[KEEP_VC], fused ? 2 * d : d, p->n, k, 0,
                                   p->n, kept[KEEP_P], ds, d_o, dq, *dkc, *dvc, 0);
}

/* Early order: the output projection's, the attention's, Q's product's (into dx), K' and V''s
 * (into the gradients of E X and F X), then each compression's into dx. */
static int backward_early(LbPass *p, int layer, const LbLayerWeights *w, void *const *kept, const void *x,
                          const void *dy, void *dx, LbLayerWeights *gw)
{
    const int64_t k = lb_config_layer_k(&p->m->cfg, layer), rows = p->B * p->n, ck = p->B * k, d = p->d;
    const int fused = !separate_kv(&p->m->cfg);
    void *dq, *dkc, *dvc, *dxe, *dxf = NULL;
    LB_TRY(lb_pass_alloc(p, rows * d, "Q gradient", &dq)); /* (B, n, d) */
    LB_TRY(lb_pass_alloc(p, ck * d, "E X gradient", &dxe));
    if (!fused)
        LB_TRY(lb_pass_alloc(p, ck * d, "F X gradient", &dxf));
    LB_TRY(attend_backward(p, w, kept, k, fused, d, dy, dq, &dkc, &dvc, gw));
    lb_pass_role(p, LB_ROLE_QKV);
    LB_TRY(lb_linear_backward(p, x, w->w_qkv, dq, dx, gw->w_qkv, gw->b_qkv, rows, d, d, 1));
    for (int which = 0; which < 2 - fused; which++) { /* K' (and V' with it, fused), then V' */
        const int64_t r0 = (1 + which) * d, width = fused ? 2 * d : d;
        LB_TRY(lb_linear_backward(p, kept[which ? KEEP_XF : KEEP_XE], lb_pass_at(p, w->w_qkv, r0 * d),
                                  which ? dvc : dkc, which ? dxf : dxe, lb_pass_at(p, gw->w_qkv, r0 * d),
                                  lb_pass_at(p, gw->b_qkv, r0), ck, d, width, 0));
    }
    LB_TRY(compress_backward(p, layer, 0, 0, k, x, d, d, dxe, d, dx, 1));
    return fused ? LB_OK : compress_backward(p, layer, 0, 1, k, x, d, d, dxf, d, dx, 1);
}

/* Late order: the output projection's, the attention's into Q's columns of the Q/K/V gradient and
 * into dK', dV', each compression's into the K and V columns, then lb_qkv's. */
static int backward_late(LbPass *p, int layer, const LbLayerWeights *w, void *const *kept, const void *x,
                         const void *dy, void *dx, LbLayerWeights *gw)
{
    const int64_t k = lb_config_layer_k(&p->m->cfg, layer), rows = p->B * p->n, d = p->d;
    const LbSharing sharing = sharing_of(&p->m->cfg);
    const int fused = !separate_kv(&p->m->cfg);
    const void *qkv = kept[KEEP_Q];
    void *dqkv, *dkc, *dvc;
    LB_TRY(lb_pass_alloc(p, rows * 3 * d, "Q/K/V gradient", &dqkv)); /* (B, n, 3d) */
    LB_TRY(attend_backward(p, w, kept, k, fused, 3 * d, dy, dqkv, &dkc, &dvc, gw));
    if (fused) {
        LB_TRY(compress_backward(p, layer, 0, 0, k, lb_pass_at(p, qkv, d), 3 * d, 2 * d, dkc, 2 * d,
                                 lb_pass_at(p, dqkv, d), 0));
    } else {
        const int64_t parts = sharing == LB_SHARE_NONE ? p->h : 1, width = d / parts;
        for (int64_t i = 0; i < parts; i++)
            for (int which = 0; which < 2; which++) { /* E_i on K's columns, F_i on V's */
                const int64_t col = (1 + which) * d + i * width;
                LB_TRY(compress_backward(p, layer, (int)i, which, k, lb_pass_at(p, qkv, col), 3 * d, width,
                                         lb_pass_at(p, which ? dvc : dkc, i * width), d, lb_pass_at(p, dqkv, col), 0));
            }
    }
    return lb_qkv_backward(p, w, x, dqkv, dx, gw);
}

static int attention_backward(LbPass *p, int layer, const LbLayerWeights *w, void *const *kept, const void *x,
                              const void *dy, void *dx, LbLayerWeights *gw)
{
    return p->m->cfg.order == LB_ORDER_EARLY ? backward_early(p, layer, w, kept, x, dy, dx, gw)
                                             : backward_late(p, layer, w, kept, x, dy, dx, gw);
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
    if (projection_kind(c) != PROJ_LINEAR) {
        for (int l = 0; l < c->layers; l++) {
            const int64_t k = lb_config_layer_k(c, l);
            if (c->n % k != 0) {
                snprintf(msg, msg_size,
                         "--k %lld does not divide --n %lld%s: %s compresses windows of n/k positions, so k must divide n",
                         (long long)k, (long long)c->n, l > 0 ? " (a layer's k under --k-schedule)" : "",
                         lb_model_name(c->kind));
                return LB_ERR_INVALID;
            }
        }
    }
    return LB_OK;
}

/* No compression otherwise: the grid's EMPTY cells. */
static int cell_exists(int64_t n, int64_t k) { return k < n; }

/* Pooling and convolution windows are whole: n / k positions each. */
static int cell_exists_windows(int64_t n, int64_t k) { return k >= 1 && k < n && n % k == 0; }

/* FLOPs of compressing one tensor of `width` columns from n rows to k (multiply-add = 2):
 * E's product 2 n k width; the depthwise convolution one multiply-add per input element,
 * 2 n width; pooling none (no product, like softmax: METHOD.md, "Work counted"). */
static double compress_flops(const LbModelConfig *c, double k, double width)
{
    const double n = (double)c->n;
    switch (projection_kind(c)) {
    case PROJ_LINEAR: return 2 * n * k * width;
    case PROJ_CONV: return 2 * n * width;
    default: return 0.0;
    }
}

/* One layer's: attention 4 n k d plus the projections and the compression. Late order, Q/K/V/O on
 * n rows 2 n (4 d^2) and K, V each compressed; early order, Q and O on n rows 2 n (2 d^2), K and V
 * on k rows 2 k (2 d^2), and X compressed once (E = F, pooling) or twice. */
static double layer_flops(const LbModelConfig *c, double k)
{
    const double n = (double)c->n, d = c->d_model;
    if (c->order == LB_ORDER_EARLY)
        return 2 * n * (2 * d * d) + 2 * k * (2 * d * d) + 4 * n * k * d +
               (separate_kv(c) ? 2 : 1) * compress_flops(c, k, d);
    return 2 * n * (4 * d * d) + 4 * n * k * d + 2 * compress_flops(c, k, d);
}

/* The mean over the layers, so that L times it is the pass's (each layer at its own k). */
static double flops_per_layer(const LbModelConfig *c)
{
    double sum = 0;
    for (int l = 0; l < c->layers; l++)
        sum += layer_flops(c, (double)lb_config_layer_k(c, l));
    return c->layers > 0 ? sum / c->layers : 0.0;
}

/* The largest divisor of n not above k (at least 1). */
static int64_t divisor_at_most(int64_t n, int64_t k)
{
    for (int64_t v = k < n ? k : n; v > 1; v--)
        if (n % v == 0)
            return v;
    return 1;
}

/* Every sharing level in both orders, none only with late (pooling: the first two, both orders:
 * its sharing level changes nothing). Windows take k down to a divisor of n, so that every loop
 * over the table's variants (tests, linbench check) runs them on its shapes. */
static void variant(int i, LbModelConfig *c)
{
    static const LbSharing s[] = {LB_SHARE_LAYERWISE, LB_SHARE_LAYERWISE, LB_SHARE_KV, LB_SHARE_KV,
                                  LB_SHARE_HEADWISE,  LB_SHARE_HEADWISE,  LB_SHARE_NONE};
    static const LbOrder o[] = {LB_ORDER_EARLY, LB_ORDER_LATE, LB_ORDER_EARLY, LB_ORDER_LATE,
                                LB_ORDER_EARLY, LB_ORDER_LATE, LB_ORDER_LATE};
    c->sharing = s[i];
    c->order = o[i];
    if (projection_kind(c) != PROJ_LINEAR)
        c->k = divisor_at_most(c->n, c->k);
}

static void describe(const LbModelConfig *c, char *buf, size_t size)
{
    char schedule[64] = "";
    if (c->k_schedule != LB_KSCHED_UNIFORM) { /* the grid's k is the first layer's */
        char text[48];
        lb_kschedule_text(c, text, sizeof text);
        snprintf(schedule, sizeof schedule, " (%s)", text);
    }
    /* pooling has no sharing level to name */
    snprintf(buf, size, "%s %s%s%s k %lld%s", lb_model_name(c->kind), pooled(c) ? "" : lb_sharing_name(c->sharing),
             pooled(c) ? "" : "/", lb_order_name(c->order), (long long)c->k, schedule);
}

/* What the four models share, what the three with windows of n / k share besides, and what the two
 * pooling models share. */
#define LB_LINFORMER_OPS                                                                                      \
    .check = check, .attention = attention, .attention_backward = attention_backward, .variant = variant,     \
    .flops_per_layer = flops_per_layer, .describe = describe
#define LB_LINFORMER_WINDOWS                                                                                  \
    .k_range = "1 to n, dividing n", .cell_exists = cell_exists_windows,                                      \
    .skip_reason = "k must divide n: it compresses windows of n/k positions"
#define LB_LINFORMER_POOL(NAME, KIND)                                                                         \
    {.name = NAME, .k_meaning = "projected length (" KIND " pooling, windows of n/k)",                        \
     .own_flags = "order projection k-schedule", .variants = 2, LB_LINFORMER_OPS,                          \
     LB_LINFORMER_WINDOWS}

const LbModelDesc lb_model_linformer = {
    .name = "linformer",
    .k_meaning = "projected length",
    .k_range = "1 to n",
    .own_flags = "sharing order projection k-schedule",
    .cell_exists = cell_exists,
    .build = build,
    .variants = 7,
    LB_LINFORMER_OPS,
};

const LbModelDesc lb_model_linformer_mean = LB_LINFORMER_POOL("linformer-mean", "mean");
const LbModelDesc lb_model_linformer_max = LB_LINFORMER_POOL("linformer-max", "max");

const LbModelDesc lb_model_linformer_conv = {
    .name = "linformer-conv",
    .k_meaning = "projected length (depthwise convolution, kernel and stride n/k)",
    .own_flags = "sharing order projection k-schedule",
    .build = build,
    .variants = 7,
    LB_LINFORMER_OPS,
    LB_LINFORMER_WINDOWS,
};
