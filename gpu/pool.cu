/* The Linformer's general projections (attn/model_linformer.c, METHOD.md "General projections"):
 * the sequence compressed from n to k positions, each channel apart, in place on token-major rows
 * (the compression reads keys and values straight from the fused Q/K/V output):
 *   pool_seq:           y[(b k + t) ld_y + c] = mean or max of x[(b n + t w + j) ld_x + c], j < w;
 *   depthwise_conv_seq: y[(b k + t) ld_y + c] = sum over j < w of wt[j C + c] x[(b n + t w + j) ld_x + c],
 * w = n / k (kernel and stride of the convolution), C channels, wt tap-major (taps, C).
 * One output row (b, t) per tpr lanes (bias_act's layout), each lane walking channels c, c + tpr ...
 * so a warp reads consecutive channels of one input row: the window's w rows are read once each,
 * coalesced. Sums and maxima in fp32, rounded once on store. No shared memory: every input element
 * is read by exactly one thread, so there is nothing to reuse.
 *
 * Checked by tests/gpu/test_gpu_pool.c against lb_pool_seq_cpu and lb_depthwise_conv_seq_cpu
 * (attn/cpu/cpu_ref.h, double) in all three storage types, windows of 1 to 64 positions, strides
 * wider than the channels (read in place), the grid capped so each block walks several rows, and
 * the output poisoned first; and by `linbench check` (rows pool_seq and depthwise_conv_seq). */
#include <math.h>

#include "gpu/cuda_check.h"
#include "gpu/device_util.cuh"
#include "gpu/kernels.h"

namespace {

/* MODE: LB_POOL_MEAN, LB_POOL_MAX, or kConv (the depthwise convolution, wt its kernels). */
constexpr int kConv = 2;

template <typename T, int MODE>
__global__ void __launch_bounds__(kRowBlock)
seq_compress_kernel(const T *x, int64_t ld_x, const T *wt, T *y, int64_t ld_y, int64_t rows, int64_t n, int64_t k,
                    int64_t w, int64_t channels, int tpr)
{
    const int rows_per_block = kRowBlock / tpr;
    const int lane = threadIdx.x % tpr;
    const float inv_w = 1.0f / (float)w;
    for (int64_t r = (int64_t)blockIdx.x * rows_per_block + threadIdx.x / tpr; r < rows;
         r += (int64_t)gridDim.x * rows_per_block) {
        const int64_t b = (int64_t)lb_udiv64((uint64_t)r, (uint64_t)k), t = r - b * k;
        const T *xw = x + (b * n + t * w) * ld_x;
        T *yr = y + r * ld_y;
        for (int64_t c = lane; c < channels; c += tpr) {
            float acc = MODE == LB_POOL_MAX ? -INFINITY : 0.0f;
            for (int64_t j = 0; j < w; j++) {
                const float v = lb_to_float(xw[j * ld_x + c]);
                if (MODE == LB_POOL_MAX)
                    acc = fmaxf(acc, v);
                else if (MODE == kConv)
                    acc = fmaf(lb_to_float(wt[j * channels + c]), v, acc);
                else
                    acc += v;
            }
            yr[c] = lb_from_float<T>(MODE == LB_POOL_MEAN ? acc * inv_w : acc);
        }
    }
}

template <typename T, int MODE>
int launch_compress(const void *d_x, int64_t ld_x, const void *d_wt, void *d_y, int64_t ld_y, int64_t batch,
                    int64_t n, int64_t k, int64_t channels, cudaStream_t st)
{
    const int64_t rows = batch * k;
    const int tpr = lb_threads_per_row(channels);
    LB_LAUNCH(lb_grid_for(rows, kRowBlock / tpr), kRowBlock, 0, st, seq_compress_kernel<T, MODE>)(
        static_cast<const T *>(d_x), ld_x, static_cast<const T *>(d_wt), static_cast<T *>(d_y), ld_y, rows, n, k,
        n / k, channels, tpr);
    LB_LAUNCH_CHECK(MODE == kConv ? "seq_compress_kernel (depthwise convolution)"
                                  : MODE == LB_POOL_MAX ? "seq_compress_kernel (max pooling)"
                                                        : "seq_compress_kernel (mean pooling)");
    return LB_OK;
}

int check_shape(const char *what, int64_t ld_x, int64_t ld_y, int64_t batch, int64_t n, int64_t k, int64_t channels)
{
    if (batch < 0 || n < 0 || k < 0 || channels < 0)
        return LB_FAIL(LB_ERR_INVALID, "%s: negative shape (%lld, %lld, %lld, %lld)", what, (long long)batch,
                       (long long)n, (long long)k, (long long)channels);
    if (k < 1 || n % k != 0)
        return LB_FAIL(LB_ERR_INVALID, "%s: k %lld does not divide n %lld", what, (long long)k, (long long)n);
    if (ld_x < channels || ld_y < channels)
        return LB_FAIL(LB_ERR_INVALID, "%s: row strides %lld, %lld below %lld channels", what, (long long)ld_x,
                       (long long)ld_y, (long long)channels);
    return LB_OK;
}

} // namespace

extern "C" int lb_cuda_pool_seq(cudaStream_t stream, LbDtype dtype, const void *d_x, int64_t ld_x, void *d_y,
                                int64_t ld_y, int64_t batch, int64_t n, int64_t k, int64_t channels, int mode)
{
    LB_TRY(check_shape("pool_seq", ld_x, ld_y, batch, n, k, channels));
    if (mode != LB_POOL_MEAN && mode != LB_POOL_MAX)
        return LB_FAIL(LB_ERR_INVALID, "pool_seq: mode %d is neither mean nor max", mode);
    if (batch == 0 || n == 0 || channels == 0)
        return LB_OK;
    if (mode == LB_POOL_MAX)
        LB_DISPATCH_DTYPE(dtype, T,
                          return launch_compress<T, LB_POOL_MAX>(d_x, ld_x, NULL, d_y, ld_y, batch, n, k, channels,
                                                                 stream));
    LB_DISPATCH_DTYPE(dtype, T,
                      return launch_compress<T, LB_POOL_MEAN>(d_x, ld_x, NULL, d_y, ld_y, batch, n, k, channels,
                                                              stream));
    return LB_OK;
}

extern "C" int lb_cuda_depthwise_conv_seq(cudaStream_t stream, LbDtype dtype, const void *d_x, int64_t ld_x,
                                          const void *d_wt, void *d_y, int64_t ld_y, int64_t batch, int64_t n,
                                          int64_t k, int64_t channels)
{
    LB_TRY(check_shape("depthwise_conv_seq", ld_x, ld_y, batch, n, k, channels));
    if (batch == 0 || n == 0 || channels == 0)
        return LB_OK;
    LB_DISPATCH_DTYPE(dtype, T,
                      return launch_compress<T, kConv>(d_x, ld_x, d_wt, d_y, ld_y, batch, n, k, channels, stream));
    return LB_OK;
}
