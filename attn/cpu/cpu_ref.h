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

/* The largest of row (cols >= 1), or the smallest when !largest. */
float lb_row_extreme_cpu(const float *row, int64_t cols, int largest);

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

/* --- the ops of LB_PASS_OPS as they are, lb_cpu_<op> (attn/ops.h says what each computes),
 *     arguments checked like every backend's (attn/op_args.h), each output element in double,
 *     rounded to float once: in cpu_backend.c, cpu_layout.c (embed, split_heads, merge_heads),
 *     cpu_favor.c, cpu_flash.c and cpu_pool.c ------------------------------------------------------ */
#define LB_CPU_OP_DECLARE(name, params) int lb_cpu_##name params;
LB_PASS_OPS(LB_CPU_OP_DECLARE)

/* cpu_fill.c: x[i] = lb_rng_range(seed, i, lo, hi) (attn/rng.h) exactly, and the op fill_tokens. */
void lb_fill_uniform_cpu(float *x, int64_t count, uint64_t seed, float lo, float hi);
int lb_fill_tokens_cpu(LbBackend *be, int32_t *ids, int64_t count, uint64_t seed, int32_t vocab);

/* --- threads (attn/cpu/cpu_parallel.c) ------------------------------------------------------ */

/* Threads the reference may use: 0 (the default) = one per online core, capped at 8; otherwise
 * `threads`, capped at 64. Results are identical for every setting (tests check that). Not to be
 * called while a reference function runs. */
void lb_cpu_set_threads(int threads);

#endif
