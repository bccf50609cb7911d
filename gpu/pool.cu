/* The Linformer's general projections (attn/model_linformer.c): the sequence compressed from n
 * to k positions, each channel apart, in place on token-major rows: pool_seq (mean or max over
 * windows of w = n / k) and depthwise_conv_seq (kernel and stride w, wt tap-major). One output
 * row per tpr lanes, each lane walking 16-byte packs of channels, so a warp reads consecutive
 * channels and each input element once (no shared memory to reuse). fp32 sums and maxima.
 * Checked by the check table (attn/check.c, tests/gpu/test_gpu_ops.c) against the cpu_ref.h references, and by linbench check. */
#include <math.h>

#include "gpu/cuda_check.h"
#include "gpu/device_util.cuh"
#include "gpu/kernels.h"

namespace {

/* MODE: LB_POOL_MEAN, LB_POOL_MAX, or kConv (the depthwise convolution, wt its kernels). */
constexpr int kConv = 2;
/* Window rows whose loads a lane issues before it adds any of them, so that a memory-bound pass
 * keeps several loads in flight per lane rather than one: four, or two for the convolution, which
 * loads each row's taps too (with four, bf16 spilled on sm_90: bench/kernel_report.py). */
template <int MODE> constexpr int kInFlight = MODE == kConv ? 2 : 4;

/* acc (N channels) takes in row j of the window, v its N elements. */
template <typename T, int N, int MODE>
__device__ __forceinline__ void take_in(float (&acc)[N], const LbPack<T, N> &v, const T *wt, int64_t j,
                                        int64_t channels, int64_t c)
{
    LbPack<T, N> tap;
    if (MODE == kConv)
        tap = lb_load_pack<T, N>(wt + j * channels + c);
#pragma unroll
    for (int e = 0; e < N; e++) {
        const float x = lb_to_float(v.v[e]);
        if (MODE == LB_POOL_MAX)
            acc[e] = fmaxf(acc[e], x);
        else if (MODE == kConv)
            acc[e] = fmaf(lb_to_float(tap.v[e]), x, acc[e]);
        else
            acc[e] += x;
    }
}

/* N channels per lane access (16 bytes where rows and strides allow, else 1); the window's rows
 * taken in order, so the sums are those of the one-at-a-time loop. */
template <typename T, int N, int MODE>
__global__ void __launch_bounds__(kRowBlock)
seq_compress_kernel(const T *x, int64_t ld_x, const T *wt, T *y, int64_t ld_y, int64_t rows, int64_t n, int64_t k,
                    int64_t w, int64_t channels, int tpr)
{
    const int rows_per_block = kRowBlock / tpr;
    const int lane = threadIdx.x % tpr;
    const float inv_w = 1.0f / (float)w;
    const int64_t packs = channels / N;
    /* (b, t) of row r kept by addition: a 64-bit division is a subroutine call, and a call in
     * the loop makes the kernel save registers to the stack around it */
    const int64_t r0 = (int64_t)blockIdx.x * rows_per_block + threadIdx.x / tpr;
    const int64_t stride = (int64_t)gridDim.x * rows_per_block;
    int64_t b = (int64_t)lb_udiv64((uint64_t)r0, (uint64_t)k), t = r0 - b * k;
    const int64_t db = (int64_t)lb_udiv64((uint64_t)stride, (uint64_t)k), dt = stride - db * k;
    for (int64_t r = r0; r < rows; r += stride, b += db, t += dt) {
        if (t >= k)
            t -= k, b++;
        const T *xw = x + (b * n + t * w) * ld_x;
        T *yr = y + r * ld_y;
        for (int64_t p = lane; p < packs; p += tpr) {
            const int64_t c = p * N;
            float acc[N];
#pragma unroll
            for (int e = 0; e < N; e++)
                acc[e] = MODE == LB_POOL_MAX ? -INFINITY : 0.0f;
            int64_t j = 0;
            for (; j + kInFlight<MODE> <= w; j += kInFlight<MODE>) {
                LbPack<T, N> v[kInFlight<MODE>];
#pragma unroll
                for (int u = 0; u < kInFlight<MODE>; u++)
                    v[u] = lb_load_pack<T, N>(xw + (j + u) * ld_x + c);
#pragma unroll
                for (int u = 0; u < kInFlight<MODE>; u++)
                    take_in<T, N, MODE>(acc, v[u], wt, j + u, channels, c);
            }
            for (; j < w; j++)
                take_in<T, N, MODE>(acc, lb_load_pack<T, N>(xw + j * ld_x + c), wt, j, channels, c);
            LbPack<T, N> out;
#pragma unroll
            for (int e = 0; e < N; e++)
                out.v[e] = lb_from_float<T>(MODE == LB_POOL_MEAN ? acc[e] * inv_w : acc[e]);
            lb_store_pack<T, N>(yr + c, out);
        }
    }
}

template <typename T, int N, int MODE>
int launch_n(const T *x, int64_t ld_x, const T *wt, T *y, int64_t ld_y, int64_t batch, int64_t n, int64_t k,
             int64_t channels, cudaStream_t st)
{
    const int64_t rows = batch * k;
    const int tpr = lb_threads_per_row(channels / N);
    LB_LAUNCH(lb_grid_for(rows, kRowBlock / tpr), kRowBlock, 0, st, seq_compress_kernel<T, N, MODE>)(
        x, ld_x, wt, y, ld_y, rows, n, k, n / k, channels, tpr);
    LB_LAUNCH_CHECK(MODE == kConv ? "seq_compress_kernel (depthwise convolution)"
                                  : MODE == LB_POOL_MAX ? "seq_compress_kernel (max pooling)"
                                                        : "seq_compress_kernel (mean pooling)");
    return LB_OK;
}

/* 16-byte packs where every row of x, y (and wt) starts on 16 bytes and holds whole packs */
template <int MODE>
int compress(cudaStream_t st, LbDtype dtype, const void *d_x, int64_t ld_x, const void *d_wt, void *d_y, int64_t ld_y,
             int64_t batch, int64_t n, int64_t k, int64_t channels)
{
    if (batch == 0 || n == 0 || channels == 0)
        return LB_OK;
    LB_DISPATCH_PACKS(dtype, T, N,
                      lb_can_vec16(d_x, channels, sizeof(T)) && lb_can_vec16(d_x, ld_x, sizeof(T)) &&
                          lb_can_vec16(d_y, ld_y, sizeof(T)) && lb_can_vec16(d_y, channels, sizeof(T)) &&
                          (MODE != kConv || lb_can_vec16(d_wt, channels, sizeof(T))),
                      return launch_n<T, N, MODE>(static_cast<const T *>(d_x), ld_x, static_cast<const T *>(d_wt),
                                                  static_cast<T *>(d_y), ld_y, batch, n, k, channels, st));
    return LB_OK;
}

} // namespace

extern "C" int lb_cuda_pool_seq(cudaStream_t stream, LbDtype dtype, const void *d_x, int64_t ld_x, void *d_y,
                                int64_t ld_y, int64_t batch, int64_t n, int64_t k, int64_t channels, int mode)
{
    if (mode != LB_POOL_MEAN && mode != LB_POOL_MAX)
        return LB_FAIL(LB_ERR_INVALID, "pool_seq: mode %d is neither mean nor max", mode);
    return (mode == LB_POOL_MAX ? compress<LB_POOL_MAX> : compress<LB_POOL_MEAN>)(stream, dtype, d_x, ld_x, NULL, d_y,
                                                                                   ld_y, batch, n, k, channels);
}

extern "C" int lb_cuda_depthwise_conv_seq(cudaStream_t stream, LbDtype dtype, const void *d_x, int64_t ld_x,
                                          const void *d_wt, void *d_y, int64_t ld_y, int64_t batch, int64_t n,
                                          int64_t k, int64_t channels)
{
    return compress<kConv>(stream, dtype, d_x, ld_x, d_wt, d_y, ld_y, batch, n, k, channels);
}
