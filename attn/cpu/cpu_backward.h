/* The backward references of the training step (issue: `--pass train`): for each forward op of
 * attn/cpu/cpu_ref.h, the gradients of its inputs and parameters given the upstream gradient of
 * its output. Same conventions as the forward references: host fp32 arrays, row-major, sums in
 * double in a fixed order, each output rounded to float once, arguments trusted. Gradients are
 * written (=), never accumulated: a caller that shares a parameter adds them itself. Those that
 * need scratch return LB_OK or LB_ERR_NOMEM. An output
 * pointer may be NULL where that gradient is not wanted. Each is checked against central finite
 * differences of a double forward (tests/ops/test_backward.c). */
#ifndef LB_CPU_BACKWARD_H
#define LB_CPU_BACKWARD_H

#include <stdint.h>

#include "attn/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* lb_linear_cpu's gradients: z = x w^T + b, y = z or GELU(z). With gelu, z is recomputed in
 * double from x, w, b (b may be NULL). dx (rows, in) = dz w, dw (out, in) = dz^T x,
 * db (out) = the column sums of dz. dy is not changed. */
int lb_linear_backward_cpu(const float *x, const float *w, const float *b, const float *dy, float *dx, float *dw,
                           float *db, int64_t rows, int64_t in, int64_t out, int gelu);

/* y (cols) = the column sums of x (rows, cols), each in double: a bias's gradient. */
void lb_column_sums_cpu(const float *x, float *y, int64_t rows, int64_t cols);

/* lb_flash_attention_cpu (arguments trusted) that also writes lse (batch, heads, n), each query
 * row's log-sum-exp of its scaled scores: the forward of a flash training step. */
int lb_flash_attention_lse_cpu(const float *q, const float *k, const float *v, int64_t ld, float *o, float *lse,
                               int64_t batch, int64_t n, int64_t heads, int64_t hd, float scale);

/* lb_bmm_cpu's gradients: dc laid out as p->c, da as p->a and db as p->b (same leading
 * dimensions and strides; elements between rows untouched). Where a stride is 0 (one matrix
 * broadcast over the batch, the Linformer's shared E) its gradient is the sum over the batch. */
void lb_bmm_backward_cpu(const LbBmm *p, const float *dc, float *da, float *db);

/* y = softmax(scale x) row by row (y kept from the forward); d holds dy and becomes dx in place:
 * dx = scale y (dy - sum_j dy_j y_j). */
void lb_softmax_backward_cpu(const float *y, float *d, int64_t rows, int64_t cols, float scale);

/* The erf GELU's derivative Phi(v) + v phi(v), in double. */
double lb_gelu_grad_cpu(double v);

/* lb_layernorm_cpu's gradients, from its inputs x and r (r may be NULL) and dy: dv (rows, d), the
 * gradient of v = x + r and so of x and of r alike; dgamma and dbeta (d) summed over the rows. */
int lb_layernorm_backward_cpu(const float *x, const float *r, const float *gamma, const float *dy, float *dv,
                              float *dgamma, float *dbeta, int64_t rows, int64_t d, float eps);

/* lb_embed_cpu's gradients: dtok (vocab, d) the scatter-add of dx's rows by token id, dpos (n, d)
 * the sum over the batch. Deterministic: each row of dtok sums its positions in (b, t) order in
 * double (a counting sort by id), so the result never depends on threads or atomics. LB_OK, or
 * LB_ERR_NOMEM for the sort's index. */
int lb_embed_backward_cpu(const int32_t *ids, const float *dx, float *dtok, float *dpos, int64_t batch, int64_t n,
                          int64_t d, int64_t vocab);

/* lb_pool_seq_cpu's gradient dx (laid out as x, rows of ld_x): mean spreads dy / w over the
 * window, max gives dy to the window's first maximum and 0 to the rest. */
void lb_pool_seq_backward_cpu(const float *x, int64_t ld_x, const float *dy, int64_t ld_y, float *dx,
                              int64_t batch, int64_t n, int64_t k, int64_t channels, int mode);

/* lb_depthwise_conv_seq_cpu's gradients: dx (laid out as x) and dwt (w, channels). */
void lb_depthwise_conv_seq_backward_cpu(const float *x, int64_t ld_x, const float *wt, const float *dy, int64_t ld_y,
                                        float *dx, float *dwt, int64_t batch, int64_t n, int64_t k,
                                        int64_t channels);

/* lb_flash_attention_cpu's gradients, FlashAttention-2's way: each (sequence, head) recomputes
 * its probabilities P from q and k, then dV = P^T dO, dP = dO V^T, dS = P (dP - rowsum(dO O)),
 * dQ = scale dS K, dK = scale dS^T Q. do_ is laid out as lb_flash_attention_cpu's o; dq, dk, dv
 * as q, k, v (rows of stride ld, the fused QKV gradient). LB_OK, or LB_ERR_NOMEM. */
int lb_flash_attention_backward_cpu(const float *q, const float *k, const float *v, int64_t ld, const float *do_,
                                    float *dq, float *dk, float *dv, int64_t batch, int64_t n, int64_t heads,
                                    int64_t hd, float scale);

/* lb_favor_features_cpu's gradients, the stabiliser s held constant (it cancels in the attention
 * output, as the authors' code detaches it): from its output phi and input x, d holds dphi and
 * becomes, in place, the gradient of the projections (d phi); dx (groups, n, hd) gets the norm
 * term's share, -scale^2 x sum_j dphi_j phi_j (the projection's share comes from its product). */
void lb_favor_features_backward_cpu(const float *phi, const float *x, float *d, float *dx, int64_t groups,
                                    int64_t n, int64_t m, int64_t hd, float scale);

/* lb_divide_by_last_cpu's gradient dx (rows, cols + 1): dy / den for the numerators, and
 * -sum_j dy_j x_j / den^2 for the normaliser in the last column. */
void lb_divide_by_last_backward_cpu(const float *x, const float *dy, float *dx, int64_t rows, int64_t cols);

#ifdef __cplusplus
}
#endif

#endif
