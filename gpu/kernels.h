/* Launchers of the CUDA kernels behind the ops table, one per kernel file. Each enqueues on
 * `stream`, checks the launch and returns LB_OK or LB_FAIL; none synchronises. d_ pointers hold
 * `dtype` elements (token ids int32), row-major, 64-bit sizes. References: attn/cpu/cpu_ref.h.
 * Sizes and strides arrive checked by the ops (attn/op_args.h); a launcher checks only what its
 * kernel adds (alignment, widths it has code for). */
#ifndef LB_GPU_KERNELS_H
#define LB_GPU_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include "attn/config.h"
#include "attn/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* x (rows, cols), each row in place: x = softmax(scale * x), statistics in fp32
 * (gpu/softmax.cu). */
int lb_cuda_softmax(cudaStream_t stream, LbDtype dtype, void *d_x, int64_t rows, int64_t cols,
                    float scale);

/* x (rows, d) = LayerNorm(x + r) * gamma (d) + beta (d) in place, r (rows, d) may be NULL;
 * statistics in fp32 (gpu/layernorm.cu). */
int lb_cuda_layernorm(cudaStream_t stream, LbDtype dtype, void *d_x, const void *d_r,
                      const void *d_gamma, const void *d_beta, int64_t rows, int64_t d, float eps);

/* x (batch, n, d) = tok[ids[b, t]] (vocab, d) + pos[t] (n, d) (gpu/embed.cu). */
int lb_cuda_embed(cudaStream_t stream, LbDtype dtype, const int32_t *d_ids, const void *d_tok,
                  const void *d_pos, void *d_x, int64_t batch, int64_t n, int64_t d);

/* dst (batch, heads, n, hd)[b, h, t, j] = src[(b * n + t) * ld_src + h * hd + j]
 * (gpu/permute.cu). */
int lb_cuda_split_heads(cudaStream_t stream, size_t elem_bytes, const void *d_src, int64_t ld_src,
                        void *d_dst, int64_t batch, int64_t n, int64_t heads, int64_t hd);
/* dst (batch, n, heads * hd) = src (batch, heads, n, hd) (gpu/permute.cu). */
int lb_cuda_merge_heads(cudaStream_t stream, size_t elem_bytes, const void *d_src, void *d_dst,
                        int64_t batch, int64_t n, int64_t heads, int64_t hd);

/* FAVOR+'s positive random features in place, f (groups, n, m) over x (groups, n, hd): see
 * LbOps.favor_features (attn/ops.h); d_stat is lb_favor_stat_bytes(groups, n) of scratch for keys
 * (gpu/favor.cu). */
int lb_cuda_favor_features(cudaStream_t stream, LbDtype dtype, void *d_f, const void *d_x, void *d_stat,
                           int64_t groups, int64_t n, int64_t m, int64_t hd, float scale, int keys);
/* y (rows, cols) = x (rows, cols + 1)[:, :cols] / x[:, cols] (gpu/favor.cu). */
int lb_cuda_divide_by_last(cudaStream_t stream, LbDtype dtype, const void *d_x, void *d_y, int64_t rows,
                           int64_t cols);

/* Exact attention fused: see LbOps.flash_attention and flash_attention_lse (attn/ops.h); d_lse
 * (batch, heads, n) fp32 or NULL; head widths multiples of 16 up to LB_FLASH_HD_MAX, Q, K, V rows
 * 16-byte aligned for fp16 and bf16 (gpu/flash.cu). */
int lb_cuda_flash_attention(cudaStream_t stream, LbDtype dtype, const void *d_q, const void *d_k, const void *d_v,
                            int64_t ld, void *d_o, float *d_lse, int64_t batch, int64_t n, int64_t heads, int64_t hd,
                            float scale);
/* Its gradients: see LbOps.flash_attention_backward; dO's rows 16-byte aligned as Q's, d_scratch
 * lb_flash_backward_scratch_bytes (gpu/flash.cu). */
int lb_cuda_flash_attention_backward(cudaStream_t stream, LbDtype dtype, const void *d_q, const void *d_k,
                                     const void *d_v, int64_t ld, const void *d_o, const float *d_lse,
                                     const void *d_do, void *d_dq, void *d_dk, void *d_dv, int64_t batch, int64_t n,
                                     int64_t heads, int64_t hd, float scale, void *d_scratch);

/* The Linformer's general projections: see LbOps.pool_seq and LbOps.depthwise_conv_seq
 * (attn/ops.h); mode an LbPoolMode, wt (taps >= n / k, channels) tap-major (gpu/pool.cu). */
int lb_cuda_pool_seq(cudaStream_t stream, LbDtype dtype, const void *d_x, int64_t ld_x, void *d_y, int64_t ld_y,
                     int64_t batch, int64_t n, int64_t k, int64_t channels, int mode);
int lb_cuda_depthwise_conv_seq(cudaStream_t stream, LbDtype dtype, const void *d_x, int64_t ld_x, const void *d_wt,
                               void *d_y, int64_t ld_y, int64_t batch, int64_t n, int64_t k, int64_t channels);

/* The gradients of embed, pool_seq, depthwise_conv_seq, favor_features and divide_by_last: see
 * LbOps in attn/ops.h (the training step's backward); each d_scratch of the size ops.h gives,
 * 4-byte aligned (gpu/embed.cu, gpu/pool.cu, gpu/favor.cu). */
int lb_cuda_embed_backward(cudaStream_t stream, LbDtype dtype, const int32_t *d_ids, const void *d_dx, void *d_dtok,
                           void *d_dpos, int64_t batch, int64_t n, int64_t d, int64_t vocab, void *d_scratch);
int lb_cuda_pool_seq_backward(cudaStream_t stream, LbDtype dtype, const void *d_x, int64_t ld_x, const void *d_dy,
                              int64_t ld_y, void *d_dx, int64_t batch, int64_t n, int64_t k, int64_t channels, int mode);
int lb_cuda_depthwise_conv_seq_backward(cudaStream_t stream, LbDtype dtype, const void *d_x, int64_t ld_x,
                                        const void *d_wt, const void *d_dy, int64_t ld_y, void *d_dx, void *d_dwt,
                                        void *d_scratch, int64_t batch, int64_t n, int64_t k, int64_t channels);
int lb_cuda_favor_features_backward(cudaStream_t stream, LbDtype dtype, const void *d_phi, const void *d_x, void *d_d,
                                    void *d_dx, int64_t groups, int64_t n, int64_t m, int64_t hd, float scale);
int lb_cuda_divide_by_last_backward(cudaStream_t stream, LbDtype dtype, const void *d_x, const void *d_dy, void *d_dx,
                                    int64_t rows, int64_t cols);

/* y (rows, cols) = act(y + b (cols)) in place; b may be NULL; act is the erf GELU when gelu != 0,
 * else the identity (gpu/bias_act.cu). */
int lb_cuda_bias_act(cudaStream_t stream, LbDtype dtype, void *d_y, const void *d_b, int64_t rows,
                     int64_t cols, int gelu);

/* The training step's backward (attn/ops.h's LbOps for each): y (count) += x; d (count) *= GELU'(z),
 * the erf form (gpu/bias_act.cu). */
int lb_cuda_add(cudaStream_t stream, LbDtype dtype, const void *d_x, void *d_y, int64_t count);
int lb_cuda_gelu_backward(cudaStream_t stream, LbDtype dtype, const void *d_z, void *d_d, int64_t count);
/* y (cols) = the column sums of x (rows, cols) through d_parts, lb_column_sums_scratch_bytes of
 * fp32 partials; lb_cuda_sum_parts is its second stage, y = the sum over nparts rows of d_parts
 * (nparts, cols) in order, for the kernels that write their own partials (gpu/bias_act.cu). */
int lb_cuda_column_sums(cudaStream_t stream, LbDtype dtype, const void *d_x, void *d_y, int64_t rows, int64_t cols,
                        float *d_parts);
int lb_cuda_sum_parts(cudaStream_t stream, LbDtype dtype, const float *d_parts, void *d_y, int64_t nparts,
                      int64_t cols);
/* How a reduction over `rows` splits into at most LB_GRAD_PARTS parts of *per rows: the parts'
 * count (0 without rows). */
static inline int64_t lb_grad_parts(int64_t rows, int64_t *per)
{
    *per = (rows + LB_GRAD_PARTS - 1) / LB_GRAD_PARTS;
    return *per > 0 ? (rows + *per - 1) / *per : 0;
}
/* d (rows, cols) holds dy and becomes dx = scale y (dy - sum_j dy_j y_j), y the softmax's output
 * (gpu/softmax.cu). */
int lb_cuda_softmax_backward(cudaStream_t stream, LbDtype dtype, const void *d_y, void *d_d, int64_t rows,
                             int64_t cols, float scale);
/* LayerNorm's gradients, see LbOps.layernorm_backward; d_scratch holds
 * lb_layernorm_backward_scratch_bytes (gpu/layernorm.cu). */
int lb_cuda_layernorm_backward(cudaStream_t stream, LbDtype dtype, const void *d_x, const void *d_r,
                               const void *d_gamma, const void *d_dy, void *d_dv, void *d_dgamma, void *d_dbeta,
                               int64_t rows, int64_t d, float eps, float *d_scratch);

/* x[i] = lb_rng_range(seed, i, lo, hi) rounded to dtype; lo = hi = NaN is the poison that tests
 * put in outputs (gpu/fill.cu). */
int lb_cuda_fill_uniform(cudaStream_t stream, LbDtype dtype, void *d_x, int64_t count,
                         uint64_t seed, float lo, float hi);
/* ids[i] = lb_rng_token(seed, i, vocab) (gpu/fill.cu). */
int lb_cuda_fill_tokens(cudaStream_t stream, int32_t *d_ids, int64_t count, uint64_t seed,
                        int32_t vocab);

/* The most blocks any launch of gpu/ uses (grid-stride loops do the rest); tests lower it so
 * every block walks several rows on small tensors; 0 restores the default. Not thread-safe. */
void lb_cuda_set_grid_cap(unsigned int blocks);
unsigned int lb_cuda_grid_cap(void);

/* The stream of a CUDA backend, for tests and benchmarks that launch beside the ops table
 * (gpu/backend.cu). NULL for another backend. */
cudaStream_t lb_cuda_backend_stream(LbBackend *be);

#ifdef __cplusplus
}
#endif

#endif
