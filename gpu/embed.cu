/* Embedding: x (batch, n, d) = tok[ids[b, t]] + pos[t], fp32 sum rounded once; a row per `tpr`
 * threads. Checked by the check table (attn/check.c, tests/gpu/test_gpu_ops.c) against lb_embed_cpu. */
#include "gpu/cuda_check.h"
#include "gpu/device_util.cuh"
#include "gpu/kernels.h"

namespace {

template <typename T, int N>
__global__ void __launch_bounds__(kRowBlock)
embed_kernel(const int32_t *ids, const T *tok, const T *pos, T *x, int64_t rows, int64_t n,
             int64_t d, int tpr)
{
    const int64_t dpk = d / N;
    const int rows_per_block = kRowBlock / tpr;
    const int lane = threadIdx.x % tpr;
    for (int64_t r = (int64_t)blockIdx.x * rows_per_block + threadIdx.x / tpr; r < rows;
         r += (int64_t)gridDim.x * rows_per_block) {
        const int64_t t = r - (int64_t)lb_udiv64((uint64_t)r, (uint64_t)n) * n;
        const T *tr = tok + (int64_t)ids[r] * d;
        const T *pr = pos + t * d;
        T *xr = x + r * d;
        for (int64_t j = lane; j < dpk; j += tpr) {
            const LbPack<T, N> a = lb_load_pack<T, N>(tr + j * N);
            const LbPack<T, N> b = lb_load_pack<T, N>(pr + j * N);
            LbPack<T, N> o;
#pragma unroll
            for (int e = 0; e < N; e++)
                o.v[e] = lb_from_float<T>(lb_to_float(a.v[e]) + lb_to_float(b.v[e]));
            lb_store_pack<T, N>(xr + j * N, o);
        }
    }
}

template <typename T, int N>
int launch_n(const int32_t *ids, const T *tok, const T *pos, T *x, int64_t rows, int64_t n,
             int64_t d, cudaStream_t st)
{
    const int tpr = lb_threads_per_row(d / N);
    LB_LAUNCH(lb_grid_for(rows, kRowBlock / tpr), kRowBlock, 0, st, embed_kernel<T, N>)(ids, tok, pos, x, rows, n, d, tpr);
    LB_LAUNCH_CHECK("embed_kernel");
    return LB_OK;
}

} // namespace

extern "C" int lb_cuda_embed(cudaStream_t stream, LbDtype dtype, const int32_t *d_ids,
                             const void *d_tok, const void *d_pos, void *d_x, int64_t batch,
                             int64_t n, int64_t d)
{
    if (batch == 0 || n == 0 || d == 0)
        return LB_OK;
    LB_DISPATCH_PACKS(dtype, T, N,
                      lb_can_vec16(d_tok, d, sizeof(T)) && lb_can_vec16(d_pos, d, sizeof(T)) &&
                          lb_can_vec16(d_x, d, sizeof(T)),
                      return launch_n<T, N>(d_ids, static_cast<const T *>(d_tok), static_cast<const T *>(d_pos),
                                            static_cast<T *>(d_x), batch * n, n, d, stream));
    return LB_OK;
}
