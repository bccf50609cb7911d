/* The reference data movement: token + position embedding, and the moves of Q, K, V between
 * token-major (batch, n, d) and head-major (batch, heads, n, hd) order (attn/cpu/cpu_ref.h).
 * Pure copies and one float addition, so a kernel must match them exactly. */
#include <string.h>

#include "attn/cpu/cpu_ref.h"

void lb_embed_cpu(const int32_t *ids, const float *tok, const float *pos, float *x, int64_t batch,
                  int64_t n, int64_t d)
{
    for (int64_t b = 0; b < batch; b++)
        for (int64_t t = 0; t < n; t++) {
            const float *te = tok + (int64_t)ids[b * n + t] * d;
            const float *pe = pos + t * d;
            float *xr = x + (b * n + t) * d;
            for (int64_t j = 0; j < d; j++)
                xr[j] = te[j] + pe[j];
        }
}

void lb_split_heads_cpu(const float *src, int64_t ld_src, float *dst, int64_t batch, int64_t n,
                        int64_t heads, int64_t hd)
{
    for (int64_t b = 0; b < batch; b++)
        for (int64_t h = 0; h < heads; h++)
            for (int64_t t = 0; t < n; t++)
                memcpy(dst + ((b * heads + h) * n + t) * hd, src + (b * n + t) * ld_src + h * hd,
                       (size_t)hd * sizeof *dst);
}

void lb_merge_heads_cpu(const float *src, float *dst, int64_t batch, int64_t n, int64_t heads,
                        int64_t hd)
{
    for (int64_t b = 0; b < batch; b++)
        for (int64_t t = 0; t < n; t++)
            for (int64_t h = 0; h < heads; h++)
                memcpy(dst + (b * n + t) * heads * hd + h * hd, src + ((b * heads + h) * n + t) * hd,
                       (size_t)hd * sizeof *dst);
}
