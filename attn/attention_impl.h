/* What the model files (attn/model_*.c) share: the forward pass, the attention helpers every
 * model uses and the builder that allocates a model's weights. Internal to attn/. Shapes are
 * (batch, ...) row-major; B = batch, h = heads, hd = d / h. */
#ifndef LB_ATTENTION_IMPL_H
#define LB_ATTENTION_IMPL_H

#include <stdint.h>

#include "attn/arena.h"
#include "attn/attention.h"
#include "attn/forward.h"
#include "attn/model.h"
#include "attn/ops.h"
#include "attn/pass_observer.h"

/* One forward pass: the model, the arena its temporaries come from, and the sizes. In the plan's
 * dry run (a counting arena) every tensor pointer is NULL, the gradients' too: what a pass
 * allocates must never depend on whether a pointer is NULL, or the plan drifts from it. */
struct LbPass {
    const LbModel *m;
    LbArena *a;
    LbBackend *be;
    const LbOps *ops;
    int64_t B, n, k, d, h, hd, f;
    LbPassObserver *obs; /* NULL, or who watches this pass (be and ops are then the observer's) */
    /* The training step (attn/train.c): in its forward, the running layer's kept tensors (the
     * model's attention fills them, attention.h); in its backward, the gradients, laid out as
     * the model. NULL in a forward pass. */
    void **keep;
    LbModel *grads;
    int backward; /* the step's backward has begun: the roles named are the backward's */
};

/* The most tensors one layer's attention keeps for its backward. */
#define LB_KEEP_MAX 16

/* What the op calls that follow are for (attn/pass_observer.h), until the next call: a breakdown
 * times and counts each role apart. Free when no observer watches the pass. */
void lb_pass_role(LbPass *p, LbOpRole role);

/* base advanced by `elems` storage elements: the forward passes only ever compute addresses. */
void *lb_pass_at(const LbPass *p, const void *base, int64_t elems);

/* `elems` storage elements from the pass's arena. */
int lb_pass_alloc(LbPass *p, int64_t elems, const char *what, void **out);

/* C_i = alpha op(A_i) op(B_i) for i < batch: the row-major LbBmm with its trans flags. */
int lb_pass_bmm(LbPass *p, int ta, int tb, int64_t m, int64_t n, int64_t kd, float alpha, const void *a,
                int64_t lda, int64_t sa, const void *b, int64_t ldb, int64_t sb, void *c, int64_t ldc,
                int64_t sc, int64_t batch);

/* Exact attention of query rows [row0, row0 + rows) of every (batch, head), each head read in
 * place from token-major buffers (no head permutes): q (B, q_len, ldq), k and v (B, kv_len, ldkv),
 * head j in columns [j hd, (j + 1) hd). s (B, h, rows, kv_len) = softmax(q k^T / sqrt(hd)) in the
 * caller's buffer s, then those rows of o (B, q_len, d) = s v, head j written to its columns.
 * o may be q itself when ldq = d (q's rows are consumed by the scores first), not k or v. */
int lb_attend_rows(LbPass *p, const void *q, int64_t ldq, const void *k, const void *v, int64_t ldkv,
                   int64_t q_len, int64_t kv_len, int64_t row0, int64_t rows, void *s, void *o);

/* lb_attend_rows' first half: those rows' P = softmax(q k^T / sqrt(hd)) into s. */
int lb_attend_scores(LbPass *p, const void *q, int64_t ldq, const void *k, int64_t ldkv, int64_t q_len,
                     int64_t kv_len, int64_t row0, int64_t rows, void *s);

/* The output projection of a token-major attention output: y = o (B, n, d) W_O^T + b_O. */
int lb_project(LbPass *p, const LbLayerWeights *w, const void *o, void *y);

/* FLOPs of one layer's exact softmax attention block for one sequence (METHOD.md, "Work counted"):
 * the Q, K, V and output projections 2 n (4 d^2) and the scores and values 4 n^2 d. The standard,
 * chunked and flash models all do this work, however they order it. */
double lb_exact_attention_flops(const LbModelConfig *c);

/* qkv (B, n, 3d) = x W_QKV^T + b_QKV: Q in columns [0, d), K in [d, 2d), V in [2d, 3d). */
int lb_qkv(LbPass *p, const LbLayerWeights *w, const void *x, void **qkv);

/* --- the training step's backward helpers (attention_common.c) ------------------------------- */

/* The gradients of y (rows, out) = x (rows, in) w (out, in)^T + b: dx = dy w (added to dx when
 * `accumulate`, written otherwise), dw (out, in) = dy^T x, db (out) = the column sums of dy (NULL:
 * no bias). The column sums' scratch comes from the pass's arena and is released. */
int lb_linear_backward(LbPass *p, const void *x, const void *w, const void *dy, void *dx, void *dw, void *db,
                       int64_t rows, int64_t in, int64_t out, int accumulate);

/* lb_qkv's backward: dqkv (B, n, 3d) to dx (B, n, d), added; gw's w_qkv and b_qkv written. */
int lb_qkv_backward(LbPass *p, const LbLayerWeights *w, const void *x, const void *dqkv, void *dx,
                    LbLayerWeights *gw);

/* lb_project's backward: dy (B, n, d) to d_o (written); gw's w_o and b_o written. */
int lb_project_backward(LbPass *p, const LbLayerWeights *w, const void *o, const void *dy, void *d_o,
                        LbLayerWeights *gw);

/* lb_attend_rows' backward for its query rows [row0, row0 + rows): s holds their P (B, h, rows,
 * kv_len) as lb_attend_scores left it, ds is a buffer like s (overwritten), d_o (B, q_len, d) is
 * o's gradient. dq (laid out as q) gets those rows' gradient written; dk and dv (laid out as k
 * and v) get these rows' share added when `accumulate`, written otherwise. */
int lb_attend_rows_backward(LbPass *p, const void *q, int64_t ldq, const void *k, const void *v, int64_t ldkv,
                            int64_t q_len, int64_t kv_len, int64_t row0, int64_t rows, const void *s, void *ds,
                            const void *d_o, void *dq, void *dk, void *dv, int accumulate);

/* The backward of the attention block lb_qkv, lb_attend_rows over blocks, lb_project computed:
 * from the kept qkv (B, n, 3d), o (B, n, d) and, with block 0, probs, all n rows' P (B, h, n, n);
 * with block > 0, P recomputed per block of `block` query rows (probs unused). dx gets the
 * block's gradient added; gw's Q/K/V and output projections written. Its temporaries stay for
 * the caller to release. */
int lb_exact_attention_backward(LbPass *p, const LbLayerWeights *w, const void *x, const void *qkv, const void *o,
                                const void *probs, int64_t block, const void *dy, void *dx, LbLayerWeights *gw);

/* --- the builder: weights in a fixed order, each drawn from its own seed ------------------- */

struct LbBuilder {
    LbModel *m;
    LbArena *a;
    uint64_t seed;
    uint64_t tensor; /* index of the next tensor: its seed is lb_rng_mix(seed, tensor) */
};

/* One of the model's own weights (rows, cols), listed in LbModel.own under `name` (lb_model_tensors,
 * --dump; a model finds it there), drawn uniformly in [lo, hi] on the backend. */
int lb_builder_own_uniform(LbBuilder *b, const char *name, int64_t rows, int64_t cols, float lo, float hi);

/* The same, its values drawn on the host: draw(values, rows, cols, seed) fills (rows, cols) floats
 * from the tensor's seed, uploaded rounded to storage. Not called in a counting arena. */
typedef int (*LbHostDraw)(float *values, int64_t rows, int64_t cols, uint64_t seed);
int lb_builder_own_host(LbBuilder *b, const char *name, int64_t rows, int64_t cols, LbHostDraw draw);

#endif
