/* The attention helpers every model file uses: see attention_impl.h. */
#include <math.h>

#include "attn/attention_impl.h"
#include "attn/base/status.h"

void *lb_pass_at(const LbPass *p, const void *base, int64_t elems)
{
    return (char *)base + elems * (int64_t)p->be->elem_bytes;
}

void lb_pass_role(LbPass *p, LbOpRole role)
{
    if (p->obs)
        p->obs->role(p->obs, p->backward ? lb_role_backward(role) : role);
}

int lb_pass_alloc(LbPass *p, int64_t elems, const char *what, void **out)
{
    return lb_arena_alloc(p->a, (size_t)elems * p->be->elem_bytes, what, out);
}

int lb_pass_bmm(LbPass *p, int ta, int tb, int64_t m, int64_t n, int64_t kd, float alpha, const void *a,
                int64_t lda, int64_t sa, const void *b, int64_t ldb, int64_t sb, void *c, int64_t ldc,
                int64_t sc, int64_t batch)
{
    LbBmm q = {ta, tb, m, n, kd, alpha, a, lda, sa, b, ldb, sb, c, ldc, sc, batch, 0.0f};
    return p->ops->bmm(p->be, &q);
}

/* C_bj = alpha op(A_bj) op(B_bj) + beta C_bj for every b < B, head j < h, X_bj = x + b * sx_b +
 * j * sx_h: heads read and written in place in token-major buffers. h calls batched over B, not B
 * calls over h: a head's output columns lie within the previous head's rows, which cuBLAS calls
 * overlapping batches of C. */
static int pass_bmm_bh(LbPass *p, int ta, int tb, int64_t m, int64_t n, int64_t kd, float alpha, const void *a,
                       int64_t lda, int64_t sa_b, int64_t sa_h, const void *b, int64_t ldb, int64_t sb_b, int64_t sb_h,
                       void *c, int64_t ldc, int64_t sc_b, int64_t sc_h, float beta)
{
    for (int64_t j = 0; j < p->h; j++) {
        const LbBmm q = {ta, tb, m, n, kd, alpha, lb_pass_at(p, a, j * sa_h), lda, sa_b, lb_pass_at(p, b, j * sb_h),
                         ldb, sb_b, lb_pass_at(p, c, j * sc_h), ldc, sc_b, p->B, beta};
        LB_TRY(p->ops->bmm(p->be, &q));
    }
    return LB_OK;
}

/* The scores' scale, the product's alpha in the forward and the backward alike. */
static float score_scale(const LbPass *p) { return 1.0f / sqrtf((float)p->hd); }

/* The 1/sqrt(hd) is the product's alpha, applied to the fp32 accumulator before the scores are
 * rounded to the storage type: fp16 scores then overflow only at sqrt(hd) = 8 times larger
 * logits than if the scale waited for the softmax, at no cost. */
int lb_attend_scores(LbPass *p, const void *q, int64_t ldq, const void *k, int64_t ldkv, int64_t q_len,
                     int64_t kv_len, int64_t row0, int64_t rows, void *s)
{
    const int64_t hd = p->hd, hs = rows * kv_len; /* one head's scores (rows, kv_len) */
    lb_pass_role(p, LB_ROLE_SCORES);
    LB_TRY(pass_bmm_bh(p, 0, 1, rows, kv_len, hd, score_scale(p), lb_pass_at(p, q, row0 * ldq), ldq, q_len * ldq, hd,
                       k, ldkv, kv_len * ldkv, hd, s, kv_len, p->h * hs, hs, 0.0f));
    lb_pass_role(p, LB_ROLE_SOFTMAX);
    LB_TRY(p->ops->softmax(p->be, s, p->B * p->h * rows, kv_len, 1.0f));
    lb_pass_role(p, LB_ROLE_UNLABELLED);
    return LB_OK;
}

/* Every head's scores exist before the first P V, so o may overwrite q. */
int lb_attend_rows(LbPass *p, const void *q, int64_t ldq, const void *k, const void *v, int64_t ldkv,
                   int64_t q_len, int64_t kv_len, int64_t row0, int64_t rows, void *s, void *o)
{
    const int64_t hd = p->hd, hs = rows * kv_len;
    LB_TRY(lb_attend_scores(p, q, ldq, k, ldkv, q_len, kv_len, row0, rows, s));
    lb_pass_role(p, LB_ROLE_PV);
    LB_TRY(pass_bmm_bh(p, 0, 0, rows, hd, kv_len, 1.0f, s, kv_len, p->h * hs, hs, v, ldkv, kv_len * ldkv, hd,
                       lb_pass_at(p, o, row0 * p->d), p->d, q_len * p->d, hd, 0.0f));
    lb_pass_role(p, LB_ROLE_UNLABELLED);
    return LB_OK;
}

/* Scores S = scale Q K^T, P = softmax(S) (softmax scale 1): dV = P^T dO, dP = dO V^T,
 * dS = softmax_backward(P, dP), dQ = scale dS K, dK = scale dS^T Q, each head in place. */
int lb_attend_rows_backward(LbPass *p, const void *q, int64_t ldq, const void *k, const void *v, int64_t ldkv,
                            int64_t q_len, int64_t kv_len, int64_t row0, int64_t rows, const void *s, void *ds,
                            const void *d_o, void *dq, void *dk, void *dv, int accumulate)
{
    const int64_t hd = p->hd, d = p->d, hs = rows * kv_len, sh = p->h * hs;
    const float scale = score_scale(p), beta = accumulate ? 1.0f : 0.0f;
    const void *do_rows = lb_pass_at(p, d_o, row0 * d);
    lb_pass_role(p, LB_ROLE_PV);
    LB_TRY(pass_bmm_bh(p, 1, 0, kv_len, hd, rows, 1.0f, s, kv_len, sh, hs, do_rows, d, q_len * d, hd, dv, ldkv,
                       kv_len * ldkv, hd, beta)); /* dV (kv_len, hd) += P^T dO */
    LB_TRY(pass_bmm_bh(p, 0, 1, rows, kv_len, hd, 1.0f, do_rows, d, q_len * d, hd, v, ldkv, kv_len * ldkv, hd, ds,
                       kv_len, sh, hs, 0.0f)); /* dP (rows, kv_len) = dO V^T */
    lb_pass_role(p, LB_ROLE_SOFTMAX);
    LB_TRY(p->ops->softmax_backward(p->be, s, ds, p->B * p->h * rows, kv_len, 1.0f));
    lb_pass_role(p, LB_ROLE_SCORES);
    LB_TRY(pass_bmm_bh(p, 0, 0, rows, hd, kv_len, scale, ds, kv_len, sh, hs, k, ldkv, kv_len * ldkv, hd,
                       lb_pass_at(p, dq, row0 * ldq), ldq, q_len * ldq, hd, 0.0f)); /* dQ (rows, hd) = scale dS K */
    LB_TRY(pass_bmm_bh(p, 1, 0, kv_len, hd, rows, scale, ds, kv_len, sh, hs, lb_pass_at(p, q, row0 * ldq), ldq,
                       q_len * ldq, hd, dk, ldkv, kv_len * ldkv, hd, beta)); /* dK (kv_len, hd) += scale dS^T Q */
    lb_pass_role(p, LB_ROLE_UNLABELLED);
    return LB_OK;
}

int lb_exact_attention_backward(LbPass *p, const LbLayerWeights *w, const void *x, const void *qkv, const void *o,
                                const void *probs, int64_t block, const void *dy, void *dx, LbLayerWeights *gw)
{
    const int64_t d = p->d, n = p->n, rows = block ? block : n;
    void *d_o, *dqkv, *s = (void *)probs, *ds;
    LB_TRY(lb_pass_alloc(p, p->B * n * d, "attention output gradient", &d_o));         /* (B, n, d) */
    LB_TRY(lb_pass_alloc(p, p->B * n * 3 * d, "Q/K/V gradient", &dqkv));               /* (B, n, 3d) */
    LB_TRY(lb_pass_alloc(p, p->B * p->h * rows * n, "attention score gradient", &ds)); /* (B, h, rows, n) */
    if (block)
        LB_TRY(lb_pass_alloc(p, p->B * p->h * rows * n, "attention scores (one block)", &s));
    LB_TRY(lb_project_backward(p, w, o, dy, d_o, gw));
    const void *k = lb_pass_at(p, qkv, d), *v = lb_pass_at(p, qkv, 2 * d);
    for (int64_t r0 = 0; r0 < n; r0 += rows) {
        const int64_t r = r0 + rows <= n ? rows : n - r0;
        if (block)
            LB_TRY(lb_attend_scores(p, qkv, 3 * d, k, 3 * d, n, n, r0, r, s));
        LB_TRY(lb_attend_rows_backward(p, qkv, 3 * d, k, v, 3 * d, n, n, r0, r, s, ds, d_o, dqkv,
                                       lb_pass_at(p, dqkv, d), lb_pass_at(p, dqkv, 2 * d), r0 > 0));
    }
    return lb_qkv_backward(p, w, x, dqkv, dx, gw);
}

double lb_exact_attention_flops(const LbModelConfig *c)
{
    const double n = (double)c->n, d = c->d_model;
    return 2 * n * (4 * d * d) + 4 * n * n * d;
}

int lb_project(LbPass *p, const LbLayerWeights *w, const void *o, void *y)
{
    lb_pass_role(p, LB_ROLE_OUT_PROJ);
    LB_TRY(p->ops->linear(p->be, o, w->w_o, w->b_o, y, p->B * p->n, p->d, p->d, 0));
    lb_pass_role(p, LB_ROLE_UNLABELLED);
    return LB_OK;
}

int lb_qkv(LbPass *p, const LbLayerWeights *w, const void *x, void **qkv)
{
    const int64_t rows = p->B * p->n, d = p->d;
    LB_TRY(lb_pass_alloc(p, rows * 3 * d, "Q/K/V", qkv)); /* (B, n, 3d) */
    lb_pass_role(p, LB_ROLE_QKV);
    LB_TRY(p->ops->linear(p->be, x, w->w_qkv, w->b_qkv, *qkv, rows, d, 3 * d, 0));
    lb_pass_role(p, LB_ROLE_UNLABELLED);
    return LB_OK;
}

int lb_linear_backward(LbPass *p, const void *x, const void *w, const void *dy, void *dx, void *dw, void *db,
                       int64_t rows, int64_t in, int64_t out, int accumulate)
{
    LbBmm g = {.m = rows, .n = in, .kdim = out, .alpha = 1.0f, .a = dy, .lda = out, .b = w, .ldb = in, .c = dx,
               .ldc = in, .batch = 1, .beta = accumulate ? 1.0f : 0.0f};
    LB_TRY(p->ops->bmm(p->be, &g)); /* dx (rows, in) = dy (rows, out) w (out, in) */
    g = (LbBmm){.trans_a = 1, .m = out, .n = in, .kdim = rows, .alpha = 1.0f, .a = dy, .lda = out, .b = x,
                .ldb = in, .c = dw, .ldc = in, .batch = 1};
    LB_TRY(p->ops->bmm(p->be, &g)); /* dw (out, in) = dy^T x */
    /* The scratch is taken with or without a bias: the plan's counting arena hands out NULL for
     * every tensor, db included, and must take the bytes the real step takes. */
    const size_t mark = lb_arena_mark(p->a);
    void *scratch = NULL;
    const size_t bytes = lb_column_sums_scratch_bytes(rows, out);
    int rc = bytes ? lb_arena_alloc(p->a, bytes, "bias gradient partial sums", &scratch) : LB_OK;
    if (rc == LB_OK && db)
        rc = p->ops->column_sums(p->be, dy, db, rows, out, scratch);
    lb_arena_reset(p->a, mark);
    return rc;
}

int lb_qkv_backward(LbPass *p, const LbLayerWeights *w, const void *x, const void *dqkv, void *dx,
                    LbLayerWeights *gw)
{
    lb_pass_role(p, LB_ROLE_QKV);
    LB_TRY(lb_linear_backward(p, x, w->w_qkv, dqkv, dx, gw->w_qkv, gw->b_qkv, p->B * p->n, p->d, 3 * p->d, 1));
    lb_pass_role(p, LB_ROLE_UNLABELLED);
    return LB_OK;
}

int lb_project_backward(LbPass *p, const LbLayerWeights *w, const void *o, const void *dy, void *d_o,
                        LbLayerWeights *gw)
{
    lb_pass_role(p, LB_ROLE_OUT_PROJ);
    LB_TRY(lb_linear_backward(p, o, w->w_o, dy, d_o, gw->w_o, gw->b_o, p->B * p->n, p->d, p->d, 0));
    lb_pass_role(p, LB_ROLE_UNLABELLED);
    return LB_OK;
}
