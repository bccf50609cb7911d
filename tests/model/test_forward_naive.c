/* The forward passes against a naive encoder written from METHOD.md alone, in double, one
 * sequence and one head at a time with no head-major buffers, fused weights or batching: it
 * catches wiring mistakes (a wrong split offset, a stride, the bias of the early order) that
 * every op test would miss. Weights and tokens are read back from the CPU backend's model.
 * Every variant of every model of the table: standard, Linformer with each sharing level and
 * order, chunked with a chunk that divides n, one that does not and one past n, the Performer
 * (FAVOR+ written out from its paper, with the model's own projections read back), and the
 * Linformer's general projections (mean, max pooling and the depthwise convolution over windows of
 * n / k positions, written out from METHOD.md; the table's variants take k to a divisor of n). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn/arena.h"
#include "attn/forward.h"
#include "attn/model.h"
#include "attn/plan.h"
#include "attn/base/status.h"
#include "tests/lib/check.h"
#include "tests/lib/naive_attention.h"
#include "tests/lib/naive_layers.h"
#include "tests/lib/model.h"

typedef struct Host {
    LbModelConfig c;
    float **t;       /* every weight tensor, in lb_model_tensors order */
    int64_t count;
} Host;

enum { TOK, POS, EMB_G, EMB_B, LAYER0 };
enum { W_QKV, B_QKV, W_O, B_O, LN1_G, LN1_B, W_FF1, B_FF1, W_FF2, B_FF2, LN2_G, LN2_B, PER_LAYER };

static const float *layer_w(const Host *h, int l, int which) { return h->t[LAYER0 + l * PER_LAYER + which]; }

/* E (which 0) or F (which 1) of (layer, head), from METHOD.md's sharing levels. */
static const float *proj(const Host *h, int l, int head, int which)
{
    int64_t base = LAYER0 + (int64_t)h->c.layers * PER_LAYER, i = 0;
    if (h->c.kind == LB_MODEL_LINFORMER_MEAN || h->c.kind == LB_MODEL_LINFORMER_MAX)
        return NULL; /* pooling: no weights */
    switch (h->c.sharing) {
    case LB_SHARE_LAYERWISE: i = 0; break;
    case LB_SHARE_KV: i = l; break;
    case LB_SHARE_HEADWISE: i = 2 * l + which; break;
    case LB_SHARE_NONE: i = 2 * ((int64_t)l * h->c.heads + head) + which; break;
    }
    return h->t[base + i];
}

/* out (k, w) = E (k, n) a (n, w) where a has row stride lda; for the general projections (METHOD.md),
 * each column j of a in windows of n / k rows: their mean, their max, or their sum weighted by the
 * kernel E (taps, channels) tap-major, column j taking channel j % channels (K and V share one). */
static void compress(const LbModelConfig *c, const float *E, int64_t k, int64_t n, const double *a, int64_t lda,
                     int64_t w, double *out, int64_t ldo)
{
    const int64_t win = n / k, channels = c->sharing == LB_SHARE_NONE ? c->d_model / c->heads : c->d_model;
    for (int64_t r = 0; r < k; r++)
        for (int64_t j = 0; j < w; j++) {
            double s = c->kind == LB_MODEL_LINFORMER_MAX ? -INFINITY : 0;
            if (c->kind == LB_MODEL_LINFORMER)
                for (int64_t t = 0; t < n; t++)
                    s += (double)E[r * n + t] * a[t * lda + j];
            for (int64_t t = 0; c->kind != LB_MODEL_LINFORMER && t < win; t++) {
                const double v = a[(r * win + t) * lda + j];
                if (c->kind == LB_MODEL_LINFORMER_MAX)
                    s = v > s ? v : s;
                else if (c->kind == LB_MODEL_LINFORMER_CONV)
                    s += (double)E[t * channels + j % channels] * v;
                else
                    s += v / (double)win;
            }
            out[r * ldo + j] = s;
        }
}

/* FAVOR+ from its paper and METHOD.md, one head, in double: rows (n) of the head's columns of
 * q, k, v (row stride d) into ctx; W (m, hd) the layer's projection. x' = x hd^(-1/4);
 * phi(x') = exp(W x' - |x'|^2 / 2 - s) / sqrt(m), s each query row's max of W x', one max over
 * all keys; ctx = D^-1 Q'(K'^T V), D = diag(Q'(K'^T 1)). */
static void performer_head(const double *q, const double *k, const double *v, int64_t n, int64_t d, int64_t hd,
                           const float *W, int64_t m, double *ctx)
{
    double *qf = malloc(sizeof(double) * n * m), *kf = malloc(sizeof(double) * n * m);
    const double sc = pow((double)hd, -0.25);
    double kmax = -INFINITY;
    for (int which = 0; which < 2; which++) {
        const double *x = which ? k : q;
        double *feat = which ? kf : qf;
        for (int64_t t = 0; t < n; t++) {
            double half = 0, rmax = -INFINITY;
            for (int64_t e = 0; e < hd; e++)
                half += 0.5 * (sc * x[t * d + e]) * (sc * x[t * d + e]);
            for (int64_t j = 0; j < m; j++) {
                double dot = 0;
                for (int64_t e = 0; e < hd; e++)
                    dot += (double)W[j * hd + e] * sc * x[t * d + e];
                feat[t * m + j] = dot;
                rmax = dot > rmax ? dot : rmax;
            }
            if (which) /* keys: W x' - |x'|^2 / 2 now, the exp once the max of all keys is known */
                kmax = rmax > kmax ? rmax : kmax;
            for (int64_t j = 0; j < m; j++)
                feat[t * m + j] = which ? feat[t * m + j] - half : exp(feat[t * m + j] - half - rmax) / sqrt((double)m);
        }
    }
    for (int64_t i = 0; i < n * m; i++)
        kf[i] = exp(kf[i] - kmax) / sqrt((double)m);
    for (int64_t t = 0; t < n; t++) {
        double den = 0;
        for (int64_t s = 0; s < n; s++) {
            double w = 0;
            for (int64_t j = 0; j < m; j++)
                w += qf[t * m + j] * kf[s * m + j];
            den += w;
            for (int64_t e = 0; e < hd; e++)
                ctx[t * d + e] += w * v[s * d + e];
        }
        for (int64_t e = 0; e < hd; e++)
            ctx[t * d + e] /= den;
    }
    free(qf), free(kf);
}

/* One sequence through the encoder. out (n, d). */
static void encode(const Host *h, const int32_t *ids, double *x)
{
    const LbModelConfig *c = &h->c;
    const int64_t n = c->n, d = c->d_model, f = c->ffn, H = c->heads, hd = d / H;
    /* Linformer compresses keys and values to k rows; standard and chunked (the same mathematics)
     * attend over all n. */
    const int compressed = c->kind == LB_MODEL_LINFORMER || c->kind == LB_MODEL_LINFORMER_MEAN ||
                           c->kind == LB_MODEL_LINFORMER_MAX || c->kind == LB_MODEL_LINFORMER_CONV;
    const int64_t kv = compressed ? c->k : n;
    double *q = malloc(sizeof(double) * n * d), *kf = malloc(sizeof(double) * n * d);
    double *vf = malloc(sizeof(double) * n * d), *ctx = malloc(sizeof(double) * n * d);
    double *y = malloc(sizeof(double) * n * (d > f ? d : f) * 2), *hid = malloc(sizeof(double) * n * f);
    double *kc = malloc(sizeof(double) * kv * d), *vc = malloc(sizeof(double) * kv * d);
    double *ex = malloc(sizeof(double) * kv * d), *s = malloc(sizeof(double) * kv);
    for (int64_t t = 0; t < n; t++)
        for (int64_t i = 0; i < d; i++)
            x[t * d + i] = (double)h->t[TOK][(int64_t)ids[t] * d + i] + h->t[POS][t * d + i];
    lb_naive_layernorm(x, NULL, n, d, h->t[EMB_G], h->t[EMB_B], LB_LAYERNORM_EPS);
    for (int l = 0; l < c->layers; l++) {
        const float *Wqkv = layer_w(h, l, W_QKV), *bqkv = layer_w(h, l, B_QKV);
        /* this layer's k (--k-schedule): E's first kl rows, the kernels' first n / kl taps */
        const int64_t kl = compressed ? lb_config_layer_k(c, l) : n;
        lb_naive_linear(x, n, d, Wqkv, bqkv, 0, d, q);
        lb_naive_linear(x, n, d, Wqkv, bqkv, d, d, kf);
        lb_naive_linear(x, n, d, Wqkv, bqkv, 2 * d, d, vf);
        if (c->kind == LB_MODEL_PERFORMER) { /* own tensors: omega0 .. omega{L-1} (m, hd), ones */
            const float *W = h->t[LAYER0 + (int64_t)c->layers * PER_LAYER + l];
            memset(ctx, 0, sizeof(double) * n * d);
            for (int64_t head = 0; head < H; head++)
                performer_head(q + head * hd, kf + head * hd, vf + head * hd, n, d, hd, W, c->k, ctx + head * hd);
        }
        for (int64_t head = 0; head < H && c->kind != LB_MODEL_PERFORMER; head++) {
            /* keys and values of this head: kc, vc (kv, d) holding the head's columns */
            if (!compressed) {
                memcpy(kc, kf, sizeof(double) * n * d);
                memcpy(vc, vf, sizeof(double) * n * d);
            } else if (c->order == LB_ORDER_EARLY) { /* K' = (E X) W_K^T + b_K */
                compress(c, proj(h, l, (int)head, 0), kl, n, x, d, d, ex, d);
                lb_naive_linear(ex, kl, d, Wqkv, bqkv, d, d, kc);
                compress(c, proj(h, l, (int)head, 1), kl, n, x, d, d, ex, d);
                lb_naive_linear(ex, kl, d, Wqkv, bqkv, 2 * d, d, vc);
            } else if (c->sharing == LB_SHARE_NONE && c->kind == LB_MODEL_LINFORMER_CONV) {
                /* this head's own kernels (taps, hd) on its columns alone */
                const int64_t hd0 = head * hd;
                compress(c, proj(h, l, (int)head, 0), kl, n, kf + hd0, d, hd, kc + hd0, d);
                compress(c, proj(h, l, (int)head, 1), kl, n, vf + hd0, d, hd, vc + hd0, d);
            } else { /* K' = E (X W_K^T + b_K) */
                compress(c, proj(h, l, (int)head, 0), kl, n, kf, d, d, kc, d);
                compress(c, proj(h, l, (int)head, 1), kl, n, vf, d, d, vc, d);
            }
            lb_naive_head_attention(q, kc, vc, n, kl, d, hd, head, s, ctx);
        }
        lb_naive_linear(ctx, n, d, layer_w(h, l, W_O), layer_w(h, l, B_O), 0, d, y);
        lb_naive_layernorm(x, y, n, d, layer_w(h, l, LN1_G), layer_w(h, l, LN1_B), LB_LAYERNORM_EPS);
        lb_naive_linear(x, n, d, layer_w(h, l, W_FF1), layer_w(h, l, B_FF1), 0, f, hid);
        for (int64_t i = 0; i < n * f; i++)
            hid[i] = 0.5 * hid[i] * (1 + erf(hid[i] / sqrt(2.0)));
        lb_naive_linear(hid, n, f, layer_w(h, l, W_FF2), layer_w(h, l, B_FF2), 0, d, y);
        lb_naive_layernorm(x, y, n, d, layer_w(h, l, LN2_G), layer_w(h, l, LN2_B), LB_LAYERNORM_EPS);
    }
    free(q), free(kf), free(vf), free(ctx), free(y), free(hid), free(kc), free(vc), free(ex), free(s);
}

static void check(LbBackend *be, const LbModelConfig *cfg, int64_t B)
{
    char name[64];
    lb_test_variant_name(cfg, name, sizeof name);
    const LbPlanParams pp = {be->elem_bytes, be->alignment, be->workspace_bytes};
    LbPlan plan;
    LbArena a;
    LbModel m;
    LbInputs in;
    lb_plan_compute(cfg, &pp, B, &plan);
    if (!lb_check(lb_arena_open(&a, be, plan.total) == LB_OK, "%s: arena", name))
        return;
    if (!lb_check(lb_model_build(&m, cfg, be, &a, lb_test_seed) == LB_OK, "%s: build", name)) {
        lb_arena_close(&a);
        return;
    }
    const int64_t n = cfg->n, d = cfg->d_model, count = B * n * d;
    int ok = lb_inputs_alloc(&m, &a, B, &in) == LB_OK && lb_inputs_fill(&m, &in, lb_test_seed + 5) == LB_OK &&
             lb_forward(&m, &a, &in) == LB_OK;
    lb_check(ok, "%s: forward ran: %s", name, lb_error_message());

    Host h = {*cfg, NULL, lb_model_tensors(&m, NULL, 0)};
    LbTensorRef *refs = calloc((size_t)h.count, sizeof *refs);
    h.t = calloc((size_t)h.count, sizeof *h.t);
    lb_model_tensors(&m, refs, h.count);
    for (int64_t i = 0; i < h.count; i++) {
        h.t[i] = malloc(sizeof(float) * (size_t)(refs[i].rows * refs[i].cols));
        ok &= be->ops->download(be, h.t[i], refs[i].ptr, refs[i].rows * refs[i].cols) == LB_OK;
    }
    int32_t *ids = malloc(sizeof(int32_t) * (size_t)(B * n));
    float *out = malloc(sizeof(float) * (size_t)count);
    double *ref = malloc(sizeof(double) * (size_t)count);
    ok &= be->ops->copy_raw_to_host(be, ids, in.ids, sizeof(int32_t) * (size_t)(B * n)) == LB_OK;
    ok &= be->ops->download(be, out, in.x, count) == LB_OK;
    lb_check(ok, "%s: read back", name);
    for (int64_t b = 0; b < B; b++)
        encode(&h, ids + b * n, ref + b * n * d);
    double num = 0, den = 0;
    int64_t first_bad = -1;
    for (int64_t i = 0; i < count; i++) {
        double e = out[i] - ref[i];
        num += e * e;
        den += ref[i] * ref[i];
        if (first_bad < 0 && !(fabs(e) <= 1e-4 + 1e-4 * fabs(ref[i])))
            first_bad = i;
    }
    double rel = sqrt(num / den);
    /* fp32 storage against double throughout: rounding of each stored tensor only. */
    lb_check(rel <= 1e-5 && first_bad < 0, "%s: relative error %.3g (<= 1e-5)%s", name, rel,
             first_bad >= 0 ? ", first mismatch shown below" : "");
    if (first_bad >= 0)
        printf("  element %lld: got %.7g want %.7g\n", (long long)first_bad, out[first_bad], ref[first_bad]);
    for (int64_t i = 0; i < h.count; i++)
        free(h.t[i]);
    free(h.t), free(refs), free(ids), free(out), free(ref);
    lb_model_release(&m);
    lb_arena_close(&a);
}

int main(void)
{
    lb_test_init("test_forward_naive");
    LbBackend *be = NULL;
    if (lb_cpu_backend_open(LB_DTYPE_FP32, (size_t)1 << 30, &be) != LB_OK)
        return 1;
    for (int i = 0; i < LB_TEST_VARIANTS; i++) {
        LbModelConfig c = lb_test_variant(i, 12, 5);
        check(be, &c, 2);
    }
    /* A k per layer (--k-schedule) on three layers, every Linformer variant: halve (32, 16, 8) and
     * a list: 1,0.7,0.2 for E (32, 24, 8: 0.7 k rounded up to a multiple of 8), 1,0.25,0.5 for the
     * windows, whose k must divide n (32, 8, 16). */
    for (int i = 0; i < LB_TEST_VARIANTS; i++) {
        LbModelConfig c = lb_test_variant(i, 64, 32);
        if (!lb_test_is_linformer(c.kind))
            continue;
        c.layers = 3;
        char should[160];
        for (int s = 0; s < 2; s++) {
            const int linear = c.kind == LB_MODEL_LINFORMER;
            const char *list = linear ? "1,0.7,0.2" : "1,0.25,0.5";
            lb_check(lb_kschedule_parse(s ? list : "halve", &c, should, sizeof should) == 0, "schedule parses");
            const int64_t want[2][3] = {{32, 16, 8}, {32, linear ? 24 : 8, linear ? 8 : 16}};
            char msg[256];
            lb_check(lb_config_check(&c, msg, sizeof msg) == LB_OK, "schedule %d: %s", s, msg);
            for (int l = 0; l < 3; l++)
                lb_check(lb_config_layer_k(&c, l) == want[s][l], "schedule %d layer %d: k %lld, want %lld", s, l,
                         (long long)lb_config_layer_k(&c, l), (long long)want[s][l]);
            check(be, &c, 2);
        }
    }
    lb_backend_close(be);
    return lb_test_finish("test_forward_naive");
}
