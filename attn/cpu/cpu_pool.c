/* The references of LbOps.pool_seq and LbOps.depthwise_conv_seq (attn/ops.h) and the check
 * table's for gpu/pool.cu, each output in double rounded once; cheap next to the products around
 * them, so one thread. */
#include <math.h>

#include "attn/cpu/cpu_ref.h"
#include "attn/op_args.h"
#include "attn/base/status.h"

/* y's rows from x's windows of w = n / k rows: mean or max (mode), or the sum weighted by wt
 * (taps, channels) tap-major when wt is not NULL. */
static void seq_windows(const float *x, int64_t ld_x, const float *wt, float *y, int64_t ld_y, int64_t batch,
                        int64_t n, int64_t k, int64_t channels, int mode)
{
    const int64_t w = n / k;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t t = 0; t < k; t++) {
            const float *xw = x + (b * n + t * w) * ld_x;
            float *yr = y + (b * k + t) * ld_y;
            for (int64_t c = 0; c < channels; c++) {
                double acc = !wt && mode == LB_POOL_MAX ? -INFINITY : 0.0;
                for (int64_t j = 0; j < w; j++) {
                    const double v = xw[j * ld_x + c];
                    if (wt)
                        acc += (double)wt[j * channels + c] * v;
                    else
                        acc = mode == LB_POOL_MAX ? (v > acc ? v : acc) : acc + v;
                }
                yr[c] = (float)(wt || mode == LB_POOL_MAX ? acc : acc / (double)w);
            }
        }
}

int lb_cpu_pool_seq(LbBackend *be, const void *x, int64_t ld_x, void *y, int64_t ld_y, int64_t batch, int64_t n,
                    int64_t k, int64_t channels, int mode)
{
    LB_TRY(lb_args_seq(be, "pool_seq", x, ld_x, NULL, y, ld_y, batch, n, k, channels));
    if (mode != LB_POOL_MEAN && mode != LB_POOL_MAX)
        return LB_FAIL(LB_ERR_INVALID, "cpu pool_seq: mode %d is neither mean nor max", mode);
    seq_windows(x, ld_x, NULL, y, ld_y, batch, n, k, channels, mode);
    return LB_OK;
}

int lb_cpu_depthwise_conv_seq(LbBackend *be, const void *x, int64_t ld_x, const void *wt, void *y, int64_t ld_y,
                              int64_t batch, int64_t n, int64_t k, int64_t channels)
{
    LB_TRY(lb_args_seq(be, "depthwise_conv_seq", x, ld_x, wt, y, ld_y, batch, n, k, channels));
    seq_windows(x, ld_x, wt, y, ld_y, batch, n, k, channels, LB_POOL_MEAN);
    return LB_OK;
}
