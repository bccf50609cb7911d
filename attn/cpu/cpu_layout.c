/* The reference data movement: token + position embedding, and the moves of Q, K, V between
 * token-major (batch, n, d) and head-major (batch, heads, n, hd) order (attn/cpu/cpu_ref.h).
 * Pure copies and one float addition, so a kernel must match them exactly. */
#include <inttypes.h>
#include <string.h>

#include "attn/cpu/cpu_ref.h"
#include "attn/op_args.h"
#include "attn/base/status.h"

int lb_cpu_embed(LbBackend *be, const int32_t *ids, const void *tok_v, const void *pos_v, void *x_v, int64_t batch,
                 int64_t n, int64_t d)
{
    const float *tok = tok_v, *pos = pos_v;
    float *x = x_v;
    LB_TRY(lb_args_embed(be, ids, tok, pos, x, batch, n, d));
    /* the vocabulary size is not passed, so only the lower bound can be checked */
    for (int64_t i = 0; i < batch * n; i++)
        if (ids[i] < 0)
            return LB_FAIL(LB_ERR_INVALID, "cpu embed: token id %" PRId32 " at %" PRId64 " is negative", ids[i], i);
    for (int64_t b = 0; b < batch; b++)
        for (int64_t t = 0; t < n; t++) {
            const float *te = tok + (int64_t)ids[b * n + t] * d;
            const float *pe = pos + t * d;
            float *xr = x + (b * n + t) * d;
            for (int64_t j = 0; j < d; j++)
                xr[j] = te[j] + pe[j];
        }
    return LB_OK;
}

int lb_cpu_split_heads(LbBackend *be, const void *src_v, int64_t ld_src, void *dst_v, int64_t batch, int64_t n,
                       int64_t heads, int64_t hd)
{
    const float *src = src_v;
    float *dst = dst_v;
    LB_TRY(lb_args_heads(be, "split_heads", src, ld_src, dst, batch, n, heads, hd));
    for (int64_t b = 0; b < batch; b++)
        for (int64_t h = 0; h < heads; h++)
            for (int64_t t = 0; t < n; t++)
                memcpy(dst + ((b * heads + h) * n + t) * hd, src + (b * n + t) * ld_src + h * hd,
                       (size_t)hd * sizeof *dst);
    return LB_OK;
}

int lb_cpu_merge_heads(LbBackend *be, const void *src_v, void *dst_v, int64_t batch, int64_t n, int64_t heads,
                       int64_t hd)
{
    const float *src = src_v;
    float *dst = dst_v;
    LB_TRY(lb_args_heads(be, "merge_heads", src, 0, dst, batch, n, heads, hd));
    for (int64_t b = 0; b < batch; b++)
        for (int64_t t = 0; t < n; t++)
            for (int64_t h = 0; h < heads; h++)
                memcpy(dst + (b * n + t) * heads * hd + h * hd, src + ((b * heads + h) * n + t) * hd,
                       (size_t)hd * sizeof *dst);
    return LB_OK;
}
