/* The training step's backward references: for each forward op of attn/cpu/cpu_ref.h, what its
 * LbOps counterpart (attn/ops.h) computes, on host fp32 arrays with the forward references'
 * conventions (sums in double in a fixed order, each output rounded once, arguments trusted).
 * Gradients are written, never accumulated; an output pointer may be NULL where that gradient is
 * not wanted; those that need host scratch return LB_OK or LB_ERR_NOMEM. Each is checked against
 * central finite differences (tests/ops/test_backward.c). */
#ifndef LB_CPU_BACKWARD_H
#define LB_CPU_BACKWARD_H

#include <stdint.h>

#include "attn/ops.h"

/* lb_linear_cpu's gradients: z = x w^T + b, y = z or GELU(z). With gelu, z is recomputed in
 * double from x, w, b (b may be NULL). dx (rows, in) = dz w, dw (out, in) = dz^T x,
 * db (out) = the column sums of dz. dy is not changed. */
int lb_linear_backward_cpu(const float *x, const float *w, const float *b, const float *dy, float *dx, float *dw,
                           float *db, int64_t rows, int64_t in, int64_t out, int gelu);

/* LbOps.add and LbOps.gelu_backward, over count elements. */
void lb_add_cpu(const float *x, float *y, int64_t count);
void lb_gelu_backward_cpu(const float *z, float *d, int64_t count);

/* y (cols) = the column sums of x (rows, cols), each in double: a bias's gradient. */
void lb_column_sums_cpu(const float *x, float *y, int64_t rows, int64_t cols);

/* lb_bmm_cpu's gradients: dc laid out as p->c, da as p->a and db as p->b (same leading
 * dimensions and strides; elements between rows untouched). Where a stride is 0 (one matrix
 * broadcast over the batch, the Linformer's shared E) its gradient is the sum over the batch. */
void lb_bmm_backward_cpu(const LbBmm *p, const float *dc, float *da, float *db);

/* LbOps.softmax_backward. */
void lb_softmax_backward_cpu(const float *y, float *d, int64_t rows, int64_t cols, float scale);

/* The erf GELU's derivative Phi(v) + v phi(v), in double. */
double lb_gelu_grad_cpu(double v);

/* LbOps.layernorm_backward. */
int lb_layernorm_backward_cpu(const float *x, const float *r, const float *gamma, const float *dy, float *dv,
                              float *dgamma, float *dbeta, int64_t rows, int64_t d, float eps);

/* LbOps.embed_backward: each row of dtok sums its positions in (b, t) order in double. */
int lb_embed_backward_cpu(const int32_t *ids, const float *dx, float *dtok, float *dpos, int64_t batch, int64_t n,
                          int64_t d, int64_t vocab);

/* LbOps.pool_seq_backward and LbOps.depthwise_conv_seq_backward. */
void lb_pool_seq_backward_cpu(const float *x, int64_t ld_x, const float *dy, int64_t ld_y, float *dx,
                              int64_t batch, int64_t n, int64_t k, int64_t channels, int mode);

void lb_depthwise_conv_seq_backward_cpu(const float *x, int64_t ld_x, const float *wt, const float *dy, int64_t ld_y,
                                        float *dx, float *dwt, int64_t batch, int64_t n, int64_t k,
                                        int64_t channels);

/* LbOps.flash_attention_backward: each (sequence, head) recomputes P from q and k, then dV = P^T dO,
 * dP = dO V^T, dS = P (dP - rowsum(dO O)), dQ = scale dS K, dK = scale dS^T Q. */
int lb_flash_attention_backward_cpu(const float *q, const float *k, const float *v, int64_t ld, const float *do_,
                                    float *dq, float *dk, float *dv, int64_t batch, int64_t n, int64_t heads,
                                    int64_t hd, float scale);

/* LbOps.favor_features_backward (the stabiliser held constant, as the authors' code detaches it). */
void lb_favor_features_backward_cpu(const float *phi, const float *x, float *d, float *dx, int64_t groups,
                                    int64_t n, int64_t m, int64_t hd, float scale);

/* LbOps.divide_by_last_backward. */
void lb_divide_by_last_backward_cpu(const float *x, const float *dy, float *dx, int64_t rows, int64_t cols);

#endif
