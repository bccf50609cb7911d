/* The Linformer's general projections: the sequence compressed from n to k positions, each
 * channel apart, on token-major rows: pool_seq (mean or max over windows of w = n / k) and
 * depthwise_conv_seq (kernel and stride w, wt tap-major), and their gradients. One output row per
 * tpr lanes walking 16-byte packs of channels; fp32 sums. Checked by the check table
 * (attn/check.c) against the cpu_ref.h and cpu_backward.h references. */
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
int compress(LbBackend *be, const void *d_x, int64_t ld_x, const void *d_wt, void *d_y, int64_t ld_y, int64_t batch,
             int64_t n, int64_t k, int64_t channels)
{
    if (batch == 0 || n == 0 || channels == 0)
        return LB_OK;
    const cudaStream_t st = lb_cuda_stream(be);
    LB_DISPATCH_PACKS(be->storage, T, N,
                      lb_can_vec16(d_x, channels, sizeof(T)) && lb_can_vec16(d_x, ld_x, sizeof(T)) &&
                          lb_can_vec16(d_y, ld_y, sizeof(T)) && lb_can_vec16(d_y, channels, sizeof(T)) &&
                          (MODE != kConv || lb_can_vec16(d_wt, channels, sizeof(T))),
                      return launch_n<T, N, MODE>(static_cast<const T *>(d_x), ld_x, static_cast<const T *>(d_wt),
                                                  static_cast<T *>(d_y), ld_y, batch, n, k, channels, st));
    return LB_OK;
}


/* The gradient of seq_compress_kernel's input, the same walk: each output row's dy (N channels)
 * spread back over its window's w rows of dx. Max finds the first maximum as the forward's fmaxf
 * order would (a strict > over the window). */
template <typename T, int N, int MODE>
__global__ void __launch_bounds__(kRowBlock)
seq_expand_kernel(const T *x, int64_t ld_x, const T *wt, const T *dy, int64_t ld_y, T *dx, int64_t rows, int64_t n,
                  int64_t k, int64_t w, int64_t channels, int tpr)
{
    const int rows_per_block = kRowBlock / tpr;
    const int lane = threadIdx.x % tpr;
    const int64_t packs = channels / N;
    for (int64_t r = (int64_t)blockIdx.x * rows_per_block + threadIdx.x / tpr; r < rows;
         r += (int64_t)gridDim.x * rows_per_block) {
        const int64_t b = (int64_t)lb_udiv64((uint64_t)r, (uint64_t)k), t = r - b * k;
        const int64_t row0 = b * n + t * w;
        for (int64_t p = lane; p < packs; p += tpr) {
            const int64_t c = p * N;
            const LbPack<T, N> g = lb_load_pack<T, N>(dy + r * ld_y + c);
            int64_t top[N];
            float best[N];
#pragma unroll
            for (int e = 0; e < N; e++)
                top[e] = 0, best[e] = -INFINITY;
            for (int64_t j = 0; MODE == LB_POOL_MAX && j < w; j++) {
                const LbPack<T, N> v = lb_load_pack<T, N>(x + (row0 + j) * ld_x + c);
#pragma unroll
                for (int e = 0; e < N; e++)
                    if (j == 0 || lb_to_float(v.v[e]) > best[e])
                        top[e] = j, best[e] = lb_to_float(v.v[e]);
            }
            for (int64_t j = 0; j < w; j++) {
                LbPack<T, N> tap, out;
                if (MODE == kConv)
                    tap = lb_load_pack<T, N>(wt + j * channels + c);
#pragma unroll
                for (int e = 0; e < N; e++) {
                    const float ge = lb_to_float(g.v[e]);
                    out.v[e] = lb_from_float<T>(MODE == kConv        ? ge * lb_to_float(tap.v[e])
                                                : MODE == LB_POOL_MAX ? (j == top[e] ? ge : 0.0f)
                                                                      : ge / (float)w);
                }
                lb_store_pack<T, N>(dx + (row0 + j) * ld_x + c, out);
            }
        }
    }
}

/* part[p][j][c] = the sum over output rows r in part p's strip of dy[r][c] x[window row j][c]:
 * the strips split the batch k rows evenly, each walked in order. One thread per (part, tap, pack
 * of N channels). */
template <typename T, int N>
__global__ void __launch_bounds__(kRowBlock)
conv_dwt_parts_kernel(const T *x, int64_t ld_x, const T *dy, int64_t ld_y, float *part, int64_t parts, int64_t rows,
                      int64_t n, int64_t k, int64_t w, int64_t channels)
{
    const int64_t packs = channels / N, items = parts * w * packs;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < items; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t pj = (int64_t)lb_udiv64((uint64_t)i, (uint64_t)packs), c = (i - pj * packs) * N;
        const int64_t p = (int64_t)lb_udiv64((uint64_t)pj, (uint64_t)w), j = pj - p * w;
        const int64_t r0 = (int64_t)lb_udiv64((uint64_t)(p * rows), (uint64_t)parts);
        const int64_t r1 = (int64_t)lb_udiv64((uint64_t)((p + 1) * rows), (uint64_t)parts);
        float acc[N];
#pragma unroll
        for (int e = 0; e < N; e++)
            acc[e] = 0.0f;
        int64_t b = (int64_t)lb_udiv64((uint64_t)r0, (uint64_t)k), t = r0 - b * k;
        for (int64_t r = r0; r < r1; r++, t++) {
            if (t == k)
                t = 0, b++;
            const LbPack<T, N> g = lb_load_pack<T, N>(dy + r * ld_y + c);
            const LbPack<T, N> v = lb_load_pack<T, N>(x + (b * n + t * w + j) * ld_x + c);
#pragma unroll
            for (int e = 0; e < N; e++)
                acc[e] = fmaf(lb_to_float(g.v[e]), lb_to_float(v.v[e]), acc[e]);
        }
#pragma unroll
        for (int e = 0; e < N; e++)
            part[(p * w + j) * channels + c + e] = acc[e];
    }
}

template <typename T, int N, int MODE>
int launch_expand(const T *x, int64_t ld_x, const T *wt, const T *dy, int64_t ld_y, T *dx, int64_t batch, int64_t n,
                  int64_t k, int64_t channels, cudaStream_t st)
{
    const int64_t rows = batch * k;
    const int tpr = lb_threads_per_row(channels / N);
    LB_LAUNCH(lb_grid_for(rows, kRowBlock / tpr), kRowBlock, 0, st, seq_expand_kernel<T, N, MODE>)(
        x, ld_x, wt, dy, ld_y, dx, rows, n, k, n / k, channels, tpr);
    LB_LAUNCH_CHECK(MODE == kConv ? "seq_expand_kernel (depthwise convolution)"
                                  : MODE == LB_POOL_MAX ? "seq_expand_kernel (max pooling)"
                                                        : "seq_expand_kernel (mean pooling)");
    return LB_OK;
}

template <typename T, int N>
int launch_dwt(LbDtype dtype, const T *x, int64_t ld_x, const T *dy, int64_t ld_y, T *dwt, float *part, int64_t batch,
               int64_t n, int64_t k, int64_t channels, cudaStream_t st)
{
    const int64_t rows = batch * k, w = n / k, parts = rows < LB_GRAD_PARTS ? rows : LB_GRAD_PARTS;
    LB_LAUNCH(lb_grid_for(parts * w * (channels / N), kRowBlock), kRowBlock, 0, st, conv_dwt_parts_kernel<T, N>)(
        x, ld_x, dy, ld_y, part, parts, rows, n, k, w, channels);
    LB_LAUNCH_CHECK("conv_dwt_parts_kernel");
    return lb_cuda_sum_parts(st, dtype, part, dwt, parts, w * channels);
}

/* dx of pool_seq (MODE its LbPoolMode) or of the convolution, and the convolution's dwt. */
template <int MODE>
int expand(LbBackend *be, const void *d_x, int64_t ld_x, const void *d_wt, const void *d_dy, int64_t ld_y, void *d_dx,
           void *d_dwt, void *d_scratch, int64_t batch, int64_t n, int64_t k, int64_t channels)
{
    const cudaStream_t st = lb_cuda_stream(be);
    const LbDtype dtype = be->storage;
    if (n == 0 || channels == 0) /* batch 0 still writes dwt: zeros */
        return LB_OK;
    if (MODE == kConv && (uintptr_t)d_scratch % 4u != 0)
        return LB_FAIL(LB_ERR_INVALID, "cuda depthwise_conv_seq_backward: scratch not 4-byte aligned");
    LB_DISPATCH_PACKS(dtype, T, N,
                      lb_can_vec16(d_x, channels, sizeof(T)) && lb_can_vec16(d_x, ld_x, sizeof(T)) &&
                          lb_can_vec16(d_dx, ld_x, sizeof(T)) && lb_can_vec16(d_dy, ld_y, sizeof(T)) &&
                          lb_can_vec16(d_dy, channels, sizeof(T)) &&
                          (MODE != kConv || lb_can_vec16(d_wt, channels, sizeof(T))),
                      {
                          const T *x = static_cast<const T *>(d_x), *dy = static_cast<const T *>(d_dy);
                          LB_TRY((launch_expand<T, N, MODE>(x, ld_x, static_cast<const T *>(d_wt), dy, ld_y,
                                                            static_cast<T *>(d_dx), batch, n, k, channels, st)));
                          if (MODE == kConv)
                              LB_TRY((launch_dwt<T, N>(dtype, x, ld_x, dy, ld_y, static_cast<T *>(d_dwt),
                                                       static_cast<float *>(d_scratch), batch, n, k, channels, st)));
                      });
    return LB_OK;
}

} // namespace

extern "C" int lb_cuda_pool_seq(LbBackend *be, const void *d_x, int64_t ld_x, void *d_y, int64_t ld_y, int64_t batch,
                                int64_t n, int64_t k, int64_t channels, int mode)
{
    LB_TRY(lb_args_seq(be, "pool_seq", d_x, ld_x, NULL, d_y, ld_y, batch, n, k, channels));
    if (mode != LB_POOL_MEAN && mode != LB_POOL_MAX)
        return LB_FAIL(LB_ERR_INVALID, "pool_seq: mode %d is neither mean nor max", mode);
    return (mode == LB_POOL_MAX ? compress<LB_POOL_MAX> : compress<LB_POOL_MEAN>)(be, d_x, ld_x, NULL, d_y, ld_y,
                                                                                   batch, n, k, channels);
}

extern "C" int lb_cuda_depthwise_conv_seq(LbBackend *be, const void *d_x, int64_t ld_x, const void *d_wt, void *d_y,
                                          int64_t ld_y, int64_t batch, int64_t n, int64_t k, int64_t channels)
{
    LB_TRY(lb_args_seq(be, "depthwise_conv_seq", d_x, ld_x, d_wt, d_y, ld_y, batch, n, k, channels));
    return compress<kConv>(be, d_x, ld_x, d_wt, d_y, ld_y, batch, n, k, channels);
}

extern "C" int lb_cuda_pool_seq_backward(LbBackend *be, const void *d_x, int64_t ld_x, const void *d_dy, int64_t ld_y,
                                         void *d_dx, int64_t batch, int64_t n, int64_t k, int64_t channels, int mode)
{
    LB_TRY(lb_args_seq_backward(be, "pool_seq_backward", d_x, ld_x, NULL, d_dy, ld_y, d_dx, NULL, batch, n, k,
                                channels));
    if (mode != LB_POOL_MEAN && mode != LB_POOL_MAX)
        return LB_FAIL(LB_ERR_INVALID, "pool_seq_backward: mode %d is neither mean nor max", mode);
    return (mode == LB_POOL_MAX ? expand<LB_POOL_MAX> : expand<LB_POOL_MEAN>)(be, d_x, ld_x, NULL, d_dy, ld_y, d_dx,
                                                                               NULL, NULL, batch, n, k, channels);
}

extern "C" int lb_cuda_depthwise_conv_seq_backward(LbBackend *be, const void *d_x, int64_t ld_x, const void *d_wt,
                                                   const void *d_dy, int64_t ld_y, void *d_dx, void *d_dwt,
                                                   int64_t batch, int64_t n, int64_t k, int64_t channels,
                                                   void *d_scratch)
{
    LB_TRY(lb_args_seq_backward(be, "depthwise_conv_seq_backward", d_x, ld_x, d_wt, d_dy, ld_y, d_dx, d_dwt, batch, n,
                                k, channels));
    LB_TRY(lb_arg_need(be, d_scratch, n > 0 && channels > 0, "depthwise_conv_seq_backward", "scratch"));
    return expand<kConv>(be, d_x, ld_x, d_wt, d_dy, ld_y, d_dx, d_dwt, d_scratch, batch, n, k, channels);
}
