/* The tests' own encoder in double, written from METHOD.md alone (the slow, obvious arithmetic,
 * never linbench's): tests/model/test_model.c feeds it a model's weights from a config,
 * tests/reports/test_cli_dump_recompute.c from run --dump's files. One sequence and one head at a
 * time, with no head-major buffers, fused weights or batching. */
#ifndef LB_TESTS_LIB_NAIVE_H
#define LB_TESTS_LIB_NAIVE_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/check.h"

/* ctx[t, head] = softmax_j(q[t, head] . k[j, head] / sqrt(hd)) v[j, head] for t < n queries and
 * j < keys keys (n for standard attention, k for a Linformer's compressed K' and V'); rows of q,
 * k, v and ctx are d wide, the head at columns head * hd .. head * hd + hd - 1; s: room for `keys`
 * doubles. */
static inline void lb_naive_head_attention(const double *q, const double *k, const double *v, int64_t n,
                                           int64_t keys, int64_t d, int64_t hd, int64_t head, double *s,
                                           double *ctx)
{
    for (int64_t t = 0; t < n; t++) {
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < keys; j++) {
            double dot = 0;
            for (int64_t e = 0; e < hd; e++)
                dot += q[t * d + head * hd + e] * k[j * d + head * hd + e];
            s[j] = dot / sqrt((double)hd);
            mx = s[j] > mx ? s[j] : mx;
        }
        for (int64_t j = 0; j < keys; j++)
            sum += (s[j] = exp(s[j] - mx));
        for (int64_t e = 0; e < hd; e++) {
            double o = 0;
            for (int64_t j = 0; j < keys; j++)
                o += s[j] / sum * v[j * d + head * hd + e];
            ctx[t * d + head * hd + e] = o;
        }
    }
}

/* out (rows, o) = x (rows, in) W[row0 : row0 + o] (o, in)^T + b[row0 : row0 + o]; b may be NULL. */
static inline void lb_naive_linear(const double *x, int64_t rows, int64_t in, const float *W, const float *b,
                                   int64_t row0, int64_t o, double *out)
{
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < o; j++) {
            double s = b ? b[row0 + j] : 0;
            for (int64_t i = 0; i < in; i++)
                s += x[r * in + i] * W[(row0 + j) * in + i];
            out[r * o + j] = s;
        }
}

/* x = LayerNorm(x + y) g + b over rows of d; y may be NULL. */
static inline void lb_naive_layernorm(double *x, const double *y, int64_t rows, int64_t d, const float *g,
                                      const float *b, double eps)
{
    for (int64_t r = 0; r < rows; r++) {
        double *v = x + r * d, mean = 0, var = 0;
        for (int64_t i = 0; i < d; i++)
            mean += (v[i] += y ? y[r * d + i] : 0);
        mean /= d;
        for (int64_t i = 0; i < d; i++)
            var += (v[i] - mean) * (v[i] - mean);
        var /= d;
        for (int64_t i = 0; i < d; i++)
            v[i] = (v[i] - mean) / sqrt(var + eps) * g[i] + b[i];
    }
}

/* How keys and values reach attention: all n rows, or compressed to k rows (METHOD.md). */
typedef enum { LB_NAIVE_FULL, LB_NAIVE_LINEAR, LB_NAIVE_MEAN, LB_NAIVE_MAX, LB_NAIVE_CONV } LbNaiveCompress;

/* The weights by (layer, which): layer -1 the embeddings, layer l >= 0 its own, in lb_model_tensors order. */
enum { LB_NAIVE_TOK, LB_NAIVE_POS, LB_NAIVE_EMB_G, LB_NAIVE_EMB_B, LB_NAIVE_EMBEDDINGS };
enum {
    LB_NAIVE_W_QKV, LB_NAIVE_B_QKV, LB_NAIVE_W_O, LB_NAIVE_B_O, LB_NAIVE_LN1_G, LB_NAIVE_LN1_B, LB_NAIVE_W_FF1,
    LB_NAIVE_B_FF1, LB_NAIVE_W_FF2, LB_NAIVE_B_FF2, LB_NAIVE_LN2_G, LB_NAIVE_LN2_B, LB_NAIVE_PER_LAYER
};

typedef struct LbNaiveEncoder {
    int64_t n, d, heads, ffn, layers;
    int64_t k[8];              /* keys per layer once compressed (--k-schedule) */
    LbNaiveCompress compress;
    int early;                 /* K' = (E X) W_K^T + b_K rather than E (X W_K^T + b_K) */
    int per_head;              /* sharing none: each head's E and F on its own columns */
    double eps;                /* LayerNorm's */
    const void *src;
    const float *(*weight)(const void *src, int layer, int which);
    /* E (which 0) or F (which 1) of (layer, head); a convolution's kernels (taps, channels) */
    const float *(*proj)(const void *src, int layer, int head, int which);
    /* when set, replaces softmax attention: ctx (n, d), zeroed, from q, k, v (n, d) (the Performer) */
    void (*attend)(const void *src, int layer, const double *q, const double *k, const double *v, double *ctx);
} LbNaiveEncoder;

/* out (k, w) = the compression of a (n, w) to k rows, rows of a and out d apart: E's first k rows
 * times a; the mean or max of each window of n / k rows; or their sum weighted by the kernel E
 * (taps, channels) tap-major, column j taking channel j % channels. */
static inline void lb_naive_compress(const LbNaiveEncoder *e, const float *E, int64_t k, const double *a, int64_t w,
                                     double *out)
{
    const int64_t n = e->n, d = e->d, win = n / k, channels = e->per_head ? d / e->heads : d;
    for (int64_t r = 0; r < k; r++)
        for (int64_t j = 0; j < w; j++) {
            double s = e->compress == LB_NAIVE_MAX ? -INFINITY : 0;
            for (int64_t t = 0; e->compress == LB_NAIVE_LINEAR && t < n; t++)
                s += (double)E[r * n + t] * a[t * d + j];
            for (int64_t t = 0; e->compress != LB_NAIVE_LINEAR && t < win; t++) {
                const double v = a[(r * win + t) * d + j];
                if (e->compress == LB_NAIVE_MAX)
                    s = v > s ? v : s;
                else if (e->compress == LB_NAIVE_CONV)
                    s += (double)E[t * channels + j % channels] * v;
                else
                    s += v / (double)win;
            }
            out[r * d + j] = s;
        }
}

/* One sequence through the encoder: x (n, d) from the tokens ids (n). */
static inline void lb_naive_encode(const LbNaiveEncoder *e, const int32_t *ids, double *x)
{
    const int64_t n = e->n, d = e->d, f = e->ffn, H = e->heads, hd = d / H, nd = n * d;
    double *q = malloc(sizeof(double) * (8 * nd + n * f + n)), *kf = q + nd, *vf = kf + nd, *ctx = vf + nd;
    double *y = ctx + nd, *kc = y + nd, *vc = kc + nd, *ex = vc + nd, *hid = ex + nd, *s = hid + n * f;
    const float *tok = e->weight(e->src, -1, LB_NAIVE_TOK), *pos = e->weight(e->src, -1, LB_NAIVE_POS);
    for (int64_t t = 0; t < n; t++)
        for (int64_t i = 0; i < d; i++)
            x[t * d + i] = (double)tok[(int64_t)ids[t] * d + i] + pos[t * d + i];
    lb_naive_layernorm(x, NULL, n, d, e->weight(e->src, -1, LB_NAIVE_EMB_G), e->weight(e->src, -1, LB_NAIVE_EMB_B),
                       e->eps);
    for (int l = 0; l < e->layers; l++) {
#define W(which) e->weight(e->src, l, LB_NAIVE_##which)
        const float *Wqkv = W(W_QKV), *bqkv = W(B_QKV);
        const int64_t kl = e->compress == LB_NAIVE_FULL ? n : e->k[l];
        lb_naive_linear(x, n, d, Wqkv, bqkv, 0, d, q);
        lb_naive_linear(x, n, d, Wqkv, bqkv, d, d, kf);
        lb_naive_linear(x, n, d, Wqkv, bqkv, 2 * d, d, vf);
        if (e->attend) {
            memset(ctx, 0, sizeof(double) * nd);
            e->attend(e->src, l, q, kf, vf, ctx);
        }
        for (int64_t head = 0; head < H && !e->attend; head++) {
            /* keys and values of this head: (kl, d) holding the head's columns */
            const float *E = e->proj ? e->proj(e->src, l, (int)head, 0) : NULL;
            const float *F = e->proj ? e->proj(e->src, l, (int)head, 1) : NULL;
            const int64_t c0 = e->per_head ? head * hd : 0, w = e->per_head ? hd : d;
            if (e->compress != LB_NAIVE_FULL && e->early) { /* K' = (E X) W_K^T + b_K */
                lb_naive_compress(e, E, kl, x, d, ex);
                lb_naive_linear(ex, kl, d, Wqkv, bqkv, d, d, kc);
                lb_naive_compress(e, F, kl, x, d, ex);
                lb_naive_linear(ex, kl, d, Wqkv, bqkv, 2 * d, d, vc);
            } else if (e->compress != LB_NAIVE_FULL) { /* K' = E (X W_K^T + b_K) */
                lb_naive_compress(e, E, kl, kf + c0, w, kc + c0);
                lb_naive_compress(e, F, kl, vf + c0, w, vc + c0);
            }
            const int full = e->compress == LB_NAIVE_FULL;
            lb_naive_head_attention(q, full ? kf : kc, full ? vf : vc, n, kl, d, hd, head, s, ctx);
        }
        lb_naive_linear(ctx, n, d, W(W_O), W(B_O), 0, d, y);
        lb_naive_layernorm(x, y, n, d, W(LN1_G), W(LN1_B), e->eps);
        lb_naive_linear(x, n, d, W(W_FF1), W(B_FF1), 0, f, hid);
        for (int64_t i = 0; i < n * f; i++)
            hid[i] = 0.5 * hid[i] * (1 + erf(hid[i] / sqrt(2.0)));
        lb_naive_linear(hid, n, f, W(W_FF2), W(B_FF2), 0, d, y);
        lb_naive_layernorm(x, y, n, d, W(LN2_G), W(LN2_B), e->eps);
#undef W
    }
    free(q);
}

/* One check each that out (count), stored in fp32, is ref (count) computed in double, to fp32
 * rounding of each stored tensor: relative error <= 1e-5, every element within 1e-4 + 1e-4 |ref|.
 * Returns the relative error. */
static inline double lb_naive_check(const char *what, const float *out, const double *ref, int64_t count)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < count; i++) {
        num += (out[i] - ref[i]) * (out[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    lb_check(sqrt(num / den) <= 1e-5, "%s: relative error %.3g (<= 1e-5)", what, sqrt(num / den));
    lb_check_close(what, out, ref, count, 1e-4, 1e-4);
    return sqrt(num / den);
}

#endif
