/* Closing either backend through its table, and the argument checks both backends' ops share
 * (op_args.h). */
#include "attn/op_args.h"

#include <string.h>

#include "attn/base/status.h"

void lb_backend_close(LbBackend *be)
{
    if (be && be->ops && be->ops->close)
        be->ops->close(be);
}

int lb_arg_need(const LbBackend *be, const void *p, int64_t count, const char *op, const char *what)
{
    if (count < 0)
        return LB_FAIL(LB_ERR_INVALID, "%s %s: negative size %lld for %s", be->ops->name, op, (long long)count, what);
    if (count > 0 && !p)
        return LB_FAIL(LB_ERR_INVALID, "%s %s: %s is NULL", be->ops->name, op, what);
    return LB_OK;
}

int lb_arg_dims(const LbBackend *be, const char *op, int64_t a, int64_t b, int64_t c)
{
    if (a < 0 || b < 0 || c < 0)
        return LB_FAIL(LB_ERR_INVALID, "%s %s: negative size (%lld, %lld, %lld)", be->ops->name, op, (long long)a,
                       (long long)b, (long long)c);
    return LB_OK;
}

/* Memory behind each of the tensors t[0 .. count), as lb_arg_need. */
typedef struct LbArgTensor {
    const char *what;
    const void *p;
    int64_t count;
} LbArgTensor;

static int need_all(const LbBackend *be, const char *op, const LbArgTensor *t, int count)
{
    for (int i = 0; i < count; i++)
        LB_TRY(lb_arg_need(be, t[i].p, t[i].count, op, t[i].what));
    return LB_OK;
}

/* NEED(be, op, {what, pointer, count}, ...): the tensors in order, the first missing one refused. */
#define NEED(be, op, ...)                                         \
    need_all(be, op, (const LbArgTensor[]){__VA_ARGS__},          \
             (int)(sizeof((const LbArgTensor[]){__VA_ARGS__}) / sizeof(LbArgTensor)))

int lb_args_transfer(const LbBackend *be, const char *op, const void *dst, const void *src, int64_t count)
{
    return NEED(be, op, {"dst", dst, count}, {"src", src, count});
}

int lb_args_copy(const LbBackend *be, const char *op, const void *dst, const void *src, size_t bytes, int device_copy)
{
    if (bytes > 0 && (!dst || !src))
        return LB_FAIL(LB_ERR_INVALID, "%s %s: NULL pointer", be->ops->name, op);
    if (device_copy && bytes > 0 && (const char *)dst < (const char *)src + bytes &&
        (const char *)src < (const char *)dst + bytes)
        return LB_FAIL(LB_ERR_INVALID, "%s %s: source and destination overlap", be->ops->name, op);
    return LB_OK;
}

int lb_args_fill_uniform(const LbBackend *be, const void *x, int64_t count, float lo, float hi)
{
    LB_TRY(lb_arg_need(be, x, count, "fill_uniform", "x"));
    if (!(lo <= hi))
        return LB_FAIL(LB_ERR_INVALID, "%s fill_uniform: empty range [%g, %g)", be->ops->name, (double)lo, (double)hi);
    return LB_OK;
}

/* Leading dimensions at least the stored width, strides not negative, C not written twice. */
int lb_args_bmm(const LbBackend *be, const LbBmm *p)
{
    const char *name = be->ops->name;
    if (!p)
        return LB_FAIL(LB_ERR_INVALID, "%s bmm: no arguments", name);
    if (p->m < 0 || p->n < 0 || p->kdim < 0 || p->batch < 0)
        return LB_FAIL(LB_ERR_INVALID, "%s bmm: negative size (m %lld, n %lld, k %lld, batch %lld)", name,
                       (long long)p->m, (long long)p->n, (long long)p->kdim, (long long)p->batch);
    const int64_t a_cols = p->trans_a ? p->m : p->kdim, b_cols = p->trans_b ? p->kdim : p->n;
    if (p->lda < (a_cols > 1 ? a_cols : 1) || p->ldb < (b_cols > 1 ? b_cols : 1) || p->ldc < (p->n > 1 ? p->n : 1))
        return LB_FAIL(LB_ERR_INVALID,
                       "%s bmm: leading dimension below the row width (lda %lld < %lld, ldb %lld < %lld or ldc %lld < %lld)",
                       name, (long long)p->lda, (long long)a_cols, (long long)p->ldb, (long long)b_cols,
                       (long long)p->ldc, (long long)p->n);
    if (p->stride_a < 0 || p->stride_b < 0 || p->stride_c < 0)
        return LB_FAIL(LB_ERR_INVALID, "%s bmm: negative batch stride", name);
    if (p->m * p->n * p->batch > 0 && ((p->kdim > 0 && (!p->a || !p->b)) || !p->c))
        return LB_FAIL(LB_ERR_INVALID, "%s bmm: NULL matrix", name);
    return LB_OK;
}

int lb_args_rows(const LbBackend *be, const char *op, const void *x, int64_t rows, int64_t cols)
{
    LB_TRY(lb_arg_dims(be, op, rows, cols, 0));
    return lb_arg_need(be, x, rows * cols, op, strcmp(op, "gelu") == 0 ? "y" : "x");
}

int lb_args_layernorm(const LbBackend *be, const void *x, const void *gamma, const void *beta, int64_t rows,
                      int64_t d, float eps)
{
    LB_TRY(lb_args_rows(be, "layernorm", x, rows, d));
    LB_TRY(NEED(be, "layernorm", {"gamma", gamma, rows > 0 ? d : 0}, {"beta", beta, rows > 0 ? d : 0}));
    if (!(eps >= 0.0f))
        return LB_FAIL(LB_ERR_INVALID, "%s layernorm: eps %g is negative", be->ops->name, (double)eps);
    return LB_OK;
}

int lb_args_embed(const LbBackend *be, const int32_t *ids, const void *tok, const void *pos, const void *x,
                  int64_t batch, int64_t n, int64_t d)
{
    LB_TRY(lb_arg_dims(be, "embed", batch, n, d));
    return NEED(be, "embed", {"ids", ids, batch * n}, {"x", x, batch * n * d}, {"tok", tok, batch > 0 ? n * d : 0},
                {"pos", pos, batch > 0 ? n * d : 0});
}

int lb_args_heads(const LbBackend *be, const char *op, const void *src, int64_t ld_src, const void *dst,
                  int64_t batch, int64_t n, int64_t heads, int64_t hd)
{
    LB_TRY(lb_arg_dims(be, op, batch, n, heads));
    LB_TRY(lb_arg_dims(be, op, hd, ld_src, 0));
    if (ld_src != 0 && ld_src < heads * hd)
        return LB_FAIL(LB_ERR_INVALID, "%s %s: ld_src %lld < heads * hd = %lld", be->ops->name, op,
                       (long long)ld_src, (long long)(heads * hd));
    return NEED(be, op, {"src", src, batch * n * heads * hd}, {"dst", dst, batch * n * heads * hd});
}

int lb_args_favor(const LbBackend *be, const void *f, const void *x, int64_t groups, int64_t n, int64_t m,
                  int64_t hd)
{
    LB_TRY(lb_arg_dims(be, "favor_features", groups, n, m));
    LB_TRY(lb_arg_dims(be, "favor_features", hd, 0, 0));
    return NEED(be, "favor_features", {"f", f, groups * n * m}, {"x", x, groups * n * hd});
}

int lb_args_divide_by_last(const LbBackend *be, const void *x, const void *y, int64_t rows, int64_t cols)
{
    LB_TRY(lb_arg_dims(be, "divide_by_last", rows, cols, 0));
    return NEED(be, "divide_by_last", {"x", x, rows * (cols + 1)}, {"y", y, rows * cols});
}

int lb_args_flash(const LbBackend *be, const void *q, const void *k, const void *v, int64_t ld, const void *o,
                  int64_t batch, int64_t n, int64_t heads, int64_t hd)
{
    const char *op = "flash_attention";
    LB_TRY(lb_arg_dims(be, op, batch, n, heads));
    LB_TRY(lb_arg_dims(be, op, hd, ld, 0));
    if (ld < heads * hd)
        return LB_FAIL(LB_ERR_INVALID, "%s flash_attention: row stride %lld below heads x hd = %lld", be->ops->name,
                       (long long)ld, (long long)(heads * hd));
    const int64_t span = batch * n > 0 ? (batch * n - 1) * ld + heads * hd : 0;
    return NEED(be, op, {"q", q, span}, {"k", k, span}, {"v", v, span}, {"o", o, batch * n * heads * hd});
}

int lb_args_seq(const LbBackend *be, const char *op, const void *x, int64_t ld_x, const void *wt, const void *y,
                int64_t ld_y, int64_t batch, int64_t n, int64_t k, int64_t channels)
{
    LB_TRY(lb_arg_dims(be, op, batch, n, k));
    LB_TRY(lb_arg_dims(be, op, channels, ld_x, ld_y));
    if (k < 1 || n % k != 0)
        return LB_FAIL(LB_ERR_INVALID, "%s %s: k %lld does not divide n %lld", be->ops->name, op, (long long)k,
                       (long long)n);
    if (ld_x < channels || ld_y < channels)
        return LB_FAIL(LB_ERR_INVALID, "%s %s: row strides %lld, %lld below %lld channels", be->ops->name, op,
                       (long long)ld_x, (long long)ld_y, (long long)channels);
    LB_TRY(NEED(be, op, {"x", x, batch * n > 0 ? (batch * n - 1) * ld_x + channels : 0},
                {"y", y, batch * k > 0 ? (batch * k - 1) * ld_y + channels : 0}));
    return strcmp(op, "depthwise_conv_seq") == 0 ? lb_arg_need(be, wt, batch > 0 ? n / k * channels : 0, op, "wt")
                                                 : LB_OK;
}

/* --- the backward ops ----------------------------------------------------------------------------- */

int lb_args_pair(const LbBackend *be, const char *op, const void *a, const void *b, int64_t rows, int64_t cols)
{
    LB_TRY(lb_arg_dims(be, op, rows, cols, 0));
    LB_TRY(lb_arg_need(be, a, rows * cols, op, strcmp(op, "add") == 0 ? "x" : strcmp(op, "gelu_backward") == 0 ? "z" : "y"));
    return lb_arg_need(be, b, rows * cols, op, strcmp(op, "add") == 0 ? "y" : "d");
}

int lb_args_column_sums(const LbBackend *be, const void *x, const void *y, int64_t rows, int64_t cols,
                        const void *scratch)
{
    LB_TRY(lb_arg_dims(be, "column_sums", rows, cols, 0));
    return NEED(be, "column_sums", {"x", x, rows * cols}, {"y", y, cols},
                {"scratch", scratch, lb_column_sums_scratch_bytes(rows, cols) > 0 && rows * cols > 0});
}

int lb_args_layernorm_backward(const LbBackend *be, const void *x, const void *gamma, const void *dy, const void *dv,
                               int64_t rows, int64_t d, float eps, const void *scratch)
{
    const char *op = "layernorm_backward";
    LB_TRY(lb_arg_dims(be, op, rows, d, 0));
    LB_TRY(NEED(be, op, {"x", x, rows * d}, {"dy", dy, rows * d}, {"dv", dv, rows * d},
                {"gamma", gamma, rows > 0 ? d : 0}, {"scratch", scratch, rows * d > 0}));
    if (!(eps >= 0.0f))
        return LB_FAIL(LB_ERR_INVALID, "%s %s: eps %g is negative", be->ops->name, op, (double)eps);
    return LB_OK;
}

int lb_args_embed_backward(const LbBackend *be, const int32_t *ids, const void *dx, const void *dtok,
                           const void *dpos, int64_t batch, int64_t n, int64_t d, int64_t vocab, const void *scratch)
{
    const char *op = "embed_backward";
    LB_TRY(lb_arg_dims(be, op, batch, n, d));
    LB_TRY(lb_arg_dims(be, op, vocab, 0, 0));
    return NEED(be, op, {"ids", ids, batch * n}, {"dx", dx, batch * n * d}, {"dtok", dtok, vocab * d},
                {"dpos", dpos, n * d}, {"scratch", scratch, batch * n * d > 0});
}

int lb_args_seq_backward(const LbBackend *be, const char *op, const void *x, int64_t ld_x, const void *wt,
                         const void *dy, int64_t ld_y, const void *dx, const void *dwt, int64_t batch, int64_t n,
                         int64_t k, int64_t channels)
{
    LB_TRY(lb_args_seq(be, op, x, ld_x, NULL, dy, ld_y, batch, n, k, channels));
    LB_TRY(lb_arg_need(be, dx, batch * n > 0 ? (batch * n - 1) * ld_x + channels : 0, op, "dx"));
    if (strcmp(op, "pool_seq_backward") == 0)
        return LB_OK;
    return NEED(be, op, {"wt", wt, batch > 0 ? n / k * channels : 0}, {"dwt", dwt, batch > 0 ? n / k * channels : 0});
}

int lb_args_favor_backward(const LbBackend *be, const void *phi, const void *x, const void *d, const void *dx,
                           int64_t groups, int64_t n, int64_t m, int64_t hd)
{
    const char *op = "favor_features_backward";
    LB_TRY(lb_arg_dims(be, op, groups, n, m));
    LB_TRY(lb_arg_dims(be, op, hd, 0, 0));
    return NEED(be, op, {"phi", phi, groups * n * m}, {"d", d, groups * n * m}, {"x", x, groups * n * hd},
                {"dx", dx, groups * n * hd});
}

int lb_args_divide_by_last_backward(const LbBackend *be, const void *x, const void *dy, const void *dx, int64_t rows,
                                    int64_t cols)
{
    const char *op = "divide_by_last_backward";
    LB_TRY(lb_arg_dims(be, op, rows, cols, 0));
    return NEED(be, op, {"x", x, rows * (cols + 1)}, {"dy", dy, rows * cols}, {"dx", dx, rows * (cols + 1)});
}

int lb_args_flash_backward(const LbBackend *be, const char *op, const void *q, const void *k, const void *v,
                           int64_t ld, const void *o, const float *lse, const void *do_, const void *dq,
                           const void *dk, const void *dv, int64_t batch, int64_t n, int64_t heads, int64_t hd)
{
    LB_TRY(lb_args_flash(be, q, k, v, ld, o, batch, n, heads, hd));
    const int64_t span = batch * n > 0 ? (batch * n - 1) * ld + heads * hd : 0, rows = batch * heads * n;
    LB_TRY(lb_arg_need(be, lse, rows, op, "lse"));
    if (strcmp(op, "flash_attention_lse") == 0)
        return LB_OK;
    return NEED(be, op, {"do", do_, batch * n * heads * hd}, {"dq", dq, span}, {"dk", dk, span}, {"dv", dv, span});
}
