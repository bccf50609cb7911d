/* LayerNorm with the residual add fused, in place: x (rows, d) = LN(x + r) * gamma + beta, r may
 * be NULL; mean and variance in fp32, the variance from deviations. layernorm_block_kernel holds a
 * row in registers; longer or unaligned rows take layernorm_generic_kernel. The backward
 * recomputes the statistics, sums dgamma's and dbeta's partials before dv is written (dv may be
 * dy), and adds the partials in order: deterministic. Checked by the check table (attn/check.c)
 * against lb_layernorm_cpu and lb_layernorm_backward_cpu. */
#include <math.h>

#include "gpu/cuda_check.h"
#include "gpu/device_util.cuh"
#include "gpu/kernels.h"

namespace {

constexpr int kBlockTarget = 256;
constexpr int kGenericBlock = 1024;

/* v = x + r, element i of a row. */
template <typename T> __device__ __forceinline__ float ln_input(const T *x, const T *r, int64_t i)
{
    return lb_to_float(x[i]) + (r ? lb_to_float(r[i]) : 0.0f);
}

template <typename T, int N, int VPT>
__global__ void __launch_bounds__(1024)
layernorm_block_kernel(T *x, const T *r, const T *gamma, const T *beta, int64_t rows, int64_t d,
                       float eps)
{
    LB_SHARED(float, sh, 33);
    const int64_t npk = d / N;
    const float inv_d = 1.0f / (float)d;
    for (int64_t row_i = blockIdx.x; row_i < rows; row_i += gridDim.x) {
        float v[VPT][N] = {}; /* packs past the row: 0, never read */
        /* f(this thread's values of pack p, the pack's index) for each of its packs in the row */
        const auto each = [&](auto f) {
#pragma unroll
            for (int p = 0; p < VPT; p++) {
                const int64_t i = (int64_t)p * blockDim.x + threadIdx.x;
                if (i < npk)
                    f(v[p], i);
            }
        };
        T *xr = x + row_i * d;
        const T *rr = r ? r + row_i * d : nullptr;
        float sum = 0.0f;
        each([&](float(&vp)[N], int64_t i) {
            const LbPack<T, N> a = lb_load_pack<T, N>(xr + i * N);
            LbPack<T, N> b;
            if (rr)
                b = lb_load_pack<T, N>(rr + i * N);
#pragma unroll
            for (int e = 0; e < N; e++) {
                vp[e] = lb_to_float(a.v[e]) + (rr ? lb_to_float(b.v[e]) : 0.0f);
                sum += vp[e];
            }
        });
        const float mean = lb_block_reduce<LbSum>(sum, sh) * inv_d;
        float sq = 0.0f;
        each([&](float(&vp)[N], int64_t) {
#pragma unroll
            for (int e = 0; e < N; e++) {
                const float dv = vp[e] - mean;
                sq += dv * dv;
            }
        });
        const float rstd = rsqrtf(lb_block_reduce<LbSum>(sq, sh) * inv_d + eps);
        each([&](float(&vp)[N], int64_t i) {
            const LbPack<T, N> g = lb_load_pack<T, N>(gamma + i * N);
            const LbPack<T, N> b = lb_load_pack<T, N>(beta + i * N);
            LbPack<T, N> o;
#pragma unroll
            for (int e = 0; e < N; e++)
                o.v[e] = lb_from_float<T>((vp[e] - mean) * rstd * lb_to_float(g.v[e]) + lb_to_float(b.v[e]));
            lb_store_pack<T, N>(xr + i * N, o);
        });
    }
}

/* The mean and 1 / sqrt(var + eps) of the row x + r (d), a block per row. */
template <typename T>
__device__ __forceinline__ void row_stats(const T *xr, const T *rr, int64_t d, float eps, float *sh, float &mean,
                                          float &rstd)
{
    const float inv_d = 1.0f / (float)d;
    float sum = 0.0f;
    for (int64_t i = threadIdx.x; i < d; i += blockDim.x)
        sum += ln_input(xr, rr, i);
    mean = lb_block_reduce<LbSum>(sum, sh) * inv_d;
    float sq = 0.0f;
    for (int64_t i = threadIdx.x; i < d; i += blockDim.x) {
        const float dv = ln_input(xr, rr, i) - mean;
        sq += dv * dv;
    }
    rstd = rsqrtf(lb_block_reduce<LbSum>(sq, sh) * inv_d + eps);
}

template <typename T>
__global__ void __launch_bounds__(kGenericBlock)
layernorm_generic_kernel(T *x, const T *r, const T *gamma, const T *beta, int64_t rows, int64_t d,
                         float eps)
{
    LB_SHARED(float, sh, 33);
    for (int64_t row_i = blockIdx.x; row_i < rows; row_i += gridDim.x) {
        T *xr = x + row_i * d;
        const T *rr = r ? r + row_i * d : nullptr;
        float mean, rstd;
        row_stats(xr, rr, d, eps, sh, mean, rstd);
        /* Each thread writes only the elements it read itself above, so no barrier is needed
         * between the reads and the in-place writes. */
        for (int64_t i = threadIdx.x; i < d; i += blockDim.x)
            xr[i] = lb_from_float<T>((ln_input(xr, rr, i) - mean) * rstd * lb_to_float(gamma[i]) +
                                     lb_to_float(beta[i]));
    }
}

/* The fewest packs per thread that keep the block near kBlockTarget threads, at most 32 floats
 * per thread for 8-element packs, 16 for fp32 packs (32 spilled at 1024 threads, nvcc 13.0,
 * sm_90), 8 singles; longer rows take the generic kernel. */
template <typename T, int N, int VPT = 1>
int launch_packs(T *x, const T *r, const T *g, const T *b, int64_t rows, int64_t d, float eps, cudaStream_t st)
{
    constexpr int vpt_cap = N == 1 ? 8 : 4;
    const int64_t per = (d / N + VPT - 1) / VPT;
    if constexpr (VPT < vpt_cap)
        if (per > kBlockTarget)
            return launch_packs<T, N, 2 * VPT>(x, r, g, b, rows, d, eps, st);
    if (per <= 1024) {
        LB_LAUNCH(lb_grid_for(rows, 1), (int)((per + 31) / 32 * 32), 0, st, layernorm_block_kernel<T, N, VPT>)(
            x, r, g, b, rows, d, eps);
        LB_LAUNCH_CHECK("layernorm_block_kernel");
        return LB_OK;
    }
    LB_LAUNCH(lb_grid_for(rows, 1), kGenericBlock, 0, st, layernorm_generic_kernel<T>)(x, r, g, b, rows, d, eps);
    LB_LAUNCH_CHECK("layernorm_generic_kernel");
    return LB_OK;
}

/* stats (2, rows): each row's mean, then each row's 1 / sqrt(var + eps). */
template <typename T>
__global__ void __launch_bounds__(kGenericBlock)
layernorm_stats_kernel(const T *x, const T *r, float *stats, int64_t rows, int64_t d, float eps)
{
    LB_SHARED(float, sh, 33);
    for (int64_t row_i = blockIdx.x; row_i < rows; row_i += gridDim.x) {
        float mean, rstd;
        row_stats(x + row_i * d, r ? r + row_i * d : nullptr, d, eps, sh, mean, rstd);
        if (threadIdx.x == 0) {
            stats[row_i] = mean;
            stats[rows + row_i] = rstd;
        }
    }
}

/* parts (2, nparts, d): part p's sums of dy xhat (dgamma's) and of dy (dbeta's) over its rows
 * [p per, (p + 1) per), blockIdx.y = p, a thread per column. */
template <typename T>
__global__ void __launch_bounds__(kBlockTarget)
layernorm_parts_kernel(const T *x, const T *r, const T *dy, const float *stats, float *parts, int64_t rows, int64_t d,
                       int64_t per)
{
    const int64_t r0 = (int64_t)blockIdx.y * per, r1 = r0 + per < rows ? r0 + per : rows;
    float *pg = parts + blockIdx.y * d, *pb = parts + (gridDim.y + blockIdx.y) * d;
    for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < d; j += (int64_t)gridDim.x * blockDim.x) {
        float sg = 0.0f, sb = 0.0f;
        for (int64_t row_i = r0; row_i < r1; row_i++) {
            const int64_t i = row_i * d + j;
            const float g = lb_to_float(dy[i]);
            sg += g * (ln_input(x, r, i) - stats[row_i]) * stats[rows + row_i];
            sb += g;
        }
        pg[j] = sg;
        pb[j] = sb;
    }
}

/* dv = rstd (g - mean(g) - xhat mean(g xhat)), g = dy gamma, a block per row; each thread writes
 * only the elements it read, so dv may be dy. */
template <typename T>
__global__ void __launch_bounds__(kGenericBlock)
layernorm_dv_kernel(const T *x, const T *r, const T *gamma, const T *dy, T *dv, const float *stats, int64_t rows,
                    int64_t d)
{
    LB_SHARED(float, sh, 33);
    const float inv_d = 1.0f / (float)d;
    for (int64_t row_i = blockIdx.x; row_i < rows; row_i += gridDim.x) {
        const T *xr = x + row_i * d, *rr = r ? r + row_i * d : nullptr, *gr = dy + row_i * d;
        T *vr = dv + row_i * d;
        const float mean = stats[row_i], rstd = stats[rows + row_i];
        float sg = 0.0f, sgx = 0.0f;
        for (int64_t i = threadIdx.x; i < d; i += blockDim.x) {
            const float g = lb_to_float(gr[i]) * lb_to_float(gamma[i]);
            sg += g;
            sgx += g * (ln_input(xr, rr, i) - mean) * rstd;
        }
        const float mg = lb_block_reduce<LbSum>(sg, sh) * inv_d;
        const float mgx = lb_block_reduce<LbSum>(sgx, sh) * inv_d;
        for (int64_t i = threadIdx.x; i < d; i += blockDim.x) {
            const float g = lb_to_float(gr[i]) * lb_to_float(gamma[i]);
            const float xhat = (ln_input(xr, rr, i) - mean) * rstd;
            vr[i] = lb_from_float<T>(rstd * (g - mg - xhat * mgx));
        }
    }
}

} // namespace

extern "C" int lb_cuda_layernorm_backward(LbBackend *be, const void *d_x, const void *d_r, const void *d_gamma,
                                          const void *d_dy, void *d_dv, void *d_dgamma, void *d_dbeta, int64_t rows,
                                          int64_t d, float eps, void *d_scratch)
{
    LB_TRY(lb_args_layernorm_backward(be, d_x, d_gamma, d_dy, d_dv, rows, d, eps, d_scratch));
    const cudaStream_t stream = lb_cuda_stream(be);
    const LbDtype dtype = be->storage;
    if (d == 0)
        return LB_OK;
    int64_t per = 0;
    const int64_t nparts = lb_grad_parts(rows, &per);
    /* the scratch: dgamma's and dbeta's partials (2, LB_GRAD_PARTS, d) as (2, nparts, d), then the
     * statistics (2, rows) */
    float *parts = static_cast<float *>(d_scratch), *stats = parts + 2 * LB_GRAD_PARTS * d;
    const int threads = d >= kGenericBlock ? kGenericBlock : (int)((d + 31) / 32 * 32);
    if (rows > 0) {
        LB_DISPATCH_DTYPE(dtype, T, {
            const T *x = static_cast<const T *>(d_x), *r = static_cast<const T *>(d_r);
            const T *dy = static_cast<const T *>(d_dy);
            LB_LAUNCH(lb_grid_for(rows, 1), threads, 0, stream, layernorm_stats_kernel<T>)(x, r, stats, rows, d, eps);
            LB_LAUNCH_CHECK("layernorm_stats_kernel");
            const dim3 grid(lb_grid_for(d, kBlockTarget), (unsigned)nparts);
            LB_LAUNCH(grid, kBlockTarget, 0, stream, layernorm_parts_kernel<T>)(x, r, dy, stats, parts, rows, d, per);
            LB_LAUNCH_CHECK("layernorm_parts_kernel");
            LB_LAUNCH(lb_grid_for(rows, 1), threads, 0, stream, layernorm_dv_kernel<T>)(
                x, r, static_cast<const T *>(d_gamma), dy, static_cast<T *>(d_dv), stats, rows, d);
            LB_LAUNCH_CHECK("layernorm_dv_kernel");
        });
    }
    LB_TRY(lb_cuda_sum_parts(stream, dtype, parts, d_dgamma, nparts, d));
    return lb_cuda_sum_parts(stream, dtype, parts + nparts * d, d_dbeta, nparts, d);
}

extern "C" int lb_cuda_layernorm(LbBackend *be, void *d_x, const void *d_r, const void *d_gamma, const void *d_beta,
                                 int64_t rows, int64_t d, float eps)
{
    LB_TRY(lb_args_layernorm(be, d_x, d_gamma, d_beta, rows, d, eps));
    if (rows == 0 || d == 0)
        return LB_OK;
    LB_DISPATCH_PACKS(be->storage, T, N,
                      lb_can_vec16(d_x, d, sizeof(T)) && (!d_r || lb_can_vec16(d_r, d, sizeof(T))) &&
                          lb_can_vec16(d_gamma, d, sizeof(T)) && lb_can_vec16(d_beta, d, sizeof(T)),
                      LB_TRY((launch_packs<T, N>(static_cast<T *>(d_x), static_cast<const T *>(d_r),
                                                 static_cast<const T *>(d_gamma), static_cast<const T *>(d_beta),
                                                 rows, d, eps, lb_cuda_stream(be)))));
    return lb_emu_corrupt(be, "layernorm", d_x, rows * d);
}
