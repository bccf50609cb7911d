/* The CPU backend's ops (attn/cpu/cpu_backend.c): plain C on host fp32 arrays, exactness before
 * speed: sums in double in a fixed order, each output element by one thread, so results do not
 * depend on the thread count. The products, softmax, LayerNorm and GELU trust their arguments (the
 * backend's ops check them first). Outputs must not overlap inputs unless said otherwise. */
#ifndef LB_CPU_REF_H
#define LB_CPU_REF_H

#include <stdint.h>

#include "attn/ops.h"

/* --- products (attn/cpu/cpu_matmul.c) ------------------------------------------------------ */

/* y (rows, out) = x (rows, in) . w (out, in)^T + b (out), then GELU (erf) when gelu != 0.
 * b may be NULL. Each y element: sum over in of (double)x * (double)w, in order, plus b, rounded
 * to float once, then GELU. */
void lb_linear_cpu(const float *x, const float *w, const float *b, float *y, int64_t rows,
                   int64_t in, int64_t out, int gelu);

/* LbBmm (attn/ops.h) with beta 0 and no summing stride_c 0; a, b, c point to float. */
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
/* y (count) = lb_gelu_cpu(y), in place. */
void lb_gelu_array_cpu(float *y, int64_t count);

/* --- ops of the table as they are (attn/ops.h says what each computes), arguments checked like
 *     every backend's (attn/op_args.h); each output element in double, rounded to float once ---- */

/* cpu_layout.c: pure copies and one float addition, so a kernel must match them exactly. */
int lb_embed_cpu(LbBackend *be, const int32_t *ids, const void *tok, const void *pos, void *x, int64_t batch,
                 int64_t n, int64_t d);
int lb_split_heads_cpu(LbBackend *be, const void *src, int64_t ld_src, void *dst, int64_t batch, int64_t n,
                       int64_t heads, int64_t hd);
int lb_merge_heads_cpu(LbBackend *be, const void *src, void *dst, int64_t batch, int64_t n, int64_t heads,
                       int64_t hd);

/* cpu_fill.c: x[i] = lb_rng_range(seed, i, lo, hi) (attn/rng.h) exactly, and the op fill_tokens. */
void lb_fill_uniform_cpu(float *x, int64_t count, uint64_t seed, float lo, float hi);
int lb_fill_tokens_cpu(LbBackend *be, int32_t *ids, int64_t count, uint64_t seed, int32_t vocab);

/* cpu_favor.c: FAVOR+'s features (the stabiliser in double), the division by the last column. */
int lb_favor_features_cpu(LbBackend *be, void *f, const void *x, void *stat, int64_t groups, int64_t n, int64_t m,
                          int64_t hd, float scale, int keys);
int lb_divide_by_last_cpu(LbBackend *be, const void *x, void *y, int64_t rows, int64_t cols);

/* cpu_flash.c: each query row's scores, softmax and output in double; LB_ERR_NOMEM where host
 * memory for a row of scores is missing. */
int lb_flash_attention_cpu(LbBackend *be, const void *q, const void *k, const void *v, int64_t ld, void *o,
                           int64_t batch, int64_t n, int64_t heads, int64_t hd, float scale);
int lb_flash_attention_lse_cpu(LbBackend *be, const void *q, const void *k, const void *v, int64_t ld, void *o,
                               float *lse, int64_t batch, int64_t n, int64_t heads, int64_t hd, float scale);

/* cpu_pool.c: the Linformer's general projections. */
int lb_pool_seq_cpu(LbBackend *be, const void *x, int64_t ld_x, void *y, int64_t ld_y, int64_t batch, int64_t n,
                    int64_t k, int64_t channels, int mode);
int lb_depthwise_conv_seq_cpu(LbBackend *be, const void *x, int64_t ld_x, const void *wt, void *y, int64_t ld_y,
                              int64_t batch, int64_t n, int64_t k, int64_t channels);

/* --- threads (attn/cpu/cpu_parallel.c) ------------------------------------------------------ */

/* Threads the reference may use: 0 (the default) = one per online core, capped at 8; otherwise
 * `threads`, capped at 64. Results are identical for every setting (tests check that). Not to be
 * called while a reference function runs. */
void lb_cpu_set_threads(int threads);

#endif
