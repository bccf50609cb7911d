/* The launchers of gpu/'s CUDA kernels. d_ pointers hold the backend's storage dtype (token ids
 * int32), row-major, 64-bit sizes. References: attn/cpu/cpu_ref.h. */
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

/* The ops of attn/ops.h's LbOps that gpu/'s kernels run, each the table's entry itself: it checks
 * its arguments (attn/op_args.h), enqueues on the backend's stream and returns LB_OK or LB_FAIL;
 * none synchronises. Each also checks what its kernel adds (alignment, widths it has code for). */
int lb_cuda_fill_uniform(LbBackend *be, void *x, int64_t count, uint64_t seed, float lo, float hi); /* fill.cu */
int lb_cuda_fill_tokens(LbBackend *be, int32_t *ids, int64_t count, uint64_t seed, int32_t vocab);
int lb_cuda_softmax(LbBackend *be, void *x, int64_t rows, int64_t cols, float scale); /* softmax.cu */
int lb_cuda_softmax_backward(LbBackend *be, const void *y, void *d, int64_t rows, int64_t cols, float scale);
int lb_cuda_layernorm(LbBackend *be, void *x, const void *r, const void *gamma, const void *beta, int64_t rows,
                      int64_t d, float eps); /* layernorm.cu */
int lb_cuda_layernorm_backward(LbBackend *be, const void *x, const void *r, const void *gamma, const void *dy,
                               void *dv, void *dgamma, void *dbeta, int64_t rows, int64_t d, float eps, void *scratch);
int lb_cuda_embed(LbBackend *be, const int32_t *ids, const void *tok, const void *pos, void *x, int64_t batch,
                  int64_t n, int64_t d); /* embed.cu */
int lb_cuda_embed_backward(LbBackend *be, const int32_t *ids, const void *dx, void *dtok, void *dpos, int64_t batch,
                           int64_t n, int64_t d, int64_t vocab, void *scratch);
int lb_cuda_split_heads(LbBackend *be, const void *src, int64_t ld_src, void *dst, int64_t batch, int64_t n,
                        int64_t heads, int64_t hd); /* permute.cu */
int lb_cuda_merge_heads(LbBackend *be, const void *src, void *dst, int64_t batch, int64_t n, int64_t heads,
                        int64_t hd);
int lb_cuda_favor_features(LbBackend *be, void *f, const void *x, void *stat, int64_t groups, int64_t n, int64_t m,
                           int64_t hd, float scale, int keys); /* favor.cu */
int lb_cuda_divide_by_last(LbBackend *be, const void *x, void *y, int64_t rows, int64_t cols);
int lb_cuda_favor_features_backward(LbBackend *be, const void *phi, const void *x, void *d, void *dx, int64_t groups,
                                    int64_t n, int64_t m, int64_t hd, float scale);
int lb_cuda_divide_by_last_backward(LbBackend *be, const void *x, const void *dy, void *dx, int64_t rows,
                                    int64_t cols);
/* Head widths multiples of 16 up to LB_FLASH_HD_MAX; Q, K, V (and dO) rows 16-byte aligned for fp16
 * and bf16 (flash.cu). */
int lb_cuda_flash_attention(LbBackend *be, const void *q, const void *k, const void *v, int64_t ld, void *o,
                            int64_t batch, int64_t n, int64_t heads, int64_t hd, float scale);
int lb_cuda_flash_attention_lse(LbBackend *be, const void *q, const void *k, const void *v, int64_t ld, void *o,
                                float *lse, int64_t batch, int64_t n, int64_t heads, int64_t hd, float scale);
int lb_cuda_flash_attention_backward(LbBackend *be, const void *q, const void *k, const void *v, int64_t ld,
                                     const void *o, const float *lse, const void *do_, void *dq, void *dk, void *dv,
                                     int64_t batch, int64_t n, int64_t heads, int64_t hd, float scale, void *scratch);
int lb_cuda_pool_seq(LbBackend *be, const void *x, int64_t ld_x, void *y, int64_t ld_y, int64_t batch, int64_t n,
                     int64_t k, int64_t channels, int mode); /* pool.cu */
int lb_cuda_depthwise_conv_seq(LbBackend *be, const void *x, int64_t ld_x, const void *wt, void *y, int64_t ld_y,
                               int64_t batch, int64_t n, int64_t k, int64_t channels);
int lb_cuda_pool_seq_backward(LbBackend *be, const void *x, int64_t ld_x, const void *dy, int64_t ld_y, void *dx,
                              int64_t batch, int64_t n, int64_t k, int64_t channels, int mode);
int lb_cuda_depthwise_conv_seq_backward(LbBackend *be, const void *x, int64_t ld_x, const void *wt, const void *dy,
                                        int64_t ld_y, void *dx, void *dwt, int64_t batch, int64_t n, int64_t k,
                                        int64_t channels, void *scratch);
int lb_cuda_gelu(LbBackend *be, void *y, int64_t rows, int64_t cols); /* bias_act.cu */
int lb_cuda_add(LbBackend *be, const void *x, void *y, int64_t count);
int lb_cuda_gelu_backward(LbBackend *be, const void *z, void *d, int64_t rows, int64_t cols);
int lb_cuda_column_sums(LbBackend *be, const void *x, void *y, int64_t rows, int64_t cols, void *scratch);

/* linear's epilogue, unchecked: y (rows, cols) = act(y + b (cols)) in place; b may be NULL; act is
 * the erf GELU when gelu != 0, else the identity (gpu/bias_act.cu). */
int lb_cuda_bias_act(LbBackend *be, void *d_y, const void *d_b, int64_t rows, int64_t cols, int gelu);
/* y (cols) = the sum over nparts rows of d_parts (nparts, cols) in order: the second stage of the
 * column sums, for the kernels that write their own partials (gpu/bias_act.cu). */
int lb_cuda_sum_parts(cudaStream_t stream, LbDtype dtype, const float *d_parts, void *d_y, int64_t nparts,
                      int64_t cols);
/* How a reduction over `rows` splits into at most LB_GRAD_PARTS parts of *per rows: the parts'
 * count (0 without rows). */
static inline int64_t lb_grad_parts(int64_t rows, int64_t *per)
{
    *per = (rows + LB_GRAD_PARTS - 1) / LB_GRAD_PARTS;
    return *per > 0 ? (rows + *per - 1) / *per : 0;
}

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
