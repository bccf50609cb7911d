/* Bias add and erf GELU after a product, in place: y (rows, cols) = act(y + b), b may be NULL
 * (cuBLASLt's epilogue is the tanh form). Their backward: add, gelu_backward and column_sums, the
 * last in two deterministic stages (fp32 partials per row range, then lb_cuda_sum_parts). Checked
 * by the check table (attn/check.c) against cpu_ref.h and cpu_backward.h. */
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

/* Element-wise over two tensors: y = y + x, or d = d GELU'(z) (erf form). */
struct AddOp {
    static __device__ __forceinline__ float f(float x, float y) { return y + x; }
};
struct GeluGradOp {
    static __device__ __forceinline__ float f(float z, float d)
    {
        return d * (0.5f * (1.0f + erff(z * 0.70710678118654752440f)) + z * 0.39894228040143267794f * expf(-0.5f * z * z));
    }
};

template <typename T, int N, typename Op>
__global__ void __launch_bounds__(kRowBlock) pointwise_kernel(const T *x, T *y, int64_t packs)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < packs; i += (int64_t)gridDim.x * blockDim.x) {
        const LbPack<T, N> a = lb_load_pack<T, N>(x + i * N);
        LbPack<T, N> b = lb_load_pack<T, N>(y + i * N);
#pragma unroll
        for (int e = 0; e < N; e++)
            b.v[e] = lb_from_float<T>(Op::f(lb_to_float(a.v[e]), lb_to_float(b.v[e])));
        lb_store_pack<T, N>(y + i * N, b);
    }
}

template <typename Op>
int pointwise(LbBackend *be, const void *x, void *y, int64_t count)
{
    if (count == 0)
        return LB_OK;
    LB_DISPATCH_PACKS(be->storage, T, N, lb_can_vec16(x, count, sizeof(T)) && lb_can_vec16(y, count, sizeof(T)), {
        LB_LAUNCH(lb_grid_for(count / N, kRowBlock), kRowBlock, 0, lb_cuda_stream(be), pointwise_kernel<T, N, Op>)(
            static_cast<const T *>(x), static_cast<T *>(y), count / N);
        LB_LAUNCH_CHECK("pointwise_kernel");
    });
    return LB_OK;
}

/* Stage 1 of a column sum: parts[p, j] (parts, cols) = the sum of x[r, j] over part p's rows
 * [p per, (p + 1) per), blockIdx.y = p; a thread per column, so a warp reads consecutive columns. */
template <typename T>
__global__ void __launch_bounds__(kRowBlock)
column_parts_kernel(const T *x, float *parts, int64_t rows, int64_t cols, int64_t per)
{
    const int64_t r0 = (int64_t)blockIdx.y * per, r1 = r0 + per < rows ? r0 + per : rows;
    for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < cols; j += (int64_t)gridDim.x * blockDim.x) {
        float s = 0.0f;
        for (int64_t r = r0; r < r1; r++)
            s += lb_to_float(x[r * cols + j]);
        parts[blockIdx.y * cols + j] = s;
    }
}

/* Stage 2: y[j] = the sum of parts[p, j] over p in order (0 without parts). */
template <typename T>
__global__ void __launch_bounds__(kRowBlock) sum_parts_kernel(const float *parts, T *y, int64_t nparts, int64_t cols)
{
    for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < cols; j += (int64_t)gridDim.x * blockDim.x) {
        float s = 0.0f;
        for (int64_t p = 0; p < nparts; p++)
            s += parts[p * cols + j];
        y[j] = lb_from_float<T>(s);
    }
}

} // namespace

extern "C" int lb_cuda_add(LbBackend *be, const void *d_x, void *d_y, int64_t count)
{
    LB_TRY(lb_args_pair(be, "add", d_x, d_y, 1, count));
    return pointwise<AddOp>(be, d_x, d_y, count);
}

extern "C" int lb_cuda_gelu_backward(LbBackend *be, const void *d_z, void *d_d, int64_t rows, int64_t cols)
{
    LB_TRY(lb_args_pair(be, "gelu_backward", d_z, d_d, rows, cols));
    return pointwise<GeluGradOp>(be, d_z, d_d, rows * cols);
}

extern "C" int lb_cuda_sum_parts(cudaStream_t stream, LbDtype dtype, const float *d_parts, void *d_y, int64_t nparts,
                                 int64_t cols)
{
    if (cols == 0)
        return LB_OK;
    LB_DISPATCH_DTYPE(dtype, T, {
        LB_LAUNCH(lb_grid_for(cols, kRowBlock), kRowBlock, 0, stream, sum_parts_kernel<T>)(d_parts, static_cast<T *>(d_y),
                                                                                          nparts, cols);
        LB_LAUNCH_CHECK("sum_parts_kernel");
    });
    return LB_OK;
}

extern "C" int lb_cuda_column_sums(LbBackend *be, const void *d_x, void *d_y, int64_t rows, int64_t cols,
                                   void *d_scratch)
{
    LB_TRY(lb_args_column_sums(be, d_x, d_y, rows, cols, d_scratch));
    const cudaStream_t stream = lb_cuda_stream(be);
    const LbDtype dtype = be->storage;
    float *d_parts = static_cast<float *>(d_scratch);
    int64_t per = 0;
    const int64_t nparts = lb_grad_parts(rows, &per);
    if (nparts > 0 && cols > 0) {
        const dim3 grid(lb_grid_for(cols, kRowBlock), (unsigned)nparts);
        LB_DISPATCH_DTYPE(dtype, T, {
            LB_LAUNCH(grid, kRowBlock, 0, stream, column_parts_kernel<T>)(static_cast<const T *>(d_x), d_parts, rows,
                                                                          cols, per);
            LB_LAUNCH_CHECK("column_parts_kernel");
        });
    }
    return lb_cuda_sum_parts(stream, dtype, d_parts, d_y, nparts, cols);
}

extern "C" int lb_cuda_bias_act(LbBackend *be, void *d_y, const void *d_b, int64_t rows, int64_t cols, int gelu)
{
    if (rows == 0 || cols == 0 || (!d_b && !gelu))
        return LB_OK;
    LB_DISPATCH_PACKS(be->storage, T, N, lb_can_vec16(d_y, cols, sizeof(T)) && (!d_b || lb_can_vec16(d_b, cols, sizeof(T))),
                      return launch_n<T, N>(static_cast<T *>(d_y), static_cast<const T *>(d_b), rows, cols, gelu,
                                            lb_cuda_stream(be)));
    return LB_OK;
}

/* The erf GELU pass of linear(..., gelu = 1) alone, with no bias. */
extern "C" int lb_cuda_gelu(LbBackend *be, void *d_y, int64_t rows, int64_t cols)
{
    LB_TRY(lb_args_rows(be, "gelu", d_y, rows, cols));
    return lb_cuda_bias_act(be, d_y, NULL, rows, cols, 1);
}
