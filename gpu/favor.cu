/* The Performer's two ops: FAVOR+'s features in place over the projections a product wrote,
 * f = exp(f - |x'|^2 / 2 - s) / sqrt(m), and y = x[:, :cols] / x[:, cols], with their gradients.
 * Queries: s is the row's max (a warp per row). Keys: s is one max over the group's rows, in two
 * stages so it does not depend on block order. fp32 maxima, exponents and dot products. Checked
 * by the check table (attn/check.c) against cpu_ref.h's and cpu_backward.h's references. */
#include <math.h>

#include "gpu/cuda_check.h"
#include "gpu/device_util.cuh"
#include "gpu/kernels.h"

namespace {

constexpr int kFavorBlock = 256; /* 8 warps: 8 rows per block */
constexpr int kRowsPerBlock = kFavorBlock / 32;
constexpr int kGroupBlock = 256;

enum { MODE_QUERY = 0, MODE_ROW_MAX = 1, MODE_KEY = 2 };

/* One warp per row of f (groups * n rows of m), grid-stride. Pack i of a row (N elements) is held
 * by lane i % 32. row_max: (groups * n) fp32; group_max: (groups) fp32 (MODE_KEY). */
template <typename T, int N, int MODE>
__global__ void __launch_bounds__(kFavorBlock)
favor_rows_kernel(T *f, const T *x, float *row_max, const float *group_max, int64_t rows, int64_t n,
                  int64_t m, int64_t hd, float scale2_half_log2e, float inv_sqrt_m)
{
    const float kLog2e = 1.4426950408889634f;
    const int lane = threadIdx.x & 31;
    const int64_t npk = m / N;
    for (int64_t r = (int64_t)blockIdx.x * kRowsPerBlock + (threadIdx.x >> 5); r < rows;
         r += (int64_t)gridDim.x * kRowsPerBlock) {
        T *row = f + r * m;
        float mx = -INFINITY;
        if (MODE != MODE_KEY) {
            for (int64_t i = lane; i < npk; i += 32) {
                const LbPack<T, N> p = lb_load_pack<T, N>(row + i * N);
#pragma unroll
                for (int e = 0; e < N; e++)
                    mx = fmaxf(mx, lb_to_float(p.v[e]));
            }
            mx = lb_lane_reduce<LbMax>(mx);
            if (MODE == MODE_ROW_MAX) {
                if (lane == 0)
                    row_max[r] = mx;
                continue;
            }
        } else {
            mx = group_max[lb_udiv64((uint64_t)r, (uint64_t)n)];
        }
        /* |x'|^2 / 2 in log2 units: scale^2 / 2 * log2(e) folded into one factor */
        const T *xr = x + r * hd;
        float s2 = 0.0f;
        for (int64_t e = lane; e < hd; e += 32) {
            const float v = lb_to_float(xr[e]);
            s2 += v * v;
        }
        const float half_norm = lb_lane_reduce<LbSum>(s2) * scale2_half_log2e;
        for (int64_t i = lane; i < npk; i += 32) {
            LbPack<T, N> p = lb_load_pack<T, N>(row + i * N);
            /* v - max first: exact near the max (Sterbenz), where the largest features are; scaling
             * v and the max by log2(e) apart would leave their rounding in the difference */
#pragma unroll
            for (int e = 0; e < N; e++)
                p.v[e] = lb_from_float<T>(exp2f((lb_to_float(p.v[e]) - mx) * kLog2e - half_norm) * inv_sqrt_m);
            lb_store_pack<T, N>(row + i * N, p);
        }
    }
}

/* group_max[g] = max of row_max[g n .. g n + n), one block per group, grid-stride. */
__global__ void __launch_bounds__(kGroupBlock)
favor_group_max_kernel(const float *row_max, float *group_max, int64_t groups, int64_t n)
{
    LB_SHARED(float, sh, 33);
    for (int64_t g = blockIdx.x; g < groups; g += gridDim.x) {
        float mx = -INFINITY;
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
            mx = fmaxf(mx, row_max[g * n + i]);
        mx = lb_block_reduce<LbMax>(mx, sh);
        if (threadIdx.x == 0)
            group_max[g] = mx;
        /* lb_block_reduce may be called again at once on the same sh (device_util.cuh) */
    }
}

template <typename T, int N>
int launch_features(T *f, const T *x, float *stat, int64_t groups, int64_t n, int64_t m, int64_t hd, float scale,
                    int keys, cudaStream_t st)
{
    const int64_t rows = groups * n;
    const unsigned grid = lb_grid_for(rows, kRowsPerBlock);
    const float c = (float)(0.5 * (double)scale * (double)scale * 1.4426950408889634);
    const float inv_sqrt_m = (float)(1.0 / sqrt((double)m));
    if (!keys) {
        LB_LAUNCH(grid, kFavorBlock, 0, st, favor_rows_kernel<T, N, MODE_QUERY>)(f, x, NULL, NULL, rows, n, m, hd, c,
                                                                                 inv_sqrt_m);
        LB_LAUNCH_CHECK("favor_rows_kernel (queries)");
        return LB_OK;
    }
    float *row_max = stat, *group_max = stat + rows;
    LB_LAUNCH(grid, kFavorBlock, 0, st, favor_rows_kernel<T, N, MODE_ROW_MAX>)(f, x, row_max, NULL, rows, n, m, hd, c,
                                                                               inv_sqrt_m);
    LB_LAUNCH_CHECK("favor_rows_kernel (row maxima)");
    LB_LAUNCH(lb_grid_for(groups, 1), kGroupBlock, 0, st, favor_group_max_kernel)(row_max, group_max, groups, n);
    LB_LAUNCH_CHECK("favor_group_max_kernel");
    LB_LAUNCH(grid, kFavorBlock, 0, st, favor_rows_kernel<T, N, MODE_KEY>)(f, x, NULL, group_max, rows, n, m, hd, c,
                                                                           inv_sqrt_m);
    LB_LAUNCH_CHECK("favor_rows_kernel (keys)");
    return LB_OK;
}

/* y (rows, cols) = x[r, j] / x[r, cols]: tpr lanes per row (bias_act's layout). x's rows are
 * cols + 1 long, so no 16-byte packs. */
template <typename T>
__global__ void __launch_bounds__(kRowBlock)
divide_by_last_kernel(const T *x, T *y, int64_t rows, int64_t cols, int tpr)
{
    const int rows_per_block = kRowBlock / tpr;
    const int lane = threadIdx.x % tpr;
    for (int64_t r = (int64_t)blockIdx.x * rows_per_block + threadIdx.x / tpr; r < rows;
         r += (int64_t)gridDim.x * rows_per_block) {
        const T *xr = x + r * (cols + 1);
        const float inv = 1.0f / lb_to_float(xr[cols]);
        for (int64_t j = lane; j < cols; j += tpr)
            y[r * cols + j] = lb_from_float<T>(lb_to_float(xr[j]) * inv);
    }
}


/* favor_features' gradient, a warp per row: d = dphi phi in place (dphi the upstream gradient of
 * phi), dx = -scale^2 x sum_j d_j. */
template <typename T, int N>
__global__ void __launch_bounds__(kFavorBlock)
favor_backward_kernel(const T *phi, const T *x, T *d, T *dx, int64_t rows, int64_t m, int64_t hd, float scale2)
{
    const int lane = threadIdx.x & 31;
    const int64_t npk = m / N;
    for (int64_t r = (int64_t)blockIdx.x * kRowsPerBlock + (threadIdx.x >> 5); r < rows;
         r += (int64_t)gridDim.x * kRowsPerBlock) {
        float dot = 0.0f;
        for (int64_t i = lane; i < npk; i += 32) {
            const LbPack<T, N> f = lb_load_pack<T, N>(phi + r * m + i * N);
            LbPack<T, N> g = lb_load_pack<T, N>(d + r * m + i * N);
#pragma unroll
            for (int e = 0; e < N; e++) {
                const float v = lb_to_float(g.v[e]) * lb_to_float(f.v[e]);
                dot += v;
                g.v[e] = lb_from_float<T>(v);
            }
            lb_store_pack<T, N>(d + r * m + i * N, g);
        }
        const float c = -scale2 * lb_lane_reduce<LbSum>(dot);
        for (int64_t e = lane; e < hd; e += 32)
            dx[r * hd + e] = lb_from_float<T>(c * lb_to_float(x[r * hd + e]));
    }
}

/* divide_by_last's gradient, a warp per row: dx[:, :cols] = dy / den, dx[:, cols] =
 * -sum_j dy_j x_j / den^2. */
template <typename T>
__global__ void __launch_bounds__(kFavorBlock)
divide_by_last_backward_kernel(const T *x, const T *dy, T *dx, int64_t rows, int64_t cols)
{
    const int lane = threadIdx.x & 31;
    for (int64_t r = (int64_t)blockIdx.x * kRowsPerBlock + (threadIdx.x >> 5); r < rows;
         r += (int64_t)gridDim.x * kRowsPerBlock) {
        const T *xr = x + r * (cols + 1);
        /* one division per row: a division in the loop is a call, and ptxas spills around it */
        const float inv = 1.0f / lb_to_float(xr[cols]);
        float dot = 0.0f;
        for (int64_t j = lane; j < cols; j += 32) {
            const float g = lb_to_float(dy[r * cols + j]);
            dot = fmaf(g, lb_to_float(xr[j]), dot);
            dx[r * (cols + 1) + j] = lb_from_float<T>(g * inv);
        }
        dot = lb_lane_reduce<LbSum>(dot);
        if (lane == 0)
            dx[r * (cols + 1) + cols] = lb_from_float<T>(-dot * inv * inv);
    }
}

} // namespace

extern "C" int lb_cuda_favor_features(LbBackend *be, void *d_f, const void *d_x, void *d_stat, int64_t groups,
                                      int64_t n, int64_t m, int64_t hd, float scale, int keys)
{
    LB_TRY(lb_args_favor(be, d_f, d_x, groups, n, m, hd));
    if (keys)
        LB_TRY(lb_arg_need(be, d_stat, groups * n * m > 0 ? 1 : 0, "favor_features", "stat (keys' scratch)"));
    if ((uintptr_t)d_stat % 4u != 0)
        return LB_FAIL(LB_ERR_INVALID, "cuda favor_features: scratch not 4-byte aligned");
    if (groups == 0 || n == 0 || m == 0)
        return LB_OK;
    /* every row 16-byte aligned when the base is and a row is a whole number of packs */
    LB_DISPATCH_PACKS(be->storage, T, N, lb_can_vec16(d_f, m, sizeof(T)),
                      return launch_features<T, N>(static_cast<T *>(d_f), static_cast<const T *>(d_x),
                                                   static_cast<float *>(d_stat), groups, n, m, hd, scale, keys,
                                                   lb_cuda_stream(be)));
    return LB_OK;
}

extern "C" int lb_cuda_divide_by_last(LbBackend *be, const void *d_x, void *d_y, int64_t rows, int64_t cols)
{
    LB_TRY(lb_args_divide_by_last(be, d_x, d_y, rows, cols));
    if (rows == 0 || cols == 0)
        return LB_OK;
    const int tpr = lb_threads_per_row(cols);
    LB_DISPATCH_DTYPE(be->storage, T,
                      LB_LAUNCH(lb_grid_for(rows, kRowBlock / tpr), kRowBlock, 0, lb_cuda_stream(be),
                                divide_by_last_kernel<T>)(static_cast<const T *>(d_x), static_cast<T *>(d_y), rows,
                                                          cols, tpr));
    LB_LAUNCH_CHECK("divide_by_last_kernel");
    return LB_OK;
}

extern "C" int lb_cuda_favor_features_backward(LbBackend *be, const void *d_phi, const void *d_x, void *d_d,
                                               void *d_dx, int64_t groups, int64_t n, int64_t m, int64_t hd,
                                               float scale)
{
    LB_TRY(lb_args_favor_backward(be, d_phi, d_x, d_d, d_dx, groups, n, m, hd));
    const int64_t rows = groups * n;
    if (rows == 0)
        return LB_OK;
    const cudaStream_t stream = lb_cuda_stream(be);
    LB_DISPATCH_PACKS(be->storage, T, N, lb_can_vec16(d_d, m, sizeof(T)) && lb_can_vec16(d_phi, m, sizeof(T)),
                      LB_LAUNCH(lb_grid_for(rows, kRowsPerBlock), kFavorBlock, 0, stream, favor_backward_kernel<T, N>)(
                          static_cast<const T *>(d_phi), static_cast<const T *>(d_x), static_cast<T *>(d_d),
                          static_cast<T *>(d_dx), rows, m, hd, scale * scale));
    LB_LAUNCH_CHECK("favor_backward_kernel");
    return LB_OK;
}

extern "C" int lb_cuda_divide_by_last_backward(LbBackend *be, const void *d_x, const void *d_dy, void *d_dx,
                                               int64_t rows, int64_t cols)
{
    LB_TRY(lb_args_divide_by_last_backward(be, d_x, d_dy, d_dx, rows, cols));
    if (rows == 0)
        return LB_OK;
    const cudaStream_t stream = lb_cuda_stream(be);
    LB_DISPATCH_DTYPE(be->storage, T,
                      LB_LAUNCH(lb_grid_for(rows, kRowsPerBlock), kFavorBlock, 0, stream, divide_by_last_backward_kernel<T>)(
                          static_cast<const T *>(d_x), static_cast<const T *>(d_dy), static_cast<T *>(d_dx), rows, cols));
    LB_LAUNCH_CHECK("divide_by_last_backward_kernel");
    return LB_OK;
}
