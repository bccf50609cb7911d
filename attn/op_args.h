/* The argument checks every backend's ops make before touching memory (attn/ops.h's contracts):
 * sizes not negative, memory behind every tensor of a non-zero size, strides that cover a row.
 * Written once so the CPU reference and the CUDA backend refuse the same calls with the same
 * words; each message starts with the backend's name and the op's ("cuda softmax: ..."). LB_OK or
 * LB_ERR_INVALID. */
#ifndef LB_OP_ARGS_H
#define LB_OP_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "attn/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A tensor of `count` elements must have memory behind it. */
int lb_arg_need(const LbBackend *be, const void *p, int64_t count, const char *op, const char *what);
int lb_arg_dims(const LbBackend *be, const char *op, int64_t a, int64_t b, int64_t c);
/* upload, download: dst and src of count elements. */
int lb_args_transfer(const LbBackend *be, const char *op, const void *dst, const void *src, int64_t count);
/* copy and copy_raw_to_host (overlap only refused where `device_copy`). */
int lb_args_copy(const LbBackend *be, const char *op, const void *dst, const void *src, size_t bytes, int device_copy);
int lb_args_fill_uniform(const LbBackend *be, const void *x, int64_t count, float lo, float hi);
int lb_args_bmm(const LbBackend *be, const LbBmm *p);
/* softmax, gelu: one (rows, cols) tensor. */
int lb_args_rows(const LbBackend *be, const char *op, const void *x, int64_t rows, int64_t cols);
int lb_args_layernorm(const LbBackend *be, const void *x, const void *gamma, const void *beta, int64_t rows,
                      int64_t d, float eps);
int lb_args_embed(const LbBackend *be, const int32_t *ids, const void *tok, const void *pos, const void *x,
                  int64_t batch, int64_t n, int64_t d);
/* split_heads (ld_src >= heads hd) and merge_heads (ld_src 0: dense). */
int lb_args_heads(const LbBackend *be, const char *op, const void *src, int64_t ld_src, const void *dst,
                  int64_t batch, int64_t n, int64_t heads, int64_t hd);
int lb_args_favor(const LbBackend *be, const void *f, const void *x, int64_t groups, int64_t n, int64_t m,
                  int64_t hd);
int lb_args_divide_by_last(const LbBackend *be, const void *x, const void *y, int64_t rows, int64_t cols);
int lb_args_flash(const LbBackend *be, const void *q, const void *k, const void *v, int64_t ld, const void *o,
                  int64_t batch, int64_t n, int64_t heads, int64_t hd);
/* pool_seq and depthwise_conv_seq: k divides n, strides cover the channels; wt (NULL for pooling
 * is not checked) holds n / k taps per channel. */
int lb_args_seq(const LbBackend *be, const char *op, const void *x, int64_t ld_x, const void *wt, const void *y,
                int64_t ld_y, int64_t batch, int64_t n, int64_t k, int64_t channels);

/* --- the training step's backward ops: each gradient with memory behind it, laid out as the
 * tensor it is the gradient of, and the scratch its size function gives (attn/ops.h). */
/* add, gelu_backward, softmax_backward: a and b of rows x cols elements. */
int lb_args_pair(const LbBackend *be, const char *op, const void *a, const void *b, int64_t rows, int64_t cols);
int lb_args_column_sums(const LbBackend *be, const void *x, const void *y, int64_t rows, int64_t cols,
                        const void *scratch);
int lb_args_layernorm_backward(const LbBackend *be, const void *x, const void *gamma, const void *dy, const void *dv,
                               int64_t rows, int64_t d, float eps, const void *scratch);
int lb_args_embed_backward(const LbBackend *be, const int32_t *ids, const void *dx, const void *dtok,
                           const void *dpos, int64_t batch, int64_t n, int64_t d, int64_t vocab, const void *scratch);
/* pool_seq_backward (wt and dwt NULL) and depthwise_conv_seq_backward. */
int lb_args_seq_backward(const LbBackend *be, const char *op, const void *x, int64_t ld_x, const void *wt,
                         const void *dy, int64_t ld_y, const void *dx, const void *dwt, int64_t batch, int64_t n,
                         int64_t k, int64_t channels);
int lb_args_favor_backward(const LbBackend *be, const void *phi, const void *x, const void *d, const void *dx,
                           int64_t groups, int64_t n, int64_t m, int64_t hd);
int lb_args_divide_by_last_backward(const LbBackend *be, const void *x, const void *dy, const void *dx, int64_t rows,
                                    int64_t cols);
/* flash_attention_backward (do_ and the gradients) and flash_attention_lse (do_, dq NULL). */
int lb_args_flash_backward(const LbBackend *be, const char *op, const void *q, const void *k, const void *v,
                           int64_t ld, const void *o, const float *lse, const void *do_, const void *dq,
                           const void *dk, const void *dv, int64_t batch, int64_t n, int64_t heads, int64_t hd);

#ifdef __cplusplus
}
#endif

#endif
