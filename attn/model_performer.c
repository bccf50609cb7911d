/* The Performer's attention (Choromanski et al. 2021): FAVOR+, non-causal. Per head, with
 * x' = x d_h^(-1/4), positive random features phi(x') = exp(w x' - |x'|^2 / 2 - s) / sqrt(m)
 * replace the softmax kernel and attention is D^-1 Q'(K'^T V), D = diag(Q'(K'^T 1)): linear in n
 * at fixed m (the grid's k axis). The stabiliser s (a query row's max, one max over a head's keys)
 * cancels in D^-1. K'^T [V 1] is one (m, hd + 1) buffer, so one product gives numerator and D.
 * Projections w (m, d_h): one per layer shared by its heads, orthogonal blocks drawn on the host
 * from the seed ("omega0"...), plus "ones" (n, 1). No eps in the features: the paper's estimator. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "attn/attention_impl.h"
#include "attn/rng.h"
#include "attn/base/status.h"

/* A standard normal of stream `seed`, draw i: Box-Muller on two 53-bit uniforms in (0, 1). */
static double gaussian(uint64_t seed, uint64_t i)
{
    const double u1 = ((double)(lb_rng_mix(seed, 2 * i) >> 11) + 0.5) * 0x1p-53;
    const double u2 = ((double)(lb_rng_mix(seed, 2 * i + 1) >> 11) + 0.5) * 0x1p-53;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925 * u2);
}

/* w (m, hd): ceil(m / hd) blocks of hd Gaussian rows made orthonormal by Gram-Schmidt (twice over,
 * so the rows stay orthogonal to double precision), the last block's first m mod hd rows; then
 * row i scaled to the norm of an independent Gaussian vector of hd entries. In double, rounded
 * once into values. */
static int draw_orthogonal(float *values, int64_t m, int64_t hd, uint64_t seed)
{
    double *blk = malloc(sizeof(double) * (size_t)(hd * hd));
    if (!blk)
        return LB_FAIL(LB_ERR_NOMEM, "out of host memory drawing the Performer's projections");
    const uint64_t block_seed = lb_rng_mix(seed, 1), norm_seed = lb_rng_mix(seed, 2);
    for (int64_t r0 = 0; r0 < m; r0 += hd) {
        for (int64_t i = 0; i < hd * hd; i++)
            blk[i] = gaussian(block_seed, (uint64_t)(r0 * hd + i));
        for (int64_t r = 0; r < hd; r++) {
            double *v = blk + r * hd;
            for (int pass = 0; pass < 2; pass++)
                for (int64_t q = 0; q < r; q++) {
                    const double *u = blk + q * hd;
                    double dot = 0.0;
                    for (int64_t e = 0; e < hd; e++)
                        dot += u[e] * v[e];
                    for (int64_t e = 0; e < hd; e++)
                        v[e] -= dot * u[e];
                }
            double norm = 0.0;
            for (int64_t e = 0; e < hd; e++)
                norm += v[e] * v[e];
            norm = sqrt(norm);
            for (int64_t e = 0; e < hd; e++)
                v[e] /= norm;
        }
        for (int64_t r = 0; r < hd && r0 + r < m; r++) {
            double len = 0.0;
            for (int64_t e = 0; e < hd; e++) {
                const double g = gaussian(norm_seed, (uint64_t)((r0 + r) * hd + e));
                len += g * g;
            }
            len = sqrt(len);
            for (int64_t e = 0; e < hd; e++)
                values[(r0 + r) * hd + e] = (float)(blk[r * hd + e] * len);
        }
    }
    free(blk);
    return LB_OK;
}

/* The projections of every layer, then the ones. */
static int build(LbBuilder *b)
{
    const LbModelConfig *c = &b->m->cfg;
    const int64_t hd = lb_config_head_dim(c);
    for (int l = 0; l < c->layers; l++) {
        char name[32];
        snprintf(name, sizeof name, "omega%d", l);
        LB_TRY(lb_builder_own_host(b, name, c->k, hd, draw_orthogonal));
    }
    LB_TRY(lb_builder_own_uniform(b, "ones", c->n, 1, 1.0f, 1.0f)); /* 1 + 0 u: exactly 1 */
    for (int64_t i = 0; i < b->m->own_count; i++)
        b->m->own[i].fixed = 1; /* the estimator's random features are drawn, never learned */
    return LB_OK;
}

/* The own tensors in build order: omega0 .. omega{L-1}, ones. */
static const void *omega(const LbModel *m, int layer) { return m->own[layer].ptr; }
static const void *ones(const LbModel *m) { return m->own[m->cfg.layers].ptr; }

/* What the forward keeps for the backward (p->keep, attention.h): the heads of Q, K, V, the
 * features Q' and K', K'^T [V 1], Q'(K'^T [V 1]) and the attention output (B, n, d). */
enum { KEEP_QH, KEEP_KH, KEEP_VH, KEEP_QF, KEEP_KF, KEEP_KV, KEEP_O1, KEEP_O, KEEP_COUNT };

/* lb_qkv, then qh, kh, vh (B, h, n, hd) split out of it for the feature map, which wants heads
 * contiguous (2 x 3 B n d elements moved that lb_attend_rows does not need). */
static int qkv_heads(LbPass *p, const LbLayerWeights *w, const void *x, void **qkv, void **qh, void **kh, void **vh)
{
    const int64_t rows = p->B * p->n, d = p->d;
    LB_TRY(lb_qkv(p, w, x, qkv));
    LB_TRY(lb_pass_alloc(p, rows * d, "Q heads", qh)); /* (B, h, n, hd) */
    LB_TRY(lb_pass_alloc(p, rows * d, "K heads", kh));
    LB_TRY(lb_pass_alloc(p, rows * d, "V heads", vh));
    lb_pass_role(p, LB_ROLE_PERMUTE);
    LB_TRY(p->ops->split_heads(p->be, *qkv, 3 * d, *qh, p->B, p->n, p->h, p->hd));
    LB_TRY(p->ops->split_heads(p->be, lb_pass_at(p, *qkv, d), 3 * d, *kh, p->B, p->n, p->h, p->hd));
    LB_TRY(p->ops->split_heads(p->be, lb_pass_at(p, *qkv, 2 * d), 3 * d, *vh, p->B, p->n, p->h, p->hd));
    lb_pass_role(p, LB_ROLE_UNLABELLED);
    return LB_OK;
}

static int attention(LbPass *p, int layer, const LbLayerWeights *w, const void *x, void *y)
{
    const int64_t bh = p->B * p->h, n = p->n, hd = p->hd, mf = p->k;
    const float scale = (float)pow((double)hd, -0.25);
    const void *W = omega(p->m, layer);
    void *qkv, *qh, *kh, *vh, *qf, *kf, *stat, *kv, *o1;
    LB_TRY(qkv_heads(p, w, x, &qkv, &qh, &kh, &vh));
    /* Q' (B, h, n, m) = phi(scale q W^T): the product's alpha applies the scale in fp32 */
    LB_TRY(lb_pass_alloc(p, bh * n * mf, "query features", &qf));
    lb_pass_role(p, LB_ROLE_FEATURE_MAP); /* both projections onto omega and their exp */
    LB_TRY(lb_pass_bmm(p, 0, 1, n, mf, hd, scale, qh, hd, n * hd, W, hd, 0, qf, mf, n * mf, bh));
    LB_TRY(p->ops->favor_features(p->be, qf, qh, NULL, bh, n, mf, hd, scale, 0));
    LB_TRY(lb_pass_alloc(p, bh * n * mf, "key features", &kf)); /* K' (B, h, n, m) */
    LB_TRY(lb_pass_bmm(p, 0, 1, n, mf, hd, scale, kh, hd, n * hd, W, hd, 0, kf, mf, n * mf, bh));
    LB_TRY(lb_arena_alloc(p->a, lb_favor_stat_bytes(bh, n), "key feature maxima", &stat));
    LB_TRY(p->ops->favor_features(p->be, kf, kh, stat, bh, n, mf, hd, scale, 1));
    /* K'^T [V 1] (B, h, m, hd + 1): K'^T V in the first hd columns, K'^T 1 in the last */
    LB_TRY(lb_pass_alloc(p, bh * mf * (hd + 1), "K'^T [V 1]", &kv));
    lb_pass_role(p, LB_ROLE_KV_STATE);
    LB_TRY(lb_pass_bmm(p, 1, 0, mf, hd, n, 1.0f, kf, mf, n * mf, vh, hd, n * hd, kv, hd + 1, mf * (hd + 1), bh));
    LB_TRY(lb_pass_bmm(p, 1, 0, mf, 1, n, 1.0f, kf, mf, n * mf, ones(p->m), 1, 0, lb_pass_at(p, kv, hd), hd + 1,
                       mf * (hd + 1), bh));
    /* Q'(K'^T [V 1]) (B, h, n, hd + 1): numerators and D; then the quotient over the queries */
    LB_TRY(lb_pass_alloc(p, bh * n * (hd + 1), "Q'(K'^T [V 1])", &o1));
    lb_pass_role(p, LB_ROLE_PV);
    LB_TRY(lb_pass_bmm(p, 0, 0, n, hd + 1, mf, 1.0f, qf, mf, n * mf, kv, hd + 1, mf * (hd + 1), o1, hd + 1,
                       n * (hd + 1), bh));
    void *oh = qh; /* the heads' output, over Q's but in a training step, whose backward needs Q */
    if (p->keep)
        LB_TRY(lb_pass_alloc(p, bh * n * hd, "attention output heads", &oh));
    lb_pass_role(p, LB_ROLE_NORMALISE);
    LB_TRY(p->ops->divide_by_last(p->be, o1, oh, bh * n, hd));
    lb_pass_role(p, LB_ROLE_PERMUTE); /* the heads (B, h, n, hd) back to (B, n, d), over Q/K/V */
    LB_TRY(p->ops->merge_heads(p->be, oh, qkv, p->B, p->n, p->h, p->hd));
    if (p->keep) {
        void *const kept[] = {qh, kh, vh, qf, kf, kv, o1, qkv};
        for (int i = 0; i < KEEP_COUNT; i++)
            p->keep[i] = kept[i];
    }
    return lb_project(p, w, qkv, y);
}

/* The backward through FAVOR+, from the kept tensors: D^-1's, Q'(K'^T [V 1])'s, K'^T [V 1]'s, then
 * each feature map's (its exponent's norm term from favor_features_backward, its projection's
 * from the product with omega), and the heads merged back for the Q, K and V row blocks of
 * W_QKV. The projections omega are fixed random features, not trained: their gradient is not
 * computed, and their tensors in p->grads stay as the step set them (zero), as do the ones'. */
static int attention_backward(LbPass *p, int layer, const LbLayerWeights *w, void *const *kept, const void *x,
                              const void *dy, void *dx, LbLayerWeights *gw)
{
    const int64_t bh = p->B * p->h, n = p->n, hd = p->hd, mf = p->k, rows = p->B * n, d = p->d;
    const float scale = (float)pow((double)hd, -0.25);
    void *d_o, *dh, *do1, *dkv, *dqf, *dkf;
    LB_TRY(lb_pass_alloc(p, rows * d, "attention output gradient", &d_o)); /* (B, n, d) */
    LB_TRY(lb_pass_alloc(p, 3 * rows * d, "Q/K/V heads gradient", &dh));   /* 3 x (B, h, n, hd) */
    LB_TRY(lb_pass_alloc(p, bh * n * (hd + 1), "Q'(K'^T [V 1]) gradient", &do1));
    LB_TRY(lb_pass_alloc(p, bh * mf * (hd + 1), "K'^T [V 1] gradient", &dkv));
    LB_TRY(lb_pass_alloc(p, bh * n * mf, "query features gradient", &dqf)); /* (B, h, n, m) */
    LB_TRY(lb_pass_alloc(p, bh * n * mf, "key features gradient", &dkf));
    void *dvh = lb_pass_at(p, dh, 2 * rows * d);
    LB_TRY(lb_project_backward(p, w, kept[KEEP_O], dy, d_o, gw));
    lb_pass_role(p, LB_ROLE_PERMUTE); /* the output's gradient in heads, in dV's place until dV */
    LB_TRY(p->ops->split_heads(p->be, d_o, d, dvh, p->B, n, p->h, hd));
    lb_pass_role(p, LB_ROLE_NORMALISE);
    LB_TRY(p->ops->divide_by_last_backward(p->be, kept[KEEP_O1], dvh, do1, bh * n, hd));
    lb_pass_role(p, LB_ROLE_PV); /* dQ' (n, m) = dO1 (K'^T [V 1])^T, d(K'^T [V 1]) (m, hd + 1) = Q'^T dO1 */
    LB_TRY(lb_pass_bmm(p, 0, 1, n, mf, hd + 1, 1.0f, do1, hd + 1, n * (hd + 1), kept[KEEP_KV], hd + 1,
                       mf * (hd + 1), dqf, mf, n * mf, bh));
    LB_TRY(lb_pass_bmm(p, 1, 0, mf, hd + 1, n, 1.0f, kept[KEEP_QF], mf, n * mf, do1, hd + 1, n * (hd + 1), dkv,
                       hd + 1, mf * (hd + 1), bh));
    lb_pass_role(p, LB_ROLE_KV_STATE); /* dK' (n, m) = [V 1] d(K'^T [V 1])^T, dV (n, hd) = K' d(K'^T V) */
    LB_TRY(lb_pass_bmm(p, 0, 1, n, mf, hd, 1.0f, kept[KEEP_VH], hd, n * hd, dkv, hd + 1, mf * (hd + 1), dkf, mf,
                       n * mf, bh));
    const LbBmm ones_share = {.trans_b = 1, .m = n, .n = mf, .kdim = 1, .alpha = 1.0f, .a = ones(p->m), .lda = 1,
                              .b = lb_pass_at(p, dkv, hd), .ldb = hd + 1, .stride_b = mf * (hd + 1), .c = dkf,
                              .ldc = mf, .stride_c = n * mf, .batch = bh, .beta = 1.0f};
    LB_TRY(p->ops->bmm(p->be, &ones_share));
    LB_TRY(lb_pass_bmm(p, 0, 0, n, hd, mf, 1.0f, kept[KEEP_KF], mf, n * mf, dkv, hd + 1, mf * (hd + 1), dvh, hd,
                       n * hd, bh));
    lb_pass_role(p, LB_ROLE_FEATURE_MAP);
    for (int i = 0; i < 2; i++) { /* queries, then keys: dX = the norm term's, + scale d(f) omega */
        void *dphi = i ? dkf : dqf, *dxh = lb_pass_at(p, dh, i * rows * d);
        LB_TRY(p->ops->favor_features_backward(p->be, kept[KEEP_QF + i], kept[KEEP_QH + i], dphi, dxh, bh, n, mf, hd,
                                               scale));
        const LbBmm share = {.m = n, .n = hd, .kdim = mf, .alpha = scale, .a = dphi, .lda = mf, .stride_a = n * mf,
                             .b = omega(p->m, layer), .ldb = hd, .c = dxh, .ldc = hd, .stride_c = n * hd,
                             .batch = bh, .beta = 1.0f};
        LB_TRY(p->ops->bmm(p->be, &share));
    }
    for (int64_t j = 0; j < 3; j++) { /* Q, K, V: the heads merged (over the output's gradient), then W_j's */
        lb_pass_role(p, LB_ROLE_PERMUTE);
        LB_TRY(p->ops->merge_heads(p->be, lb_pass_at(p, dh, j * rows * d), d_o, p->B, n, p->h, hd));
        lb_pass_role(p, LB_ROLE_QKV);
        LB_TRY(lb_linear_backward(p, x, lb_pass_at(p, w->w_qkv, j * d * d), d_o, dx,
                                  lb_pass_at(p, gw->w_qkv, j * d * d), lb_pass_at(p, gw->b_qkv, j * d), rows, d, d, 1));
    }
    return LB_OK;
}

static int check(const LbModelConfig *c, char *msg, size_t msg_size)
{
    if (c->k < LB_K_MIN) {
        snprintf(msg, msg_size, "--k %lld is out of range for the Performer: should be at least %d random features",
                 (long long)c->k, LB_K_MIN);
        return LB_ERR_INVALID;
    }
    return LB_OK;
}

/* Q, K, V and output projections 2 n (4 d^2); per head the feature projections of Q and K
 * 2 (2 n m hd), K'^T [V 1] 2 n m (hd + 1) and Q'(K'^T [V 1]) 2 n m (hd + 1): over h heads
 * 8 n m d + 4 n m h, the last term the normaliser. */
static double flops_per_layer(const LbModelConfig *c)
{
    const double n = (double)c->n, m = (double)c->k, d = c->d_model, h = c->heads;
    return 2 * n * (4 * d * d) + 8 * n * m * d + 4 * n * m * h;
}

static void describe(const LbModelConfig *c, char *buf, size_t size)
{
    snprintf(buf, size, "performer m %lld", (long long)c->k);
}

const LbModelDesc lb_model_performer = {
    .name = "performer",
    .k_meaning = "random features m (one draw per layer, shared by its heads)",
    .k_range = "1 or more, m > n too",
    .check = check,
    .build = build,
    .attention = attention,
    .attention_backward = attention_backward,
    .flops_per_layer = flops_per_layer,
    .variants = 1,
    .describe = describe,
};
