/* The references of LbOps.pool_seq and LbOps.depthwise_conv_seq (attn/ops.h) and the check table's for gpu/pool.cu, each output in
 * double rounded once; cheap next to the products around them, so one thread. */
#include <math.h>

#include "attn/cpu/cpu_ref.h"

void lb_pool_seq_cpu(const float *x, int64_t ld_x, float *y, int64_t ld_y, int64_t batch, int64_t n, int64_t k,
                     int64_t channels, int mode)
{
    const int64_t w = n / k;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t t = 0; t < k; t++) {
            const float *xw = x + (b * n + t * w) * ld_x;
            float *yr = y + (b * k + t) * ld_y;
            for (int64_t c = 0; c < channels; c++) {
                double acc = mode == LB_POOL_MAX ? -INFINITY : 0.0;
                for (int64_t j = 0; j < w; j++) {
                    const double v = xw[j * ld_x + c];
                    acc = mode == LB_POOL_MAX ? (v > acc ? v : acc) : acc + v;
                }
                yr[c] = (float)(mode == LB_POOL_MAX ? acc : acc / (double)w);
            }
        }
}

void lb_depthwise_conv_seq_cpu(const float *x, int64_t ld_x, const float *wt, float *y, int64_t ld_y, int64_t batch,
                               int64_t n, int64_t k, int64_t channels)
{
    const int64_t w = n / k;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t t = 0; t < k; t++) {
            const float *xw = x + (b * n + t * w) * ld_x;
            float *yr = y + (b * k + t) * ld_y;
            for (int64_t c = 0; c < channels; c++) {
                double acc = 0.0;
                for (int64_t j = 0; j < w; j++)
                    acc += (double)wt[j * channels + c] * (double)xw[j * ld_x + c];
                yr[c] = (float)acc;
            }
        }
}
