/* Bias add and erf GELU after a product, in place: y (rows, cols) = act(y + b), b may be NULL,
 * act the erf GELU or the identity (cuBLASLt's epilogue is the tanh form); fp32 arithmetic, one
 * rounding. Checked by the check table (attn/check.c, tests/gpu/test_gpu_ops.c) against cpu_ref.h. */
#include <math.h>

#include "gpu/cuda_check.h"
#include "gpu/device_util.cuh"
#include "gpu/kernels.h"

namespace {

__device__ __forceinline__ float gelu_erf(float v)
{
    return 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f));
}

template <typename T, int N, int GELU>
__global__ void __launch_bounds__(kRowBlock)
bias_act_kernel(T *y, const T *b, int64_t rows, int64_t cols, int tpr)
{
    const int64_t cpk = cols / N;
    const int rows_per_block = kRowBlock / tpr;
    const int lane = threadIdx.x % tpr;
    for (int64_t r = (int64_t)blockIdx.x * rows_per_block + threadIdx.x / tpr; r < rows;
         r += (int64_t)gridDim.x * rows_per_block) {
        T *yr = y + r * cols;
        for (int64_t j = lane; j < cpk; j += tpr) {
            LbPack<T, N> v = lb_load_pack<T, N>(yr + j * N);
            LbPack<T, N> bb;
            if (b)
                bb = lb_load_pack<T, N>(b + j * N);
#pragma unroll
            for (int e = 0; e < N; e++) {
                float f = lb_to_float(v.v[e]) + (b ? lb_to_float(bb.v[e]) : 0.0f);
                if (GELU)
                    f = gelu_erf(f);
                v.v[e] = lb_from_float<T>(f);
            }
            lb_store_pack<T, N>(yr + j * N, v);
        }
    }
}

template <typename T, int N>
int launch_n(T *y, const T *b, int64_t rows, int64_t cols, int gelu, cudaStream_t st)
{
    const int tpr = lb_threads_per_row(cols / N);
    const unsigned grid = lb_grid_for(rows, kRowBlock / tpr);
    if (gelu)
        LB_LAUNCH(grid, kRowBlock, 0, st, bias_act_kernel<T, N, 1>)(y, b, rows, cols, tpr);
    else
        LB_LAUNCH(grid, kRowBlock, 0, st, bias_act_kernel<T, N, 0>)(y, b, rows, cols, tpr);
    LB_LAUNCH_CHECK("bias_act_kernel");
    return LB_OK;
}

} // namespace

extern "C" int lb_cuda_bias_act(cudaStream_t stream, LbDtype dtype, void *d_y, const void *d_b,
                                int64_t rows, int64_t cols, int gelu)
{
    if (rows == 0 || cols == 0 || (!d_b && !gelu))
        return LB_OK;
    LB_DISPATCH_PACKS(dtype, T, N, lb_can_vec16(d_y, cols, sizeof(T)) && (!d_b || lb_can_vec16(d_b, cols, sizeof(T))),
                      return launch_n<T, N>(static_cast<T *>(d_y), static_cast<const T *>(d_b), rows, cols, gelu,
                                            stream));
    return LB_OK;
}
