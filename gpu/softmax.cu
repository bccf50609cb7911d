/* Row softmax with a scale, in place: x (rows, cols) = softmax(scale * x), max and sum in fp32,
 * exp as exp2f with log2(e) folded into the scale. By row length: softmax_group_kernel (G lanes
 * per row), softmax_block_kernel (a block per row in registers, each element read once),
 * softmax_online_kernel (longer or unaligned rows: online max and sum, a second pass from L2).
 * softmax_backward_kernel: dx = scale y (dy - sum_j dy_j y_j) in place, a block per row.
 * Checked by the check table (attn/check.c) against lb_softmax_cpu on every path. */
#include <math.h>

#include "gpu/cuda_check.h"
#include "gpu/device_util.cuh"
#include "gpu/kernels.h"

namespace {

constexpr int kGroupBlock = 256;  /* threads per block of the group kernel */
constexpr int kMaxVpt = 8;        /* packs per thread held in registers, block kernel */
constexpr int kBlockTarget = 256; /* preferred threads per row of the block kernel */
constexpr int kOnlineBlock = 1024;

/* The reduction over the lanes that share a row: G consecutive lanes, or the whole block (G = 0). */
template <typename Op, int G> __device__ __forceinline__ float row_reduce(float v, float *sh)
{
    if constexpr (G == 0)
        return lb_block_reduce<Op>(v, sh);
    else
        return lb_lane_reduce<Op, G>(v);
}

/* One row held in registers, VPT packs of N elements per lane: pack i by lane i % lanes, so each
 * load instruction of a warp covers consecutive packs. An inactive lane (its row past the end)
 * loads and stores nothing but takes part in the reductions. */
template <typename T, int N, int VPT, int G>
__device__ __forceinline__ void softmax_row(T *row, bool active, int64_t npk, int lane, int lanes, float c, float *sh)
{
    LbPack<T, N> p[VPT];
    /* f(pack v, its index) for each of this lane's packs in the row */
    const auto each = [&](auto f) {
#pragma unroll
        for (int v = 0; v < VPT; v++) {
            const int64_t i = (int64_t)v * lanes + lane;
            if (active && i < npk)
                f(p[v], i);
        }
    };
    each([&](LbPack<T, N> &q, int64_t i) { q = lb_load_pack<T, N>(row + i * N); });
    float m = -INFINITY;
    each([&](LbPack<T, N> &q, int64_t) {
#pragma unroll
        for (int e = 0; e < N; e++)
            m = fmaxf(m, lb_to_float(q.v[e]) * c);
    });
    m = row_reduce<LbMax, G>(m, sh);
    float s = 0.0f;
    each([&](LbPack<T, N> &q, int64_t) {
#pragma unroll
        for (int e = 0; e < N; e++)
            s += exp2f(lb_to_float(q.v[e]) * c - m);
    });
    const float inv = 1.0f / row_reduce<LbSum, G>(s, sh);
    each([&](LbPack<T, N> &q, int64_t i) {
        LbPack<T, N> o;
#pragma unroll
        for (int e = 0; e < N; e++)
            o.v[e] = lb_from_float<T>(exp2f(lb_to_float(q.v[e]) * c - m) * inv);
        lb_store_pack<T, N>(row + i * N, o);
    });
}

/* G lanes per row, kGroupBlock / G rows per block. Lanes of rows past the end stay in the loop
 * (every lane must take part in the shuffles). */
template <typename T, int N, int VPT, int G>
__global__ void __launch_bounds__(kGroupBlock)
softmax_group_kernel(T *x, int64_t rows, int64_t cols, float c)
{
    const int rows_per_block = kGroupBlock / G;
    for (int64_t base = (int64_t)blockIdx.x * rows_per_block; base < rows;
         base += (int64_t)gridDim.x * rows_per_block) {
        const int64_t r = base + threadIdx.x / G;
        softmax_row<T, N, VPT, G>(x + (r < rows ? r : 0) * cols, r < rows, cols / N, threadIdx.x % G, G, c, nullptr);
    }
}

/* One block per row. */
template <typename T, int N, int VPT>
__global__ void __launch_bounds__(1024)
softmax_block_kernel(T *x, int64_t rows, int64_t cols, float c)
{
    LB_SHARED(float, sh, 33);
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x)
        softmax_row<T, N, VPT, 0>(x + r * cols, true, cols / N, threadIdx.x, blockDim.x, c, sh);
}

/* Merge two partial (max, sum of exp2(x - max)) pairs. An empty part has max -inf, sum 0. */
__device__ __forceinline__ void online_merge(float &m, float &s, float m2, float s2)
{
    if (m2 == -INFINITY)
        return;
    if (m == -INFINITY) {
        m = m2;
        s = s2;
        return;
    }
    const float mm = fmaxf(m, m2);
    s = s * exp2f(m - mm) + s2 * exp2f(m2 - mm);
    m = mm;
}

constexpr int kOnlineUnroll = 4;

template <typename T, int N>
__global__ void __launch_bounds__(kOnlineBlock)
softmax_online_kernel(T *x, int64_t rows, int64_t cols, float c)
{
    LB_SHARED(float, sh, 33);
    const int64_t npk = cols / N;
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        T *row = x + r * cols;
        float m = -INFINITY, s = 0.0f;
        /* Pass 1: kOnlineUnroll packs in flight per thread before their first use. */
        for (int64_t i0 = threadIdx.x; i0 < npk; i0 += (int64_t)kOnlineUnroll * blockDim.x) {
            LbPack<T, N> p[kOnlineUnroll];
#pragma unroll
            for (int u = 0; u < kOnlineUnroll; u++) {
                const int64_t i = i0 + (int64_t)u * blockDim.x;
                if (i < npk)
                    p[u] = lb_load_pack<T, N>(row + i * N);
            }
#pragma unroll
            for (int u = 0; u < kOnlineUnroll; u++) {
                const int64_t i = i0 + (int64_t)u * blockDim.x;
                if (i < npk) {
                    float pm = -INFINITY;
#pragma unroll
                    for (int e = 0; e < N; e++)
                        pm = fmaxf(pm, lb_to_float(p[u].v[e]) * c);
                    float ps = 0.0f;
#pragma unroll
                    for (int e = 0; e < N; e++)
                        ps += exp2f(lb_to_float(p[u].v[e]) * c - pm);
                    online_merge(m, s, pm, ps);
                }
            }
        }
        /* The row's max, then every thread's sum rescaled to it (0 from a thread that saw no
         * element: its max is -inf) and added up. */
        const float m_row = lb_block_reduce<LbMax>(m, sh);
        const float inv = 1.0f / lb_block_reduce<LbSum>(s * exp2f(m - m_row), sh);
        m = m_row;
        /* Pass 2. The barrier at the end of the row is belt and braces: lb_block_reduce may be
         * called again at once on the same sh. */
        for (int64_t i = threadIdx.x; i < npk; i += blockDim.x) {
            const LbPack<T, N> p = lb_load_pack<T, N>(row + i * N);
            LbPack<T, N> o;
#pragma unroll
            for (int e = 0; e < N; e++)
                o.v[e] = lb_from_float<T>(exp2f(lb_to_float(p.v[e]) * c - m) * inv);
            lb_store_pack<T, N>(row + i * N, o);
        }
        __syncthreads();
    }
}

template <typename T, int N, int VPT, int G>
int launch_group(T *x, int64_t rows, int64_t cols, float c, cudaStream_t st)
{
    LB_LAUNCH(lb_grid_for(rows, kGroupBlock / G), kGroupBlock, 0, st, softmax_group_kernel<T, N, VPT, G>)(x, rows, cols, c);
    LB_LAUNCH_CHECK("softmax_group_kernel");
    return LB_OK;
}

/* Rows up to 32 packs: the fewest lanes G (a power of two) that give each lane one pack. */
template <typename T, int N, int G = 1>
int launch_group_fit(T *x, int64_t rows, int64_t cols, float c, cudaStream_t st)
{
    if constexpr (G < 32)
        if (cols / N > G)
            return launch_group_fit<T, N, 2 * G>(x, rows, cols, c, st);
    return launch_group<T, N, 1, G>(x, rows, cols, c, st);
}

/* The fewest packs per thread that keep the block near kBlockTarget threads; more packs per
 * thread put more loads in flight, fewer keep registers for more resident blocks. */
template <typename T, int N, int VPT = 1>
int launch_block_fit(T *x, int64_t rows, int64_t cols, float c, cudaStream_t st)
{
    const int64_t per = (cols / N + VPT - 1) / VPT;
    if constexpr (VPT < kMaxVpt)
        if (per > kBlockTarget)
            return launch_block_fit<T, N, 2 * VPT>(x, rows, cols, c, st);
    LB_LAUNCH(lb_grid_for(rows, 1), (int)((per + 31) / 32 * 32), 0, st, softmax_block_kernel<T, N, VPT>)(x, rows, cols, c);
    LB_LAUNCH_CHECK("softmax_block_kernel");
    return LB_OK;
}

template <typename T, int N>
int launch_packs(T *x, int64_t rows, int64_t cols, float c, cudaStream_t st)
{
    const int64_t npk = cols / N;
    if (npk <= 32)
        return launch_group_fit<T, N>(x, rows, cols, c, st);
    if (npk <= 64)
        return launch_group<T, N, 2, 32>(x, rows, cols, c, st);
    if (npk <= 128)
        return launch_group<T, N, 4, 32>(x, rows, cols, c, st);
    if (npk <= (int64_t)kMaxVpt * 1024)
        return launch_block_fit<T, N>(x, rows, cols, c, st);
    LB_LAUNCH(lb_grid_for(rows, 1), kOnlineBlock, 0, st, softmax_online_kernel<T, N>)(x, rows, cols, c);
    LB_LAUNCH_CHECK("softmax_online_kernel");
    return LB_OK;
}

/* A block per row: each thread reads the elements it later writes, so d may be overwritten in
 * place with no barrier beyond the reduction's. */
template <typename T>
__global__ void __launch_bounds__(kOnlineBlock)
softmax_backward_kernel(const T *y, T *d, int64_t rows, int64_t cols, float scale)
{
    LB_SHARED(float, sh, 33);
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const T *yr = y + r * cols;
        T *dr = d + r * cols;
        float dot = 0.0f;
        for (int64_t i = threadIdx.x; i < cols; i += blockDim.x)
            dot += lb_to_float(yr[i]) * lb_to_float(dr[i]);
        dot = lb_block_reduce<LbSum>(dot, sh);
        for (int64_t i = threadIdx.x; i < cols; i += blockDim.x)
            dr[i] = lb_from_float<T>(scale * lb_to_float(yr[i]) * (lb_to_float(dr[i]) - dot));
    }
}

} // namespace

extern "C" int lb_cuda_softmax_backward(LbBackend *be, const void *d_y, void *d_d, int64_t rows, int64_t cols,
                                        float scale)
{
    LB_TRY(lb_args_pair(be, "softmax_backward", d_y, d_d, rows, cols));
    if (rows == 0 || cols == 0)
        return LB_OK;
    /* A thread per element up to a full block, in whole warps. */
    const int threads = cols >= kOnlineBlock ? kOnlineBlock : (int)((cols + 31) / 32 * 32);
    LB_DISPATCH_DTYPE(be->storage, T, {
        LB_LAUNCH(lb_grid_for(rows, 1), threads, 0, lb_cuda_stream(be), softmax_backward_kernel<T>)(
            static_cast<const T *>(d_y), static_cast<T *>(d_d), rows, cols, scale);
        LB_LAUNCH_CHECK("softmax_backward_kernel");
    });
    return LB_OK;
}

extern "C" int lb_cuda_softmax(LbBackend *be, void *d_x, int64_t rows, int64_t cols, float scale)
{
    LB_TRY(lb_args_rows(be, "softmax", d_x, rows, cols));
    if (rows == 0 || cols == 0)
        return LB_OK;
    const float c = (float)((double)scale * 1.4426950408889634); /* log2(e) */
    LB_DISPATCH_PACKS(be->storage, T, N, lb_can_vec16(d_x, cols, sizeof(T)),
                      LB_TRY((launch_packs<T, N>(static_cast<T *>(d_x), rows, cols, c, lb_cuda_stream(be)))));
    return lb_emu_corrupt(be, "softmax", d_x, rows * cols);
}
