/* The CPU backend's ops (attn/cpu/cpu_backend.c): plain-C versions of every compute op in the ops
 * table, on host fp32 arrays, exactness before speed: products accumulated in double in a fixed
 * order over the reduction index, softmax and LayerNorm statistics in double, GELU the erf form in
 * double. Each output element is computed by exactly one thread, so results do not depend on the
 * thread count. The textbook ones among them (layouts, FAVOR+, flash attention, pooling) are also the
 * check table's references for those ops (attn/check.c).
 *
 * Arguments are trusted: the backend's ops check sizes before calling these. Outputs must not
 * overlap inputs unless said otherwise. All matrices are row-major. */
#ifndef LB_CPU_REF_H
#define LB_CPU_REF_H

#include <stdint.h>

#include "attn/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- products (attn/cpu/cpu_matmul.c) ------------------------------------------------------ */

/* y (rows, out) = x (rows, in) . w (out, in)^T + b (out), then GELU (erf) when gelu != 0.
 * b may be NULL. Each y element: sum over in of (double)x * (double)w, in order, plus b, rounded
 * to float once, then GELU. */
void lb_linear_cpu(const float *x, const float *w, const float *b, float *y, int64_t rows,
                   int64_t in, int64_t out, int gelu);

/* C_i (m, n) = alpha * op(A_i) (m, kdim) . op(B_i) (kdim, n) for i in [0, batch), exactly as the
 * LbBmm comment in attn/ops.h says (trans flags, leading dimensions, element strides, stride 0
 * broadcast, C overwritten); a, b, c point to float. C must not overlap A or B. */
void lb_bmm_cpu(const LbBmm *p);

/* --- softmax, LayerNorm, GELU (attn/cpu/cpu_norm.c) ---------------------------------------- */

/* x (rows, cols), each row in place: x = softmax(scale * x), max-subtracted, exponentials and
 * their sum in double (four interleaved partial sums), each output rounded to float once. */
void lb_softmax_cpu(float *x, int64_t rows, int64_t cols, float scale);

/* Scalar: exp(x) for x <= 0 as the softmax computes it (within 1e-15 relative of libm's exp;
 * 0 below -700, where no softmax output can see it). NaN gives NaN. */
double lb_exp_nonpos_cpu(double x);

/* x (rows, d) = (v - mean) / sqrt(var + eps) * gamma (d) + beta (d), v = x + r, in place; r (rows, d)
 * may be NULL. mean and the biased variance (as PyTorch) of v in double. */
void lb_layernorm_cpu(float *x, const float *r, const float *gamma, const float *beta,
                      int64_t rows, int64_t d, float eps);

/* Scalar: 0.5 v (1 + erf(v / sqrt 2)), evaluated in double and rounded once. */
float lb_gelu_cpu(float v);

/* --- layouts (attn/cpu/cpu_layout.c) -------------------------------------------------------- */

/* x (batch, n, d) = tok[ids[b, t]] (vocab, d) + pos[t] (n, d); ids (batch, n), each in [0, vocab). */
void lb_embed_cpu(const int32_t *ids, const float *tok, const float *pos, float *x, int64_t batch,
                  int64_t n, int64_t d);

/* dst (batch, heads, n, hd)[b, h, t, j] = src[(b * n + t) * ld_src + h * hd + j]: one of Q, K, V
 * out of a fused (batch * n, ld_src) projection output (src already offset to its column). */
void lb_split_heads_cpu(const float *src, int64_t ld_src, float *dst, int64_t batch, int64_t n,
                        int64_t heads, int64_t hd);

/* dst (batch, n, heads * hd) = src (batch, heads, n, hd), back in token-major order. */
void lb_merge_heads_cpu(const float *src, float *dst, int64_t batch, int64_t n, int64_t heads,
                        int64_t hd);

/* --- initialisation (attn/cpu/cpu_fill.c) --------------------------------------------------- */

/* x (count): x[i] = lb_rng_range(seed, i, lo, hi) (attn/rng.h), exactly. */
void lb_fill_uniform_cpu(float *x, int64_t count, uint64_t seed, float lo, float hi);

/* ids (count): ids[i] = lb_rng_token(seed, i, vocab), vocab >= 1. */
void lb_fill_tokens_cpu(int32_t *ids, int64_t count, uint64_t seed, int32_t vocab);

/* --- the Performer's ops (attn/cpu/cpu_favor.c) --------------------------------------------- */

/* FAVOR+'s positive random features, in place: for each of `groups` groups (batch x heads) of n
 * rows, f (groups, n, m) holds the projections w x' of x' = scale x, x (groups, n, hd), and becomes
 * f = exp(f - scale^2 |x|^2 / 2 - s) / sqrt(m), s the row's max of f (keys == 0: queries) or the max
 * of f over the group's n rows (keys != 0). In double, each output rounded once. */
void lb_favor_features_cpu(float *f, const float *x, int64_t groups, int64_t n, int64_t m, int64_t hd, float scale,
                           int keys);

/* y (rows, cols)[r, j] = x[r, j] / x[r, cols], x (rows, cols + 1): the numerator columns divided
 * by the normaliser in the last one. y must not overlap x. */
void lb_divide_by_last_cpu(const float *x, float *y, int64_t rows, int64_t cols);

/* --- exact attention in one op (attn/cpu/cpu_flash.c) ------------------------------------------ */

/* The flash model's op (LbOps.flash_attention, attn/ops.h): every (sequence, head) of q, k, v
 * read in place from token-major rows of stride ld, o (batch, n, heads hd) written token-major.
 * Each query row's scores, softmax and output in double, rounded to float once. LB_OK, or
 * LB_ERR_NOMEM (host memory for a row of scores). */
int lb_flash_attention_cpu(const float *q, const float *k, const float *v, int64_t ld, float *o, int64_t batch,
                           int64_t n, int64_t heads, int64_t hd, float scale);

/* --- the Linformer's general projections (attn/cpu/cpu_pool.c) ------------------------------- */

/* LbOps.pool_seq (attn/ops.h): y[(b k + t) ld_y + c] = mean or max (mode, LbPoolMode) of the
 * w = n / k values x[(b n + t w + j) ld_x + c], j < w, in double. k divides n. */
void lb_pool_seq_cpu(const float *x, int64_t ld_x, float *y, int64_t ld_y, int64_t batch, int64_t n, int64_t k,
                     int64_t channels, int mode);

/* LbOps.depthwise_conv_seq: y[(b k + t) ld_y + c] = sum over j < w of wt[j channels + c]
 * x[(b n + t w + j) ld_x + c], w = n / k, in double. k divides n. */
void lb_depthwise_conv_seq_cpu(const float *x, int64_t ld_x, const float *wt, float *y, int64_t ld_y, int64_t batch,
                               int64_t n, int64_t k, int64_t channels);

/* --- threads (attn/cpu/cpu_parallel.c) ------------------------------------------------------ */

/* Threads the reference may use: 0 (the default) = one per online core, capped at 8; otherwise
 * `threads`, capped at 64. Results are identical for every setting (tests check that). Not to be
 * called while a reference function runs. */
void lb_cpu_set_threads(int threads);
int lb_cpu_threads(void);

#ifdef __cplusplus
}
#endif

#endif
